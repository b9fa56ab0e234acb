package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// probeAdmin is the test binary's "probe-admin @FILE" mode (TestMain):
// it reads the admin socket's path from FILE, asks the admin API for the
// grants and prints "admitted" or "refused: REASON". The path is read,
// not given, because the analyser denies any command naming warden's
// own state (warden.self_access) before it runs; this probe tests the
// socket's own defence, behind that one.
func probeAdmin(arg string) int {
	socket := arg
	if name, ok := strings.CutPrefix(arg, "@"); ok {
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Println("probe:", err)
			return 1
		}
		socket = strings.TrimSpace(string(b))
	}
	c := localapi.NewClient(socket)
	defer c.Close()
	_, err := c.Grants(context.Background())
	if err != nil {
		fmt.Println("refused:", err)
		return 0
	}
	fmt.Println("admitted")
	return 0
}

// waitTask waits until task id has one of the statuses.
func waitTask(t *testing.T, c *localapi.Client, id string, want ...store.TaskStatus) board.Card {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		card, err := c.KanbanTask(t.Context(), id)
		if err == nil {
			for _, w := range want {
				if card.Status == w {
					return card
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: status %q (%v), want %v", id, card.Status, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stepOutput is the output of the step whose command is cmd in the
// newest run.
func stepOutput(t *testing.T, card board.Card, cmd string) store.TaskStep {
	t.Helper()
	if len(card.Runs) == 0 {
		t.Fatalf("task %s has no runs", card.ID)
	}
	for _, s := range card.Runs[0].Steps {
		if s.Command == cmd {
			return s
		}
	}
	t.Fatalf("task %s: no step %q in %+v", card.ID, cmd, card.Runs[0].Steps)
	return store.TaskStep{}
}

// TestInvariant11_AgentProcessesCannotReachTheAdminSocket: a process
// descended from a tool run (a web session's command) or from a kanban
// worker (a task's step) cannot use the admin socket, though it runs as
// the same user; the operator's own process is admitted. In the sandbox
// the socket does not exist for it; with sandbox.mode off the admin
// boundary (its ancestry) still refuses it: defence in depth.
func TestInvariant11_AgentProcessesCannotReachTheAdminSocket(t *testing.T) {
	for _, tc := range []struct {
		mode, want string
	}{
		{"workspace-write", "no socket at"},
		{"off", "descends from a warden tool run or worker"},
	} {
		t.Run(tc.mode, func(t *testing.T) { adminSocketUnreachable(t, tc.mode, tc.want) })
	}
}

func adminSocketUnreachable(t *testing.T, mode, want string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := configured(t, "sandbox:\n  mode: \""+mode+"\"\n")
	cfg.Yolo = true // the session's command runs without asking
	th := startHost(t, cfg)
	ctx := t.Context()
	sock := filepath.Join(th.cfg.StateDir, localapi.SocketName)
	// In the calls' workspace: what a sandboxed call sees of the host's
	// /tmp.
	work := t.TempDir()
	pathFile := filepath.Join(work, "socket-path")
	if err := os.WriteFile(pathFile, []byte(sock), 0o600); err != nil {
		t.Fatal(err)
	}
	probe := exe + " probe-admin @" + pathFile

	if _, err := th.client.Grants(ctx); err != nil {
		t.Fatalf("operator refused: %v", err)
	}

	// A tool run's process.
	var out strings.Builder
	err = th.client.Exec(ctx, localapi.ExecRequest{Session: "s1", Command: probe, Dir: work}, func(e localapi.Event) error {
		if e.Event == localapi.EventStdout {
			out.WriteString(e.Data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "refused:") || !strings.Contains(out.String(), want) {
		t.Errorf("tool run's process: %q, want refused (%s)", out.String(), want)
	}

	// A worker's process.
	task, err := th.client.AddKanbanTask(ctx, localapi.KanbanAddRequest{Title: "probe", Workspace: "dir:" + work, Steps: []string{probe}})
	if err != nil {
		t.Fatal(err)
	}
	card := waitTask(t, th.client, task.ID, store.TaskDone, store.TaskBlocked)
	if s := stepOutput(t, card, probe); !strings.Contains(s.Output, "refused:") || !strings.Contains(s.Output, want) {
		t.Errorf("worker's process: %+v, want refused (%s)", s, want)
	}
}

// pollutedEnviron is a host environment full of credentials and
// look-alike markers, beside what commands need.
func pollutedEnviron(dir string) ([]string, []string) {
	names := []string{
		"GITHUB_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY",
		"WARDEN_YOLO", "HERMES_YOLO_MODE", "YOLO", "WARDEN_INTERACTIVE", "AGENT_INTERACTIVE",
		"WARDEN_SESSION", "SESSION_KEY", "HERMES_SESSION_KEY", "WARDEN_CRON", "CRON_MODE",
		"WARDEN_EXEC_ASK", "EXEC_ASK", "HERMES_EXEC_ASK",
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	for _, n := range names {
		env = append(env, n+"=1")
	}
	return env, names
}

// TestStory3_WorkersStartClean: a host started with credentials and
// look-alike markers in its environment, with session yolo on in a web
// session: a kanban task's `env` shows none of them, and its dangerous
// step is denied under kanban_mode: deny and allowed under approve.
func TestStory3_WorkersStartClean(t *testing.T) {
	for _, mode := range []string{"deny", "approve"} {
		t.Run(mode, func(t *testing.T) {
			cfg := newConfig(t)
			var names []string
			cfg.Environ, names = pollutedEnviron(filepath.Dir(cfg.StateDir))
			writeConfig(t, cfg, "approvals:\n  kanban_mode: "+mode+"\n")
			th := startHost(t, cfg)
			ctx := t.Context()
			// A web session with yolo on: it must change nothing for
			// the worker.
			if err := th.client.Exec(ctx, localapi.ExecRequest{Session: "s1", Command: "true"}, func(localapi.Event) error { return nil }); err != nil {
				t.Fatal(err)
			}
			sessions, err := th.db.ListSessions(ctx)
			if err != nil || len(sessions) == 0 {
				t.Fatalf("sessions: %v %v", sessions, err)
			}
			for _, s := range sessions {
				if err := th.db.SetYolo(ctx, s.Key, true); err != nil {
					t.Fatal(err)
				}
			}
			dir := t.TempDir()
			task, err := th.client.AddKanbanTask(ctx, localapi.KanbanAddRequest{
				Title: "clean", Workspace: "dir:" + dir, Steps: []string{"env", "rm -rf build"},
			})
			if err != nil {
				t.Fatal(err)
			}
			want := store.TaskBlocked
			if mode == "approve" {
				want = store.TaskDone
			}
			card := waitTask(t, th.client, task.ID, want)
			envOut := stepOutput(t, card, "env").Output
			for _, n := range names {
				if strings.Contains(envOut, n+"=") {
					t.Errorf("worker step's environment has %s", n)
				}
			}
			for _, bad := range []string{"TOKEN", "API_KEY", "YOLO", "INTERACTIVE", "SESSION", "CRON", "EXEC_ASK"} {
				for line := range strings.SplitSeq(envOut, "\n") {
					name, _, _ := strings.Cut(line, "=")
					if strings.Contains(name, bad) {
						t.Errorf("worker step's environment has %s", line)
					}
				}
			}
			rm := stepOutput(t, card, "rm -rf build")
			switch mode {
			case "deny":
				if rm.Verdict != "deny" || rm.Rule != "unattended.kanban_mode" {
					t.Errorf("dangerous step under deny: %+v", rm)
				}
			case "approve":
				if rm.Verdict != "allow" || rm.ExitCode != 0 {
					t.Errorf("dangerous step under approve: %+v", rm)
				}
			}
		})
	}
}
