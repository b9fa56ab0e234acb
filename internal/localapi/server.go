package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/connlimit"
	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/jsonbody"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
)

// maxBody bounds a request body.
const maxBody = 1 << 20

// Store is what the admin API reads and writes besides the broker.
type Store interface {
	store.Grants
	store.Sessions
	store.Audit
	GetRequest(ctx context.Context, id string) (store.Request, error)
}

// Options configure a Server.
type Options struct {
	// Broker holds the pending requests; answers go through it so the
	// waiter wakes.
	Broker *broker.Broker
	Store  Store
	// Runner runs exec commands: gate, audit, ask, audit, run.
	Runner *runner.Runner
	// Console returns the web console's address for a pending request,
	// where its human answers; nil or "" means none is known.
	Console func(requestID string) string
	// ConsoleURL is the console's base URL ("http://127.0.0.1:7878/"),
	// which login links are made from; Credentials issues them and API
	// tokens. With Credentials nil the /v1/console and /v1/tokens
	// endpoints answer 503.
	ConsoleURL  string
	Credentials *credential.Service
	// Channel is the answer channel of web sessions: the host's web
	// console, where their human answers. Nil means a channel named
	// "web" (answers then come through this API only).
	Channel owner.AnswerChannel
	// Cron is the host's cron scheduler and CronStore its store; with
	// either nil the /v1/cron endpoints answer 503.
	Cron      Cron
	CronStore CronStore
	// Board is the kanban board's store; nil makes the /v1/kanban
	// endpoints answer 503. Dispatch, if set, is poked when a task may
	// have become ready (added, unblocked).
	Board    store.BoardStore
	Dispatch Dispatcher
	// Boards is the host's one board service over Board; nil makes New
	// build one (once, not per request).
	Boards *board.Service
	// Remote, if set, issues a ready task to a remote worker (POST
	// /v1/kanban/{id}/remote); nil makes that endpoint answer 503.
	Remote func(ctx context.Context, task string, ttl time.Duration) (KanbanRemote, error)
	// ShellReset, if set, drops a session's terminal shell state
	// (POST /v1/sessions/{key}/reset); nil makes that endpoint answer
	// 503.
	ShellReset func(ctx context.Context, key string) error
	// Status, if set, reports the host's health (GET /v1/status); nil
	// makes that endpoint answer 503.
	Status func(ctx context.Context) Status
	// Peers admits local processes; the zero value admits root only.
	Peers PeerPolicy
	// Limits are the server's timeouts (HTTPServer) and the caps of
	// Listen's listener; zero fields mean connlimit.Defaults.
	Limits connlimit.Limits
	Logger *slog.Logger
	Now    func() time.Time
}

// Server is the admin API's handler.
type Server struct {
	o   Options
	log *slog.Logger
	mux *http.ServeMux
	// base is HTTPServer's base context: streams that left net/http
	// (stream.go) end with it; streams counts them.
	base    context.Context
	streams sync.WaitGroup
}

// boardService is o.Boards, or one built over o.Board; nil without a
// board.
func boardService(o Options) *board.Service {
	switch {
	case o.Boards != nil:
		return o.Boards
	case o.Board != nil:
		return board.New(board.Options{Store: o.Board, Now: o.Now})
	}
	return nil
}

// New returns a Server.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Channel == nil {
		o.Channel = consoleChannel{}
	}
	if o.Console == nil {
		o.Console = func(string) string { return "" }
	}
	o.Boards = boardService(o)
	s := &Server{o: o, log: o.Logger.With("component", "localapi"), mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /v1/approvals", s.listApprovals)
	s.mux.HandleFunc("POST /v1/approvals/{id}/approve", s.approve)
	s.mux.HandleFunc("POST /v1/approvals/{id}/deny", s.deny)
	s.mux.HandleFunc("GET /v1/grants", s.listGrants)
	s.mux.HandleFunc("DELETE /v1/grants/{id}", s.revokeGrant)
	s.mux.HandleFunc("POST /v1/exec", s.exec)
	s.mux.HandleFunc("POST /v1/external/decide", s.externalDecide)
	s.mux.HandleFunc("POST /v1/external/run", s.externalRun)
	s.mux.HandleFunc("GET /v1/audit", s.audit)
	s.mux.HandleFunc("GET /v1/audit/verify", s.verify)
	s.mux.HandleFunc("GET /v1/status", s.status)
	s.mux.HandleFunc("GET /v1/sessions", s.listSessions)
	s.mux.HandleFunc("POST /v1/sessions/{key}/reset", s.resetSession)
	s.cronRoutes()
	s.kanbanRoutes()
	s.credentialRoutes()
	return s
}

