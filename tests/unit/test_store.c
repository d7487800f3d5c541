/* test_store.c — store/: the SQLite store of `kopt optimize` (schema, runs and resume,
 * kernels, attempts, reuse lookups, planner statistics, experiences, LLM usage, export,
 * transactions and crashes, merging, hostile text, error reporting). Each test works in its
 * own temporary directory. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "util/owner.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/log.h"

static char *g_dir;     /* per-test temporary directory */
static char *g_path;    /* g_dir/store.sqlite */
static kstore *g_s;     /* opened on g_path by the setup */
static kerr E;          /* the kerr of the last OK/FAILS */

#define OK(expr)                                                                                \
    do {                                                                                        \
        memset(&E, 0, sizeof E);                                                                \
        int rc_ = (expr);                                                                       \
        cr_assert_eq(rc_, 0, "%s -> %d: %s", #expr, rc_, E.msg);                                \
    } while (0)

#define FAILS(expr, want)                                                                       \
    do {                                                                                        \
        memset(&E, 0, sizeof E);                                                                \
        int rc_ = (expr);                                                                       \
        cr_assert_eq(rc_, (want), "%s -> %d (want %d): %s", #expr, rc_, (want), E.msg);         \
        cr_assert_eq(E.code, (want));                                                           \
        cr_assert(E.msg[0] != '\0', "%s gave no message", #expr);                               \
    } while (0)

static void ts_setup(void) {
    if (!getenv("KOPT_LOG")) log_set_level(LOG_QUIET);
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-store", &g_dir, &e), 0, "%s", e.msg);
    g_path = fs_join(g_dir, "store.sqlite");
    cr_assert_eq(store_open(g_path, &g_s, &e), 0, "%s", e.msg);
}

static void ts_teardown(void) {
    store_close(g_s);
    g_s = NULL;
    fs_rmtree(g_dir);
    free(g_dir);
    free(g_path);
}

TestSuite(store, .init = ts_setup, .fini = ts_teardown, .timeout = 60);
TestSuite(store_runs, .init = ts_setup, .fini = ts_teardown, .timeout = 60);
TestSuite(store_attempts, .init = ts_setup, .fini = ts_teardown, .timeout = 60);
TestSuite(store_query, .init = ts_setup, .fini = ts_teardown, .timeout = 60);
TestSuite(store_tx, .init = ts_setup, .fini = ts_teardown, .timeout = 60);
TestSuite(store_merge, .init = ts_setup, .fini = ts_teardown, .timeout = 60);
TestSuite(store_errors, .init = ts_setup, .fini = ts_teardown, .timeout = 60);

/* ---- helpers ------------------------------------------------------------------------------ */

/* A value read directly with SQLite (another connection), bypassing the store's API. */
static int64_t raw_int(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
                 sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Runs sql on the file at path with a connection of its own (not through the store). */
static void raw_exec(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
    sqlite3_close(db);
}

static char *raw_text(const char *path, const char *sql) {
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s: %s", sql,
                 sqlite3_errmsg(db));
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "%s", sql);
    const char *t = (const char *)sqlite3_column_text(st, 0);
    char *v = t ? kstrdup(t) : NULL;
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static int64_t begin_run(kstore *s, const char *problem_sha, const char *gpu) {
    store_run r = {.problem_path = "problems/softmax.py", .problem_sha = problem_sha,
                   .gpu = gpu, .torch_version = "2.5.1", .config_json = "{\"budget\": 8}"};
    int64_t id = 0;
    OK(store_run_begin(s, &r, &id, &E));
    cr_assert_gt(id, 0);
    return id;
}

static int64_t add_kernel(kstore *s, const char *key, const char *name, const char *kind) {
    store_kernel k = {.kernel_key = key, .name = name, .kind = kind, .source_sha = "src-sha",
                      .shapes_json = "[{\"shape\": [4096, 4096], \"dtype\": \"float32\"}]",
                      .gpu = "NVIDIA H200", .source = "@triton.jit\ndef k(): pass\n"};
    int64_t id = 0;
    OK(store_kernel_upsert(s, &k, &id, &E));
    cr_assert_gt(id, 0);
    return id;
}

static int64_t add_attempt(kstore *s, int64_t run, int64_t kernel, const char *direction,
                           const char *text) {
    store_attempt a = {.run_id = run, .kernel_id = kernel,
                       .plan_json = "{\"direction\": \"x\", \"params\": {\"BLOCK\": 1024}}",
                       .direction = direction, .label = "cand", .candidate_text = text,
                       .agent = "builtin"};
    int64_t id = 0;
    OK(store_attempt_add(s, &a, &id, &E));
    cr_assert_gt(id, 0);
    return id;
}

static void accept(kstore *s, int64_t attempt, double speedup) {
    store_result r = {.outcome = STORE_ACCEPTED, .speedup = speedup, .ci_lo = speedup - 0.05,
                      .ci_hi = speedup + 0.05, .kernel_ms = 1.0 / speedup, .base_ms = 1.0,
                      .gates_json = "[{\"gate\": 1, \"ok\": true}]"};
    OK(store_attempt_result(s, attempt, &r, &E));
}

static void refuse(kstore *s, int64_t attempt, int gate, double speedup) {
    store_result r = {.outcome = STORE_REFUSED, .refused_gate = gate, .reason = "max abs err 3e-2",
                      .speedup = speedup, .ci_lo = NAN, .ci_hi = NAN, .kernel_ms = NAN,
                      .base_ms = NAN};
    OK(store_attempt_result(s, attempt, &r, &E));
}

static void fail_attempt(kstore *s, int64_t attempt) {
    store_result r = {.outcome = STORE_ERROR, .reason = "worker crashed", .speedup = NAN,
                      .ci_lo = NAN, .ci_hi = NAN, .kernel_ms = NAN, .base_ms = NAN};
    OK(store_attempt_result(s, attempt, &r, &E));
}

static int64_t count(const char *table) {
    char *sql = kasprintf("SELECT count(*) FROM %s", table);
    int64_t n = raw_int(g_path, sql);
    free(sql);
    return n;
}

/* ---- schema, hashing ---------------------------------------------------------------------- */

Test(store, creates_schema_and_reopens) {
    /* the setup's store: every table, version 1, WAL, kopt's application id */
    const char *tables[] = {"schema_version", "runs", "kernels", "attempts", "experiences",
                            "llm_calls"};
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
        char *sql = kasprintf("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                              "name = '%s'", tables[i]);
        cr_expect_eq(raw_int(g_path, sql), 1, "table %s missing", tables[i]);
        free(sql);
    }
    cr_expect_eq(raw_int(g_path, "SELECT max(version) FROM schema_version"), STORE_SCHEMA_VERSION);
    cr_expect_eq(raw_int(g_path, "PRAGMA application_id"), 0x4B4F5054);
    char *mode = raw_text(g_path, "PRAGMA journal_mode");
    cr_expect_str_eq(mode, "wal");
    free(mode);
    cr_expect_str_eq(store_path(g_s), g_path);

    int64_t run = begin_run(g_s, "p1", "NVIDIA H200");
    char uuid[37];
    OK(store_run_uuid(g_s, run, uuid, &E));
    store_close(g_s);
    g_s = NULL;
    store_close(NULL);

    /* reopen: the schema is not recreated, the data is there */
    OK(store_open(g_path, &g_s, &E));
    int64_t again = 0;
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA H200", NULL, NULL, &again, &E));
    cr_assert_eq(again, run);
    char uuid2[37];
    OK(store_run_uuid(g_s, again, uuid2, &E));
    cr_assert_str_eq(uuid, uuid2);
    cr_expect_eq(raw_int(g_path, "SELECT count(*) FROM schema_version"), 1);

    /* parent directories are created */
    char *deep = fs_join(g_dir, "a/b/c/store.sqlite");
    kstore *s2 = NULL;
    OK(store_open(deep, &s2, &E));
    store_close(s2);
    cr_assert(fs_exists(deep));
    free(deep);
}

Test(store, sha256_vectors) {
    char h[STORE_SHA_HEX];
    store_sha256_hex("", 0, h);
    cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    store_sha256_hex("abc", 3, h);
    cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    store_sha256_hex(m448, strlen(m448), h);
    cr_assert_str_eq(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    size_t n = 1000000;
    char *a = kmalloc(n);
    memset(a, 'a', n);
    store_sha256_hex(a, n, h);
    free(a);
    cr_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* lengths around the padding boundary all differ and do not crash */
    char prev[STORE_SHA_HEX] = "";
    char buf[130];
    memset(buf, 'x', sizeof buf);
    for (size_t len = 50; len < sizeof buf; len++) {
        store_sha256_hex(buf, len, h);
        cr_assert_str_neq(h, prev);
        memcpy(prev, h, sizeof h);
    }
}

Test(store, kernel_key_is_canonical) {
    char k1[STORE_SHA_HEX], k2[STORE_SHA_HEX], k3[STORE_SHA_HEX];
    OK(store_kernel_key("src", "{\"shape\": [2, 3], \"dtype\": \"f32\"}", "H200", k1, &E));
    OK(store_kernel_key("src", "{\"dtype\":\"f32\",\n \"shape\":[2,3]}", "H200", k2, &E));
    cr_assert_str_eq(k1, k2, "whitespace and key order must not change the key");
    cr_assert_eq(strlen(k1), 64);
    OK(store_kernel_key("src", "{\"shape\": [2, 3], \"dtype\": \"f32\"}", "A100", k3, &E));
    cr_assert_str_neq(k1, k3);
    OK(store_kernel_key("src2", "{\"shape\": [2, 3], \"dtype\": \"f32\"}", "H200", k3, &E));
    cr_assert_str_neq(k1, k3);
    OK(store_kernel_key("src", "{\"shape\": [3, 2], \"dtype\": \"f32\"}", "H200", k3, &E));
    cr_assert_str_neq(k1, k3);
    /* fields are length-prefixed: moving bytes between fields changes the key */
    OK(store_kernel_key("ab", "1", "c", k1, &E));
    OK(store_kernel_key("a", "1", "bc", k2, &E));
    cr_assert_str_neq(k1, k2);
    FAILS(store_kernel_key("src", "{not json", "H200", k1, &E), KOPT_E_INTERNAL);
    FAILS(store_kernel_key(NULL, "[]", "H200", k1, &E), KOPT_E_INTERNAL);
}

Test(store, redact_secrets) {
    char t1[] = "401 from api: invalid key sk-proj-AbCdEf0123456789xyzXYZ supplied";
    store_redact(t1);
    cr_assert_str_eq(t1, "401 from api: invalid key [redacted] supplied");
    char t2[] = "header Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig rejected";
    store_redact(t2);
    cr_assert_str_eq(t2, "header Authorization: Bearer [redacted] rejected");
    char t3[] = "GET /v1?api_key=0123456789abcdef&x=1; "
                "x-api-key: \"sk-ant-api03-zzzzzzzzzzzzzzzzzz\"";
    store_redact(t3);
    cr_assert_str_eq(t3, "GET /v1?api_key=[redacted]&x=1; x-api-key: \"[redacted]\"");
    char t4[] = "token=short key=abc; monkey=notasecretvalue; task-key ok; sk-tiny";
    store_redact(t4);
    cr_assert_str_eq(t4, "token=short key=abc; monkey=notasecretvalue; task-key ok; sk-tiny");
    char t5[] = "";
    store_redact(t5);
    cr_assert_str_eq(t5, "");
    store_redact(NULL);
}

/* ---- runs and kernels --------------------------------------------------------------------- */

Test(store_runs, lifecycle_and_resume_lookup) {
    int64_t found = -1;
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, 0, "an empty store has no unfinished run");

    int64_t a = begin_run(g_s, "p1", "NVIDIA H200");
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, a);
    int64_t b = begin_run(g_s, "p1", "NVIDIA H200");
    cr_assert_neq(a, b);
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, b, "the latest unfinished run is the one to resume");
    /* another GPU or problem does not match */
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA A100", NULL, NULL, &found, &E));
    cr_assert_eq(found, 0);
    OK(store_run_find_unfinished(g_s, "p2", "NVIDIA H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, 0);

    OK(store_run_end(g_s, b, "done", "{\"speedup\": 1.3}", &E));
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, a, "a finished run is never resumed");
    OK(store_run_end(g_s, a, "interrupted", NULL, &E));
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, 0);

    char *status = raw_text(g_path, "SELECT status FROM runs ORDER BY id DESC LIMIT 1");
    cr_expect_str_eq(status, "done");
    free(status);
    cr_expect_eq(raw_int(g_path, "SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), 2);

    char uuid_a[37], uuid_b[37];
    OK(store_run_uuid(g_s, a, uuid_a, &E));
    OK(store_run_uuid(g_s, b, uuid_b, &E));
    cr_assert_eq(strlen(uuid_a), 36);
    cr_assert_eq(uuid_a[14], '4', "a version-4 uuid: %s", uuid_a);
    cr_assert_str_neq(uuid_a, uuid_b);

    /* errors */
    FAILS(store_run_end(g_s, 999, "done", NULL, &E), KOPT_E_STORE);
    cr_assert(strstr(E.msg, "no such run"), "%s", E.msg);
    FAILS(store_run_uuid(g_s, 999, uuid_a, &E), KOPT_E_STORE);
    store_run bad = {.problem_path = "p.py", .problem_sha = "p", .gpu = NULL};
    int64_t id = -1;
    FAILS(store_run_begin(g_s, &bad, &id, &E), KOPT_E_INTERNAL);
    cr_assert_eq(id, 0);
    store_run badjson = {.problem_path = "p.py", .problem_sha = "p", .gpu = "g",
                         .config_json = "{budget: 8"};
    FAILS(store_run_begin(g_s, &badjson, &id, &E), KOPT_E_INTERNAL);
    cr_assert(strstr(E.msg, "config_json"), "%s", E.msg);
    FAILS(store_run_end(g_s, a, "done", "not json", &E), KOPT_E_INTERNAL);
    cr_assert_eq(count("runs"), 2);
}

/* A liveness that says the owner named in ctx is alive, every other one dead. */
static int alive_if(const char *owner, double age_s, void *ctx) {
    (void)age_s;
    return owner && !strcmp(owner, (const char *)ctx);
}

Test(store_runs, a_live_run_is_never_adopted) {
    int64_t a = begin_run(g_s, "p1", "NVIDIA H200"), found = -1;
    char *mine = owner_self();
    char *rec = raw_text(g_path, "SELECT owner FROM runs ORDER BY id DESC LIMIT 1");
    cr_assert_str_eq(rec, mine, "a run records its owner (host:pid)");
    free(rec);
    /* its owner still at work: a second kopt on the same problem starts its own */
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA H200", alive_if, mine, &found, &E));
    cr_assert_eq(found, 0);
    /* its owner gone: resumed, and the run changes hands */
    raw_exec(g_path, "UPDATE runs SET owner = 'otherhost:1'");
    OK(store_run_find_unfinished(g_s, "p1", "NVIDIA H200", alive_if, mine, &found, &E));
    cr_assert_eq(found, a);
    OK(store_run_take(g_s, a, &E));
    rec = raw_text(g_path, "SELECT owner FROM runs WHERE id = 1");
    cr_assert_str_eq(rec, mine);
    free(rec);
    /* the real liveness: this very process's own pid is not "alive" (a recycled pid), a live
     * process of this host that is not a kopt optimize is not either */
    owner_liveness live;
    owner_liveness_init(&live, "optimize", 3600);
    cr_expect_not(owner_alive(mine, 0, &live));
    char *parent = kasprintf("%s:%ld", live.host, (long)getppid());
    cr_expect_not(owner_alive(parent, 0, &live), "the test runner's parent does not run 'optimize'");
    cr_expect(owner_alive("faraway:1", 10, &live), "another host's young run is alive");
    cr_expect_not(owner_alive("faraway:1", 7200, &live), "and stale after an hour");
    free(parent);
    owner_liveness_clear(&live);
    OK(store_run_end(g_s, a, "done", NULL, &E));
    cr_expect_neq(store_run_take(g_s, a, &E), 0, "a finished run cannot be taken");
    free(mine);
}

Test(store_runs, kernel_upsert_is_idempotent) {
    int64_t k1 = add_kernel(g_s, "key-1", "triton_red_fused_0", "reduction");
    int64_t k1b = add_kernel(g_s, "key-1", "triton_red_fused_7", "reduction");
    cr_assert_eq(k1, k1b);
    int64_t k2 = add_kernel(g_s, "key-2", "triton_poi_fused_1", "pointwise");
    cr_assert_neq(k1, k2);
    cr_assert_eq(count("kernels"), 2);
    char *name = raw_text(g_path, "SELECT name FROM kernels WHERE kernel_key = 'key-1'");
    cr_assert_str_eq(name, "triton_red_fused_0", "the first name is kept");
    free(name);
    int64_t f = -1;
    OK(store_kernel_find(g_s, "key-2", &f, &E));
    cr_assert_eq(f, k2);
    OK(store_kernel_find(g_s, "nope", &f, &E));
    cr_assert_eq(f, 0);
    store_kernel bad = {.kernel_key = "k", .name = "n", .kind = "pointwise", .source_sha = "s",
                        .shapes_json = "[1,", .gpu = "g"};
    FAILS(store_kernel_upsert(g_s, &bad, &f, &E), KOPT_E_INTERNAL);
    bad.shapes_json = "[]";
    bad.kind = NULL;
    FAILS(store_kernel_upsert(g_s, &bad, &f, &E), KOPT_E_INTERNAL);
    cr_assert_eq(count("kernels"), 2);
}

/* ---- attempts ----------------------------------------------------------------------------- */

Test(store_attempts, add_and_result) {
    int64_t run = begin_run(g_s, "p1", "H200");
    int64_t k = add_kernel(g_s, "key-1", "triton_red_fused_0", "reduction");
    const char *text = "# kopt-candidate: replaces=triton_red_fused_0\ndef launch(): pass\n";
    int64_t a = add_attempt(g_s, run, k, "one_pass", text);

    /* candidate_sha computed from the text when not given */
    char want[STORE_SHA_HEX];
    store_sha256_hex(text, strlen(text), want);
    char *sha = raw_text(g_path, "SELECT candidate_sha FROM attempts");
    cr_assert_str_eq(sha, want);
    free(sha);
    cr_assert_eq(raw_int(g_path, "SELECT outcome IS NULL FROM attempts"), 1, "pending");

    accept(g_s, a, 1.25);
    cr_assert_eq(raw_int(g_path, "SELECT outcome = 'accepted' AND refused_gate IS NULL AND "
                                 "finished_at IS NOT NULL AND abs(speedup - 1.25) < 1e-12 "
                                 "FROM attempts"), 1);
    /* results are final */
    FAILS(store_attempt_result(g_s, a, &(store_result){.outcome = STORE_ERROR, .speedup = NAN}, &E),
          KOPT_E_STORE);
    cr_assert(strstr(E.msg, "already has a result"), "%s", E.msg);
    FAILS(store_attempt_result(g_s, 4242, &(store_result){.outcome = STORE_ERROR, .speedup = NAN}, &E),
          KOPT_E_STORE);
    cr_assert(strstr(E.msg, "does not exist"), "%s", E.msg);

    /* NaN measurements are stored as NULL; refused needs its gate */
    int64_t b = add_attempt(g_s, run, k, "split", "def launch(): return 2\n");
    FAILS(store_attempt_result(g_s, b, &(store_result){.outcome = STORE_REFUSED, .speedup = NAN}, &E),
          KOPT_E_INTERNAL);
    FAILS(store_attempt_result(g_s, b, &(store_result){.outcome = (store_verdict)42}, &E), KOPT_E_INTERNAL);
    FAILS(store_attempt_result(g_s, b, &(store_result){.refused_gate = 1}, &E), KOPT_E_INTERNAL); /* no verdict */
    FAILS(store_attempt_result(g_s, b, &(store_result){.outcome = STORE_ACCEPTED, .gates_json = "{"},
                               &E),
          KOPT_E_INTERNAL);
    refuse(g_s, b, 2, NAN);
    cr_assert_eq(raw_int(g_path, "SELECT refused_gate = 2 AND speedup IS NULL AND ci_lo IS NULL "
                                 "FROM attempts WHERE outcome = 'refused'"), 1);
    /* fields left out of the initialiser (0) are "not measured" too */
    int64_t c = add_attempt(g_s, run, k, "split", "def launch(): return 3\n");
    OK(store_attempt_result(g_s, c, &(store_result){.outcome = STORE_ERROR, .reason = "oom"}, &E));
    cr_assert_eq(raw_int(g_path, "SELECT speedup IS NULL AND ci_lo IS NULL AND ci_hi IS NULL AND "
                                 "kernel_ms IS NULL AND base_ms IS NULL AND refused_gate IS NULL "
                                 "FROM attempts WHERE outcome = 'error'"), 1);

    /* references are checked */
    store_attempt bad = {.run_id = 77, .kernel_id = k, .direction = "split",
                         .candidate_text = "x"};
    int64_t id = -1;
    FAILS(store_attempt_add(g_s, &bad, &id, &E), KOPT_E_STORE);
    cr_assert(strstr(E.msg, "run 77"), "%s", E.msg);
    cr_assert_eq(id, 0);
    bad.run_id = run;
    bad.candidate_text = NULL;
    FAILS(store_attempt_add(g_s, &bad, &id, &E), KOPT_E_INTERNAL);
    bad.candidate_text = "x";
    bad.plan_json = "{oops";
    FAILS(store_attempt_add(g_s, &bad, &id, &E), KOPT_E_INTERNAL);
    cr_assert_eq(count("attempts"), 3);
}

Test(store_attempts, seen_across_runs) {
    int64_t r1 = begin_run(g_s, "p1", "H200");
    int64_t k = add_kernel(g_s, "key-1", "triton_red_fused_0", "reduction");
    int64_t other = add_kernel(g_s, "key-2", "triton_poi_fused_1", "pointwise");
    const char *text = "def launch(in_ptr0, out_ptr0, xnumel): pass\n";
    char sha[STORE_SHA_HEX];
    store_sha256_hex(text, strlen(text), sha);

    store_seen sn;
    OK(store_attempt_seen(g_s, k, sha, &sn, &E));
    cr_assert_eq(sn.seen, 0);
    cr_assert_eq(sn.pending_id, 0);
    cr_assert(isnan(sn.speedup));

    /* pending (interrupted before its verdict): not seen, but reported for reuse */
    int64_t a1 = add_attempt(g_s, r1, k, "launch_config", text);
    OK(store_attempt_seen(g_s, k, sha, &sn, &E));
    cr_assert_eq(sn.seen, 0);
    cr_assert_eq(sn.pending_id, a1);

    refuse(g_s, a1, 3, NAN);
    OK(store_attempt_seen(g_s, k, sha, &sn, &E));
    cr_assert_eq(sn.seen, 1);
    cr_assert_eq(sn.attempt_id, a1);
    cr_assert_eq(sn.outcome, STORE_REFUSED);
    cr_assert_eq(sn.refused_gate, 3);
    cr_assert_eq(sn.pending_id, 0);

    /* another run accepted the same candidate: the accepted verdict wins */
    OK(store_run_end(g_s, r1, "done", NULL, &E));
    int64_t r2 = begin_run(g_s, "p1", "H200");
    int64_t a2 = add_attempt(g_s, r2, k, "launch_config", text);
    accept(g_s, a2, 1.4);
    OK(store_attempt_seen(g_s, k, sha, &sn, &E));
    cr_assert_eq(sn.seen, 1);
    cr_assert_eq(sn.attempt_id, a2);
    cr_assert_eq(sn.outcome, STORE_ACCEPTED);
    cr_assert_eq(sn.refused_gate, 0);
    cr_assert_float_eq(sn.speedup, 1.4, 1e-12);

    /* other kernel, other candidate: unseen */
    OK(store_attempt_seen(g_s, other, sha, &sn, &E));
    cr_assert_eq(sn.seen, 0);
    OK(store_attempt_seen(g_s, k, "0000", &sn, &E));
    cr_assert_eq(sn.seen, 0);
    FAILS(store_attempt_seen(g_s, k, NULL, &sn, &E), KOPT_E_INTERNAL);
}

/* ---- reuse and planner queries ------------------------------------------------------------ */

Test(store_query, best_for_kernel_picks_highest_accepted) {
    store_best b;
    OK(store_best_for_kernel(g_s, "key-1", &b, &E));
    cr_assert_eq(b.found, 0);
    store_best_clear(&b);

    int64_t r1 = begin_run(g_s, "p1", "H200");
    int64_t k = add_kernel(g_s, "key-1", "triton_red_fused_0", "reduction");
    int64_t k2 = add_kernel(g_s, "key-2", "triton_poi_fused_1", "pointwise");
    refuse(g_s, add_attempt(g_s, r1, k, "split", "refused but fast"), 3, 9.0);
    accept(g_s, add_attempt(g_s, r1, k, "one_pass", "text 1.2"), 1.2);
    int64_t best = add_attempt(g_s, r1, k, "launch_config", "text 1.5");
    accept(g_s, best, 1.5);
    fail_attempt(g_s, add_attempt(g_s, r1, k, "split", "errored"));
    add_attempt(g_s, r1, k, "split", "pending");
    accept(g_s, add_attempt(g_s, r1, k2, "one_pass", "other kernel 3.0"), 3.0);
    OK(store_run_end(g_s, r1, "done", NULL, &E));
    int64_t r2 = begin_run(g_s, "p1", "H200");
    accept(g_s, add_attempt(g_s, r2, k, "one_pass", "text 1.3"), 1.3);

    OK(store_best_for_kernel(g_s, "key-1", &b, &E));
    cr_assert_eq(b.found, 1);
    cr_assert_eq(b.attempt_id, best);
    cr_assert_eq(b.run_id, r1);
    cr_assert_eq(b.kernel_id, k);
    cr_assert_str_eq(b.candidate_text, "text 1.5");
    cr_assert_str_eq(b.direction, "launch_config");
    cr_assert_str_eq(b.label, "cand");
    cr_assert_float_eq(b.speedup, 1.5, 1e-12);
    cr_assert_float_eq(b.ci_lo, 1.45, 1e-12);
    cr_assert_float_eq(b.ci_hi, 1.55, 1e-12);
    cr_assert_float_eq(b.base_ms, 1.0, 1e-12);
    char want[STORE_SHA_HEX];
    store_sha256_hex("text 1.5", 8, want);
    cr_assert_str_eq(b.candidate_sha, want);
    store_best_clear(&b);
    cr_assert_null(b.candidate_text);
    store_best_clear(NULL);

    OK(store_best_for_kernel(g_s, "unknown", &b, &E));
    cr_assert_eq(b.found, 0);
    store_best_clear(&b);
}

Test(store_query, direction_stats_and_history) {
    int64_t r1 = begin_run(g_s, "p1", "H200");
    int64_t red1 = add_kernel(g_s, "key-1", "triton_red_fused_0", "reduction");
    int64_t red2 = add_kernel(g_s, "key-2", "triton_red_fused_1", "reduction");
    int64_t poi = add_kernel(g_s, "key-3", "triton_poi_fused_2", "pointwise");
    refuse(g_s, add_attempt(g_s, r1, red1, "split", "a"), 2, NAN);
    refuse(g_s, add_attempt(g_s, r1, red2, "split", "b"), 4, 1.01);
    fail_attempt(g_s, add_attempt(g_s, r1, red1, "split", "c"));
    add_attempt(g_s, r1, red1, "split", "pending: not a try yet");
    accept(g_s, add_attempt(g_s, r1, red1, "one_pass", "d"), 1.3);
    accept(g_s, add_attempt(g_s, r1, poi, "split", "e"), 2.0);
    int64_t r2 = begin_run(g_s, "p2", "H200");
    accept(g_s, add_attempt(g_s, r2, red2, "split", "f"), 1.1);

    store_dirstats d;
    OK(store_direction_stats(g_s, "reduction", "split", &d, &E));
    cr_assert_eq(d.tries, 4);
    cr_assert_eq(d.accepted, 1);
    cr_assert_eq(d.refused, 2);
    cr_assert_eq(d.errors, 1);
    cr_assert_float_eq(d.best_speedup, 1.1, 1e-12);
    OK(store_direction_stats(g_s, "pointwise", "split", &d, &E));
    cr_assert_eq(d.tries, 1);
    cr_assert_eq(d.accepted, 1);
    OK(store_direction_stats(g_s, "reduction", "never_tried", &d, &E));
    cr_assert_eq(d.tries, 0);
    cr_assert(isnan(d.best_speedup));
    FAILS(store_direction_stats(g_s, NULL, "split", &d, &E), KOPT_E_INTERNAL);

    json_t *t = NULL;
    OK(store_direction_table(g_s, "reduction", &t, &E));
    cr_assert_eq(json_array_size(t), 2);
    json_t *first = json_array_get(t, 0);
    cr_assert_str_eq(json_string_value(json_object_get(first, "direction")), "split");
    cr_assert_eq(json_integer_value(json_object_get(first, "tries")), 4);
    cr_assert_eq(json_integer_value(json_object_get(first, "refused")), 2);
    json_t *second = json_array_get(t, 1);
    cr_assert_str_eq(json_string_value(json_object_get(second, "direction")), "one_pass");
    cr_assert_float_eq(json_real_value(json_object_get(second, "best_speedup")), 1.3, 1e-12);
    cr_assert(json_is_null(json_object_get(first, "best_speedup")) == 0);
    json_decref(t);

    json_t *h = NULL;
    OK(store_history_for_kernel(g_s, red1, 0, &h, &E));
    cr_assert_eq(json_array_size(h), 3, "pending attempts are not history");
    json_t *h0 = json_array_get(h, 0);
    cr_assert_str_eq(json_string_value(json_object_get(h0, "outcome")), "refused");
    cr_assert_eq(json_integer_value(json_object_get(h0, "gate")), 2);
    cr_assert_eq(json_integer_value(
                     json_object_get(json_object_get(json_object_get(h0, "plan"), "params"),
                                     "BLOCK")),
                 1024);
    cr_assert(json_is_null(json_object_get(json_array_get(h, 2), "gate")));
    json_decref(h);
    OK(store_history_for_kernel(g_s, red1, 2, &h, &E));
    cr_assert_eq(json_array_size(h), 2, "limit keeps the latest");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 1), "outcome")),
                     "accepted");
    json_decref(h);
}

