-- 0007 is reserved for another branch (h-creds). This placeholder keeps
-- the numbering contiguous on the sandbox branch; drop it when the real
-- 0007 is merged.
SELECT 1;
