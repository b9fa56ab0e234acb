-- 0001: every table of the SQLite store as of its migration 0007, and
-- the leases of the hosts sharing the database.
--
-- Times a caller gives are text in the SQLite store's fixed-width UTC
-- form with nanoseconds ("2006-01-02T15:04:05.000000000Z"): text order
-- is time order, and a time reads back to the nanosecond, which the
-- audit chain's hashes need (timestamptz keeps microseconds). A NULL
-- time is the zero time.Time. JSON columns are text too: they hold the
-- exact bytes the caller gave, which the hashes cover (jsonb would
-- reformat them). Lease times are the server's clock (timestamptz,
-- compared with now()), so the hosts' clocks need not agree.

CREATE TABLE requests (
	id          text PRIMARY KEY,
	session     text NOT NULL,
	owner       text,
	owner_text  text NOT NULL,
	action      text NOT NULL,
	digest      text NOT NULL,
	classes     text NOT NULL,
	analysis    text,
	rule        text NOT NULL,
	created     text NOT NULL,
	deadline    text NOT NULL,
	host        text NOT NULL,
	state       text NOT NULL
		CHECK (state IN ('pending', 'answered', 'denied', 'expired', 'withdrawn')),
	scope       text NOT NULL DEFAULT '',
	grain       text NOT NULL DEFAULT '',
	resolved_by text NOT NULL DEFAULT '',
	surface     text NOT NULL DEFAULT '',
	reason      text NOT NULL DEFAULT '',
	resolved    text,
	elicit      text,
	content     text,
	notice      text NOT NULL DEFAULT '',
	-- ord keeps insertion order among requests created at one instant
	-- (SQLite's rowid).
	ord         bigint GENERATED ALWAYS AS IDENTITY,
	CHECK ((state = 'pending') = (resolved IS NULL))
);

CREATE INDEX requests_session_state ON requests (session, state, created, ord);
CREATE INDEX requests_pending ON requests (created, ord) WHERE state = 'pending';

CREATE TABLE grants (
	id         text PRIMARY KEY,
	scope      text NOT NULL CHECK (scope IN ('session', 'permanent')),
	session    text NOT NULL DEFAULT '',
	grain      text NOT NULL CHECK (grain IN ('exact', 'prefix', 'class')),
	pattern    text NOT NULL,
	granted_by text NOT NULL DEFAULT '',
	surface    text NOT NULL DEFAULT '',
	created    text NOT NULL,
	expires    text,
	ord        bigint GENERATED ALWAYS AS IDENTITY,
	CHECK (scope = 'permanent' OR session <> '')
);

CREATE INDEX grants_scope_session ON grants (scope, session);

CREATE TABLE sessions (
	session    text PRIMARY KEY,
	owner      text,
	owner_text text NOT NULL,
	yolo       boolean NOT NULL DEFAULT false,
	created    text NOT NULL,
	ended      text,
	ord        bigint GENERATED ALWAYS AS IDENTITY
);

-- audit is the hash-chained decision log. seq is assigned by the store
-- (the head's seq + 1, under the audit advisory lock), never by a
-- sequence, so the chain has no gaps.
CREATE TABLE audit (
	seq          bigint PRIMARY KEY CHECK (seq > 0),
	time         text NOT NULL,
	session      text NOT NULL,
	owner        text,
	owner_text   text NOT NULL,
	kind         text NOT NULL,
	payload      text NOT NULL,
	payload_hash text NOT NULL,
	classes      text NOT NULL,
	verdict      text NOT NULL,
	rule         text NOT NULL,
	request_id   text NOT NULL DEFAULT '',
	answered_by  text NOT NULL DEFAULT '',
	surface      text NOT NULL DEFAULT '',
	reason       text NOT NULL DEFAULT '',
	prev         text NOT NULL,
	hash         text NOT NULL
);

CREATE INDEX audit_session ON audit (session, seq);
CREATE INDEX audit_time ON audit (time);

-- The log is append-only through this schema. A role that may drop the
-- trigger can still edit rows; the hash chain and the hosts' anchors
-- are what catch that.
CREATE FUNCTION warden_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'audit is append-only';
END;
$$;

CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit
	FOR EACH STATEMENT EXECUTE FUNCTION warden_audit_append_only();

CREATE TABLE cron_jobs (
	name      text PRIMARY KEY CHECK (name <> ''),
	schedule  text NOT NULL CHECK (schedule <> ''),
	tz        text NOT NULL DEFAULT '',
	kind      text NOT NULL CHECK (kind IN ('script', 'prompt')),
	steps     text NOT NULL,
	overlap   text NOT NULL DEFAULT 'skip' CHECK (overlap IN ('skip', 'allow')),
	catch_up  text NOT NULL DEFAULT 'once' CHECK (catch_up IN ('once', 'skip')),
	enabled   boolean NOT NULL DEFAULT true,
	next_run  text,
	next_slot text NOT NULL DEFAULT '',
	created   text NOT NULL
);

CREATE INDEX cron_jobs_due ON cron_jobs (next_run) WHERE enabled AND next_run IS NOT NULL;

-- UNIQUE (job, slot) makes a slot fire at most once, whichever host
-- claims it (manual and parent runs have no slot: NULLs are distinct).
CREATE TABLE cron_runs (
	id         text PRIMARY KEY,
	job        text NOT NULL REFERENCES cron_jobs (name) ON DELETE CASCADE,
	started_by text NOT NULL CHECK (started_by IN ('schedule', 'catchup', 'manual', 'parent')),
	slot       text,
	scheduled  text,
	started    text NOT NULL,
	finished   text,
	status     text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'skipped')),
	parent     text NOT NULL DEFAULT '',
	host       text NOT NULL DEFAULT '',
	error      text NOT NULL DEFAULT '',
	ord        bigint GENERATED ALWAYS AS IDENTITY,
	CHECK ((status = 'running') = (finished IS NULL)),
	CHECK ((slot IS NULL) = (started_by IN ('manual', 'parent'))),
	UNIQUE (job, slot)
);

