/* record.h — one problem's result in a `kopt bench` sweep, typed: what the parent measured
 * (status, exit code, wall time, disk) and what the child's document says (the optimize
 * document of docs/schema/optimize.md, or {"ok": false, "error": {...}}).
 *
 * Reading the document is defensive: any field may be missing, null or of the wrong type, and
 * is then "not measured" (NAN for numbers, -1 for counts and flags, NULL for strings). Fallbacks
 * (docs/schema/bench.md):
 *  - speedup_vs_default: model.speedup_vs_default, else model.speedup when the search started
 *    from the default module (model.start "default" or absent), else (start "max-autotune")
 *    speedup.estimate * compiled_ms / max_autotune_ms, without a CI;
 *  - speedup_vs_max_autotune: model.speedup_vs_max_autotune, else model.speedup when the
 *    search started from max-autotune, else speedup.estimate * max_autotune_ms / compiled_ms,
 *    without a CI;
 *  - as_called_vs_default / _max_autotune: model.as_called_* (no fallback: NAN when absent);
 *  - disk_bytes: the size the parent measured, else resources.disk_bytes.
 *
 * Ownership: a bench_record owns its strings and setup_steps (bench_record_clear, NULL-safe,
 * idempotent); documents passed in are borrowed.
 */
#ifndef KOPT_BENCH_RECORD_H
#define KOPT_BENCH_RECORD_H

#include <jansson.h>
#include <stdint.h>

#include "store/store.h"

typedef enum {
    BENCH_NOT_RUN = 0,          /* selected but no result in the store (yet) */
    BENCH_RUNNING,
    BENCH_DONE,
    BENCH_FAILED,
    BENCH_TIMEOUT,
} bench_status;

const char *bench_status_name(bench_status st);   /* "not run", "running", "done", ... */

typedef enum { BENCH_START_UNKNOWN = 0, BENCH_START_DEFAULT, BENCH_START_MAX_AUTOTUNE } bench_start;
const char *bench_start_name(bench_start s);      /* NULL, "default", "max-autotune" */

typedef struct bench_ci {
    double est, lo, hi;         /* NAN when not known; lo/hi NAN when there is no interval */
} bench_ci;

#define BENCH_MAX_STEPS 64   /* setup steps read from one document; further ones are dropped */

/* One worker op's wall time in the setup (resources.setup_by_step of the report). */
typedef struct bench_step_s {
    char *op;                   /* owned */
    double s;
} bench_step_s;

typedef struct bench_record {
    /* identity and what the parent measured */
    char *rel, *sha, *level_name, *gpu, *owner, *started_at, *ended_at;
    int level;
    bench_status status;
    int exit_code;              /* -1: none */
    int gpu_index;              /* -1: none */
    double wall_s;              /* NAN: not measured */
    double budget_s;            /* the configuration's budget */
    double disk_bytes;          /* NAN: not measured */
    /* from the document */
    char *device, *outcome;
    char *floor_gap;            /* model.floor_gap.reason: why kopt's module stays above 1.3x its floor (NULL: not said) */
    char *ma_error;             /* model.max_autotune_error: why max-autotune was not measured (NULL: not said) */
    double eager_ms, default_ms, max_autotune_ms, kopt_ms, floor_ms;
    bench_start start;
    bench_ci vs_default, vs_max_autotune;
    bench_ci as_called_vs_default, as_called_vs_max_autotune; /* model.as_called_*: timed as the model is
                                                                * called (host dispatch in); NAN: not measured */
    double setup_s, search_s, final_s;
    double used_wall_s;
    int64_t candidates;         /* -1: not known */
    /* the gates' wall time over the candidates the search judged (verify.candidates[].gates[]
     * .seconds, summed per gate; gate_s[0] for gate 1 ... gate_s[3] for gate 4; NAN when no
     * candidate reached that gate), and how many candidates reached gate 2 (-1: not known) */
    double gate_s[4];
    int64_t gated;
    int spent_before_search;    /* -1: not known, else 0/1 */
    double peak_gpu_bytes, context_bytes, working_set_bytes, f64_peak_gpu_bytes;
    double eager_peak_gpu_bytes; /* the user's eager model's runs (a memory phase of their own) */
    double inputs_peak_gpu_bytes; /* the user's get_inputs() drawing seeds' inputs (likewise) */
    int floor_ok;               /* model.floor_check.ok: 1, 0 (some measured time is below its floor), -1 not known */
    char *floor_below;          /* model.floor_check.below as "what (kind) T ms, R x its floor F ms" joined by "; "
                                 * (which floor is wrong; NULL: none, or not said) */
    /* where the memory went (resources.peak_by_step / outside_allocator_by_step of the report):
     * the main-phase step with the largest allocator peak (the one peak_gpu_bytes is made of; an
     * "op/phase" step is another phase's), and the step where the memory held outside the
     * allocator (CUDA context, libraries, loaded kernels) first came within 10% of its largest
     * value above its smallest (NULL / NAN: not recorded) */
    char *peak_step, *growth_step;
    double peak_step_bytes, growth_bytes;
    /* where the setup's wall time went (resources.setup_by_step of the report: the worker
     * requests made before the search, per op, in the report's order; at most BENCH_MAX_STEPS
     * ops with a finite seconds >= 0), and the setup's time outside them
     * (resources.setup_outside_requests_s; NAN: not recorded). setup_steps is owned, NULL when
     * the report has no setup_by_step (nsetup_steps 0) */
    bench_step_s *setup_steps;
    size_t nsetup_steps;
    double setup_outside_s;
    /* the search's verdicts, from the report's kernels table: candidates refused at each gate,
     * summed over the kernels (refused[0] gate 1 ... refused[3] gate 4; -1: no table), the
     * kernels the output replaced as "name: change" joined by "; " (NULL: none or no table), and
     * the compiler module the final measurement made the output (model.final_pick.module: NULL
     * when none was re-picked) */
    int64_t refused[4];
    char *replaced, *final_pick;
    /* the failure, when the document is an error object (or the parent made one) */
    char *error_kind, *error_message;
} bench_record;

/* Fills the document part of r from doc (an object, or anything else: nothing is read). */
void bench_record_read_doc(bench_record *r, const json_t *doc);
/* A record from a store row: identity, status and measurements, then its doc_json. */
void bench_record_from_row(bench_record *r, const store_bench_row *row);
/* An empty record (status BENCH_NOT_RUN, everything "not measured"). Strings are copied. */
void bench_record_init(bench_record *r, const char *rel, const char *sha, int level, double budget_s);
void bench_record_clear(bench_record *r);

/* Derived figures (NAN when an input is missing): kopt_ms / floor_ms (1 = at the floor),
 * peak_gpu_bytes / working_set_bytes. */
double bench_record_floor_ratio(const bench_record *r);
double bench_record_peak_ratio(const bench_record *r);
/* wall_s <= budget_s * 1.1 + 15: 1, 0, or -1 when the wall time is not known. */
int bench_record_within_budget(const bench_record *r);

/* "level1" for N > 0, "flat" for 0: malloc'd. */
char *bench_level_name(int level);

#endif
