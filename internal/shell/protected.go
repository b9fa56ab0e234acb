package shell

import (
	"path"
	"strings"
	"sync"

	"github.com/wardenhq/warden/internal/protect"
)

// The protected paths are internal/protect's one table: every way of
// touching a file here (redirections, tee, cp, dd of=, sed -i, curl -o,
// tar -C, …) asks it, as the write tool and the hook's Write/Edit do, so
// the same target gets the same class whichever writer is used.

// access is what a command does to a path.
type access = protect.Access

const (
	accRead  = protect.Read
	accWrite = protect.Write
)

// tables caches the built-in table per set of warden paths, for callers
// that give ProtectedPaths rather than a compiled table. A table is
// immutable.
var tables sync.Map // string → *protect.Table

// table is the protected-path table of this analysis.
func (w *walker) table() *protect.Table {
	if w.opts.Protect != nil {
		return w.opts.Protect
	}
	if w.tableCache != nil {
		return w.tableCache
	}
	key := strings.Join(w.opts.ProtectedPaths, "\x00")
	if t, ok := tables.Load(key); ok {
		w.tableCache = t.(*protect.Table)
		return w.tableCache
	}
	t := protect.New(protect.Paths{Extra: w.opts.ProtectedPaths})
	tables.Store(key, t)
	w.tableCache = t
	return t
}

// env is how paths resolve at this point of the line: the owner's home,
// the directory cd left, symlinks through the caller's file system.
func (w *walker) env() protect.Env {
	return protect.Env{Cwd: w.cwd(), Home: w.home(), Homes: w.opts.Homes, FS: w.opts.FS}
}

// match is the protect verdict of accessing what p names (already
// expanded: ~ and relative paths are resolved here, with symlinks).
func (w *walker) match(p string, acc access) protect.Match {
	if p == "" || w.cannotMatch(p) {
		return protect.Match{}
	}
	var rb [4]string
	return w.table().MatchAll(protect.AppendResolve(rb[:0], w.env(), p), acc)
}

// cannotMatch is a cheap test that a relative path in an unknown
// directory, which does not climb out of it, names nothing the table
// protects: none of its names is a name of the table, its last name has
// no protected extension or prefix. (The table matches such a path by
// what it names at any depth; matching it costs a scan of every entry.)
func (w *walker) cannotMatch(p string) bool {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || w.cwd() != "" || w.opts.FS != nil {
		return false
	}
	for _, n := range strings.Split(strings.ToLower(p), "/") {
		if n == ".." || tableNames()[n] || strings.ContainsAny(n, "*?[") {
			return false
		}
	}
	last := strings.ToLower(path.Base(p))
	if i := strings.LastIndexByte(last, '.'); i > 0 && fileShapes().exts[last[i:]] {
		return false
	}
	for _, pre := range fileShapes().prefixes {
		if strings.HasPrefix(last, pre) {
			return false
		}
	}
	return !strings.HasPrefix(last, ".env")
}

// tableNames are the literal names the built-in table's patterns hold.
var tableNames = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{"warden": true}
	for _, e := range builtinEntries() {
		for _, n := range strings.Split(strings.ToLower(e.Pattern), "/") {
			if n != "" && n != "**" && !strings.ContainsAny(n, "*?[") {
				m[n] = true
			}
		}
	}
	return m
})

// pathClass returns the class of accessing the path p, the tier, and a
// detail for the finding. Besides the table: another process's memory,
// the sysrq trigger.
func (w *walker) pathClass(p string, acc access) (string, Tier, string) {
	abs := w.absPath(p)
	if procMem().MatchString(abs) {
		return clsProcMem, TierDangerous, abs
	}
	if acc&accWrite != 0 && abs == "/proc/sysrq-trigger" {
		return clsShutdown, TierHardline, abs
	}
	if d, ok := w.ownerWarden(abs); ok {
		return clsWardenSelf, TierHardline, abs + " (warden's own, from the owner's " + d + ")"
	}
	m := w.match(p, acc)
	if !m.Protected() {
		if acc&accWrite != 0 && historyFiles[path.Base(abs)] {
			return clsHistoryErase, TierDangerous, abs
		}
		return "", "", ""
	}
	return m.Class, tierOf(m.Tier), describeMatch(abs, m)
}

