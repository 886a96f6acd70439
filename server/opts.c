/*
 * opts.c -- gapsimd's options: defaults, reading, help (opts.h).
 */
#include "opts.h"

#include <string.h>
#include <unistd.h>

#include "memlimit.h"
#include "numarg.h"

void gsd_opts_usage(FILE *f)
{
    fprintf(f,
            "usage: gapsimd [options]\n"
            "Serve gapsim's REST API (docs/api.md): assemblies, solves, gap clouds.\n\n"
            "  --addr A          listen address (default 127.0.0.1)\n"
            "  --port P          TCP port (default 8600; 0 = any free port)\n"
            "  --data-dir D      database, models, factors, cloud inputs (default ./gapsim-data)\n"
            "  --web-dir D       static files of the web page (default: the source tree's\n"
            "                    clients/web; \"\" disables)\n"
            "  --workers N       solver threads (default: online cores)\n"
            "  --http-threads N  connection threads (default 2); as many reader threads\n"
            "                    compute job summaries\n"
            "  --max-body B      largest JSON body in bytes (default 268435456)\n"
            "  --max-upload B    largest .npy / multipart / archive upload in bytes, also the\n"
            "                    unpacked size of an archive (default 17179869184)\n"
            "  --max-archive-entries N  most files and directories in an uploaded model\n"
            "                    archive (default 10000)\n"
            "  --max-m M         most contact pairs per assembly (default 20000)\n"
            "  --max-n N         most unknowns in dense (condensed) blocks per assembly\n"
            "                    (default 50000); one part's block: at most\n"
            "                    min(N^2, 20000^2) elements (a sparse file's stored entries)\n"
            "  --max-fe-dofs N   most DOFs of sparse whole-mesh parts per assembly,\n"
            "                    condensed by gapsim (default 2000000)\n"
            "  --default-timeout S  time limit of a solve whose request gives no timeout_s\n"
            "                    (default 600; a cloud: of each gap's solve)\n"
            "  --max-timeout S   the largest timeout_s a request may ask (default 3600)\n"
            "  --max-gaps K      most gaps per cloud (default 1000000)\n"
            "  --timeout S       idle connection timeout in seconds (default 120); also\n"
            "                    the time a kept-alive connection has for its next headers\n"
            "  --header-timeout S  deadline from accept for a new connection's complete\n"
            "                    request headers (default 10; then --timeout applies)\n"
            "  --max-connections N  connections served at once; above, new requests get\n"
            "                    503 with Retry-After (default 4096)\n"
            "  --max-per-ip N    connections per client address (default 0: no limit)\n"
            "  --token-file F    require bearer tokens: lines \"read TOKEN\" or \"write TOKEN\"\n"
            "  --tls-cert F      serve HTTPS (libmicrohttpd with GnuTLS) with this PEM\n"
            "                    certificate (chain); needs --tls-key\n"
            "  --tls-key F       the PEM private key of --tls-cert (unencrypted)\n"
            "  --min-free MB     MiB kept free in the data directory: below, uploads and\n"
            "                    clouds get 507, /healthz says degraded (default 256)\n"
            "  --store-quota-mb MB  most MiB the database (pages in use) and the data\n"
            "                    directory's files may take: above, the oldest single solves\n"
            "                    are deleted, then uploads, clouds and new solves get 507 and\n"
            "                    /healthz says degraded (default 0: no quota)\n"
            "  --retain-solves-age DAYS  delete single-solve results (and the cache they\n"
            "                    form) older than DAYS, oldest first; cloud job results are\n"
            "                    kept (default 0: keep; fractions allowed)\n"
            "  --retain-solves-max N  keep at most the N newest single-solve results\n"
            "                    (default 0: no limit)\n"
            "  --summary-cache-mb MB  MiB of ended jobs' summaries kept in memory, so a\n"
            "                    summary or export is computed once (default 64; 0: off)\n"
            "  --factor-cache-mb MB  MiB per assembly of contact-set factors kept for warm\n"
            "                    starts from stored solutions: the moves of a pattern search\n"
            "                    copy the factor the first one built (default 256; 0: off)\n"
            "  --max-loaded-mb MB  MiB the assemblies in memory (model, factors, factor\n"
            "                    cache) may take: above, idle ones whose factors are saved are\n"
            "                    unloaded, least recently used first, and loaded again from\n"
            "                    their saved factors when next used; an upload that would\n"
            "                    take more alone is refused (413) (default half the\n"
            "                    memory gapsimd may use: physical, cgroup limit, ulimit -v\n"
            "                    or -d, the smallest; 0: no limit)\n"
            "  --reset           discard the data directory's store, assemblies and jobs at\n"
            "                    start (needed to start over a lost or damaged database)\n"
            "  --allow-host H    a Host name to accept besides IP literals and localhost\n"
            "                    (repeatable or comma-separated; \"*\": any, no DNS-rebinding\n"
            "                    protection)\n"
            "  --log-level L     0 errors, 1 info (default), 2 debug (every request)\n"
            "  -h, --help        this text\n"
            "Options are written in full, as --name value or --name=value.\n"
            "On start it prints \"gapsimd: listening on http://ADDR:PORT\" (https:// with\n"
            "--tls-cert) to stdout.\n");
}

