package shell

import (
	"path"
	"strings"
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
		cls, d := c.w.argClass(a, acc)
		if cls == "" {
			continue
		}
		if acc&accWrite != 0 {
			// argPaths took every operand for a read; this one is written.
			c.w.dropFinding(c.idx, clsSecretRead, a.Span)
		}
		c.findDetail(cls, a.Span, d)
	}
}

// dropFinding removes a finding of class about command idx at span.
func (w *walker) dropFinding(idx int, class string, sp Span) {
	fs := w.a.Findings
	for i := len(fs) - 1; i >= 0 && i >= len(fs)-16; i-- {
		if fs[i].Class == class && fs[i].Command == idx && fs[i].Span == sp {
			w.a.Findings = append(fs[:i], fs[i+1:]...)
			return
		}
	}
}

// argClass is the class of accessing the path an argument names.
func (w *walker) argClass(a Arg, acc access) (string, string) {
	p, ok := w.resolvePath(a)
	if !ok {
		return "", ""
	}
	if a.Glob && strings.ContainsAny(p, "*?[") {
		return w.patternClass(p, acc)
	}
	cls, d := w.pathClass(p, acc)
	if cls == "" {
		return "", ""
	}
	if d == "" || d[0] != '/' && d[0] != '~' {
		d = p
	}
	return cls, d
}

// tree judges paths that a recursive command (cp -r, tar, grep -r, rsync,
// mv, rm -r) reads or writes with everything under them: a parent of
// warden's own directories, or of a credential directory, reaches them.
func (c *cmd) tree(paths []Arg, acc access) {
	for _, a := range paths {
		p, ok := c.w.resolvePath(a)
		if !ok {
			continue
		}
		if cls, d := c.w.ancestorClass(p, acc); cls != "" {
			c.findDetail(cls, a.Span, d)
		}
	}
}

// treeTargets are directories whose parents reach secrets.
var treeTargets = []string{"~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.azure", "~/.kube", "~/.docker", "~/.password-store"}

// ancestorClass is the class of a recursive access of p when p is a
// parent of a protected directory.
func (w *walker) ancestorClass(p string, acc access) (string, string) {
	p = strings.TrimSuffix(p, "/*")
	under := func(target string) bool {
		return p == "/" || p != target && strings.HasPrefix(target, p+"/")
	}
	for _, wp := range w.wardenPaths() {
		if under(wp) {
			return clsWardenSelf, wp
		}
	}
	home := w.home()
	for _, t := range treeTargets {
		full := t
		if home != "" {
			full = home + t[1:]
		}
		if under(full) || under(t) {
			if acc&accWrite != 0 {
				return "", ""
			}
			return clsSecretRead, t
		}
	}
	return "", ""
}

// argPaths checks every argument that names a path (or holds one after
// "=", as --file=PATH): warden's own files are hardline whatever the
// command does with them; a secret is read unless the command only looks
// at names and metadata; another process's memory is proc.mem.
func (c *cmd) argPaths() {
	meta := metadataOnly[c.name]
	for _, a := range c.args[1:] {
		if !maybePath(a.Value) {
			continue
		}
		if _, after, ok := strings.Cut(a.Value, "="); ok && strings.HasPrefix(a.Value, "-") && a.Static {
			a = sub(a, len(a.Value)-len(after))
		} else if strings.HasPrefix(a.Value, "-") && a.Static {
			continue
		}
		p, ok := c.w.resolvePath(a)
		if !ok {
			continue
		}
		if procMem.MatchString(p) {
			c.find(clsProcMem, a.Span)
			continue
		}
		acc := accRead
		cls, d := "", ""
		if a.Glob && strings.ContainsAny(p, "*?[") {
			cls, d = c.w.patternClass(p, acc)
		} else {
			cls, d = c.w.pathClass(p, acc)
		}
		switch {
		case cls == clsWardenSelf:
			c.findDetail(cls, a.Span, d)
		case cls == clsSecretRead && !meta:
			c.findDetail(cls, a.Span, p)
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
	return protectedBases[v] || strings.HasPrefix(v, "id_") || strings.HasPrefix(v, ".env")
}

// protectedBases are the file names the table protects anywhere.
var protectedBases = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range protectedTable {
		if e.kind == "base" && !strings.ContainsAny(e.pattern, "*?[") {
			m[e.pattern] = true
		}
	}
	return m
}()

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
		if h := w.home(); h != "" {
			w.dir = dirState{path: h, known: true}
		} else {
			w.dir = dirState{}
		}
		return
	}
	a := args[0]
	if a.Value == "-" || !a.Static && !strings.HasPrefix(a.Value, "$") {
		w.dir = dirState{}
		return
	}
	p, ok := w.resolvePath(a)
	if !ok || !strings.HasPrefix(p, "/") {
		w.dir = dirState{}
		return
	}
	w.dir = dirState{path: path.Clean(p), known: true}
	// Entering warden's own directory is how a relative path reaches it.
	if cls, d := w.pathClass(p, accRead); cls == clsWardenSelf {
		c.findDetail(cls, a.Span, d)
	}
}

// dirState is the working directory as far as the analysis knows it.
type dirState struct {
	path  string
	known bool
}
