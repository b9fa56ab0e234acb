package web

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// sessionCookie carries a console session's secret.
const sessionCookie = "warden_session"

// maxFlashes bounds the notices kept for sessions that never come back
// for theirs.
const maxFlashes = 1024

// flash is a one-shot notice shown on the next page.
type flash struct {
	Kind string // "ok", "late" or "error"
	Text string
}

// authn is how a request authenticated: a browser's console session
// (with its CSRF token) or an API token (a script; no CSRF token
// needed, because a browser never attaches an Authorization header by
// itself).
type authn struct {
	cred  store.Credential
	csrf  string // a console session's; "" for a token
	token bool
}

// bearer reports whether the request authenticated with an API token.
func (a *authn) bearer() bool { return a.token }

// allows reports whether the credential may do what needs scope: a
// console session (the operator's own login) may do everything, a
// token what its scopes say.
func (a *authn) allows(need credential.Scope) bool {
	return !a.token || credential.Allows(a.cred.Scopes, need)
}

// by is who answers and changes things with this credential, as it was
// proven: the console session and the login link it came from, or the
// API token.
func (a *authn) by() string { return credential.Describe(a.cred) }

// identity is the human as the console proved them: the credential
// (its id, and as recorded its description).
func (a *authn) identity() surface.Identity {
	return surface.Identity{Surface: SurfaceName, User: a.cred.ID, Credential: a.by()}
}

// authenticate returns how r authenticated, or nil. A store failure is
// logged and refuses the request (fail closed).
func (c *Console) authenticate(r *http.Request) *authn {
	if tok, ok := bearerToken(r); ok {
		cr, err := c.o.Credentials.Token(r.Context(), tok)
		if err != nil {
			c.authFailed(r, "api token", err)
			return nil // a wrong bearer token is not rescued by a cookie
		}
		return &authn{cred: cr, token: true}
	}
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil
	}
	cr, err := c.o.Credentials.Session(r.Context(), ck.Value)
	if err != nil {
		c.authFailed(r, "console session", err)
		return nil
	}
	return &authn{cred: cr, csrf: credential.CSRF(ck.Value)}
}

// authFailed logs a refused credential; never the secret.
func (c *Console) authFailed(r *http.Request, what string, err error) {
	if errors.Is(err, credential.ErrInvalid) {
		c.log.InfoContext(r.Context(), "refused "+what, "remote", r.RemoteAddr, "reason", err)
		return
	}
	c.log.ErrorContext(r.Context(), "check "+what, "remote", r.RemoteAddr, "err", err)
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

// authed wraps a handler that needs a login or a token with scope need.
// A browser without a session is sent to the login page (pages) or
// refused (fragments, streams, posts); a POST from a browser session
// must carry its CSRF token; a token whose scopes fall short is
// refused.
func (c *Console) authed(need credential.Scope, h func(http.ResponseWriter, *http.Request, *authn)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := c.authenticate(r)
		if a == nil {
			if _, script := bearerToken(r); r.Method == http.MethodGet && wantsPage(r) && !script {
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="warden"`)
			http.Error(w, "login required: run `warden console` for a login link, or use an API token (warden token create)", http.StatusUnauthorized)
			return
		}
		if !a.allows(need) {
			c.log.WarnContext(r.Context(), "refused token scope", "token", a.cred.ID, "scopes", a.cred.Scopes, "need", need, "path", r.URL.Path)
			http.Error(w, fmt.Sprintf("this token's scopes (%s) do not allow this: it needs %s", strings.Join(a.cred.Scopes, ","), need), http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !a.bearer() {
			if !csrfOK(r, a) {
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
func csrfOK(r *http.Request, a *authn) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && a.csrf != "" && subtle.ConstantTimeCompare([]byte(got), []byte(a.csrf)) == 1
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

// loginPage says how to log in: with a one-time link from `warden
// console`. There is nothing to type here, so nothing to phish.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if a := c.authenticate(r); a != nil && !a.bearer() {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	c.renderLogin(w, r, http.StatusOK, "")
}

func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	var fl *flash
	if msg != "" {
		fl = &flash{Kind: "error", Text: msg}
	}
	c.render(w, r, status, "login", page{Title: "Log in", Flash: fl})
}

// useLink is GET /login/{secret}: a one-time login link. It is used
// (once: a second visit is refused), a console session starts, and the
// browser is sent on to the pending page, so the link leaves the
// address bar. The secret is never logged.
func (c *Console) useLink(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s, err := c.o.Credentials.Login(r.Context(), r.PathValue("secret"), r.RemoteAddr)
	switch {
	case errors.Is(err, credential.ErrInvalid):
		c.log.WarnContext(r.Context(), "refused login link", "remote", r.RemoteAddr)
		c.renderLogin(w, r, http.StatusForbidden, "This login link is not valid: it was used already, has expired or was revoked. Run `warden console` on the host's machine for a new one.")
		return
	case err != nil:
		c.log.ErrorContext(r.Context(), "login", "remote", r.RemoteAddr, "err", err)
		c.renderLogin(w, r, http.StatusInternalServerError, "The login failed (store error). Run `warden console` for a new link and try again.")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: s.Secret, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
		MaxAge: int(time.Until(s.Expires) / time.Second),
	})
	c.log.InfoContext(r.Context(), "login", "session", s.ID, "link", s.Parent, "remote", r.RemoteAddr)
	http.Redirect(w, r, "/pending", http.StatusSeeOther)
}

// logout ends the browser session: it is revoked in the store, so the
// cookie is worthless even if it was copied.
func (c *Console) logout(w http.ResponseWriter, r *http.Request, a *authn) {
	if !a.bearer() {
		if err := c.o.Credentials.Revoke(r.Context(), store.ConsoleSession, a.cred.ID); err != nil {
			c.log.ErrorContext(r.Context(), "logout", "session", a.cred.ID, "err", err)
			http.Error(w, "logout failed (store error); try again", http.StatusInternalServerError)
			return
		}
		c.mu.Lock()
		delete(c.flashes, a.cred.ID)
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
	defer c.mu.Unlock()
	if len(c.flashes) >= maxFlashes {
		clear(c.flashes)
	}
	c.flashes[a.cred.ID] = &flash{Kind: kind, Text: text}
}

// takeFlash returns and clears the session's notice.
func (c *Console) takeFlash(a *authn) *flash {
	if a.bearer() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.flashes[a.cred.ID]
	delete(c.flashes, a.cred.ID)
	return f
}

// csrfOf returns the session's CSRF token for forms.
func (c *Console) csrfOf(a *authn) string { return a.csrf }

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
