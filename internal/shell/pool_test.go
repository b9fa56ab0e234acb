package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// poolInputs are varied inputs for the recycling tests: every corpus
// command, each golden script, and long scripts with many candidates.
func poolInputs(t *testing.T) []string {
	t.Helper()
	corpus := loadCorpus(t)
	var files []string
	for f := range corpus {
		files = append(files, f)
	}
	sort.Strings(files)
	var in []string
	for _, f := range files {
		for _, c := range corpus[f] {
			in = append(in, c.Cmd, "f() { "+c.Cmd+"\n}; f | cat; x=$(f)")
		}
	}
	golden, _ := filepath.Glob("testdata/golden/*.sh")
	golden = append(golden, "testdata/bench/install.sh")
	for _, f := range golden {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, string(b))
	}
	var sb strings.Builder
	for i := 0; sb.Len() < 16<<10; i++ {
		sb.WriteString(typical[i%len(typical)])
		sb.WriteByte('\n')
	}
	in = append(in, sb.String())
	return in
}

// cloneAnalysis deep-copies an analysis, unexported fields included.
func cloneAnalysis(a *Analysis) *Analysis {
	c := *a
	c.Findings = slices.Clone(a.Findings)
	c.Commands = slices.Clone(a.Commands)
	for i := range c.Commands {
		cmd := &c.Commands[i]
		cmd.Argv = slices.Clone(cmd.Argv)
		cmd.Via = slices.Clone(cmd.Via)
		cmd.Assigns = slices.Clone(cmd.Assigns)
		cmd.Redirs = slices.Clone(cmd.Redirs)
	}
	return &c
}

// TestAnalyzeConcurrent runs many different analyses at once (walkers are
// pooled) and checks each against the same analysis run alone.
func TestAnalyzeConcurrent(t *testing.T) {
	inputs := poolInputs(t)
	want := make([]*Analysis, len(inputs))
	for i, src := range inputs {
		want[i] = cloneAnalysis(Analyze(src))
	}
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker visits the inputs in its own order, so walkers
			// pass between very different analyses.
			for k := range inputs {
				i := (k*(2*g+1) + g*97) % len(inputs)
				if got := Analyze(inputs[i]); !reflect.DeepEqual(got, want[i]) {
					errs <- fmt.Sprintf("worker %d: analysis of %q differs from its sequential result", g, inputs[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestAnalysisNotRecycled checks that an analysis already returned is
// left untouched by the analyses that reuse its walker's memory.
func TestAnalysisNotRecycled(t *testing.T) {
	inputs := poolInputs(t)
	var kept []*Analysis
	var snaps []*Analysis
	for i := 0; i < len(inputs); i += 7 {
		a := Analyze(inputs[i])
		kept = append(kept, a)
		snaps = append(snaps, cloneAnalysis(a))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range inputs {
				Analyze(inputs[(k+g*31)%len(inputs)])
			}
		}()
	}
	wg.Wait()
	for i := range kept {
		if !reflect.DeepEqual(kept[i], snaps[i]) {
			t.Errorf("analysis of %q changed after later analyses", kept[i].Input)
		}
	}
}
