package owner

import (
	"regexp"
	"strings"
	"testing"
)

func TestExternalKey(t *testing.T) {
	shape := regexp.MustCompile(`^ext-[a-z0-9-]{1,24}-[0-9a-f]{16}$`)
	pairs := [][2]string{
		{"claude-code", "abc"},
		{"claude-code", "abd"},
		{"codex", "abc"},
		{"claude-code", ""},
		{"Claude Code!", "abc"},
		// The separator must keep these apart: a naive concatenation
		// would give both "ab" + "c".
		{"a", "bc"},
		{"ab", "c"},
		{"日本", "x"},
		{strings.Repeat("y", 100), "s"},
	}
	seen := map[string][2]string{}
	for _, p := range pairs {
		k := ExternalKey(p[0], p[1])
		if !shape.MatchString(k) {
			t.Errorf("ExternalKey(%q, %q) = %q: bad shape", p[0], p[1], k)
		}
		if prev, dup := seen[k]; dup {
			t.Errorf("ExternalKey(%q) = ExternalKey(%q) = %q", p, prev, k)
		}
		seen[k] = p
		if again := ExternalKey(p[0], p[1]); again != k {
			t.Errorf("ExternalKey(%q) not stable: %q then %q", p, k, again)
		}
	}
	if k := ExternalKey("claude-code", "abc"); !strings.HasPrefix(k, "ext-claude-code-") {
		t.Errorf("slug lost: %q", k)
	}
}

func TestExternalSession(t *testing.T) {
	tests := []struct {
		name, agent, session string
		ch                   AnswerChannel
		wantErr              string
		attended             bool
	}{
		{"with channel", "claude-code", "s1", fakeChannel("web"), "", true},
		{"without channel", "claude-code", "s1", nil, "", false},
		{"no agent", "", "s1", fakeChannel("web"), "external agent is required", false},
		{"control character", "a\x01", "s1", nil, "control character", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ExternalSession(tt.agent, tt.session, tt.ch)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Kind() != KindExternal || o.Agent() != tt.agent || o.ExternalSession() != tt.session {
				t.Errorf("owner = %s", o)
			}
			if o.SessionKey() != ExternalKey(tt.agent, tt.session) {
				t.Errorf("session key = %q, want %q", o.SessionKey(), ExternalKey(tt.agent, tt.session))
			}
			if o.Attended() != tt.attended {
				t.Errorf("Attended = %v, want %v", o.Attended(), tt.attended)
			}
		})
	}
}
