/* store_merge.c — store_merge: import another host's store file (contract in store.h).
 *
 * The other file is ATTACHed as `kopt_other` (its path bound as a parameter) and copied with
 * INSERT ... SELECT in one transaction. Ids are local to each file, so every reference is
 * remapped through a stable identity: kernels by kernel_key, runs, attempts, experiences and
 * LLM calls by their uuid, bench results by (suite_key, problem_rel, problem_sha). Rows already
 * present are left alone, except that a run which has ended there since, or an attempt that has
 * received its result there since, is completed here, and a bench result 'done' there replaces
 * one that is not 'done' here, a finished one there a 'running' one here (ON CONFLICT ... DO
 * UPDATE ... WHERE the local row is still open). */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_int.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

static const char *const TABLES[] = {"runs", "kernels", "attempts", "experiences", "llm_calls",
                                     "bench_results"};
#define NTABLES (sizeof TABLES / sizeof TABLES[0])

/* The copy statements, in dependency order. `WHERE true` separates the SELECT from the upsert
 * clause (SQLite's parsing rule for INSERT ... SELECT ... ON CONFLICT). */
static const char *const COPY[] = {
    "INSERT INTO main.kernels(kernel_key, name, kind, source_sha, shapes_json, gpu, source, "
    "first_seen) "
    "SELECT kernel_key, name, kind, source_sha, shapes_json, gpu, source, first_seen "
    "FROM kopt_other.kernels WHERE true ORDER BY id "
    "ON CONFLICT(kernel_key) DO UPDATE SET source = excluded.source "
    "WHERE kernels.source IS NULL AND excluded.source IS NOT NULL",

    "INSERT INTO main.runs(uuid, problem_path, problem_sha, gpu, torch_version, config_json, "
    "host, started_at, ended_at, status, summary_json) "
    "SELECT uuid, problem_path, problem_sha, gpu, torch_version, config_json, host, started_at, "
    "ended_at, status, summary_json FROM kopt_other.runs WHERE true ORDER BY id "
    "ON CONFLICT(uuid) DO UPDATE SET ended_at = excluded.ended_at, status = excluded.status, "
    "summary_json = excluded.summary_json "
    "WHERE runs.ended_at IS NULL AND excluded.ended_at IS NOT NULL",

    "INSERT INTO main.attempts(uuid, run_id, kernel_id, plan_json, direction, label, "
    "candidate_sha, candidate_text, agent, created_at, outcome, refused_gate, reason, speedup, "
    "ci_lo, ci_hi, kernel_ms, base_ms, gates_json, finished_at) "
    "SELECT a.uuid, (SELECT id FROM main.runs WHERE uuid = r.uuid), "
    "(SELECT id FROM main.kernels WHERE kernel_key = k.kernel_key), a.plan_json, a.direction, "
    "a.label, a.candidate_sha, a.candidate_text, a.agent, a.created_at, a.outcome, "
    "a.refused_gate, a.reason, a.speedup, a.ci_lo, a.ci_hi, a.kernel_ms, a.base_ms, a.gates_json, "
    "a.finished_at FROM kopt_other.attempts a JOIN kopt_other.runs r ON r.id = a.run_id "
    "JOIN kopt_other.kernels k ON k.id = a.kernel_id WHERE true ORDER BY a.id "
    "ON CONFLICT(uuid) DO UPDATE SET outcome = excluded.outcome, "
    "refused_gate = excluded.refused_gate, reason = excluded.reason, speedup = excluded.speedup, "
    "ci_lo = excluded.ci_lo, ci_hi = excluded.ci_hi, kernel_ms = excluded.kernel_ms, "
    "base_ms = excluded.base_ms, gates_json = excluded.gates_json, "
    "finished_at = excluded.finished_at "
    "WHERE attempts.outcome IS NULL AND excluded.outcome IS NOT NULL",

    "INSERT INTO main.experiences(uuid, run_id, kernel_id, attempt_id, text, tags_json, "
    "created_at) "
    "SELECT x.uuid, (SELECT id FROM main.runs WHERE uuid = r.uuid), "
    "(SELECT id FROM main.kernels WHERE kernel_key = k.kernel_key), "
    "(SELECT m.id FROM main.attempts m JOIN kopt_other.attempts oa ON oa.uuid = m.uuid "
    " WHERE oa.id = x.attempt_id), x.text, x.tags_json, x.created_at "
    "FROM kopt_other.experiences x JOIN kopt_other.runs r ON r.id = x.run_id "
    "JOIN kopt_other.kernels k ON k.id = x.kernel_id WHERE true ORDER BY x.id "
    "ON CONFLICT(uuid) DO NOTHING",

    "INSERT INTO main.llm_calls(uuid, run_id, role, backend, model, tokens_in, tokens_out, "
    "latency_ms, cost_usd, ok, error, created_at) "
    "SELECT c.uuid, (SELECT id FROM main.runs WHERE uuid = r.uuid), c.role, c.backend, c.model, "
    "c.tokens_in, c.tokens_out, c.latency_ms, c.cost_usd, c.ok, c.error, c.created_at "
    "FROM kopt_other.llm_calls c LEFT JOIN kopt_other.runs r ON r.id = c.run_id "
    "WHERE true ORDER BY c.id ON CONFLICT(uuid) DO NOTHING",

    /* bench results: one row per (suite_key, problem_rel, problem_sha); a 'done' row there
     * replaces a row here that is not 'done', a 'failed'/'timeout' row there a 'running' one
     * here (an earlier merge caught it running); a 'done' row here is never replaced */
    "INSERT INTO main.bench_results(suite_key, problem_rel, problem_sha, level, gpu, budget_s, "
    "max_autotune, status, exit_code, owner, gpu_index, started_at, ended_at, wall_s, "
    "disk_bytes, doc_json) "
    "SELECT suite_key, problem_rel, problem_sha, level, gpu, budget_s, max_autotune, status, "
    "exit_code, owner, gpu_index, started_at, ended_at, wall_s, disk_bytes, doc_json "
    "FROM kopt_other.bench_results WHERE true ORDER BY id "
    "ON CONFLICT(suite_key, problem_rel, problem_sha) DO UPDATE SET level = excluded.level, "
    "gpu = excluded.gpu, budget_s = excluded.budget_s, max_autotune = excluded.max_autotune, "
    "status = excluded.status, exit_code = excluded.exit_code, owner = excluded.owner, "
    "gpu_index = excluded.gpu_index, started_at = excluded.started_at, "
    "ended_at = excluded.ended_at, wall_s = excluded.wall_s, disk_bytes = excluded.disk_bytes, "
    "doc_json = excluded.doc_json "
    "WHERE bench_results.status <> 'done' AND (excluded.status = 'done' OR "
    "(bench_results.status = 'running' AND excluded.status <> 'running'))",
};

