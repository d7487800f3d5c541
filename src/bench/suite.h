/* suite.h — the problems of a `kopt bench` suite: discovery in KernelBench layout, the
 * selections (--dev, --only, --shard) and the deterministic order.
 *
 * Layout: SUITE/levelN/NAME.py (N = digits; level N) and/or SUITE/NAME.py (a flat folder: level 0,
 * named "flat"). Other folders and files are ignored, as are hidden files and __init__.py.
 * Problems are sorted by their path relative to SUITE (bench_rel_cmp: a natural order, so that
 * "level1/2_x.py" comes before "level1/10_x.py"; deterministic for any set of names).
 *
 * Contract: functions return 0 or a kopt_code with the kerr filled. A missing suite, a path that
 * is not a folder, or a folder without problems is KOPT_E_NOFILE; a --dev list that is missing
 * or names a problem the suite does not have is KOPT_E_NOFILE; an empty --only list is
 * KOPT_E_USAGE. Selections filter in place and keep the order.
 *
 * Ownership: a bench_suite owns its problems and their strings (bench_suite_free, NULL-safe and
 * idempotent). Strings passed in are borrowed.
 */
#ifndef KOPT_BENCH_SUITE_H
#define KOPT_BENCH_SUITE_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"
#include "util/err.h"

typedef struct bench_problem {
    char *rel;                  /* relative to the suite: "level1/3_x.py", or "x.py" when flat */
    char *path;                 /* absolute path of the file */
    char *name;                 /* file name without ".py" */
    char *level_name;           /* "level1", ..., or "flat" */
    int level;                  /* N of levelN; 0 for a flat problem */
    char sha[STORE_SHA_HEX];    /* sha256 of the file's content */
} bench_problem;

typedef struct bench_suite {
    char *root;                 /* absolute path of the suite folder */
    bench_problem *v;
    size_t n;
} bench_suite;

/* Finds the problems of the suite folder `dir`, reads each to hash it, and sorts them. */
int bench_suite_discover(const char *dir, bench_suite *out, kerr *e);
void bench_suite_free(bench_suite *s);

/* The order of relative paths: digit runs compare by value (strverscmp), then bytes. */
int bench_rel_cmp(const char *a, const char *b);

/* FNV-1a, 64 bits, over the bytes of s (offset basis 0xcbf29ce484222325, prime 0x100000001b3). */
uint64_t bench_fnv1a64(const char *s);
/* 1 when the problem at `rel` belongs to shard `index` of `count` (hash mod count == index):
 * stable when problems are added or removed. count >= 1, 0 <= index < count. */
int bench_shard_has(const char *rel, unsigned index, unsigned count);

/* Keeps the problems of shard index/count. */
void bench_suite_shard(bench_suite *s, unsigned index, unsigned count);
/* Keeps the problems whose relative path contains one of the comma-separated substrings of
 * `list` (empty items are ignored; no item at all is KOPT_E_USAGE). */
int bench_suite_only(bench_suite *s, const char *list, kerr *e);
/* Keeps the problems listed in SUITE/DEV: one relative path per line, blank lines and text
 * after '#' ignored, surrounding spaces trimmed. */
int bench_suite_dev(bench_suite *s, kerr *e);

/* The problem with this relative path, or NULL. */
const bench_problem *bench_suite_find(const bench_suite *s, const char *rel);

#endif
