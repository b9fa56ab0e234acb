// Package jsonbody reads the JSON bodies of warden's own APIs strictly:
// a size limit, exactly one JSON value and then the end of the body, and
// no field the target type does not declare. A body that is anything
// else is refused with a message that says what is wrong, so a client
// never has part of a request acted on (a second value, trailing bytes
// or a misspelt field silently ignored).
//
// Every JSON request body of the admin socket (internal/localapi) and
// every message line of the worker socket (internal/workerapi) goes
// through this package.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DefaultMax bounds a request body when the caller gives no limit.
const DefaultMax = 1 << 20

// Error is a refused body: Status is the HTTP status to answer with
// (400, or 413 for a body over the limit) and Msg says why.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// ErrBadBody matches every *Error (errors.Is).
var ErrBadBody = errors.New("bad request body")

// Is makes errors.Is(err, ErrBadBody) true.
func (e *Error) Is(target error) bool { return target == ErrBadBody }

// Decode reads r's body into v: at most max bytes (DefaultMax if max <=
// 0), one JSON value, then nothing but white space. The body is
// wrapped in http.MaxBytesReader, so an oversized body also tells the
// server to close the connection.
func Decode(w http.ResponseWriter, r *http.Request, v any, max int64) error {
	if max <= 0 {
		max = DefaultMax
	}
	body := http.MaxBytesReader(w, r.Body, max)
	r.Body = body
	return decode(body, v)
}

// Unmarshal is Decode for one message already read (a line of a line
// protocol): one JSON value, nothing after it, no unknown field.
func Unmarshal(b []byte, v any) error {
	return decode(bytes.NewReader(b), v)
}

func decode(rd io.Reader, v any) error {
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describe(err)
	}
	// The value must be the whole body: another value or any other
	// bytes after it are refused, not ignored.
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return &Error{Status: http.StatusBadRequest, Msg: "request body: more than one JSON value (send exactly one)"}
	default:
		if mb := (*http.MaxBytesError)(nil); errors.As(err, &mb) {
			return describe(err)
		}
		return &Error{Status: http.StatusBadRequest, Msg: "request body: unexpected data after the JSON value"}
	}
}

// describe turns a decoding error into what the client reads.
func describe(err error) error {
	var (
		mb  *http.MaxBytesError
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &mb):
		return &Error{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("request body: larger than %d bytes", mb.Limit)}
	case errors.Is(err, io.EOF):
		return &Error{Status: http.StatusBadRequest, Msg: "request body: empty (send one JSON value)"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Status: http.StatusBadRequest, Msg: "request body: truncated JSON"}
	case errors.As(err, &syn):
		return &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("request body: malformed JSON at byte %d: %v", syn.Offset, syn)}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the body"
		}
		return &Error{Status: http.StatusBadRequest, Msg: fmt.Sprintf("request body: %s: want %s, got JSON %s", field, typ.Type, typ.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json has no type for it; the message names the field.
		return &Error{Status: http.StatusBadRequest, Msg: "request body: unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")}
	}
	return &Error{Status: http.StatusBadRequest, Msg: "request body: " + err.Error()}
}
