package shell

import (
	"regexp"
	"strings"
	"sync"
)

// Family windows: PowerShell and cmd forms, read leniently (bash cannot
// parse them as code, and they run on another shell).

var _ = family(func() {
	register("windows", ruleWinDelete, "remove-item", "del", "erase", "rd", "ri")
	register("windows", ruleWinRemote, "iex", "invoke-expression")
	register("windows", ruleWinFormat, "format")
	register("windows", func(c *cmd) { c.find(clsWinDisk, c.span) }, "format-volume", "clear-disk", "diskpart", "initialize-disk")
	register("windows", func(c *cmd) { c.winFlag(clsWinDisk, "/w") }, "cipher")
	register("windows", func(c *cmd) { c.winVerb(clsWinDisk, "delete") }, "vssadmin", "wbadmin")
	register("windows", func(c *cmd) { c.winFlag(clsWinProcess, "/f") }, "taskkill")
	register("windows", func(c *cmd) { c.winFlag(clsWinProcess, "-force") }, "stop-process", "stop-service", "spps")
	register("windows", func(c *cmd) { c.winVerb(clsWinProcess, "stop", "delete") }, "sc")
	register("windows", func(c *cmd) { c.winVerb(clsWinSystem, "delete") }, "reg")
	register("windows", func(c *cmd) { c.winFlag(clsWinSystem, "/set", "/delete", "/deletevalue") }, "bcdedit")
	register("windows", ruleIcacls, "icacls")
	register("windows", func(c *cmd) { c.winFlag(clsWinSystem, "-force") }, "remove-itemproperty")
	register("windows", func(c *cmd) { c.winFlag(clsWinSystem, "bypass", "unrestricted") }, "set-executionpolicy")
	register("windows", ruleCmdExe, "cmd")
})

func ruleWinDelete(c *cmd) {
	for _, a := range c.args[1:] {
		v := strings.ToLower(a.Value)
		switch c.name {
		case "remove-item", "ri":
			if strings.HasPrefix(v, "-r") || strings.HasPrefix(v, "-fo") {
				c.find(clsWinDelete, c.span)
				return
			}
		case "rmdir":
			if v == "/s" {
				c.find(clsWinDelete, c.span)
				return
			}
		default: // del, erase, rd
			if v == "/s" || v == "/q" || v == "/f" {
				c.find(clsWinDelete, c.span)
				return
			}
		}
	}
}

var winDownload = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|downloadfile|net\.webclient|curl|wget|start-bitstransfer)\b`)
})

func ruleWinRemote(c *cmd) {
	text := strings.Join(words(c.args[1:]), " ")
	if winDownload().MatchString(text) {
		c.find(clsWinRemote, c.span)
		return
	}
	if len(c.args) > 1 {
		c.dynamic(c.args[1])
	} else if c.in.kind == stdinPipe {
		c.w.meta[c.idx].consumer = "shell"
	}
}

var driveLetter = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-zA-Z]:\\?$`) })

func ruleWinFormat(c *cmd) {
	for _, a := range c.args[1:] {
		if driveLetter().MatchString(a.Value) {
			c.find(clsWinDisk, c.span)
			return
		}
	}
}

// winFlag flags the command when any argument equals one of flags,
// case-insensitively.
func (c *cmd) winFlag(cls string, flags ...string) {
	for _, a := range c.args[1:] {
		v := strings.ToLower(a.Value)
		for _, f := range flags {
			if v == f || strings.HasPrefix(v, f+":") {
				c.find(cls, c.span)
				return
			}
		}
	}
}

// winVerb flags the command when its first operand is one of verbs.
func (c *cmd) winVerb(cls string, verbs ...string) {
	if len(c.args) > 1 && slicesHas(verbs, strings.ToLower(c.args[1].Value)) {
		c.find(cls, c.span)
	}
}

func ruleIcacls(c *cmd) {
	text := strings.ToLower(strings.Join(words(c.args[1:]), " "))
	if strings.Contains(text, "/reset") || (strings.Contains(text, "/grant") && (strings.Contains(text, "everyone") || strings.Contains(text, "*s-1-1-0"))) {
		c.find(clsWinSystem, c.span)
	}
}

// ruleCmdExe reads cmd /c and /k payloads leniently.
func ruleCmdExe(c *cmd) {
	for i, a := range c.args[1:] {
		v := strings.ToLower(a.Value)
		if v == "/c" || v == "/k" || v == "/r" {
			rest := c.args[i+2:]
			if len(rest) == 0 {
				return
			}
			vals := make([]string, len(rest))
			for j, r := range rest {
				vals[j] = r.Value
			}
			text := strings.Join(vals, " ")
			c.w.windowsScan(c.idx, text, c.span)
			c.w.dynamicPayload(text, appendVia(c.via, "cmd /c"), c.span, stdin{})
			return
		}
	}
}

func rulePowershell(c *cmd) {
	for i := 1; i < len(c.args); i++ {
		v := strings.ToLower(c.args[i].Value)
		if !strings.HasPrefix(v, "-") {
			continue
		}
		switch {
		case v == "-e" || v == "-ec" || (len(v) >= 3 && strings.HasPrefix("-encodedcommand", v)):
			c.find(clsWinEncoded, c.span)
			return
		case v == "-c" || (len(v) >= 3 && strings.HasPrefix("-command", v)) || v == "--command":
			rest := c.args[i+1:]
			vals := make([]string, len(rest))
			for j, r := range rest {
				vals[j] = r.Value
			}
			text := strings.Join(vals, " ")
			if text == "-" {
				c.stdinCode("shell")
				return
			}
			c.w.windowsScan(c.idx, text, c.span)
			c.w.dynamicPayload(text, appendVia(c.via, c.name+" -Command"), c.span, stdin{})
			return
		case v == "-f" || (len(v) >= 3 && strings.HasPrefix("-file", v)):
			return
		}
	}
	if c.in.kind == stdinPipe {
		c.w.meta[c.idx].consumer = "shell"
	}
}

var winPatterns = []struct {
	re  *regexp.Regexp
	cls string
}{
	{regexp.MustCompile(`(?i)\b(iex|invoke-expression)\b[\s\S]*\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b|\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)\b[\s\S]*\|\s*(iex|invoke-expression)\b`), clsWinRemote},
	{regexp.MustCompile(`(?i)(^|[\s;|&(])(powershell|pwsh)(\.exe)?\s+(.*\s)?-(e|ec|enc|encodedcommand)\s`), clsWinEncoded},
	{regexp.MustCompile(`(?i)\bremove-item\b[^;|]*\s-(r|recurse|force)\b`), clsWinDelete},
	{regexp.MustCompile(`(?i)\b(format-volume|clear-disk)\b|\bformat\s+[a-z]:`), clsWinDisk},
	{regexp.MustCompile(`(?i)\bstop-(process|service)\b[^;|]*-force\b|\btaskkill\b[^;|]*/f\b`), clsWinProcess},
}

// windowsScan matches PowerShell and cmd forms in text that bash cannot
// read as code.
func (w *walker) windowsScan(idx int, text string, sp Span) {
	for _, p := range winPatterns {
		if p.re.MatchString(text) {
			w.find(idx, p.cls, sp)
		}
	}
}

// windowsFallback runs when the input does not parse as bash: PowerShell
// forms are still named, though the verdict stays malformed.
func (w *walker) windowsFallback() {
	for _, p := range winPatterns {
		if loc := p.re.FindStringIndex(w.a.Input); loc != nil {
			w.find(-1, p.cls, Span{Start: loc[0], End: loc[1]})
		}
	}
}
