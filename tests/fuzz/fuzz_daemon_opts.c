/*
 * fuzz_daemon_opts.c -- fuzz target for gapsimd's command line
 * (server/opts.h: gsd_opts_parse over the defaults of gsd_opts_defaults, as
 * the daemon calls it). The input is the argv words, one a line
 * (fuzz_argv.h). Nothing is opened, listened on or written.
 * Properties:
 *   - no crash; the answer is 0 (go on), 1 (help) or 2 (error, with a
 *     non-empty one-line message of printable bytes);
 *   - help only when -h or a --help word is there;
 *   - accepted: every number in its documented range (port [0, 65535],
 *     workers [1, 256], http-threads [1, 64], max-body >= 1024, timeouts
 *     >= 1 s, default-timeout <= max-timeout, log level 0-2, retain age
 *     [0, 36500] days ...), every text NUL-terminated within its field,
 *     --tls-cert and --tls-key both or neither; no word left unread;
 *   - reading is deterministic (twice the same answer, message and values).
 */
#include <math.h>
#include <string.h>

#include "fuzz_argv.h"
#include "gs_fuzz.h"
#include "opts.h"

const char *const gs_fuzz_target = "daemon_opts";
const char *const gs_fuzz_dict[] = {
    "\n", "=", "--addr", "--port", "--data-dir", "--web-dir", "--workers", "--http-threads",
    "--max-body", "--max-upload", "--max-m", "--max-n", "--max-gaps", "--timeout", "--log-level",
    "--help", "-h", "--max-archive-entries", "--max-fe-dofs", "--default-timeout",
    "--max-timeout", "--header-timeout", "--max-connections", "--max-per-ip", "--allow-host",
    "--token-file", "--min-free", "--reset", "--store-quota-mb", "--retain-solves-age",
    "--retain-solves-max", "--tls-cert", "--tls-key", "--summary-cache-mb", "--factor-cache-mb",
    "--max-loaded-mb", "0", "1", "-1", "65536", "86400", "1e3", "0.5", "1099511627776", "*",
    NULL};

static int has_help(const fz_argv *w)
{
    for (int i = 1; i < w->argc; i++)
        if (!strcmp(w->argv[i], "-h") || !strcmp(w->argv[i], "--help"))
            return 1;
    return 0;
}

#define TERMINATED(field) GS_FUZZ_ASSERT(memchr(field, '\0', sizeof field) != NULL)

static void check_accepted(const gsd_opts *o)
{
    TERMINATED(o->addr);
    TERMINATED(o->data_dir);
    TERMINATED(o->web_dir);
    TERMINATED(o->allow_hosts);
    TERMINATED(o->token_file);
    TERMINATED(o->tls_cert);
    TERMINATED(o->tls_key);
    GS_FUZZ_ASSERT(o->port >= 0 && o->port <= 65535);
    GS_FUZZ_ASSERT(o->workers >= 1 && o->workers <= 256);
    GS_FUZZ_ASSERT(o->http_threads >= 1 && o->http_threads <= 64);
    GS_FUZZ_ASSERT(o->max_body >= 1024 && o->max_upload >= 1024);
    GS_FUZZ_ASSERT(o->max_archive_entries >= 1 && o->max_m >= 1 && o->max_n >= 1);
    GS_FUZZ_ASSERT(o->max_fe_dofs >= 1 && o->max_gaps >= 1);
    GS_FUZZ_ASSERT(o->default_timeout >= 1 && o->default_timeout <= o->max_timeout &&
                   o->max_timeout <= 86400);
    GS_FUZZ_ASSERT(o->conn_timeout >= 1 && o->header_timeout >= 1);
    GS_FUZZ_ASSERT(o->max_connections >= 1 && o->max_per_ip >= 0);
    GS_FUZZ_ASSERT(o->log_level >= 0 && o->log_level <= 2);
    GS_FUZZ_ASSERT(o->retain_age_days >= 0 && o->retain_age_days <= 36500);
    GS_FUZZ_ASSERT(o->min_free_mb >= 0 && o->store_quota_mb >= 0 && o->retain_max >= 0);
    GS_FUZZ_ASSERT(o->summary_cache_mb >= 0 && o->factor_cache_mb >= 0 && o->max_loaded_mb >= 0);
    GS_FUZZ_ASSERT(o->reset == 0 || o->reset == 1);
    GS_FUZZ_ASSERT(!o->tls_cert[0] == !o->tls_key[0]);
}

int gs_fuzz_one(const uint8_t *data, size_t size)
{
    static gsd_opts defaults, a, b; /* ~17 KB each */
    static int ready;
    if (!ready) {
        gsd_opts_defaults(&defaults);
        ready = 1;
    }
    fz_argv w;
    fz_argv_split(data, size, "gapsimd", &w);
    char msg[512], msg2[512];
    a = defaults;
    b = defaults;
    const int rc = gsd_opts_parse(w.argc, w.argv, &a, msg, sizeof msg);
    GS_FUZZ_ASSERT(gsd_opts_parse(w.argc, w.argv, &b, msg2, sizeof msg2) == rc);
    GS_FUZZ_ASSERT(!memcmp(&a, &b, sizeof a) && !strcmp(msg, msg2));
    GS_FUZZ_ASSERT(rc == 0 || rc == 1 || rc == 2);
    if (rc == 1)
        GS_FUZZ_ASSERT(has_help(&w));
    if (rc == 2) {
        GS_FUZZ_ASSERT(msg[0] != '\0');
        for (const char *c = msg; *c; c++)
            GS_FUZZ_ASSERT((unsigned char)*c >= 0x20 && *c != 0x7f);
    }
    if (rc == 0)
        check_accepted(&a);
    fz_argv_free(&w);
    return rc == 0;
}
