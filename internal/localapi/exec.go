package localapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/runner"
	"github.com/wardenhq/warden/internal/store"
)

// consoleChannel is the default answer channel of a web session when the
// host gives none: its human answers on the web console or with warden
// approvals, over this API. It exists only inside the host.
type consoleChannel struct{}

// Surface implements owner.AnswerChannel.
func (consoleChannel) Surface() string { return "web" }

// errClientGone is the cause of a withdrawal when the exec client hangs
// up while its question is pending.
var errClientGone = errors.New("the warden exec client disconnected")

// exec runs one shell command as a web session and streams what happens
// as NDJSON events. The owner is bound here, at the edge, from the
// session key the operator gave; the session row is created on first
// use. If the client disconnects, the request's context ends: a pending
// question is withdrawn and a running command is killed.
func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	var req ExecRequest
	if !decode(w, r, &req) {
		return
	}
	switch {
	case strings.TrimSpace(req.Command) == "":
		writeError(w, http.StatusBadRequest, "empty command")
		return
	case req.Session == "":
		writeError(w, http.StatusBadRequest, "no session key")
		return
	case req.Dir != "" && !filepath.IsAbs(req.Dir):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("dir %q is not absolute", req.Dir))
		return
	}
	// The owner the console's composer uses too (gateway:web/SESSION): one
	// session with one queue and one set of grants.
	o, err := owner.Web(req.Session, s.o.Channel)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if status, err := s.session(r.Context(), o); err != nil {
		if status == http.StatusInternalServerError {
			s.fail(w, r, "open session", err)
			return
		}
		writeError(w, status, err.Error())
		return
	}

	peer := mustPeer(r.Context()).String()
	s.serveStream(w, r, o, errClientGone, func(ctx context.Context, st *stream) (*runner.Pending, func()) {
		s.log.InfoContext(ctx, "exec", "session", req.Session, "peer", peer)
		p, rest := s.o.Runner.ShellStart(broker.WithNotify(ctx, s.pending(st)), req.Command, req.Dir, st.writer(EventStdout), st.writer(EventStderr))
		return p, func() {
			out, code, err := rest()
			st.sendOutcome(out, code, err)
			if err != nil && !out.Allowed {
				s.log.WarnContext(ctx, "exec not authorised", "session", req.Session, "err", err)
			}
		}
	})
}

// sendOutcome sends a run's last event: denied, error or exit.
func (st *stream) sendOutcome(out runner.Outcome, code int, err error) {
	switch {
	case !out.Allowed:
		st.send(deniedEvent(out))
	case err != nil:
		st.send(Event{Event: EventError, Message: err.Error()})
	default:
		st.send(Event{Event: EventExit, Code: &code})
	}
}

// mustPeer is the identity ServeHTTP proved for the request.
func mustPeer(ctx context.Context) Identity { return identity(ctx) }

// session creates the session's row on first use, and refuses a key
// that belongs to another owner (a terminal session, a chat) or that has
// ended: exec and external agents must not borrow another session's
// grants or yolo.
func (s *Server) session(ctx context.Context, o owner.Owner) (int, error) {
	ownerJSON, err := json.Marshal(o)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	row := store.SessionRow{Key: o.SessionKey(), Owner: ownerJSON, OwnerText: o.String(), Created: s.o.Now()}
	if err := s.o.Store.UpsertSession(ctx, row); err != nil {
		return http.StatusInternalServerError, err
	}
	got, err := s.o.Store.GetSession(ctx, row.Key)
	if err != nil {
		return http.StatusInternalServerError, err
	}
	switch {
	case got.OwnerText != row.OwnerText:
		return http.StatusConflict, fmt.Errorf("session %q belongs to %s, not to %s", row.Key, got.OwnerText, row.OwnerText)
	case !got.Ended.IsZero():
		return http.StatusConflict, fmt.Errorf("session %q ended at %s", row.Key, got.Ended.Format("2006-01-02 15:04:05Z07:00"))
	}
	return 0, nil
}

// deniedEvent says why an action did not run.
func deniedEvent(out runner.Outcome) Event {
	e := Event{Event: EventDenied, Message: out.Message, Rule: out.Decision.Rule}
	if out.Request != nil {
		e.State = string(out.Request.State)
	}
	if e.Message == "" {
		e.Message = "warden blocked this action"
	}
	return e
}

// writer is an io.Writer that sends each chunk as an event of type kind.
func (st *stream) writer(kind string) writerFunc {
	return func(p []byte) (int, error) {
		e := Event{Event: kind}
		if utf8.Valid(p) {
			e.Data = string(p)
		} else {
			e.B64 = base64.StdEncoding.EncodeToString(p)
		}
		st.send(e)
		return len(p), nil
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
