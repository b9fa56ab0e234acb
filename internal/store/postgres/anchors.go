package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
)

// Anchors with several hosts. Each host keeps its own sidecar file (the
// audit head as it last saw it: after its own durable commits, and as
// it follows the others' announcements) and pushes to the config's
// sinks. The log is one chain, so every anchor, whichever host wrote
// it, must name a record the shared log still holds with that hash: a
// host checks its anchors when it opens and in VerifyChain, and the
// committer checks the head it last saw before every batch. A head
// only moves forward (anchor.File never lowers one).

// anchorSources are the anchors the log is checked against: the
// sidecar (if any) and the sinks that can be read back.
func anchorSources(sidecar string, sinks []anchor.Sink) []anchor.Source {
	var out []anchor.Source
	if sidecar != "" {
		out = append(out, anchor.File{Path: sidecar})
	}
	for _, s := range sinks {
		if src, ok := s.(anchor.Source); ok {
			out = append(out, src)
		}
	}
	return out
}

// sourced is a head and where it was read.
type sourced struct {
	anchor.Head
	from string
}

// readAnchors reads every source's head; missing ones are skipped, an
// unreadable one is an error.
func readAnchors(sources []anchor.Source) ([]sourced, error) {
	var out []sourced
	for _, s := range sources {
		h, err := s.Read()
		switch {
		case isNotExist(err):
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

// logHead is what the log says about itself.
type logHead struct {
	first    string
	last     int64
	lastHash string
	hashes   map[int64]string
}

func readLogHead(ctx context.Context, tx pgx.Tx, seqs []int64) (logHead, error) {
	var lh logHead
	err := tx.QueryRow(ctx, `SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1`).Scan(&lh.last, &lh.lastHash)
	if noRows(err) {
		return lh, nil
	}
	if err != nil {
		return lh, fmt.Errorf("read the audit log's head: %w", err)
	}
	lh.hashes = map[int64]string{}
	for _, s := range append([]int64{1}, seqs...) {
		var h string
		err := tx.QueryRow(ctx, `SELECT hash FROM audit WHERE seq = $1`, s).Scan(&h)
		if err != nil && !noRows(err) {
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
	var lh logHead
	err = beginRead(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		lh, err = readLogHead(ctx, tx, seqsOf(heads))
		return err
	})
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

// Follow moves this host's anchors up the shared log, which other
// hosts append to, so that its sidecar vouches for the whole chain and
// not only for its own appends. Each call reads the head and anchors the
// head the previous call read, if the log still holds it: by then it is
// durable whatever the commit that wrote it (the server flushes
// asynchronous commits within a fraction of a second). The host calls
// it about once a second.
func (db *DB) Follow(ctx context.Context) error {
	var cur, prev head
	err := beginRead(ctx, db.pool, func(tx pgx.Tx) error {
		db.followMu.Lock()
		prev = db.followed
		db.followMu.Unlock()
		lh, err := readLogHead(ctx, tx, []int64{prev.seq})
		if err != nil {
			return err
		}
		cur = head{first: lh.first, seq: lh.last, hash: lh.lastHash}
		if prev.seq > 0 && (lh.hashes[prev.seq] != prev.hash || lh.first != prev.first) {
			prev = head{} // rolled back by a server crash, or worse: the committer and VerifyChain judge
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("follow the audit head: %w", db.noteConn(err))
	}
	db.followMu.Lock()
	db.followed = cur
	db.followMu.Unlock()
	if prev.seq > 0 && prev.seq > db.lastHead().seq {
		db.keeper.Post(anchor.Head{Store: prev.first, Seq: prev.seq, Hash: prev.hash, Time: time.Now().UTC()})
	}
	return nil
}
