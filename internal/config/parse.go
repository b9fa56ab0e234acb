package config

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/wardenhq/warden/internal/policy"
)

// Load reads and parses the file at path. A file that cannot be read
// gives the os error wrapped (errors.Is(err, fs.ErrNotExist) works); a
// file that is not a valid configuration gives errors matching
// ErrInvalid.
//
// An empty or whitespace-only file is refused (ErrEmpty, which also
// matches ErrInvalid): a file truncated by an editor or a failed write
// must not read as "no rules". The defaults are written `{}`.
func Load(path string) (*Config, []Warning, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("load config: %w", err)
	}
	return parseFile(data, path)
}

// parseFile is Parse for the contents of a file: an empty or
// whitespace-only file is an error, not the defaults.
func parseFile(data []byte, name string) (*Config, []Warning, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		e := newError(name, nil, "the file is empty (%d bytes, whitespace only): refused, as a deleted file is; write {} to run with the defaults", len(data))
		e.err = ErrEmpty
		return nil, nil, e
	}
	return Parse(data, name)
}

// readFile reads at most MaxFileSize bytes, so pointing warden at a huge
// or endless file fails fast instead of exhausting memory.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes: %w", path, MaxFileSize, ErrInvalid)
	}
	return data, nil
}

// Parse parses data, naming it name in errors and warnings. Missing keys
// take the values of Default. On error the *Config is nil; every problem
// found is reported (errors.Join of *Error), each matching ErrInvalid.
func Parse(data []byte, name string) (*Config, []Warning, error) {
	if len(data) > MaxFileSize {
		return nil, nil, newError(name, nil, "larger than %d bytes", MaxFileSize)
	}
	f, err := parse(data)
	if err != nil {
		return nil, nil, wrapYAML(name, err)
	}
	if len(f.Docs) > 1 {
		// A second document would be silently ignored by the decoder.
		var tok *token.Token
		if d := f.Docs[1]; d.Start != nil {
			tok = d.Start
		} else if d.Body != nil {
			tok = d.Body.GetToken()
		}
		return nil, nil, newError(name, tok, "found %d YAML documents; want one", len(f.Docs))
	}
	var raw rawConfig
	if err := decode(data, &raw); err != nil {
		return nil, nil, wrapYAML(name, err)
	}
	v := &validator{file: name}
	cfg := v.config(&raw)
	// Report in file order, not in the order keys were checked.
	slices.SortStableFunc(v.errs, func(a, b error) int {
		ea, _ := errors.AsType[*Error](a)
		eb, _ := errors.AsType[*Error](b)
		return cmp.Or(cmp.Compare(ea.Line, eb.Line), cmp.Compare(ea.Column, eb.Column))
	})
	slices.SortStableFunc(v.warns, func(a, b Warning) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
	})
	if len(v.errs) > 0 {
		return nil, v.warns, errors.Join(v.errs...)
	}
	sum := sha256.Sum256(data)
	cfg.Name, cfg.Digest = name, hex.EncodeToString(sum[:])
	return cfg, v.warns, nil
}

// parse and decode run the YAML library, turning a panic inside it into
// an error. The library has panicked on odd input (see rawRules), and a
// watched file must never be able to crash the host that reloads it.
func parse(data []byte) (f *ast.File, err error) {
	defer recoverYAML(&err)
	return parser.ParseBytes(data, 0)
}

func decode(data []byte, raw *rawConfig) (err error) {
	defer recoverYAML(&err)
	return yaml.UnmarshalWithOptions(data, raw, yaml.Strict(), yaml.DisallowUnknownField())
}

func recoverYAML(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("YAML library failed on this input: %v", r)
	}
}

// node captures a YAML value as it was written, with its position, so
// validation can report problems where they are. A null or absent value
// leaves n nil: the key takes its default.
type node struct{ n ast.Node }

// UnmarshalYAML implements yaml.NodeUnmarshaler.
func (n *node) UnmarshalYAML(x ast.Node) error {
	n.n = x
	return nil
}

