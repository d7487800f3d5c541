/* fmt.h — number formatting shared by the bench summaries (Markdown, HTML, SVG): a value that
 * is not measured (NAN, negative count) prints as BENCH_DASH, never "nan" or "(null)".
 *
 * Each function writes into the caller's buffer buf (BENCH_FMT bytes) and returns it.
 */
#ifndef KOPT_BENCH_FMT_H
#define KOPT_BENCH_FMT_H

#include "bench/record.h"
#include "util/buf.h"

#define BENCH_FMT 64
#define BENCH_DASH "\xe2\x80\x93"   /* en dash, UTF-8 */

const char *bench_fmt_ms(double ms, char *buf);        /* 4 significant digits: "0.06000" */
const char *bench_fmt_x(double x, char *buf);          /* "1.234x" */
const char *bench_fmt_ci(bench_ci c, char *buf);       /* "1.234x [1.200, 1.260]" or "1.234x" */
const char *bench_fmt_frac(double f, char *buf);       /* "45.0%" */
const char *bench_fmt_bytes(double b, char *buf);      /* "1.23 GiB", "512 B" */
const char *bench_fmt_s(double s, char *buf);          /* "12.3 s" */
const char *bench_fmt_ratio(double r, char *buf);      /* "3.21" */
const char *bench_fmt_int(int64_t v, char *buf);       /* "42"; < 0 -> dash */
const char *bench_fmt_flag(int v, char *buf);          /* 1 "yes", 0 "no", < 0 dash */

/* Escapes for the output formats, appended to out: XML/HTML entities; Markdown table cells
 * ('|', '\\', '`' and '<' escaped, newlines replaced by spaces; '_' and '*' are left alone so
 * that file names stay readable as text). */
void bench_esc_xml(kbuf *out, const char *s);
void bench_esc_md(kbuf *out, const char *s);

#endif
