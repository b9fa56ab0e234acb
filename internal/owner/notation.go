package owner

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNotationLen bounds Parse's input: MaxDepth segments of at most six
// values (three ids, three attributes), each at most maxIDLen bytes and
// tripled by escaping, plus room for kinds and punctuation. No owner
// String can print is longer.
const maxNotationLen = MaxDepth * (6*maxIDLen*3 + 64)

// String returns o in the notation, lineage included, parent first. The
// zero Owner prints as "none", which Parse rejects.
func (o Owner) String() string {
	if o.d == nil {
		return "none"
	}
	var b strings.Builder
	for i, a := range o.Lineage() {
		if i > 0 {
			b.WriteByte('>')
		}
		a.d.writeSegment(&b)
	}
	return b.String()
}

func (d *data) writeSegment(b *strings.Builder) {
	b.WriteString(string(d.kind))
	ids := func(ids ...string) {
		for i, id := range ids {
			if i == 0 {
				b.WriteByte(':')
			} else {
				b.WriteByte('/')
			}
			escape(b, id)
		}
	}
	attr := func(name, v string) {
		if v != "" {
			b.WriteByte(',')
			b.WriteString(name)
			b.WriteByte('=')
			escape(b, v)
		}
	}
	switch d.kind {
	case KindGateway:
		if d.user != "" {
			ids(d.platform, d.chat, d.user)
		} else {
			ids(d.platform, d.chat)
		}
	case KindCron:
		ids(d.job)
	case KindKanban:
		ids(d.task)
		attr("board", d.board)
	case KindSubagent:
		if d.subagent != "" {
			ids(d.subagent)
		}
	case KindExternal:
		if d.extSession != "" {
			ids(d.agent, d.extSession)
		} else {
			ids(d.agent)
		}
	}
	attr("run", d.run)
	attr("session", d.session)
}