Test(store_query, experiences) {
    int64_t r1 = begin_run(g_s, "p1", "H200");
    int64_t red = add_kernel(g_s, "key-1", "triton_red_fused_0", "reduction");
    int64_t poi = add_kernel(g_s, "key-2", "triton_poi_fused_1", "pointwise");
    int64_t a = add_attempt(g_s, r1, red, "split", "x");
    int64_t id = 0;
    store_experience x1 = {.run_id = r1, .kernel_id = red, .attempt_id = a,
                           .text = "Split reductions lose on rows under 4096.",
                           .tags_json = "[\"split\", \"small-rows\"]"};
    OK(store_experience_add(g_s, &x1, &id, &E));
    cr_assert_gt(id, 0);
    store_experience x2 = {.run_id = r1, .kernel_id = poi,
                           .text = "Vectorised loads help pointwise kernels."};
    OK(store_experience_add(g_s, &x2, NULL, &E));
    store_experience x3 = {.run_id = r1, .kernel_id = red,
                           .text = "num_warps=8 helps wide rows.", .tags_json = "[\"warps\"]"};
    OK(store_experience_add(g_s, &x3, NULL, &E));
    OK(store_experience_add(g_s, &x1, NULL, &E));   /* same lesson again: listed once */

    json_t *arr = NULL;
    OK(store_experiences_for(g_s, "reduction", 0, &arr, &E));
    cr_assert_eq(json_array_size(arr), 2);
    json_t *newest = json_array_get(arr, 0);
    cr_assert_str_eq(json_string_value(json_object_get(newest, "text")), x1.text);
    cr_assert_str_eq(json_string_value(json_object_get(newest, "kind")), "reduction");
    cr_assert_str_eq(json_string_value(json_object_get(newest, "kernel")), "triton_red_fused_0");
    json_t *tags = json_object_get(newest, "tags");
    cr_assert_eq(json_array_size(tags), 2);
    cr_assert_str_eq(json_string_value(json_array_get(tags, 1)), "small-rows");
    json_decref(arr);

    OK(store_experiences_for(g_s, "pointwise", 10, &arr, &E));
    cr_assert_eq(json_array_size(arr), 1);
    cr_assert_eq(json_array_size(json_object_get(json_array_get(arr, 0), "tags")), 0);
    json_decref(arr);
    OK(store_experiences_for(g_s, NULL, 0, &arr, &E));
    cr_assert_eq(json_array_size(arr), 3);
    json_decref(arr);
    OK(store_experiences_for(g_s, NULL, 1, &arr, &E));
    cr_assert_eq(json_array_size(arr), 1);
    json_decref(arr);
    OK(store_experiences_for(g_s, "persistent_reduction", 0, &arr, &E));
    cr_assert_eq(json_array_size(arr), 0);
    json_decref(arr);

    store_experience bad = {.run_id = r1, .kernel_id = 999, .text = "t"};
    FAILS(store_experience_add(g_s, &bad, &id, &E), KOPT_E_STORE);
    cr_assert_eq(id, 0);
    bad.kernel_id = red;
    bad.tags_json = "[unquoted]";
    FAILS(store_experience_add(g_s, &bad, NULL, &E), KOPT_E_INTERNAL);
    bad.tags_json = NULL;
    bad.text = "";
    FAILS(store_experience_add(g_s, &bad, NULL, &E), KOPT_E_INTERNAL);
    cr_assert_eq(count("experiences"), 4);
}

