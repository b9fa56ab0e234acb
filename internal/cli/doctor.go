package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/doctor"
	"github.com/wardenhq/warden/internal/host"
	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/policy"
	"github.com/wardenhq/warden/internal/sandbox"
)

type doctorOptions struct {
	state, config string
	json          bool
}

const doctorLong = `Say what is in force and why: each check prints ok, warn or fail with
its facts.

  config   the config file a host would load (--config, default
           $XDG_CONFIG_HOME/warden/config.yaml): loaded, missing (safe
           defaults) or broken
  sandbox  the sandbox the host's commands run in (sandbox: in the config):
           the mode, whether a test run of it works on this kernel (user
           namespaces, Landlock ABI), and what is hidden and writable
  host     the running host (over the admin socket of --state), if any:
           whether the config file on disk is the one in force (warn when
           a reload was refused and the last good config still rules) and
           whether its store accepts work

Exit status: 0 when no check fails, 2 when one does (a broken config, a
kernel that cannot sandbox while sandbox.mode is not off: every command
would be refused, or a running host whose store refuses work).`

func newDoctorCmd() *cobra.Command {
	var opts doctorOptions
	cmd := &cobra.Command{
		Use:   "doctor [--state DIR] [--config FILE] [--json]",
		Short: "Say what is in force and why (config, sandbox)",
		Long:  doctorLong,
		Example: `  warden doctor
  warden doctor --json`,
		DisableFlagsInUseLine: true,
		Args:                  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), opts, cmd.OutOrStdout())
		},
	}
	addStateFlag(cmd, &opts.state)
	addConfigFlag(cmd, &opts.config)
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the results as JSON")
	return cmd
}

// runDoctor resolves paths at the edge, runs the checks and prints them.
func runDoctor(ctx context.Context, opts doctorOptions, stdout io.Writer) error {
	state, cfgPath, err := resolveStateAndConfig(opts.state, opts.config)
	if err != nil {
		return err
	}
	cfg, cfgResult := configCheck(cfgPath)
	checks := []doctor.Check{
		{Name: "config", Run: func(context.Context) doctor.Result { return cfgResult }},
		doctor.SandboxCheck(func(ctx context.Context) (*sandbox.Sandbox, error) {
			// Its temporary root is the host's (created 0700 if missing);
			// nothing is recorded.
			return host.NewSandbox(ctx, host.SandboxFacts{
				StateDir: state, ConfigPath: cfgPath, Paths: hostPaths(cfgPath), Environ: os.Environ(),
				Config: cfg, Spawner: "doctor", Logger: slog.New(slog.DiscardHandler),
			})
		}),
	}
	sock := filepath.Join(state, localapi.SocketName)
	checks = append(checks, doctor.HostCheck(localapi.NewClient(sock).Status))
	results := doctor.Run(ctx, checks)
	if opts.json {
		err = doctor.JSON(stdout, results)
	} else {
		err = doctor.Text(stdout, results)
	}
	if err != nil {
		return err
	}
	if doctor.Failed(results) {
		return exitStatus(ExitBlocked)
	}
	return nil
}

// configCheck loads the config file as serve would, and says how it
// went; a file that does not load leaves the defaults for the checks
// after it.
func configCheck(path string) (*config.Config, doctor.Result) {
	r := doctor.Result{Name: "config", Details: []doctor.Detail{{Key: "file", Value: path}}}
	cfg, warns, err := config.Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Status, r.Summary = doctor.OK, "no file: safe defaults (approvals.mode manual, every unattended mode deny, sandbox workspace-write)"
		return nil, r
	case err != nil:
		r.Status, r.Summary = doctor.Fail, "does not load: a host would refuse to start (the checks below use the defaults)"
		r.Details = append(r.Details, doctor.Detail{Key: "error", Value: err.Error()})
		return nil, r
	}
	r.Status, r.Summary = doctor.OK, fmt.Sprintf("loaded (sha256:%.12s…)", cfg.Digest)
	if cfg.Approvals.KanbanMode == policy.UnattendedAsk {
		r.Details = append(r.Details, doctor.Detail{Key: "kanban_mode", Value: fmt.Sprintf(
			"ask: a dangerous kanban step waits up to %s for a human on warden serve's web console (any host's, on a shared store); no answer, or a host serving no console, is a deny", cfg.Approvals.Timeout)})
	}
	for _, w := range warns {
		r.Status = doctor.Warn
		r.Details = append(r.Details, doctor.Detail{Key: "warning", Value: w.String()})
	}
	return cfg, r
}
