package config

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"
)

// DefaultWatchInterval is how often a Watcher looks at its file.
const DefaultWatchInterval = time.Second

// minWatchInterval keeps a misconfigured interval from spinning.
const minWatchInterval = 10 * time.Millisecond

// racyWindow is how close to a read a file's modification time must be
// for an unchanged stat to be distrusted. File systems with coarse
// timestamps can write twice within one tick and keep size and mtime;
// re-hashing while the mtime is that recent catches the second write.
const racyWindow = 2 * time.Second

// WatchOptions configures a Watcher.
type WatchOptions struct {
	// Path is the config file. The caller resolves it; it is never taken
	// from the environment here.
	Path string
	// Interval between polls; DefaultWatchInterval if zero.
	Interval time.Duration
	// Logger receives reload and failure messages. Nil discards them.
	Logger *slog.Logger
	// OnReload, if set, is called from Run's goroutine after a new config
	// is published.
	OnReload func(cfg *Config, warnings []Warning)
	// OnError, if set, is called from Run's goroutine when the file cannot
	// be read or parsed; the last good config stays published. Each
	// distinct failure is reported once, not on every poll.
	OnError func(err error)
}

// Watcher keeps the last good configuration of one file and reloads it
// when the file changes. It polls (size, modification time, identity,
// then a content hash) rather than using file-system notifications,
// which miss edits made by renaming a new file into place on some
// systems and need a dependency.
//
// A file that becomes broken, empty (or whitespace only) or disappears
// does not change the published config: policy stays what it was until
// the file is fixed, and Problem says why the file on disk is not in
// force.
type Watcher struct {
	opts    WatchOptions
	log     *slog.Logger
	cur     atomic.Pointer[Config]
	problem atomic.Pointer[Problem]
	running atomic.Bool

	// Poll state, touched only by NewWatcher and then Run's goroutine.
	info     os.FileInfo
	readAt   time.Time
	hash     [sha256.Size]byte // of the last content tried, good or bad
	parseErr error             // that content's parse error, nil if good
	reported string            // last failure reported, "" when healthy
}

// NewWatcher loads opts.Path once and returns a Watcher publishing it,
// with the file's warnings. A file that cannot be loaded is an error:
// there is no last good config to fall back on.
func NewWatcher(opts WatchOptions) (*Watcher, []Warning, error) {
	if opts.Path == "" {
		return nil, nil, errors.New("watch config: no path")
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultWatchInterval
	}
	opts.Interval = max(opts.Interval, minWatchInterval)
	w := &Watcher{opts: opts, log: opts.Logger}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	w.log = w.log.With("component", "config", "path", opts.Path)
	info, data, err := w.read()
	if err != nil {
		return nil, nil, fmt.Errorf("watch config: %w", err)
	}
	cfg, warns, err := parseFile(data, opts.Path)
	if err != nil {
		return nil, warns, fmt.Errorf("watch config: %w", err)
	}
	w.info, w.hash = info, sha256.Sum256(data)
	w.cur.Store(cfg)
	return w, warns, nil
}

// Config returns the last good configuration. It is safe to call from
// any goroutine; the result must not be modified.
func (w *Watcher) Config() *Config { return w.cur.Load() }

// Problem is why the file on disk is not the config in force.
type Problem struct {
	// Err is the failure: the file is missing, unreadable, empty, or
	// does not parse.
	Err error
	// Since is when it was first seen.
	Since time.Time
	// Kept is the digest of the config still in force.
	Kept string
}

// Problem returns the current problem, or nil while the file on disk is
// the published config. It is safe to call from any goroutine.
func (w *Watcher) Problem() *Problem { return w.problem.Load() }

// Run polls the file until ctx is done, then returns nil. Only one Run
// may be active at a time.
func (w *Watcher) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("watch config: already running")
	}
	defer w.running.Store(false)
	t := time.NewTicker(w.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.poll(ctx)
		}
	}
}

// read stats and reads the file, remembering when.
func (w *Watcher) read() (os.FileInfo, []byte, error) {
	info, err := os.Stat(w.opts.Path)
	if err != nil {
		return nil, nil, err
	}
	w.readAt = time.Now()
	data, err := readFile(w.opts.Path)
	if err != nil {
		return nil, nil, err
	}
	return info, data, nil
}

// poll reloads the file if it changed.
func (w *Watcher) poll(ctx context.Context) {
	info, err := os.Stat(w.opts.Path)
	if err != nil {
		w.fail(ctx, err)
		return
	}
	if w.info != nil && os.SameFile(w.info, info) && info.Size() == w.info.Size() &&
		info.ModTime().Equal(w.info.ModTime()) && w.readAt.Sub(info.ModTime()) >= racyWindow {
		return
	}
	info, data, err := w.read()
	if err != nil {
		w.fail(ctx, err)
		return
	}
	w.info = info
	sum := sha256.Sum256(data)
	if sum == w.hash {
		// Same content as last tried: its outcome stands. Only a read
		// failure in between may need clearing or restating.
		switch {
		case w.parseErr != nil:
			w.fail(ctx, w.parseErr)
		case w.reported != "":
			w.reported = ""
			w.problem.Store(nil)
			w.log.LogAttrs(ctx, slog.LevelInfo, "config readable again; unchanged")
		}
		return
	}
	w.hash = sum
	cfg, warns, err := parseFile(data, w.opts.Path)
	if err != nil {
		w.parseErr = err
		w.reported = "" // new content: report even if the message repeats
		w.fail(ctx, err)
		return
	}
	w.parseErr = nil
	w.reported = ""
	w.problem.Store(nil)
	w.cur.Store(cfg)
	w.log.LogAttrs(ctx, slog.LevelInfo, "config reloaded", slog.String("digest", cfg.Digest), slog.Int("warnings", len(warns)))
	for _, wr := range warns {
		w.log.LogAttrs(ctx, slog.LevelWarn, "config warning", slog.String("warning", wr.String()))
	}
	if w.opts.OnReload != nil {
		w.opts.OnReload(cfg, warns)
	}
}

// fail reports err, once per distinct failure, and keeps the last good
// config. It logs at WARN: the host goes on, safely, with the policy it
// had.
func (w *Watcher) fail(ctx context.Context, err error) {
	if _, parse := errors.AsType[*Error](err); !parse {
		// Unreadable: re-read whenever it is back, even if unchanged.
		w.info = nil
	}
	if err.Error() == w.reported {
		return
	}
	w.reported = err.Error()
	since := time.Now()
	if p := w.problem.Load(); p != nil {
		since = p.Since
	}
	w.problem.Store(&Problem{Err: err, Since: since, Kept: w.Config().Digest})
	w.log.LogAttrs(ctx, slog.LevelWarn, "config not reloaded; keeping last good config",
		slog.String("error", err.Error()), slog.String("kept_digest", w.Config().Digest))
	if w.opts.OnError != nil {
		w.opts.OnError(err)
	}
}
