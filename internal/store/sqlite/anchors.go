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
)

// anchorSources are the anchors a log at path is checked against: its
// sidecar, and the sinks that can be read back.
func anchorSources(path string, sinks []anchor.Sink) []anchor.Source {
	out := []anchor.Source{anchor.File{Path: path + AnchorSuffix}}
	for _, s := range sinks {
		if src, ok := s.(anchor.Source); ok {
			out = append(out, src)
		}
	}
	return out
}

// readAnchors reads every source's head; missing ones are skipped, an
// unreadable one is an error (it cannot vouch for the log, and it must
// not be silently replaced).
func readAnchors(sources []anchor.Source) ([]sourced, error) {
	var out []sourced
	for _, s := range sources {
		h, err := s.Read()
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, fmt.Errorf("audit anchor (%s): %w; move it aside if it is not warden's", s, err)
		}
		if h.Seq > 0 {
			out = append(out, sourced{h, s.String()})
		}
	}
	return out, nil
}

// sourced is a head and where it was read.
type sourced struct {
	anchor.Head
	from string
}

// missingFile is the loss when the database file does not exist: any
// anchor that knows of records.
func missingFile(sources []anchor.Source) error {
	heads, err := readAnchors(sources)
	if err != nil {
		return err
	}
	for _, h := range heads {
		return &store.LossError{Anchor: "the anchor (" + h.from + ")", AnchorSeq: h.Seq, Gone: true}
	}
	return nil
}

// logHead is what the log says about itself.
type logHead struct {
	first    string // hash of seq 1
	last     int64
	lastHash string
	hashes   map[int64]string // at the anchors' seqs
}

// readLogHead reads the log's first and last records, and the hashes at
// seqs, in one read transaction of q.
func readLogHead(ctx context.Context, q *sql.DB, seqs []int64) (logHead, error) {
	var lh logHead
	tx, err := q.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return lh, err
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`).Scan(&lh.last, &lh.lastHash)
	if errors.Is(err, sql.ErrNoRows) {
		return lh, nil
	}
	if err != nil {
		return lh, fmt.Errorf("read the audit log's head: %w", err)
	}
	lh.hashes = map[int64]string{}
	for _, s := range append([]int64{1}, seqs...) {
		var h string
		err := tx.QueryRowContext(ctx, `SELECT hash FROM audit WHERE seq = ?`, s).Scan(&h)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return lh, fmt.Errorf("read the audit log's head: %w", err)
		}
		lh.hashes[s] = h
	}
	lh.first = lh.hashes[1]
	return lh, nil
}

// compare tells how the log falls short of anchor a, or nil.
func compare(a sourced, lh logHead) *store.LossError {
	loss := &store.LossError{Anchor: "the anchor (" + a.from + ")", AnchorSeq: a.Seq, Last: lh.last}
	switch {
	case a.Seq == 0:
		return nil
	case lh.last == 0 || lh.first != a.Store:
		loss.Replaced = true
	case lh.last < a.Seq:
		loss.Missing = a.Seq - lh.last
	case lh.hashes[a.Seq] != a.Hash:
		loss.Changed = true
	default:
		return nil
	}
	return loss
}

func seqsOf(heads []sourced) []int64 {
	out := make([]int64, 0, len(heads))
	for _, h := range heads {
		out = append(out, h.Seq)
	}
	return out
}

// checkAnchors compares the log with its anchors when the store opens;
// a loss is ErrAuditLoss. It returns the log's head.
func (db *DB) checkAnchors(ctx context.Context) (logHead, error) {
	heads, err := readAnchors(db.sources)
	if err != nil {
		return logHead{}, err
	}
	lh, err := readLogHead(ctx, db.r, seqsOf(heads))
	if err != nil {
		return lh, err
	}
	for _, h := range heads {
		if loss := compare(h, lh); loss != nil {
			return lh, fmt.Errorf("%w: %w", ErrAuditLoss, loss)
		}
	}
	return lh, nil
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
			if loss := missingFile(sources); loss != nil {
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
	n, err := verifyAnchored(ctx, r, sources, head{})
	if err != nil {
		return n, fmt.Errorf("verify %s: %w", abs, err)
	}
	return n, nil
}

// verifyAnchored recomputes the chain, then compares it with the
// anchors and with mine (the head this process last committed; zero if
// none). The anchors are read before the log, so a commit landing
// meanwhile cannot look like a loss.
func verifyAnchored(ctx context.Context, q *sql.DB, sources []anchor.Source, mine head) (int, error) {
	heads, err := readAnchors(sources)
	if err != nil {
		return 0, err
	}
	if mine.seq > 0 {
		heads = append(heads, sourced{anchor.Head{Store: mine.first, Seq: mine.seq, Hash: mine.hash}, "this host's last commit"})
	}
	n, err := verifyChain(ctx, q)
	if err != nil {
		return n, err
	}
	lh, err := readLogHead(ctx, q, seqsOf(heads))
	if err != nil {
		return n, err
	}
	for _, h := range heads {
		if loss := compare(h, lh); loss != nil {
			if h.from == "this host's last commit" {
				loss.Anchor = h.from
			}
			return n, loss
		}
	}
	return n, nil
}
