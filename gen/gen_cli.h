/*
 * gen_cli.h -- the FE generator's command line (options, build, write, report),
 * one implementation for `gapsim-gen` and `gapsim gen`: one table of options
 * (gs_gen_opts), read by gapsim-gen's parser (gs_gen_cli) or by the gapsim
 * client's, which adds its global options (clients/cli/args.h), then the
 * same checks and work (gs_gen_run).
 */
#ifndef GS_GEN_CLI_H
#define GS_GEN_CLI_H

#include "generator.h"

/* One option of the generator: "--kind", and whether it takes a value. */
typedef struct {
    const char *name;
    int has_value;
} gs_gen_opt;

#define GS_GEN_NOPTS 29

/* The generator's options; gs_gen_args holds them in this order. */
extern const gs_gen_opt gs_gen_opts[GS_GEN_NOPTS];

/* Options as read: value[k] the value of gs_gen_opts[k] (NULL if absent),
 * flag[k] 1 for a flag given. Zero-initialize, then fill. */
typedef struct {
    const char *value[GS_GEN_NOPTS];
    int flag[GS_GEN_NOPTS];
} gs_gen_args;

/* The usage line after the program's name, and the help text after it. */
extern const char gs_gen_usage[];
extern const char gs_gen_help[];

/* Check the options (values within generator.h's ranges, combinations the
 * generator can build), the memory and the disk the run needs, build the
 * model, check the gap cloud's mean and peak can be met and the matrix
 * format can hold every part, write every file to its temporary file and
 * commit them together (none on failure), then print the report; prog
 * prefixes the messages ("gapsim-gen", "gapsim gen"). While it writes,
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the temporary files, then go
 * to the action the program had for them (gen_files.h; restored on
 * return). Returns the exit code: 0 ok, 1 failure (model too large, not
 * built or not written: no file of the run left; or stdout not written),
 * 2 usage (nothing written, no directory made, nothing on stdout). */
int gs_gen_run(const char *prog, const gs_gen_args *a);

/* The checks of gs_gen_run alone (values, combinations), nothing built or
 * written: the model's parameters into *p, the gap cloud's into *cp, its
 * seed and vector count into *seed, *n_gaps. 0, or 2 after the usage
 * message. For the fuzz target of the options (tests/fuzz/fuzz_gencli.c). */
int gs_gen_check_args(const char *prog, const gs_gen_args *a, gs_gen_params *p,
                      gs_gen_cloud_params *cp, unsigned long long *seed, int *n_gaps);

/* gapsim-gen's reading of argv[1..argc) (as gs_gen_cli) into *a, zeroed
 * first: -1 to go on (gs_gen_run), 0 after printing --help, 2 after a usage
 * message (*a then holds nothing). */
int gs_gen_parse_argv(const char *prog, int argc, char **argv, gs_gen_args *a);

/* gapsim-gen: read argv[1..argc) ("--opt VALUE", "--opt=VALUE", "--" ends the
 * options, -h / --help) against gs_gen_opts, then gs_gen_run. */
int gs_gen_cli(const char *prog, int argc, char **argv);

#endif
