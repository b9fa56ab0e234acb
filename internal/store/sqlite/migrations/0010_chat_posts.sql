-- 0010: where the chat surfaces (Discord, Slack, Telegram) showed each
-- pending request. A row is claimed before the message is sent, so a
-- request is posted once per platform even across restarts; message is
-- set once sent, and the row is dropped when the message shows how the
-- request ended. Rows whose request ended while the host was down are
-- edited and dropped at the next start.

CREATE TABLE chat_posts (
	platform TEXT NOT NULL CHECK (platform <> ''),
	request  TEXT NOT NULL CHECK (request <> ''),
	chat     TEXT NOT NULL,
	thread   TEXT NOT NULL DEFAULT '',
	message  TEXT NOT NULL DEFAULT '',
	posted   TEXT NOT NULL,
	PRIMARY KEY (platform, request)
) STRICT;
