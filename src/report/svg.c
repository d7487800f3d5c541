/* svg.c — report_svg_bars: the per-kernel before/after bar chart of the reports, as one
 * self-contained <svg> element (report.h has the contract). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "report/report_internal.h"

#define SVG_TOP 40.0        /* legend above */
#define SVG_PITCH 40.0      /* one kernel row */
#define SVG_BAR_H 14.0
#define SVG_NAME_CHARS 36   /* longer names get a middle ellipsis (full name in <title>) */

#define COL_BEFORE "#a0aec0"
#define COL_AFTER "#2f855a"
#define COL_FLOOR "#c53030"
#define COL_GRID "#e2e8f0"
#define COL_TEXT "#1a202c"

/* A step of 1, 2, 2.5 or 5 x 10^k giving about five ticks up to maxv. */
static double svg_nice_step(double maxv) {
    double raw = maxv / 5.0;
    double mag = pow(10.0, floor(log10(raw)));
    double r = raw / mag;
    double s = r <= 1.0 ? 1.0 : r <= 2.0 ? 2.0 : r <= 2.5 ? 2.5 : r <= 5.0 ? 5.0 : 10.0;
    return s * mag;
}

static void svg_text(kbuf *out, double x, double y, const char *anchor, const char *extra, const char *text) {
    kbuf_printf(out, "<text x=\"%.2f\" y=\"%.2f\"%s%s%s%s>", x, y, anchor ? " text-anchor=\"" : "", anchor ? anchor : "",
                anchor ? "\"" : "", extra ? extra : "");
    report_esc_xml(out, text);
    kbuf_puts(out, "</text>\n");
}

static void svg_legend(kbuf *out, int with_floor) {
    double x = REPORT_SVG_BAR_X;
    kbuf_printf(out, "<g class=\"legend\">\n<rect x=\"%.2f\" y=\"8\" width=\"14\" height=\"12\" fill=\"" COL_BEFORE "\"/>\n", x);
    svg_text(out, x + 19, 18, NULL, NULL, "before (torch.compile)");
    x += 170;
    kbuf_printf(out, "<rect x=\"%.2f\" y=\"8\" width=\"14\" height=\"12\" fill=\"" COL_AFTER "\"/>\n", x);
    svg_text(out, x + 19, 18, NULL, NULL, "after (kopt)");
    x += 110;
    if (with_floor) {
        kbuf_printf(out, "<line x1=\"%.2f\" y1=\"6\" x2=\"%.2f\" y2=\"22\" stroke=\"" COL_FLOOR "\" stroke-width=\"2\" "
                         "stroke-dasharray=\"3 2\"/>\n", x + 6, x + 6);
        svg_text(out, x + 14, 18, NULL, NULL, "memory-traffic floor");
    }
    kbuf_puts(out, "</g>\n");
}

/* One bar with its value label; w is its width in px. */
static void svg_bar(kbuf *out, const char *cls, const char *fill, double y, double w, const char *label) {
    kbuf_printf(out, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", cls,
                REPORT_SVG_BAR_X, y, w, SVG_BAR_H, fill);
    svg_text(out, REPORT_SVG_BAR_X + w + 5, y + SVG_BAR_H - 3, NULL, " font-size=\"11\"", label);
}

