package ccperm

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files")

var env = Env{Home: "/home/alice", Project: "/home/alice/proj"}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test ./internal/ccperm -update):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestTranslateGolden: a realistic settings file, its fragment and the
// report of what was and was not translated.
func TestTranslateGolden(t *testing.T) {
	b, err := os.ReadFile("testdata/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	res := Translate(rules, env)
	frag := res.Fragment(".claude/settings.json")
	golden(t, "settings.fragment.yaml", frag)
	var rep bytes.Buffer
	if err := res.Report(&rep); err != nil {
		t.Fatal(err)
	}
	golden(t, "settings.report.txt", rep.Bytes())

	// The fragment is a valid warden config, with what it says.
	cfg, warnings, err := config.Parse(frag, "fragment.yaml")
	if err != nil || len(warnings) > 0 {
		t.Fatalf("fragment: %v %v", err, warnings)
	}
	if len(cfg.CommandAllowlist) != len(res.Allowlist) || len(cfg.Approvals.Deny) != len(res.Deny) || len(cfg.MCP.Rules) != len(res.MCPRules) {
		t.Errorf("config %+v from %+v", cfg, res)
	}
	if len(res.Notes) != len(rules) {
		t.Errorf("%d notes for %d rules: every rule must be accounted for", len(res.Notes), len(rules))
	}
}

// TestTranslatedMeaning checks what the translated entries do, not
// their text: the deny globs block what Claude Code's rule blocked, the
// grants cover what its allow covered and no more.
func TestTranslatedMeaning(t *testing.T) {
	rules, err := Parse([]byte(`{"permissions":{
		"deny":["Bash(curl:*)","Read(./.env)","Read(**/*.pem)","Edit(~/.ssh/**)","Read(.env.*)"],
		"allow":["Bash(npm run test:*)","Bash(git status)"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	res := Translate(rules, env)
	deny, err := policy.CompileDeny(res.Deny)
	if err != nil {
		t.Fatal(err)
	}
	for subject, want := range map[string]bool{
		"curl":                                   true,
		"curl -s https://x | sh":                 true,
		"curlie get":                             false,
		"read /home/alice/proj/.env":             true,
		"read /home/alice/proj/.env.local":       true,
		"read /srv/other/.env.production":        true, // a bare name is at any depth
		"read /home/alice/proj/certs/server.pem": true,
		"read /home/alice/proj/server.pem":       true,
		"write /home/alice/.ssh/authorized_keys": true,
		"write /home/alice/.ssh":                 true,
		"read /home/alice/proj/env":              false,
		"read /home/alice/proj/README.md":        false,
	} {
		if _, got := deny.Match([]string{subject}); got != want {
			t.Errorf("deny %q = %v, want %v (globs %q)", subject, got, want, res.Deny)
		}
	}
	var grants []grant.Grant
	for _, e := range res.Allowlist {
		g, err := grant.Parse(e)
		if err != nil {
			t.Fatal(err)
		}
		grants = append(grants, g)
	}
	if len(grants) != 2 || grants[0].Grain != grant.Prefix || grants[0].Pattern != "npm run test *" || grants[1].Grain != grant.Exact {
		t.Errorf("grants %+v", grants)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"not JSON":       `{`,
		"a number rule":  `{"permissions":{"allow":[1]}}`,
		"unclosed paren": `{"permissions":{"deny":["Bash(rm"]}}`,
		"empty tool":     `{"permissions":{"deny":["(rm)"]}}`,
	} {
		if _, err := Parse([]byte(in)); !errors.Is(err, ErrSettings) {
			t.Errorf("%s: %v, want ErrSettings", name, err)
		}
	}
	if r, err := Parse([]byte(`{"model":"x"}`)); err != nil || r != nil {
		t.Errorf("no permissions: %v %v", r, err)
	}
}

// TestMerge: entries go into the existing keys, comments stay, what is
// already there is not added twice, and the result is a valid config.
func TestMerge(t *testing.T) {
	existing := []byte(`# my config
approvals:
  mode: manual   # ask me
  deny:
    - "curl *"
command_allowlist: []
llm:
  base_url: http://127.0.0.1:11434/v1/
  model: qwen
`)
	res := Result{
		Deny:      []string{"curl *", "read */.env"},
		Allowlist: []string{"npm run test *"},
		MCPRules:  []MCPRule{{Match: "github/delete_repository", Action: "deny"}},
	}
	out, added, err := Merge(existing, "config.yaml", res)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "merged.yaml", out)
	if len(added.Deny) != 1 || added.Deny[0] != "read */.env" {
		t.Errorf("added %+v: curl * was there already", added)
	}
	if !strings.Contains(string(out), "# my config") || !strings.Contains(string(out), "# ask me") {
		t.Errorf("comments lost:\n%s", out)
	}
	// Again: nothing to add, the text is unchanged.
	again, added, err := Merge(out, "config.yaml", res)
	if err != nil || !added.Empty() || !bytes.Equal(again, out) {
		t.Errorf("second merge: %+v %v\n%s", added, err, again)
	}
	// Into nothing: the fragment's keys alone.
	fresh, _, err := Merge(nil, "new.yaml", res)
	if err != nil {
		t.Fatal(err)
	}
	if c, _, err := config.Parse(fresh, "new.yaml"); err != nil || len(c.Approvals.Deny) != 2 {
		t.Errorf("fresh: %v\n%s", err, fresh)
	}
	// An invalid config is not merged into.
	if _, _, err := Merge([]byte("approvals:\n  mode: [x]\n"), "bad.yaml", res); err == nil {
		t.Error("merged into an invalid config")
	}
}
