package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newManCmd writes man pages for every command, generated from the
// command tree itself, so they cannot drift from --help.
func newManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man [DIR]",
		Short: "Write man pages (section 1) for every warden command into DIR",
		Long: `Writes one man page per command (warden.1, warden-serve.1, …) into DIR
(default ./man), generated from the same command tree as --help. Install
them with, for example:

    warden man /usr/local/share/man/man1

Exit status: 0 written; 2 the directory cannot be created or written;
3 usage error.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "man"
			if len(args) == 1 {
				dir = args[0]
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // reproducible pages: no generation date
			header := &doc.GenManHeader{Title: "WARDEN", Section: "1", Source: "warden " + version(), Manual: "warden manual"}
			if err := doc.GenManTree(root, header, dir); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "man pages written to %s\n", dir)
			return nil
		},
	}
}
