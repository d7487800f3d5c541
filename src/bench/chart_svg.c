/* chart_svg.c — the per-problem chart of summary.html: grouped horizontal bars of eager,
 * default, max-autotune and kopt model times divided by the default time, log scale, floor
 * marker (contract in render.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/fmt.h"
#include "bench/render.h"

#define CH_WIDTH 980
#define CH_X0 310.0          /* bars start here */
#define CH_BARS_W 560.0
#define CH_TOP 64.0          /* legend and top axis labels */
#define CH_PITCH 34.0        /* one problem */
#define CH_BAR_H 6.0
#define CH_NAME_CHARS 44
#define CH_LMIN -3          /* the axis spans at most 0.001x .. 1000x of the default; */
#define CH_LMAX 3           /* values beyond are drawn at its edge */

enum { S_EAGER, S_DEFAULT, S_MA, S_KOPT, NSERIES };
static const char *const SER_NAME[NSERIES] = {"eager", "torch.compile default", "max-autotune", "kopt"};
static const char *const SER_CLASS[NSERIES] = {"eager", "default", "max-autotune", "kopt"};
static const char *const SER_COLOR[NSERIES] = {"#a0aec0", "#4a5568", "#3182ce", "#2f855a"};
#define COL_FLOOR "#c53030"
#define COL_GRID "#e2e8f0"

typedef struct ch_scale {
    int lmin, lmax;          /* decades of the axis */
} ch_scale;

/* The x coordinate of a normalised value (clamped to the axis). */
static double ch_x(const ch_scale *s, double v) {
    double l = log10(v);
    if (l < s->lmin) l = s->lmin;
    if (l > s->lmax) l = s->lmax;
    return CH_X0 + (l - s->lmin) / (double)(s->lmax - s->lmin) * CH_BARS_W;
}

/* The series as times (ms). kopt's time relative to the default is 1 / its speedup over the
 * default when there is one (the speedup's own paired timing), so the bar agrees with the
 * speedup printed next to it; else its time from the report. */
static void ch_times(const bench_record *r, double t[NSERIES]) {
    t[S_EAGER] = r->eager_ms;
    t[S_DEFAULT] = r->default_ms;
    t[S_MA] = r->max_autotune_ms;
    t[S_KOPT] = isfinite(r->vs_default.est) && r->vs_default.est > 0 && isfinite(r->default_ms)
                    ? r->default_ms / r->vs_default.est
                    : r->kopt_ms;
}

