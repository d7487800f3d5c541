/* runner.h — the sweep: one lane per GPU, each running one problem at a time as a child
 * `kopt optimize` (child.h), all pulling from one queue held by this process (a fork/exec and
 * waitpid loop, no threads).
 *
 * For each problem, in suite order: store_bench_claim (identity.h decides whether a 'running'
 * row's owner is gone). A claimed problem is started on an idle lane; 'done' rows are skipped,
 * 'failed'/'timeout' rows are kept as results unless retry_failed; problems another live
 * kopt bench is running are polled again every 5 s once the queue is empty, until they end or
 * their owner is gone. A child past timeout_s gets SIGKILL (its process group) and is recorded
 * as 'timeout'. Each end is recorded with store_bench_finish.
 *
 * Signals: while bench_run runs, SIGINT, SIGTERM and SIGHUP stop the sweep: the children get
 * SIGTERM, then SIGKILL after 3 s, are reaped, and their rows are released (deleted: "not
 * done", they run again next time); bench_run then returns 0 with stats->interrupted set to the
 * signal. SIGPIPE is ignored meanwhile. The previous dispositions are restored on return.
 *
 * Contract: returns 0 or a kopt_code with the kerr filled: KOPT_E_STORE when the store fails,
 * KOPT_E_IO when a child's output folder cannot be made, KOPT_E_INTERNAL when fork fails. On
 * such a failure the running children are stopped and released as on a signal.
 *
 * Ownership: everything in the options is borrowed for the call.
 */
#ifndef KOPT_BENCH_RUNNER_H
#define KOPT_BENCH_RUNNER_H

#include <stddef.h>

#include "bench/identity.h"
#include "bench/lanes.h"
#include "bench/record.h"
#include "bench/suite.h"
#include "store/store.h"
#include "util/err.h"

typedef struct bench_ui {
    /* the progress line (called about once a second and after each event) */
    void (*progress)(const char *line, void *ctx);
    /* a problem finished in this run (r: its record as just recorded) */
    void (*finished)(const bench_record *r, size_t ended, size_t total, void *ctx);
    void *ctx;
} bench_ui;

typedef struct bench_run_opts {
    const char *out_dir;        /* DIR (runs/ goes under it) */
    const char *store_path;     /* the store the children use (the same file as `s`) */
    const char *python;         /* --python, may be NULL */
    double budget_s;
    int max_autotune;
    double timeout_s;           /* budget * factor + grace */
    int retry_failed;
    const char *suite_key;
    const char *gpu;            /* GPU name of the suite key */
    const bench_lanes *lanes;
    bench_liveness *liveness;   /* its self is the owner of the claimed rows */
    bench_ui ui;
} bench_run_opts;

typedef struct bench_run_stats {
    size_t started;             /* children started */
    size_t done, failed, timeouts;   /* their ends */
    size_t skipped_done, skipped_result;  /* already ended before this run */
    size_t lost;                /* results not recorded: the row was taken over meanwhile */
    size_t released;            /* interrupted problems handed back */
    int interrupted;            /* the signal that stopped the sweep, 0 if none */
} bench_run_stats;

int bench_run(kstore *s, const bench_suite *suite, const bench_run_opts *o, bench_run_stats *st, kerr *e);

#endif
