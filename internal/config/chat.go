package config

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Chat defaults.
const (
	// DefaultNotifyAfter is how long a request waits before it is
	// pushed to the notifiers.
	DefaultNotifyAfter = 30 * time.Second
	// DefaultNotifyAttempts bounds deliveries of one notification.
	DefaultNotifyAttempts = 5
)

// Chat is the chat: section: the chat surfaces (Discord, Slack,
// Telegram) the host serves, and the notifiers for requests nobody
// answers.
type Chat struct {
	Discord, Slack, Telegram ChatPlatform
	Notify                   Notify
}

// Enabled lists the enabled platforms' names.
func (c Chat) Enabled() []string {
	var out []string
	for _, p := range []struct {
		name string
		p    ChatPlatform
	}{{"discord", c.Discord}, {"slack", c.Slack}, {"telegram", c.Telegram}} {
		if p.p.Enabled {
			out = append(out, p.name)
		}
	}
	return out
}

// ChatPlatform is one platform's settings.
type ChatPlatform struct {
	Enabled bool
	// Token is the bot's token, by reference: never written in the
	// file. AppToken is Slack's app-level token (Socket Mode).
	Token, AppToken SecretRef
	// APIURL points the client at another API address (a local Bot API
	// server, a REST proxy); "" is the platform's own.
	APIURL string
	// Approvers may answer once or for the session; Admins also always
	// and /yolo; Users may talk to the agent (empty: the approvers and
	// admins).
	Approvers, Admins, Users Allowlist
	// Chats override the lists in single chats (channel or chat ids).
	Chats []ChatOverride
}

// SecretRef names where a secret is: an environment variable of the
// host, or a file. Exactly one is set when the secret is required.
type SecretRef struct {
	Env, File string
}

// Set reports whether the reference names anything.
func (s SecretRef) Set() bool { return s.Env != "" || s.File != "" }

// String describes the reference (never the secret).
func (s SecretRef) String() string {
	switch {
	case s.Env != "":
		return "$" + s.Env
	case s.File != "":
		return s.File
	}
	return "(none)"
}

// Allowlist is platform user ids and role ids (roles: Discord only).
type Allowlist struct {
	Users, Roles []string
}

// Empty reports whether the list allows nobody.
func (a Allowlist) Empty() bool { return len(a.Users) == 0 && len(a.Roles) == 0 }

// ChatOverride replaces a platform's lists in one chat; a nil list
// keeps the platform's.
type ChatOverride struct {
	ID                       string
	Approvers, Admins, Users *Allowlist
}

// Notify is chat.notify: pushes for requests still pending after After.
type Notify struct {
	After   time.Duration
	Webhook *WebhookNotify
	Ntfy    *NtfyNotify
}

// WebhookNotify posts each pending request as JSON, signed with
// HMAC-SHA256 under Secret.
type WebhookNotify struct {
	URL      string
	Secret   SecretRef
	Attempts int
}

// NtfyNotify publishes to an ntfy topic URL.
type NtfyNotify struct {
	URL      string
	Token    SecretRef // optional access token
	Priority string
}

type rawChat struct {
	Discord  *rawChatPlatform `yaml:"discord"`
	Slack    *rawChatPlatform `yaml:"slack"`
	Telegram *rawChatPlatform `yaml:"telegram"`
	Notify   *rawNotify       `yaml:"notify"`
}

type rawChatPlatform struct {
	Enabled      node `yaml:"enabled"`
	Token        node `yaml:"token"`
	TokenEnv     node `yaml:"token_env"`
	TokenFile    node `yaml:"token_file"`
	AppToken     node `yaml:"app_token"`
	AppTokenEnv  node `yaml:"app_token_env"`
	AppTokenFile node `yaml:"app_token_file"`
	APIURL       node `yaml:"api_url"`
	Approvers    node `yaml:"approvers"`
	Admins       node `yaml:"admins"`
	Users        node `yaml:"users"`
	Chats        node `yaml:"chats"`
}

type rawAllowlist struct {
	Users node `yaml:"users"`
	Roles node `yaml:"roles"`
}

