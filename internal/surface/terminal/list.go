// Package terminal renders what warden shows at a terminal. list.go is
// the one renderer behind every "warden NOUN list" command: a List names
// a row type's columns and filters once, and Write prints the rows as an
// aligned table for people or as a JSON array for programs, after the
// same filters. Commands (internal/cli) only fetch the rows and bind the
// flags.
package terminal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wardenhq/warden/internal/shell"
)

// ErrQuery is wrapped by every error about a Query itself (an unknown
// column, a filter value outside its choices): the caller's usage error,
// found before anything is fetched.
var ErrQuery = errors.New("bad list query")

// Column is one column of a list's table.
type Column[T any] struct {
	// Name is the header, upper case ("LAST ERROR"); --columns matches it
	// case-insensitively, with "-" or "_" for a space.
	Name string
	// Cell renders a row's value; Write makes it one visible line.
	Cell func(T) string
}

// Filter keeps the rows whose Value equals the one asked for. It filters
// the JSON output as well as the table.
type Filter[T any] struct {
	// Flag is the flag's name, without dashes ("status").
	Flag string
	// Usage is the flag's help.
	Usage string
	// Choices, if set, are the only values accepted: a typo is a usage
	// error, not an empty list.
	Choices []string
	// Value is what a row has for this filter.
	Value func(T) string
}

// List describes the listing of one row type.
type List[T any] struct {
	// Empty is the line printed instead of an empty table ("no tasks").
	Empty   string
	Columns []Column[T]
	Filters []Filter[T]
}

// Query is what the user asked for.
type Query struct {
	// JSON prints the (filtered) rows as a JSON array of the row type's
	// own encoding; Columns then does not apply.
	JSON bool
	// Columns chooses and orders the table's columns; empty means all.
	Columns []string
	// Where maps a filter's Flag to the value asked for; "" is unset.
	Where map[string]string
}

// columnKey is how --columns names a column.
func columnKey(s string) string {
	return strings.NewReplacer("-", " ", "_", " ").Replace(strings.ToUpper(strings.TrimSpace(s)))
}

// columns resolves q.Columns to column indexes.
func (l List[T]) columns(q Query) ([]int, error) {
	if len(q.Columns) == 0 {
		idx := make([]int, len(l.Columns))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	var idx []int
	for _, name := range q.Columns {
		i := slices.IndexFunc(l.Columns, func(c Column[T]) bool { return columnKey(c.Name) == columnKey(name) })
		if i < 0 {
			return nil, fmt.Errorf("%w: no column %q (columns: %s)", ErrQuery, name, l.columnNames())
		}
		idx = append(idx, i)
	}
	return idx, nil
}

// columnNames lists the columns for an error message, lower case, as
// --columns takes them.
func (l List[T]) columnNames() string {
	names := make([]string, len(l.Columns))
	for i, c := range l.Columns {
		names[i] = strings.ReplaceAll(strings.ToLower(c.Name), " ", "-")
	}
	return strings.Join(names, ",")
}

// Check reports a query this list cannot answer: an unknown column or
// filter, or a value outside a filter's choices.
func (l List[T]) Check(q Query) error {
	if _, err := l.columns(q); err != nil {
		return err
	}
	for flag, v := range q.Where {
		i := slices.IndexFunc(l.Filters, func(f Filter[T]) bool { return f.Flag == flag })
		if i < 0 {
			return fmt.Errorf("%w: no filter %q", ErrQuery, flag)
		}
		if f := l.Filters[i]; v != "" && f.Choices != nil && !slices.Contains(f.Choices, v) {
			return fmt.Errorf("%w: --%s %q: want one of %s", ErrQuery, flag, v, strings.Join(f.Choices, ", "))
		}
	}
	return nil
}

// Select returns the rows every set filter of q keeps, in order; never
// nil, so JSON prints [] for none.
func (l List[T]) Select(rows []T, q Query) []T {
	out := make([]T, 0, len(rows))
next:
	for _, r := range rows {
		for _, f := range l.Filters {
			if v := q.Where[f.Flag]; v != "" && f.Value(r) != v {
				continue next
			}
		}
		out = append(out, r)
	}
	return out
}

// Write checks q, filters rows and prints them to w: a JSON array
// (indented), the Empty line, or a table of the chosen columns.
func (l List[T]) Write(w io.Writer, rows []T, q Query) error {
	idx, err := l.columns(q)
	if err != nil {
		return err
	}
	if err := l.Check(q); err != nil {
		return err
	}
	rows = l.Select(rows, q)
	if q.JSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, l.Empty)
		return err
	}
	header := make([]string, len(idx))
	for i, c := range idx {
		header[i] = l.Columns[c].Name
	}
	cells := make([][]string, len(rows))
	for r, row := range rows {
		cells[r] = make([]string, len(idx))
		for i, c := range idx {
			cells[r][i] = l.Columns[c].Cell(row)
		}
	}
	return Table(w, header, cells)
}

// Table writes aligned columns, two spaces apart, every cell made one
// visible line (Cell).
func Table(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	line := make([]string, 0, len(header))
	for _, r := range rows {
		line = line[:0]
		for _, c := range r {
			line = append(line, Cell(c))
		}
		fmt.Fprintln(tw, strings.Join(line, "\t"))
	}
	return tw.Flush()
}

// Cell renders s for one table cell: a tab is a space, and every other
// control, non-ASCII or invalid byte is escaped as shell.Visible escapes
// it (a newline as \x0a), so a hostile value (a task title, a session
// key, a command) cannot break the table's lines or rewrite the screen.
func Cell(s string) string {
	s = shell.Visible(strings.ReplaceAll(s, "\t", " "))
	return strings.ReplaceAll(s, "\n", `\x0a`)
}
