/* decide.h — the verdicts of gates 2, 3 and 4 (docs/CANDIDATES.md), computed from the raw data
 * the worker produced: comparison statistics (tensor.h: the worker reduces outputs where they
 * live, under the tolerances the core passes) and timing samples. Pure logic: no worker, no
 * GPU, unit-tested.
 *
 * gate2_decide: for every input set of an `isolate` result, every checked argument of every
 *   run of the candidate must match the original's within the dtype's default tolerance
 *   (tensor_default_tol; NaN/Inf positions must match): the first run decides plainly; a later
 *   run that fails where the first passed is reported as a candidate that disagrees with
 *   itself (a race, or a read of uninitialised memory). A candidate that wrote to one of its
 *   read-only inputs is refused. The statistics must have been computed under the dtype's
 *   tolerance (checked). Fills a JSON verdict with, per set and argument, the mismatch count
 *   and max abs/rel error; `reason` names the first failure.
 *   One exception, because a fixed fp32 tolerance cannot tell a different summation order from
 *   an error (a scan or a long sum regrouped: a few elements off by 1e-6 of their value): an
 *   fp32 (or fp64) argument whose only mismatches are finite, whose largest error is at most
 *   GATE2_REORDER_REL of the output's scale (max |ref|) and whose relative norm error is at
 *   most the same passes gate 2 marked `deferred_to_float64`; gate 3 then judges the model
 *   against float64 (its rho test), as it does every candidate. Lower precision (bf16, fp16,
 *   TF32: errors of 1e-4..1e-2 of scale) stays far above that bound and is refused here.
 * gate2_reorder_only: that test on one comparison (1 when it applies).
 * gate3_*: model level. Strict: the re-stitched module's outputs against the eager model's,
 *   allclose at the dtype's default tolerance. Fallback when strict fails: the float64 error
 *   ratio rho = ||opt - ref64||inf / ||base - ref64||inf (base: the compiled baseline's output
 *   on the same inputs); accepted only if rho <= rho_max and ||opt - ref64||inf is within the
 *   scale-aware bound max(5e-3, 1e-3 * ||ref64||inf) or, where the baseline is already beyond
 *   that bound, within the baseline's own error; an exact baseline asks opt to be exact
 *   up to 1e-6 of the output's scale (gate3_accept_rho). Besides the largest error, a count:
 *   the elements off float64 by more than GATE3_REL_ERR of their own value (above a floor of
 *   1e-6 of the output's scale) may be at most rho_max times the baseline's count plus a
 *   slack (gate3_count_limit, inclusive) -- the bound at the largest magnitude lets a bf16 output flush
 *   every |y| < 0.01 (the dtype's own rounding is 2^-9 relative, far below 1/16).
 * gate4_decide: speedup = median(base)/median(cand) over interleaved rounds, with a 95% paired
 *   bootstrap interval (stats_speedup_ci_paired, 4000 replicates, the caller's seed); accepted
 *   only if its lower end exceeds 1 + min_gain. At least 2 rounds; unusable samples (empty,
 *   non-finite, a median <= 0) are KOPT_E_WORKER.
 *
 * Ownership: JSON results are new references for the caller; inputs are borrowed.
 */
#ifndef KOPT_DECIDE_H
#define KOPT_DECIDE_H

#include <jansson.h>

#include "gates/stats.h"
#include "gates/tensor.h"
#include "util/err.h"

/* isolate: the worker's result ({"sets":[{"name","args":[{"arg","runs":[stats...]}],
 * "inputs_changed":[..], "outside_writes":[..] (absent: none), "scratch_outside_writes": bool
 * (absent: false), "reference_changed": bool (absent: false)}], "checked":[..]}).
 * Refused: a read-only input written, a fence around an output or a plan's scratch buffer written
 * (the worker allocates each between fences of random bytes), or the kept reference changed while
 * the candidate ran.
 * Returns 0 and sets *passed / *verdict, or KOPT_E_WORKER for a malformed result. */
