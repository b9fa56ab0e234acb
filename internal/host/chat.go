package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/surface"
	"github.com/wardenhq/warden/internal/surface/chat"
	"github.com/wardenhq/warden/internal/surface/discord"
	"github.com/wardenhq/warden/internal/surface/notify"
	"github.com/wardenhq/warden/internal/surface/slack"
	"github.com/wardenhq/warden/internal/surface/telegram"
)

// maxSecret bounds a token file.
const maxSecret = 4 << 10

// ErrSecret: a chat token or notifier secret could not be read from
// where the config says it is.
var ErrSecret = errors.New("secret not available")

// readSecret reads a secret by reference: a variable of the host's
// environment (as the CLI passed it in), or a file (~ is home). The
// value is never logged; errors name the reference only.
func readSecret(ref config.SecretRef, environ []string, home string) (string, error) {
	switch {
	case ref.Env != "":
		v, ok := lookupEnv(environ, ref.Env)
		v = strings.TrimSpace(v)
		if !ok || v == "" {
			return "", fmt.Errorf("%w: variable %s is not set in warden's environment", ErrSecret, ref.Env)
		}
		return v, nil
	case ref.File != "":
		p := ref.File
		if rest, ok := strings.CutPrefix(p, "~/"); ok {
			if home == "" {
				return "", fmt.Errorf("%w: %s: no home directory to expand ~", ErrSecret, p)
			}
			p = filepath.Join(home, rest)
		}
		f, err := os.Open(p)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrSecret, err)
		}
		defer f.Close()
		b, err := io.ReadAll(io.LimitReader(f, maxSecret+1))
		if err != nil {
			return "", fmt.Errorf("%w: read %s: %v", ErrSecret, p, err)
		}
		if len(b) > maxSecret {
			return "", fmt.Errorf("%w: %s is larger than %d bytes", ErrSecret, p, maxSecret)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("%w: %s is empty", ErrSecret, p)
		}
		return v, nil
	}
	return "", fmt.Errorf("%w: no reference", ErrSecret)
}

// secretFileMode warns about a token file others can read.
func secretFileMode(ref config.SecretRef, home string) string {
	if ref.File == "" {
		return ""
	}
	p := ref.File
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		p = filepath.Join(home, rest)
	}
	st, err := os.Stat(p)
	if err == nil && st.Mode().Perm()&0o077 != 0 {
		return fmt.Sprintf("%s is readable by others (mode %04o); chmod 600 it", ref.File, st.Mode().Perm())
	}
	return ""
}

// accessOf turns a platform's allowlists into the core's.
func accessOf(p config.ChatPlatform) chat.Access {
	allow := func(a config.Allowlist) chat.Allow { return chat.Allow{Users: a.Users, Roles: a.Roles} }
	ptr := func(a *config.Allowlist) *chat.Allow {
		if a == nil {
			return nil
		}
		x := allow(*a)
		return &x
	}
	acc := chat.Access{Rights: chat.Rights{Approvers: allow(p.Approvers), Admins: allow(p.Admins), Users: allow(p.Users)}}
	if len(p.Chats) > 0 {
		acc.Chats = map[string]chat.ChatRights{}
		for _, o := range p.Chats {
			acc.Chats[o.ID] = chat.ChatRights{Approvers: ptr(o.Approvers), Admins: ptr(o.Admins), Users: ptr(o.Users)}
		}
	}
	return acc
}

// chats are the chat surfaces and notifiers the host runs.
type chats struct {
	cores    []*chat.Core
	notifier *notify.Notifier
	// lines are serve's start-up lines about them.
	lines []string
	wg    sync.WaitGroup
	stop  context.CancelFunc
}

// chatDeps are what the chat surfaces are built on.
type chatDeps struct {
	cfg     config.Chat
	environ []string
	// passthrough is tools.env_passthrough: a token variable there would
	// reach every command the agents run.
	passthrough []string
	home        string
	host        surface.Host
	posts       store.ChatPosts
	logger      *slog.Logger
}