// HTTPServer returns an http.Server for the socket: each connection's
// peer credentials are bound to its requests (ConnContext), every
// request's context derives from base, so cancelling base (with a
// cause) stops running commands, and the timeouts are Options.Limits'
// (streams lift theirs: see newStream). Serve it on Limit(listener).
func (s *Server) HTTPServer(base context.Context) *http.Server {
	s.base = base
	srv := &http.Server{
		Handler:     s,
		ConnContext: connContext,
		BaseContext: func(net.Listener) context.Context { return base },
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.o.Limits.Apply(srv)
	return srv
}

// Limit wraps the admin socket's listener with the connection caps: in
// all and per peer uid (Options.Limits); a connection over a cap gets a
// 503 and is closed.
func (s *Server) Limit(ln net.Listener) net.Listener {
	return connlimit.New(ln, connlimit.Options{Limits: s.o.Limits, Key: connlimit.PeerUID, Refuse: connlimit.RefuseHTTP, Logger: s.o.Logger})
}

// ServeHTTP refuses what a browser could send and any peer the policy
// does not admit, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	switch {
	case r.Header.Get("Origin") != "" || r.Header.Get("Referer") != "":
		writeError(w, http.StatusForbidden, "requests from a browser are refused")
		return
	case r.Host != Host:
		writeError(w, http.StatusForbidden, fmt.Sprintf("wrong Host %q (want %q)", r.Host, Host))
		return
	}
	p, err := peerFrom(r.Context())
	var id Identity
	if err == nil {
		id, err = s.o.Peers.Permit(p)
	}
	if err != nil {
		s.log.WarnContext(r.Context(), "refused peer", "peer", p.String(), "err", err)
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), identityKey{}, id))
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	s.mux.ServeHTTP(w, r)
}

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	pending, err := s.o.Broker.Pending(r.Context(), "")
	if err != nil {
		s.fail(w, r, "list pending requests", err)
		return
	}
	out := make([]Approval, 0, len(pending))
	for _, p := range pending {
		out = append(out, approvalOf(p))
	}
	writeJSON(w, http.StatusOK, out)
}

func approvalOf(r store.Request) Approval {
	classes := r.Classes
	if classes == nil {
		classes = []string{}
	}
	return Approval{
		ID: r.ID, Session: r.Session, Owner: r.Owner, OwnerText: r.OwnerText, Action: r.Action,
		Classes: classes, Rule: r.Rule, Created: r.Created, Deadline: r.Deadline, Prefix: broker.DefaultPrefix(r),
		Notice: r.Notice, Elicit: r.Elicit,
	}
}

func resultOf(r store.Request) *Result {
	return &Result{
		ID: r.ID, Session: r.Session, State: r.State, Scope: r.Scope, Grain: r.Grain,
		By: r.By, Surface: r.Surface, Reason: r.Reason, Resolved: r.Resolved,
	}
}

func (s *Server) approve(w http.ResponseWriter, r *http.Request) {
	var body ApproveRequest
	if !decode(w, r, &body) {
		return
	}
	a := broker.Answer{Approve: true, Scope: store.Scope(body.Scope), Grain: grant.Grain(body.Grain), Pattern: strings.TrimSpace(body.Pattern), Content: body.Content}
	if err := validApproval(a); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.answer(w, r, a, body.By)
}

