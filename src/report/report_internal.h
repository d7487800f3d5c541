/* report_internal.h — helpers shared by the report renderers (report_md.c, report_html.c,
 * svg.c); not part of the module's interface (report.h is).
 *
 * Contract: every reader takes borrowed json_t (NULL or of the wrong type is fine) and never
 * fails: a missing number reads as NAN, a missing string as NULL. The report_fmt_* functions
 * format into the caller's char buffer of REPORT_NUM chars and return it, or return the
 * static string REPORT_DASH for NAN/inf; the result is valid until the buffer is reused.
 * The escape functions append to the caller's kbuf. report_kernel_read fills a view whose
 * pointers borrow from the json document (valid while the document lives).
 */
#ifndef KOPT_REPORT_INTERNAL_H
#define KOPT_REPORT_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "util/buf.h"

#define REPORT_NUM 48
#define REPORT_DASH "\xe2\x80\x94"   /* em dash, UTF-8 */
#define REPORT_ARROW "\xe2\x86\x92"  /* right arrow, UTF-8 */
#define REPORT_NGATES 4

/* ---- reading the document */
double report_num(const json_t *o, const char *key);       /* NAN unless a finite number */
const char *report_str(const json_t *o, const char *key);  /* NULL unless a non-empty string */

typedef struct report_speedup {
    double est, lo, hi;   /* NAN when absent */
} report_speedup;
report_speedup report_speedup_read(const json_t *sp);  /* {"estimate","ci95_lo","ci95_hi"} or a bare number */

typedef struct report_kernel {
    const char *name, *kind, *status, *why, *change, *cls;
    const json_t *aten_ops;      /* the array, or NULL */
    const json_t *refused;       /* refused_by_gate object, or NULL */
    double time_ms, after_ms, share, frac, bytes, tried;  /* NAN when absent */
    report_speedup sp;
    int is_vendor;               /* status or kind "vendor" */
    int is_optimized;            /* status "optimized" */
    int in_region;               /* status "in_region": replaced with other kernels by a region
                                  * (its time after is the region's row) */
} report_kernel;
void report_kernel_read(const json_t *k, report_kernel *out);

/* The time drawn/printed as "after" for a Triton kernel: after_ms, else (when the kernel was
 * not optimized) its unchanged time_ms, else NAN; NAN for a kernel replaced as part of a region
 * (the region's own row has the time after). */
double report_kernel_after(const report_kernel *k);
/* frac_of_ceiling after the change: frac * time / after (the floor does not move); NAN when
 * any is missing. */
double report_kernel_frac_after(const report_kernel *k);
/* bytes / copy ceiling, in ms; NAN unless both are known and positive. */
double report_floor_ms(double bytes, const json_t *ceilings);
/* The text that explains the row: change for an optimized kernel (else why), why otherwise
 * (else change), a fixed sentence for a vendor call; NULL when there is nothing. */
const char *report_kernel_note(const report_kernel *k);

/* Outcome classes. */
enum { REPORT_OUT_OPTIMIZED, REPORT_OUT_KEPT, REPORT_OUT_FAILED, REPORT_OUT_OTHER };
/* Class of the outcome; *detail (may be NULL) gets the text after "baseline kept:" or the
 * error message, or NULL. */
int report_outcome(const json_t *doc, const char **detail);

/* Counts of refusals per gate: counts[1..4], counts[0] for any other gate. Summed over the
 * kernels' refused_by_gate when any kernel has one, else counted from attempts. Returns the
 * total; *accepted (may be NULL) gets the number of accepted attempts (-1 if no attempts). */
long report_gate_counts(const json_t *doc, long counts[REPORT_NGATES + 1], long *accepted);
const char *report_gate_what(int gate);  /* what gate N checks, one phrase */

/* Summary facts as label/value pairs; values hold only numbers and fixed words (nothing from
 * the document's strings), so any renderer may print them after ordinary escaping. */
typedef struct report_fact {
    const char *label;
    char value[1024];
} report_fact;
#define REPORT_MAX_FACTS 10
size_t report_facts(const json_t *doc, report_fact facts[REPORT_MAX_FACTS]);
/* The first character of a sentence that starts with s: capitalised, unless s's first word is
 * an identifier (holds '.', '_' or '('), which keeps its case ("torch.compile ..."). */
char report_sentence_initial(const char *s);
/* One sentence headline of the model result ("0.1810 ms -> 0.1500 ms, 1.210x faster (95% CI
 * 1.190-1.230)"), into buf of n chars; returns 0 when the document has no model times. */
int report_headline(const json_t *doc, char *buf, size_t n);

/* ---- formatting numbers */
const char *report_fmt_ms(double ms, char buf[REPORT_NUM]);     /* 4 significant digits */
const char *report_fmt_pct(double frac, char buf[REPORT_NUM]);  /* 0.32 -> "32.0%" */
const char *report_fmt_x(double x, char buf[REPORT_NUM]);       /* "1.300x" */
/* "1.300x (95% CI 1.250-1.350)", "1.300x" without CI, REPORT_DASH without estimate;
 * with_label 0 drops the "95% CI " words. */
const char *report_fmt_speedup(const report_speedup *s, int with_label, char buf[REPORT_NUM]);

/* ---- text */
/* XML/HTML text and attribute escaping: & < > " ' as entities; control characters other
 * than tab/newline become U+FFFD (XML 1.0 forbids them). NULL appends nothing. */
void report_esc_xml(kbuf *out, const char *s);
/* Markdown inline text: backslash-escapes what GFM would interpret (\ ` * _ [ ] < > | & ~),
 * '_' only at word boundaries; newlines and control characters become spaces. */
void report_esc_md(kbuf *out, const char *s);
/* A Markdown code span holding s verbatim (fence longer than any backtick run); in_table
 * escapes '|' as GFM tables require. NULL or "" appends REPORT_DASH. */
void report_md_code(kbuf *out, const char *s, int in_table);
/* s cut to at most maxch characters (UTF-8 aware) with a middle ellipsis; control chars and
 * newlines become spaces; appended to out, unescaped. */
void report_trunc(kbuf *out, const char *s, size_t maxch);
/* Number of UTF-8 characters of s. */
size_t report_utf8_len(const char *s);
/* The basename of a path (pointer into s). */
const char *report_basename(const char *s);

/* The Markdown text chart (report_md.c) and the SVG (svg.c) share this row selection. */
int report_kernel_charted(const report_kernel *k);  /* Triton kernel: not a vendor row */

#endif
