-- 0003: the kanban board — tasks, dependencies, comments, runs with their
-- steps, and one-time worker tokens.
--
-- Times are UTC text as in 0001. Task moves are checked against
-- store.TaskTransitions by the Go code inside the transaction that
-- writes them; the CHECKs below only keep the columns well-formed.

CREATE TABLE board_tasks (
	id         TEXT PRIMARY KEY,
	title      TEXT NOT NULL,
	body       TEXT NOT NULL DEFAULT '',
	status     TEXT NOT NULL
		CHECK (status IN ('todo', 'ready', 'running', 'blocked', 'review', 'done')),
	workspace  TEXT NOT NULL
		CHECK (workspace = 'scratch' OR workspace LIKE 'dir:/%'),
	script     TEXT NOT NULL,            -- JSON array of command lines
	retries    INTEGER NOT NULL DEFAULT 0 CHECK (retries >= 0),
	last_error TEXT NOT NULL DEFAULT '',
	run        TEXT NOT NULL DEFAULT '', -- the open run while running
	created    TEXT NOT NULL,
	updated    TEXT NOT NULL,
	CHECK ((status = 'running') = (run <> ''))
) STRICT;

CREATE INDEX board_tasks_status ON board_tasks (status, id);

-- board_deps: task waits for parent. A task's parents are fixed when it
-- is added and must exist then, so the graph has no cycles.
CREATE TABLE board_deps (
	task   TEXT NOT NULL REFERENCES board_tasks (id),
	parent TEXT NOT NULL REFERENCES board_tasks (id),
	PRIMARY KEY (task, parent),
	CHECK (task <> parent)
) STRICT, WITHOUT ROWID;

CREATE INDEX board_deps_parent ON board_deps (parent, task);

CREATE TABLE board_comments (
	id      INTEGER PRIMARY KEY,
	task    TEXT NOT NULL REFERENCES board_tasks (id),
	author  TEXT NOT NULL,
	body    TEXT NOT NULL,
	created TEXT NOT NULL
) STRICT;

CREATE INDEX board_comments_task ON board_comments (task, id);

CREATE TABLE board_runs (
	id       TEXT PRIMARY KEY,
	task     TEXT NOT NULL REFERENCES board_tasks (id),
	status   TEXT NOT NULL
		CHECK (status IN ('running', 'succeeded', 'failed', 'blocked')),
	started  TEXT NOT NULL,
	finished TEXT,
	error    TEXT NOT NULL DEFAULT '',
	log      TEXT NOT NULL DEFAULT '',
	pid      INTEGER NOT NULL DEFAULT 0 CHECK (pid >= 0),
	CHECK ((status = 'running') = (finished IS NULL))
) STRICT;

CREATE INDEX board_runs_task ON board_runs (task, started);
-- At most one open run per task, whatever the code does.
CREATE UNIQUE INDEX board_runs_open ON board_runs (task) WHERE status = 'running';

-- board_steps has the columns of cron_steps: a task run's steps read
-- like a cron run's.
CREATE TABLE board_steps (
	run       TEXT NOT NULL REFERENCES board_runs (id),
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

-- board_tokens keeps the hash of each worker token, never the secret.
CREATE TABLE board_tokens (
	hash    TEXT PRIMARY KEY,
	task    TEXT NOT NULL REFERENCES board_tasks (id),
	run     TEXT NOT NULL REFERENCES board_runs (id),
	created TEXT NOT NULL,
	expires TEXT NOT NULL,
	used    TEXT
) STRICT, WITHOUT ROWID;

CREATE INDEX board_tokens_run ON board_tokens (run);
