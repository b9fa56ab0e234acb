package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/policy"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// TestParseGolden parses each testdata/parse/*.yaml and compares a
// summary of the result, its warnings and its errors with the .golden
// file beside it. Run with -update to rewrite them.
func TestParseGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/parse/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range files {
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		t.Run(name, func(t *testing.T) {
			cfg, warns, err := Load(in)
			got := render(cfg, warns, err)
			golden := strings.TrimSuffix(in, ".yaml") + ".golden"
			if want := readGolden(t, golden, []byte(got)); got != string(want) {
				t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", golden, got, want)
			}
		})
	}
}

// readGolden returns the golden file at path, which got must equal; with
// -update it first writes got there.
func readGolden(t *testing.T, path string, got []byte) []byte {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	return want
}

// render prints what a golden file holds: the error, or the effective
// configuration, then the warnings.
func render(cfg *Config, warns []Warning, err error) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "error:\n%s\n", err)
	}
	if cfg != nil {
		a := cfg.Approvals
		fmt.Fprintf(&b, "approvals.mode: %v\n", a.Mode)
		fmt.Fprintf(&b, "approvals.timeout: %v\n", a.Timeout)
		fmt.Fprintf(&b, "approvals.cron_mode: %v\n", a.CronMode)
		fmt.Fprintf(&b, "approvals.kanban_mode: %v\n", a.KanbanMode)
		fmt.Fprintf(&b, "approvals.single_query_mode: %v\n", a.SingleQueryMode)
		fmt.Fprintf(&b, "approvals.unattended_mode: %v\n", a.UnattendedMode)
		fmt.Fprintf(&b, "approvals.deny: %q\n", a.Deny)
		fmt.Fprintf(&b, "approvals.denial_breaker_threshold: %d\n", a.DenialBreakerThreshold)
		fmt.Fprintf(&b, "command_allowlist: %q\n", cfg.CommandAllowlist)
		for _, r := range cfg.MCP.Rules {
			fmt.Fprintf(&b, "mcp.rule: %q -> %v\n", r.Match, r.Verdict)
		}
		fmt.Fprintf(&b, "write.protected: %q\n", cfg.Write.Protected)
		fmt.Fprintf(&b, "write.safe_roots: %q\n", cfg.Write.SafeRoots)
		if a.SmartPolicy != "" || a.SmartFailureThreshold != DefaultSmartFailureThreshold {
			fmt.Fprintf(&b, "approvals.smart_policy: %q\napprovals.smart_failure_threshold: %d\n", a.SmartPolicy, a.SmartFailureThreshold)
		}
		for _, s := range cfg.MCP.Servers {
			fmt.Fprintf(&b, "mcp.server: %s command=%q url=%q env=%q\n", s.Name, s.Command, s.URL, s.Env)
		}
		if cfg.MCP.AskClient {
			fmt.Fprintf(&b, "mcp.ask_client: true\n")
		}
		if cfg.Analysis.Profile != "" {
			fmt.Fprintf(&b, "analysis.profile: %s\n", cfg.Analysis.Profile)
		}
		if l := cfg.LLM; l != defaultLLM() {
			fmt.Fprintf(&b, "llm: %+v\n", l)
		}
		if s := cfg.Sandbox; s.Mode != SandboxWorkspaceWrite || !s.Network || len(s.Hide)+len(s.Writable) > 0 {
			fmt.Fprintf(&b, "sandbox: mode=%s network=%v hide=%q writable=%q\n", s.Mode, s.Network, s.Hide, s.Writable)
		}
		renderChat(&b, cfg.Chat)
	}
	for _, w := range warns {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

func TestDefault(t *testing.T) {
	d := Default()
	a := d.Approvals
	if a.Mode != policy.ModeManual || a.Timeout != 300*time.Second || a.DenialBreakerThreshold != 3 {
		t.Errorf("Default() approvals = %+v", a)
	}
	for _, m := range []policy.UnattendedMode{a.CronMode, a.KanbanMode, a.SingleQueryMode, a.UnattendedMode} {
		if m.Approves() {
			t.Error("a default unattended mode approves")
		}
	}
	if Default() == d {
		t.Error("Default() returns a shared value")
	}
	cfg, warns, err := Parse(nil, "empty")
	if err != nil || len(warns) != 0 {
		t.Fatalf("Parse(empty) = %v, %v", warns, err)
	}
	if cfg.Approvals.Mode != a.Mode || cfg.Approvals.Timeout != a.Timeout || cfg.Approvals.CronMode != a.CronMode {
		t.Errorf("empty file differs from Default(): %+v", cfg.Approvals)
	}
}

func TestParseValues(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		check func(*Config) bool
	}{
		{"mode off", "approvals: {mode: off}", func(c *Config) bool { return c.Approvals.Mode == policy.ModeOff }},
		{"mode OFF", "approvals: {mode: OFF}", func(c *Config) bool { return c.Approvals.Mode == policy.ModeOff }},
		{"mode false", "approvals: {mode: false}", func(c *Config) bool { return c.Approvals.Mode == policy.ModeOff }},
		{"mode true", "approvals: {mode: true}", func(c *Config) bool { return c.Approvals.Mode == policy.ModeManual }},
		{"mode null", "approvals: {mode: null}", func(c *Config) bool { return c.Approvals.Mode == policy.ModeManual }},
		{"mode !!str", "approvals: {mode: !!str smart}", func(c *Config) bool { return c.Approvals.Mode == policy.ModeSmart }},
		{"mode anchored", "approvals: {mode: &m smart}", func(c *Config) bool { return c.Approvals.Mode == policy.ModeSmart }},
		{"cron approve", "approvals: {cron_mode: approve}", func(c *Config) bool { return c.Approvals.CronMode.Approves() }},
		{"cron false", "approvals: {cron_mode: false}", func(c *Config) bool { return !c.Approvals.CronMode.Approves() }},
		{"kanban ask", "approvals: {kanban_mode: ask}", func(c *Config) bool { return c.Approvals.KanbanMode == policy.UnattendedAsk }},
		{"kanban ASK", "approvals: {kanban_mode: ' ASK'}", func(c *Config) bool { return c.Approvals.KanbanMode == policy.UnattendedAsk }},
		{"kanban approve", "approvals: {kanban_mode: approve}", func(c *Config) bool { return c.Approvals.KanbanMode == policy.UnattendedApprove }},
		{"kanban typo", "approvals: {kanban_mode: asks}", func(c *Config) bool { return c.Approvals.KanbanMode == policy.UnattendedDeny }},
		{"timeout", "approvals: {timeout: 45}", func(c *Config) bool { return c.Approvals.Timeout == 45*time.Second }},
		{"breaker off", "approvals: {denial_breaker_threshold: 0}", func(c *Config) bool { return c.Approvals.DenialBreakerThreshold == 0 }},
		{"deny block scalar", "approvals:\n  deny:\n    - |\n      rm -rf *\n", func(c *Config) bool { return len(c.Approvals.Deny) == 1 }},
		{"allowlist null", "command_allowlist:", func(c *Config) bool { return c.CommandAllowlist == nil }},
		{"safe roots cleaned", "write: {safe_roots: [/a/b/../c/]}", func(c *Config) bool { return c.Write.SafeRoots[0] == "/a/c" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _, err := Parse([]byte(tt.src), "t.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(cfg) {
				t.Errorf("unexpected config for %q: %+v", tt.src, cfg)
			}
		})
	}
}