static int count_rows(kstore *s, int64_t counts[NTABLES], kerr *e) {
    for (size_t i = 0; i < NTABLES; i++) {
        char *sql = kasprintf("SELECT count(*) FROM main.%s", TABLES[i]);   /* fixed names */
        sqlite3_stmt *st;
        int rc = store_prep(s, sql, &st, e);
        free(sql);
        if (rc) return rc;
        if (sqlite3_step(st) == SQLITE_ROW) {
            counts[i] = sqlite3_column_int64(st, 0);
        } else {
            rc = store_db_err(s, e, "counting rows");
        }
        sqlite3_finalize(st);
        if (rc) return rc;
    }
    return 0;
}

/* The attached file must be a kopt store of the same schema version. */
static int other_err(kstore *s, const char *other, kerr *e) {
    return kerr_set(e, KOPT_E_STORE, "store %s: merging %s: %s; hint: the file to merge must be "
                    "a kopt store (another host's $KOPT_STORE)", s->path, other,
                    sqlite3_errmsg(s->db));
}

/* One integer from a query on the attached file; -1 when it cannot be read. */
static int other_int(kstore *s, const char *sql, int64_t *out) {
    sqlite3_stmt *st = NULL;
    int ok = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
    if (ok) *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return ok ? 0 : -1;
}

