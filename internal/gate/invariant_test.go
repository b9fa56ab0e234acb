package gate

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/owner"
)

// TestInvariant01_CronDoesNotLeakIntoChat is the reference system's first
// regression story: after any number of cron runs, concurrent or not, a
// chat session's dangerous action is a question on its own session, and
// cron's is cron_mode's deny.
func TestInvariant01_CronDoesNotLeakIntoChat(t *testing.T) {
	g := setup{}.gate(t)
	for i := range 20 {
		if d := decide(t, g, cron(fmt.Sprint("j", i)), rmBuild); d.Verdict != Deny || d.Rule != RuleCronMode {
			t.Fatalf("cron run %d: %s %s", i, d.Verdict, d.Rule)
		}
	}
	if d := decide(t, g, chat("s1"), rmBuild); d.Verdict != Ask || d.Rule != RuleHuman || !strings.Contains(d.Steps[8].Detail, "s1") {
		t.Fatalf("chat after cron runs: %s %s %+v", d.Verdict, d.Rule, d.Steps)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for i := range 200 {
		wg.Go(func() {
			c := decide(t, g, cron(fmt.Sprint("j", i)), rmBuild)
			if c.Rule != RuleCronMode || c.Verdict != Deny {
				errs <- "cron got " + c.Rule
			}
		})
		wg.Go(func() {
			key := fmt.Sprint("s", i)
			c := decide(t, g, chat(key), rmBuild)
			if c.Verdict != Ask || !strings.Contains(c.Steps[8].Detail, "session "+key) {
				errs <- "chat got " + c.Rule
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestInvariant01_SessionsStayApart is the second story: two chat
// sessions decide concurrently; one's grants and session yolo never
// affect the other.
func TestInvariant01_SessionsStayApart(t *testing.T) {
	g := setup{yolo: []string{"a"}, grants: []grant.Grant{sessionGrant("b", grant.Exact, "git push -f")}}.gate(t)
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if d := decide(t, g, chat("a"), rmBuild); d.Rule != RuleSessionYolo {
				t.Errorf("a: %s", d.Rule)
			}
			if d := decide(t, g, chat("b"), rmBuild); d.Verdict != Ask {
				t.Errorf("b got a's yolo: %s", d.Rule)
			}
			if d := decide(t, g, chat("b"), action.NewShell("git push -f")); d.Rule != RuleGrantExact {
				t.Errorf("b: %s", d.Rule)
			}
			if d := decide(t, g, chat("c"), action.NewShell("git push -f")); d.Verdict != Ask {
				t.Errorf("c got b's grant: %s", d.Rule)
			}
		})
	}
	wg.Wait()
}

// TestInvariant01_MarkersInTheEnvironmentChangeNothing is the third
// story: a kanban owner in a process whose environment holds every marker
// one could imagine gets exactly kanban_mode's answer.
func TestInvariant01_MarkersInTheEnvironmentChangeNothing(t *testing.T) {
	for _, name := range []string{"WARDEN_YOLO", "YOLO", "HERMES_YOLO_MODE", "WARDEN_INTERACTIVE", "HERMES_INTERACTIVE", "HERMES_EXEC_ASK",
		"WARDEN_SESSION", "HERMES_SESSION_KEY", "HERMES_CRON_SESSION", "WARDEN_CRON", "HERMES_GATEWAY_SESSION", "ASK", "WARDEN_MODE", "APPROVALS_MODE"} {
		t.Setenv(name, "1")
	}
	t.Setenv("WARDEN_APPROVALS_KANBAN_MODE", "approve")
	for _, mode := range []string{"deny", "approve"} {
		g := setup{yaml: "approvals:\n  kanban_mode: " + mode + "\n"}.gate(t)
		want := Deny
		if mode == "approve" {
			want = Allow
		}
		for _, a := range []action.Action{rmBuild, action.NewCode("python", "import os\nos.system('git push --force')"), action.NewWrite("/etc/x", 1), action.NewMCP("fs", "rm", nil, false)} {
			if d := decide(t, g, kanban("t1"), a); d.Verdict != want || d.Rule != RuleKanbanMode {
				t.Errorf("kanban_mode %s, %s: %s %s", mode, a.Kind, d.Verdict, d.Rule)
			}
		}
	}
}

// TestInvariant01_ConcurrentDecisionsEqualSequential: random owners of
// random kinds deciding random actions concurrently get exactly what each
// gets alone.
func TestInvariant01_ConcurrentDecisionsEqualSequential(t *testing.T) {
	g := setup{yaml: "approvals:\n  cron_mode: approve\n  kanban_mode: deny\n", yolo: []string{"y"}, grants: []grant.Grant{sessionGrant("g", grant.Prefix, "git push *")}}.gate(t)
	owners := []owner.Owner{chat("a"), chat("y"), chat("g"), cron("j"), kanban("t"), owner.SingleQuery(), owner.API(), owner.Webhook(), {}, delegated(kanban("t2"), cron("j2")), delegated(cron("j3"), chat("sub"))}
	actions := []action.Action{rmBuild, rmRoot, listFiles, action.NewShell("git push -f"), action.NewCode("python", "import os\nos.system('git push --force')"), action.NewWrite("/etc/hosts", 1), action.NewMCP("fs", "rm", nil, false), action.NewPlugin("p", "r", "x")}
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(rt, "n")
		type job struct{ o, a int }
		jobs := make([]job, n)
		for i := range jobs {
			jobs[i] = job{rapid.IntRange(0, len(owners)-1).Draw(rt, "o"), rapid.IntRange(0, len(actions)-1).Draw(rt, "a")}
		}
		alone := make([]Decision, n)
		for i, j := range jobs {
			alone[i] = decide(t, g, owners[j.o], actions[j.a])
		}
		together := make([]Decision, n)
		var wg sync.WaitGroup
		for i, j := range jobs {
			wg.Go(func() { together[i] = decide(t, g, owners[j.o], actions[j.a]) })
		}
		wg.Wait()
		for i := range jobs {
			if alone[i].Verdict != together[i].Verdict || alone[i].Rule != together[i].Rule {
				rt.Fatalf("job %d (%s, %s): alone %s %s, concurrently %s %s", i, owners[jobs[i].o], actions[jobs[i].a].Kind,
					alone[i].Verdict, alone[i].Rule, together[i].Verdict, together[i].Rule)
			}
		}
	})
}

// TestInvariant02_NoOwnerNoTrust: without an owner only plainly safe
// actions run, whatever bypass or grant is configured.
func TestInvariant02_NoOwnerNoTrust(t *testing.T) {
	g := setup{yaml: "approvals:\n  mode: off\n  unattended_mode: approve\ncommand_allowlist: ['class:delete.recursive', 'class:delete.force']\n", processYolo: true}.gate(t)
	for _, a := range []action.Action{rmBuild, action.NewCode("python", "import os\nos.system('git push --force')"), action.NewWrite("/etc/hosts", 1), action.NewMCP("fs", "rm", nil, false), action.NewPlugin("p", "r", "")} {
		if d := decide(t, g, owner.Owner{}, a); d.Verdict != Deny || d.Rule != RuleUnowned {
			t.Errorf("%s without owner: %s %s", a.Kind, d.Verdict, d.Rule)
		}
	}
	for _, a := range []action.Action{listFiles, action.NewWrite("/srv/notes.txt", 1), action.NewMCP("fs", "read", nil, true)} {
		if d := decide(t, g, owner.Owner{}, a); d.Verdict != Allow {
			t.Errorf("safe %s without owner: %s %s", a.Kind, d.Verdict, d.Rule)
		}
	}
}

// TestInvariant05_DelegationNeverWidensTrust: a deny anywhere along the
// lineage wins, in both mixed orders, for every action kind; an attended
// child of an unattended run gets no yolo, no mode off and no question.
func TestInvariant05_DelegationNeverWidensTrust(t *testing.T) {
	acts := []action.Action{rmBuild, action.NewCode("python", "import os\nos.system('git push --force')"), action.NewWrite("/etc/hosts", 1), action.NewMCP("fs", "rm", nil, false), action.NewPlugin("p", "r", "")}
	tests := []struct {
		name   string
		yaml   string
		o      owner.Owner
		want   Verdict
		ruleOK func(string) bool
	}{
		{"kanban approve > cron deny", "approvals:\n  kanban_mode: approve\n  cron_mode: deny\n", delegated(kanban("t"), cron("j")), Deny, func(r string) bool { return r == RuleCronMode }},
		{"kanban deny > cron approve", "approvals:\n  kanban_mode: deny\n  cron_mode: approve\n", delegated(kanban("t"), cron("j")), Deny, func(r string) bool { return r == RuleKanbanMode }},
		{"cron approve > kanban deny", "approvals:\n  cron_mode: approve\n  kanban_mode: deny\n", delegated(cron("j"), kanban("t")), Deny, func(r string) bool { return r == RuleKanbanMode }},
		{"both approve", "approvals:\n  kanban_mode: approve\n  cron_mode: approve\n", delegated(kanban("t"), cron("j")), Allow, func(r string) bool { return r == RuleCronMode }},
		{"single query approve > cron deny", "approvals:\n  single_query_mode: approve\n  cron_mode: deny\n", delegated(owner.SingleQuery(), cron("j")), Deny, func(r string) bool { return r == RuleCronMode }},
		{"attended subagent of cron", "approvals:\n  mode: off\n", delegated(cron("j"), chat("sub")), Deny, func(r string) bool { return r == RuleCronMode }},
		// A kanban run with the console (kanban_mode ask): what it
		// starts gets no human and no approve mode past it; its
		// attended sub-agent is asked, never bypassed.
		{"console kanban ask > cron approve", "approvals:\n  kanban_mode: ask\n  cron_mode: approve\n", delegated(consoleKanban("t"), cron("j")), Deny, func(r string) bool { return r == RuleKanbanMode }},
		{"cron approve > console kanban ask", "approvals:\n  kanban_mode: ask\n  cron_mode: approve\n", delegated(cron("j"), consoleKanban("t")), Deny, func(r string) bool { return r == RuleKanbanMode }},
		{"console kanban ask > attended subagent, mode off", "approvals:\n  kanban_mode: ask\n  mode: off\n", delegated(consoleKanban("t"), chat("sub")), Ask, func(r string) bool { return r == RuleHuman }},
		{"console kanban ask > unattended subagent", "approvals:\n  kanban_mode: ask\n  unattended_mode: approve\n", delegated(consoleKanban("t"), must(owner.Subagent("s"))), Deny, func(r string) bool { return r == RuleKanbanMode }},
	}
	for _, tt := range tests {
		for _, a := range acts {
			t.Run(tt.name+"/"+string(a.Kind), func(t *testing.T) {
				s := setup{yaml: tt.yaml, processYolo: true, yolo: []string{"sub"}}
				d := decide(t, s.gate(t), tt.o, a)
				if d.Verdict != tt.want || !tt.ruleOK(d.Rule) {
					t.Fatalf("%s: %s %s", tt.o, d.Verdict, d.Rule)
				}
			})
		}
	}
}

// TestInvariant06_FloorsFirst: hardline and deny rules block under every
// bypass: process yolo, session yolo, mode off, approve modes, allowlist
// entries and container backends.
func TestInvariant06_FloorsFirst(t *testing.T) {
	yaml := "approvals:\n  mode: off\n  cron_mode: approve\n  kanban_mode: approve\n  single_query_mode: approve\n  unattended_mode: approve\n  deny: ['curl *']\n" +
		"command_allowlist: ['rm -rf /', 'curl *', 'class:delete.root']\n"
	g := setup{yaml: yaml, processYolo: true, yolo: []string{"s"}}.gate(t)
	for _, o := range []owner.Owner{chat("s"), cron("j"), kanban("t"), owner.SingleQuery(), owner.API()} {
		for _, a := range []action.Action{rmRoot, rmRoot.On("docker"), action.NewCode("python", "import os; os.system('mkfs.ext4 /dev/sda')")} {
			if d := decide(t, g, o, a); d.Verdict != Deny || d.Rule != RuleHardline {
				t.Errorf("%s %q: %s %s", o, a.Payload(), d.Verdict, d.Rule)
			}
		}
		for _, a := range []action.Action{action.NewShell("curl -s x"), action.NewShell("curl -s x").On("docker")} {
			if d := decide(t, g, o, a); d.Verdict != Deny || d.Rule != RuleDenyRule {
				t.Errorf("%s %q: %s %s", o, a.Payload(), d.Verdict, d.Rule)
			}
		}
	}
}

// TestInvariant07_FailClosed: store errors, panics, invalid actions and
// unparseable commands end in deny with a message that says what was
// blocked and not to retry.
func TestInvariant07_FailClosed(t *testing.T) {
	tests := []struct {
		name string
		s    setup
		a    action.Action
		rule string
	}{
		{"grant store down", setup{grantsErr: true}, rmBuild, RuleError},
		{"guardian panics", setup{yaml: "approvals:\n  mode: smart\n", guardian: panicky{}}, rmBuild, RuleError},
		{"invalid action", setup{}, action.Action{Kind: "teleport"}, RuleError},
		{"unparseable", setup{}, action.NewShell("rm -rf 'x"), RuleMalformed},
		{"over the size cap", setup{}, action.NewShell(strings.Repeat("a", 300<<10)), RuleMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := tt.s.gate(t).Decide(owner.With(context.Background(), chat("s")), tt.a)
			if d.Verdict != Deny || d.Rule != tt.rule || !strings.Contains(d.AgentMessage, "Do not retry") {
				t.Fatalf("%s %s %q", d.Verdict, d.Rule, d.AgentMessage)
			}
		})
	}
	// Sessions that cannot be read: deny, not "no yolo, carry on".
	g := setup{}.gate(t)
	g.sessions = &yoloSessions{err: fmt.Errorf("disk full")}
	if d := decide(t, g, chat("s"), rmBuild); d.Verdict != Deny || d.Rule != RuleError {
		t.Fatalf("sessions error: %s %s", d.Verdict, d.Rule)
	}
	// A failing guardian escalates to the human; it never approves.
	g = setup{yaml: "approvals:\n  mode: smart\n", guardian: fixedGuardian{err: fmt.Errorf("timeout")}}.gate(t)
	if d := decide(t, g, chat("s"), rmBuild); d.Verdict != Ask {
		t.Fatalf("guardian error: %s %s", d.Verdict, d.Rule)
	}
}