int gate2_decide(const json_t *isolate, int *passed, json_t **verdict, kerr *e);
#define GATE2_REORDER_REL 1e-5    /* summation-order differences: at most this much of the scale */
int gate2_reorder_only(const tensor_cmp *c);

typedef struct gate3_opts {
    double rho_max;     /* default 10 */
    double abs_bound;   /* the absolute bound's floor: max(abs_bound, 1e-3 * ||ref64||inf,
                         * GATE3_ULPS * u * ||ref64||inf); default 5e-3 */
} gate3_opts;

#define GATE3_ULPS 4.0            /* 4 u |x| >= 2 ulp(x) for any x of a binary format */

#define GATE3_EXACT_BASE 1e-8     /* a baseline this close to float64 counts as exact */
#define GATE3_EXACT_REL 1e-6      /* then opt must be within this much of ||ref64||inf */

/* The float64 error ratio of one output from two comparisons against the float64 reference:
 * opt's and base's (see above). */
double gate3_rho(const tensor_cmp *opt_vs_ref64, const tensor_cmp *base_vs_ref64, double *opt_err, double *base_err);

/* The scale-aware absolute bound of one output: max(abs_bound, 1e-3 * ref_abs_max,
 * GATE3_ULPS * roundoff * ref_abs_max), roundoff the output dtype's unit roundoff
 * (tensor_unit_roundoff; 0 for none). */
double gate3_abs_bound(double ref_abs_max, double roundoff, const gate3_opts *o);

/* Decide the fallback for one output (the reference design's rule): when the baseline is exact
 * (base_err < GATE3_EXACT_BASE), opt must be within max(GATE3_EXACT_BASE, GATE3_EXACT_REL *
 * ref_abs_max) of the float64 reference (the scale-relative test; rho is undefined there);
 * otherwise rho = opt_err / base_err must be <= rho_max and opt_err <= max(gate3_abs_bound (of
 * the output dtype's unit roundoff), base_err): on an input where the baseline itself is beyond
 * the bound, opt may be as far from float64 as the baseline, no further. Limits are inclusive.
 * Returns 1 when accepted. */
int gate3_accept_rho(double opt_err, double base_err, double ref_abs_max, double roundoff, const gate3_opts *o);

#define GATE3_REL_ERR (1.0 / 16)  /* an element this far off its own value counts (8x bf16's 2 ulps) */
#define GATE3_COUNT_SLACK 64      /* counted elements always allowed ... */
#define GATE3_COUNT_FRAC 1e-6     /* ... plus this fraction of the output's elements */

/* The most elements of one output the re-stitched module may have off float64 by more than
 * GATE3_REL_ERR of their value, given the baseline's count on the same inputs:
 * rho_max * base_count + GATE3_COUNT_SLACK + GATE3_COUNT_FRAC * numel (rounded down). */
size_t gate3_count_limit(size_t base_count, size_t numel, const gate3_opts *o);


typedef struct gate4_result {
    stats_ci ci;        /* speedup estimate and 95% interval */
    double base_ms, cand_ms;   /* medians */
    int passed;
} gate4_result;

int gate4_decide(const double *base, const double *cand, size_t n, double min_gain, uint64_t seed,
                 gate4_result *r, kerr *e);

#define GATE4_FLOOR_MARGIN 0.9    /* times below 90% of the memory floor are refused */
#define GATE4_FLOOR_MIN_L2 4.0    /* ... when the model moves at least 4x the L2's size */
#define GATE4_REVERIFY 10.0       /* speedups above this count only if measured twice */

/* The physics check of gate 4: 1 when a candidate's median time `cand_ms` is below
 * GATE4_FLOOR_MARGIN of the model's memory-traffic floor (its own inputs read once and outputs
 * written once at the measured rates): it cannot have done the work. Only meaningful when the
 * model's I/O (`io_bytes`) dwarfs the L2 (`l2_bytes`), whose write-back can hide behind the
 * timing of small problems; 0 (no verdict) otherwise or when the floor is unknown (<= 0). */
