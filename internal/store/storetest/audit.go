package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/store"
)

// decision is an audit record fixture, before AppendDecision.
func decision(session, verdict string, at time.Time, payload string) store.Decision {
	sum := sha256.Sum256([]byte(payload))
	return store.Decision{
		Time:        at,
		Session:     session,
		Owner:       json.RawMessage(`{"kind": "web", "session": "` + session + `"}`),
		OwnerText:   "web:" + session,
		Kind:        action.Shell,
		Payload:     payload,
		PayloadHash: hex.EncodeToString(sum[:]),
		Classes:     []string{"delete.recursive"},
		Verdict:     verdict,
		Rule:        "ask.attended",
		RequestID:   "req-" + payload,
		By:          "ann",
		Surface:     "web",
	}
}

func normDecision(d store.Decision) store.Decision {
	d.Time = utc(d.Time)
	return d
}

func seqs(ds []store.Decision) []int64 {
	out := make([]int64, 0, len(ds))
	for _, d := range ds {
		out = append(out, d.Seq)
	}
	return out
}

func appendAll(t *testing.T, s store.Store, ds []store.Decision) []store.Decision {
	t.Helper()
	out := make([]store.Decision, 0, len(ds))
	for _, d := range ds {
		got, err := s.AppendDecision(t.Context(), d)
		must(t, "AppendDecision", err)
		out = append(out, got)
	}
	return out
}

// filterLog is six records over two sessions and three verdicts, a
// minute apart.
func filterLog() []store.Decision {
	return []store.Decision{
		decision("a", "allow", base, "d1"),
		decision("b", "deny", base.Add(1*time.Minute), "d2"),
		decision("a", "ask", base.Add(2*time.Minute), "d3"),
		decision("a", "deny", base.Add(3*time.Minute), "d4"),
		decision("b", "allow", base.Add(4*time.Minute), "d5"),
		decision("a", "allow", base.Add(5*time.Minute), "d6"),
	}
}

