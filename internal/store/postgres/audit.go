package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

func scanDecision(sc scanner) (store.Decision, error) {
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
		err2 = errors.New("stored owner is not valid JSON")
	}
	if err := errors.Join(err1, err2, codec.ParseJSON("classes", cls, &d.Classes)); err != nil {
		return store.Decision{}, fmt.Errorf("audit seq %d: %w", d.Seq, err)
	}
	return d, nil
}

// SetSandboxLabel is the sandbox label (sandbox.Label) of the records
// the store writes without one of their own (a question's ask and end):
// the host sets it once its sandbox exists, so every record says which
// sandbox its action ran in. The label is part of each record's hash.
func (db *DB) SetSandboxLabel(label string) { db.sandbox.Store(&label) }

// AppendDecision chains d to the log and commits it durably (with the
// other writes of its batch) before it returns. Appends of every host
// form one chain: the head is read under the audit advisory lock.
func (db *DB) AppendDecision(ctx context.Context, d store.Decision) (store.Decision, error) {
	d = normDecision(d)
	var out store.Decision
	err := db.submit(ctx, true, func(ctx context.Context, tx pgx.Tx, c *chain) error {
		var err error
		out, err = c.add(ctx, tx, d)
		return err
	})
	if err != nil {
		return store.Decision{}, fmt.Errorf("append decision (session %q, verdict %q): %w", d.Session, d.Verdict, err)
	}
	return out, nil
}

// Decisions lists the records f selects, oldest first; with a Limit,
// the newest Limit that match.
func (db *DB) Decisions(ctx context.Context, f store.AuditFilter) ([]store.Decision, error) {
	var where []string
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Session != "" {
		arg("session = $%d", f.Session)
	}
	if !f.Since.IsZero() {
		since, err := codec.Time(f.Since)
		if err != nil {
			return nil, fmt.Errorf("list decisions: since: %w", err)
		}
		arg("time >= $%d", since)
	}
	if f.Verdict != "" {
		arg("verdict = $%d", f.Verdict)
	}
	q := `SELECT ` + auditCols + ` FROM audit`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q = fmt.Sprintf(`SELECT * FROM (%s ORDER BY seq DESC LIMIT $%d) AS newest ORDER BY seq`, q, len(args))
	} else {
		q += ` ORDER BY seq`
	}
	out, err := queryRows(ctx, db.pool, scanDecision, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list decisions: %w", db.noteConn(err))
	}
	return out, nil
}

// VerifyChain recomputes every hash in one repeatable-read transaction
// (seqs 1, 2, 3… without gaps, each Prev the previous Hash, each Hash
// store.ChainHash of its record), then checks that the log holds the
// head this store last saw and the heads its anchors keep. A shortfall
// is a *store.LossError, which matches store.ErrChainBroken.
func (db *DB) VerifyChain(ctx context.Context) (int, error) {
	n, err := verifyAnchored(ctx, db.pool, db.sources, db.lastHead())
	if err != nil {
		return n, fmt.Errorf("verify audit chain: %w", err)
	}
	return n, nil
}

// verifyAnchored recomputes the chain and compares it with the anchors
// (read first, so a commit landing meanwhile cannot look like a loss)
// and with mine.
func verifyAnchored(ctx context.Context, pool querier, sources []anchor.Source, mine head) (int, error) {
	heads, err := readAnchors(sources)
	if err != nil {
		return 0, err
	}
	if mine.seq > 0 {
		heads = append(heads, sourced{anchor.Head{Store: mine.first, Seq: mine.seq, Hash: mine.hash}, "this host's last view of the log"})
	}
	var n int
	var lh logHead
	err = beginRead(ctx, pool, func(tx pgx.Tx) error {
		var err error
		if n, err = verifyChain(ctx, tx); err != nil {
			return err
		}
		lh, err = readLogHead(ctx, tx, seqsOf(heads))
		return err
	})
	if err != nil {
		return n, err
	}
	for _, h := range heads {
		if loss := compare(h, lh); loss != nil {
			if h.from == "this host's last view of the log" {
				loss.Anchor = h.from
			}
			return n, loss
		}
	}
	return n, nil
}

// beginRead runs fn in a read-only repeatable-read transaction: one
// snapshot of the log.
func beginRead(ctx context.Context, q querier, fn func(pgx.Tx) error) error {
	b, ok := q.(interface {
		BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
	})
	if !ok {
		return errors.New("cannot begin a transaction")
	}
	tx, err := b.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

func verifyChain(ctx context.Context, tx pgx.Tx) (int, error) {
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
