package localapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/store"
)

// Dispatcher is the host's kanban dispatcher as the admin API uses it:
// told to look at the board at once when a task became ready.
type Dispatcher interface {
	Poke()
}

// KanbanAddRequest is the body of POST /v1/kanban.
type KanbanAddRequest struct {
	Title string `json:"title"`
	Body  string `json:"body,omitempty"`
	// After are the parent task ids: the task is ready when all are done.
	After []string `json:"after,omitempty"`
	// Workspace is "" or "scratch" (a fresh directory under the host's
	// scratch directory) or "dir:/abs/path".
	Workspace string `json:"workspace,omitempty"`
	// Steps are the script's shell command lines, run in order.
	Steps []string `json:"steps"`
	// Prompt, instead of Steps, makes a prompt task: the worker runs the
	// agent with it.
	Prompt string `json:"prompt,omitempty"`
}

// KanbanCommentRequest is the body of POST /v1/kanban/{id}/comments.
type KanbanCommentRequest struct {
	Body string `json:"body"`
}

// KanbanMoveRequest is the body of POST /v1/kanban/{id}/{verb} (block,
// unblock, done): Reason, if set, becomes a comment (and a blocked
// task's last error).
type KanbanMoveRequest struct {
	Reason string `json:"reason,omitempty"`
}

// kanbanRoutes registers the kanban endpoints.
func (s *Server) kanbanRoutes() {
	s.mux.HandleFunc("GET /v1/kanban", s.onBoard(s.kanbanList))
	s.mux.HandleFunc("POST /v1/kanban", s.onBoard(s.kanbanAdd))
	s.mux.HandleFunc("GET /v1/kanban/{id}", s.onBoard(s.kanbanShow))
	s.mux.HandleFunc("POST /v1/kanban/{id}/comments", s.onBoard(s.kanbanComment))
	s.mux.HandleFunc("POST /v1/kanban/{id}/{verb}", s.onBoard(s.kanbanMove))
	s.mux.HandleFunc("POST /v1/kanban/{id}/remote", s.kanbanRemote)
}

// KanbanRemoteRequest is the body of POST /v1/kanban/{id}/remote.
type KanbanRemoteRequest struct {
	// TTLSeconds is how long the token waits for the worker's hello;
	// zero means the host's default (10 minutes).
	TTLSeconds int64 `json:"ttl_seconds,omitempty"`
}

// KanbanRemote is a task issued to a remote worker: the run it was
// claimed for, the one-time token bound to both (shown once, kept
// hashed), and where and how the worker connects.
type KanbanRemote struct {
	Task    string    `json:"task"`
	Run     string    `json:"run"`
	Token   string    `json:"token"`
	Expires time.Time `json:"expires_at"`
	// Addr is the TLS listener and Fingerprint the SHA-256 of its
	// certificate, which the worker pins.
	Addr        string `json:"addr"`
	Fingerprint string `json:"fingerprint"`
}

// ErrNotIssuable is how Remote says a task cannot be issued now (not
// ready): answered 409.
var ErrNotIssuable = errors.New("task cannot be issued to a remote worker")

func (s *Server) kanbanRemote(w http.ResponseWriter, r *http.Request) {
	if s.o.Remote == nil {
		writeError(w, http.StatusServiceUnavailable, "remote workers are off on this host: set kanban.remote.enabled in the config")
		return
	}
	var req KanbanRemoteRequest
	if !decode(w, r, &req) {
		return
	}
	if req.TTLSeconds < 0 || req.TTLSeconds > 7*24*3600 {
		writeError(w, http.StatusBadRequest, "ttl_seconds: want 0 (the default) to a week")
		return
	}
	id := r.PathValue("id")
	t, err := s.o.Remote(r.Context(), id, time.Duration(req.TTLSeconds)*time.Second)
	switch {
	case errors.Is(err, ErrNotIssuable):
		writeError(w, http.StatusConflict, err.Error())
		return
	case err != nil:
		s.boardError(w, r, "issue", id, err)
		return
	}
	s.log.InfoContext(r.Context(), "task issued to a remote worker", "task", id, "run", t.Run, "expires", t.Expires, "peer", mustPeer(r.Context()).String())
	writeJSON(w, http.StatusOK, t)
}

// onBoard is h given the board service, or a 503 on a host that keeps
// no board.
func (s *Server) onBoard(h func(http.ResponseWriter, *http.Request, *board.Service)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.o.Boards == nil {
			writeError(w, http.StatusServiceUnavailable, "the kanban board is not available on this host")
			return
		}
		h(w, r, s.o.Boards)
	}
}

// poke tells the dispatcher to look at the board now.
func (s *Server) poke() {
	if s.o.Dispatch != nil {
		s.o.Dispatch.Poke()
	}
}

// author is who an operator's comment is by: the peer read from the
// socket.
func author(r *http.Request) string { return "operator " + mustPeer(r.Context()).String() }

