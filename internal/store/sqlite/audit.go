package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqldb"
)

// The audit log and the requests are the shared SQL's
// (internal/store/sqldb); what is SQLite's own is the file: a log whose
// database file went missing, or was replaced, is a loss the log itself
// cannot show.

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
	mine := db.Head()
	if err := db.checkFile(); err != nil {
		loss := &store.LossError{Anchor: "the file this host opened", AnchorSeq: mine.Seq, Last: mine.Seq, Replaced: true}
		if errors.Is(err, ErrFileGone) {
			if _, serr := os.Stat(db.path); serr != nil {
				loss.Replaced, loss.Gone = false, true
			}
			return 0, fmt.Errorf("verify audit chain: %w", loss)
		}
		return 0, fmt.Errorf("verify audit chain: %w", err)
	}
	n, err := sqldb.VerifyLog(ctx, db.inTx, db.sources, mine, "this host's last commit")
	if err != nil {
		return n, fmt.Errorf("verify audit chain: %w", err)
	}
	return n, nil
}

// anchorSources are the anchors a log at path is checked against: its
// sidecar, and the sinks that can be read back.
func anchorSources(path string, sinks []anchor.Sink) []anchor.Source {
	return sqldb.AnchorSources(path+AnchorSuffix, sinks)
}

// Verify checks the audit log at path without a host: it opens the file
// read-only (never creating it), recomputes the chain and compares the
// log with its sidecar anchor and the extra anchors given (the
// audit.anchor_file of the config). It returns how many records
// verified. A missing database is a *store.LossError (Gone) when an
// anchor knows of records, and an error matching fs.ErrNotExist
// otherwise.
func Verify(ctx context.Context, path string, extra ...anchor.Source) (int, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, fmt.Errorf("verify %s: %w", path, err)
	}
	sources := append(anchorSources(abs, nil), extra...)
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if loss := sqldb.MissingLog(sources); loss != nil {
				return 0, fmt.Errorf("verify %s: %w", abs, loss)
			}
		}
		return 0, fmt.Errorf("verify %s: %w", abs, err)
	}
	r, err := sql.Open("sqlite", dsn(abs, url.Values{
		"mode":    {"ro"},
		"_pragma": {"busy_timeout(5000)", "query_only(1)"},
	}))
	if err != nil {
		return 0, fmt.Errorf("verify %s: %w", abs, err)
	}
	defer r.Close()
	// A DB of readers only: its inTx serves the read transactions.
	readers := &DB{r: r}
	n, err := sqldb.VerifyLog(ctx, readers.inTx, sources, anchor.Head{}, "")
	if err != nil {
		return n, fmt.Errorf("verify %s: %w", abs, err)
	}
	return n, nil
}
