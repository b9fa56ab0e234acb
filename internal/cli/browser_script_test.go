package cli_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// browsers are the script command browser's state, one per script: a
// cookie jar, the last page's URL and its CSRF token.
var browsers sync.Map // *testscript.TestScript → *scriptBrowser

type scriptBrowser struct {
	hc   *http.Client
	last *url.URL
	csrf string
}

var scriptCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func browserOf(ts *testscript.TestScript) *scriptBrowser {
	if b, ok := browsers.Load(ts); ok {
		return b.(*scriptBrowser)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		ts.Fatalf("browser: %v", err)
	}
	b := &scriptBrowser{hc: &http.Client{Jar: jar, Timeout: scriptWait}}
	browsers.Store(ts, b)
	return b
}

// cmdBrowser is the script command "browser": a browser-like HTTP
// client with a cookie jar that follows redirects, for the web console.
//
//	browser get URL|PATH             GET (a path is relative to the last page)
//	browser post PATH [K=V...]       POST a form, with the last page's CSRF token
//	browser bearer TOKEN get|post …  the same with "Authorization: Bearer TOKEN" and no cookies
//	browser base URL                 resolve relative paths against URL
//	browser cookie NAME VAR          set VAR to the value of cookie NAME
//	browser reset                    a fresh browser: no cookies
//
// get and post print "status N" and then the body, as the command's
// stdout.
func cmdBrowser(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: browser get|post|bearer|cookie|reset ...")
	}
	b := browserOf(ts)
	bearer := ""
	if args[0] == "bearer" {
		if len(args) < 3 {
			ts.Fatalf("usage: browser bearer TOKEN get|post ...")
		}
		bearer, args = args[1], args[2:]
	}
	switch args[0] {
	case "reset":
		browsers.Delete(ts)
	case "base":
		if len(args) != 2 {
			ts.Fatalf("usage: browser base URL")
		}
		u, err := url.Parse(args[1])
		if err != nil || !u.IsAbs() {
			ts.Fatalf("browser base: want an absolute URL, got %q", args[1])
		}
		b.last = u
	case "cookie":
		if len(args) != 3 || b.last == nil {
			ts.Fatalf("usage: browser cookie NAME VAR (after a get)")
		}
		for _, ck := range b.hc.Jar.Cookies(b.last) {
			if ck.Name == args[1] {
				ts.Setenv(args[2], ck.Value)
				return
			}
		}
		ts.Fatalf("browser: no cookie %s", args[1])
	case "get", "post":
		if len(args) < 2 {
			ts.Fatalf("usage: browser %s URL ...", args[0])
		}
		u, err := url.Parse(args[1])
		if err != nil {
			ts.Fatalf("browser: %v", err)
		}
		if !u.IsAbs() {
			if b.last == nil {
				ts.Fatalf("browser: a relative URL before any page")
			}
			u = b.last.ResolveReference(u)
		}
		var (
			body io.Reader
			form = url.Values{}
		)
		method := http.MethodGet
		if args[0] == "post" {
			method = http.MethodPost
			for _, kv := range args[2:] {
				k, v, _ := strings.Cut(kv, "=")
				form.Add(k, v)
			}
			if bearer == "" && b.csrf != "" && !form.Has("csrf") {
				form.Set("csrf", b.csrf)
			}
			body = strings.NewReader(form.Encode())
		}
		req, err := http.NewRequest(method, u.String(), body)
		if err != nil {
			ts.Fatalf("browser: %v", err)
		}
		if method == http.MethodPost {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		hc := b.hc
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
			hc = &http.Client{Timeout: 30 * time.Second} // a script: no cookies
		}
		resp, err := hc.Do(req)
		if err != nil {
			ts.Fatalf("browser: %s %s: %v", method, u, err)
		}
		defer resp.Body.Close()
		page, err := io.ReadAll(resp.Body)
		if err != nil {
			ts.Fatalf("browser: %v", err)
		}
		if bearer == "" {
			b.last = resp.Request.URL
			if m := scriptCSRF.FindSubmatch(page); m != nil {
				b.csrf = string(m[1])
			}
		}
		fmt.Fprintf(ts.Stdout(), "status %d\n%s\n", resp.StatusCode, page)
	default:
		ts.Fatalf("browser: unknown verb %q", args[0])
	}
}
