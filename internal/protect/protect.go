// Package protect is warden's one table of protected paths: the shell
// startup files, SSH keys, credential stores, other agents' settings,
// git hooks, autostart entries, system directories and warden's own
// state and config, with how reading or writing each one is judged.
// Every way of touching a path — a shell redirect, cp, the write tool,
// a hook's Write or Read, MCP write_file, code that opens a file — asks
// this table, so the same target gets the same verdict whichever way it
// is reached.
//
// Paths are judged after Resolve has turned what the agent wrote into
// every absolute path it can reach: "~" and "~user", relative to the
// working directory, ".." cleaned, and symlinks of existing components
// followed, so a link named notes.txt that points at ~/.bashrc is judged
// as ~/.bashrc.
//
// Most patterns are not tied to one home directory: "**/.ssh/**" holds
// the user's ~/.ssh, root's and any other account's, and needs no
// knowledge of $HOME (which an agent can change). Matching folds case,
// so a case-insensitive file system (macOS) cannot be used to spell a
// protected name differently.
//
// The package imports no other warden package, reads no environment and
// touches the file system only through the FS an Env carries.
package protect

import (
	"math/bits"
	"path"
	"strings"
	"unicode/utf8"
)

// Access is how a path is touched: read, write, or both (a bit set).
type Access uint8

// Accesses.
const (
	Read Access = 1 << iota
	Write
	// ReadWrite is an entry that applies to both.
	ReadWrite = Read | Write
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case ReadWrite:
		return "read, write"
	}
	return "none"
}

// Tier is how serious touching a path is, from least to most severe.
type Tier uint8

// Tiers.
const (
	// None: not protected.
	None Tier = iota
	// Dangerous: needs approval (a human, the guardian, a grant or a
	// bypass may allow it).
	Dangerous
	// Floor: denied in every mode; yolo, mode off, a container backend
	// and grants do not lift it (DESIGN decision row 5).
	Floor
	// Hardline: denied, as the analyser's hardline classes are.
	Hardline
)

func (t Tier) String() string {
	switch t {
	case Dangerous:
		return "dangerous"
	case Floor:
		return "floor"
	case Hardline:
		return "hardline"
	}
	return "none"
}

// Match is the verdict of the table for one path and access.
type Match struct {
	// Class is the class key ("write.ssh", "warden.self_access"); ""
	// when Tier is None.
	Class string
	Tier  Tier
	// Why describes the protected target for people.
	Why string
	// Pattern is the table pattern that matched.
	Pattern string
}

// Protected reports whether the path is protected at all.
func (m Match) Protected() bool { return m.Tier != None }

// Entry is one row of the table.
type Entry struct {
	// Pattern is a path glob: "/" separated components, each one a
	// path.Match pattern, and "**" for any number of components
	// (including none). A pattern not starting with "/" starts with
	// "**/": it matches at any depth. "X/**" covers X and everything
	// under it.
	Pattern string
	// Except are patterns of paths the entry does not cover
	// (".ssh/*.pub" under a read entry for ".ssh").
	Except []string
	Access Access
	Tier   Tier
	Class  string
	Why    string

	pat    []comp
	except [][]comp
	// refine, when set, must also accept a concrete path (a device
	// family the glob only approximates). MatchPattern ignores it,
	// which can only match more.
	refine func(lowerPath string) bool
	// last, when set, must be the path's last name, and need one of its
	// names: a cheap filter before the glob match.
	last, need string
}

// Paths are warden's own locations, protected as hardline
// warden.self_access in both directions (invariant 11). The CLI
// resolves them at the edge.
type Paths struct {
	// StateDir holds the database, sockets and state files.
	StateDir string
	// ConfigDir holds config.yaml.
	ConfigDir string
	// Extra are further paths of warden's own: a config file outside
	// ConfigDir, the physical form of a directory reached through a
	// symlink, a grant store.
	Extra []string
}

