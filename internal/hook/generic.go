package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/wardenhq/warden/internal/action"
)

// GenericVersion is the version of the generic protocol this package
// speaks. A request must carry it; the answer always does.
const GenericVersion = 1

// Generic is warden's own hook protocol, for agents without one of
// their own. One JSON object on stdin:
//
//	{"version":1, "agent":"my-agent", "session":"run-42",
//	 "action":{"kind":"shell", "command":"git push", "dir":"/abs/dir"}}
//
// agent and session are required and name the owner
// external:AGENT/SESSION (grants of scope session are that session's);
// action is warden's action JSON (kind shell, code, write, mcp or
// plugin, with that kind's fields; dir absolute when given). The answer
// is one JSON object on stdout:
//
//	{"version":1, "decision":"allow|deny|ask", "reason":"…",
//	 "rule":"…", "request_id":"…", "classes":["…"]}
//
// and the exit status is the decision's, as for warden check --as:
// 0 allow, 1 ask, 2 deny. Ask means no warden host was running to ask
// a human on its console: the agent must ask its own human, or treat it
// as deny. Malformed input is a deny (exit 2) whose reason says what is
// wrong. Unknown fields are refused, so a misspelt field never goes
// unnoticed; the agent cannot name a backend or a read-only hint, which
// would let it vouch for its own action.
type Generic struct{}

// GenericRequest is the generic protocol's input.
type GenericRequest struct {
	Version int           `json:"version"`
	Agent   string        `json:"agent"`
	Session string        `json:"session"`
	Action  action.Action `json:"action"`
}

// GenericResponse is the generic protocol's output.
type GenericResponse struct {
	Version   int      `json:"version"`
	Decision  string   `json:"decision"`
	Reason    string   `json:"reason,omitempty"`
	Rule      string   `json:"rule,omitempty"`
	RequestID string   `json:"request_id,omitempty"`
	Classes   []string `json:"classes"`
}

// Parse implements Protocol.
func (Generic) Parse(payload []byte) (Call, error) {
	var r GenericRequest
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Call{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if dec.More() {
		return Call{}, fmt.Errorf("%w: more than one JSON value", ErrMalformed)
	}
	a := r.Action
	switch {
	case r.Version != GenericVersion:
		return Call{}, fmt.Errorf("%w: version %d (this warden speaks version %d)", ErrMalformed, r.Version, GenericVersion)
	case r.Agent == "":
		return Call{}, fmt.Errorf("%w: no agent", ErrMalformed)
	case r.Session == "":
		return Call{}, fmt.Errorf("%w: no session", ErrMalformed)
	case a.Dir != "" && !filepath.IsAbs(a.Dir):
		return Call{}, fmt.Errorf("%w: action.dir %q is not absolute", ErrMalformed, a.Dir)
	case a.Backend != "" && a.Backend != action.Local:
		return Call{}, fmt.Errorf("%w: action.backend: where an action runs is not the caller's to say", ErrMalformed)
	case a.ReadOnly:
		return Call{}, fmt.Errorf("%w: action.read_only: a read-only hint comes from an MCP server, not the caller", ErrMalformed)
	case a.Kind == action.Write && !filepath.IsAbs(a.Path):
		return Call{}, fmt.Errorf("%w: action.path %q is not absolute", ErrMalformed, a.Path)
	}
	c := Call{Agent: r.Agent, Session: r.Session, Tool: string(a.Kind), Action: a}
	return c, validate(c)
}

// Render implements Protocol.
func (Generic) Render(a Answer) Response {
	resp := GenericResponse{Version: GenericVersion, Decision: string(a.Verdict), Reason: a.Reason, Rule: a.Rule, RequestID: a.RequestID, Classes: a.Classes}
	if resp.Classes == nil {
		resp.Classes = []string{}
	}
	exit := 2
	switch a.Verdict {
	case Allow:
		exit = 0
	case Ask:
		exit = 1
	case Deny:
	default: // Pass never comes from Parse; anything else is a deny
		resp.Decision, resp.Reason = string(Deny), fmt.Sprintf("warden blocked this action: no verdict (%q). Do not retry it.", a.Verdict)
	}
	out, err := json.Marshal(resp)
	if err != nil {
		return Response{Stderr: "warden: " + err.Error() + "\n", Exit: 2}
	}
	return Response{Stdout: append(out, '\n'), Exit: exit}
}
