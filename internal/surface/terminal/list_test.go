package terminal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type job struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

var jobs = List[job]{
	Empty: "no jobs",
	Columns: []Column[job]{
		{Name: "NAME", Cell: func(j job) string { return j.Name }},
		{Name: "IS ENABLED", Cell: func(j job) string { return yesNo(j.Enabled) }},
	},
	Filters: []Filter[job]{
		{Flag: "enabled", Choices: []string{"yes", "no"}, Value: func(j job) string { return yesNo(j.Enabled) }},
		{Flag: "name", Value: func(j job) string { return j.Name }},
	},
}

func TestWrite(t *testing.T) {
	rows := []job{{"a", true}, {"bb", false}, {"c\x1b[2J\nd\te", true}}
	for _, tc := range []struct {
		name string
		q    Query
		rows []job
		want string
		err  string
	}{
		{name: "all", rows: rows, want: "NAME             IS ENABLED\na                yes\nbb               no\nc\\x1b[2J\\x0ad e  yes\n"},
		{name: "columns reordered, any spelling", rows: rows[:2], q: Query{Columns: []string{"is-enabled", " name"}},
			want: "IS ENABLED  NAME\nyes         a\nno          bb\n"},
		{name: "filter", rows: rows, q: Query{Where: map[string]string{"enabled": "no"}}, want: "NAME  IS ENABLED\nbb    no\n"},
		{name: "two filters", rows: rows, q: Query{Where: map[string]string{"enabled": "yes", "name": "a"}}, want: "NAME  IS ENABLED\na     yes\n"},
		{name: "unset filter", rows: rows[:1], q: Query{Where: map[string]string{"name": ""}}, want: "NAME  IS ENABLED\na     yes\n"},
		{name: "empty", want: "no jobs\n"},
		{name: "filtered to empty", rows: rows, q: Query{Where: map[string]string{"name": "zz"}}, want: "no jobs\n"},
		{name: "json filtered", rows: rows, q: Query{JSON: true, Where: map[string]string{"enabled": "no"}},
			want: "[\n  {\n    \"name\": \"bb\",\n    \"enabled\": false\n  }\n]\n"},
		{name: "json empty is []", q: Query{JSON: true}, want: "[]\n"},
		{name: "unknown column", rows: rows, q: Query{Columns: []string{"colour"}}, err: `no column "colour" (columns: name,is-enabled)`},
		{name: "bad choice", rows: rows, q: Query{Where: map[string]string{"enabled": "maybe"}}, err: `--enabled "maybe": want one of yes, no`},
		{name: "unknown filter", rows: rows, q: Query{Where: map[string]string{"colour": "red"}}, err: `no filter "colour"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := jobs.Write(&out, tc.rows, tc.q)
			if tc.err != "" {
				if !errors.Is(err, ErrQuery) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want ErrQuery with %q", err, tc.err)
				}
				if out.Len() != 0 {
					t.Errorf("wrote %q before failing", out.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got\n%q\nwant\n%q", out.String(), tc.want)
			}
		})
	}
}

// TestCell: nothing a value holds can break a table line or reach the
// terminal as a control sequence.
func TestCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"a\tb":               "a b",
		"a\nb\r":             `a\x0ab\r`,
		"\x1b]0;pwned\a":     `\x1b]0;pwned\x07`,
		"no\u00a0break":      `no\u00a0break`,
		`lit\x0a`:            `lit\\x0a`,
		"rtl\u202eevil":      `rtl\u202eevil`,
		string([]byte{0xff}): `\xff`,
	} {
		if got := Cell(in); got != want {
			t.Errorf("Cell(%q) = %q, want %q", in, got, want)
		}
	}
}
