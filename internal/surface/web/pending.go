package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/credential"
	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/form"
	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/protect"
	"github.com/wardenhq/warden/internal/shell"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// cardSize is about how many bytes one rendered card takes.
const cardSize = 3 << 10

// maxReason bounds a denial's reason, in bytes.
const maxReason = 500

// requestView is one pending request as its card shows it. It is built
// once per request (a pending request does not change) and cached; only
// the time left is computed per render.
type requestView struct {
	ID, Session, Owner, Kind, Rule string
	// Notice is warden's own note to the human (the reviewer fell back
	// to manual), never text from the agent or a server.
	Notice string
	// SessionURL is the session's page.
	SessionURL string
	// Segments are the analysed command split on finding boundaries;
	// Hit segments lie inside at least one finding's span.
	Segments []segment
	// Normalised is set when the analysed text differs from the
	// command as the agent sent it (control bytes removed, NFKC).
	Normalised bool
	// Detail describes actions that are not shell commands.
	Detail  []detail
	Classes []classView
	Created string
	// DeadlineISO is for the countdown script; DeadlineClock for people.
	DeadlineISO, DeadlineClock string
	deadline                   time.Time
	// Prefix is broker.DefaultPrefix; empty hides the prefix grain.
	Prefix string
	// Left is the server's rendering of the time left, set per render
	// on a copy; the script counts down from DeadlineISO.
	Left string
	// Elicit is set for an MCP server's question: the card shows its
	// message and a form instead of approval buttons.
	Elicit *elicitView
	// Risk is the card's badge: RiskFloor, RiskDangerous or RiskHuman;
	// RiskLabel and RiskTitle are what it says.
	Risk, RiskLabel, RiskTitle string
	// What names the action for people: command, program, write…
	What string
	// CSRF and Back are the list's, set per render on a copy, for the
	// elicitation card's forms (a nested template sees only its card).
	CSRF, Back string
}

// segment is a run of the command text.
type segment struct {
	Text string
	Hit  bool
	// Tier is the most severe tier of the findings covering a hit.
	Tier  string
	Title string
}

type detail struct{ Label, Value string }

type classView struct{ Key, Description, Tier string }

// pendingList is what the live pending fragment renders.
type pendingList struct {
	Requests []requestView
	CSRF     string
	// Back is where answering returns to.
	Back string
}

// pendingData is the pending page.
type pendingData struct {
	Session string
	ListURL string
	List    pendingList
}

// pendingPage renders every pending request (or one session's).
func (c *Console) pendingPage(w http.ResponseWriter, r *http.Request, a *authn) {
	session := r.URL.Query().Get("session")
	list, err := c.listPending(r.Context(), a, session, "/pending"+queryOf("session", session))
	if err != nil {
		c.fail(w, r, err)
		return
	}
	title := fmt.Sprintf("Pending (%d)", len(list.Requests))
	c.execute(w, r, http.StatusOK, "pending", "layout.html", c.pageFor(a, "pending", title, pendingData{
		Session: session,
		ListURL: "/pending/list" + queryOf("session", session, "back", list.Back),
		List:    list,
	}), len(list.Requests)*cardSize)
}

// pendingFragment renders the live list the script swaps in.
func (c *Console) pendingFragment(w http.ResponseWriter, r *http.Request, a *authn) {
	q := r.URL.Query()
	list, err := c.listPending(r.Context(), a, q.Get("session"), q.Get("back"))
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.fragment(w, r, "pending", "pendingItems", list, len(list.Requests)*cardSize)
}

// listPending builds the views of the pending requests of session ("" for
// all).
func (c *Console) listPending(ctx context.Context, a *authn, session, back string) (pendingList, error) {
	reqs, err := c.o.Host.Pending(ctx, session)
	if err != nil {
		return pendingList{}, fmt.Errorf("list pending: %w", err)
	}
	now := c.o.Now()
	views := c.views(reqs)
	out := pendingList{Requests: make([]requestView, len(reqs)), CSRF: c.csrfOf(a), Back: safeNext(back)}
	for i, v := range views {
		out.Requests[i] = *v // a copy: the cached view is shared
		out.Requests[i].Left = left(now, v.deadline)
		out.Requests[i].CSRF, out.Requests[i].Back = out.CSRF, out.Back
	}
	if session == "" {
		c.pruneViews(reqs)
	}
	return out, nil
}