// The raw* types mirror the file. Nested mappings are structs so the
// decoder rejects unknown keys; leaves are nodes so validation sees
// exactly what was written (a YAML boolean is not the string "off").
type rawConfig struct {
	Approvals        *rawApprovals `yaml:"approvals"`
	CommandAllowlist node          `yaml:"command_allowlist"`
	MCP              *rawMCP       `yaml:"mcp"`
	Write            *rawWrite     `yaml:"write"`
	Tools            *rawTools     `yaml:"tools"`
	Kanban           *rawKanban    `yaml:"kanban"`
	LLM              *rawLLM       `yaml:"llm"`
	Sandbox          *rawSandbox   `yaml:"sandbox"`
	Chat             *rawChat      `yaml:"chat"`
	Hook             *rawHook      `yaml:"hook"`
	Analysis         *rawAnalysis  `yaml:"analysis"`
	Audit            *rawAudit     `yaml:"audit"`
	Store            node          `yaml:"store"`
	Cluster          *rawCluster   `yaml:"cluster"`
	Cron             *rawCron      `yaml:"cron"`
}

type rawCron struct {
	Workers    node `yaml:"workers"`
	RunTimeout node `yaml:"run_timeout"`
}

type rawHook struct {
	AllowSafe node `yaml:"allow_safe"`
}

type rawAnalysis struct {
	Profile node `yaml:"profile"`
}

type rawApprovals struct {
	Mode                   node `yaml:"mode"`
	Timeout                node `yaml:"timeout"`
	CronMode               node `yaml:"cron_mode"`
	KanbanMode             node `yaml:"kanban_mode"`
	SingleQueryMode        node `yaml:"single_query_mode"`
	UnattendedMode         node `yaml:"unattended_mode"`
	Deny                   node `yaml:"deny"`
	DenialBreakerThreshold node `yaml:"denial_breaker_threshold"`

	// Keys of the reference system that warden accepts but ignores, so
	// an existing file still loads; each gives a Warning.
	SmartPolicy             node `yaml:"smart_policy"`
	SmartFailureThreshold   node `yaml:"smart_failure_threshold"`
	MCPReloadConfirm        node `yaml:"mcp_reload_confirm"`
	DestructiveSlashConfirm node `yaml:"destructive_slash_confirm"`
	AuditLog                node `yaml:"audit_log"`
	GatewayTimeout          node `yaml:"gateway_timeout"`
}

type rawMCP struct {
	Rules     rawRules `yaml:"rules"`
	Servers   node     `yaml:"servers"`
	AskClient node     `yaml:"ask_client"`
}

// rawRules decodes mcp.rules itself rather than as a Go slice: the YAML
// library panics on a custom-tagged scalar where it expects a sequence
// (found by FuzzParse), and a shape error is better reported by the
// validator anyway.
type rawRules struct {
	n     ast.Node
	rules []*rawMCPRule // nil entries for null items
}

// UnmarshalYAML implements yaml.NodeUnmarshaler.
func (r *rawRules) UnmarshalYAML(x ast.Node) error {
	r.n = x
	seq, ok := unwrap(x).(*ast.SequenceNode)
	if !ok {
		return nil // the validator reports the shape
	}
	for _, e := range seq.Values {
		if _, null := unwrap(e).(*ast.NullNode); null {
			r.rules = append(r.rules, nil)
			continue
		}
		rule := &rawMCPRule{}
		if err := rule.decode(e); err != nil {
			return err
		}
		r.rules = append(r.rules, rule)
	}
	return nil
}

// rawMCPRule keeps its own node so an incomplete rule can be reported
// where it is.
type rawMCPRule struct {
	n       ast.Node
	mapping bool
	// The tags name the keys decode reads (for the schema's drift test;
	// decode itself reads them through a struct of its own).
	Match  node `yaml:"match"`
	Action node `yaml:"action"`
}

func (r *rawMCPRule) decode(x ast.Node) error {
	r.n = x
	if _, ok := unwrap(x).(*ast.MappingNode); !ok {
		if _, ok := unwrap(x).(*ast.MappingValueNode); !ok {
			return nil // the validator reports the shape
		}
	}
	r.mapping = true
	var f struct {
		Match  node `yaml:"match"`
		Action node `yaml:"action"`
	}
	if err := yaml.NodeToValue(x, &f, yaml.Strict(), yaml.DisallowUnknownField()); err != nil {
		return err
	}
	r.Match, r.Action = f.Match, f.Action
	return nil
}

type rawWrite struct {
	Protected node `yaml:"protected"`
	SafeRoots node `yaml:"safe_roots"`
}