int gate4_below_floor(double cand_ms, double floor_ms, double io_bytes, double l2_bytes);

#define GATE4_HOST_ROUNDS 12   /* rounds timed as the model is called (host dispatch included) */
/* Rounds added when the first GATE4_HOST_ROUNDS say "slower as called" while the GPU time passed:
 * the host check is then decided once more on all the rounds together (one pooled sample, so a
 * transient burst of host noise on a shared machine does not refuse an honest candidate, and a
 * candidate that is slower as called is refused on a three-times larger sample). */
#define GATE4_HOST_RECHECK_ROUNDS 36

/* The host check of gate 4: the speedup over samples timed as the model is called (the wall
 * time of a call to the end of its GPU work, host dispatch included, no stall) with its 95%
 * paired interval in *ci; *slower = 1 when the whole interval lies below 1 -- the candidate's
 * GPU gain is eaten by host work it adds (launches, allocations), as the user runs the model.
 * At least 2 rounds; unusable samples are KOPT_E_WORKER, as in gate4_decide. */
int gate4_host_decide(const double *base, const double *cand, size_t n, uint64_t seed, stats_ci *ci, int *slower,
                      kerr *e);

/* Gate 4's re-check of timed outputs (worker `time` with fresh_inputs: every run but the first
 * reads the loaded inputs rotated in place, never the contents the run before it read, so a
 * kernel that returns results it stashed -- or an intermediate the baseline left in recycled
 * memory -- for pointers or contents seen before is stale there). In GATE4_RECHECK_ROUNDS rounds
 * drawn at random, each output of the candidate (whole, or one window of it) is compared with an
 * untimed baseline run's right after it on the same contents: one output's counts, as the
 * worker reports them. 8 rounds: a kernel must cheat in most runs to move gate 4's medians, and
 * then escapes all 8 with a chance below 1/256. */
#define GATE4_RECHECK_ROUNDS 8
#define GATE4_RECHECK_REL 0.01       /* a float element is off past 1% of |ref| and of max |ref| */
#define GATE4_RECHECK_FRACTION 1e-3  /* at most this fraction of an output's elements may be off */
typedef struct gate4_recheck_out {
    int mismatch;      /* another number of outputs, a tensor against a non-tensor, another shape */
    int integer;       /* an integer or bool output: judged exactly (n_mismatch) */
    long long numel;   /* elements compared */
    long long n_mismatch, n_rel_err, n_nonfinite; /* exact differences; off past the tolerance;
                                                    non-finite where the other is not (or another) */
} gate4_recheck_out;

/* Whether one re-checked output agrees with the baseline's: no mismatch of form, and at most
 * GATE4_RECHECK_FRACTION of its elements off (an integer output: different at all; a float
 * one: off past GATE4_RECHECK_REL, or non-finite unlike the baseline's). A stale output is off
 * almost everywhere; two honest ones differ by rounding, far inside the tolerance. */
int gate4_recheck_agrees(const gate4_recheck_out *o);

/* How many re-checked rounds the worker owes per candidate in a timing of `rounds` rounds:
 * GATE4_RECHECK_ROUNDS, or every round when there are fewer. */
int gate4_recheck_want(int rounds);

/* Rounds timed as the model is called (host rounds) re-checked as the timed ones are, per host
 * timing: a kernel that could tell those rounds from the stalled ones (no stall before them) and
 * did less work there only to look faster as called is stale in them. Fewer than the timed
 * rounds' 8: to move a median of the host rounds it must cheat in most of them, and then escapes
 * 3 re-checks with a chance below 1/8 per timing, every timing (gate 4's, the final's, their added
 * rounds) drawing again. */
#define GATE4_HOST_CHECKED_ROUNDS 3

/* Re-checked rounds the worker owes per candidate among `host_rounds` host rounds:
 * GATE4_HOST_CHECKED_ROUNDS, or all of them when there are fewer. */
int gate4_host_checked_want(int host_rounds);

#endif
