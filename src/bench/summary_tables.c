/* summary_tables.c — the tables and definitions of summary.md / summary.html (contract in
 * summary.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench/fmt.h"
#include "bench/summary.h"

const char *const BENCH_DEFINITIONS[] = {
    "Correct: the child kopt optimize exited 0. Failed problems (and timeouts) count in every "
    "denominator: a sweep's failures are data.",
    "Speedup over default: torch.compile default time / kopt time (model.speedup_vs_default, or "
    "model.speedup when the search started from the default module); over max-autotune: "
    "max-autotune time / kopt time. The interval is the 95% paired-bootstrap CI of the optimize "
    "report; a speedup derived from times has no interval.",
    "Geomean: geometric mean of the speedup estimates of the correct problems that have one (n).",
    "fast_p (KernelBench): fraction of the problems that are correct and faster than p, where "
    "faster means the lower end of the speedup's 95% CI is above p (a CI starting exactly at p, "
    "or no CI, is not faster); fast_0 is the fraction correct. A dash: that baseline was not "
    "measured for any problem of the level.",
    "kopt / floor: kopt's model time divided by the memory-traffic floor (1 = at the floor); "
    "\"(!)\" after it: a measured module time (torch.compile default, max-autotune or kopt's) is below "
    "the floor, so the floor is wrong for that problem (the problem's report.json, model.floor_check, "
    "lists every time below its floor -- modules, kernels, library calls -- and why); \"(k)\": no module "
    "time is below the model floor but a kernel's or library call's own floor is wrong (the same list). "
    "Peak / working set: peak GPU memory of the run divided by the model's working set. The peak is "
    "kopt's own work (torch.cuda.max_memory_reserved of its main phase plus the memory held outside "
    "PyTorch's allocator); the runs of the user's eager model (its forward at load, its timing, gate 3's "
    "reference) are a phase of their own, as are gate 3's float64 reference and the user's get_inputs() "
    "drawing each seed's inputs: their peaks are the problem table's eager / inputs / f64 column (the "
    "eager model's intermediates and get_inputs()'s transients are the user's, not kopt's). For a "
    "peak above 2x the working set, the table \"Problems whose peak is above 2x their working set\" "
    "names the main-phase worker step with the largest allocator peak (torch.cuda.max_memory_reserved "
    "per op: the step the peak is made of) and "
    "the step in which the memory held outside the allocator (CUDA context, libraries, loaded kernels) "
    "grew, by how much above its smallest value (the report's resources.peak_by_step and "
    "outside_allocator_by_step), and the peak without the memory outside the allocator: where the CUDA "
    "context alone is near the working set (under about 0.5 GiB of working set), no degrading brings "
    "the peak to 3x, and that column is what kopt's own memory use is.",
    "Within budget: the problem's wall time (the child's, measured by kopt bench) is at most "
    "budget x 1.1 + 15 s. Disk: the size of the problem's output folder.",
    NULL,
};

/* Formats a row cell by cell: a small helper holding BENCH_FMT buffers. */
#define MAXC 24
typedef struct st_row {
    char buf[MAXC][768];   /* the floor-gap reasons run to a few hundred characters */
    const char *cell[MAXC];
    size_t n;
} st_row;

/* Appends a cell (a copy, truncated to the cell buffer). */
static void st_put(st_row *r, const char *s) {
    if (r->n < MAXC) {
        snprintf(r->buf[r->n], sizeof r->buf[r->n], "%s", s ? s : "");
        r->cell[r->n] = r->buf[r->n];
        r->n++;
    }
}

/* Appends a formatted cell. */
static void st_putf(st_row *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a formatted cell. */
static void st_putf(st_row *r, const char *fmt, ...) {
    if (r->n >= MAXC) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->buf[r->n], sizeof r->buf[r->n], fmt, ap);
    va_end(ap);
    r->cell[r->n] = r->buf[r->n];
    r->n++;
}

