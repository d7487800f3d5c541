/* store.h — the embedded SQLite store: the memory of `kopt optimize`.
 *
 * What it holds (schema and rules in docs/STORE.md): runs (one per `kopt optimize`
 * invocation), kernels (identified by a key = sha256 of source text, launch argument
 * shapes/strides/dtypes and GPU name), attempts (one per candidate tried, with the gate verdict
 * and the measured speedup), experiences (the summarizer's lessons), and LLM usage accounting.
 * It lets an interrupted run resume (store_run_find_unfinished, store_attempt_seen), reuses
 * results across runs (store_best_for_kernel, store_attempt_seen), feeds the planner
 * (store_direction_stats, store_history_for_kernel, store_experiences_for) and merges the
 * stores of several hosts (store_merge). Since schema version 2 it also holds the results of
 * `kopt bench` (bench_results: one row per suite configuration, problem and problem file
 * content), with the claim/finish protocol that lets an interrupted sweep resume
 * (store_bench_claim, store_bench_finish, store_bench_release, store_bench_rows).
 *
 * Contract:
 *  - Every fallible function returns 0 or a kopt_code with the kerr filled. Database failures
 *    (I/O, corruption, lock timeout, constraint violation, unknown ids) are KOPT_E_STORE;
 *    misuse by the caller (a NULL required argument, an invalid outcome, text that must be JSON
 *    and is not) is KOPT_E_INTERNAL. Messages name the store file.
 *  - Every public write is atomic on its own: it runs in its own transaction when none is
 *    open, or in a savepoint inside the caller's transaction (store_begin), so a failed write
 *    never leaves half of itself behind. Values are always bound parameters; no SQL text is ever
 *    built from values.
 *  - Ids are SQLite rowids, > 0. An id argument of 0 means "none" where documented (stored as
 *    NULL). Doubles that are not finite (NAN, INF) are stored as NULL and read back as NAN.
 *  - Text that is documented as JSON must be valid JSON (any JSON value) or NULL.
 *  - A kstore is used by one thread at a time. Several processes may open the same file: WAL
 *    mode, and a 5 s busy timeout on locks.
 *  - Never pass secrets: API keys are never stored. store_llm_call_add additionally redacts
 *    anything in its error text that looks like a key or a bearer token.
 *
 * Ownership: a kstore is created by store_open and released by store_close (NULL-safe; an
 * open transaction is rolled back). Strings passed in are borrowed (copied into the database).
 * json_t results are new references for the caller (json_decref). Structures filled with
 * malloc'd strings (store_best) are released with their _clear function.
 */
#ifndef KOPT_STORE_H
#define KOPT_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define STORE_SCHEMA_VERSION 3   /* 2: bench_results (kopt bench) */
#define STORE_SHA_HEX 65            /* 64 hex digits + NUL */

typedef struct kstore kstore;

/* ---- opening ------------------------------------------------------------------------------ */

/* Opens (creating the file, its parent directories and the schema when missing) the store at
 * `path`. Refuses (KOPT_E_STORE) a directory, a file that is not an SQLite database or is
 * damaged, an SQLite database of another application (left untouched), a read-only file, and a
 * store written by a newer schema version. Sets WAL journal mode, synchronous=NORMAL, foreign
 * keys on, busy timeout 5 s. ":memory:" opens a private in-memory store. */
int store_open(const char *path, kstore **out, kerr *e);
void store_close(kstore *s);
const char *store_path(const kstore *s);   /* the path given to store_open */

/* ---- transactions ------------------------------------------------------------------------- */

/* Explicit transaction (BEGIN IMMEDIATE: the write lock is taken at once). Not nestable:
 * store_begin while one is open is KOPT_E_INTERNAL. A failed commit rolls the transaction back.
 * store_rollback is a no-op when no transaction is open (NULL-safe). */
int store_begin(kstore *s, kerr *e);
int store_commit(kstore *s, kerr *e);
void store_rollback(kstore *s);
int store_in_transaction(const kstore *s);

/* ---- hashing ------------------------------------------------------------------------------ */

/* sha256 of n bytes as 64 lowercase hex digits (problem_sha, source_sha, candidate_sha). */
void store_sha256_hex(const void *data, size_t n, char out[STORE_SHA_HEX]);
/* The kernel identity: sha256 over "kopt.kernel/1\n" then, for each of source, the canonical
 * shapes JSON (shapes_json re-serialised compact with sorted keys) and gpu, "<byte length>:"
 * followed by the bytes and "\n". KOPT_E_INTERNAL when shapes_json is not JSON. */