// boardError answers a board operation's error: 404 for an unknown
// task, 409 for a move the task's status does not allow, 400 for a
// malformed request, 500 otherwise.
func (s *Server) boardError(w http.ResponseWriter, r *http.Request, op, id string, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, fmt.Sprintf("no task %q (warden kanban list shows the tasks)", id))
	case errors.Is(err, store.ErrTransition):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, board.ErrWorkspace):
		writeError(w, http.StatusBadRequest, err.Error())
	default:
		s.fail(w, r, op+" task", err)
	}
}

func (s *Server) kanbanList(w http.ResponseWriter, r *http.Request, b *board.Service) {
	ts, err := b.List(r.Context(), store.TaskStatus(r.URL.Query().Get("status")))
	writeList(s, w, r, "list tasks", ts, err)
}

// KanbanTaskOf checks an add request and turns it into the new task.
func KanbanTaskOf(req KanbanAddRequest) (board.NewTask, error) {
	if strings.TrimSpace(req.Title) == "" {
		return board.NewTask{}, errors.New("a task needs a title")
	}
	prompt := strings.TrimSpace(req.Prompt)
	switch {
	case prompt != "" && len(req.Steps) > 0:
		return board.NewTask{}, errors.New("give steps (a script task) or a prompt (an agent task), not both")
	case prompt == "" && len(req.Steps) == 0:
		return board.NewTask{}, errors.New("a task needs at least one step, or a prompt")
	}
	for i, st := range req.Steps {
		if strings.TrimSpace(st) == "" {
			return board.NewTask{}, fmt.Errorf("step %d is empty", i+1)
		}
	}
	if _, err := board.ParseWorkspace(req.Workspace); err != nil {
		return board.NewTask{}, err
	}
	return board.NewTask{Title: req.Title, Body: req.Body, Workspace: req.Workspace, Script: req.Steps, Prompt: prompt, After: req.After}, nil
}

func (s *Server) kanbanAdd(w http.ResponseWriter, r *http.Request, b *board.Service) {
	var req KanbanAddRequest
	if !decode(w, r, &req) {
		return
	}
	n, err := KanbanTaskOf(req)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	t, err := b.Add(r.Context(), n)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("a parent task does not exist (after %q)", req.After))
		return
	case err != nil:
		s.boardError(w, r, "add", "", err)
		return
	}
	s.poke()
	s.log.InfoContext(r.Context(), "task added", "task", t.ID, "status", t.Status, "steps", len(t.Script), "peer", mustPeer(r.Context()).String())
	writeJSON(w, http.StatusCreated, t)
}

func (s *Server) kanbanShow(w http.ResponseWriter, r *http.Request, b *board.Service) {
	id := r.PathValue("id")
	c, err := b.Show(r.Context(), id)
	if err != nil {
		s.boardError(w, r, "show", id, err)
		return
	}
	writeJSON(w, http.StatusOK, withLists(c))
}

// withLists makes empty runs, steps and comments [] rather than null.
func withLists(c board.Card) board.Card {
	if c.Runs == nil {
		c.Runs = []store.TaskRun{}
	}
	for i := range c.Runs {
		if c.Runs[i].Steps == nil {
			c.Runs[i].Steps = []store.TaskStep{}
		}
	}
	if c.Comments == nil {
		c.Comments = []store.TaskComment{}
	}
	if c.Parents == nil {
		c.Parents = []string{}
	}
	return c
}

func (s *Server) kanbanComment(w http.ResponseWriter, r *http.Request, b *board.Service) {
	id := r.PathValue("id")
	var req KanbanCommentRequest
	if !decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Body) == "" {
		writeError(w, http.StatusBadRequest, "empty comment")
		return
	}
	if _, err := b.Get(r.Context(), id); err != nil {
		s.boardError(w, r, "comment on", id, err)
		return
	}
	c, err := b.Comment(r.Context(), id, author(r), req.Body)
	if err != nil {
		s.boardError(w, r, "comment on", id, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

func (s *Server) kanbanMove(w http.ResponseWriter, r *http.Request, b *board.Service) {
	id := r.PathValue("id")
	v := board.Verb(r.PathValue("verb"))
	switch v {
	case board.Block, board.Unblock, board.Done, board.Rerun:
	default:
		http.NotFound(w, r)
		return
	}
	var req KanbanMoveRequest
	if !decode(w, r, &req) {
		return
	}
	t, err := b.Apply(r.Context(), id, v, author(r), req.Reason)
	if err != nil {
		s.boardError(w, r, string(v), id, err)
		return
	}
	if v == board.Unblock || v == board.Rerun {
		s.poke()
	}
	s.log.InfoContext(r.Context(), "task moved", "task", id, "verb", v, "status", t.Status, "peer", mustPeer(r.Context()).String())
	writeJSON(w, http.StatusOK, t)
}
