-- 0012: the machine each recorded process runs on (sandbox.MachineID).
-- A store several machines share (PostgreSQL) needs it so that a host
-- fences only its own machine's processes; SQLite gets the same column
-- so both stores keep one interface. Rows recorded before it carry ''
-- and are taken as this machine's (a SQLite state directory is one
-- machine's).

ALTER TABLE processes ADD COLUMN machine TEXT NOT NULL DEFAULT '';

-- A run's records are looked up before it is reclaimed (a run with
-- records left is not retried until they are fenced).
CREATE INDEX processes_run ON processes (run) WHERE run <> '';
