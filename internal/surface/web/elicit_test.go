package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/store"
)

// fieldSummary is what a test compares of a derived field.
func fieldSummary(f formField) string {
	s := fmt.Sprintf("%s:%s/%s", f.Name, f.Type, f.Input)
	if f.Required {
		s += " req"
	}
	if f.Label != f.Name {
		s += " label=" + f.Label
	}
	if f.Min != nil || f.Max != nil {
		s += " [" + f.MinAttr() + "," + f.MaxAttr() + "]"
	}
	if f.MinLen > 0 || f.MaxLen > 0 {
		s += fmt.Sprintf(" len=%d..%d", f.MinLen, f.MaxLen)
	}
	for _, o := range f.Options {
		s += " " + o.Value + "=" + o.Label
	}
	if f.Default != "" {
		s += " default=" + f.Default
	}
	if f.Checked {
		s += " checked"
	}
	if f.Note != "" {
		s += " (note)"
	}
	return s
}

func TestFormFields(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		want    []string
		wantErr string
	}{
		{"no schema", ``, nil, ""},
		{"no properties", `{"type":"object"}`, nil, ""},
		{"string", `{"type":"object","properties":{"name":{"type":"string","title":"Your name","minLength":2,"maxLength":30,"default":"ana"}},"required":["name"]}`,
			[]string{"name:string/text req label=Your name len=2..30 default=ana"}, ""},
		{"formats", `{"type":"object","properties":{"e":{"type":"string","format":"email"},"u":{"type":"string","format":"uri"},"d":{"type":"string","format":"date"},"t":{"type":"string","format":"date-time"}}}`,
			[]string{"e:string/email", "u:string/url", "d:string/date", "t:string/text"}, ""},
		{"numbers keep schema order", `{"type":"object","properties":{"z":{"type":"integer","minimum":1,"maximum":10},"a":{"type":"number","minimum":-0.5,"default":2.5}}}`,
			[]string{"z:integer/number [1,10]", "a:number/number [-0.5,] default=2.5"}, ""},
		{"boolean", `{"type":"object","properties":{"ok":{"type":"boolean","title":"Really?","default":true}}}`,
			[]string{"ok:boolean/checkbox label=Really? checked"}, ""},
		{"enum with names", `{"type":"object","properties":{"c":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"]}}}`,
			[]string{"c:string/select r=Red g=Green"}, ""},
		{"oneOf consts", `{"type":"object","properties":{"c":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}],"default":"l"}}}`,
			[]string{"c:string/select s=Small l=Large default=l"}, ""},
		{"enum without type", `{"type":"object","properties":{"c":{"enum":["x"]}}}`, []string{"c:string/select x=x"}, ""},
		{"unknown type as text", `{"type":"object","properties":{"w":{"type":"weird"},"n":{}}}`,
			[]string{"w:string/text (note)", "n:string/text (note)"}, ""},
		{"control characters in labels", `{"type":"object","properties":{"a":{"type":"string","title":"x\u202Ey\u0007"}}}`,
			[]string{"a:string/text label=x\uFFFDy\uFFFD"}, ""},
		{"nested object", `{"type":"object","properties":{"o":{"type":"object","properties":{}}}}`, nil, "nested object"},
		{"array", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"}}}}`, nil, "nested array"},
		{"type list", `{"type":"object","properties":{"l":{"type":["string","null"]}}}`, nil, "list of types"},
		{"number enum", `{"type":"object","properties":{"n":{"type":"number","enum":[1,2]}}}`, nil, "only string choices"},
		{"non-string choice", `{"type":"object","properties":{"n":{"enum":["a",2]}}}`, nil, "not a string"},
		{"not an object schema", `{"type":"string"}`, nil, "not an object"},
		{"not JSON", `{"type":`, nil, "not a JSON schema"},
		{"properties not an object", `{"type":"object","properties":[1]}`, nil, "not an object"},
		{"required undefined", `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`, nil, `requires "b"`},
		{"too many fields", manyFields(form.MaxFields + 1), nil, "more than"},
		{"too large", `{"type":"object","description":"` + strings.Repeat("x", form.MaxSchema) + `"}`, nil, "too large"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fields, err := formFields(json.RawMessage(tc.schema))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fields {
				got = append(got, fieldSummary(f))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("fields\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func manyFields(n int) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"f%d":{"type":"string"}`, i)
	}
	b.WriteString("}}")
	return b.String()
}

// testSchema has one field of every kind the form converts.
const testSchema = `{"type":"object","properties":{
	"name":{"type":"string","title":"Name","minLength":2,"maxLength":5},
	"email":{"type":"string","format":"email"},
	"site":{"type":"string","format":"uri"},
	"day":{"type":"string","format":"date"},
	"count":{"type":"integer","minimum":1,"maximum":10},
	"ratio":{"type":"number","maximum":1},
	"ok":{"type":"boolean"},
	"color":{"type":"string","enum":["red","green"]},
	"other":{}
},"required":["name","count","ok"]}`

func TestFormContent(t *testing.T) {
	fields, err := formFields(json.RawMessage(testSchema))
	must(t, err, "fields")
	base := url.Values{"f.name": {"ana"}, "f.count": {"3"}}
	with := func(kv ...string) url.Values {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "<absent>" {
				v.Del(kv[i])
				continue
			}
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	tests := []struct {
		name    string
		form    url.Values
		want    string
		wantErr string
	}{
		{"minimal: unchecked is false, empty optional left out", base, `{"count":3,"name":"ana","ok":false}`, ""},
		{"all types", with("f.email", "a@example.com", "f.site", "https://example.com/x", "f.day", "2025-06-18",
			"f.ratio", "0.25", "f.ok", "true", "f.color", "green", "f.other", "free text"),
			`{"color":"green","count":3,"day":"2025-06-18","email":"a@example.com","name":"ana","ok":true,"other":"free text","ratio":0.25,"site":"https://example.com/x"}`, ""},
		{"checkbox on", with("f.ok", "on"), `{"count":3,"name":"ana","ok":true}`, ""},
		{"fields not in the schema are ignored", with("f.extra", "x", "decision", "accept"), `{"count":3,"name":"ana","ok":false}`, ""},
		{"required missing", with("f.name", "<absent>"), "", "Name is required"},
		{"required blank", with("f.count", "  "), "", "count is required"},
		{"bad integer", with("f.count", "3.5"), "", `count: "3.5" is not a whole number`},
		{"integer below minimum", with("f.count", "0"), "", "count: at least 1"},
		{"integer above maximum", with("f.count", "11"), "", "count: at most 10"},
		{"bad number", with("f.ratio", "abc"), "", `ratio: "abc" is not a number`},
		{"infinite number", with("f.ratio", "-Inf"), "", "is not a number"},
		{"number above maximum", with("f.ratio", "1.5"), "", "ratio: at most 1"},
		{"enum not a choice", with("f.color", "blue"), "", "color: not one of the choices"},
		{"too short", with("f.name", "a"), "", "Name: at least 2 characters"},
		{"too long", with("f.name", "ananas"), "", "Name: at most 5 characters"},
		{"bad email", with("f.email", "Ana <a@example.com>"), "", "email: not an email address"},
		{"bad uri", with("f.site", "example.com"), "", "site: not an absolute URI"},
		{"bad date", with("f.day", "18/06/2025"), "", "day: not a date"},
		{"oversize value", with("f.other", strings.Repeat("x", form.MaxValue+1)), "", "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := formContent(fields, tc.form)
			if tc.wantErr != "" {
				var fe formError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				} else if !errors.As(err, &fe) {
					t.Fatalf("err %T is not a formError (it would not be shown to the human)", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("content %s\nwant    %s", got, tc.want)
			}
		})
	}
}

func TestViewElicit(t *testing.T) {
	long := strings.Repeat("é", maxElicitMessage) // two bytes each
	tests := []struct {
		name  string
		e     store.Elicitation
		check func(t *testing.T, v *elicitView)
	}{
		{"message neutralised", store.Elicitation{Server: "fi\u202Eles\n", Message: "line 1\r\nline 2\x1b[31m\u2066"}, func(t *testing.T, v *elicitView) {
			if v.Server != "fi\uFFFDles" || v.Message != "line 1\nline 2\uFFFD[31m\uFFFD" {
				t.Errorf("server %q message %q", v.Server, v.Message)
			}
		}},
		{"oversize message clipped", store.Elicitation{Server: "s", Message: long}, func(t *testing.T, v *elicitView) {
			if len(v.Message) > maxElicitMessage || !strings.HasSuffix(v.Message, "…") || !strings.HasPrefix(v.Message, "éé") {
				t.Errorf("clipped message: %d bytes, ends %q", len(v.Message), v.Message[len(v.Message)-8:])
			}
		}},
		{"url mode", store.Elicitation{Server: "s", URL: "https://example.com/auth?x=1"}, func(t *testing.T, v *elicitView) {
			if v.URL != "https://example.com/auth?x=1" || v.BadURL != "" || v.Fields != nil {
				t.Errorf("%+v", v)
			}
		}},
		{"javascript url not linked", store.Elicitation{Server: "s", URL: "javascript:alert(1)"}, func(t *testing.T, v *elicitView) {
			if v.URL != "" || v.BadURL != "javascript:alert(1)" {
				t.Errorf("%+v", v)
			}
		}},
		{"url with credentials not linked", store.Elicitation{Server: "s", URL: "https://u:p@example.com/"}, func(t *testing.T, v *elicitView) {
			if v.URL != "" {
				t.Errorf("%+v", v)
			}
		}},
		{"unrenderable schema refused", store.Elicitation{Server: "s", Schema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object"}}}`)}, func(t *testing.T, v *elicitView) {
			if !strings.Contains(v.Refused, "nested object") || v.Fields != nil {
				t.Errorf("%+v", v)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, viewElicit(&tc.e)) })
	}
}

func TestAbbreviate(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"0123456789abcdefghij", 10, "01234\n… 10 bytes not shown …\nfghij"},
		{"ééééé", 4, "é\n… 6 bytes not shown …\né"},
	}
	for _, tc := range tests {
		if got := abbreviate(tc.in, tc.limit); got != tc.want {
			t.Errorf("abbreviate(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}

// elicitAsync puts an MCP server's question to web session key in the
// background, as the mcp call that caused it, and returns the pending
// request and the channel of Ask's final row.
func (f *fixture) elicitAsync(ctx context.Context, key string, e store.Elicitation) (store.Request, <-chan store.Request) {
	f.t.Helper()
	o, err := f.console.webOwner(key)
	must(f.t, err, "owner")
	created := make(chan store.Request, 1)
	final := make(chan store.Request, 1)
	go func() {
		r, err := f.broker.Ask(ctx, broker.Question{
			Owner: broker.Notifying(o, func(r store.Request) { created <- r }), Rule: "mcp.elicitation", Elicit: &e,
			Action: action.NewMCP("files", "confirm_delete", json.RawMessage(`{"path":"/srv/x"}`), false),
		})
		if err != nil {
			r.State, r.Reason = store.Withdrawn, err.Error()
		}
		final <- r
	}()
	select {
	case r := <-created:
		return r, final
	case r := <-final:
		f.t.Fatalf("Ask ended without a request: %+v", r)
	case <-time.After(20 * time.Second):
		f.t.Fatal("no elicitation request after 20s")
	}
	return store.Request{}, nil
}

// bearerPost posts a form with the bearer token (a script: plain text
// answers with the real status, no redirect).
func (c *client) bearerPost(path string, form url.Values) response {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.f.srv.URL+path, strings.NewReader(form.Encode()))
	must(c.t, err, "request")
	req.Header.Set("Authorization", "Bearer "+c.f.adminToken)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r := c.do(req)
	r.body = strings.TrimSpace(r.body)
	return r
}

// schemaConfirm is a small form: a required count and an optional flag.
const schemaConfirm = `{"type":"object","properties":{"count":{"type":"integer","title":"How many","minimum":1},"force":{"type":"boolean"},"note":{"type":"string"}},"required":["count"]}`

// TestElicitAnswer: Submit sends the typed content and Decline declines;
// the waiting Ask gets the outcome, and no answer records a grant.
func TestElicitAnswer(t *testing.T) {
	tests := []struct {
		name        string
		e           store.Elicitation
		form        url.Values
		wantNotice  string
		wantAction  string
		wantContent string
	}{
		{"accept", store.Elicitation{Server: "files", Message: "Delete how many?", Schema: json.RawMessage(schemaConfirm)},
			url.Values{"decision": {"accept"}, "f.count": {"3"}, "f.force": {"true"}, "f.note": {""}},
			"Sent your answer to the question of MCP server “files”.", broker.ElicitAccept, `{"count":3,"force":true}`},
		{"accept without a schema", store.Elicitation{Server: "files", Message: "Go on?"},
			url.Values{"decision": {"accept"}}, "Sent your answer", broker.ElicitAccept, `{}`},
		{"decline", store.Elicitation{Server: "files", Message: "Delete how many?", Schema: json.RawMessage(schemaConfirm)},
			url.Values{"decision": {"decline"}, "f.count": {"3"}}, "Declined the question of MCP server “files”.", broker.ElicitDecline, ""},
		{"url mode done", store.Elicitation{Server: "auth", Message: "Sign in", URL: "https://example.com/login"},
			url.Values{"decision": {"accept"}}, "Told MCP server “auth” you are done.", broker.ElicitAccept, ""},
		{"url mode decline", store.Elicitation{Server: "auth", Message: "Sign in", URL: "https://example.com/login"},
			url.Values{"decision": {"decline"}}, "Declined", broker.ElicitDecline, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{})
			c := f.client()
			c.login()
			req, final := f.elicitAsync(t.Context(), "el", tc.e)
			if msg := c.answer(req.ID, tc.form); !strings.HasPrefix(msg, tc.wantNotice) {
				t.Errorf("notice %q, want %q", msg, tc.wantNotice)
			}
			r := <-final
			act, content := broker.ElicitOutcome(r)
			if act != tc.wantAction || string(content) != tc.wantContent {
				t.Fatalf("outcome %s %s, want %s %s", act, content, tc.wantAction, tc.wantContent)
			}
			if !strings.HasPrefix(r.By, "console session ") || r.Surface != SurfaceName {
				t.Errorf("answered by %q on %q", r.By, r.Surface)
			}
			gs, err := f.db.ListGrants(t.Context())
			must(t, err, "grants")
			if len(gs) != 0 {
				t.Fatalf("an elicitation answer recorded grants: %+v", gs)
			}
		})
	}
}

// TestElicitRefusedAnswers: answers that do not fit the request are
// refused with 400 and a reason, and leave it pending: approval scopes
// for an elicitation, Submit/Decline for an approval, bad form input,
// and Submit for a form the console cannot show.
func TestElicitRefusedAnswers(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.client()
	el, elFinal := f.elicitAsync(t.Context(), "el", store.Elicitation{Server: "files", Message: "How many?", Schema: json.RawMessage(schemaConfirm)})
	bad, badFinal := f.elicitAsync(t.Context(), "el", store.Elicitation{Server: "files", Message: "Nested",
		Schema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object"}}}`)})
	pending, done := f.shellAsync(t.Context(), "appr", "rm -rf ./nothing", t.TempDir())
	appr := waitRequest(t, pending, done)

	tests := []struct {
		name string
		id   string
		form url.Values
		want string
	}{
		{"once for an elicitation", el.ID, url.Values{"decision": {"once"}}, "answer it with Submit or Decline"},
		{"session for an elicitation", el.ID, url.Values{"decision": {"session"}}, "grants nothing"},
		{"always for an elicitation", el.ID, url.Values{"decision": {"always"}, "f.count": {"2"}}, "grants nothing"},
		{"required missing", el.ID, url.Values{"decision": {"accept"}}, "Not answered: How many is required."},
		{"not a number", el.ID, url.Values{"decision": {"accept"}, "f.count": {"two"}}, `Not answered: How many: "two" is not a whole number.`},
		{"below minimum", el.ID, url.Values{"decision": {"accept"}, "f.count": {"0"}}, "Not answered: How many: at least 1."},
		{"form that cannot be shown", bad.ID, url.Values{"decision": {"accept"}}, "you can only decline it"},
		{"accept for an approval", appr.ID, url.Values{"decision": {"accept"}, "f.count": {"1"}}, "asks to approve an action"},
		{"decline for an approval", appr.ID, url.Values{"decision": {"decline"}}, "asks to approve an action"},
		{"unknown decision", el.ID, url.Values{"decision": {"maybe"}}, "Choose Approve once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := c.bearerPost("/pending/"+tc.id+"/answer", tc.form)
			if r.status != http.StatusBadRequest || !strings.Contains(r.body, tc.want) {
				t.Errorf("status %d %q, want 400 containing %q", r.status, r.body, tc.want)
			}
			if got, _ := f.db.GetRequest(t.Context(), tc.id); got.State != store.Pending {
				t.Fatalf("a refused answer ended the request: %s", got.State)
			}
		})
	}

	// The refused ones are still answerable.
	if r := c.bearerPost("/pending/"+bad.ID+"/answer", url.Values{"decision": {"decline"}}); r.status != http.StatusOK {
		t.Errorf("decline of the unshowable form: %d %q", r.status, r.body)
	}
	if r := c.bearerPost("/pending/"+el.ID+"/answer", url.Values{"decision": {"accept"}, "f.count": {"2"}}); r.status != http.StatusOK {
		t.Errorf("accept: %d %q", r.status, r.body)
	}
	if act, content := broker.ElicitOutcome(<-elFinal); act != broker.ElicitAccept || string(content) != `{"count":2,"force":false}` {
		t.Errorf("outcome %s %s", act, content)
	}
	if act, _ := broker.ElicitOutcome(<-badFinal); act != broker.ElicitDecline {
		t.Errorf("outcome of the unshowable form %s", act)
	}
	// A late answer says nothing pending, never "sent" or "approved".
	r := c.bearerPost("/pending/"+el.ID+"/answer", url.Values{"decision": {"accept"}, "f.count": {"5"}})
	if r.status != http.StatusConflict || !strings.HasPrefix(r.body, "Nothing pending — the question of MCP server “files” was already answered by api token ") || !strings.Contains(r.body, `"test admin" [admin]`) {
		t.Errorf("late answer: %d %q", r.status, r.body)
	}
	if r := c.bearerPost("/pending/"+appr.ID+"/answer", url.Values{"decision": {"deny"}}); r.status != http.StatusOK {
		t.Errorf("deny the approval: %d %q", r.status, r.body)
	}
	waitDone(t, done)
	if gs, _ := f.db.ListGrants(t.Context()); len(gs) != 0 {
		t.Fatalf("grants recorded: %+v", gs)
	}
}

// TestElicitCardRenders: the card shows the server's untrusted message
// escaped, the call that caused it, a form per the schema, Submit and
// Decline, and no approval scopes; URL mode links with noopener; an
// unshowable form offers only Decline.
func TestElicitCardRenders(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	c := f.loggedIn()
	schema := `{"type":"object","properties":{
		"count":{"type":"integer","title":"How <many>","minimum":1,"maximum":9,"description":"files to delete"},
		"color":{"type":"string","oneOf":[{"const":"r","title":"Red"},{"const":"g","title":"<Green>"}]},
		"force":{"type":"boolean","default":true},
		"mail":{"type":"string","format":"email"}},"required":["count","color"]}`
	form, _ := f.elicitAsync(t.Context(), "el", store.Elicitation{Server: "files", Message: "<script>alert(1)</script>\nSure?\x1b", Schema: json.RawMessage(schema)})
	link, _ := f.elicitAsync(t.Context(), "el", store.Elicitation{Server: "auth", Message: "Sign in", URL: "https://example.com/login?a=1&b=2"})
	nested, _ := f.elicitAsync(t.Context(), "el", store.Elicitation{Server: "files", Message: "Nested", Schema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"array"}}}`)})

	body := c.get("/pending?session=el").body
	card := func(id string) string {
		i := strings.Index(body, `<article class="card" id="req-`+id+`"`)
		if i < 0 {
			t.Fatalf("no card for %s in %s", id, body)
		}
		j := strings.Index(body[i:], "</article>")
		return body[i : i+j]
	}
	tests := []struct {
		name       string
		card       string
		want, deny []string
	}{
		{"form", card(form.ID), []string{
			`MCP server <code>files</code> asks:`,
			`<div class="elicit-message">&lt;script&gt;alert(1)&lt;/script&gt;` + "\nSure?\uFFFD</div>",
			`<b>during</b> <code>files / confirm_delete</code>`,
			`<label for="req-` + form.ID + `-f0">How &lt;many&gt; <span class="req" title="required">*</span></label>`,
			`<input type="number" id="req-` + form.ID + `-f0" name="f.count" step="1" min="1" max="9" required>`,
			`<p class="hint">files to delete</p>`,
			`<select id="req-` + form.ID + `-f1" name="f.color" required>`,
			`<option value="g">&lt;Green&gt;</option>`,
			`name="f.force" value="true" checked>`,
			`<input type="email" id="req-` + form.ID + `-f3" name="f.mail"`,
			`value="accept" class="ok">Submit</button>`,
			`value="decline" class="no">Decline</button>`,
		}, []string{"<script>", `value="once"`, `value="session"`, `value="always"`, "\x1b"}},
		{"url", card(link.ID), []string{
			`<a href="https://example.com/login?a=1&amp;b=2" rel="noopener noreferrer" target="_blank">`,
			`value="accept" class="ok">Done</button>`, `value="decline"`,
		}, []string{`value="once"`, `name="f.`}},
		{"unshowable", card(nested.ID), []string{"The console cannot show this form: field &#34;o&#34; is a nested array", `value="decline"`},
			[]string{`value="accept"`, `value="once"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range tc.want {
				if !strings.Contains(tc.card, w) {
					t.Errorf("card lacks %q:\n%s", w, tc.card)
				}
			}
			for _, d := range tc.deny {
				if strings.Contains(tc.card, d) {
					t.Errorf("card has %q:\n%s", d, tc.card)
				}
			}
		})
	}
}

// TestElicitTexts: how an elicitation's ending is told, on a card still
// on screen and to a late answer: never "approved", and a timeout says
// the server was told it was cancelled.
func TestElicitTexts(t *testing.T) {
	e := &store.Elicitation{Server: "fi\u202Eles"}
	tests := []struct {
		r     store.Request
		ended string
		late  string
	}{
		{store.Request{State: store.Answered, Scope: store.Once, By: "admin", Surface: "web", Elicit: e},
			"Answered by admin on web.", "Nothing pending — the question of MCP server “fi\uFFFDles” was already answered by admin on web. Your answer was not used."},
		{store.Request{State: store.Denied, By: "admin", Surface: "web", Elicit: e},
			"Declined by admin on web.", "Nothing pending — the question of MCP server “fi\uFFFDles” was already denied by admin on web. Your answer was not used."},
		{store.Request{State: store.Expired, Elicit: e},
			"Expired: nobody answered in time; the server was told it was cancelled.", "nobody answered in time, so the server was told it was cancelled. Your answer was not used."},
		{store.Request{State: store.Withdrawn, Reason: "the call ended", Elicit: e},
			"Withdrawn (the call ended); the server was told it was cancelled.", "Nothing pending — the question of MCP server “fi\uFFFDles” was withdrawn (the call ended). Your answer was not used."},
	}
	for _, tc := range tests {
		t.Run(string(tc.r.State), func(t *testing.T) {
			if got := endedText(tc.r); got != tc.ended {
				t.Errorf("ended %q, want %q", got, tc.ended)
			}
			got := lateText(tc.r)
			if !strings.HasSuffix(got, tc.late) && got != tc.late {
				t.Errorf("late %q, want it to end %q", got, tc.late)
			}
			if strings.Contains(strings.ToLower(got+endedText(tc.r)), "approved") {
				t.Errorf("says approved: %q / %q", got, endedText(tc.r))
			}
		})
	}
}
