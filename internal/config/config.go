// Package config reads warden's one YAML configuration file.
//
// Parsing is strict: unknown keys, duplicate keys and wrong types are
// errors that carry the file name, line, column and a source excerpt.
// The approvals: section keeps the key names of the system warden
// re-implements (mode, timeout, cron_mode, kanban_mode,
// single_query_mode, unattended_mode, deny, denial_breaker_threshold and
// the top-level command_allowlist) so an existing file keeps its
// meaning; where the old reading was lenient in a dangerous direction,
// warden fails closed and says so in a Warning.
//
// The package never decides where the file is: callers (the CLI) resolve
// the path and pass it in. Nothing here reads the process environment.
package config

import (
	_ "embed" // Starter
	"time"

	"github.com/wardenhq/warden/internal/policy"
)

// Defaults.
const (
	// DefaultTimeout is how long a question waits for a human.
	DefaultTimeout = 300 * time.Second
	// MaxTimeout bounds approvals.timeout. Longer waits overflowed thread
	// joins in the reference system; a year is already far past useful.
	MaxTimeout = 365 * 24 * time.Hour
	// DefaultDenialBreakerThreshold is how many consecutive guardian
	// denials in one session trip the circuit breaker.
	DefaultDenialBreakerThreshold = 3
	// MaxFileSize bounds the config file; anything larger is not a
	// hand-written config.
	MaxFileSize = 1 << 20
	// DefaultFailureLimit is kanban.failure_limit's default.
	DefaultFailureLimit = 3
	// DefaultConcurrency is kanban.concurrency's default.
	DefaultConcurrency = 4
)

// Config is a parsed configuration. Treat it as read-only: a Watcher
// shares one *Config between every reader.
type Config struct {
	// Name is the file name given to Parse or Load, "" for Default.
	Name string
	// Digest is the hex SHA-256 of the bytes parsed, "" for Default. The
	// audit log records it so a decision can be traced to the policy
	// text that made it.
	Digest string

	// Approvals is the approvals: section.
	Approvals Approvals
	// CommandAllowlist is the permanent allowlist of commands (exact
	// commands, "prefix *" entries and "class:<key>" grants), from the
	// top-level command_allowlist key.
	CommandAllowlist []string
	// MCP holds the per-server/tool rules of the mcp: section.
	MCP MCP
	// Write holds the file-write rules of the write: section.
	Write Write
	// Tools holds the tools: section.
	Tools Tools
	// Kanban holds the kanban: section.
	Kanban Kanban
	// Cron holds the cron: section (the scheduler's worker pool).
	Cron Cron
	// LLM holds the llm: section (the agents' and guardian's model).
	LLM LLM
	// Sandbox holds the sandbox: section.
	Sandbox Sandbox
	// Chat holds the chat: section (Discord, Slack, Telegram, notifiers).
	Chat Chat
	// Hook holds the hook: section (warden hook for other agents).
	Hook Hook
	// Analysis holds the analysis: section.
	Analysis Analysis
	// Audit holds the audit: section (where the audit chain's head is
	// anchored besides the state directory).
	Audit Audit
	// Store is the top-level store: key: a postgres:// URL for a store
	// shared by several hosts, "" for SQLite in the state directory.
	// Read once at start.
	Store string
	// Cluster holds the cluster: section (hosts sharing the store).
	Cluster Cluster
}

// Hook is the hook: section: how warden hook answers agents that have
// permission rules of their own (Claude Code, Codex, Gemini CLI).
type Hook struct {
	// AllowSafe answers allow for every call warden allows without a
	// human (safe commands, bypass modes), which skips the agent's own
	// prompt. Off by default: such calls get no decision and the
	// agent's own permission rules apply.
	AllowSafe bool
}

// Analysis is the analysis: section: how shell commands are judged.
type Analysis struct {
	// Profile is "" (the default: the catalogue decides what is
	// dangerous) or "strict" (also any program not on the analyser's
	// known-safe list).
	Profile string
}

// Tools is the tools: section.
type Tools struct {
	// EnvPassthrough names variables (credentials included) that children
	// may get from warden's environment beyond the built-in allowlist.
	EnvPassthrough []string
}

// Cron is the cron: section, read at start.
type Cron struct {
	// Workers bounds the cron runs that execute at once; due runs
	// beyond it wait their turn in the order they were claimed.
	Workers int
	// RunTimeout bounds one run's execution: then its commands are
	// killed and the run is recorded failed, so a job that hangs frees
	// its worker.
	RunTimeout time.Duration
}

// Defaults of the cron: section (cron.DefaultWorkers and
// cron.DefaultRunTimeout, which this package does not import).
const (
	DefaultCronWorkers    = 64
	DefaultCronRunTimeout = time.Hour
	// MaxCronRunTimeout is the longest cron.run_timeout: a week.
	MaxCronRunTimeout = 7 * 24 * time.Hour
)

