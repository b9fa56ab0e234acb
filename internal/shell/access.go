package shell

import (
	"strings"
	"sync"

	"github.com/wardenhq/warden/internal/protect"
)

// What a command does to the paths it names. Every writer hands its
// resolved targets to writes; every path an argument names is checked by
// argPaths for warden's own files (any access at all is hardline) and
// for secrets (reading one is at least dangerous).

// writes judges each path as written to.
func (c *cmd) writes(paths []Arg) { c.touch(paths, accWrite) }

// reads judges each path as read.
func (c *cmd) reads(paths []Arg) { c.touch(paths, accRead) }

// touch judges paths accessed with acc.
func (c *cmd) touch(paths []Arg, acc access) {
	for _, a := range paths {
		if acc&accWrite != 0 {
			c.w.wrote(a, "", false) // what, this writer does not say
		}
		cls, tier, d := c.w.argClass(a, acc)
		if cls == "" {
			continue
		}
		if acc&accWrite != 0 {
			// argPaths took every operand for a read; this one is written.
			c.w.dropReads(c.idx, a.Span)
		}
		c.w.findTier(c.idx, cls, tier, a.Span, d)
	}
}

// dropReads removes the secret-read findings of command idx at span.
func (w *walker) dropReads(idx int, sp Span) {
	fs := w.a.Findings
	for i := len(fs) - 1; i >= 0 && i >= len(fs)-16; i-- {
		if isSecretRead(fs[i].Class) && fs[i].Command == idx && fs[i].Span == sp {
			w.a.Findings = append(fs[:i], fs[i+1:]...)
			return
		}
	}
}

// isSecretRead reports a class of reading a secret (a protected file, or
// a command that prints one).
func isSecretRead(cls string) bool {
	return cls == clsSecretRead || strings.HasPrefix(cls, "read.")
}

// argClass is the class of accessing the path an argument names.
func (w *walker) argClass(a Arg, acc access) (string, Tier, string) {
	p, ok := w.argPath(a)
	if !ok {
		// Run-time parts inside an absolute path (/proc/$PPID/environ):
		// judge every path it could be.
		if g, ok := dynamicPattern(a.Value); ok {
			return w.patternClass(g, acc)
		}
		return "", "", ""
	}
	if a.Glob && strings.ContainsAny(p, "*?[") {
		return w.patternClass(p, acc)
	}
	return w.pathClass(p, acc)
}

// argPath is the path an argument names, with $HOME and the owner's
// variables expanded (~ and relative paths are left to resolution), or
// false when a dynamic part cannot be known.
func (w *walker) argPath(a Arg) (string, bool) {
	p := a.Value
	if p == "" {
		return "", false
	}
	if !a.Static {
		var ok bool
		if p, ok = w.expandVars(p); !ok {
			return "", false
		}
	}
	return p, true
}

// tree judges paths that a recursive command (cp -r, tar, grep -r, rsync,
// mv, rm -r) reads or writes with everything under them: a parent of
// warden's own directories, or of a credential directory, reaches them.
func (c *cmd) tree(paths []Arg, acc access) {
	for _, a := range paths {
		p, ok := c.w.argPath(a)
		if !ok {
			continue
		}
		if cls, tier, d := c.w.treeClass(p, acc); cls != "" {
			c.w.findTier(c.idx, cls, tier, a.Span, d)
		}
	}
}

// argPaths checks every argument that names a path (or holds one after
// "=", as --file=PATH): warden's own files are hardline whatever the
// command does with them; a secret is read unless the command only looks
// at names and metadata; another process's memory is proc.mem.
func (c *cmd) argPaths() {
	if p, ok := programs[c.name]; ok && (p.family == "launchers" || p.family == "code") {
		return // what they run is judged on its own
	}
	if c.name == "shopt" && hasWord(c.args, "globstar") && hasWord(c.args, "-s") {
		c.w.globstar = true
	}
	meta := metadataOnly[c.name] || c.name == "openssl" && len(c.args) > 1 && (c.args[1].Value == "x509" || c.args[1].Value == "verify" || c.args[1].Value == "crl")
	for _, a := range c.args[1:] {
		if !maybePath(a.Value) || a.Static && strings.ContainsAny(a.Value, " \t\n") {
			continue
		}
		if !strings.HasPrefix(a.Value, "-") && strings.Contains(a.Value, "=") && a.Static {
			continue // KEY=VALUE: not a path (dd if=, make X= have their own rules)
		}
		if _, after, ok := strings.Cut(a.Value, "="); ok && strings.HasPrefix(a.Value, "-") && a.Static {
			a = sub(a, len(a.Value)-len(after))
		} else if strings.HasPrefix(a.Value, "-") && a.Static {
			continue
		}
		if len(a.Value) > 7 && strings.EqualFold(a.Value[:7], "file://") {
			// A file URL (curl file://$HOME/…) names its path.
			a = sub(a, 7)
			if len(a.Value) > 10 && strings.EqualFold(a.Value[:10], "localhost/") {
				a = sub(a, 9)
			}
		}
		cls, tier, d := c.w.argClass(a, accRead)
		switch {
		case cls == clsWardenSelf || cls == clsProcMem:
			c.w.findTier(c.idx, cls, tier, a.Span, d)
		case isSecretRead(cls) && !meta:
			c.w.findTier(c.idx, cls, tier, a.Span, d)
		}
	}
}