// historyFiles are shell and client histories: writing one (or deleting
// it) erases what ran.
var historyFiles = map[string]bool{".bash_history": true, ".zsh_history": true, ".zhistory": true, ".history": true, ".sh_history": true,
	"fish_history": true, ".python_history": true, ".node_repl_history": true, ".psql_history": true, ".mysql_history": true, ".lesshst": true}

// ownerWarden reports a path under warden's directories as the owner's
// terminal names them ($XDG_CONFIG_HOME/warden, $XDG_STATE_HOME/warden,
// $WARDEN_STATE): warden run there would read them.
func (w *walker) ownerWarden(abs string) (string, bool) {
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "WARDEN_STATE"} {
		d := w.opts.Env[v]
		if !path.IsAbs(d) {
			continue
		}
		d = path.Clean(d)
		if v != "WARDEN_STATE" {
			d += "/warden"
		}
		if abs == d || strings.HasPrefix(abs, d+"/") || globMatch(abs, d) {
			return "$" + v, true
		}
	}
	return "", false
}

// patternClass returns the class of accessing any protected path the
// glob could match (bash's expansion, without dotglob).
func (w *walker) patternClass(g string, acc access) (string, Tier, string) {
	g = w.absPath(g)
	if procMem().MatchString(g) {
		return clsProcMem, TierDangerous, g
	}
	if acc&accWrite != 0 && devicePattern(g) {
		return clsDiskWrite, TierHardline, g
	}
	if d, ok := w.ownerWarden(path.Dir(g)); ok {
		return clsWardenSelf, TierHardline, g + " (warden's own, from the owner's " + d + ")"
	}
	if !w.globstar {
		// Without globstar, ** is *: one name.
		for strings.Contains(g, "**") {
			g = strings.ReplaceAll(g, "**", "*")
		}
	}
	m := w.table().MatchPattern(g, acc)
	if !m.Protected() {
		return "", "", ""
	}
	// A bare * lists a directory: that it could hold a file named id_rsa
	// or x.pem (a name protected in any directory) is no reason to take
	// `cat *` for a secret read. A glob that names such files (*.pem,
	// .env*) or lies in a protected directory (~/.ssh/*) still is.
	last := g[strings.LastIndexByte(g, '/')+1:]
	if strings.Trim(last, "*") == "" && !strings.Contains(m.Pattern, "/") {
		return "", "", ""
	}
	// Warden's directories hold few names: a glob whose last name can
	// match none of them (**/*.go) cannot reach its files.
	if m.Class == clsWardenSelf && strings.ContainsAny(last, "*?[") && !matchesAny(last, wardenNames) {
		return "", "", ""
	}
	return m.Class, tierOf(m.Tier), describeMatch(g, m)
}

// treeClass returns the class of an operation on the whole tree at p (a
// recursive copy, delete or archive, a move of a directory): what it
// holds is reached through it (moving ~/.config takes warden's config
// with it; archiving the home directory reads its keys).
func (w *walker) treeClass(p string, acc access) (string, Tier, string) {
	var best protect.Match
	if w.cannotMatch(p) {
		return "", "", ""
	}
	var rb [4]string
	for _, c := range protect.AppendResolve(rb[:0], w.env(), p) {
		c = strings.TrimSuffix(c, "/*")
		if !w.treeMayReach(c) {
			if m := w.table().Match(c, acc); m.Tier > best.Tier {
				best = m
			}
			continue
		}
		if m := w.table().MatchTree(c, acc); m.Tier > best.Tier {
			best = m
		}
		if acc&accRead != 0 && best.Tier < protect.Dangerous {
			if t := w.holdsSecrets(c); t != "" {
				best = w.table().Match(t, protect.Read)
			}
		}
	}
	if !best.Protected() {
		return "", "", ""
	}
	return best.Class, tierOf(best.Tier), describeMatch(p, best)
}

