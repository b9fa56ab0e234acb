package host

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/localapi"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/sqlite"
)

// chaosLifecycles is how many request lifecycles, cron runs and kanban
// tasks the chaos test interleaves; chaosKills how often it kills the
// host.
const (
	chaosLifecycles = 200
	chaosKills      = 10
)

// fencing says whether the processes of a dead host's runs are killed
// before their work is retried (internal/sandbox's process records, reaped
// at start). With it, no step left running by a killed host may overlap
// the retry of its work.
const fencing = true

// lifecycle is one request's story as the test saw it.
type lifecycle struct {
	i       int
	id      string // the request, once pending
	plan    string // approve, deny, hangup, expire
	acked   string // "answered" or "denied": the host acknowledged the answer
	ran     bool   // the exec reported the command's exit
	outcome string // the exec's last event, or the client's error
}

// TestChaos is issue 14's chaos test: a real `warden serve`, killed with
// SIGKILL at random points of 200 interleaved request lifecycles (each
// approved, denied, abandoned by its asker or left to expire), cron runs
// and kanban tasks, and restarted each time on the same state. At the
// end (after a clean stop):
//
//   - every request ended exactly once: none is pending, and each has
//     exactly one ask record and one record of its end, which matches
//     how the row ended;
//   - no answer the host acknowledged was lost, and a command ran only
//     if its request was approved, and at most once;
//   - no cron or kanban step overlapped another run of the same job or
//     task (beyond what fencing, when it lands, removes: see fencing);
//   - no cron run or task run is left open;
//   - `warden audit verify` is clean, against the anchor too.
//
// The seed is logged; WARDEN_CHAOS_SEED=N replays one.
func TestChaos(t *testing.T) {
	if testing.Short() && os.Getenv("WARDEN_FULL") != "1" {
		t.Skip("kills and restarts a real warden serve many times; not in -short")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("WARDEN_CHAOS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (WARDEN_CHAOS_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed>>1|1))
	var rngMu sync.Mutex
	intn := func(n int) int { rngMu.Lock(); defer rngMu.Unlock(); return rng.IntN(n) }

	bin := buildWarden(t)
	root := t.TempDir()
	state, scratch, home := filepath.Join(root, "state"), filepath.Join(root, "scratch"), filepath.Join(root, "home")
	work, cronLog, kbLog := filepath.Join(root, "work"), filepath.Join(root, "cronlog"), filepath.Join(root, "kblog")
	mkdir(t, home, work, cronLog, kbLog)
	conf := filepath.Join(root, "config.yaml")
	// The steps' logs lie outside their workspaces: the sandbox must be
	// told they are writable.
	writeFile(t, conf, fmt.Sprintf("approvals:\n  mode: manual\n  timeout: 1\n  cron_mode: approve\n  kanban_mode: approve\nsandbox:\n  writable: [%s, %s]\n", cronLog, kbLog))
	env := hostEnv(home)
	ranLog := filepath.Join(work, "ran.log")
	// A step writes its own file: when it started and when it ended.
	stepCmd := func(dir, name string) string {
		return fmt.Sprintf("f=$(mktemp %s/%s.XXXXXX); date +%%s%%N > $f; sleep 0.05; date +%%s%%N >> $f", dir, name)
	}

	var (
		mu    sync.Mutex
		kills []int64 // when the host was killed (UnixNano)
		host  *proc
		ctl   *localapi.Client
		n     int
	)
	serve := func() {
		t.Helper()
		n++
		p := startProc(t, env, root, filepath.Join(root, fmt.Sprintf("serve-%d.log", n)), bin,
			"serve", "--state", state, "--config", conf, "--scratch", scratch, "--addr", "127.0.0.1:0")
		c := serving(t, p, state, strconv.Itoa(n))
		mu.Lock()
		host, ctl = p, c
		mu.Unlock()
	}
	current := func() *localapi.Client {
		mu.Lock()
		defer mu.Unlock()
		return ctl
	}
	serve()
	for j := range 3 {
		if _, err := ctl.AddCronJob(t.Context(), localapi.CronAddRequest{Name: fmt.Sprintf("j%d", j), Every: "1s", Steps: []string{stepCmd(cronLog, fmt.Sprintf("j%d", j))}}); err != nil {
			t.Fatal(err)
		}
	}

	// The lifecycles, started in waves with a kill after each.
	lcs := make([]*lifecycle, 0, chaosLifecycles)
	var wg sync.WaitGroup
	plans := []string{"approve", "approve", "deny", "hangup", "expire"}
	request := func(lc *lifecycle) {
		ctx, hangUp := context.WithCancel(t.Context())
		defer hangUp()
		c := localapi.NewClient(filepath.Join(state, localapi.SocketName))
		defer c.Close()
		cmd := fmt.Sprintf("rm -rf ./gone%d && echo %d >> %s", lc.i, lc.i, ranLog)
		err := c.Exec(ctx, localapi.ExecRequest{Session: fmt.Sprintf("s%d", lc.i), Command: cmd, Dir: work}, func(e localapi.Event) error {
			mu.Lock()
			lc.outcome = e.Event
			mu.Unlock()
			switch e.Event {
			case localapi.EventPending:
				mu.Lock()
				lc.id = e.ID
				mu.Unlock()
				delay := time.Duration(intn(400)) * time.Millisecond
				go func() {
					time.Sleep(delay)
					switch lc.plan {
					case "approve":
						if _, err := current().Approve(context.Background(), e.ID, localapi.ApproveRequest{}); err == nil {
							mu.Lock()
							lc.acked = "answered"
							mu.Unlock()
						}
					case "deny":
						if _, err := current().Deny(context.Background(), e.ID, localapi.DenyRequest{Reason: "chaos"}); err == nil {
							mu.Lock()
							lc.acked = "denied"
							mu.Unlock()
						}
					case "hangup":
						hangUp()
					}
				}()
			case localapi.EventExit:
				mu.Lock()
				lc.ran = true
				mu.Unlock()
			}
			return nil
		})
		if err != nil {
			mu.Lock()
			lc.outcome = "client: " + err.Error()
			mu.Unlock()
		}
	}
	perWave := chaosLifecycles / chaosKills
	for wave := range chaosKills {
		for k := range perWave {
			i := wave*perWave + k
			switch r := intn(10); {
			case r < 6:
				lc := &lifecycle{i: i, plan: plans[intn(len(plans))]}
				lcs = append(lcs, lc)
				wg.Go(func() { request(lc) })
			case r < 8:
				_, _ = current().RunCronJob(t.Context(), fmt.Sprintf("j%d", intn(3))) // a skip while one runs is fine
			default:
				name := fmt.Sprintf("t%d", i)
				_, _ = current().AddKanbanTask(t.Context(), localapi.KanbanAddRequest{
					Title: name, Workspace: "dir:" + work, Steps: []string{stepCmd(kbLog, name), stepCmd(kbLog, name)},
				})
			}
			time.Sleep(time.Duration(intn(60)) * time.Millisecond)
		}
		time.Sleep(time.Duration(200+intn(1300)) * time.Millisecond)
		// The crash. Reap the host, as init would, then start the next.
		mu.Lock()
		p := host
		mu.Unlock()
		mu.Lock()
		kills = append(kills, time.Now().UnixNano())
		mu.Unlock()
		if err := syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		p.wait(t, 20*time.Second)
		serve()
	}
	wg.Wait()
	// Let the last host finish what is queued (tasks the crashes sent
	// back to ready) before it stops.
	waitFor(t, "the board to settle", func() bool {
		ts, err := current().KanbanTasks(t.Context())
		if err != nil {
			return false
		}
		for _, tk := range ts {
			if tk.Status == store.TaskRunning || tk.Status == store.TaskReady || tk.Status == store.TaskTodo {
				return false
			}
		}
		return true
	})
	if out, err := runWarden(t, bin, env, "audit", "verify", "--state", state); err != nil {
		t.Errorf("warden audit verify with the host running: %v\n%s", err, out)
	}
	if err := host.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := host.wait(t, 30*time.Second); err != nil {
		t.Fatalf("final stop: %v\n%s", err, host.output())
	}
	if out, err := runWarden(t, bin, env, "audit", "verify", "--state", state, "--config", conf); err != nil {
		t.Errorf("warden audit verify without a host: %v\n%s", err, out)
	}

	checkRequests(t, state, lcs, ranLog)
	checkOverlaps(t, "cron job", cronLog, kills)
	checkOverlaps(t, "kanban task", kbLog, kills)
	checkRunsClosed(t, state)
	if t.Failed() {
		for i := 1; i <= n; i++ {
			b, _ := os.ReadFile(filepath.Join(root, fmt.Sprintf("serve-%d.log", i)))
			t.Logf("host %d:\n%s", i, b)
		}
	}
}

func runWarden(t *testing.T, bin string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// rawDB opens the state's database read-only, for queries the store's
// interfaces do not offer (every request, every run).
func rawDB(t *testing.T, state string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.Join(state, DBName), RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// checkRequests: every request ended once, with its records; answers
// acknowledged were kept; commands ran only when approved, at most once.
func checkRequests(t *testing.T, state string, lcs []*lifecycle, ranLog string) {
	t.Helper()
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(state, DBName))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	recs, err := st.Decisions(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byReq := map[string][]store.Decision{}
	for _, d := range recs {
		if d.RequestID != "" {
			byReq[d.RequestID] = append(byReq[d.RequestID], d)
		}
	}
	rows, err := rawDB(t, state).QueryContext(ctx, `SELECT id FROM requests`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	states := map[string]store.State{}
	for _, id := range ids {
		r, err := st.GetRequest(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		states[id] = r.State
		if r.State == store.Pending {
			t.Errorf("request %s is still pending", id)
			continue
		}
		var asks, ends []store.Decision
		for _, d := range byReq[id] {
			if d.Verdict == store.VerdictAsk {
				asks = append(asks, d)
			} else {
				ends = append(ends, d)
			}
		}
		want := store.EndRecord(r)
		switch {
		case len(asks) != 1:
			t.Errorf("request %s: %d ask records, want 1", id, len(asks))
		case len(ends) != 1:
			t.Errorf("request %s (%s): %d records of its end, want 1: %+v", id, r.State, len(ends), ends)
		case ends[0].Verdict != want.Verdict || ends[0].Rule != want.Rule || ends[0].Seq < asks[0].Seq:
			t.Errorf("request %s ended %s (%s), but its record says %s %s", id, r.State, r.Reason, ends[0].Verdict, ends[0].Rule)
		}
	}
	ran := map[int]int{}
	if b, err := os.ReadFile(ranLog); err == nil {
		for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
			if i, err := strconv.Atoi(line); err == nil {
				ran[i]++
			}
		}
	}
	counts := map[string]int{}
	for _, lc := range lcs {
		counts[lc.plan+"/"+string(states[lc.id])]++
		if ran[lc.i] > 1 {
			t.Errorf("lifecycle %d: the command ran %d times", lc.i, ran[lc.i])
		}
		if lc.id == "" {
			if ran[lc.i] > 0 {
				t.Errorf("lifecycle %d ran without a request", lc.i)
			}
			continue
		}
		s, ok := states[lc.id]
		switch {
		case !ok:
			t.Errorf("lifecycle %d: request %s was pending but is not in the store", lc.i, lc.id)
		case lc.acked != "" && string(s) != lc.acked:
			t.Errorf("lifecycle %d: the host acknowledged %s for %s, which ended %s", lc.i, lc.acked, lc.id, s)
		case ran[lc.i] > 0 && s != store.Answered:
			t.Errorf("lifecycle %d: the command ran but %s ended %s", lc.i, lc.id, s)
		case lc.ran && ran[lc.i] == 0:
			t.Errorf("lifecycle %d: the exec reported an exit but nothing ran", lc.i)
		}
	}
	t.Logf("%d requests; plan/end: %v; commands run: %d", len(ids), counts, len(ran))
}

// interval is one step's run, from its own file.
type interval struct {
	name       string
	start, end int64 // end 0: it never finished
}

// checkOverlaps: two runs of one job (task) never run at once. An
// overlap whose earlier run belonged to a host killed before the later
// one began is a leftover of the dead host: fencing removes those; until
// it lands they are reported, not failed.
func checkOverlaps(t *testing.T, what, dir string, kills []int64) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]interval{}
	for _, e := range ents {
		name, _, _ := strings.Cut(e.Name(), ".")
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b))
		iv := interval{name: e.Name()}
		if len(f) > 0 {
			iv.start, _ = strconv.ParseInt(f[0], 10, 64)
		}
		if len(f) > 1 {
			iv.end, _ = strconv.ParseInt(f[1], 10, 64)
		}
		if iv.start == 0 {
			continue // created, not yet stamped: killed at once
		}
		by[name] = append(by[name], iv)
	}
	steps, leftovers := 0, 0
	for name, ivs := range by {
		slices.SortFunc(ivs, func(a, b interval) int { return int(a.start - b.start) })
		steps += len(ivs)
		for i := 1; i < len(ivs); i++ {
			a, b := ivs[i-1], ivs[i]
			if a.end != 0 && a.end < b.start {
				continue
			}
			killed := slices.ContainsFunc(kills, func(k int64) bool { return a.start <= k && k <= b.start })
			// A step stamps its start after it was spawned: one spawned
			// just before a kill may stamp it just after.
			spawnedBeforeKill := slices.ContainsFunc(kills, func(k int64) bool { return a.start-int64(time.Second) <= k && k <= b.start })
			if spawnedBeforeKill && a.end == 0 && fencing {
				// The dead host's step never finished: it died with its
				// host or was fenced before the retry (a survivor would
				// have stamped its end after the retry began, above).
				continue
			}
			if killed && !fencing {
				leftovers++
				continue
			}
			t.Errorf("%s %s: a step started at %d while another (%s) ran from %d to %d", what, name, b.start, a.name, a.start, a.end)
		}
	}
	t.Logf("%s steps: %d; overlaps with a dead host's leftover (need fencing): %d", what, steps, leftovers)
	if steps == 0 {
		t.Errorf("no %s step ran", what)
	}
}

// checkRunsClosed: no cron run or kanban task run is left open.
func checkRunsClosed(t *testing.T, state string) {
	t.Helper()
	db := rawDB(t, state)
	for _, q := range []string{
		`SELECT count(*) FROM cron_runs WHERE status = 'running'`,
		`SELECT count(*) FROM board_runs WHERE status = 'running'`,
	} {
		var n int
		if err := db.QueryRowContext(t.Context(), q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if n != 0 {
			t.Errorf("%s = %d", q, n)
		}
	}
}
