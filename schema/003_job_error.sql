-- 003_job_error.sql -- migration 3: why a job failed.
--
-- A failed job keeps the reason it stopped (the message of the error that
-- ended it, without file paths or SQL texts; the log has those, under the
-- error id the message names). NULL for a job that did not fail.
ALTER TABLE jobs ADD COLUMN error TEXT;
