/*
 * cache.h: the verbs of the gemmtune command that work on cache files and need no GPU.
 *
 *   gemmtune list [--dtype T]                             what the cache holds
 *   gemmtune show SHAPE [--dtype T]                       every candidate of SHAPE's keys
 *   gemmtune export -o FILE [--text] [--device NAME] [--dtype T]  the cache's winners -> new FILE
 *   gemmtune import FILE                                  FILE's entries -> the cache
 *   gemmtune merge A B... -o C [--text] [--device NAME] [--dtype T]  fastest per key -> new C
 *
 * Every input may be an SQLite cache file or a cache text (cache/text.h); --text writes
 * a cache text instead of an SQLite file.
 *   gemmtune prune                                        drop entries of old sources
 *
 * Each takes its argv with argv[0] the verb, prints, and returns the command's exit
 * status: 0 success, 1 failure, 2 bad usage.
 */
#ifndef GT_CLI_CACHE_H
#define GT_CLI_CACHE_H

int cli_list(int argc, char **argv);
int cli_show(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_import(int argc, char **argv);
int cli_merge(int argc, char **argv);
int cli_prune(int argc, char **argv);

#endif
