package tools

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/sandbox/sandboxtest"
)

func TestRun(t *testing.T) {
	var out, errb bytes.Buffer
	term := Terminal{Env: []string{"PATH=/usr/bin:/bin", "ONLY=this"}, Sandbox: sandboxtest.New(t)}
	code, err := term.Run(context.Background(), "echo out; echo err >&2; env; exit 3", t.TempDir(), &out, &errb)
	if err != nil || code != 3 {
		t.Fatalf("code %d err %v", code, err)
	}
	if !strings.Contains(out.String(), "ONLY=this") || strings.Contains(out.String(), "HOME=") {
		t.Fatalf("the child must see exactly Env:\n%s", out.String())
	}
	if errb.String() != "err\n" {
		t.Fatalf("stderr %q", errb.String())
	}
}

func TestEmptyEnvIsEmpty(t *testing.T) {
	var out bytes.Buffer
	if _, err := (Terminal{Sandbox: sandboxtest.New(t)}).Run(context.Background(), "/usr/bin/env", "", &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l != "" && !strings.HasPrefix(l, "PWD=") && !strings.HasPrefix(l, "SHLVL=") && !strings.HasPrefix(l, "_=") && l != "TMPDIR=/tmp" {
			t.Errorf("inherited %q", l)
		}
	}
}

// TestCancelKillsTheGroup: a background grandchild dies with its command.
func TestCancelKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "late")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	_, err := Terminal{Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: sandboxtest.New(t)}.Run(ctx, "(sleep 1; touch "+marker+") & sleep 5", dir, &out, &out)
	if err == nil {
		t.Fatal("a cancelled command must report it")
	}
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the background child survived the cancel")
	}
}

func TestSignalExitCode(t *testing.T) {
	var out bytes.Buffer
	code, err := Terminal{Env: []string{"PATH=/usr/bin:/bin"}, Sandbox: sandboxtest.New(t)}.Run(context.Background(), "kill -TERM $$", "", &out, &out)
	if err != nil || code != 143 {
		t.Fatalf("code %d err %v", code, err)
	}
}
