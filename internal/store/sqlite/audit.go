package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/store"
)

const auditCols = `seq, time, session, owner, owner_text, kind, payload, payload_hash, classes,
	verdict, rule, request_id, answered_by, surface, reason, sandbox, prev, hash`

func scanDecision(sc scanner) (store.Decision, error) {
	var (
		d             store.Decision
		at, kind, cls string
		owner         sql.NullString
	)
	if err := sc.Scan(&d.Seq, &at, &d.Session, &owner, &d.OwnerText, &kind, &d.Payload, &d.PayloadHash, &cls,
		&d.Verdict, &d.Rule, &d.RequestID, &d.By, &d.Surface, &d.Reason, &d.Sandbox, &d.Prev, &d.Hash); err != nil {
		return store.Decision{}, err
	}
	d.Owner, d.Kind = decRaw(owner), action.Kind(kind)
	var err1, err2 error
	d.Time, err1 = decTime(at)
	if len(d.Owner) > 0 && !json.Valid(d.Owner) {
		// store.ChainHash cannot marshal it; report it, never panic.
		err2 = errors.New("stored owner is not valid JSON")
	}
	if err := errors.Join(err1, err2, decJSON("classes", cls, &d.Classes)); err != nil {
		return store.Decision{}, fmt.Errorf("audit seq %d: %w", d.Seq, err)
	}
	return d, nil
}

// SetSandboxLabel is the sandbox label (sandbox.Label) of the records
// this store writes without one of their own: a question's ask and end,
// which the store writes with the request. The host sets it at start,
// so every record says which sandbox its action ran in.
func (db *DB) SetSandboxLabel(label string) { db.sandbox.Store(&label) }

// AppendDecision chains d to the log and writes it durably: it returns
// once the transaction holding it (and the other writes of its batch)
// committed with synchronous=FULL. A zero d.Time means now; the time is
// kept in UTC, and Seq, Prev and Hash are assigned here, whatever d
// held. Appends of this process and of others on the same file form one
// chain: the head is read inside the immediate transaction.
func (db *DB) AppendDecision(ctx context.Context, d store.Decision) (store.Decision, error) {
	d = normDecision(d)
	var out store.Decision
	err := db.submit(ctx, true, func(ctx context.Context, tx *wtx, c *chain) error {
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
func (db *DB) Decisions(ctx context.Context, f store.AuditFilter) ([]store.Decision, error) {
	var where []string
	var args []any
	if f.Session != "" {
		where, args = append(where, "session = ?"), append(args, f.Session)
	}
	if !f.Since.IsZero() {
		since, err := encTime(f.Since)
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
		q = `SELECT * FROM (` + q + ` ORDER BY seq DESC LIMIT ?) ORDER BY seq`
		args = append(args, f.Limit)
	} else {
		q += ` ORDER BY seq`
	}
	out, err := queryRows(ctx, db.r, scanDecision, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list decisions: %w", err)
	}
	return out, nil
}

// VerifyChain reads the whole log in one read transaction, a row at a
// time, and checks that seqs run 1, 2, 3… without gaps, that each
// record's Prev is the previous record's Hash, and that each Hash is
// store.ChainHash of its record. It returns how many records verified
// and, on the first bad one, an error wrapping store.ErrChainBroken
// that names its seq. Then it checks what the chain alone cannot show:
// that the database file is still the one opened, and that the log
// holds the head this store last committed and the heads its anchors
// keep; a shortfall is a *store.LossError ("N newest records missing",
// the database deleted or replaced), which matches ErrChainBroken too.
func (db *DB) VerifyChain(ctx context.Context) (int, error) {
	mine := db.lastHead()
	if err := db.checkFile(); err != nil {
		loss := &store.LossError{Anchor: "the file this host opened", AnchorSeq: mine.seq, Last: mine.seq, Replaced: true}
		if errors.Is(err, ErrFileGone) {
			if _, serr := os.Stat(db.path); serr != nil {
				loss.Replaced, loss.Gone = false, true
			}
			return 0, fmt.Errorf("verify audit chain: %w", loss)
		}
		return 0, fmt.Errorf("verify audit chain: %w", err)
	}
	n, err := verifyAnchored(ctx, db.r, db.sources, mine)
	if err != nil {
		return n, fmt.Errorf("verify audit chain: %w", err)
	}
	return n, nil
}

func verifyChain(ctx context.Context, q *sql.DB) (int, error) {
	tx, err := q.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT `+auditCols+` FROM audit ORDER BY seq`)
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
	if err := rows.Err(); err != nil {
		return n, err
	}
	return n, nil
}
