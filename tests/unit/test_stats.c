/* test_stats.c — gates/stats: descriptive statistics and bootstrap speedup intervals. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "gates/stats.h"
#include "util/err.h"

#define NEAR(a, b, tol) cr_assert(fabs((a) - (b)) <= (tol), "%s = %.17g, expected %.17g", #a, \
                                  (double)(a), (double)(b))

Test(stats, median_odd_even_and_empty) {
    double odd[] = {5, 1, 4, 2, 3};
    double even[] = {10, 1, 4, 3};
    NEAR(stats_median(odd, 5), 3.0, 0);
    NEAR(stats_median(even, 4), 3.5, 0);
    double one[] = {7.25};
    NEAR(stats_median(one, 1), 7.25, 0);
    cr_assert(isnan(stats_median(odd, 0)));
    /* input untouched */
    cr_assert(odd[0] == 5 && odd[1] == 1 && odd[4] == 3);
}

Test(stats, median_matches_sorting_on_random_data) {
    stats_rng r;
    stats_rng_seed(&r, 99);
    for (int trial = 0; trial < 300; trial++) {
        size_t n = 1 + (size_t)stats_rng_below(&r, 40);
        double x[40];
        for (size_t i = 0; i < n; i++) x[i] = (double)stats_rng_below(&r, 10); /* many ties */
        double want = stats_percentile(x, n, 50);
        NEAR(stats_median(x, n), want, 1e-12);
    }
}

Test(stats, percentile_linear_interpolation) {
    double x[] = {40, 10, 30, 20};   /* sorted 10 20 30 40 */
    NEAR(stats_percentile(x, 4, 0), 10, 0);
    NEAR(stats_percentile(x, 4, 100), 40, 0);
    NEAR(stats_percentile(x, 4, 50), 25, 1e-12);
    NEAR(stats_percentile(x, 4, 25), 17.5, 1e-12);    /* h = 0.75 */
    NEAR(stats_percentile(x, 4, 90), 37, 1e-12);      /* h = 2.7 */
    NEAR(stats_percentile(x, 4, 100.0 / 3.0), 20, 1e-12);
    double one[] = {3};
    NEAR(stats_percentile(one, 1, 37), 3, 0);
    cr_assert(isnan(stats_percentile(x, 0, 50)));
}

Test(stats, mean_stddev_min_max_mad) {
    double x[] = {2, 4, 4, 4, 5, 5, 7, 9};
    NEAR(stats_mean(x, 8), 5.0, 1e-12);
    NEAR(stats_stddev(x, 8), sqrt(32.0 / 7.0), 1e-12);
    NEAR(stats_min(x, 8), 2, 0);
    NEAR(stats_max(x, 8), 9, 0);
    /* median 4.5; |x - 4.5| = 2.5 .5 .5 .5 .5 .5 2.5 4.5 -> median 0.5 */
    NEAR(stats_mad(x, 8), 0.5, 1e-12);
    double y[] = {1, 1, 2, 2, 4, 6, 9};  /* median 2; deviations 1 1 0 0 2 4 7 -> 1 */
    NEAR(stats_mad(y, 7), 1.0, 1e-12);
    NEAR(stats_stddev(y, 1), 0.0, 0);
}

Test(stats, rng_is_deterministic_and_bounded) {
    stats_rng a, b;
    stats_rng_seed(&a, 42);
    stats_rng_seed(&b, 42);
    for (int i = 0; i < 100; i++) cr_assert_eq(stats_rng_next(&a), stats_rng_next(&b));
    stats_rng_seed(&b, 43);
    cr_assert_neq(stats_rng_next(&a), stats_rng_next(&b));
    int counts[7] = {0};
    for (int i = 0; i < 70000; i++) {
        uint64_t v = stats_rng_below(&a, 7);
        cr_assert(v < 7);
        counts[v]++;
    }
    for (int i = 0; i < 7; i++) cr_assert(counts[i] > 9000 && counts[i] < 11000, "%d", counts[i]);
}

