package sqlite

import (
	"context"
	"fmt"

	"github.com/wardenhq/warden/internal/store"
)

var _ store.Processes = (*DB)(nil)

// RecordProcess writes p on the writer (synchronous=FULL): the record
// is on disk before the process is let run.
func (db *DB) RecordProcess(ctx context.Context, p store.Process) error {
	at, err := encTime(p.Started)
	if err != nil {
		return fmt.Errorf("record process %s: %w", p.ID, err)
	}
	if _, err := db.w.ExecContext(ctx, `INSERT INTO processes
		(id, spawner, spawner_pid, spawner_start, machine, boot, pid, start, pgid, sandboxed, owner, run, what, temp_dir, started)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Spawner, p.SpawnerPID, int64(p.SpawnerStart), p.Machine, p.Boot, p.PID, int64(p.Start), p.PGID,
		p.Sandboxed, p.Owner, p.Run, p.What, p.TempDir, at); err != nil {
		return fmt.Errorf("record process %s: %w", p.ID, err)
	}
	return nil
}

// ForgetProcess removes the record id.
func (db *DB) ForgetProcess(ctx context.Context, id string) error {
	if _, err := db.w.ExecContext(ctx, `DELETE FROM processes WHERE id = ?`, id); err != nil {
		return fmt.Errorf("forget process %s: %w", id, err)
	}
	return nil
}

// ListProcesses returns every record, oldest first.
func (db *DB) ListProcesses(ctx context.Context) ([]store.Process, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, spawner, spawner_pid, spawner_start, machine, boot, pid, start, pgid,
		sandboxed, owner, run, what, temp_dir, started FROM processes ORDER BY started, id`)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	defer rows.Close()
	var out []store.Process
	for rows.Next() {
		var (
			p              store.Process
			spStart, start int64
			at             string
		)
		if err := rows.Scan(&p.ID, &p.Spawner, &p.SpawnerPID, &spStart, &p.Machine, &p.Boot, &p.PID, &start, &p.PGID,
			&p.Sandboxed, &p.Owner, &p.Run, &p.What, &p.TempDir, &at); err != nil {
			return nil, fmt.Errorf("list processes: %w", err)
		}
		p.SpawnerStart, p.Start = uint64(spStart), uint64(start)
		if p.Started, err = decTime(at); err != nil {
			return nil, fmt.Errorf("list processes: %s: %w", p.ID, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	return out, nil
}