Test(store_query, llm_usage_totals) {
    int64_t r1 = begin_run(g_s, "p1", "H200");
    int64_t r2 = begin_run(g_s, "p2", "H200");
    store_llm_call c = {.run_id = r1, .role = "planner", .backend = "openai", .model = "gpt-x",
                        .tokens_in = 1000, .tokens_out = 200, .latency_ms = 1500,
                        .cost_usd = 0.01, .ok = 1};
    OK(store_llm_call_add(g_s, &c, &E));
    c.tokens_in = 500;
    c.tokens_out = 100;
    c.cost_usd = 0.005;
    c.latency_ms = 500;
    OK(store_llm_call_add(g_s, &c, &E));
    store_llm_call x = {.run_id = r1, .role = "executor", .backend = "anthropic",
                        .model = "claude-y", .tokens_in = 3000, .tokens_out = 2000,
                        .latency_ms = 9000, .cost_usd = NAN, .ok = 0,
                        .error = "401: invalid x-api-key sk-ant-api03-SECRETSECRETSECRET123"};
    OK(store_llm_call_add(g_s, &x, &E));
    store_llm_call other = {.run_id = r2, .role = "planner", .backend = "openai",
                            .model = "gpt-x", .tokens_in = 7, .tokens_out = 7, .cost_usd = 1,
                            .latency_ms = NAN, .ok = 1};
    OK(store_llm_call_add(g_s, &other, &E));
    store_llm_call norun = other;
    norun.run_id = 0;
    OK(store_llm_call_add(g_s, &norun, &E));

    /* the key never reaches the database */
    cr_assert_eq(raw_int(g_path, "SELECT count(*) FROM llm_calls WHERE error LIKE '%SECRET%'"), 0);
    char *err = raw_text(g_path, "SELECT error FROM llm_calls WHERE ok = 0");
    cr_assert_str_eq(err, "401: invalid x-api-key [redacted]");
    free(err);

    json_t *u = NULL;
    OK(store_llm_usage(g_s, r1, &u, &E));
    cr_assert_eq(json_integer_value(json_object_get(u, "calls")), 3);
    cr_assert_eq(json_integer_value(json_object_get(u, "failed")), 1);
    cr_assert_eq(json_integer_value(json_object_get(u, "tokens_in")), 4500);
    cr_assert_eq(json_integer_value(json_object_get(u, "tokens_out")), 2300);
    cr_assert_float_eq(json_real_value(json_object_get(u, "cost_usd")), 0.015, 1e-12);
    cr_assert_float_eq(json_real_value(json_object_get(u, "latency_ms")), 11000, 1e-9);
    json_t *by = json_object_get(u, "by_model");
    cr_assert_eq(json_array_size(by), 2);
    json_t *ex = json_array_get(by, 0);   /* ordered by role: executor, planner */
    cr_assert_str_eq(json_string_value(json_object_get(ex, "role")), "executor");
    cr_assert_str_eq(json_string_value(json_object_get(ex, "model")), "claude-y");
    cr_assert_eq(json_integer_value(json_object_get(ex, "failed")), 1);
    cr_assert_float_eq(json_real_value(json_object_get(ex, "cost_usd")), 0, 0);
    json_t *pl = json_array_get(by, 1);
    cr_assert_eq(json_integer_value(json_object_get(pl, "calls")), 2);
    cr_assert_eq(json_integer_value(json_object_get(pl, "tokens_in")), 1500);
    json_decref(u);

    OK(store_llm_usage(g_s, 0, &u, &E));
    cr_assert_eq(json_integer_value(json_object_get(u, "calls")), 5);
    json_decref(u);

    store_llm_call bad = {.run_id = 99, .role = "planner", .backend = "b", .model = "m"};
    FAILS(store_llm_call_add(g_s, &bad, &E), KOPT_E_STORE);
    bad.run_id = r1;
    bad.model = NULL;
    FAILS(store_llm_call_add(g_s, &bad, &E), KOPT_E_INTERNAL);
}

