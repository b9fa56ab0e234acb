// Package mcpclient calls the tools of the MCP servers configured under
// mcp.servers, with one client session per (owner, server).
//
// # Why a session per owner
//
// An MCP server may ask a question in the middle of a tool call
// (elicitation). The question must reach the human of the owner whose
// call caused it (invariant 4, "answers go home"). In the system warden
// re-implements, that was decided from process-global state, so a chat
// user's question after a cron run went to a terminal with no stdin and
// was denied. Here the Manager keeps a separate client session for each
// owner and server, and the elicitation handler finds the owner from the
// session the request arrived on (req.Session) — never from a context
// value or anything global. On the legacy protocol path the handler's
// context does not even descend from the tool call's, so a context value
// could not work anyway.
//
// # Elicitation
//
// The client advertises form elicitation (and URL elicitation only with
// Options.URLMode). For each request:
//
//   - no session record, or no tool call in flight on that session → decline;
//   - the owner is not attended (no answer channel, or an unattended kind
//     anywhere along its lineage: cron, kanban, single_query…) → decline at
//     once, without calling the Elicitor (invariant 9);
//   - otherwise the Elicitor is asked, bounded by Options.ElicitTimeout, by
//     the end of the session and by the end of the last tool call in
//     flight; an error, a timeout or an unknown action → cancel.
//
// # Protocol versions
//
// The SDK's latest protocol (2026-07-28) lets a server ask only by
// returning InputRequests (multi round trip); a server that calls
// ServerSession.Elicit mid-call fails on it. On 2025-11-25 both styles
// work: the SDK's server shim turns InputRequests into a legacy
// elicitation/create request. So DefaultProtocolVersion is 2025-11-25;
// Options.ProtocolVersion can ask for the latest. Both paths reach the
// same handler with req.Session set, and both are routed by session.
package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/execenv"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/sandbox"
)

// Defaults for zero Options fields.
const (
	// DefaultIdleTimeout is how long an unused session stays open.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultConnectTimeout bounds starting a server and the handshake.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultElicitTimeout bounds one elicitation when the Elicitor's own
	// deadline (the broker's approvals.timeout) does not end it first.
	DefaultElicitTimeout = 10 * time.Minute
	// DefaultProtocolVersion is the protocol version the client asks for:
	// the newest on which servers using either elicitation style work
	// (see the package documentation).
	DefaultProtocolVersion = "2025-11-25"
	// LatestProtocolVersion is the SDK's newest protocol version, on which
	// servers must ask through InputRequests.
	LatestProtocolVersion = "2026-07-28"
)

// terminateDuration is how long a stdio server gets to exit after its
// stdin is closed before it is sent SIGTERM.
const terminateDuration = 5 * time.Second

// Sentinel errors.
var (
	// ErrUnknownServer is returned for a server name not in mcp.servers.
	ErrUnknownServer = errors.New("unknown mcp server")
	// ErrNoOwner is returned when the owner is the zero Owner: no session
	// is ever opened for nobody (invariant 2).
	ErrNoOwner = errors.New("no owner")
	// ErrClosed is returned after Close, and to calls whose session was
	// closed (CloseOwner, Close) while they waited.
	ErrClosed = errors.New("mcp client closed")
)

// Options configures a Manager.
type Options struct {
	// Servers are the configured servers (config.Config's mcp.servers).
	Servers []config.MCPServer
	// Environ is warden's own environment as NAME=VALUE, read once at the
	// edge (cmd/warden). A stdio server's environment is built from it by
	// execenv's allowlist plus the server's Env names; this package never
	// reads the process environment.
	Environ []string
	// Passthrough is tools.env_passthrough: names the operator lets
	// every child have.
	Passthrough []string
	// Elicit asks the owner's human. Nil declines every elicitation.
	Elicit Elicitor
	// IdleTimeout closes a session unused for this long
	// (DefaultIdleTimeout if zero or negative).
	IdleTimeout time.Duration
	// ElicitTimeout bounds one elicitation (DefaultElicitTimeout if zero
	// or negative).
	ElicitTimeout time.Duration
	// ConnectTimeout bounds starting a server (DefaultConnectTimeout if
	// zero or negative).
	ConnectTimeout time.Duration
	// ProtocolVersion is asked for in the handshake
	// (DefaultProtocolVersion if empty); the server may negotiate lower.
	ProtocolVersion string
	// URLMode advertises URL-mode elicitation too. The Elicitor then gets
	// questions with Mode "url" and must show the URL to the human as a
	// link to open themselves, never open it on their behalf. Off by
	// default: without it a URL-mode request is declined.
	URLMode bool
	// Sandbox starts stdio servers (internal/sandbox), like every
	// process warden starts for an agent; nil refuses to start them.
	Sandbox *sandbox.Sandbox
	// Dir is the stdio servers' working directory and writable
	// workspace; "" means the process's own.
	Dir string
	// HTTPClient is used for streamable HTTP servers (the SDK's default
	// client if nil).
	HTTPClient *http.Client
	// Connect, if set, replaces how a server is reached: tests connect
	// in-process fakes (mcptest). Production leaves it nil: stdio servers
	// are started with CommandTransport, URL servers reached with
	// StreamableClientTransport.
	Connect func(ctx context.Context, server config.MCPServer) (mcp.Transport, error)
	// Logger receives session and elicitation events (discarded if nil).
	Logger *slog.Logger
	// Version is reported to servers as the client's version.
	Version string
}