int store_kernel_key(const char *source, const char *shapes_json, const char *gpu,
                     char out[STORE_SHA_HEX], kerr *e);

/* ---- runs --------------------------------------------------------------------------------- */

typedef struct store_run {
    const char *problem_path;   /* required */
    const char *problem_sha;    /* required: sha256 of the problem file */
    const char *gpu;            /* required: device name, e.g. "NVIDIA H200" */
    const char *torch_version;  /* optional */
    const char *config_json;    /* optional JSON: the options of the run */
} store_run;

/* Starts a run: a new row with a fresh uuid (v4), the host name and the start time. */
int store_run_begin(kstore *s, const store_run *r, int64_t *run_id, kerr *e);
/* Whether the owner ("host:pid") of state that is age_s seconds old is still at work
 * (util/owner.h's owner_alive is one). */
typedef int (*store_alive_fn)(const char *owner, double age_s, void *ctx);
/* Resume lookup: the most recently started run of this problem sha and GPU that has no end and
 * whose owner is not alive (alive NULL: every unfinished run qualifies); *run_id = 0 when there
 * is none. A run of a kopt still at work is never adopted by another. */
int store_run_find_unfinished(kstore *s, const char *problem_sha, const char *gpu, store_alive_fn alive, void *alive_ctx,
                              int64_t *run_id, kerr *e);
/* This process takes over an unfinished run it resumes (its owner becomes this process). */
int store_run_take(kstore *s, int64_t run_id, kerr *e);
/* Ends a run: status (required, free text: "done", "failed", "interrupted", ...) and an
 * optional summary JSON. Ending a run that does not exist is KOPT_E_STORE; ending it again
 * overwrites the end. */
int store_run_end(kstore *s, int64_t run_id, const char *status, const char *summary_json,
                  kerr *e);
/* The most recent runs first (limit <= 0: all): a new array of {"id", "problem_path", "gpu",
 * "started_at", "ended_at" (null while unfinished), "status"}. */
int store_runs_list(kstore *s, int limit, json_t **out, kerr *e);
/* The run's uuid (a stable identity across merged stores) into out (37 bytes). */
int store_run_uuid(kstore *s, int64_t run_id, char out[37], kerr *e);

/* ---- kernels ------------------------------------------------------------------------------ */

typedef struct store_kernel {
    const char *kernel_key;     /* required: store_kernel_key(...) */
    const char *name;           /* required: Inductor's name in the first module it was seen in */
    const char *kind;           /* required: pointwise | reduction | persistent_reduction | ... */
    const char *source_sha;     /* required */
    const char *shapes_json;    /* required JSON: launch argument shapes, strides, dtypes */
    const char *gpu;            /* required */
    const char *source;         /* optional: the kernel's source text */
} store_kernel;

/* Inserts the kernel unless its key is known; either way *kernel_id is the key's row. The
 * first insertion's name, kind and source are kept. */
int store_kernel_upsert(kstore *s, const store_kernel *k, int64_t *kernel_id, kerr *e);
/* *kernel_id = 0 when the key is unknown. */
int store_kernel_find(kstore *s, const char *kernel_key, int64_t *kernel_id, kerr *e);

/* ---- attempts ----------------------------------------------------------------------------- */

typedef struct store_attempt {
    int64_t run_id;             /* required */
    int64_t kernel_id;          /* required */
    const char *plan_json;      /* optional JSON: the planner's plan */
    const char *direction;      /* required: launch_config | one_pass | split | ... */
    const char *label;          /* optional: the executor's label for the candidate */
    const char *candidate_sha;  /* optional: computed from candidate_text when NULL */
    const char *candidate_text; /* required: the candidate file (docs/CANDIDATES.md) */
    const char *agent;          /* optional: "builtin", "openai:<model>", ... */
} store_attempt;

/* Records a candidate about to be evaluated; it is "pending" until store_attempt_result. */
int store_attempt_add(kstore *s, const store_attempt *a, int64_t *attempt_id, kerr *e);

/* A judged attempt's verdict, stored as its name: "accepted", "refused", "error". */
typedef enum store_verdict { STORE_NO_VERDICT = 0, STORE_ACCEPTED, STORE_REFUSED, STORE_ERROR } store_verdict;
const char *store_verdict_name(store_verdict v); /* NULL for STORE_NO_VERDICT and unknown values */
store_verdict store_verdict_parse(const char *s); /* STORE_NO_VERDICT for NULL or an unknown name */

