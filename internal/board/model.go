// Package board is the kanban board: the pure model (which moves are
// legal, when a task is ready, what a workspace is, task and run ids)
// and a small Service over a store.BoardStore that the CLI, the console
// and the dispatcher share.
//
// The table of legal moves is store.TaskTransitions: every store
// enforces it inside the transaction that writes a move, so it lives
// beside the interface; this package gives it meaning (operator verbs,
// readiness) and never moves a task any other way.
//
// A task is todo until every parent is done, then ready; the dispatcher
// claims a ready task (running, with a new run); the run ends as done
// (or review), blocked (a denied action, the worker's block, or the
// failure limit) or back to ready after a failure. Humans block,
// unblock, accept and re-run tasks; done is final.
package board

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/store"
)

// ErrWorkspace: a workspace that is neither "scratch" nor an absolute
// "dir:" path.
var ErrWorkspace = errors.New("bad workspace")

// Ready reports whether a task whose parents have the given statuses
// may start: every parent is done (a task without parents is ready).
func Ready(parents []store.TaskStatus) bool {
	for _, p := range parents {
		if p != store.TaskDone {
			return false
		}
	}
	return true
}

// Verb is an operator's move on a task.
type Verb string

// Operator verbs (warden kanban block|unblock|done, and the console's
// accept and re-run).
const (
	Block   Verb = "block"   // → blocked; a running task's run ends
	Unblock Verb = "unblock" // blocked → todo, then ready once its parents are done
	Done    Verb = "done"    // → done
	Rerun   Verb = "rerun"   // review → ready
)

// Target returns the status verb moves a task to.
func (v Verb) Target() (store.TaskStatus, error) {
	switch v {
	case Block:
		return store.TaskBlocked, nil
	case Unblock:
		return store.TaskTodo, nil
	case Done:
		return store.TaskDone, nil
	case Rerun:
		return store.TaskReady, nil
	}
	return "", fmt.Errorf("unknown verb %q", v)
}

// Allowed reports whether an operator may apply v to a task in status
// from, by store.TaskTransitions.
func (v Verb) Allowed(from store.TaskStatus) bool {
	to, err := v.Target()
	return err == nil && store.CanMove(from, to, store.ByOperator)
}

// ParseWorkspace normalises a workspace given by a human: "" or
// "scratch" is a scratch directory; "dir:PATH" needs an absolute PATH,
// which is cleaned.
func ParseWorkspace(s string) (string, error) {
	if s == "" || s == store.WorkspaceScratch {
		return store.WorkspaceScratch, nil
	}
	p, ok := strings.CutPrefix(s, store.WorkspaceDirPrefix)
	if !ok || !filepath.IsAbs(p) || strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("%w %q: want %q or %q followed by an absolute path", ErrWorkspace, s, store.WorkspaceScratch, store.WorkspaceDirPrefix)
	}
	return store.WorkspaceDirPrefix + filepath.Clean(p), nil
}

// WorkspaceDir is the directory a task's commands run in: its dir: path,
// or scratchRoot/TASK for a scratch workspace. It does not create it.
func WorkspaceDir(workspace, scratchRoot, task string) (string, error) {
	if workspace == store.WorkspaceScratch {
		if scratchRoot == "" || task == "" || strings.ContainsAny(task, `/\`) || task == "." || task == ".." {
			return "", fmt.Errorf("%w: scratch directory of task %q under %q", ErrWorkspace, task, scratchRoot)
		}
		return filepath.Join(scratchRoot, task), nil
	}
	if !store.ValidWorkspace(workspace) {
		return "", fmt.Errorf("%w %q", ErrWorkspace, workspace)
	}
	return strings.TrimPrefix(workspace, store.WorkspaceDirPrefix), nil
}
