package protect

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestResolveLexical(t *testing.T) {
	env := Env{Cwd: "/work/p", Home: "/home/u", Homes: func(u string) (string, bool) {
		if u == "root" {
			return "/root", true
		}
		return "", false
	}}
	cases := []struct{ in, want string }{
		{"~", "/home/u"},
		{"~/.bashrc", "/home/u/.bashrc"},
		{"~/..", "/home"},
		{"~/../other/.ssh/x", "/home/other/.ssh/x"},
		{"~root/.ssh/authorized_keys", "/root/.ssh/authorized_keys"},
		{"~nobody/x", "/work/p/~nobody/x"},
		{"notes.txt", "/work/p/notes.txt"},
		{"./a/../b", "/work/p/b"},
		{"../../../../..", "/"},
		{"../../etc/passwd", "/etc/passwd"},
		{"/a//b/./c/", "/a/b/c"},
		{"/proc/self/root/etc/shadow", "/proc/self/root/etc/shadow"},
	}
	for _, c := range cases {
		got := Resolve(env, c.in)
		if len(got) == 0 || got[0] != c.want {
			t.Errorf("Resolve(%q) = %q, want first %q", c.in, got, c.want)
		}
	}
	if got := Resolve(env, "/proc/self/root/etc/shadow"); !slices.Contains(got, "/etc/shadow") {
		t.Errorf("/proc/self/root not seen through: %q", got)
	}
	if got := Resolve(env, "/proc/self/cwd/.env"); !slices.Contains(got, "/work/p/.env") {
		t.Errorf("/proc/self/cwd not seen through: %q", got)
	}
	if got := Resolve(Env{}, "a/../../.ssh/x"); len(got) != 1 || got[0] != "../.ssh/x" {
		t.Errorf("no cwd: %q", got)
	}
	if got := Resolve(Env{Cwd: "/w"}, "~/x"); got[0] != "/w/~/x" {
		t.Errorf("unknown home: ~ stays literal: %q", got)
	}
	if Resolve(env, "") != nil {
		t.Error("empty path resolves to nothing")
	}
}

