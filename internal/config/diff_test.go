package config

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	base := "approvals:\n  mode: manual\n  deny: ['rm -rf *', 'dd *']\ncommand_allowlist: ['git status']\nwrite:\n  protected: ['.env*']\n"
	tests := []struct {
		name   string
		new    string
		want   []string // keys changed, in order
		widens []bool
	}{
		{"same", base, nil, nil},
		{"empty policy", "{}", []string{"approvals.deny", "command_allowlist", "write.protected"}, []bool{true, false, true}},
		{"mode off", strings.Replace(base, "manual", "off", 1), []string{"approvals.mode"}, []bool{true}},
		{"mode stricter", "approvals:\n  mode: manual\n  deny: ['rm -rf *', 'dd *', 'curl *']\ncommand_allowlist: ['git status']\nwrite:\n  protected: ['.env*']\n", []string{"approvals.deny"}, []bool{false}},
		{"allowlist grows", strings.Replace(base, "['git status']", "['git status', 'git push *']", 1), []string{"command_allowlist"}, []bool{true}},
	}
	old := mustParse(t, base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff(old, mustParse(t, tt.new))
			if len(got) != len(tt.want) {
				t.Fatalf("Diff = %v, want keys %v", got, tt.want)
			}
			for i, c := range got {
				if c.Key != tt.want[i] || c.Widens != tt.widens[i] {
					t.Errorf("change %d = %v, want %s widens=%v", i, c, tt.want[i], tt.widens[i])
				}
			}
		})
	}
	cron := Diff(mustParse(t, "{}"), mustParse(t, "approvals: {cron_mode: approve}"))
	if len(cron) != 1 || cron[0].Key != "approvals.cron_mode" || !cron[0].Widens || cron[0].String() != "approvals.cron_mode: deny → approve (widens)" {
		t.Errorf("cron_mode: %v", cron)
	}
	for _, k := range []struct {
		from, to string
		widens   bool
	}{{"deny", "ask", true}, {"ask", "approve", true}, {"approve", "ask", false}, {"ask", "deny", false}} {
		ch := Diff(mustParse(t, "approvals: {kanban_mode: "+k.from+"}"), mustParse(t, "approvals: {kanban_mode: "+k.to+"}"))
		if len(ch) != 1 || ch[0].Widens != k.widens {
			t.Errorf("kanban_mode %s → %s: %v, want widens=%v", k.from, k.to, ch, k.widens)
		}
	}
	mcp := Diff(mustParse(t, "mcp: {rules: [{match: 'a/*', action: deny}]}"), mustParse(t, "mcp: {rules: [{match: 'a/*', action: deny}, {match: 'b/*', action: deny}]}"))
	if len(mcp) != 1 || mcp[0].Widens {
		t.Errorf("appended mcp deny rule: %v", mcp)
	}
	mcp = Diff(mustParse(t, "mcp: {rules: [{match: 'a/*', action: deny}]}"), mustParse(t, "mcp: {rules: [{match: 'a/*', action: allow}]}"))
	if len(mcp) != 1 || !mcp[0].Widens {
		t.Errorf("loosened mcp rule: %v", mcp)
	}
	profile := Diff(mustParse(t, "analysis: {profile: strict}"), mustParse(t, "{}"))
	if len(profile) != 1 || profile[0].Key != "analysis.profile" || !profile[0].Widens {
		t.Errorf("leaving the strict profile: %v", profile)
	}
	if p := Diff(mustParse(t, "{}"), mustParse(t, "analysis: {profile: strict}")); len(p) != 1 || p[0].Widens {
		t.Errorf("entering the strict profile: %v", p)
	}
	roots := Diff(mustParse(t, "write: {safe_roots: [/srv]}"), mustParse(t, "{}"))
	if len(roots) != 1 || !roots[0].Widens {
		t.Errorf("safe roots dropped: %v", roots)
	}
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, _, err := Parse([]byte(src), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestAuditSection(t *testing.T) {
	c := mustParse(t, "audit:\n  anchor_file: /mnt/b/anchor\n  anchor_syslog: true\n  anchor_url: https://x.example/anchor\n")
	if c.Audit.AnchorFile != "/mnt/b/anchor" || !c.Audit.AnchorSyslog || c.Audit.AnchorURL != "https://x.example/anchor" {
		t.Errorf("audit: %+v", c.Audit)
	}
	if c := mustParse(t, "audit: {anchor_url: \"\"}"); c.Audit.AnchorURL != "" {
		t.Errorf("anchor_url \"\" = %q, want no URL sink", c.Audit.AnchorURL)
	}
	for _, bad := range []string{"audit: {anchor_file: rel/path}", "audit: {anchor_syslog: yes please}", "audit: {anchor_url: ftp://x}", "audit: {other: 1}"} {
		if _, _, err := Parse([]byte(bad), "t.yaml"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
