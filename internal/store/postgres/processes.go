package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
	"github.com/wardenhq/warden/internal/store/codec"
)

var _ store.Processes = (*DB)(nil)

const processCols = `id, spawner, spawner_pid, spawner_start, machine, boot, pid, start, pgid,
	sandboxed, owner, run, what, temp_dir, started`

func scanProcess(sc scanner) (store.Process, error) {
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

// RecordProcess writes p durably (the server commits with
// synchronous_commit on) before it returns: the record exists before
// the process is let run. A record must name its machine: hosts on
// other machines share this table.
func (db *DB) RecordProcess(ctx context.Context, p store.Process) error {
	if p.Machine == "" {
		return fmt.Errorf("record process %s: %w", p.ID, errors.New("no machine (a shared store's records must say where their process runs)"))
	}
	at, err := codec.Time(p.Started)
	if err != nil {
		return fmt.Errorf("record process %s: %w", p.ID, err)
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO processes (`+processCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
		p.ID, p.Spawner, int64(p.SpawnerPID), int64(p.SpawnerStart), p.Machine, p.Boot, int64(p.PID), int64(p.Start), int64(p.PGID),
		p.Sandboxed, p.Owner, p.Run, p.What, p.TempDir, at); err != nil {
		return fmt.Errorf("record process %s: %w", p.ID, db.noteConn(err))
	}
	return nil
}

// ForgetProcess removes the record id.
func (db *DB) ForgetProcess(ctx context.Context, id string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM processes WHERE id = $1`, id); err != nil {
		return fmt.Errorf("forget process %s: %w", id, db.noteConn(err))
	}
	return nil
}

// ListProcesses returns every record of every machine, oldest first
// (sandbox.Fence keeps its own machine's).
func (db *DB) ListProcesses(ctx context.Context) ([]store.Process, error) {
	out, err := queryRows(ctx, db.pool, scanProcess, `SELECT `+processCols+` FROM processes ORDER BY started, id`)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", db.noteConn(err))
	}
	return out, nil
}