// validator turns raw values into a Config, collecting every error and
// warning rather than stopping at the first.
type validator struct {
	file  string
	errs  []error
	warns []Warning
}

func (v *validator) errorf(n ast.Node, format string, args ...any) {
	var tok *token.Token
	if n != nil {
		tok = n.GetToken()
	}
	v.errs = append(v.errs, newError(v.file, tok, format, args...))
}

func (v *validator) warnf(n ast.Node, key, format string, args ...any) {
	w := Warning{File: v.file, Key: key, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		if tok := n.GetToken(); tok != nil && tok.Position != nil {
			w.Line, w.Column = tok.Position.Line, tok.Position.Column
		}
	}
	v.warns = append(v.warns, w)
}

func (v *validator) config(raw *rawConfig) *Config {
	maskSecrets(raw.Chat)
	cfg := Default()
	if a := raw.Approvals; a != nil {
		ap := &cfg.Approvals
		ap.Mode = v.mode(a.Mode.n)
		ap.Timeout = v.timeout(a.Timeout.n)
		ap.CronMode = v.unattended(a.CronMode.n, "approvals.cron_mode")
		ap.KanbanMode = v.kanbanMode(a.KanbanMode.n)
		ap.SingleQueryMode = v.unattended(a.SingleQueryMode.n, "approvals.single_query_mode")
		ap.UnattendedMode = v.unattended(a.UnattendedMode.n, "approvals.unattended_mode")
		ap.Deny = v.globs(a.Deny.n, "approvals.deny")
		ap.DenialBreakerThreshold = v.threshold(a.DenialBreakerThreshold.n)
		if a.SmartPolicy.n != nil {
			ap.SmartPolicy, _ = v.str(a.SmartPolicy.n, "approvals.smart_policy")
		}
		ap.SmartFailureThreshold = v.smartThreshold(a.SmartFailureThreshold.n)
		v.ignored(a)
	}
	cfg.CommandAllowlist = v.allowlist(raw.CommandAllowlist.n)
	if m := raw.MCP; m != nil && m.Rules.n != nil {
		if _, ok := unwrap(m.Rules.n).(*ast.SequenceNode); !ok {
			v.errorf(m.Rules.n, "mcp.rules: want a list of rules, got %s", describe(m.Rules.n))
		} else {
			cfg.MCP.Rules = v.mcpRules(m.Rules.rules)
		}
	}
	if m := raw.MCP; m != nil {
		cfg.MCP.Servers = v.mcpServers(m.Servers.n)
		v.boolean(m.AskClient.n, "mcp.ask_client", &cfg.MCP.AskClient)
	}
	cfg.LLM = v.llm(raw.LLM)
	cfg.Sandbox = v.sandbox(raw.Sandbox)
	cfg.Chat = v.chat(raw.Chat)
	if h := raw.Hook; h != nil {
		v.boolean(h.AllowSafe.n, "hook.allow_safe", &cfg.Hook.AllowSafe)
	}
	if w := raw.Write; w != nil {
		cfg.Write.Protected = v.paths(w.Protected.n, "write.protected", false)
		cfg.Write.SafeRoots = v.paths(w.SafeRoots.n, "write.safe_roots", true)
	}
	if t := raw.Tools; t != nil {
		cfg.Tools.EnvPassthrough = v.envNames(t.EnvPassthrough.n)
	}
	if a := raw.Analysis; a != nil && a.Profile.n != nil {
		s, ok := v.str(a.Profile.n, "analysis.profile")
		switch {
		case !ok:
		case s == "" || s == "default":
			cfg.Analysis.Profile = ""
		case s == "strict":
			cfg.Analysis.Profile = s
		default:
			v.errorf(a.Profile.n, "analysis.profile: want default or strict, got %q", s)
		}
	}
	cfg.Audit = v.audit(raw.Audit)
	cfg.Store = v.store(raw.Store)
	cfg.Cluster = v.cluster(raw.Cluster)
	if c := raw.Cron; c != nil {
		cfg.Cron.Workers = v.count(c.Workers.n, "cron.workers", DefaultCronWorkers, 1024)
		cfg.Cron.RunTimeout = v.seconds(c.RunTimeout.n, "cron.run_timeout", DefaultCronRunTimeout, int64(MaxCronRunTimeout/time.Second))
	}
	if k := raw.Kanban; k != nil {
		cfg.Kanban.FailureLimit = v.count(k.FailureLimit.n, "kanban.failure_limit", DefaultFailureLimit, 100)
		cfg.Kanban.Concurrency = v.count(k.Concurrency.n, "kanban.concurrency", DefaultConcurrency, 64)
		cfg.Kanban.Remote = v.kanbanRemote(k.Remote)
	}
	return cfg
}