static int check_other(kstore *s, const char *other, kerr *e) {
    int64_t app = 0, v = 0, odd = 0;
    if (other_int(s, "PRAGMA kopt_other.application_id", &app)) return other_err(s, other, e);
    if (app != STORE_APP_ID)
        return kerr_set(e, KOPT_E_STORE, "store %s: merging %s: not a kopt store", s->path, other);
    if (other_int(s, "SELECT max(version) FROM kopt_other.schema_version", &v) ||
        /* a kopt store has tables and indexes only: a view or trigger in the file (a `runs`
         * that is a recursive view, a trigger writing elsewhere) is not to be read, let alone run */
        other_int(s, "SELECT count(*) FROM kopt_other.sqlite_schema WHERE type IN ('view', 'trigger')", &odd))
        return other_err(s, other, e);
    if (odd > 0)
        return kerr_set(e, KOPT_E_STORE, "store %s: merging %s: the file defines %lld view(s) or trigger(s), which a kopt "
                        "store never has; refused", s->path, other, (long long)odd);
    if (v != STORE_SCHEMA_VERSION)
        return kerr_set(e, KOPT_E_STORE,
                        "store %s: merging %s: schema version %lld, this kopt writes %d; hint: "
                        "open it once with this kopt to migrate it, or upgrade kopt",
                        s->path, other, (long long)v, STORE_SCHEMA_VERSION);
    return 0;
}

int store_merge(kstore *s, const char *other_path, store_merge_stats *stats, kerr *e) {
    if (stats) memset(stats, 0, sizeof *stats);
    if (!other_path || !*other_path) return store_misuse(e, "store_merge: no path");
    if (store_in_transaction(s))
        return store_misuse(e, "store_merge cannot run inside a transaction (SQLite cannot "
                               "ATTACH a database inside one)");
    if (fs_is_dir(other_path) || !fs_exists(other_path))
        return kerr_set(e, KOPT_E_STORE, "store %s: merging %s: no such store file", s->path,
                        other_path);
    char *a = fs_realpath(s->path), *b = fs_realpath(other_path);
    int same = a && b && strcmp(a, b) == 0;
    free(a);
    free(b);
    if (same)
        return kerr_set(e, KOPT_E_STORE, "store %s: cannot merge a store into itself", s->path);

    sqlite3_stmt *st;
    int rc = store_prep(s, "ATTACH DATABASE ?1 AS kopt_other", &st, e);
    if (rc) return rc;
    store_bind_text(st, 1, other_path);
    if (sqlite3_step(st) != SQLITE_DONE) rc = other_err(s, other_path, e);
    sqlite3_finalize(st);
    if (rc) return rc;

    int64_t before[NTABLES] = {0}, after[NTABLES] = {0};
    int updated = 0;
    rc = check_other(s, other_path, e);
    if (!rc) rc = store_exec(s, "BEGIN IMMEDIATE", "starting the merge", e);
    if (!rc) {
        rc = count_rows(s, before, e);
        for (size_t i = 0; !rc && i < sizeof COPY / sizeof COPY[0]; i++) {
            rc = store_exec(s, COPY[i], "copying rows", e);
            if (!rc) updated += sqlite3_changes(s->db);
        }
        if (!rc) rc = count_rows(s, after, e);
        if (rc) {
            kerr_wrap(e, "merging %s", other_path);
            sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        } else if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
            rc = store_db_err(s, e, "committing the merge");
            if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        }
    }
    if (sqlite3_exec(s->db, "DETACH DATABASE kopt_other", NULL, NULL, NULL) != SQLITE_OK)
        log_warn("store %s: detaching %s after the merge: %s", s->path, other_path,
                 sqlite3_errmsg(s->db));
    if (rc || !stats) return rc;
    int added[NTABLES];
    int total_added = 0;
    for (size_t i = 0; i < NTABLES; i++) {
        added[i] = (int)(after[i] - before[i]);
        total_added += added[i];
    }
    stats->runs = added[0];
    stats->kernels = added[1];
    stats->attempts = added[2];
    stats->experiences = added[3];
    stats->llm_calls = added[4];
    stats->bench_results = added[5];
    stats->updated = updated - total_added;   /* changes = inserted + updated rows */
    return 0;
}
