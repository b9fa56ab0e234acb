package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// The configuration reference (docs/config-reference.md) is generated
// from schema.json, the one description of every key; TestSchemaKeys
// keeps the schema and the parser in step, TestSchemaDefaults the
// schema's defaults and Default(). So the reference cannot drift from
// the code without a test failing.

// jnode is a JSON value that keeps its object keys in file order.
type jnode struct {
	keys []string
	obj  map[string]*jnode
	arr  []*jnode
	val  any // a scalar
}

// decodeSchema reads a schema keeping key order and numbers as written.
func decodeSchema(b []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return decodeJNode(dec)
}

func decodeJNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &jnode{obj: map[string]*jnode{}}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeJNode(dec)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k.(string))
			n.obj[k.(string)] = v
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := &jnode{arr: []*jnode{}}
		for dec.More() {
			v, err := decodeJNode(dec)
			if err != nil {
				return nil, err
			}
			n.arr = append(n.arr, v)
		}
		_, err := dec.Token()
		return n, err
	}
	return &jnode{val: tok}, nil
}

func (n *jnode) get(k string) *jnode {
	if n == nil || n.obj == nil {
		return nil
	}
	return n.obj[k]
}

func (n *jnode) str(k string) string {
	if v := n.get(k); v != nil {
		if s, ok := v.val.(string); ok {
			return s
		}
	}
	return ""
}

// reference renders the schema as Markdown: one table per top-level
// section, a row per key.
type reference struct {
	root *jnode
	w    io.Writer
}

// resolve follows a $ref into $defs, keeping the referring jnode's own
// description and default.
func (r reference) resolve(n *jnode) *jnode {
	ref := n.str("$ref")
	if ref == "" {
		return n
	}
	return r.root.get("$defs").get(strings.TrimPrefix(ref, "#/$defs/"))
}

// typeOf renders what a key accepts.
func (r reference) typeOf(n *jnode) string {
	if n.get("deprecated") != nil {
		return "deprecated (accepted, ignored)"
	}
	if n.get("not") != nil && n.get("type") == nil {
		return "refused (never write a secret here)"
	}
	n = r.resolve(n)
	if alts := n.get("anyOf"); alts != nil {
		var parts []string
		for _, a := range alts.arr {
			parts = append(parts, r.typeOf(a))
		}
		return strings.Join(parts, ", or ")
	}
	if c := n.get("const"); c != nil {
		return fmt.Sprintf("`%v`", c.val)
	}
	if e := n.get("enum"); e != nil {
		var vs []string
		for _, v := range e.arr {
			if v.val == "" {
				vs = append(vs, `""`)
			} else {
				vs = append(vs, fmt.Sprintf("`%v`", v.val))
			}
		}
		return strings.Join(vs, " \\| ")
	}
	if strings.Contains(n.str("pattern"), "ns|us") {
		return "duration (`90s`, `2m`)"
	}
	t := n.str("type")
	switch t {
	case "integer":
		lo, hi := n.get("minimum"), n.get("maximum")
		if lo != nil && hi != nil {
			return fmt.Sprintf("integer %v–%v", lo.val, hi.val)
		}
	case "array":
		if it := n.get("items"); it != nil {
			if t := r.typeOf(it); !strings.ContainsAny(t, " `") {
				return "list of " + t + "s"
			} else {
				return "list of (" + t + ")"
			}
		}
		return "list"
	case "object":
		return "mapping"
	}
	if t == "" {
		return "any"
	}
	return t
}

