package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
)

// policyLoader keeps the compiled policy in step with the config file:
// loaded at start, reloaded when the file changes, and kept as it was
// when a new version is broken.
type policyLoader struct {
	path     string
	paths    gate.Paths
	base     *slog.Logger // the watcher names its own component
	log      *slog.Logger
	interval time.Duration

	cur *gate.Policy // set before run starts, then only by run's goroutine
	// start is the config the host started with: the settings read once
	// at start (tools.env_passthrough, kanban.*) come from it.
	start *config.Config
	// inForce is the config the policy in force was compiled from;
	// loadErr is set while a newer file parses but does not compile, or
	// a file that appeared cannot be loaded.
	inForce atomic.Pointer[config.Config]
	loadErr atomic.Pointer[config.Problem]
	watcher *config.Watcher
	status  string
	// onChange receives each newly compiled policy (the gate's
	// SetPolicy); set before run starts.
	onChange func(*gate.Policy)
	// onConfig receives each reloaded config that compiled (the chat
	// surfaces' allowlists); set before run starts.
	onConfig func(*config.Config)
}

// loadPolicy loads the config at path. A missing file means the safe
// defaults (and the file is picked up when it appears); a broken one is
// an error: there is no last good policy to keep yet.
func loadPolicy(path string, paths gate.Paths, logger *slog.Logger) (*policyLoader, error) {
	l := &policyLoader{path: path, paths: paths, base: logger, log: logger.With("component", "config"), interval: config.DefaultWatchInterval}
	defaults := func() error {
		p, err := gate.Compile(nil, paths)
		if err != nil {
			return fmt.Errorf("compile the default policy: %w", err)
		}
		l.cur, l.start = p, config.Default()
		l.inForce.Store(l.start)
		return nil
	}
	const safe = "safe defaults: approvals.mode manual, timeout 300s, every unattended mode deny"
	if path == "" {
		l.status = "none; running with " + safe
		return l, defaults()
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		l.status = path + " (not found; running with " + safe + "; it is loaded when it appears)"
		return l, defaults()
	}
	w, warns, err := l.newWatcher()
	if err != nil {
		return nil, fmt.Errorf("config %s: %w (check it with `warden config check %s`)", path, err, path)
	}
	cfg := w.Config()
	p, err := gate.Compile(cfg, withAnchor(paths, cfg))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	for _, wn := range warns {
		l.log.Warn("config warning", "warning", wn.String())
	}
	l.cur, l.watcher, l.start = p, w, cfg
	l.inForce.Store(cfg)
	l.status = fmt.Sprintf("%s (loaded, sha256:%.12s…; reloaded when it changes)", path, cfg.Digest)
	if len(warns) > 0 {
		l.status += fmt.Sprintf("; %d warning(s) logged", len(warns))
	}
	return l, nil
}

func (l *policyLoader) newWatcher() (*config.Watcher, []config.Warning, error) {
	return config.NewWatcher(config.WatchOptions{
		Path: l.path, Interval: l.interval, Logger: l.base,
		OnReload: func(cfg *config.Config, _ []config.Warning) { l.reload(cfg) },
	})
}

// current returns the policy in force at start.
func (l *policyLoader) current() *gate.Policy { return l.cur }

// describe is the startup line's account of the config.
func (l *policyLoader) describe() string { return l.status }

// reload compiles a config the watcher parsed. One that parses but does
// not compile (an unknown class in the allowlist) keeps the last good
// policy, and says why. A reload is logged with what changed; one that
// widens the policy (a deny rule removed, a mode loosened) at WARN, so
// that an edit that lets more through never passes quietly.
func (l *policyLoader) reload(cfg *config.Config) {
	p, err := gate.Compile(cfg, withAnchor(withAnchor(l.paths, l.start), cfg))
	if err != nil {
		since := time.Now()
		if old := l.loadErr.Load(); old != nil {
			since = old.Since
		}
		l.loadErr.Store(&config.Problem{Err: err, Since: since, Kept: l.inForce.Load().Digest})
		l.log.Warn("config changed but does not compile; keeping the last good policy", "err", err)
		return
	}
	l.loadErr.Store(nil)
	changes := config.Diff(l.inForce.Load(), cfg)
	widens := false
	text := make([]string, len(changes))
	for i, c := range changes {
		text[i] = c.String()
		widens = widens || c.Widens
	}
	// Logged before it takes effect, so whoever sees the new policy at
	// work can already read what changed.
	if widens {
		l.log.Warn("policy reloaded; it now lets through more than before", "digest", cfg.Digest, "changes", text)
	} else {
		l.log.Info("policy reloaded", "digest", cfg.Digest, "changes", text)
	}
	l.cur = p
	l.inForce.Store(cfg)
	if l.onChange != nil {
		l.onChange(p)
	}
	if l.onConfig != nil {
		l.onConfig(cfg)
	}
}

// withAnchor adds cfg's audit.anchor_file to the protected paths: like
// the state directory, it is warden's own, and an agent that could write
// it could hide the log's loss or stop the host from starting.
func withAnchor(paths gate.Paths, cfg *config.Config) gate.Paths {
	if cfg == nil || cfg.Audit.AnchorFile == "" || slices.Contains(paths.Protected, cfg.Audit.AnchorFile) {
		return paths
	}
	paths.Protected = append(slices.Clip(paths.Protected), cfg.Audit.AnchorFile)
	return paths
}

// digest is the SHA-256 of the config in force, "" for the defaults.
// Safe from any goroutine.
func (l *policyLoader) digest() string { return l.inForce.Load().Digest }

// problem says why the config file on disk is not the policy in force,
// or nil when it is. Safe from any goroutine.
func (l *policyLoader) problem() *config.Problem {
	if l.watcher != nil {
		if p := l.watcher.Problem(); p != nil {
			return p
		}
	}
	return l.loadErr.Load()
}

// run watches the file until ctx ends. A file that did not exist at
// start is waited for, then watched.
func (l *policyLoader) run(ctx context.Context) {
	if l.path == "" {
		return
	}
	if l.watcher == nil && !l.await(ctx) {
		return
	}
	if err := l.watcher.Run(ctx); err != nil {
		l.log.Error("watch config", "err", err)
	}
}

// await polls for the config file to appear and loads it. It reports
// false when ctx ended first.
func (l *policyLoader) await(ctx context.Context) bool {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	reported := ""
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		if _, err := os.Stat(l.path); err != nil {
			continue
		}
		w, _, err := l.newWatcher()
		if err != nil {
			if err.Error() != reported {
				reported = err.Error()
				l.loadErr.Store(&config.Problem{Err: err, Since: time.Now(), Kept: "defaults"})
				l.log.Warn("config file appeared but cannot be loaded; keeping the defaults", "err", err)
			}
			continue
		}
		l.watcher = w
		l.log.Info("config file appeared")
		l.reload(w.Config())
		return true
	}
}
