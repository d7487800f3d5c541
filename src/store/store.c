/* store.c — opening, schema, transactions, shared helpers, and the writes of the store
 * (runs, kernels, attempts, experiences, LLM calls). Contract in store.h, schema in
 * docs/STORE.md. */
#include "store/store.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store_int.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/owner.h"

#define NOW "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* The v1 schema (without its version row: apply_schema_steps records versions). Documented in
 * docs/STORE.md. */
static const char SCHEMA_V1[] =
    "CREATE TABLE schema_version ("
    "  version INTEGER PRIMARY KEY,"
    "  applied_at TEXT NOT NULL DEFAULT (" NOW "));"
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY,"
    "  uuid TEXT NOT NULL UNIQUE,"
    "  problem_path TEXT NOT NULL,"
    "  problem_sha TEXT NOT NULL,"
    "  gpu TEXT NOT NULL,"
    "  torch_version TEXT,"
    "  config_json TEXT,"
    "  host TEXT,"
    "  started_at TEXT NOT NULL DEFAULT (" NOW "),"
    "  ended_at TEXT,"
    "  status TEXT,"
    "  summary_json TEXT,"
    "  CHECK ((ended_at IS NULL) = (status IS NULL)));"
    "CREATE INDEX runs_by_problem ON runs(problem_sha, gpu, started_at);"
    "CREATE TABLE kernels ("
    "  id INTEGER PRIMARY KEY,"
    "  kernel_key TEXT NOT NULL UNIQUE,"
    "  name TEXT NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  source_sha TEXT NOT NULL,"
    "  shapes_json TEXT NOT NULL,"
    "  gpu TEXT NOT NULL,"
    "  source TEXT,"
    "  first_seen TEXT NOT NULL DEFAULT (" NOW "));"
    "CREATE INDEX kernels_by_kind ON kernels(kind);"
    "CREATE TABLE attempts ("
    "  id INTEGER PRIMARY KEY,"
    "  uuid TEXT NOT NULL UNIQUE,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),"
    "  kernel_id INTEGER NOT NULL REFERENCES kernels(id),"
    "  plan_json TEXT,"
    "  direction TEXT NOT NULL,"
    "  label TEXT,"
    "  candidate_sha TEXT NOT NULL,"
    "  candidate_text TEXT NOT NULL,"
    "  agent TEXT,"
    "  created_at TEXT NOT NULL DEFAULT (" NOW "),"
    "  outcome TEXT CHECK (outcome IN ('accepted', 'refused', 'error')),"
    "  refused_gate INTEGER CHECK (refused_gate >= 1),"
    "  reason TEXT,"
    "  speedup REAL,"
    "  ci_lo REAL,"
    "  ci_hi REAL,"
    "  kernel_ms REAL,"
    "  base_ms REAL,"
    "  gates_json TEXT,"
    "  finished_at TEXT,"
    "  CHECK ((outcome IS NULL) = (finished_at IS NULL)),"
    "  CHECK ((outcome = 'refused') = (refused_gate IS NOT NULL)));"
    "CREATE INDEX attempts_by_kernel ON attempts(kernel_id, candidate_sha);"
    "CREATE INDEX attempts_by_run ON attempts(run_id);"
    "CREATE TABLE experiences ("
    "  id INTEGER PRIMARY KEY,"
    "  uuid TEXT NOT NULL UNIQUE,"
    "  run_id INTEGER NOT NULL REFERENCES runs(id),"
    "  kernel_id INTEGER NOT NULL REFERENCES kernels(id),"
    "  attempt_id INTEGER REFERENCES attempts(id),"
    "  text TEXT NOT NULL,"
    "  tags_json TEXT,"
    "  created_at TEXT NOT NULL DEFAULT (" NOW "));"
    "CREATE INDEX experiences_by_kernel ON experiences(kernel_id);"
    "CREATE INDEX experiences_by_run ON experiences(run_id);"
    "CREATE TABLE llm_calls ("
    "  id INTEGER PRIMARY KEY,"
    "  uuid TEXT NOT NULL UNIQUE,"
    "  run_id INTEGER REFERENCES runs(id),"
    "  role TEXT NOT NULL,"
    "  backend TEXT NOT NULL,"
    "  model TEXT NOT NULL,"
    "  tokens_in INTEGER NOT NULL DEFAULT 0,"
    "  tokens_out INTEGER NOT NULL DEFAULT 0,"
    "  latency_ms REAL,"
    "  cost_usd REAL,"
    "  ok INTEGER NOT NULL CHECK (ok IN (0, 1)),"
    "  error TEXT,"
    "  created_at TEXT NOT NULL DEFAULT (" NOW "));"
    "CREATE INDEX llm_calls_by_run ON llm_calls(run_id);";

