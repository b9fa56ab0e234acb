package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/sandbox"
)

// SandboxCheck reports the sandbox a host with this configuration would
// run commands in: the mode in force and why (a real test run of the
// sandbox decides), what the kernel offers, and what is hidden and
// writable. It fails when the kernel cannot sandbox and the mode is not
// off (every command would be refused), and warns when the mode is off.
func SandboxCheck(build func(ctx context.Context) (*sandbox.Sandbox, error)) Check {
	return Check{Name: "sandbox", Run: func(ctx context.Context) Result {
		s, err := build(ctx)
		if err != nil {
			return Result{Status: Fail, Summary: "cannot build the sandbox: " + err.Error()}
		}
		return sandboxResult(s.Status())
	}}
}

func sandboxResult(st sandbox.Status) Result {
	r := Result{Status: OK}
	switch {
	case st.Refusing:
		r.Status = Fail
		r.Summary = "unavailable: every command an agent runs would be refused"
	case st.Mode == sandbox.Off:
		r.Status = Warn
		r.Summary = "off: commands run unconfined, as this user"
	default:
		r.Summary = string(st.Mode) + ": commands run sandboxed"
	}
	k := st.Kernel
	add := func(key, value string) { r.Details = append(r.Details, Detail{Key: key, Value: value}) }
	add("mode", string(st.Mode))
	add("why", st.Why)
	if st.Fix != "" {
		add("fix", st.Fix)
	}
	add("kernel", k.OS)
	if k.UserNamespaces != "" {
		add("user namespaces", k.UserNamespaces)
	}
	if k.OS == "linux" {
		ll := "not available"
		if k.LandlockABI > 0 {
			ll = fmt.Sprintf("ABI %d (second layer, best effort)", k.LandlockABI)
		}
		add("landlock", ll)
		add("mount_setattr", fmt.Sprint(k.MountSetattr))
	}
	network := "on (the host's network)"
	if !st.Network {
		network = "off (loopback only)"
	}
	add("network", network)
	add("hidden", list(st.Hide))
	if st.Mode == sandbox.ReadOnly {
		add("writable", "the call's private /tmp only")
	} else {
		add("writable", "the call's workspace, its private /tmp"+suffix(st.Writable))
	}
	return r
}

func list(paths []string) string {
	if len(paths) == 0 {
		return "(none)"
	}
	return strings.Join(paths, "\n")
}

func suffix(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return "\n" + strings.Join(paths, "\n")
}
