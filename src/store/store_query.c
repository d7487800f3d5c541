/* store_query.c — the reads of the store: resume/reuse lookups, planner statistics,
 * experiences, LLM usage and the JSON export of a run. Contract in store.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/buf.h"

/* Finishes a row loop: SQLITE_DONE is success, anything else a database error. */
static int loop_end(kstore *s, int r, const char *what, kerr *e) {
    return r == SQLITE_DONE ? 0 : store_db_err(s, e, what);
}

static int need_text(const char *v, const char *field, kerr *e) {
    return v && *v ? 0 : store_misuse(e, "%s is required", field);
}

/* ---- resume and reuse --------------------------------------------------------------------- */

int store_attempt_seen(kstore *s, int64_t kernel_id, const char *candidate_sha,
                       store_seen *out, kerr *e) {
    memset(out, 0, sizeof *out);
    out->speedup = NAN;
    int rc = need_text(candidate_sha, "candidate_sha", e);
    if (rc) return rc;
    sqlite3_stmt *st;
    rc = store_prep(s,
                    "SELECT id, outcome, refused_gate, speedup FROM attempts "
                    "WHERE kernel_id = ?1 AND candidate_sha = ?2 AND outcome IS NOT NULL "
                    "ORDER BY CASE outcome WHEN 'accepted' THEN 0 WHEN 'refused' THEN 1 ELSE 2 END,"
                    " speedup DESC NULLS LAST, finished_at DESC, id DESC LIMIT 1",
                    &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, kernel_id);
    store_bind_text(st, 2, candidate_sha);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        out->seen = 1;
        out->attempt_id = sqlite3_column_int64(st, 0);
        out->outcome = store_verdict_parse(store_col_text(st, 1));
        if (out->outcome == STORE_NO_VERDICT) out->outcome = STORE_ERROR;
        out->refused_gate = sqlite3_column_int(st, 2);
        out->speedup = store_col_double(st, 3);
        r = SQLITE_DONE;
    }
    rc = loop_end(s, r, "looking up a candidate", e);
    sqlite3_finalize(st);
    if (rc) return rc;
    rc = store_prep(s,
                    "SELECT id FROM attempts WHERE kernel_id = ?1 AND candidate_sha = ?2 "
                    "AND outcome IS NULL ORDER BY created_at DESC, id DESC LIMIT 1",
                    &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, kernel_id);
    store_bind_text(st, 2, candidate_sha);
    r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        out->pending_id = sqlite3_column_int64(st, 0);
        r = SQLITE_DONE;
    }
    rc = loop_end(s, r, "looking up a pending candidate", e);
    sqlite3_finalize(st);
    return rc;
}

int store_best_for_kernel(kstore *s, const char *kernel_key, store_best *out, kerr *e) {
    memset(out, 0, sizeof *out);
    out->speedup = out->ci_lo = out->ci_hi = out->kernel_ms = out->base_ms = NAN;
    int rc = need_text(kernel_key, "kernel_key", e);
    if (rc) return rc;
    sqlite3_stmt *st;
    rc = store_prep(s,
                    "SELECT a.id, a.run_id, a.kernel_id, a.candidate_text, a.candidate_sha, "
                    "a.label, a.direction, a.speedup, a.ci_lo, a.ci_hi, a.kernel_ms, a.base_ms "
                    "FROM attempts a JOIN kernels k ON k.id = a.kernel_id "
                    "WHERE k.kernel_key = ?1 AND a.outcome = 'accepted' "
                    "ORDER BY a.speedup DESC NULLS LAST, a.ci_lo DESC NULLS LAST, "
                    "a.finished_at ASC, a.id ASC LIMIT 1",
                    &st, e);
    if (rc) return rc;
    store_bind_text(st, 1, kernel_key);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        out->found = 1;
        out->attempt_id = sqlite3_column_int64(st, 0);
        out->run_id = sqlite3_column_int64(st, 1);
        out->kernel_id = sqlite3_column_int64(st, 2);
        out->candidate_text = store_col_dup(st, 3);
        out->candidate_sha = store_col_dup(st, 4);
        out->label = store_col_dup(st, 5);
        out->direction = store_col_dup(st, 6);
        out->speedup = store_col_double(st, 7);
        out->ci_lo = store_col_double(st, 8);
        out->ci_hi = store_col_double(st, 9);
        out->kernel_ms = store_col_double(st, 10);
        out->base_ms = store_col_double(st, 11);
        r = SQLITE_DONE;
    }
    rc = loop_end(s, r, "looking up the best result of a kernel", e);
    sqlite3_finalize(st);
    if (rc) store_best_clear(out);
    return rc;
}