/* Version 2: the results of `kopt bench`, one row per (suite run config, problem, problem
 * file content). Applied on top of v1, by a fresh store_open as by the migration of a v1 file. */
static const char SCHEMA_V2[] =
    "CREATE TABLE bench_results ("
    "  id INTEGER PRIMARY KEY,"
    "  suite_key TEXT NOT NULL,"
    "  problem_rel TEXT NOT NULL,"
    "  problem_sha TEXT NOT NULL,"
    "  level INTEGER NOT NULL,"
    "  gpu TEXT NOT NULL,"
    "  budget_s REAL NOT NULL,"
    "  max_autotune INTEGER NOT NULL CHECK (max_autotune IN (0, 1)),"
    "  status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'timeout')),"
    "  exit_code INTEGER,"
    "  owner TEXT,"
    "  gpu_index INTEGER,"
    "  started_at TEXT NOT NULL DEFAULT (" NOW "),"
    "  ended_at TEXT,"
    "  wall_s REAL,"
    "  disk_bytes INTEGER,"
    "  doc_json TEXT,"
    "  UNIQUE (suite_key, problem_rel, problem_sha),"
    "  CHECK ((status = 'running') = (ended_at IS NULL)));"
    "CREATE INDEX bench_results_by_config ON bench_results(budget_s, max_autotune, gpu);";

/* Version 3: a run has an owner ("host:pid" of the kopt process that runs it, util/owner.h), so
 * that a second kopt on the same problem never adopts a run that is still alive. Runs of older
 * stores have none (they count as another host's: taken over once stale). */
static const char SCHEMA_V3[] = "ALTER TABLE runs ADD COLUMN owner TEXT;";

/* The schema steps: MIGRATIONS[v - 1] brings a store of version v - 1 to version v (index 0 is
 * the v1 schema itself, applied to an empty file). */
static const char *const MIGRATIONS[] = {SCHEMA_V1, SCHEMA_V2, SCHEMA_V3};
_Static_assert(sizeof MIGRATIONS / sizeof MIGRATIONS[0] == STORE_SCHEMA_VERSION,
               "one schema step per version");

/* Applies the steps after `from` up to STORE_SCHEMA_VERSION and records each applied version
 * (a fresh store records only the version it was created at). Inside init_schema's
 * transaction. */
static int apply_schema_steps(kstore *s, int64_t from, kerr *e) {
    for (int64_t v = from + 1; v <= STORE_SCHEMA_VERSION; v++) {
        int rc = store_exec(s, MIGRATIONS[v - 1],
                            from == 0 ? "creating the schema" : "migrating the schema", e);
        if (rc) return rc;
        if (from == 0 && v < STORE_SCHEMA_VERSION) continue;
        sqlite3_stmt *st;
        if ((rc = store_prep(s, "INSERT INTO schema_version(version) VALUES (?1)", &st, e)))
            return rc;
        sqlite3_bind_int64(st, 1, v);
        if (sqlite3_step(st) != SQLITE_DONE) rc = store_db_err(s, e, "recording the schema version");
        sqlite3_finalize(st);
        if (rc) return rc;
    }
    if (from > 0 && from < STORE_SCHEMA_VERSION)
        log_info("store %s: migrated from schema version %lld to %d", s->path, (long long)from,
                 STORE_SCHEMA_VERSION);
    return 0;
}

/* ---- helpers ------------------------------------------------------------------------------ */

static const char *hint_for(int primary) {
    switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return "; hint: another process held the store's lock for more than 5 s";
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
        return "; hint: the file is damaged or is not a kopt store; move it aside (a new store "
               "is then created) or choose another path with $KOPT_STORE";
    case SQLITE_CANTOPEN:
        return "; hint: check that the path is a file in a writable directory";
    case SQLITE_READONLY:
        return "; hint: the store file or its directory is read-only";
    case SQLITE_FULL:
        return "; hint: the disk is full";
    default:
        return "";
    }
}

int store_db_err(kstore *s, kerr *e, const char *what) {
    int code = s && s->db ? sqlite3_extended_errcode(s->db) : SQLITE_ERROR;
    const char *msg = s && s->db ? sqlite3_errmsg(s->db) : "no database";
    return kerr_set(e, KOPT_E_STORE, "store %s: %s: %s%s", s && s->path ? s->path : "?", what, msg,
                    hint_for(code & 0xff));
}

int store_misuse(kerr *e, const char *fmt, ...) {
    char buf[sizeof e->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return kerr_set(e, KOPT_E_INTERNAL, "store: %s", buf);
}

int store_prep(kstore *s, const char *sql, sqlite3_stmt **st, kerr *e) {
    *st = NULL;
    if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK) {
        sqlite3_finalize(*st);
        *st = NULL;
        return store_db_err(s, e, "preparing a statement");
    }
    return 0;
}

