package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The helper's names: os.Args[0] of a re-executed warden binary.
const (
	// helperName runs a call: it reads the spec, builds the view and
	// starts the command.
	helperName = "warden-sandbox"
	// probeName is the command of the probe's test run: it exits 0.
	probeName = "warden-sandbox-probe"
)

// init turns any binary that links this package into the helper when
// it is started under the helper's name, before main (or TestMain)
// runs: the host re-executes its own binary, so a test binary is a
// helper too, and nobody can forget to wire it. Nothing else happens
// at init.
func init() {
	switch os.Args[0] {
	case helperName:
		os.Exit(helperMain())
	case probeName:
		os.Exit(0)
	}
}

// helperMain is the helper: `warden-sandbox EXTRA`, with the command's
// extra files on fds 3…3+EXTRA-1, the spec pipe after them and the
// report pipe after that.
func helperMain() int {
	if len(os.Args) != 2 {
		return 125
	}
	extra, err := strconv.Atoi(os.Args[1])
	if err != nil || extra < 0 || extra > 1000 {
		return 125
	}
	specFD, repFD := 3+extra, 4+extra
	// Inherited without close-on-exec: the command must not get them.
	syscall.CloseOnExec(specFD)
	syscall.CloseOnExec(repFD)
	specF := os.NewFile(uintptr(specFD), "spec")
	rep := os.NewFile(uintptr(repFD), "report")
	if specF == nil || rep == nil {
		return 125
	}
	sp, err := readSpec(specF)
	if err != nil {
		report(rep, reportError+"read spec: "+err.Error())
		return 125
	}
	if !sp.Confine {
		return shim(sp, rep)
	}
	return confine(sp, specF, rep)
}

// argv0 is the command's argv[0].
func (sp spec) argv0() string {
	if sp.Arg0 != "" {
		return sp.Arg0
	}
	return sp.Path
}

// readSpec reads a length-prefixed JSON spec.
func readSpec(r io.Reader) (spec, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return spec{}, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxSpec {
		return spec{}, fmt.Errorf("spec of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return spec{}, err
	}
	var sp spec
	if err := json.Unmarshal(b, &sp); err != nil {
		return spec{}, err
	}
	return sp, nil
}

// report writes one line to the host.
func report(w io.Writer, line string) {
	_, _ = io.WriteString(w, strings.ReplaceAll(line, "\n", " ")+"\n")
}

// shim is mode off: exec the command in place, so the process the host
// recorded is the command itself. Nothing is written on success (the
// report pipe closes on exec).
func shim(sp spec, rep *os.File) int {
	path, err := lookPath(sp.Path, sp.Env, sp.Dir)
	if err == nil && sp.Dir != "" {
		err = os.Chdir(sp.Dir)
	}
	if err == nil {
		err = syscall.Exec(path, append([]string{sp.argv0()}, sp.Args...), sp.Env)
	}
	report(rep, reportError+err.Error())
	return 127
}

// lookPath finds program as a shell would, with env's PATH (the
// command's, not the helper's), relative names against dir.
func lookPath(program string, env []string, dir string) (string, error) {
	if strings.Contains(program, "/") {
		if !filepath.IsAbs(program) && dir != "" {
			program = filepath.Join(dir, program)
		}
		return program, executable(program)
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) && dir != "" {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, program)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", program)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("exec: %s: %w", p, errors.New("permission denied"))
	}
	return nil
}
