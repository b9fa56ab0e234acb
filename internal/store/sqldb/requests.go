package sqldb

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
	"github.com/wardenhq/warden/internal/store/codec"
)

const requestCols = `id, session, owner, owner_text, action, digest, classes, analysis, rule,
	created, deadline, host, state, scope, grain, resolved_by, surface, reason, resolved, elicit, content, notice`

// The committer's request statements (CommitterSQL).
const (
	sqlRequestInsert = `INSERT INTO requests
		(id, session, owner, owner_text, action, digest, classes, analysis, rule, created, deadline, host, state, elicit, notice)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)`
	// sqlRequestEnd swaps a pending request to its end state; a human's
	// answer only before the deadline.
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

func scanRequest(sc codec.Scanner) (store.Request, error) {
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
// transaction, its audit record (store.AskRecord: verdict ask, with the
// request's id), and announces it. r.State must be empty or
// store.Pending; an id that exists already is an error.
func (b *Base) CreateRequest(ctx context.Context, r store.Request) error {
	if err := b.createRequest(ctx, r); err != nil {
		return fmt.Errorf("create request %s: %w", r.ID, err)
	}
	return nil
}

func (b *Base) createRequest(ctx context.Context, r store.Request) error {
	if r.ID == "" {
		return errors.New("empty id")
	}
	if r.State != "" && r.State != store.Pending {
		return fmt.Errorf("state %q: a new request is pending", r.State)
	}
	args, err := requestArgs(r)
	if err != nil {
		return err
	}
	rec := normDecision(store.AskRecord(r))
	return b.submit(ctx, false, func(ctx context.Context, tx Q, c *Chain) error {
		if _, err := tx.Exec(ctx, sqlRequestInsert, args...); err != nil {
			return err
		}
		if _, err := c.add(ctx, tx, rec); err != nil {
			return err
		}
		c.announce(r.ID, false)
		return nil
	})
}

// requestArgs encodes r for sqlRequestInsert.
func requestArgs(r store.Request) ([]any, error) {
	var (
		owner, analysis, elicit         *string
		act, classes, created, deadline string
		errs                            [7]error
	)
	owner, errs[0] = codec.Raw("owner", r.Owner)
	analysis, errs[1] = codec.Raw("analysis", r.Analysis)
	act, errs[2] = codec.JSON("action", r.Action)
	classes, errs[3] = codec.JSON("classes", r.Classes)
	created, errs[4] = codec.Time(r.Created)
	deadline, errs[5] = codec.Time(r.Deadline)
	if r.Elicit != nil {
		var e string
		e, errs[6] = codec.JSON("elicit", r.Elicit)
		elicit = &e
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return []any{r.ID, r.Session, owner, r.OwnerText, act, r.Digest, classes, analysis, r.Rule, created, deadline, r.Host, elicit, r.Notice}, nil
}

// GetRequest returns the request id, or store.ErrNotFound.
func (b *Base) GetRequest(ctx context.Context, id string) (store.Request, error) {
	r, err := scanRequest(b.r.QueryRow(ctx, sqlRequestGet, id))
	if err != nil {
		return store.Request{}, fmt.Errorf("get request %s: %w", id, b.note(notFound(err)))
	}
	return r, nil
}

// ResolveRequest ends the request iff it is pending, with one UPDATE …
// WHERE state = 'pending' RETURNING, writes the audit record of the end
// (store.EndRecord) in the same transaction, announces it, and returns
// the ended row. If the request had already ended it returns the row as
// it is with store.ErrNotPending; an unknown id gives
// store.ErrNotFound. res.State must be one of the end states; a zero
// res.At means now.
func (b *Base) ResolveRequest(ctx context.Context, id string, res store.Resolution) (store.Request, error) {
	r, err := b.resolveRequest(ctx, id, res)
	if err != nil {
		if errors.Is(err, store.ErrNotPending) {
			return r, fmt.Errorf("resolve request %s: %w (it is %s)", id, err, r.State)
		}
		return store.Request{}, fmt.Errorf("resolve request %s: %w", id, err)
	}
	return r, nil
}

func (b *Base) resolveRequest(ctx context.Context, id string, res store.Resolution) (store.Request, error) {
	switch res.State {
	case store.Answered, store.Denied, store.Expired, store.Withdrawn:
	default:
		return store.Request{}, fmt.Errorf("cannot end in state %q", res.State)
	}
	at, err := resolvedAt(&res)
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
	// The read after a failed swap shares the swap's transaction, so a
	// request created in between cannot be reported as "not pending".
	// A human's answer is durable before the human hears it counted (and
	// before an approved action runs); an expiry or withdrawal need not
	// be (writer.go).
	human := res.State == store.Answered || res.State == store.Denied
	var r store.Request
	err = b.submit(ctx, human, func(ctx context.Context, tx Q, c *Chain) error {
		var err error
		r, err = scanRequest(tx.QueryRow(ctx, sqlRequestEnd,
			string(res.State), string(res.Scope), string(res.Grain), res.By, res.Surface, res.Reason, at, content, id, string(res.State), at))
		switch {
		case err == nil:
			if _, err := c.add(ctx, tx, normDecision(store.EndRecord(r))); err != nil {
				return err
			}
			c.announce(id, true)
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		r, err = scanRequest(tx.QueryRow(ctx, sqlRequestGet, id))
		if err != nil {
			return notFound(err)
		}
		return store.ErrNotPending
	})
	return r, err
}

// resolvedAt encodes res.At, setting a zero one to now.
func resolvedAt(res *store.Resolution) (string, error) {
	if res.At.IsZero() {
		res.At = time.Now()
	}
	return codec.Time(res.At)
}

// PendingRequests lists pending requests, oldest first; session ""
// means every session.
func (b *Base) PendingRequests(ctx context.Context, session string) ([]store.Request, error) {
	q := `SELECT ` + requestCols + ` FROM requests WHERE state = 'pending' ORDER BY created, ` + b.d.Ord
	args := []any{}
	if session != "" {
		q = `SELECT ` + requestCols + ` FROM requests WHERE session = ? AND state = 'pending' ORDER BY created, ` + b.d.Ord
		args = append(args, session)
	}
	out, err := QueryRows(ctx, b.r, scanRequest, q, args...)
	if err != nil {
		return nil, fmt.Errorf("pending requests of session %q: %w", session, b.note(err))
	}
	return out, nil
}

// WithdrawHostRequests withdraws every pending request whose host is not
// keep, with res's By, Surface, Reason (the cause) and At (zero means
// now), writes each one's audit record in the same transaction,
// announces them, and returns how many. res.State must be empty or
// store.Withdrawn.
func (b *Base) WithdrawHostRequests(ctx context.Context, keep string, res store.Resolution) (int, error) {
	n, err := b.withdrawHostRequests(ctx, keep, res)
	if err != nil {
		return 0, fmt.Errorf("withdraw requests of hosts other than %q: %w", keep, err)
	}
	return n, nil
}

func (b *Base) withdrawHostRequests(ctx context.Context, keep string, res store.Resolution) (int, error) {
	if res.State != "" && res.State != store.Withdrawn {
		return 0, fmt.Errorf("state %q: requests are withdrawn", res.State)
	}
	at, err := resolvedAt(&res)
	if err != nil {
		return 0, err
	}
	n := 0
	err = b.submit(ctx, false, func(ctx context.Context, tx Q, c *Chain) error {
		ended, err := QueryRows(ctx, tx, scanRequest, sqlRequestsWithdraw, res.By, res.Surface, res.Reason, at, keep)
		if err != nil {
			return err
		}
		// RETURNING gives no order; the records follow creation order.
		slices.SortFunc(ended, func(a, b store.Request) int { return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID)) })
		for _, r := range ended {
			if _, err := c.add(ctx, tx, normDecision(store.EndRecord(r))); err != nil {
				return err
			}
			c.announce(r.ID, true)
		}
		n = len(ended)
		return nil
	})
	return n, err
}