// validApproval checks scope, grain and pattern before anything ends.
func validApproval(a broker.Answer) error {
	switch a.Scope {
	case "", store.Once, store.Session, store.Always:
	default:
		return fmt.Errorf("scope must be once, session or always, not %q", a.Scope)
	}
	switch a.Grain {
	case "", grant.Exact, grant.Prefix, grant.Class:
	default:
		return fmt.Errorf("grain must be exact, prefix or class, not %q", a.Grain)
	}
	if (a.Scope == "" || a.Scope == store.Once) && a.Grain != "" && a.Grain != grant.Exact {
		return errors.New("a grain applies to scope session or always; once covers this action only")
	}
	if a.Pattern != "" {
		if a.Grain != grant.Prefix {
			return errors.New("a pattern applies to grain prefix only")
		}
		if p := strings.TrimSpace(strings.TrimSuffix(a.Pattern, "*")); p == "" {
			return fmt.Errorf("pattern %q would match everything", a.Pattern)
		}
		if _, err := grant.Parse(a.Pattern + " *"); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) deny(w http.ResponseWriter, r *http.Request) {
	var body DenyRequest
	if !decode(w, r, &body) {
		return
	}
	s.answer(w, r, broker.Answer{Approve: false, Reason: strings.TrimSpace(body.Reason)}, body.By)
}

// answer resolves the request named in the path as the peer, through the
// broker's one compare-and-swap. A late answer is a 409 that says how
// the request had ended — never "approved".
func (s *Server) answer(w http.ResponseWriter, r *http.Request, a broker.Answer, label string) {
	ctx := r.Context()
	id := r.PathValue("id")
	a.By, a.Surface = answeredBy(label, identity(ctx)), Surface
	// A request past its deadline is over even if the waiter's timer has
	// not fired yet: refuse rather than race it into "approved".
	cur, err := s.o.Store.GetRequest(ctx, id)
	if s.failed(w, r, "get request", err, "no request "+id) {
		return
	}
	switch {
	case cur.State == store.Pending && !s.o.Now().Before(cur.Deadline):
		cur.State = store.Expired
		writeLate(w, cur)
		return
	case cur.Elicit != nil && a.Approve && ((a.Scope != "" && a.Scope != store.Once) || a.Grain != ""):
		writeError(w, http.StatusBadRequest, "an MCP server's question is answered once and grants nothing: approve it with content (accept) or deny it (decline)")
		return
	}
	ended, err := s.o.Broker.Resolve(ctx, id, a)
	switch {
	case errors.Is(err, broker.ErrContent):
		writeError(w, http.StatusBadRequest, err.Error())
		return
	case errors.Is(err, broker.ErrNotPending):
		writeLate(w, ended)
		return
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "no request "+id)
		return
	case errors.Is(err, broker.ErrNoWaiter):
		writeError(w, http.StatusConflict, "nothing pending — "+err.Error()+"; it is withdrawn and nothing was approved")
		return
	case err != nil:
		s.fail(w, r, "resolve request", err)
		return
	}
	writeJSON(w, http.StatusOK, resultOf(ended))
}

// answeredBy is who answered, for the audit record: the identity
// ServeHTTP proved ("uid 1000 pid 4242 via admin socket, outside
// sandboxes"), and after it, marked as the client's own words, the label
// it gave, if any. The label is never what the record rests on.
func answeredBy(label string, id Identity) string {
	label = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return -1
		}
		return r
	}, strings.TrimSpace(label))
	if len(label) > 64 {
		label = strings.ToValidUTF8(label[:64], "")
	}
	if label == "" {
		return id.String()
	}
	return id.String() + ` (client says "` + label + `")`
}

// LateMessage says how an ended request ended, for an answer that came
// too late: "nothing pending — it had expired".
func LateMessage(r store.Request) string {
	const prefix = "nothing pending — "
	switch r.State {
	case store.Expired:
		return prefix + "it had expired"
	case store.Answered:
		return prefix + "it was already answered: approved (" + string(r.Scope) + ")" + byWhom(r)
	case store.Denied:
		return prefix + "it was already answered: denied" + byWhom(r)
	case store.Withdrawn:
		cause := r.Reason
		if cause == "" {
			cause = "no cause given"
		}
		return prefix + "it was withdrawn (" + cause + ")"
	}
	return prefix + "it had ended (" + string(r.State) + ")"
}

func byWhom(r store.Request) string {
	s := ""
	if r.By != "" {
		s += " by " + r.By
	}
	if r.Surface != "" {
		s += " on " + r.Surface
	}
	return s
}