/* An integer option in [lo, hi] (range: the bounds, for the message). */
static int in_range(const char *s, long range[2], long lo, long hi, long *v)
{
    range[0] = lo;
    range[1] = hi;
    return gs_parse_long(s, lo, hi, v);
}

void gsd_opts_defaults(gsd_opts *o)
{
    memset(o, 0, sizeof *o);
    snprintf(o->addr, sizeof o->addr, "127.0.0.1");
    o->port = 8600;
    snprintf(o->data_dir, sizeof o->data_dir, "gapsim-data");
    snprintf(o->web_dir, sizeof o->web_dir, "%s", GAPSIM_WEB_DIR);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->workers = cores < 1 ? 1 : cores > 256 ? 256 : (int)cores; /* --workers' range */
    o->http_threads = 2;
    o->max_body = (size_t)256 << 20;
    o->max_upload = (size_t)16 << 30;
    o->max_archive_entries = 10000;
    o->max_m = 20000;
    o->max_n = 50000;
    o->max_fe_dofs = 2000000;
    o->default_timeout = 600;
    o->max_timeout = 3600;
    o->max_gaps = 1000000;
    o->log_level = 1;
    o->conn_timeout = 120;
    o->header_timeout = 10;
    o->max_connections = 4096;
    o->min_free_mb = 256;
    o->summary_cache_mb = 64;
    o->factor_cache_mb = 256;
    /* half of what this process may use: the physical memory, or less under
     * a cgroup memory limit, ulimit -v or ulimit -d (core/memlimit.h) */
    gs_memlimit ml;
    gs_memlimit_get(&ml);
    o->max_loaded_mb = ml.bytes ? (long long)(ml.bytes / 2 >> 20) : 0;
}

/* The options (docs/operations.md), each with the letter its value is read
 * under in gsd_opts_parse and whether it takes a value. */
static const struct {
    const char *name;
    char id;
    char has_value;
} opts[] = {
    {"addr", 'a', 1}, {"port", 'p', 1}, {"data-dir", 'd', 1}, {"web-dir", 'W', 1},
    {"workers", 'w', 1}, {"http-threads", 't', 1}, {"max-body", 'b', 1}, {"max-upload", 'u', 1},
    {"max-m", 'm', 1}, {"max-n", 'n', 1}, {"max-gaps", 'k', 1}, {"timeout", 'T', 1},
    {"log-level", 'l', 1}, {"help", 'h', 0}, {"max-archive-entries", 'e', 1},
    {"max-fe-dofs", 'F', 1}, {"default-timeout", 'D', 1}, {"max-timeout", 'X', 1},
    {"header-timeout", 'H', 1}, {"max-connections", 'C', 1}, {"max-per-ip", 'I', 1},
    {"allow-host", 'A', 1}, {"token-file", 'K', 1}, {"min-free", 'M', 1}, {"reset", 'Z', 0},
    {"store-quota-mb", 'Q', 1}, {"retain-solves-age", 'R', 1}, {"retain-solves-max", 'S', 1},
    {"tls-cert", 'E', 1}, {"tls-key", 'Y', 1}, {"summary-cache-mb", 'G', 1},
    {"factor-cache-mb", 'L', 1}, {"max-loaded-mb", 'O', 1}};
#define N_OPTS ((int)(sizeof opts / sizeof opts[0]))

/* The option of word w ("--name" or "--name=value"; "-h"): its index, or -1.
 * *value: what follows the '=' (NULL without one). */
static int find_opt(const char *w, const char **value)
{
    *value = NULL;
    if (!strcmp(w, "-h"))
        w = "--help";
    if (strncmp(w, "--", 2))
        return -1;
    w += 2;
    const char *eq = strchr(w, '=');
    const size_t len = eq ? (size_t)(eq - w) : strlen(w);
    for (int k = 0; k < N_OPTS; k++)
        if (strlen(opts[k].name) == len && !strncmp(w, opts[k].name, len)) {
            *value = eq ? eq + 1 : NULL;
            return k;
        }
    return -1;
}