int store_exec(kstore *s, const char *sql, const char *what, kerr *e) {
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return store_db_err(s, e, what ? what : sql);
    return 0;
}

int store_op_begin(kstore *s, kerr *e) {
    s->op_savepoint = !sqlite3_get_autocommit(s->db);
    return store_exec(s, s->op_savepoint ? "SAVEPOINT kopt_op" : "BEGIN IMMEDIATE",
                      "starting a write transaction", e);
}

int store_op_end(kstore *s, int rc, kerr *e) {
    /* SQLite may already have rolled the whole transaction back on some errors (I/O, full
     * disk); the rollback statements below then fail harmlessly. */
    if (s->op_savepoint) {
        if (rc == 0) {
            if (sqlite3_exec(s->db, "RELEASE kopt_op", NULL, NULL, NULL) == SQLITE_OK) return 0;
            rc = store_db_err(s, e, "releasing a savepoint");
        }
        if (sqlite3_exec(s->db, "ROLLBACK TO kopt_op", NULL, NULL, NULL) == SQLITE_OK)
            sqlite3_exec(s->db, "RELEASE kopt_op", NULL, NULL, NULL);
        return rc;
    }
    if (rc == 0) {
        if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return 0;
        rc = store_db_err(s, e, "committing");
    }
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int store_bind_text(sqlite3_stmt *st, int i, const char *v) {
    return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

int store_bind_double(sqlite3_stmt *st, int i, double v) {
    return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

int store_bind_id(sqlite3_stmt *st, int i, int64_t v) {
    return v > 0 ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
}

const char *store_col_text(sqlite3_stmt *st, int i) {
    return (const char *)sqlite3_column_text(st, i);
}

char *store_col_dup(sqlite3_stmt *st, int i) {
    const char *t = store_col_text(st, i);
    return t ? kstrdup(t) : NULL;
}

double store_col_double(sqlite3_stmt *st, int i) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

json_t *store_col_json(sqlite3_stmt *st, int i) {
    const char *t = store_col_text(st, i);
    if (!t) return json_null();
    json_t *v = json_loads(t, JSON_DECODE_ANY, NULL);
    return v ? v : json_string(t);
}

json_t *store_col_jtext(sqlite3_stmt *st, int i) {
    const char *t = store_col_text(st, i);
    if (!t) return json_null();
    json_t *v = json_string(t);
    return v ? v : json_null();   /* not UTF-8 (only possible from a foreign writer) */
}

json_t *store_col_jreal(sqlite3_stmt *st, int i) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                     : json_real(sqlite3_column_double(st, i));
}

json_t *store_col_jint(sqlite3_stmt *st, int i) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
                                                     : json_integer(sqlite3_column_int64(st, i));
}

int store_check_json(const char *field, const char *v, kerr *e) {
    if (!v) return 0;
    json_error_t je;
    json_t *j = json_loads(v, JSON_DECODE_ANY, &je);
    if (!j) return store_misuse(e, "%s is not valid JSON: %s (line %d)", field, je.text, je.line);
    json_decref(j);
    return 0;
}

static int need(const char *v, const char *field, kerr *e) {
    if (v && *v) return 0;
    return store_misuse(e, "%s is required", field);
}

/* A random (version 4) UUID from SQLite's PRNG (seeded from the OS). */
static void new_uuid(char out[37]) {
    unsigned char b[16];
    sqlite3_randomness(sizeof b, b);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = '\0';
}

/* Steps a statement that returns no row. */
static int step_done(kstore *s, sqlite3_stmt *st, const char *what, kerr *e) {
    int r = sqlite3_step(st);
    if (r == SQLITE_DONE) return 0;
    return store_db_err(s, e, what);
}

/* ---- opening ------------------------------------------------------------------------------ */

static int query_int(kstore *s, const char *sql, int64_t *v, kerr *e) {
    sqlite3_stmt *st;
    int rc = store_prep(s, sql, &st, e);
    if (rc) return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        *v = sqlite3_column_int64(st, 0);
    } else if (r == SQLITE_DONE) {
        *v = 0;
    } else {
        rc = store_db_err(s, e, "reading the schema");
    }
    sqlite3_finalize(st);
    return rc;
}

static int foreign_err(kstore *s, kerr *e) {
    return kerr_set(e, KOPT_E_STORE,
                    "store %s: an SQLite database of another application (not a kopt store); "
                    "hint: choose another path with $KOPT_STORE", s->path);
}

/* Reads the header and the schema table without writing: a file that is not a database, is
 * damaged, or belongs to another application is refused here. */
