package chat

import (
	"strings"
)

// BlockKind is the kind of a block of a message.
type BlockKind string

// Block kinds. Adapters render each safely for their platform: text is
// escaped (no mention, link or markup the Core did not make), code is
// shown exactly as given.
const (
	// BlockTitle is the message's heading line.
	BlockTitle BlockKind = "title"
	// BlockText is plain text.
	BlockText BlockKind = "text"
	// BlockCode is preformatted text shown exactly.
	BlockCode BlockKind = "code"
	// BlockField is a label and a value.
	BlockField BlockKind = "field"
	// BlockLink is a link: Text the http(s) URL, Label its title.
	BlockLink BlockKind = "link"
)

// Block is one part of a message.
type Block struct {
	Kind  BlockKind
	Label string
	Text  string
}

// Style is a button's look.
type Style string

// Button styles.
const (
	StylePrimary   Style = "primary"
	StyleDanger    Style = "danger"
	StyleSecondary Style = "secondary"
)

// Button is one button; ID comes back as Click.Data.
type Button struct {
	ID    string
	Label string
	Style Style
}

// Message is what the Core asks an adapter to show.
type Message struct {
	Blocks  []Block
	Buttons []Button
}

// Title, Text, Code, Field and Link build blocks.
func Title(s string) Block { return Block{Kind: BlockTitle, Text: s} }

// Text is a plain text block.
func Text(s string) Block { return Block{Kind: BlockText, Text: s} }

// Code is a preformatted block.
func Code(s string) Block { return Block{Kind: BlockCode, Text: s} }

// Field is a labelled value.
func Field(label, value string) Block { return Block{Kind: BlockField, Label: label, Text: value} }

// Link is a link block.
func Link(title, url string) Block { return Block{Kind: BlockLink, Label: title, Text: url} }

// Say is a message of plain text.
func Say(s string) Message { return Message{Blocks: []Block{Text(s)}} }

// Markup is how a platform writes each kind of block; each function
// escapes what it is given for its platform.
type Markup struct {
	Title, Text, Code func(text string) string
	// Field writes a labelled value (value may be empty).
	Field func(label, value string) string
	// Link writes a link to url titled label.
	Link func(label, url string) string
}

// Render writes m's blocks in k, a line (or more) a block; buttons are
// the platform's own.
func (m Message) Render(k Markup) string {
	var b strings.Builder
	for i, bl := range m.Blocks {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch bl.Kind {
		case BlockTitle:
			b.WriteString(k.Title(bl.Text))
		case BlockCode:
			b.WriteString(k.Code(bl.Text))
		case BlockField:
			b.WriteString(k.Field(bl.Label, bl.Text))
		case BlockLink:
			b.WriteString(k.Link(bl.Label, bl.Text))
		default:
			b.WriteString(k.Text(bl.Text))
		}
	}
	return b.String()
}

// plain is the Markup of plain text.
var plain = Markup{
	Title: same, Text: same, Code: same,
	Field: func(label, value string) string { return label + ": " + value },
	Link: func(label, url string) string {
		if label != "" {
			return label + ": " + url
		}
		return url
	},
}

func same(s string) string { return s }

// Plain renders m as plain text: for platforms' fallback texts, logs and
// tests.
func (m Message) Plain() string {
	var b strings.Builder
	b.WriteString(m.Render(plain))
	for i, bt := range m.Buttons {
		if i == 0 {
			b.WriteString("\n")
		} else {
			b.WriteString(" ")
		}
		b.WriteString("[" + bt.Label + "]")
	}
	return b.String()
}

// Size is about how many bytes m takes once rendered.
func (m Message) Size() int {
	n := 0
	for _, bl := range m.Blocks {
		n += len(bl.Label) + len(bl.Text) + 8
	}
	return n
}
