/* report.h — the human-readable reports of `kopt optimize`: Markdown, and a single
 * self-contained HTML page (inline CSS, inline SVG chart, no JavaScript, no external
 * resource), both rendered from the optimize JSON document (schema "kopt.optimize/1",
 * docs/schema/optimize.md).
 *
 * Contents of both reports, in order: title (problem, device, torch/triton versions); a
 * banner with the outcome (prominent when the baseline was kept, with every kernel's reason,
 * or when the run failed); a summary (model time before/after, speedup with its 95% CI,
 * eager and max-autotune times when present, the memory-traffic floor, the search's GPU time,
 * wall time and candidates tried, LLM usage when present); a per-kernel table (name, kind,
 * share, time before/after, speedup, % of the measured ceiling before -> after, status, what
 * changed or why kept); vendor library calls; the chart; one section per optimized kernel;
 * refusals per gate; the attempt log; the measurement method (copied from the document's
 * "method" fields). The HTML chart is the SVG of report_svg_bars; Markdown cannot carry inline
 * SVG portably, so it gets the same chart drawn in text inside a fenced code block.
 *
 * Formatting: times in ms with 4 significant digits ("0.06000"), percentages with one decimal
 * ("32.0%"), speedups with 3 decimals ("1.300x"). A missing or non-numeric field is printed as
 * an em dash or its sentence is left out; no function here prints "(null)" or crashes on a
 * document with fields missing or of the wrong type (doc itself may even be NULL or not an
 * object). All document text (kernel names, reasons, paths) is escaped for the output format:
 * XML/HTML entities in HTML and SVG, backslash escapes and code spans in Markdown.
 *
 * Ownership: every json_t is borrowed and never modified. The kbuf functions append to the
 * caller's buffer (which the caller owns and frees). report_write_* write `path` atomically
 * (fs_write; the directory must exist) and return 0 or a kopt_code with *e filled
 * (KOPT_E_INTERNAL for a NULL doc or path, KOPT_E_IO when the file cannot be written).
 */
#ifndef KOPT_REPORT_H
#define KOPT_REPORT_H

#include <jansson.h>

#include "util/buf.h"
#include "util/err.h"

/* Geometry of the SVG chart, in px. A bar of t ms is t / axis_max * REPORT_SVG_BAR_W wide,
 * where axis_max is the smallest "nice" tick value (1, 2, 2.5, 5 x 10^k steps) at or above
 * the largest time or floor drawn; bars start at x = REPORT_SVG_BAR_X. */
#define REPORT_SVG_WIDTH 860
#define REPORT_SVG_BAR_X 270.0
#define REPORT_SVG_BAR_W 420.0

/* Write the Markdown / HTML report of doc to path. */
int report_write_markdown(const json_t *doc, const char *path, kerr *e);
int report_write_html(const json_t *doc, const char *path, kerr *e);

/* Append the Markdown / HTML report of doc to out. */
void report_markdown(const json_t *doc, kbuf *out);
void report_html(const json_t *doc, kbuf *out);

/* Append one <svg> element: horizontal grouped bars, one pair per Triton kernel of `kernels`
 * (the document's "kernels" array; rows with status or kind "vendor" are skipped): the time
 * before (time_ms, class "before") and after (after_ms, class "after"; a kept kernel without
 * after_ms is drawn at its unchanged time), each labelled with its value, plus a dashed
 * marker (class "floor") at the kernel's memory-traffic floor, bytes / copy ceiling, when
 * the row has "bytes" and ceilings (the document's "ceilings" object, may be NULL) has
 * "copy_gbps". Legend and an axis in ms. A row without time_ms gets its label and "not
 * timed", no bar. The element carries xmlns, so it is also valid as a standalone .svg file. */
void report_svg_bars(const json_t *kernels, const json_t *ceilings, kbuf *out);

#endif
