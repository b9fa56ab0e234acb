package shell

import (
	"path"
	"regexp"
	"strings"
	"sync"
)

// Paths are resolved, not matched as text: "~" and "~user" expand,
// $HOME and the XDG variables take the owner's values (Options.Env, from
// the session's terminal state, never warden's own environment), a
// relative path joins the working directory (Options.Cwd, moved by cd and
// pushd earlier in the line), and dot segments are removed. What cannot be
// known stays symbolic: "~/x" when the home directory is unknown, and a
// relative path that climbs out of an unknown directory is taken to reach
// the root, the worst case.

// resolvePath returns the path an argument names, cleaned, and whether it
// could be resolved (a dynamic part that is not a known variable makes it
// unresolvable).
func (w *walker) resolvePath(a Arg) (string, bool) {
	p, ok := w.argPath(a)
	if !ok {
		return "", false
	}
	return w.absPath(p), true
}

// expandVars replaces a leading $HOME, ${HOME}, $XDG_…, $TMPDIR (the
// shapes the walker gives dynamic words) with the owner's values. An XDG
// base directory the owner's state does not name takes its default
// (~/.config, ~/.local/state, …), and ${NAME:-WORD} (also -, := and =)
// with NAME unknown takes WORD, expanded the same way: what bash uses
// when the variable is unset, and where warden's own files are.
func (w *walker) expandVars(p string) (string, bool) {
	if !strings.HasPrefix(p, "$") {
		return p, false
	}
	name := p[1:]
	rest, def, hasDef := "", "", false
	if strings.HasPrefix(name, "{") {
		end := closingBrace(name)
		if end < 0 {
			return p, false
		}
		name, rest = name[1:end], name[end+1:]
		if i := strings.IndexAny(name, ":-="); i > 0 {
			op := name[i:]
			switch {
			case strings.HasPrefix(op, ":-"), strings.HasPrefix(op, ":="):
				def, hasDef = op[2:], true
			case op[0] == '-' || op[0] == '=':
				def, hasDef = op[1:], true
			default:
				return p, false
			}
			name = name[:i]
		}
	} else {
		end := len(name)
		for i, r := range name {
			if r != '_' && (r < 'A' || r > 'Z') && (r < 'a' || r > 'z') && (i == 0 || r < '0' || r > '9') {
				end = i
				break
			}
		}
		name, rest = name[:end], name[end:]
	}
	if strings.ContainsAny(rest, "$`") || !validName(name) {
		return p, false
	}
	if name == "HOME" {
		if h := w.home(); h != "" {
			return h + rest, true
		}
		return "~" + rest, true
	}
	if v, ok := w.opts.Env[name]; ok && v != "" {
		return v + rest, true
	}
	if hasDef {
		if def == "" || strings.ContainsAny(def, "`") {
			return p, false
		}
		if !strings.HasPrefix(def, "$") {
			if strings.ContainsAny(def, "$") {
				return p, false
			}
			return def + rest, true
		}
		d, ok := w.expandVars(def)
		return d + rest, ok
	}
	if d, ok := xdgDefaults[name]; ok {
		return d + rest, true
	}
	if name == "TMPDIR" {
		return "$TMPDIR" + rest, true
	}
	return p, false
}

// xdgDefaults are the XDG base directories' values when unset, and
// warden's own state variable's default: a line that names one of them
// names warden's files there.
var xdgDefaults = map[string]string{
	"XDG_CONFIG_HOME": "~/.config", "XDG_STATE_HOME": "~/.local/state", "XDG_DATA_HOME": "~/.local/share",
	"XDG_CACHE_HOME": "~/.cache", "WARDEN_STATE": "~/.local/state/warden",
}

// closingBrace returns the index in s (which starts with "{") of the "}"
// that closes it, counting nested "${", or -1.
func closingBrace(s string) int {
	if i := closingOf(s[1:], '{', '}'); i >= 0 {
		return i + 1
	}
	return -1
}

// dynamicPattern turns the shape of an absolute path with run-time parts
// ("/proc/$PPID/environ", "/home/$(whoami)/.ssh/id_rsa") into a glob in
// which each run-time part is "*": the path is one of the glob's
// matches, so a protected file it could name is seen. A shape that does
// not start with "/", "~/" or the home's variable (its run-time prefix
// could be any directory) gives no pattern.
func dynamicPattern(shape string) (string, bool) {
	// The home, by name or by its variable, is a known start too.
	for _, home := range []string{"$HOME/", "${HOME}/"} {
		if strings.HasPrefix(shape, home) {
			shape = "~/" + shape[len(home):]
		}
	}
	if !strings.HasPrefix(shape, "/") && !strings.HasPrefix(shape, "~/") {
		return "", false
	}
	var b strings.Builder
	dyn := false
	for i := 0; i < len(shape); {
		c := shape[i]
		if c != '$' && c != '`' {
			if c == '*' || c == '?' || c == '[' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
			i++
			continue
		}
		n := shapeLen(shape[i:])
		if n <= 0 {
			return "", false
		}
		b.WriteByte('*')
		dyn = true
		i += n
	}
	return b.String(), dyn
}

