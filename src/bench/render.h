/* render.h — the outputs of `kopt bench`: results.json (schema kopt.bench/1,
 * docs/schema/bench.md), summary.md and a self-contained summary.html (inline CSS and inline
 * SVG, no JavaScript, no external resource), all rendered from one bench_report and nothing
 * else.
 *
 * Contents of both summaries, in order: the configuration (suite, budget, max-autotune, GPU,
 * lanes, shard, selection, store) and the counts; per level (and all levels) the geometric-mean
 * speedups over torch.compile default and over max-autotune; KernelBench's fast_p against both
 * for p = 0, 1.0, 1.5, 2.0; GPU time setup / search / final, candidates, peak GPU memory and
 * its ratio to the working set, disk and wall time per problem with the count within
 * budget x 1.1 + 15 s; the chart (HTML only: bench_chart_svg); the per-problem table (with the
 * peaks of the eager model's and the float64 reference's memory phases next to the peak); the
 * definitions. Missing figures print as an en dash.
 *
 * Ownership: everything in a bench_report is borrowed. The kbuf functions append to the
 * caller's buffer; bench_results_json returns a new reference.
 */
#ifndef KOPT_BENCH_RENDER_H
#define KOPT_BENCH_RENDER_H

#include <jansson.h>

#include "bench/record.h"
#include "bench/stats.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct bench_report {
    const char *suite;          /* the suite folder, NULL when --report-only had none */
    double budget_s;
    int max_autotune;
    double timeout_factor, grace_s, timeout_s;
    const char *const *lanes;   /* the lanes' GPU ids; NULL with --report-only */
    size_t nlanes;
    const char *lanes_source;   /* "CUDA_VISIBLE_DEVICES", "nvidia-smi", "default" or NULL */
    const char *const *gpus;    /* GPU names of the suite keys read */
    size_t ngpus;
    const char *const *keys;    /* the suite keys read */
    size_t nkeys;
    unsigned shard_index, shard_count;   /* count 0: no shard */
    const char *selection;      /* "all", "dev", "only: a,b" */
    const char *store_path;
    int report_only;
    int retry_failed;
    const char *started_at, *ended_at;   /* ISO-8601 UTC */
    double wall_s;              /* NAN with --report-only */
    int interrupted;            /* the signal that stopped the run, 0 if none */
    const bench_record *recs;   /* in suite order */
    size_t n;
    const bench_summary *sum;
} bench_report;

json_t *bench_results_json(const bench_report *r);
void bench_summary_md(const bench_report *r, kbuf *out);
void bench_summary_html(const bench_report *r, kbuf *out);

/* One <svg> element (with xmlns): per problem a group of horizontal bars — eager, torch.compile
 * default, max-autotune, kopt — of the model time divided by the default time, on a log scale,
 * with a dashed marker at the memory floor and a reference line at 1 (the default). Problems
 * without a default time get their name and "not measured". */
void bench_chart_svg(const bench_record *recs, size_t n, kbuf *out);

/* Writes dir/results.json, dir/summary.md and dir/summary.html (atomically, each); KOPT_E_IO
 * when one cannot be written. *json_text (may be NULL) receives the results.json text. */
int bench_write_outputs(const bench_report *r, const char *dir, char **json_text, kerr *e);

#endif
