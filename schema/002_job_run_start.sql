-- 002_job_run_start.sql -- migration 2: a job's solves counted from its last start.
--
-- A job resumed after a restart gets started_at = the restart time; its
-- throughput must count only the gaps solved since then. done_at_start is
-- the job's done count when it last became 'running' (0 for a fresh job).
ALTER TABLE jobs ADD COLUMN done_at_start INTEGER NOT NULL DEFAULT 0;
