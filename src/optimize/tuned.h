/* tuned.h — the launch configuration Inductor's autotuner chose for a kernel, read from the
 * `.best_config` file its autotune cache writes beside the kernel's source (JSON: the block
 * sizes, num_warps, num_stages, found_by_coordesc, ...). The search starts its coordinate descent there (agents/builtin_planner.c), so that kopt
 * begins where max-autotune (or the default autotuner) ended instead of only on a fixed grid.
 *
 * Contract: tuned_config_read fills *out and returns 1 when the kernel names a kernel path
 * ("# kernel path:" above it) with a .best_config in its directory -- named, as Inductor's local
 * autotune cache names it, sha256("<the kernel file's basename>:<TORCH_COMPILE_CACHE_KEY_TAG or
 * empty>") + ".best_config", or (older releases) "<kernel path without .py>.best_config" -- that
 * is at most 64 KB of JSON and holds
 * XBLOCK (1..4096), num_warps (1..32) and num_stages (1..8), and, where present, R0_BLOCK
 * (1..65536) and YBLOCK (1..4096), every block size a power of two; else 0 (the file is
 * Inductor's cache, read as untrusted data: anything else is ignored). tuned_config_json gives
 * the planner's form of it (a new object).
 *
 * Ownership: nothing is kept; *out is the caller's.
 */
#ifndef KOPT_TUNED_H
#define KOPT_TUNED_H

#include <jansson.h>

#include "artifact/artifact.h"

typedef struct tuned_config {
    int xblock, yblock, r0_block; /* 0: the kernel has no such block size */
    int num_warps, num_stages;
    int found_by_coordesc; /* Inductor's coordinate descent found it */
} tuned_config;

int tuned_config_read(const art_kernel *k, tuned_config *out);
json_t *tuned_config_json(const tuned_config *t);

#endif
