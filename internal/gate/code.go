package gate

import (
	"regexp"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Process-spawning calls with literal arguments in Python and Node
// sources. What they run goes through the shell analyser, so a hardline
// command is a floor even inside os.system.
var (
	pySpawnString = regexp.MustCompile(`\b(?:os\.(?:system|popen)|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|commands\.getoutput)\(\s*(?:[rbuRBU]?("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))`)
	pySpawnList   = regexp.MustCompile(`\b(?:subprocess\.(?:run|call|check_call|check_output|Popen)|os\.exec[lv]p?e?|pty\.spawn)\(\s*\[([^\]]*)\]`)
	jsSpawnString = regexp.MustCompile(`\b(?:exec|execSync)\(\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|` + "`[^`$]*`" + `)`)
	jsSpawnArgs   = regexp.MustCompile(`\b(?:spawn|spawnSync|execFile|execFileSync)\(\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')\s*(?:,\s*\[([^\]]*)\])?`)
	literal       = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'`)
)

// spawnedCommands returns the command lines a Python or Node source
// spawns with literal arguments.
func spawnedCommands(lang, src string) []string {
	var out []string
	switch lang {
	case "python", "python3", "py":
		for _, m := range pySpawnString.FindAllStringSubmatch(src, -1) {
			out = append(out, unquote(m[1]))
		}
		for _, m := range pySpawnList.FindAllStringSubmatch(src, -1) {
			if argv := literalList(m[1]); len(argv) > 0 {
				out = append(out, joinArgv(argv))
			}
		}
	case "node", "javascript", "js", "typescript", "ts", "deno", "bun":
		for _, m := range jsSpawnString.FindAllStringSubmatch(src, -1) {
			out = append(out, unquote(m[1]))
		}
		for _, m := range jsSpawnArgs.FindAllStringSubmatch(src, -1) {
			argv := append([]string{unquote(m[1])}, literalList(m[2])...)
			out = append(out, joinArgv(argv))
		}
	}
	return out
}

// literalList reads the string literals of a list expression.
func literalList(s string) []string {
	var out []string
	for _, l := range literal.FindAllString(s, -1) {
		out = append(out, unquote(l))
	}
	return out
}

func unquote(l string) string {
	if strings.HasPrefix(l, "`") {
		return strings.Trim(l, "`")
	}
	if strings.HasPrefix(l, "'") {
		l = `"` + strings.ReplaceAll(strings.ReplaceAll(l[1:len(l)-1], `"`, `\"`), `\'`, `'`) + `"`
	}
	if s, err := strconv.Unquote(l); err == nil {
		return s
	}
	return strings.Trim(l, `"'`)
}

// joinArgv renders an argv as one shell command line.
func joinArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = "'" + strings.ReplaceAll(a, "\x00", "") + "'"
		}
		parts[i] = q
	}
	return strings.Join(parts, " ")
}
