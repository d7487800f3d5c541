/* store_bench.c — the bench_results table of schema v2: claiming, finishing and releasing the
 * problems of a `kopt bench` sweep, and reading the results back (contract in store.h, rules
 * in docs/STORE.md "Bench results").
 *
 * A claim is one write transaction (BEGIN IMMEDIATE, or a savepoint inside the caller's), so
 * two kopt bench processes sharing a store never take the same problem. Liveness of a row's
 * owner is the caller's judgement (store_bench_alive_fn): the store holds no process logic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/buf.h"

#define BENCH_NOW "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

static const char *const STATUS_NAMES[] = {"running", "done", "failed", "timeout"};
#define NSTATUS (sizeof STATUS_NAMES / sizeof STATUS_NAMES[0])

const char *store_bench_status_name(store_bench_status st) {
    return (unsigned)st < NSTATUS ? STATUS_NAMES[st] : NULL;
}

int store_bench_status_parse(const char *name, store_bench_status *out) {
    for (size_t i = 0; name && i < NSTATUS; i++)
        if (!strcmp(name, STATUS_NAMES[i])) {
            *out = (store_bench_status)i;
            return 0;
        }
    return -1;
}

/* KOPT_E_INTERNAL unless v is a non-empty string. */
static int sb_need(const char *v, const char *field, kerr *e) {
    return v && *v ? 0 : store_misuse(e, "bench %s is required", field);
}

/* Checks a claim's required fields. */
static int sb_check_claim(const store_bench_claim_spec *c, kerr *e) {
    int rc;
    if ((rc = sb_need(c->suite_key, "suite_key", e)) ||
        (rc = sb_need(c->problem_rel, "problem_rel", e)) ||
        (rc = sb_need(c->problem_sha, "problem_sha", e)) || (rc = sb_need(c->gpu, "gpu", e)) ||
        (rc = sb_need(c->owner, "owner", e)))
        return rc;
    if (!c->alive) return store_misuse(e, "bench claim needs an owner liveness function");
    if (!(isfinite(c->budget_s) && c->budget_s > 0))
        return store_misuse(e, "bench claim: budget_s must be > 0");
    if (c->gpu_index < 0) return store_misuse(e, "bench claim: gpu_index must be >= 0");
    return 0;
}

/* Inserts the 'running' row of a problem seen for the first time. */
static int sb_insert(kstore *s, const store_bench_claim_spec *c, int64_t *row_id, kerr *e) {
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "INSERT INTO bench_results(suite_key, problem_rel, problem_sha, level, "
                        "gpu, budget_s, max_autotune, status, owner, gpu_index) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running', ?8, ?9)",
                        &st, e);
    if (rc) return rc;
    store_bind_text(st, 1, c->suite_key);
    store_bind_text(st, 2, c->problem_rel);
    store_bind_text(st, 3, c->problem_sha);
    sqlite3_bind_int(st, 4, c->level);
    store_bind_text(st, 5, c->gpu);
    sqlite3_bind_double(st, 6, c->budget_s);
    sqlite3_bind_int(st, 7, c->max_autotune ? 1 : 0);
    store_bind_text(st, 8, c->owner);
    sqlite3_bind_int(st, 9, c->gpu_index);
    if (sqlite3_step(st) == SQLITE_DONE)
        *row_id = sqlite3_last_insert_rowid(s->db);
    else
        rc = store_db_err(s, e, "claiming a bench problem");
    sqlite3_finalize(st);
    return rc;
}

/* Takes an existing row over: 'running' under the new owner, its previous result cleared. */
static int sb_retake(kstore *s, const store_bench_claim_spec *c, int64_t row_id, kerr *e) {
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "UPDATE bench_results SET status = 'running', owner = ?1, gpu_index = ?2, "
                        "level = ?3, started_at = " BENCH_NOW ", ended_at = NULL, "
                        "exit_code = NULL, wall_s = NULL, disk_bytes = NULL, doc_json = NULL "
                        "WHERE id = ?4",
                        &st, e);
    if (rc) return rc;
    store_bind_text(st, 1, c->owner);
    sqlite3_bind_int(st, 2, c->gpu_index);
    sqlite3_bind_int(st, 3, c->level);
    sqlite3_bind_int64(st, 4, row_id);
    if (sqlite3_step(st) != SQLITE_DONE) rc = store_db_err(s, e, "retaking a bench problem");
    sqlite3_finalize(st);
    return rc;
}

/* The decision for an existing row, from its status and (for 'running') its owner. */
static store_bench_claim_outcome sb_decide(const store_bench_claim_spec *c, store_bench_status st,
                                           const char *owner, double age_s) {
    switch (st) {
    case STORE_BENCH_DONE: return STORE_BENCH_SKIP_DONE;
    case STORE_BENCH_FAILED:
    case STORE_BENCH_TIMEOUT: return c->retry_failed ? STORE_BENCH_RETAKEN : STORE_BENCH_SKIP_RESULT;
    case STORE_BENCH_RUNNING:
    default: return c->alive(owner, age_s, c->alive_ctx) ? STORE_BENCH_SKIP_BUSY : STORE_BENCH_RETAKEN;
    }
}

