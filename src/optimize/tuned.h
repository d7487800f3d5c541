/* tuned.h — the launch configuration Inductor's autotuner chose for a kernel on the model's
 * shapes, as the worker reports it after the profile's first run (PROTOCOL.md `profile`,
 * "configs": the one launcher each CachingAutotuner kept: its block sizes, num_warps,
 * num_stages, how many configurations it chose among, whether coordinate descent found it). The
 * search starts its coordinate descent there (agents/builtin_planner.c), so that kopt begins
 * where max-autotune (or the default autotuner) ended instead of only on a fixed grid.
 * (Inductor's own .best_config files are not read: their name is a hash whose input changes
 * between releases -- on the H200's torch 2.11 neither documented form matched.)
 *
 * Contract: tuned_config_parse fills *out and returns 1 when `o` is an object holding
 * XBLOCK (1..4096), num_warps (1..32) and num_stages (1..8), and, where present, R0_BLOCK
 * (1..65536) and YBLOCK (1..4096), every block size a power of two; else 0 and *out is zeroed
 * (the worker's answer is data: anything else is ignored). tuned_config_json gives the
 * planner's and the report's form of it (a new object).
 *
 * Ownership: nothing is kept; *out is the caller's.
 */
#ifndef KOPT_TUNED_H
#define KOPT_TUNED_H

#include <jansson.h>

typedef struct tuned_config {
    int xblock, yblock, r0_block; /* 0: the kernel has no such block size */
    int num_warps, num_stages;
    int found_by_coordesc; /* Inductor's coordinate descent found it */
    int choices;           /* configurations the autotuner chose among (1: the kernel had one) */
} tuned_config;

int tuned_config_parse(const json_t *o, tuned_config *out);
json_t *tuned_config_json(const tuned_config *t);

#endif
