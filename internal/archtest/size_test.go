package archtest

import (
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestReleaseSize builds warden and warden-hook as released and reports,
// with -v, what each module adds to warden: the bytes of its functions
// (.text), its read-only data (.rodata) and its share of the function
// tables (.gopclntab, split in proportion to .text), from a build with
// symbols. It fails when a release binary outgrows its budget, so a
// dependency that adds megabytes is a decision, not an accident.
//
//	go test ./internal/archtest -run TestReleaseSize -v
func TestReleaseSize(t *testing.T) {
	flags, ldflags := linuxRelease(t)
	dir := t.TempDir()
	// Budgets: the sizes when they were set (docs/performance.md), with
	// room to grow a little; warden's was raised from 52 to 56 MiB when
	// the PostgreSQL store (pgx) and the Prometheus metrics landed (+5 MB).
	for _, c := range []struct {
		pkg    string
		budget int64
	}{{"./cmd/warden", 56 << 20}, {"./cmd/warden-hook", 9 << 20}} {
		out := filepath.Join(dir, filepath.Base(c.pkg))
		goBuild(t, out, c.pkg, flags, ldflags)
		st, err := os.Stat(out)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %.1f MB release build", filepath.Base(c.pkg), float64(st.Size())/(1<<20))
		if st.Size() > c.budget {
			t.Errorf("%s is %.1f MB, over its %.0f MB budget: see docs/performance.md before raising it", c.pkg, float64(st.Size())/(1<<20), float64(c.budget)/(1<<20))
		}
	}
	sym := filepath.Join(dir, "warden.sym")
	goBuild(t, sym, "./cmd/warden", flags, "")
	sizes, err := moduleSizes(sym)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, s := range sizes {
		total += s.bytes
	}
	t.Logf("%-48s %9s %6s", "module", "MB", "share")
	for _, s := range sizes {
		if s.bytes >= 100<<10 {
			t.Logf("%-48s %9.2f %5.1f%%", s.module, float64(s.bytes)/(1<<20), 100*float64(s.bytes)/float64(total))
		}
	}
	if total == 0 || sizes[0].bytes == 0 {
		t.Fatal("no symbol sizes read")
	}
}

type moduleSize struct {
	module string
	bytes  int64
}

// moduleSizes attributes the .text, .rodata and .gopclntab bytes of an
// unstripped Go binary to modules ("std" for the standard library and
// the runtime), largest first.
func moduleSizes(path string) ([]moduleSize, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return nil, err
	}
	mods := []string{bi.Main.Path}
	for _, d := range bi.Deps {
		mods = append(mods, d.Path)
	}
	// Longest first, so a nested module wins over its parent.
	slices.SortFunc(mods, func(a, b string) int { return len(b) - len(a) })
	moduleOf := func(sym string) string {
		sym = strings.TrimPrefix(strings.TrimPrefix(sym, "type:"), "go:itab.")
		if i := strings.IndexAny(sym, "[("); i >= 0 {
			sym = sym[:i] // generic instantiations and methods
		}
		for _, m := range mods {
			if strings.HasPrefix(sym, m+".") || strings.HasPrefix(sym, m+"/") {
				return m
			}
		}
		return "std"
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	sec := func(name string) (int, *elf.Section) {
		for i, s := range f.Sections {
			if s.Name == name {
				return i, s
			}
		}
		return -1, nil
	}
	textIdx, text := sec(".text")
	rodataIdx, _ := sec(".rodata")
	_, pcln := sec(".gopclntab")
	if text == nil || pcln == nil {
		return nil, fmt.Errorf("%s: no .text or .gopclntab", path)
	}
	textBy, by := map[string]int64{}, map[string]int64{}
	var textTotal int64
	for _, s := range syms {
		if s.Size == 0 {
			continue
		}
		switch int(s.Section) {
		case textIdx:
			m := moduleOf(s.Name)
			textBy[m] += int64(s.Size)
			by[m] += int64(s.Size)
			textTotal += int64(s.Size)
		case rodataIdx:
			by[moduleOf(s.Name)] += int64(s.Size)
		}
	}
	for m, n := range textBy {
		by[m] += int64(float64(pcln.Size) * float64(n) / float64(textTotal))
	}
	out := make([]moduleSize, 0, len(by))
	for m, n := range by {
		out = append(out, moduleSize{m, n})
	}
	slices.SortFunc(out, func(a, b moduleSize) int { return int(b.bytes - a.bytes) })
	return out, nil
}
