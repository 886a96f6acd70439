-- 006_assembly_deleting.sql -- migration 6: deletes that a stop interrupted.
--
-- DELETE /v1/assemblies/{id} removes the assembly's results a few hundred
-- rows per transaction (the store stays answering meanwhile), then its jobs
-- and its row. deleting is set to 1, in a transaction of its own, before the
-- first batch: a daemon stopped (or killed) in the middle finds the mark at
-- its next start and finishes the delete before it serves anything, instead
-- of keeping an assembly whose ended jobs count results that are gone.
-- Rows written before this migration read 0.
ALTER TABLE assemblies ADD COLUMN deleting INTEGER NOT NULL DEFAULT 0;