// secretHomes are the home directories' credential directories: a tree
// above one of them holds it.
var secretHomes = []string{".ssh/id_rsa", ".aws/credentials", ".gnupg/private-keys-v1.d", ".config/gcloud/credentials.db", ".kube/config", ".docker/config.json", ".password-store/x.gpg"}

// holdsSecrets returns a secret file under the directory p, when p is the
// home directory or above it.
func (w *walker) holdsSecrets(p string) string {
	home := w.home()
	if home == "" || p != "/" && p != home && !strings.HasPrefix(home, strings.TrimSuffix(p, "/")+"/") {
		return ""
	}
	return home + "/" + secretHomes[0]
}

// tierOf maps protect's tiers to the catalogue's.
func tierOf(t protect.Tier) Tier {
	switch t {
	case protect.Hardline:
		return TierHardline
	case protect.Floor:
		return TierFloor
	}
	return TierDangerous
}

func describeMatch(p string, m protect.Match) string {
	if m.Why == "" {
		return p
	}
	return p + " (" + m.Why + ")"
}

// globMatch matches a path against a pattern as bash does without
// dotglob: component by component, a leading "." matched only by a
// literal one.
func globMatch(pattern, name string) bool {
	pc := strings.Split(pattern, "/")
	nc := strings.Split(name, "/")
	if len(pc) != len(nc) {
		return false
	}
	for i := range pc {
		if strings.HasPrefix(nc[i], ".") && !strings.HasPrefix(pc[i], ".") {
			return false
		}
		if ok, _ := path.Match(pc[i], nc[i]); !ok {
			return false
		}
	}
	return true
}

// wardenNames are the names found in warden's own directories.
var wardenNames = []string{"warden", "config.yaml", "config.yml", "warden.db", "warden.db-wal", "warden.db-shm", "admin.sock",
	"token", "shellstate", "grants.json", "approvals.db", "state"}

func matchesAny(pattern string, names []string) bool {
	for _, n := range names {
		if ok, _ := path.Match(pattern, n); ok {
			return true
		}
	}
	return false
}

// treeMayReach is a cheap test that a protected entry may lie below the
// directory p (MatchTree's question, which scans every entry): p is
// relative, or the root, or its last name is a directory an entry that
// matches at any depth goes through (.ssh, .config, .git, Library), or an
// anchored entry (or warden's own path) lies under p.
func (w *walker) treeMayReach(p string) bool {
	if !strings.HasPrefix(p, "/") || p == "/" {
		return true
	}
	low := strings.ToLower(p)
	names := strings.Split(strings.Trim(low, "/"), "/")
	if treeShapes().dirs[names[len(names)-1]] {
		return true
	}
	for _, pat := range treeShapes().anchored {
		if below(pat, names) {
			return true
		}
	}
	// warden's own paths, as the caller gave them (the gate gives the
	// ones its table was built with).
	for _, wp := range w.opts.ProtectedPaths {
		if strings.HasPrefix(strings.ToLower(path.Clean(wp)), low+"/") {
			return true
		}
	}
	return false
}

// below reports whether a pattern (its names) can match a path under
// names: names is a prefix of what it matches.
func below(pat, names []string) bool {
	for i, n := range names {
		if i >= len(pat) {
			return false
		}
		if pat[i] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[i], n); !ok {
			return false
		}
	}
	return len(pat) > len(names)
}

// treeShapes are the names of directories that entries matching at any
// depth go through, and the names of the entries
// anchored at the root.
var treeShapes = sync.OnceValue(func() (sh struct {
	dirs     map[string]bool
	anchored [][]string
}) {
	sh.dirs, sh.anchored = treeDirs()
	return sh
})

func treeDirs() (map[string]bool, [][]string) {
	dirs := map[string]bool{}
	var anchored [][]string
	for _, e := range builtinEntries() {
		pat := strings.ToLower(e.Pattern)
		names := strings.Split(strings.Trim(pat, "/"), "/")
		if strings.HasPrefix(pat, "/") {
			anchored = append(anchored, names)
			continue
		}
		for _, n := range names[:len(names)-1] {
			dirs[n] = true
		}
	}
	return dirs, anchored
}
