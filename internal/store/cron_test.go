package store

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestCapOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		cut  bool
	}{
		{"empty", "", false},
		{"at the cap", strings.Repeat("x", CronOutputCap), false},
		{"one over", strings.Repeat("x", CronOutputCap+1), true},
		{"runes", strings.Repeat("é😀", CronOutputCap), true},
		{"huge", strings.Repeat("y", 10*CronOutputCap), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := CapOutput(tc.in)
			if cut != tc.cut || len(got) > CronOutputCap {
				t.Fatalf("cut %v, %d bytes", cut, len(got))
			}
			if !cut {
				if got != tc.in {
					t.Error("changed output that fits")
				}
				return
			}
			if !utf8.ValidString(got) || !strings.Contains(got, "bytes of output omitted") {
				t.Errorf("capped output invalid or without marker")
			}
			i := strings.Index(got, "\n[warden: ")
			j := strings.Index(got, "omitted]\n") + len("omitted]\n")
			head, tail := got[:i], got[j:]
			if !strings.HasPrefix(tc.in, head) || !strings.HasSuffix(tc.in, tail) {
				t.Error("head or tail is not the input's")
			}
			if want := TruncationMarker(int64(len(tc.in) - len(head) - len(tail))); got[i:j] != want {
				t.Errorf("marker %q, want %q", got[i:j], want)
			}
		})
	}
}

func TestCronJobValidate(t *testing.T) {
	ok := CronJob{Name: "a", Schedule: "@daily", Kind: CronScript, Steps: []string{"true"}, Overlap: OverlapSkip, CatchUp: CatchUpOnce, Created: time.Now()}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := ok
	bad.Steps = []string{"true", ""}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "step 2") {
		t.Errorf("empty step 2: %v", err)
	}
}
