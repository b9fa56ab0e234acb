// Package terminal renders for a terminal: an explanation of a decision
// (warden check's report), with findings highlighted in ANSI colour or
// marked with ^^^, and text escaped so that nothing a command or a
// config holds can act on the terminal it is shown on.
package terminal

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
	"mvdan.cc/sh/v3/syntax"

	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/shell"
)

// Limits that keep a report readable when the input is a whole script.
const (
	maxHeaderLines  = 20  // lines of the command echoed at the top
	maxHeaderCols   = 200 // columns per echoed line
	maxExcerptLines = 6   // lines shown per finding
	maxExcerptCols  = 120 // columns per excerpt line, windowed around the span
)

// ANSI sequences for highlighting.
const (
	ansiReset     = "\x1b[0m"
	ansiHardline  = "\x1b[1;4;31m" // bold, underlined, red
	ansiDangerous = "\x1b[4;33m"   // underlined, yellow
	ansiSafe      = "\x1b[32m"
	ansiBold      = "\x1b[1m"
	ansiDim       = "\x1b[2m"
)

// UseColor decides whether to highlight with ANSI escapes. "auto" means
// only when w is a terminal: escapes in a file or a pipe are noise.
func UseColor(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// WriteExplanation prints e for a person: the command with its findings
// highlighted (color) or marked, the verdict, classes, findings and
// commands, how the line was read when e.Reading, and the gate's
// decision path when it decided.
func WriteExplanation(w io.Writer, e explain.Explanation, color bool) error {
	bw := bufio.NewWriter(w)
	p := &painter{w: bw, color: color}
	a := e.Analysis

	p.header(a)
	if e.Cmd != a.Input {
		// Spans index the normalised text; show what was given too, quoted
		// so that control bytes cannot act on the terminal.
		fmt.Fprintf(bw, "as given: %s\n", strconv.QuoteToGraphic(e.Cmd))
	}
	fmt.Fprintf(bw, "verdict: %s\n", p.verdict(e.Verdict))
	if e.DenyRule != "" {
		if e.Verdict == explain.VerdictDenied {
			fmt.Fprintf(bw, "deny rule: %s\n", Sanitize(e.DenyRule))
		} else {
			fmt.Fprintf(bw, "deny rule: %s (matched; the %s verdict takes precedence)\n", Sanitize(e.DenyRule), e.Verdict)
		}
	}
	if a.Error != "" {
		fmt.Fprintf(bw, "error: %s\n", Sanitize(a.Error))
	}
	if a.Dynamic {
		fmt.Fprintln(bw, "dynamic: part of what runs cannot be known statically")
	}

	if classes := e.Classes(); len(classes) > 0 {
		fmt.Fprintln(bw, "\nclasses:")
		kw, tw := 0, 0
		for _, c := range classes {
			kw, tw = max(kw, len(c.Key)), max(tw, len(c.Tier))
		}
		for _, c := range classes {
			fmt.Fprintf(bw, "  %-*s  %-*s  %s\n", kw, c.Key, tw, c.Tier, c.Description)
		}
	}

	if len(a.Findings) > 0 {
		fmt.Fprintln(bw, "\nfindings:")
		for _, f := range a.Findings {
			p.finding(a, f)
		}
	}

	if len(a.Commands) > 0 {
		fmt.Fprintln(bw, "\ncommands:")
		for i, c := range a.Commands {
			fmt.Fprintf(bw, "  %d. %s", i+1, renderCommand(c))
			if len(c.Via) > 0 {
				fmt.Fprintf(bw, "  (via %s)", Sanitize(strings.Join(c.Via, ", ")))
			}
			fmt.Fprintln(bw)
		}
	}

	if e.Reading {
		reading(bw, e)
	}
	if e.Decision != nil {
		p.decision(e.Decision)
	}
	return bw.Flush()
}

// reading prints how the line was read: each command's argv as bash
// will run it (every byte that is not printable ASCII escaped), how it
// was reached, how its program's options were read, and what decided.
func reading(w io.Writer, e explain.Explanation) {
	a := e.Analysis
	fmt.Fprintln(w, "\nexplain:")
	if a.Input != "" && Sanitize(a.Input) != a.Input {
		fmt.Fprintf(w, "  bytes: %s\n", Quote(a.Input))
	}
	for i, c := range a.Commands {
		words := make([]string, len(c.Argv))
		for j, arg := range c.Argv {
			words[j] = renderArg(arg)
		}
		fmt.Fprintf(w, "  %d. argv: %s\n", i+1, strings.Join(words, " "))
		if len(c.Via) > 0 {
			fmt.Fprintf(w, "     reached through: %s\n", Sanitize(strings.Join(c.Via, " > ")))
		}
		if c.Parse != "" {
			fmt.Fprintf(w, "     options read: %s\n", Sanitize(c.Parse))
		}
		for _, f := range a.Findings {
			if f.Command != i {
				continue
			}
			line := fmt.Sprintf("     %s (%s)", f.Class, f.Tier)
			if f.Opaque {
				line += " [could not see into]"
			}
			if f.Detail != "" {
				line += ": " + Sanitize(f.Detail)
			}
			fmt.Fprintln(w, line)
		}
	}
	for _, f := range a.Findings {
		if f.Command < 0 {
			fmt.Fprintf(w, "  line: %s (%s)\n", f.Class, f.Tier)
		}
	}
	fmt.Fprintf(w, "  decided by: %s\n", Sanitize(e.DecidedBy()))
}

// decisionMarker points at the row of the decision path that decided.
const decisionMarker = "→"

// decision prints the gate's decision for the owner of --as: who, the
// verdict and rule, then every row of the decision table with its
// outcome and detail, the deciding row marked, and the message the agent
// would get.
func (p *painter) decision(d *explain.Decision) {
	w := p.w
	fmt.Fprintf(w, "\nas: %s (%s)\n", Sanitize(d.Owner.String()), d.Attendance())
	fmt.Fprintf(w, "decision: %s\n", p.decisionVerdict(d.Verdict))
	fmt.Fprintf(w, "rule: %s\n", Sanitize(d.Rule))

	fmt.Fprintln(w, "\ndecision path:")
	nw, ow := 0, 0
	for _, s := range d.Steps {
		nw, ow = max(nw, len(s.Name)), max(ow, len(s.Outcome))
	}
	for _, s := range d.Steps {
		mark := " "
		if s.Outcome == gate.Decided {
			mark = decisionMarker
		}
		row := fmt.Sprintf("  %s %2d  %-*s  %-*s  %s", mark, s.N, nw, Sanitize(s.Name), ow, s.Outcome, Sanitize(s.Detail))
		row = strings.TrimRight(row, " ")
		switch {
		case !p.color:
		case s.Outcome == gate.Decided:
			row = ansiBold + row + ansiReset
		case s.Outcome == gate.NotReached:
			row = ansiDim + row + ansiReset
		}
		fmt.Fprintln(w, row)
	}
	if d.AgentMessage != "" {
		fmt.Fprintf(w, "\nagent message: %s\n", Sanitize(d.AgentMessage))
	}
}

// decisionVerdict colours a gate verdict like the analysis verdicts:
// allow as safe, ask as dangerous, deny as hardline.
func (p *painter) decisionVerdict(v gate.Verdict) string {
	switch {
	case !p.color:
		return string(v)
	case v == gate.Allow:
		return ansiSafe + string(v) + ansiReset
	case v == gate.Ask:
		return ansiDangerous + string(v) + ansiReset
	}
	return ansiHardline + string(v) + ansiReset
}

// painter renders input text with findings marked, either with ANSI
// highlighting or with ^^^ marker lines.
type painter struct {
	w     *bufio.Writer
	color bool
}

func (p *painter) verdict(v string) string {
	if !p.color {
		return v
	}
	switch v {
	case "safe":
		return ansiSafe + v + ansiReset
	case "dangerous":
		return ansiDangerous + v + ansiReset
	}
	return ansiHardline + v + ansiReset
}

// header echoes the analysed command, every finding highlighted on a
// terminal.
func (p *painter) header(a *shell.Analysis) {
	lines := splitLines(a.Input)
	single := len(lines) == 1
	if single {
		p.w.WriteString("command: ")
	} else {
		p.w.WriteString("command:\n")
	}
	for i, ln := range lines {
		if i == maxHeaderLines {
			fmt.Fprintf(p.w, "  … (%d more lines)\n", len(lines)-i)
			break
		}
		if !single {
			p.w.WriteString("  ")
		}
		cells := cellsOf(a.Input, ln)
		hi, cut := cropRight(cells, maxHeaderCols)
		hl := highlighter{w: p.w, color: p.color}
		for _, c := range cells[:hi] {
			hl.write(c, tierAt(a.Findings, c.off))
		}
		hl.end()
		if cut {
			p.w.WriteString("…")
		}
		p.w.WriteByte('\n')
	}
}

// finding prints one finding: its class, position and the lines its span
// covers, marked.
func (p *painter) finding(a *shell.Analysis, f shell.Finding) {
	start, end := explain.ClampSpan(len(a.Input), f.Span)
	lines := splitLines(a.Input)
	first := lineAt(lines, start)
	col := 1 + colOf(cellsOf(a.Input, lines[first]), start)
	fmt.Fprintf(p.w, "  %s at %d:%d", f.Class, first+1, col)
	if f.Command >= 0 && f.Command < len(a.Commands) {
		fmt.Fprintf(p.w, ", command %d", f.Command+1)
	}
	if c, ok := shell.Lookup(f.Class); !ok || c.Description != f.Description {
		fmt.Fprintf(p.w, ": %s", Sanitize(f.Description))
	}
	p.w.WriteByte('\n')

	shown := 0
	for i := first; i < len(lines); i++ {
		ln := lines[i]
		if i > first && ln.start >= end {
			break
		}
		if shown == maxExcerptLines {
			fmt.Fprintln(p.w, "    …")
			break
		}
		shown++
		p.excerpt(a.Input, ln, start, end, f.Tier)
	}
}

// excerpt prints one line of input with [start, end) marked, windowed to
// maxExcerptCols around the marked part.
func (p *painter) excerpt(input string, ln lineRange, start, end int, tier shell.Tier) {
	cells := cellsOf(input, ln)
	covered := func(c cell) bool {
		if start == end { // an empty span marks the position it points at
			return c.off == start
		}
		return c.off >= start && c.off < end
	}
	// A span that starts at the end of the line points past its last cell.
	if start == end && start == ln.end {
		cells = append(cells, cell{off: ln.end, text: " ", w: 1})
	}
	lo, hi := window(cells, covered, maxExcerptCols)

	var marks strings.Builder
	p.w.WriteString("    ")
	marks.WriteString("    ")
	if lo > 0 {
		p.w.WriteString("…")
		marks.WriteString(" ")
	}
	marked := false
	hl := highlighter{w: p.w, color: p.color}
	for _, c := range cells[lo:hi] {
		if covered(c) {
			marked = true
			hl.write(c, tier)
			marks.WriteString(strings.Repeat("^", max(c.w, 1)))
		} else {
			hl.write(c, "")
			marks.WriteString(strings.Repeat(" ", c.w))
		}
	}
	hl.end()
	if hi < len(cells) {
		p.w.WriteString("…")
	}
	p.w.WriteByte('\n')
	if !p.color && marked {
		p.w.WriteString(strings.TrimRight(marks.String(), " "))
		p.w.WriteByte('\n')
	}
}

// highlighter writes cells, switching ANSI attributes only where the tier
// changes, so a highlighted span is one escape sequence, not one per rune.
type highlighter struct {
	w     *bufio.Writer
	color bool
	cur   shell.Tier
}

func (h *highlighter) write(c cell, tier shell.Tier) {
	if h.color && tier != h.cur {
		h.end()
		switch tier {
		case shell.TierHardline:
			h.w.WriteString(ansiHardline)
		case "":
		default:
			h.w.WriteString(ansiDangerous)
		}
		h.cur = tier
	}
	h.w.WriteString(c.text)
}

// end closes an open highlight.
func (h *highlighter) end() {
	if h.cur != "" {
		h.w.WriteString(ansiReset)
		h.cur = ""
	}
}

// tierAt is the most severe tier of the findings covering byte off, or ""
// when none does.
func tierAt(findings []shell.Finding, off int) shell.Tier {
	var t shell.Tier
	for _, f := range findings {
		if off >= f.Span.Start && off < f.Span.End {
			if f.Tier == shell.TierHardline {
				return f.Tier
			}
			t = f.Tier
		}
	}
	return t
}

// lineRange is one line of the input: bytes [start, end), without the
// newline.
type lineRange struct{ start, end int }

func splitLines(s string) []lineRange {
	var out []lineRange
	start := 0
	for {
		i := strings.IndexByte(s[start:], '\n')
		if i < 0 {
			return append(out, lineRange{start, len(s)})
		}
		out = append(out, lineRange{start, start + i})
		start += i + 1
	}
}

// lineAt is the index of the line holding byte off.
func lineAt(lines []lineRange, off int) int {
	for i, ln := range lines {
		if off <= ln.end {
			return i
		}
	}
	return len(lines) - 1
}

// cell is one rune of input as displayed.
type cell struct {
	off  int    // byte offset of the rune in the input
	text string // what is printed for it
	w    int    // terminal columns it takes
}

// cellsOf splits a line into display cells. Anything that could act on a
// terminal or hide text (control bytes, escapes, bidi and other format
// characters, invalid UTF-8) prints as "?", so the report shows what is
// there and a hostile command cannot rewrite the screen.
func cellsOf(s string, ln lineRange) []cell {
	cells := make([]cell, 0, ln.end-ln.start)
	for off := ln.start; off < ln.end; {
		r, size := utf8.DecodeRuneInString(s[off:ln.end])
		c := cell{off: off, text: s[off : off+size], w: 1}
		switch {
		case r == '\t':
			c.text = " "
		case r == utf8.RuneError && size == 1, unicode.IsControl(r), r >= utf8.RuneSelf:
			// Shown as it will run: invisible, control and non-ASCII
			// characters as escapes (\u00a0, \x1b), never as what they
			// look like.
			c.text = shell.Visible(c.text)
			c.w = len(c.text)
		case r == '\\' && off+1 < ln.end && strings.IndexByte("xuUr\\", s[off+1]) >= 0:
			// A backslash that would read as the start of an escape is
			// doubled, as shell.Visible does.
			c.text, c.w = `\\`, 2
		}
		cells = append(cells, c)
		off += size
	}
	return cells
}

// colOf is the display column (0-based) of byte off within cells.
func colOf(cells []cell, off int) int {
	col := 0
	for _, c := range cells {
		if c.off >= off {
			break
		}
		col += c.w
	}
	return col
}

// cropRight returns how many cells fit in cols, and whether any were cut.
func cropRight(cells []cell, cols int) (int, bool) {
	w := 0
	for i, c := range cells {
		if w+c.w > cols {
			return i, true
		}
		w += c.w
	}
	return len(cells), false
}

// window picks cells [lo, hi) of at most cols columns, starting a little
// before the first covered cell so that the mark has context.
func window(cells []cell, covered func(cell) bool, cols int) (lo, hi int) {
	total := 0
	first := -1
	for i, c := range cells {
		total += c.w
		if first < 0 && covered(c) {
			first = i
		}
	}
	if total <= cols {
		return 0, len(cells)
	}
	if first < 0 {
		first = 0
	}
	const context = 30 // columns of context before the mark
	lo = first
	for w := 0; lo > 0 && w+cells[lo-1].w <= context; lo-- {
		w += cells[lo-1].w
	}
	hi = lo
	for w := 0; hi < len(cells) && w+cells[hi].w <= cols; hi++ {
		w += cells[hi].w
	}
	return lo, hi
}

// renderCommand prints a candidate as a shell-like line: assignments, argv
// (static words quoted where needed, dynamic ones in their readable
// shape), redirections.
func renderCommand(c shell.Command) string {
	var parts []string
	for _, as := range c.Assigns {
		parts = append(parts, Sanitize(as))
	}
	for _, a := range c.Argv {
		parts = append(parts, renderArg(a))
	}
	for _, r := range c.Redirs {
		parts = append(parts, Sanitize(r.Op)+renderArg(r.Target))
	}
	return strings.Join(parts, " ")
}

func renderArg(a shell.Arg) string {
	if !a.Static {
		return Sanitize(a.Value)
	}
	if Sanitize(a.Value) != a.Value {
		return Quote(a.Value)
	}
	if q, err := syntax.Quote(a.Value, syntax.LangBash); err == nil {
		return q
	}
	return strconv.QuoteToGraphic(a.Value)
}

// Sanitize renders s as it is, with what could act on a terminal or
// disguise itself escaped (see cellsOf, shell.Visible).
func Sanitize(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) && r != '\t' || r >= utf8.RuneSelf || r == '\\' {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, c := range cellsOf(s, lineRange{0, len(s)}) {
		b.WriteString(c.text)
	}
	return b.String()
}

// Quote quotes s as bash's $'…', with every byte that is not printable
// ASCII escaped (\x1b, \u00a0): the word as it will run, readable and
// pasteable.
func Quote(s string) string {
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1 || r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	b.WriteByte('\'')
	return b.String()
}
