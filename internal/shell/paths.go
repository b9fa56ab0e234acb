package shell

import (
	"path"
	"regexp"
	"strings"
)

// homeForm rewrites the ways of naming the home directory to "~", so
// rules see one spelling: $HOME, ${HOME}, "$HOME".
func homeForm(p string) string {
	for _, h := range []string{"$HOME", "${HOME}"} {
		if p == h || strings.HasPrefix(p, h+"/") {
			return "~" + p[len(h):]
		}
	}
	return p
}

// cleanPath normalises a path operand for rules: home spelled "~",
// duplicate slashes and dot segments removed. A relative path that climbs
// with ".." is treated as reaching the root, the worst case.
func cleanPath(p string) string {
	p = homeForm(p)
	if p == "" {
		return p
	}
	if strings.HasPrefix(p, "~") {
		user, rest, _ := strings.Cut(p, "/")
		if rest == "" {
			return user
		}
		c := path.Clean("/" + rest)
		if c == "/" {
			return user
		}
		return user + c
	}
	if strings.HasPrefix(p, "../") || p == ".." {
		c := path.Clean(p)
		for strings.HasPrefix(c, "../") {
			c = c[3:]
		}
		if c == ".." {
			c = ""
		}
		return path.Clean("/" + c)
	}
	return path.Clean(p)
}

// isAbs reports whether a cleaned path is absolute or home-relative.
func isAbs(p string) bool { return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") }

var rawDevice = regexp.MustCompile(`^/dev/(sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|md\d|md/|dm-\d|loop\d|nbd\d|r?disk\d|mapper/|disk/by-(id|uuid|path|label|partuuid|partlabel)/)`)

// isRawDevice reports a raw block device path.
func isRawDevice(p string) bool { return rawDevice.MatchString(cleanPath(p)) }

// isTemp reports a path under a temporary directory.
func isTemp(p string) bool {
	c := cleanPath(p)
	for _, t := range []string{"/tmp", "/var/tmp", "/dev/shm", "$TMPDIR", "${TMPDIR}"} {
		if strings.HasPrefix(p, t+"/") || strings.HasPrefix(c, t+"/") {
			return true
		}
	}
	return false
}

var systemDirs = []string{"etc", "usr", "var", "bin", "sbin", "boot", "lib", "lib32", "lib64", "home", "root", "opt", "srv", "sys", "proc", "dev"}

// deleteTarget classifies the operand of a recursive delete: the root,
// a system directory, the home directory, or "".
func deleteTarget(a Arg) string {
	raw := strings.TrimSpace(a.Value)
	c := cleanPath(raw)
	switch {
	case c == "/" || c == "/*" || c == "/.*":
		return clsDeleteRoot
	case c == "~" || c == "~/*" || c == "~/.*" || (strings.HasPrefix(c, "~") && !strings.Contains(c, "/")):
		return clsDeleteHome
	}
	if !strings.HasPrefix(c, "/") {
		return ""
	}
	top, rest, _ := strings.Cut(c[1:], "/")
	if rest != "" && rest != "*" && rest != ".*" {
		return ""
	}
	if a.Glob && strings.ContainsAny(top, "*?[") {
		for _, d := range systemDirs {
			if ok, _ := path.Match(top, d); ok {
				return clsDeleteSystem
			}
		}
		return ""
	}
	for _, d := range []string{"etc", "usr", "var", "bin", "sbin", "boot", "lib", "lib32", "lib64", "home", "root"} {
		if top == d {
			return clsDeleteSystem
		}
	}
	return ""
}

// sensitiveWrite returns the class of writing to path p, or "".
func (w *walker) sensitiveWrite(p string) string {
	if p == "" {
		return ""
	}
	c := cleanPath(p)
	low := strings.ToLower(c)
	for _, pp := range w.opts.ProtectedPaths {
		pp = path.Clean(pp)
		if c == pp || strings.HasPrefix(c, pp+"/") {
			return clsWardenSelf
		}
	}
	switch {
	case isRawDevice(c):
		return clsDiskWrite
	case c == "/proc/sysrq-trigger":
		return clsShutdown
	case procMem.MatchString(c):
		return clsProcMem
	case strings.Contains(low, "/.config/warden/") || strings.HasSuffix(low, "/.config/warden") ||
		strings.Contains(low, "/.local/state/warden") || strings.HasPrefix(low, "/etc/warden/") || strings.Contains(low, "/warden/grants"):
		return clsWardenSelf
	case strings.HasPrefix(c, "/etc/") || c == "/etc" || strings.HasPrefix(c, "/private/etc/"):
		return clsWriteSystem
	}
	base := path.Base(c)
	dir := path.Dir(c)
	switch base {
	case ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".kshrc", ".cshrc", ".tcshrc", ".inputrc":
		return clsWriteRC
	case ".netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".boto", ".s3cfg":
		return clsWriteCreds
	}
	if strings.HasSuffix(c, "/.config/fish/config.fish") {
		return clsWriteRC
	}
	if strings.Contains(c, "/.ssh/") || strings.HasSuffix(c, "/.ssh") || strings.HasPrefix(c, ".ssh/") {
		return clsWriteSSH
	}
	for _, d := range []string{"/.aws/", "/.config/gcloud/", "/.azure/", "/.kube/", "/.docker/config.json", "/.gnupg/", "/.config/gh/hosts.yml"} {
		if strings.Contains(c+"/", d) || strings.HasPrefix("/"+c, d) {
			return clsWriteCreds
		}
	}
	if base == ".env" || strings.HasPrefix(base, ".env.") {
		_ = dir
		return clsWriteEnv
	}
	return ""
}

var procMem = regexp.MustCompile(`^/proc/[^/]+/(mem|task/[^/]+/mem)$`)

// metadataHosts are cloud instance metadata endpoints.
var metadataHosts = []string{"169.254.169.254", "100.100.100.200", "metadata.google.internal", "fd00:ec2::254", "169.254.170.2", "metadata.azure.com"}

func hasMetadataHost(s string) bool {
	low := strings.ToLower(s)
	for _, h := range metadataHosts {
		if strings.Contains(low, h) {
			return true
		}
	}
	return false
}

// WriteClass returns the catalogue class of writing to path p, or "" for
// an ordinary path. It is the table that redirections, tee and cp are
// judged by, so a write tool and a shell redirect agree.
func (o Options) WriteClass(p string) string {
	w := &walker{opts: o}
	return w.sensitiveWrite(p)
}
