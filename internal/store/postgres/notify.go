package postgres

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/store"
)

var _ store.Watcher = (*DB)(nil)

// changeKind is the first word of an announcement.
type changeKind string

const (
	changeCreated changeKind = "c"
	changeEnded   changeKind = "e"
)

// encodeChange is an announcement's payload: "KIND ORIGIN ID". Host ids
// and request ids hold no spaces; an empty origin is "-".
func encodeChange(kind changeKind, origin, id string) string {
	if origin == "" {
		origin = "-"
	}
	return string(kind) + " " + origin + " " + id
}

// decodeChange reads a payload; ok is false for one it does not know.
func decodeChange(p string) (store.Change, bool) {
	f := strings.Fields(p)
	if len(f) != 3 || (f[0] != string(changeCreated) && f[0] != string(changeEnded)) {
		return store.Change{}, false
	}
	c := store.Change{Request: f[2], Ended: f[0] == string(changeEnded), Origin: f[1]}
	if c.Origin == "-" {
		c.Origin = ""
	}
	return c, true
}

// watchRetry bounds the wait between reconnections of the listener.
const watchRetry = 2 * time.Second

// WatchRequests listens (LISTEN on its own connection, outside the
// pool) for the request changes every host commits, and calls fn with
// each. After the connection fails it reconnects and calls fn with a
// Resync change, since announcements made meanwhile are lost.
func (db *DB) WatchRequests(ctx context.Context, fn func(store.Change)) error {
	first := true
	for {
		err := db.listen(ctx, fn, !first)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		first = false
		db.o.Logger.Warn("request announcements: connection lost; reconnecting", "err", err, "retry_in", watchRetry)
		t := time.NewTimer(watchRetry)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// listen runs one listening connection until it fails.
func (db *DB) listen(ctx context.Context, fn func(store.Change), resync bool) error {
	conn, err := pgx.ConnectConfig(ctx, db.cfg.ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{db.channel}.Sanitize()); err != nil {
		return err
	}
	if resync {
		fn(store.Change{Resync: true})
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if c, ok := decodeChange(n.Payload); ok {
			fn(c)
		}
	}
}
