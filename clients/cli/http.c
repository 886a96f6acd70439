/*
 * http.c -- libcurl wrapper of the `gapsim` command (see http.h).
 */
#include "http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <curl/curl.h>

#include "fileio.h"
#include "fmt_g17.h"
#include "json_parse.h"
#include "outfile.h"
#include "progress.h"

int gc_buf_add(gc_buf *b, const void *p, size_t len)
{
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q)
            return -1;
        b->p = q;
        b->cap = cap;
    }
    if (len)
        memcpy(b->p + b->len, p, len);
    b->len += len;
    b->p[b->len] = '\0';
    return 0;
}

void gc_buf_free(gc_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

void gc_http_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void gc_http_cleanup(void)
{
    curl_global_cleanup();
}

void gc_resp_free(gc_resp *rs)
{
    gc_buf_free(&rs->body);
}

typedef struct {
    CURL *h;
    gc_resp *rs;
    FILE *sink;
    gc_peek *peek;
    int sink_failed, sink_errno, oom;
} write_ctx;

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
    write_ctx *w = ud;
    size_t n = size * nmemb;
    long code = 0;
    curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &code);
    if (w->sink && code >= 200 && code < 300) {
        errno = 0;
        if (fwrite(data, 1, n, w->sink) != n) {
            w->sink_failed = 1;
            w->sink_errno = errno ? errno : EIO;
            return 0; /* aborts the transfer */
        }
        gc_peek *p = w->peek;
        if (p) {
            size_t keep = p->cap - p->len < n ? p->cap - p->len : n;
            if (keep)
                memcpy(p->head + p->len, data, keep);
            p->len += keep;
            p->size += n;
        }
        return n;
    }
    if (gc_buf_add(&w->rs->body, data, n) != 0) {
        w->oom = 1;
        return 0;
    }
    return n;
}

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
    FILE *f = ud;
    size_t n = fread(buf, 1, size * nmemb, f);
    if (n == 0 && ferror(f))
        return CURL_READFUNC_ABORT;
    return n;
}