// defaultOf renders a key's default (its own, else its $ref's), or "".
func (r reference) defaultOf(n *jnode) string {
	d := n.get("default")
	if d == nil {
		d = r.resolve(n).get("default")
	}
	if d == nil {
		return ""
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if d.arr != nil && len(d.arr) == 0 {
		return "`[]`"
	}
	if err := enc.Encode(d.val); err != nil {
		return ""
	}
	return "`" + strings.TrimSpace(strings.Trim(b.String(), "\n")) + "`"
}

func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// rows writes a row for key path and recurses into what it holds.
func (r reference) rows(path string, n *jnode) {
	desc := n.str("description")
	// An object is a section: its own row (when it says something), then
	// its keys. A value that may be an object among other forms (sandbox:
	// off) lists the object's keys too.
	var props *jnode
	var obj *jnode
	if n.get("properties") != nil {
		obj = n
	}
	if alts := n.get("anyOf"); alts != nil && obj == nil {
		for _, a := range alts.arr {
			if a.get("properties") != nil {
				obj = a
			}
		}
	}
	if obj != nil {
		props = obj.get("properties")
	}
	switch {
	case props != nil && obj == n:
		if desc != "" && strings.Contains(path, ".") {
			fmt.Fprintf(r.w, "| `%s` | mapping | | %s |\n", path, cell(desc))
		}
	case n.get("additionalProperties") != nil && n.get("additionalProperties").obj != nil && n.get("properties") == nil:
		fmt.Fprintf(r.w, "| `%s` | mapping of name to settings | | %s |\n", path, cell(desc))
	default:
		t := r.typeOf(n)
		if props != nil {
			t = r.typeOf(&jnode{obj: map[string]*jnode{"anyOf": {arr: withoutObjects(n.get("anyOf").arr)}}}) + ", or a mapping"
		}
		fmt.Fprintf(r.w, "| `%s` | %s | %s | %s |\n", path, t, r.defaultOf(n), cell(desc))
	}
	if props != nil {
		for _, k := range props.keys {
			r.rows(path+"."+k, props.obj[k])
		}
	}
	if ap := n.get("additionalProperties"); ap != nil && ap.obj != nil && ap.get("properties") != nil {
		for _, k := range ap.get("properties").keys {
			r.rows(path+".<name>."+k, ap.get("properties").obj[k])
		}
	}
	if it := n.get("items"); it != nil && it.get("properties") != nil {
		for _, k := range it.get("properties").keys {
			r.rows(path+"[]."+k, it.get("properties").obj[k])
		}
	}
}

func withoutObjects(alts []*jnode) []*jnode {
	var out []*jnode
	for _, a := range alts {
		if a.get("properties") == nil {
			out = append(out, a)
		}
	}
	return out
}

// renderReference renders docs/config-reference.md from schema.
func renderReference(schema []byte) ([]byte, error) {
	root, err := decodeSchema(schema)
	if err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	var b bytes.Buffer
	r := reference{root: root, w: &b}
	fmt.Fprintf(&b, `# Configuration reference

<!-- Generated from internal/config/schema.json by
     go test ./internal/config -run TestConfigReference -update
     Do not edit: change the schema (and the parser: a test keeps them in step). -->

%s

Every key, section by section. [Configuration](configuration.md) explains
the file as a whole (where it lives, reloads, examples); editors can
validate a file against [config.schema.json](config.schema.json).
`, root.str("description"))
	props := root.get("properties")
	for _, k := range props.keys {
		n := props.obj[k]
		fmt.Fprintf(&b, "\n## %s\n\n", k)
		if d := n.str("description"); d != "" {
			fmt.Fprintf(&b, "%s\n\n", strings.Join(strings.Fields(d), " "))
		}
		fmt.Fprintf(&b, "| Key | Accepts | Default | Meaning |\n|---|---|---|---|\n")
		r.rows(k, n)
	}
	return b.Bytes(), nil
}

// TestConfigReference: docs/config-reference.md is what the schema says
// (regenerate: go test ./internal/config -run TestConfigReference -update).
func TestConfigReference(t *testing.T) {
	const path = "../../docs/config-reference.md"
	got, err := renderReference(Schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"`approvals.mode`", "`approvals.cron_mode` | `deny` \\| `approve`", "`mcp.servers.<name>.url`",
		"`mcp.rules[].action`", "`sandbox.network`", "`chat.notify.webhook.secret` | refused"} {
		if !bytes.Contains(got, []byte(key)) {
			t.Errorf("the reference lacks %s", key)
		}
	}
	if !bytes.Equal(got, readGolden(t, path, got)) {
		t.Fatal("docs/config-reference.md is out of date: go test ./internal/config -run TestConfigReference -update")
	}
}

// defaultContext is what a section needs beside a key for the file to
// parse at all (a webhook needs its url and secret).
var defaultContext = map[string]map[string]any{
	"chat.notify.webhook": {"url": "https://hooks.example/warden", "secret_env": "WEBHOOK_SECRET"},
}

// TestSchemaDefaults: every default the schema states is the code's
// default: a file setting just that key to it (in the least context its
// section needs) parses to what the file without it parses to.
func TestSchemaDefaults(t *testing.T) {
	root, err := decodeSchema(Schema)
	if err != nil {
		t.Fatal(err)
	}
	parse := func(path []string, leaf map[string]any) (*Config, error) {
		sec := map[string]any{}
		for k, v := range defaultContext[strings.Join(path[:len(path)-1], ".")] {
			sec[k] = v
		}
		for k, v := range leaf {
			sec[k] = v
		}
		doc := any(sec)
		for i := len(path) - 2; i >= 0; i-- {
			doc = map[string]any{path[i]: doc}
		}
		y, err := json.Marshal(doc) // JSON is YAML
		if err != nil {
			return nil, err
		}
		cfg, _, err := Parse(y, "defaults.yaml")
		if err == nil {
			cfg.Name, cfg.Digest = "", ""
		}
		return cfg, err
	}
	checked := 0
	var walk func(path []string, n *jnode)
	walk = func(path []string, n *jnode) {
		if d := n.get("default"); d != nil && len(path) > 0 {
			var v any = d.val
			if d.arr != nil {
				v = []any{}
			}
			key := strings.Join(path, ".")
			with, err := parse(path, map[string]any{path[len(path)-1]: v})
			if err != nil {
				t.Errorf("%s: the schema's default %v does not parse: %v", key, v, err)
				return
			}
			var without *Config
			if len(path) == 1 || defaultContext[strings.Join(path[:len(path)-1], ".")] != nil {
				without, err = parse(path, nil)
			} else {
				without = Default()
			}
			if err != nil {
				t.Fatalf("%s: the context alone does not parse: %v", key, err)
			}
			if !reflect.DeepEqual(with, without) {
				t.Errorf("%s: the schema's default %v is not the code's", key, v)
			}
			checked++
		}
		if p := n.get("properties"); p != nil {
			for _, k := range p.keys {
				walk(append(path[:len(path):len(path)], k), p.obj[k])
			}
		}
		if alts := n.get("anyOf"); alts != nil {
			for _, a := range alts.arr {
				if a.get("properties") != nil {
					walk(path, &jnode{obj: map[string]*jnode{"properties": a.get("properties")}})
				}
			}
		}
	}
	walk(nil, root)
	if checked < 20 {
		t.Fatalf("only %d defaults checked: the walk is broken", checked)
	}
}
