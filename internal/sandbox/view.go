package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wardenhq/warden/internal/protect"
)

// Mount operation kinds, applied by the helper in order after every
// mount was made read-only.
const (
	// opBind binds Sources[Source] onto Target (created if missing),
	// read-write when Write.
	opBind = "bind"
	// opTmpfs mounts an empty tmpfs on Target (a directory, created
	// unless Optional); read-only once all operations are done unless
	// Write.
	opTmpfs = "tmpfs"
	// opDevpts mounts a new devpts instance on Target: the call's own
	// pseudo-terminals, none of the user's.
	opDevpts = "devpts"
	// opSymlink creates Target as a symlink to Link.
	opSymlink = "symlink"
)

// op is one mount operation of a view.
type op struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Source int    `json:"source,omitempty"`
	Write  bool   `json:"write,omitempty"`
	// File creates a missing bind target as a file, not a directory.
	File bool `json:"file,omitempty"`
	// Optional skips the operation when Target does not exist in the
	// view (a hidden path nothing in the view reaches: the host's /tmp
	// is replaced by the call's own).
	Optional bool `json:"optional,omitempty"`
	// Want is the identity Target must have when it exists (the source
	// of a bind, the hidden directory of a tmpfs): a path swapped after
	// the host planned the view is refused, not followed.
	Want fileID `json:"want"`
	// Link is a symlink's text.
	Link string `json:"link,omitempty"`
	// Why says what the operation is for, in errors and tests.
	Why string `json:"why,omitempty"`
}

// view is what one call sees, as the helper builds it.
type view struct {
	// Sources are the host paths binds come from; the helper opens them
	// (refusing symlinks in any component) before it mounts anything,
	// and checks each is still the file the host saw (SourceIDs).
	Sources   []string `json:"sources"`
	SourceIDs []fileID `json:"source_ids"`
	// Empty is the source index of an empty read-only file (to cover
	// hidden files).
	Empty int  `json:"empty"`
	Ops   []op `json:"ops"`
	// Writable are the writable roots (for Landlock), private
	// temporary directories included.
	Writable []string `json:"writable"`
}

// fileID names a file: device and inode.
type fileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

func (v *view) source(p string) (int, error) {
	id, err := identify(p)
	if err != nil {
		return 0, err
	}
	v.Sources = append(v.Sources, p)
	v.SourceIDs = append(v.SourceIDs, id)
	return len(v.Sources) - 1, nil
}

func (v *view) bind(src, target string, write, file bool, why string) error {
	i, err := v.source(src)
	if err != nil {
		return fmt.Errorf("%s %s: %w", why, src, err)
	}
	v.Ops = append(v.Ops, op{Kind: opBind, Source: i, Target: target, Write: write, File: file, Want: v.SourceIDs[i], Why: why})
	return nil
}

// workspace resolves the call's workspace: Workspace, else Dir, else
// the host's working directory, symlinks resolved.
func workspace(sp Spec) (string, error) {
	ws := sp.Workspace
	if ws == "" {
		ws = sp.Dir
	}
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("%w: no workspace: %w", ErrRefused, err)
		}
		ws = wd
	}
	if !filepath.IsAbs(ws) {
		return "", fmt.Errorf("%w: workspace %q is not an absolute path", ErrRefused, ws)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(ws))
	if err != nil {
		return "", fmt.Errorf("%w: workspace %s: %w", ErrRefused, ws, err)
	}
	return real, nil
}

// roots returns the call's workspace and its writable roots: the
// workspace and the configured ones in workspace-write mode, none in
// read-only mode (the workspace is then only shown).
func (s *Sandbox) roots(sp Spec) (string, []string, error) {
	if sp.noWorkspace {
		return "", nil, nil
	}
	ws, err := workspace(sp)
	if err != nil {
		return "", nil, err
	}
	if h, in := inside(ws, s.cfg.Hide); in {
		return "", nil, fmt.Errorf("%w: the working directory %s lies inside %s, which warden hides from commands", ErrRefused, ws, h)
	}
	if s.cfg.Mode != WorkspaceWrite {
		return ws, nil, nil
	}
	switch {
	case ws == "/":
		return "", nil, fmt.Errorf("%w: the working directory / cannot be a writable workspace (it would make the whole file system writable); run from a project directory, or use sandbox.mode read-only", ErrRefused)
	case s.cfg.Home != "" && within(s.cfg.Home, ws):
		return "", nil, fmt.Errorf("%w: the working directory %s holds the home directory %s and cannot be a writable workspace (shell start-up files and credentials would be writable); run from a project directory, or list directories in sandbox.writable", ErrRefused, ws, s.cfg.Home)
	}
	roots := []string{ws}
	for _, w := range s.cfg.Writable {
		if !slices.Contains(roots, w) {
			roots = append(roots, w)
		}
	}
	return ws, roots, nil
}

