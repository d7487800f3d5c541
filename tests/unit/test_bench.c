/* test_bench.c — src/bench/ and the store's bench_results: shard selection (FNV-1a), suite
 * discovery and its order, selections, the figures of the summary (geomean, fast_p at their
 * edges, aggregates), reading optimize documents defensively, the claim/finish/release rules
 * that make a sweep resumable, owner liveness, merging bench results, the v1 -> v2 migration,
 * lanes, and the rendered outputs. Each store test works in its own temporary directory. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/child.h"
#include "bench/identity.h"
#include "bench/lanes.h"
#include "bench/progress.h"
#include "bench/record.h"
#include "bench/render.h"
#include "bench/stats.h"
#include "bench/suite.h"
#include "bench/summary.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/log.h"

static char *g_dir;     /* per-test temporary directory */
static kerr E;

#define OK(expr)                                                                                \
    do {                                                                                        \
        memset(&E, 0, sizeof E);                                                                \
        int rc_ = (expr);                                                                       \
        cr_assert_eq(rc_, 0, "%s -> %d: %s", #expr, rc_, E.msg);                                \
    } while (0)

static void tb_setup(void) {
    if (!getenv("KOPT_LOG")) log_set_level(LOG_QUIET);
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-bench", &g_dir, &e), 0, "%s", e.msg);
}

static void tb_teardown(void) {
    fs_rmtree(g_dir);
    free(g_dir);
    g_dir = NULL;
}

TestSuite(bench_shard, .timeout = 30);
TestSuite(bench_stats, .timeout = 30);
TestSuite(bench_discovery, .init = tb_setup, .fini = tb_teardown, .timeout = 30);
TestSuite(bench_store, .init = tb_setup, .fini = tb_teardown, .timeout = 60);
TestSuite(bench_record, .timeout = 30);
TestSuite(bench_render, .timeout = 30);

/* ---- shards ------------------------------------------------------------------------------- */

Test(bench_shard, fnv1a_64_reference_values) {
    cr_assert_eq(bench_fnv1a64(""), 0xcbf29ce484222325ULL);
    cr_assert_eq(bench_fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
    cr_assert_eq(bench_fnv1a64("foobar"), 0x85944171f73967e8ULL);
}

Test(bench_shard, shards_partition_the_suite_and_are_stable) {
    char rel[64];
    for (unsigned n = 1; n <= 8; n++) {
        for (int i = 0; i < 300; i++) {
            snprintf(rel, sizeof rel, "level%d/%d_problem.py", 1 + i % 3, i);
            int owners = 0;
            for (unsigned k = 0; k < n; k++) owners += bench_shard_has(rel, k, n);
            cr_assert_eq(owners, 1, "%s belongs to exactly one of %u shards", rel, n);
            cr_assert_eq(bench_shard_has(rel, (unsigned)(bench_fnv1a64(rel) % n), n), 1);
        }
    }
    cr_assert_eq(bench_shard_has("x.py", 0, 0), 0, "no shard of zero");
}

Test(bench_shard, adding_problems_keeps_the_others_in_their_shard) {
    bench_suite s = {0};
    const char *names[] = {"level1/1_a.py", "level1/2_b.py", "level2/1_c.py", "level2/7_d.py", "e.py", "level3/9_f.py"};
    size_t n = sizeof names / sizeof *names;
    s.v = kcalloc(n, sizeof *s.v);
    for (size_t i = 0; i < n; i++) {
        s.v[i].rel = kstrdup(names[i]);
        s.v[i].path = kstrdup(names[i]);
        s.v[i].name = kstrdup("x");
        s.v[i].level_name = kstrdup("x");
    }
    s.n = n;
    bench_suite_shard(&s, 1, 3);
    for (size_t i = 0; i < s.n; i++) cr_assert_eq(bench_fnv1a64(s.v[i].rel) % 3, 1);
    size_t expect = 0;
    for (size_t i = 0; i < n; i++) expect += bench_fnv1a64(names[i]) % 3 == 1;
    cr_assert_eq(s.n, expect);
    bench_suite_free(&s);
}

/* ---- stats: geomean and fast_p -------------------------------------------------------------- */

static bench_record mkrec(bench_status st, int exit_code, double est, double lo, double hi) {
    bench_record r;
    bench_record_init(&r, "level1/x.py", "sha", 1, 60);
    r.status = st;
    r.exit_code = exit_code;
    r.vs_default = (bench_ci){est, lo, hi};
    return r;
}

Test(bench_stats, geomean) {
    double v[] = {1.0, 4.0};
    size_t used = 9;
    cr_assert_float_eq(bench_geomean(v, 2, &used), 2.0, 1e-12);
    cr_assert_eq(used, 2);
    double w[] = {NAN, 2.0, -1.0, 0.0, 8.0, INFINITY};
    cr_assert_float_eq(bench_geomean(w, 6, &used), 4.0, 1e-12);
    cr_assert_eq(used, 2, "NAN, Inf and non-positive values are skipped");
    cr_assert(isnan(bench_geomean(w, 0, &used)));
    cr_assert_eq(used, 0);
    double one[] = {NAN};
    cr_assert(isnan(bench_geomean(one, 1, NULL)));
}

Test(bench_stats, faster_is_strict_on_the_ci_lower_end) {
    cr_assert_not(bench_faster((bench_ci){1.2, 1.0, 1.4}, 1.0), "a CI starting exactly at p is not faster");
    cr_assert(bench_faster((bench_ci){1.2, nextafter(1.0, 2.0), 1.4}, 1.0));
    cr_assert_not(bench_faster((bench_ci){1.6, 1.5, 1.7}, 1.5));
    cr_assert_not(bench_faster((bench_ci){2.5, NAN, NAN}, 1.0), "no CI, not faster");
    cr_assert_not(bench_faster((bench_ci){0.9, 0.8, 1.0}, 1.0));
}

Test(bench_stats, fast_p_edges) {
    bench_record r[5] = {
        mkrec(BENCH_DONE, 0, 1.2, 1.0, 1.4),      /* exactly at 1.0: fast_0 only */
        mkrec(BENCH_DONE, 0, 2.2, 2.1, 2.3),      /* faster than 2.0 */
        mkrec(BENCH_FAILED, 5, NAN, NAN, NAN),    /* failed: in the denominator */
        mkrec(BENCH_DONE, 0, 1.6, 1.51, 1.7),     /* faster than 1.5 */
        mkrec(BENCH_NOT_RUN, -1, NAN, NAN, NAN),  /* not run: in the denominator */
    };
    const bench_record *p[5] = {&r[0], &r[1], &r[2], &r[3], &r[4]};
    cr_assert_float_eq(bench_fast_p(p, 5, BENCH_VS_DEFAULT, 0.0), 3.0 / 5, 1e-12, "fast_0 = fraction correct");
    cr_assert_float_eq(bench_fast_p(p, 5, BENCH_VS_DEFAULT, 1.0), 2.0 / 5, 1e-12);
    cr_assert_float_eq(bench_fast_p(p, 5, BENCH_VS_DEFAULT, 1.5), 2.0 / 5, 1e-12);
    cr_assert_float_eq(bench_fast_p(p, 5, BENCH_VS_DEFAULT, 2.0), 1.0 / 5, 1e-12);
    cr_assert(isnan(bench_fast_p(p, 0, BENCH_VS_DEFAULT, 1.0)));
    /* a done row with a non-zero exit code is not correct */
    bench_record odd = mkrec(BENCH_DONE, 3, 3.0, 2.9, 3.1);
    const bench_record *q[1] = {&odd};
    cr_assert_float_eq(bench_fast_p(q, 1, BENCH_VS_DEFAULT, 0.0), 0.0, 1e-12);
    for (int i = 0; i < 5; i++) bench_record_clear(&r[i]);
    bench_record_clear(&odd);
}

Test(bench_stats, groups_per_level) {
    bench_record r[4] = {mkrec(BENCH_DONE, 0, 1.0, 0.9, 1.1), mkrec(BENCH_DONE, 0, 4.0, 3.0, 5.0),
                         mkrec(BENCH_TIMEOUT, 137, NAN, NAN, NAN), mkrec(BENCH_DONE, 0, 2.0, 1.9, 2.1)};
    r[3].level = 2;
    r[0].wall_s = 10;
    r[1].wall_s = 80;   /* budget 60: 60 * 1.1 + 15 = 81 */
    r[2].wall_s = 200;
    r[0].candidates = 3;
    r[1].candidates = 4;
    r[0].disk_bytes = 1000;
    r[1].disk_bytes = 3000;
    r[0].peak_gpu_bytes = 400;
    r[0].working_set_bytes = 100;
    r[0].setup_s = 1.5;
    /* as called: measured on two of level 1's correct problems and the timed-out one (not counted) */
    r[0].as_called_vs_default = (bench_ci){0.5, 0.45, 0.55};
    r[1].as_called_vs_default = (bench_ci){2.0, 1.9, 2.1};
    r[2].as_called_vs_default = (bench_ci){9.0, 8.0, 10.0};
    bench_summary s;
    bench_summary_build(r, 4, &s);
    cr_assert_eq(s.nlevels, 2);
    const bench_group *l1 = &s.levels[0], *l2 = &s.levels[1];
    cr_assert_str_eq(l1->name, "level1");
    cr_assert_eq(l1->n, 3);
    cr_assert_eq(l1->correct, 2);
    cr_assert_eq(l1->timeouts, 1);
    cr_assert_float_eq(l1->geomean[BENCH_VS_DEFAULT], 2.0, 1e-12);
    cr_assert_eq(l1->geomean_n[BENCH_VS_DEFAULT], 2);
    cr_assert(isnan(l1->geomean[BENCH_VS_MAX_AUTOTUNE]), "no max-autotune speedups");
    cr_assert(isnan(l1->fast_p[BENCH_VS_MAX_AUTOTUNE][1]), "fast_p vs an unmeasured baseline is unknown");
    cr_assert_float_eq(l1->fast_p[BENCH_VS_MAX_AUTOTUNE][0], 2.0 / 3, 1e-12, "fast_0 is the fraction correct");
    cr_assert_float_eq(l1->fast_p[BENCH_VS_DEFAULT][1], 1.0 / 3, 1e-12);
    cr_assert_float_eq(l1->geomean[BENCH_AS_CALLED_VS_DEFAULT], 1.0, 1e-12, "(0.5 * 2)^(1/2), the timeout left out");
    cr_assert_eq(l1->geomean_n[BENCH_AS_CALLED_VS_DEFAULT], 2);
    cr_assert_float_eq(l1->fast_p[BENCH_AS_CALLED_VS_DEFAULT][1], 1.0 / 3, 1e-12, "only [1.9, 2.1] lies above 1");
    cr_assert(isnan(l1->geomean[BENCH_AS_CALLED_VS_MAX_AUTOTUNE]) && isnan(l1->fast_p[BENCH_AS_CALLED_VS_MAX_AUTOTUNE][1]));
    cr_assert_eq(l1->candidates, 7);
    cr_assert_float_eq(l1->disk_mean, 2000, 1e-9);
    cr_assert_float_eq(l1->disk_max, 3000, 1e-9);
    cr_assert_float_eq(l1->peak_ratio_max, 4.0, 1e-12);
    cr_assert_float_eq(l1->setup_s, 1.5, 1e-12);
    cr_assert(isnan(l1->search_s));
    cr_assert_eq(l1->wall_n, 3);
    cr_assert_eq(l1->within_budget, 2, "10 s and 80 s are within 81 s, 200 s is not");
    cr_assert_str_eq(l2->name, "level2");
    cr_assert_eq(l2->n, 1);
    cr_assert_str_eq(s.all.name, "all");
    cr_assert_eq(s.all.n, 4);
    cr_assert_float_eq(s.all.geomean[0], 2.0, 1e-12, "(1 * 4 * 2)^(1/3)");
    bench_summary_free(&s);
    for (int i = 0; i < 4; i++) bench_record_clear(&r[i]);
}

/* Sets a record's model times (ms); NAN leaves one out. */
static void times(bench_record *r, double def, double ma, double kopt, double floor) {
    r->default_ms = def;
    r->max_autotune_ms = ma;
    r->kopt_ms = kopt;
    r->floor_ms = floor;
}

Test(bench_stats, headroom_from_times_over_floors) {
    bench_record r[5] = {mkrec(BENCH_DONE, 0, 2.0, 1.9, 2.1), mkrec(BENCH_DONE, 0, 1.0, 1.0, 1.0),
                         mkrec(BENCH_DONE, 0, 1.1, 1.0, 1.2), mkrec(BENCH_FAILED, 1, NAN, NAN, NAN),
                         mkrec(BENCH_DONE, 0, 1.0, 1.0, 1.0)};
    times(&r[0], 4.0, 3.0, 2.0, 1.0);    /* default 4x its floor, kopt 2x */
    times(&r[1], 1.0, NAN, 1.0, 1.0);    /* at the floor already, no max-autotune time */
    times(&r[2], 2.0, 1.0, 0.5, 1.0);    /* kopt below the floor: the floor is wrong, left out */
    times(&r[3], 3.0, 3.0, NAN, 1.0);    /* failed: not correct, left out */
    times(&r[4], 2.0, 2.0, 2.0, NAN);    /* no floor: left out */
    cr_assert(bench_record_has_room(&r[0]) && bench_record_has_room(&r[1]));
    cr_assert(!bench_record_has_room(&r[2]) && !bench_record_has_room(&r[3]) && !bench_record_has_room(&r[4]));
    r[2].kopt_ms = 1.5;                  /* now max-autotune (1.0) is the one at the floor: still counted */
    cr_assert(bench_record_has_room(&r[2]));
    r[2].max_autotune_ms = 0.99;         /* below it: left out */
    cr_assert(!bench_record_has_room(&r[2]));
    bench_summary s;
    bench_summary_build(r, 5, &s);
    cr_assert_eq(s.all.room_n, 2);
    cr_assert_float_eq(s.all.room_default, 2.0, 1e-12, "(4 * 1)^(1/2)");
    cr_assert_float_eq(s.all.room_kopt, sqrt(2.0), 1e-12, "(2 * 1)^(1/2)");
    cr_assert_eq(s.all.room_ma_n, 1, "only one of the two has a max-autotune time");
    cr_assert_float_eq(s.all.room_ma, 3.0, 1e-12);
    /* the table: kopt vs default from the times = room_default / room_kopt, half the headroom in log terms */
    bench_report rep = {.recs = r, .n = 5, .sum = &s};
    bench_tables t = {0};
    bench_tables_build(&rep, &t);
    const bench_table *h = &t.t[BENCH_T_HEADROOM];
    cr_assert_eq(h->nrows, 2, "level1 and all");
    kbuf b = KBUF_INIT;
    bench_table_md(h, &b);
    cr_assert(strstr(kbuf_str(&b), "| all | 2 | 2.000x | 3.000x (1) | 1.41 | 1.414x | 50% |"), "%s", kbuf_str(&b));
    kbuf_free(&b);
    bench_tables_free(&t);
    bench_summary_free(&s);
    for (int i = 0; i < 5; i++) bench_record_clear(&r[i]);
}

Test(bench_stats, eta_and_progress_line) {
    cr_assert_float_eq(bench_eta_s(10, 5, 2), 25, 1e-12);
    cr_assert_float_eq(bench_eta_s(10, 0, 2), 0, 1e-12);
    cr_assert(isnan(bench_eta_s(NAN, 3, 2)));
    const char *running[2] = {"level1/a.py", NULL};
    bench_progress p = {.total = 10, .ended = 4, .nlanes = 2, .running = running, .mean_wall_s = 30,
                        .geomean = 1.1, .geomean_n = 3};
    kbuf b = KBUF_INIT;
    bench_progress_format(&p, &b);
    cr_assert(strstr(kbuf_str(&b), "4/10 done, 6 left, ETA 1m30s, geomean 1.100x (3)"), "%s", kbuf_str(&b));
    cr_assert(strstr(kbuf_str(&b), "0:level1/a.py 1:-"), "%s", kbuf_str(&b));
    kbuf_free(&b);
}

/* ---- suite discovery and selections --------------------------------------------------------- */

static void put(const char *rel, const char *text) {
    char *p = fs_join(g_dir, rel);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    OK(fs_mkdirs(p, &E));
    *slash = '/';
    OK(fs_write(p, text, strlen(text), &E));
    free(p);
}

Test(bench_discovery, discovery_order_levels_and_hashes) {
    put("level10/1_z.py", "a");
    put("level2/10_b.py", "b");
    put("level2/2_a.py", "c");
    put("level1/x.py", "print(1)\n");
    put("top.py", "d");
    put("level2/notes.txt", "ignored");
    put("level2/.hidden.py", "ignored");
    put("level2/__init__.py", "ignored");
    put("other/y.py", "ignored");
    put("levelx/y.py", "ignored");
    bench_suite s;
    OK(bench_suite_discover(g_dir, &s, &E));
    const char *want[] = {"level1/x.py", "level2/2_a.py", "level2/10_b.py", "level10/1_z.py", "top.py"};
    cr_assert_eq(s.n, 5);
    for (size_t i = 0; i < 5; i++) cr_assert_str_eq(s.v[i].rel, want[i], "position %zu", i);
    cr_assert_eq(s.v[0].level, 1);
    cr_assert_str_eq(s.v[0].level_name, "level1");
    cr_assert_str_eq(s.v[0].name, "x");
    cr_assert_eq(s.v[3].level, 10);
    cr_assert_eq(s.v[4].level, 0);
    cr_assert_str_eq(s.v[4].level_name, "flat");
    char sha[STORE_SHA_HEX];
    store_sha256_hex("print(1)\n", 9, sha);
    cr_assert_str_eq(s.v[0].sha, sha);
    cr_assert_eq(s.v[0].path[0], '/', "absolute path");
    cr_assert(bench_rel_cmp("level1/2_a.py", "level1/10_a.py") < 0);
    cr_assert(bench_rel_cmp("level2/x.py", "level10/x.py") < 0);

    OK(bench_suite_only(&s, " 10_ , top", &E));
    cr_assert_eq(s.n, 2);
    cr_assert_str_eq(s.v[0].rel, "level2/10_b.py");
    cr_assert_str_eq(s.v[1].rel, "top.py");
    cr_assert_eq(bench_suite_only(&s, " , ", &E), KOPT_E_USAGE);
    bench_suite_free(&s);
    bench_suite_free(&s);   /* idempotent */
}

Test(bench_discovery, dev_list) {
    put("level1/a.py", "a");
    put("level1/b.py", "b");
    put("level2/c.py", "c");
    bench_suite s;
    OK(bench_suite_discover(g_dir, &s, &E));
    cr_assert_eq(bench_suite_dev(&s, &E), KOPT_E_NOFILE, "no DEV file");
    put("DEV", "# dev set\n\n  level2/c.py  # trailing comment\nlevel1/a.py\n");
    OK(bench_suite_dev(&s, &E));
    cr_assert_eq(s.n, 2);
    cr_assert_str_eq(s.v[0].rel, "level1/a.py", "suite order, not list order");
    cr_assert_str_eq(s.v[1].rel, "level2/c.py");
    put("DEV", "level1/nope.py\n");
    cr_assert_eq(bench_suite_dev(&s, &E), KOPT_E_NOFILE);
    cr_assert(strstr(E.msg, "level1/nope.py"), "%s", E.msg);
    bench_suite_free(&s);
}

Test(bench_discovery, missing_file_or_empty) {
    bench_suite s;
    char *nope = fs_join(g_dir, "nope");
    cr_assert_eq(bench_suite_discover(nope, &s, &E), KOPT_E_NOFILE);
    free(nope);
    put("f.txt", "x");
    char *f = fs_join(g_dir, "f.txt");
    cr_assert_eq(bench_suite_discover(f, &s, &E), KOPT_E_NOFILE);
    cr_assert(strstr(E.msg, "not a folder"), "%s", E.msg);
    free(f);
    cr_assert_eq(bench_suite_discover(g_dir, &s, &E), KOPT_E_NOFILE, "no *.py");
    cr_assert(strstr(E.msg, "no problem"), "%s", E.msg);
    cr_assert_null(s.v);
}

/* ---- store: claim, finish, release, merge, migration ----------------------------------------- */

static int g_alive;   /* what fake_alive answers */
static int fake_alive(const char *owner, double age_s, void *ctx) {
    (void)owner;
    (void)age_s;
    (void)ctx;
    return g_alive;
}

static store_bench_claim_spec spec(const char *rel, const char *owner) {
    return (store_bench_claim_spec){.suite_key = "key-1", .problem_rel = rel, .problem_sha = "sha-1", .level = 1,
                                    .gpu = "NVIDIA H200", .budget_s = 120, .max_autotune = 1, .owner = owner,
                                    .gpu_index = 0, .alive = fake_alive};
}

static store_bench_claim_outcome claim(kstore *s, const store_bench_claim_spec *c, int64_t *row) {
    store_bench_claim_outcome out;
    OK(store_bench_claim(s, c, row, &out, &E));
    return out;
}

static void finish(kstore *s, int64_t row, const char *owner, store_bench_status st, int code, int want_updated) {
    store_bench_end f = {.row_id = row, .owner = owner, .status = st, .exit_code = code, .wall_s = 1.5,
                         .disk_bytes = 4096, .doc_json = "{\"ok\": true}"};
    int updated = -1;
    OK(store_bench_finish(s, &f, &updated, &E));
    cr_assert_eq(updated, want_updated);
}

static kstore *open_store(const char *name) {
    char *p = fs_join(g_dir, name);
    kstore *s = NULL;
    OK(store_open(p, &s, &E));
    free(p);
    return s;
}

static const store_bench_row *row_of(const store_bench_rowset *rs, const char *rel) {
    for (size_t i = 0; i < rs->n; i++)
        if (!strcmp(rs->v[i].problem_rel, rel)) return &rs->v[i];
    return NULL;
}

Test(bench_store, claim_skip_retake_and_finish) {
    kstore *s = open_store("s.sqlite");
    char *none = NULL;
    OK(store_bench_configs(s, &none, &E));
    cr_assert_str_eq(none, "", "no rows, no configuration");
    free(none);
    store_bench_claim_spec a = spec("level1/a.py", "hostA:100"), b = spec("level1/a.py", "hostB:200");
    int64_t r1 = 0, r2 = 0;
    cr_assert_eq(claim(s, &a, &r1), STORE_BENCH_CLAIMED);
    cr_assert_gt(r1, 0);
    g_alive = 1;
    cr_assert_eq(claim(s, &b, &r2), STORE_BENCH_SKIP_BUSY, "running under a live owner");
    cr_assert_eq(r2, r1);
    g_alive = 0;
    cr_assert_eq(claim(s, &b, &r2), STORE_BENCH_RETAKEN, "running under a dead owner: taken again");
    cr_assert_eq(r2, r1);
    finish(s, r1, "hostA:100", STORE_BENCH_DONE, 0, 0);   /* A no longer owns it: nothing written */
    finish(s, r1, "hostB:200", STORE_BENCH_DONE, 0, 1);
    store_bench_claim_spec c = spec("level1/a.py", "hostC:300");
    c.retry_failed = 1;
    cr_assert_eq(claim(s, &c, &r2), STORE_BENCH_SKIP_DONE, "done is never run again, even with retry_failed");

    /* failed and timeout: kept as results, retried only with retry_failed */
    store_bench_claim_spec f = spec("level1/f.py", "hostA:100");
    int64_t rf = 0;
    cr_assert_eq(claim(s, &f, &rf), STORE_BENCH_CLAIMED);
    finish(s, rf, "hostA:100", STORE_BENCH_FAILED, 5, 1);
    cr_assert_eq(claim(s, &f, &rf), STORE_BENCH_SKIP_RESULT);
    f.retry_failed = 1;
    cr_assert_eq(claim(s, &f, &rf), STORE_BENCH_RETAKEN);
    finish(s, rf, "hostA:100", STORE_BENCH_TIMEOUT, 137, 1);
    f.retry_failed = 0;
    cr_assert_eq(claim(s, &f, &rf), STORE_BENCH_SKIP_RESULT);

    /* a changed file (another sha) is another problem */
    store_bench_claim_spec g = spec("level1/a.py", "hostA:100");
    g.problem_sha = "sha-2";
    int64_t rg = 0;
    cr_assert_eq(claim(s, &g, &rg), STORE_BENCH_CLAIMED);
    cr_assert_neq(rg, r1);

    /* release: only the owner's running row goes */
    OK(store_bench_release(s, rg, "hostB:200", &E));
    const char *keys[] = {"key-1"};
    store_bench_rowset rs = {0};
    OK(store_bench_rows(s, keys, 1, &rs, &E));
    cr_assert_eq(rs.n, 3);
    OK(store_bench_release(s, rg, "hostA:100", &E));
    OK(store_bench_release(s, r1, "hostB:200", &E));   /* done: not released */
    OK(store_bench_rows(s, keys, 1, &rs, &E));
    cr_assert_eq(rs.n, 2);
    const store_bench_row *ra = row_of(&rs, "level1/a.py"), *rfr = row_of(&rs, "level1/f.py");
    cr_assert_not_null(ra);
    cr_assert_eq(ra->status, STORE_BENCH_DONE);
    cr_assert_eq(ra->exit_code, 0);
    cr_assert_str_eq(ra->owner, "hostB:200");
    cr_assert_float_eq(ra->wall_s, 1.5, 1e-12);
    cr_assert_eq(ra->disk_bytes, 4096);
    cr_assert_not_null(ra->ended_at);
    cr_assert_str_eq(ra->doc_json, "{\"ok\": true}");
    cr_assert_eq(rfr->status, STORE_BENCH_TIMEOUT);
    cr_assert_eq(rfr->exit_code, 137);
    store_bench_rows_clear(&rs);

    char **gpus = NULL;
    size_t ng = 0;
    OK(store_bench_gpus(s, 120, 1, &gpus, &ng, &E));
    cr_assert_eq(ng, 1);
    cr_assert_str_eq(gpus[0], "NVIDIA H200");
    free(gpus[0]);
    free(gpus);
    OK(store_bench_gpus(s, 60, 1, &gpus, &ng, &E));
    cr_assert_eq(ng, 0, "another budget");
    OK(store_bench_gpus(s, 120, 0, &gpus, &ng, &E));
    cr_assert_eq(ng, 0, "without max-autotune");
    char *held = NULL;
    OK(store_bench_configs(s, &held, &E));
    cr_assert_str_eq(held, "120s with max-autotune on", "the one configuration of the rows");
    free(held);
    store_close(s);
}

Test(bench_store, dead_owner_rows_are_retaken_with_real_liveness) {
    /* a pid that is certainly dead: a child that exited and was reaped */
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    kstore *s = open_store("s.sqlite");
    bench_liveness live;
    bench_liveness_init(&live, 600);
    char *dead = kasprintf("%s:%d", live.host, (int)pid);
    store_bench_claim_spec c = spec("level1/a.py", dead);
    c.alive = bench_owner_alive;
    c.alive_ctx = &live;
    int64_t row = 0;
    cr_assert_eq(claim(s, &c, &row), STORE_BENCH_CLAIMED);
    c.owner = live.self;
    cr_assert_eq(claim(s, &c, &row), STORE_BENCH_RETAKEN, "the owner's process is gone");
    /* our own owner string on a running row: a previous incarnation with the same pid */
    store_bench_claim_spec d = spec("level1/b.py", live.self);
    d.alive = bench_owner_alive;
    d.alive_ctx = &live;
    cr_assert_eq(claim(s, &d, &row), STORE_BENCH_CLAIMED);
    cr_assert_eq(claim(s, &d, &row), STORE_BENCH_RETAKEN);
    /* another host: alive while young, stale after foreign_stale_s */
    store_bench_claim_spec f = spec("level1/c.py", "some-other-host:1");
    cr_assert_eq(claim(s, &f, &row), STORE_BENCH_CLAIMED);
    f.owner = live.self;
    f.alive = bench_owner_alive;
    f.alive_ctx = &live;
    cr_assert_eq(claim(s, &f, &row), STORE_BENCH_SKIP_BUSY, "a young row of another host");
    live.foreign_stale_s = -1;
    cr_assert_eq(claim(s, &f, &row), STORE_BENCH_RETAKEN, "an old row of another host");
    free(dead);
    bench_liveness_clear(&live);
    store_close(s);
}

Test(bench_store, liveness_of_a_running_bench_process) {
    bench_liveness live;
    bench_liveness_init(&live, 600);
    pid_t pid = fork();
    if (pid == 0) {   /* a process whose arguments include "bench", like kopt bench */
        execl("/bin/sh", "sh", "-c", "sleep 20; :", "bench", (char *)NULL);
        _exit(127);
    }
    char *owner = kasprintf("%s:%d", live.host, (int)pid);
    int alive = 0;
    for (int i = 0; i < 100 && !alive; i++) {   /* until exec has happened */
        alive = bench_owner_alive(owner, 0, &live);
        if (!alive) usleep(20000);
    }
    cr_assert(alive, "a live kopt bench process owns its rows");
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    cr_assert_not(bench_owner_alive(owner, 0, &live), "a killed one does not");
    char *other = kasprintf("%s:%d", live.host, (int)getppid());
    cr_assert_not(bench_owner_alive(other, 0, &live), "a live process that is not kopt bench (pid reuse)");
    free(other);
    free(owner);
    bench_liveness_clear(&live);
}

Test(bench_store, merge_keeps_done) {
    kstore *a = open_store("a.sqlite"), *b = open_store("b.sqlite");
    g_alive = 0;
    int64_t r = 0;
    /* p1: failed in A, done in B; p2: done in A, failed in B; p3: only in B (running);
     * p4: running in A (an earlier merge caught it), timeout in B */
    store_bench_claim_spec c1 = spec("level1/p1.py", "A:1"), c2 = spec("level1/p2.py", "A:1");
    claim(a, &c1, &r);
    finish(a, r, "A:1", STORE_BENCH_FAILED, 5, 1);
    claim(a, &c2, &r);
    finish(a, r, "A:1", STORE_BENCH_DONE, 0, 1);
    store_bench_claim_spec d1 = spec("level1/p1.py", "B:2"), d2 = spec("level1/p2.py", "B:2"),
                           d3 = spec("level1/p3.py", "B:2");
    claim(b, &d1, &r);
    finish(b, r, "B:2", STORE_BENCH_DONE, 0, 1);
    claim(b, &d2, &r);
    finish(b, r, "B:2", STORE_BENCH_FAILED, 7, 1);
    claim(b, &d3, &r);
    store_bench_claim_spec c4 = spec("level1/p4.py", "B:2");
    claim(a, &c4, &r);
    claim(b, &c4, &r);
    finish(b, r, "B:2", STORE_BENCH_TIMEOUT, 137, 1);
    store_close(b);
    char *pb = fs_join(g_dir, "b.sqlite");
    store_merge_stats st;
    OK(store_merge(a, pb, &st, &E));
    cr_assert_eq(st.bench_results, 1, "p3 added");
    cr_assert_eq(st.updated, 2, "p1 replaced by B's done row, p4 by B's timeout");
    const char *keys[] = {"key-1"};
    store_bench_rowset rs = {0};
    OK(store_bench_rows(a, keys, 1, &rs, &E));
    cr_assert_eq(rs.n, 4);
    cr_assert_eq(row_of(&rs, "level1/p4.py")->status, STORE_BENCH_TIMEOUT);
    cr_assert_eq(row_of(&rs, "level1/p1.py")->status, STORE_BENCH_DONE);
    cr_assert_str_eq(row_of(&rs, "level1/p1.py")->owner, "B:2");
    cr_assert_eq(row_of(&rs, "level1/p2.py")->status, STORE_BENCH_DONE, "a done row is never replaced");
    cr_assert_eq(row_of(&rs, "level1/p2.py")->exit_code, 0);
    cr_assert_eq(row_of(&rs, "level1/p3.py")->status, STORE_BENCH_RUNNING);
    store_bench_rows_clear(&rs);
    OK(store_merge(a, pb, &st, &E));
    cr_assert_eq(st.bench_results + st.updated, 0, "merging again changes nothing");
    /* a merged done row is skipped by a claim */
    store_bench_claim_spec again = spec("level1/p1.py", "A:1");
    cr_assert_eq(claim(a, &again, &r), STORE_BENCH_SKIP_DONE);
    free(pb);
    store_close(a);
}

static void raw_exec(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg ? msg : "");
    sqlite3_close(db);
}

static int64_t raw_count(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sql);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

Test(bench_store, migrates_a_v1_store) {
    kstore *s = open_store("v1.sqlite");
    store_run run = {.problem_path = "p.py", .problem_sha = "sha", .gpu = "H200"};
    int64_t id = 0;
    OK(store_run_begin(s, &run, &id, &E));
    store_close(s);
    char *p = fs_join(g_dir, "v1.sqlite");
    cr_assert_eq(raw_count(p, "SELECT count(*) FROM schema_version"), 1, "a new store records one version");
    cr_assert_eq(raw_count(p, "SELECT max(version) FROM schema_version"), STORE_SCHEMA_VERSION);
    /* make it what kopt 0.1 wrote: v1, no bench_results, runs without an owner */
    raw_exec(p, "DROP TABLE bench_results; ALTER TABLE runs DROP COLUMN owner; DELETE FROM schema_version; "
                "INSERT INTO schema_version(version) VALUES (1);");
    cr_assert_eq(raw_count(p, "SELECT count(*) FROM sqlite_schema WHERE name = 'bench_results'"), 0);
    OK(store_open(p, &s, &E));
    cr_assert_eq(raw_count(p, "SELECT count(*) FROM sqlite_schema WHERE name = 'bench_results'"), 1);
    cr_assert_eq(raw_count(p, "SELECT count(*) FROM schema_version WHERE version IN (1, 2, 3)"), 3);
    cr_assert_eq(raw_count(p, "SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'owner'"), 1);
    cr_assert_eq(raw_count(p, "SELECT count(*) FROM runs"), 1, "the v1 data is kept");
    int64_t r = 0;
    g_alive = 0;
    store_bench_claim_spec c = spec("a.py", "h:1");
    cr_assert_eq(claim(s, &c, &r), STORE_BENCH_CLAIMED, "the migrated store takes bench results");
    store_close(s);
    OK(store_open(p, &s, &E));   /* reopening does not migrate again */
    cr_assert_eq(raw_count(p, "SELECT count(*) FROM schema_version"), 3);
    store_close(s);
    free(p);
}

/* ---- records from optimize documents ------------------------------------------------------- */

static bench_record rec_of(const char *json) {
    bench_record r;
    bench_record_init(&r, "level1/x.py", "sha", 1, 120);
    json_t *doc = json_loads(json, JSON_DECODE_ANY, NULL);
    bench_record_read_doc(&r, doc);
    json_decref(doc);
    return r;
}

Test(bench_record, missing_and_wrong_fields_are_not_measured) {
    bench_record r = rec_of("{\"model\": {\"eager_ms\": \"fast\", \"compiled_ms\": null, \"floor_ms\": -1},"
                            " \"budget\": {\"used_candidates\": 2.5, \"spent_before_search\": 1},"
                            " \"resources\": [], \"device\": 3}");
    cr_assert(isnan(r.eager_ms) && isnan(r.default_ms) && isnan(r.floor_ms) && isnan(r.kopt_ms));
    cr_assert(isnan(r.vs_default.est) && isnan(r.vs_max_autotune.est));
    cr_assert_eq(r.candidates, -1);
    cr_assert_eq(r.spent_before_search, -1);
    cr_assert_eq(r.floor_ok, -1, "no floor check: not known");
    cr_assert(isnan(r.peak_gpu_bytes));
    cr_assert(isnan(r.eager_peak_gpu_bytes) && isnan(r.f64_peak_gpu_bytes));
    cr_assert_null(r.device);
    cr_assert_eq(r.start, BENCH_START_UNKNOWN);
    bench_record_clear(&r);
    bench_record n = rec_of("[1, 2]");
    cr_assert(isnan(n.eager_ms));
    bench_record_clear(&n);
    bench_record_clear(&n);   /* idempotent */
}

Test(bench_record, speedup_fallbacks) {
    /* start absent: vs default = model.speedup (with CI); vs max-autotune from the times */
    bench_record a = rec_of("{\"model\": {\"compiled_ms\": 2.0, \"max_autotune_ms\": 1.0, \"optimized_ms\": 1.6,"
                            " \"speedup\": {\"estimate\": 1.25, \"ci95_lo\": 1.2, \"ci95_hi\": 1.3}},"
                            " \"budget\": {\"used_candidates\": 7, \"setup_s\": 3.5, \"spent_before_search\": true},"
                            " \"resources\": {\"peak_gpu_bytes\": 800, \"working_set_bytes\": 200, \"disk_bytes\": 99,"
                            " \"eager_peak_gpu_bytes\": 1500, \"f64_peak_gpu_bytes\": 0},"
                            " \"device\": {\"name\": \"NVIDIA H200\"}}");
    cr_assert_float_eq(a.vs_default.est, 1.25, 1e-12);
    cr_assert_float_eq(a.vs_default.lo, 1.2, 1e-12);
    cr_assert_float_eq(a.vs_max_autotune.est, 1.25 * 1.0 / 2.0, 1e-12);
    cr_assert(isnan(a.vs_max_autotune.lo), "a derived speedup has no CI");
    cr_assert_eq(a.candidates, 7);
    cr_assert_float_eq(a.setup_s, 3.5, 1e-12);
    cr_assert_eq(a.spent_before_search, 1);
    cr_assert_float_eq(bench_record_peak_ratio(&a), 4.0, 1e-12, "the main phase's peak only, not the eager model's");
    cr_assert_float_eq(a.eager_peak_gpu_bytes, 1500, 1e-12);
    cr_assert(isnan(a.f64_peak_gpu_bytes), "a zero peak is not measured");
    cr_assert_float_eq(a.disk_bytes, 99, 1e-12, "the document's disk size when the parent measured none");
    cr_assert_str_eq(a.device, "NVIDIA H200");
    cr_assert_eq(a.floor_ok, -1);
    bench_record_clear(&a);
    bench_record fk = rec_of("{\"model\": {\"floor_check\": {\"ok\": false, \"below\": []}}}");
    cr_assert_eq(fk.floor_ok, 0);
    cr_assert_null(fk.floor_below, "an empty list names nothing");
    bench_record_clear(&fk);
    /* which floor is wrong: every entry of model.floor_check.below, in order */
    bench_record fb = rec_of("{\"model\": {\"floor_check\": {\"ok\": false, \"below\": ["
                             "{\"what\": \"extern_kernels.mm\", \"kind\": \"library call\", \"time_ms\": 0.9, \"floor_ms\": 1.0},"
                             "{\"what\": \"triton_poi_x\", \"kind\": \"kernel\", \"time_ms\": 0.25, \"floor_ms\": 0.5}]}}}");
    cr_assert_str_eq(fb.floor_below, "extern_kernels.mm (library call) 0.9 ms, 0.90x its floor 1 ms; "
                                     "triton_poi_x (kernel) 0.25 ms, 0.50x its floor 0.5 ms");
    bench_record_clear(&fb);
    cr_assert_null(fb.floor_below);
    bench_record fo = rec_of("{\"model\": {\"floor_check\": {\"ok\": true}}}");
    cr_assert_eq(fo.floor_ok, 1);
    bench_record_clear(&fo);
    bench_record fs = rec_of("{\"model\": {\"floor_check\": {\"ok\": \"no\"}}}");
    cr_assert_eq(fs.floor_ok, -1, "a malformed check is not known");
    bench_record_clear(&fs);
    /* start max-autotune: vs max-autotune = model.speedup */
    bench_record b = rec_of("{\"model\": {\"start\": \"max-autotune\", \"compiled_ms\": 2.0, \"max_autotune_ms\": 1.0,"
                            " \"speedup\": {\"estimate\": 1.1, \"ci95_lo\": 1.05, \"ci95_hi\": 1.15}}}");
    cr_assert_eq(b.start, BENCH_START_MAX_AUTOTUNE);
    cr_assert_float_eq(b.vs_max_autotune.est, 1.1, 1e-12);
    cr_assert_float_eq(b.vs_max_autotune.lo, 1.05, 1e-12);
    cr_assert_float_eq(b.vs_default.est, 1.1 * 2.0 / 1.0, 1e-12);
    cr_assert(isnan(b.vs_default.lo));
    bench_record_clear(&b);
    /* the explicit fields win */
    bench_record c = rec_of("{\"model\": {\"start\": \"default\", \"speedup\": {\"estimate\": 1.1},"
                            " \"speedup_vs_default\": {\"estimate\": 1.3, \"ci95_lo\": 1.25, \"ci95_hi\": 1.35},"
                            " \"speedup_vs_max_autotune\": {\"estimate\": 0.9, \"ci95_lo\": 0.85, \"ci95_hi\": 0.95}}}");
    cr_assert_float_eq(c.vs_default.est, 1.3, 1e-12);
    cr_assert_float_eq(c.vs_max_autotune.lo, 0.85, 1e-12);
    bench_record_clear(&c);
    /* an error document */
    bench_record d = rec_of("{\"ok\": false, \"error\": {\"kind\": \"model-raised\", \"exit_code\": 5,"
                            " \"message\": \"boom\"}}");
    cr_assert_str_eq(d.error_kind, "model-raised");
    cr_assert_str_eq(d.error_message, "boom");
    bench_record_clear(&d);
}

Test(bench_record, within_budget_edges) {
    bench_record r;
    bench_record_init(&r, "a.py", NULL, 0, 100);
    cr_assert_eq(bench_record_within_budget(&r), -1);
    r.wall_s = 125;   /* 100 * 1.1 + 15 */
    cr_assert_eq(bench_record_within_budget(&r), 1);
    r.wall_s = 125.001;
    cr_assert_eq(bench_record_within_budget(&r), 0);
    cr_assert_str_eq(r.level_name, "flat");
    bench_record_clear(&r);
}

/* ---- lanes ---------------------------------------------------------------------------------- */

Test(bench_record, lanes_from_cuda_visible_devices) {
    bench_lanes l = {0};
    bench_lanes_parse(" 0, 1,,GPU-abc ", &l);
    cr_assert_eq(l.n, 3);
    cr_assert_str_eq(l.ids[2], "GPU-abc");
    bench_lanes_free(&l);
    setenv("CUDA_VISIBLE_DEVICES", "3,5", 1);
    OK(bench_lanes_detect(0, &l, &E));
    cr_assert_eq(l.n, 2);
    cr_assert_str_eq(l.ids[0], "3");
    bench_lanes_free(&l);
    OK(bench_lanes_detect(1, &l, &E));
    cr_assert_eq(l.n, 1);
    cr_assert_str_eq(l.ids[0], "3", "the first N");
    bench_lanes_free(&l);
    cr_assert_eq(bench_lanes_detect(3, &l, &E), KOPT_E_USAGE);
    setenv("CUDA_VISIBLE_DEVICES", " ", 1);
    cr_assert_eq(bench_lanes_detect(0, &l, &E), KOPT_E_NOGPU);
    unsetenv("CUDA_VISIBLE_DEVICES");
    setenv("KOPT_NVIDIA_SMI", "/nonexistent/nvidia-smi", 1);
    OK(bench_lanes_detect(2, &l, &E));
    cr_assert_eq(l.n, 2, "nothing tells how many: N lanes");
    cr_assert_str_eq(l.source, "default");
    bench_lanes_free(&l);
    char *name = bench_gpu_name("0");
    cr_assert_str_eq(name, "unknown");
    free(name);
}

Test(bench_record, suite_key) {
    char a[STORE_SHA_HEX], b[STORE_SHA_HEX], c[STORE_SHA_HEX], d[STORE_SHA_HEX];
    bench_suite_key(120, 1, "NVIDIA H200", a);
    bench_suite_key(120, 1, "NVIDIA H200", b);
    cr_assert_str_eq(a, b, "stable");
    bench_suite_key(120, 0, "NVIDIA H200", c);
    bench_suite_key(120, 1, "NVIDIA H100", d);
    cr_assert_str_neq(a, c);
    cr_assert_str_neq(a, d);
    bench_suite_key(60, 1, "NVIDIA H200", d);
    cr_assert_str_neq(a, d);
}

/* ---- rendering ------------------------------------------------------------------------------ */

Test(bench_render, outputs_escape_and_show_dashes) {
    bench_record r[2];
    bench_record_init(&r[0], "level1/<script>alert(1)</script>|x.py", "sha", 1, 60);
    r[0].status = BENCH_DONE;
    r[0].exit_code = 0;
    r[0].default_ms = 2.0;
    r[0].kopt_ms = 1.0;
    r[0].eager_ms = 3.0;
    r[0].floor_ms = 0.5;
    r[0].vs_default = (bench_ci){2.0, 1.9, 2.1};
    r[0].peak_gpu_bytes = 1.5 * (1 << 30);
    r[0].eager_peak_gpu_bytes = 3.0 * (1 << 30);
    r[0].f64_peak_gpu_bytes = 512.0 * (1 << 20);
    r[0].inputs_peak_gpu_bytes = 2.0 * (1 << 30);
    r[0].floor_ok = 0;   /* no module below the model floor, a kernel below its own */
    r[0].floor_below = kstrdup("triton_poi_x (kernel) 0.25 ms, 0.50x its floor 0.5 ms");
    /* 2x its floor: the reason its report named, long (kernel names and ATen ops) and with a pipe */
    kbuf why = KBUF_INIT;
    for (int i = 0; i < 12; i++) kbuf_printf(&why, "triton_red_fused_part_%02d, ", i);
    kbuf_puts(&why, "a|b, the end of the reason");
    r[0].floor_gap = kstrdup(kbuf_str(&why));
    bench_record_init(&r[1], "level2/b.py", "sha", 2, 60);
    r[1].status = BENCH_FAILED;
    r[1].exit_code = 5;
    r[1].error_kind = kstrdup("model-raised");
    r[1].error_message = kstrdup("it & raised");
    bench_summary sum;
    bench_summary_build(r, 2, &sum);
    bench_report rep = {.suite = "/s", .budget_s = 60, .max_autotune = 1, .timeout_factor = 1.5, .grace_s = 120,
                        .timeout_s = 210, .selection = "all", .recs = r, .n = 2, .sum = &sum, .wall_s = NAN};
    kbuf html = KBUF_INIT, md = KBUF_INIT;
    bench_summary_html(&rep, &html);
    bench_summary_md(&rep, &md);
    const char *h = kbuf_str(&html), *m = kbuf_str(&md);
    cr_assert_null(strstr(h, "<script>"), "names are escaped in HTML");
    cr_assert(strstr(h, "&lt;script&gt;"));
    cr_assert(strstr(h, "it &amp; raised"));
    cr_assert(strstr(h, "<svg xmlns"));
    cr_assert_null(strstr(h, ">nan"), "no NaN printed");
    cr_assert_null(strstr(h, "(null)"));
    cr_assert(strstr(m, "\\|x.py"), "pipes escaped in Markdown cells");
    cr_assert(strstr(m, "| level2/b.py | level2 | failed | 5 |"), "%s", m);
    cr_assert(strstr(m, "model-raised: it & raised"));
    cr_assert(strstr(m, "| eager / inputs / f64 peak GPU |"), "the eager, inputs and f64 peaks have a column");
    cr_assert(strstr(m, "| 1.5 GiB | 3 GiB / 2 GiB / 512 MiB |"), "the eager, inputs and f64 peaks next to the peak: %s", m);
    cr_assert(strstr(h, ">3 GiB / 2 GiB / 512 MiB</td>"), "the same cell in HTML");
    cr_assert(strstr(m, "| 2 (k) |"), "a kernel's wrong floor is marked after kopt / floor: %s", m);
    cr_assert(strstr(m, "\"(k)\": no module time is below the model floor"), "and defined");
    cr_assert_null(strstr(m, "(null)"));
    /* the floor-gap table: the done problem above 1.3x its floor with its whole reason, not the failed one */
    const char *gt = strstr(m, "## Problems above 1.3x their memory floor");
    cr_assert(gt && strstr(gt, "| 2 | triton_red_fused_part_00, ") && strstr(gt, "part_11, a\\|b, the end of the reason |"),
              "%s", gt ? gt : m);
    cr_assert_null(strstr(gt, "level2/b.py"), "a failed problem has no floor-gap row");
    cr_assert(strstr(h, "part_11, a|b, the end of the reason</td>"), "the whole reason in HTML");
    /* the wrong-floor table: which time is below its own floor */
    const char *ft = strstr(m, "## Problems whose floor is wrong somewhere");
    cr_assert(ft && strstr(ft, "| triton_poi_x (kernel) 0.25 ms, 0.50x its floor 0.5 ms |"), "%s", m);
    cr_assert_null(strstr(ft, "level2/b.py"), "a failed problem's floor is not known");
    cr_assert(strstr(h, "triton_poi_x (kernel) 0.25 ms, 0.50x its floor 0.5 ms</td>"));
    json_t *doc = bench_results_json(&rep);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "schema")), "kopt.bench/1");
    json_t *p1 = json_array_get(json_object_get(doc, "problems"), 1);
    cr_assert(json_is_null(json_object_get(p1, "speedup_vs_default")), "not measured is null");
    cr_assert(json_is_null(json_object_get(json_object_get(p1, "memory"), "eager_peak_gpu_bytes")));
    json_t *m0 = json_object_get(json_array_get(json_object_get(doc, "problems"), 0), "memory");
    cr_assert_float_eq(json_number_value(json_object_get(m0, "eager_peak_gpu_bytes")), 3.0 * (1 << 30), 1);
    cr_assert_float_eq(json_number_value(json_object_get(m0, "f64_peak_gpu_bytes")), 512.0 * (1 << 20), 1);
    cr_assert_float_eq(json_number_value(json_object_get(m0, "peak_gpu_bytes")), 1.5 * (1 << 30), 1);
    cr_assert_eq(json_integer_value(json_object_get(p1, "exit_code")), 5);
    cr_assert(json_is_false(json_object_get(json_array_get(json_object_get(doc, "problems"), 0), "floor_check_ok")));
    cr_assert(json_is_null(json_object_get(p1, "floor_check_ok")), "not known is null");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(doc, "problems"), 0), "floor_check_below")),
                     "triton_poi_x (kernel) 0.25 ms, 0.50x its floor 0.5 ms");
    cr_assert(json_is_null(json_object_get(p1, "floor_check_below")));
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(doc, "problems"), 0), "floor_gap_reason")),
                     kbuf_str(&why));
    cr_assert(json_is_null(json_object_get(p1, "floor_gap_reason")));
    cr_assert(json_is_null(json_object_get(doc, "wall_s")));
    json_t *lv = json_array_get(json_object_get(doc, "levels"), 0);
    cr_assert_float_eq(json_number_value(json_object_get(json_object_get(lv, "geomean_vs_default"), "value")), 2.0, 1e-12);
    json_decref(doc);
    kbuf_free(&html);
    kbuf_free(&md);
    kbuf_free(&why);
    bench_summary_free(&sum);
    bench_record_clear(&r[0]);
    bench_record_clear(&r[1]);
}

