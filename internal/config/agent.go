package config

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Agent defaults.
const (
	// DefaultLLMTimeout bounds one model request.
	DefaultLLMTimeout = 120 * time.Second
	// DefaultLLMRetries is how often a 429 or 5xx reply is retried.
	DefaultLLMRetries = 2
	// DefaultMaxTurns caps the model calls of one agent run.
	DefaultMaxTurns = 20
	// DefaultGuardianTimeout bounds one guardian review.
	DefaultGuardianTimeout = 30 * time.Second
	// DefaultGuardianMaxTokens is the guardian's completion budget: large
	// enough that a reasoning model does not spend it all thinking (the
	// reference system's 16 tokens escalated everything on such models).
	DefaultGuardianMaxTokens = 2048
	// DefaultSmartFailureThreshold is how many consecutive guardian
	// failures put a session in manual mode.
	DefaultSmartFailureThreshold = 3
)

// LLM is the llm: section: the OpenAI-compatible model the agents and
// the guardian use. Without base_url and model there is no model: the
// agent features say how to configure one and everything else works.
type LLM struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1/" or a
	// local server's "http://127.0.0.1:11434/v1/".
	BaseURL string
	// Model is the model name sent with every request.
	Model string
	// APIKeyEnv names the environment variable holding the API key. The
	// CLI reads it once at start; "" sends no key (local servers).
	APIKeyEnv string
	// Timeout bounds one request; MaxRetries is how often 429 and 5xx
	// replies are retried with backoff.
	Timeout    time.Duration
	MaxRetries int
	// MaxTurns caps the model calls of one agent run.
	MaxTurns int
	// GuardianModel is the guardian's model (Model if empty);
	// GuardianTimeout and GuardianMaxTokens bound one review.
	GuardianModel     string
	GuardianTimeout   time.Duration
	GuardianMaxTokens int
}

// Configured reports whether a model is configured.
func (l LLM) Configured() bool { return l.BaseURL != "" && l.Model != "" }

// MCPServer is one entry of mcp.servers: an MCP server whose tools the
// agents may call, each call decided by the gate as an mcp action.
type MCPServer struct {
	// Name is the server's key; its tools are offered as name__tool.
	Name string
	// Command is the stdio server's argv; URL a streamable HTTP
	// endpoint. Exactly one is set.
	Command []string
	URL     string
	// Env names variables passed to a stdio server beyond execenv's
	// allowlist (credentials it needs).
	Env []string
}

