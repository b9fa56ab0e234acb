package localapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/store"
)

// LoginRequest is the body of POST /v1/console/login.
type LoginRequest struct {
	// TTLSeconds is how long the link may wait to be used; 0 means
	// credential.DefaultLoginTTL (at most credential.MaxLoginTTL).
	TTLSeconds int64 `json:"ttl_seconds,omitempty"`
}

// LoginLink is a new one-time console login link: URL (the only copy of
// its secret) works once, until Expires.
type LoginLink struct {
	ID      string    `json:"id"`
	URL     string    `json:"url"`
	Path    string    `json:"path"`
	Expires time.Time `json:"expires_at"`
	// By is the identity the link was issued to: this request's proven
	// peer.
	By string `json:"by"`
}

// TokenRequest is the body of POST /v1/tokens.
type TokenRequest struct {
	Name string `json:"name,omitempty"`
	// Scopes are read, approve and/or admin.
	Scopes []string `json:"scopes"`
	// TTLSeconds is the token's lifetime; 0 means
	// credential.DefaultTokenTTL (at most credential.MaxTokenTTL).
	TTLSeconds int64 `json:"ttl_seconds,omitempty"`
}

// NewToken is a new API token: Token is its secret, shown once.
type NewToken struct {
	store.Credential
	Token string `json:"token"`
}

// RevokeResult is the body of a revocation's answer.
type RevokeResult struct {
	Revoked int `json:"revoked"`
}

// credentialRoutes registers the console login and API token
// endpoints. Only a peer ServeHTTP admitted reaches them: one that
// proved it runs outside every tool sandbox.
func (s *Server) credentialRoutes() {
	s.mux.HandleFunc("POST /v1/console/login", s.onCreds(s.consoleLogin))
	s.mux.HandleFunc("GET /v1/console/sessions", s.onCreds(s.listCredentials(store.ConsoleSession)))
	s.mux.HandleFunc("DELETE /v1/console/sessions/{id}", s.onCreds(s.revokeCredential(store.ConsoleSession)))
	s.mux.HandleFunc("DELETE /v1/console/sessions", s.onCreds(s.revokeAll(store.ConsoleSession)))
	s.mux.HandleFunc("POST /v1/tokens", s.onCreds(s.createToken))
	s.mux.HandleFunc("GET /v1/tokens", s.onCreds(s.listCredentials(store.APIToken)))
	s.mux.HandleFunc("DELETE /v1/tokens/{id}", s.onCreds(s.revokeCredential(store.APIToken)))
}

// onCreds is h given the credential service, or a 503 on a host
// that keeps none.
func (s *Server) onCreds(h credsHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.o.Credentials == nil {
			writeError(w, http.StatusServiceUnavailable, "this host issues no console logins or tokens")
			return
		}
		h(w, r, s.o.Credentials)
	}
}

// credsHandler is a handler of the credential endpoints, given the
// host's credential service.
type credsHandler func(http.ResponseWriter, *http.Request, *credential.Service)

// ttl reads a lifetime in seconds.
func ttl(sec int64) (time.Duration, error) {
	if sec < 0 || sec > int64(credential.MaxTokenTTL/time.Second) {
		return 0, fmt.Errorf("ttl_seconds %d out of range", sec)
	}
	return time.Duration(sec) * time.Second, nil
}

