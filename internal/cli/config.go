package cli

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/policy"
)

// newConfigCmd builds "warden config", the parent of the config verbs.
func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:                   "config",
		Short:                 "Work with warden's configuration file",
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Like a bare "warden": a usage error that shows what there is.
			cmd.SetOut(cmd.ErrOrStderr())
			_ = cmd.Usage()
			return usageError{errors.New("missing subcommand (warden config check [FILE], warden config init [FILE])")}
		},
	}
	cmd.AddCommand(newConfigCheckCmd(), newConfigInitCmd(), newConfigSchemaCmd())
	return cmd
}

// newConfigSchemaCmd builds "warden config schema".
func newConfigSchemaCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "schema",
		Short: "Print the JSON Schema of the config file (for editors)",
		Long: `Print the JSON Schema (draft 2020-12) of warden's config file: every key
with its type, range, default and meaning, and additionalProperties:
false, so an editor completes keys and flags unknown ones. The same file
is docs/config.schema.json; the starter config (warden config init)
names it on its first line for editors that read
"# yaml-language-server: $schema=…" (VS Code's YAML extension, Neovim's
yamlls, Helix, Zed). For a config outside such an editor:

  warden config schema > ~/.config/warden/config.schema.json

then point the $schema comment at that file. The schema describes the
file's shape; warden config check remains the authority (it also knows
that llm.base_url needs llm.model, that a glob compiles, …).

Exit status: 0.`,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := cmd.OutOrStdout().Write(config.Schema)
			return err
		},
	}
}