static int probe(kstore *s, kerr *e) {
    int64_t v[2] = {0, 0};
    const char *sql[2] = {"PRAGMA application_id", "SELECT count(*) FROM sqlite_schema"};
    for (int i = 0; i < 2; i++) {
        sqlite3_stmt *st = NULL;
        int ok = sqlite3_prepare_v2(s->db, sql[i], -1, &st, NULL) == SQLITE_OK &&
                 sqlite3_step(st) == SQLITE_ROW;
        if (ok) v[i] = sqlite3_column_int64(st, 0);
        int rc = ok ? 0 : store_db_err(s, e, "cannot open");
        sqlite3_finalize(st);
        if (rc) return rc;
    }
    if (v[0] != STORE_APP_ID && !(v[0] == 0 && v[1] == 0)) return foreign_err(s, e);
    return 0;
}

/* Creates the schema in an empty database, or checks (and migrates) an existing one; inside a
 * write transaction, so that two processes opening a new store do not both create it. */
static int init_schema(kstore *s, kerr *e) {
    int rc = store_exec(s, "BEGIN IMMEDIATE", "starting a write transaction", e);
    if (rc) return rc;
    int64_t app = 0, ntables = 0, version = 0;
    rc = query_int(s, "PRAGMA application_id", &app, e);
    if (!rc) rc = query_int(s, "SELECT count(*) FROM sqlite_schema", &ntables, e);
    if (rc) goto out;
    if (app == 0 && ntables == 0) {
        rc = apply_schema_steps(s, 0, e);
        if (!rc)   /* STORE_APP_ID; a pragma takes no bound parameter */
            rc = store_exec(s, "PRAGMA application_id = 1263489108", "creating the schema", e);
        goto out;
    }
    if (app != STORE_APP_ID) {
        rc = foreign_err(s, e);
        goto out;
    }
    rc = query_int(s, "SELECT max(version) FROM schema_version", &version, e);
    if (rc) goto out;
    if (version > STORE_SCHEMA_VERSION) {
        rc = kerr_set(e, KOPT_E_STORE,
                      "store %s: written by a newer kopt (schema version %lld, this kopt knows up "
                      "to %d); hint: upgrade kopt or use another store", s->path,
                      (long long)version, STORE_SCHEMA_VERSION);
        goto out;
    }
    if (version < 1) {
        rc = kerr_set(e, KOPT_E_STORE, "store %s: damaged: no schema version recorded", s->path);
        goto out;
    }
    rc = apply_schema_steps(s, version, e);   /* nothing to do when already current */
out:
    if (rc) {
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = store_db_err(s, e, "initialising the store");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

static int mkdir_parent(const char *path, kerr *e) {
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path) return 0;
    char *dir = kstrndup(path, (size_t)(slash - path));
    int rc = fs_is_dir(dir) ? 0 : fs_mkdirs(dir, e);
    if (rc) {
        rc = KOPT_E_STORE;
        if (e) e->code = rc;
        kerr_wrap(e, "store %s: cannot create its directory", path);
    }
    free(dir);
    return rc;
}

int store_open(const char *path, kstore **out, kerr *e) {
    *out = NULL;
    if (!path || !*path) return store_misuse(e, "store_open: no path");
    if (fs_is_dir(path))
        return kerr_set(e, KOPT_E_STORE,
                        "store %s: is a directory, not a store file; hint: give a file path such "
                        "as %s/store.sqlite", path, path);
    int rc = strcmp(path, ":memory:") == 0 ? 0 : mkdir_parent(path, e);
    if (rc) return rc;

    kstore *s = kcalloc(1, sizeof *s);
    s->path = kstrdup(path);
    if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        rc = store_db_err(s, e, "cannot open");
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_timeout(s->db, 5000);
    /* Look before changing anything: the first read is where a damaged or foreign file shows,
     * and another application's database must not even be switched to WAL. */
    if ((rc = probe(s, e))) goto fail;
    if (sqlite3_db_readonly(s->db, "main") == 1) {
        rc = kerr_set(e, KOPT_E_STORE,
                      "store %s: the file is read-only; hint: kopt records every attempt, give "
                      "it a writable store ($KOPT_STORE)", path);
        goto fail;
    }
    char *mode = NULL;
    sqlite3_stmt *st;
    if ((rc = store_prep(s, "PRAGMA journal_mode = WAL", &st, e))) goto fail;
    if (sqlite3_step(st) == SQLITE_ROW)
        mode = store_col_dup(st, 0);
    else
        rc = store_db_err(s, e, "setting the journal mode");
    sqlite3_finalize(st);
    if (rc) goto fail;
    if (mode && strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0)
        log_warn("store %s: WAL journal unavailable (journal mode %s); concurrent readers will "
                 "wait for writers", path, mode);
    free(mode);
    if ((rc = store_exec(s, "PRAGMA foreign_keys = ON", NULL, e)) ||
        (rc = store_exec(s, "PRAGMA synchronous = NORMAL", NULL, e)) || (rc = init_schema(s, e)))
        goto fail;
    *out = s;
    return 0;
fail:
    store_close(s);
    return rc;
}

void store_close(kstore *s) {
    if (!s) return;
    if (s->db) {
        if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        sqlite3_close_v2(s->db);
    }
    free(s->path);
    free(s);
}

const char *store_path(const kstore *s) {
    return s ? s->path : NULL;
}

/* ---- transactions ------------------------------------------------------------------------- */

int store_begin(kstore *s, kerr *e) {
    if (!sqlite3_get_autocommit(s->db))
        return store_misuse(e, "store_begin: a transaction is already open");
    return store_exec(s, "BEGIN IMMEDIATE", "starting a transaction", e);
}

int store_commit(kstore *s, kerr *e) {
    if (sqlite3_get_autocommit(s->db))
        return store_misuse(e, "store_commit: no transaction is open");
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return 0;
    int rc = store_db_err(s, e, "committing");
    if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

void store_rollback(kstore *s) {
    if (s && s->db && !sqlite3_get_autocommit(s->db))
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_in_transaction(const kstore *s) {
    return s && s->db && !sqlite3_get_autocommit(s->db);
}

/* ---- runs --------------------------------------------------------------------------------- */

int store_run_begin(kstore *s, const store_run *r, int64_t *run_id, kerr *e) {
    *run_id = 0;
    int rc;
    if ((rc = need(r->problem_path, "run problem_path", e)) ||
        (rc = need(r->problem_sha, "run problem_sha", e)) || (rc = need(r->gpu, "run gpu", e)) ||
        (rc = store_check_json("run config_json", r->config_json, e)))
        return rc;
    char uuid[37], host[256] = "";
    new_uuid(uuid);
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    char *owner = owner_self();
    sqlite3_stmt *st = NULL;
    if ((rc = store_op_begin(s, e))) { free(owner); return rc; }
    rc = store_prep(s,
                    "INSERT INTO runs(uuid, problem_path, problem_sha, gpu, torch_version, "
                    "config_json, host, owner) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                    &st, e);
    if (!rc) {
        store_bind_text(st, 1, uuid);
        store_bind_text(st, 2, r->problem_path);
        store_bind_text(st, 3, r->problem_sha);
        store_bind_text(st, 4, r->gpu);
        store_bind_text(st, 5, r->torch_version);
        store_bind_text(st, 6, r->config_json);
        store_bind_text(st, 7, host[0] ? host : NULL);
        store_bind_text(st, 8, owner);
        rc = step_done(s, st, "starting a run", e);
        if (!rc) *run_id = sqlite3_last_insert_rowid(s->db);
    }
    free(owner);
    sqlite3_finalize(st);
    rc = store_op_end(s, rc, e);
    if (rc) *run_id = 0;
    return rc;
}

int store_run_find_unfinished(kstore *s, const char *problem_sha, const char *gpu, store_alive_fn alive, void *alive_ctx,
                              int64_t *run_id, kerr *e) {
    *run_id = 0;
    int rc;
    if ((rc = need(problem_sha, "problem_sha", e)) || (rc = need(gpu, "gpu", e))) return rc;
    sqlite3_stmt *st;
    if ((rc = store_prep(s,
                         "SELECT id, owner, (julianday('now') - julianday(started_at)) * 86400.0 FROM runs "
                         "WHERE problem_sha = ?1 AND gpu = ?2 AND ended_at IS NULL ORDER BY started_at DESC, id DESC",
                         &st, e)))
        return rc;
    store_bind_text(st, 1, problem_sha);
    store_bind_text(st, 2, gpu);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *owner = (const char *)sqlite3_column_text(st, 1);
        double age = sqlite3_column_double(st, 2);
        if (alive && alive(owner, age, alive_ctx)) continue;   /* another kopt's live run */
        *run_id = sqlite3_column_int64(st, 0);
        break;
    }
    if (r != SQLITE_ROW && r != SQLITE_DONE) rc = store_db_err(s, e, "looking for an unfinished run");
    sqlite3_finalize(st);
    return rc;
}

int store_run_take(kstore *s, int64_t run_id, kerr *e) {
    int rc = store_op_begin(s, e);
    if (rc) return rc;
    char *owner = owner_self();
    sqlite3_stmt *st = NULL;
    rc = store_prep(s, "UPDATE runs SET owner = ?1 WHERE id = ?2 AND ended_at IS NULL", &st, e);
    if (!rc) {
        store_bind_text(st, 1, owner);
        sqlite3_bind_int64(st, 2, run_id);
        rc = step_done(s, st, "taking over a run", e);
        if (!rc && sqlite3_changes(s->db) != 1)
            rc = kerr_set(e, KOPT_E_STORE, "store %s: run %lld is not an unfinished run", s->path, (long long)run_id);
    }
    sqlite3_finalize(st);
    free(owner);
    return store_op_end(s, rc, e);
}

int store_run_end(kstore *s, int64_t run_id, const char *status, const char *summary_json,
                  kerr *e) {
    int rc;
    if ((rc = need(status, "run status", e)) ||
        (rc = store_check_json("run summary_json", summary_json, e)))
        return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = store_op_begin(s, e))) return rc;
    rc = store_prep(s,
                    "UPDATE runs SET ended_at = " NOW ", status = ?1, summary_json = ?2 "
                    "WHERE id = ?3",
                    &st, e);
    if (!rc) {
        store_bind_text(st, 1, status);
        store_bind_text(st, 2, summary_json);
        sqlite3_bind_int64(st, 3, run_id);
        rc = step_done(s, st, "ending a run", e);
        if (!rc && sqlite3_changes(s->db) == 0)
            rc = kerr_set(e, KOPT_E_STORE, "store %s: ending run %lld: no such run", s->path,
                          (long long)run_id);
    }
    sqlite3_finalize(st);
    return store_op_end(s, rc, e);
}

int store_run_uuid(kstore *s, int64_t run_id, char out[37], kerr *e) {
    out[0] = '\0';
    sqlite3_stmt *st;
    int rc = store_prep(s, "SELECT uuid FROM runs WHERE id = ?1", &st, e);
    if (rc) return rc;
    sqlite3_bind_int64(st, 1, run_id);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        snprintf(out, 37, "%s", store_col_text(st, 0) ? store_col_text(st, 0) : "");
    } else if (r == SQLITE_DONE) {
        rc = kerr_set(e, KOPT_E_STORE, "store %s: no run %lld", s->path, (long long)run_id);
    } else {
        rc = store_db_err(s, e, "reading a run");
    }
    sqlite3_finalize(st);
    return rc;
}

