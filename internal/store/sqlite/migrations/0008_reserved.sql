-- 0008 is reserved for another branch (h-faults). This placeholder keeps
-- the numbering contiguous on the chat branch; drop it when the real
-- 0008 is merged.
SELECT 1;
