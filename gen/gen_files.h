/*
 * gen_files.h -- the output files of one generator run (gen_cli.c), written
 * together: every file goes to its temporary file (fileio.h gs_wfile) and
 * is flushed, and only when all were written are they committed (renamed
 * onto their names), the model's JSON last; a failure anywhere aborts them
 * all, so a failed run leaves none of its files (an earlier run's files
 * stay as they were).
 *
 * The model's files are made by the format layer's writers
 * (gs_model_write_json_as: NAME.json and NAME.part<b>.<suffix>), which
 * commit each file by itself: they write into a private staging directory
 * DIR/.gapsim-gen.XXXXXX, and each staged file then becomes the temporary
 * file of its final name (renamed onto it, or copied where the name is not
 * a regular file or lies on another file system: a device such as
 * /dev/full through a symlink is written into, as gs_wfile does).
 *
 * Signals: while a set of files is open, SIGINT, SIGTERM, SIGHUP and
 * SIGPIPE remove its temporary files and the staging directory (with what
 * the writers had in it) and end the process by the signal
 * (core/tmpguard.h, shared with the gapsim client's outputs). SIGKILL
 * cannot be caught: it leaves them (*.tmp.XXXXXX, .gapsim-gen.XXXXXX).
 */
#ifndef GS_GEN_FILES_H
#define GS_GEN_FILES_H

#include "fileio.h"
#include "gs_error.h"

#define GEN_FILES_MAX 12

typedef struct {
    char *dir;                      /* the output directory */
    char *stage;                    /* DIR/.gapsim-gen.XXXXXX, NULL until made */
    int n;                          /* files opened */
    char *name[GEN_FILES_MAX];      /* base name of each file in dir */
    gs_wfile wf[GEN_FILES_MAX];
} gen_files;

/* Start a set of files in dir (an existing directory) and catch the
 * signals (gs_tmpguard_install). 0, or an error (no memory).
 * gen_files_end always follows. */
gs_err gen_files_begin(gen_files *fs, const char *dir, gs_error *err);
/* The staging directory for the writers that commit their own files
 * (*stage: its path, valid until gen_files_end). */
gs_err gen_files_stage(gen_files *fs, const char **stage, gs_error *err);
/* Open DIR/name's temporary file (gs_wfile_open: a directory there, a
 * missing or read-only directory fail here): *wf to write into. */
gs_err gen_files_open(gen_files *fs, const char *name, gs_wfile **wf, gs_error *err);
/* Every file the writers left in the staging directory becomes the
 * temporary file of DIR/<its name> (opened as gen_files_open). */
gs_err gen_files_adopt_staged(gen_files *fs, gs_error *err);
/* Flush every file (write errors: a full disk, /dev/full), then commit
 * them all, the names ending in ".json" last. On an error nothing is
 * committed (all aborted), except when a rename itself fails midway (the
 * files committed before it stay; the error says which). */
gs_err gen_files_commit(gen_files *fs, gs_error *err);
/* Abort what was not committed, remove the staging directory, restore the
 * signals' actions (gs_tmpguard_uninstall), free. */
void gen_files_end(gen_files *fs);

#endif