/* ---- kernels ------------------------------------------------------------------------------ */

static int find_id(kstore *s, const char *sql, const char *key, int64_t *id, kerr *e) {
    *id = 0;
    sqlite3_stmt *st;
    int rc = store_prep(s, sql, &st, e);
    if (rc) return rc;
    store_bind_text(st, 1, key);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else if (r != SQLITE_DONE)
        rc = store_db_err(s, e, "looking up a kernel");
    sqlite3_finalize(st);
    return rc;
}

int store_kernel_upsert(kstore *s, const store_kernel *k, int64_t *kernel_id, kerr *e) {
    *kernel_id = 0;
    int rc;
    if ((rc = need(k->kernel_key, "kernel_key", e)) || (rc = need(k->name, "kernel name", e)) ||
        (rc = need(k->kind, "kernel kind", e)) ||
        (rc = need(k->source_sha, "kernel source_sha", e)) ||
        (rc = need(k->shapes_json, "kernel shapes_json", e)) ||
        (rc = need(k->gpu, "kernel gpu", e)) ||
        (rc = store_check_json("kernel shapes_json", k->shapes_json, e)))
        return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = store_op_begin(s, e))) return rc;
    rc = store_prep(s,
                    "INSERT INTO kernels(kernel_key, name, kind, source_sha, shapes_json, gpu, "
                    "source) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                    "ON CONFLICT(kernel_key) DO NOTHING",
                    &st, e);
    if (!rc) {
        store_bind_text(st, 1, k->kernel_key);
        store_bind_text(st, 2, k->name);
        store_bind_text(st, 3, k->kind);
        store_bind_text(st, 4, k->source_sha);
        store_bind_text(st, 5, k->shapes_json);
        store_bind_text(st, 6, k->gpu);
        store_bind_text(st, 7, k->source);
        rc = step_done(s, st, "recording a kernel", e);
    }
    sqlite3_finalize(st);
    if (!rc) rc = find_id(s, "SELECT id FROM kernels WHERE kernel_key = ?1", k->kernel_key,
                          kernel_id, e);
    rc = store_op_end(s, rc, e);
    if (rc) *kernel_id = 0;
    return rc;
}