int gc_http(const gc_ctx *cx, const char *prog, const gc_req *rq, gc_resp *rs)
{
    memset(rs, 0, sizeof *rs);
    if (rq->status)
        *rq->status = 0;
    size_t slen = strlen(cx->server);
    while (slen > 0 && cx->server[slen - 1] == '/')
        slen--;
    size_t ulen = slen + strlen(rq->path) + 1;
    char *url = malloc(ulen);
    CURL *h = curl_easy_init();
    if (!url || !h) {
        free(url);
        if (h)
            curl_easy_cleanup(h);
        fprintf(stderr, "%s: out of memory\n", prog);
        return GC_ECONNECT;
    }
    snprintf(url, ulen, "%.*s%s", (int)slen, cx->server, rq->path);
    char errbuf[CURL_ERROR_SIZE] = "";
    struct curl_slist *hdrs = NULL;
    curl_mime *mime = NULL;
    FILE *body_f = NULL;
    write_ctx w = {.h = h, .rs = rs, .sink = rq->sink, .peek = rq->sink ? rq->peek : NULL};
    int rc = GC_OK;

    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "gapsim-cli/" GAPSIM_VERSION);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &w);
    if (cx->cacert && *cx->cacert) /* gapsimd --tls-cert with a private CA or self-signed */
        curl_easy_setopt(h, CURLOPT_CAINFO, cx->cacert);
    hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue round trip */
    if (cx->token && *cx->token) { /* gapsimd --token-file */
        char line[300];
        snprintf(line, sizeof line, "Authorization: Bearer %.256s", cx->token);
        hdrs = curl_slist_append(hdrs, line);
    }
    if (rq->accept) {
        char line[160];
        snprintf(line, sizeof line, "Accept: %s", rq->accept);
        hdrs = curl_slist_append(hdrs, line);
    }
    if (rq->content_type && !rq->parts) {
        char line[160];
        snprintf(line, sizeof line, "Content-Type: %s", rq->content_type);
        hdrs = curl_slist_append(hdrs, line);
    }
    if (rq->parts) {
        mime = curl_mime_init(h);
        for (int i = 0; mime && i < rq->n_parts; i++) {
            const gc_part *p = &rq->parts[i];
            curl_mimepart *mp = curl_mime_addpart(mime);
            curl_mime_name(mp, p->name);
            if (p->path) {
                if (curl_mime_filedata(mp, p->path) != CURLE_OK) {
                    fprintf(stderr, "%s: cannot read %s: %s\n", prog, p->path, strerror(errno));
                    rc = GC_EFILE;
                    break;
                }
            } else {
                curl_mime_data(mp, p->data, p->len);
            }
            /* after filedata, which sets the file's own base name */
            if (p->filename)
                curl_mime_filename(mp, p->filename);
            if (p->type)
                curl_mime_type(mp, p->type);
        }
        curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
    } else if (rq->body_file) {
        struct stat sb;
        body_f = fopen(rq->body_file, "rb");
        if (!body_f || fstat(fileno(body_f), &sb) != 0) {
            fprintf(stderr, "%s: cannot read %s: %s\n", prog, rq->body_file, strerror(errno));
            rc = GC_EFILE;
        } else {
            curl_easy_setopt(h, CURLOPT_POST, 1L);
            curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
            curl_easy_setopt(h, CURLOPT_READDATA, body_f);
            curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)sb.st_size);
        }
    } else if (rq->body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
    }
    if (strcmp(rq->method, "GET") && strcmp(rq->method, "POST"))
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);

    if (rc == GC_OK) {
        CURLcode cc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rs->status);
        if (rq->status)
            *rq->status = rs->status;
        const char *ct = NULL;
        if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
            snprintf(rs->ctype, sizeof rs->ctype, "%s", ct);
        if (w.sink_failed || w.oom || cc != CURLE_OK)
            gs_progress_break(); /* the message gets a line of its own */
        if (w.sink_failed) {
            fprintf(stderr, "%s: cannot write the answer: %s\n", prog, strerror(w.sink_errno));
            rc = GC_EFILE;
        } else if (w.oom) {
            fprintf(stderr, "%s: out of memory for the answer\n", prog);
            rc = GC_ECONNECT;
        } else if (cc == CURLE_URL_MALFORMAT || cc == CURLE_UNSUPPORTED_PROTOCOL) {
            fprintf(stderr, "%s: bad server URL '%s': %s\n", prog, cx->server,
                    errbuf[0] ? errbuf : curl_easy_strerror(cc));
            rc = GC_EUSAGE;
        } else if (cc == CURLE_READ_ERROR || cc == CURLE_ABORTED_BY_CALLBACK) {
            fprintf(stderr, "%s: cannot read the request body: %s\n", prog,
                    errbuf[0] ? errbuf : curl_easy_strerror(cc));
            rc = GC_EFILE;
        } else if (cc != CURLE_OK) {
            fprintf(stderr, "%s: cannot %s %s: %s\n", prog,
                    rs->status ? "complete the request to" : "connect to", cx->server,
                    errbuf[0] ? errbuf : curl_easy_strerror(cc));
            rc = GC_ECONNECT;
        }
    }
    if (body_f)
        fclose(body_f);
    curl_mime_free(mime);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    free(url);
    return rc;
}

int gc_report_error(const gc_ctx *cx, const char *prog, const gc_resp *rs)
{
    const char *code = "", *msg = NULL, *field = "";
    cJSON *root = rs->body.p ? gs_json_parse(rs->body.p, rs->body.len, NULL, NULL) : NULL;
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "error");
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(e, "code")) && cJSON_IsString(v))
        code = v->valuestring;
    if ((v = cJSON_GetObjectItemCaseSensitive(e, "message")) && cJSON_IsString(v))
        msg = v->valuestring;
    if ((v = cJSON_GetObjectItemCaseSensitive(e, "field")) && cJSON_IsString(v))
        field = v->valuestring;
    gs_progress_break();
    if (msg)
        fprintf(stderr, "%s: error %s (HTTP %ld)%s%s: %s\n", prog, code, rs->status,
                field[0] ? " at " : "", field, msg);
    else
        fprintf(stderr, "%s: HTTP %ld from the server%s%.200s\n", prog, rs->status,
                rs->body.len ? ": " : "", rs->body.len ? rs->body.p : "");
    if (cx->json && rs->body.len)
        gc_print_body(&rs->body);
    cJSON_Delete(root);
    return GC_ESERVER;
}