// maxViews bounds the view cache.
const maxViews = 20000

// views returns the cached views of pending requests, building the
// missing ones — in parallel when many arrived at once (decoding the
// analyses is most of a first render).
func (c *Console) views(reqs []store.Request) []*requestView {
	out := make([]*requestView, len(reqs))
	var missing []int
	c.viewsMu.Lock()
	for i, r := range reqs {
		if v, ok := c.viewCache[r.ID]; ok {
			out[i] = v
		} else {
			missing = append(missing, i)
		}
	}
	c.viewsMu.Unlock()
	if len(missing) == 0 {
		return out
	}
	workers := min(runtime.GOMAXPROCS(0), len(missing)/64+1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := w; j < len(missing); j += workers {
				i := missing[j]
				out[i] = viewRequest(reqs[i])
			}
		})
	}
	wg.Wait()
	c.viewsMu.Lock()
	if len(c.viewCache)+len(missing) > maxViews {
		clear(c.viewCache)
	}
	for _, i := range missing {
		c.viewCache[reqs[i].ID] = out[i]
	}
	c.viewsMu.Unlock()
	return out
}

// pruneViews drops the views of requests no longer pending, given the
// full pending list.
func (c *Console) pruneViews(pending []store.Request) {
	c.viewsMu.Lock()
	defer c.viewsMu.Unlock()
	if len(c.viewCache) <= len(pending) {
		return
	}
	keep := make(map[string]bool, len(pending))
	for _, r := range pending {
		keep[r.ID] = true
	}
	for id := range c.viewCache {
		if !keep[id] {
			delete(c.viewCache, id)
		}
	}
}

// viewRequest turns a request into what its card shows.
func viewRequest(r store.Request) *requestView {
	v := &requestView{
		ID: r.ID, Session: r.Session, Owner: r.OwnerText, Kind: string(r.Action.Kind), Rule: r.Rule, Notice: r.Notice,
		SessionURL: sessionURL(r.Session), Created: clock(r.Created),
		DeadlineISO: iso(r.Deadline), DeadlineClock: clock(r.Deadline), deadline: r.Deadline,
	}
	if r.Elicit != nil {
		v.Risk, v.RiskLabel, v.RiskTitle = RiskHuman, "needs a human", "an MCP server asks a question; answering it grants nothing"
		v.Elicit = viewElicit(r.Elicit)
		if r.Action.Kind == action.MCP && (r.Action.Server != "" || r.Action.Tool != "") {
			// The call that made the server ask; the model wrote its
			// arguments, so they are untrusted too.
			v.Detail = append(v.Detail, detail{"during", form.Clean(r.Action.Server+" / "+r.Action.Tool, form.MaxLabel, false)})
			if len(r.Action.Args) > 0 {
				v.Detail = append(v.Detail, detail{"args", form.Clean(string(r.Action.Args), form.MaxHelp, false)})
			}
		}
		return v
	}
	var an *findings
	if len(r.Analysis) > 0 {
		var a findings
		if json.Unmarshal(r.Analysis, &a) == nil {
			an = &a
		}
	}
	switch {
	case r.Action.Kind == action.Shell && an != nil:
		v.Segments = highlight(an.Input, an.Findings)
		v.Normalised = an.Input != r.Action.Command
		v.Prefix = broker.DefaultPrefix(r)
	case r.Action.Kind == action.Shell:
		v.Segments = []segment{{Text: shell.Visible(r.Action.Command)}}
	default:
		v.Detail = details(r.Action)
	}
	if r.Action.Dir != "" {
		v.Detail = append(v.Detail, detail{"in", r.Action.Dir})
	}
	v.Classes = classes(r.Classes, an)
	v.Risk, v.RiskLabel, v.RiskTitle = risk(v.Classes)
	v.What = map[action.Kind]string{action.Shell: "command", action.Code: "program", action.Write: "write",
		action.MCP: "tool call", action.Plugin: "action"}[r.Action.Kind]
	if v.What == "" {
		v.What = "action"
	}
	return v
}