int store_bench_claim(kstore *s, const store_bench_claim_spec *c, int64_t *row_id,
                      store_bench_claim_outcome *out, kerr *e) {
    *row_id = 0;
    *out = STORE_BENCH_SKIP_BUSY;
    int rc = sb_check_claim(c, e);
    if (rc) return rc;
    if ((rc = store_op_begin(s, e))) return rc;
    sqlite3_stmt *st = NULL;
    rc = store_prep(s,
                    "SELECT id, status, owner, (julianday('now') - julianday(started_at)) * 86400.0 "
                    "FROM bench_results WHERE suite_key = ?1 AND problem_rel = ?2 AND "
                    "problem_sha = ?3",
                    &st, e);
    int found = 0;
    int64_t id = 0;
    store_bench_status status = STORE_BENCH_RUNNING;
    char *owner = NULL;
    double age = 0;
    if (!rc) {
        store_bind_text(st, 1, c->suite_key);
        store_bind_text(st, 2, c->problem_rel);
        store_bind_text(st, 3, c->problem_sha);
        int r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
            found = 1;
            id = sqlite3_column_int64(st, 0);
            if (store_bench_status_parse(store_col_text(st, 1), &status))
                rc = kerr_set(e, KOPT_E_STORE, "store %s: bench row %lld has an unknown status",
                              s->path, (long long)id);
            owner = store_col_dup(st, 2);
            age = store_col_double(st, 3);
            if (!isfinite(age)) age = 0;
        } else if (r != SQLITE_DONE) {
            rc = store_db_err(s, e, "looking up a bench problem");
        }
    }
    sqlite3_finalize(st);
    if (!rc && !found) {
        rc = sb_insert(s, c, &id, e);
        if (!rc) *out = STORE_BENCH_CLAIMED;
    } else if (!rc) {
        store_bench_claim_outcome d = sb_decide(c, status, owner, age);
        if (d == STORE_BENCH_RETAKEN) rc = sb_retake(s, c, id, e);
        if (!rc) *out = d;
    }
    free(owner);
    rc = store_op_end(s, rc, e);
    if (!rc) *row_id = id;
    return rc;
}

int store_bench_finish(kstore *s, const store_bench_end *f, int *updated, kerr *e) {
    *updated = 0;
    int rc;
    if ((rc = sb_need(f->owner, "owner", e))) return rc;
    if (f->status == STORE_BENCH_RUNNING || !store_bench_status_name(f->status))
        return store_misuse(e, "bench finish: the status must be done, failed or timeout");
    if ((rc = store_check_json("bench doc_json", f->doc_json, e))) return rc;
    if ((rc = store_op_begin(s, e))) return rc;
    sqlite3_stmt *st;
    rc = store_prep(s,
                    "UPDATE bench_results SET status = ?1, exit_code = ?2, wall_s = ?3, "
                    "disk_bytes = ?4, doc_json = ?5, ended_at = " BENCH_NOW " "
                    "WHERE id = ?6 AND status = 'running' AND owner = ?7",
                    &st, e);
    if (!rc) {
        store_bind_text(st, 1, store_bench_status_name(f->status));
        if (f->exit_code >= 0)
            sqlite3_bind_int(st, 2, f->exit_code);
        else
            sqlite3_bind_null(st, 2);
        store_bind_double(st, 3, f->wall_s);
        if (f->disk_bytes >= 0)
            sqlite3_bind_int64(st, 4, f->disk_bytes);
        else
            sqlite3_bind_null(st, 4);
        store_bind_text(st, 5, f->doc_json);
        sqlite3_bind_int64(st, 6, f->row_id);
        store_bind_text(st, 7, f->owner);
        if (sqlite3_step(st) == SQLITE_DONE)
            *updated = sqlite3_changes(s->db) > 0;
        else
            rc = store_db_err(s, e, "recording a bench result");
        sqlite3_finalize(st);
    }
    rc = store_op_end(s, rc, e);
    if (rc) *updated = 0;
    return rc;
}

int store_bench_release(kstore *s, int64_t row_id, const char *owner, kerr *e) {
    int rc = sb_need(owner, "owner", e);
    if (rc) return rc;
    if ((rc = store_op_begin(s, e))) return rc;
    sqlite3_stmt *st;
    rc = store_prep(s,
                    "DELETE FROM bench_results WHERE id = ?1 AND status = 'running' AND owner = ?2",
                    &st, e);
    if (!rc) {
        sqlite3_bind_int64(st, 1, row_id);
        store_bind_text(st, 2, owner);
        if (sqlite3_step(st) != SQLITE_DONE) rc = store_db_err(s, e, "releasing a bench problem");
        sqlite3_finalize(st);
    }
    return store_op_end(s, rc, e);
}

/* ---- reading ------------------------------------------------------------------------------ */

