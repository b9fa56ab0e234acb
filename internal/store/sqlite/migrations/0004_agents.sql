-- 0004: MCP elicitations as requests, and the agents' conversations.
--
-- An elicitation is a request whose question comes from an MCP server
-- (elicit: JSON {server, message, schema, url}); the human's accepted
-- form values are content (JSON object).

ALTER TABLE requests ADD COLUMN elicit TEXT;   -- JSON, NULL for approvals
ALTER TABLE requests ADD COLUMN content TEXT;  -- JSON object, NULL unless accepted

-- One row per message of an agent conversation, in order. conversation
-- is the owner's session key (or a run's id for cron and kanban runs);
-- message is llm.Message JSON.
CREATE TABLE messages (
	conversation TEXT NOT NULL,
	seq          INTEGER NOT NULL,
	message      TEXT NOT NULL,
	created      TEXT NOT NULL,
	PRIMARY KEY (conversation, seq)
) STRICT;
