package workerapi

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/tools"
)

// maxActText bounds a command's or a program's text, in bytes: a line
// of the protocol holds it, and the gate reads it whole.
const maxActText = 256 << 10

// action reads the action of a decide or step request, as the host
// decides it: the action a worker may run exactly as it is returned
// (a write's path absolute in the workspace), and the gate's action in
// the run's workspace. Only shell, code and write actions are a
// worker's to ask about; a field of another kind, a second way of
// naming the action, an unknown language or a write outside the
// workspace is refused before anything is decided.
func (cn *conn) action(req Request) (Act, action.Action, error) {
	a := ShellAct(req.Command)
	switch {
	case req.Action != nil && req.Command != "":
		return Act{}, action.Action{}, errors.New("give command or action, not both")
	case req.Action != nil:
		a = *req.Action
	}
	if len(a.Command) > maxActText || len(a.Source) > maxActText || len(a.Path) > 4096 {
		return Act{}, action.Action{}, errors.New("the action is too large")
	}
	switch a.Kind {
	case action.Shell:
		if strings.TrimSpace(a.Command) == "" {
			return Act{}, action.Action{}, errors.New("empty command")
		}
		if a != ShellAct(a.Command) {
			return Act{}, action.Action{}, errors.New("a shell action has a command only")
		}
		return a, action.NewShell(a.Command).In(cn.dir), nil
	case action.Code:
		if !tools.KnownLanguage(a.Language) {
			return Act{}, action.Action{}, fmt.Errorf("unsupported language %q", a.Language)
		}
		if strings.TrimSpace(a.Source) == "" {
			return Act{}, action.Action{}, errors.New("empty program")
		}
		if a != CodeAct(a.Language, a.Source) {
			return Act{}, action.Action{}, errors.New("a code action has a language and a source only")
		}
		return a, action.NewCode(a.Language, a.Source).In(cn.dir), nil
	case action.Write:
		if a != WriteAct(a.Path, a.Size) {
			return Act{}, action.Action{}, errors.New("a write action has a path and a size only")
		}
		if a.Size < 0 || a.Size > tools.MaxFileSize {
			return Act{}, action.Action{}, fmt.Errorf("write of %d bytes: %w", a.Size, tools.ErrTooLarge)
		}
		p, err := inWorkspace(cn.dir, a.Path)
		if err != nil {
			return Act{}, action.Action{}, err
		}
		a.Path = p
		return a, action.NewWrite(p, a.Size).In(cn.dir), nil
	}
	return Act{}, action.Action{}, fmt.Errorf("a worker asks about shell, code and write actions, not %q", a.Kind)
}

// inWorkspace is path (relative to dir, or absolute) as a clean absolute
// path inside dir; anything else is refused. The worker writes it
// through os.Root as well, so a link inside the workspace cannot lead
// the write out of it either.
func inWorkspace(dir, path string) (string, error) {
	if strings.TrimSpace(path) == "" || strings.ContainsRune(path, 0) {
		return "", errors.New("write: no path")
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	p = filepath.Clean(p)
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("write %s: outside the workspace %s", path, dir)
	}
	return p, nil
}