// shapeLen is the length of the expansion at the start of s: $NAME,
// ${…}, $(…), $((…)), `…`, $? and the like; 0 if s does not start one.
func shapeLen(s string) int {
	if s[0] == '`' {
		if j := strings.IndexByte(s[1:], '`'); j >= 0 {
			return j + 2
		}
		return 0
	}
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '{', '(':
		if i := closingOf(s[2:], s[1], closeOf(s[1])); i >= 0 {
			return i + 3
		}
		return 0
	}
	n := 1
	for n < len(s) && (s[n] == '_' || s[n] >= 'A' && s[n] <= 'Z' || s[n] >= 'a' && s[n] <= 'z' || s[n] >= '0' && s[n] <= '9') {
		n++
	}
	if n == 1 && strings.IndexByte("$?!#@*-0123456789", s[1]) >= 0 {
		return 2
	}
	if n == 1 {
		return 0
	}
	return n
}

// home is the owner's home directory, or "".
func (w *walker) home() string {
	if w.opts.Home != "" {
		return path.Clean(w.opts.Home)
	}
	if h := w.opts.Env["HOME"]; strings.HasPrefix(h, "/") {
		return path.Clean(h)
	}
	return ""
}

// absPath cleans p: "~" and "~user" expanded, relative paths joined to
// the working directory, dot segments removed.
func (w *walker) absPath(p string) string {
	if strings.HasPrefix(p, "~") {
		user, rest, _ := strings.Cut(p[1:], "/")
		var base string
		switch {
		case user == "":
			base = w.home()
			if base == "" {
				return symbolic("~", rest)
			}
		case w.opts.Homes != nil:
			h, ok := w.opts.Homes(user)
			if !ok {
				return symbolic("~"+user, rest)
			}
			base = h
		default:
			return symbolic("~"+user, rest)
		}
		return path.Clean(base + "/" + rest)
	}
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	if strings.HasPrefix(p, "$TMPDIR") {
		return path.Clean(p)
	}
	if cwd := w.cwd(); cwd != "" {
		if strings.HasPrefix(cwd, "~") {
			// Symbolic home: join, then clean as a home-relative path
			// (which never climbs above the home).
			return w.absPath(cwd + "/" + p)
		}
		return path.Join(cwd, p)
	}
	// Unknown directory: a path that climbs out of it may reach the root.
	c := path.Clean(p)
	if c == ".." || strings.HasPrefix(c, "../") {
		for strings.HasPrefix(c, "../") {
			c = c[3:]
		}
		if c == ".." {
			c = ""
		}
		return path.Clean("/" + c)
	}
	return c
}

// symbolic cleans a path under an unknown home: "~/a/../.." is "~" (a
// path cannot climb above a home directory it does not know the place
// of, so it is taken to be the home, which is what matters to rules).
func symbolic(root, rest string) string {
	c := path.Clean("/" + rest)
	if c == "/" {
		return root
	}
	return root + c
}

// cwd is the working directory at this point of the line, or "".
func (w *walker) cwd() string {
	if w.dir.known {
		return w.dir.path
	}
	return ""
}

// pathKey is a path as a key for remembering writes.
func (w *walker) pathKey(p string) string { return w.absPath(p) }

