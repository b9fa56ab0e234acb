package tools

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
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

// Interpreter is the program that runs language's source files (a name
// looked up on PATH, or an absolute path) and the files' extension.
func Interpreter(language string) (program, ext string, ok bool) {
	in, ok := interpreters[strings.ToLower(strings.TrimSpace(language))]
	return in[0], in[1], ok
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

// Run runs source as language in dir and returns the exit code. The
// source is written to the call's private temporary directory, which
// only that call sees.
func (c Code) Run(ctx context.Context, language, source, dir string, stdout, stderr io.Writer) (int, error) {
	in, ok := interpreters[strings.ToLower(strings.TrimSpace(language))]
	if !ok {
		return -1, fmt.Errorf("execute code: unsupported language %q (python, node, sh, bash)", language)
	}
	name := "main" + in[1]
	cmd, err := c.Terminal.Command(ctx, in[0], nil, dir, nil, stdout, stderr)
	if err != nil {
		return -1, fmt.Errorf("execute code: %w", err)
	}
	if err := os.WriteFile(filepath.Join(cmd.TempDir(), name), []byte(source), 0o600); err != nil {
		return -1, fmt.Errorf("execute code: %w", err)
	}
	cmd.SetArgs([]string{path.Join(cmd.InsideTemp(), name)})
	return c.Terminal.run(ctx, cmd)
}
