package shell_test

import (
	"fmt"
	"strings"

	"github.com/wardenhq/warden/internal/shell"
)

// Analyze reads a command line as bash would and reports every command
// it would execute, each launcher (sudo, bash -c) as well as what it
// launches, and what the catalogue finds dangerous in them.
func ExampleAnalyze() {
	a := shell.Analyze(`cd /srv && sudo bash -c "rm -rf ./cache" | tee log`)
	fmt.Println("verdict:", a.Verdict)
	for _, c := range a.Commands {
		fmt.Print("runs: ", strings.Join(c.Words(), " "))
		if len(c.Via) > 0 {
			fmt.Print("  (via ", strings.Join(c.Via, ", "), ")")
		}
		fmt.Println()
	}
	for _, f := range a.Findings {
		fmt.Printf("finding: %s (%s) in %q\n", f.Class, f.Tier, strings.Join(a.Commands[f.Command].Words(), " "))
	}
	// Output:
	// verdict: dangerous
	// runs: cd /srv
	// runs: sudo bash -c rm -rf ./cache
	// runs: bash -c rm -rf ./cache  (via sudo)
	// runs: rm -rf ./cache  (via sudo, bash -c)
	// runs: tee log
	// finding: delete.recursive (dangerous) in "rm -rf ./cache"
	// finding: delete.force (dangerous) in "rm -rf ./cache"
}
