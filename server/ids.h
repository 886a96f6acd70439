/*
 * ids.h -- identifiers and clocks of the daemon.
 *
 * Ids are a one-letter kind, an underscore and 16 random hex digits
 * ("a_9f0c..." assembly, "j_" job, "r_" result) from getrandom(2): unguessable
 * and collision-free in practice (64 bits), safe to put in URLs and paths.
 */
#ifndef GSD_IDS_H
#define GSD_IDS_H

#define GSD_ID_LEN 19 /* "x_" + 16 hex + NUL */

void gsd_new_id(char kind, char out[GSD_ID_LEN]);
/* 1 if s is a well-formed id of that kind. */
int gsd_id_valid(const char *s, char kind);
/* Wall clock, unix seconds. */
double gsd_unix_now(void);

#endif