// Table is a compiled protected-path table. It is immutable and safe
// for concurrent use.
//
// Every match runs the same test on each entry, in table order (the
// first of equally severe entries wins); the index only picks which
// entries can pass that test at all, from the literal names a path must
// hold to match them, so an entry it leaves out could not have matched.
// Linear turns the index off, which differential tests compare against.
type Table struct {
	entries []Entry
	// linear makes every entry a candidate (Linear).
	linear bool
	// For Match and literal globs: entries by the name a path must end
	// with, by a name it must hold, and the rest.
	byLast, byNeed map[string][]int
	rest           []int
	// For MatchTree: anchored entries by their first name (and those
	// whose first name is not a plain literal); unanchored entries of
	// at least two names below their "**" by the first of them (and
	// those whose first is not a plain literal). Unanchored entries of
	// one name never reach below a tree.
	treeFirst, treeSecond map[string][]int
	treeAnchored          []int
	treeRest              []int
	// treeUnanchored are the unanchored entries of two names or more.
	treeUnanchored []int
}

// ClassSelf is the class of touching warden's own state or config.
const ClassSelf = "warden.self_access"

// New compiles the built-in table plus warden's own paths.
func New(own Paths) *Table {
	t := &Table{}
	var dirs []string
	for _, d := range append([]string{own.StateDir, own.ConfigDir}, own.Extra...) {
		d = strings.TrimSpace(d)
		if d == "" || !path.IsAbs(d) {
			continue
		}
		dirs = append(dirs, path.Clean(d))
	}
	for _, d := range dirs {
		p := escapeGlob(d)
		if d != "/" {
			p += "/**"
		}
		t.entries = append(t.entries, Entry{Pattern: p, Access: ReadWrite, Tier: Hardline, Class: ClassSelf, Why: "warden's own state or configuration"})
	}
	t.entries = append(t.entries, builtin()...)
	for i := range t.entries {
		e := &t.entries[i]
		e.pat = compilePattern(e.Pattern)
		e.except = make([][]comp, len(e.Except))
		for j, x := range e.Except {
			e.except[j] = compilePattern(x)
		}
		e.last, e.need = filterNames(e.pat)
	}
	t.index()
	return t
}

// Linear returns a copy of t that tries every entry on every match: the
// same results, without the index. For differential tests.
func Linear(t *Table) *Table {
	c := *t
	c.linear = true
	return &c
}

// index builds the candidate index (see Table).
func (t *Table) index() {
	t.byLast, t.byNeed = map[string][]int{}, map[string][]int{}
	t.treeFirst, t.treeSecond = map[string][]int{}, map[string][]int{}
	for i, e := range t.entries {
		switch {
		case e.last != "":
			t.byLast[e.last] = append(t.byLast[e.last], i)
		case e.need != "":
			t.byNeed[e.need] = append(t.byNeed[e.need], i)
		default:
			t.rest = append(t.rest, i)
		}
		switch {
		case len(e.pat) == 0:
			// MatchTree skips it.
		case !e.pat[0].anyDepth:
			if lit, ok := plainLit(e.pat[0]); ok {
				t.treeFirst[lit] = append(t.treeFirst[lit], i)
			} else {
				t.treeAnchored = append(t.treeAnchored, i)
			}
		case len(e.pat) >= 2:
			t.treeUnanchored = append(t.treeUnanchored, i)
			if len(e.pat) < 3 {
				break
			}
			// compilePattern never puts "**" after "**": pat[1] is a name.
			if lit, ok := plainLit(e.pat[1]); ok {
				t.treeSecond[lit] = append(t.treeSecond[lit], i)
			} else {
				t.treeRest = append(t.treeRest, i)
			}
		}
	}
}

// plainLit returns the name a comp matches when it matches exactly one
// name, spelled as the map key a path's name is looked up by. A name
// holding U+FFFD is not plain: an invalid byte of a path decodes to the
// same rune, so equal runes would not mean equal strings.
func plainLit(c comp) (string, bool) {
	if c.anyDepth || !c.isLit || c.lit == "" || strings.ContainsRune(c.lit, utf8.RuneError) {
		return "", false
	}
	return c.lit, true
}

// cands is a set of entry indexes, iterated in table order. Its words
// live in the caller's frame (newCands): a match allocates nothing for
// it.
type cands struct{ w []uint64 }

// newCands returns an empty set for n entries over buf.
func newCands(buf []uint64, n int) cands {
	if k := (n + 63) / 64; k <= len(buf) {
		return cands{w: buf[:k]}
	}
	return cands{w: make([]uint64, (n+63)/64)}
}

func (c cands) mark(idx []int) {
	for _, i := range idx {
		c.w[i/64] |= 1 << (i % 64)
	}
}

