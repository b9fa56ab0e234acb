-- 0011: leases. A kanban run's claim may carry a lease (holder, lease):
-- a claimer that stops renewing it loses the task to whoever reclaims
-- expired runs. hosts keeps the leases of the processes sharing the
-- store (the PostgreSQL store's table; SQLite hosts share one machine
-- and tell a dead neighbour by its process id instead, but the store
-- keeps the same interface).

ALTER TABLE board_runs ADD COLUMN holder TEXT NOT NULL DEFAULT '';
ALTER TABLE board_runs ADD COLUMN lease TEXT;

CREATE INDEX board_runs_lease ON board_runs (lease) WHERE status = 'running' AND lease IS NOT NULL;

CREATE TABLE hosts (
	id      TEXT PRIMARY KEY CHECK (id <> ''),
	started TEXT NOT NULL,
	renewed TEXT NOT NULL,
	expires TEXT NOT NULL,
	addr    TEXT NOT NULL DEFAULT ''
) STRICT;
