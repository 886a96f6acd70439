/*
 * gen_cli.h -- the FE generator's command line (options, build, write, report),
 * one implementation for `gapsim-gen` and `gapsim gen`.
 */
#ifndef GS_GEN_CLI_H
#define GS_GEN_CLI_H

/* Run the generator with argv[1..argc) as its options; prog prefixes the
 * messages and the usage line ("gapsim-gen", "gapsim gen"). Returns the exit
 * code: 0 ok, 1 failure (model not built or not written), 2 usage. */
int gs_gen_cli(const char *prog, int argc, char **argv);

#endif
