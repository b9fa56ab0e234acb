package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/llm"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// Run states.
const (
	runStarted = "running" // deciding, asking or running
	runDone    = "done"    // ran; Exit is its exit code
	runBlocked = "blocked" // not run: denied, expired or withdrawn
	runFailed  = "error"   // could not be authorised or started
)

// Bounds on an agent run's transcript: the model and the tools' output
// are untrusted and unbounded.
const (
	maxSteps    = 200      // steps a transcript keeps (the latest)
	maxStepText = 4000     // bytes of a reply or notice shown
	maxStepArgs = 1000     // bytes of a tool call's arguments shown
	maxStepOut  = 2000     // bytes of a tool result shown (head and tail)
	maxMessage  = 16 << 10 // bytes of a composer message
	busyText    = "the agent is still working on the previous message"
	noModelText = "No model configured: set llm.base_url and llm.model in the config file (README: Agents)."
)

// errBusy: the session's agent is still on its previous message.
var errBusy = errors.New(busyText)

// run is one composer line: a shell command, or a message to the agent
// (agent set). Its fields are guarded by Console.mu; out guards itself.
type run struct {
	id      int
	session string
	command string // the command, or the message to the agent
	agent   bool
	started time.Time
	ended   time.Time
	state   string
	request string // the pending request it asked, if any
	message string
	exit    int
	out     *surface.Output
	steps   []transcriptStep // an agent run's transcript
	dropped int              // steps dropped from its start to keep maxSteps
}

// transcriptStep is one event of an agent run as its transcript shows it.
type transcriptStep struct {
	Kind    string // a surface.StepKind
	Tool    string
	Args    string
	Text    string
	Request string
}

// addStep records an agent event, bounded and made safe to show. The
// model writes tool arguments and replies, and tools print anything, so
// all of it is treated as untrusted text.
func (ru *run) addStep(e surface.Step) {
	st := transcriptStep{Kind: string(e.Kind), Tool: form.Clean(e.Tool, form.MaxLabel, false), Request: e.Request}
	switch e.Kind {
	case surface.StepToolCall:
		st.Args = form.Clean(e.Args, maxStepArgs, true)
	case surface.StepToolResult:
		st.Text = abbreviate(form.Clean(e.Text, 4*surface.MaxOutput, true), maxStepOut)
	case surface.StepPending:
		ru.request = e.Request
		st.Text = form.Clean(e.Text, maxStepText, true)
	default:
		st.Text = form.Clean(e.Text, maxStepText, true)
	}
	if len(ru.steps) >= maxSteps {
		ru.steps = ru.steps[1:]
		ru.dropped++
	}
	ru.steps = append(ru.steps, st)
}

// abbreviate keeps the head and the tail of a long text, half of limit
// each.
func abbreviate(s string, limit int) string { return surface.Abbreviate(s, limit, limit/2) }

// outputText is a run's output as its page shows it: valid UTF-8,
// saying where it was cut.
func outputText(o *surface.Output) string {
	s := strings.ToValidUTF8(o.String(), "\uFFFD")
	if o.Truncated() {
		s += "\n… output truncated"
	}
	return s
}

// runView is a run as its list shows it.
type runView struct {
	ID      int
	Key     string // changes whenever the view does, so the script swaps it
	Command string
	// Agent marks a message to the agent; Steps is its transcript and
	// Dropped how many earlier steps it no longer shows.
	Agent   bool
	Steps   []transcriptStep
	Dropped int
	Started time.Time
	Ended   time.Time
	State   string
	Request string
	Message string
	Exit    int
	Output  string
}

// sessionView is one row of the sessions page.
type sessionView struct {
	store.SessionRow
	Pending int
	Web     bool
}

// sessionsData is the sessions page.
type sessionsData struct {
	Sessions []sessionView
}

// sessionData is one session's page.
type sessionData struct {
	Session  sessionView
	ListURL  string
	RunsURL  string
	Queue    pendingList
	Composer bool
	// Model says whether composer messages go to an agent with a
	// configured model; Shell whether "!cmd" lines can run.
	Model, Shell bool
	// ShellReset shows the "Reset shell" button.
	ShellReset bool
	Runs       []runView
}

// sessionsPage lists the known sessions with their pending counts.
func (c *Console) sessionsPage(w http.ResponseWriter, r *http.Request, a *authn) {
	rows, err := c.o.Store.ListSessions(r.Context())
	if err != nil {
		c.fail(w, r, fmt.Errorf("list sessions: %w", err))
		return
	}
	pending, err := c.o.Host.Pending(r.Context(), "")
	if err != nil {
		c.fail(w, r, fmt.Errorf("list pending: %w", err))
		return
	}
	count := map[string]int{}
	for _, p := range pending {
		count[p.Session]++
	}
	d := sessionsData{Sessions: make([]sessionView, 0, len(rows))}
	for _, row := range rows {
		d.Sessions = append(d.Sessions, sessionView{SessionRow: row, Pending: count[row.Key], Web: isWebSession(row)})
	}
	c.render(w, r, http.StatusOK, "sessions", c.pageFor(a, "sessions", "Sessions", d))
}

