-- 0009 is reserved for another branch (h-sandbox). This placeholder keeps
-- the numbering contiguous on the chat branch; drop it when the real
-- 0009 is merged.
SELECT 1;
