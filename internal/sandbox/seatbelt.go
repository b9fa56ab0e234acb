package sandbox

import (
	"strconv"
	"strings"
)

// seatbeltProfile is the macOS sandbox-exec (Seatbelt) profile of a
// call: read everything but the hidden paths, write only the writable
// roots (the private temporary directory among them) except the
// protected paths inside them, network only when it is on (and never
// to a unix socket under a hidden path), signals
// only within the sandbox. macOS has no PID namespace: what a call
// leaves running is killed with its process group, and a process that
// leaves the group (setsid) outlives the call. It is generated on every
// platform, so its text is tested here; only darwin uses it.
func seatbeltProfile(writable, hide, readOnly []string, network bool) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec)\n(allow process-fork)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow mach-lookup)\n(allow ipc-posix-shm)\n(allow pseudo-tty)\n")
	b.WriteString("(allow file-ioctl (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n")
	b.WriteString("(allow file-read*\n  (require-all (subpath \"/\")")
	for _, h := range hide {
		b.WriteString("\n    (require-not (subpath " + sbString(h) + "))")
	}
	b.WriteString("))\n")
	b.WriteString("(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\")")
	for _, w := range writable {
		b.WriteString("\n  (require-all (subpath " + sbString(w) + ")")
		for _, p := range append(readOnly, hide...) {
			if within(p, w) {
				b.WriteString("\n    (require-not (subpath " + sbString(p) + "))")
			}
		}
		b.WriteString(")")
	}
	b.WriteString(")\n")
	if network {
		b.WriteString("(allow network*)\n")
	} else {
		b.WriteString("(allow network* (local unix-socket))\n")
	}
	// Connecting to a unix socket is a network operation to Seatbelt, not
	// a file read: without these, a call could reach the host's admin
	// socket inside a hidden state directory. Later rules win.
	for _, h := range hide {
		b.WriteString("(deny network-outbound (remote unix-socket (subpath " + sbString(h) + ")))\n")
	}
	return b.String()
}

// sbString quotes s as an SBPL string literal.
func sbString(s string) string { return strconv.Quote(s) }