// sessionPage shows one session: its queue, its composer and its runs.
func (c *Console) sessionPage(w http.ResponseWriter, r *http.Request, a *authn) {
	key := r.PathValue("key")
	row, err := c.o.Store.GetSession(r.Context(), key)
	if errors.Is(err, store.ErrNotFound) {
		c.setFlash(a, "error", "There is no session "+key+".")
		http.Redirect(w, r, "/sessions", http.StatusSeeOther)
		return
	}
	if err != nil {
		c.fail(w, r, fmt.Errorf("get session %s: %w", key, err))
		return
	}
	here := sessionURL(key)
	queue, err := c.listPending(r.Context(), a, key, here)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	d := sessionData{
		Session:    sessionView{SessionRow: row, Pending: len(queue.Requests), Web: isWebSession(row)},
		ListURL:    "/pending/list" + queryOf("session", key, "back", here),
		RunsURL:    here + "/runs",
		Queue:      queue,
		Composer:   isWebSession(row) && row.Ended.IsZero(),
		Model:      c.o.Host.Agent(),
		Shell:      true,
		Runs:       c.runViews(key),
		ShellReset: c.o.ShellReset != nil,
	}
	c.render(w, r, http.StatusOK, "session", c.pageFor(a, "sessions", "Session "+key, d))
}

// runsList renders a session's runs for the script.
func (c *Console) runsList(w http.ResponseWriter, r *http.Request, _ *authn) {
	c.fragment(w, r, "session", "runItems", c.runViews(r.PathValue("key")), 0)
}

// sessionURL is a session's page; the key is one escaped path segment,
// slashes included.
func sessionURL(key string) string { return "/sessions/" + url.PathEscape(key) }

// isWebSession reports whether a session is one of the console's own:
// owner gateway:web/KEY with session KEY. Only those get a composer, so a
// command typed here never runs as a chat or terminal session.
func isWebSession(row store.SessionRow) bool {
	o, err := owner.Parse(row.OwnerText)
	if err != nil {
		return false
	}
	_, hasParent := o.Parent()
	return o.Kind() == owner.KindGateway && o.Platform() == Platform && o.Chat() == row.Key && o.User() == "" &&
		o.SessionKey() == row.Key && !hasParent
}

// webOwner is the owner of a command typed in session key's composer:
// gateway:web/KEY, session KEY, answered on this console.
func (c *Console) webOwner(key string) (owner.Owner, error) { return owner.Web(key, c) }

// createSession creates a web session with the key the human chose.
func (c *Console) createSession(w http.ResponseWriter, r *http.Request, a *authn) {
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		c.done(w, r, a, "/sessions", http.StatusBadRequest, "error", "Give the new session a key.")
		return
	}
	o, err := c.webOwner(key)
	if err != nil {
		c.done(w, r, a, "/sessions", http.StatusBadRequest, "error", "Not a usable session key: "+err.Error()+".")
		return
	}
	ownerJSON, err := json.Marshal(o)
	if err != nil {
		c.fail(w, r, fmt.Errorf("encode owner: %w", err))
		return
	}
	if err := c.o.Store.UpsertSession(r.Context(), store.SessionRow{
		Key: key, Owner: ownerJSON, OwnerText: o.String(), Created: c.o.Now(),
	}); err != nil {
		c.fail(w, r, fmt.Errorf("create session %s: %w", key, err))
		return
	}
	row, err := c.o.Store.GetSession(r.Context(), key)
	if err != nil {
		c.fail(w, r, fmt.Errorf("get session %s: %w", key, err))
		return
	}
	if !isWebSession(row) {
		c.done(w, r, a, "/sessions", http.StatusConflict, "error", "Session "+key+" already exists and belongs to "+row.OwnerText+"; choose another key.")
		return
	}
	c.done(w, r, a, sessionURL(key), http.StatusOK, "ok", "Session "+key+" is ready: type a command below.")
}