type rawOverride struct {
	Approvers node `yaml:"approvers"`
	Admins    node `yaml:"admins"`
	Users     node `yaml:"users"`
}

type rawNotify struct {
	After   node `yaml:"after"`
	Webhook *struct {
		URL        node `yaml:"url"`
		Secret     node `yaml:"secret"`
		SecretEnv  node `yaml:"secret_env"`
		SecretFile node `yaml:"secret_file"`
		Attempts   node `yaml:"attempts"`
	} `yaml:"webhook"`
	Ntfy *struct {
		URL       node `yaml:"url"`
		Token     node `yaml:"token"`
		TokenEnv  node `yaml:"token_env"`
		TokenFile node `yaml:"token_file"`
		Priority  node `yaml:"priority"`
	} `yaml:"ntfy"`
}

// envName is a variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (v *validator) chat(r *rawChat) Chat {
	c := Chat{Notify: Notify{After: DefaultNotifyAfter}}
	if r == nil {
		return c
	}
	c.Discord = v.chatPlatform(r.Discord, "discord")
	c.Slack = v.chatPlatform(r.Slack, "slack")
	c.Telegram = v.chatPlatform(r.Telegram, "telegram")
	c.Notify = v.notify(r.Notify)
	return c
}

func (v *validator) chatPlatform(r *rawChatPlatform, name string) ChatPlatform {
	var p ChatPlatform
	if r == nil {
		return p
	}
	key := "chat." + name
	v.boolean(r.Enabled.n, key+".enabled", &p.Enabled)
	p.Token = v.secretRef(key, "token", r.Token.n, r.TokenEnv.n, r.TokenFile.n)
	if name == "slack" {
		p.AppToken = v.secretRef(key, "app_token", r.AppToken.n, r.AppTokenEnv.n, r.AppTokenFile.n)
	} else {
		for _, n := range []ast.Node{r.AppToken.n, r.AppTokenEnv.n, r.AppTokenFile.n} {
			if n != nil {
				v.errorf(n, "%s: app tokens are Slack's; %s has none", key, name)
			}
		}
	}
	if r.APIURL.n != nil {
		if s, ok := v.str(r.APIURL.n, key+".api_url"); ok {
			u, err := url.Parse(strings.ReplaceAll(s, "%s", "x"))
			switch {
			case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
				v.errorf(r.APIURL.n, "%s.api_url: %q: want an http(s) URL", key, s)
			case name == "telegram" && strings.Count(s, "%s") != 2:
				v.errorf(r.APIURL.n, "%s.api_url: %q: want the Bot API method pattern with %%s for the token and the method, like https://api.telegram.org/bot%%s/%%s", key, s)
			default:
				p.APIURL = s
			}
		}
	}
	roles := name == "discord"
	p.Approvers = v.idList(r.Approvers.n, key+".approvers", roles)
	p.Admins = v.idList(r.Admins.n, key+".admins", roles)
	p.Users = v.idList(r.Users.n, key+".users", roles)
	p.Chats = v.overrides(r.Chats.n, key+".chats", roles)
	if p.Enabled {
		if !p.Token.Set() {
			v.errorf(r.Enabled.n, "%s: enabled without a token; set token_env (a variable of the host) or token_file", key)
		}
		if name == "slack" && !p.AppToken.Set() {
			v.errorf(r.Enabled.n, "%s: enabled without an app token (xapp-…, for Socket Mode); set app_token_env or app_token_file", key)
		}
		nobody := p.Approvers.Empty() && p.Admins.Empty()
		for _, o := range p.Chats {
			if (o.Approvers != nil && !o.Approvers.Empty()) || (o.Admins != nil && !o.Admins.Empty()) {
				nobody = false
			}
		}
		if nobody {
			v.warnf(r.Enabled.n, key, "no approvers or admins: nobody can answer in %s, so its requests can only expire (denied)", name)
		}
	}
	return p
}

