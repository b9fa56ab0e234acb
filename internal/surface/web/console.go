// Package web is warden's web console: the surface where the operator
// answers pending requests, watches sessions and runs commands as a web
// session, revokes grants, reads the audit log, and watches cron jobs
// and their runs (and starts one now).
//
// The console is server-rendered (html/template, embedded); a small
// script served as a file (no inline script, so the Content Security
// Policy forbids every other) follows the broker over Server-Sent Events
// and re-fetches the live fragments on each event.
//
// # Security
//
// Everything but the login page, login links and the static files needs
// a credential (internal/credential; none is kept in a file): either a
// console session cookie (HttpOnly, SameSite=Strict), which a one-time
// login link from `warden console` sets (GET /login/{secret}: used once,
// within minutes), or, for scripts, "Authorization: Bearer TOKEN" with
// an API token from `warden token create`, whose scopes (read, approve,
// admin) bound what it may do. The store keeps only the secrets'
// hashes; a session or token is checked against it on every request, so
// a revocation holds at once. Every state-changing form carries the
// session's CSRF token (derived from the session's secret), and POSTs
// without it are refused. Answers and changes are recorded with the
// credential that proved them (credential.Describe).
// Cross-origin POSTs are refused (Sec-Fetch-Site / Origin), and so is any
// request whose Host header is not the address the connection arrived
// on, a loopback name, or a host configured in Options.Hosts, so a DNS
// rebinding page cannot talk to the console. Responses carry a strict
// CSP, X-Frame-Options DENY, nosniff and Referrer-Policy no-referrer.
//
// # Answers
//
// An answer goes to the broker, whose compare-and-swap decides whether it
// counted. A late click (the request had expired, was answered elsewhere
// or was withdrawn) is told "nothing pending" with the cause, never
// "approved" (DESIGN.md invariant 10). A card whose request ends while
// it is on screen is marked with how it ended and its buttons disabled.
//
// # Composer
//
// A session page of a web session (owner gateway:web/KEY, session KEY)
// has a composer. A line starting with "!" is run as a shell command as
// that session, with the console as its answer channel; any other line
// is a message to the agent (surface.Host.Converse), which runs as the same
// owner and continues the session's conversation, one message at a
// time per session. Without a configured model a message is refused
// with how to configure one. Runs continue in the background, bound to
// the console's lifetime rather than the browser request, so a
// dangerous action's question can be answered on the same page; the
// page follows the run live, an agent run as a transcript of its tool
// calls, approvals, refusals, results and reply. Sessions of other
// owners (terminal, chat) are shown read-only.
//
// # Elicitations
//
// A pending request that is an MCP server's question (store.Request
// Elicit) gets a card with the server's message, shown as untrusted
// plain text, and a form generated from the requested flat schema, or
// for URL mode the link to open. Submit accepts with the form's values,
// typed and checked against the stored schema; Decline declines. An
// elicitation grants nothing, so the approval scopes are refused for
// it, and Submit/Decline are refused for approvals.
//
// # Cron
//
// The cron page lists the jobs (schedule, zone, next run, enabled,
// steps) and the recent runs with each step's decision, rule, exit code
// and output. "Run now" (a CSRF-protected POST) starts a run as the
// operator: its owner is cron(job, run) with no parent, exactly as for
// warden cron run, so the gate decides its steps under cron_mode.
//
// # Routes
//
//	GET  /login, GET /login/{secret} (a one-time link), POST /logout
//	GET  /pending[?session=K]        pending requests (live)
//	GET  /pending/list               the live fragment
//	POST /pending/{id}/answer        decision=once|session|always|deny, grain=exact|prefix, pattern, reason;
//	                                 for an elicitation decision=accept|decline and f.NAME per field
//	GET  /sessions, POST /sessions   list; create a web session (key)
//	GET  /sessions/{key}             queue, composer, runs
//	GET  /sessions/{key}/runs        the live runs fragment
//	POST /sessions/{key}/run         line: "!cmd" runs cmd, anything else asks the agent
//	POST /sessions/{key}/yolo        on=true|false
//	GET  /grants, POST /grants/revoke (id)
//	GET  /audit[?session&verdict&since&limit], POST /audit/verify
//	GET  /cron[?job=NAME]            jobs and recent runs with their steps
//	POST /cron/{name}/run            start a run now (owner cron, no parent)
//	GET  /board[?task=ID]            the kanban board by status; a task's drawer
//	POST /board/{id}/comment         comment on a task as the operator
//	GET  /events                     Server-Sent Events: created, ended, run
//	GET  /static/…                   script and style sheet
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// SurfaceName is the console's surface name in answers and audit
// records.
const SurfaceName = "web"