Test(bench_render, chart_has_a_group_per_problem) {
    bench_record r[3];
    for (int i = 0; i < 3; i++) {
        bench_record_init(&r[i], i == 2 ? "c.py" : i ? "b.py" : "a.py", "sha", 0, 60);
        r[i].default_ms = 1.0;
        r[i].eager_ms = 2.0;
        r[i].max_autotune_ms = 0.9;
        r[i].kopt_ms = 0.8;
        r[i].floor_ms = 0.2;
    }
    r[2].default_ms = NAN;
    kbuf b = KBUF_INIT;
    bench_chart_svg(r, 3, &b);
    const char *s = kbuf_str(&b);
    size_t groups = 0, kopt = 0, floors = 0;
    for (const char *p = s; (p = strstr(p, "class=\"problem\"")); p++) groups++;
    for (const char *p = s; (p = strstr(p, "class=\"kopt\"")); p++) kopt++;
    for (const char *p = s; (p = strstr(p, "class=\"floor\"")); p++) floors++;
    cr_assert_eq(groups, 3);
    cr_assert_eq(kopt, 2);
    cr_assert_eq(floors, 2);
    cr_assert(strstr(s, "not measured"));
    kbuf_free(&b);
    for (int i = 0; i < 3; i++) bench_record_clear(&r[i]);
}

