/*
 * gpu.h: the verbs of the gemmtune command that drive a GPU through the library.
 *
 *   gemmtune info                     GPU, driver, NVRTC, cache files, built-in defaults,
 *                                     kernel source hash
 *   gemmtune tune SHAPE... | --file F pre-warm the cache (tune what is missing), on one
 *                                     GPU or on several at once (--devices), on this
 *                                     node's share of a shape list (--shard, Slurm)
 *   gemmtune run SHAPE                tune if needed, run on random data, check, time;
 *                                     --save DIR writes the problem and its result
 *   gemmtune prebuild [--dtype T]...  the node's generic kernels (src/prebuild.h) of
 *                                     every class of the types, in the binary cache
 *
 * Each takes its argv with argv[0] the verb, prints, and returns the command's exit
 * status: 0 success, 1 failure (no GPU, a failed check), 2 bad usage. Without a driver
 * or a device each says so and returns 1; info prints what it knows first.
 */
#ifndef GT_CLI_GPU_H
#define GT_CLI_GPU_H

int cli_info(int argc, char **argv);
int cli_tune(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_prebuild(int argc, char **argv);

#endif
