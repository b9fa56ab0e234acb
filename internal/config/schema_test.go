package config

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/google/jsonschema-go/jsonschema"
)

// manual are the keys whose values the parser decodes by hand from a
// node rather than through a raw struct field: mcp.servers is a mapping
// from a name to a server.
var manual = map[string]struct {
	suffix string
	t      reflect.Type
}{
	"mcp.servers": {".*.", reflect.TypeFor[rawMCPServer]()},
}

// parserKeys lists every key path the parser accepts: the yaml tags of
// rawConfig, recursively ("a.b", "a.list[].key", "a.map.*.key").
func parserKeys(t reflect.Type, prefix string, out map[string]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := prefix + name
		out[key] = true
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == reflect.TypeFor[node]():
			if m, ok := manual[key]; ok {
				parserKeys(m.t, key+m.suffix, out)
			}
		case ft == reflect.TypeFor[rawRules]():
			parserKeys(reflect.TypeFor[rawMCPRule](), key+"[].", out)
		case ft.Kind() == reflect.Struct:
			parserKeys(ft, key+".", out)
		}
	}
}

// schemaKeys lists every key path the schema names.
func schemaKeys(s map[string]any, prefix string, out map[string]bool) {
	props, _ := s["properties"].(map[string]any)
	for name, v := range props {
		key := prefix + name
		out[key] = true
		sub, _ := v.(map[string]any)
		if items, ok := sub["items"].(map[string]any); ok {
			if _, has := items["properties"]; has {
				schemaKeys(items, key+"[].", out)
			}
		}
		if ap, ok := sub["additionalProperties"].(map[string]any); ok {
			schemaKeys(ap, key+".*.", out)
		}
		if _, has := sub["properties"]; has {
			schemaKeys(sub, key+".", out)
		}
	}
}

func sorted(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestSchemaKeys: every key the parser accepts is in the schema, and
// the schema names no key the parser would refuse.
func TestSchemaKeys(t *testing.T) {
	parsed := map[string]bool{}
	parserKeys(reflect.TypeFor[rawConfig](), "", parsed)
	var s map[string]any
	if err := json.Unmarshal(Schema, &s); err != nil {
		t.Fatal(err)
	}
	schema := map[string]bool{}
	schemaKeys(s, "", schema)
	for _, k := range sorted(parsed) {
		if !schema[k] {
			t.Errorf("the parser accepts %s, the schema does not name it (internal/config/schema.json)", k)
		}
	}
	for _, k := range sorted(schema) {
		if !parsed[k] {
			t.Errorf("the schema names %s, the parser does not accept it", k)
		}
	}
	if len(parsed) < 40 {
		t.Errorf("only %d keys found: the walk is broken", len(parsed))
	}
	// Every object in the schema refuses unknown keys, as the parser does.
	var walk func(path string, v any)
	walk = func(path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if _, props := m["properties"]; props {
			if ap, ok := m["additionalProperties"]; !ok || ap != false {
				t.Errorf("%s: an object with properties must have additionalProperties: false", path)
			}
		}
		for k, sub := range m {
			walk(path+"/"+k, sub)
		}
	}
	walk("#", s)
}

// compile compiles the schema.
func compile(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(Schema, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// asJSON reads YAML into the JSON value an editor validates.
func asJSON(t *testing.T, y []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(y, &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out == nil {
		out = map[string]any{}
	}
	return out
}

// TestSchemaAgreesWithParser: configs the parser accepts validate
// against the schema, and what the schema refuses the parser refuses
// too.
func TestSchemaAgreesWithParser(t *testing.T) {
	r := compile(t)
	valid := map[string]string{
		"starter": string(Starter),
		"full": `approvals:
  mode: smart
  timeout: 120
  cron_mode: approve
  kanban_mode: deny
  single_query_mode: deny
  unattended_mode: deny
  deny: ["curl * | sh", "read /home/*/.ssh/*"]
  denial_breaker_threshold: 0
  smart_policy: "never push to release"
  smart_failure_threshold: 2
  audit_log: true
command_allowlist: ["git push *", "class:git.reset_hard"]
mcp:
  rules:
    - {match: "github/list_*", action: allow}
  servers:
    files:
      command: [npx, -y, server]
      env: [FILES_KEY]
    search:
      url: https://search.example.com/mcp
  ask_client: true
write:
  protected: ["/srv/app/secrets/*", ".env*"]
  safe_roots: ["~/work", "/srv/app"]
tools:
  env_passthrough: [NPM_TOKEN]
kanban:
  failure_limit: 5
  concurrency: 2
llm:
  base_url: http://127.0.0.1:11434/v1/
  model: qwen
  api_key_env: ""
  timeout: 90s
  max_retries: 0
  max_turns: 10
  guardian_model: small
  guardian_timeout: 20
  guardian_max_tokens: 512
hook:
  allow_safe: true
`,
		"mode off as a YAML boolean": "approvals:\n  mode: off\n",
	}
	for name, y := range valid {
		if _, _, err := Parse([]byte(y), name); err != nil {
			t.Fatalf("%s: the parser refuses it: %v", name, err)
		}
		if err := r.Validate(asJSON(t, []byte(y))); err != nil {
			t.Errorf("%s: the schema refuses a config the parser accepts: %v", name, err)
		}
	}
	invalid := map[string]string{
		"unknown key":         "approvals:\n  moed: manual\n",
		"unknown section":     "approval:\n  mode: manual\n",
		"timeout zero":        "approvals:\n  timeout: 0\n",
		"allowlist scalar":    "command_allowlist: \"*\"\n",
		"allowlist wildcard":  "command_allowlist: [\"*\"]\n",
		"rule without action": "mcp:\n  rules:\n    - {match: a/b}\n",
		"rule bad action":     "mcp:\n  rules:\n    - {match: a/b, action: maybe}\n",
		"server both":         "mcp:\n  servers:\n    x: {command: [a], url: https://x}\n",
		"server env WARDEN":   "mcp:\n  servers:\n    x: {command: [a], env: [WARDEN_STATE]}\n",
		"relative safe root":  "write:\n  safe_roots: [work]\n",
		"concurrency 0":       "kanban:\n  concurrency: 0\n",
		"base_url not http":   "llm:\n  base_url: ftp://x/\n  model: m\n",
		"allow_safe string":   "hook:\n  allow_safe: \"yes\"\n",
		"retries 11":          "llm:\n  max_retries: 11\n",
	}
	for name, y := range invalid {
		if err := r.Validate(asJSON(t, []byte(y))); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
		if _, _, err := Parse([]byte(y), name); err == nil {
			t.Errorf("%s: the parser accepts what the schema refuses", name)
		}
	}
}

// TestSchemaPublished: docs/config.schema.json is schema.json
// (regenerate: go test ./internal/config -run TestSchemaPublished -update).
func TestSchemaPublished(t *testing.T) {
	const path = "../../docs/config.schema.json"
	if !bytes.Equal(readGolden(t, path, Schema), Schema) {
		t.Fatal("docs/config.schema.json is not internal/config/schema.json: go test ./internal/config -run TestSchemaPublished -update")
	}
	if !slices.Contains(strings.Split(string(Starter), "\n"), "# yaml-language-server: $schema=https://raw.githubusercontent.com/wardenhq/warden/main/docs/config.schema.json") {
		t.Error("the starter config does not point editors at the schema")
	}
}