// secretRef reads name_env / name_file; a secret written inline is an
// error that says where to put it instead.
func (v *validator) secretRef(key, name string, inline, env, file ast.Node) SecretRef {
	var s SecretRef
	if inline != nil {
		v.errorf(inline, "%s.%s: secrets are never written in the config file; use %s_env (the name of a variable of the host) or %s_file (a file holding it)", key, name, name, name)
	}

	if env != nil {
		if e, ok := v.str(env, key+"."+name+"_env"); ok {
			if !envName.MatchString(e) {
				v.errorf(env, "%s.%s_env: want the name of a variable (like DISCORD_BOT_TOKEN), not its value", key, name)
			} else {
				s.Env = e
			}
		}
	}
	if file != nil {
		if f, ok := v.str(file, key+"."+name+"_file"); ok {
			if !strings.HasPrefix(f, "/") && !strings.HasPrefix(f, "~/") {
				v.errorf(file, "%s.%s_file: %q: want an absolute path or one starting with ~/", key, name, f)
			} else {
				s.File = f
			}
		}
	}
	if s.Env != "" && s.File != "" {
		v.errorf(file, "%s: %s_env and %s_file both set; want one", key, name, name)
	}
	return s
}

// idList reads {users: [...], roles: [...]}.
func (v *validator) idList(n ast.Node, key string, roles bool) Allowlist {
	var a Allowlist
	var raw rawAllowlist
	if !v.mapping(n, key, &raw, "users and roles") {
		return a
	}
	a.Users = v.ids(raw.Users.n, key+".users")
	if raw.Roles.n != nil && !roles {
		v.errorf(raw.Roles.n, "%s.roles: only Discord has roles; list users", key)
	} else {
		a.Roles = v.ids(raw.Roles.n, key+".roles")
	}
	return a
}

// mapping decodes a mapping node into raw strictly; it reports false,
// and nothing more, when n is nil (the key is absent).
func (v *validator) mapping(n ast.Node, key string, raw any, want string) bool {
	if _, ok := v.mappingNode(n, key, "a mapping with "+want); !ok {
		return false
	}
	if err := yaml.NodeToValue(n, raw, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		v.errorf(n, "%s: %s", key, msg)
		return false
	}
	return true
}

// ids reads a list of platform ids: strings, or whole numbers (Telegram
// and Discord ids are numbers; written unquoted they are read exactly).
func (v *validator) ids(n ast.Node, key string) []string {
	seq, ok := v.sequence(n, key, "a list of ids")
	if !ok {
		return nil
	}
	var out []string
	for i, e := range seq.Values {
		if s, ok := scalarString(e); ok && strings.TrimSpace(s) != "" && !strings.ContainsAny(s, " \t:|") {
			out = append(out, s)
			continue
		}
		if x, ok := unwrap(e).(*ast.IntegerNode); ok {
			switch n := x.Value.(type) {
			case int64:
				out = append(out, strconv.FormatInt(n, 10))
				continue
			case uint64:
				out = append(out, strconv.FormatUint(n, 10))
				continue
			}
		}
		v.errorf(e, "%s[%d]: want a user or role id (quote it), got %s", key, i, describe(e))
	}
	return out
}

// overrides reads chats: a mapping from chat id to lists.
func (v *validator) overrides(n ast.Node, key string, roles bool) []ChatOverride {
	m, ok := v.mappingNode(n, key, "a mapping from chat id to {approvers, admins, users}")
	if !ok {
		return nil
	}
	var out []ChatOverride
	seen := map[string]bool{}
	for _, mv := range m.Values {
		id := ""
		if s, ok := scalarString(mv.Key); ok {
			id = s
		} else if x, ok := unwrap(mv.Key).(*ast.IntegerNode); ok {
			id = x.GetToken().Value
		}
		if strings.TrimSpace(id) == "" || strings.ContainsAny(id, " \t:|") || seen[id] {
			v.errorf(mv.Key, "%s: chat id %s empty, malformed or repeated", key, describe(mv.Key))
			continue
		}
		seen[id] = true
		k := key + "." + id
		var raw rawOverride
		if !v.mapping(mv.Value, k, &raw, "approvers, admins or users") {
			continue
		}
		o := ChatOverride{ID: id}
		list := func(n ast.Node, name string) *Allowlist {
			if n == nil {
				return nil
			}
			a := v.idList(n, k+"."+name, roles)
			return &a
		}
		o.Approvers, o.Admins, o.Users = list(raw.Approvers.n, "approvers"), list(raw.Admins.n, "admins"), list(raw.Users.n, "users")
		out = append(out, o)
	}
	return out
}