// Risk badges of a card, most severe first.
const (
	// RiskFloor: the action touches a protected path (a secret, a shell
	// startup file, system configuration…) or a hardline class: no mode
	// or bypass would let it through without a human.
	RiskFloor = "floor"
	// RiskDangerous: a dangerous class of the catalogue.
	RiskDangerous = "dangerous"
	// RiskHuman: no class says it is dangerous, but nothing allows it
	// either (an MCP tool without a rule, a write outside the safe
	// roots, an MCP server's question): a human decides.
	RiskHuman = "human"
)

// risk is the badge for a card's classes.
func risk(cls []classView) (kind, label, title string) {
	kind = RiskHuman
	for _, c := range cls {
		_, protected := protect.Lookup(c.Key)
		switch {
		case protected || c.Tier == string(shell.TierHardline) || c.Tier == string(shell.TierFloor):
			return RiskFloor, "floor", "touches a protected path or a hardline class (" + c.Key + "): mode off and yolo do not let it through"
		case c.Tier == string(shell.TierDangerous):
			kind = RiskDangerous
		}
	}
	if kind == RiskDangerous {
		return kind, "dangerous", "matched dangerous classes of the catalogue"
	}
	return kind, "needs a human", "nothing allows it on its own: a human decides"
}

// findings is the part of a shell.Analysis a card shows: decoding only
// it skips the parsed commands' allocations.
type findings struct {
	Input    string          `json:"input"`
	Findings []shell.Finding `json:"findings"`
}

// highlight splits input on the boundaries of the findings' spans. Spans
// outside the text or not on character boundaries are ignored rather than
// trusted to cut a character in two.
func highlight(input string, findings []shell.Finding) []segment {
	valid := func(i int) bool { return i == len(input) || (i >= 0 && i < len(input) && utf8.RuneStart(input[i])) }
	var spans []shell.Finding
	cuts := []int{0, len(input)}
	for _, f := range findings {
		s, e := f.Span.Start, f.Span.End
		if s < 0 || e > len(input) || s >= e || !valid(s) || !valid(e) {
			continue
		}
		spans = append(spans, f)
		cuts = append(cuts, s, e)
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	out := make([]segment, 0, len(cuts))
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		seg := segment{Text: input[a:b]}
		var titles []string
		for _, f := range spans {
			if f.Span.Start <= a && b <= f.Span.End {
				seg.Hit = true
				if seg.Tier != string(shell.TierHardline) {
					seg.Tier = string(f.Tier)
				}
				t := f.Class
				if f.Description != "" {
					t += ": " + f.Description
				}
				if !slices.Contains(titles, t) {
					titles = append(titles, t)
				}
			}
		}
		seg.Title = strings.Join(titles, "; ")
		// As it will run: invisible and look-alike characters escaped.
		seg.Text = shell.Visible(seg.Text)
		if n := len(out); n > 0 && !seg.Hit && !out[n-1].Hit {
			out[n-1].Text += seg.Text
			continue
		}
		out = append(out, seg)
	}
	return out
}

// classes describes the request's class keys as explain does: from the
// catalogue, falling back to the findings' own descriptions.
func classes(keys []string, an *findings) []classView {
	var fs []shell.Finding
	if an != nil {
		fs = an.Findings
	}
	cls := explain.Classes(keys, fs)
	out := make([]classView, len(cls))
	for i, c := range cls {
		out[i] = classView{Key: c.Key, Description: c.Description, Tier: string(c.Tier)}
	}
	return out
}

