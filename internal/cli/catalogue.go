package cli

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/wardenhq/warden/internal/explain"
	"github.com/wardenhq/warden/internal/shell"
)

// writeCatalogue prints every class of the analyser's catalogue: hardline
// first, then dangerous, each sorted by key. It is what the docs and the
// deny messages refer to, so the keys are printed exactly.
func writeCatalogue(w io.Writer, asJSON bool) error {
	classes := shell.Catalogue()
	slices.SortStableFunc(classes, func(a, b shell.Class) int {
		return tierRank(a.Tier) - tierRank(b.Tier)
	})

	if asJSON {
		out := catalogueJSON{Classes: make([]explain.ClassReport, 0, len(classes))}
		for _, c := range classes {
			out.Classes = append(out.Classes, explain.ClassReport{Key: c.Key, Tier: string(c.Tier), Description: c.Description})
		}
		return writeJSON(w, out, true)
	}

	bw := bufio.NewWriter(w)
	kw := 0
	for _, c := range classes {
		kw = max(kw, len(c.Key))
	}
	var tier shell.Tier
	for _, c := range classes {
		if c.Tier != tier {
			if tier != "" {
				bw.WriteByte('\n')
			}
			tier = c.Tier
			fmt.Fprintf(bw, "%s: %s\n", tier, tierMeaning(tier))
		}
		fmt.Fprintf(bw, "  %-*s  %s\n", kw, c.Key, c.Description)
	}
	return bw.Flush()
}

func tierRank(t shell.Tier) int {
	if t == shell.TierHardline {
		return 0
	}
	return 1
}

func tierMeaning(t shell.Tier) string {
	switch t {
	case shell.TierHardline:
		return "always blocked, nothing overrides it"
	case shell.TierDangerous:
		return "needs approval"
	}
	return string(t)
}