/* A budget as the user wrote it: "2m", "1h", "90s". */
static void st_budget(double s, char *buf) {
    if (s >= 3600 && fmod(s, 3600) == 0) snprintf(buf, BENCH_FMT, "%gh", s / 3600);
    else if (s >= 60 && fmod(s, 60) == 0) snprintf(buf, BENCH_FMT, "%gm", s / 60);
    else snprintf(buf, BENCH_FMT, "%gs", s);
}

void bench_summary_title(const bench_report *r, kbuf *out) {
    char b[BENCH_FMT];
    st_budget(r->budget_s, b);
    kbuf_printf(out, "kopt bench: %s (%zu problems, budget %s%s)", r->suite ? r->suite : "results from the store",
                r->n, b, r->max_autotune ? ", max-autotune" : "");
}

/* A (setting, value) row. */
static void st_fact(bench_table *t, const char *k, const char *v) {
    const char *cells[2] = {k, v};
    bench_table_row(t, cells);
}

/* The run table: suite, counts, budget, GPU, lanes, limit, shard, selection, store, times. */
static void st_config(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"setting", "value"};
    bench_table_init(t, "config", "Run", head, 2);
    t->text = 1;
    char b[BENCH_FMT], c[BENCH_FMT];
    kbuf v = KBUF_INIT;
    st_fact(t, "suite", r->suite ? r->suite : "(from the store)");
    const bench_group *a = &r->sum->all;
    kbuf_printf(&v, "%zu: %zu correct, %zu failed, %zu timeout, %zu running, %zu not run", a->n, a->correct, a->failed,
                a->timeouts, a->running, a->not_run);
    st_fact(t, "problems", kbuf_str(&v));
    st_budget(r->budget_s, b);
    st_fact(t, "budget per problem", b);
    st_fact(t, "max-autotune", r->max_autotune ? "on" : "off");
    kbuf_reset(&v);
    for (size_t i = 0; i < r->ngpus; i++) kbuf_printf(&v, "%s%s", i ? ", " : "", r->gpus[i]);
    st_fact(t, "GPU", r->ngpus ? kbuf_str(&v) : BENCH_DASH);
    if (r->lanes) {
        kbuf_reset(&v);
        for (size_t i = 0; i < r->nlanes; i++) kbuf_printf(&v, "%s%s", i ? "," : "", r->lanes[i]);
        kbuf_printf(&v, " (%zu lane%s, from %s)", r->nlanes, r->nlanes == 1 ? "" : "s",
                    r->lanes_source ? r->lanes_source : "?");
        st_fact(t, "GPUs used (CUDA_VISIBLE_DEVICES)", kbuf_str(&v));
    }
    if (isfinite(r->timeout_s)) {
        kbuf_reset(&v);
        kbuf_printf(&v, "%s (budget x %g + %s grace)", bench_fmt_s(r->timeout_s, b), r->timeout_factor,
                    bench_fmt_s(r->grace_s, c));
        st_fact(t, "time limit per problem", kbuf_str(&v));
    }
    kbuf_reset(&v);
    if (r->shard_count) kbuf_printf(&v, "%u/%u", r->shard_index, r->shard_count);
    st_fact(t, "shard", r->shard_count ? kbuf_str(&v) : "none");
    st_fact(t, "selection", r->selection ? r->selection : "all");
    st_fact(t, "store", r->store_path ? r->store_path : BENCH_DASH);
    st_fact(t, "mode", r->report_only ? "report only (rebuilt from the store)" : "run");
    st_fact(t, "started", r->started_at ? r->started_at : BENCH_DASH);
    st_fact(t, "ended", r->ended_at ? r->ended_at : BENCH_DASH);
    st_fact(t, "wall time", bench_fmt_s(r->wall_s, b));
    if (r->interrupted) {
        kbuf_reset(&v);
        kbuf_printf(&v, "yes (signal %d): the problems that were running are not done and run again next time",
                    r->interrupted);
        st_fact(t, "interrupted", kbuf_str(&v));
    }
    kbuf_free(&v);
}

