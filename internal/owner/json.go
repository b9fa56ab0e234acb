package owner

import (
	"bytes"
	"encoding/json"
)

// ownerJSON is the audit form of one lineage element.
type ownerJSON struct {
	// Owner is the full notation, lineage included, so a record can be
	// searched and replayed with warden check --as.
	Owner           string     `json:"owner"`
	Kind            Kind       `json:"kind"`
	Session         string     `json:"session,omitempty"`
	Platform        string     `json:"platform,omitempty"`
	Chat            string     `json:"chat,omitempty"`
	User            string     `json:"user,omitempty"`
	Job             string     `json:"job,omitempty"`
	Run             string     `json:"run,omitempty"`
	Board           string     `json:"board,omitempty"`
	Task            string     `json:"task,omitempty"`
	Agent           string     `json:"agent,omitempty"`
	ExternalSession string     `json:"external_session,omitempty"`
	Subagent        string     `json:"subagent,omitempty"`
	CanAnswer       bool       `json:"can_answer"`
	Surface         string     `json:"surface,omitempty"`
	Unattended      bool       `json:"unattended"`
	LineageUnatt    bool       `json:"lineage_unattended"`
	Parent          *ownerJSON `json:"parent,omitempty"`
}

func toJSON(o Owner) *ownerJSON {
	if o.d == nil {
		return nil
	}
	d := o.d
	j := &ownerJSON{
		Owner:           o.String(),
		Kind:            d.kind,
		Session:         d.session,
		Platform:        d.platform,
		Chat:            d.chat,
		User:            d.user,
		Job:             d.job,
		Run:             d.run,
		Board:           d.board,
		Task:            d.task,
		Agent:           d.agent,
		ExternalSession: d.extSession,
		Subagent:        d.subagent,
		CanAnswer:       d.channel != nil,
		Unattended:      o.Unattended(),
		LineageUnatt:    o.LineageUnattended(),
	}
	if d.channel != nil {
		j.Surface = d.channel.Surface()
	}
	if p, ok := o.Parent(); ok {
		j.Parent = toJSON(p)
	}
	return j
}

// MarshalJSON writes every field of o for the audit log, its parent
// nested under "parent", and the full notation under "owner". The zero
// Owner is null. ">" is written as itself, not as \u003e; an
// enclosing json.Marshal may still escape it (both are valid JSON).
//
// There is deliberately no UnmarshalJSON: an Owner is built by the code
// that knows who is asking, never decoded from input.
func (o Owner) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(toJSON(o)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
