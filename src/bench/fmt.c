/* fmt.c — formatting and escaping of the bench summaries (contract in fmt.h). */
#include "bench/fmt.h"

#include <math.h>
#include <stdio.h>

const char *bench_fmt_ms(double ms, char *buf) {
    if (!isfinite(ms)) snprintf(buf, BENCH_FMT, BENCH_DASH);
    else snprintf(buf, BENCH_FMT, "%.4g", ms);
    return buf;
}

const char *bench_fmt_x(double x, char *buf) {
    if (!isfinite(x)) snprintf(buf, BENCH_FMT, BENCH_DASH);
    else snprintf(buf, BENCH_FMT, "%.3fx", x);
    return buf;
}

const char *bench_fmt_ci(bench_ci c, char *buf) {
    if (!isfinite(c.est)) snprintf(buf, BENCH_FMT, BENCH_DASH);
    else if (isfinite(c.lo) && isfinite(c.hi)) snprintf(buf, BENCH_FMT, "%.3fx [%.3f, %.3f]", c.est, c.lo, c.hi);
    else snprintf(buf, BENCH_FMT, "%.3fx", c.est);
    return buf;
}

const char *bench_fmt_frac(double f, char *buf) {
    if (!isfinite(f)) snprintf(buf, BENCH_FMT, BENCH_DASH);
    else snprintf(buf, BENCH_FMT, "%.1f%%", 100.0 * f);
    return buf;
}

const char *bench_fmt_bytes(double b, char *buf) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    if (!isfinite(b) || b < 0) {
        snprintf(buf, BENCH_FMT, BENCH_DASH);
        return buf;
    }
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    if (u == 0) snprintf(buf, BENCH_FMT, "%.0f B", b);
    else snprintf(buf, BENCH_FMT, "%.3g %s", b, units[u]);
    return buf;
}

const char *bench_fmt_s(double s, char *buf) {
    if (!isfinite(s)) snprintf(buf, BENCH_FMT, BENCH_DASH);
    else snprintf(buf, BENCH_FMT, "%.1f s", s);
    return buf;
}

const char *bench_fmt_ratio(double r, char *buf) {
    if (!isfinite(r)) snprintf(buf, BENCH_FMT, BENCH_DASH);
    else snprintf(buf, BENCH_FMT, "%.3g", r);
    return buf;
}

const char *bench_fmt_int(int64_t v, char *buf) {
    if (v < 0) snprintf(buf, BENCH_FMT, BENCH_DASH);
    else snprintf(buf, BENCH_FMT, "%lld", (long long)v);
    return buf;
}

const char *bench_fmt_flag(int v, char *buf) {
    snprintf(buf, BENCH_FMT, "%s", v < 0 ? BENCH_DASH : v ? "yes" : "no");
    return buf;
}

void bench_esc_xml(kbuf *out, const char *s) {
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '&': kbuf_puts(out, "&amp;"); break;
        case '<': kbuf_puts(out, "&lt;"); break;
        case '>': kbuf_puts(out, "&gt;"); break;
        case '"': kbuf_puts(out, "&quot;"); break;
        case '\'': kbuf_puts(out, "&#39;"); break;
        default: kbuf_putc(out, *p);
        }
    }
}

void bench_esc_md(kbuf *out, const char *s) {
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '|': kbuf_puts(out, "\\|"); break;
        case '\\': kbuf_puts(out, "\\\\"); break;
        case '`': kbuf_puts(out, "\\`"); break;
        case '<': kbuf_puts(out, "&lt;"); break;
        case '\n':
        case '\r': kbuf_putc(out, ' '); break;
        default: kbuf_putc(out, *p);
        }
    }
}
