/* lanes.h — the GPUs `kopt bench` runs on: one lane per visible GPU, each running one problem
 * at a time with CUDA_VISIBLE_DEVICES set to the lane's GPU id.
 *
 * Visible GPUs: the comma-separated entries of CUDA_VISIBLE_DEVICES when it is set (ids, UUIDs
 * or MIG ids, passed on as they are), else the "GPU <n>: ..." lines of `nvidia-smi -L` (ids
 * "0".."n-1"), else one GPU "0". nvidia-smi is run from an argument vector, never through a
 * shell; $KOPT_NVIDIA_SMI names another executable (tests use a fake one).
 *
 * Contract: bench_lanes_detect returns 0 or a kopt_code with the kerr filled:
 * KOPT_E_USAGE when more GPUs are asked for than are visible, KOPT_E_NOGPU when
 * CUDA_VISIBLE_DEVICES is set but names no GPU.
 *
 * Ownership: a bench_lanes owns its strings (bench_lanes_free, NULL-safe, idempotent).
 * bench_gpu_name returns a malloc'd string for the caller.
 */
#ifndef KOPT_BENCH_LANES_H
#define KOPT_BENCH_LANES_H

#include <stddef.h>

#include "util/err.h"

typedef struct bench_lanes {
    char **ids;                 /* the lanes' CUDA_VISIBLE_DEVICES values, in order */
    size_t n;
    const char *source;         /* "CUDA_VISIBLE_DEVICES", "nvidia-smi" or "default" (static) */
} bench_lanes;

/* The entries of a CUDA_VISIBLE_DEVICES value (spaces trimmed, empty entries skipped). */
void bench_lanes_parse(const char *cvd, bench_lanes *out);
/* want 0: every visible GPU; want N > 0: the first N (more than are visible is KOPT_E_USAGE,
 * except when nothing tells how many there are: then ids "0".."N-1"). */
int bench_lanes_detect(int want, bench_lanes *out, kerr *e);
void bench_lanes_free(bench_lanes *l);

/* The name of GPU `id` from `nvidia-smi --query-gpu=name --format=csv,noheader -i ID` (the
 * first line; without -i when that fails), or "unknown". */
char *bench_gpu_name(const char *id);

#endif
