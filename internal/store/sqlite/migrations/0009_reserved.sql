-- 0009 is reserved for another branch (h-sandbox: 0009 processes, h-chat:
-- 0010 chat posts). This placeholder keeps the numbering contiguous on
-- the postgres branch; drop it when the real one is merged.
SELECT 1;