// Platform is the gateway platform of the console's own sessions: a
// command typed in a session's composer runs as gateway:web/KEY.
const Platform = "web"

// Store is what the console reads and changes in the host's store:
// grants, sessions and the audit log.
type Store interface {
	ListGrants(ctx context.Context) ([]grant.Grant, error)
	RevokeGrant(ctx context.Context, id string) error
	ListSessions(ctx context.Context) ([]store.SessionRow, error)
	GetSession(ctx context.Context, key string) (store.SessionRow, error)
	UpsertSession(ctx context.Context, s store.SessionRow) error
	SetYolo(ctx context.Context, key string, on bool) error
	Decisions(ctx context.Context, f store.AuditFilter) ([]store.Decision, error)
	VerifyChain(ctx context.Context) (int, error)
}

// Options configure a Console.
type Options struct {
	// Host is the host's surface interface: pending requests and their
	// events, answers, composer commands ("!cmd") and messages to the
	// agent (lines without "!"), run as the web session; a host without
	// a model refuses messages with how to configure one.
	Host  surface.Host
	Store Store
	// Cron is the scheduler for the cron page; nil means the page says
	// cron is not available.
	Cron surface.Cron
	// Board is the kanban board for the board page; nil means the page
	// says the board is not available.
	Board surface.Board
	// Credentials checks console sessions and API tokens, and uses
	// login links.
	Credentials *credential.Service
	// Hosts are extra Host header values to accept (a name the console
	// is reached by through a reverse proxy), as "host" or "host:port".
	// The address a connection arrived on and loopback names are always
	// accepted.
	Hosts []string
	// ShellReset, if set, clears a session's terminal shell state (the
	// session page's "Reset shell" button); nil hides the button.
	ShellReset func(ctx context.Context, key string) error
	// Alerts, if set, returns what the operator must know on every page:
	// a config edit that was refused, a store that stopped accepting
	// work. Each line is shown as a banner.
	Alerts func() []string
	// StreamLifetime bounds one event stream (the page reconnects);
	// zero means DefaultStreamLifetime. MaxStreams bounds the streams
	// one session or token holds open at once; zero means
	// DefaultMaxStreams.
	StreamLifetime time.Duration
	MaxStreams     int
	Logger         *slog.Logger
	Now            func() time.Time
}

// Event stream bounds.
const (
	DefaultStreamLifetime = time.Hour
	DefaultMaxStreams     = 8
)

// maxRunsPerSession is how many composer runs a session page keeps.
const maxRunsPerSession = 20

// maxActiveRuns bounds composer runs in flight across the console.
const maxActiveRuns = 32

// Console is the web console. It is an http.Handler; Close stops its
// event streams and composer runs.
type Console struct {
	o       Options
	log     *slog.Logger
	mux     *http.ServeMux
	pages   map[string]*template.Template
	static  http.Handler
	origins *http.CrossOriginProtection

	// ctx is cancelled by Close; streams and runs derive from it.
	ctx    context.Context
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	flashes map[string]*flash // by console session id
	streams map[string]int    // open event streams by credential id
	runs    map[string][]*run // by session key, newest last
	talking map[string]*run   // the agent run in flight, by session key
	active  int               // runs in flight
	nextRun int
	subs    map[chan event]struct{} // run events for /events

	viewsMu   sync.Mutex
	viewCache map[string]*requestView // pending request id → its card
}

var _ owner.AnswerChannel = (*Console)(nil)