/* Per level and all: counts and the geomeans over both baselines. */
static void st_levels(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"level", "problems", "correct", "failed", "timeout", "not run",
                                       "geomean vs default (n)", "geomean vs max-autotune (n)",
                                       "as called: vs default (n)", "as called: vs max-autotune (n)"};
    bench_table_init(t, "levels", "Speedups per level", head, 10);
    for (size_t i = 0; i <= r->sum->nlevels; i++) {
        const bench_group *g = i < r->sum->nlevels ? &r->sum->levels[i] : &r->sum->all;
        st_row row = {.n = 0};
        char b[BENCH_FMT];
        st_put(&row, g->name);
        st_putf(&row, "%zu", g->n);
        st_putf(&row, "%zu", g->correct);
        st_putf(&row, "%zu", g->failed);
        st_putf(&row, "%zu", g->timeouts);
        st_putf(&row, "%zu", g->not_run + g->running);
        for (int k = 0; k < BENCH_NBASE; k++) {
            if (isfinite(g->geomean[k])) st_putf(&row, "%s (%zu)", bench_fmt_x(g->geomean[k], b), g->geomean_n[k]);
            else st_put(&row, BENCH_DASH);
        }
        bench_table_row(t, row.cell);
    }
    bench_table_note(t, "Speedups of the correct problems; torch.compile default and max-autotune-no-cudagraphs are "
                        "the baselines. GPU time (the gates' measure: the stream stalled while a call is enqueued) "
                        "and, \"as called\", from the call to the end of its GPU work with the device idle before "
                        "it (host dispatch included, as a KernelBench-style timing sees it).");
}

/* Per level and all: fast_p against each baseline. */
static void st_fastp(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"level", "baseline", "fast_0 (correct)", "fast_1.0", "fast_1.5", "fast_2.0"};
    bench_table_init(t, "fast-p", "fast_p per level", head, 6);
    static const char *const base[BENCH_NBASE] = {"torch.compile default", "max-autotune",
                                                  "torch.compile default, as called", "max-autotune, as called"};
    for (size_t i = 0; i <= r->sum->nlevels; i++) {
        const bench_group *g = i < r->sum->nlevels ? &r->sum->levels[i] : &r->sum->all;
        for (int k = 0; k < BENCH_NBASE; k++) {
            st_row row = {.n = 0};
            char b[BENCH_FMT];
            st_put(&row, g->name);
            st_put(&row, base[k]);
            for (int j = 0; j < BENCH_NP; j++) st_put(&row, bench_fmt_frac(g->fast_p[k][j], b));
            bench_table_row(t, row.cell);
        }
    }
}

/* Per level and all: how far the memory floor lets a model go, and how much of that kopt took. */
static void st_headroom(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"level", "problems (n)", "at the floor: vs default",
                                       "at the floor: vs max-autotune (n)", "kopt / floor", "kopt vs default",
                                       "headroom taken"};
    bench_table_init(t, "headroom", "Headroom per level: the memory floor as the limit", head, 7);
    for (size_t i = 0; i <= r->sum->nlevels; i++) {
        const bench_group *g = i < r->sum->nlevels ? &r->sum->levels[i] : &r->sum->all;
        st_row row = {.n = 0};
        char b[BENCH_FMT];
        st_put(&row, g->name);
        st_putf(&row, "%zu", g->room_n);
        if (!g->room_n) {
            for (int c = 0; c < 5; c++) st_put(&row, BENCH_DASH);
            bench_table_row(t, row.cell);
            continue;
        }
        st_put(&row, bench_fmt_x(g->room_default, b));
        if (g->room_ma_n) st_putf(&row, "%s (%zu)", bench_fmt_x(g->room_ma, b), g->room_ma_n);
        else st_put(&row, BENCH_DASH);
        st_put(&row, bench_fmt_ratio(g->room_kopt, b));
        /* default / kopt = (default / floor) / (kopt / floor), problem by problem and so for the geomeans */
        double got = g->room_default / g->room_kopt;
        st_put(&row, bench_fmt_x(got, b));
        if (g->room_default > 1.0005) st_putf(&row, "%.0f%%", 100.0 * log(got) / log(g->room_default));
        else st_put(&row, BENCH_DASH);
        bench_table_row(t, row.cell);
    }
    bench_table_note(t, "Geometric means over the correct problems with a memory floor that no measured module time "
                        "is below, from the final measurement's model times (not the A/B estimates of the levels "
                        "table). At the floor: the speedup a module running every model at its floor would have "
                        "over torch.compile default (and over max-autotune, for the problems that have it) -- the "
                        "most any kernel could give on those problems; kopt / floor: 1 is every model at its "
                        "floor; headroom taken: log(kopt vs default) / log(at the floor vs default), 100% being "
                        "every model at its floor.");
}

