/* optimize.h — `kopt optimize`: profile a compiled model, search for faster replacements of
 * its Triton kernels with the five agents (agent.h), pass every candidate through the four
 * gates (verify.h's session), re-stitch the winners, and describe it all in one document
 * (docs/schema/optimize.md).
 *
 * Search: the analyst ranks kernels by model time to gain; for each, the planner proposes
 * rounds of plans (a coarse grid, then a beam around the fastest), the executor turns them
 * into candidates, gate 1 runs on every candidate before anything executes, a kernel-level
 * screen (worker `bench_kernels`, interleaved, L2 flushed) times the survivors against the
 * original kernel, and the fastest few go through gates 1-4 (none more than 2% behind, in the
 * screen, the kernel's fastest accepted candidate: it could not become the pick). Budget: wall
 * time and number of candidates; a kernel near its ceiling, or whose search converged, is not
 * searched further.
 * Never worse: when nothing passes, the output is the compiler's module.
 * Ownership: *doc is a new reference; opts, agents and the worker are borrowed.
 */
#ifndef KOPT_OPTIMIZE_H
#define KOPT_OPTIMIZE_H

#include <jansson.h>

#include "agents/agent.h"
#include "util/err.h"
#include "worker/worker.h"

typedef struct optimize_opts {
    const char *problem;
    const char *out_dir;
    const char *workdir;          /* scratch, must exist */
    double budget_s;              /* wall-clock budget of the whole run: setup (compile, capture,
                                   * profile, baselines), search and final measurement (default 120) */
    double t_start;               /* opt_now()-style monotonic seconds when the run began (the
                                   * worker's start counts); <= 0: when optimize_run is called */
    int max_candidates;           /* candidates generated at most (default 64) */
    int screen_top;               /* per round, candidates sent to the gates (default 2) */
    int max_rounds;               /* planner rounds per kernel (default 3) */
    int max_autotune;             /* also compile max-autotune-no-cudagraphs; start from the faster */
    int rounds;                   /* gate 4 / final timing rounds (default 30) */
    int seeds;                    /* gates 2 and 3 (default 3) */
    double min_gain;              /* gate 4 (default 0.02) */
    double timeout_s;             /* per candidate step (default 120) */
    int use_ncu;                  /* profiler: add Nsight Compute counters when ncu is usable */
    const char *python;           /* the worker's python (for ncu's target process) */
    const char *memcheck;         /* non-NULL: gate 2's memcheck with this compute-sanitizer (memcheck.h) */
    agent *agents[AGENT_NROLES];  /* NULL: built-in (profiler is always built in) */
    void *store;                  /* kstore* or NULL (no memory across runs) */
    void (*progress)(const char *line, void *ctx);
    void *progress_ctx;
} optimize_opts;

int optimize_run(worker *w, const optimize_opts *o, json_t **doc, kerr *e);

/* report.md and report.html of an optimize document into out_dir (src/report/). */
int optimize_write_reports(const json_t *doc, const char *out_dir, kerr *e);

#endif