// buildView plans the mounts of one call whose private temporary
// directory is tmp (with an empty file, empty, to bind over hidden
// files).
func (s *Sandbox) buildView(sp Spec, ws string, roots []string, tmp, empty string) (view, error) {
	var v view
	var err error
	if v.Empty, err = v.source(empty); err != nil {
		return view{}, fmt.Errorf("empty file: %w", err)
	}
	if err := v.bind(tmp, "/tmp", true, false, "private temporary directory"); err != nil {
		return view{}, err
	}
	v.Ops[len(v.Ops)-1].Want = fileID{} // it covers the host's /tmp
	v.Writable = append(v.Writable, "/tmp")
	if isDir("/var/tmp") {
		if err := v.bind(tmp, "/var/tmp", true, false, "private temporary directory"); err != nil {
			return view{}, err
		}
		v.Ops[len(v.Ops)-1].Want = fileID{}
		v.Writable = append(v.Writable, "/var/tmp")
	}
	if err := v.dev(); err != nil {
		return view{}, err
	}
	for _, r := range roots {
		if err := v.bind(r, r, true, false, "writable root"); err != nil {
			return view{}, err
		}
		v.Writable = append(v.Writable, r)
	}
	if ws != "" && len(roots) == 0 && (within(ws, "/tmp") || within(ws, "/var/tmp")) {
		// Read-only mode: the workspace is shown, not writable (the
		// host's /tmp is otherwise out of the view).
		if err := v.bind(ws, ws, false, false, "read-only workspace"); err != nil {
			return view{}, err
		}
	}
	for _, h := range s.cfg.Hide {
		fi, err := os.Lstat(h)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Nothing to cover; but a missing hidden path inside a
			// writable root could be created by the call and then read
			// by the host (a config file it loads when it appears).
			if r, in := inside(h, roots); in {
				return view{}, fmt.Errorf("%w: %s, which warden hides from commands, does not exist inside the writable root %s, so a command could create it; create it, or move it out of the workspace", ErrRefused, h, r)
			}
			continue
		case err != nil:
			return view{}, fmt.Errorf("hide %s: %w", h, err)
		}
		// Only the host's /tmp is out of the view already; anything else
		// must be found, as the host saw it, and covered.
		optional := !covered(h, roots) && (within(h, "/tmp") || within(h, "/var/tmp"))
		want := statID(fi)
		if fi.IsDir() {
			v.Ops = append(v.Ops, op{Kind: opTmpfs, Target: h, Optional: optional, Want: want, Why: "hidden"})
			continue
		}
		v.Ops = append(v.Ops, op{Kind: opBind, Source: v.Empty, Target: h, File: true, Optional: optional, Want: want, Why: "hidden"})
	}
	expose := slices.Clone(sp.Expose)
	// The program itself and warden's own binary, when they live where
	// the call cannot see (a build of go run or go test under /tmp).
	for _, prog := range []string{sp.Path, s.exe} {
		if !filepath.IsAbs(prog) || strings.HasPrefix(prog, "/proc/") {
			continue
		}
		if p, err := filepath.EvalSymlinks(prog); err == nil && !slices.Contains(expose, p) && (covered(p, s.cfg.Hide) || within(p, "/tmp") || within(p, "/var/tmp")) {
			expose = append(expose, p)
		}
	}
	for _, e := range expose {
		p, err := filepath.EvalSymlinks(e)
		if err != nil {
			return view{}, fmt.Errorf("expose %s: %w", e, err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			return view{}, fmt.Errorf("expose %s: %w", e, err)
		}
		if err := v.bind(p, p, false, !fi.IsDir(), "exposed read-only"); err != nil {
			return view{}, err
		}
	}
	for _, p := range protected(roots, s.cfg.Home) {
		if covered(p, s.cfg.Hide) {
			continue // already gone
		}
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if err := v.bind(p, p, false, !fi.IsDir(), "kept read-only inside a writable root"); err != nil {
			return view{}, err
		}
	}
	return v, nil
}

// identify returns the identity of the file at p (following symlinks:
// p is already resolved).
func identify(p string) (fileID, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return fileID{}, err
	}
	return statID(fi), nil
}

