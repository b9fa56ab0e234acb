package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
)

// Defaults.
const (
	// DefaultResync is how often the Core re-reads the pending requests
	// and its posts, repairing what missed events left behind.
	DefaultResync = 30 * time.Second
	// DefaultMinBackoff and DefaultMaxBackoff bound the wait before a
	// reconnection: doubling from the first to the second, with jitter.
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 5 * time.Minute
)

// Options configure a Core.
type Options struct {
	Platform Platform
	Host     surface.Host
	Posts    store.ChatPosts
	Access   Access
	Logger   *slog.Logger
	Now      func() time.Time
	// Resync is DefaultResync if zero.
	Resync time.Duration
	// MinBackoff and MaxBackoff are the defaults if zero.
	MinBackoff, MaxBackoff time.Duration
}

// Core is one platform's chat surface.
type Core struct {
	o    Options
	p    Platform
	name string
	caps Caps
	log  *slog.Logger

	resync chan struct{}
	settle chan chan struct{}

	// run is the context of Run: the commands and agent runs the Core
	// starts are bound to it, not to the connection that carried the
	// message (a reconnection does not cancel them).
	runMu  sync.Mutex
	run    context.Context
	work   sync.WaitGroup
	active int // background runs in flight

	mu     sync.Mutex
	acc    Access
	forms  map[formKey]*formRun
	gaveUp map[string]bool // requests whose post cannot be sent (gone)
	status Status
}

// Status is the connection's state, for serve's start-up lines and
// warden doctor.
type Status struct {
	Connected bool
	// Since is when the state last changed.
	Since time.Time
	// Err is the last connection error, if any.
	Err string
	// Connections counts successful connections.
	Connections int
}

// New returns a Core.
func New(o Options) (*Core, error) {
	if o.Platform == nil || o.Host == nil || o.Posts == nil {
		return nil, errors.New("chat: platform, host and posts are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Resync <= 0 {
		o.Resync = DefaultResync
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(DefaultMaxBackoff, o.MinBackoff)
	}
	name := o.Platform.Name()
	if !validConvPart(name) {
		return nil, fmt.Errorf("chat: platform name %q", name)
	}
	return &Core{
		o: o, p: o.Platform, name: name, caps: o.Platform.Caps(), acc: o.Access,
		log:    o.Logger.With("component", "chat", "platform", name),
		resync: make(chan struct{}, 1), settle: make(chan chan struct{}),
		forms: map[formKey]*formRun{}, gaveUp: map[string]bool{},
	}, nil
}

// SetAccess replaces who may do what (a reloaded config): it holds from
// the next event on.
func (c *Core) SetAccess(a Access) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acc = a
}

// access returns who may do what in chat.
func (c *Core) access(chat string) Rights {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acc.in(chat)
}

// Surface implements owner.AnswerChannel: the platform's name.
func (c *Core) Surface() string { return c.name }

// Status returns the connection's state.
func (c *Core) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

func (c *Core) setStatus(connected bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if connected != c.status.Connected {
		c.status.Since = c.o.Now()
	}
	c.status.Connected = connected
	if connected {
		c.status.Connections++
	}
	if err != nil {
		c.status.Err = err.Error()
	}
}

// Run connects to the platform and serves it until ctx ends,
// reconnecting with backoff; it returns once everything it started has
// stopped.
func (c *Core) Run(ctx context.Context) error {
	c.runMu.Lock()
	if c.run != nil {
		c.runMu.Unlock()
		return errors.New("chat: Run called twice")
	}
	c.run = ctx
	c.runMu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { c.syncLoop(ctx) })
	c.connectLoop(ctx)
	wg.Wait()
	c.work.Wait()
	return nil
}

// connectLoop keeps a connection up until ctx ends.
func (c *Core) connectLoop(ctx context.Context) {
	wait := c.o.MinBackoff
	for {
		before := c.Status().Connections
		err := c.p.Connect(ctx, c)
		if ctx.Err() != nil {
			c.setStatus(false, nil)
			return
		}
		if err == nil {
			err = errors.New("connection closed")
		}
		c.setStatus(false, err)
		if c.Status().Connections > before {
			wait = c.o.MinBackoff // it was up: start over
		}
		// Full jitter in [wait/2, wait], so many hosts do not reconnect in
		// step.
		d := wait/2 + rand.N(wait/2+1)
		c.log.WarnContext(ctx, "connection lost; reconnecting", "err", err, "in", d.Round(time.Millisecond))
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(wait*2, c.o.MaxBackoff)
	}
}

// Connected implements Handler: repair what the outage left behind.
func (c *Core) Connected(ctx context.Context) {
	c.setStatus(true, nil)
	c.log.InfoContext(ctx, "connected")
	c.kick()
}

// kick asks the sync loop to reconcile soon.
func (c *Core) kick() {
	select {
	case c.resync <- struct{}{}:
	default:
	}
}

// maxActive bounds the commands and agent messages one platform runs at
// once: each may wait for a human for the whole approval timeout.
const maxActive = 64

// background runs f on the Core's own context, not the event's; false
// when too many runs are in flight (or the Core is stopping).
func (c *Core) background(f func(ctx context.Context)) bool {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	ctx := c.run
	if ctx == nil || ctx.Err() != nil || c.active >= maxActive {
		return false
	}
	c.active++
	c.work.Go(func() {
		defer func() {
			c.runMu.Lock()
			c.active--
			c.runMu.Unlock()
		}()
		f(ctx)
	})
	return true
}

// identity is u as the platform proved them.
func (c *Core) identity(u User) surface.Identity {
	return surface.Identity{Surface: c.name, User: u.ID, Name: u.Name}
}

// ownerOf is the owner of u's message in conv: gateway:PLATFORM/CHAT/USER
// with the conversation's session key, answered on this Core.
func (c *Core) ownerOf(conv Conv, u User) (owner.Owner, error) {
	o, err := owner.Gateway(c.name, conv.Chat, u.ID)
	if err == nil {
		o, err = o.WithSession(SessionKey(c.name, conv))
	}
	if err == nil {
		o, err = o.WithChannel(c)
	}
	if err != nil {
		return owner.Owner{}, fmt.Errorf("owner of %s: %w", SessionKey(c.name, conv), err)
	}
	return o, nil
}

// convOf returns where request r belongs on this platform: its session
// key must be this platform's, and a gateway owner of this platform and
// chat must be in its lineage. Anything else — another platform's
// request, a console session whose key only looks like a chat's — is not
// this Core's to show (invariant 4).
func (c *Core) convOf(r store.Request) (Conv, bool) {
	conv, ok := ParseSessionKey(c.name, r.Session)
	if !ok {
		return Conv{}, false
	}
	o, err := owner.Parse(r.OwnerText)
	if err != nil {
		return Conv{}, false
	}
	for _, x := range o.Lineage() {
		if x.Kind() == owner.KindGateway && x.Platform() == c.name && x.Chat() == conv.Chat {
			return conv, true
		}
	}
	return Conv{}, false
}
