package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/backup"
	"github.com/wardenhq/warden/internal/ccperm"
)

// importOptions are the flags of warden import claude-code.
type importOptions struct {
	merge string
	json  bool
}

const importClaudeLong = `Translate Claude Code's permission rules (permissions.allow, ask and
deny of a settings.json) into warden's config:

  Bash(cmd), Bash(prefix:*), Bash(prefix *)  allow: command_allowlist (an
        exact command, or "prefix *"); deny: approvals.deny globs
  Read(path), Edit(path)   deny: approvals.deny "read PATH" / "write PATH"
        (//abs, ~/home, /project-relative, relative and bare names placed
        as Claude Code places them; the project is the directory holding
        .claude/)
  mcp__SERVER, mcp__SERVER__TOOL   mcp.rules with the same action (deny
        rules first: the first match wins in warden)

What warden cannot express — an allow of every command, a wildcard in
the middle of an allowed command, ask rules for shell commands or reads,
allow rules for reads and edits, tools warden does not judge (WebFetch,
WebSearch…) — is listed with the reason. Translated entries apply to
every owner (chat, cron, kanban, every agent), not only Claude Code.

Without --merge the config fragment is printed on stdout and the report
on stderr. With --merge FILE the entries are added to FILE (created if
missing): existing entries are kept and not repeated, comments stay, the
result must be a valid config or nothing is written, and the old file is
kept as FILE.warden-backup-TIME. The report goes to stdout then.

Exit status:
  0  translated (also when some rules could not be)
  2  the settings file or the config could not be read, or the merged
     config would not be valid
  3  usage error`

func newImportCmd() *cobra.Command {
	cmd := parentCmd("import", "Bring other agents' permission rules into warden's config", "missing SOURCE (claude-code)")
	cmd.Use = "import SOURCE"
	var o importOptions
	cc := &cobra.Command{
		Use:                   "claude-code SETTINGS.json [--merge CONFIG] [--json]",
		Short:                 "Translate Claude Code's permission rules into warden's config",
		Long:                  importClaudeLong,
		DisableFlagsInUseLine: true,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("want one SETTINGS.json")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runImportClaude(o, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cc.Flags().StringVar(&o.merge, "merge", "", "add the entries to this warden config file (with a backup)")
	cc.Flags().BoolVar(&o.json, "json", false, "print the translation and the notes as JSON")
	cmd.AddCommand(cc)
	return cmd
}

func runImportClaude(o importOptions, settings string, stdout, stderr io.Writer) error {
	b, err := os.ReadFile(settings)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	rules, err := ccperm.Parse(b)
	if err != nil {
		return fmt.Errorf("import %s: %w", settings, err)
	}
	abs, err := filepath.Abs(settings)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	project := filepath.Dir(abs)
	if filepath.Base(project) == ".claude" {
		project = filepath.Dir(project)
	}
	home, _ := passwdHome()
	res := ccperm.Translate(rules, ccperm.Env{Home: home, Project: project})
	if o.json {
		return writeJSON(stdout, res, true)
	}
	if o.merge == "" {
		if _, err := stdout.Write(res.Fragment(settings)); err != nil {
			return err
		}
		return res.Report(stderr)
	}
	old, err := os.ReadFile(o.merge)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("import: %w", err)
	}
	out, added, err := ccperm.Merge(old, o.merge, res)
	if err != nil {
		return fmt.Errorf("import: %s: %w", o.merge, err)
	}
	if err := res.Report(stdout); err != nil {
		return err
	}
	if added.Empty() {
		fmt.Fprintf(stdout, "%s already has every translated entry; nothing changed.\n", o.merge)
		return nil
	}
	saved, err := backup.Replace(o.merge, out, 0o600, time.Now())
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	if saved != "" {
		fmt.Fprintf(stdout, "The old config is %s.\n", saved)
	}
	fmt.Fprintf(stdout, "Added to %s: %d approvals.deny, %d command_allowlist, %d mcp.rules entries. A running host reloads it.\n",
		o.merge, len(added.Deny), len(added.Allowlist), len(added.MCPRules))
	return nil
}