// Manager owns the client sessions. It is safe for concurrent use.
type Manager struct {
	opts    Options
	servers map[string]config.MCPServer
	names   []string // configuration order
	client  *mcp.Client
	log     *slog.Logger

	// ctx ends when the Manager is closed; every session's context
	// descends from it.
	ctx    context.Context
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	closed    bool
	byKey     map[string]*session
	bySession map[*mcp.ClientSession]*session
	// bg counts connect and close work started in the background; Adds
	// happen under mu while !closed, so Close's Wait never races an Add.
	bg sync.WaitGroup
}

// session is one client session: one owner, one server.
type session struct {
	key      string
	notation string // the owner's, for CloseOwner
	server   config.MCPServer

	// ctx ends when the session is closed: pending elicitations and
	// in-flight calls end with it.
	ctx    context.Context
	cancel context.CancelCauseFunc

	ready chan struct{} // closed once connect finished (cs or err set)
	cs    *mcp.ClientSession
	err   error

	// Guarded by Manager.mu.
	owner    owner.Owner // the latest caller's value (its live channel)
	inflight int
	idle     chan struct{} // closed when inflight drops to 0
	timer    *time.Timer
	idleGen  int // which idle period the armed timer belongs to
	closed   bool
}

// New returns a Manager for opts.Servers. It starts nothing: sessions
// are opened on first use.
func New(opts Options) *Manager {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.ElicitTimeout <= 0 {
		opts.ElicitTimeout = DefaultElicitTimeout
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.ProtocolVersion == "" {
		opts.ProtocolVersion = DefaultProtocolVersion
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Manager{
		opts:      opts,
		servers:   make(map[string]config.MCPServer, len(opts.Servers)),
		log:       log.With("component", "mcpclient"),
		byKey:     map[string]*session{},
		bySession: map[*mcp.ClientSession]*session{},
	}
	for _, s := range opts.Servers {
		if _, dup := m.servers[s.Name]; !dup {
			m.names = append(m.names, s.Name)
		}
		m.servers[s.Name] = s
	}
	m.ctx, m.cancel = context.WithCancelCause(context.Background())
	elicit := &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}
	if opts.URLMode {
		elicit.URL = &mcp.URLElicitationCapabilities{}
	}
	m.client = mcp.NewClient(
		&mcp.Implementation{Name: "warden", Version: opts.Version},
		&mcp.ClientOptions{
			ElicitationHandler: m.handleElicit,
			// Advertise elicitation only: no roots (an empty, non-nil
			// Capabilities drops the SDK's default roots capability).
			Capabilities: &mcp.ClientCapabilities{Elicitation: elicit},
			Logger:       m.log,
		},
	)
	return m
}

// Servers returns the configured server names in configuration order.
func (m *Manager) Servers() []string { return slices.Clone(m.names) }

// sessionKey names the session of o on server. The notation includes the
// session key and lineage; whether o can answer is added because an
// attended and an unattended owner with the same notation (an API caller
// with and without a notifier) must never share a session, or one's
// question could be judged by the other.
func sessionKey(o owner.Owner, server string) string {
	att := "-"
	if o.CanAnswer() {
		att = "+"
	}
	return server + "\x00" + att + "\x00" + o.String()
}

// acquire returns o's session on server, opening it if needed, and marks
// one use in flight; release must be called when the use ends.
func (m *Manager) acquire(ctx context.Context, o owner.Owner, server string) (*session, func(), error) {
	if !o.Valid() {
		return nil, nil, fmt.Errorf("mcp server %s: %w", server, ErrNoOwner)
	}
	srv, ok := m.servers[server]
	if !ok {
		return nil, nil, fmt.Errorf("mcp server %q: %w", server, ErrUnknownServer)
	}
	key := sessionKey(o, server)

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, nil, ErrClosed
	}
	s := m.byKey[key]
	if s == nil {
		s = &session{key: key, notation: o.String(), server: srv, ready: make(chan struct{})}
		s.ctx, s.cancel = context.WithCancelCause(m.ctx)
		m.byKey[key] = s
		m.bg.Add(1)
		go func() {
			defer m.bg.Done()
			m.connect(s)
		}()
	}
	// The latest caller's value carries the live answer channel: a web
	// console that reconnected attaches a new one to the same owner.
	s.owner = o
	s.inflight++
	if s.inflight == 1 {
		s.idle = make(chan struct{})
		if s.timer != nil {
			s.timer.Stop()
			s.timer = nil
		}
	}
	m.mu.Unlock()

	release := sync.OnceFunc(func() { m.release(s) })
	select {
	case <-s.ready:
	case <-ctx.Done():
		release()
		return nil, nil, fmt.Errorf("mcp server %s: %w", server, context.Cause(ctx))
	}
	if s.err != nil {
		release()
		return nil, nil, s.err
	}
	return s, release, nil
}

