package gate_test

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/config"
	"github.com/wardenhq/warden/internal/gate"
	"github.com/wardenhq/warden/internal/owner"
)

// Decide runs the decision table for one action as the owner bound to
// the context: here a cron job, whose dangerous actions follow
// approvals.cron_mode (deny by default) because nobody is there to ask.
func ExampleGate_Decide() {
	cfg, _, err := config.Parse([]byte("approvals:\n  deny: [\"terraform destroy *\"]\n"), "config.yaml")
	if err != nil {
		panic(err)
	}
	policy, err := gate.Compile(cfg, gate.Paths{Home: "/home/u"})
	if err != nil {
		panic(err)
	}
	g, err := gate.New(gate.Options{Policy: policy})
	if err != nil {
		panic(err)
	}
	job, err := owner.Cron("nightly", "")
	if err != nil {
		panic(err)
	}
	ctx := owner.With(context.Background(), job)
	for _, cmd := range []string{"ls -la", "rm -rf build/", "rm -rf /", "terraform destroy -auto-approve"} {
		d, err := g.Decide(ctx, action.NewShell(cmd))
		if err != nil {
			panic(err) // Decide has already made it a deny; log it
		}
		fmt.Printf("%-32s %s (%s)\n", cmd, d.Verdict, d.Rule)
	}
	// Output:
	// ls -la                           allow (safe)
	// rm -rf build/                    deny (unattended.cron_mode)
	// rm -rf /                         deny (floor.hardline)
	// terraform destroy -auto-approve  deny (floor.deny_rule)
}
