-- 0005: cron jobs of kind 'prompt' (an agent run; steps holds the one
-- prompt). SQLite cannot change a CHECK constraint in place, so the
-- table is rebuilt with foreign keys off (cron_runs reference it).
-- warden:rebuild

CREATE TABLE cron_jobs_new (
	name      TEXT PRIMARY KEY CHECK (name <> ''),
	schedule  TEXT NOT NULL CHECK (schedule <> ''),
	tz        TEXT NOT NULL DEFAULT '',
	kind      TEXT NOT NULL CHECK (kind IN ('script', 'prompt')),
	steps     TEXT NOT NULL,  -- JSON array: shell command lines, or [prompt]
	overlap   TEXT NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'allow')),
	catch_up  TEXT NOT NULL DEFAULT 'once' CHECK (catch_up IN ('once', 'skip')),
	enabled   INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
	next_run  TEXT,
	next_slot TEXT NOT NULL DEFAULT '',
	created   TEXT NOT NULL
) STRICT;

INSERT INTO cron_jobs_new SELECT name, schedule, tz, kind, steps, overlap, catch_up, enabled, next_run, next_slot, created FROM cron_jobs;
DROP TABLE cron_jobs;
ALTER TABLE cron_jobs_new RENAME TO cron_jobs;
CREATE INDEX cron_jobs_due ON cron_jobs (next_run) WHERE enabled = 1 AND next_run IS NOT NULL;