typedef struct store_result {
    store_verdict outcome;      /* required */
    int refused_gate;           /* 1..4 when refused (required then), else ignored */
    const char *reason;         /* optional: why refused / the error */
    /* Measurements are > 0; 0 (left out of an initialiser) or NAN means "not measured" and is
     * stored as NULL. */
    double speedup;             /* baseline time / candidate time */
    double ci_lo, ci_hi;        /* 95% CI of the speedup */
    double kernel_ms, base_ms;  /* candidate and baseline time */
    const char *gates_json;     /* optional JSON: per-gate figures */
} store_result;

/* Records the verdict of a pending attempt. KOPT_E_STORE when the attempt does not exist or
 * already has a result (results are final). */
int store_attempt_result(kstore *s, int64_t attempt_id, const store_result *r, kerr *e);

typedef struct store_seen {
    int seen;                   /* 1: an attempt with a result exists for this kernel+candidate */
    int64_t attempt_id;         /* the most telling one: accepted (best speedup) before refused
                                 * before error; 0 when !seen */
    store_verdict outcome;      /* STORE_NO_VERDICT when !seen; a name this version does not know
                                 * (a merged newer store) reads as STORE_ERROR */
    int refused_gate;           /* 1..4 when refused, else 0 */
    double speedup;             /* NAN when not measured or !seen */
    int64_t pending_id;         /* latest attempt without a result for the same kernel and
                                 * candidate (an interrupted evaluation), 0 if none */
} store_seen;

/* Whether this candidate (by sha) was already evaluated for this kernel, in any run. */
int store_attempt_seen(kstore *s, int64_t kernel_id, const char *candidate_sha,
                       store_seen *out, kerr *e);

typedef struct store_best {
    int found;                  /* 0: no accepted attempt for the key */
    int64_t attempt_id, run_id, kernel_id;
    char *candidate_text;       /* malloc'd (store_best_clear) */
    char *candidate_sha, *label, *direction;   /* malloc'd; label may be NULL */
    double speedup, ci_lo, ci_hi, kernel_ms, base_ms;   /* NAN when not stored */
} store_best;

/* The accepted attempt with the highest speedup (ties: higher ci_lo, then the earlier one)
 * among all attempts of the kernel key, in any run. Refused, errored and pending attempts are
 * ignored. out->found = 0 when there is none. */
int store_best_for_kernel(kstore *s, const char *kernel_key, store_best *out, kerr *e);
void store_best_clear(store_best *b);   /* frees the strings, zeroes the struct; NULL-safe */

/* ---- planner statistics ------------------------------------------------------------------- */

typedef struct store_dirstats {
    int tries;                  /* attempts with a result */
    int accepted, refused, errors;
    double best_speedup;        /* highest accepted speedup, NAN when none */
} store_dirstats;

/* Over all runs, attempts on kernels of this kind with this direction. */
int store_direction_stats(kstore *s, const char *kernel_kind, const char *direction,
                          store_dirstats *out, kerr *e);
/* The same for every direction tried on this kind: a new array of {"direction", "tries",
 * "accepted", "refused", "errors", "best_speedup" (null when none)}, most tried first. */
int store_direction_table(kstore *s, const char *kernel_kind, json_t **out, kerr *e);
/* The planner's "history" for a kernel (all runs, oldest first, at most `limit`, the latest
 * ones; limit <= 0: all): a new array of {"attempt_id", "run_id", "plan", "direction", "label",
 * "outcome", "gate", "reason", "speedup"}; pending attempts are left out. */
int store_history_for_kernel(kstore *s, int64_t kernel_id, int limit, json_t **out, kerr *e);

/* ---- experiences -------------------------------------------------------------------------- */

typedef struct store_experience {
    int64_t run_id;             /* required */
    int64_t kernel_id;          /* required */
    int64_t attempt_id;         /* optional (0): the attempt the lesson was drawn from */
    const char *text;           /* required: one sentence */
    const char *tags_json;      /* optional JSON array of strings */
} store_experience;

int store_experience_add(kstore *s, const store_experience *x, int64_t *exp_id /* may be NULL */,
                         kerr *e);
/* Lessons for kernels of this kind (NULL: every kind), newest first, identical texts once (the
 * newest), at most `limit` (<= 0: all): a new array of {"text", "tags" (array), "kernel",
 * "kind", "run_id", "created_at"}. */