// details describes an action that is not a shell command.
func details(a action.Action) []detail {
	var out []detail
	add := func(label, v string) {
		if v != "" {
			out = append(out, detail{label, v})
		}
	}
	switch a.Kind {
	case action.Code:
		add("language", a.Language)
		add("code", a.Source)
	case action.Write:
		add("write", a.Path)
		if a.Size > 0 {
			add("size", fmt.Sprintf("%d bytes", a.Size))
		}
	case action.MCP:
		add("tool", a.Server+" / "+a.Tool)
		add("args", string(a.Args))
	case action.Plugin:
		add("plugin", a.Plugin)
		add("rule", a.RuleKey)
		add("reason", a.Reason)
	default:
		add("payload", a.Payload())
	}
	return out
}

// answer resolves one request from a card's buttons. The request is
// read first, so an elicitation is answered only with Submit or Decline
// and an approval only with its own buttons: a mismatch is refused
// before anything is resolved.
func (c *Console) answer(w http.ResponseWriter, r *http.Request, a *authn) {
	id := r.PathValue("id")
	back := safeNext(r.PostFormValue("back"))
	decision := r.PostFormValue("decision")
	switch decision {
	case "once", "session", "always", "deny", "accept", "decline":
	default:
		c.done(w, r, a, back, http.StatusBadRequest, "error", "Choose Approve once, For this session, Always or Deny (for an MCP server's question: Submit or Decline).")
		return
	}
	req, err := c.o.Host.Request(r.Context(), id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.done(w, r, a, back, http.StatusNotFound, "late", "Nothing pending — there is no request "+id+".")
		return
	case err != nil:
		c.log.ErrorContext(r.Context(), "get request", "id", id, "err", err)
		c.done(w, r, a, back, http.StatusInternalServerError, "error", "The answer was not recorded (store error); nothing was approved. Try again.")
		return
	case req.State != store.Pending:
		c.done(w, r, a, back, http.StatusConflict, "late", lateText(req))
		return
	}
	if req.Elicit != nil {
		c.answerElicit(w, r, a, req, decision, back)
		return
	}
	ans := surface.Answer{By: a.identity()}
	if decision == "always" && !a.allows(credential.Admin) {
		c.done(w, r, a, back, http.StatusForbidden, "error", "Not answered: an \"always\" grant changes policy and needs a token with the admin scope; this token may answer once, for the session, or deny.")
		return
	}
	switch decision {
	case "once":
		ans.Approve, ans.Scope = true, store.Once
	case "session":
		ans.Approve, ans.Scope = true, store.Session
	case "always":
		ans.Approve, ans.Scope = true, store.Always
	case "deny":
		ans.Reason = cleanReason(r.PostFormValue("reason"))
	default: // accept, decline
		c.done(w, r, a, back, http.StatusBadRequest, "error", "Request "+id+" asks to approve an action, not to fill in a form: choose Approve once, For this session, Always or Deny.")
		return
	}
	if ans.Approve && ans.Scope != store.Once {
		switch g := r.PostFormValue("grain"); g {
		case "", string(grant.Exact):
			ans.Grain = grant.Exact
		case string(grant.Prefix):
			p, err := prefixPattern(r.PostFormValue("pattern"))
			if err != nil {
				c.done(w, r, a, back, http.StatusBadRequest, "error", "Not answered: "+err.Error()+".")
				return
			}
			ans.Grain, ans.Pattern = grant.Prefix, p
		default:
			c.done(w, r, a, back, http.StatusBadRequest, "error", "Unknown grain "+g+"; choose exact or prefix.")
			return
		}
	}
	c.resolve(w, r, a, back, id, ans)
}

