package cli

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
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
			return usageError{errors.New("missing subcommand (warden config check [FILE])")}
		},
	}
	cmd.AddCommand(newConfigCheckCmd())
	return cmd
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

` + exitStatusHelp

const configCheckExample = `  warden config check
  warden config check ./warden.yaml`

// newConfigCheckCmd builds "warden config check".
func newConfigCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:                   "check [FILE]",
		DisableFlagsInUseLine: true,
		Short:                 "Validate a config file and summarise it",
		Long:                  configCheckLong,
		Example:               configCheckExample,
		Args:                  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			file := ""
			if len(args) == 1 {
				file = args[0]
			}
			return runConfigCheck(file, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// runConfigCheck is warden config check.
func runConfigCheck(file string, stdout, stderr io.Writer) error {
	if file == "" {
		def, err := defaultConfigPath()
		if err != nil {
			return err
		}
		file = def
	}
	cfg, warnings, err := config.Load(file)
	if err != nil {
		if !errors.Is(err, config.ErrInvalid) {
			return err // unreadable: "load config: open …" (exit 2)
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
		return fmt.Errorf("%s parses but does not compile: %w", file, err)
	}
	if err := writeConfigSummary(stdout, file, cfg, warnings); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// configProblems splits the error of config.Load into one text per
// problem: config.Parse joins every *config.Error it finds.
func configProblems(err error) []string {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
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
	fmt.Fprintf(bw, "config: %s\n", sanitize(file))
	fmt.Fprintf(bw, "digest: sha256:%s\n", cfg.Digest)
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
