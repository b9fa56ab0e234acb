//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"io"
)

// Nested runs processes inside the caller's own sandbox; Linux only
// (elsewhere a call's leftovers could not be found).
type Nested struct{}

// NewNested fails outside Linux.
func NewNested() (*Nested, error) {
	return nil, errors.New("nested calls are supported on Linux only")
}

// Run is never reached outside Linux.
func (n *Nested) Run(context.Context, string, []string, string, []string, io.Writer) error {
	return errors.New("nested calls are supported on Linux only")
}