// TestAskOnlyForKanban: ask is refused, as an error naming the key, for
// every unattended mode but kanban_mode: those owners have no console
// the host could attach (invariant 9).
func TestAskOnlyForKanban(t *testing.T) {
	for _, key := range []string{"cron_mode", "single_query_mode", "unattended_mode"} {
		_, _, err := Parse([]byte("approvals:\n  "+key+": ask\n"), "c.yaml")
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "approvals."+key+": ask is only valid for approvals.kanban_mode") {
			t.Errorf("%s: ask: %v", key, err)
		}
	}
	cfg, warns, err := Parse([]byte("approvals:\n  kanban_mode: ask\n"), "c.yaml")
	if err != nil || len(warns) != 0 || cfg.Approvals.KanbanMode != policy.UnattendedAsk {
		t.Errorf("kanban_mode ask: %v, %v, %v", cfg, warns, err)
	}
}

func TestErrorDetails(t *testing.T) {
	_, _, err := Parse([]byte("approvals:\n  timeout: -1\n  mode: [x]\n"), "c.yaml")
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %v does not match ErrInvalid", err)
	}
	e, ok := errors.AsType[*Error](err)
	if !ok {
		t.Fatalf("error %v has no *Error", err)
	}
	if e.File != "c.yaml" || e.Line != 2 || e.Column != 12 || !strings.Contains(e.Message, "approvals.timeout") {
		t.Errorf("first error = %+v", e)
	}
	if !strings.Contains(err.Error(), "approvals.mode") {
		t.Errorf("second error missing from %q", err)
	}

	_, _, err = Parse([]byte("nope: 1\n"), "c.yaml")
	e, ok = errors.AsType[*Error](err)
	if !ok || e.Line != 1 || e.Column != 1 || e.Unwrap() == nil || !errors.Is(err, ErrInvalid) {
		t.Errorf("YAML library error not wrapped with position: %+v", e)
	}
}

