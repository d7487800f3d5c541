/* stats.c — see stats.h for the contract and the methods. */
#include "gates/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/err.h"

/* ------------------------------------------------------------------ PRNG */

static uint64_t st_splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t st_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void stats_rng_seed(stats_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = st_splitmix64(&x);
}

uint64_t stats_rng_next(stats_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = st_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = st_rotl(s[3], 45);
    return result;
}

uint64_t stats_rng_below(stats_rng *r, uint64_t n) {
    /* reject the lowest (2^64 mod n) values so that every residue is equally likely */
    uint64_t threshold = (0 - n) % n;
    for (;;) {
        uint64_t x = stats_rng_next(r);
        if (x >= threshold) return x % n;
    }
}

/* ------------------------------------------------------------------ descriptive */

static int st_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Percentile of an already sorted array. */
static double st_sorted_pct(const double *s, size_t n, double p) {
    if (n == 0) return NAN;
    if (p <= 0) return s[0];
    if (p >= 100) return s[n - 1];
    double h = (double)(n - 1) * p / 100.0;
    size_t lo = (size_t)floor(h);
    if (lo >= n - 1) return s[n - 1];
    double f = h - (double)lo;
    return s[lo] + f * (s[lo + 1] - s[lo]);
}

/* Value of rank k (0-based) of x[0..n), reordering x (quickselect, Hoare partition). */
static double st_select(double *x, size_t n, size_t k) {
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = x[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (x[i] < pivot) i++;
            while (x[j] > pivot) j--;
            if (i <= j) {
                double t = x[i];
                x[i] = x[j];
                x[j] = t;
                i++;
                if (j == 0) break;
                j--;
            }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return x[k];
    }
    return x[k];
}

/* Median of x[0..n), reordering x. */
static double st_median_inplace(double *x, size_t n) {
    if (n == 0) return NAN;
    size_t h = n / 2;
    double upper = st_select(x, n, h);
    if (n % 2) return upper;
    /* after selection every element of x[0..h) is <= upper: the lower middle is their max */
    double lower = x[0];
    for (size_t i = 1; i < h; i++)
        if (x[i] > lower) lower = x[i];
    return 0.5 * (lower + upper);
}

double stats_median(const double *x, size_t n) {
    if (n == 0) return NAN;
    double *c = kmalloc(n * sizeof *c);
    memcpy(c, x, n * sizeof *c);
    double m = st_median_inplace(c, n);
    free(c);
    return m;
}

double stats_percentile(const double *x, size_t n, double p) {
    if (n == 0 || isnan(p)) return NAN;
    double *c = kmalloc(n * sizeof *c);
    memcpy(c, x, n * sizeof *c);
    qsort(c, n, sizeof *c, st_cmp);
    double v = st_sorted_pct(c, n, p);
    free(c);
    return v;
}

double stats_mean(const double *x, size_t n) {
    if (n == 0) return NAN;
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s / (double)n;
}

double stats_stddev(const double *x, size_t n) {
    if (n == 0) return NAN;
    if (n == 1) return 0.0;
    double m = stats_mean(x, n), s = 0;
    for (size_t i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m);
    return sqrt(s / (double)(n - 1));
}

double stats_min(const double *x, size_t n) {
    if (n == 0) return NAN;
    double m = x[0];
    for (size_t i = 1; i < n; i++)
        if (x[i] < m) m = x[i];
    return m;
}

double stats_max(const double *x, size_t n) {
    if (n == 0) return NAN;
    double m = x[0];
    for (size_t i = 1; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}

double stats_mad(const double *x, size_t n) {
    if (n == 0) return NAN;
    double med = stats_median(x, n);
    double *d = kmalloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = fabs(x[i] - med);
    double m = st_median_inplace(d, n);
    free(d);
    return m;
}

/* ------------------------------------------------------------------ bootstrap */

static int st_all_finite(const double *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static int st_ci_begin(const double *base, size_t nb, const double *cand, size_t nc,
                       double *conf, int *resamples, stats_ci *out) {
    if (*conf <= 0) *conf = 0.95;
    if (*resamples <= 0) *resamples = 2000;
    out->estimate = out->lo = out->hi = NAN;
    out->conf = *conf;
    out->resamples = *resamples;
    if (!base || !cand || nb == 0 || nc == 0 || !(*conf < 1.0)) return KOPT_E_INTERNAL;
    if (!st_all_finite(base, nb) || !st_all_finite(cand, nc)) return KOPT_E_INTERNAL;
    double mb = stats_median(base, nb), mc = stats_median(cand, nc);
    if (!(mb > 0) || !(mc > 0)) return KOPT_E_INTERNAL;
    out->estimate = mb / mc;
    return 0;
}

static void st_ci_end(double *ratios, int resamples, double conf, stats_ci *out) {
    qsort(ratios, (size_t)resamples, sizeof *ratios, st_cmp);
    out->lo = st_sorted_pct(ratios, (size_t)resamples, 100.0 * (1.0 - conf) / 2.0);
    out->hi = st_sorted_pct(ratios, (size_t)resamples, 100.0 * (1.0 + conf) / 2.0);
}

int stats_speedup_ci(const double *base, size_t nb, const double *cand, size_t nc, double conf,
                     int resamples, uint64_t seed, stats_ci *out) {
    int rc = st_ci_begin(base, nb, cand, nc, &conf, &resamples, out);
    if (rc) return rc;
    stats_rng rng;
    stats_rng_seed(&rng, seed);
    double *rb = kmalloc(nb * sizeof *rb), *rcand = kmalloc(nc * sizeof *rcand);
    double *ratios = kmalloc((size_t)resamples * sizeof *ratios);
    for (int r = 0; r < resamples; r++) {
        for (size_t i = 0; i < nb; i++) rb[i] = base[stats_rng_below(&rng, nb)];
        for (size_t i = 0; i < nc; i++) rcand[i] = cand[stats_rng_below(&rng, nc)];
        ratios[r] = st_median_inplace(rb, nb) / st_median_inplace(rcand, nc);
    }
    st_ci_end(ratios, resamples, conf, out);
    free(rb);
    free(rcand);
    free(ratios);
    return 0;
}

int stats_speedup_ci_paired(const double *base, const double *cand, size_t n, double conf,
                            int resamples, uint64_t seed, stats_ci *out) {
    int rc = st_ci_begin(base, n, cand, n, &conf, &resamples, out);
    if (rc) return rc;
    stats_rng rng;
    stats_rng_seed(&rng, seed);
    double *rb = kmalloc(n * sizeof *rb), *rcand = kmalloc(n * sizeof *rcand);
    double *ratios = kmalloc((size_t)resamples * sizeof *ratios);
    for (int r = 0; r < resamples; r++) {
        for (size_t i = 0; i < n; i++) {
            size_t k = (size_t)stats_rng_below(&rng, n);
            rb[i] = base[k];
            rcand[i] = cand[k];
        }
        ratios[r] = st_median_inplace(rb, n) / st_median_inplace(rcand, n);
    }
    st_ci_end(ratios, resamples, conf, out);
    free(rb);
    free(rcand);
    free(ratios);
    return 0;
}

double *stats_from_json(const json_t *arr, size_t *n) {
    *n = json_array_size(arr);
    double *v = kcalloc(*n ? *n : 1, sizeof *v);
    for (size_t i = 0; i < *n; i++) v[i] = json_number_value(json_array_get(arr, i));
    return v;
}

double stats_median_json(const json_t *arr) {
    size_t n;
    double *v = stats_from_json(arr, &n);
    double m = n ? stats_median(v, n) : 0.0;
    free(v);
    return m;
}
