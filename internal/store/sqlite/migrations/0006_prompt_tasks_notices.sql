-- 0006: kanban tasks of kind prompt (a non-empty prompt makes the
-- worker run the agent with it instead of a script), and a request's
-- notice: what warden must tell the human with the question (the
-- security reviewer fell back to manual).

ALTER TABLE board_tasks ADD COLUMN prompt TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN notice TEXT NOT NULL DEFAULT '';
