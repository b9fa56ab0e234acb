package config

import (
	"os"
	"reflect"
	"testing"
)

// The chat: section's allowlists and per-chat overrides are decoded by
// hand from nodes (for their line:col errors), like mcp.servers.
func init() {
	for _, p := range []string{"discord", "slack", "telegram"} {
		k := "chat." + p
		for _, l := range []string{"approvers", "admins", "users"} {
			manual[k+"."+l] = struct {
				suffix string
				t      reflect.Type
			}{".", reflect.TypeFor[rawAllowlist]()}
			manual[k+".chats.*."+l] = manual[k+"."+l]
		}
		manual[k+".chats"] = struct {
			suffix string
			t      reflect.Type
		}{".*.", reflect.TypeFor[rawOverride]()}
	}
}

// TestSchemaChat: the chat: section's schema agrees with the parser on
// a full section and on what both refuse.
func TestSchemaChat(t *testing.T) {
	r := compile(t)
	ok, err := os.ReadFile("testdata/parse/chat_ok.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Parse(ok, "chat_ok"); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(asJSON(t, ok)); err != nil {
		t.Errorf("the schema refuses chat_ok.yaml: %v", err)
	}
	for name, y := range map[string]string{
		"inline token":         "chat:\n  discord: {enabled: true, token: abc, token_env: X}\n",
		"slack roles":          "chat:\n  slack: {approvers: {roles: [R1]}}\n",
		"app token on discord": "chat:\n  discord: {app_token_env: X}\n",
		"relative token file":  "chat:\n  telegram: {token_file: tok}\n",
		"env holds a value":    "chat:\n  telegram: {token_env: \"123:abc\"}\n",
		"ntfy priority":        "chat:\n  notify: {ntfy: {url: https://x/y, priority: loud}}\n",
		"unknown key":          "chat:\n  telegram: {enable: true}\n",
	} {
		if err := r.Validate(asJSON(t, []byte(y))); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
		if _, _, err := Parse([]byte(y), name); err == nil {
			t.Errorf("%s: the parser accepts what the schema refuses", name)
		}
	}
}