var auditTests = []test{
	{"append chains", func(t *testing.T, s store.Store) {
		in := filterLog()[:3]
		in[1].Seq, in[1].Prev, in[1].Hash = 99, "forged", "forged" // the store assigns these
		got := appendAll(t, s, in)
		prev := ""
		for i, d := range got {
			if d.Seq != int64(i+1) {
				t.Errorf("record %d: Seq %d, want %d", i, d.Seq, i+1)
			}
			if d.Prev != prev {
				t.Errorf("seq %d: Prev %q, want %q", d.Seq, d.Prev, prev)
			}
			if d.Hash != store.ChainHash(d) || d.Hash == "" {
				t.Errorf("seq %d: Hash %q, want ChainHash %q", d.Seq, d.Hash, store.ChainHash(d))
			}
			want := in[i]
			want.Seq, want.Prev, want.Hash = d.Seq, d.Prev, d.Hash
			same(t, fmt.Sprintf("seq %d", d.Seq), normDecision(d), normDecision(want))
			prev = d.Hash
		}
	}},
	{"read back as appended", func(t *testing.T, s store.Store) {
		in := filterLog()[:5]
		in[0].Time = base.In(elsewhere)
		in[1].Classes = nil
		in[2].Classes = []string{}
		in[3].Owner = nil
		in[3].Payload = "printf '<%s>' \"héllo\" && echo \u2028 done"
		in[4].Owner = json.RawMessage{}
		in[4].Kind = action.MCP
		appended := appendAll(t, s, in)
		got, err := s.Decisions(t.Context(), store.AuditFilter{})
		must(t, "Decisions", err)
		same(t, "Decisions", got, appended) // AppendDecision returns UTC times, as stored
		for _, d := range got {
			if store.ChainHash(d) != d.Hash {
				t.Errorf("seq %d: read back, it no longer hashes to its Hash", d.Seq)
			}
		}
		if len(got) == 5 {
			if !got[0].Time.Equal(in[0].Time) {
				t.Errorf("Time %v, want %v", got[0].Time, in[0].Time)
			}
			if got[1].Classes != nil || got[2].Classes == nil {
				t.Errorf("classes nil/empty came back as %#v/%#v", got[1].Classes, got[2].Classes)
			}
		}
	}},
	{"zero time means now", func(t *testing.T, s store.Store) {
		before := time.Now()
		d, err := s.AppendDecision(t.Context(), decision("a", "allow", time.Time{}, "x"))
		must(t, "AppendDecision", err)
		if d.Time.Before(before.Add(-time.Second)) || d.Time.After(time.Now().Add(time.Second)) {
			t.Errorf("Time %v, want about now (%v)", d.Time, before)
		}
		if _, err := s.VerifyChain(t.Context()); err != nil {
			t.Error(err)
		}
	}},
	{"filter", func(t *testing.T, s store.Store) {
		appendAll(t, s, filterLog())
		for _, tc := range []struct {
			name string
			f    store.AuditFilter
			want []int64
		}{
			{"everything", store.AuditFilter{}, []int64{1, 2, 3, 4, 5, 6}},
			{"session", store.AuditFilter{Session: "a"}, []int64{1, 3, 4, 6}},
			{"unknown session", store.AuditFilter{Session: "zz"}, []int64{}},
			{"since is inclusive", store.AuditFilter{Since: base.Add(2 * time.Minute)}, []int64{3, 4, 5, 6}},
			{"since in another zone", store.AuditFilter{Since: base.Add(2 * time.Minute).In(elsewhere)}, []int64{3, 4, 5, 6}},
			{"since between records", store.AuditFilter{Since: base.Add(2*time.Minute + time.Nanosecond)}, []int64{4, 5, 6}},
			{"verdict", store.AuditFilter{Verdict: "deny"}, []int64{2, 4}},
			{"limit keeps the newest", store.AuditFilter{Limit: 2}, []int64{5, 6}},
			{"limit above the count", store.AuditFilter{Limit: 100}, []int64{1, 2, 3, 4, 5, 6}},
			{"session and verdict", store.AuditFilter{Session: "a", Verdict: "allow"}, []int64{1, 6}},
			{"all four", store.AuditFilter{Session: "a", Since: base.Add(time.Minute), Verdict: "deny", Limit: 1}, []int64{4}},
			{"session, since and limit", store.AuditFilter{Session: "a", Since: base.Add(time.Minute), Limit: 2}, []int64{4, 6}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := s.Decisions(t.Context(), tc.f)
				must(t, "Decisions", err)
				same(t, "seqs", seqs(got), tc.want)
			})
		}
	}},
	{"sandbox label kept and hashed", func(t *testing.T, s store.Store) {
		d := decision("a", "allow", base, "x")
		d.Sandbox = "workspace-write"
		got, err := s.AppendDecision(t.Context(), d)
		must(t, "AppendDecision", err)
		if got.Sandbox != "workspace-write" {
			t.Errorf("appended record's Sandbox = %q, want workspace-write", got.Sandbox)
		}
		want := []string{"workspace-write"}
		// A store that labels records itself (the host sets the label
		// once its sandbox exists) labels those that carry none, and
		// keeps a record's own label.
		if l, ok := s.(interface{ SetSandboxLabel(string) }); ok {
			l.SetSandboxLabel("read-only")
			_, err := s.AppendDecision(t.Context(), decision("a", "deny", base.Add(time.Second), "y"))
			must(t, "AppendDecision", err)
			d := decision("a", "deny", base.Add(2*time.Second), "z")
			d.Sandbox = "off"
			_, err = s.AppendDecision(t.Context(), d)
			must(t, "AppendDecision", err)
			want = append(want, "read-only", "off")
		}
		log, err := s.Decisions(t.Context(), store.AuditFilter{})
		must(t, "Decisions", err)
		var labels []string
		for _, d := range log {
			labels = append(labels, d.Sandbox)
		}
		same(t, "sandbox labels", labels, want)
		if n, err := s.VerifyChain(t.Context()); err != nil || n != len(want) {
			t.Errorf("VerifyChain = %d, %v; want %d, nil", n, err, len(want))
		}
	}},
	{"verify", func(t *testing.T, s store.Store) {
		n, err := s.VerifyChain(t.Context())
		if n != 0 || err != nil {
			t.Errorf("VerifyChain of an empty log = %d, %v; want 0, nil", n, err)
		}
		appendAll(t, s, filterLog())
		n, err = s.VerifyChain(t.Context())
		if n != 6 || err != nil {
			t.Errorf("VerifyChain = %d, %v; want 6, nil", n, err)
		}
	}},
	{"append refuses an owner that is not JSON", func(t *testing.T, s store.Store) {
		d := decision("a", "deny", base, "x")
		d.Owner = json.RawMessage(`{"kind":`)
		if _, err := s.AppendDecision(t.Context(), d); err == nil {
			t.Error("AppendDecision with a broken owner: no error")
		}
		got, err := s.Decisions(t.Context(), store.AuditFilter{})
		must(t, "Decisions", err)
		if len(got) != 0 {
			t.Errorf("the refused record was stored: %v", seqs(got))
		}
	}},
	{"concurrent appends keep one chain", func(t *testing.T, s store.Store) {
		const writers, each = 8, 50
		ctx := t.Context()
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					d := decision(fmt.Sprintf("s%d", w), "allow", base.Add(time.Duration(i)*time.Second), fmt.Sprintf("w%d-%d", w, i))
					if _, err := s.AppendDecision(ctx, d); err != nil {
						t.Errorf("writer %d append %d: %v", w, i, err)
						return
					}
				}
			})
		}
		wg.Wait()
		n, err := s.VerifyChain(ctx)
		if n != writers*each || err != nil {
			t.Fatalf("VerifyChain = %d, %v; want %d, nil", n, err, writers*each)
		}
		got, err := s.Decisions(ctx, store.AuditFilter{})
		must(t, "Decisions", err)
		next := map[string]int{}
		for i, d := range got {
			if d.Seq != int64(i+1) {
				t.Fatalf("record %d has seq %d", i, d.Seq)
			}
			var w, k int
			if _, err := fmt.Sscanf(d.Payload, "w%d-%d", &w, &k); err != nil {
				t.Fatalf("seq %d: payload %q", d.Seq, d.Payload)
			}
			if key := fmt.Sprint(w); k != next[key] {
				t.Errorf("writer %d's append %d is at seq %d, after its append %d", w, k, d.Seq, next[key]-1)
			} else {
				next[key]++
			}
		}
	}},
}

