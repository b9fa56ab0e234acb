package web

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// page is what the layout renders.
type page struct {
	Title    string
	Nav      string // the active navigation entry
	Flash    *flash
	CSRF     string
	LoggedIn bool
	// Alerts are banners about the host's health (Options.Alerts).
	Alerts []string
	Data   any
}

// funcs are the template helpers.
func funcs() template.FuncMap {
	return template.FuncMap{
		"pathEscape": url.PathEscape,
		"clock":      clock,
		"join":       strings.Join,
	}
}

// parsePages parses every page with the layout and the shared parts.
func parsePages() (map[string]*template.Template, error) {
	pageNames := []string{"login", "pending", "sessions", "session", "grants", "audit", "cron", "board"}
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs()).ParseFS(templateFS,
			"templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// clock renders a time for people, in the host's zone.
func clock(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// iso renders a time for the script.
func iso(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// render writes a full page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	c.execute(w, r, status, name, "layout.html", p, 0)
}

// fragment writes one named template of a page (a live list).
func (c *Console) fragment(w http.ResponseWriter, r *http.Request, name, tmpl string, data any, sizeHint int) {
	c.execute(w, r, http.StatusOK, name, tmpl, data, sizeHint)
}

// execute renders into a buffer first, so a template error is a clean
// 500; sizeHint presizes the buffer for long lists.
func (c *Console) execute(w http.ResponseWriter, r *http.Request, status int, name, tmpl string, data any, sizeHint int) {
	t, ok := c.pages[name]
	if !ok {
		c.fail(w, r, fmt.Errorf("no page %q", name))
		return
	}
	var buf bytes.Buffer
	buf.Grow(max(sizeHint, 16<<10))
	if err := t.ExecuteTemplate(&buf, tmpl, data); err != nil {
		c.fail(w, r, fmt.Errorf("render %s/%s: %w", name, tmpl, err))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail logs an internal error and answers 500 without details.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		// The client went away (a navigation cancelled a fetch): nobody
		// reads the answer and nothing failed.
		c.log.DebugContext(r.Context(), "request abandoned", "method", r.Method, "path", r.URL.Path, "err", err)
		return
	}
	c.log.ErrorContext(r.Context(), "console error", "method", r.Method, "path", r.URL.Path, "err", err)
	http.Error(w, "internal error; see the host's log", http.StatusInternalServerError)
}

// pageFor starts a page for an authenticated request, taking its notice.
func (c *Console) pageFor(a *authn, nav, title string, data any) page {
	p := page{Title: title, Nav: nav, Flash: c.takeFlash(a), CSRF: c.csrfOf(a), LoggedIn: true, Data: data}
	if c.o.Alerts != nil {
		p.Alerts = c.o.Alerts()
	}
	return p
}

// left renders the time until deadline as the countdown script does.
func left(now, deadline time.Time) string {
	d := deadline.Sub(now)
	if d <= 0 {
		return "expired"
	}
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh %02dm left", s/3600, s%3600/60)
	case s >= 60:
		return fmt.Sprintf("%dm %02ds left", s/60, s%60)
	}
	return fmt.Sprintf("%ds left", s)
}

// queryOf builds "?k=v&…" from pairs, leaving out empty values.
func queryOf(kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}