func (c cands) all(n int) {
	for i := range c.w {
		c.w[i] = ^uint64(0)
	}
	if r := n % 64; r != 0 {
		c.w[len(c.w)-1] = 1<<r - 1
	}
}

// next returns the first index at or after i in the set, or -1.
func (c cands) next(i int) int {
	for w := i / 64; w < len(c.w); w++ {
		word := c.w[w]
		if w == i/64 {
			word &^= 1<<(i%64) - 1
		}
		if word != 0 {
			return w*64 + bits.TrailingZeros64(word)
		}
	}
	return -1
}

// markNames marks the entries a path of these names can match: those
// ending in its last name, those needing one of its names, and the rest.
func (t *Table) markNames(c cands, names []string) {
	c.mark(t.rest)
	if len(names) > 0 {
		c.mark(t.byLast[names[len(names)-1]])
	}
	for _, n := range names {
		c.mark(t.byNeed[n])
	}
}

// filterNames picks the literal names a path must hold to match p.
func filterNames(p []comp) (last, need string) {
	if len(p) == 0 {
		return "", ""
	}
	if lit, ok := plainLit(p[len(p)-1]); ok {
		return lit, ""
	}
	for k := len(p) - 1; k >= 0; k-- {
		if lit, ok := plainLit(p[k]); ok {
			return "", lit
		}
	}
	return "", ""
}

func literalName(toks []tok) (string, bool) {
	var b strings.Builder
	for _, t := range toks {
		if t.star || !t.set.isLit {
			return "", false
		}
		b.WriteRune(t.set.lit)
	}
	return b.String(), b.Len() > 0
}

// Entries returns the table's rows, warden's own paths first.
func (t *Table) Entries() []Entry {
	out := make([]Entry, len(t.entries))
	copy(out, t.entries)
	return out
}

// Match judges touching the path abs with access acc (Read or Write;
// ReadWrite asks for the worse of the two). abs should be one of
// Resolve's candidates. A relative path, whose directory is unknown, is
// judged by what it names below that directory (".ssh/id_rsa" is an SSH
// key wherever it is), and one that climbs out with ".." also as if it
// reached the root. The most severe matching entry wins; among equals,
// the first.
func (t *Table) Match(abs string, acc Access) Match {
	if abs == "" {
		return Match{}
	}
	if !path.IsAbs(abs) {
		return t.MatchGlob(escapeGlob(abs), acc, false)
	}
	low := strings.ToLower(path.Clean(abs))
	var nb [16]string
	names := appendNames(nb[:0], low)
	// Candidate entries, in table order (the first of equals wins).
	var buf [8]uint64
	c := newCands(buf[:], len(t.entries))
	if t.linear {
		c.all(len(t.entries))
	} else {
		t.markNames(c, names)
	}
	var best Match
	for i := c.next(0); i >= 0; i = c.next(i + 1) {
		e := &t.entries[i]
		if e.Access&acc == 0 || e.Tier <= best.Tier {
			continue
		}
		if !matchNames(e.pat, names) || (e.refine != nil && !e.refine(low)) || e.excepted(names) {
			continue
		}
		best = e.match()
	}
	return best
}

func (e *Entry) match() Match {
	return Match{Class: e.Class, Tier: e.Tier, Why: e.Why, Pattern: e.Pattern}
}

func (e *Entry) excepted(names []string) bool {
	for _, x := range e.except {
		if matchNames(x, names) {
			return true
		}
	}
	return false
}

// MatchAll judges every candidate (Resolve's result) and returns the
// most severe match.
func (t *Table) MatchAll(cands []string, acc Access) Match {
	var best Match
	for _, c := range cands {
		if m := t.Match(c, acc); m.Tier > best.Tier {
			best = m
		}
	}
	return best
}

// MatchPattern judges a shell glob as bash expands it by default:
// MatchGlob without dotglob.
func (t *Table) MatchPattern(glob string, acc Access) Match {
	return t.MatchGlob(glob, acc, false)
}

