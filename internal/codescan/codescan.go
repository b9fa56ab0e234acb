// Package codescan reads source code an agent wants to run — the code
// tool's source, or the payload of python -c, node -e, perl -e — and
// reports what it does, so one analyser judges inline and tool code
// alike:
//
//   - Commands: shell command lines equivalent to what the code does.
//     Spawns with their arguments (os.system, subprocess.run([...]),
//     child_process.exec, backticks, system, qx), and file and network
//     operations translated into the command that does the same
//     (shutil.rmtree('/') is `rm -rf -- /`, open(p, 'w') a write to p,
//     requests.post(url, data=open(f)) an upload of f). Parts only known
//     at run time are rendered as "$__dynN" expansions. The caller's
//     shell analyser judges these with the same tables as any command,
//     so the same effect gets the same verdict.
//   - Complete: every construct was read and is in a small, conservative
//     vocabulary of known operations (printing, arithmetic, string and
//     list operations, math, json, reading argv, and the operations
//     translated above). Anything else — an unknown call or module,
//     eval/exec of what cannot be read, dynamic imports and attribute
//     lookups, code that does not parse — makes it incomplete, with
//     Reasons. Incomplete code is never plainly safe (DESIGN invariant
//     12).
//   - Findings: what the code does that no command expresses.
//
// Parsers. JavaScript (and TypeScript without type syntax) is parsed
// with github.com/dop251/goja/parser, a maintained pure-Go ECMAScript
// parser (MIT; about 1 MB of binary). For Python there is no well-kept
// pure-Go parser of the current language (go-python/gpython parses
// Python 3.4 and is barely maintained; tree-sitter needs cgo), so the
// package has its own tokenizer (strings with every prefix and escape,
// f-strings, NFKC identifiers as Python reads them, indentation) and a
// recursive-descent parser of the statement and expression grammar; a
// construct it does not know is a parse error, which makes the code
// incomplete, never quietly skipped. Perl, Ruby, PHP and PowerShell are
// read by a tokenizer that finds their spawn forms and accepts only
// printing of literals as complete.
//
// The package is pure: no file system, no environment, no clock.
package codescan

import (
	"strings"
)

// Tier is how serious a finding is.
type Tier string

// Tiers.
const (
	Dangerous Tier = "dangerous"
	Hardline  Tier = "hardline"
)

// Finding is something the code does that the commands do not express.
type Finding struct {
	Class       string `json:"class"`
	Tier        Tier   `json:"tier"`
	Description string `json:"description"`
}

// Result is what a piece of code does.
type Result struct {
	// Language is the canonical language name.
	Language string `json:"language"`
	// Complete is true when every construct was read and is known.
	Complete bool `json:"complete"`
	// Commands are shell command lines equivalent to the code's
	// effects, in source order.
	Commands []string  `json:"commands,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
	// Reads are the files the code reads, as named (each is also a
	// `cat` command), for a caller that judges reading secrets; a name
	// known only at run time is not listed (its command has a hole).
	Reads []string `json:"reads,omitempty"`
	// Reasons say why the code is not complete.
	Reasons []string `json:"reasons,omitempty"`
}

// Finding classes.
const (
	ClassEval    = "code.eval"
	ClassNative  = "code.native"
	ClassNetwork = "net.connect"
)

// Canonical language names.
const (
	Python     = "python"
	Node       = "node"
	Perl       = "perl"
	Ruby       = "ruby"
	PHP        = "php"
	PowerShell = "powershell"
	Shell      = "sh"
)

// Language maps an interpreter or language name to its canonical name:
// python (python3, py), node (js, javascript, ts, typescript, deno,
// bun, nodejs), perl, ruby (rb), php, powershell (pwsh, ps1), sh (bash,
// zsh, dash, ksh, shell: the caller's shell analyser reads these).
func Language(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	// python3.12, perl5, node18 …
	n = strings.TrimRight(n, "0123456789.")
	switch n {
	case "python", "py", "python-", "pypy", "ipython":
		return Python, true
	case "node", "nodejs", "js", "javascript", "ts", "typescript", "deno", "bun", "mjs", "cjs":
		return Node, true
	case "perl":
		return Perl, true
	case "ruby", "rb", "irb":
		return Ruby, true
	case "php":
		return PHP, true
	case "powershell", "pwsh", "ps":
		return PowerShell, true
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "shell", "ash", "busybox sh":
		return Shell, true
	}
	return "", false
}

// MaxSource bounds what is analysed; longer code is not complete (a
// human is asked): reading it would hold the gate too long.
const MaxSource = 256 << 10

// Analyze reads src as code of language lang (any name Language
// accepts). Shell code is returned whole as one command for the shell
// analyser.
func Analyze(lang, src string) Result {
	canon, ok := Language(lang)
	if !ok {
		return Result{Language: lang, Reasons: []string{"unknown language " + quoteShort(lang)}}
	}
	if len(src) > MaxSource {
		return Result{Language: canon, Reasons: []string{"source longer than 256 KiB"}}
	}
	switch canon {
	case Shell:
		return Result{Language: canon, Complete: true, Commands: []string{src}}
	case Python:
		return analyzePython(src)
	case Node:
		return analyzeJS(src)
	default:
		return analyzeOther(canon, src)
	}
}

func quoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return "\"" + s + "\""
}