/* Decades covering every normalised value (and 1). */
static ch_scale ch_scale_of(const bench_record *recs, size_t n) {
    double lo = 1, hi = 1;
    for (size_t i = 0; i < n; i++) {
        double t[NSERIES], d = recs[i].default_ms;
        if (!(isfinite(d) && d > 0)) continue;
        ch_times(&recs[i], t);
        for (int k = 0; k <= NSERIES; k++) {
            double v = (k == NSERIES ? recs[i].floor_ms : t[k]) / d;
            if (!(isfinite(v) && v > 0)) continue;
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    ch_scale s = {(int)floor(log10(lo) - 1e-9), (int)ceil(log10(hi) + 1e-9)};
    if (s.lmin > -1) s.lmin = -1;
    if (s.lmax < 1) s.lmax = 1;
    if (s.lmin < CH_LMIN) s.lmin = CH_LMIN;
    if (s.lmax > CH_LMAX) s.lmax = CH_LMAX;
    return s;
}

/* Appends one <text> element (text escaped). */
static void ch_text(kbuf *out, double x, double y, const char *anchor, const char *attrs, const char *text) {
    kbuf_printf(out, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
    if (anchor) kbuf_printf(out, " text-anchor=\"%s\"", anchor);
    if (attrs) kbuf_puts(out, attrs);
    kbuf_putc(out, '>');
    bench_esc_xml(out, text);
    kbuf_puts(out, "</text>\n");
}

/* The legend: one swatch per series, and the floor marker. */
static void ch_legend(kbuf *out) {
    double x = 12;
    for (int k = 0; k < NSERIES; k++) {
        kbuf_printf(out, "<rect x=\"%.1f\" y=\"10\" width=\"14\" height=\"10\" fill=\"%s\"/>\n", x, SER_COLOR[k]);
        ch_text(out, x + 19, 19, NULL, NULL, SER_NAME[k]);
        x += 30 + 7.0 * (double)strlen(SER_NAME[k]);
    }
    kbuf_printf(out, "<line x1=\"%.1f\" y1=\"8\" x2=\"%.1f\" y2=\"22\" stroke=\"" COL_FLOOR "\" stroke-width=\"2\" "
                     "stroke-dasharray=\"3 2\"/>\n", x + 6, x + 6);
    ch_text(out, x + 14, 19, NULL, NULL, "memory floor");
}

/* A tick label: "10", "1", "0.1", "0.01" (no exponent notation). */
static void ch_tick_label(double v, char *buf, size_t n) {
    if (v >= 1) snprintf(buf, n, "%g", v);
    else snprintf(buf, n, "%.*f", (int)ceil(-log10(v) - 1e-9), v);
}

/* Grid and labels (top and bottom) at each decade, plus 2 and 5 when the axis is short. */
static void ch_axis(kbuf *out, const ch_scale *s, double y_end) {
    int minors = s->lmax - s->lmin <= 3;
    kbuf_puts(out, "<g class=\"axis\" font-size=\"11\">\n");
    for (int l = s->lmin; l <= s->lmax; l++) {
        for (int m = 1; m <= 5; m += (m == 1 ? 1 : 3)) {
            if ((m > 1 && (!minors || l == s->lmax))) continue;
            double v = m * pow(10.0, l), x = ch_x(s, v);
            kbuf_printf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" COL_GRID "\"/>\n", x,
                        CH_TOP - 6, x, y_end);
            char b[32];
            ch_tick_label(v, b, sizeof b);
            ch_text(out, x, CH_TOP - 10, "middle", NULL, b);
            ch_text(out, x, y_end + 14, "middle", NULL, b);
        }
    }
    double x1 = ch_x(s, 1.0);
    kbuf_printf(out, "<line class=\"reference\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#1a202c\" "
                     "stroke-width=\"1.5\"/>\n", x1, CH_TOP - 6, x1, y_end);
    ch_text(out, CH_X0 + CH_BARS_W / 2, y_end + 32, "middle", NULL,
            "model time / torch.compile default time (log scale; left of 1 = faster than default)");
    kbuf_puts(out, "</g>\n");
}

/* The problem's name left of its bars (long names keep both ends). */
static void ch_name(kbuf *out, const char *rel, double y) {
    char shown[CH_NAME_CHARS * 4 + 8];
    size_t n = strlen(rel);
    if (n <= CH_NAME_CHARS)
        snprintf(shown, sizeof shown, "%s", rel);
    else   /* keep both ends: the level and the file's tail */
        snprintf(shown, sizeof shown, "%.*s...%s", CH_NAME_CHARS / 2 - 2, rel, rel + n - (CH_NAME_CHARS / 2 - 1));
    ch_text(out, CH_X0 - 10, y, "end",
            " font-family=\"ui-monospace, SFMono-Regular, Menlo, Consolas, monospace\" font-size=\"11\"", shown);
}

/* One problem's group: name, default time, bars, kopt's speedup, floor marker. */
static void ch_problem(kbuf *out, const ch_scale *s, const bench_record *r, double y0) {
    char b[BENCH_FMT], c[BENCH_FMT], line[256];
    kbuf_puts(out, "<g class=\"problem\">\n<title>");
    bench_esc_xml(out, r->rel);
    kbuf_printf(out, " (%s)</title>\n", bench_status_name(r->status));
    ch_name(out, r->rel, y0 + 12);
    double d = r->default_ms;
    if (!(isfinite(d) && d > 0)) {
        snprintf(line, sizeof line, "not measured (%s)", bench_status_name(r->status));
        ch_text(out, CH_X0 + 6, y0 + 14, NULL, " font-style=\"italic\" fill=\"#718096\"", line);
        kbuf_puts(out, "</g>\n");
        return;
    }
    snprintf(line, sizeof line, "default %s ms", bench_fmt_ms(d, b));
    ch_text(out, CH_X0 - 10, y0 + 25, "end", " font-size=\"10\" fill=\"#718096\"", line);
    double t[NSERIES];
    ch_times(r, t);
    for (int k = 0; k < NSERIES; k++) {
        double y = y0 + 2 + k * (CH_BAR_H + 1);
        if (!(isfinite(t[k]) && t[k] > 0)) continue;
        double w = ch_x(s, t[k] / d) - CH_X0;
        kbuf_printf(out, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                         "<title>%s: %s ms (%s of default)</title></rect>\n",
                    SER_CLASS[k], CH_X0, y, w > 0.5 ? w : 0.5, CH_BAR_H, SER_COLOR[k], SER_NAME[k],
                    bench_fmt_ms(t[k], b), bench_fmt_ratio(t[k] / d, c));
    }
    if (isfinite(t[S_KOPT]) && t[S_KOPT] > 0) {   /* the speedup, right of every bar and of the 1 line */
        double x = ch_x(s, 1.0);
        for (int k = 0; k < NSERIES; k++)
            if (isfinite(t[k]) && t[k] > 0 && ch_x(s, t[k] / d) > x) x = ch_x(s, t[k] / d);
        snprintf(line, sizeof line, "kopt %s", bench_fmt_x(isfinite(r->vs_default.est) ? r->vs_default.est : d / t[S_KOPT], b));
        ch_text(out, x + 5, y0 + 2 + S_KOPT * (CH_BAR_H + 1) + CH_BAR_H, NULL, " font-size=\"10\"", line);
    }
    if (isfinite(r->floor_ms) && r->floor_ms > 0) {
        double v = r->floor_ms / d, x = ch_x(s, v);
        int off = log10(v) < s->lmin;   /* below the axis: drawn faint at its edge */
        kbuf_printf(out, "<line class=\"floor\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"" COL_FLOOR "\" "
                         "stroke-width=\"2\" stroke-dasharray=\"3 2\"%s><title>memory floor: %s ms (%s of default)%s</title>"
                         "</line>\n",
                    x, y0, x, y0 + 4 * (CH_BAR_H + 1) + 3, off ? " stroke-opacity=\"0.45\"" : "",
                    bench_fmt_ms(r->floor_ms, b), bench_fmt_ratio(v, c), off ? ", below the axis" : "");
    }
    kbuf_puts(out, "</g>\n");
}

void bench_chart_svg(const bench_record *recs, size_t n, kbuf *out) {
    ch_scale s = ch_scale_of(recs, n);
    double y_end = CH_TOP + (double)n * CH_PITCH;
    double height = y_end + 44;
    kbuf_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"bench-chart\" width=\"%d\" height=\"%.0f\" "
                     "viewBox=\"0 0 %d %.0f\" role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', "
                     "Helvetica, Arial, sans-serif\" font-size=\"12\" fill=\"#1a202c\">\n",
                CH_WIDTH, height, CH_WIDTH, height);
    kbuf_puts(out, "<title>Model time per problem relative to torch.compile default: eager, default, max-autotune, "
                   "kopt, and the memory floor</title>\n");
    ch_legend(out);
    if (!n) {
        ch_text(out, 12, CH_TOP + 16, NULL, NULL, "No problem in this summary.");
        kbuf_puts(out, "</svg>\n");
        return;
    }
    for (size_t i = 1; i < n; i += 2)   /* zebra stripes under everything */
        kbuf_printf(out, "<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#f4f6f9\"/>\n",
                    CH_TOP + (double)i * CH_PITCH - 2, CH_WIDTH, CH_PITCH);
    ch_axis(out, &s, y_end);
    for (size_t i = 0; i < n; i++) ch_problem(out, &s, &recs[i], CH_TOP + (double)i * CH_PITCH);
    kbuf_puts(out, "</svg>\n");
}
