/* stats.c — geomeans, fast_p and per-level aggregates (contract in stats.h). */
#include "bench/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

const double BENCH_P[BENCH_NP] = {0.0, 1.0, 1.5, 2.0};

double bench_geomean(const double *v, size_t n, size_t *used) {
    double logsum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0) {
            logsum += log(v[i]);
            k++;
        }
    if (used) *used = k;
    return k ? exp(logsum / (double)k) : NAN;
}

int bench_correct(const bench_record *r) {
    return r->status == BENCH_DONE && r->exit_code == 0;
}

int bench_faster(bench_ci ci, double p) {
    return isfinite(ci.lo) && ci.lo > p;
}

const bench_ci *bench_speedup(const bench_record *r, bench_baseline b) {
    switch (b) {
    case BENCH_VS_MAX_AUTOTUNE: return &r->vs_max_autotune;
    case BENCH_AS_CALLED_VS_DEFAULT: return &r->as_called_vs_default;
    case BENCH_AS_CALLED_VS_MAX_AUTOTUNE: return &r->as_called_vs_max_autotune;
    default: return &r->vs_default;
    }
}

double bench_fast_p(const bench_record *const *recs, size_t n, bench_baseline b, double p) {
    if (!n) return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (bench_correct(recs[i]) && (p <= 0 || bench_faster(*bench_speedup(recs[i], b), p))) k++;
    return (double)k / (double)n;
}

/* s += v for a finite v; s starts NAN ("none yet"). */
static void bst_add(double *s, double v) {
    if (!isfinite(v)) return;
    *s = isfinite(*s) ? *s + v : v;
}

/* m = max(m, v) for a finite v; m starts NAN ("none yet"). */
static void bst_max(double *m, double v) {
    if (isfinite(v) && (!isfinite(*m) || v > *m)) *m = v;
}

/* Counts the record's status into the group. */
static void bst_counts(const bench_record *r, bench_group *g) {
    switch (r->status) {
    case BENCH_FAILED: g->failed++; break;
    case BENCH_TIMEOUT: g->timeouts++; break;
    case BENCH_RUNNING: g->running++; break;
    case BENCH_NOT_RUN: g->not_run++; break;
    case BENCH_DONE: break;
    }
    if (bench_correct(r)) g->correct++;
}

static int bst_pos(double v) { return isfinite(v) && v > 0; }

int bench_record_has_room(const bench_record *r) {
    if (!bench_correct(r) || !bst_pos(r->floor_ms) || !bst_pos(r->default_ms) || !bst_pos(r->kopt_ms)) return 0;
    const double t[] = {r->default_ms, r->max_autotune_ms, r->kopt_ms};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (bst_pos(t[i]) && t[i] < r->floor_ms) return 0;
    return 1;
}

/* The group's headroom figures (bench_group.room_*): geometric means of time / floor. */
static void bst_room(const bench_record *const *recs, size_t n, bench_group *g) {
    double *d = kcalloc(n ? n : 1, sizeof *d), *k = kcalloc(n ? n : 1, sizeof *k), *m = kcalloc(n ? n : 1, sizeof *m);
    for (size_t i = 0; i < n; i++) {
        const bench_record *r = recs[i];
        int in = bench_record_has_room(r);
        d[i] = in ? r->default_ms / r->floor_ms : NAN;
        k[i] = in ? r->kopt_ms / r->floor_ms : NAN;
        m[i] = in && bst_pos(r->max_autotune_ms) ? r->max_autotune_ms / r->floor_ms : NAN;
    }
    g->room_default = bench_geomean(d, n, &g->room_n);
    g->room_kopt = bench_geomean(k, n, NULL);
    g->room_ma = bench_geomean(m, n, &g->room_ma_n);
    free(d);
    free(k);
    free(m);
}

