package web

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/wardenhq/warden/internal/board"
	"github.com/wardenhq/warden/internal/store"
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
	Card *board.Card
}

// service returns the board's operations, nil without a board store.
func (c *Console) service() *board.Service {
	return c.o.Boards
}

// boardPage shows the board as columns by status; ?task=ID opens the
// task's drawer with its runs (each step's verdict, rule, exit code and
// output) and its comments, and a comment form.
func (c *Console) boardPage(w http.ResponseWriter, r *http.Request, a *authn) {
	var d boardData
	if svc := c.service(); svc != nil {
		d.Available = true
		tasks, err := svc.List(r.Context(), "")
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
			card, err := svc.Show(r.Context(), id)
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
	svc := c.service()
	if svc == nil {
		c.done(w, r, a, "/board", http.StatusServiceUnavailable, "error", "The kanban board is not available on this host.")
		return
	}
	back := "/board" + queryOf("task", id)
	body := strings.TrimSpace(r.PostFormValue("body"))
	if body == "" {
		c.done(w, r, a, back, http.StatusBadRequest, "error", "The comment is empty.")
		return
	}
	if _, err := svc.Get(r.Context(), id); errors.Is(err, store.ErrNotFound) {
		c.done(w, r, a, "/board", http.StatusNotFound, "late", fmt.Sprintf("There is no task %q.", id))
		return
	} else if err != nil {
		c.fail(w, r, fmt.Errorf("get task %s: %w", id, err))
		return
	}
	if _, err := svc.Comment(r.Context(), id, "operator (console)", body); err != nil {
		c.fail(w, r, fmt.Errorf("comment on task %s: %w", id, err))
		return
	}
	c.log.InfoContext(r.Context(), "comment from the console", "task", id)
	c.done(w, r, a, back, http.StatusCreated, "ok", "Comment added.")
}
