package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/shell"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// input is chat's stdin. One goroutine reads it in chunks, so the line
// reader and the prompt's key reader share one buffer and never race
// for bytes. The goroutine ends at end of input; a process that exits
// first leaves it blocked in Read, which is harmless.
type input struct {
	ch  chan []byte // closed at end of input
	buf []byte
	eof bool
}

func newInput(r io.Reader) *input {
	in := &input{ch: make(chan []byte, 64)} // read ahead: what is typed before a prompt is read in the mode it was typed in
	go func() {
		defer close(in.ch)
		for {
			b := make([]byte, 4096)
			n, err := r.Read(b)
			if n > 0 {
				in.ch <- b[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return in
}

// fill waits for more input; false at the end of input. Ticks, if any,
// interrupt the wait (tick reports true).
func (in *input) fill(ctx context.Context, tick <-chan time.Time) (more, ticked bool, err error) {
	if in.eof {
		return false, false, nil
	}
	select {
	case b, ok := <-in.ch:
		if !ok {
			in.eof = true
			return false, false, nil
		}
		in.buf = append(in.buf, b...)
		return true, false, nil
	case <-tick:
		return true, true, nil
	case <-ctx.Done():
		return false, false, context.Cause(ctx)
	}
}

// line returns the next line without its end, or io.EOF.
func (in *input) line(ctx context.Context) (string, error) {
	for {
		if i := bytes.IndexByte(in.buf, '\n'); i >= 0 {
			l := string(in.buf[:i])
			in.buf = in.buf[i+1:]
			return strings.TrimSuffix(l, "\r"), nil
		}
		more, _, err := in.fill(ctx, nil)
		if err != nil {
			return "", err
		}
		if !more {
			if len(in.buf) > 0 {
				l := string(in.buf)
				in.buf = nil
				return l, nil
			}
			return "", io.EOF
		}
	}
}

// Keys the prompt reads.
const (
	keyCtrlC = 0x03
	keyCtrlD = 0x04
)

// promptChoice is what the human pressed.
type promptChoice int

const (
	choiceNone promptChoice = iota // nothing yet
	choiceOnce
	choiceSession
	choiceAlways
	choiceDeny
	choiceInterrupt // Ctrl-C
	choiceEOF       // Ctrl-D or end of input
	choiceOther     // any other key: ask again
)

// nextKey takes one meaningful key from the buffer: white space is
// skipped (in line mode the Enter after "o" stays behind for the line
// reader, which ignores empty lines).
func (in *input) nextKey() promptChoice {
	for len(in.buf) > 0 {
		b := in.buf[0]
		in.buf = in.buf[1:]
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		case 'o', 'O':
			return choiceOnce
		case 's', 'S':
			return choiceSession
		case 'a', 'A':
			return choiceAlways
		case 'd', 'D':
			return choiceDeny
		case keyCtrlC:
			return choiceInterrupt
		case keyCtrlD:
			return choiceEOF
		}
		return choiceOther
	}
	return choiceNone
}

// Keys of the text reader.
const (
	keyBackspace = 0x7f
	keyCtrlH     = 0x08
	keyEnter     = '\r'
)

// errInterrupted: Ctrl-C at a prompt.
var errInterrupted = errors.New("interrupted")

// key returns the next key, waiting for it: a byte of input, as a
// terminal in raw mode sends one per key press. io.EOF at the end of
// input (or Ctrl-D), errInterrupted for Ctrl-C.
func (in *input) key(ctx context.Context) (byte, error) {
	for len(in.buf) == 0 {
		more, _, err := in.fill(ctx, nil)
		if err != nil {
			return 0, err
		}
		if !more {
			return 0, io.EOF
		}
	}
	b := in.buf[0]
	in.buf = in.buf[1:]
	switch b {
	case keyCtrlC:
		return 0, errInterrupted
	case keyCtrlD:
		return 0, io.EOF
	}
	return b, nil
}

// choose reads one key that picks a choice: keys maps a key to its
// choice (letters match in either case); Enter picks enter when it is
// not "". A line break typed right after the key (input read by lines)
// is taken with it, so it does not count as the next question's Enter.
// Other keys are ignored after reprompt is written.
func (in *input) choose(ctx context.Context, keys map[byte]string, enter string, reprompt func()) (string, error) {
	for {
		b, err := in.key(ctx)
		if err != nil {
			return "", err
		}
		if b == '\r' || b == '\n' {
			if enter != "" {
				if b == '\r' && len(in.buf) > 0 && in.buf[0] == '\n' {
					in.buf = in.buf[1:]
				}
				return enter, nil
			}
			continue
		}
		lower := b
		if 'A' <= b && b <= 'Z' {
			lower = b + 'a' - 'A'
		}
		if v, ok := keys[lower]; ok {
			in.eatLineEnd()
			return v, nil
		}
		if b == ' ' || b == '\t' {
			continue
		}
		reprompt()
	}
}

// eatLineEnd takes a line break that is already buffered right after a
// key.
func (in *input) eatLineEnd() {
	if len(in.buf) > 0 && in.buf[0] == '\r' {
		in.buf = in.buf[1:]
	}
	if len(in.buf) > 0 && in.buf[0] == '\n' {
		in.buf = in.buf[1:]
	}
}

// text reads a line of text key by key, as a raw terminal sends it:
// Enter ends it, Backspace takes back a character; with echo the keys
// are written to w (a raw terminal does not echo them itself).
func (in *input) text(ctx context.Context, w io.Writer, echo bool) (string, error) {
	var line []rune
	var pending []byte // the bytes of a character not yet whole
	for {
		b, err := in.key(ctx)
		if err != nil {
			return "", err
		}
		switch b {
		case '\r', '\n':
			if b == '\r' && len(in.buf) > 0 && in.buf[0] == '\n' {
				in.buf = in.buf[1:]
			}
			return string(line), nil
		case keyBackspace, keyCtrlH:
			if len(line) > 0 {
				line = line[:len(line)-1]
				if echo {
					fmt.Fprint(w, "\b \b")
				}
			}
			continue
		}
		if b < 0x20 {
			continue // other control keys (Esc, arrows' lead byte…) are not text
		}
		pending = append(pending, b)
		if !utf8.FullRune(pending) {
			continue
		}
		r, _ := utf8.DecodeRune(pending)
		pending = pending[:0]
		line = append(line, r)
		if echo {
			fmt.Fprint(w, sanitize(string(r)))
		}
	}
}

// promptTick is how often the countdown is redrawn and the store is
// looked at for an answer given elsewhere.
const promptTick = time.Second

// prompt asks the human at the terminal about a pending request, with
// the findings and a countdown to its deadline, and answers it through
// the broker. The broker calls it (broker.Prompter) inside Ask, so
// the asker waits for it. Silence until the deadline, Ctrl-C and end of
// input deny; an answer given on another surface (warden approvals)
// ends the prompt and wakes the waiter with that answer.
func (c *chat) prompt(ctx context.Context, r store.Request) {
	if r.Elicit != nil {
		c.elicitPrompt(ctx, r)
		return
	}
	t := c.env.term
	nl := "\n"
	if t.raw != nil {
		if restore, err := t.raw(); err == nil {
			defer restore()
			nl = "\r\n" // raw mode: no output processing
		}
	}
	w := t.w
	fmt.Fprint(w, strings.ReplaceAll(describeRequest(r), "\n", nl))
	ticker := time.NewTicker(promptTick)
	defer ticker.Stop()
	line := func() {
		left := time.Until(r.Deadline).Round(time.Second)
		fmt.Fprintf(w, "\r[o]nce [s]ession [a]lways [d]eny — %s left, then deny: \x1b[K", max(left, 0))
	}
	line()
	for {
		choice := c.in.nextKey()
		if choice == choiceNone {
			more, ticked, err := c.in.fill(ctx, ticker.C)
			switch {
			case err != nil:
				fmt.Fprint(w, nl)
				return // the runner's ctx ended: the broker withdraws it
			case ticked:
				if !time.Now().Before(r.Deadline) {
					fmt.Fprint(w, nl+"no answer in time: not run (the request expired)"+nl)
					return // the broker's deadline expires it
				}
				if done := c.answeredElsewhere(ctx, r.ID, w, nl); done {
					return
				}
				line()
				continue
			case !more:
				choice = choiceEOF
			default:
				continue
			}
		}
		a := surface.Answer{By: c.identity()}
		var said string
		switch choice {
		case choiceOnce:
			a.Approve, a.Scope, said = true, store.Once, "approved once"
		case choiceSession:
			a.Approve, a.Scope, said = true, store.Session, "approved for this session (this exact command)"
		case choiceAlways:
			// "Always" changes policy for every session: confirm it.
			fmt.Fprint(w, "\r\x1b[Kalways: allow this exact command in every session from now on, until revoked? [y/n] ")
			yes, err := c.in.choose(ctx, map[byte]string{'y': "y", 'n': "n"}, "", func() {})
			if err != nil {
				fmt.Fprint(w, nl)
				if errors.Is(err, errInterrupted) || errors.Is(err, io.EOF) {
					choice = choiceDeny
					a.Reason = "no answer: the always was not confirmed"
					said = "denied (not confirmed)"
					break
				}
				return
			}
			if yes != "y" {
				fmt.Fprint(w, "no"+nl)
				line()
				continue
			}
			fmt.Fprint(w, "yes"+nl)
			a.Approve, a.Scope, said = true, store.Always, "approved always (this exact command, every session)"
		case choiceDeny:
			said = "denied"
		case choiceInterrupt:
			a.Reason, said = "interrupted at the terminal prompt", "denied (interrupted)"
		case choiceEOF:
			a.Reason, said = "no answer: end of input", "denied (end of input)"
		default:
			fmt.Fprint(w, nl+"press o, s, a or d"+nl)
			line()
			continue
		}
		if choice != choiceAlways {
			fmt.Fprint(w, nl)
		}
		fmt.Fprint(w, "→ "+said+nl)
		ended, err := c.host.Answer(ctx, r.ID, a)
		switch {
		case errors.Is(err, surface.ErrNotPending):
			fmt.Fprint(w, localapi.LateMessage(ended)+nl)
		case err != nil:
			fmt.Fprintf(w, "could not record the answer: %v%s", err, nl)
			// The waiter expires at the deadline; nothing runs meanwhile.
		}
		return
	}
}

// answeredElsewhere reports whether the request ended on another surface
// (warden approvals answers the shared store); reading it ended wakes
// the waiter (surface.Host.Request), which this process's broker would
// otherwise only hear of at the deadline.
func (c *chat) answeredElsewhere(ctx context.Context, id string, w io.Writer, nl string) bool {
	cur, err := c.host.Request(ctx, id)
	if err != nil || cur.State == store.Pending {
		return false
	}
	how := string(cur.State)
	if cur.By != "" {
		how += " by " + cur.By
	}
	if cur.Surface != "" {
		how += " on " + cur.Surface
	}
	fmt.Fprint(w, nl+"answered elsewhere: "+sanitize(how)+nl)
	return true
}

// describeRequest is the prompt's header: the command, each finding
// with its class, description and span, and the request id.
func describeRequest(r store.Request) string {
	var b strings.Builder
	var a shell.Analysis
	haveAnalysis := len(r.Analysis) > 0 && json.Unmarshal(r.Analysis, &a) == nil && len(a.Findings) > 0
	cmd := r.Action.Command
	if haveAnalysis {
		cmd = a.Input // the spans index into the analysed text
	}
	fmt.Fprintf(&b, "\nwarden: this needs your approval (request %s):\n  %s\n", r.ID, sanitize(cmd))
	if r.Notice != "" {
		fmt.Fprintf(&b, "  note: %s\n", sanitize(r.Notice))
	}
	if haveAnalysis {
		single := !strings.ContainsAny(a.Input, "\n\r")
		for _, f := range a.Findings {
			if single && f.Span.Start >= 0 && f.Span.End <= len(a.Input) && f.Span.Start < f.Span.End {
				fmt.Fprintf(&b, "  %s%s\n", strings.Repeat(" ", len([]rune(sanitize(a.Input[:f.Span.Start])))),
					strings.Repeat("^", max(1, len([]rune(sanitize(a.Input[f.Span.Start:f.Span.End]))))))
			}
			fmt.Fprintf(&b, "  %s: %s\n", f.Class, f.Description)
		}
	} else if len(r.Classes) > 0 {
		fmt.Fprintf(&b, "  classes: %s\n", strings.Join(r.Classes, ", "))
	}
	return b.String()
}