int store_experiences_for(kstore *s, const char *kernel_kind, int limit, json_t **out, kerr *e);

/* ---- LLM usage ---------------------------------------------------------------------------- */

typedef struct store_llm_call {
    int64_t run_id;             /* optional (0) */
    const char *role;           /* required: profiler | analyst | planner | executor | summarizer */
    const char *backend;        /* required: "openai", "anthropic", ... */
    const char *model;          /* required */
    int64_t tokens_in, tokens_out;
    double latency_ms;
    double cost_usd;            /* NAN when unknown */
    int ok;                     /* 1: the call returned an answer */
    const char *error;          /* optional; redacted before it is stored */
} store_llm_call;

int store_llm_call_add(kstore *s, const store_llm_call *c, kerr *e);
/* Totals for a run (run_id 0: every call in the store): a new object
 * {"calls", "failed", "tokens_in", "tokens_out", "latency_ms", "cost_usd",
 *  "by_model": [{"role", "backend", "model", "calls", "failed", "tokens_in", "tokens_out",
 *                "latency_ms", "cost_usd"}]}  (cost_usd sums known costs only). */
int store_llm_usage(kstore *s, int64_t run_id, json_t **out, kerr *e);
/* Redacts, in place, substrings that look like API keys or bearer tokens ("sk-...",
 * "Bearer ...", "api_key=...", "x-api-key: ..."): each becomes "[redacted]". Exposed for the
 * LLM client's logs. */
void store_redact(char *text);

/* ---- reports and merging ------------------------------------------------------------------ */

/* The run as a JSON document (format "kopt.store.run/1"): the run row, each kernel it touched
 * with that run's attempts (candidate texts included) and best accepted attempt, the run's
 * experiences and its LLM usage. Layout in docs/STORE.md. */
int store_export_json(kstore *s, int64_t run_id, json_t **out, kerr *e);

typedef struct store_merge_stats {
    int runs, kernels, attempts, experiences, llm_calls;   /* rows added */
    int bench_results;                                     /* rows added (schema v2) */
    int updated;   /* rows completed since an earlier merge: runs ended, attempts given their
                    * result, kernels given their source text */
} store_merge_stats;

/* Imports another store file's runs, kernels, attempts, experiences, LLM calls and bench
 * results (ids remapped; kernels matched by key, bench results by (suite_key, problem_rel,
 * problem_sha), the rest by uuid). Idempotent: merging the same file again adds nothing, but
 * completes runs and attempts that have ended there since; a bench result that is 'done'
 * there replaces one that is not 'done' here, a 'failed'/'timeout' one there a 'running' one
 * here, and a 'done' row here is never replaced. One
 * transaction: all or nothing. Not allowed inside store_begin (KOPT_E_INTERNAL). stats may be
 * NULL. */
int store_merge(kstore *s, const char *other_path, store_merge_stats *stats, kerr *e);

/* ---- bench results (schema v2, store_bench.c) ---------------------------------------------- */

/* The status of one problem of a `kopt bench` sweep. 'running' rows have an owner ("host:pid"
 * of the kopt bench process that claimed them) and no end; the others are results. */
typedef enum {
    STORE_BENCH_RUNNING = 0,
    STORE_BENCH_DONE,      /* the child `kopt optimize` exited 0 */
    STORE_BENCH_FAILED,    /* it exited non-zero (or died by a signal); exit_code says how */
    STORE_BENCH_TIMEOUT,   /* it ran past its time limit and was killed */
} store_bench_status;

/* "running" | "done" | "failed" | "timeout"; NULL for an out-of-range value. */
const char *store_bench_status_name(store_bench_status st);
/* 0 and *out set for a known name, else -1. */
int store_bench_status_parse(const char *name, store_bench_status *out);

/* Decides whether the owner of a 'running' row still runs it: owner is the row's "host:pid"
 * (may be NULL), age_s the seconds since the row's started_at. Returns 1 for "alive, leave it",
 * 0 for "gone, the row may be taken again". */
typedef int (*store_bench_alive_fn)(const char *owner, double age_s, void *ctx);

