package cli

import (
	"encoding/json"
	"io"

	"github.com/wardenhq/warden/internal/explain"
)

// The JSON shapes below are a documented interface (docs/check.md); the
// report of --json is explain.Report's.

// jsonlResult is one output line of warden check --jsonl for a good input
// line.
type jsonlResult struct {
	Cmd      string   `json:"cmd"`
	Verdict  string   `json:"verdict"`
	Classes  []string `json:"classes"`
	DenyRule string   `json:"deny_rule,omitempty"`
	// Decision and Rule are set for a line with "as".
	Decision string `json:"decision,omitempty"`
	Rule     string `json:"rule,omitempty"`
}

// jsonlError is the output line for a bad input line.
type jsonlError struct {
	Error string `json:"error"`
}

// catalogueJSON is the output of warden check --catalogue --json.
type catalogueJSON struct {
	Classes []explain.ClassReport `json:"classes"`
}

// writeJSON encodes v without HTML escaping: commands are full of & < >,
// and \u0026 in place of && helps nobody reading the output.
func writeJSON(w io.Writer, v any, indent bool) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