// mode reads approvals.mode. YAML booleans are accepted because the
// reference system's users wrote "mode: off", which YAML 1.1 parsers
// read as false: false means off and true means manual, as there. An
// unknown name warns and falls back to manual, which asks a human.
func (v *validator) mode(n ast.Node) policy.Mode {
	const key = "approvals.mode"
	if n == nil {
		return policy.ModeManual
	}
	if b, ok := boolValue(n); ok {
		if b {
			return policy.ModeManual
		}
		return policy.ModeOff
	}
	s, ok := v.str(n, key)
	if !ok {
		return policy.ModeManual
	}
	m, err := policy.ParseMode(s)
	if err != nil {
		v.warnf(n, key, "unknown mode %q; using manual (want manual, smart or off)", s)
	}
	return m
}

// unattended reads one of the unattended modes. Only "approve" approves.
// Anything else denies, and anything but "deny" also warns: the
// reference system read "allow", "yes" and "off" as approve, and warden
// refuses to guess in that direction.
func (v *validator) unattended(n ast.Node, key string) policy.UnattendedMode {
	if n == nil {
		return policy.UnattendedDeny
	}
	text, ok := scalarString(n)
	if !ok {
		switch unwrap(n).(type) {
		case *ast.BoolNode, *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
			text = unwrap(n).GetToken().Value
		default:
			v.errorf(n, "%s: want approve or deny, got %s", key, describe(n))
			return policy.UnattendedDeny
		}
	}
	m, err := policy.ParseUnattendedMode(text)
	switch {
	case errors.Is(err, policy.ErrAskNotHere):
		// Not a typo to read as deny: the operator wants a human, and
		// no human can be reached for this owner (invariant 9).
		v.errorf(n, "%s: ask is only valid for approvals.kanban_mode, whose runs the host can put to its web console; want approve or deny", key)
	case err != nil:
		v.warnf(n, key, "%q is not approve or deny; reading it as deny", text)
	}
	return m
}

// kanbanMode reads approvals.kanban_mode: deny, approve or ask.
func (v *validator) kanbanMode(n ast.Node) policy.UnattendedMode {
	const key = "approvals.kanban_mode"
	if text, ok := scalarString(n); ok && n != nil {
		if m, err := policy.ParseKanbanMode(text); err == nil {
			return m
		}
		v.warnf(n, key, "%q is not approve, deny or ask; reading it as deny", text)
		return policy.UnattendedDeny
	}
	return v.unattended(n, key)
}

func (v *validator) timeout(n ast.Node) time.Duration {
	const key = "approvals.timeout"
	if n == nil {
		return DefaultTimeout
	}
	max := int64(MaxTimeout / time.Second)
	secs, ok := intValue(n)
	if !ok || secs < 1 || secs > max {
		v.errorf(n, "%s: want a whole number of seconds from 1 to %d, got %s", key, max, describe(n))
		return DefaultTimeout
	}
	return time.Duration(secs) * time.Second
}

func (v *validator) threshold(n ast.Node) int {
	const key = "approvals.denial_breaker_threshold"
	if n == nil {
		return DefaultDenialBreakerThreshold
	}
	i, ok := intValue(n)
	if !ok || i > 1000 || i < -1000 {
		v.errorf(n, "%s: want a whole number (0 or less disables the breaker), got %s", key, describe(n))
		return DefaultDenialBreakerThreshold
	}
	return int(i)
}

// globs reads a list of deny globs, compiling each so a malformed one is
// reported here, with its position, rather than at decision time.
func (v *validator) globs(n ast.Node, key string) []string {
	items := v.stringList(n, key)
	var out []string
	for i, it := range items {
		if _, err := policy.CompileGlob(it.s); err != nil {
			v.errorf(it.n, "%s[%d]: %v", key, i, err)
			continue
		}
		out = append(out, it.s)
	}
	return out
}

