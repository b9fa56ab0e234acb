-- 0006: kanban tasks of kind prompt: a non-empty prompt makes the
-- worker run the agent with it instead of a script.

ALTER TABLE board_tasks ADD COLUMN prompt TEXT NOT NULL DEFAULT '';