// release ends one use of s and arms the idle timer after the last.
func (m *Manager) release(s *session) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.inflight--
	if s.inflight > 0 {
		return
	}
	close(s.idle)
	if s.closed || s.err != nil || m.closed {
		return
	}
	s.idleGen++
	gen := s.idleGen
	s.timer = time.AfterFunc(m.opts.IdleTimeout, func() { m.expire(s, gen) })
}

// expire closes s if it is still unused when its idle timer fires. gen
// tells a timer that fired while a later use stopped it (and is still
// waiting for mu) from the timer of the current idle period.
func (m *Manager) expire(s *session, gen int) {
	m.mu.Lock()
	if s.inflight > 0 || s.closed || m.closed || gen != s.idleGen {
		m.mu.Unlock()
		return
	}
	cs := m.detach(s, errors.New("idle"))
	m.bg.Add(1)
	m.mu.Unlock()
	defer m.bg.Done()
	m.closeClient(s, cs)
}

// connect opens s's client session. It runs in the background so that
// a caller whose context ends stops waiting without cancelling the start
// other callers of the same session are waiting for.
func (m *Manager) connect(s *session) {
	cs, err := m.dial(s)
	m.mu.Lock()
	switch {
	case err != nil:
		s.err = fmt.Errorf("start mcp server %s: %w", s.server.Name, err)
		if m.byKey[s.key] == s {
			delete(m.byKey, s.key) // the next call tries again
		}
		s.closed = true
		s.cancel(s.err)
	case s.closed:
		s.err = fmt.Errorf("mcp server %s: %w", s.server.Name, ErrClosed)
	default:
		s.cs = cs
		m.bySession[cs] = s
		// Watch for the server going away on its own (a crashed stdio
		// server): its session is dropped so the next call starts anew
		// instead of failing until the idle timeout.
		m.bg.Add(1)
		go func(cs *mcp.ClientSession) {
			defer m.bg.Done()
			m.watch(s, cs)
		}(cs)
		cs = nil // kept
	}
	close(s.ready)
	m.mu.Unlock()
	if cs != nil {
		m.closeClient(s, cs) // closed while starting
	}
	if err != nil {
		m.log.Warn("mcp server failed to start", "server", s.server.Name, "error", err)
	} else {
		m.log.Debug("mcp session opened", "server", s.server.Name)
	}
}

// watch waits for cs to end and, if nobody closed it, drops s.
func (m *Manager) watch(s *session, cs *mcp.ClientSession) {
	err := cs.Wait()
	m.mu.Lock()
	if s.closed {
		m.mu.Unlock()
		return
	}
	m.detach(s, fmt.Errorf("server ended the session: %v", err))
	m.mu.Unlock()
	m.log.Warn("mcp server ended the session", "server", s.server.Name, "error", err)
	m.closeClient(s, cs) // releases the process or connection
}

// dial starts the server and runs the handshake.
func (m *Manager) dial(s *session) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(s.ctx, m.opts.ConnectTimeout)
	defer cancel()
	t, stderr, err := m.transport(ctx, s.server, s.notation)
	if err != nil {
		return nil, err
	}
	cs, err := m.client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: m.opts.ProtocolVersion})
	if err != nil && stderr != nil {
		if tail := stderr.tail(); tail != "" {
			err = fmt.Errorf("%w; its stderr ends: %s", err, tail)
		}
	}
	return cs, err
}