// answerElicit answers an MCP server's question: accept sends the form's
// values, typed by the schema stored with the request; decline (or deny)
// refuses. An elicitation grants nothing, so the approval scopes are
// refused rather than quietly treated as an accept.
func (c *Console) answerElicit(w http.ResponseWriter, r *http.Request, a *authn, req store.Request, decision, back string) {
	ans := surface.Answer{By: a.identity()}
	switch decision {
	case "accept":
		ans.Approve, ans.Scope = true, store.Once
		if req.Elicit.URL == "" { // URL mode: the human says they are done; no content
			fields, err := formFields(req.Elicit.Schema)
			if err != nil {
				c.done(w, r, a, back, http.StatusBadRequest, "error", "Not answered: the console cannot show this form ("+err.Error()+"); you can only decline it.")
				return
			}
			content, err := formContent(fields, r.PostForm)
			if fe := (formError{}); errors.As(err, &fe) {
				c.done(w, r, a, back, http.StatusBadRequest, "error", "Not answered: "+fe.msg+".")
				return
			}
			if err != nil {
				c.fail(w, r, err)
				return
			}
			ans.Content = content
		}
	case "decline", "deny":
		ans.Reason = cleanReason(r.PostFormValue("reason"))
	default:
		c.done(w, r, a, back, http.StatusBadRequest, "error", "Request "+req.ID+" is a question from MCP server “"+form.Clean(req.Elicit.Server, form.MaxLabel, false)+"”: answer it with Submit or Decline. It grants nothing, so once, for this session and always do not apply.")
		return
	}
	c.resolve(w, r, a, back, req.ID, ans)
}

// resolve hands an answer to the broker and tells the human whether it
// counted.
func (c *Console) resolve(w http.ResponseWriter, r *http.Request, a *authn, back, id string, ans surface.Answer) {
	// The human has spoken: the host records the answer even if the
	// browser goes away while the store writes it.
	req, err := c.o.Host.Answer(r.Context(), id, ans)
	switch {
	case errors.Is(err, broker.ErrNotPending):
		c.done(w, r, a, back, http.StatusConflict, "late", lateText(req))
	case errors.Is(err, store.ErrNotFound):
		c.done(w, r, a, back, http.StatusNotFound, "late", "Nothing pending — there is no request "+id+".")
	case errors.Is(err, broker.ErrContent):
		c.done(w, r, a, back, http.StatusBadRequest, "error", "Not answered: "+err.Error()+".")
	case errors.Is(err, broker.ErrNoWaiter):
		c.done(w, r, a, back, http.StatusConflict, "late", "Nothing pending — the asker went away; the request is withdrawn and nothing was approved.")
	case err != nil:
		c.log.ErrorContext(r.Context(), "resolve request", "id", id, "err", err)
		c.done(w, r, a, back, http.StatusInternalServerError, "error", "The answer was not recorded (store error); nothing was approved. Try again.")
	default:
		c.log.InfoContext(r.Context(), "answered", "id", id, "state", req.State, "scope", req.Scope, "grain", req.Grain, "elicitation", req.Elicit != nil)
		c.done(w, r, a, back, http.StatusOK, "ok", answeredText(req, ans.Pattern))
	}
}

// prefixPattern normalises a prefix the human typed: plain words; the
// trailing "*" is implied. Empty lets the broker derive it.
func prefixPattern(p string) (string, error) {
	p = strings.TrimSpace(strings.TrimSuffix(grant.Normalize(p), "*"))
	if p == "" {
		return "", nil
	}
	if strings.Contains(p, "*") {
		return "", errors.New("a prefix is plain words (like “git push”); only the trailing * is implied")
	}
	if _, err := grant.Parse(p + " *"); err != nil {
		return "", fmt.Errorf("unusable prefix: %w", err)
	}
	return p, nil
}

// cleanReason bounds a denial's reason and drops control characters: it
// is shown to the agent and written to the audit log.
func cleanReason(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > maxReason {
		s = s[:maxReason]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// what names a request's action in a notice.
func what(r store.Request) string {
	if r.Elicit != nil {
		return "the question of MCP server “" + form.Clean(r.Elicit.Server, form.MaxLabel, false) + "”"
	}
	s := r.Action.Payload()
	if r.Action.Kind != action.Shell {
		s = string(r.Action.Kind) + " " + s
	}
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:79]) + "…"
	}
	return "“" + s + "”"
}

