-- 0008 was reserved while several branches were developed at once and
-- turned out not to be needed. It stays a no-op so that the numbering is
-- contiguous and databases that applied it keep matching.
SELECT 1;