Test(store_query, export_json) {
    int64_t run = begin_run(g_s, "p1", "NVIDIA H200");
    int64_t red = add_kernel(g_s, "key-1", "triton_red_fused_0", "reduction");
    int64_t poi = add_kernel(g_s, "key-2", "triton_poi_fused_1", "pointwise");
    add_kernel(g_s, "key-3", "triton_untouched_2", "pointwise");
    int64_t a1 = add_attempt(g_s, run, red, "one_pass", "cand one");
    accept(g_s, a1, 1.2);
    int64_t a2 = add_attempt(g_s, run, red, "split", "cand two");
    accept(g_s, a2, 1.6);
    refuse(g_s, add_attempt(g_s, run, red, "split", "cand three"), 1, NAN);
    add_attempt(g_s, run, poi, "launch_config", "cand pending");
    store_experience x = {.run_id = run, .kernel_id = red, .attempt_id = a2,
                          .text = "one pass wins", .tags_json = "[\"one_pass\"]"};
    OK(store_experience_add(g_s, &x, NULL, &E));
    store_llm_call c = {.run_id = run, .role = "planner", .backend = "openai", .model = "m",
                        .tokens_in = 10, .tokens_out = 5, .cost_usd = 0.5, .ok = 1};
    OK(store_llm_call_add(g_s, &c, &E));
    OK(store_run_end(g_s, run, "done", "{\"speedup\": 1.6, \"kernels\": 1}", &E));
    /* another run's attempt on the same kernel is not part of this export */
    int64_t other = begin_run(g_s, "p1", "NVIDIA H200");
    accept(g_s, add_attempt(g_s, other, red, "split", "other run"), 3.0);

    json_t *doc = NULL;
    OK(store_export_json(g_s, run, &doc, &E));
    char *text = json_dumps(doc, JSON_INDENT(1));
    cr_assert_not_null(text);
    free(text);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "format")), "kopt.store.run/1");
    json_t *r = json_object_get(doc, "run");
    cr_assert_eq(json_integer_value(json_object_get(r, "id")), run);
    cr_assert_str_eq(json_string_value(json_object_get(r, "gpu")), "NVIDIA H200");
    cr_assert_str_eq(json_string_value(json_object_get(r, "status")), "done");
    cr_assert_eq(strlen(json_string_value(json_object_get(r, "uuid"))), 36);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(r, "config"), "budget")), 8);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(r, "summary"), "kernels")), 1);
    cr_assert_not_null(json_string_value(json_object_get(r, "started_at")));
    cr_assert_not_null(json_string_value(json_object_get(r, "ended_at")));

    json_t *counts = json_object_get(doc, "counts");
    cr_assert_eq(json_integer_value(json_object_get(counts, "attempts")), 4);
    cr_assert_eq(json_integer_value(json_object_get(counts, "accepted")), 2);
    cr_assert_eq(json_integer_value(json_object_get(counts, "refused")), 1);
    cr_assert_eq(json_integer_value(json_object_get(counts, "pending")), 1);

    json_t *ks = json_object_get(doc, "kernels");
    cr_assert_eq(json_array_size(ks), 2, "only the kernels the run touched");
    json_t *k0 = json_array_get(ks, 0);
    cr_assert_str_eq(json_string_value(json_object_get(k0, "name")), "triton_red_fused_0");
    cr_assert_str_eq(json_string_value(json_object_get(k0, "kernel_key")), "key-1");
    cr_assert(json_is_array(json_object_get(k0, "shapes")));
    json_t *atts = json_object_get(k0, "attempts");
    cr_assert_eq(json_array_size(atts), 3);
    json_t *at1 = json_array_get(atts, 1);
    cr_assert_eq(json_integer_value(json_object_get(at1, "id")), a2);
    cr_assert_str_eq(json_string_value(json_object_get(at1, "candidate")), "cand two");
    cr_assert_str_eq(json_string_value(json_object_get(at1, "outcome")), "accepted");
    cr_assert_float_eq(json_real_value(json_object_get(at1, "speedup")), 1.6, 1e-12);
    json_t *params = json_object_get(json_object_get(at1, "plan"), "params");
    cr_assert_eq(json_integer_value(json_object_get(params, "BLOCK")), 1024);
    cr_assert(json_is_array(json_object_get(at1, "gates")));
    json_t *at2 = json_array_get(atts, 2);
    cr_assert_str_eq(json_string_value(json_object_get(at2, "outcome")), "refused");
    cr_assert_eq(json_integer_value(json_object_get(at2, "gate")), 1);
    cr_assert(json_is_null(json_object_get(at2, "speedup")));
    json_t *best = json_object_get(k0, "best");
    cr_assert_eq(json_integer_value(json_object_get(best, "attempt_id")), a2);
    cr_assert_float_eq(json_real_value(json_object_get(best, "speedup")), 1.6, 1e-12);
    json_t *k1 = json_array_get(ks, 1);
    cr_assert(json_is_null(json_object_get(k1, "best")));
    cr_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(k1, "attempts"), 0), "outcome")),
                     "pending");

    json_t *xs = json_object_get(doc, "experiences");
    cr_assert_eq(json_array_size(xs), 1);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(xs, 0), "attempt_id")), a2);
    json_t *usage = json_object_get(doc, "llm_usage");
    cr_assert_eq(json_integer_value(json_object_get(usage, "calls")), 1);
    cr_assert_float_eq(json_real_value(json_object_get(usage, "cost_usd")), 0.5, 1e-12);
    json_decref(doc);

    FAILS(store_export_json(g_s, 12345, &doc, &E), KOPT_E_STORE);
    cr_assert_null(doc);
}