// Kanban is the kanban: section.
type Kanban struct {
	// FailureLimit is how many failed runs block a task.
	FailureLimit int
	// Concurrency is how many workers run at once.
	Concurrency int
	// Remote is kanban.remote: the TLS listener for workers on other
	// machines.
	Remote KanbanRemote
}

// KanbanRemote is kanban.remote. It is off unless Enabled.
type KanbanRemote struct {
	Enabled bool
	// Listen is HOST:PORT; DefaultRemoteListen (loopback) when unset.
	Listen string
	// CertFile and KeyFile name the listener's certificate and key
	// (PEM); both unset means a self-signed certificate kept in the
	// state directory, whose fingerprint workers pin.
	CertFile, KeyFile string
	// Lease is a remote run's lease.
	Lease time.Duration
	// Only makes the host spawn no local workers: every task waits to
	// be issued to a remote worker.
	Only bool
}

// Defaults of kanban.remote.
const (
	DefaultRemoteListen = "127.0.0.1:7422"
	DefaultRemoteLease  = 30 * time.Second
)

// Approvals is the approvals: section.
type Approvals struct {
	// Mode governs attended owners: manual (ask a human), smart (a
	// guardian model first) or off (allow; the floors still apply).
	Mode policy.Mode
	// Timeout is how long a question waits for a human before it is
	// denied.
	Timeout time.Duration
	// CronMode, KanbanMode, SingleQueryMode and UnattendedMode are what
	// unattended owners get: cron runs, kanban workers, single-query runs,
	// and API/webhook callers without an answer channel.
	CronMode        policy.UnattendedMode
	KanbanMode      policy.UnattendedMode
	SingleQueryMode policy.UnattendedMode
	UnattendedMode  policy.UnattendedMode
	// Deny are the user's deny globs, an unconditional block checked
	// before every bypass. Each has been compiled once to validate it.
	Deny []string
	// DenialBreakerThreshold is how many consecutive guardian denials in
	// a session trip the breaker; zero or less disables it.
	DenialBreakerThreshold int
	// SmartPolicy is operator text added to the guardian's system prompt
	// (the trusted channel; the action under review never is).
	SmartPolicy string
	// SmartFailureThreshold is how many consecutive guardian failures
	// (errors, timeouts, unusable replies) put a session in manual mode.
	SmartFailureThreshold int
}

// MCP is the mcp: section.
type MCP struct {
	// Rules are tried in order; the first whose Match covers
	// "server/tool" decides.
	Rules []MCPRule
	// Servers are the MCP servers whose tools the agents may call.
	Servers []MCPServer
	// AskClient makes warden mcp ask its client (MCP elicitation) when
	// the client supports it, as well as the console; the first answer
	// wins.
	AskClient bool
}

// MCPRule is one mcp.rules entry.
type MCPRule struct {
	// Match is a "server/tool" glob (policy.Glob syntax), e.g.
	// "github/*" or "*/delete_*".
	Match string
	// Verdict is the rule's action: allow, ask or deny.
	Verdict policy.Verdict
}

// Write is the write: section: rules for file writes.
type Write struct {
	// Protected are paths (or, without a "/", base-name patterns such as
	// ".env*") that writes are denied for without asking. They add to
	// warden's built-in list.
	Protected []string
	// SafeRoots, when set, are the only directories writes may land in.
	// Each is absolute or starts with "~".
	SafeRoots []string
}

// Default returns the configuration used when there is no file: manual
// approvals, a 300-second timeout, every unattended mode deny, a breaker
// threshold of 3, and no rules.
func Default() *Config {
	return &Config{
		Approvals: Approvals{
			Mode:                   policy.ModeManual,
			Timeout:                DefaultTimeout,
			CronMode:               policy.UnattendedDeny,
			KanbanMode:             policy.UnattendedDeny,
			SingleQueryMode:        policy.UnattendedDeny,
			UnattendedMode:         policy.UnattendedDeny,
			DenialBreakerThreshold: DefaultDenialBreakerThreshold,
			SmartFailureThreshold:  DefaultSmartFailureThreshold,
		},
		LLM:     defaultLLM(),
		Sandbox: defaultSandbox(),
		Cron:    Cron{Workers: DefaultCronWorkers, RunTimeout: DefaultCronRunTimeout},
		Kanban:  Kanban{FailureLimit: DefaultFailureLimit, Concurrency: DefaultConcurrency, Remote: KanbanRemote{Listen: DefaultRemoteListen, Lease: DefaultRemoteLease}},
		Chat:    Chat{Notify: Notify{After: DefaultNotifyAfter}},
	}
}

// Starter is the commented config file `warden config init` writes: it
// sets exactly the defaults (a test checks it), and shows what to edit.
//
//go:embed starter.yaml
var Starter []byte
