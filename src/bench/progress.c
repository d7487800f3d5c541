/* progress.c — progress and per-problem lines of `kopt bench` (contract in progress.h). */
#include "bench/progress.h"

#include <math.h>

double bench_eta_s(double mean_wall_s, size_t left, size_t lanes) {
    if (!left) return 0;
    if (!isfinite(mean_wall_s) || !lanes) return NAN;
    return mean_wall_s * (double)left / (double)lanes;
}

/* A duration as "45s", "14m05s" or "2h03m" ("?" when unknown). */
static void bp_duration(kbuf *out, double s) {
    if (!isfinite(s)) {
        kbuf_puts(out, "?");
        return;
    }
    long t = lround(s);
    if (t >= 3600)
        kbuf_printf(out, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        kbuf_printf(out, "%ldm%02lds", t / 60, t % 60);
    else
        kbuf_printf(out, "%lds", t);
}

void bench_progress_format(const bench_progress *p, kbuf *out) {
    size_t left = p->total > p->ended ? p->total - p->ended : 0;
    kbuf_printf(out, "%zu/%zu done, %zu left, ETA ", p->ended, p->total, left);
    bp_duration(out, bench_eta_s(p->mean_wall_s, left, p->nlanes));
    if (isfinite(p->geomean)) kbuf_printf(out, ", geomean %.3fx (%zu)", p->geomean, p->geomean_n);
    if (p->waiting) kbuf_printf(out, ", %zu running elsewhere", p->waiting);
    kbuf_puts(out, " |");
    for (size_t i = 0; i < p->nlanes; i++)
        kbuf_printf(out, " %zu:%s", i, p->running && p->running[i] ? p->running[i] : "-");
}

void bench_progress_finished(const bench_record *r, size_t ended, size_t total, kbuf *out) {
    kbuf_printf(out, "[%zu/%zu] %s %s", ended, total, r->rel, bench_status_name(r->status));
    if (isfinite(r->wall_s)) kbuf_printf(out, " in %.1f s", r->wall_s);
    if (r->gpu_index >= 0) kbuf_printf(out, " on lane %d", r->gpu_index);
    if (r->status == BENCH_DONE && isfinite(r->vs_default.est)) {
        kbuf_printf(out, ": %.3fx over default", r->vs_default.est);
        if (isfinite(r->vs_default.lo) && isfinite(r->vs_default.hi))
            kbuf_printf(out, " (95%% CI %.3f-%.3f)", r->vs_default.lo, r->vs_default.hi);
    } else if (r->status == BENCH_FAILED || r->status == BENCH_TIMEOUT) {
        kbuf_puts(out, " (");
        if (r->exit_code >= 0) kbuf_printf(out, "exit %d", r->exit_code);
        if (r->error_kind) kbuf_printf(out, "%s%s", r->exit_code >= 0 ? ", " : "", r->error_kind);
        if (r->error_message) kbuf_printf(out, ": %.200s", r->error_message);
        kbuf_puts(out, ")");
    }
}
