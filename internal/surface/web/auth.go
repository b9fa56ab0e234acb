package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Cookie names.
const (
	sessionCookie = "warden_session"
	// loginCookie carries the login form's double-submit CSRF token.
	loginCookie = "warden_login"
)

// loginSession is one browser login, kept server-side.
type loginSession struct {
	csrf    string
	expires time.Time
	flash   *flash
}

// flash is a one-shot notice shown on the next page.
type flash struct {
	Kind string // "ok", "late" or "error"
	Text string
}

// authn is how a request authenticated: a browser session (with its CSRF
// token) or the bearer token (a script; no CSRF token needed, because a
// browser never attaches an Authorization header by itself).
type authn struct {
	session *loginSession
	key     [32]byte
}

// bearer reports whether the request authenticated with the bearer token.
func (a *authn) bearer() bool { return a.session == nil }

// digest is the SHA-256 of a secret; secrets are compared as digests so
// the comparison is constant-time whatever their lengths.
func digest(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}

// randomToken returns n random bytes, base64url-encoded.
func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// EnsureToken returns the admin token stored at path, creating it (32
// random bytes, hex; the file mode 0600, parent directories 0700) if the
// file does not exist. created tells the host to print it once.
func EnsureToken(path string) (token string, created bool, err error) {
	tok, err := readToken(path)
	if err == nil {
		return tok, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("create token: %w", err)
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	tok = hex.EncodeToString(b)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, fmt.Errorf("create token: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", false, fmt.Errorf("create token: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", false, fmt.Errorf("create token: %w", err)
	}
	return tok, true, nil
}

// tokenOK compares a presented token with the admin token in constant
// time.
func (c *Console) tokenOK(presented string) bool {
	return subtle.ConstantTimeCompare(digest(presented), c.token) == 1
}

// authenticate returns how r authenticated, or nil.
func (c *Console) authenticate(r *http.Request) *authn {
	if tok, ok := bearerToken(r); ok {
		if c.tokenOK(tok) {
			return &authn{}
		}
		return nil // a wrong bearer token is not rescued by a cookie
	}
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	key := sha256.Sum256([]byte(ck.Value))
	now := c.o.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[key]
	if !ok {
		return nil
	}
	if !now.Before(s.expires) {
		delete(c.sessions, key)
		return nil
	}
	return &authn{session: s, key: key}
}

// bearerToken returns the request's bearer token, if it presents one.
// Other schemes (a reverse proxy's Basic auth) are left alone.
func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// authed wraps a handler that needs the admin token. A browser without a
// session is sent to the login page (pages) or refused (fragments,
// streams, posts); a POST from a browser session must carry its CSRF
// token.
func (c *Console) authed(h func(http.ResponseWriter, *http.Request, *authn)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := c.authenticate(r)
		if a == nil {
			if _, script := bearerToken(r); r.Method == http.MethodGet && wantsPage(r) && !script {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="warden"`)
			http.Error(w, "login required", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !a.bearer() {
			if !c.csrfOK(r, a.session) {
				c.log.WarnContext(r.Context(), "refused post without CSRF token", "path", r.URL.Path)
				http.Error(w, "missing or wrong CSRF token; reload the page", http.StatusForbidden)
				return
			}
		}
		h(w, r, a)
	})
}

// wantsPage reports whether a GET is a page navigation (not a fragment
// or stream fetched by the script).
func wantsPage(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Mode") == "navigate" {
		return true
	}
	p := r.URL.Path
	return p != "/events" && !strings.HasSuffix(p, "/list") && !strings.HasSuffix(p, "/runs")
}

// csrfOK checks a POST's CSRF token (form field "csrf" or header
// X-CSRF-Token) against its session's.
func (c *Console) csrfOK(r *http.Request, s *loginSession) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	c.mu.Lock()
	want := s.csrf
	c.mu.Unlock()
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// hostAllowed reports whether r's Host header names this console: the
// address the connection arrived on, a loopback name or address, or a
// configured host. Anything else may be a DNS rebinding page.
func (c *Console) hostAllowed(r *http.Request) bool {
	host := r.Host
	if host == "" {
		return false
	}
	name, _, err := net.SplitHostPort(host)
	if err != nil {
		name = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	}
	if strings.EqualFold(name, "localhost") {
		return true
	}
	if ip, err := netip.ParseAddr(name); err == nil {
		if ip.IsLoopback() {
			return true
		}
		if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if ap, err := netip.ParseAddrPort(la.String()); err == nil && ap.Addr().Unmap() == ip.Unmap() {
				return true
			}
		}
	}
	for _, h := range c.o.Hosts {
		if strings.EqualFold(h, host) || strings.EqualFold(h, name) {
			return true
		}
	}
	return false
}

// loginPage shows the token form, setting the double-submit cookie the
// form must echo.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if a := c.authenticate(r); a != nil && !a.bearer() {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.renderLogin(w, r, http.StatusOK, "")
}

func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := randomToken(24)
	http.SetCookie(w, &http.Cookie{
		Name: loginCookie, Value: tok, Path: "/login", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 3600,
	})
	var fl *flash
	if msg != "" {
		fl = &flash{Kind: "error", Text: msg}
	}
	c.render(w, r, status, "login", page{
		Title: "Log in", Flash: fl, CSRF: tok,
		Data: struct{ Next string }{safeNext(r.FormValue("next"))},
	})
}

// login checks the posted token and starts a session.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(loginCookie)
	form := r.PostFormValue("csrf")
	if err != nil || form == "" || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(form)) != 1 {
		c.log.WarnContext(r.Context(), "refused login without CSRF token", "remote", r.RemoteAddr)
		http.Error(w, "missing or wrong CSRF token; reload the login page", http.StatusForbidden)
		return
	}
	if !c.tokenOK(strings.TrimSpace(r.PostFormValue("token"))) {
		c.log.WarnContext(r.Context(), "failed login", "remote", r.RemoteAddr)
		c.renderLogin(w, r, http.StatusUnauthorized, "That is not the admin token.")
		return
	}
	val := randomToken(32)
	s := &loginSession{csrf: randomToken(32), expires: c.o.Now().Add(c.o.SessionTTL)}
	now := c.o.Now()
	c.mu.Lock()
	for k, old := range c.sessions { // forget logins that lapsed
		if !now.Before(old.expires) {
			delete(c.sessions, k)
		}
	}
	c.sessions[sha256.Sum256([]byte(val))] = s
	c.mu.Unlock()
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: val, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
		MaxAge: int(c.o.SessionTTL / time.Second),
	})
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/login", MaxAge: -1})
	c.log.InfoContext(r.Context(), "login", "remote", r.RemoteAddr)
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// logout ends the browser session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, a *authn) {
	if !a.bearer() {
		c.mu.Lock()
		delete(c.sessions, a.key)
		c.mu.Unlock()
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a post-login redirect on this site.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, `/\`) || strings.HasPrefix(next, "/login") {
		return "/pending"
	}
	return next
}

// setFlash leaves a notice for the session's next page.
func (c *Console) setFlash(a *authn, kind, text string) {
	if a.bearer() {
		return
	}
	c.mu.Lock()
	a.session.flash = &flash{Kind: kind, Text: text}
	c.mu.Unlock()
}

// takeFlash returns and clears the session's notice.
func (c *Console) takeFlash(a *authn) *flash {
	if a.bearer() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := a.session.flash
	a.session.flash = nil
	return f
}

// csrfOf returns the session's CSRF token for forms.
func (c *Console) csrfOf(a *authn) string {
	if a.bearer() {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return a.session.csrf
}

// done answers a state-changing POST: a browser is sent back to a page
// with the notice; a script gets the notice as text with status.
func (c *Console) done(w http.ResponseWriter, r *http.Request, a *authn, to string, status int, kind, text string) {
	if a.bearer() {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintln(w, text)
		return
	}
	c.setFlash(a, kind, text)
	http.Redirect(w, r, to, http.StatusSeeOther)
}
