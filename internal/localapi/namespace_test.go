//go:build linux

package localapi

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/wardenhq/warden/internal/ancestry"
	"github.com/wardenhq/warden/internal/grant"
)

// probe runs a probe child with extra clone flags and returns what it
// printed. A kernel that refuses the namespaces skips the test, except
// under WARDEN_FULL=1, where it fails.
func probe(t *testing.T, sock string, flags uintptr) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{probeEnv + "=" + sock}
	attr := &syscall.SysProcAttr{Cloneflags: flags}
	if flags&syscall.CLONE_NEWUSER != 0 {
		// The child is root in its own user namespace, mapped to this
		// process's uid and gid outside it.
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
		attr.GidMappingsEnableSetgroups = false
	}
	cmd.SysProcAttr = attr
	out, err := cmd.Output()
	if err != nil {
		if flags != 0 && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC)) {
			if os.Getenv("WARDEN_FULL") == "1" {
				t.Fatalf("WARDEN_FULL=1 but this kernel refuses the namespaces (flags %#x): %v", flags, err)
			}
			t.Skipf("this kernel refuses the namespaces (flags %#x): %v", flags, err)
		}
		t.Fatalf("probe child: %v (%s)", err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestAdminSocketRefusesOtherNamespaces: a process in another PID,
// user or mount namespace than the host — a tool sandbox — is refused,
// whatever its ancestry. The boundary here names a stand-in host (a
// sleep beside the test) that the probes do not descend from, so the
// ancestry walk admits them: what refuses them is the namespace proof
// alone, and the same probe without namespaces is admitted.
func TestAdminSocketRefusesOtherNamespaces(t *testing.T) {
	stand := exec.Command("sleep", "60")
	if err := stand.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stand.Process.Kill(); _ = stand.Wait() })
	st := &fakeStore{grants: map[string]grant.Grant{}}
	sock := serve(t, New(Options{Store: st, Peers: PeerPolicy{UID: os.Getuid(),
		Boundary: ancestry.Boundary{Host: stand.Process.Pid}}}))

	if got := probe(t, sock, 0); !strings.HasPrefix(got, "200 ") {
		t.Fatalf("the same probe in the host's namespaces: %q, want 200", got)
	}
	userns := uintptr(0)
	if os.Geteuid() != 0 {
		userns = syscall.CLONE_NEWUSER // what lets an unprivileged process make the others
	}
	tests := []struct {
		name  string
		flags uintptr
		want  string
	}{
		{"pid namespace", syscall.CLONE_NEWPID | userns, "PID namespaces deep"},
		{"user namespace", syscall.CLONE_NEWUSER, "user:["},
		{"mount namespace", syscall.CLONE_NEWNS | userns, ":["},
		{"a sandbox's three", syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWUSER, "PID namespaces deep"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := probe(t, sock, tt.flags)
			if !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "a sandboxed process may not use this host's admin API") || !strings.Contains(got, tt.want) {
				t.Fatalf("probe in another %s: %q, want 403 naming it", tt.name, got)
			}
		})
	}
}
