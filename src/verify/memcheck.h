/* memcheck.h — gate 2's memory-error check (docs/SECURITY.md, issue 11 item 6). A candidate
 * whose outputs passed gate 2 runs once more in a second worker started under NVIDIA's
 * `compute-sanitizer --tool memcheck`, with PyTorch's caching allocator off
 * (PYTORCH_NO_CUDA_MEMORY_CACHING=1: inside the allocator's segments an out-of-bounds access
 * lands in another tensor and is not reported). After each run the sanitizer's log is read from
 * where the previous run left it: an error located in one of the candidate's kernels (kopt
 * stitches them under names starting with MEMCHECK_CAND_PREFIX) refuses the candidate at
 * gate 2; errors in other kernels (Inductor's, the harness's) are counted and recorded, not held
 * against it. Only memcheck (out-of-bounds and misaligned accesses, hardware exceptions):
 * racecheck is not run.
 *
 *   memcheck_find   the compute-sanitizer to use: $KOPT_COMPUTE_SANITIZER (an absolute
 *                   path), PATH, /usr/local/cuda/bin; NULL when none (malloc'd otherwise)
 *   memcheck_parse  the errors of a stretch of the sanitizer's log (pure; unit-tested)
 *   memcheck_open   starts the sanitized worker and sends it `load` (the problem, as the main
 *                   worker got it)
 *   memcheck_run    one worker request under the sanitizer and the errors it produced
 *
 * Ownership: memcheck_open's *out is freed by memcheck_close (NULL-safe; stops the worker). The
 * JSON args of memcheck_open are borrowed, memcheck_run's stolen (as worker_call's).
 */
#ifndef KOPT_MEMCHECK_H
#define KOPT_MEMCHECK_H

#include <jansson.h>
#include <stddef.h>

#include "util/err.h"

#define MEMCHECK_CAND_PREFIX "_kopt_"
#define MEMCHECK_PADDING "1048576" /* bytes of guard zone after each allocation (--padding) */

typedef struct memcheck_result {
    size_t cand_errors;    /* errors located in a candidate kernel */
    size_t other_errors;   /* errors elsewhere (or without a kernel name) */
    char first[512];       /* the first candidate error: "<what> in <kernel>" ("" when none) */
    char first_other[512]; /* the first other error, likewise */
} memcheck_result;

char *memcheck_find(void);
/* memcheck_find for a user's --memcheck: KOPT_E_PYTHON with the hint when there is none. */
int memcheck_locate(char **out, kerr *e);

/* Counts the error reports in log[0..len) (the sanitizer's "=========" lines: a report starts
 * with a line "========= <what>" whose text is not a summary or a banner, and its location is
 * the first following "at ..." line) into *r, which it zeroes first. */
void memcheck_parse(const char *log, size_t len, memcheck_result *r);

typedef struct memcheck memcheck;

/* Starts `sanitizer` (memcheck, log in dir/memcheck.log, the worker's stderr in
 * dir/memcheck-worker.log) around `python`'s worker and sends it `load` with load_args; the
 * sanitized worker is not restarted if it dies (the check is then off for the rest of the
 * session). KOPT_E_PYTHON / KOPT_E_WORKER as worker_start, or the load's error. */
int memcheck_open(const char *sanitizer, const char *python, const char *dir, const json_t *load_args, double timeout_s,
                  memcheck **out, kerr *e);

/* Sends `op` with args (stolen) to the sanitized worker and fills *r with the errors the
 * sanitizer logged meanwhile. The worker's own failure (a crash, a timeout, an error answer)
 * is returned as its code with e set, *r still filled from the log. */
int memcheck_run(memcheck *m, const char *op, json_t *args, double timeout_s, memcheck_result *r, kerr *e);

void memcheck_close(memcheck *m);

#endif