/* Frees a row's strings. */
static void sb_row_free(store_bench_row *r) {
    free(r->suite_key);
    free(r->problem_rel);
    free(r->problem_sha);
    free(r->gpu);
    free(r->owner);
    free(r->started_at);
    free(r->ended_at);
    free(r->doc_json);
}

void store_bench_rows_clear(store_bench_rowset *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) sb_row_free(&r->v[i]);
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

/* A row from the SELECT of store_bench_rows (columns in its order). */
static void sb_row_read(sqlite3_stmt *st, store_bench_row *r) {
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->suite_key = store_col_dup(st, 1);
    r->problem_rel = store_col_dup(st, 2);
    r->problem_sha = store_col_dup(st, 3);
    r->level = sqlite3_column_int(st, 4);
    r->gpu = store_col_dup(st, 5);
    r->budget_s = store_col_double(st, 6);
    r->max_autotune = sqlite3_column_int(st, 7);
    if (store_bench_status_parse(store_col_text(st, 8), &r->status)) r->status = STORE_BENCH_FAILED;
    r->exit_code = sqlite3_column_type(st, 9) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 9);
    r->owner = store_col_dup(st, 10);
    r->gpu_index = sqlite3_column_type(st, 11) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 11);
    r->started_at = store_col_dup(st, 12);
    r->ended_at = store_col_dup(st, 13);
    r->wall_s = store_col_double(st, 14);
    r->disk_bytes = sqlite3_column_type(st, 15) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 15);
    r->doc_json = store_col_dup(st, 16);
}

/* Rows by problem_rel, started_at, id (qsort). */
static int sb_row_cmp(const void *a, const void *b) {
    const store_bench_row *x = a, *y = b;
    int c = strcmp(x->problem_rel ? x->problem_rel : "", y->problem_rel ? y->problem_rel : "");
    if (c) return c;
    c = strcmp(x->started_at ? x->started_at : "", y->started_at ? y->started_at : "");
    if (c) return c;
    return (x->id > y->id) - (x->id < y->id);
}

int store_bench_rows(kstore *s, const char *const *keys, size_t nkeys, store_bench_rowset *out,
                     kerr *e) {
    store_bench_rows_clear(out);
    size_t cap = 0;
    for (size_t k = 0; k < nkeys; k++) {
        sqlite3_stmt *st;
        int rc = store_prep(s,
                            "SELECT id, suite_key, problem_rel, problem_sha, level, gpu, budget_s, "
                            "max_autotune, status, exit_code, owner, gpu_index, started_at, "
                            "ended_at, wall_s, disk_bytes, doc_json FROM bench_results "
                            "WHERE suite_key = ?1",
                            &st, e);
        if (rc) {
            store_bench_rows_clear(out);
            return rc;
        }
        store_bind_text(st, 1, keys[k]);
        int r;
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
            if (out->n == cap) {
                cap = cap ? 2 * cap : 16;
                out->v = krealloc(out->v, cap * sizeof *out->v);
            }
            sb_row_read(st, &out->v[out->n++]);
        }
        if (r != SQLITE_DONE) rc = store_db_err(s, e, "reading bench results");
        sqlite3_finalize(st);
        if (rc) {
            store_bench_rows_clear(out);
            return rc;
        }
    }
    if (out->n > 1) qsort(out->v, out->n, sizeof *out->v, sb_row_cmp);
    return 0;
}

int store_bench_gpus(kstore *s, double budget_s, int max_autotune, char ***names, size_t *n,
                     kerr *e) {
    *names = NULL;
    *n = 0;
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "SELECT DISTINCT gpu FROM bench_results WHERE abs(budget_s - ?1) < 1e-6 "
                        "AND max_autotune = ?2 ORDER BY gpu",
                        &st, e);
    if (rc) return rc;
    sqlite3_bind_double(st, 1, budget_s);
    sqlite3_bind_int(st, 2, max_autotune ? 1 : 0);
    kvec v = {0};
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) kvec_push(&v, store_col_dup(st, 0));
    if (r != SQLITE_DONE) rc = store_db_err(s, e, "listing the GPUs of bench results");
    sqlite3_finalize(st);
    if (rc) {
        kvec_free_all(&v, free);
        return rc;
    }
    *names = (char **)v.items;
    *n = v.len;
    return 0;
}

int store_bench_configs(kstore *s, char **out, kerr *e) {
    *out = NULL;
    sqlite3_stmt *st;
    int rc = store_prep(s, "SELECT DISTINCT budget_s, max_autotune FROM bench_results ORDER BY budget_s, max_autotune",
                        &st, e);
    if (rc) return rc;
    kbuf b = KBUF_INIT;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        kbuf_printf(&b, "%s%gs with max-autotune %s", b.len ? ", " : "", sqlite3_column_double(st, 0),
                    sqlite3_column_int(st, 1) ? "on" : "off");
    if (r != SQLITE_DONE) rc = store_db_err(s, e, "listing the configurations of bench results");
    sqlite3_finalize(st);
    if (rc) {
        kbuf_free(&b);
        return rc;
    }
    *out = kstrdup(kbuf_str(&b));
    kbuf_free(&b);
    return 0;
}