// tamperCases edit the log behind the store's back; VerifyChain must
// name badSeq after checking the records before it.
var tamperCases = []struct {
	name    string
	tamper  func(t *testing.T, tm Tamperer, log []store.Decision)
	badSeq  int64
	checked int
}{
	{"payload edited", rewrite(2, func(d *store.Decision, _ []store.Decision) { d.Payload = "ls" }), 3, 2},
	{"verdict edited and rehashed", rewrite(2, func(d *store.Decision, _ []store.Decision) {
		d.Verdict = "allow"
		d.Hash = store.ChainHash(*d)
	}), 4, 3},
	{"time moved", rewrite(1, func(d *store.Decision, _ []store.Decision) { d.Time = d.Time.Add(-time.Hour) }), 2, 1},
	{"answering human changed", rewrite(4, func(d *store.Decision, _ []store.Decision) { d.By = "mallory" }), 5, 4},
	{"owner changed", rewrite(0, func(d *store.Decision, _ []store.Decision) { d.Owner = json.RawMessage(`{"kind":"cron"}`) }), 1, 0},
	{"owner made unreadable", rewrite(3, func(d *store.Decision, _ []store.Decision) { d.Owner = json.RawMessage(`{"kind":`) }), 4, 3},
	{"sandbox label changed", rewrite(2, func(d *store.Decision, _ []store.Decision) { d.Sandbox = "off" }), 3, 2},
	{"prev relinked", rewrite(3, func(d *store.Decision, log []store.Decision) { d.Prev = log[1].Hash }), 4, 3},
	{"first deleted", deleteSeq(1), 1, 0},
	{"middle deleted", deleteSeq(3), 3, 2},
}

// rewrite tampers with the log by rewriting its record i as edit leaves
// it (edit sees the whole log).
func rewrite(i int, edit func(d *store.Decision, log []store.Decision)) func(t *testing.T, tm Tamperer, log []store.Decision) {
	return func(t *testing.T, tm Tamperer, log []store.Decision) {
		d := log[i]
		edit(&d, log)
		must(t, "RewriteDecision", tm.RewriteDecision(t.Context(), d))
	}
}

// deleteSeq tampers with the log by deleting the record seq.
func deleteSeq(seq int64) func(t *testing.T, tm Tamperer, log []store.Decision) {
	return func(t *testing.T, tm Tamperer, _ []store.Decision) {
		must(t, "DeleteDecision", tm.DeleteDecision(t.Context(), seq))
	}
}

// tamperTests are tamperCases as tests, one fresh store each; they are
// skipped for a store that is not a Tamperer.
func tamperTests() []test {
	var out []test
	for _, tc := range tamperCases {
		out = append(out, test{"tampering: " + tc.name, func(t *testing.T, s store.Store) {
			tm, ok := s.(Tamperer)
			if !ok {
				t.Skipf("%T does not implement storetest.Tamperer", s)
			}
			log := appendAll(t, s, filterLog())
			tc.tamper(t, tm, log)
			n, err := s.VerifyChain(t.Context())
			chainBroken(t, err, tc.badSeq)
			if n != tc.checked {
				t.Errorf("VerifyChain checked %d records before the break, want %d", n, tc.checked)
			}
		}})
	}
	return out
}

// chainBroken fails t unless err wraps store.ErrChainBroken and names
// seq.
func chainBroken(t *testing.T, err error, seq int64) {
	t.Helper()
	if !errors.Is(err, store.ErrChainBroken) {
		t.Fatalf("VerifyChain = %v, want ErrChainBroken", err)
	}
	if want := fmt.Sprintf("seq %d:", seq); !strings.Contains(err.Error(), want) {
		t.Errorf("VerifyChain error %q does not name %q", err, want)
	}
}