/* ---- hostile text ------------------------------------------------------------------------- */

Test(store_query, sql_injection_is_stored_verbatim) {
    const char *evil = "x'); DROP TABLE attempts; --";
    const char *evil2 = "Robert\"); DELETE FROM runs WHERE ('1'='1";
    store_run r = {.problem_path = evil2, .problem_sha = "p' OR '1'='1", .gpu = "H200"};
    int64_t run = 0;
    OK(store_run_begin(g_s, &r, &run, &E));
    int64_t k = add_kernel(g_s, "key'; --", "triton_red_fused_0", "reduction");
    store_attempt a = {.run_id = run, .kernel_id = k, .direction = "split", .label = evil,
                       .candidate_text = "print('%s %n %x')\n", .agent = evil2};
    int64_t id = 0;
    OK(store_attempt_add(g_s, &a, &id, &E));
    store_result res = {.outcome = STORE_REFUSED, .refused_gate = 1, .reason = evil, .speedup = NAN,
                        .ci_lo = NAN, .ci_hi = NAN, .kernel_ms = NAN, .base_ms = NAN};
    OK(store_attempt_result(g_s, id, &res, &E));

    cr_assert_eq(count("attempts"), 1, "the attempts table survived");
    cr_assert_eq(count("runs"), 1);
    char *label = raw_text(g_path, "SELECT label FROM attempts");
    cr_assert_str_eq(label, evil);
    free(label);
    int64_t found = 0;
    OK(store_run_find_unfinished(g_s, "p' OR '1'='1", "H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, run);
    OK(store_run_find_unfinished(g_s, "anything' OR '1'='1", "H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, 0);

    json_t *doc = NULL;
    OK(store_export_json(g_s, run, &doc, &E));
    json_t *at = json_array_get(
        json_object_get(json_array_get(json_object_get(doc, "kernels"), 0), "attempts"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(at, "label")), evil);
    cr_assert_str_eq(json_string_value(json_object_get(at, "reason")), evil);
    cr_assert_str_eq(json_string_value(json_object_get(at, "agent")), evil2);
    cr_assert_str_eq(json_string_value(json_object_get(at, "candidate")), "print('%s %n %x')\n");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(doc, "run"),
                                                       "problem_path")),
                     evil2);
    json_decref(doc);
    store_best b;
    OK(store_best_for_kernel(g_s, "key' OR '1'='1", &b, &E));
    cr_assert_eq(b.found, 0);
    store_best_clear(&b);
}

/* ---- transactions and crashes ------------------------------------------------------------- */

Test(store_tx, explicit_commit_and_rollback) {
    OK(store_begin(g_s, &E));
    cr_assert(store_in_transaction(g_s));
    FAILS(store_begin(g_s, &E), KOPT_E_INTERNAL);
    begin_run(g_s, "p1", "H200");
    store_rollback(g_s);
    cr_assert(!store_in_transaction(g_s));
    cr_assert_eq(count("runs"), 0, "rolled back");
    store_rollback(g_s);   /* no-op */
    store_rollback(NULL);
    FAILS(store_commit(g_s, &E), KOPT_E_INTERNAL);

    OK(store_begin(g_s, &E));
    int64_t run = begin_run(g_s, "p1", "H200");
    int64_t k = add_kernel(g_s, "key-1", "n", "reduction");
    /* not visible to another connection before the commit */
    cr_assert_eq(count("runs"), 0);
    /* a failed write inside the transaction undoes only itself */
    store_attempt bad = {.run_id = run, .kernel_id = 999, .direction = "split",
                         .candidate_text = "x"};
    int64_t id = 0;
    FAILS(store_attempt_add(g_s, &bad, &id, &E), KOPT_E_STORE);
    cr_assert(store_in_transaction(g_s), "the caller's transaction is still open");
    add_attempt(g_s, run, k, "split", "good");
    OK(store_commit(g_s, &E));
    cr_assert(!store_in_transaction(g_s));
    cr_assert_eq(count("runs"), 1);
    cr_assert_eq(count("kernels"), 1);
    cr_assert_eq(count("attempts"), 1);
}

Test(store_tx, close_without_commit_discards) {
    int64_t kept = begin_run(g_s, "p1", "H200");
    OK(store_begin(g_s, &E));
    int64_t run = begin_run(g_s, "p1", "H200");
    int64_t k = add_kernel(g_s, "key-1", "n", "reduction");
    add_attempt(g_s, run, k, "split", "half written");
    store_close(g_s);
    g_s = NULL;
    OK(store_open(g_path, &g_s, &E));
    cr_assert_eq(count("runs"), 1);
    cr_assert_eq(count("kernels"), 0);
    cr_assert_eq(count("attempts"), 0);
    int64_t found = 0;
    OK(store_run_find_unfinished(g_s, "p1", "H200", NULL, NULL, &found, &E));
    cr_assert_eq(found, kept);
}

Test(store_tx, crash_mid_transaction_leaves_store_consistent) {
    store_close(g_s);   /* the child opens its own connection */
    g_s = NULL;
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        kerr e = {0};
        kstore *s = NULL;
        if (store_open(g_path, &s, &e)) _exit(10);
        store_run r = {.problem_path = "p.py", .problem_sha = "committed", .gpu = "H200"};
        int64_t run = 0, k = 0, a = 0;
        if (store_run_begin(s, &r, &run, &e)) _exit(11);
        if (store_begin(s, &e)) _exit(12);
        r.problem_sha = "never committed";
        if (store_run_begin(s, &r, &run, &e)) _exit(13);
        store_kernel kk = {.kernel_key = "key-1", .name = "n", .kind = "reduction",
                           .source_sha = "s", .shapes_json = "[]", .gpu = "H200"};
        if (store_kernel_upsert(s, &kk, &k, &e)) _exit(14);
        /* a candidate bigger than the page cache: SQLite spills uncommitted pages into the
         * WAL before the crash, so recovery has to ignore frames without a commit */
        size_t n = 8u << 20;
        char *big = malloc(n + 1);
        if (!big) _exit(15);
        memset(big, 'z', n);
        big[n] = '\0';
        store_attempt at = {.run_id = run, .kernel_id = k, .direction = "split",
                            .candidate_text = big};
        if (store_attempt_add(s, &at, &a, &e)) _exit(16);
        _exit(0);   /* dies holding the open transaction: no commit, no close */
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    char *wal = kasprintf("%s-wal", g_path);
    struct stat sb;
    cr_assert_eq(stat(wal, &sb), 0, "the WAL is left behind");
    cr_expect_gt(sb.st_size, 1 << 20, "the uncommitted transaction reached the WAL");
    free(wal);

    OK(store_open(g_path, &g_s, &E));
    char *ic = raw_text(g_path, "PRAGMA integrity_check");
    cr_assert_str_eq(ic, "ok");
    free(ic);
    cr_assert_eq(count("runs"), 1);
    cr_assert_eq(raw_int(g_path, "SELECT count(*) FROM runs WHERE problem_sha = 'committed'"), 1);
    cr_assert_eq(count("kernels"), 0);
    cr_assert_eq(count("attempts"), 0);
    /* and the store keeps working */
    int64_t run = begin_run(g_s, "p2", "H200");
    int64_t k = add_kernel(g_s, "key-1", "n", "reduction");
    accept(g_s, add_attempt(g_s, run, k, "split", "after the crash"), 1.1);
    cr_assert_eq(count("attempts"), 1);
}

/* ---- merging ------------------------------------------------------------------------------ */

/* Host B's store: a run on the shared kernel key-1 and on key-9, an experience and LLM calls;
 * one attempt left pending and the run left open. Returns the pending attempt's id. */
static int64_t fill_host_b(kstore *b, int64_t *run_out) {
    int64_t run = begin_run(b, "p1", "H200");
    int64_t shared = add_kernel(b, "key-9", "triton_poi_fused_9", "pointwise");  /* id 1 in B */
    int64_t k1 = add_kernel(b, "key-1", "triton_red_fused_0", "reduction");      /* id 2 in B */
    int64_t a1 = add_attempt(b, run, k1, "one_pass", "B: one pass");
    accept(b, a1, 1.8);
    refuse(b, add_attempt(b, run, shared, "split", "B: split"), 2, NAN);
    int64_t pending = add_attempt(b, run, k1, "launch_config", "B: pending");
    store_experience x = {.run_id = run, .kernel_id = k1, .attempt_id = a1,
                          .text = "B learned one pass", .tags_json = "[\"b\"]"};
    OK(store_experience_add(b, &x, NULL, &E));
    store_llm_call c = {.run_id = run, .role = "executor", .backend = "openai", .model = "m",
                        .tokens_in = 100, .tokens_out = 10, .cost_usd = 0.2, .ok = 1};
    OK(store_llm_call_add(b, &c, &E));
    c.run_id = 0;
    OK(store_llm_call_add(b, &c, &E));
    *run_out = run;
    return pending;
}

Test(store_merge, two_stores_and_remerge) {
    /* host A (the setup's store) */
    int64_t ra = begin_run(g_s, "p1", "H200");
    int64_t ka = add_kernel(g_s, "key-1", "triton_red_fused_0", "reduction");
    accept(g_s, add_attempt(g_s, ra, ka, "split", "A: split"), 1.3);
    OK(store_run_end(g_s, ra, "done", NULL, &E));

    char *pb = fs_join(g_dir, "hostb/store.sqlite");
    kstore *b = NULL;
    OK(store_open(pb, &b, &E));
    int64_t rb = 0;
    int64_t pending = fill_host_b(b, &rb);

    store_merge_stats st;
    OK(store_merge(g_s, pb, &st, &E));
    cr_assert_eq(st.runs, 1);
    cr_assert_eq(st.kernels, 1, "key-1 is shared, key-9 is new");
    cr_assert_eq(st.attempts, 3);
    cr_assert_eq(st.experiences, 1);
    cr_assert_eq(st.llm_calls, 2);
    cr_assert_eq(st.updated, 0);
    cr_assert_eq(count("runs"), 2);
    cr_assert_eq(count("kernels"), 2);
    cr_assert_eq(count("attempts"), 4);
    cr_assert_eq(count("experiences"), 1);
    cr_assert_eq(count("llm_calls"), 2);

    /* ids are remapped: B's attempts on key-1 now hang on A's kernel row */
    cr_assert_eq(raw_int(g_path, "SELECT count(*) FROM attempts WHERE kernel_id = "
                                 "(SELECT id FROM kernels WHERE kernel_key = 'key-1')"), 3);
    cr_assert_eq(raw_int(g_path, "SELECT count(*) FROM attempts a JOIN kernels k ON "
                                 "k.id = a.kernel_id WHERE a.candidate_text = 'B: split' AND "
                                 "k.kernel_key = 'key-9'"), 1);
    cr_assert_eq(raw_int(g_path, "SELECT count(*) FROM experiences x JOIN attempts a ON "
                                 "a.id = x.attempt_id WHERE a.candidate_text = 'B: one pass'"), 1);
    store_best best;
    OK(store_best_for_kernel(g_s, "key-1", &best, &E));
    cr_assert_str_eq(best.candidate_text, "B: one pass");
    store_best_clear(&best);
    char uuid_b[37];
    OK(store_run_uuid(b, rb, uuid_b, &E));
    char *sql = kasprintf("SELECT count(*) FROM runs WHERE uuid = '%s' AND ended_at IS NULL",
                          uuid_b);
    cr_assert_eq(raw_int(g_path, sql), 1);
    int64_t resume = 0;
    OK(store_run_find_unfinished(g_s, "p1", "H200", NULL, NULL, &resume, &E));
    cr_assert_gt(resume, 0, "B's open run is visible here");

    /* merging again adds nothing */
    OK(store_merge(g_s, pb, &st, &E));
    cr_assert_eq(st.runs + st.kernels + st.attempts + st.experiences + st.llm_calls + st.updated,
                 0);
    cr_assert_eq(count("runs"), 2);
    cr_assert_eq(count("attempts"), 4);
    cr_assert_eq(count("llm_calls"), 2);

    /* B goes on: the pending attempt gets its verdict, the run ends; a re-merge completes them */
    accept(b, pending, 2.5);
    OK(store_run_end(b, rb, "done", NULL, &E));
    OK(store_merge(g_s, pb, &st, &E));
    cr_assert_eq(st.runs + st.kernels + st.attempts + st.experiences + st.llm_calls, 0);
    cr_assert_eq(st.updated, 2);
    cr_assert_eq(raw_int(g_path, sql), 0);
    free(sql);
    OK(store_best_for_kernel(g_s, "key-1", &best, &E));
    cr_assert_str_eq(best.candidate_text, "B: pending");
    cr_assert_float_eq(best.speedup, 2.5, 1e-12);
    store_best_clear(&best);
    OK(store_merge(g_s, pb, &st, &E));
    cr_assert_eq(st.updated, 0);

    /* the other way round: B gets A's run and nothing of its own twice */
    OK(store_merge(b, g_path, &st, &E));
    cr_assert_eq(st.runs, 1);
    cr_assert_eq(st.attempts, 1);
    cr_assert_eq(st.kernels, 0);
    store_close(b);
    free(pb);
}

Test(store_merge, refusals) {
    char *missing = fs_join(g_dir, "nope.sqlite");
    FAILS(store_merge(g_s, missing, NULL, &E), KOPT_E_STORE);
    cr_assert(strstr(E.msg, "no such store file"), "%s", E.msg);
    cr_assert(!fs_exists(missing), "merging must not create the file");
    free(missing);
    FAILS(store_merge(g_s, g_path, NULL, &E), KOPT_E_STORE);
    cr_assert(strstr(E.msg, "into itself"), "%s", E.msg);

    char *junk = fs_join(g_dir, "junk.sqlite");
    const char garbage[] = "this is not an SQLite database, just some text that goes on and on "
                           "for more than one hundred bytes so that the header is filled.";
    OK(fs_write(junk, garbage, sizeof garbage - 1, &E));
    FAILS(store_merge(g_s, junk, NULL, &E), KOPT_E_STORE);
    cr_assert(strstr(E.msg, "junk.sqlite"), "%s", E.msg);
    free(junk);

    char *foreign = fs_join(g_dir, "foreign.sqlite");
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(foreign, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", NULL, NULL,
                              NULL), SQLITE_OK);
    sqlite3_close(db);
    FAILS(store_merge(g_s, foreign, NULL, &E), KOPT_E_STORE);
    cr_assert(strstr(E.msg, "not a kopt store"), "%s", E.msg);
    free(foreign);

    /* a kopt store whose `runs` became a recursive view (the merge hung on it before) and one
     * with a trigger: refused before anything is read */
    const char *rigged[] = {"ALTER TABLE runs RENAME TO runs_t; CREATE VIEW runs AS WITH RECURSIVE n(x) AS (SELECT 1 "
                            "UNION ALL SELECT x + 1 FROM n) SELECT * FROM runs_t, n;",
                            "CREATE TRIGGER t AFTER INSERT ON kernels BEGIN DELETE FROM runs; END;"};
    for (int i = 0; i < 2; i++) {
        char *bad = kasprintf("%s/rigged%d.sqlite", g_dir, i);
        kstore *b = NULL;
        OK(store_open(bad, &b, &E));
        store_close(b);
        raw_exec(bad, rigged[i]);
        FAILS(store_merge(g_s, bad, NULL, &E), KOPT_E_STORE);
        cr_assert(strstr(E.msg, "view(s) or trigger(s)"), "%s", E.msg);
        free(bad);
    }

    OK(store_begin(g_s, &E));
    char *other = fs_join(g_dir, "other.sqlite");
    kstore *o = NULL;
    OK(store_open(other, &o, &E));
    store_close(o);
    FAILS(store_merge(g_s, other, NULL, &E), KOPT_E_INTERNAL);
    store_rollback(g_s);
    store_merge_stats st;
    OK(store_merge(g_s, other, &st, &E));   /* an empty store merges to nothing */
    cr_assert_eq(st.runs + st.kernels + st.attempts, 0);
    free(other);
    /* the store is still usable (the other file was detached) */
    begin_run(g_s, "p1", "H200");
}