// keepRune reports whether r is written as itself in an id.
func keepRune(r rune) bool {
	switch r {
	case '-', '_', '.', '~', '+', '@':
		return true
	}
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func escape(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	for _, r := range s {
		if keepRune(r) {
			b.WriteRune(r)
			continue
		}
		var buf [utf8.UTFMax]byte
		n := utf8.EncodeRune(buf[:], r)
		for _, c := range buf[:n] {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

func unescape(s string) (string, error) {
	if !strings.ContainsRune(s, '%') {
		for _, r := range s {
			if !keepRune(r) {
				return "", fmt.Errorf("character %q must be written %%XX: %w", r, ErrSyntax)
			}
		}
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '%' {
			if i+2 >= len(s) {
				return "", fmt.Errorf("truncated %%XX escape: %w", ErrSyntax)
			}
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if !ok1 || !ok2 {
				return "", fmt.Errorf("bad %%XX escape %q: %w", s[i:i+3], ErrSyntax)
			}
			b.WriteByte(hi<<4 | lo)
			i += 3
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !keepRune(r) {
			return "", fmt.Errorf("character %q must be written %%XX: %w", r, ErrSyntax)
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Parse reads the notation written by String (see the package
// documentation):
// "cli", "single_query", "gateway:web/KEY", "cron:JOB", "kanban:TASK",
// "api", "webhook", "subagent:ID", "external:AGENT/SESSION", "internal",
// and lineages such as "kanban:T1>cron:J1", parent first. White space
// around segments is ignored. The result never has an answer channel.
//
// Errors wrap ErrSyntax for a malformed notation and ErrInvalid for ids
// the constructors refuse.
func Parse(s string) (Owner, error) {
	// Bound the work before splitting: the text may come from a request.
	if len(s) > maxNotationLen {
		return Owner{}, fmt.Errorf("parse owner: longer than %d bytes: %w", maxNotationLen, ErrSyntax)
	}
	if strings.Count(s, ">") >= MaxDepth {
		return Owner{}, fmt.Errorf("parse owner %q: lineage deeper than %d: %w", s, MaxDepth, ErrSyntax)
	}
	segs := strings.Split(s, ">")
	var cur Owner
	for i, seg := range segs {
		o, err := parseSegment(strings.TrimSpace(seg))
		if err != nil {
			return Owner{}, fmt.Errorf("parse owner %q: segment %d: %w", s, i+1, err)
		}
		if i > 0 {
			if o, err = o.WithParent(cur); err != nil {
				return Owner{}, fmt.Errorf("parse owner %q: %w", s, err)
			}
		}
		cur = o
	}
	return cur, nil
}

func parseSegment(seg string) (Owner, error) {
	if seg == "" {
		return Owner{}, fmt.Errorf("empty owner: %w", ErrSyntax)
	}
	parts := strings.Split(seg, ",")
	head, attrParts := parts[0], parts[1:]
	kindName, idPart, hasIDs := strings.Cut(head, ":")
	kind := Kind(kindName)
	if !kind.Valid() {
		return Owner{}, fmt.Errorf("unknown kind %q (want one of %s): %w", kindName, kindList(), ErrSyntax)
	}
	var ids []string
	if hasIDs {
		for _, raw := range strings.Split(idPart, "/") {
			if raw == "" {
				// String never writes an empty id, so accepting one would
				// give two spellings of one owner.
				return Owner{}, fmt.Errorf("%s has an empty id in %q: %w", kind, head, ErrSyntax)
			}
			id, err := unescape(raw)
			if err != nil {
				return Owner{}, fmt.Errorf("%s id %q: %w", kind, raw, err)
			}
			ids = append(ids, id)
		}
	}
	attrs := map[string]string{}
	for _, a := range attrParts {
		name, raw, ok := strings.Cut(a, "=")
		if !ok {
			return Owner{}, fmt.Errorf("attribute %q: want name=value: %w", a, ErrSyntax)
		}
		if !attrAllowed(kind, name) {
			return Owner{}, fmt.Errorf("%s takes no attribute %q: %w", kind, name, ErrSyntax)
		}
		if _, dup := attrs[name]; dup {
			return Owner{}, fmt.Errorf("attribute %q given twice: %w", name, ErrSyntax)
		}
		v, err := unescape(raw)
		if err != nil {
			return Owner{}, fmt.Errorf("attribute %s=%q: %w", name, raw, err)
		}
		if v == "" {
			// String never writes an empty attribute, so accepting one
			// would give two spellings of one owner.
			return Owner{}, fmt.Errorf("attribute %q is empty: %w", name, ErrSyntax)
		}
		attrs[name] = v
	}

	o, err := build(kind, ids, attrs)
	if err != nil {
		return Owner{}, err
	}
	if key := attrs["session"]; key != "" {
		return o.WithSession(key)
	}
	return o, nil
}

func build(kind Kind, ids []string, attrs map[string]string) (Owner, error) {
	arity := func(lo, hi int, form string) error {
		if len(ids) < lo || len(ids) > hi {
			return fmt.Errorf("%s takes %s, got %d id(s): %w", kind, form, len(ids), ErrSyntax)
		}
		return nil
	}
	at := func(i int) string {
		if i < len(ids) {
			return ids[i]
		}
		return ""
	}
	switch kind {
	case KindCLI, KindSingleQuery, KindAPI, KindWebhook, KindInternal:
		if err := arity(0, 0, "no ids"); err != nil {
			return Owner{}, err
		}
		return newOwner(data{kind: kind}), nil
	case KindGateway:
		if err := arity(2, 3, "PLATFORM/CHAT[/USER]"); err != nil {
			return Owner{}, err
		}
		return Gateway(ids[0], ids[1], at(2))
	case KindCron:
		if err := arity(1, 1, "JOB"); err != nil {
			return Owner{}, err
		}
		return Cron(ids[0], attrs["run"])
	case KindKanban:
		if err := arity(1, 1, "TASK"); err != nil {
			return Owner{}, err
		}
		return Kanban(attrs["board"], ids[0], attrs["run"])
	case KindSubagent:
		if err := arity(0, 1, "[ID]"); err != nil {
			return Owner{}, err
		}
		return Subagent(at(0))
	case KindExternal:
		if err := arity(1, 2, "AGENT[/SESSION]"); err != nil {
			return Owner{}, err
		}
		return External(ids[0], at(1))
	}
	return Owner{}, fmt.Errorf("unknown kind %q: %w", kind, ErrSyntax)
}

func attrAllowed(k Kind, name string) bool {
	switch name {
	case "session":
		return true
	case "run":
		return k == KindCron || k == KindKanban
	case "board":
		return k == KindKanban
	}
	return false
}

func kindList() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
