package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/wardenhq/warden/internal/explain"
)

// defaultMaxLine caps one --jsonl input line. The analyser refuses inputs
// far smaller than this, so a longer line is a broken producer, and the
// cap is what keeps memory constant whatever arrives on stdin.
const defaultMaxLine = 1 << 20

// checkJSONL is warden check --jsonl: one {"cmd": …} object per input line
// in, one result object per line out, in order. A line with "as": OWNER
// is also decided by rules.gate for that owner. A bad line becomes an
// {"error": …} line in its place, so output line N always answers input
// line N. Only failing to read or write is an error.
//
// rules is loaded once for the whole run; nil means no deny rules and no
// policy, so every line with "as" is an error line.
func checkJSONL(ctx context.Context, r io.Reader, w io.Writer, rules *checkRules, maxLine int) error {
	if maxLine <= 0 {
		maxLine = defaultMaxLine
	}
	// +1 so that a line of exactly maxLine bytes fits with its newline.
	br := bufio.NewReaderSize(r, maxLine+1)
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)

	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			_ = bw.Flush() // the answers so far are still valid
			return err
		}
		// Flush before a read that may block: a caller feeding one line
		// at a time (a coprocess) gets each answer at once, while a bulk
		// stream still gets one large write per input buffer.
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return fmt.Errorf("write results: %w", err)
			}
		}

		line, err := br.ReadSlice('\n')
		var out any
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			// Skip the rest of the over-long line and resynchronise at
			// the next newline, without ever holding it in memory.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			out = jsonlError{Error: fmt.Sprintf("line %d: longer than %d bytes", n, maxLine)}
		case errors.Is(err, io.EOF) && len(line) == 0:
			return flush(bw)
		default:
			out = checkLine(ctx, n, line, rules)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			_ = bw.Flush()
			return fmt.Errorf("read commands: %w", err)
		}
		if werr := enc.Encode(out); werr != nil {
			return fmt.Errorf("write results: %w", werr)
		}
		if errors.Is(err, io.EOF) {
			return flush(bw)
		}
	}
}

// checkLine answers one input line (with or without its newline).
func checkLine(ctx context.Context, n int, line []byte, rules *checkRules) any {
	line = bytes.TrimRight(line, "\r\n")
	if len(bytes.TrimSpace(line)) == 0 {
		return jsonlError{Error: fmt.Sprintf("line %d: empty line", n)}
	}
	var in struct {
		Cmd *string `json:"cmd"`
		As  *string `json:"as"`
	}
	if err := json.Unmarshal(line, &in); err != nil {
		// Type errors from encoding/json name Go types; say it in the
		// input's terms instead.
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			if te.Field == "cmd" || te.Field == "as" {
				return jsonlError{Error: fmt.Sprintf(`line %d: %q must be a string, not %s`, n, te.Field, te.Value)}
			}
			return jsonlError{Error: fmt.Sprintf(`line %d: want a JSON object, not %s`, n, te.Value)}
		}
		return jsonlError{Error: fmt.Sprintf("line %d: invalid JSON: %v", n, err)}
	}
	if in.Cmd == nil {
		return jsonlError{Error: fmt.Sprintf(`line %d: missing "cmd"`, n)}
	}
	if in.As == nil {
		var deny explain.DenyMatcher
		if rules != nil {
			deny = rules.deny
		}
		e := explain.Line(*in.Cmd, deny)
		return jsonlResult{
			Cmd:      e.Cmd,
			Verdict:  e.Verdict,
			Classes:  nonNil(e.Analysis.Classes()),
			DenyRule: e.DenyRule,
		}
	}
	o, err := parseAs(*in.As)
	if err != nil {
		return jsonlError{Error: fmt.Sprintf(`line %d: "as": %v (OWNER is one of: %s)`, n, err, ownerForms)}
	}
	// A gate failure is a deny; the error line says why, where a
	// decision line could only say "error".
	e, err := decideAs(ctx, rules, o, *in.Cmd)
	if err != nil {
		return jsonlError{Error: fmt.Sprintf("line %d: %v", n, err)}
	}
	return jsonlResult{
		Cmd:      e.Cmd,
		Verdict:  e.Verdict,
		Classes:  nonNil(e.Analysis.Classes()),
		DenyRule: e.DenyRule,
		Decision: string(e.Decision.Verdict),
		Rule:     e.Decision.Rule,
	}
}

func flush(bw *bufio.Writer) error {
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}