void report_svg_bars(const json_t *kernels, const json_t *ceilings, kbuf *out) {
    size_t rows = 0, i;
    double maxv = 0;
    int any_floor = 0;
    json_t *kj;
    json_array_foreach(kernels, i, kj) {
        report_kernel k;
        report_kernel_read(kj, &k);
        if (!report_kernel_charted(&k)) continue;
        rows++;
        double v[3] = {k.time_ms, report_kernel_after(&k), report_floor_ms(k.bytes, ceilings)};
        for (int j = 0; j < 3; j++)
            if (isfinite(v[j]) && v[j] > maxv) maxv = v[j];
        if (isfinite(v[2])) any_floor = 1;
    }
    double step = maxv > 0 ? svg_nice_step(maxv) : 0;
    double axis_max = step > 0 ? ceil(maxv / step - 1e-9) * step : 0;
    double scale = axis_max > 0 ? REPORT_SVG_BAR_W / axis_max : 0;
    double y_axis = SVG_TOP + (double)rows * SVG_PITCH + 6;
    double height = rows ? y_axis + 46 : 64;

    kbuf_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"kopt-chart\" width=\"%d\" height=\"%.0f\" "
                     "viewBox=\"0 0 %d %.0f\" role=\"img\" font-family=\"system-ui, -apple-system, 'Segoe UI', "
                     "Helvetica, Arial, sans-serif\" font-size=\"12\" fill=\"" COL_TEXT "\">\n",
                REPORT_SVG_WIDTH, height, REPORT_SVG_WIDTH, height);
    kbuf_puts(out, "<title>GPU time per Triton kernel, before and after kopt (ms)</title>\n");
    if (!rows) {
        svg_text(out, 12, 36, NULL, NULL, "No Triton kernel timings in this report.");
        kbuf_puts(out, "</svg>\n");
        return;
    }
    svg_legend(out, any_floor);

    /* grid and axis */
    char nb[REPORT_NUM], lb[2 * REPORT_NUM];
    kbuf_puts(out, "<g class=\"axis\" font-size=\"11\">\n");
    if (step > 0) {
        for (int t = 0; t * step <= axis_max * (1 + 1e-9); t++) {
            double x = REPORT_SVG_BAR_X + t * step * scale;
            kbuf_printf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"" COL_GRID "\"/>\n", x,
                        SVG_TOP - 4, x, y_axis + 4);
            snprintf(nb, sizeof nb, "%g", t * step);
            svg_text(out, x, y_axis + 18, "middle", NULL, nb);
        }
    }
    kbuf_printf(out, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#718096\"/>\n", REPORT_SVG_BAR_X,
                y_axis, REPORT_SVG_BAR_X + REPORT_SVG_BAR_W, y_axis);
    svg_text(out, REPORT_SVG_BAR_X + REPORT_SVG_BAR_W / 2, y_axis + 36, "middle", NULL, "GPU time per call (ms)");
    kbuf_puts(out, "</g>\n");

    size_t row = 0;
    kbuf name = KBUF_INIT;
    json_array_foreach(kernels, i, kj) {
        report_kernel k;
        report_kernel_read(kj, &k);
        if (!report_kernel_charted(&k)) continue;
        double y0 = SVG_TOP + (double)row++ * SVG_PITCH;
        double after = report_kernel_after(&k), floor_ms = report_floor_ms(k.bytes, ceilings);

        kbuf_puts(out, "<g class=\"kernel\">\n<title>");
        report_esc_xml(out, k.name ? k.name : "(unnamed kernel)");
        kbuf_printf(out, ": %s ms", report_fmt_ms(k.time_ms, nb));
        if (isfinite(after)) kbuf_printf(out, " " REPORT_ARROW " %s ms", report_fmt_ms(after, nb));
        if (isfinite(floor_ms)) kbuf_printf(out, "; floor %s ms", report_fmt_ms(floor_ms, nb));
        kbuf_puts(out, "</title>\n");

        kbuf_reset(&name);
        report_trunc(&name, k.name ? k.name : "(unnamed kernel)", SVG_NAME_CHARS);
        svg_text(out, REPORT_SVG_BAR_X - 10, y0 + 23, "end",
                 " font-size=\"11\" font-family=\"ui-monospace, SFMono-Regular, Menlo, Consolas, monospace\"",
                 kbuf_str(&name));
        if (!isfinite(k.time_ms)) {
            svg_text(out, REPORT_SVG_BAR_X + 5, y0 + 23, NULL, " font-style=\"italic\"", "not timed");
            kbuf_puts(out, "</g>\n");
            continue;
        }
        snprintf(lb, sizeof lb, "%s ms", report_fmt_ms(k.time_ms, nb));
        svg_bar(out, "before", COL_BEFORE, y0 + 4, k.time_ms * scale, lb);
        if (isfinite(after)) {
            char xb[REPORT_NUM];
            if (k.is_optimized && isfinite(k.sp.est))
                snprintf(lb, sizeof lb, "%s ms, %s", report_fmt_ms(after, nb), report_fmt_x(k.sp.est, xb));
            else if (k.is_optimized && after > 0)
                snprintf(lb, sizeof lb, "%s ms, %s", report_fmt_ms(after, nb), report_fmt_x(k.time_ms / after, xb));
            else
                snprintf(lb, sizeof lb, "%s ms (%s)", report_fmt_ms(after, nb), k.status ? "kept" : "unchanged");
            svg_bar(out, "after", COL_AFTER, y0 + 20, after * scale, lb);
        }
        if (isfinite(floor_ms)) {
            double x = REPORT_SVG_BAR_X + floor_ms * scale;
            kbuf_printf(out, "<line class=\"floor\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"" COL_FLOOR
                             "\" stroke-width=\"2\" stroke-dasharray=\"3 2\"/>\n", x, y0 + 1, x, y0 + 37);
        }
        kbuf_puts(out, "</g>\n");
    }
    kbuf_free(&name);
    kbuf_puts(out, "</svg>\n");
}