int gc_call_json(const gc_ctx *cx, const char *prog, const gc_req *rq, cJSON **out, gc_buf *raw)
{
    gc_resp rs;
    *out = NULL;
    int rc = gc_http(cx, prog, rq, &rs);
    if (rc == GC_OK && (rs.status < 200 || rs.status >= 300))
        rc = gc_report_error(cx, prog, &rs);
    if (rc == GC_OK && rs.body.len) {
        size_t at = 0;
        *out = gs_json_parse(rs.body.p, rs.body.len, &at, NULL);
        if (!*out) {
            fprintf(stderr, "%s: the server's answer is not JSON (byte %zu)\n", prog, at);
            rc = GC_ESERVER;
        }
    }
    if (rc == GC_OK && raw) {
        *raw = rs.body;
        memset(&rs.body, 0, sizeof rs.body);
    }
    gc_resp_free(&rs);
    return rc;
}

int gc_call_print(const gc_ctx *cx, const char *prog, const gc_req *rq, gc_printer print)
{
    cJSON *ans = NULL;
    gc_buf raw = {0};
    int rc = gc_call_json(cx, prog, rq, &ans, &raw);
    if (rc == GC_OK && cx->json)
        gc_print_body(&raw);
    else if (rc == GC_OK)
        print(cx, ans);
    gc_buf_free(&raw);
    cJSON_Delete(ans);
    return rc;
}

static int stdout_errno;

int gc_stdout_failed(void)
{
    if (!ferror(stdout))
        return 0;
    if (!stdout_errno)
        stdout_errno = errno ? errno : EIO;
    return 1;
}

int gc_stdout_errno(void)
{
    return stdout_errno;
}

void gc_print_body(const gc_buf *b)
{
    errno = 0;
    fwrite(b->p, 1, b->len, stdout);
    if (b->len && b->p[b->len - 1] != '\n')
        putchar('\n');
    fflush(stdout);
    (void)gc_stdout_failed(); /* the reason, while errno has it; main reports it */
}

char *gc_escape(const char *s)
{
    char *e = curl_easy_escape(NULL, s, 0);
    if (!e)
        return NULL;
    char *copy = strdup(e);
    curl_free(e);
    return copy;
}

int gc_query_add(gc_buf *q, char sep, const char *key, const char *value)
{
    char *e = gc_escape(value);
    int rc = !e || gc_buf_add(q, &sep, 1) || gc_buf_add(q, key, strlen(key)) ||
             gc_buf_add(q, "=", 1) || gc_buf_add(q, e, strlen(e));
    free(e);
    return rc ? -1 : 0;
}

int gc_query_num(gc_buf *q, char sep, const char *key, double value)
{
    char num[GS_FMT_G17_MAX];
    gs_fmt_g17(value, num);
    return gc_query_add(q, sep, key, num);
}

int gc_download(const gc_ctx *cx, const char *prog, const char *path, const char *accept,
                const char *out, gc_peek *peek)
{
    gs_wfile wf = {0};
    int rc = gc_out_open(prog, out, &wf);
    if (rc != GC_OK)
        return rc;
    if (peek)
        peek->len = 0, peek->size = 0;
    gc_req rq = {.method = "GET", .path = path, .accept = accept, .sink = wf.fp, .peek = peek};
    gc_resp rs;
    rc = gc_http(cx, prog, &rq, &rs);
    if (rc == GC_OK && (rs.status < 200 || rs.status >= 300))
        rc = gc_report_error(cx, prog, &rs);
    gc_resp_free(&rs);
    if (rc == GC_OK && peek && peek->check)
        rc = peek->check(prog, peek, peek->ud);
    if (rc != GC_OK) {
        gc_out_abort(&wf);
        return rc;
    }
    return gc_out_commit(prog, &wf);
}

void gc_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}