// MatchGlob judges a shell glob (path.Match syntax per name, "**" any
// depth as with globstar): it matches an entry when some path could
// match both the glob and the entry — where the glob's "**" does not
// stand for a directory the entry names (x/**/*.go is not taken to
// reach x/.config/warden/; x/**/id_rsa reaches an id_rsa anywhere). Without dotglob a name of the glob
// that does not start with a literal "." cannot match a hidden name, as
// in bash ("*" does not match ".ssh"). A relative glob is judged as
// Match judges a relative path. Exceptions and device shapes apply only
// to a glob without pattern characters, so a glob is never let off
// because some of its matches are exempt.
func (t *Table) MatchGlob(glob string, acc Access, dotglob bool) Match {
	if glob == "" {
		return Match{}
	}
	g := strings.ToLower(glob)
	abs := strings.HasPrefix(g, "/")
	var best Match
	if !abs {
		tail, climbed := relTail(g)
		if climbed {
			best = t.MatchGlob("/"+tail, acc, dotglob)
		}
		g = tail
	}
	var gb [16]comp
	gc := compileGlob(gb[:0], g, dotglob)
	literal := !hasMeta(g)
	var nb [16]string
	var names []string
	if literal {
		names = appendNames(nb[:0], literalPath(g, abs))
	}
	var buf [8]uint64
	c := newCands(buf[:], len(t.entries))
	t.markGlob(c, gc)
	for i := c.next(0); i >= 0; i = c.next(i + 1) {
		e := &t.entries[i]
		if e.Access&acc == 0 || e.Tier <= best.Tier {
			continue
		}
		if !abs && (len(e.pat) == 0 || !e.pat[0].anyDepth) {
			continue // anchored entries need a known directory
		}
		if quickMiss(e, gc) || !intersects(e.pat, gc, false) {
			continue
		}
		if literal {
			if abs && e.refine != nil && !e.refine("/"+strings.Join(names, "/")) {
				continue
			}
			if e.excepted(names) {
				continue
			}
		}
		best = e.match()
	}
	return best
}