typedef struct store_bench_claim_spec {
    const char *suite_key;      /* required: sha256 of the suite run configuration */
    const char *problem_rel;    /* required: path relative to the suite folder */
    const char *problem_sha;    /* required: sha256 of the problem file */
    int level;                  /* 0 for a flat suite */
    const char *gpu;            /* required: GPU name of the configuration ("unknown" if none) */
    double budget_s;            /* the configuration's budget (> 0) */
    int max_autotune;           /* 0 | 1 */
    const char *owner;          /* required: "host:pid" of the claiming process */
    int gpu_index;              /* the lane that will run it (>= 0) */
    int retry_failed;           /* 1: 'failed' and 'timeout' rows are taken again */
    store_bench_alive_fn alive; /* required: liveness of a 'running' row's owner */
    void *alive_ctx;
} store_bench_claim_spec;

typedef enum {
    STORE_BENCH_CLAIMED = 0,    /* no row existed: a 'running' row was inserted */
    STORE_BENCH_RETAKEN,        /* a stale 'running' row, or a failed/timeout one with
                                 * retry_failed, was taken over (reset to 'running') */
    STORE_BENCH_SKIP_DONE,      /* 'done': never run again */
    STORE_BENCH_SKIP_RESULT,    /* 'failed'/'timeout' kept as the result (no retry_failed) */
    STORE_BENCH_SKIP_BUSY,      /* 'running' and its owner is alive */
} store_bench_claim_outcome;

/* Atomically (one write transaction) looks up the row of (suite_key, problem_rel, problem_sha)
 * and takes it for `owner` when the rules allow (see store_bench_claim_outcome): a taken row is
 * 'running' with owner, gpu_index and started_at = now, and its exit code, end, wall time, disk
 * and document cleared. *row_id is the row (also when skipped; 0 on error). */
int store_bench_claim(kstore *s, const store_bench_claim_spec *c, int64_t *row_id,
                      store_bench_claim_outcome *out, kerr *e);

typedef struct store_bench_end {
    int64_t row_id;             /* required: from store_bench_claim */
    const char *owner;          /* required: the claiming owner */
    store_bench_status status;  /* done | failed | timeout (not running) */
    int exit_code;              /* the child's exit status; < 0: not known (NULL) */
    double wall_s;              /* the child's wall time; NAN: not measured */
    int64_t disk_bytes;         /* the output folder's size; < 0: not measured */
    const char *doc_json;       /* JSON or NULL: the problem's report, or the error object */
} store_bench_end;

/* Records the end of a claimed row, only if it is still 'running' under f->owner (another
 * process may have taken it over, judging the owner dead): *updated is 1 when written, 0 when
 * the row is no longer ours (nothing written, not an error). */
int store_bench_finish(kstore *s, const store_bench_end *f, int *updated, kerr *e);

/* An interrupted problem: deletes the row if it is still 'running' under owner, so that it is
 * "not done" and runs again next time. A row no longer ours is left alone. */
int store_bench_release(kstore *s, int64_t row_id, const char *owner, kerr *e);

typedef struct store_bench_row {
    int64_t id;
    char *suite_key, *problem_rel, *problem_sha, *gpu;   /* malloc'd */
    int level;
    double budget_s;
    int max_autotune;
    store_bench_status status;
    int exit_code;              /* -1 when NULL */
    char *owner;                /* malloc'd, may be NULL */
    int gpu_index;              /* -1 when NULL */
    char *started_at, *ended_at;/* malloc'd; ended_at NULL while running */
    double wall_s;              /* NAN when NULL */
    int64_t disk_bytes;         /* -1 when NULL */
    char *doc_json;             /* malloc'd, may be NULL */
} store_bench_row;

typedef struct store_bench_rowset {
    store_bench_row *v;
    size_t n;
} store_bench_rowset;

/* The rows whose suite_key is one of keys[0..nkeys), ordered by problem_rel, then started_at,
 * then id. out is filled (cleared first); release with store_bench_rows_clear. */
int store_bench_rows(kstore *s, const char *const *keys, size_t nkeys, store_bench_rowset *out,
                     kerr *e);
void store_bench_rows_clear(store_bench_rowset *r);   /* NULL-safe; leaves it empty */

/* The distinct GPU names of the rows recorded with this budget and max-autotune flag (the
 * configurations a --report-only run can rebuild), sorted; *names is a malloc'd array of
 * malloc'd strings (free each, then the array), *n its length. */
int store_bench_gpus(kstore *s, double budget_s, int max_autotune, char ***names, size_t *n,
                     kerr *e);

/* The configurations the store holds bench results for: a text listing each distinct budget and
 * max-autotune flag ("120s with max-autotune on, 20s with max-autotune off"), in budget order;
 * *out is malloc'd ("" when there are none; caller frees). */
int store_bench_configs(kstore *s, char **out, kerr *e);

#endif