/* Where a large peak went, from level2/04_linear_softmax's report on the H200 (session 11): the
 * memory outside the allocator is 0.72 GB after load and 3.26 GB from compile on (the per-step
 * record keeps each step's largest value, so "limits", which first ran before the compile, stays
 * at 0.72); the largest allocator peak of the main phase is the compile's -- the bandwidth
 * ceilings' larger one (6.65 GB) is a phase of its own, not in the peak. */
/* The search's verdicts from the report's kernels table: refusals per gate summed over the
 * kernels, the replaced kernels with their change, the final re-pick; into results.json. */
Test(bench_record, what_the_search_did) {
    bench_record r = rec_of(
        "{\"model\": {\"final_pick\": {\"module\": \"default\", \"why\": \"x\"}},"
        " \"kernels\": ["
        "  {\"name\": \"k0\", \"status\": \"optimized\", \"change\": \"good_online (1.14x)\","
        "   \"refused_by_gate\": {\"1\": 2, \"2\": 0, \"3\": 1, \"4\": 5}},"
        "  {\"name\": \"k1\", \"status\": \"kept\", \"refused_by_gate\": {\"1\": 1, \"2\": 3, \"3\": 0, \"4\": 0}},"
        "  {\"name\": \"k2\", \"status\": \"optimized\"},"
        "  {\"name\": \"mm\", \"status\": \"vendor\", \"refused_by_gate\": {\"2\": -4}}]}");
    cr_assert_eq(r.refused[0], 3);
    cr_assert_eq(r.refused[1], 3);
    cr_assert_eq(r.refused[2], 1);
    cr_assert_eq(r.refused[3], 5, "a negative count is not subtracted");
    cr_assert_str_eq(r.replaced, "k0: good_online (1.14x); k2: replaced");
    cr_assert_str_eq(r.final_pick, "default");
    r.status = BENCH_DONE;
    bench_summary sum;
    bench_summary_build(&r, 1, &sum);
    bench_report rep = {.suite = "/s", .budget_s = 60, .selection = "all", .recs = &r, .n = 1, .sum = &sum, .wall_s = NAN};
    json_t *doc = bench_results_json(&rep);
    json_t *p = json_array_get(json_object_get(doc, "problems"), 0);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(p, "refused_by_gate"), "4")), 5);
    cr_assert_str_eq(json_string_value(json_object_get(p, "replaced")), "k0: good_online (1.14x); k2: replaced");
    cr_assert_str_eq(json_string_value(json_object_get(p, "final_pick")), "default");
    json_decref(doc);
    kbuf md = KBUF_INIT;
    bench_summary_md(&rep, &md);
    cr_assert(strstr(kbuf_str(&md), ", output default (final re-pick) |"), "%s", kbuf_str(&md));
    kbuf_free(&md);
    bench_summary_free(&sum);
    /* read again: replaced, not appended or counted twice (no leak: LeakSanitizer) */
    json_t *d2 = json_loads("{\"kernels\": [{\"name\": \"k9\", \"status\": \"optimized\", \"change\": \"c\","
                            " \"refused_by_gate\": {\"1\": 1}}]}", 0, NULL);
    bench_record_read_doc(&r, d2);
    json_decref(d2);
    cr_assert_str_eq(r.replaced, "k9: c");
    cr_assert_eq(r.refused[0], 1);
    cr_assert_eq(r.refused[3], 0);
    bench_record_clear(&r);
    /* no kernels table: not known (null in results.json) */
    bench_record f = rec_of("{\"model\": {}}");
    cr_assert_eq(f.refused[0], -1);
    cr_assert_null(f.replaced);
    cr_assert_null(f.final_pick);
    bench_record_clear(&f);
}