// allowlist reads command_allowlist. It must be a list: the reference
// system once read a scalar "*" as an allowlist matching every command.
// For the same reason an entry made only of wildcards is refused.
func (v *validator) allowlist(n ast.Node) []string {
	const key = "command_allowlist"
	if n != nil {
		if _, isScalar := scalarString(n); isScalar {
			v.errorf(n, "%s: want a list of strings, got a single string; write each entry as a list item (- '...')", key)
			return nil
		}
	}
	items := v.stringList(n, key)
	var out []string
	for i, it := range items {
		if strings.Trim(it.s, "* \t") == "" {
			v.errorf(it.n, "%s[%d]: %q would allow every command; remove it", key, i, it.s)
			continue
		}
		out = append(out, it.s)
	}
	return out
}

func (v *validator) mcpRules(rules []*rawMCPRule) []MCPRule {
	var out []MCPRule
	for i, r := range rules {
		key := fmt.Sprintf("mcp.rules[%d]", i)
		if r == nil || (r.Match.n == nil && r.Action.n == nil) {
			var n ast.Node
			if r != nil {
				n = r.n
			}
			v.errorf(n, "%s: empty rule; want match and action", key)
			continue
		}
		if !r.mapping {
			v.errorf(r.n, "%s: want a mapping with match and action, got %s", key, describe(r.n))
			continue
		}
		var rule MCPRule
		m, ok := v.requiredString(r.n, r.Match.n, key, "match", "a server/tool glob")
		if ok {
			server, tool, found := strings.Cut(m, "/")
			if !found || strings.TrimSpace(server) == "" || strings.TrimSpace(tool) == "" {
				v.errorf(r.Match.n, "%s.match: %q: want server/tool, each part a name or glob", key, m)
				ok = false
			} else if _, err := policy.CompileGlob(m); err != nil {
				v.errorf(r.Match.n, "%s.match: %v", key, err)
				ok = false
			}
			rule.Match = m
		}
		if a, isStr := v.requiredString(r.n, r.Action.n, key, "action", "allow, ask or deny"); !isStr {
			ok = false
		} else {
			verdict, err := policy.ParseVerdict(a)
			if err != nil {
				v.errorf(r.Action.n, "%s.action: want allow, ask or deny, got %q", key, a)
				ok = false
			}
			rule.Verdict = verdict
		}
		if ok {
			out = append(out, rule)
		}
	}
	return out
}

// requiredString reads field (node n) of the entry at key (node entry):
// a string that must be there. Missing or not a string is an error, in
// the words of want (what the field holds).
func (v *validator) requiredString(entry, n ast.Node, key, field, want string) (string, bool) {
	s, isStr := scalarString(n)
	switch {
	case n == nil:
		v.errorf(entry, "%s: missing %s (%s)", key, field, want)
		return "", false
	case !isStr:
		v.errorf(n, "%s.%s: want %s, got %s", key, field, want, describe(n))
		return "", false
	}
	return s, true
}

// paths reads a list of paths. A path with a "/" must be absolute or
// start with "~" (expanded by the consumer, which knows the home
// directory); roots must always be. Paths are cleaned.
func (v *validator) paths(n ast.Node, key string, roots bool) []string {
	items := v.stringList(n, key)
	var out []string
	for i, it := range items {
		p := it.s
		anchored := strings.HasPrefix(p, "/") || p == "~" || strings.HasPrefix(p, "~/")
		if (roots || strings.Contains(p, "/")) && !anchored {
			v.errorf(it.n, "%s[%d]: %q: want an absolute path or one starting with ~/", key, i, p)
			continue
		}
		out = append(out, path.Clean(p))
	}
	return out
}

func (v *validator) ignored(a *rawApprovals) {
	for _, k := range []struct {
		n   ast.Node
		key string
		why string
	}{
		{a.MCPReloadConfirm.n, "mcp_reload_confirm", "warden has no /reload-mcp command"},
		{a.DestructiveSlashConfirm.n, "destructive_slash_confirm", "warden has no destructive slash commands"},
		{a.AuditLog.n, "audit_log", "warden always writes its audit log"},
		{a.GatewayTimeout.n, "gateway_timeout", "use approvals.timeout"},
	} {
		if k.n != nil {
			v.warnf(k.n, "approvals."+k.key, "ignored: %s", k.why)
		}
	}
}

