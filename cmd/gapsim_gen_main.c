/*
 * gapsim_gen_main.c -- `gapsim-gen`: build a finite-element assembly model
 * and write it as gapsim model files, a gap cloud and a fastener pattern.
 * gs_gen_cli (gen_cli.h) reads the options (--opt VALUE or --opt=VALUE)
 * from the generator's option table and runs gs_gen_run, the work shared
 * with `gapsim gen` (which reads the same table with the gapsim client's
 * parser); docs/generator.md. The files are committed together or none;
 * SIGINT, SIGTERM, SIGHUP and SIGPIPE remove the temporary files of a run
 * they end (gen/gen_files.h, installed by gs_gen_run for the run).
 * Exit codes: 0 ok, 1 failure, 2 usage.
 */
#include "gen_cli.h"

int main(int argc, char **argv)
{
    return gs_gen_cli("gapsim-gen", argc, argv);
}