Test(bench_record, where_the_memory_went) {
    bench_record r = rec_of(
        "{\"resources\": {\"peak_gpu_bytes\": 8003584000, \"working_set_bytes\": 2442000000,"
        " \"context_bytes\": 3261923300,"
        " \"peak_by_step\": {\"load\": 2499805184, \"compile\": 4741660672, \"limits\": 2246049792,"
        "   \"time\": 2688548864, \"ceilings/ceilings\": 6652166144, \"profile\": 2688548864, \"odd\": \"x\"},"
        " \"outside_allocator_by_step\": {\"load\": 718077952, \"compile\": 3259826176, \"limits\": 718077952,"
        "   \"time\": 3261923328, \"ceilings/ceilings\": 3261923328, \"profile\": 3261923328}}}");
    cr_assert_str_eq(r.peak_step, "compile", "the main phase's largest, not the ceilings' phase");
    cr_assert_float_eq(r.peak_step_bytes, 4741660672.0, 0.5);
    cr_assert_str_eq(r.growth_step, "compile", "the first step within 10%% of the top: compile, not time");
    cr_assert_float_eq(r.growth_bytes, 3261923328.0 - 718077952.0, 0.5);
    /* the summary's memory table names both */
    r.status = BENCH_DONE;
    bench_summary sum;
    bench_summary_build(&r, 1, &sum);
    bench_report rep = {.suite = "/s", .budget_s = 60, .selection = "all", .recs = &r, .n = 1, .sum = &sum, .wall_s = NAN};
    kbuf md = KBUF_INIT;
    bench_summary_md(&rep, &md);
    const char *t = strstr(kbuf_str(&md), "## Problems whose peak is above 2x their working set");
    cr_assert(t, "%s", kbuf_str(&md));
    cr_assert(strstr(t, "4.42 GiB (compile) | +") && strstr(t, "(compile) |"), "%s", t);
    /* the peak without the context: 8003584000 - 3261923300 = 4.42 GiB, 1.94x the working set */
    cr_assert(strstr(t, "| 4.42 GiB (1.94) |"), "%s", t);
    json_t *doc = bench_results_json(&rep);
    json_t *mem = json_object_get(json_array_get(json_object_get(doc, "problems"), 0), "memory");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(mem, "outside_allocator_growth"), "step")), "compile");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(mem, "largest_step"), "step")), "compile");
    json_decref(doc);
    kbuf_free(&md);
    bench_summary_free(&sum);
    bench_record_clear(&r);
    /* nothing recorded, or a flat record: no step named */
    bench_record f = rec_of("{\"resources\": {\"outside_allocator_by_step\": {\"load\": 5, \"time\": 5}}}");
    cr_assert_null(f.growth_step);
    cr_assert_null(f.peak_step);
    cr_assert(isnan(f.growth_bytes) && isnan(f.peak_step_bytes));
    /* a second document replaces the first one's steps (no leak: the test build has LeakSanitizer) */
    json_t *d2 = json_loads("{\"resources\": {\"peak_by_step\": {\"a\": 1, \"b\": 3},"
                            " \"outside_allocator_by_step\": {\"a\": 1, \"b\": 2}}}", 0, NULL);
    bench_record_read_doc(&f, d2);
    bench_record_read_doc(&f, d2);
    json_decref(d2);
    cr_assert_str_eq(f.peak_step, "b");
    cr_assert_str_eq(f.growth_step, "b");
    bench_record_clear(&f);
    /* only other phases' steps: no main-phase step to name */
    bench_record g = rec_of("{\"resources\": {\"peak_by_step\": {\"run/f64\": 9, \"load/eager\": 4}}}");
    cr_assert_null(g.peak_step);
    cr_assert(isnan(g.peak_step_bytes));
    bench_record_clear(&g);
}

