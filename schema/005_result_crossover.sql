-- 005_result_crossover.sql -- migration 5: results finished by a crossover.
--
-- crossover is 1 when GI relative finished the solve from the contact set of
-- the method that was asked for, because that method's own iteration cycled
-- (Newton projection at its stall cap, GI dual at its polish cap;
-- docs/solvers.md). The answer is certified like every other; the flag says
-- which algorithm produced it. Rows written before this migration read 0.
ALTER TABLE results ADD COLUMN crossover INTEGER NOT NULL DEFAULT 0;