CREATE INDEX cron_runs_job ON cron_runs (job, started);
CREATE INDEX cron_runs_started ON cron_runs (started);
CREATE INDEX cron_runs_running ON cron_runs (job) WHERE status = 'running';

CREATE TABLE cron_steps (
	run       text NOT NULL REFERENCES cron_runs (id) ON DELETE CASCADE,
	n         integer NOT NULL CHECK (n >= 0),
	command   text NOT NULL,
	verdict   text NOT NULL,
	rule      text NOT NULL,
	exit_code integer NOT NULL,
	output    text NOT NULL,
	started   text NOT NULL,
	finished  text NOT NULL,
	PRIMARY KEY (run, n)
);

CREATE TABLE board_tasks (
	id         text PRIMARY KEY,
	title      text NOT NULL,
	body       text NOT NULL DEFAULT '',
	status     text NOT NULL
		CHECK (status IN ('todo', 'ready', 'running', 'blocked', 'review', 'done')),
	workspace  text NOT NULL
		CHECK (workspace = 'scratch' OR workspace LIKE 'dir:/%'),
	script     text NOT NULL,
	retries    integer NOT NULL DEFAULT 0 CHECK (retries >= 0),
	last_error text NOT NULL DEFAULT '',
	run        text NOT NULL DEFAULT '',
	created    text NOT NULL,
	updated    text NOT NULL,
	prompt     text NOT NULL DEFAULT '',
	CHECK ((status = 'running') = (run <> ''))
);

CREATE INDEX board_tasks_status ON board_tasks (status, id);

CREATE TABLE board_deps (
	task   text NOT NULL REFERENCES board_tasks (id),
	parent text NOT NULL REFERENCES board_tasks (id),
	PRIMARY KEY (task, parent),
	CHECK (task <> parent)
);

CREATE INDEX board_deps_parent ON board_deps (parent, task);

CREATE TABLE board_comments (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	task    text NOT NULL REFERENCES board_tasks (id),
	author  text NOT NULL,
	body    text NOT NULL,
	created text NOT NULL
);

CREATE INDEX board_comments_task ON board_comments (task, id);

-- A run's claim may carry a lease (holder, lease): a claimer that stops
-- renewing it loses the task to whoever reclaims expired runs.
CREATE TABLE board_runs (
	id       text PRIMARY KEY,
	task     text NOT NULL REFERENCES board_tasks (id),
	status   text NOT NULL
		CHECK (status IN ('running', 'succeeded', 'failed', 'blocked')),
	started  text NOT NULL,
	finished text,
	error    text NOT NULL DEFAULT '',
	log      text NOT NULL DEFAULT '',
	pid      integer NOT NULL DEFAULT 0 CHECK (pid >= 0),
	holder   text NOT NULL DEFAULT '',
	lease    timestamptz,
	CHECK ((status = 'running') = (finished IS NULL))
);

CREATE INDEX board_runs_task ON board_runs (task, started);
CREATE UNIQUE INDEX board_runs_open ON board_runs (task) WHERE status = 'running';
CREATE INDEX board_runs_lease ON board_runs (lease) WHERE status = 'running' AND lease IS NOT NULL;

CREATE TABLE board_steps (
	run       text NOT NULL REFERENCES board_runs (id),
	n         integer NOT NULL CHECK (n >= 0),
	command   text NOT NULL,
	verdict   text NOT NULL,
	rule      text NOT NULL,
	exit_code integer NOT NULL,
	output    text NOT NULL,
	started   text NOT NULL,
	finished  text NOT NULL,
	PRIMARY KEY (run, n)
);

CREATE TABLE board_tokens (
	hash    text PRIMARY KEY,
	task    text NOT NULL REFERENCES board_tasks (id),
	run     text NOT NULL REFERENCES board_runs (id),
	created text NOT NULL,
	expires text NOT NULL,
	used    text
);

CREATE INDEX board_tokens_run ON board_tokens (run);

CREATE TABLE messages (
	conversation text NOT NULL,
	seq          bigint NOT NULL,
	message      text NOT NULL,
	created      text NOT NULL,
	PRIMARY KEY (conversation, seq)
);

CREATE TABLE credentials (
	id        text PRIMARY KEY,
	kind      text NOT NULL CHECK (kind IN ('login', 'session', 'token')),
	hash      text NOT NULL UNIQUE CHECK (length(hash) = 64),
	name      text NOT NULL DEFAULT '',
	scopes    text NOT NULL DEFAULT '[]',
	parent    text NOT NULL DEFAULT '',
	issued_by text NOT NULL,
	remote    text NOT NULL DEFAULT '',
	created   text NOT NULL,
	expires   text NOT NULL,
	used      text,
	revoked   text,
	ord       bigint GENERATED ALWAYS AS IDENTITY
);

CREATE INDEX credentials_kind ON credentials (kind, created, ord);

-- hosts: one row per process sharing the database, alive while its
-- lease (server clock) is ahead. A reaper deletes expired rows; a host
-- whose row is gone has lost its lease and must stop.
CREATE TABLE hosts (
	id      text PRIMARY KEY CHECK (id <> ''),
	started timestamptz NOT NULL DEFAULT now(),
	renewed timestamptz NOT NULL DEFAULT now(),
	expires timestamptz NOT NULL,
	addr    text NOT NULL DEFAULT ''
);
