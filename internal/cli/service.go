package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/service"
)

// serviceOptions are the flags of warden service install/uninstall.
type serviceOptions struct {
	force bool
	start bool
	print bool
	json  bool
	args  []string // serve's flags, after --
}

func newServiceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Install warden serve as a per-user service (systemd on Linux, launchd on macOS)",
		Long: `Install or remove the host as a service of your user: a systemd user
unit (~/.config/systemd/user/warden.service) on Linux, a launchd agent
(~/Library/LaunchAgents/dev.warden.serve.plist) on macOS. The unit runs
this binary's "serve" with the flags given after --.

Exit status: 0 done; 2 the unit exists (use --force), cannot be written,
or the service manager failed; 3 usage error.`,
	}
	cmd.AddCommand(newServiceInstallCmd(), newServiceUninstallCmd())
	return cmd
}

func newServiceInstallCmd() *cobra.Command {
	var opts serviceOptions
	cmd := &cobra.Command{
		Use:   "install [--force] [--start] [--print] [-- SERVE FLAGS...]",
		Short: "Write the service unit for this binary's warden serve",
		Example: `  warden service install --start
  warden service install -- --addr 127.0.0.1:7879 --config /srv/warden.yaml
  warden service install --print        # show the unit, write nothing`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.args = args
			return runServiceInstall(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&opts.force, "force", false, "replace an installed unit")
	cmd.Flags().BoolVar(&opts.start, "start", false, "also enable and start it now (systemctl --user enable --now, or launchctl load -w)")
	cmd.Flags().BoolVar(&opts.print, "print", false, "print the unit instead of writing it")
	cmd.Flags().BoolVar(&opts.json, "json", false, "print {\"path\", \"start\"} as JSON")
	return cmd
}

func newServiceUninstallCmd() *cobra.Command {
	var opts serviceOptions
	cmd := &cobra.Command{
		Use:   "uninstall [--json]",
		Short: "Stop the service and remove its unit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServiceUninstall(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print {\"path\", \"removed\"} as JSON")
	return cmd
}

// serviceUnit describes the unit for this binary and user. The binary's
// path is the resolved executable, so the unit survives the shell's PATH.
func serviceUnit(args []string) (service.Unit, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return service.Unit{}, fmt.Errorf("find this binary: %w", err)
	}
	// The home directory from the password database: the unit belongs to
	// the user, whatever HOME says.
	u, err := user.Current()
	if err != nil {
		return service.Unit{}, fmt.Errorf("find your home directory: %w", err)
	}
	kind := service.Systemd
	if runtime.GOOS == "darwin" {
		kind = service.Launchd
	}
	for _, a := range args {
		if a == "--yolo" {
			return service.Unit{}, usageError{errors.New("refusing to install a service with --yolo: process yolo for every session of a long-running host is not a default anyone should get by accident")}
		}
	}
	return service.Unit{Kind: kind, Exe: exe, Args: args, Home: u.HomeDir}, nil
}

func runServiceInstall(ctx context.Context, opts serviceOptions, stdout io.Writer) error {
	u, err := serviceUnit(opts.args)
	if err != nil {
		return err
	}
	if opts.print {
		data, err := u.Render()
		if err != nil {
			return err
		}
		_, err = stdout.Write(data)
		return err
	}
	if err := service.Install(u, opts.force); err != nil {
		return err
	}
	start := u.StartCommand()
	if opts.start {
		if err := runManager(ctx, start); err != nil {
			return err
		}
	}
	if opts.json {
		return writeJSON(stdout, map[string]any{"path": u.Path(), "start": strings.Join(start, " "), "started": opts.start}, true)
	}
	fmt.Fprintf(stdout, "installed %s\n", u.Path())
	if opts.start {
		fmt.Fprintf(stdout, "started: %s\n", strings.Join(start, " "))
	} else {
		fmt.Fprintf(stdout, "start it now and at every login with: %s\n", strings.Join(start, " "))
	}
	return nil
}

func runServiceUninstall(ctx context.Context, opts serviceOptions, stdout io.Writer) error {
	u, err := serviceUnit(nil)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(u.Path())
	installed := statErr == nil
	if installed {
		// Stopping a unit that is not loaded fails; the file still goes.
		_ = runManager(ctx, u.StopCommand())
	}
	if err := service.Uninstall(u); err != nil {
		return err
	}
	if opts.json {
		return writeJSON(stdout, map[string]any{"path": u.Path(), "removed": installed}, true)
	}
	if installed {
		fmt.Fprintf(stdout, "removed %s\n", u.Path())
	} else {
		fmt.Fprintf(stdout, "no service unit at %s\n", u.Path())
	}
	return nil
}

// runManager runs a service manager command as the operator asked, with
// only what systemctl --user and launchctl need from the environment:
// the user's session bus and runtime directory.
func runManager(ctx context.Context, argv []string) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{}
	for _, name := range []string{"PATH", "HOME", "USER", "LANG", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"} {
		if v, ok := os.LookupEnv(name); ok {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
