/*
 * defaults.h: the verb of the gemmtune command that makes a built-in defaults file.
 *
 *   gemmtune defaults --file SHAPES [--dtype T]... -o FILE
 *       tunes every shape of SHAPES for every data type given (f32 when none) on this
 *       GPU, into a private temporary cache, and writes that cache's entries to FILE as
 *       a cache text (cache/text.h): the file data/defaults/<gpu>.txt is made this way.
 *
 * Takes its argv with argv[0] the verb, prints, and returns the command's exit status:
 * 0 success, 1 failure (no GPU, a shape or type not tuned, FILE not written), 2 bad usage.
 */
#ifndef GT_CLI_DEFAULTS_H
#define GT_CLI_DEFAULTS_H

int cli_defaults(int argc, char **argv);

#endif