// mkfs builds a tree: entries "path" (file), "path/" (dir), "path ->
// target" (symlink).
func mkfs(t *testing.T, root string, spec ...string) {
	t.Helper()
	for _, s := range spec {
		name, target, link := strings.Cut(s, " -> ")
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case link:
			target = strings.ReplaceAll(target, "$ROOT", root)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		case strings.HasSuffix(name, "/"):
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestResolveSymlinks(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := root + "/home/u"
	mkfs(t, root,
		"home/u/.bashrc",
		"home/u/.ssh/authorized_keys",
		"home/u/.config/warden/config.yaml",
		"work/p/src/",
		"work/p/notes.txt -> $ROOT/home/u/.bashrc",  // absolute link to a file
		"work/p/keys -> ../../home/u/.ssh",          // relative link to a dir
		"work/p/cfg -> $ROOT/home/u/.config/warden", // link to warden's config dir
		"work/p/chain1 -> chain2",                   // chain
		"work/p/chain2 -> chain3",                   //
		"work/p/chain3 -> $ROOT/home/u/.bashrc",     //
		"work/p/loop1 -> loop2",                     // loop
		"work/p/loop2 -> loop1",                     //
		"work/p/dangling -> $ROOT/home/u/.zshrc",    // target does not exist yet
		"work/p/up -> $ROOT/home/u/.config/warden",  // ".." after a link is physical
		"work/p/selfdir -> .",                       // a link to its own directory
		"work/p/deep/a -> ../deep/b",                // relative chain across dirs
		"work/p/deep/b -> $ROOT/home/u/.ssh/authorized_keys",
	)
	tab := New(Paths{ConfigDir: home + "/.config/warden"})
	env := Env{Cwd: root + "/work/p", Home: home, FS: OSFS{}}
	cases := []struct {
		in    string
		want  string // a candidate that must be present
		class string
	}{
		{"notes.txt", home + "/.bashrc", ClassShellRC},
		{"keys/authorized_keys", home + "/.ssh/authorized_keys", ClassSSH},
		{"keys/new_file", home + "/.ssh/new_file", ClassSSH},
		{"cfg/config.yaml", home + "/.config/warden/config.yaml", ClassSelf},
		{"chain1", home + "/.bashrc", ClassShellRC},
		{"dangling", home + "/.zshrc", ClassShellRC},
		{"up/../../.bashrc", home + "/.bashrc", ClassShellRC}, // lexically work/.bashrc... physically ~/.bashrc
		{"selfdir/selfdir/selfdir/notes.txt", home + "/.bashrc", ClassShellRC},
		{"deep/a", home + "/.ssh/authorized_keys", ClassSSH},
		{"src/main.go", root + "/work/p/src/main.go", ""},
	}
	for _, c := range cases {
		got := Resolve(env, c.in)
		if !slices.Contains(got, c.want) {
			t.Errorf("Resolve(%q) = %q, want it to hold %q", c.in, got, c.want)
		}
		if m := tab.MatchAll(got, Write); m.Class != c.class {
			t.Errorf("MatchAll(Resolve(%q)) = %q, want %q", c.in, m.Class, c.class)
		}
	}
	// A loop ends (the kernel fails the open with ELOOP).
	if got := Resolve(env, "loop1/x"); len(got) == 0 {
		t.Error("loop: no candidates")
	}
	// Lexically up/../../.bashrc is under work/: both readings are kept.
	if got := Resolve(env, "up/../../.bashrc"); got[0] != root+"/work/.bashrc" {
		t.Errorf("lexical candidate first: %q", got)
	}
}

// memFS is a file system of symlinks for fuzzing: any other name is a
// regular file or directory.
type memFS map[string]string

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (f fakeInfo) Name() string       { return f.name }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

func (m memFS) Lstat(name string) (fs.FileInfo, error) {
	if _, ok := m[name]; ok {
		return fakeInfo{path.Base(name), fs.ModeSymlink}, nil
	}
	return fakeInfo{path.Base(name), fs.ModeDir}, nil
}

func (m memFS) Readlink(name string) (string, error) {
	if t, ok := m[name]; ok {
		return t, nil
	}
	return "", fs.ErrInvalid
}

func TestResolveMemFS(t *testing.T) {
	m := memFS{"/a/l": "/a/l", "/x": "../../../y", "/p/q": "r/../../s"}
	env := Env{Cwd: "/a", FS: m}
	if got := Resolve(env, "l/z"); len(got) == 0 {
		t.Error("self loop")
	}
	if got := Resolve(env, "/x/k"); !slices.Contains(got, "/y/k") {
		t.Errorf(".. above the root stays at the root: %q", got)
	}
	if got := Resolve(env, "/p/q"); !slices.Contains(got, "/s") {
		t.Errorf("relative target with ..: %q", got)
	}
}

func FuzzResolve(f *testing.F) {
	f.Add("/w", "/h", "~/../x/./y", "/w/a", "../b", "/b", "/")
	f.Add("/w", "/h", "a/b/c", "/w/a", "/w/a/b", "/w/a/b", "..")
	f.Add("", "", "~", "/", "/", "/x", "x/../../..")
	f.Fuzz(func(t *testing.T, cwd, home, p, l1, t1, l2, t2 string) {
		env := Env{Cwd: cwd, Home: home, FS: memFS{l1: t1, l2: t2}, Homes: func(string) (string, bool) { return home, true }}
		got := Resolve(env, p)
		if p != "" && len(got) == 0 {
			t.Fatalf("Resolve(%q) empty", p)
		}
		for _, g := range got {
			if path.IsAbs(g) && path.Clean(g) != g {
				t.Fatalf("Resolve(%q) gave unclean %q", p, g)
			}
		}
		if path.IsAbs(cwd) && (path.IsAbs(p) || !strings.HasPrefix(p, "~")) {
			for _, g := range got {
				if !path.IsAbs(g) {
					t.Fatalf("Resolve(%q) with cwd %q gave relative %q", p, cwd, g)
				}
			}
		}
		tab := New(Paths{StateDir: home})
		tab.MatchAll(got, Write)
		tab.MatchTree(p, Write)
		tab.MatchPattern(p, Read)
	})
}

// FuzzMatchGlob checks MatchGlob against Match: a concrete path that a
// glob matches can be no more protected than the glob.
func FuzzMatchGlob(f *testing.F) {
	f.Add("/home/u/.ssh/authorized_keys", "/home/u/.ss?/a*")
	f.Add("/dev/sda", "/dev/sd[a-c]")
	f.Add("/etc/cron.d/x", "/etc/cron*/*")
	f.Add("/w/.env.prod", "/w/.env.*")
	tab := New(Paths{StateDir: "/s/t"})
	f.Fuzz(func(t *testing.T, p, glob string) {
		if !path.IsAbs(p) || !path.IsAbs(glob) || strings.Contains(glob, "**") {
			return
		}
		p = path.Clean(p)
		lowP, lowG := strings.ToLower(p), strings.ToLower(path.Clean(glob))
		if ok, err := path.Match(lowG, lowP); err != nil || !ok {
			return
		}
		m := tab.Match(p, Write)
		g := tab.MatchGlob(glob, Write, true)
		if g.Tier < m.Tier {
			t.Fatalf("glob %q matches %q (%s %s) but MatchGlob says %s %s", glob, p, m.Tier, m.Class, g.Tier, g.Class)
		}
	})
}

// The /proc links that point somewhere different for every process are
// not followed: /dev/stdout is the agent's output, not a file of
// warden's hook process.
func TestResolveMagicLinks(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc")
	}
	tab := New(Paths{})
	env := Env{Cwd: "/work", FS: OSFS{}}
	for _, p := range []string{"/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/2", "/dev/null"} {
		if m := tab.MatchAll(Resolve(env, p), Write); m.Protected() {
			t.Errorf("%s: %+v (%q)", p, m, Resolve(env, p))
		}
	}
	if got := Resolve(env, "/proc/self/root/etc/shadow"); !slices.Contains(got, "/etc/shadow") {
		t.Errorf("/proc/self/root: %q", got)
	}
	if !magicLink("/proc/1/fd/3") || !magicLink("/proc/1/task/2/cwd") || magicLink("/proc/1/environ") {
		t.Error("magicLink")
	}
}

// A directory the line entered by a home-relative name while the home is
// unknown (cd ~/.config) keeps relative paths home-relative, so the
// table's ~ patterns still see them; ".." never climbs above the home.
func TestResolveSymbolicCwd(t *testing.T) {
	cases := []struct{ cwd, in, want string }{
		{"~/.config", "warden/config.yaml", "~/.config/warden/config.yaml"},
		{"~/.config", "../../etc/x", "~/etc/x"},
		{"~", ".ssh/id_rsa", "~/.ssh/id_rsa"},
		{"~bob/src", "a", "~bob/src/a"},
	}
	for _, c := range cases {
		got := Resolve(Env{Cwd: c.cwd}, c.in)
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("Resolve(cwd %q, %q) = %q, want [%q]", c.cwd, c.in, got, c.want)
		}
	}
	if got := Resolve(Env{Cwd: "~/.config", Home: "/home/u"}, "warden/x"); got[0] != "/home/u/.config/warden/x" {
		t.Errorf("known home: %q", got)
	}
}
