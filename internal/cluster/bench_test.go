package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenhq/warden/internal/action"
	"github.com/wardenhq/warden/internal/broker"
	"github.com/wardenhq/warden/internal/cron"
	"github.com/wardenhq/warden/internal/owner"
	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/postgres"
	"github.com/wardenhq/warden/internal/store/postgres/pgtest"
)

// The measurements of docs/multi-host.md. Each "host" is a store of its
// own (its own connection pool, committer and listener) on one
// PostgreSQL schema, in this process; the hosts talk only through the
// database, as separate warden serve processes do.

type surface string

func (s surface) Surface() string { return string(s) }

func webOwner(b testing.TB, key string) owner.Owner {
	o, err := owner.Gateway("web", key, "")
	if err == nil {
		o, err = o.WithSession(key)
	}
	if err == nil {
		o, err = o.WithChannel(surface("web"))
	}
	if err != nil {
		b.Fatal(err)
	}
	return o
}

func openHosts(b testing.TB, n int) []*postgres.DB {
	url := pgtest.Schema(b)
	var dbs []*postgres.DB
	for i := range n {
		db, err := postgres.Open(context.Background(), url, postgres.Options{Origin: fmt.Sprintf("h%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		dbs = append(dbs, db)
	}
	return dbs
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// BenchmarkCrossHostWake: a waiter on host B, an answer on host A; the
// time from A's Resolve call to B's Ask returning (LISTEN/NOTIFY, then
// B reads the row). Reports the median and p99.
func BenchmarkCrossHostWake(b *testing.B) {
	dbs := openHosts(b, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bA := broker.New(broker.Options{Requests: dbs[0], Grants: dbs[0], Host: "h0", Timeout: time.Hour})
	bB := broker.New(broker.Options{Requests: dbs[1], Grants: dbs[1], Host: "h1", Timeout: time.Hour})
	defer bA.Close(context.Background(), "done")
	defer bB.Close(context.Background(), "done")
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _ = dbs[1].WatchRequests(ctx, func(c store.Change) { bB.Notice(ctx, c) }) })
	time.Sleep(200 * time.Millisecond) // the listener is up
	o := webOwner(b, "s")
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		created := make(chan string, 1)
		done := make(chan time.Time, 1)
		go func() {
			r, err := bB.Ask(ctx, broker.Question{Owner: broker.Notifying(o, func(r store.Request) { created <- r.ID }),
				Action: action.NewShell(fmt.Sprintf("rm -rf ./x%d", i)).In("/tmp")})
			if err != nil || r.State != store.Answered {
				b.Errorf("ask: %v %s", err, r.State)
			}
			done <- time.Now()
		}()
		id := <-created
		start := time.Now()
		if _, err := bA.Resolve(ctx, id, broker.Answer{Approve: true, By: "bench", Surface: "web"}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-done).Sub(start))
	}
	b.StopTimer()
	b.ReportMetric(float64(quantile(lat, 0.5).Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(quantile(lat, 0.99).Microseconds())/1000, "p99-ms")
}

// BenchmarkDecisions: durable audit appends (each decision's record,
// committed before the action may run) from 1, 2 and 3 hosts on one
// database, 16 writers per host. Reports decisions per second.
func BenchmarkDecisions(b *testing.B) {
	for _, n := range []int{1, 2, 3} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			dbs := openHosts(b, n)
			var next atomic.Int64
			b.SetParallelism(16 * n)
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				db := dbs[int(next.Add(1))%n]
				for pb.Next() {
					if _, err := db.AppendDecision(context.Background(), store.Decision{Session: "s", Verdict: "allow", Rule: "bench", Payload: "true"}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
		})
	}
}

// BenchmarkCronDelay: 10,000 jobs due at one instant, claimed by 3
// hosts' claim loops (each ClaimDue as its scheduler calls it, then
// again until nothing is due). Reports the median and p99 of the time
// from a slot's due time to the return of the claim that took it.
func BenchmarkCronDelay(b *testing.B) {
	const jobs = 10000
	for range b.N {
		dbs := openHosts(b, 3)
		ctx := context.Background()
		// Far enough ahead that the jobs are all in before they fall due.
		due := time.Now().Add(30 * time.Second)
		for i := range jobs {
			j, err := cron.Prepare(store.CronJob{Name: fmt.Sprintf("j%05d", i), Schedule: "0 0 1 1 *", Steps: []string{"true"}, Enabled: true}, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			j.NextRun, j.NextSlot = due, "slot"
			if err := dbs[0].AddCronJob(ctx, j); err != nil {
				b.Fatal(err)
			}
		}
		plan := cron.Plan(time.Minute)
		var (
			mu   sync.Mutex
			lags []time.Duration
			wg   sync.WaitGroup
		)
		if time.Now().After(due) {
			b.Fatal("adding the jobs took longer than the margin")
		}
		time.Sleep(time.Until(due))
		for h, db := range dbs {
			wg.Go(func() {
				for {
					runs, err := db.ClaimDue(ctx, time.Now(), fmt.Sprintf("h%d", h), plan)
					if err != nil {
						b.Error(err)
						return
					}
					// A run fires when its claim returns (the scheduler
					// launches it then).
					fired := time.Now()
					mu.Lock()
					for _, r := range runs {
						lags = append(lags, fired.Sub(r.Scheduled))
					}
					mu.Unlock()
					if len(runs) == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		if len(lags) != jobs {
			b.Fatalf("%d runs, want %d", len(lags), jobs)
		}
		b.ReportMetric(float64(quantile(lags, 0.5).Milliseconds()), "median-ms")
		b.ReportMetric(float64(quantile(lags, 0.99).Milliseconds()), "p99-ms")
	}
}
