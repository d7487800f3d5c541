/* identity.h — who and what a bench_results row belongs to: the suite key (the run
 * configuration) and the owner ("host:pid" of the kopt bench process that claimed a problem)
 * with the rule deciding whether that owner is still at work.
 *
 * Suite key: sha256 of "kopt.bench.suite/1\n" followed by "budget_s=<%.3f>\n",
 * "max_autotune=<0|1>\n" and "gpu=<name>\n". The same budget, flag and GPU name give the same
 * key on every host, so shard stores merge into one suite.
 *
 * Liveness (bench_owner_alive, a store_bench_alive_fn; ctx is a bench_liveness):
 *  - the owner is this very process (a pid reused after a kill -9): gone;
 *  - same host: alive while the pid exists and, when /proc/<pid>/cmdline is readable, that
 *    process is a `kopt ... bench` (its arguments include "bench");
 *  - another host (or no parsable owner): alive while the row is younger than foreign_stale_s
 *    (twice the per-problem time limit).
 *
 * Ownership: strings returned are malloc'd for the caller; a bench_liveness owns `self`
 * (bench_liveness_clear).
 */
#ifndef KOPT_BENCH_IDENTITY_H
#define KOPT_BENCH_IDENTITY_H

#include "store/store.h"
#include "util/owner.h"

void bench_suite_key(double budget_s, int max_autotune, const char *gpu, char out[STORE_SHA_HEX]);

/* "host:pid" of this process. */
char *bench_owner_self(void);

/* The liveness of a bench owner is util/owner.h's, for the verb "bench". */
typedef owner_liveness bench_liveness;

void bench_liveness_init(bench_liveness *l, double foreign_stale_s);
void bench_liveness_clear(bench_liveness *l);
int bench_owner_alive(const char *owner, double age_s, void *ctx);

#endif
