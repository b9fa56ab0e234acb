package protect

import (
	"io/fs"
	"os"
	"os/user"
	"path"
	"strings"
)

// FS is the little of a file system resolution needs: what a name is
// (without following it) and where a symlink points.
type FS interface {
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
}

// OSFS is the host's file system.
type OSFS struct{}

// Lstat implements FS.
func (OSFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// Readlink implements FS.
func (OSFS) Readlink(name string) (string, error) { return os.Readlink(name) }

// Env is what resolving a path needs to know about whoever names it.
// It comes from the caller (the owner's terminal state, a hook payload),
// never from warden's own process environment.
type Env struct {
	// Cwd is the absolute working directory relative paths start from;
	// "" when unknown (relative paths then stay relative, and Match
	// treats them as sitting at any depth).
	Cwd string
	// Home is the home directory "~" names; "" when unknown.
	Home string
	// Homes looks up "~user"; nil when unknown.
	Homes func(user string) (string, bool)
	// FS follows symlinks of existing components; nil resolves
	// lexically only.
	FS FS
}

// LookupHome finds a user's home directory in the password database
// (os/user), for Env.Homes.
func LookupHome(name string) (string, bool) {
	u, err := user.Lookup(name)
	if err != nil || u.HomeDir == "" {
		return "", false
	}
	return u.HomeDir, true
}

// maxLinks bounds the symlinks followed in one resolution, as the
// kernel's ELOOP limit does.
const maxLinks = 40

// Resolve returns every absolute path p can reach, most literal first:
//
//   - "~" and "~/…" through Env.Home, "~user/…" through Env.Homes (an
//     unknown user stays literal, as in bash);
//   - a relative path joined to Env.Cwd;
//   - ".." cleaned lexically (so "~/.." climbs out of the home);
//   - /proc/self/root/… and /proc/N/root/… as the path under /;
//   - with an FS, the path the kernel would open: symlinks of existing
//     components followed as they are met, ".." taken from the
//     directory a link led to, a dangling link continued to the path
//     it names (a write there creates it), loops cut at 40 links; and
//     the same for the lexically cleaned name, which is what a program
//     that normalises paths before opening them reaches.
//
// Without a known Cwd a relative path is returned cleaned and relative.
// A relative path in a home-relative Cwd ("~/x", the home unknown) stays
// home-relative ("~/x/p"), cleaned without climbing above the home.
// The result is never empty for a non-empty p.
func Resolve(env Env, p string) []string {
	return AppendResolve(nil, env, p)
}

// AppendResolve appends Resolve's result to dst: a caller that matches
// the paths at once can keep them in a buffer of its own.
func AppendResolve(dst []string, env Env, p string) []string {
	if p == "" {
		return dst
	}
	if !path.IsAbs(p) && !strings.HasPrefix(p, "~") && strings.HasPrefix(env.Cwd, "~") {
		// The directory is home-relative (cd ~/x with the home unknown).
		p = expandTilde(env, env.Cwd+"/"+p)
		if !path.IsAbs(p) {
			return append(dst, cleanTilde(p))
		}
	}
	p = expandTilde(env, p)
	if !path.IsAbs(p) {
		if !path.IsAbs(env.Cwd) {
			return append(dst, path.Clean(p))
		}
		p = env.Cwd + "/" + p
	}
	out, start := dst, len(dst)
	add := func(s string) {
		for _, o := range out[start:] {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	lex := path.Clean(p)
	add(lex)
	if rest, ok := procRoot(lex); ok {
		add(rest)
	}
	if rest, ok := procCwd(lex); ok && path.IsAbs(env.Cwd) {
		add(path.Join(env.Cwd, rest))
	}
	if env.FS != nil {
		// The kernel's reading of the name as given, and of the name
		// cleaned first (as a program that normalises paths before
		// opening them reads it).
		for _, r := range append(physical(env.FS, p), physical(env.FS, lex)...) {
			add(r)
			if rest, ok := procRoot(r); ok {
				add(rest)
			}
		}
	}
	return out
}

// cleanTilde cleans a path under a home whose place is unknown: a ".."
// cannot climb above the home ("~/a/../.." is "~"), so rules about what
// lies in the home still see it.
func cleanTilde(p string) string {
	root, rest, _ := strings.Cut(p, "/")
	c := path.Clean("/" + rest)
	if c == "/" {
		return root
	}
	return root + c
}

func expandTilde(env Env, p string) string {
	if !strings.HasPrefix(p, "~") {
		return p
	}
	name, rest, slash := strings.Cut(p[1:], "/")
	var home string
	if name == "" {
		home = env.Home
	} else if env.Homes != nil {
		if h, ok := env.Homes(name); ok {
			home = h
		}
	}
	if home == "" || !path.IsAbs(home) {
		return p
	}
	if !slash {
		return home
	}
	return home + "/" + rest
}

// procRoot reads /proc/self/root/X, /proc/thread-self/root/X and
// /proc/N/root/X as /X (the same root, short of a chroot).
func procRoot(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return "", false
	}
	if rest == "root" {
		return "/", true
	}
	after, ok := strings.CutPrefix(rest, "root/")
	if !ok {
		return "", false
	}
	return "/" + after, true
}

// procCwd reads /proc/self/cwd/X as X relative to the caller's cwd.
func procCwd(p string) (string, bool) {
	for _, pre := range []string{"/proc/self/cwd", "/proc/thread-self/cwd"} {
		if p == pre {
			return ".", true
		}
		if rest, ok := strings.CutPrefix(p, pre+"/"); ok {
			return rest, true
		}
	}
	return "", false
}

// magicLink reports the /proc links whose target depends on the
// process that reads them.
func magicLink(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	if len(parts) >= 3 && parts[1] == "task" {
		parts = parts[2:] // /proc/PID/task/TID/…
	}
	switch {
	case len(parts) == 2:
		return parts[1] == "cwd" || parts[1] == "root" || parts[1] == "exe"
	case len(parts) == 3:
		return parts[1] == "fd" || parts[1] == "map_files"
	}
	return false
}

// physical resolves p as the kernel would, following symlinks of the
// components that exist. It returns the final path, and on a loop the
// partial path it reached too.
func physical(fsys FS, p string) []string {
	todo := strings.Split(p, "/")
	cur := "/"
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, name)
		if magicLink(next) {
			// /proc/PID/fd/N, cwd, root, exe lead where they lead for the
			// process that looks, not for the agent: not followed here
			// (root and the caller's cwd are read lexically above).
			cur = next
			continue
		}
		fi, err := fsys.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		target, err := fsys.Readlink(next)
		if err != nil || target == "" || links > maxLinks {
			// A link we cannot read, or a loop: the kernel fails the
			// open. Report where we got to, and the rest lexically.
			return []string{path.Clean(next + "/" + strings.Join(todo, "/"))}
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return []string{cur}
}

// Hardlinks reports how many hard links the existing regular file at
// abs has (0 when it does not exist or is not a regular file). A write
// that opens such a file in place changes every name of it — a
// protected file under a harmless name — and no path resolution can
// tell which names those are.
func Hardlinks(fsys FS, abs string) uint64 {
	if fsys == nil {
		return 0
	}
	fi, err := fsys.Lstat(abs)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	return links(fi)
}
