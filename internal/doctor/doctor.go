// Package doctor is `warden doctor`: a list of checks, each saying
// what is in force and why, run in order and rendered as text or JSON.
// A check is a name and a function; add one by appending it to the
// list the CLI builds.
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Status is a check's verdict.
type Status string

// Statuses.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Result is what one check found.
type Result struct {
	Name    string   `json:"name"`
	Status  Status   `json:"status"`
	Summary string   `json:"summary"`
	Details []Detail `json:"details,omitempty"`
}

// Detail is one named fact of a result.
type Detail struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Check is one check.
type Check struct {
	Name string
	Run  func(ctx context.Context) Result
}

// Run runs checks in order. A check that panics fails, with the panic
// as its summary: one broken check never hides the others.
func Run(ctx context.Context, checks []Check) []Result {
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		out = append(out, run(ctx, c))
	}
	return out
}

func run(ctx context.Context, c Check) (r Result) {
	defer func() {
		if p := recover(); p != nil {
			r = Result{Name: c.Name, Status: Fail, Summary: fmt.Sprintf("the check itself failed: %v", p)}
		}
	}()
	r = c.Run(ctx)
	if r.Name == "" {
		r.Name = c.Name
	}
	return r
}

// Failed reports whether any result failed.
func Failed(results []Result) bool {
	for _, r := range results {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// Text writes results for a person: one headed block per check.
func Text(w io.Writer, results []Result) error {
	var b strings.Builder
	for i, r := range results {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%-4s %s: %s\n", r.Status, r.Name, r.Summary)
		width := 0
		for _, d := range r.Details {
			width = max(width, len(d.Key))
		}
		for _, d := range r.Details {
			lines := strings.Split(d.Value, "\n")
			fmt.Fprintf(&b, "     %-*s  %s\n", width, d.Key, lines[0])
			for _, l := range lines[1:] {
				fmt.Fprintf(&b, "     %-*s  %s\n", width, "", l)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON writes results as one JSON array.
func JSON(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}