// maybePath is a cheap filter: could the word name a path?
func maybePath(v string) bool {
	if v == "" {
		return false
	}
	if strings.ContainsAny(v, "/~") || v[0] == '.' || v[0] == '$' {
		return true
	}
	if fileShapes().bases[v] || strings.HasPrefix(v, "id_") || strings.HasPrefix(v, ".env") {
		return true
	}
	if i := strings.LastIndexByte(v, '.'); i > 0 && fileShapes().exts[strings.ToLower(v[i:])] {
		return true
	}
	for _, p := range fileShapes().prefixes {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

// fileShapes are the shapes of file names the table protects in any
// directory: exact names (.netrc), extensions (*.pem) and prefixes
// (service-account*.json). Built on first use, from the built-in table.
var fileShapes = sync.OnceValue(func() (sh struct {
	bases, exts map[string]bool
	prefixes    []string
}) {
	sh.bases, sh.exts, sh.prefixes = protectedShapes()
	return sh
})

// builtinEntries are the entries of the built-in protected-path table,
// built once, on first use.
var builtinEntries = sync.OnceValue(func() []protect.Entry { return defaultTable().Entries() })

// defaultTable is the built-in protected-path table alone, with
// warden's default locations and none of an owner's own paths.
var defaultTable = sync.OnceValue(func() *protect.Table { return protect.New(protect.Paths{}) })

func protectedShapes() (map[string]bool, map[string]bool, []string) {
	names, exts := map[string]bool{}, map[string]bool{}
	var prefixes []string
	for _, e := range builtinEntries() {
		p := e.Pattern
		switch {
		case strings.Contains(p, "/"):
		case !strings.ContainsAny(p, "*?["):
			names[p] = true
		case strings.HasPrefix(p, "*.") && !strings.ContainsAny(p[2:], "*?["):
			exts[strings.ToLower(p[1:])] = true
		case strings.IndexAny(p, "*?[") > 0:
			prefixes = append(prefixes, p[:strings.IndexAny(p, "*?[")])
		}
	}
	return names, exts, prefixes
}

// metadataOnly are programs that look at names and metadata, not
// contents: a secret they name is not read.
var metadataOnly = map[string]bool{"ls": true, "stat": true, "test": true, "[": true, "file": true, "du": true, "df": true,
	"mkdir": true, "rmdir": true, "chmod": true, "chown": true, "chgrp": true, "realpath": true, "readlink": true, "basename": true,
	"dirname": true, "cd": true, "pushd": true, "popd": true, "which": true, "type": true, "touch": true, "wc": true, "rm": true,
	"sha256sum": true, "sha1sum": true, "md5sum": true, "b2sum": true, "cksum": true, "namei": true, "lsattr": true, "getfacl": true,
	"ssh-keygen": true, "ssh-add": true, "ssh": true, "ln": true, "mv": true, "echo": true, "printf": true, "exa": true, "eza": true,
	"tree": true, "find": true, "fd": true, "locate": true, "id": true, "true": true, "false": true, ":": true, "git": false}

// ruleCd moves the working directory for what follows on the line: cd DIR,
// pushd DIR, popd. A directory that cannot be known makes it unknown.
func ruleCd(c *cmd) {
	w := c.w
	args := c.args[1:]
	for len(args) > 0 && strings.HasPrefix(args[0].Value, "-") && args[0].Value != "-" && len(args[0].Value) > 1 {
		if args[0].Value == "--" {
			args = args[1:]
			break
		}
		args = args[1:] // -L, -P, -e, -@
	}
	switch {
	case c.name == "popd":
		if n := len(w.dirStack); n > 0 {
			w.dir = w.dirStack[n-1]
			w.dirStack = w.dirStack[:n-1]
		} else {
			w.dir = dirState{}
		}
		return
	case c.name == "pushd":
		w.dirStack = append(w.dirStack, w.dir)
	}
	if len(args) == 0 {
		// cd alone goes home: the home's place, or "~" while it is
		// unknown (as cd ~ does), so that `cd; rm -rf .` is the home.
		h := w.home()
		if h == "" {
			h = "~"
		}
		w.dir = dirState{path: h, known: true, moved: true}
		return
	}
	a := args[0]
	if a.Value == "-" || !a.Static && !strings.HasPrefix(a.Value, "$") {
		w.dir = dirState{}
		return
	}
	p, ok := w.resolvePath(a)
	if !ok || !isAbs(p) {
		w.dir = dirState{}
		return
	}
	// A home-relative directory stays symbolic ("~/.config") when the
	// home is unknown: `cd ~/.config && cat warden/config.yaml` names
	// ~/.config/warden/config.yaml as surely as the absolute spelling.
	w.dir = dirState{path: p, known: true, moved: !dotDot(a.Value)}
	// Entering warden's own directory is how a relative path reaches it.
	if cls, tier, d := w.pathClass(p, accRead); cls == clsWardenSelf {
		w.findTier(c.idx, cls, tier, a.Span, d)
	}
}

// dirState is the working directory as far as the analysis knows it.
type dirState struct {
	path  string
	known bool
	// moved: the line itself moved there (cd /tmp && rm -rf x names
	// /tmp/x as surely as rm -rf /tmp/x does), by a path without ".."
	// (cd /tmp/link/.. is wherever the link's target's parent is).
	moved bool
}

// dotDot reports a path with a ".." segment: the kernel resolves it after
// the symbolic links before it, so its lexical clean is not where it leads.
func dotDot(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// assignedPath: a variable set to one of warden's own paths is how a
// later command (in this line or the next call of the session, where it
// is only $VAR) reaches it: naming it is warden.self_access already.
func (w *walker) assignedPath(idx int, a Arg) {
	if !maybePath(a.Value) || strings.ContainsAny(a.Value, " \t\n") {
		return
	}
	if cls, tier, d := w.argClass(a, accRead); cls == clsWardenSelf {
		w.findTier(idx, cls, tier, a.Span, d)
	}
}