int store_kernel_find(kstore *s, const char *kernel_key, int64_t *kernel_id, kerr *e) {
    *kernel_id = 0;
    int rc = need(kernel_key, "kernel_key", e);
    if (rc) return rc;
    return find_id(s, "SELECT id FROM kernels WHERE kernel_key = ?1", kernel_key, kernel_id, e);
}

/* ---- attempts ----------------------------------------------------------------------------- */

/* A clearer message than "FOREIGN KEY constraint failed" for an unknown run/kernel/attempt. */
static int fk_err(kstore *s, kerr *e, const char *what, const char *refs) {
    if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_FOREIGNKEY)
        return kerr_set(e, KOPT_E_STORE, "store %s: %s: %s does not exist", s->path, what, refs);
    return store_db_err(s, e, what);
}

int store_attempt_add(kstore *s, const store_attempt *a, int64_t *attempt_id, kerr *e) {
    *attempt_id = 0;
    int rc;
    if ((rc = need(a->direction, "attempt direction", e)) ||
        (rc = store_check_json("attempt plan_json", a->plan_json, e)))
        return rc;
    if (!a->candidate_text) return store_misuse(e, "attempt candidate_text is required");
    char sha[STORE_SHA_HEX], uuid[37];
    const char *csha = a->candidate_sha;
    if (!csha || !*csha) {
        store_sha256_hex(a->candidate_text, strlen(a->candidate_text), sha);
        csha = sha;
    }
    new_uuid(uuid);
    sqlite3_stmt *st = NULL;
    if ((rc = store_op_begin(s, e))) return rc;
    rc = store_prep(s,
                    "INSERT INTO attempts(uuid, run_id, kernel_id, plan_json, direction, label, "
                    "candidate_sha, candidate_text, agent) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    &st, e);
    if (!rc) {
        store_bind_text(st, 1, uuid);
        sqlite3_bind_int64(st, 2, a->run_id);
        sqlite3_bind_int64(st, 3, a->kernel_id);
        store_bind_text(st, 4, a->plan_json);
        store_bind_text(st, 5, a->direction);
        store_bind_text(st, 6, a->label);
        store_bind_text(st, 7, csha);
        store_bind_text(st, 8, a->candidate_text);
        store_bind_text(st, 9, a->agent);
        if (sqlite3_step(st) != SQLITE_DONE) {
            char refs[96];
            snprintf(refs, sizeof refs, "run %lld or kernel %lld", (long long)a->run_id,
                     (long long)a->kernel_id);
            rc = fk_err(s, e, "recording an attempt", refs);
        } else {
            *attempt_id = sqlite3_last_insert_rowid(s->db);
        }
    }
    sqlite3_finalize(st);
    rc = store_op_end(s, rc, e);
    if (rc) *attempt_id = 0;
    return rc;
}

/* Speedups and times are positive when measured; 0 (a zero-initialised field) or NAN: none. */
static void bind_measure(sqlite3_stmt *st, int i, double v) {
    if (isfinite(v) && v > 0)
        sqlite3_bind_double(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

const char *store_verdict_name(store_verdict v) {
    switch (v) {
    case STORE_ACCEPTED: return "accepted";
    case STORE_REFUSED: return "refused";
    case STORE_ERROR: return "error";
    case STORE_NO_VERDICT: break;
    }
    return NULL;
}

store_verdict store_verdict_parse(const char *s) {
    for (store_verdict v = STORE_ACCEPTED; v <= STORE_ERROR; v++)
        if (s && !strcmp(s, store_verdict_name(v))) return v;
    return STORE_NO_VERDICT;
}

int store_attempt_result(kstore *s, int64_t attempt_id, const store_result *r, kerr *e) {
    int rc;
    const char *name = store_verdict_name(r->outcome);
    if (!name) return store_misuse(e, "attempt outcome %d is not accepted, refused or error", (int)r->outcome);
    int refused = r->outcome == STORE_REFUSED;
    if (refused && r->refused_gate < 1)
        return store_misuse(e, "a refused attempt needs the refusing gate (1..4), got %d",
                            r->refused_gate);
    if ((rc = store_check_json("attempt gates_json", r->gates_json, e))) return rc;
    sqlite3_stmt *st = NULL;
    if ((rc = store_op_begin(s, e))) return rc;
    rc = store_prep(s,
                    "UPDATE attempts SET outcome = ?1, refused_gate = ?2, reason = ?3, "
                    "speedup = ?4, ci_lo = ?5, ci_hi = ?6, kernel_ms = ?7, base_ms = ?8, "
                    "gates_json = ?9, finished_at = " NOW " WHERE id = ?10 AND outcome IS NULL",
                    &st, e);
    if (!rc) {
        store_bind_text(st, 1, name);
        if (refused)
            sqlite3_bind_int(st, 2, r->refused_gate);
        else
            sqlite3_bind_null(st, 2);
        store_bind_text(st, 3, r->reason);
        bind_measure(st, 4, r->speedup);
        bind_measure(st, 5, r->ci_lo);
        bind_measure(st, 6, r->ci_hi);
        bind_measure(st, 7, r->kernel_ms);
        bind_measure(st, 8, r->base_ms);
        store_bind_text(st, 9, r->gates_json);
        sqlite3_bind_int64(st, 10, attempt_id);
        rc = step_done(s, st, "recording an attempt's result", e);
    }
    sqlite3_finalize(st);
    if (!rc && sqlite3_changes(s->db) == 0) {
        int64_t n = 0;
        rc = store_prep(s, "SELECT count(*) FROM attempts WHERE id = ?1", &st, e);
        if (!rc) {
            sqlite3_bind_int64(st, 1, attempt_id);
            if (sqlite3_step(st) == SQLITE_ROW)
                n = sqlite3_column_int64(st, 0);
            else
                rc = store_db_err(s, e, "looking up an attempt");
            sqlite3_finalize(st);
        }
        if (!rc && n)
            rc = kerr_set(e, KOPT_E_STORE,
                          "store %s: attempt %lld already has a result (results are final)",
                          s->path, (long long)attempt_id);
        else if (!rc)
            rc = kerr_set(e, KOPT_E_STORE,
                          "store %s: recording a result: attempt %lld does not exist", s->path,
                          (long long)attempt_id);
    }
    return store_op_end(s, rc, e);
}

/* ---- experiences and LLM calls ------------------------------------------------------------ */

int store_experience_add(kstore *s, const store_experience *x, int64_t *exp_id, kerr *e) {
    if (exp_id) *exp_id = 0;
    int rc;
    if ((rc = need(x->text, "experience text", e)) ||
        (rc = store_check_json("experience tags_json", x->tags_json, e)))
        return rc;
    char uuid[37];
    new_uuid(uuid);
    sqlite3_stmt *st = NULL;
    if ((rc = store_op_begin(s, e))) return rc;
    rc = store_prep(s,
                    "INSERT INTO experiences(uuid, run_id, kernel_id, attempt_id, text, tags_json) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    &st, e);
    if (!rc) {
        store_bind_text(st, 1, uuid);
        sqlite3_bind_int64(st, 2, x->run_id);
        sqlite3_bind_int64(st, 3, x->kernel_id);
        store_bind_id(st, 4, x->attempt_id);
        store_bind_text(st, 5, x->text);
        store_bind_text(st, 6, x->tags_json);
        if (sqlite3_step(st) != SQLITE_DONE) {
            char refs[128];
            snprintf(refs, sizeof refs, "run %lld, kernel %lld or attempt %lld",
                     (long long)x->run_id, (long long)x->kernel_id, (long long)x->attempt_id);
            rc = fk_err(s, e, "recording an experience", refs);
        } else if (exp_id) {
            *exp_id = sqlite3_last_insert_rowid(s->db);
        }
    }
    sqlite3_finalize(st);
    rc = store_op_end(s, rc, e);
    if (rc && exp_id) *exp_id = 0;
    return rc;
}

int store_llm_call_add(kstore *s, const store_llm_call *c, kerr *e) {
    int rc;
    if ((rc = need(c->role, "llm call role", e)) ||
        (rc = need(c->backend, "llm call backend", e)) ||
        (rc = need(c->model, "llm call model", e)))
        return rc;
    char uuid[37];
    new_uuid(uuid);
    char *err = c->error ? kstrdup(c->error) : NULL;
    if (err) store_redact(err);
    sqlite3_stmt *st = NULL;
    if ((rc = store_op_begin(s, e))) {
        free(err);
        return rc;
    }
    rc = store_prep(s,
                    "INSERT INTO llm_calls(uuid, run_id, role, backend, model, tokens_in, "
                    "tokens_out, latency_ms, cost_usd, ok, error) "
                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                    &st, e);
    if (!rc) {
        store_bind_text(st, 1, uuid);
        store_bind_id(st, 2, c->run_id);
        store_bind_text(st, 3, c->role);
        store_bind_text(st, 4, c->backend);
        store_bind_text(st, 5, c->model);
        sqlite3_bind_int64(st, 6, c->tokens_in > 0 ? c->tokens_in : 0);
        sqlite3_bind_int64(st, 7, c->tokens_out > 0 ? c->tokens_out : 0);
        store_bind_double(st, 8, c->latency_ms);
        store_bind_double(st, 9, c->cost_usd);
        sqlite3_bind_int(st, 10, c->ok ? 1 : 0);
        store_bind_text(st, 11, err);
        if (sqlite3_step(st) != SQLITE_DONE) {
            char refs[64];
            snprintf(refs, sizeof refs, "run %lld", (long long)c->run_id);
            rc = fk_err(s, e, "recording an LLM call", refs);
        }
    }
    sqlite3_finalize(st);
    free(err);
    return store_op_end(s, rc, e);
}