func (v *validator) notify(r *rawNotify) Notify {
	n := Notify{After: DefaultNotifyAfter}
	if r == nil {
		return n
	}
	if r.After.n != nil {
		if i, ok := intValue(r.After.n); ok && i == 0 {
			n.After = -1 // at once
		} else {
			n.After = v.seconds(r.After.n, "chat.notify.after", DefaultNotifyAfter, 24*3600)
		}
	}
	httpURL := func(node ast.Node, key string) string {
		if node == nil {
			v.errorf(nil, "%s: missing url", key)
			return ""
		}
		s, ok := v.str(node, key+".url")
		if !ok {
			return ""
		}
		u, err := url.Parse(s)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			v.errorf(node, "%s.url: %q: want an http(s) URL without credentials in it", key, s)
			return ""
		}
		return s
	}
	if w := r.Webhook; w != nil {
		const key = "chat.notify.webhook"
		wh := &WebhookNotify{URL: httpURL(w.URL.n, key), Secret: v.secretRef(key, "secret", w.Secret.n, w.SecretEnv.n, w.SecretFile.n), Attempts: DefaultNotifyAttempts}
		if !wh.Secret.Set() {
			v.errorf(w.URL.n, "%s: a signing secret is required: set secret_env or secret_file", key)
		}
		wh.Attempts = v.count(w.Attempts.n, key+".attempts", DefaultNotifyAttempts, 20)
		n.Webhook = wh
	}
	if t := r.Ntfy; t != nil {
		const key = "chat.notify.ntfy"
		nt := &NtfyNotify{URL: httpURL(t.URL.n, key), Token: v.secretRef(key, "token", t.Token.n, t.TokenEnv.n, t.TokenFile.n)}
		if t.Priority.n != nil {
			if s, ok := v.str(t.Priority.n, key+".priority"); ok {
				switch s {
				case "min", "low", "default", "high", "max", "urgent", "1", "2", "3", "4", "5":
					nt.Priority = s
				default:
					v.errorf(t.Priority.n, "%s.priority: %q: want min, low, default, high or max", key, s)
				}
			}
		}
		n.Ntfy = nt
	}
	return n
}

// mask blanks a node's text in the parsed source, so no error excerpt
// (which prints the lines around a problem) can show a secret written
// where it does not belong.
func mask(n ast.Node) {
	if n == nil {
		return
	}
	if t := n.GetToken(); t != nil {
		t.Value, t.Origin = "<redacted>", " <redacted>"
	}
}

// maskEnv masks an *_env value that is not a variable's name: it is
// likely the secret itself.
func maskEnv(n ast.Node) {
	if e, ok := scalarString(n); ok && !envName.MatchString(e) {
		mask(n)
	}
}

// maskSecrets blanks every secret written inline in the chat: section
// (and every *_env holding a value rather than a name) before anything
// is reported.
func maskSecrets(r *rawChat) {
	if r == nil {
		return
	}
	for _, p := range []*rawChatPlatform{r.Discord, r.Slack, r.Telegram} {
		if p != nil {
			mask(p.Token.n)
			mask(p.AppToken.n)
			maskEnv(p.TokenEnv.n)
			maskEnv(p.AppTokenEnv.n)
		}
	}
	if n := r.Notify; n != nil {
		if n.Webhook != nil {
			mask(n.Webhook.Secret.n)
			maskEnv(n.Webhook.SecretEnv.n)
		}
		if n.Ntfy != nil {
			mask(n.Ntfy.Token.n)
			maskEnv(n.Ntfy.TokenEnv.n)
		}
	}
}
