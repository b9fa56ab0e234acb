-- 0002: what the SQLite store gained in its migrations 0009, 0010 and
-- 0012: the processes warden started for agents (fencing after a
-- crash), the sandbox label of every audit record, and where the chat
-- surfaces showed each pending request.
--
-- Unlike SQLite's, a process row here must name its machine: several
-- machines share this table, and a host fences only the rows of its own
-- machine (a pid or boot id means nothing elsewhere).

CREATE TABLE processes (
	id            text PRIMARY KEY,
	spawner       text NOT NULL,
	spawner_pid   bigint NOT NULL,
	spawner_start bigint NOT NULL, -- clock ticks since boot
	machine       text NOT NULL CHECK (machine <> ''),
	boot          text NOT NULL,   -- /proc/sys/kernel/random/boot_id
	pid           bigint NOT NULL,
	start         bigint NOT NULL,
	pgid          bigint NOT NULL,
	sandboxed     boolean NOT NULL,
	owner         text NOT NULL,
	run           text NOT NULL,
	what          text NOT NULL,
	temp_dir      text NOT NULL,
	started       text NOT NULL
);

-- A run's records are looked up before it is reclaimed (a run with
-- records left is not retried until they are fenced).
CREATE INDEX processes_run ON processes (run) WHERE run <> '';

ALTER TABLE audit ADD COLUMN sandbox text NOT NULL DEFAULT '';

CREATE TABLE chat_posts (
	platform text NOT NULL CHECK (platform <> ''),
	request  text NOT NULL CHECK (request <> ''),
	chat     text NOT NULL,
	thread   text NOT NULL DEFAULT '',
	message  text NOT NULL DEFAULT '',
	posted   text NOT NULL,
	PRIMARY KEY (platform, request)
);
