/* optimize_int.h — internals shared by the src/optimize files (pipeline, search, memory). Not an
 * API: the search state of one `kopt optimize` run. */
#ifndef KOPT_OPTIMIZE_INT_H
#define KOPT_OPTIMIZE_INT_H

#include <jansson.h>
#include <stdint.h>

#include "agents/agent.h"
#include "artifact/artifact.h"
#include "optimize/krow.h"
#include "optimize/optimize.h"
#include "store/store.h"
#include "verify/verify.h"

typedef struct octx {
    worker *w;
    const optimize_opts *o;
    verify_session *vs;
    const artifact *a;
    agent *ag[AGENT_NROLES];
    int owned[AGENT_NROLES];
    double t0;
    int used;                 /* candidates generated */
    json_t *doc;
    json_t *attempts;         /* borrowed from doc */
    json_t *experiences;      /* borrowed from doc */
    kstore *store;            /* borrowed; NULL: no memory across runs */
    int64_t run_id;
    int64_t kernel_id;        /* store row of the kernel being searched */
    const char *gpu;
    int reused;               /* candidates skipped because the store had their verdict */
    double check_s;           /* longest gates 1-4 run of one candidate so far; the budget holds
                               * this much back for the final measurement (gate 4's timing again) */
    double screen_compile_s;  /* worker wall time importing/compiling/warming screened candidates */
    int compile_threads;      /* threads the worker compiled them with (largest seen) */
    int resource_errors;      /* candidates kopt could not judge: it ran out of GPU memory */
    double t_search, t_final; /* when the search and the final measurement began (opt_now) */
    /* the worker's per-op time table (worker.h) when optimize_run began and when the search
     * began: the report's resources.seconds_by_step / setup_by_step are differences of these */
    worker_op_time ops_start[WORKER_OP_TIMES_MAX], ops_search[WORKER_OP_TIMES_MAX];
    size_t nops_start, nops_search;
    char *sass_python;        /* owned: gate 1's machine-code check for an LLM executor's
                               * candidates (NULL: off) */
    krows rows;               /* owned: the kernel table (krow.h), written to the document at the end */
} octx;

#define OPT_FLOOR_GAP 1.3   /* a model above this many times its floor gets model.floor_gap */

/* {"ratio", "above", "reason"}: why the model (model.optimized_ms over model.floor_ms) stays
 * above OPT_FLOOR_GAP times its floor, from the kernel table's rows (after the search) and
 * library calls (gap.c); NULL when it does not, or the figures are missing. A new reference. */
json_t *opt_floor_gap(const json_t *model, const krows *t);


double opt_now(void);
double opt_budget(const octx *c);
int opt_max_cands(const octx *c);
int opt_over_budget(const octx *c);
/* search.c: the kernel screen's worker limit in seconds, 4 x timeout_s (480 when timeout_s <= 0,
 * four times the 120 s default step), capped at left_s (what is left of the budget) + 15 s and
 * at least 15 s (unless the four steps are less). */
double opt_screen_timeout_s(const optimize_opts *o, double left_s);

/* The reason the store keeps for an attempt (new string, caller frees; NULL when there is none):
 * a screened-out one says what the screen decided -- its own reason when it was faster but not
 * gated (not among the round's fastest, a faster one already gated, no budget left for its
 * gates), else that it was not 2% faster; any other outcome keeps `reason`. */
char *opt_stored_reason(int screened, const char *reason);

void opt_progress(octx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* memory.c: the store as the summarizer's memory. Failures are logged and drop the store. */
void mem_warn(octx *c, const kerr *e);
/* One executor candidate, read from its answer at the agent edge (agent.h, opt_cands_read):
 * the search works on these, not on the answer's JSON. */
typedef struct opt_cand {
    char *label;    /* owned, or NULL when the answer gave none */
    char *source;   /* owned: the candidate file (docs/CANDIDATES.md) */
    json_t *config; /* owned reference or NULL: the template parameters, opaque to the search (the
                     * planner's history and the store's plan column carry them) */
} opt_cand;
typedef struct opt_cands {
    opt_cand *v;
    size_t n;
} opt_cands;
/* The candidates of an executor answer ({"candidates":[{"label","source","config"}]}): entries
 * without a source string are skipped; *out owns what it holds (opt_cands_free). */
void opt_cands_read(const json_t *answer, opt_cands *out);
void opt_cands_free(opt_cands *c);
/* One planner plan, read from its answer at the agent edge (agent.h, opt_plans_read): the search
 * works on these; `raw` is what the executor is asked to carry out (its context's "plan"). */
typedef struct opt_plan {
    char *direction; /* owned: the plan's direction ("launch_config", "rewrite", ...; "?" if none) */
    json_t *raw;     /* owned reference: the plan object as the planner wrote it */
} opt_plan;
typedef struct opt_plans {
    opt_plan *v;
    size_t n;
    char *why; /* owned or NULL: why the planner has no plan (its answer's "why") */
} opt_plans;
/* The plans of a planner answer ({"plans":[{"direction","params","rationale"}], "why"}): entries
 * that are not objects are skipped; *out owns what it holds (opt_plans_free, NULL-safe, twice
 * harmless). */
void opt_plans_read(const json_t *answer, opt_plans *out);
void opt_plans_free(opt_plans *p);

void mem_attempt(octx *c, const char *direction, const opt_cand *cand, store_verdict outcome, int gate,
                 const char *reason, double kernel_ms, double orig_ms, double speedup, const char *experience,
                 const char *tags);
int mem_seen(octx *c, const char *text, store_seen *seen);
/* Registers the kernel (source, launch shapes, GPU) and sets c->kernel_id; when the store holds
 * an accepted candidate for the same identity, writes it to *stored (malloc'd text) with its
 * label/direction. Returns 1 when there is one. */
int mem_kernel(octx *c, int k, const json_t *args, char **stored, char **label, char **direction);
void mem_run_begin(octx *c, const char *problem, const json_t *device);
void mem_run_end(octx *c, const json_t *summary);

/* search.c (a candidate's outcome is agent_outcome, agents/agent.h) */
/* The planner's kernel context (search.c), with `tuned` (NULL: none) as where Inductor's
 * autotuner ended. */
json_t *opt_kernel_ctx(const artifact *a, int k, const tuned_config *tuned);
void opt_record_attempt(octx *c, const char *kernel, const char *kind, const char *direction, const opt_cand *cand,
                        agent_outcome outcome, int gate, const char *reason, double kernel_ms, double orig_ms,
                        double speedup);
int opt_search_kernel(octx *c, const json_t *target, krow *row, int kernels_left, kerr *e);

/* regions.c: the region phase (before the kernel-by-kernel search). Adds a row per region
 * searched to c->rows; members of an accepted region get status KROW_IN_REGION (a library
 * call's vendor row: replaced_by, the regions that replaced calls of that op). Vendor regions
 * (one ATen call a template can replace, artifact/region.h) are searched here too. */
int opt_regions(octx *c, const json_t *profile, int kernels_left, kerr *e);
/* Whether call() has a library call that a vendor region's template applies to. */
int opt_has_vendor_region(const artifact *a);

#endif
