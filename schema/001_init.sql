-- 001_init.sql -- migration 1: the daemon's store (assemblies, jobs, results).
--
-- Applied by server/store.c inside BEGIN IMMEDIATE, followed by
-- PRAGMA user_version = 1 in the same transaction. Do not edit once released:
-- schema changes go into a new file NNN_name.sql (next number).
--
-- Conventions: ids are TEXT ("a_"/"j_"/"r_" + hex); times are unix seconds
-- (REAL, 0 = unset); a REAL column is NULL exactly when the value was NaN
-- (SQLite stores NaN as NULL; the store reads NULL back as NaN). Vectors are
-- BLOBs so that they round-trip bit for bit (-0.0 included).

CREATE TABLE assemblies (
    id              TEXT PRIMARY KEY NOT NULL,
    content_hash    TEXT NOT NULL,
    name            TEXT NOT NULL DEFAULT '',
    joint           TEXT NOT NULL CHECK (joint IN ('simple', 'sandwich')),
    n               INTEGER NOT NULL,
    m               INTEGER NOT NULL,
    n_parts         INTEGER NOT NULL,
    n_nodes         INTEGER NOT NULL,
    n_fast          INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('precomputing', 'ready', 'failed')),
    err_code        TEXT NOT NULL DEFAULT '',
    err_field       TEXT NOT NULL DEFAULT '',
    err_msg         TEXT NOT NULL DEFAULT '',
    t_factor_k      REAL,
    t_build_q       REAL,
    t_loads         REAL,
    t_factor_q      REAL,
    t_cond          REAL,
    t_total         REAL,
    cond_k          REAL,
    cond_q          REAL,
    created_at      REAL,
    ready_at        REAL,
    factor_checksum TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX assemblies_hash ON assemblies (content_hash, created_at);
CREATE INDEX assemblies_created ON assemblies (created_at);

CREATE TABLE jobs (
    id              TEXT PRIMARY KEY NOT NULL,
    assembly_id     TEXT NOT NULL REFERENCES assemblies (id) ON DELETE CASCADE,
    status          TEXT NOT NULL
                    CHECK (status IN ('queued', 'running', 'done', 'cancelled', 'failed')),
    total           INTEGER NOT NULL,
    done            INTEGER NOT NULL DEFAULT 0,
    failed          INTEGER NOT NULL DEFAULT 0,
    options_json    TEXT,
    created_at      REAL,
    started_at      REAL,
    finished_at     REAL,
    solve_time_sum  REAL,
    iterations_sum  INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX jobs_assembly ON jobs (assembly_id, created_at);
CREATE INDEX jobs_status ON jobs (status);

-- One row per solve. job_id is NULL for a single solve (job_index -1).
-- w: BLOB of m little-endian doubles; lam: BLOB of packed (int32 index,
-- double value) little-endian pairs, 12 bytes each, for the entries whose bit
-- pattern is not +0.0, indices strictly increasing. Both NULL when not stored.
-- The vectors are the last columns so that reading the scalar columns does
-- not touch their overflow pages.
CREATE TABLE results (
    id              TEXT PRIMARY KEY NOT NULL,
    assembly_id     TEXT NOT NULL REFERENCES assemblies (id) ON DELETE CASCADE,
    job_id          TEXT REFERENCES jobs (id) ON DELETE CASCADE,
    job_index       INTEGER NOT NULL DEFAULT -1,
    cache_key       TEXT NOT NULL,
    status          TEXT NOT NULL,
    method          TEXT NOT NULL DEFAULT '',
    form            TEXT NOT NULL DEFAULT '',
    auto_chosen     INTEGER NOT NULL DEFAULT 0,
    warm_used       INTEGER NOT NULL DEFAULT 0,
    n_act           INTEGER NOT NULL DEFAULT 0,
    iterations      INTEGER NOT NULL DEFAULT 0,
    cg_iterations   INTEGER NOT NULL DEFAULT 0,
    time            REAL,
    kkt_primal_infeas   REAL,
    kkt_dual_infeas     REAL,
    kkt_complementarity REAL,
    kkt_stationarity    REAL,
    kkt_gap             REAL,
    kkt_obj_primal      REAL,
    kkt_pass        INTEGER NOT NULL DEFAULT 0,
    m               INTEGER NOT NULL,
    created_at      REAL,
    w               BLOB,
    lam             BLOB
) STRICT;
CREATE UNIQUE INDEX results_job_index ON results (job_id, job_index) WHERE job_id IS NOT NULL;
CREATE INDEX results_key ON results (assembly_id, cache_key, created_at);
