package host

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wardenhq/warden/internal/localapi"
)

// TestStrictJSONBodies: every endpoint of the admin socket that reads a
// JSON body refuses trailing garbage, a second value, an unknown field,
// a body that is not JSON, an empty one and an oversized one, with a
// 400 (413 for the size) that says what is wrong — before anything is
// done. A well-formed body passes the decoder (whatever the endpoint
// then makes of it).
func TestStrictJSONBodies(t *testing.T) {
	cfg := newConfig(t)
	th := startHost(t, cfg)
	sock := filepath.Join(cfg.StateDir, localapi.SocketName)

	endpoints := []struct {
		path string
		good string // a well-formed body for it
	}{
		{"/v1/approvals/none/approve", `{"scope":"once"}`},
		{"/v1/approvals/none/deny", `{"reason":"no"}`},
		{"/v1/exec", `{"session":"strict","command":"true"}`},
		{"/v1/external/decide", `{"agent":"a","session":"s","action":{"kind":"shell","command":"true"}}`},
		{"/v1/external/run", `{"agent":"a","session":"s","action":{"kind":"shell","command":"true"}}`},
		{"/v1/cron", `{"name":"j","every":"1h","steps":["true"]}`},
		{"/v1/kanban", `{"title":"t","steps":["true"]}`},
		{"/v1/kanban/none/comments", `{"body":"hi"}`},
		{"/v1/kanban/none/block", `{"reason":"r"}`},
		{"/v1/console/login", `{"ttl_seconds":60}`},
		{"/v1/tokens", `{"scopes":["read"]}`},
	}
	post := func(t *testing.T, path, body string) (int, string) {
		t.Helper()
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", path, localapi.Host, len(body), body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	bad := []struct {
		name   string
		body   func(good string) string
		status int
		msg    string
	}{
		{"trailing garbage", func(g string) string { return g + "garbage" }, 400, "unexpected data after the JSON value"},
		{"two values", func(g string) string { return g + g }, 400, "more than one JSON value"},
		{"unknown field", func(g string) string { return `{"surprise":1,` + g[1:] }, 400, `unknown field "surprise"`},
		{"not JSON", func(string) string { return `scope=once` }, 400, "malformed JSON"},
		{"empty", func(string) string { return `` }, 400, "empty"},
		{"oversized", func(g string) string { return g[:len(g)-1] + `,"pad":"` + strings.Repeat("x", 1<<20) + `"}` }, 413, "larger than"},
	}
	for _, ep := range endpoints {
		t.Run(ep.path, func(t *testing.T) {
			if status, body := post(t, ep.path, ep.good); status == http.StatusBadRequest && strings.Contains(body, "request body") {
				t.Fatalf("the good body was refused by the decoder: %d %s", status, body)
			}
			for _, b := range bad {
				status, body := post(t, ep.path, b.body(ep.good))
				var e localapi.ErrorBody
				if status != b.status || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e.Error, b.msg) {
					t.Errorf("%s: %d %s, want %d saying %q", b.name, status, body, b.status, b.msg)
				}
			}
		})
	}
	// Nothing the refused bodies asked for happened.
	if jobs, err := th.db.ListCronJobs(t.Context()); err != nil || len(jobs) != 1 {
		t.Errorf("cron jobs: %d %v, want only the good body's", len(jobs), err)
	}
	if toks, err := th.creds.List(t.Context(), "token"); err != nil || len(toks) != 1 {
		t.Errorf("tokens: %d %v, want only the good body's", len(toks), err)
	}
}