func TestParseDigest(t *testing.T) {
	a, _, _ := Parse([]byte("approvals: {mode: off}\n"), "a")
	b, _, _ := Parse([]byte("approvals: {mode: off} \n"), "b")
	if a.Digest == "" || a.Digest == b.Digest || a.Name != "a" {
		t.Errorf("digests %q %q, name %q", a.Digest, b.Digest, a.Name)
	}
}

func TestLoadErrors(t *testing.T) {
	_, _, err := Load(filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrInvalid) {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, []byte("#"+strings.Repeat("x", MaxFileSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Load(big); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("big file: %v", err)
	}
	if _, _, err := Parse(make([]byte, MaxFileSize+1), "big"); !errors.Is(err, ErrInvalid) {
		t.Errorf("big input: %v", err)
	}
}

// renderChat prints the chat: section when it is not the default.
func renderChat(b *strings.Builder, c Chat) {
	for _, p := range []struct {
		name string
		p    ChatPlatform
	}{{"discord", c.Discord}, {"slack", c.Slack}, {"telegram", c.Telegram}} {
		if !p.p.Enabled && !p.p.Token.Set() {
			continue
		}
		fmt.Fprintf(b, "chat.%s: enabled=%v token=%s app_token=%s api_url=%q approvers=%+v admins=%+v users=%+v\n",
			p.name, p.p.Enabled, p.p.Token, p.p.AppToken, p.p.APIURL, p.p.Approvers, p.p.Admins, p.p.Users)
		for _, o := range p.p.Chats {
			fmt.Fprintf(b, "chat.%s.chats.%s: approvers=%v admins=%v users=%v\n", p.name, o.ID, o.Approvers, o.Admins, o.Users)
		}
	}
	if n := c.Notify; n.After != DefaultNotifyAfter || n.Webhook != nil || n.Ntfy != nil {
		fmt.Fprintf(b, "chat.notify.after: %v\n", n.After)
		if n.Webhook != nil {
			fmt.Fprintf(b, "chat.notify.webhook: %+v\n", *n.Webhook)
		}
		if n.Ntfy != nil {
			fmt.Fprintf(b, "chat.notify.ntfy: %+v\n", *n.Ntfy)
		}
	}
}

// TestKanbanRemote: kanban.remote is off by default, loopback when on,
// and refuses a bad address, a relative or lone certificate file and a
// non-boolean switch.
func TestKanbanRemote(t *testing.T) {
	cfg, _, err := Parse([]byte("kanban:\n  concurrency: 2\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Kanban.Remote; r.Enabled || r.Listen != DefaultRemoteListen || r.Lease != DefaultRemoteLease {
		t.Errorf("default: %+v", r)
	}
	cfg, _, err = Parse([]byte("kanban:\n  remote:\n    enabled: true\n    listen: 0.0.0.0:9000\n    cert_file: /etc/w.crt\n    key_file: /etc/w.key\n    lease: 10s\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Kanban.Remote; !r.Enabled || r.Listen != "0.0.0.0:9000" || r.CertFile != "/etc/w.crt" || r.KeyFile != "/etc/w.key" || r.Lease != 10*time.Second {
		t.Errorf("set: %+v", r)
	}
	for _, bad := range []string{
		"kanban:\n  remote:\n    enabled: yes please\n",
		"kanban:\n  remote:\n    listen: localhost\n",
		"kanban:\n  remote:\n    cert_file: w.crt\n    key_file: /etc/w.key\n",
		"kanban:\n  remote:\n    cert_file: /etc/w.crt\n",
		"kanban:\n  remote:\n    lease: 0\n",
		"kanban:\n  remote:\n    port: 1\n",
		"kanban:\n  remote:\n    only: true\n",
	} {
		if _, _, err := Parse([]byte(bad), "t.yaml"); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}
