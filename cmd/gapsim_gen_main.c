/*
 * gapsim_gen_main.c -- `gapsim-gen`: build a finite-element assembly model
 * and write it as gapsim model files, a gap cloud and a fastener pattern.
 * The options and the work are gs_gen_cli (gen_cli.h), shared with
 * `gapsim gen`; docs/generator.md.
 * Exit codes: 0 ok, 1 failure, 2 usage.
 */
#include "gen_cli.h"

int main(int argc, char **argv)
{
    return gs_gen_cli("gapsim-gen", argc, argv);
}
