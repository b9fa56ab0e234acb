-- 0002: cron jobs, their runs and the runs' steps.
--
-- Times are stored as in 0001. A job's next_run is when it is next due
-- (NULL: never again) and next_slot that slot's de-duplication key; the
-- scheduler claims a due job by advancing both and inserting a run in
-- one immediate transaction.

CREATE TABLE cron_jobs (
	name      TEXT PRIMARY KEY CHECK (name <> ''),
	schedule  TEXT NOT NULL CHECK (schedule <> ''),
	tz        TEXT NOT NULL DEFAULT '',
	kind      TEXT NOT NULL CHECK (kind IN ('script')),
	steps     TEXT NOT NULL,  -- JSON array of shell command lines
	overlap   TEXT NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'allow')),
	catch_up  TEXT NOT NULL DEFAULT 'once' CHECK (catch_up IN ('once', 'skip')),
	enabled   INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
	next_run  TEXT,
	next_slot TEXT NOT NULL DEFAULT '',
	created   TEXT NOT NULL
) STRICT;

-- The scheduler's two questions, "which jobs are due" and "when is the
-- next one", read this index only.
CREATE INDEX cron_jobs_due ON cron_jobs (next_run) WHERE enabled = 1 AND next_run IS NOT NULL;

-- A run is for one slot of its job's schedule (slot, scheduled) or for
-- nobody's schedule (manual and parent runs: slot NULL). UNIQUE (job,
-- slot) makes a slot fire at most once, whoever claims it.
CREATE TABLE cron_runs (
	id         TEXT PRIMARY KEY,
	job        TEXT NOT NULL REFERENCES cron_jobs (name) ON DELETE CASCADE,
	started_by TEXT NOT NULL CHECK (started_by IN ('schedule', 'catchup', 'manual', 'parent')),
	slot       TEXT,
	scheduled  TEXT,
	started    TEXT NOT NULL,
	finished   TEXT,
	status     TEXT NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
	parent     TEXT NOT NULL DEFAULT '',
	host       TEXT NOT NULL DEFAULT '',
	error      TEXT NOT NULL DEFAULT '',
	CHECK ((status = 'running') = (finished IS NULL)),
	CHECK ((slot IS NULL) = (started_by IN ('manual', 'parent'))),
	UNIQUE (job, slot)
) STRICT;

CREATE INDEX cron_runs_job ON cron_runs (job, started);
CREATE INDEX cron_runs_started ON cron_runs (started);
CREATE INDEX cron_runs_running ON cron_runs (job) WHERE status = 'running';

CREATE TABLE cron_steps (
	run       TEXT NOT NULL REFERENCES cron_runs (id) ON DELETE CASCADE,
	n         INTEGER NOT NULL CHECK (n >= 0),
	command   TEXT NOT NULL,
	verdict   TEXT NOT NULL,
	rule      TEXT NOT NULL,
	exit_code INTEGER NOT NULL,
	output    TEXT NOT NULL,
	started   TEXT NOT NULL,
	finished  TEXT NOT NULL,
	PRIMARY KEY (run, n)
) STRICT;
