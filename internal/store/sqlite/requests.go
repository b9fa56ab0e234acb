package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
)

const requestCols = `id, session, owner, owner_text, action, digest, classes, analysis, rule,
	created, deadline, host, state, scope, grain, resolved_by, surface, reason, resolved, elicit, content, notice`

// The committer's request statements (prepared once per connection).
const (
	sqlRequestInsert = `INSERT INTO requests
		(id, session, owner, owner_text, action, digest, classes, analysis, rule, created, deadline, host, state, elicit, notice)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`
	sqlRequestEnd = `UPDATE requests
		SET state = ?, scope = ?, grain = ?, resolved_by = ?, surface = ?, reason = ?, resolved = ?, content = ?
		WHERE id = ? AND state = 'pending'
		  AND (? NOT IN ('answered', 'denied') OR deadline > ?)
		RETURNING ` + requestCols
	sqlRequestGet       = `SELECT ` + requestCols + ` FROM requests WHERE id = ?`
	sqlRequestsWithdraw = `UPDATE requests
		SET state = 'withdrawn', scope = '', grain = '', resolved_by = ?, surface = ?, reason = ?, resolved = ?
		WHERE state = 'pending' AND host <> ?
		RETURNING ` + requestCols
)

func scanRequest(sc scanner) (store.Request, error) {
	var (
		r                         store.Request
		owner, analysis, resolved sql.NullString
		elicit, content           sql.NullString
		act, classes              string
		created, deadline         string
		state, scope, grain       string
	)
	err := sc.Scan(&r.ID, &r.Session, &owner, &r.OwnerText, &act, &r.Digest, &classes, &analysis, &r.Rule,
		&created, &deadline, &r.Host, &state, &scope, &grain, &r.By, &r.Surface, &r.Reason, &resolved, &elicit, &content, &r.Notice)
	if err != nil {
		return store.Request{}, err
	}
	r.Owner, r.Analysis, r.Content = decRaw(owner), decRaw(analysis), decRaw(content)
	r.State, r.Scope, r.Grain = store.State(state), store.Scope(scope), grant.Grain(grain)
	var errs []error
	errs = append(errs, decJSON("action", act, &r.Action), decJSON("classes", classes, &r.Classes))
	if elicit.Valid {
		r.Elicit = &store.Elicitation{}
		errs = append(errs, decJSON("elicit", elicit.String, r.Elicit))
	}
	r.Created, err = decTime(created)
	errs = append(errs, err)
	r.Deadline, err = decTime(deadline)
	errs = append(errs, err)
	r.Resolved, err = decOptTime(resolved)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return store.Request{}, fmt.Errorf("request %s: %w", r.ID, err)
	}
	return r, nil
}

// CreateRequest stores a new pending request and, in the same
// transaction, its audit record (store.AskRecord: verdict ask, with the
// request's id). r.State must be empty or store.Pending; an id that
// exists already is an error.
func (db *DB) CreateRequest(ctx context.Context, r store.Request) error {
	if err := db.createRequest(ctx, r); err != nil {
		return fmt.Errorf("create request %s: %w", r.ID, err)
	}
	return nil
}

func (db *DB) createRequest(ctx context.Context, r store.Request) error {
	if r.ID == "" {
		return errors.New("empty id")
	}
	if r.State != "" && r.State != store.Pending {
		return fmt.Errorf("state %q: a new request is pending", r.State)
	}
	owner, err := encRaw("owner", r.Owner)
	if err != nil {
		return err
	}
	analysis, err := encRaw("analysis", r.Analysis)
	if err != nil {
		return err
	}
	act, err := encJSON("action", r.Action)
	if err != nil {
		return err
	}
	classes, err := encJSON("classes", r.Classes)
	if err != nil {
		return err
	}
	created, err := encTime(r.Created)
	if err != nil {
		return err
	}
	var elicit sql.NullString
	if r.Elicit != nil {
		if elicit.String, err = encJSON("elicit", r.Elicit); err != nil {
			return err
		}
		elicit.Valid = true
	}
	deadline, err := encTime(r.Deadline)
	if err != nil {
		return err
	}
	rec := normDecision(store.AskRecord(r))
	return db.submit(ctx, false, func(ctx context.Context, tx *wtx, c *chain) error {
		if _, err := tx.ExecContext(ctx, sqlRequestInsert,
			r.ID, r.Session, owner, r.OwnerText, act, r.Digest, classes, analysis, r.Rule, created, deadline, r.Host, elicit, r.Notice); err != nil {
			return err
		}
		_, err := c.add(ctx, tx, rec)
		return err
	})
}