// setYolo turns session yolo on or off.
func (c *Console) setYolo(w http.ResponseWriter, r *http.Request, a *authn) {
	key := r.PathValue("key")
	on := r.PostFormValue("on") == "true"
	if err := c.o.Store.SetYolo(r.Context(), key, on); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			c.done(w, r, a, "/sessions", http.StatusNotFound, "error", "There is no session "+key+".")
			return
		}
		c.fail(w, r, fmt.Errorf("set yolo %s: %w", key, err))
		return
	}
	c.log.InfoContext(r.Context(), "session yolo", "session", key, "on", on)
	msg := "Yolo is off for session " + key + ": dangerous commands ask again."
	if on {
		msg = "Yolo is ON for session " + key + ": dangerous commands run without asking (hardline and deny rules still apply)."
	}
	c.done(w, r, a, sessionURL(key), http.StatusOK, "ok", msg)
}

// resetShell clears a session's terminal shell state: its working
// directory, exported variables, functions and aliases.
func (c *Console) resetShell(w http.ResponseWriter, r *http.Request, a *authn) {
	key := r.PathValue("key")
	if c.o.ShellReset == nil {
		c.done(w, r, a, sessionURL(key), http.StatusServiceUnavailable, "error", "This host keeps no shell state.")
		return
	}
	if err := c.o.ShellReset(r.Context(), key); err != nil {
		c.fail(w, r, fmt.Errorf("reset shell %s: %w", key, err))
		return
	}
	c.log.InfoContext(r.Context(), "session shell state reset", "session", key)
	c.done(w, r, a, sessionURL(key), http.StatusOK, "ok", "The shell of session "+key+" was reset: its next command starts in a fresh shell.")
}

// runCommand starts a composer line as the web session: a line
// starting with "!" is a shell command, any other line a message to the
// agent. Either continues in the background (its approvals may be
// answered on this very page); the page follows it live.
func (c *Console) runCommand(w http.ResponseWriter, r *http.Request, a *authn) {
	key := r.PathValue("key")
	here := sessionURL(key)
	line := strings.TrimSpace(r.PostFormValue("line"))
	cmd, isShell := strings.CutPrefix(line, "!")
	cmd = strings.TrimSpace(cmd)
	switch {
	case line == "":
		c.done(w, r, a, here, http.StatusBadRequest, "error", "Type a message for the agent, or a command like !ls -la.")
		return
	case isShell && cmd == "":
		c.done(w, r, a, here, http.StatusBadRequest, "error", "Type a command after the !, like !ls -la.")
		return
	case !isShell && !c.o.Host.Agent():
		c.done(w, r, a, here, http.StatusServiceUnavailable, "error", noModelText+" Lines starting with ! run as shell commands.")
		return
	case !isShell && len(line) > maxMessage:
		c.done(w, r, a, here, http.StatusRequestEntityTooLarge, "error", fmt.Sprintf("The message is longer than %d bytes.", maxMessage))
		return
	}
	row, err := c.o.Store.GetSession(r.Context(), key)
	if errors.Is(err, store.ErrNotFound) {
		c.done(w, r, a, "/sessions", http.StatusNotFound, "error", "There is no session "+key+".")
		return
	}
	if err != nil {
		c.fail(w, r, fmt.Errorf("get session %s: %w", key, err))
		return
	}
	if !isWebSession(row) || !row.Ended.IsZero() {
		c.done(w, r, a, here, http.StatusConflict, "error", "Session "+key+" is not an open web session; commands run only as web sessions.")
		return
	}
	o, err := c.webOwner(key)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	if !isShell {
		ru, err := c.startRun(o, line, true)
		if errors.Is(err, errBusy) {
			c.done(w, r, a, here, http.StatusConflict, "error", "Not sent: "+busyText+" (run "+fmt.Sprint(ru.id)+"). Answer or wait for it first.")
			return
		}
		if err != nil {
			c.done(w, r, a, here, http.StatusServiceUnavailable, "error", "Not sent: "+err.Error()+".")
			return
		}
		c.log.InfoContext(r.Context(), "composer message", "session", key, "run", ru.id)
		c.done(w, r, a, here, http.StatusAccepted, "ok", fmt.Sprintf("Run %d: the agent is working on your message.", ru.id))
		return
	}
	ru, err := c.startRun(o, cmd, false)
	if err != nil {
		c.done(w, r, a, here, http.StatusServiceUnavailable, "error", "Not started: "+err.Error()+".")
		return
	}
	c.log.InfoContext(r.Context(), "composer run", "session", key, "run", ru.id)
	c.done(w, r, a, here, http.StatusAccepted, "ok", fmt.Sprintf("Run %d started: %s", ru.id, cmd))
}