// answeredText confirms an answer that counted.
func answeredText(r store.Request, pattern string) string {
	if r.Elicit != nil {
		switch r.State {
		case store.Denied:
			return "Declined " + what(r) + "."
		case store.Answered:
			if r.Elicit.URL != "" {
				return "Told MCP server “" + form.Clean(r.Elicit.Server, form.MaxLabel, false) + "” you are done."
			}
			return "Sent your answer to " + what(r) + "."
		}
		return lateText(r)
	}
	if r.State == store.Denied {
		msg := "Denied " + what(r) + "."
		if r.Reason != "" {
			msg += " Reason given to the agent: " + r.Reason
		}
		return msg
	}
	if r.State != store.Answered {
		return lateText(r) // cannot happen: a successful Resolve ends in one of the two
	}
	cover := "this exact command"
	if r.Grain == grant.Prefix {
		if pattern == "" {
			pattern = broker.DefaultPrefix(r)
		}
		cover = "commands starting with “" + pattern + " *”"
	}
	switch r.Scope {
	case store.Session:
		return "Approved " + what(r) + " and, for session " + r.Session + ", " + cover + "."
	case store.Always:
		return "Approved " + what(r) + " and, always, " + cover + "."
	}
	return "Approved " + what(r) + " once."
}

// lateText tells a human their answer came after the request ended. It
// never says "approved": the click did not approve anything
// (invariant 10; the reference system showed expired taps as approved).
func lateText(r store.Request) string {
	base := "Nothing pending — " + what(r)
	switch {
	case r.Elicit != nil && r.State == store.Expired:
		return base + " had expired at " + r.Deadline.Local().Format("15:04:05") + "; nobody answered in time, so the server was told it was cancelled. Your answer was not used."
	case r.Elicit != nil && r.State == store.Answered:
		return base + " was already answered" + by(r) + ". Your answer was not used."
	}
	switch r.State {
	case store.Expired:
		return base + " had expired at " + r.Deadline.Local().Format("15:04:05") + "; nobody answered in time, so it was not run. Your answer was not used."
	case store.Answered:
		return base + " was already answered" + by(r) + " (" + scopeText(r.Scope) + "). Your answer was not used."
	case store.Denied:
		msg := base + " was already denied" + by(r)
		if r.Reason != "" {
			msg += " (reason: " + r.Reason + ")"
		}
		return msg + ". Your answer was not used."
	case store.Withdrawn:
		cause := r.Reason
		if cause == "" {
			cause = "the asker went away"
		}
		return base + " was withdrawn (" + cause + "). Your answer was not used."
	}
	return "Nothing pending for that request. Your answer was not used."
}

// endedText says how a request ended, for cards that are still on screen
// when it ends elsewhere.
func endedText(r store.Request) string {
	if r.Elicit != nil {
		switch r.State {
		case store.Answered:
			return "Answered" + by(r) + "."
		case store.Denied:
			return "Declined" + by(r) + "."
		case store.Expired:
			return "Expired: nobody answered in time; the server was told it was cancelled."
		case store.Withdrawn:
			return "Withdrawn (" + r.Reason + "); the server was told it was cancelled."
		}
	}
	switch r.State {
	case store.Answered:
		return "Approved " + scopeText(r.Scope) + by(r) + "."
	case store.Denied:
		msg := "Denied" + by(r)
		if r.Reason != "" {
			msg += ": " + r.Reason
		}
		return msg + "."
	case store.Expired:
		return "Expired: nobody answered in time; it was not run."
	case store.Withdrawn:
		return "Withdrawn (" + r.Reason + "); it was not run."
	}
	return "Ended."
}

func scopeText(s store.Scope) string {
	switch s {
	case store.Session:
		return "for the session"
	case store.Always:
		return "always"
	}
	return "once"
}

func by(r store.Request) string {
	out := ""
	if r.By != "" {
		out += " by " + r.By
	}
	if r.Surface != "" {
		out += " on " + r.Surface
	}
	return out
}