/* Where the setup's time went: resources.setup_by_step read per problem (malformed entries
 * skipped), carried into results.json, and summed over the finished problems into the summary's
 * table (largest total first, at most 8 ops, then the time outside requests). */
Test(bench_record, where_the_setup_went) {
    bench_record r[4];
    r[0] = rec_of("{\"budget\": {\"setup_s\": 30},"
                  " \"resources\": {\"setup_outside_requests_s\": 2.0, \"setup_by_step\": {"
                  "  \"load\": {\"seconds\": 3.0, \"calls\": 1}, \"compile\": {\"seconds\": 20.0, \"calls\": 2},"
                  "  \"time\": 4.0, \"bad\": {\"seconds\": \"x\"}, \"neg\": {\"seconds\": -1}, \"none\": {}}}}");
    cr_assert_eq(r[0].nsetup_steps, 3, "load, compile, time (a plain number taken); the malformed ones skipped");
    cr_assert_str_eq(r[0].setup_steps[1].op, "compile");
    cr_assert_float_eq(r[0].setup_steps[1].s, 20.0, 1e-12);
    cr_assert_float_eq(r[0].setup_outside_s, 2.0, 1e-12);
    /* eleven ops over both: the table shows the 8 largest totals */
    r[1] = rec_of("{\"budget\": {\"setup_s\": 20},"
                  " \"resources\": {\"setup_outside_requests_s\": 1.0, \"setup_by_step\": {"
                  "  \"compile\": {\"seconds\": 10.0}, \"profile\": {\"seconds\": 5.0}, \"a1\": {\"seconds\": 0.9},"
                  "  \"a2\": {\"seconds\": 0.8}, \"a3\": {\"seconds\": 0.7}, \"a4\": {\"seconds\": 0.6},"
                  "  \"a5\": {\"seconds\": 0.5}, \"a6\": {\"seconds\": 0.4}, \"a7\": {\"seconds\": 0.3}}}}");
    /* a failed problem's setup is not counted; a report without setup_by_step has none */
    r[2] = rec_of("{\"budget\": {\"setup_s\": 99}, \"resources\": {\"setup_by_step\": {\"compile\": 99}}}");
    r[3] = rec_of("{\"budget\": {\"setup_s\": 5}, \"resources\": {}}");
    cr_assert_null(r[3].setup_steps);
    cr_assert(isnan(r[3].setup_outside_s));
    r[0].status = r[1].status = r[3].status = BENCH_DONE;
    r[0].exit_code = r[1].exit_code = r[3].exit_code = 0;
    r[2].status = BENCH_FAILED;
    r[2].exit_code = 1;
    bench_setup_totals tot;
    bench_setup_totals_build(r, 4, &tot);
    cr_assert_eq(tot.problems, 2);
    cr_assert_eq(tot.nops, 11);
    cr_assert_str_eq(tot.ops[0].op, "compile");
    cr_assert_float_eq(tot.ops[0].total_s, 30.0, 1e-12);
    cr_assert_str_eq(tot.ops[1].op, "profile");
    cr_assert_str_eq(tot.ops[2].op, "time");
    cr_assert_str_eq(tot.ops[3].op, "load");
    cr_assert_float_eq(tot.setup_s, 50.0, 1e-12);
    cr_assert_float_eq(tot.outside_s, 3.0, 1e-12);
    bench_setup_totals_free(&tot);
    bench_setup_totals_free(&tot);   /* idempotent */
    bench_summary sum;
    bench_summary_build(r, 4, &sum);
    bench_report rep = {.suite = "/s", .budget_s = 60, .selection = "all", .recs = r, .n = 4, .sum = &sum, .wall_s = NAN};
    kbuf md = KBUF_INIT, html = KBUF_INIT;
    bench_summary_md(&rep, &md);
    const char *t = strstr(kbuf_str(&md), "## Where the setup time goes");
    cr_assert(t, "%s", kbuf_str(&md));
    const char *c = strstr(t, "| compile | 30.0 s | 15.0 s | 60.0% |"), *l = strstr(t, "| load | 3.0 s | 1.5 s | 6.0% |");
    cr_assert(c && l && c < l, "%s", t);
    cr_assert(strstr(t, "| a4 | 0.6 s | 0.3 s | 1.2% |"), "the 8th op: %s", t);
    cr_assert_null(strstr(t, "| a5 |"), "only 8 ops: %s", t);
    cr_assert(strstr(t, "| (outside worker requests) | 3.0 s | 1.5 s | 6.0% |"), "%s", t);
    cr_assert(strstr(t, "Over the 2 finished problems"), "%s", t);
    bench_summary_html(&rep, &html);
    cr_assert(strstr(kbuf_str(&html), "Where the setup time goes") && strstr(kbuf_str(&html), "(outside worker requests)"));
    json_t *doc = bench_results_json(&rep);
    json_t *probs = json_object_get(doc, "problems");
    json_t *s0 = json_object_get(json_array_get(probs, 0), "setup_by_step");
    cr_assert_eq(json_object_size(s0), 3);
    cr_assert_float_eq(json_number_value(json_object_get(s0, "compile")), 20.0, 1e-12);
    cr_assert_float_eq(json_number_value(json_object_get(json_array_get(probs, 0), "setup_outside_requests_s")), 2.0, 1e-12);
    cr_assert(json_is_null(json_object_get(json_array_get(probs, 3), "setup_by_step")));
    cr_assert(json_is_null(json_object_get(json_array_get(probs, 3), "setup_outside_requests_s")));
    json_decref(doc);
    kbuf_free(&md);
    kbuf_free(&html);
    bench_summary_free(&sum);
    /* a document read again replaces the steps (no leak under LeakSanitizer) */
    json_t *d2 = json_loads("{\"resources\": {\"setup_by_step\": {\"x\": {\"seconds\": 1}}}}", 0, NULL);
    bench_record_read_doc(&r[0], d2);
    json_decref(d2);
    cr_assert_eq(r[0].nsetup_steps, 1);
    cr_assert_str_eq(r[0].setup_steps[0].op, "x");
    for (int i = 0; i < 4; i++) bench_record_clear(&r[i]);
    /* no finished problem reports it: no table */
    bench_record none = rec_of("{}");
    none.status = BENCH_DONE;
    bench_summary_build(&none, 1, &sum);
    bench_report rep2 = {.suite = "/s", .budget_s = 60, .selection = "all", .recs = &none, .n = 1, .sum = &sum, .wall_s = NAN};
    bench_summary_md(&rep2, &md);
    cr_assert_null(strstr(kbuf_str(&md), "Where the setup time goes"));
    kbuf_free(&md);
    bench_summary_free(&sum);
    bench_record_clear(&none);
}