void store_best_clear(store_best *b) {
    if (!b) return;
    free(b->candidate_text);
    free(b->candidate_sha);
    free(b->label);
    free(b->direction);
    memset(b, 0, sizeof *b);
}

/* ---- planner statistics ------------------------------------------------------------------- */

#define DIRSTATS_COLS                                                                            \
    "count(*), total(a.outcome = 'accepted'), total(a.outcome = 'refused'), "                   \
    "total(a.outcome = 'error'), max(CASE WHEN a.outcome = 'accepted' THEN a.speedup END)"

int store_direction_stats(kstore *s, const char *kernel_kind, const char *direction,
                          store_dirstats *out, kerr *e) {
    memset(out, 0, sizeof *out);
    out->best_speedup = NAN;
    int rc;
    if ((rc = need_text(kernel_kind, "kernel kind", e)) ||
        (rc = need_text(direction, "direction", e)))
        return rc;
    sqlite3_stmt *st;
    rc = store_prep(s,
                    "SELECT " DIRSTATS_COLS " FROM attempts a JOIN kernels k ON k.id = a.kernel_id "
                    "WHERE k.kind = ?1 AND a.direction = ?2 AND a.outcome IS NOT NULL",
                    &st, e);
    if (rc) return rc;
    store_bind_text(st, 1, kernel_kind);
    store_bind_text(st, 2, direction);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        out->tries = sqlite3_column_int(st, 0);
        out->accepted = sqlite3_column_int(st, 1);
        out->refused = sqlite3_column_int(st, 2);
        out->errors = sqlite3_column_int(st, 3);
        out->best_speedup = store_col_double(st, 4);
        r = SQLITE_DONE;
    }
    rc = loop_end(s, r, "computing direction statistics", e);
    sqlite3_finalize(st);
    return rc;
}

int store_direction_table(kstore *s, const char *kernel_kind, json_t **out, kerr *e) {
    *out = NULL;
    int rc = need_text(kernel_kind, "kernel kind", e);
    if (rc) return rc;
    sqlite3_stmt *st;
    rc = store_prep(s,
                    "SELECT a.direction, " DIRSTATS_COLS " FROM attempts a "
                    "JOIN kernels k ON k.id = a.kernel_id "
                    "WHERE k.kind = ?1 AND a.outcome IS NOT NULL "
                    "GROUP BY a.direction ORDER BY count(*) DESC, a.direction",
                    &st, e);
    if (rc) return rc;
    store_bind_text(st, 1, kernel_kind);
    json_t *arr = json_array();
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        json_array_append_new(
            arr, json_pack("{s:o, s:I, s:I, s:I, s:I, s:o}", "direction", store_col_jtext(st, 0),
                           "tries", (json_int_t)sqlite3_column_int64(st, 1), "accepted",
                           (json_int_t)sqlite3_column_int64(st, 2), "refused",
                           (json_int_t)sqlite3_column_int64(st, 3), "errors",
                           (json_int_t)sqlite3_column_int64(st, 4), "best_speedup",
                           store_col_jreal(st, 5)));
    }
    rc = loop_end(s, r, "computing direction statistics", e);
    sqlite3_finalize(st);
    if (rc)
        json_decref(arr);
    else
        *out = arr;
    return rc;
}

int store_history_for_kernel(kstore *s, int64_t kernel_id, int limit, json_t **out, kerr *e) {
    *out = NULL;
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "SELECT id, run_id, plan_json, direction, label, outcome, refused_gate, "
                        "reason, speedup FROM ("
                        "  SELECT * FROM attempts WHERE kernel_id = ?1 AND outcome IS NOT NULL "
                        "  ORDER BY finished_at DESC, id DESC LIMIT ?2) "
                        "ORDER BY finished_at, id",
                        &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, kernel_id);
    sqlite3_bind_int(st, 2, limit > 0 ? limit : -1);
    json_t *arr = json_array();
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        json_array_append_new(
            arr, json_pack("{s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "attempt_id",
                           (json_int_t)sqlite3_column_int64(st, 0), "run_id",
                           (json_int_t)sqlite3_column_int64(st, 1), "plan", store_col_json(st, 2),
                           "direction", store_col_jtext(st, 3), "label", store_col_jtext(st, 4),
                           "outcome", store_col_jtext(st, 5), "gate", store_col_jint(st, 6),
                           "reason", store_col_jtext(st, 7), "speedup", store_col_jreal(st, 8)));
    }
    rc = loop_end(s, r, "reading a kernel's history", e);
    sqlite3_finalize(st);
    if (rc)
        json_decref(arr);
    else
        *out = arr;
    return rc;
}