type panicky struct{}

func (panicky) Review(context.Context, Review) (GuardianResult, error) { panic("boom") }

// TestInvariant11_AgentCannotChangePolicy: warden's admin verbs and writes
// to its config, state and grants are hardline for agents, whatever the
// mode; and no deny message names the setting that would let it through.
func TestInvariant11_AgentCannotChangePolicy(t *testing.T) {
	cfgPath, state := "/home/u/.config/warden/config.yaml", "/srv/warden-state"
	g := setup{yaml: "approvals:\n  mode: off\n  cron_mode: approve\n", processYolo: true, protected: []string{cfgPath, state}}.gate(t)
	for _, a := range []action.Action{
		action.NewShell("warden approvals approve 01J"),
		action.NewShell("warden config set approvals.cron_mode approve"),
		action.NewShell("warden grants add 'class:delete.root'"),
		action.NewShell("warden serve --yolo"),
		action.NewShell("echo 'mode: off' > " + cfgPath),
		action.NewShell("sed -i s/deny/approve/ " + cfgPath),
		action.NewShell("cp evil.db " + state + "/warden.db"),
		action.NewShell("bash -c 'warden exec --session x -- rm -rf ~/x'"),
		action.NewWrite(cfgPath, 10),
		action.NewWrite(state+"/grants.json", 10),
		action.NewCode("python", "import os\nos.system('warden approvals approve --all')"),
	} {
		for _, o := range []owner.Owner{chat("s"), cron("j")} {
			if d := decide(t, g, o, a); d.Verdict != Deny || d.Rule != RuleHardline {
				t.Errorf("%s %q: %s %s", o, a.Payload(), d.Verdict, d.Rule)
			}
		}
	}
	// Deny messages say what and why, never which knob.
	g = setup{}.gate(t)
	ask := setup{yaml: "approvals:\n  kanban_mode: ask\n"}.gate(t)
	for _, c := range []struct {
		g *Gate
		o owner.Owner
	}{{g, cron("j")}, {g, kanban("t")}, {g, owner.SingleQuery()}, {g, owner.API()}, {g, owner.Webhook()},
		{ask, kanban("t")}, {ask, delegated(consoleKanban("t"), cron("j"))}} {
		o, d := c.o, decide(t, c.g, c.o, rmBuild)
		for _, leak := range []string{"_mode", ": approve", "mode:", "allowlist", "yolo", "config", "approvals."} {
			if strings.Contains(strings.ToLower(d.AgentMessage), leak) {
				t.Errorf("%s deny message names %q: %s", o, leak, d.AgentMessage)
			}
		}
	}
}