/* The gates' seconds summed per gate over the verify session's candidates; malformed records are
 * skipped; reading the same document twice does not count it twice; no verify section: not known. */
Test(bench_record, gate_seconds_summed_per_gate) {
    const char *doc = "{\"verify\": {\"candidates\": ["
                      " {\"gates\": [{\"gate\": 1, \"seconds\": 0.5}, {\"gate\": 2, \"seconds\": 2.0},"
                      "  {\"gate\": 3, \"seconds\": 3.0}, {\"gate\": 4, \"seconds\": 1.0}]},"
                      " {\"gates\": [{\"gate\": 1, \"seconds\": 0.25}]},"
                      " {\"gates\": [{\"gate\": 1, \"seconds\": 0.25}, {\"gate\": 2, \"seconds\": 5.5},"
                      "  {\"gate\": 9, \"seconds\": 7}, {\"gate\": 3, \"seconds\": -1}, {\"gate\": 3}]},"
                      " \"junk\"]}}";
    bench_record r = rec_of(doc);
    cr_assert_float_eq(r.gate_s[0], 1.0, 1e-12);
    cr_assert_float_eq(r.gate_s[1], 7.5, 1e-12);
    cr_assert_float_eq(r.gate_s[2], 3.0, 1e-12);
    cr_assert_float_eq(r.gate_s[3], 1.0, 1e-12);
    cr_assert_eq(r.gated, 2);
    json_t *d = json_loads(doc, 0, NULL);
    bench_record_read_doc(&r, d);
    json_decref(d);
    cr_assert_float_eq(r.gate_s[1], 7.5, 1e-12, "read twice, counted once");
    cr_assert_eq(r.gated, 2);
    bench_record_clear(&r);
    bench_record n = rec_of("{\"verify\": {\"candidates\": [{\"gates\": [{\"gate\": 1, \"seconds\": 0.1}]}]}}");
    cr_assert(isnan(n.gate_s[1]) && isnan(n.gate_s[3]), "no candidate reached gates 2-4");
    cr_assert_eq(n.gated, 0);
    bench_record_clear(&n);
    bench_record u = rec_of("{\"budget\": {}}");
    cr_assert(isnan(u.gate_s[0]));
    cr_assert_eq(u.gated, -1);
    bench_record_clear(&u);
}

