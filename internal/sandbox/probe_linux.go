package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// probe runs the helper itself in a real sandbox, with this Sandbox's
// view (its hidden paths covered, its network), and reports why it
// could not.
func (s *Sandbox) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := s.Command(Spec{Path: s.cfg.Executable, arg0: probeName, Dir: "/", noWorkspace: true, Env: helperEnv})
	if err != nil {
		return err
	}
	err = c.Run(ctx)
	var u *UnavailableError
	switch {
	case errors.As(err, &u):
		return errors.New(u.Reason)
	case err != nil:
		return fmt.Errorf("a test run in the sandbox failed: %w", err)
	}
	return nil
}

// kernelFacts reads what the kernel offers.
func kernelFacts() Kernel {
	k := Kernel{OS: runtime.GOOS}
	var ns []string
	for _, f := range []struct{ file, name string }{
		{"/proc/sys/user/max_user_namespaces", "user.max_user_namespaces"},
		{"/proc/sys/kernel/unprivileged_userns_clone", "kernel.unprivileged_userns_clone"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "kernel.apparmor_restrict_unprivileged_userns"},
	} {
		if b, err := os.ReadFile(f.file); err == nil {
			ns = append(ns, f.name+"="+strings.TrimSpace(string(b)))
		}
	}
	k.UserNamespaces = strings.Join(ns, ", ")
	if v, err := llsys.LandlockGetABIVersion(); err == nil {
		k.LandlockABI = v
	}
	err := unix.MountSetattr(-1, "", 0, &unix.MountAttr{})
	k.MountSetattr = !errors.Is(err, unix.ENOSYS)
	return k
}

// sysctl reads an integer sysctl, -1 if absent.
func sysctl(file string) int {
	b, err := os.ReadFile(file)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// fixFor says what an operator can change, given what failed.
func fixFor(reason string) string {
	var fix []string
	switch {
	case sysctl("/proc/sys/user/max_user_namespaces") == 0:
		fix = append(fix, "user namespaces are disabled: set the sysctl user.max_user_namespaces to a positive number (e.g. 15000)")
	case sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0:
		fix = append(fix, "unprivileged user namespaces are disabled: set the sysctl kernel.unprivileged_userns_clone=1")
	case sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1:
		fix = append(fix, "AppArmor restricts unprivileged user namespaces (Ubuntu 24.04 and later): give the warden binary an AppArmor profile that allows userns (see docs/sandbox.md), or set kernel.apparmor_restrict_unprivileged_userns=0")
	}
	switch {
	case strings.Contains(reason, "mount_setattr"):
		fix = append(fix, "the kernel is older than Linux 5.12: upgrade it")
	case strings.Contains(reason, "/proc"):
		fix = append(fix, "the host masks parts of /proc (a container with the default seccomp/masked paths): run warden outside the container, or unmask /proc (docker --security-opt systempaths=unconfined)")
	}
	fix = append(fix, "`warden doctor` shows what is in force; as a last resort set `sandbox: {mode: off}` in the config, and commands run unconfined")
	return strings.Join(fix, "; ")
}

// unavailable builds the error every command then fails with.
func unavailable(err error, k Kernel) *UnavailableError {
	reason := err.Error()
	if k.UserNamespaces != "" {
		reason += " (" + k.UserNamespaces + ")"
	}
	return &UnavailableError{Reason: reason, Fix: fixFor(err.Error())}
}
