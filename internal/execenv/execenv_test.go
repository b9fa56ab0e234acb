package execenv

import (
	"slices"
	"strings"
	"testing"
)

// TestInvariant03_ChildrenStartClean builds a child environment from a
// parent full of credentials and approval markers: none of them pass.
func TestInvariant03_ChildrenStartClean(t *testing.T) {
	parent := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "TZ=UTC", "USER=u", "SHELL=/bin/bash", "TMPDIR=/tmp",
		"OPENAI_API_KEY=sk-x", "GITHUB_TOKEN=ghp_x", "AWS_SECRET_ACCESS_KEY=x", "DB_PASSWORD=x", "MY_CREDENTIALS=x", "BASIC_AUTH=x",
		"WARDEN_YOLO=1", "WARDEN_STATE=/s", "HERMES_YOLO_MODE=1", "HERMES_INTERACTIVE=1", "HERMES_EXEC_ASK=1", "HERMES_SESSION_KEY=k",
		"HERMES_CRON_SESSION=1", "YOLO=true", "SESSION=x", "LD_PRELOAD=/x.so", "SSH_AUTH_SOCK=/tmp/agent", "RANDOM_THING=1",
	}
	env := Build(parent, nil, map[string]string{"WARDEN_WORKER_FD": "3"})
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "USER", "SHELL", "TMPDIR", "WARDEN_WORKER_FD":
		default:
			t.Errorf("%s passed to the child", name)
		}
	}
	if !slices.Contains(env, "WARDEN_WORKER_FD=3") {
		t.Error("what the spawner sets explicitly must be there")
	}
}

func TestPassthrough(t *testing.T) {
	env := Build([]string{"NPM_TOKEN=x", "WARDEN_YOLO=1", "CUSTOM=1"}, []string{"NPM_TOKEN", "WARDEN_YOLO", "CUSTOM"}, nil)
	if !slices.Contains(env, "NPM_TOKEN=x") || !slices.Contains(env, "CUSTOM=1") {
		t.Errorf("listed variables must pass: %v", env)
	}
	if slices.Contains(env, "WARDEN_YOLO=1") {
		t.Error("warden's own variables never pass, even when listed")
	}
}

func TestNever(t *testing.T) {
	for _, n := range []string{"WARDEN_X", "HERMES_SESSION_KEY", "MY_YOLO", "HERMES_INTERACTIVE", "HERMES_EXEC_ASK", "HERMES_CRON_SESSION"} {
		if !Never(n) {
			t.Errorf("%s must never persist", n)
		}
	}
	for _, n := range []string{"PATH", "VIRTUAL_ENV", "FOO"} {
		if Never(n) {
			t.Errorf("%s may persist", n)
		}
	}
}