// GetRequest returns the request id, or store.ErrNotFound.
func (db *DB) GetRequest(ctx context.Context, id string) (store.Request, error) {
	r, err := scanRequest(db.r.QueryRowContext(ctx, `SELECT `+requestCols+` FROM requests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Request{}, fmt.Errorf("get request %s: %w", id, err)
	}
	return r, nil
}

// ResolveRequest ends the request iff it is pending, with one UPDATE …
// WHERE state = 'pending' RETURNING, writes the audit record of the end
// (store.EndRecord) in the same transaction, and returns the ended row.
// If the request had already ended it returns the row as it is with
// store.ErrNotPending; an unknown id gives store.ErrNotFound. res.State
// must be one of the end states; a zero res.At means now.
func (db *DB) ResolveRequest(ctx context.Context, id string, res store.Resolution) (store.Request, error) {
	r, err := db.resolveRequest(ctx, id, res)
	if err != nil {
		if errors.Is(err, store.ErrNotPending) {
			return r, fmt.Errorf("resolve request %s: %w (it is %s)", id, err, r.State)
		}
		return store.Request{}, fmt.Errorf("resolve request %s: %w", id, err)
	}
	return r, nil
}

func (db *DB) resolveRequest(ctx context.Context, id string, res store.Resolution) (store.Request, error) {
	switch res.State {
	case store.Answered, store.Denied, store.Expired, store.Withdrawn:
	default:
		return store.Request{}, fmt.Errorf("cannot end in state %q", res.State)
	}
	if res.At.IsZero() {
		res.At = time.Now()
	}
	at, err := encTime(res.At)
	if err != nil {
		return store.Request{}, err
	}
	content, err := encRaw("content", res.Content)
	if err != nil {
		return store.Request{}, err
	}
	if content != nil && res.State != store.Answered {
		return store.Request{}, fmt.Errorf("content with state %q: only an accepted elicitation has content", res.State)
	}
	// The read after a failed swap shares the swap's transaction, so a
	// request created in between cannot be reported as "not pending".
	// A human's answer is durable before the human hears it counted (and
	// before an approved action runs); an expiry or withdrawal need not
	// be (writer.go).
	human := res.State == store.Answered || res.State == store.Denied
	var r store.Request
	err = db.submit(ctx, human, func(ctx context.Context, tx *wtx, c *chain) error {
		var err error
		r, err = scanRequest(tx.QueryRowContext(ctx, sqlRequestEnd,
			string(res.State), string(res.Scope), string(res.Grain), res.By, res.Surface, res.Reason, at, content, id, string(res.State), at))
		switch {
		case err == nil:
			_, err = c.add(ctx, tx, normDecision(store.EndRecord(r)))
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		r, err = scanRequest(tx.QueryRowContext(ctx, sqlRequestGet, id))
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		return store.ErrNotPending
	})
	return r, err
}

// PendingRequests lists pending requests, oldest first; session ""
// means every session.
func (db *DB) PendingRequests(ctx context.Context, session string) ([]store.Request, error) {
	q := `SELECT ` + requestCols + ` FROM requests WHERE state = 'pending' ORDER BY created, rowid`
	args := []any{}
	if session != "" {
		q = `SELECT ` + requestCols + ` FROM requests WHERE session = ? AND state = 'pending' ORDER BY created, rowid`
		args = append(args, session)
	}
	out, err := queryRows(ctx, db.r, scanRequest, q, args...)
	if err != nil {
		return nil, fmt.Errorf("pending requests of session %q: %w", session, err)
	}
	return out, nil
}

// WithdrawHostRequests withdraws every pending request whose host is not
// keep, with res's By, Surface, Reason (the cause) and At (zero means
// now), writes each one's audit record in the same transaction, and
// returns how many. res.State must be empty or store.Withdrawn.
func (db *DB) WithdrawHostRequests(ctx context.Context, keep string, res store.Resolution) (int, error) {
	n, err := db.withdrawHostRequests(ctx, keep, res)
	if err != nil {
		return 0, fmt.Errorf("withdraw requests of hosts other than %q: %w", keep, err)
	}
	return n, nil
}

func (db *DB) withdrawHostRequests(ctx context.Context, keep string, res store.Resolution) (int, error) {
	if res.State != "" && res.State != store.Withdrawn {
		return 0, fmt.Errorf("state %q: requests are withdrawn", res.State)
	}
	if res.At.IsZero() {
		res.At = time.Now()
	}
	at, err := encTime(res.At)
	if err != nil {
		return 0, err
	}
	n := 0
	err = db.submit(ctx, false, func(ctx context.Context, tx *wtx, c *chain) error {
		rows, err := tx.QueryContext(ctx, sqlRequestsWithdraw,
			res.By, res.Surface, res.Reason, at, keep)
		if err != nil {
			return err
		}
		var ended []store.Request
		for rows.Next() {
			r, err := scanRequest(rows)
			if err != nil {
				rows.Close()
				return err
			}
			ended = append(ended, r)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return err
		}
		// RETURNING gives no order; the records follow creation order.
		slices.SortFunc(ended, func(a, b store.Request) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
		for _, r := range ended {
			if _, err := c.add(ctx, tx, normDecision(store.EndRecord(r))); err != nil {
				return err
			}
		}
		n = len(ended)
		return nil
	})
	return n, err
}