// transport returns how to reach server, and for a stdio server the
// logger of its stderr.
func (m *Manager) transport(ctx context.Context, server config.MCPServer, ownerText string) (mcp.Transport, *lineLogger, error) {
	if m.opts.Connect != nil {
		t, err := m.opts.Connect(ctx, server)
		return t, nil, err
	}
	switch {
	case server.URL != "":
		return &mcp.StreamableClientTransport{Endpoint: server.URL, HTTPClient: m.opts.HTTPClient}, nil, nil
	case len(server.Command) > 0:
		stderr := &lineLogger{log: m.log, server: server.Name}
		if m.opts.Sandbox == nil {
			return nil, nil, fmt.Errorf("server %s: no sandbox to start it in", server.Name)
		}
		return &sandboxTransport{sb: m.opts.Sandbox, spec: m.command(server, stderr, ownerText)}, stderr, nil
	}
	return nil, nil, fmt.Errorf("server %s has neither command nor url", server.Name)
}

// command builds a stdio server's process. Its environment is built
// from the allowlist plus the names the server's config lists — never
// inherited (invariant 3): a nil Env would hand the server warden's whole
// environment, session markers and credentials included. It runs in
// Options.Dir, its workspace.
func (m *Manager) command(server config.MCPServer, stderr *lineLogger, ownerText string) sandbox.Spec {
	return sandbox.Spec{
		Path: server.Command[0], Args: server.Command[1:],
		Env: execenv.Build(m.opts.Environ, append(slices.Clone(m.opts.Passthrough), server.Env...), nil),
		Dir: m.opts.Dir, Stderr: stderr, Owner: ownerText,
	}
}

// detach removes s from the maps and ends its context; the caller holds
// mu and closes the returned client session (if any) after unlocking.
func (m *Manager) detach(s *session, cause error) *mcp.ClientSession {
	if s.closed {
		return nil
	}
	s.closed = true
	if m.byKey[s.key] == s {
		delete(m.byKey, s.key)
	}
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.cancel(fmt.Errorf("mcp session closed: %w", cause))
	if s.cs != nil {
		delete(m.bySession, s.cs)
	}
	return s.cs
}

// closeClient closes cs and waits for it to end.
func (m *Manager) closeClient(s *session, cs *mcp.ClientSession) {
	if cs == nil {
		return
	}
	if err := cs.Close(); err != nil {
		m.log.Debug("mcp session close", "server", s.server.Name, "error", err)
	}
	m.log.Debug("mcp session closed", "server", s.server.Name)
}

// CloseOwner closes every session of o (all servers, with or without
// an answer channel), ending its calls and pending elicitations, and
// waits for them to close or ctx to end. Call it when the owner's
// session, run or task ends.
func (m *Manager) CloseOwner(ctx context.Context, o owner.Owner) error {
	if !o.Valid() {
		return nil
	}
	n := o.String()
	m.mu.Lock()
	var todo []*session
	for _, s := range m.byKey {
		if s.notation == n {
			todo = append(todo, s)
		}
	}
	return m.closeSessions(ctx, todo, fmt.Errorf("owner %s closed", n))
}

// closeSessions detaches todo (the caller holds mu, which this releases)
// and closes them concurrently.
func (m *Manager) closeSessions(ctx context.Context, todo []*session, cause error) error {
	type pair struct {
		s  *session
		cs *mcp.ClientSession
	}
	var work []pair
	for _, s := range todo {
		if cs := m.detach(s, cause); cs != nil {
			work = append(work, pair{s, cs})
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range work {
		wg.Go(func() { m.closeClient(p.s, p.cs) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("close mcp sessions: %w", context.Cause(ctx))
	}
}

// Close closes every session and waits for them, and for sessions still
// starting, to end. The Manager cannot be used afterwards.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	todo := make([]*session, 0, len(m.byKey))
	for _, s := range m.byKey {
		todo = append(todo, s)
	}
	err := m.closeSessions(context.Background(), todo, ErrClosed)
	m.cancel(ErrClosed) // aborts sessions still starting
	m.bg.Wait()
	return err
}

// lineLogger logs a stdio server's stderr, one debug record per line,
// and keeps the last lines so a server that fails to start says why.
type lineLogger struct {
	log    *slog.Logger
	server string
	mu     sync.Mutex
	buf    []byte
	last   []string
}

// keepLines is how many stderr lines a start error quotes.
const keepLines = 5

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := slices.Index(l.buf, '\n')
		if i < 0 {
			break
		}
		l.line(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
	// A server that never writes a newline must not grow this forever.
	if len(l.buf) > 4096 {
		l.line(string(l.buf))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

func (l *lineLogger) line(s string) {
	l.log.Debug("mcp server stderr", "server", l.server, "line", s)
	if s = strings.TrimSpace(s); s == "" {
		return
	}
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	l.last = append(l.last, s)
	if len(l.last) > keepLines {
		l.last = l.last[1:]
	}
}

// tail returns the last lines, joined.
func (l *lineLogger) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := slices.Clone(l.last)
	if len(l.buf) > 0 {
		last = append(last, strings.TrimSpace(string(l.buf)))
	}
	return strings.Join(last, " | ")
}