// mappingNode reads n (at key) as a mapping; a single "k: v" pair is a
// mapping of one. Anything else is an error that says what was wanted,
// but for nil (the key is absent): no error, and false.
func (v *validator) mappingNode(n ast.Node, key, want string) (*ast.MappingNode, bool) {
	switch x := unwrap(n).(type) {
	case nil:
		return nil, false
	case *ast.MappingNode:
		return x, true
	case *ast.MappingValueNode:
		return &ast.MappingNode{Values: []*ast.MappingValueNode{x}}, true
	}
	v.errorf(n, "%s: want %s, got %s", key, want, describe(n))
	return nil, false
}

// sequence reads n (at key) as a list; anything else is an error that
// says what was wanted, but for nil (the key is absent): no error, and
// false.
func (v *validator) sequence(n ast.Node, key, want string) (*ast.SequenceNode, bool) {
	seq, ok := unwrap(n).(*ast.SequenceNode)
	if !ok && n != nil {
		v.errorf(n, "%s: want %s, got %s", key, want, describe(n))
	}
	return seq, ok
}

// item is one list entry with its node, for positions.
type item struct {
	s string
	n ast.Node
}

// stringList reads a list of non-empty strings. A scalar, a mapping, a
// non-string entry or an empty entry is an error: the reference system
// skipped bad entries silently, so a typo could drop a deny rule.
func (v *validator) stringList(n ast.Node, key string) []item {
	seq, ok := v.sequence(n, key, "a list of strings")
	if !ok {
		return nil
	}
	out := make([]item, 0, len(seq.Values))
	for i, e := range seq.Values {
		if _, isAlias := e.(*ast.AliasNode); isAlias {
			v.errorf(e, "%s[%d]: aliases are not supported inside lists", key, i)
			continue
		}
		s, isStr := scalarString(e)
		switch {
		case !isStr:
			v.errorf(e, "%s[%d]: want a string, got %s (quote it)", key, i, describe(e))
		case strings.TrimSpace(s) == "":
			v.errorf(e, "%s[%d]: empty entry", key, i)
		default:
			out = append(out, item{s: s, n: e})
		}
	}
	return out
}

// str reads a scalar string, reporting anything else as an error.
func (v *validator) str(n ast.Node, key string) (string, bool) {
	s, ok := scalarString(n)
	if !ok {
		v.errorf(n, "%s: want a string, got %s", key, describe(n))
	}
	return s, ok
}

// unwrap looks through anchors and standard tags ("!!str", "!!int"…).
func unwrap(n ast.Node) ast.Node {
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			if !strings.HasPrefix(x.Start.Value, "!!") || x.Start.Value == "!!str" {
				return n
			}
			n = x.Value
		default:
			return n
		}
	}
}

// scalarString returns the text of a string scalar: plain, quoted, block
// ("|" or ">"), or anything tagged !!str.
func scalarString(n ast.Node) (string, bool) {
	if n == nil {
		return "", false
	}
	switch x := unwrap(n).(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		return x.Value.Value, true
	case *ast.TagNode:
		if x.Start.Value == "!!str" {
			if s, ok := scalarString(x.Value); ok {
				return s, true
			}
			return x.Value.GetToken().Value, true
		}
	}
	return "", false
}

// boolean reads n (at key), when present, into dst: true or false;
// anything else is an error and sets dst false (fail closed).
func (v *validator) boolean(n ast.Node, key string, dst *bool) {
	if n == nil {
		return
	}
	b, ok := boolValue(n)
	if !ok {
		v.errorf(n, "%s: want true or false, got %s", key, describe(n))
	}
	*dst = b
}

func boolValue(n ast.Node) (bool, bool) {
	b, ok := unwrap(n).(*ast.BoolNode)
	if !ok {
		return false, false
	}
	return b.Value, true
}

func intValue(n ast.Node) (int64, bool) {
	i, ok := unwrap(n).(*ast.IntegerNode)
	if !ok {
		return 0, false
	}
	switch x := i.Value.(type) {
	case int64:
		return x, true
	case uint64:
		if x <= 1<<62 {
			return int64(x), true
		}
	}
	return 0, false
}

// describe names what was written, for error messages.
func describe(n ast.Node) string {
	n = unwrap(n)
	switch n.(type) {
	case *ast.NullNode:
		return "null"
	case *ast.MappingNode, *ast.SequenceNode, *ast.AliasNode, *ast.TagNode:
		return "a " + typeName(n)
	}
	if s, ok := scalarString(n); ok {
		return fmt.Sprintf("the string %q", s)
	}
	return fmt.Sprintf("%s %s", typeName(n), n.GetToken().Value)
}

