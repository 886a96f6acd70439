/*
 * hangup.c -- the hang-up watch of suspended requests (gsd_req_watch,
 * http.h): a thread polls the sockets of the watched requests every 50 ms
 * and sets the flag of a request whose client hung up (its solve is then
 * cancelled); gsd_http_start / gsd_http_stop start and stop it
 * (http_impl.h).
 */
#define _GNU_SOURCE
#include "http_impl.h"

#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    gsd_req *r;
    int fd;
    atomic_int *flag;
} watch_entry;

static struct {
    pthread_mutex_t mu;
    watch_entry *e;
    int n, cap;
    atomic_int stop;
    int running;
    pthread_t th;
} watch = {.mu = PTHREAD_MUTEX_INITIALIZER};

void gsd_req_watch(gsd_req *r, atomic_int *flag)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci)
        return; /* no socket to watch: the solve runs to its end */
    pthread_mutex_lock(&watch.mu);
    if (watch.n == watch.cap) {
        int nc = watch.cap ? 2 * watch.cap : 16;
        watch_entry *t = realloc(watch.e, sizeof *t * (size_t)nc);
        if (t) {
            watch.e = t;
            watch.cap = nc;
        }
    }
    if (watch.n < watch.cap)
        watch.e[watch.n++] = (watch_entry){r, ci->connect_fd, flag};
    pthread_mutex_unlock(&watch.mu);
}

void gsd_req_unwatch(gsd_req *r)
{
    pthread_mutex_lock(&watch.mu);
    for (int i = 0; i < watch.n; i++)
        if (watch.e[i].r == r)
            watch.e[i--] = watch.e[--watch.n];
    pthread_mutex_unlock(&watch.mu);
}

void gsd_http_cancel_watched(void)
{
    pthread_mutex_lock(&watch.mu);
    for (int i = 0; i < watch.n; i++)
        atomic_store(watch.e[i].flag, 1);
    pthread_mutex_unlock(&watch.mu);
}

/* Every 50 ms: poll the watched sockets (copied under the lock), then set
 * the flags of those that hung up and are still watched. O(watched). */
static void *watch_thread(void *arg)
{
    (void)arg;
    struct pollfd *pf = NULL;
    gsd_req **who = NULL;
    int cap = 0;
    while (!atomic_load(&watch.stop)) {
        pthread_mutex_lock(&watch.mu);
        int n = watch.n;
        if (n > cap) {
            struct pollfd *a = realloc(pf, sizeof *a * (size_t)n);
            gsd_req **b = a ? realloc(who, sizeof *b * (size_t)n) : NULL;
            if (a)
                pf = a;
            if (b) {
                who = b;
                cap = n;
            }
        }
        n = n < cap ? n : cap;
        for (int i = 0; i < n; i++) {
            pf[i] = (struct pollfd){.fd = watch.e[i].fd, .events = POLLRDHUP};
            who[i] = watch.e[i].r;
        }
        pthread_mutex_unlock(&watch.mu);
        if (n == 0 || poll(pf, (nfds_t)n, 0) <= 0) {
            usleep(50000);
            continue;
        }
        pthread_mutex_lock(&watch.mu);
        for (int i = 0; i < n; i++) {
            if (!(pf[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
                continue;
            for (int j = 0; j < watch.n; j++)
                if (watch.e[j].r == who[i] && watch.e[j].fd == pf[i].fd) {
                    atomic_store(watch.e[j].flag, 1);
                    watch.e[j--] = watch.e[--watch.n]; /* once */
                }
        }
        pthread_mutex_unlock(&watch.mu);
        usleep(50000);
    }
    free(pf);
    free(who);
    return NULL;
}

void gsd_hangup_start(void)
{
    atomic_store(&watch.stop, 0);
    watch.running = pthread_create(&watch.th, NULL, watch_thread, NULL) == 0;
}

void gsd_hangup_stop(void)
{
    if (watch.running) {
        atomic_store(&watch.stop, 1);
        pthread_join(watch.th, NULL);
        watch.running = 0;
    }
}
