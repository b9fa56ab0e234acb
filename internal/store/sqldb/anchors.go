package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"

	"github.com/wardenhq/warden/internal/anchor"
	"github.com/wardenhq/warden/internal/store"
)

// Anchors. A store keeps the audit head outside the log too: a sidecar
// file, and the config's sinks. The log is one chain, so every anchor,
// whichever writer wrote it, must name a record the log still holds
// with that hash: a store checks its anchors when it opens
// (CheckAnchors) and when asked to verify (VerifyLog), and its
// committer checks the head it remembers before every batch. A head
// only moves forward (anchor.File never lowers one).

// AnchorSources are the anchors a log is checked against: the sidecar
// file (if any) and the sinks that can be read back.
func AnchorSources(sidecar string, sinks []anchor.Sink) []anchor.Source {
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

// MissingLog is the loss when the log does not exist at all (its
// database file is missing): a *store.LossError (Gone) when an anchor
// knows of records, nil when none does.
func MissingLog(sources []anchor.Source) error {
	heads, err := readAnchors(sources)
	if err != nil {
		return err
	}
	for _, h := range heads {
		return &store.LossError{Anchor: "the anchor (" + h.from + ")", AnchorSeq: h.Seq, Gone: true}
	}
	return nil
}

// LogHead is what the log says about itself.
type LogHead struct {
	// First is the hash of seq 1.
	First string
	// Last is the newest seq (0: the log is empty), LastHash its hash.
	Last     int64
	LastHash string
	// Hashes are the hashes at the seqs ReadLogHead was asked for ("" if
	// the log has no such record).
	Hashes map[int64]string
}

// Head is the log's head as an anchor holds it.
func (lh LogHead) Head() anchor.Head {
	return anchor.Head{Store: lh.First, Seq: lh.Last, Hash: lh.LastHash}
}

// ReadLogHead reads the log's first and last records, and the hashes at
// seqs, with q (a read transaction, for one snapshot).
func ReadLogHead(ctx context.Context, q Q, seqs []int64) (LogHead, error) {
	var lh LogHead
	err := q.QueryRow(ctx, sqlHead).Scan(&lh.Last, &lh.LastHash)
	if errors.Is(err, sql.ErrNoRows) {
		return lh, nil
	}
	if err != nil {
		return lh, fmt.Errorf("read the audit log's head: %w", err)
	}
	lh.Hashes = map[int64]string{}
	for _, s := range append([]int64{1}, seqs...) {
		var h string
		err := q.QueryRow(ctx, sqlHashAt, s).Scan(&h)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return lh, fmt.Errorf("read the audit log's head: %w", err)
		}
		lh.Hashes[s] = h
	}
	lh.First = lh.Hashes[1]
	return lh, nil
}

// compare tells how the log falls short of anchor a, or nil.
func compare(a sourced, lh LogHead) *store.LossError {
	loss := &store.LossError{Anchor: "the anchor (" + a.from + ")", AnchorSeq: a.Seq, Last: lh.Last}
	switch {
	case a.Seq == 0:
		return nil
	case lh.Last == 0 || lh.First != a.Store:
		loss.Replaced = true
	case lh.Last < a.Seq:
		loss.Missing = a.Seq - lh.Last
	case lh.Hashes[a.Seq] != a.Hash:
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

// CheckAnchors compares the log, read in a read transaction of tx, with
// its anchors when a store opens; a loss is ErrAuditLoss. It returns
// the log's head.
func CheckAnchors(ctx context.Context, tx TxFunc, sources []anchor.Source) (anchor.Head, error) {
	heads, err := readAnchors(sources)
	if err != nil {
		return anchor.Head{}, err
	}
	var lh LogHead
	err = tx(ctx, TxRead, func(tx Q) error {
		var err error
		lh, err = ReadLogHead(ctx, tx, seqsOf(heads))
		return err
	})
	if err != nil {
		return anchor.Head{}, err
	}
	for _, h := range heads {
		if loss := compare(h, lh); loss != nil {
			return lh.Head(), fmt.Errorf("%w: %w", ErrAuditLoss, loss)
		}
	}
	return lh.Head(), nil
}

// VerifyLog recomputes the chain (verifyChain) in one read transaction
// of tx, then checks what the chain alone cannot show: that the log
// holds the heads its anchors keep, and mine (the head this store
// remembers, named so in a loss; zero if none). A shortfall is a
// *store.LossError, which matches store.ErrChainBroken. The anchors are
// read before the log, so a commit landing meanwhile cannot look like a
// loss.
func VerifyLog(ctx context.Context, tx TxFunc, sources []anchor.Source, mine anchor.Head, name string) (int, error) {
	heads, err := readAnchors(sources)
	if err != nil {
		return 0, err
	}
	if mine.Seq > 0 {
		heads = append(heads, sourced{anchor.Head{Store: mine.Store, Seq: mine.Seq, Hash: mine.Hash}, name})
	}
	var n int
	var lh LogHead
	err = tx(ctx, TxRead, func(tx Q) error {
		var err error
		if n, err = verifyChain(ctx, tx); err != nil {
			return err
		}
		lh, err = ReadLogHead(ctx, tx, seqsOf(heads))
		return err
	})
	if err != nil {
		return n, err
	}
	for i, h := range heads {
		if loss := compare(h, lh); loss != nil {
			if mine.Seq > 0 && i == len(heads)-1 {
				loss.Anchor = name
			}
			return n, loss
		}
	}
	return n, nil
}