// newChats builds the enabled platforms' adapters and cores, and the
// notifiers. A token that cannot be read stops the start: a surface
// configured but silently absent would leave its humans unasked.
func newChats(d chatDeps) (*chats, error) {
	c := &chats{}
	type platform struct {
		name string
		p    config.ChatPlatform
		make func(token, app string) (chat.Platform, error)
	}
	platforms := []platform{
		{"discord", d.cfg.Discord, func(tok, _ string) (chat.Platform, error) {
			return discord.New(discord.Options{Token: tok, APIBase: d.cfg.Discord.APIURL, Logger: d.logger})
		}},
		{"slack", d.cfg.Slack, func(tok, app string) (chat.Platform, error) {
			return slack.New(slack.Options{BotToken: tok, AppToken: app, APIURL: d.cfg.Slack.APIURL, Logger: d.logger})
		}},
		{"telegram", d.cfg.Telegram, func(tok, _ string) (chat.Platform, error) {
			return telegram.New(telegram.Options{Token: tok, Endpoint: d.cfg.Telegram.APIURL, Logger: d.logger})
		}},
	}
	for _, pl := range platforms {
		if !pl.p.Enabled {
			continue
		}
		for _, ref := range []config.SecretRef{pl.p.Token, pl.p.AppToken} {
			if ref.Env != "" && slices.Contains(d.passthrough, ref.Env) {
				return nil, fmt.Errorf("chat.%s: its token variable %s is in tools.env_passthrough, so every command the agents run could read it; remove it there", pl.name, ref.Env)
			}
		}
		tok, err := readSecret(pl.p.Token, d.environ, d.home)
		if err != nil {
			return nil, fmt.Errorf("chat.%s token (%s): %w", pl.name, pl.p.Token, err)
		}
		app := ""
		if pl.name == "slack" {
			if app, err = readSecret(pl.p.AppToken, d.environ, d.home); err != nil {
				return nil, fmt.Errorf("chat.%s app token (%s): %w", pl.name, pl.p.AppToken, err)
			}
		}
		ad, err := pl.make(tok, app)
		if err != nil {
			return nil, fmt.Errorf("chat.%s: %w", pl.name, err)
		}
		acc := accessOf(pl.p)
		core, err := chat.New(chat.Options{Platform: ad, Host: d.host, Posts: d.posts, Access: acc, Logger: d.logger})
		if err != nil {
			return nil, err
		}
		c.cores = append(c.cores, core)
		line := fmt.Sprintf("%s (token %s; %s)", pl.name, pl.p.Token, describeAccess(pl.p))
		if acc.Nobody() {
			line += "; warning: no approvers, so its requests can only expire"
		}
		if w := secretFileMode(pl.p.Token, d.home); w != "" {
			line += "; warning: " + w
		}
		c.lines = append(c.lines, line)
	}
	var sinks []notify.Sink
	n := d.cfg.Notify
	if w := n.Webhook; w != nil {
		secret, err := readSecret(w.Secret, d.environ, d.home)
		if err != nil {
			return nil, fmt.Errorf("chat.notify.webhook secret (%s): %w", w.Secret, err)
		}
		sinks = append(sinks, notify.Webhook{URL: w.URL, Secret: []byte(secret)})
		c.lines = append(c.lines, "notify: signed webhook to "+hostOf(w.URL))
	}
	if t := n.Ntfy; t != nil {
		tok := ""
		if t.Token.Set() {
			var err error
			if tok, err = readSecret(t.Token, d.environ, d.home); err != nil {
				return nil, fmt.Errorf("chat.notify.ntfy token (%s): %w", t.Token, err)
			}
		}
		sinks = append(sinks, notify.Ntfy{URL: t.URL, Token: tok, Priority: t.Priority})
		c.lines = append(c.lines, "notify: ntfy at "+hostOf(t.URL))
	}
	if len(sinks) > 0 {
		attempts := 0
		if n.Webhook != nil {
			attempts = n.Webhook.Attempts
		}
		c.notifier = notify.New(notify.Options{Host: d.host, Sinks: sinks, After: n.After, Attempts: attempts, Logger: d.logger})
		c.lines[len(c.lines)-1] += fmt.Sprintf(" (requests still pending after %v)", max(n.After, 0))
	}
	return c, nil
}

