package sqldb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const auditCols = `seq, time, session, owner, owner_text, kind, payload, payload_hash, classes,
	verdict, rule, request_id, answered_by, surface, reason, sandbox, prev, hash`

// sqlAuditInsert is the only statement that writes the audit table:
// Chain.add's.
const sqlAuditInsert = `INSERT INTO audit (` + auditCols + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// Chain is the audit log's head while a batch runs, the records the
// batch appended, and the request changes it announces.
type Chain struct {
	first string // hash of seq 1; "" while the log is empty
	seq   int64
	hash  string
	recs  []store.Decision // appended in this batch, in order
	// changes are the requests the batch created or ended, in order.
	changes []store.Change
	// sandbox labels records that carry none (SetSandboxLabel).
	sandbox string
}

// add chains d after the head and inserts it. d's fields must be
// normalised (UTC time, nil owner when absent): see normDecision.
func (c *Chain) add(ctx context.Context, tx Q, d store.Decision) (store.Decision, error) {
	at, err := codec.Time(d.Time)
	if err != nil {
		return store.Decision{}, err
	}
	owner, err := codec.Raw("owner", d.Owner)
	if err != nil {
		return store.Decision{}, err
	}
	classes, err := codec.JSON("classes", d.Classes)
	if err != nil {
		return store.Decision{}, err
	}
	if d.Sandbox == "" {
		d.Sandbox = c.sandbox
	}
	d.Seq, d.Prev = c.seq+1, c.hash
	d.Hash = store.ChainHash(d)
	if _, err := tx.Exec(ctx, sqlAuditInsert,
		d.Seq, at, d.Session, owner, d.OwnerText, string(d.Kind), d.Payload, d.PayloadHash, classes,
		d.Verdict, d.Rule, d.RequestID, d.By, d.Surface, d.Reason, d.Sandbox, d.Prev, d.Hash); err != nil {
		return store.Decision{}, err
	}
	if d.Seq == 1 {
		c.first = d.Hash
	}
	c.seq, c.hash = d.Seq, d.Hash
	c.recs = append(c.recs, d)
	return d, nil
}

// announce queues the change of request id for the batch's commit.
func (c *Chain) announce(id string, ended bool) {
	c.changes = append(c.changes, store.Change{Request: id, Ended: ended})
}

// Changes are the requests the batch created or ended, in order (no
// Origin: the engine that announces them adds its own).
func (c *Chain) Changes() []store.Change { return c.changes }

// normDecision is d as it is hashed and will read back: UTC time (the
// JSON of a time carries its zone), a zero time meaning now, and no
// owner as nil (an empty non-nil json.RawMessage does not marshal).
func normDecision(d store.Decision) store.Decision {
	if d.Time.IsZero() {
		d.Time = time.Now()
	}
	d.Time = d.Time.UTC()
	if len(d.Owner) == 0 {
		d.Owner = nil
	}
	return d
}

func scanDecision(sc codec.Scanner) (store.Decision, error) {
	var (
		d             store.Decision
		at, kind, cls string
		owner         *string
	)
	if err := sc.Scan(&d.Seq, &at, &d.Session, &owner, &d.OwnerText, &kind, &d.Payload, &d.PayloadHash, &cls,
		&d.Verdict, &d.Rule, &d.RequestID, &d.By, &d.Surface, &d.Reason, &d.Sandbox, &d.Prev, &d.Hash); err != nil {
		return store.Decision{}, err
	}
	d.Owner, d.Kind = codec.ParseRaw(owner), action.Kind(kind)
	var err1, err2 error
	d.Time, err1 = codec.ParseTime(at)
	if len(d.Owner) > 0 && !json.Valid(d.Owner) {
		// store.ChainHash cannot marshal it; report it, never panic.
		err2 = errors.New("stored owner is not valid JSON")
	}
	if err := errors.Join(err1, err2, codec.ParseJSON("classes", cls, &d.Classes)); err != nil {
		return store.Decision{}, fmt.Errorf("audit seq %d: %w", d.Seq, err)
	}
	return d, nil
}

// AppendDecision chains d to the log and commits it durably (with the
// other writes of its batch) before it returns. A zero d.Time means
// now; the time is kept in UTC, and Seq, Prev and Hash are assigned
// here, whatever d held. Appends of every writer on the log form one
// chain: the head is read under the log's write lock.
func (b *Base) AppendDecision(ctx context.Context, d store.Decision) (store.Decision, error) {
	d = normDecision(d)
	var out store.Decision
	err := b.submit(ctx, true, func(ctx context.Context, tx Q, c *Chain) error {
		var err error
		out, err = c.add(ctx, tx, d)
		return err
	})
	if err != nil {
		return store.Decision{}, fmt.Errorf("append decision (session %q, verdict %q): %w", d.Session, d.Verdict, err)
	}
	return out, nil
}

// Decisions lists the records f selects, oldest first. Since is
// inclusive. With a Limit, it returns the newest Limit records that
// match, still oldest first.
func (b *Base) Decisions(ctx context.Context, f store.AuditFilter) ([]store.Decision, error) {
	var where []string
	var args []any
	if f.Session != "" {
		where, args = append(where, "session = ?"), append(args, f.Session)
	}
	if !f.Since.IsZero() {
		since, err := codec.Time(f.Since)
		if err != nil {
			return nil, fmt.Errorf("list decisions: since: %w", err)
		}
		where, args = append(where, "time >= ?"), append(args, since)
	}
	if f.Verdict != "" {
		where, args = append(where, "verdict = ?"), append(args, f.Verdict)
	}
	q := `SELECT ` + auditCols + ` FROM audit`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	if f.Limit > 0 {
		q = `SELECT * FROM (` + q + ` ORDER BY seq DESC LIMIT ?) AS newest ORDER BY seq`
		args = append(args, f.Limit)
	} else {
		q += ` ORDER BY seq`
	}
	out, err := QueryRows(ctx, b.r, scanDecision, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list decisions: %w", b.note(err))
	}
	return out, nil
}

// verifyChain reads the whole log in tx, a row at a time, and checks
// that seqs run 1, 2, 3… without gaps, that each record's Prev is the
// previous record's Hash, and that each Hash is store.ChainHash of its
// record. It returns how many records verified and, on the first bad
// one, an error wrapping store.ErrChainBroken that names its seq.
func verifyChain(ctx context.Context, tx Q) (int, error) {
	rows, err := tx.Query(ctx, `SELECT `+auditCols+` FROM audit ORDER BY seq`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n, prev := 0, ""
	for rows.Next() {
		want := int64(n + 1)
		d, err := scanDecision(rows)
		if err != nil {
			return n, fmt.Errorf("%w: seq %d: unreadable record: %v", store.ErrChainBroken, want, err)
		}
		switch {
		case d.Seq != want:
			return n, fmt.Errorf("%w: seq %d: missing (the next record is seq %d)", store.ErrChainBroken, want, d.Seq)
		case d.Prev != prev && d.Seq == 1:
			return n, fmt.Errorf("%w: seq 1: prev is %.12s…, want empty", store.ErrChainBroken, d.Prev)
		case d.Prev != prev:
			return n, fmt.Errorf("%w: seq %d: prev %.12s… does not link to seq %d's hash %.12s…", store.ErrChainBroken, d.Seq, d.Prev, d.Seq-1, prev)
		case store.ChainHash(d) != d.Hash:
			return n, fmt.Errorf("%w: seq %d: hash mismatch: the record was changed", store.ErrChainBroken, d.Seq)
		}
		prev = d.Hash
		n++
	}
	return n, rows.Err()
}