/* Synthetic timings: true median `med`, multiplicative noise of about +-spread. */
static void synth(double *x, size_t n, double med, double spread, uint64_t seed) {
    stats_rng r;
    stats_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        double u = (double)(stats_rng_next(&r) >> 11) / 9007199254740992.0; /* [0,1) */
        x[i] = med * (1.0 + spread * (2.0 * u - 1.0));
    }
}

Test(stats, speedup_ci_contains_true_ratio_and_excludes_one) {
    double base[60], cand[60];
    synth(base, 60, 2.0, 0.05, 1);
    synth(cand, 60, 1.0, 0.05, 2);
    stats_ci ci;
    cr_assert_eq(stats_speedup_ci(base, 60, cand, 60, 0.95, 2000, 7, &ci), 0);
    cr_assert(ci.lo <= ci.estimate && ci.estimate <= ci.hi);
    cr_assert(ci.lo <= 2.0 && 2.0 <= ci.hi, "[%g, %g]", ci.lo, ci.hi);
    cr_assert(ci.lo > 1.0);
    cr_assert(ci.hi - ci.lo < 0.3, "interval too wide: [%g, %g]", ci.lo, ci.hi);
    NEAR(ci.conf, 0.95, 0);
    cr_assert_eq(ci.resamples, 2000);
}

Test(stats, speedup_ci_includes_one_when_no_difference) {
    double base[40], cand[40];
    synth(base, 40, 1.0, 0.10, 11);
    synth(cand, 40, 1.0, 0.10, 12);
    stats_ci ci;
    cr_assert_eq(stats_speedup_ci(base, 40, cand, 40, 0.95, 2000, 3, &ci), 0);
    cr_assert(ci.lo < 1.0 && ci.hi > 1.0, "[%g, %g]", ci.lo, ci.hi);
}

Test(stats, speedup_ci_is_deterministic_per_seed) {
    double base[30], cand[25];
    synth(base, 30, 1.5, 0.2, 5);
    synth(cand, 25, 1.2, 0.2, 6);
    stats_ci a, b, c;
    cr_assert_eq(stats_speedup_ci(base, 30, cand, 25, 0.95, 1000, 123, &a), 0);
    cr_assert_eq(stats_speedup_ci(base, 30, cand, 25, 0.95, 1000, 123, &b), 0);
    cr_assert_eq(stats_speedup_ci(base, 30, cand, 25, 0.95, 1000, 124, &c), 0);
    cr_assert(a.lo == b.lo && a.hi == b.hi && a.estimate == b.estimate);
    cr_assert(a.lo != c.lo || a.hi != c.hi);
    NEAR(a.estimate, stats_median(base, 30) / stats_median(cand, 25), 1e-15);
}