// devices are the host's device nodes a call gets in its own /dev;
// nothing else of the host's /dev (disks, the user's terminals, kvm…)
// is there.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// dev plans a /dev of the call's own, as container runtimes build it:
// an empty tmpfs with the harmless devices bound in, a new devpts
// instance (the call's own pseudo-terminals: it cannot read the user's),
// a private /dev/shm and the usual symlinks.
func (v *view) dev() error {
	v.Ops = append(v.Ops, op{Kind: opTmpfs, Target: "/dev", Why: "a /dev of its own"})
	for _, d := range devices {
		p := "/dev/" + d
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := v.bind(p, p, true, true, "device"); err != nil {
			return err
		}
		v.Ops[len(v.Ops)-1].Want = fileID{} // the target is the new, empty /dev's
	}
	v.Ops = append(v.Ops,
		op{Kind: opTmpfs, Target: "/dev/shm", Write: true, Why: "private shared memory"},
		op{Kind: opDevpts, Target: "/dev/pts", Why: "its own pseudo-terminals"},
		op{Kind: opSymlink, Target: "/dev/ptmx", Link: "pts/ptmx"},
		op{Kind: opSymlink, Target: "/dev/fd", Link: "/proc/self/fd"},
		op{Kind: opSymlink, Target: "/dev/stdin", Link: "/proc/self/fd/0"},
		op{Kind: opSymlink, Target: "/dev/stdout", Link: "/proc/self/fd/1"},
		op{Kind: opSymlink, Target: "/dev/stderr", Link: "/proc/self/fd/2"},
	)
	v.Writable = append(v.Writable, "/dev/shm")
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// protectedTable is the one protected-path table (internal/protect)
// every writer is judged by; the sandbox keeps its write floors
// read-only inside writable roots, so a command cannot do through the
// file system what the gate would refuse it as a write.
var protectedTable = protect.New(protect.Paths{})

// kept reports whether the sandbox keeps an entry's paths read-only:
// writes the table never allows (floor, hardline) and a PATH directory
// in the home (a program there shadows a system one). warden's own
// paths are hidden instead.
func kept(e protect.Entry) bool {
	if e.Access&protect.Write == 0 || e.Class == protect.ClassSelf {
		return false
	}
	return e.Tier >= protect.Floor || e.Class == protect.ClassUserBin
}

// Protected lists, for the docs, the table patterns the sandbox keeps
// read-only inside writable roots.
func Protected() []string {
	var out []string
	for _, e := range protectedTable.Entries() {
		if kept(e) && !slices.Contains(out, e.Pattern) {
			out = append(out, e.Pattern)
		}
	}
	return out
}

// protected returns the existing paths inside roots that the table's
// write floors cover, symlinks resolved (a target outside every root is
// read-only anyway). A relative pattern (".git/hooks/**", ".bashrc") is
// looked for at the top of each root, and in the home directory when a
// root holds it; deeper copies (a repository nested in the workspace)
// are not searched. A repository whose .git has no hooks directory gets
// an empty one (what git init makes), so no hook can be added.
func protected(roots []string, home string) []string {
	var out []string
	add := func(p string) {
		r, err := filepath.EvalSymlinks(p)
		if err != nil || !covered(r, roots) || slices.Contains(out, r) {
			return
		}
		out = append(out, r)
	}
	bases := slices.Clone(roots)
	if home != "" && covered(home, roots) {
		bases = append(bases, home)
	}
	for _, root := range roots {
		if fi, err := os.Lstat(filepath.Join(root, ".git")); err == nil && fi.IsDir() {
			_ = os.Mkdir(filepath.Join(root, ".git", "hooks"), 0o755) // exists usually
		}
	}
	for _, e := range protectedTable.Entries() {
		if !kept(e) {
			continue
		}
		pat := strings.TrimSuffix(e.Pattern, "/**")
		if strings.Contains(pat, "**") {
			continue // a pattern at any depth below: not searched
		}
		var globs []string
		if path.IsAbs(pat) {
			globs = []string{pat}
		} else {
			for _, b := range bases {
				globs = append(globs, filepath.Join(b, pat))
			}
		}
		for _, g := range globs {
			matches, _ := filepath.Glob(g)
			for _, m := range matches {
				// The table's own judgement, exceptions included
				// (.env.example is no .env).
				if mt := protectedTable.Match(m, protect.Write); mt.Tier >= protect.Floor || mt.Class == protect.ClassUserBin {
					add(m)
				}
			}
		}
	}
	for _, root := range roots {
		git := filepath.Join(root, ".git")
		if fi, err := os.Lstat(git); err == nil && fi.Mode().IsRegular() {
			// A worktree or submodule: .git names the real directory.
			add(git)
			if dir := gitdir(git); dir != "" {
				add(filepath.Join(dir, "hooks"))
				add(filepath.Join(dir, "config"))
				if common := commondir(dir); common != "" {
					add(filepath.Join(common, "hooks"))
					add(filepath.Join(common, "config"))
				}
			}
		}
	}
	return out
}

// gitdir reads the "gitdir: PATH" line of a .git file.
func gitdir(file string) string {
	line := firstLine(file)
	dir, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return ""
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(filepath.Dir(file), dir)
	}
	return filepath.Clean(dir)
}

// commondir reads a worktree's commondir file.
func commondir(gitDir string) string {
	dir := strings.TrimSpace(firstLine(filepath.Join(gitDir, "commondir")))
	if dir == "" {
		return ""
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(gitDir, dir)
	}
	return filepath.Clean(dir)
}

func firstLine(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if sc.Scan() {
		return sc.Text()
	}
	return ""
}
