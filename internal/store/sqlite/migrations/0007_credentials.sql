-- 0007: credentials warden issues — one-time console login links,
-- console sessions (the cookie a used link sets) and API tokens. Only
-- the SHA-256 of each secret is kept: reading this table gives nothing
-- that authenticates. A row is revoked by setting revoked; a used login
-- link has used set, once.

CREATE TABLE credentials (
	id       TEXT PRIMARY KEY,
	kind     TEXT NOT NULL CHECK (kind IN ('login', 'session', 'token')),
	hash     TEXT NOT NULL UNIQUE CHECK (length(hash) = 64),
	name     TEXT NOT NULL DEFAULT '',
	scopes   TEXT NOT NULL DEFAULT '[]',  -- JSON array
	parent   TEXT NOT NULL DEFAULT '',
	issued_by TEXT NOT NULL,
	remote   TEXT NOT NULL DEFAULT '',
	created  TEXT NOT NULL,
	expires  TEXT NOT NULL,
	used     TEXT,
	revoked  TEXT
) STRICT;

CREATE INDEX credentials_kind ON credentials (kind, created);
