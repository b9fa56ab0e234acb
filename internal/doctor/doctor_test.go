package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/sandbox"
)

func TestRun(t *testing.T) {
	checks := []Check{
		{Name: "fine", Run: func(context.Context) Result {
			return Result{Status: OK, Summary: "all good", Details: []Detail{{"path", "/a\n/b"}}}
		}},
		{Name: "broken", Run: func(context.Context) Result { panic("boom") }},
		{Name: "meh", Run: func(context.Context) Result { return Result{Status: Warn, Summary: "careful"} }},
	}
	rs := Run(t.Context(), checks)
	if len(rs) != 3 || rs[0].Name != "fine" || rs[1].Status != Fail || !strings.Contains(rs[1].Summary, "boom") || rs[2].Status != Warn {
		t.Fatalf("results: %+v", rs)
	}
	if !Failed(rs) || Failed(rs[2:]) {
		t.Error("Failed")
	}
	var b bytes.Buffer
	if err := Text(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := "ok   fine: all good\n     path  /a\n           /b\n\nfail broken: the check itself failed: boom\n\nwarn meh: careful\n"
	if b.String() != want {
		t.Errorf("text:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := JSON(&b, rs); err != nil {
		t.Fatal(err)
	}
	var back []Result
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back) != 3 || back[0].Details[0].Value != "/a\n/b" {
		t.Errorf("json: %v %s", err, b.String())
	}
}

func TestSandboxCheck(t *testing.T) {
	for _, tc := range []struct {
		st   sandbox.Status
		want Status
	}{
		{sandbox.Status{Mode: sandbox.WorkspaceWrite, Active: true}, OK},
		{sandbox.Status{Mode: sandbox.Off}, Warn},
		{sandbox.Status{Mode: sandbox.WorkspaceWrite, Refusing: true, Fix: "set the sysctl"}, Fail},
	} {
		r := sandboxResult(tc.st)
		if r.Status != tc.want {
			t.Errorf("%+v: %s, want %s", tc.st, r.Status, tc.want)
		}
		if tc.st.Fix != "" && !strings.Contains(detail(r, "fix"), tc.st.Fix) {
			t.Errorf("no fix in %+v", r)
		}
	}
	r := Run(t.Context(), []Check{SandboxCheck(func(context.Context) (*sandbox.Sandbox, error) { return nil, errors.New("no state dir") })})
	if r[0].Status != Fail || !strings.Contains(r[0].Summary, "no state dir") {
		t.Errorf("build failure: %+v", r[0])
	}
}

func detail(r Result, key string) string {
	for _, d := range r.Details {
		if d.Key == key {
			return d.Value
		}
	}
	return ""
}