func writeLate(w http.ResponseWriter, r store.Request) {
	writeJSON(w, http.StatusConflict, ErrorBody{Error: LateMessage(r), State: r.State, Request: resultOf(r)})
}

func (s *Server) listGrants(w http.ResponseWriter, r *http.Request) {
	gs, err := s.o.Store.ListGrants(r.Context())
	writeList(s, w, r, "list grants", gs, err)
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.failed(w, r, "revoke grant", s.o.Store.RevokeGrant(r.Context(), id), "no grant "+id) {
		return
	}
	s.log.InfoContext(r.Context(), "grant revoked", "id", id)
	w.WriteHeader(http.StatusNoContent)
}

// listSessions lists every session the host has seen, oldest first.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	list, err := s.o.Store.ListSessions(r.Context())
	writeList(s, w, r, "list sessions", list, err)
}

// resetSession drops a session's terminal shell state: its next call
// starts in a fresh shell.
func (s *Server) resetSession(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	if s.o.ShellReset == nil {
		writeError(w, http.StatusServiceUnavailable, "this host keeps no shell state")
		return
	}
	if key == "" {
		writeError(w, http.StatusBadRequest, "missing session key")
		return
	}
	if err := s.o.ShellReset(r.Context(), key); err != nil {
		s.fail(w, r, "reset session", err)
		return
	}
	s.log.InfoContext(r.Context(), "session shell state reset", "session", key)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.AuditFilter{Session: q.Get("session"), Verdict: q.Get("verdict")}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("since: want an RFC 3339 time, got %q", v))
			return
		}
		f.Since = t
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("limit: want a count, got %q", v))
			return
		}
		f.Limit = n
	}
	ds, err := s.o.Store.Decisions(r.Context(), f)
	writeList(s, w, r, "list decisions", ds, err)
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	if s.o.Status == nil {
		writeError(w, http.StatusServiceUnavailable, "no status here")
		return
	}
	writeJSON(w, http.StatusOK, s.o.Status(r.Context()))
}

func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	n, err := s.o.Store.VerifyChain(r.Context())
	if loss, ok := errors.AsType[*store.LossError](err); ok {
		writeJSON(w, http.StatusOK, VerifyResult{OK: false, Records: n, Error: err.Error(), Missing: loss.Missing, Gone: loss.Gone, Replaced: loss.Replaced})
		return
	}
	switch {
	case errors.Is(err, store.ErrChainBroken):
		writeJSON(w, http.StatusOK, VerifyResult{OK: false, Records: n, BadSeq: int64(n) + 1, Error: err.Error()})
	case err != nil:
		s.fail(w, r, "verify audit chain", err)
	default:
		writeJSON(w, http.StatusOK, VerifyResult{OK: true, Records: n})
	}
}

// fail logs an internal error and answers 500 with it.
// writeList answers a read of a list (what names it): the list as
// JSON, [] when empty (never null), or the error that read it.
func writeList[T any](s *Server, w http.ResponseWriter, r *http.Request, what string, list []T, err error) {
	if err != nil {
		s.fail(w, r, what, err)
		return
	}
	if list == nil {
		list = []T{}
	}
	writeJSON(w, http.StatusOK, list)
}

// failed answers err, if any: 404 saying notFound for
// store.ErrNotFound, else a failure of op. It reports whether it
// answered.
func (s *Server) failed(w http.ResponseWriter, r *http.Request, op string, err error, notFound string) bool {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, notFound)
		return true
	case err != nil:
		s.fail(w, r, op, err)
		return true
	}
	return false
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, op string, err error) {
	s.log.ErrorContext(r.Context(), op, "err", err)
	writeError(w, http.StatusInternalServerError, op+": "+err.Error())
}

// decode reads a JSON body strictly (jsonbody: one value, then the
// end; no unknown field; at most maxBody bytes); a bad body is answered
// 400 (413 when too large) with what is wrong.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := jsonbody.Decode(w, r, v, maxBody); err != nil {
		status := http.StatusBadRequest
		if be, ok := errors.AsType[*jsonbody.Error](err); ok {
			status = be.Status
		}
		writeError(w, status, err.Error())
		return false
	}
	return true
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, ErrorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
