package anchor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"log/syslog"
	"net/http"
	"sync"
	"time"
)

// Sink receives each new head.
type Sink interface {
	Push(ctx context.Context, h Head) error
	// String names the sink in logs and reports.
	String() string
}

// Source is a sink whose head can be read back: the store checks the
// log against it when it opens, and `warden audit verify` reports
// against it.
type Source interface {
	Sink
	// Read returns the head kept; an error matching fs.ErrNotExist when
	// none is.
	Read() (Head, error)
}

// ErrOtherStore: an anchor file names another database; it is left as
// it is, since it is evidence that this database replaced that one.
var ErrOtherStore = errors.New("the anchor belongs to another database")

// File keeps the head in a file (the sidecar beside the database, or a
// copy on another path). It never lowers the head it holds for the same
// database, and never overwrites another database's.
type File struct{ Path string }

// Push implements Sink.
func (f File) Push(_ context.Context, h Head) error {
	old, err := ReadFile(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		// An unreadable anchor is replaced: the store checked the
		// readable ones when it opened.
	case old.Store != h.Store:
		return fmt.Errorf("anchor %s: %w (%s, this is %s)", f.Path, ErrOtherStore, old.Store, h.Store)
	case old.Seq > h.Seq || (old.Seq == h.Seq && old.Hash == h.Hash):
		return nil // another process got further; keep it
	}
	return WriteFile(f.Path, h)
}

// Read implements Source.
func (f File) Read() (Head, error) { return ReadFile(f.Path) }

func (f File) String() string { return "file " + f.Path }

// Syslog sends each head to the local syslog daemon (facility auth,
// tag warden-audit), from where the operator's log shipping can carry it
// off the machine.
type Syslog struct {
	mu sync.Mutex
	w  *syslog.Writer
}

// Push implements Sink. A lost connection is redialled on the next push.
func (s *Syslog) Push(_ context.Context, h Head) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		w, err := syslog.New(syslog.LOG_AUTH|syslog.LOG_INFO, "warden-audit")
		if err != nil {
			return fmt.Errorf("syslog: %w", err)
		}
		s.w = w
	}
	msg := fmt.Sprintf("audit head store=%s seq=%d hash=%s", h.Store, h.Seq, h.Hash)
	if err := s.w.Info(msg); err != nil {
		s.w.Close()
		s.w = nil
		return fmt.Errorf("syslog: %w", err)
	}
	return nil
}

// Close closes the connection to the daemon.
func (s *Syslog) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	return err
}

func (s *Syslog) String() string { return "syslog" }

// HTTP posts each head as JSON to URL; any status but 2xx is a failure.
type HTTP struct {
	URL string
	// Client is used for the posts; nil means one with a 10-second
	// timeout.
	Client *http.Client
}

// Push implements Sink.
func (s HTTP) Push(ctx context.Context, h Head) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("post audit head: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	c := s.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("post audit head: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("post audit head to %s: %s", s.URL, resp.Status)
	}
	return nil
}

func (s HTTP) String() string { return "http " + s.URL }

// Keeper pushes heads to its sinks from one goroutine: Post never
// blocks, and a head posted while a push is under way replaces any head
// still waiting, so the sinks always get the newest. Rounds are at least
// Interval apart, so that under load the anchors' own fsyncs take a
// small, bounded share of the disk: an anchor trails the log by at most
// about Interval plus one round. A failed push is logged (once per
// distinct error) and tried again with the next head.
type Keeper struct {
	sinks    []Sink
	log      *slog.Logger
	interval time.Duration

	mu       sync.Mutex
	next     *Head
	posted   uint64 // heads posted so far
	pushed   uint64 // of those, how many a finished round covered
	roundEnd chan struct{}
	failed   map[string]string // sink → last error reported
	closed   bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

// DefaultInterval is the least time between two rounds of a Keeper.
const DefaultInterval = 50 * time.Millisecond

// NewKeeper starts a Keeper whose rounds are at least interval apart
// (DefaultInterval if zero); Close stops it.
func NewKeeper(log *slog.Logger, interval time.Duration, sinks ...Sink) *Keeper {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	k := &Keeper{sinks: sinks, log: log.With("component", "audit-anchor"), interval: interval, roundEnd: make(chan struct{}),
		failed: map[string]string{}, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go k.run()
	return k
}

// Post hands the keeper a new head.
func (k *Keeper) Post(h Head) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return
	}
	k.next = &h
	k.posted++
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
}

// Flush waits until every head posted before it was pushed (or failed
// to be), or ctx ends.
func (k *Keeper) Flush(ctx context.Context) error {
	k.mu.Lock()
	want := k.posted
	for k.pushed < want {
		ch := k.roundEnd
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-k.done:
			return errors.New("anchor keeper closed")
		}
		k.mu.Lock()
	}
	k.mu.Unlock()
	return nil
}

// Close pushes the last head posted and stops.
func (k *Keeper) Close() {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		<-k.done
		return
	}
	k.closed = true
	k.mu.Unlock()
	close(k.stop)
	<-k.done
	for _, s := range k.sinks {
		if c, ok := s.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

func (k *Keeper) run() {
	defer close(k.done)
	for {
		select {
		case <-k.wake:
		case <-k.stop:
			k.round() // the last head, if one is waiting
			return
		}
		k.round()
		pause := time.NewTimer(k.interval)
		select {
		case <-pause.C:
		case <-k.stop:
			pause.Stop()
			k.round()
			return
		}
	}
}

// round pushes the waiting head, if any, to every sink.
func (k *Keeper) round() {
	k.mu.Lock()
	h, upto := k.next, k.posted
	k.next = nil
	k.mu.Unlock()
	if h != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		for _, s := range k.sinks {
			err := s.Push(ctx, *h)
			k.report(s, err)
		}
		cancel()
	}
	k.mu.Lock()
	k.pushed = upto
	close(k.roundEnd)
	k.roundEnd = make(chan struct{})
	k.mu.Unlock()
}

func (k *Keeper) report(s Sink, err error) {
	name := s.String()
	k.mu.Lock()
	last := k.failed[name]
	if err == nil {
		delete(k.failed, name)
	} else {
		k.failed[name] = err.Error()
	}
	k.mu.Unlock()
	switch {
	case err != nil && err.Error() != last:
		k.log.Warn("audit anchor not written", "sink", name, "err", err)
	case err == nil && last != "":
		k.log.Info("audit anchor written again", "sink", name)
	}
}
