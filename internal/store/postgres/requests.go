package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/grant"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const requestCols = `id, session, owner, owner_text, action, digest, classes, analysis, rule,
	created, deadline, host, state, scope, grain, resolved_by, surface, reason, resolved, elicit, content, notice`

func scanRequest(sc scanner) (store.Request, error) {
	var (
		r                         store.Request
		owner, analysis, resolved *string
		elicit, content           *string
		act, classes              string
		created, deadline         string
		state, scope, grain       string
	)
	err := sc.Scan(&r.ID, &r.Session, &owner, &r.OwnerText, &act, &r.Digest, &classes, &analysis, &r.Rule,
		&created, &deadline, &r.Host, &state, &scope, &grain, &r.By, &r.Surface, &r.Reason, &resolved, &elicit, &content, &r.Notice)
	if err != nil {
		return store.Request{}, err
	}
	r.Owner, r.Analysis, r.Content = codec.ParseRaw(owner), codec.ParseRaw(analysis), codec.ParseRaw(content)
	r.State, r.Scope, r.Grain = store.State(state), store.Scope(scope), grant.Grain(grain)
	var errs []error
	errs = append(errs, codec.ParseJSON("action", act, &r.Action), codec.ParseJSON("classes", classes, &r.Classes))
	if elicit != nil {
		r.Elicit = &store.Elicitation{}
		errs = append(errs, codec.ParseJSON("elicit", *elicit, r.Elicit))
	}
	r.Created, err = codec.ParseTime(created)
	errs = append(errs, err)
	r.Deadline, err = codec.ParseTime(deadline)
	errs = append(errs, err)
	r.Resolved, err = codec.ParseOptTime(resolved)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return store.Request{}, fmt.Errorf("request %s: %w", r.ID, err)
	}
	return r, nil
}

// CreateRequest stores a new pending request and, in the same
// transaction, its audit record (store.AskRecord), and announces it.
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
	owner, err := codec.Raw("owner", r.Owner)
	if err != nil {
		return err
	}
	analysis, err := codec.Raw("analysis", r.Analysis)
	if err != nil {
		return err
	}
	act, err := codec.JSON("action", r.Action)
	if err != nil {
		return err
	}
	classes, err := codec.JSON("classes", r.Classes)
	if err != nil {
		return err
	}
	created, err := codec.Time(r.Created)
	if err != nil {
		return err
	}
	deadline, err := codec.Time(r.Deadline)
	if err != nil {
		return err
	}
	var elicit *string
	if r.Elicit != nil {
		e, err := codec.JSON("elicit", r.Elicit)
		if err != nil {
			return err
		}
		elicit = &e
	}
	rec := normDecision(store.AskRecord(r))
	return db.submit(ctx, false, func(ctx context.Context, tx pgx.Tx, c *chain) error {
		if _, err := tx.Exec(ctx, `INSERT INTO requests
			(id, session, owner, owner_text, action, digest, classes, analysis, rule, created, deadline, host, state, elicit, notice)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'pending', $13, $14)`,
			r.ID, r.Session, owner, r.OwnerText, act, r.Digest, classes, analysis, r.Rule, created, deadline, r.Host, elicit, r.Notice); err != nil {
			return err
		}
		if _, err := c.add(ctx, tx, rec); err != nil {
			return err
		}
		c.announce(changeCreated, db.o.Origin, r.ID)
		return nil
	})
}

// GetRequest returns the request id, or store.ErrNotFound.
func (db *DB) GetRequest(ctx context.Context, id string) (store.Request, error) {
	r, err := scanRequest(db.pool.QueryRow(ctx, `SELECT `+requestCols+` FROM requests WHERE id = $1`, id))
	if noRows(err) {
		err = store.ErrNotFound
	}
	if err != nil {
		return store.Request{}, fmt.Errorf("get request %s: %w", id, db.noteConn(err))
	}
	return r, nil
}

// ResolveRequest ends the request iff it is pending (one UPDATE … WHERE
// state = 'pending' RETURNING), writes the audit record of the end in
// the same transaction, and announces it. See store.Requests.
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
	at, err := codec.Time(res.At)
	if err != nil {
		return store.Request{}, err
	}
	content, err := codec.Raw("content", res.Content)
	if err != nil {
		return store.Request{}, err
	}
	if content != nil && res.State != store.Answered {
		return store.Request{}, fmt.Errorf("content with state %q: only an accepted elicitation has content", res.State)
	}
	human := res.State == store.Answered || res.State == store.Denied
	var r store.Request
	err = db.submit(ctx, human, func(ctx context.Context, tx pgx.Tx, c *chain) error {
		var err error
		r, err = scanRequest(tx.QueryRow(ctx, `UPDATE requests
			SET state = $1, scope = $2, grain = $3, resolved_by = $4, surface = $5, reason = $6, resolved = $7, content = $8
			WHERE id = $9 AND state = 'pending'
			  AND ($1 NOT IN ('answered', 'denied') OR deadline > $7)
			RETURNING `+requestCols,
			string(res.State), string(res.Scope), string(res.Grain), res.By, res.Surface, res.Reason, at, content, id))
		switch {
		case err == nil:
			if _, err := c.add(ctx, tx, normDecision(store.EndRecord(r))); err != nil {
				return err
			}
			c.announce(changeEnded, db.o.Origin, id)
			return nil
		case !noRows(err):
			return err
		}
		r, err = scanRequest(tx.QueryRow(ctx, `SELECT `+requestCols+` FROM requests WHERE id = $1`, id))
		if noRows(err) {
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
	q := `SELECT ` + requestCols + ` FROM requests WHERE state = 'pending' ORDER BY created, ord`
	args := []any{}
	if session != "" {
		q = `SELECT ` + requestCols + ` FROM requests WHERE session = $1 AND state = 'pending' ORDER BY created, ord`
		args = append(args, session)
	}
	out, err := queryRows(ctx, db.pool, scanRequest, q, args...)
	if err != nil {
		return nil, fmt.Errorf("pending requests of session %q: %w", session, db.noteConn(err))
	}
	return out, nil
}

// WithdrawHostRequests withdraws every pending request whose host is not
// keep, writing each one's audit record in the same transaction, and
// returns how many.
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
	at, err := codec.Time(res.At)
	if err != nil {
		return 0, err
	}
	n := 0
	err = db.submit(ctx, false, func(ctx context.Context, tx pgx.Tx, c *chain) error {
		ended, err := queryRows(ctx, tx, scanRequest, `UPDATE requests
			SET state = 'withdrawn', scope = '', grain = '', resolved_by = $1, surface = $2, reason = $3, resolved = $4
			WHERE state = 'pending' AND host <> $5
			RETURNING `+requestCols, res.By, res.Surface, res.Reason, at, keep)
		if err != nil {
			return err
		}
		slices.SortFunc(ended, func(a, b store.Request) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
		for _, r := range ended {
			if _, err := c.add(ctx, tx, normDecision(store.EndRecord(r))); err != nil {
				return err
			}
			c.announce(changeEnded, db.o.Origin, r.ID)
		}
		n = len(ended)
		return nil
	})
	return n, err
}