int gsd_opts_parse(int argc, char **argv, gsd_opts *o, char *msg, size_t cap)
{
    msg[0] = '\0';
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        const int k = find_opt(argv[i], &v);
        if (k < 0)
            return gs_arg_msg(msg, cap, argv[i][0] == '-' ? "unknown option '%s'"
                                                   : "unexpected argument '%s'", argv[i]);
        const char c = opts[k].id, *name = opts[k].name;
        if (!opts[k].has_value && v)
            return gs_arg_msg(msg, cap, "--%s takes no value", name);
        if (opts[k].has_value && !v) {
            if (i + 1 >= argc)
                return gs_arg_msg(msg, cap, "--%s needs a value", name);
            v = argv[++i];
        }
        long n = 0, range[2] = {0, -1}; /* the value's range, once known */
        int bad = 0;
        switch (c) {
        case 'a': bad = snprintf(o->addr, sizeof o->addr, "%s", v) >= (int)sizeof o->addr; break;
        case 'd': bad = snprintf(o->data_dir, sizeof o->data_dir, "%s", v) >= (int)sizeof o->data_dir; break;
        case 'W': bad = snprintf(o->web_dir, sizeof o->web_dir, "%s", v) >= (int)sizeof o->web_dir; break;
        case 'p': bad = in_range(v, range, 0, 65535, &n); o->port = (int)n; break;
        case 'w': bad = in_range(v, range, 1, 256, &n); o->workers = (int)n; break;
        case 't': bad = in_range(v, range, 1, 64, &n); o->http_threads = (int)n; break;
        case 'b': bad = in_range(v, range, 1024, (long)1 << 40, &n); o->max_body = (size_t)n; break;
        case 'u': bad = in_range(v, range, 1024, (long)1 << 50, &n); o->max_upload = (size_t)n; break;
        case 'e': bad = in_range(v, range, 1, 10000000, &n); o->max_archive_entries = (int)n; break;
        case 'm': bad = in_range(v, range, 1, 1000000, &n); o->max_m = (int)n; break;
        case 'n': bad = in_range(v, range, 1, 10000000, &n); o->max_n = (int)n; break;
        case 'F': bad = in_range(v, range, 1, 100000000, &n); o->max_fe_dofs = n; break;
        case 'D': bad = in_range(v, range, 1, 86400, &n); o->default_timeout = (double)n; break;
        case 'X': bad = in_range(v, range, 1, 86400, &n); o->max_timeout = (double)n; break;
        case 'k': bad = in_range(v, range, 1, 100000000, &n); o->max_gaps = (int)n; break;
        case 'T': bad = in_range(v, range, 1, 86400, &n); o->conn_timeout = (int)n; break;
        case 'H': bad = in_range(v, range, 1, 86400, &n); o->header_timeout = (int)n; break;
        case 'C': bad = in_range(v, range, 1, 1000000, &n); o->max_connections = (int)n; break;
        case 'I': bad = in_range(v, range, 0, 1000000, &n); o->max_per_ip = (int)n; break;
        case 'M': bad = in_range(v, range, 0, 1L << 30, &n); o->min_free_mb = n; break;
        case 'Z': o->reset = 1; break;
        case 'Q': bad = in_range(v, range, 0, 1L << 40, &n); o->store_quota_mb = n; break;
        case 'S': bad = in_range(v, range, 0, 1L << 50, &n); o->retain_max = n; break;
        case 'G': bad = in_range(v, range, 0, 1L << 30, &n); o->summary_cache_mb = n; break;
        case 'L': bad = in_range(v, range, 0, 1L << 30, &n); o->factor_cache_mb = n; break;
        case 'O': bad = in_range(v, range, 0, 1L << 40, &n); o->max_loaded_mb = n; break;
        case 'R': /* days, up to 100 years */
            range[0] = 0;
            range[1] = 36500;
            bad = gs_parse_double(v, 0, 36500, &o->retain_age_days);
            break;
        case 'K': bad = snprintf(o->token_file, sizeof o->token_file, "%s", v) >= (int)sizeof o->token_file; break;
        case 'E': bad = snprintf(o->tls_cert, sizeof o->tls_cert, "%s", v) >= (int)sizeof o->tls_cert; break;
        case 'Y': bad = snprintf(o->tls_key, sizeof o->tls_key, "%s", v) >= (int)sizeof o->tls_key; break;
        case 'A': {
            size_t used = strlen(o->allow_hosts);
            bad = (size_t)snprintf(o->allow_hosts + used, sizeof o->allow_hosts - used, "%s%s",
                                   used ? "," : "", v) >= sizeof o->allow_hosts - used;
            break;
        }
        case 'l': bad = in_range(v, range, 0, 2, &n); o->log_level = (int)n; break;
        case 'h': return 1;
        default: return gs_arg_msg(msg, cap, "--%s: not read", name); /* a table entry without a case */
        }
        if (bad) {
            if (range[0] <= range[1])
                return gs_arg_msg(msg, cap, "--%s: '%s' is not a number in [%ld, %ld]", name, v,
                           range[0], range[1]);
            return gs_arg_msg(msg, cap, "--%s: '%s' is too long", name, v);
        }
    }
    if (!o->tls_cert[0] != !o->tls_key[0])
        return gs_arg_msg(msg, cap, "--tls-cert and --tls-key go together (HTTPS needs both)");
    if (o->default_timeout > o->max_timeout)
        return gs_arg_msg(msg, cap, "--default-timeout (%g s) exceeds --max-timeout (%g s)",
                   o->default_timeout, o->max_timeout);
    return 0;
}