// isAbs reports whether a resolved path is absolute or home-relative.
func isAbs(p string) bool { return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") }

var rawDevice = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^/dev/(sd[a-z]+[0-9]*|hd[a-z][0-9]*|vd[a-z]+[0-9]*|xvd[a-z]+[0-9]*|nvme[0-9]+(n[0-9]+(p[0-9]+)?)?|mmcblk[0-9]+(p[0-9]+)?|md[0-9]+(p[0-9]+)?|md/[^/]+|dm-[0-9]+|loop[0-9]+(p[0-9]+)?|nbd[0-9]+(p[0-9]+)?|r?disk[0-9]+(s[0-9]+)?|mapper/[^/]+|zd[0-9]+|rbd[0-9]+|sr[0-9]+|mtdblock[0-9]+|disk/by-(id|uuid|path|label|partuuid|partlabel|diskseq)/[^/]+|[a-z]+/[a-z0-9_-]+)$`)
})

// deviceDirs are directories under /dev whose entries are not block
// devices (a volume group's LVs are: /dev/vg/lv).
var deviceDirs = map[string]bool{"/dev/fd": true, "/dev/pts": true, "/dev/shm": true, "/dev/mqueue": true, "/dev/hugepages": true,
	"/dev/net": true, "/dev/snd": true, "/dev/input": true, "/dev/dri": true, "/dev/bus": true, "/dev/char": true, "/dev/block": false,
	"/dev/cpu": true, "/dev/usb": true, "/dev/vfio": true, "/dev/tcp": true, "/dev/udp": true}

// isRawDevice reports a raw block device path: matched exactly by family
// (/dev/sdb1 is one, /dev/sdb-backup.img is a file).
func isRawDevice(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	if deviceDirs[path.Dir(p)] {
		return false
	}
	return rawDevice().MatchString(p)
}

// devicePattern reports a glob that could match a raw block device
// (/dev/sd?, /dev/nvme*n1).
func devicePattern(p string) bool {
	if !strings.HasPrefix(p, "/dev/") || !strings.ContainsAny(p, "*?[") {
		return false
	}
	for _, probe := range deviceProbes {
		if globMatch(p, probe) {
			return true
		}
	}
	return false
}

var deviceProbes = []string{"/dev/sda", "/dev/sdb", "/dev/sda1", "/dev/sdb1", "/dev/hda", "/dev/vda", "/dev/vdb", "/dev/vda1", "/dev/xvda",
	"/dev/xvdb", "/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme0n1p1", "/dev/mmcblk0", "/dev/mmcblk0p1", "/dev/md0", "/dev/dm-0",
	"/dev/loop0", "/dev/disk0", "/dev/disk1", "/dev/rdisk0", "/dev/mapper/root", "/dev/disk/by-id/x"}

// isTemp reports a resolved path strictly under a temporary directory.
func isTemp(p string) bool {
	for _, t := range []string{"/tmp/", "/var/tmp/", "/dev/shm/", "$TMPDIR/", "/private/tmp/", "/private/var/tmp/"} {
		if strings.HasPrefix(p, t) && len(p) > len(t) {
			return true
		}
	}
	return false
}

// criticalDirs are directories below the top level without which the
// system does not run (its programs, libraries and package database).
var criticalDirs = map[string]bool{"/usr/bin": true, "/usr/sbin": true, "/usr/lib": true, "/usr/lib32": true, "/usr/lib64": true,
	"/usr/libexec": true, "/usr/include": true, "/usr/share": true, "/var/lib": true, "/var/lib/dpkg": true, "/var/lib/rpm": true,
	"/var/lib/apt": true, "/var/lib/pacman": true, "/etc/systemd": true, "/etc/pam.d": true, "/etc/ssl": true, "/etc/apt": true,
	"/boot/efi": true, "/System/Library": true, "/private/etc": true, "/private/var": true}

var systemDirs = []string{"etc", "usr", "var", "bin", "sbin", "boot", "lib", "lib32", "lib64", "libx32", "home", "root", "opt", "srv", "sys", "proc", "dev", "run", "snap", "nix", "Users", "System", "Library", "Applications", "private", "Volumes", "mnt", "media"}

// deleteTarget classifies a resolved operand of a recursive delete (or a
// move away): the root, a system directory, the home directory, or "".
func (w *walker) deleteTarget(p string, glob bool) string {
	home := w.home()
	switch {
	case p == "/" || p == "/*" || p == "/.*":
		return clsDeleteRoot
	case p == "~" || p == "~/*" || p == "~/.*" || (strings.HasPrefix(p, "~") && !strings.Contains(p, "/")):
		return clsDeleteHome
	case home != "" && (p == home || p == home+"/*" || p == home+"/.*"):
		return clsDeleteHome
	}
	if home != "" && glob && !strings.HasPrefix(home, "/tmp/") {
		if ok, _ := path.Match(p, home); ok {
			return clsDeleteHome
		}
	}
	if !strings.HasPrefix(p, "/") {
		return ""
	}
	if criticalDirs[strings.TrimSuffix(strings.TrimSuffix(p, "/*"), "/")] {
		return clsDeleteSystem
	}
	top, rest, _ := strings.Cut(p[1:], "/")
	if rest != "" && rest != "*" && rest != ".*" {
		// /home/* and /Users/* are every home directory.
		if (top == "home" || top == "Users") && (rest == "*" || rest == "*/") {
			return clsDeleteSystem
		}
		return ""
	}
	if glob && strings.ContainsAny(top, "*?[") {
		for _, d := range systemDirs {
			if ok, _ := path.Match(top, d); ok {
				return clsDeleteSystem
			}
		}
		return ""
	}
	for _, d := range systemDirs {
		if top == d {
			return clsDeleteSystem
		}
	}
	return ""
}

var procMem = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^/proc/[^/]+/(mem|task/[^/]+/mem)$`) })

// metadataHosts are cloud instance metadata endpoints.
var metadataHosts = []string{"169.254.169.254", "100.100.100.200", "metadata.google.internal", "fd00:ec2::254", "169.254.170.2", "metadata.azure.com", "[fd00:ec2::254]", "0xa9fea9fe", "2852039166", "169.254.169.123"}

func hasMetadataHost(s string) bool {
	low := strings.ToLower(s)
	for _, h := range metadataHosts {
		if strings.Contains(low, h) {
			return true
		}
	}
	return false
}
