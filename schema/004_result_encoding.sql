-- 004_result_encoding.sql -- migration 4: compressed result vectors, retention.
--
-- w_enc / lam_enc say how the BLOB in w / lam is encoded (server/vecenc.h):
--   0  the raw form of 001_init.sql (w: m little-endian doubles; lam: packed
--      (int32 index, double value) little-endian pairs, 12 bytes each, for
--      the entries whose bit pattern is not +0.0, indices increasing);
--   1  one zstd frame (content size in its header) of that raw form with its
--      bytes shuffled: byte b of element i at offset b * n + i, for n
--      elements of 8 bytes (w) or 12 bytes (lam).
-- Rows written before this migration keep 0 (the DEFAULT) and read as they
-- were; a vector that zstd does not shrink is also stored with 0. Both are
-- lossless: decoding gives back every double's bit pattern.
--
-- results_single: the single solves and cache entries (job_id NULL) by age,
-- for the retention sweep (--retain-solves-age / --retain-solves-max), which
-- deletes them oldest first in small batches.
ALTER TABLE results ADD COLUMN w_enc INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN lam_enc INTEGER NOT NULL DEFAULT 0;
CREATE INDEX results_single ON results (created_at) WHERE job_id IS NULL;