// hostOf names a URL's host, not its path (which may hold a topic or a
// token).
func hostOf(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	h, _, _ := strings.Cut(s, "/")
	return h
}

// describeAccess counts a platform's allowlists for the start-up line.
func describeAccess(p config.ChatPlatform) string {
	count := func(a config.Allowlist) string {
		s := fmt.Sprintf("%d user(s)", len(a.Users))
		if len(a.Roles) > 0 {
			s += fmt.Sprintf(", %d role(s)", len(a.Roles))
		}
		return s
	}
	s := "approvers " + count(p.Approvers) + ", admins " + count(p.Admins)
	if len(p.Chats) > 0 {
		s += fmt.Sprintf(", %d chat override(s)", len(p.Chats))
	}
	return s
}

// run starts the cores and the notifier; they stop with ctx or stop.
func (c *chats) run(ctx context.Context) {
	ctx, c.stop = context.WithCancel(ctx)
	for _, core := range c.cores {
		c.wg.Go(func() { _ = core.Run(ctx) })
	}
	if c.notifier != nil {
		c.wg.Go(func() { c.notifier.Run(ctx) })
	}
}

// settle lets each core edit the messages of what the host withdrew
// (bounded by ctx), then stops everything and waits.
func (c *chats) settle(ctx context.Context) {
	var wg sync.WaitGroup
	for _, core := range c.cores {
		wg.Go(func() { core.Settle(ctx) })
	}
	wg.Wait()
	if c.stop != nil {
		c.stop()
	}
	c.wg.Wait()
}

// reload gives the cores a reloaded config's allowlists: removing an
// approver holds at once. Tokens and enabled platforms take a restart.
func (c *chats) reload(cfg config.Chat) {
	for _, core := range c.cores {
		switch core.Surface() {
		case "discord":
			core.SetAccess(accessOf(cfg.Discord))
		case "slack":
			core.SetAccess(accessOf(cfg.Slack))
		case "telegram":
			core.SetAccess(accessOf(cfg.Telegram))
		}
	}
}

// ChatCheck is what warden doctor says about one chat platform or
// notifier, from the config alone.
type ChatCheck struct {
	Name    string
	OK      bool
	Warn    bool
	Summary string
}

// ChatChecks checks the chat: section as `warden serve` would use it:
// enabled platforms, tokens readable where the config says (their values
// are never shown), allowlists, and token variables kept from children.
func ChatChecks(cfg *config.Config, environ []string, home string) []ChatCheck {
	var out []ChatCheck
	for _, pl := range []struct {
		name string
		p    config.ChatPlatform
	}{{"discord", cfg.Chat.Discord}, {"slack", cfg.Chat.Slack}, {"telegram", cfg.Chat.Telegram}} {
		if !pl.p.Enabled {
			continue
		}
		c := ChatCheck{Name: "chat." + pl.name, OK: true, Summary: "enabled; " + describeAccess(pl.p)}
		refs := []config.SecretRef{pl.p.Token}
		if pl.name == "slack" {
			refs = append(refs, pl.p.AppToken)
		}
		for _, ref := range refs {
			if _, err := readSecret(ref, environ, home); err != nil {
				c.OK, c.Summary = false, fmt.Sprintf("token %s: %v", ref, err)
			} else if ref.Env != "" && slices.Contains(cfg.Tools.EnvPassthrough, ref.Env) {
				c.OK, c.Summary = false, "token variable "+ref.Env+" is in tools.env_passthrough: every command could read it"
			} else if w := secretFileMode(ref, home); w != "" && c.OK {
				c.Warn, c.Summary = true, c.Summary+"; "+w
			}
		}
		if c.OK && accessOf(pl.p).Nobody() {
			c.Warn, c.Summary = true, c.Summary+"; nobody may answer, so requests there can only expire"
		}
		out = append(out, c)
	}
	return out
}