func typeName(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "mapping"
	case *ast.SequenceNode:
		return "list"
	case *ast.AliasNode:
		return "alias"
	case *ast.TagNode:
		return "custom-tagged value"
	case *ast.BoolNode:
		return "boolean"
	case *ast.IntegerNode:
		return "integer"
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "number"
	case *ast.StringNode, *ast.LiteralNode:
		return "string"
	}
	return strings.ToLower(n.Type().String())
}

type rawTools struct {
	EnvPassthrough node `yaml:"env_passthrough"`
}

type rawKanban struct {
	FailureLimit node             `yaml:"failure_limit"`
	Concurrency  node             `yaml:"concurrency"`
	Remote       *rawKanbanRemote `yaml:"remote"`
}

type rawKanbanRemote struct {
	Enabled  node `yaml:"enabled"`
	Listen   node `yaml:"listen"`
	CertFile node `yaml:"cert_file"`
	KeyFile  node `yaml:"key_file"`
	Lease    node `yaml:"lease"`
	Only     node `yaml:"only"`
}

// kanbanRemote reads kanban.remote: off unless enabled; a listen
// address must be HOST:PORT (loopback by default); the certificate and
// key are named together, as absolute paths, or not at all.
func (v *validator) kanbanRemote(r *rawKanbanRemote) KanbanRemote {
	k := KanbanRemote{Listen: DefaultRemoteListen, Lease: DefaultRemoteLease}
	if r == nil {
		return k
	}
	v.boolean(r.Enabled.n, "kanban.remote.enabled", &k.Enabled)
	v.boolean(r.Only.n, "kanban.remote.only", &k.Only)
	if k.Only && !k.Enabled {
		v.errorf(r.Only.n, "kanban.remote.only: without kanban.remote.enabled no task would ever run")
	}
	if r.Listen.n == nil {
		// the default
	} else if s, ok := v.str(r.Listen.n, "kanban.remote.listen"); ok {
		if _, port, err := net.SplitHostPort(s); err != nil || port == "" {
			v.errorf(r.Listen.n, "kanban.remote.listen: want HOST:PORT (like %s), got %q", DefaultRemoteListen, s)
		} else {
			k.Listen = s
		}
	}
	for _, f := range []struct {
		n   ast.Node
		key string
		dst *string
	}{{r.CertFile.n, "kanban.remote.cert_file", &k.CertFile}, {r.KeyFile.n, "kanban.remote.key_file", &k.KeyFile}} {
		if f.n == nil {
			continue
		}
		if s, ok := v.str(f.n, f.key); ok {
			if !path.IsAbs(s) {
				v.errorf(f.n, "%s: want an absolute path, got %q", f.key, s)
			}
			*f.dst = s
		}
	}
	if (k.CertFile == "") != (k.KeyFile == "") {
		v.errorf(r.CertFile.n, "kanban.remote: cert_file and key_file go together (or neither, for a self-signed certificate)")
	}
	if r.Lease.n != nil {
		k.Lease = v.seconds(r.Lease.n, "kanban.remote.lease", DefaultRemoteLease, 3600)
	}
	return k
}

// envNames reads tools.env_passthrough: variable names only.
func (v *validator) envNames(n ast.Node) []string {
	const key = "tools.env_passthrough"
	var out []string
	for _, it := range v.stringList(n, key) {
		if strings.ContainsAny(it.s, "= \t*") {
			v.errorf(it.n, "%s: %q is not a variable name (list names, not NAME=value or globs)", key, it.s)
			continue
		}
		if strings.HasPrefix(it.s, "WARDEN_") {
			v.warnf(it.n, key, "%s never passes to children; ignored", it.s)
			continue
		}
		out = append(out, it.s)
	}
	return out
}

// count reads a small positive whole number.
func (v *validator) count(n ast.Node, key string, def, max int) int {
	if n == nil {
		return def
	}
	i, ok := intValue(n)
	if !ok || i < 1 || i > int64(max) {
		v.errorf(n, "%s: want a whole number from 1 to %d, got %s", key, max, describe(n))
		return def
	}
	return int(i)
}