// startRun registers a run and starts it in the background, bound to the
// console's lifetime, not the request's. A session has at most one agent
// run in flight: its messages continue one conversation, and a second
// message while the first is being worked on returns errBusy with the
// run in flight.
func (c *Console) startRun(o owner.Owner, line string, toAgent bool) (*run, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("the console is closing")
	}
	key := o.SessionKey()
	if busy := c.talking[key]; toAgent && busy != nil {
		return busy, errBusy
	}
	if c.active >= maxActiveRuns {
		return nil, fmt.Errorf("%d commands are already in flight", c.active)
	}
	c.active++
	c.nextRun++
	ru := &run{id: c.nextRun, session: key, command: line, agent: toAgent, started: c.o.Now(), state: runStarted, out: &surface.Output{}}
	rs := append(c.runs[key], ru)
	if len(rs) > maxRunsPerSession {
		rs = rs[len(rs)-maxRunsPerSession:]
	}
	c.runs[key] = rs
	c.publishLocked(event{Type: "run", Data: runEvent{Session: key, Run: ru.id, State: ru.state}})
	c.wg.Add(1)
	if toAgent {
		c.talking[key] = ru
		go c.converse(o, ru)
	} else {
		go c.shell(o, ru)
	}
	return ru, nil
}

// shell runs one composer command as its owner and records the outcome.
func (c *Console) shell(o owner.Owner, ru *run) {
	defer c.wg.Done()
	asking := broker.Notifying(o, func(req store.Request) {
		c.updateRun(ru, func() { ru.request = req.ID })
	})
	out, err := c.o.Host.Shell(c.ctx, asking, ru.command, ru.out, ru.out)
	c.updateRun(ru, func() {
		c.active--
		ru.ended = c.o.Now()
		switch {
		case err != nil:
			ru.state, ru.message = runFailed, out.Message
		case !out.Ran:
			ru.state, ru.message = runBlocked, out.Message
		default:
			ru.state, ru.exit = runDone, out.Exit
		}
	})
	if err != nil {
		c.log.WarnContext(c.ctx, "composer run failed", "run", ru.id, "session", ru.session, "err", err)
	}
}

// converse runs one message through the agent as its owner, continuing
// the session's conversation, and records each event in the run's
// transcript as it happens.
func (c *Console) converse(o owner.Owner, ru *run) {
	defer c.wg.Done()
	emit := func(e surface.Step) {
		c.updateRun(ru, func() { ru.addStep(e) })
	}
	res, err := c.o.Host.Converse(c.ctx, o, ru.session, ru.command, emit)
	c.updateRun(ru, func() {
		c.active--
		if c.talking[ru.session] == ru {
			delete(c.talking, ru.session)
		}
		ru.ended = c.o.Now()
		switch {
		case err != nil:
			ru.state, ru.message = runFailed, agentError(err)
		default:
			ru.state = runDone
			if res.Blocked > 0 {
				ru.message = fmt.Sprintf("%d of %d tool calls were refused.", res.Blocked, res.Calls)
			}
		}
	})
	if err != nil {
		c.log.WarnContext(c.ctx, "agent run failed", "run", ru.id, "session", ru.session, "err", err)
	}
}

// agentError says why an agent run stopped, for the human.
func agentError(err error) string {
	switch {
	case errors.Is(err, surface.ErrNoModel), errors.Is(err, llm.ErrNotConfigured):
		return noModelText
	case errors.Is(err, llm.ErrUnavailable):
		return "The model is unavailable: " + form.Clean(err.Error(), maxStepText, false)
	case errors.Is(err, llm.ErrRefused):
		return "The model refused the request: " + form.Clean(err.Error(), maxStepText, false)
	}
	return form.Clean(err.Error(), maxStepText, false)
}

// updateRun changes a run under the lock and tells the streams.
func (c *Console) updateRun(ru *run, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
	c.publishLocked(event{Type: "run", Data: runEvent{Session: ru.session, Run: ru.id, State: ru.state}})
}

// runViews snapshots a session's runs, newest first.
func (c *Console) runViews(key string) []runView {
	c.mu.Lock()
	rs := append([]*run(nil), c.runs[key]...)
	views := make([]runView, 0, len(rs))
	for i := len(rs) - 1; i >= 0; i-- {
		ru := rs[i]
		views = append(views, runView{
			ID: ru.id, Command: ru.command, Started: ru.started, Ended: ru.ended, State: ru.state,
			Request: ru.request, Message: ru.message, Exit: ru.exit,
			Agent: ru.agent, Steps: slices.Clone(ru.steps), Dropped: ru.dropped,
		})
	}
	c.mu.Unlock()
	for i := range views {
		ru := rs[len(rs)-1-i]
		views[i].Output = outputText(ru.out)
		views[i].Key = fmt.Sprintf("run-%d-%s-%s-%d-%d", views[i].ID, views[i].State, views[i].Request, len(views[i].Output), len(views[i].Steps)+views[i].Dropped)
	}
	return views
}
