package sqldb

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

const processCols = `id, spawner, spawner_pid, spawner_start, machine, boot, pid, start, pgid,
	sandboxed, owner, run, what, temp_dir, started`

// scanProcess reads the integers as int64, which both engines' integer
// columns scan into (PostgreSQL's are bigint).
func scanProcess(sc codec.Scanner) (store.Process, error) {
	var (
		p                store.Process
		spPID, pid, pgid int64
		spStart, start   int64
		at               string
	)
	if err := sc.Scan(&p.ID, &p.Spawner, &spPID, &spStart, &p.Machine, &p.Boot, &pid, &start, &pgid,
		&p.Sandboxed, &p.Owner, &p.Run, &p.What, &p.TempDir, &at); err != nil {
		return store.Process{}, err
	}
	p.SpawnerPID, p.PID, p.PGID = int(spPID), int(pid), int(pgid)
	p.SpawnerStart, p.Start = uint64(spStart), uint64(start)
	t, err := codec.ParseTime(at)
	if err != nil {
		return store.Process{}, fmt.Errorf("process %s: %w", p.ID, err)
	}
	p.Started = t
	return p, nil
}

// RecordProcess writes p on the write handle, committed durably before
// it returns (SQLite's writer commits with synchronous=FULL, PostgreSQL
// with synchronous_commit on): the record exists before the process is
// let run.
func (b *Base) RecordProcess(ctx context.Context, p store.Process) error {
	at, err := codec.Time(p.Started)
	if err != nil {
		return fmt.Errorf("record process %s: %w", p.ID, err)
	}
	if _, err := b.w.Exec(ctx, `INSERT INTO processes (`+processCols+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Spawner, int64(p.SpawnerPID), int64(p.SpawnerStart), p.Machine, p.Boot, int64(p.PID), int64(p.Start), int64(p.PGID),
		p.Sandboxed, p.Owner, p.Run, p.What, p.TempDir, at); err != nil {
		return fmt.Errorf("record process %s: %w", p.ID, b.note(err))
	}
	return nil
}

// ForgetProcess removes the record id.
func (b *Base) ForgetProcess(ctx context.Context, id string) error {
	if _, err := b.w.Exec(ctx, `DELETE FROM processes WHERE id = ?`, id); err != nil {
		return fmt.Errorf("forget process %s: %w", id, b.note(err))
	}
	return nil
}

// ListProcesses returns every record, of every machine sharing the
// store, oldest first (sandbox.Fence keeps its own machine's).
func (b *Base) ListProcesses(ctx context.Context) ([]store.Process, error) {
	out, err := QueryRows(ctx, b.r, scanProcess, `SELECT `+processCols+` FROM processes ORDER BY started, id`)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", b.note(err))
	}
	return out, nil
}