/* ---- opening errors ----------------------------------------------------------------------- */

Test(store_errors, directory_path) {
    kstore *s = (kstore *)1;
    FAILS(store_open(g_dir, &s, &E), KOPT_E_STORE);
    cr_assert_null(s);
    cr_assert(strstr(E.msg, "is a directory"), "%s", E.msg);
    cr_assert(strstr(E.msg, g_dir), "the message names the path: %s", E.msg);
    FAILS(store_open("", &s, &E), KOPT_E_INTERNAL);
    /* a parent that is a file */
    char *under_file = fs_join(g_path, "store.sqlite");
    FAILS(store_open(under_file, &s, &E), KOPT_E_STORE);
    cr_assert_null(s);
    free(under_file);
}

Test(store_errors, not_a_database) {
    char *junk = fs_join(g_dir, "junk.sqlite");
    char garbage[4096];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (char)('A' + i % 26);
    OK(fs_write(junk, garbage, sizeof garbage, &E));
    kstore *s = NULL;
    FAILS(store_open(junk, &s, &E), KOPT_E_STORE);
    cr_assert_null(s);
    cr_assert(strstr(E.msg, "not a database"), "%s", E.msg);
    cr_assert(strstr(E.msg, "hint:"), "%s", E.msg);
    cr_assert(strstr(E.msg, "junk.sqlite"), "%s", E.msg);
    free(junk);
}