/* A child's command: its stage log goes to optimize.log (-v), its document to stdout (--json). */
Test(bench_child, command_logs_stages_and_prints_json) {
    char dir[] = "/tmp/kopt-child-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    bench_problem p = {.rel = "level1/x.py", .path = "/nonexistent/x.py", .name = "x", .level_name = "level1", .level = 1};
    bench_child_opts o = {.out_dir = dir, .store_path = "/tmp/s.sqlite", .budget_s = 60, .max_autotune = 1};
    bench_child_cmd c;
    kerr e = {0};
    cr_assert_eq(bench_child_cmd_make(&o, &p, "3", &c, &e), 0, "%s", e.msg);
    int v = 0, json = 0, ma = 0;
    for (char **a = c.argv; *a; a++) {
        v += !strcmp(*a, "-v");
        json += !strcmp(*a, "--json");
        ma += !strcmp(*a, "--max-autotune");
    }
    cr_assert(v == 1 && json == 1 && ma == 1);
    cr_assert(strstr(c.stderr_path, "/runs/level1/x/optimize.log"), "%s", c.stderr_path);
    int gpu = 0;
    for (char **x = c.envp; *x; x++) gpu += !strcmp(*x, "CUDA_VISIBLE_DEVICES=3");
    cr_assert_eq(gpu, 1);
    bench_child_cmd_free(&c);
    char *cmd = kasprintf("rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

/* --verbose raises the level to info but keeps a higher one from $KOPT_LOG (debug: each worker
 * request's time in a bench child's log). */
Test(log, verbose_keeps_a_higher_level) {
    setenv("KOPT_LOG", "3", 1);
    log_set_level(-1);
    log_at_least(LOG_INFO);
    cr_assert_eq(log_level(), LOG_DEBUG);
    setenv("KOPT_LOG", "1", 1);
    log_set_level(-1);
    log_at_least(LOG_INFO);
    cr_assert_eq(log_level(), LOG_INFO);
    unsetenv("KOPT_LOG");
    log_set_level(-1);
    cr_assert_eq(log_level(), LOG_WARN);
}