/* ---- experiences -------------------------------------------------------------------------- */

static json_t *tags_of(sqlite3_stmt *st, int i) {
    json_t *t = store_col_json(st, i);
    if (json_is_array(t)) return t;
    json_t *arr = json_array();
    if (!json_is_null(t)) json_array_append(arr, t);
    json_decref(t);
    return arr;
}

int store_experiences_for(kstore *s, const char *kernel_kind, int limit, json_t **out, kerr *e) {
    *out = NULL;
    sqlite3_stmt *st;
    int rc = store_prep(
        s,
        "SELECT text, tags_json, name, kind, run_id, created_at FROM ("
        "  SELECT x.id, x.text, x.tags_json, k.name, k.kind, x.run_id, x.created_at,"
        "         row_number() OVER (PARTITION BY x.text"
        "                            ORDER BY x.created_at DESC, x.id DESC) AS rn"
        "  FROM experiences x JOIN kernels k ON k.id = x.kernel_id"
        "  WHERE ?1 IS NULL OR k.kind = ?1) "
        "WHERE rn = 1 ORDER BY created_at DESC, id DESC LIMIT ?2",
        &st, e);
    if (rc) return rc;
    store_bind_text(st, 1, kernel_kind && *kernel_kind ? kernel_kind : NULL);
    sqlite3_bind_int(st, 2, limit > 0 ? limit : -1);
    json_t *arr = json_array();
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        json_array_append_new(
            arr, json_pack("{s:o, s:o, s:o, s:o, s:I, s:o}", "text", store_col_jtext(st, 0),
                           "tags", tags_of(st, 1), "kernel", store_col_jtext(st, 2), "kind",
                           store_col_jtext(st, 3), "run_id",
                           (json_int_t)sqlite3_column_int64(st, 4), "created_at",
                           store_col_jtext(st, 5)));
    }
    rc = loop_end(s, r, "reading experiences", e);
    sqlite3_finalize(st);
    if (rc)
        json_decref(arr);
    else
        *out = arr;
    return rc;
}

/* ---- LLM usage ---------------------------------------------------------------------------- */

int store_llm_usage(kstore *s, int64_t run_id, json_t **out, kerr *e) {
    *out = NULL;
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "SELECT role, backend, model, count(*), total(ok = 0), total(tokens_in), "
                        "total(tokens_out), total(latency_ms), total(cost_usd) FROM llm_calls "
                        "WHERE ?1 IS NULL OR run_id = ?1 "
                        "GROUP BY role, backend, model ORDER BY role, backend, model",
                        &st, e);
    if (rc) return rc;
    store_bind_id(st, 1, run_id);
    json_t *by = json_array();
    json_int_t calls = 0, failed = 0, tin = 0, tout = 0;
    double lat = 0, cost = 0;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        json_int_t c = sqlite3_column_int64(st, 3), f = sqlite3_column_int64(st, 4);
        json_int_t i = sqlite3_column_int64(st, 5), o = sqlite3_column_int64(st, 6);
        double l = sqlite3_column_double(st, 7), u = sqlite3_column_double(st, 8);
        calls += c;
        failed += f;
        tin += i;
        tout += o;
        lat += l;
        cost += u;
        json_array_append_new(
            by, json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:I, s:f, s:f}", "role",
                          store_col_jtext(st, 0), "backend", store_col_jtext(st, 1), "model",
                          store_col_jtext(st, 2), "calls", c, "failed", f, "tokens_in", i,
                          "tokens_out", o, "latency_ms", l, "cost_usd", u));
    }
    rc = loop_end(s, r, "reading LLM usage", e);
    sqlite3_finalize(st);
    if (rc) {
        json_decref(by);
        return rc;
    }
    *out = json_pack("{s:I, s:I, s:I, s:I, s:f, s:f, s:o}", "calls", calls, "failed", failed,
                     "tokens_in", tin, "tokens_out", tout, "latency_ms", lat, "cost_usd", cost,
                     "by_model", by);
    return 0;
}