/* Per level and all: GPU time split, candidates, memory, disk, wall time, within budget. */
static void st_resources(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"level", "GPU time setup", "search", "final", "candidates",
                                       "peak GPU memory (max)", "peak / working set (max)", "disk per problem (mean)",
                                       "disk (max)", "wall per problem (mean)", "wall (max)",
                                       "within budget x1.1+15 s"};
    bench_table_init(t, "resources", "Time, memory and disk per level", head, 12);
    for (size_t i = 0; i <= r->sum->nlevels; i++) {
        const bench_group *g = i < r->sum->nlevels ? &r->sum->levels[i] : &r->sum->all;
        st_row row = {.n = 0};
        char b[BENCH_FMT];
        st_put(&row, g->name);
        st_put(&row, bench_fmt_s(g->setup_s, b));
        st_put(&row, bench_fmt_s(g->search_s, b));
        st_put(&row, bench_fmt_s(g->final_s, b));
        st_put(&row, bench_fmt_int(g->candidates, b));
        st_put(&row, bench_fmt_bytes(g->peak_gpu_max, b));
        st_put(&row, bench_fmt_ratio(g->peak_ratio_max, b));
        st_put(&row, bench_fmt_bytes(g->disk_mean, b));
        st_put(&row, bench_fmt_bytes(g->disk_max, b));
        st_put(&row, bench_fmt_s(g->wall_mean, b));
        st_put(&row, bench_fmt_s(g->wall_max, b));
        if (g->wall_n) st_putf(&row, "%zu of %zu", g->within_budget, g->wall_n);
        else st_put(&row, BENCH_DASH);
        bench_table_row(t, row.cell);
    }
    bench_table_note(t, "GPU time: sums over the level's problems (setup: load, compile, profile; search: the "
                        "candidates; final: the output module's checks and timing).");
}

/* The "why it failed" cell: the error kind and message (empty for a success). */
static void st_why(const bench_record *p, st_row *row) {
    if (p->status == BENCH_DONE || p->status == BENCH_RUNNING || p->status == BENCH_NOT_RUN) {
        st_put(row, p->status == BENCH_DONE ? "" : bench_status_name(p->status));
        return;
    }
    char msg[160];
    snprintf(msg, sizeof msg, "%s", p->error_message ? p->error_message : "");
    st_putf(row, "%s%s%s", p->error_kind ? p->error_kind : "", p->error_kind && msg[0] ? ": " : "", msg);
}

/* Whether a measured module time (default, max-autotune, kopt's) is below the floor. */
static int st_floor_beaten(const bench_record *p) {
    if (!isfinite(p->floor_ms) || p->floor_ms <= 0) return 0;
    const double t[3] = {p->default_ms, p->max_autotune_ms, p->kopt_ms};
    for (int i = 0; i < 3; i++)
        if (isfinite(t[i]) && t[i] > 0 && t[i] < p->floor_ms) return 1;
    return 0;
}

