// Package cron runs scheduled jobs in the host.
//
// Schedules are cron specs read with the robfig/cron/v3 parser (its
// parser only) and a DST-aware Next of this package's own (see
// Schedule.Next). Due times live in the store: each job keeps its next
// run, and one Scheduler loop claims due runs atomically
// (store.CronStore.ClaimDue), so a restarted host knows what it missed
// and two hosts sharing a store never fire one slot twice. Claimed runs
// wait in a queue for a bounded pool of workers (Options.Workers), and
// each executes for at most Options.RunTimeout, so a burst of due jobs
// starts no more processes at once than the pool allows and a job that
// hangs frees its worker.
//
// Every run executes with exactly one thing in its context: its own
// owner, cron(job, run) with session "cron:JOB:RUN" (and, for a run a
// kanban worker asked for, that worker as parent). Nothing about the
// run is kept in the environment or in package state, so concurrent
// runs and the chat sessions beside them cannot see each other
// (DESIGN.md invariants 1 and 4); the gate decides every step as that
// owner, under cron_mode (invariant 5 along a lineage).
package cron
