/*
 * gen_cli.h -- the FE generator's command line (options, build, write, report),
 * one implementation for `gapsim-gen` and `gapsim gen`: one table of options
 * (gs_gen_opts), read by gapsim-gen's parser (gs_gen_cli) or by the gapsim
 * client's, which adds its global options (clients/cli/args.h), then the
 * same checks and work (gs_gen_run).
 */
#ifndef GS_GEN_CLI_H
#define GS_GEN_CLI_H

/* One option of the generator: "--kind", and whether it takes a value. */
typedef struct {
    const char *name;
    int has_value;
} gs_gen_opt;

#define GS_GEN_NOPTS 28

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

/* Check the options (values, combinations), build the model, check the gap
 * cloud's mean and peak can be met, write the files and print the report;
 * prog prefixes the messages ("gapsim-gen", "gapsim gen"). Returns the exit
 * code: 0 ok, 1 failure (model not built or not written), 2 usage (nothing
 * written, nothing on stdout). */
int gs_gen_run(const char *prog, const gs_gen_args *a);

/* gapsim-gen: read argv[1..argc) ("--opt VALUE", "--opt=VALUE", "--" ends the
 * options, -h / --help) against gs_gen_opts, then gs_gen_run. */
int gs_gen_cli(const char *prog, int argc, char **argv);

#endif
