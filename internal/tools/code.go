package tools

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// interpreters maps an execute_code language to the program that runs a
// source file and the file's extension.
var interpreters = map[string][2]string{
	"python": {"python3", ".py"}, "python3": {"python3", ".py"}, "py": {"python3", ".py"},
	"node": {"node", ".js"}, "javascript": {"node", ".js"}, "js": {"node", ".js"},
	"sh": {"/bin/sh", ".sh"}, "shell": {"/bin/sh", ".sh"}, "bash": {"bash", ".sh"},
}

// Languages returns the languages Code runs, sorted: the names an
// execute_code call may give (case and surrounding space aside).
func Languages() []string {
	out := make([]string, 0, len(interpreters))
	for l := range interpreters {
		out = append(out, l)
	}
	slices.Sort(out)
	return out
}

// KnownLanguage reports whether Code runs language.
func KnownLanguage(language string) bool {
	_, ok := interpreters[strings.ToLower(strings.TrimSpace(language))]
	return ok
}

// Code runs source in an interpreter from a temporary file: the
// execute_code tool. The file lives in a fresh 0700 directory that is
// removed afterwards.
type Code struct {
	// Terminal supplies the environment, timeout and process-group
	// handling.
	Terminal Terminal
}

// Run runs source as language in dir and returns the exit code.
func (c Code) Run(ctx context.Context, language, source, dir string, stdout, stderr io.Writer) (int, error) {
	in, ok := interpreters[strings.ToLower(strings.TrimSpace(language))]
	if !ok {
		return -1, fmt.Errorf("execute code: unsupported language %q (python, node, sh, bash)", language)
	}
	tmp, err := os.MkdirTemp("", "warden-code-")
	if err != nil {
		return -1, fmt.Errorf("execute code: %w", err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "main"+in[1])
	if err := os.WriteFile(file, []byte(source), 0o600); err != nil {
		return -1, fmt.Errorf("execute code: %w", err)
	}
	return c.Terminal.exec(ctx, in[0], []string{file}, dir, stdout, stderr)
}