// literalPath is path.Clean("/" + unescapeGlob(g)) for a glob without
// pattern characters, without building "/"+g when it need not: an
// absolute g cleans to the same path, and a relative one (relTail's
// tail, already clean) without escapes is its own clean form below "/".
func literalPath(g string, abs bool) string {
	switch {
	case strings.Contains(g, `\`):
		return path.Clean("/" + unescapeGlob(g))
	case abs:
		return path.Clean(g)
	}
	return g
}

// markGlob marks the entries a glob can intersect. A glob of plain
// literal names (no "**", no pattern characters: a path, as Match
// passes a relative one) can only intersect an entry whose names it
// spells: every name of an entry pairs with one of the glob's, a plain
// literal only with the same name, and the entry's last name with the
// glob's last. Any other glob tries every entry.
func (t *Table) markGlob(c cands, gc []comp) {
	if t.linear {
		c.all(len(t.entries))
		return
	}
	for _, g := range gc {
		if g.anyDepth || !g.isLit {
			c.all(len(t.entries))
			return
		}
	}
	c.mark(t.rest)
	if len(gc) > 0 {
		c.mark(t.byLast[gc[len(gc)-1].lit])
	}
	for _, g := range gc {
		c.mark(t.byNeed[g.lit])
	}
}

// quickMiss rules out an entry cheaply: the first names of an anchored
// pattern and the glob, or the last names of both, cannot be the same.
func quickMiss(e *Entry, g []comp) bool {
	if len(g) == 0 || len(e.pat) == 0 {
		return false
	}
	if p0, g0 := e.pat[0], g[0]; !p0.anyDepth && !g0.anyDepth && !compsIntersect(p0, g0, g0.noDot) {
		return true
	}
	pl, gl := e.pat[len(e.pat)-1], g[len(g)-1]
	if !pl.anyDepth && !gl.anyDepth && !compsIntersect(pl, gl, gl.noDot) {
		return true
	}
	// A literal name of the entry must be matched by a name of the glob
	// (the glob's ** does not stand for it).
	for _, pc := range e.pat {
		if !pc.isLit {
			continue
		}
		found := false
		for _, gc := range g {
			if !gc.anyDepth && compsIntersect(pc, gc, gc.noDot) {
				found = true
				break
			}
		}
		if !found {
			return true
		}
	}
	return false
}

// MatchTree judges an operation on the whole tree at abs (a recursive
// delete or chmod, a move of a directory): it matches what Match does,
// and also an entry that lies below abs and is reached through it —
// moving ~/.config away takes ~/.config/warden with it, and deleting
// /etc deletes /etc/cron.d. Entries that match at any depth count only
// when abs itself names part of them (~/.ssh, ~/.config for
// .config/warden/**), never because some unnamed directory below abs
// might hold a .env file: a tree of work is not protected for what it
// could contain.
func (t *Table) MatchTree(abs string, acc Access) Match {
	m := t.Match(abs, acc)
	if abs == "" {
		return m
	}
	isAbs := path.IsAbs(abs)
	var nb [16]string
	var names []string
	if isAbs {
		names = appendNames(nb[:0], strings.ToLower(path.Clean(abs)))
	} else {
		tail, _ := relTail(strings.ToLower(abs))
		names = appendNames(nb[:0], tail)
	}
	// A home whose place is unknown ("~", "~bob") holds what any
	// unanchored entry names (~/.config/warden, ~/.ssh/…), as a known
	// home does.
	home := !isAbs && len(names) == 1 && strings.HasPrefix(names[0], "~")
	var bb [17]comp
	below := append(appendLiteralComps(bb[:0], names), comp{anyDepth: true})
	var buf [8]uint64
	c := newCands(buf[:], len(t.entries))
	t.markTree(c, isAbs, home, names, below)
	for i := c.next(0); i >= 0; i = c.next(i + 1) {
		e := &t.entries[i]
		if e.Access&acc == 0 || e.Tier <= m.Tier || len(e.pat) == 0 {
			continue
		}
		if !e.pat[0].anyDepth {
			if isAbs && intersects(e.pat, below, true) {
				m = e.match()
			}
			continue
		}
		if home && len(e.pat) > 1 || reachesBelow(e.pat, names) {
			m = e.match()
		}
	}
	return m
}

// markTree marks the entries MatchTree's loop can match. An anchored
// entry must intersect the tree's names followed by "**": its first
// name pairs with the tree's first, a plain literal only with the same
// name (the root, with no names, reaches every anchored entry). An
// unanchored entry must have the name after its "**" match one of the
// tree's names, unless the tree is a home of unknown place ("~").
func (t *Table) markTree(c cands, isAbs, home bool, names []string, below []comp) {
	if t.linear {
		c.all(len(t.entries))
		return
	}
	if isAbs {
		if len(names) == 0 {
			for _, idx := range t.treeFirst {
				c.mark(idx)
			}
		} else if b := below[0]; b.isLit {
			c.mark(t.treeFirst[b.lit])
		} else {
			for _, idx := range t.treeFirst {
				c.mark(idx)
			}
		}
		c.mark(t.treeAnchored)
	}
	if home {
		// An unknown home reaches every unanchored entry of two names
		// or more.
		c.mark(t.treeUnanchored)
		return
	}
	c.mark(t.treeRest)
	for _, n := range names {
		c.mark(t.treeSecond[n])
	}
}

// reachesBelow reports whether an unanchored pattern ("**", p1, …, pn)
// has a match below the path names whose upper part (p1…pk, k ≥ 1) is
// named by the tail of names.
func reachesBelow(p []comp, names []string) bool {
	for k := 2; k < len(p); k++ {
		for start := 0; start < len(names); start++ {
			if matchNames(p[1:k], names[start:]) {
				return true
			}
		}
	}
	return false
}

func appendLiteralComps(out []comp, names []string) []comp {
	for _, n := range names {
		out = append(out, nameComp(escapeGlob(n)))
	}
	return out
}

// relTail cleans a relative path and drops the ".." that climb out of
// the unknown directory it is relative to, reporting whether it did.
func relTail(p string) (string, bool) {
	c := path.Clean(p)
	climbed := false
	for c == ".." || strings.HasPrefix(c, "../") {
		c = strings.TrimPrefix(strings.TrimPrefix(c, ".."), "/")
		climbed = true
	}
	if c == "." {
		c = ""
	}
	return c, climbed
}

func splitPath(abs string) []string {
	return appendNames(nil, abs)
}

// appendNames appends the names of a path to dst (splitPath into a
// buffer of the caller's).
func appendNames(dst []string, abs string) []string {
	abs = strings.Trim(abs, "/")
	if abs == "" {
		return dst
	}
	for {
		i := strings.IndexByte(abs, '/')
		if i < 0 {
			return append(dst, abs)
		}
		dst, abs = append(dst, abs[:i]), abs[i+1:]
	}
}