// serverName: tools are offered as NAME__TOOL, so a name may not hold
// "__" nor end in "_" (which would make the split ambiguous).
var serverName = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,46}[A-Za-z0-9-])?$`)

type rawLLM struct {
	BaseURL           node `yaml:"base_url"`
	Model             node `yaml:"model"`
	APIKeyEnv         node `yaml:"api_key_env"`
	Timeout           node `yaml:"timeout"`
	MaxRetries        node `yaml:"max_retries"`
	MaxTurns          node `yaml:"max_turns"`
	GuardianModel     node `yaml:"guardian_model"`
	GuardianTimeout   node `yaml:"guardian_timeout"`
	GuardianMaxTokens node `yaml:"guardian_max_tokens"`
}

type rawMCPServer struct {
	Command node `yaml:"command"`
	URL     node `yaml:"url"`
	Env     node `yaml:"env"`
}

func defaultLLM() LLM {
	return LLM{
		Timeout: DefaultLLMTimeout, MaxRetries: DefaultLLMRetries, MaxTurns: DefaultMaxTurns,
		GuardianTimeout: DefaultGuardianTimeout, GuardianMaxTokens: DefaultGuardianMaxTokens,
	}
}

func (v *validator) llm(r *rawLLM) LLM {
	l := defaultLLM()
	if r == nil {
		return l
	}
	if r.BaseURL.n != nil {
		if s, ok := v.str(r.BaseURL.n, "llm.base_url"); ok {
			u, err := url.Parse(s)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				v.errorf(r.BaseURL.n, "llm.base_url: %q: want an http(s) URL such as https://api.openai.com/v1/", s)
			} else {
				if !strings.HasSuffix(s, "/") {
					s += "/"
				}
				l.BaseURL = s
			}
		}
	}
	if r.Model.n != nil {
		if s, ok := v.str(r.Model.n, "llm.model"); ok {
			l.Model = strings.TrimSpace(s)
		}
	}
	if r.GuardianModel.n != nil {
		if s, ok := v.str(r.GuardianModel.n, "llm.guardian_model"); ok {
			l.GuardianModel = strings.TrimSpace(s)
		}
	}
	if r.APIKeyEnv.n != nil {
		if s, ok := v.str(r.APIKeyEnv.n, "llm.api_key_env"); ok {
			// "" is allowed and means no key (a local server), as
			// documented; a value that looks like a key is refused.
			if strings.ContainsAny(s, "= \t$") {
				v.errorf(r.APIKeyEnv.n, "llm.api_key_env: %q: want the name of a variable (OPENAI_API_KEY), not its value", s)
			} else {
				l.APIKeyEnv = s
			}
		}
	}
	l.Timeout = v.seconds(r.Timeout.n, "llm.timeout", DefaultLLMTimeout, 3600)
	l.GuardianTimeout = v.seconds(r.GuardianTimeout.n, "llm.guardian_timeout", DefaultGuardianTimeout, 600)
	if r.MaxRetries.n != nil {
		if i, ok := intValue(r.MaxRetries.n); !ok || i < 0 || i > 10 {
			v.errorf(r.MaxRetries.n, "llm.max_retries: want a whole number from 0 to 10, got %s", describe(r.MaxRetries.n))
		} else {
			l.MaxRetries = int(i)
		}
	}
	l.MaxTurns = v.count(r.MaxTurns.n, "llm.max_turns", DefaultMaxTurns, 200)
	l.GuardianMaxTokens = v.count(r.GuardianMaxTokens.n, "llm.guardian_max_tokens", DefaultGuardianMaxTokens, 1<<20)
	if l.Model == "" && l.BaseURL != "" {
		v.errorf(r.BaseURL.n, "llm: base_url without model; set llm.model")
	}
	if l.Model != "" && r.BaseURL.n == nil {
		v.errorf(r.Model.n, "llm: model without base_url; set llm.base_url")
	}
	return l
}

// seconds reads a whole number of seconds (or a Go duration string such
// as "90s" or "2m").
func (v *validator) seconds(n ast.Node, key string, def time.Duration, maxSecs int64) time.Duration {
	if n == nil {
		return def
	}
	if i, ok := intValue(n); ok && i >= 1 && i <= maxSecs {
		return time.Duration(i) * time.Second
	}
	if s, ok := scalarString(n); ok {
		if d, err := time.ParseDuration(s); err == nil && d >= time.Second && d <= time.Duration(maxSecs)*time.Second {
			return d
		}
	}
	v.errorf(n, "%s: want seconds from 1 to %d (or a duration like \"90s\"), got %s", key, maxSecs, describe(n))
	return def
}

// mcpServers reads mcp.servers, a mapping from name to server.
func (v *validator) mcpServers(n ast.Node) []MCPServer {
	const key = "mcp.servers"
	m, ok := v.mappingNode(n, key, "a mapping from server name to {command | url}")
	if !ok {
		return nil
	}
	var out []MCPServer
	for _, mv := range m.Values {
		name, isStr := scalarString(mv.Key)
		if !isStr || !serverName.MatchString(name) || strings.Contains(name, "__") {
			v.errorf(mv.Key, "%s: server name %s: want letters, digits, - and _ (no \"__\", not ending in _), at most 48", key, describe(mv.Key))
			continue
		}
		k := key + "." + name
		if _, isMap := unwrap(mv.Value).(*ast.MappingNode); !isMap {
			if _, single := unwrap(mv.Value).(*ast.MappingValueNode); !single {
				v.errorf(mv.Value, "%s: want a mapping with command or url, got %s", k, describe(mv.Value))
				continue
			}
		}
		var raw rawMCPServer
		if err := yaml.NodeToValue(mv.Value, &raw, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
			msg, _, _ := strings.Cut(err.Error(), "\n")
			v.errorf(mv.Value, "%s: %s", k, msg)
			continue
		}
		s := MCPServer{Name: name}
		for _, it := range v.stringList(raw.Command.n, k+".command") {
			s.Command = append(s.Command, it.s)
		}
		if raw.URL.n != nil {
			if u, ok := v.str(raw.URL.n, k+".url"); ok {
				pu, err := url.Parse(u)
				if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
					v.errorf(raw.URL.n, "%s.url: %q: want an http(s) URL", k, u)
				} else {
					s.URL = u
				}
			}
		}
		for _, it := range v.stringList(raw.Env.n, k+".env") {
			if strings.ContainsAny(it.s, "= \t*") || strings.HasPrefix(it.s, "WARDEN_") {
				v.errorf(it.n, "%s.env: %q: want a variable name (not WARDEN_*)", k, it.s)
				continue
			}
			s.Env = append(s.Env, it.s)
		}
		switch {
		case len(s.Command) == 0 && s.URL == "":
			v.errorf(mv.Value, "%s: want command (a stdio server's argv) or url (streamable HTTP)", k)
			continue
		case len(s.Command) > 0 && s.URL != "":
			v.errorf(mv.Value, "%s: command and url both set; want one", k)
			continue
		}
		if slices.ContainsFunc(out, func(o MCPServer) bool { return o.Name == name }) {
			v.errorf(mv.Key, "%s: duplicate server %q", key, name)
			continue
		}
		out = append(out, s)
	}
	return out
}

// smartThreshold reads approvals.smart_failure_threshold.
func (v *validator) smartThreshold(n ast.Node) int {
	if n == nil {
		return DefaultSmartFailureThreshold
	}
	i, ok := intValue(n)
	if !ok || i < 1 || i > 1000 {
		v.errorf(n, "approvals.smart_failure_threshold: want a whole number from 1 to 1000, got %s", describe(n))
		return DefaultSmartFailureThreshold
	}
	return int(i)
}