void bench_group_compute(const bench_record *const *recs, size_t n, bench_group *g) {
    int level = g->level;
    char name[sizeof g->name];
    memcpy(name, g->name, sizeof name);
    memset(g, 0, sizeof *g);
    g->level = level;
    memcpy(g->name, name, sizeof name);
    g->n = n;
    g->setup_s = g->search_s = g->final_s = NAN;
    g->peak_gpu_max = g->peak_ratio_max = g->disk_max = g->wall_max = NAN;
    g->candidates = -1;
    double *sp = kcalloc(n ? n : 1, sizeof *sp);
    double disk_sum = NAN, wall_sum = NAN;
    size_t disk_n = 0;
    for (int b = 0; b < BENCH_NBASE; b++) {
        int any = 0;
        for (size_t i = 0; i < n; i++) {
            const bench_ci *c = bench_speedup(recs[i], (bench_baseline)b);
            sp[i] = bench_correct(recs[i]) ? c->est : NAN;
            if (isfinite(c->est)) any = 1;
        }
        g->geomean[b] = bench_geomean(sp, n, &g->geomean_n[b]);
        for (int j = 0; j < BENCH_NP; j++)
            g->fast_p[b][j] = (any || BENCH_P[j] <= 0) ? bench_fast_p(recs, n, (bench_baseline)b, BENCH_P[j]) : NAN;
    }
    free(sp);
    for (size_t i = 0; i < n; i++) {
        const bench_record *r = recs[i];
        bst_counts(r, g);
        bst_add(&g->setup_s, r->setup_s);
        bst_add(&g->search_s, r->search_s);
        bst_add(&g->final_s, r->final_s);
        if (r->candidates >= 0) g->candidates = (g->candidates < 0 ? 0 : g->candidates) + r->candidates;
        bst_max(&g->peak_gpu_max, r->peak_gpu_bytes);
        bst_max(&g->peak_ratio_max, bench_record_peak_ratio(r));
        if (isfinite(r->disk_bytes)) {
            bst_add(&disk_sum, r->disk_bytes);
            disk_n++;
            bst_max(&g->disk_max, r->disk_bytes);
        }
        int within = bench_record_within_budget(r);
        if (within >= 0) {
            bst_add(&wall_sum, r->wall_s);
            g->wall_n++;
            g->within_budget += (size_t)within;
            bst_max(&g->wall_max, r->wall_s);
        }
    }
    g->disk_mean = disk_n ? disk_sum / (double)disk_n : NAN;
    g->wall_mean = g->wall_n ? wall_sum / (double)g->wall_n : NAN;
    bst_room(recs, n, g);
}

/* Largest total first, then by op name (qsort). */
static int bst_setup_cmp(const void *a, const void *b) {
    const bench_setup_op *x = a, *y = b;
    if (x->total_s != y->total_s) return x->total_s < y->total_s ? 1 : -1;
    return strcmp(x->op, y->op);
}

void bench_setup_totals_build(const bench_record *recs, size_t n, bench_setup_totals *out) {
    memset(out, 0, sizeof *out);
    out->setup_s = out->outside_s = NAN;
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        const bench_record *r = &recs[i];
        if (r->status != BENCH_DONE || !r->setup_steps) continue;
        out->problems++;
        bst_add(&out->setup_s, r->setup_s);
        bst_add(&out->outside_s, r->setup_outside_s);
        for (size_t k = 0; k < r->nsetup_steps; k++) {
            const bench_step_s *st = &r->setup_steps[k];
            size_t j = 0;
            while (j < out->nops && strcmp(out->ops[j].op, st->op)) j++;
            if (j == out->nops) {
                if (out->nops == cap) {
                    cap = cap ? 2 * cap : 16;
                    out->ops = krealloc(out->ops, cap * sizeof *out->ops);
                }
                out->ops[out->nops++] = (bench_setup_op){st->op, 0};
            }
            out->ops[j].total_s += st->s;
        }
    }
    if (out->nops > 1) qsort(out->ops, out->nops, sizeof *out->ops, bst_setup_cmp);
}

void bench_setup_totals_free(bench_setup_totals *t) {
    if (!t) return;
    free(t->ops);
    t->ops = NULL;
    t->nops = 0;
}

/* Ascending ints (qsort). */
static int bst_int_cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void bench_summary_build(const bench_record *recs, size_t n, bench_summary *out) {
    memset(out, 0, sizeof *out);
    int *levels = kcalloc(n ? n : 1, sizeof *levels);
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < nl && levels[j] != recs[i].level) j++;
        if (j == nl) levels[nl++] = recs[i].level;
    }
    qsort(levels, nl, sizeof *levels, bst_int_cmp);
    const bench_record **sel = kcalloc(n ? n : 1, sizeof *sel);
    out->levels = kcalloc(nl ? nl : 1, sizeof *out->levels);
    out->nlevels = nl;
    for (size_t l = 0; l < nl; l++) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (recs[i].level == levels[l]) sel[k++] = &recs[i];
        bench_group *g = &out->levels[l];
        g->level = levels[l];
        if (levels[l] > 0)
            snprintf(g->name, sizeof g->name, "level%d", levels[l]);
        else
            snprintf(g->name, sizeof g->name, "flat");
        bench_group_compute(sel, k, g);
    }
    for (size_t i = 0; i < n; i++) sel[i] = &recs[i];
    out->all.level = -1;
    snprintf(out->all.name, sizeof out->all.name, "all");
    bench_group_compute(sel, n, &out->all);
    free(sel);
    free(levels);
}

void bench_summary_free(bench_summary *s) {
    if (!s) return;
    free(s->levels);
    s->levels = NULL;
    s->nlevels = 0;
}