/* One row per problem, in suite order. */
static void st_problems(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"problem", "level", "status", "exit", "eager ms", "default ms",
                                       "max-autotune ms", "kopt ms", "floor ms", "vs default [95% CI]",
                                       "vs max-autotune [95% CI]", "as called: vs default / vs max-autotune",
                                       "start", "kopt / floor",
                                       "budget spent before search", "GPU s setup / search / final", "candidates",
                                       "gates 1 / 2 / 3 / 4 s (gated)",
                                       "peak GPU (/ working set)", "eager / inputs / f64 peak GPU", "disk", "wall",
                                       "within budget", "why it failed"};
    bench_table_init(t, "problems", "Problems", head, 24);
    for (size_t i = 0; i < r->n; i++) {
        const bench_record *p = &r->recs[i];
        st_row row = {.n = 0};
        char b[BENCH_FMT], c[BENCH_FMT], d[BENCH_FMT];
        st_put(&row, p->rel);
        st_put(&row, p->level_name);
        st_put(&row, bench_status_name(p->status));
        st_put(&row, bench_fmt_int(p->exit_code, b));
        st_put(&row, bench_fmt_ms(p->eager_ms, b));
        st_put(&row, bench_fmt_ms(p->default_ms, b));
        st_put(&row, bench_fmt_ms(p->max_autotune_ms, b));
        st_put(&row, bench_fmt_ms(p->kopt_ms, b));
        st_put(&row, bench_fmt_ms(p->floor_ms, b));
        st_put(&row, bench_fmt_ci(p->vs_default, b));
        st_put(&row, bench_fmt_ci(p->vs_max_autotune, b));
        if (isfinite(p->as_called_vs_default.est) || isfinite(p->as_called_vs_max_autotune.est))
            st_putf(&row, "%s / %s", bench_fmt_x(p->as_called_vs_default.est, c),
                    bench_fmt_x(p->as_called_vs_max_autotune.est, d));
        else
            st_put(&row, BENCH_DASH);
        const char *sn = bench_start_name(p->start) ? bench_start_name(p->start) : BENCH_DASH;
        if (p->final_pick) /* the final measurement made a compiler module the output */
            st_putf(&row, "%s, output %s (final re-pick)", sn, p->final_pick);
        else
            st_put(&row, sn);
        st_putf(&row, "%s%s", bench_fmt_ratio(bench_record_floor_ratio(p), b),
                st_floor_beaten(p) ? " (!)" : p->floor_ok == 0 ? " (k)" : "");
        st_put(&row, bench_fmt_flag(p->spent_before_search, b));
        if (isfinite(p->setup_s) || isfinite(p->search_s) || isfinite(p->final_s))
            st_putf(&row, "%s / %s / %s", bench_fmt_ratio(p->setup_s, b), bench_fmt_ratio(p->search_s, c),
                    bench_fmt_ratio(p->final_s, d));
        else
            st_put(&row, BENCH_DASH);
        st_put(&row, bench_fmt_int(p->candidates, b));
        if (p->gated >= 0) {   /* where the judged candidates' time went, gate by gate */
            char g3[BENCH_FMT], g4[BENCH_FMT], n[BENCH_FMT];
            st_putf(&row, "%s / %s / %s / %s (%s)", bench_fmt_ratio(p->gate_s[0], b), bench_fmt_ratio(p->gate_s[1], c),
                    bench_fmt_ratio(p->gate_s[2], g3), bench_fmt_ratio(p->gate_s[3], g4), bench_fmt_int(p->gated, n));
        } else
            st_put(&row, BENCH_DASH);
        if (isfinite(p->peak_gpu_bytes) && isfinite(bench_record_peak_ratio(p)))
            st_putf(&row, "%s (%s)", bench_fmt_bytes(p->peak_gpu_bytes, b), bench_fmt_ratio(bench_record_peak_ratio(p), c));
        else
            st_put(&row, bench_fmt_bytes(p->peak_gpu_bytes, b));
        if (isfinite(p->eager_peak_gpu_bytes) || isfinite(p->f64_peak_gpu_bytes) || isfinite(p->inputs_peak_gpu_bytes)) {
            char in[BENCH_FMT];
            st_putf(&row, "%s / %s / %s", bench_fmt_bytes(p->eager_peak_gpu_bytes, b),
                    bench_fmt_bytes(p->inputs_peak_gpu_bytes, in), bench_fmt_bytes(p->f64_peak_gpu_bytes, c));
        } else {
            st_put(&row, BENCH_DASH);
        }
        st_put(&row, bench_fmt_bytes(p->disk_bytes, b));
        st_put(&row, bench_fmt_s(p->wall_s, b));
        st_put(&row, bench_fmt_flag(bench_record_within_budget(p), b));
        st_why(p, &row);
        bench_table_row(t, row.cell);
    }
}