Test(store_errors, damaged_store) {
    begin_run(g_s, "p1", "H200");
    store_close(g_s);   /* checkpoints the WAL into the file */
    g_s = NULL;
    /* overwrite page 1 after the 100-byte header: the schema table's b-tree */
    int fd = open(g_path, O_WRONLY);
    cr_assert_geq(fd, 0);
    char junk[3000];
    memset(junk, 0xA5, sizeof junk);
    cr_assert_eq(pwrite(fd, junk, sizeof junk, 100), (ssize_t)sizeof junk);
    close(fd);
    kstore *s = NULL;
    FAILS(store_open(g_path, &s, &E), KOPT_E_STORE);
    cr_assert_null(s);
    cr_assert(strstr(E.msg, "malformed") || strstr(E.msg, "not a database"), "%s", E.msg);
    cr_assert(strstr(E.msg, "hint:"), "%s", E.msg);
}

Test(store_errors, foreign_or_newer_database) {
    char *foreign = fs_join(g_dir, "foreign.sqlite");
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(foreign, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "CREATE TABLE notes(x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    kstore *s = NULL;
    FAILS(store_open(foreign, &s, &E), KOPT_E_STORE);
    cr_assert(strstr(E.msg, "another application"), "%s", E.msg);
    cr_assert_eq(raw_int(foreign, "SELECT count(*) FROM sqlite_schema"), 1, "left untouched");
    char *mode = raw_text(foreign, "PRAGMA journal_mode");
    cr_assert_str_eq(mode, "delete", "not even switched to WAL");
    free(mode);
    free(foreign);

    store_close(g_s);
    g_s = NULL;
    cr_assert_eq(sqlite3_open(g_path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "INSERT INTO schema_version(version) VALUES (7)", NULL, NULL,
                              NULL), SQLITE_OK);
    sqlite3_close(db);
    FAILS(store_open(g_path, &s, &E), KOPT_E_STORE);
    cr_assert(strstr(E.msg, "newer kopt"), "%s", E.msg);
    cr_assert_null(s);
}

Test(store_errors, lock_timeout_is_a_store_error) {
    /* another connection holds the write lock: writes wait 5 s then fail cleanly */
    sqlite3 *db = NULL;
    cr_assert_eq(sqlite3_open(g_path, &db), SQLITE_OK);
    cr_assert_eq(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    store_run r = {.problem_path = "p.py", .problem_sha = "p", .gpu = "g"};
    int64_t id = -1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    FAILS(store_run_begin(g_s, &r, &id, &E), KOPT_E_STORE);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    cr_assert_geq(waited, 4.5, "the busy timeout is 5 s, waited %.2f s", waited);
    cr_assert(strstr(E.msg, "locked") || strstr(E.msg, "busy"), "%s", E.msg);
    cr_assert(strstr(E.msg, "hint:"), "%s", E.msg);
    cr_assert_eq(id, 0);
    cr_assert(!store_in_transaction(g_s));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_close(db);
    OK(store_run_begin(g_s, &r, &id, &E));
}

/* The verdicts' stored names: every verdict round-trips, nothing else parses. */
Test(store, verdict_names) {
    for (store_verdict v = STORE_ACCEPTED; v <= STORE_ERROR; v++)
        cr_assert_eq(store_verdict_parse(store_verdict_name(v)), v, "%d", (int)v);
    cr_assert_str_eq(store_verdict_name(STORE_REFUSED), "refused");
    cr_assert_null(store_verdict_name(STORE_NO_VERDICT));
    cr_assert_null(store_verdict_name((store_verdict)42));
    cr_assert_eq(store_verdict_parse(NULL), STORE_NO_VERDICT);
    cr_assert_eq(store_verdict_parse("Accepted"), STORE_NO_VERDICT);
    cr_assert_eq(store_verdict_parse("screened-out"), STORE_NO_VERDICT);
}
