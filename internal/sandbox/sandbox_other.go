//go:build !linux && !darwin

package sandbox

import (
	"context"
	"errors"
	"os"
	"runtime"
)

func confine(_ spec, _, rep *os.File) int {
	report(rep, reportError+"setup: warden has no sandbox for "+runtime.GOOS)
	return 125
}

func (s *Sandbox) probe(context.Context) error {
	return errors.New("warden has no sandbox for " + runtime.GOOS)
}

func kernelFacts() Kernel { return Kernel{OS: runtime.GOOS} }

func fixFor(string) string {
	return "run warden on Linux or macOS, or set `sandbox: {mode: off}` in the config (commands then run unconfined)"
}

func unavailable(err error, _ Kernel) *UnavailableError {
	return &UnavailableError{Reason: err.Error(), Fix: fixFor("")}
}
