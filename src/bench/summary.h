/* summary.h — the content shared by summary.md and summary.html: the tables (configuration,
 * speedups per level, fast_p per level, time/memory/disk per level, problems, where the setup's
 * time went) and the
 * definitions, built from a bench_report (render.h). Internal to src/bench.
 *
 * Ownership: bench_tables owns its tables (bench_tables_free); the report is borrowed.
 */
#ifndef KOPT_BENCH_SUMMARY_H
#define KOPT_BENCH_SUMMARY_H

#include "bench/render.h"
#include "bench/table.h"

enum {
    BENCH_T_CONFIG,
    BENCH_T_LEVELS,
    BENCH_T_FASTP,
    BENCH_T_HEADROOM,
    BENCH_T_RESOURCES,
    BENCH_T_PROBLEMS,
    BENCH_T_GAPS,
    BENCH_T_FLOORS,
    BENCH_T_MEMORY,
    BENCH_T_NO_MA,
    BENCH_T_SETUP,
    BENCH_NTABLES
};

/* The tables after the problems table that both summaries show only when they have rows, in
 * their order; ends with -1. */
extern const int BENCH_T_AFTER_PROBLEMS[];

typedef struct bench_tables {
    bench_table t[BENCH_NTABLES];
} bench_tables;

void bench_tables_build(const bench_report *r, bench_tables *out);
void bench_tables_free(bench_tables *t);

/* The title line: "kopt bench: <suite> (<n> problems, budget 2m, ...)"-style, plain text. */
void bench_summary_title(const bench_report *r, kbuf *out);

/* The definitions paragraph by paragraph (plain text), NULL-terminated. */
extern const char *const BENCH_DEFINITIONS[];

#endif