/* The problems whose kopt module stays above 1.3x its memory floor, with the reason its optimize
 * report names (model.floor_gap). */
static void st_gaps(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"problem", "kopt / floor", "why (the problem's report.json, model.floor_gap)"};
    bench_table_init(t, "floor_gaps", "Problems above 1.3x their memory floor", head, 3);
    t->text = 1;
    for (size_t i = 0; i < r->n; i++) {
        const bench_record *p = &r->recs[i];
        double ratio = bench_record_floor_ratio(p);
        if (!(ratio > 1.3) || p->status != BENCH_DONE) continue;
        st_row row = {.n = 0};
        char b[BENCH_FMT];
        st_put(&row, p->rel);
        st_put(&row, bench_fmt_ratio(ratio, b));
        st_put(&row, p->floor_gap ? p->floor_gap : "not said (a report from before model.floor_gap)");
        bench_table_row(t, row.cell);
    }
}

/* The problems where a measured time (module, kernel, library call) is below its own floor: the
 * floor is wrong there, and the report's model.floor_check says which and why. */
static void st_floors(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"problem", "measured below its floor (the problem's report.json, model.floor_check)"};
    bench_table_init(t, "floors_wrong", "Problems whose floor is wrong somewhere", head, 2);
    t->text = 1;
    for (size_t i = 0; i < r->n; i++) {
        const bench_record *p = &r->recs[i];
        if (p->floor_ok != 0) continue;
        st_row row = {.n = 0};
        st_put(&row, p->rel);
        st_put(&row, p->floor_below ? p->floor_below : "not said (a report from before model.floor_check.below)");
        bench_table_row(t, row.cell);
    }
}

/* The problems whose peak GPU memory is above 2x their working set, with where it went. */
static void st_memory(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"problem", "peak GPU (/ working set)", "outside the allocator",
                                       "without it (/ working set)", "largest allocator peak (step)",
                                       "outside the allocator grew in (step)"};
    bench_table_init(t, "memory", "Problems whose peak is above 2x their working set", head, 6);
    for (size_t i = 0; i < r->n; i++) {
        const bench_record *p = &r->recs[i];
        double ratio = bench_record_peak_ratio(p);
        if (!(ratio > 2)) continue;
        st_row row = {.n = 0};
        char b[BENCH_FMT], c[BENCH_FMT];
        st_put(&row, p->rel);
        st_putf(&row, "%s (%s)", bench_fmt_bytes(p->peak_gpu_bytes, b), bench_fmt_ratio(ratio, c));
        st_put(&row, bench_fmt_bytes(p->context_bytes, b));
        double own = p->peak_gpu_bytes - p->context_bytes; /* the allocator's share: what degrading can lower */
        if (isfinite(own) && own > 0 && p->working_set_bytes > 0)
            st_putf(&row, "%s (%s)", bench_fmt_bytes(own, b), bench_fmt_ratio(own / p->working_set_bytes, c));
        else
            st_put(&row, BENCH_DASH);
        if (p->peak_step) st_putf(&row, "%s (%s)", bench_fmt_bytes(p->peak_step_bytes, b), p->peak_step);
        else st_put(&row, BENCH_DASH);
        if (p->growth_step) st_putf(&row, "+%s (%s)", bench_fmt_bytes(p->growth_bytes, b), p->growth_step);
        else st_put(&row, BENCH_DASH);
        bench_table_row(t, row.cell);
    }
}

/* The correct problems of a --max-autotune sweep without a max-autotune time, with why (the
 * problem's model.max_autotune_error): they are outside every "vs max-autotune" figure. */
