-- 0009: the processes warden started for agents, recorded before they
-- run and removed once reaped (fencing after a crash), and the sandbox
-- mode every audit record was written under.

CREATE TABLE processes (
	id            TEXT PRIMARY KEY,
	spawner       TEXT NOT NULL,
	spawner_pid   INTEGER NOT NULL,
	spawner_start INTEGER NOT NULL, -- clock ticks since boot
	boot          TEXT NOT NULL,    -- /proc/sys/kernel/random/boot_id
	pid           INTEGER NOT NULL,
	start         INTEGER NOT NULL,
	pgid          INTEGER NOT NULL,
	sandboxed     INTEGER NOT NULL CHECK (sandboxed IN (0, 1)),
	owner         TEXT NOT NULL,
	run           TEXT NOT NULL,
	what          TEXT NOT NULL,
	temp_dir      TEXT NOT NULL,
	started       TEXT NOT NULL
) STRICT;

ALTER TABLE audit ADD COLUMN sandbox TEXT NOT NULL DEFAULT '';
