/* stats.h — the figures of a `kopt bench` summary: geometric means, KernelBench's fast_p and
 * the per-level aggregates, computed from typed records (record.h).
 *
 * Definitions (docs/schema/bench.md):
 *  - correct: the child exited 0 (status done, exit code 0);
 *  - faster than p (p > 0): the lower end of the speedup's 95% CI is above p (strictly: a CI
 *    that starts exactly at p is not faster; no CI, not faster);
 *  - fast_p against a baseline: the fraction of the group's problems (all selected ones, also
 *    failed or not run) that are correct and faster than p; fast_0 is the fraction correct;
 *  - geomean: the geometric mean of the speedup estimates of the correct problems that have
 *    one (n says how many); NAN when there is none.
 *
 * Ownership: records are borrowed. A bench_summary owns its level array (bench_summary_free).
 */
#ifndef KOPT_BENCH_STATS_H
#define KOPT_BENCH_STATS_H

#include <stddef.h>

#include "bench/record.h"

#define BENCH_NP 4
extern const double BENCH_P[BENCH_NP];   /* 0, 1.0, 1.5, 2.0 */

/* What a speedup is against: the two compiled modules by GPU time (the gates' measure), and the
 * same two timed as the model is called (host dispatch included: record.h's as_called_*). */
typedef enum {
    BENCH_VS_DEFAULT = 0,
    BENCH_VS_MAX_AUTOTUNE = 1,
    BENCH_AS_CALLED_VS_DEFAULT = 2,
    BENCH_AS_CALLED_VS_MAX_AUTOTUNE = 3,
    BENCH_NBASE = 4
} bench_baseline;

/* The geometric mean of the finite, positive values of v[0..n) (others skipped); *used (may be
 * NULL) how many counted. NAN when none. */
double bench_geomean(const double *v, size_t n, size_t *used);
int bench_correct(const bench_record *r);
int bench_faster(bench_ci ci, double p);
const bench_ci *bench_speedup(const bench_record *r, bench_baseline b);
/* fast_p over recs[0..n); NAN when n == 0. */
double bench_fast_p(const bench_record *const *recs, size_t n, bench_baseline b, double p);

typedef struct bench_group {
    int level;                  /* -1 for the whole selection */
    char name[32];              /* "level1", "flat", "all" */
    size_t n, correct, failed, timeouts, running, not_run;
    double geomean[BENCH_NBASE];          /* by bench_baseline; NAN when none */
    size_t geomean_n[BENCH_NBASE];
    double fast_p[BENCH_NBASE][BENCH_NP]; /* NAN when no problem of the group has that baseline measured */
    double setup_s, search_s, final_s;    /* sums over the problems that report them; NAN: none */
    int64_t candidates;         /* sum; -1 when no problem reports it */
    double peak_gpu_max;        /* bytes; NAN: none */
    double peak_ratio_max;      /* peak / working set; NAN: none */
    double disk_mean, disk_max; /* bytes per problem; NAN: none */
    double wall_mean, wall_max; /* s per problem; NAN: none */
    size_t wall_n, within_budget;
    /* Headroom, from the final measurement's model times (not the A/B estimates), over the
     * correct problems with a floor, a default and a kopt time, none of the module times below
     * the floor (a floor known wrong says nothing about headroom): */
    size_t room_n;
    double room_default;        /* geomean default_ms / floor_ms: the speedup over default with every model at its floor; NAN: none */
    double room_kopt;           /* geomean kopt_ms / floor_ms (1: every model at its floor); NAN: none */
    size_t room_ma_n;           /* of those, the problems with a max-autotune time */
    double room_ma;             /* geomean max_autotune_ms / floor_ms over them; NAN: none */
} bench_group;

/* Whether r counts in the headroom figures (room_* above). */
int bench_record_has_room(const bench_record *r);

/* The aggregates of recs[0..n) (level and name are left to the caller). */
void bench_group_compute(const bench_record *const *recs, size_t n, bench_group *g);

typedef struct bench_summary {
    bench_group *levels;        /* one per level present, by level number */
    size_t nlevels;
    bench_group all;
} bench_summary;

/* Where the setup's time went over a suite: per worker op, the seconds of resources.setup_by_step
 * summed over the finished problems (status done) that report it. */
typedef struct bench_setup_op {
    const char *op;             /* borrowed from a record */
    double total_s;
} bench_setup_op;
typedef struct bench_setup_totals {
    bench_setup_op *ops;        /* owned; largest total first (then by name) */
    size_t nops;
    size_t problems;            /* finished problems that report setup_by_step */
    double setup_s;             /* their budget.setup_s summed (NAN: none reports it) */
    double outside_s;           /* their setup_outside_requests_s summed (NAN: none) */
} bench_setup_totals;
/* The totals over recs[0..n) (the records must outlive *out); bench_setup_totals_free frees
 * the ops (NULL-safe, idempotent). */
void bench_setup_totals_build(const bench_record *recs, size_t n, bench_setup_totals *out);
void bench_setup_totals_free(bench_setup_totals *t);

void bench_summary_build(const bench_record *recs, size_t n, bench_summary *out);
void bench_summary_free(bench_summary *s);

#endif