static void st_no_ma(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"problem", "why (the problem's report.json, model.max_autotune_error)"};
    bench_table_init(t, "no_max_autotune", "Problems without a max-autotune time (outside the vs max-autotune figures)",
                     head, 2);
    t->text = 1;
    for (size_t i = 0; i < r->n; i++) {
        const bench_record *p = &r->recs[i];
        if (!bench_correct(p) || isfinite(p->max_autotune_ms) || !r->max_autotune) continue;
        st_row row = {.n = 0};
        char why[200];
        snprintf(why, sizeof why, "%s", p->ma_error ? p->ma_error : "not said");
        char *cut = strstr(why, "; stderr:");   /* the worker's stderr (autotuning logs) stays in report.json */
        if (cut) *cut = '\0';
        st_put(&row, p->rel);
        st_put(&row, why);
        bench_table_row(t, row.cell);
    }
}

#define ST_SETUP_TOP 8   /* ops in the setup table */

/* One row of the setup table: `s` seconds summed over tot's problems. */
static void st_setup_row(bench_table *t, const bench_setup_totals *tot, const char *name, double s) {
    st_row row = {.n = 0};
    char b[BENCH_FMT];
    st_put(&row, name);
    st_put(&row, bench_fmt_s(s, b));
    st_put(&row, bench_fmt_s(s / (double)tot->problems, b));
    st_put(&row, tot->setup_s > 0 ? bench_fmt_frac(s / tot->setup_s, b) : BENCH_DASH);
    bench_table_row(t, row.cell);
}

/* Where the setup's time went over the finished problems: the ST_SETUP_TOP worker ops with the
 * largest total in the setup (resources.setup_by_step), then the setup's time outside requests. */
static void st_setup(const bench_report *r, bench_table *t) {
    static const char *const head[] = {"setup step (worker op)", "total", "mean per problem", "share of setup"};
    bench_table_init(t, "setup", "Where the setup time goes", head, 4);
    bench_setup_totals tot;
    bench_setup_totals_build(r->recs, r->n, &tot);
    if (!tot.problems) {
        bench_setup_totals_free(&tot);
        return;
    }
    for (size_t i = 0; i < tot.nops && i < ST_SETUP_TOP; i++) st_setup_row(t, &tot, tot.ops[i].op, tot.ops[i].total_s);
    if (isfinite(tot.outside_s)) st_setup_row(t, &tot, "(outside worker requests)", tot.outside_s);
    char note[400];
    snprintf(note, sizeof note,
             "Over the %zu finished problem%s whose report has resources.setup_by_step: the wall time of kopt's "
             "requests to its worker before the search began, per op (the %d largest); the mean counts a problem "
             "without that op as 0; share: of their summed setup time (budget.setup_s). Outside worker requests: "
             "starting the worker and kopt's own work in the setup.",
             tot.problems, tot.problems == 1 ? "" : "s", ST_SETUP_TOP);
    bench_table_note(t, note);
    bench_setup_totals_free(&tot);
}

const int BENCH_T_AFTER_PROBLEMS[] = {BENCH_T_GAPS, BENCH_T_FLOORS, BENCH_T_MEMORY, BENCH_T_SETUP, BENCH_T_NO_MA, -1};

void bench_tables_build(const bench_report *r, bench_tables *out) {
    st_config(r, &out->t[BENCH_T_CONFIG]);
    st_levels(r, &out->t[BENCH_T_LEVELS]);
    st_fastp(r, &out->t[BENCH_T_FASTP]);
    st_headroom(r, &out->t[BENCH_T_HEADROOM]);
    st_resources(r, &out->t[BENCH_T_RESOURCES]);
    st_problems(r, &out->t[BENCH_T_PROBLEMS]);
    st_gaps(r, &out->t[BENCH_T_GAPS]);
    st_floors(r, &out->t[BENCH_T_FLOORS]);
    st_memory(r, &out->t[BENCH_T_MEMORY]);
    st_no_ma(r, &out->t[BENCH_T_NO_MA]);
    st_setup(r, &out->t[BENCH_T_SETUP]);
}

void bench_tables_free(bench_tables *t) {
    for (int i = 0; i < BENCH_NTABLES; i++) bench_table_free(&t->t[i]);
}
