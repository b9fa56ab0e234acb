package slacktest

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

type textObj struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type element struct {
	Type     string          `json:"type"`
	ActionID string          `json:"action_id"`
	Text     *textObj        `json:"text"`
	Value    string          `json:"value"`
	Style    string          `json:"style"`
	Options  []option        `json:"options"`
	Elements json.RawMessage `json:"elements"`
}

type option struct {
	Text  textObj `json:"text"`
	Value string  `json:"value"`
}

type block struct {
	Type     string          `json:"type"`
	BlockID  string          `json:"block_id"`
	Text     *textObj        `json:"text"`
	Elements json.RawMessage `json:"elements"`
	Label    *textObj        `json:"label"`
	Element  *element        `json:"element"`
	Optional bool            `json:"optional"`
}

// richText reads a rich_text block's elements into their text.
func richText(raw json.RawMessage) (string, error) {
	var els []struct {
		Type     string `json:"type"`
		Elements []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(raw, &els); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, e := range els {
		switch e.Type {
		case "rich_text_section", "rich_text_preformatted", "rich_text_quote":
		default:
			return "", fmt.Errorf("unknown rich text element %q", e.Type)
		}
		for _, x := range e.Elements {
			if x.Type != "text" {
				return "", fmt.Errorf("unexpected rich text section element %q", x.Type)
			}
			b.WriteString(x.Text)
		}
	}
	return b.String(), nil
}

// checkBlocks validates a message's blocks as Slack would and returns
// its visible text and buttons.
func checkBlocks(raw string, modal bool) (string, []Action, []string) {
	if raw == "" {
		return "", nil, nil
	}
	var bs []block
	if err := json.Unmarshal([]byte(raw), &bs); err != nil {
		return "", nil, []string{"blocks are not a JSON array of blocks"}
	}
	var (
		problems []string
		lines    []string
		actions  []Action
		ids      = map[string]bool{}
		blockIDs = map[string]bool{}
	)
	if len(bs) > 50 {
		problems = append(problems, "more than 50 blocks")
	}
	for i, b := range bs {
		if b.BlockID != "" {
			if blockIDs[b.BlockID] {
				problems = append(problems, "duplicate block_id "+b.BlockID)
			}
			blockIDs[b.BlockID] = true
		}
		switch b.Type {
		case "header":
			if b.Text == nil || b.Text.Type != "plain_text" || utf8.RuneCountInString(b.Text.Text) > 150 || b.Text.Text == "" {
				problems = append(problems, fmt.Sprintf("[%d] header needs plain_text of 1-150 characters", i))
				continue
			}
			lines = append(lines, b.Text.Text)
		case "section":
			if b.Text == nil || (b.Text.Type != "plain_text" && b.Text.Type != "mrkdwn") || utf8.RuneCountInString(b.Text.Text) > 3000 || b.Text.Text == "" {
				problems = append(problems, fmt.Sprintf("[%d] section text must be 1-3000 characters", i))
				continue
			}
			lines = append(lines, b.Text.Text)
		case "rich_text":
			t, err := richText(b.Elements)
			if err != nil {
				problems = append(problems, fmt.Sprintf("[%d] %v", i, err))
				continue
			}
			lines = append(lines, t)
		case "actions":
			var els []element
			if err := json.Unmarshal(b.Elements, &els); err != nil || len(els) == 0 || len(els) > 25 {
				problems = append(problems, fmt.Sprintf("[%d] actions need 1-25 elements", i))
				continue
			}
			for _, e := range els {
				switch {
				case e.Type != "button":
					problems = append(problems, "only buttons are expected in actions")
				case e.Text == nil || e.Text.Type != "plain_text" || utf8.RuneCountInString(e.Text.Text) > 75 || e.Text.Text == "":
					problems = append(problems, "button text must be plain_text of 1-75 characters")
				case e.ActionID == "" || len(e.ActionID) > 255 || ids[e.ActionID]:
					problems = append(problems, "action_id empty, longer than 255 or repeated: "+e.ActionID)
				case len(e.Value) > 2000:
					problems = append(problems, "button value longer than 2000")
				case e.Style != "" && e.Style != "primary" && e.Style != "danger":
					problems = append(problems, "unknown button style "+e.Style)
				default:
					ids[e.ActionID] = true
					actions = append(actions, Action{ID: e.ActionID, Label: e.Text.Text})
				}
			}
		default:
			problems = append(problems, fmt.Sprintf("[%d] unexpected block type %q", i, b.Type))
		}
	}
	return strings.Join(lines, "\n"), actions, problems
}

// checkModal validates a modal's blocks (input blocks only) and returns
// its inputs.
func checkModal(raw json.RawMessage) ([]Input, []string) {
	var bs []block
	if err := json.Unmarshal(raw, &bs); err != nil {
		return nil, []string{"blocks are not a JSON array"}
	}
	var (
		out      []Input
		problems []string
		seen     = map[string]bool{}
	)
	if len(bs) == 0 || len(bs) > 100 {
		problems = append(problems, "a modal needs 1-100 blocks")
	}
	for i, b := range bs {
		if b.Type != "input" || b.Element == nil || b.Label == nil {
			problems = append(problems, fmt.Sprintf("[%d] expected an input block with a label and an element", i))
			continue
		}
		if b.BlockID == "" || seen[b.BlockID] {
			problems = append(problems, fmt.Sprintf("[%d] block_id empty or repeated", i))
		}
		seen[b.BlockID] = true
		if b.Label.Type != "plain_text" || utf8.RuneCountInString(b.Label.Text) > 2000 || b.Label.Text == "" {
			problems = append(problems, fmt.Sprintf("[%d] label must be plain_text of 1-2000 characters", i))
		}
		e := b.Element
		switch e.Type {
		case "plain_text_input":
		case "static_select":
			if len(e.Options) == 0 || len(e.Options) > 100 {
				problems = append(problems, fmt.Sprintf("[%d] static_select needs 1-100 options", i))
			}
			for _, o := range e.Options {
				if utf8.RuneCountInString(o.Text.Text) > 75 || len(o.Value) > 150 {
					problems = append(problems, fmt.Sprintf("[%d] option too long", i))
				}
			}
		case "checkboxes":
			if len(e.Options) == 0 || len(e.Options) > 10 {
				problems = append(problems, fmt.Sprintf("[%d] checkboxes need 1-10 options", i))
			}
		default:
			problems = append(problems, fmt.Sprintf("[%d] unexpected input element %q", i, e.Type))
		}
		if e.ActionID == "" {
			problems = append(problems, fmt.Sprintf("[%d] input element without action_id", i))
		}
		out = append(out, Input{BlockID: b.BlockID, ActionID: e.ActionID, Type: e.Type, Label: b.Label.Text, Optional: b.Optional})
	}
	return out, problems
}
