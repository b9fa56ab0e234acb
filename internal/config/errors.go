package config

import (
	"errors"
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
)

// ErrInvalid is matched (errors.Is) by every *Error: the file was read
// but is not a valid configuration. Callers branch on it to tell a bad
// file from one that could not be read.
var ErrInvalid = errors.New("invalid config")

// ErrEmpty is matched by the error for an empty or whitespace-only file
// (Load, Watcher): such a file is refused like a deleted one, never read
// as the defaults.
var ErrEmpty = errors.New("config file is empty")

// Error is one problem in a config file. Several are joined with
// errors.Join; errors.As finds the first.
type Error struct {
	// File is the name given to Parse or Load.
	File string
	// Line and Column are 1-based; 0 when the problem has no position.
	Line, Column int
	// Message says what is wrong, without position.
	Message string

	text string
	err  error // the YAML library's error, if it found the problem
}

// Error returns the file name, then the message with "[line:column]"
// and a source excerpt with a caret, as yaml.FormatError prints it.
func (e *Error) Error() string { return e.text }

// Unwrap returns the YAML library's error, if any.
func (e *Error) Unwrap() error { return e.err }

// Is reports whether target is ErrInvalid.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// newError builds an Error at tok (which may be nil).
func newError(file string, tok *token.Token, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	e := &Error{File: file, Message: msg}
	if tok != nil && tok.Position != nil {
		e.Line, e.Column = tok.Position.Line, tok.Position.Column
	}
	e.text = file + ": " + yaml.FormatErrorWithToken(msg, tok, false, true)
	return e
}

// wrapYAML turns an error of the YAML library into an Error.
func wrapYAML(file string, err error) *Error {
	e := &Error{File: file, Message: err.Error(), err: err}
	if yerr, ok := errors.AsType[yaml.Error](err); ok {
		e.Message = yerr.GetMessage()
		if tok := yerr.GetToken(); tok != nil && tok.Position != nil {
			e.Line, e.Column = tok.Position.Line, tok.Position.Column
		}
	}
	e.text = file + ": " + yaml.FormatError(err, false, true)
	return e
}

// Warning is something in a config file that was accepted but probably
// not meant: an unknown mode name read as the safe choice, a key warden
// ignores. Warnings never weaken policy.
type Warning struct {
	// File is the name given to Parse or Load.
	File string
	// Line and Column are 1-based; 0 when unknown.
	Line, Column int
	// Key is the dotted path of the setting, e.g. "approvals.cron_mode".
	Key string
	// Message says what was read and how it was taken.
	Message string
}

// String formats w as "file:line:column: key: message".
func (w Warning) String() string {
	pos := w.File
	if w.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d", w.File, w.Line, w.Column)
	}
	return fmt.Sprintf("%s: %s: %s", pos, w.Key, w.Message)
}
