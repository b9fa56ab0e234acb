-- 0001: requests, grants, sessions and the audit chain.
--
-- Times are UTC text in a fixed-width RFC 3339 form with nanoseconds
-- ("2006-01-02T15:04:05.000000000Z"), so text order is time order. A
-- NULL time is the zero time.time. JSON columns hold the exact bytes
-- the caller gave (owner, analysis) or encoding/json output (action,
-- classes).

CREATE TABLE requests (
	id          TEXT PRIMARY KEY,
	session     TEXT NOT NULL,
	owner       TEXT,           -- JSON
	owner_text  TEXT NOT NULL,
	action      TEXT NOT NULL,  -- JSON (action.Action)
	digest      TEXT NOT NULL,
	classes     TEXT NOT NULL,  -- JSON array, or null
	analysis    TEXT,           -- JSON
	rule        TEXT NOT NULL,
	created     TEXT NOT NULL,
	deadline    TEXT NOT NULL,
	host        TEXT NOT NULL,
	state       TEXT NOT NULL
		CHECK (state IN ('pending', 'answered', 'denied', 'expired', 'withdrawn')),
	scope       TEXT NOT NULL DEFAULT '',
	grain       TEXT NOT NULL DEFAULT '',
	resolved_by TEXT NOT NULL DEFAULT '',
	surface     TEXT NOT NULL DEFAULT '',
	reason      TEXT NOT NULL DEFAULT '',
	resolved    TEXT,
	CHECK ((state = 'pending') = (resolved IS NULL))
) STRICT;

CREATE INDEX requests_session_state ON requests (session, state, created);
CREATE INDEX requests_state ON requests (state, created);

CREATE TABLE grants (
	id         TEXT PRIMARY KEY,
	scope      TEXT NOT NULL CHECK (scope IN ('session', 'permanent')),
	session    TEXT NOT NULL DEFAULT '',
	grain      TEXT NOT NULL CHECK (grain IN ('exact', 'prefix', 'class')),
	pattern    TEXT NOT NULL,
	granted_by TEXT NOT NULL DEFAULT '',
	surface    TEXT NOT NULL DEFAULT '',
	created    TEXT NOT NULL,
	expires    TEXT,
	CHECK (scope = 'permanent' OR session <> '')
) STRICT;

CREATE INDEX grants_scope_session ON grants (scope, session);

CREATE TABLE sessions (
	session    TEXT PRIMARY KEY,
	owner      TEXT,            -- JSON
	owner_text TEXT NOT NULL,
	yolo       INTEGER NOT NULL DEFAULT 0 CHECK (yolo IN (0, 1)),
	created    TEXT NOT NULL,
	ended      TEXT
) STRICT;

-- audit is the hash-chained decision log. seq is assigned by the store
-- (last seq + 1 inside one immediate transaction), never by AUTOINCREMENT.
CREATE TABLE audit (
	seq          INTEGER PRIMARY KEY CHECK (seq > 0),
	time         TEXT NOT NULL,
	session      TEXT NOT NULL,
	owner        TEXT,          -- JSON
	owner_text   TEXT NOT NULL,
	kind         TEXT NOT NULL,
	payload      TEXT NOT NULL,
	payload_hash TEXT NOT NULL,
	classes      TEXT NOT NULL, -- JSON array, or null
	verdict      TEXT NOT NULL,
	rule         TEXT NOT NULL,
	request_id   TEXT NOT NULL DEFAULT '',
	answered_by  TEXT NOT NULL DEFAULT '',
	surface      TEXT NOT NULL DEFAULT '',
	reason       TEXT NOT NULL DEFAULT '',
	prev         TEXT NOT NULL,
	hash         TEXT NOT NULL
) STRICT;

CREATE INDEX audit_session ON audit (session, seq);
CREATE INDEX audit_time ON audit (time);

-- The log is append-only through this schema. Someone who edits the
-- file directly can drop these triggers; the hash chain is what
-- catches that.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
	SELECT RAISE(ABORT, 'audit is append-only');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
	SELECT RAISE(ABORT, 'audit is append-only');
END;
