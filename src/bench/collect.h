/* collect.h — the records a summary is made of, read back from the store: the bench_results
 * rows of the given suite keys, either for the problems of a selection (each problem's row with
 * the same relative path and file sha; a problem without one is "not run") or, without a
 * selection (--report-only without SUITE), every row, in suite order.
 *
 * When several rows fit one problem (several suite keys: GPU names), the one that tells most
 * wins: done, then failed/timeout, then running; then the latest started.
 *
 * Contract: 0 or a kopt_code (KOPT_E_STORE) with the kerr filled.
 * Ownership: bench_records owns its records (bench_records_free, NULL-safe).
 */
#ifndef KOPT_BENCH_COLLECT_H
#define KOPT_BENCH_COLLECT_H

#include "bench/record.h"
#include "bench/suite.h"
#include "store/store.h"

typedef struct bench_records {
    bench_record *v;
    size_t n;
} bench_records;

int bench_collect(kstore *s, const char *const *keys, size_t nkeys, const bench_suite *sel, double budget_s,
                  bench_records *out, kerr *e);
void bench_records_free(bench_records *r);

#endif