/* ---- export ------------------------------------------------------------------------------- */

static int export_run(kstore *s, int64_t run_id, json_t **run, kerr *e) {
    *run = NULL;
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "SELECT id, uuid, problem_path, problem_sha, gpu, torch_version, "
                        "config_json, host, started_at, ended_at, status, summary_json "
                        "FROM runs WHERE id = ?1",
                        &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        *run = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "id",
                         (json_int_t)sqlite3_column_int64(st, 0), "uuid", store_col_jtext(st, 1),
                         "problem_path", store_col_jtext(st, 2), "problem_sha",
                         store_col_jtext(st, 3), "gpu", store_col_jtext(st, 4), "torch_version",
                         store_col_jtext(st, 5), "config", store_col_json(st, 6), "host",
                         store_col_jtext(st, 7), "started_at", store_col_jtext(st, 8), "ended_at",
                         store_col_jtext(st, 9), "status", store_col_jtext(st, 10), "summary",
                         store_col_json(st, 11));
    } else if (r == SQLITE_DONE) {
        rc = kerr_set(e, KOPT_E_STORE, "store %s: exporting: no run %lld", s->path,
                      (long long)run_id);
    } else {
        rc = store_db_err(s, e, "exporting a run");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Kernels touched by the run, as an array, and an index id -> kernel object (borrowed). */
static int export_kernels(kstore *s, int64_t run_id, json_t *kernels, json_t *index, kerr *e) {
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "SELECT id, kernel_key, name, kind, source_sha, shapes_json, gpu "
                        "FROM kernels WHERE id IN (SELECT kernel_id FROM attempts WHERE run_id = ?1"
                        " UNION SELECT kernel_id FROM experiences WHERE run_id = ?1) ORDER BY id",
                        &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)sqlite3_column_int64(st, 0));
        json_t *k = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:[], s:n}", "id",
                              (json_int_t)sqlite3_column_int64(st, 0), "kernel_key",
                              store_col_jtext(st, 1), "name", store_col_jtext(st, 2), "kind",
                              store_col_jtext(st, 3), "source_sha", store_col_jtext(st, 4),
                              "shapes", store_col_json(st, 5), "gpu", store_col_jtext(st, 6),
                              "attempts", "best");
        json_array_append_new(kernels, k);
        json_object_set(index, key, k);
    }
    rc = loop_end(s, r, "exporting kernels", e);
    sqlite3_finalize(st);
    return rc;
}

static int export_attempts(kstore *s, int64_t run_id, json_t *index, json_t *counts, kerr *e) {
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "SELECT id, uuid, kernel_id, plan_json, direction, label, candidate_sha, "
                        "candidate_text, agent, created_at, outcome, refused_gate, reason, "
                        "speedup, ci_lo, ci_hi, kernel_ms, base_ms, gates_json, finished_at "
                        "FROM attempts WHERE run_id = ?1 ORDER BY id",
                        &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int r;
    json_int_t n[4] = {0};   /* accepted, refused, error, pending */
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *outcome = store_col_text(st, 10);
        store_verdict v = store_verdict_parse(outcome);
        int which = !outcome ? 3 : v == STORE_ACCEPTED ? 0 : v == STORE_REFUSED ? 1 : 2;
        n[which]++;
        json_t *a = json_pack(
            "{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:o, s:o, s:o, s:o,"
            " s:o, s:o, s:o}",
            "id", (json_int_t)sqlite3_column_int64(st, 0), "uuid", store_col_jtext(st, 1), "plan",
            store_col_json(st, 3), "direction", store_col_jtext(st, 4), "label",
            store_col_jtext(st, 5), "candidate_sha", store_col_jtext(st, 6), "candidate",
            store_col_jtext(st, 7), "agent", store_col_jtext(st, 8), "created_at",
            store_col_jtext(st, 9), "outcome", outcome ? outcome : "pending", "gate",
            store_col_jint(st, 11), "reason", store_col_jtext(st, 12), "speedup",
            store_col_jreal(st, 13), "ci_lo", store_col_jreal(st, 14), "ci_hi",
            store_col_jreal(st, 15), "kernel_ms", store_col_jreal(st, 16), "base_ms",
            store_col_jreal(st, 17), "gates", store_col_json(st, 18), "finished_at",
            store_col_jtext(st, 19));
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)sqlite3_column_int64(st, 2));
        json_t *k = json_object_get(index, key);
        if (!k || !a) {
            json_decref(a);
            continue;
        }
        json_array_append(json_object_get(k, "attempts"), a);
        /* The run's best accepted attempt for this kernel. */
        double sp = store_col_double(st, 13);
        json_t *best = json_object_get(k, "best");
        if (which == 0 && isfinite(sp) &&
            (json_is_null(best) || sp > json_real_value(json_object_get(best, "speedup"))))
            json_object_set_new(k, "best",
                                json_pack("{s:I, s:o, s:f, s:o, s:o}", "attempt_id",
                                          (json_int_t)sqlite3_column_int64(st, 0), "label",
                                          store_col_jtext(st, 5), "speedup", sp, "ci_lo",
                                          store_col_jreal(st, 14), "ci_hi",
                                          store_col_jreal(st, 15)));
        json_decref(a);
    }
    rc = loop_end(s, r, "exporting attempts", e);
    sqlite3_finalize(st);
    json_object_set_new(counts, "attempts", json_integer(n[0] + n[1] + n[2] + n[3]));
    json_object_set_new(counts, "accepted", json_integer(n[0]));
    json_object_set_new(counts, "refused", json_integer(n[1]));
    json_object_set_new(counts, "errors", json_integer(n[2]));
    json_object_set_new(counts, "pending", json_integer(n[3]));
    return rc;
}

