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
	s.mux.HandleFunc("POST /v1/console/login", s.consoleLogin)
	s.mux.HandleFunc("GET /v1/console/sessions", s.listCredentials(store.ConsoleSession))
	s.mux.HandleFunc("DELETE /v1/console/sessions/{id}", s.revokeCredential(store.ConsoleSession))
	s.mux.HandleFunc("DELETE /v1/console/sessions", s.revokeAll(store.ConsoleSession))
	s.mux.HandleFunc("POST /v1/tokens", s.createToken)
	s.mux.HandleFunc("GET /v1/tokens", s.listCredentials(store.APIToken))
	s.mux.HandleFunc("DELETE /v1/tokens/{id}", s.revokeCredential(store.APIToken))
}

// creds returns the credential service, or answers 503.
func (s *Server) creds(w http.ResponseWriter) *credential.Service {
	if s.o.Credentials == nil {
		writeError(w, http.StatusServiceUnavailable, "this host issues no console logins or tokens")
	}
	return s.o.Credentials
}

// ttl reads a lifetime in seconds.
func ttl(sec int64) (time.Duration, error) {
	if sec < 0 || sec > int64(credential.MaxTokenTTL/time.Second) {
		return 0, fmt.Errorf("ttl_seconds %d out of range", sec)
	}
	return time.Duration(sec) * time.Second, nil
}

func (s *Server) consoleLogin(w http.ResponseWriter, r *http.Request) {
	cs := s.creds(w)
	if cs == nil {
		return
	}
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

func (s *Server) createToken(w http.ResponseWriter, r *http.Request) {
	cs := s.creds(w)
	if cs == nil {
		return
	}
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

func (s *Server) listCredentials(k store.CredentialKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cs := s.creds(w)
		if cs == nil {
			return
		}
		list, err := cs.List(r.Context(), k)
		if err != nil {
			s.fail(w, r, "list credentials", err)
			return
		}
		if list == nil {
			list = []store.Credential{}
		}
		writeJSON(w, http.StatusOK, list)
	}
}

func (s *Server) revokeCredential(k store.CredentialKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cs := s.creds(w)
		if cs == nil {
			return
		}
		id := r.PathValue("id")
		err := cs.Revoke(r.Context(), k, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			writeError(w, http.StatusNotFound, fmt.Sprintf("no %s %q", kindName(k), id))
			return
		case err != nil:
			s.fail(w, r, "revoke", err)
			return
		}
		s.log.InfoContext(r.Context(), kindName(k)+" revoked", "id", id, "peer", identity(r.Context()).String())
		writeJSON(w, http.StatusOK, RevokeResult{Revoked: 1})
	}
}

func (s *Server) revokeAll(k store.CredentialKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		cs := s.creds(w)
		if cs == nil {
			return
		}
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
	var out LoginLink
	if err := c.call(ctx, http.MethodPost, "/v1/console/login", LoginRequest{TTLSeconds: int64(ttl / time.Second)}, &out); err != nil {
		return LoginLink{}, fmt.Errorf("console login: %w", err)
	}
	return out, nil
}

// ConsoleSessions lists the console sessions, oldest first.
func (c *Client) ConsoleSessions(ctx context.Context) ([]store.Credential, error) {
	var out []store.Credential
	if err := c.call(ctx, http.MethodGet, "/v1/console/sessions", nil, &out); err != nil {
		return nil, fmt.Errorf("list console sessions: %w", err)
	}
	return out, nil
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
	var out NewToken
	if err := c.call(ctx, http.MethodPost, "/v1/tokens", req, &out); err != nil {
		return NewToken{}, fmt.Errorf("create token: %w", err)
	}
	return out, nil
}

// Tokens lists the API tokens (never their secrets), oldest first.
func (c *Client) Tokens(ctx context.Context) ([]store.Credential, error) {
	var out []store.Credential
	if err := c.call(ctx, http.MethodGet, "/v1/tokens", nil, &out); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes API token id.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	if err := c.call(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), nil, nil); err != nil {
		return fmt.Errorf("revoke token %s: %w", id, err)
	}
	return nil
}
