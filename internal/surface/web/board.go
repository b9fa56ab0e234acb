package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// boardColumn is one status column of the board.
type boardColumn struct {
	Status store.TaskStatus
	Tasks  []store.Task
}

// boardData is the board page.
type boardData struct {
	// Available is false when the host keeps no board.
	Available bool
	Columns   []boardColumn
	// Card is the open task's drawer (?task=ID), nil when none is open.
	Card *surface.Card
}

// boardPage shows the board as columns by status; ?task=ID opens the
// task's drawer with its runs (each step's verdict, rule, exit code and
// output) and its comments, and a comment form.
func (c *Console) boardPage(w http.ResponseWriter, r *http.Request, a *authn) {
	var d boardData
	if b := c.o.Board; b != nil {
		d.Available = true
		tasks, err := b.Tasks(r.Context())
		if err != nil {
			c.fail(w, r, fmt.Errorf("list tasks: %w", err))
			return
		}
		for _, s := range store.TaskStatuses() {
			col := boardColumn{Status: s}
			for _, t := range tasks {
				if t.Status == s {
					col.Tasks = append(col.Tasks, t)
				}
			}
			d.Columns = append(d.Columns, col)
		}
		if id := r.URL.Query().Get("task"); id != "" {
			card, err := b.Card(r.Context(), id)
			switch {
			case errors.Is(err, store.ErrNotFound):
				c.done(w, r, a, "/board", http.StatusNotFound, "late", fmt.Sprintf("There is no task %q.", id))
				return
			case err != nil:
				c.fail(w, r, fmt.Errorf("show task %s: %w", id, err))
				return
			}
			d.Card = &card
		}
	}
	c.render(w, r, http.StatusOK, "board", c.pageFor(a, "board", "Board", d))
}

// commentTask adds the operator's comment to the task in the path.
func (c *Console) commentTask(w http.ResponseWriter, r *http.Request, a *authn) {
	id := r.PathValue("id")
	b := c.o.Board
	if b == nil {
		c.done(w, r, a, "/board", http.StatusServiceUnavailable, "error", "The kanban board is not available on this host.")
		return
	}
	back := "/board" + queryOf("task", id)
	body := strings.TrimSpace(r.PostFormValue("body"))
	if body == "" {
		c.done(w, r, a, back, http.StatusBadRequest, "error", "The comment is empty.")
		return
	}
	if err := b.Comment(r.Context(), id, "operator (console)", body); errors.Is(err, store.ErrNotFound) {
		c.done(w, r, a, "/board", http.StatusNotFound, "late", fmt.Sprintf("There is no task %q.", id))
		return
	} else if err != nil {
		c.fail(w, r, fmt.Errorf("comment on task %s: %w", id, err))
		return
	}
	c.log.InfoContext(r.Context(), "comment from the console", "task", id)
	c.done(w, r, a, back, http.StatusCreated, "ok", "Comment added.")
}