static int export_experiences(kstore *s, int64_t run_id, json_t *arr, kerr *e) {
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "SELECT id, kernel_id, attempt_id, text, tags_json, created_at "
                        "FROM experiences WHERE run_id = ?1 ORDER BY id",
                        &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(
            arr, json_pack("{s:I, s:I, s:o, s:o, s:o, s:o}", "id",
                           (json_int_t)sqlite3_column_int64(st, 0), "kernel_id",
                           (json_int_t)sqlite3_column_int64(st, 1), "attempt_id",
                           store_col_jint(st, 2), "text", store_col_jtext(st, 3), "tags",
                           tags_of(st, 4), "created_at", store_col_jtext(st, 5)));
    rc = loop_end(s, r, "exporting experiences", e);
    sqlite3_finalize(st);
    return rc;
}

int store_export_json(kstore *s, int64_t run_id, json_t **out, kerr *e) {
    *out = NULL;
    json_t *run = NULL, *usage = NULL;
    json_t *kernels = json_array(), *index = json_object(), *exps = json_array();
    json_t *counts = json_object();
    int rc = export_run(s, run_id, &run, e);
    if (!rc) rc = export_kernels(s, run_id, kernels, index, e);
    if (!rc) rc = export_attempts(s, run_id, index, counts, e);
    if (!rc) rc = export_experiences(s, run_id, exps, e);
    if (!rc) rc = store_llm_usage(s, run_id, &usage, e);
    json_decref(index);
    if (rc) {
        json_decref(run);
        json_decref(kernels);
        json_decref(exps);
        json_decref(counts);
        return rc;
    }
    *out = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "format", "kopt.store.run/1", "run", run,
                     "counts", counts, "kernels", kernels, "experiences", exps, "llm_usage",
                     usage);
    return *out ? 0 : kerr_set(e, KOPT_E_INTERNAL, "store: building the export document failed");
}

/* ---- listing runs ------------------------------------------------------------------------- */

int store_runs_list(kstore *s, int limit, json_t **out, kerr *e) {
    *out = NULL;
    sqlite3_stmt *st;
    int rc = store_prep(s,
                        "SELECT id, problem_path, gpu, started_at, ended_at, status FROM runs "
                        "ORDER BY id DESC LIMIT ?1",
                        &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, limit > 0 ? limit : -1);
    json_t *arr = json_array();
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)sqlite3_column_int64(st, 0),
                                             "problem_path", store_col_jtext(st, 1), "gpu", store_col_jtext(st, 2),
                                             "started_at", store_col_jtext(st, 3), "ended_at", store_col_jtext(st, 4),
                                             "status", store_col_jtext(st, 5)));
    if (r != SQLITE_DONE) {
        json_decref(arr);
        rc = store_db_err(s, e, "listing runs");
    } else {
        *out = arr;
    }
    sqlite3_finalize(st);
    return rc;
}