// New returns a Console.
func New(o Options) (*Console, error) {
	if o.Host == nil || o.Store == nil {
		return nil, errors.New("web console: host and store are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Credentials == nil {
		return nil, errors.New("web console: no credential service")
	}
	if o.StreamLifetime <= 0 {
		o.StreamLifetime = DefaultStreamLifetime
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	pages, err := parsePages()
	if err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	c := &Console{
		o: o, log: o.Logger.With("component", "web"),
		pages:   pages,
		static:  http.StripPrefix("/static/", http.FileServerFS(static)),
		origins: http.NewCrossOriginProtection(),
		ctx:     ctx, cancel: cancel,
		flashes:   map[string]*flash{},
		streams:   map[string]int{},
		runs:      map[string][]*run{},
		talking:   map[string]*run{},
		subs:      map[chan event]struct{}{},
		viewCache: map[string]*requestView{},
	}
	c.routes()
	return c, nil
}

// Surface names the console as an answer channel.
func (c *Console) Surface() string { return SurfaceName }

// Close ends the console's event streams and withdraws its composer runs
// (their contexts end, so their pending requests are withdrawn and their
// commands killed), and waits for them. The handler answers 503 to
// streams and runs started afterwards.
func (c *Console) Close() error {
	c.mu.Lock()
	c.closed = true
	for ch := range c.subs {
		delete(c.subs, ch)
		close(ch)
	}
	c.mu.Unlock()
	c.cancel(errors.New("web console closed"))
	c.wg.Wait()
	return nil
}

// routes registers the console's handlers.
func (c *Console) routes() {
	m := http.NewServeMux()
	m.Handle("GET /static/", c.static)
	m.HandleFunc("GET /login", c.loginPage)
	m.HandleFunc("GET /login/{secret}", c.useLink)

	auth := func(pattern string, need credential.Scope, h func(http.ResponseWriter, *http.Request, *authn)) {
		m.Handle(pattern, c.authed(need, h))
	}
	// Reading needs read; answering needs approve (an "always" grant
	// needs admin: answer checks it); anything that changes policy or
	// runs something needs admin. A console login may do all of it.
	auth("POST /logout", credential.Read, c.logout)
	auth("GET /{$}", credential.Read, func(w http.ResponseWriter, r *http.Request, _ *authn) {
		http.Redirect(w, r, "/pending", http.StatusSeeOther)
	})
	auth("GET /events", credential.Read, c.events)
	auth("GET /pending", credential.Read, c.pendingPage)
	auth("GET /pending/list", credential.Read, c.pendingFragment)
	auth("POST /pending/{id}/answer", credential.Approve, c.answer)
	auth("GET /sessions", credential.Read, c.sessionsPage)
	auth("POST /sessions", credential.Admin, c.createSession)
	auth("GET /sessions/{key}", credential.Read, c.sessionPage)
	auth("GET /sessions/{key}/runs", credential.Read, c.runsList)
	auth("POST /sessions/{key}/run", credential.Admin, c.runCommand)
	auth("POST /sessions/{key}/yolo", credential.Admin, c.setYolo)
	auth("POST /sessions/{key}/shell/reset", credential.Admin, c.resetShell)
	auth("GET /grants", credential.Read, c.grantsPage)
	auth("POST /grants/revoke", credential.Admin, c.revokeGrant)
	auth("GET /audit", credential.Read, c.auditPage)
	auth("POST /audit/verify", credential.Read, c.verifyChain)
	auth("GET /cron", credential.Read, c.cronPage)
	auth("POST /cron/{name}/run", credential.Admin, c.runCron)
	auth("GET /board", credential.Read, c.boardPage)
	auth("POST /board/{id}/comment", credential.Admin, c.commentTask)
	c.mux = m
}

// ServeHTTP checks the Host header and cross-origin writes, sets the
// security headers, and routes.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if !c.hostAllowed(r) {
		c.log.WarnContext(r.Context(), "refused host", "host", r.Host, "remote", r.RemoteAddr)
		http.Error(w, "host not allowed", http.StatusMisdirectedRequest)
		return
	}
	if err := c.origins.Check(r); err != nil {
		c.log.WarnContext(r.Context(), "refused cross-origin request", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"), "err", err)
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
		return
	}
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	}
	c.mux.ServeHTTP(w, r)
}

// securityHeaders sets the headers every response carries.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}