func (s *Server) consoleLogin(w http.ResponseWriter, r *http.Request, cs *credential.Service) {
	var req LoginRequest
	if !decode(w, r, &req) {
		return
	}
	d, err := ttl(req.TTLSeconds)
	if err == nil && d > credential.MaxLoginTTL {
		err = fmt.Errorf("a login link lives at most %v", credential.MaxLoginTTL)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	by := identity(r.Context()).String()
	l, err := cs.IssueLogin(r.Context(), by, d)
	if err != nil {
		s.fail(w, r, "issue login link", err)
		return
	}
	s.log.InfoContext(r.Context(), "console login link issued", "link", l.ID, "expires", l.Expires, "peer", by)
	path := "login/" + url.PathEscape(l.Secret)
	writeJSON(w, http.StatusCreated, LoginLink{ID: l.ID, URL: s.o.ConsoleURL + path, Path: "/" + path, Expires: l.Expires, By: by})
}

func (s *Server) createToken(w http.ResponseWriter, r *http.Request, cs *credential.Service) {
	var req TokenRequest
	if !decode(w, r, &req) {
		return
	}
	scopes, err := credential.ParseScopes(req.Scopes)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	d, err := ttl(req.TTLSeconds)
	if err == nil && len(req.Name) > 64 {
		err = errors.New("a token name is at most 64 bytes")
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	by := identity(r.Context()).String()
	t, err := cs.IssueToken(r.Context(), req.Name, scopes, d, by)
	if err != nil {
		s.fail(w, r, "create token", err)
		return
	}
	s.log.InfoContext(r.Context(), "api token created", "token", t.ID, "scopes", t.Scopes, "expires", t.Expires, "peer", by)
	writeJSON(w, http.StatusCreated, NewToken{Credential: t.Credential, Token: t.Secret})
}

func (s *Server) listCredentials(k store.CredentialKind) credsHandler {
	return func(w http.ResponseWriter, r *http.Request, cs *credential.Service) {
		list, err := cs.List(r.Context(), k)
		writeList(s, w, r, "list credentials", list, err)
	}
}

func (s *Server) revokeCredential(k store.CredentialKind) credsHandler {
	return func(w http.ResponseWriter, r *http.Request, cs *credential.Service) {
		id := r.PathValue("id")
		if s.failed(w, r, "revoke", cs.Revoke(r.Context(), k, id), fmt.Sprintf("no %s %q", kindName(k), id)) {
			return
		}
		s.log.InfoContext(r.Context(), kindName(k)+" revoked", "id", id, "peer", identity(r.Context()).String())
		writeJSON(w, http.StatusOK, RevokeResult{Revoked: 1})
	}
}

func (s *Server) revokeAll(k store.CredentialKind) credsHandler {
	return func(w http.ResponseWriter, r *http.Request, cs *credential.Service) {
		n, err := cs.RevokeAll(r.Context(), k)
		if err != nil {
			s.fail(w, r, "revoke all", err)
			return
		}
		s.log.InfoContext(r.Context(), "every "+kindName(k)+" revoked", "count", n, "peer", identity(r.Context()).String())
		writeJSON(w, http.StatusOK, RevokeResult{Revoked: n})
	}
}

func kindName(k store.CredentialKind) string {
	switch k {
	case store.ConsoleSession:
		return "console session"
	case store.APIToken:
		return "api token"
	}
	return string(k)
}

// ConsoleLogin asks the host for a one-time console login link.
func (c *Client) ConsoleLogin(ctx context.Context, ttl time.Duration) (LoginLink, error) {
	return fetch[LoginLink](ctx, c, http.MethodPost, "/v1/console/login", LoginRequest{TTLSeconds: int64(ttl / time.Second)}, "console login")
}

// ConsoleSessions lists the console sessions, oldest first.
func (c *Client) ConsoleSessions(ctx context.Context) ([]store.Credential, error) {
	return fetch[[]store.Credential](ctx, c, http.MethodGet, "/v1/console/sessions", nil, "list console sessions")
}

// RevokeConsoleSession logs console session id out; id "" revokes them
// all. It returns how many it revoked.
func (c *Client) RevokeConsoleSession(ctx context.Context, id string) (int, error) {
	path := "/v1/console/sessions"
	if id != "" {
		path += "/" + url.PathEscape(id)
	}
	var out RevokeResult
	if err := c.call(ctx, http.MethodDelete, path, nil, &out); err != nil {
		return 0, fmt.Errorf("revoke console session: %w", err)
	}
	return out.Revoked, nil
}

// CreateToken creates an API token; its secret is in the result only.
func (c *Client) CreateToken(ctx context.Context, req TokenRequest) (NewToken, error) {
	return fetch[NewToken](ctx, c, http.MethodPost, "/v1/tokens", req, "create token")
}

// Tokens lists the API tokens (never their secrets), oldest first.
func (c *Client) Tokens(ctx context.Context) ([]store.Credential, error) {
	return fetch[[]store.Credential](ctx, c, http.MethodGet, "/v1/tokens", nil, "list tokens")
}

// RevokeToken revokes API token id.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	return c.send(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), "revoke token "+id)
}
