/* stats.h — statistics on timing samples (milliseconds from the worker's `time` op).
 *
 * Descriptive statistics (none modify their input; n == 0 gives NAN):
 *   stats_median      the middle value (mean of the two middle values for even n).
 *   stats_percentile  p in [0, 100], linear interpolation between closest ranks: with the
 *                     sorted values x[0..n-1], h = (n-1)·p/100, result
 *                     x[floor h] + (h - floor h)·(x[floor h + 1] - x[floor h])
 *                     (numpy's default "linear" method; p 50 equals the median).
 *   stats_mean, stats_stddev (sample, n-1; 0 for n == 1), stats_min, stats_max.
 *   stats_mad         median absolute deviation from the median, unscaled (multiply by
 *                     1.4826 for a normal-consistent sigma estimate).
 *
 * Speedup confidence intervals (percentile bootstrap):
 *   estimate = median(base) / median(cand)  (> 1 means the candidate is faster).
 *   stats_speedup_ci: each of `resamples` replicates draws nb values from base and nc values
 *     from cand independently, uniformly with replacement, and computes the same ratio of
 *     medians; [lo, hi] are the (1-conf)/2 and (1+conf)/2 percentiles (as stats_percentile)
 *     of the replicate ratios.
 *   stats_speedup_ci_paired: for interleaved samples where base[i] and cand[i] were measured
 *     in the same round; each replicate draws n pair indices with replacement and uses the
 *     same pairs on both sides, so round-to-round drift (clocks, thermals) that affects both
 *     members of a pair is kept together. Same estimate and percentile method.
 *   Randomness: xoshiro256** seeded through splitmix64 from `seed`; the same inputs and seed
 *   give the same interval on every platform. conf <= 0 means 0.95, resamples <= 0 means 2000.
 *   Returns 0, or KOPT_E_INTERNAL (out filled with NANs) when a sample set is empty, contains
 *   a non-finite value, conf >= 1, or a median is not positive.
 *
 * Ownership: callers own all arrays; nothing here allocates memory that outlives a call.
 */
#ifndef KOPT_STATS_H
#define KOPT_STATS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

double stats_median(const double *x, size_t n);
double stats_percentile(const double *x, size_t n, double p);
double stats_mean(const double *x, size_t n);
double stats_stddev(const double *x, size_t n);
double stats_min(const double *x, size_t n);
double stats_max(const double *x, size_t n);
double stats_mad(const double *x, size_t n);

/* Samples as the worker sends them (a JSON array of numbers): a malloc'd copy (never NULL; the
 * caller frees it) and its length; the median of such an array (0 when empty). */
double *stats_from_json(const json_t *arr, size_t *n);
double stats_median_json(const json_t *arr);

typedef struct stats_ci {
    double estimate;   /* median(base) / median(cand) */
    double lo, hi;     /* confidence interval of the speedup */
    double conf;       /* confidence level used */
    int resamples;     /* bootstrap replicates used */
} stats_ci;

int stats_speedup_ci(const double *base, size_t nb, const double *cand, size_t nc, double conf,
                     int resamples, uint64_t seed, stats_ci *out);
int stats_speedup_ci_paired(const double *base, const double *cand, size_t n, double conf,
                            int resamples, uint64_t seed, stats_ci *out);

/* The deterministic PRNG (xoshiro256**, seeded with splitmix64), exposed for reuse. */
typedef struct stats_rng {
    uint64_t s[4];
} stats_rng;
void stats_rng_seed(stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(stats_rng *r);
/* Uniform integer in [0, n), unbiased (rejection sampling); n must be > 0. */
uint64_t stats_rng_below(stats_rng *r, uint64_t n);

#endif