// newConfigInitCmd builds "warden config init".
func newConfigInitCmd() *cobra.Command {
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "init [--force] [--json] [FILE]",
		Short: "Write a commented starter config file",
		Long: `Write a commented starter config to FILE (default
$XDG_CONFIG_HOME/warden/config.yaml, or ~/.config/warden/config.yaml): it
sets exactly the defaults and shows the keys worth editing. An existing
file is kept unless --force is given. The file is created mode 0600 in a
0700 directory.

Exit status:
  0  written
  2  the file exists (without --force) or cannot be written
  3  usage error`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return runConfigInit(file, force, asJSON, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace an existing file")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"file"} as JSON`)
	return cmd
}

// runConfigInit is warden config init.
func runConfigInit(file string, force, asJSON bool, stdout io.Writer) error {
	if file == "" {
		def, err := defaultConfigPath()
		if err != nil {
			return err
		}
		file = def
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return fmt.Errorf("config init: %w", err)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(file, flags, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("config init: %s exists (--force replaces it; warden config check %s validates it)", file, file)
	}
	if err != nil {
		return fmt.Errorf("config init: %w", err)
	}
	if _, err := f.Write(config.Starter); err != nil {
		f.Close()
		return fmt.Errorf("config init: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("config init: %w", err)
	}
	if asJSON {
		return writeJSON(stdout, map[string]string{"file": file}, true)
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (the defaults, commented); check it with: warden config check\n", file)
	return err
}

const configCheckLong = `Validate a warden config file the way the host loads it: strict YAML
(unknown keys, duplicate keys and wrong types are errors), then compiled
into the policy the gate decides with.

FILE defaults to $XDG_CONFIG_HOME/warden/config.yaml, or to
~/.config/warden/config.yaml when XDG_CONFIG_HOME is not set.

A valid file prints its name, the SHA-256 digest of its bytes (what the
audit log records), a summary (approvals.mode, the unattended modes, how
many deny rules, allowlist entries and MCP rules) and every warning with
its line:column; the exit status is 0, warnings or not. An invalid file
prints each problem on stderr with its line:column and an excerpt of the
file, and exits 2; so does a file that cannot be read, and one that
parses but does not compile (an allowlist entry naming an unknown class).

Without FILE, a missing default file is not an error: warden runs on its
defaults, and check says so ("no file: the defaults apply") and exits 0.
A FILE given by name must exist.

--json prints {"file", "found", "valid", "digest", "summary", "warnings",
"problems"}; each warning and problem has "line", "column" and "message".

Exit status:
  0  the file is valid, or there is no default file (the defaults apply)
  2  the file is invalid, does not compile, or cannot be read
  3  usage error`

const configCheckExample = `  warden config check
  warden config check ./warden.yaml
  warden config check --json ./warden.yaml | jq .problems`

// newConfigCheckCmd builds "warden config check".
func newConfigCheckCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:                   "check [--json] [FILE]",
		DisableFlagsInUseLine: true,
		Short:                 "Validate a config file and summarise it",
		Long:                  configCheckLong,
		Example:               configCheckExample,
		Args:                  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConfigCheck(optionalArg(args), asJSON, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

// configReport is config check's --json output.
type configReport struct {
	File     string          `json:"file"`
	Found    bool            `json:"found"`
	Valid    bool            `json:"valid"`
	Digest   *string         `json:"digest"`
	Summary  *configSummary  `json:"summary"`
	Warnings []configProblem `json:"warnings"`
	Problems []configProblem `json:"problems"`
}

// configSummary is what a valid config sets, as config check prints it.
type configSummary struct {
	Mode             string            `json:"mode"`
	Unattended       map[string]string `json:"unattended"`
	DenyRules        int               `json:"deny_rules"`
	AllowlistEntries int               `json:"allowlist_entries"`
	MCPRules         int               `json:"mcp_rules"`
	Model            *string           `json:"model"`
	MCPServers       []string          `json:"mcp_servers"`
}

// configProblem is one warning or problem with its position (0: none).
type configProblem struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Key     string `json:"key,omitempty"`
	Message string `json:"message"`
}

// runConfigCheck is warden config check.
func runConfigCheck(file string, asJSON bool, stdout, stderr io.Writer) error {
	named := file != ""
	if !named {
		def, err := defaultConfigPath()
		if err != nil {
			return err
		}
		file = def
	}
	rep := configReport{File: file, Found: true, Warnings: []configProblem{}, Problems: []configProblem{}}
	cfg, warnings, err := config.Load(file)
	for _, w := range warnings {
		rep.Warnings = append(rep.Warnings, configProblem{Line: w.Line, Column: w.Column, Key: w.Key, Message: w.Message})
	}
	switch {
	case err != nil && !named && errors.Is(err, fs.ErrNotExist):
		// warden runs on its defaults without a file: not a failure.
		rep.Found, rep.Valid = false, true
		cfg = config.Default()
		if asJSON {
			rep.Summary = summarise(cfg)
			return writeJSON(stdout, rep, true)
		}
		fmt.Fprintf(stdout, "config: %s (no file: the defaults apply)\n", sanitize(file))
		return writeConfigSummary(stdout, "", cfg, nil)
	case err != nil && !errors.Is(err, config.ErrInvalid):
		return err // unreadable: "load config: open …" (exit 2)
	case err != nil:
		for _, e := range configErrors(err) {
			rep.Problems = append(rep.Problems, configProblem{Line: e.Line, Column: e.Column, Message: e.Message})
		}
		if asJSON {
			if werr := writeJSON(stdout, rep, true); werr != nil {
				return werr
			}
			return exitStatus(ExitBlocked)
		}
		for _, w := range warnings {
			fmt.Fprintf(stderr, "warden: warning: %v\n", w)
		}
		problems := configProblems(err)
		for _, p := range problems {
			fmt.Fprintf(stderr, "warden: %s\n", strings.TrimRight(p, "\n"))
		}
		fmt.Fprintf(stderr, "warden: %s is not a valid config: %s\n", file, plural(len(problems), "problem"))
		return exitStatus(ExitBlocked)
	}
	if _, err := gate.Compile(cfg, hostPaths(file)); err != nil {
		if asJSON {
			rep.Problems = append(rep.Problems, configProblem{Message: "parses but does not compile: " + err.Error()})
			if werr := writeJSON(stdout, rep, true); werr != nil {
				return werr
			}
			return exitStatus(ExitBlocked)
		}
		return fmt.Errorf("%s parses but does not compile: %w", file, err)
	}
	if asJSON {
		rep.Valid = true
		digest := "sha256:" + cfg.Digest
		rep.Digest, rep.Summary = &digest, summarise(cfg)
		return writeJSON(stdout, rep, true)
	}
	if err := writeConfigSummary(stdout, file, cfg, warnings); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// summarise is the summary config check prints for cfg.
func summarise(cfg *config.Config) *configSummary {
	a := cfg.Approvals
	s := &configSummary{
		Mode: a.Mode.String(),
		Unattended: map[string]string{
			"cron_mode": a.CronMode.String(), "kanban_mode": a.KanbanMode.String(),
			"single_query_mode": a.SingleQueryMode.String(), "unattended_mode": a.UnattendedMode.String(),
		},
		DenyRules: len(a.Deny), AllowlistEntries: len(cfg.CommandAllowlist), MCPRules: len(cfg.MCP.Rules),
		MCPServers: []string{},
	}
	if cfg.LLM.Configured() {
		m := cfg.LLM.Model
		s.Model = &m
	}
	for _, sv := range cfg.MCP.Servers {
		s.MCPServers = append(s.MCPServers, sv.Name)
	}
	return s
}

// configErrors returns the *config.Error values joined in err.
func configErrors(err error) []*config.Error {
	var out []*config.Error
	for _, e := range unjoin(err) {
		if ce, ok := errors.AsType[*config.Error](e); ok {
			out = append(out, ce)
		} else {
			out = append(out, &config.Error{Message: e.Error()})
		}
	}
	return out
}

// unjoin splits an errors.Join.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// configProblems splits the error of config.Load into one text per
// problem: config.Parse joins every *config.Error it finds.
func configProblems(err error) []string {
	errs := unjoin(err)
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// writeConfigSummary prints what a valid config file sets.
func writeConfigSummary(w io.Writer, file string, cfg *config.Config, warnings []config.Warning) error {
	bw := bufio.NewWriter(w)
	a := cfg.Approvals
	if file != "" { // "": the defaults, no file
		fmt.Fprintf(bw, "config: %s\n", sanitize(file))
		fmt.Fprintf(bw, "digest: sha256:%s\n", cfg.Digest)
	}
	mode := a.Mode.String()
	if a.Mode == policy.ModeSmart {
		if cfg.LLM.Configured() {
			mode += fmt.Sprintf(" (guardian: %s; manual after %d failures in a row)", cmp.Or(cfg.LLM.GuardianModel, cfg.LLM.Model), a.SmartFailureThreshold)
		} else {
			mode += " (no model configured: acts as manual)"
		}
	}
	fmt.Fprintf(bw, "mode: %s\n", mode)
	fmt.Fprintf(bw, "unattended modes: cron_mode %s, kanban_mode %s, single_query_mode %s, unattended_mode %s\n",
		a.CronMode, a.KanbanMode, a.SingleQueryMode, a.UnattendedMode)
	if a.KanbanMode == policy.UnattendedAsk {
		fmt.Fprintf(bw, "kanban_mode ask: a dangerous kanban step waits up to %s for a human on warden serve's web console (any host's, on a shared store); no answer, or a host serving no console, is a deny\n", a.Timeout)
	}
	fmt.Fprintf(bw, "deny rules: %d\n", len(a.Deny))
	fmt.Fprintf(bw, "allowlist entries: %d\n", len(cfg.CommandAllowlist))
	fmt.Fprintf(bw, "mcp rules: %d\n", len(cfg.MCP.Rules))
	if cfg.LLM.Configured() {
		fmt.Fprintf(bw, "model: %s at %s (key from %s)\n", sanitize(cfg.LLM.Model), sanitize(cfg.LLM.BaseURL), cmp.Or(cfg.LLM.APIKeyEnv, "none"))
	} else {
		fmt.Fprintln(bw, "model: none (agents need llm.base_url and llm.model)")
	}
	if n := len(cfg.MCP.Servers); n > 0 {
		names := make([]string, n)
		for i, sv := range cfg.MCP.Servers {
			names[i] = sv.Name
		}
		fmt.Fprintf(bw, "mcp servers: %s\n", strings.Join(names, ", "))
	}
	if len(warnings) > 0 {
		fmt.Fprintf(bw, "\n%s:\n", plural(len(warnings), "warning"))
		for _, wn := range warnings {
			fmt.Fprintf(bw, "  %s\n", sanitize(wn.String()))
		}
	}
	return bw.Flush()
}

// plural is "1 problem", "2 problems".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