Test(stats, speedup_ci_defaults_and_bad_input) {
    double base[] = {1, 2, 3}, cand[] = {1, 1, 1}, zero[] = {0, 0, 0}, bad[] = {1, NAN, 2};
    stats_ci ci;
    cr_assert_eq(stats_speedup_ci(base, 3, cand, 3, 0, 0, 1, &ci), 0);
    NEAR(ci.conf, 0.95, 0);
    cr_assert_eq(ci.resamples, 2000);
    NEAR(ci.estimate, 2.0, 0);
    cr_assert_eq(stats_speedup_ci(base, 0, cand, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert(isnan(ci.estimate) && isnan(ci.lo));
    cr_assert_eq(stats_speedup_ci(base, 3, zero, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci(base, 3, bad, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci(base, 3, cand, 3, 1.0, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci_paired(base, zero, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
}

Test(stats, paired_ci_uses_the_pairing) {
    /* Strong round-to-round drift shared by both variants: the candidate is always exactly
     * 20% faster in its own round. The paired interval is tight around 1.25; the unpaired
     * one is much wider because it ignores the shared drift. */
    enum { N = 40 };
    double base[N], cand[N], drift[N];
    synth(drift, N, 1.0, 0.4, 77);
    for (int i = 0; i < N; i++) {
        base[i] = 1.0 * drift[i];
        cand[i] = 0.8 * drift[i];
    }
    stats_ci p, u;
    cr_assert_eq(stats_speedup_ci_paired(base, cand, N, 0.95, 2000, 9, &p), 0);
    cr_assert_eq(stats_speedup_ci(base, N, cand, N, 0.95, 2000, 9, &u), 0);
    NEAR(p.estimate, 1.25, 1e-12);
    cr_assert(p.lo <= 1.25 && 1.25 <= p.hi, "[%g, %g]", p.lo, p.hi);
    cr_assert(p.hi - p.lo < 0.05, "paired [%g, %g]", p.lo, p.hi);
    cr_assert(u.hi - u.lo > 2 * (p.hi - p.lo), "unpaired [%g, %g] paired [%g, %g]", u.lo, u.hi,
              p.lo, p.hi);
    cr_assert(p.lo > 1.0);
    stats_ci p2;
    cr_assert_eq(stats_speedup_ci_paired(base, cand, N, 0.95, 2000, 9, &p2), 0);
    cr_assert(p2.lo == p.lo && p2.hi == p.hi);
}

Test(stats, samples_from_worker_json) {
    json_t *a = json_pack("[f, f, f, i]", 3.0, 1.0, 2.0, 10);
    size_t n = 0;
    double *v = stats_from_json(a, &n);
    cr_assert_eq(n, 4);
    cr_expect_float_eq(v[3], 10.0, 0);
    free(v);
    cr_expect_float_eq(stats_median_json(a), 2.5, 1e-12);
    json_t *empty = json_array();
    cr_expect_float_eq(stats_median_json(empty), 0.0, 0);
    json_decref(a);
    json_decref(empty);
}

/* The generator is xoshiro256** seeded through splitmix64 (stats.h): its outputs are pinned, so
 * that "the same inputs and seed give the same interval on every platform" holds against a
 * reference implementation, not only against itself. Reference values: a direct transcription
 * of Vigna's splitmix64 / xoshiro256** in Python. */
Test(stats, rng_matches_the_reference_generator) {
    stats_rng r;
    stats_rng_seed(&r, 42);
    const uint64_t want[] = {0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL, 0xae17533239e499a1ULL,
                             0xecb8ad4703b360a1ULL};
    for (int i = 0; i < 4; i++) cr_assert_eq(stats_rng_next(&r), want[i], "output %d", i);
    /* stats_rng_below: rejection of the lowest 2^64 mod n values, then x mod n */
    const uint64_t below[] = {4, 4, 8, 4, 4, 1, 6, 6, 8, 9, 3, 6};
    stats_rng_seed(&r, 7);
    for (int i = 0; i < 12; i++) cr_assert_eq(stats_rng_below(&r, 10), below[i], "draw %d", i);
}

/* Both bootstrap intervals against the same reference implementation (stats.h's method:
 * replicate ratios of medians, then the (1-conf)/2 and (1+conf)/2 linear percentiles). */
Test(stats, bootstrap_intervals_match_the_reference) {
    const double base[] = {1.00, 1.07, 0.98, 1.21, 1.03, 0.95, 1.12};
    const double cand[] = {0.81, 0.90, 0.79, 0.97, 0.86, 0.80, 0.88};
    stats_ci ci;
    cr_assert_eq(stats_speedup_ci_paired(base, cand, 7, 0.9, 64, 2024, &ci), 0);
    NEAR(ci.estimate, 1.1976744186046513, 1e-15);
    NEAR(ci.lo, 1.1976744186046513, 1e-15);
    NEAR(ci.hi, 1.2727272727272729, 1e-15);
    cr_assert(ci.conf == 0.9 && ci.resamples == 64);
    cr_assert_eq(stats_speedup_ci(base, 5, cand, 6, 0.8, 50, 11, &ci), 0);
    NEAR(ci.estimate, 1.2335329341317367, 1e-15);
    NEAR(ci.lo, 1.1410576351752821, 1e-15);
    NEAR(ci.hi, 1.3383411949685533, 1e-15);
}

Test(stats, speedup_ci_refuses_every_unusable_sample_set) {
    double base[] = {1, 2, 3}, cand[] = {1, 1, 1}, zero[] = {0, 0, 0}, inf[] = {1, INFINITY, 2};
    stats_ci ci;
    /* an empty candidate side, zero baseline times, non-finite baseline times, no arrays */
    cr_assert_eq(stats_speedup_ci(base, 3, cand, 0, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert(isnan(ci.estimate) && isnan(ci.lo) && isnan(ci.hi));
    cr_assert_eq(stats_speedup_ci(zero, 3, cand, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci(inf, 3, cand, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci(NULL, 3, cand, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci(base, 3, NULL, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci_paired(zero, cand, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci_paired(base, cand, 0, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert(isnan(ci.hi));
    /* negative conf / resamples mean the defaults too; a conf just below 1 is usable */
    cr_assert_eq(stats_speedup_ci_paired(base, cand, 3, -1, -5, 1, &ci), 0);
    NEAR(ci.conf, 0.95, 0);
    cr_assert_eq(ci.resamples, 2000);
    cr_assert_eq(stats_speedup_ci_paired(base, cand, 3, nextafter(1.0, 0), 10, 1, &ci), 0);
    /* a non-finite value anywhere, the first included */
    double nan0[] = {NAN, 1, 1};
    cr_assert_eq(stats_speedup_ci(base, 3, nan0, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    cr_assert_eq(stats_speedup_ci(nan0, 3, cand, 3, 0.95, 100, 1, &ci), KOPT_E_INTERNAL);
    /* one sample per side and one replicate are usable: the interval is the estimate */
    cr_assert_eq(stats_speedup_ci(base + 1, 1, cand, 1, 0.95, 1, 1, &ci), 0);
    cr_assert(ci.resamples == 1 && ci.estimate == 2.0 && ci.lo == 2.0 && ci.hi == 2.0);
}

Test(stats, percentile_outside_the_range_and_between_two_values) {
    double x[] = {30, 10, 20};
    NEAR(stats_percentile(x, 3, -5), 10, 0);       /* p below 0: the minimum */
    NEAR(stats_percentile(x, 3, 250), 30, 0);      /* p above 100: the maximum */
    NEAR(stats_percentile(x, 3, 75), 25, 1e-12);   /* h = 1.5 */
    NEAR(stats_percentile(x, 3, 1), 10.2, 1e-12);  /* h = 0.02: interpolated, not clamped */
    cr_assert(isnan(stats_percentile(x, 3, NAN)));
    double two[] = {2, 1};
    NEAR(stats_percentile(two, 2, 50), 1.5, 0);
    NEAR(stats_median(two, 2), 1.5, 0);
    /* the descriptive statistics of negative values */
    double neg[] = {-3, -1, -2};
    NEAR(stats_min(neg, 3), -3, 0);
    NEAR(stats_max(neg, 3), -1, 0);
    NEAR(stats_mean(neg, 3), -2, 0);
    NEAR(stats_mad(neg, 3), 1, 0);
    cr_assert(isnan(stats_mean(neg, 0)) && isnan(stats_stddev(neg, 0)) && isnan(stats_min(neg, 0)) &&
              isnan(stats_max(neg, 0)) && isnan(stats_mad(neg, 0)));
}

/* A generator state whose next output is exactly `x`: xoshiro256** outputs rotl(s1 * 5, 7) * 9,
 * and 5 and 9 are invertible modulo 2^64. */
static uint64_t inv_odd(uint64_t a) {
    uint64_t v = a;   /* Newton: each step doubles the correct low bits (a * a = 1 mod 8) */
    for (int i = 0; i < 6; i++) v *= 2 - a * v;
    return v;
}
static stats_rng rng_emitting(uint64_t x) {
    uint64_t y = x * inv_odd(9);
    uint64_t s1 = ((y >> 7) | (y << 57)) * inv_odd(5);
    stats_rng r = {{0x0123456789abcdefULL, s1, 0x0f1e2d3c4b5a6978ULL, 0x1122334455667788ULL}};
    stats_rng probe = r;
    cr_assert_eq(stats_rng_next(&probe), x, "crafted state");
    return r;
}

/* stats_rng_below at the rejection edge: for n = 10, 2^64 mod 10 = 6, so raw outputs 0..5 are
 * rejected (they would make residues 0..5 more likely) and 6 is the lowest accepted. */
Test(stats, rng_below_rejects_exactly_the_lowest_2_64_mod_n_values) {
    for (uint64_t first = 0; first <= 7; first++) {
        stats_rng r = rng_emitting(first), copy = r;
        stats_rng_next(&copy);
        uint64_t second = stats_rng_next(&copy);
        cr_assert(second >= 6 && second % 10 != first % 10, "pick another state: second draw %llu",
                  (unsigned long long)second);
        uint64_t want = first >= 6 ? first : second % 10;
        cr_expect_eq(stats_rng_below(&r, 10), want, "raw output %llu", (unsigned long long)first);
    }
    /* n = 3: 2^64 mod 3 = 1, only 0 is rejected */
    stats_rng r = rng_emitting(1);
    cr_expect_eq(stats_rng_below(&r, 3), 1);
    /* a power of two rejects nothing */
    r = rng_emitting(0);
    cr_expect_eq(stats_rng_below(&r, 8), 0);
}

/* p <= 0 is the minimum and p >= 100 the maximum even next to an infinite value, where the
 * interpolation formula would give 0 * inf = NaN. */
Test(stats, percentile_ends_are_the_extremes_next_to_infinities) {
    double x[] = {INFINITY, 1, 2};
    NEAR(stats_percentile(x, 3, 0), 1, 0);
    cr_expect(isinf(stats_percentile(x, 3, 100)));
    double y[] = {-INFINITY, 5};
    cr_expect(isinf(stats_percentile(y, 2, 0)) && stats_percentile(y, 2, 0) < 0);
    NEAR(stats_percentile(y, 2, 100), 5, 0);
    NEAR(stats_percentile(x + 1, 2, INFINITY), 2, 0);
    NEAR(stats_percentile(x + 1, 2, -INFINITY), 1, 0);
}

/* The standard deviation is taken around the mean (two passes), not as sum(x^2) - n mean^2,
 * which loses every digit for samples far from zero (times in ns since some epoch, large
 * byte counts). */
Test(stats, stddev_of_values_far_from_zero) {
    double x[] = {1e9, 1e9 + 1, 1e9 + 1};   /* a mean of 1e9 + 2/3, not representable */
    NEAR(stats_stddev(x, 3), sqrt(1.0 / 3.0), 1e-9);
    double y[] = {4e12 + 2, 4e12 - 2, 4e12 + 2, 4e12 - 2};
    NEAR(stats_stddev(y, 4), sqrt(16.0 / 3.0), 1e-9);
}

/* One value: its own mean, min, max and median, no deviation. Extremes in first place, and only
 * the first n values count. */
Test(stats, one_value_and_extremes_in_first_place) {
    double x[] = {7, 100, -100};
    NEAR(stats_mean(x, 1), 7, 0);
    NEAR(stats_min(x, 1), 7, 0);
    NEAR(stats_max(x, 1), 7, 0);
    NEAR(stats_mad(x, 1), 0, 0);
    NEAR(stats_median(x, 1), 7, 0);
    double hi[] = {9, 1, 2}, lo[] = {-9, 1, 2};
    NEAR(stats_max(hi, 3), 9, 0);
    NEAR(stats_min(lo, 3), -9, 0);
    NEAR(stats_max(lo, 3), 2, 0);
    NEAR(stats_min(hi, 3), 1, 0);
}

/* A single replicate of the paired bootstrap is that replicate: with one pair it is the pair's
 * ratio (every slot of the replicate array is computed, none left over). */
Test(stats, paired_ci_of_one_pair_and_one_replicate) {
    double base[] = {3.0}, cand[] = {1.5};
    stats_ci ci;
    cr_assert_eq(stats_speedup_ci_paired(base, cand, 1, 0.95, 1, 7, &ci), 0);
    cr_expect(ci.resamples == 1 && ci.estimate == 2.0 && ci.lo == 2.0 && ci.hi == 2.0, "[%g, %g]", ci.lo, ci.hi);
    cr_assert_eq(stats_speedup_ci_paired(base, cand, 1, 0.5, 3, 7, &ci), 0);
    cr_expect(ci.lo == 2.0 && ci.hi == 2.0, "[%g, %g]", ci.lo, ci.hi);
}
