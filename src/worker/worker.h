/* worker.h — supervision of one Python worker process (docs/PROTOCOL.md is authoritative).
 *
 * A `worker` owns one child process `$PYTHON kopt_worker.py`, started in its own process
 * group with stdin/stdout/stderr on pipes. Requests go out one at a time as JSON lines; the
 * caller waits for the response with the same id. While waiting (and while starting or stopping
 * the worker; between calls the worker is idle and its pipe buffer suffices), stderr is drained
 * continuously (so the worker never blocks on a full pipe) into a 16 KiB ring buffer (its tail
 * goes into error messages) and, when opts.log_path is set, appended to that file until the
 * file holds WORKER_MAX_LOG_BYTES: then one line "[kopt: worker log truncated at N bytes;
 * further output dropped]" is written and the rest of stderr is drained into the ring only.
 * `{"event":"log"}` lines are logged at debug level and skipped. A protocol line may be up to
 * WORKER_MAX_LINE_BYTES long (its newline not counted); a longer one, complete or not, is a
 * protocol violation handled like garbage (below), so kopt never buffers more than that.
 * Both limits can be lowered for tests: $KOPT_MAX_LINE_BYTES and $KOPT_MAX_LOG_BYTES (a positive
 * number of bytes) are read when a worker is started; other values are ignored.
 *
 * Failure handling of worker_call / worker_call_setup:
 *   - the worker answers ok:false: the code is mapped to a kopt code (worker_code_to_kopt,
 *     the table of PROTOCOL.md; unknown codes -> KOPT_E_INTERNAL) and e->msg is the worker's
 *     message; the full error object stays readable via worker_last_error. The worker stays up,
 *     except when the error has fatal:true: then the process group is killed (after a 1 s grace
 *     for it to exit by itself), reaped, and a fresh worker is started with the setup requests
 *     replayed, before the call returns the error.
 *   - timeout, EOF/crash (the message names the exit status or the signal, e.g. "worker killed
 *     by SIGSEGV", plus the last stderr lines), a line that is not a JSON object, a line longer
 *     than the cap ("the worker sent a line longer than 64 MiB"), a response
 *     without a boolean "ok", or a response with the wrong id: the process group is killed with
 *     SIGKILL and reaped, the call returns KOPT_E_WORKER, and the worker is restarted (setup
 *     requests replayed in order) before the call returns. The message ends with "; the worker
 *     was restarted" or "; the worker was not restarted: max_restarts (N) reached".
 *   - the restart (ready wait + replays, each under its own timeout) happens inside the failing
 *     call, so that call can take longer than its timeout_s.
 *   - a restart counts against max_restarts (per worker lifetime) whether or not it succeeds;
 *     a failed attempt (no ready event, or a crash/fatal error during the replay) is retried at
 *     once while restarts remain (the message then ends "; restarting the worker failed").
 *     If the restart or a replayed setup request fails, the *next* call returns that failure
 *     (without being sent); calls after that go to the worker again, or, when no worker could
 *     be started and no restarts are left, fail at once with KOPT_E_WORKER.
 *
 * Setup requests (worker_call_setup, used for `load`): only requests that succeeded are
 * remembered; a later successful setup request with the same op replaces the earlier one (a
 * second `load` supersedes the first), so the replay reproduces the state the caller last set.
 * Each is replayed with the timeout it was first given.
 *
 * Side effect: worker_start sets SIGPIPE to SIG_IGN for the whole process (a worker that dies
 * while we write to it must not kill kopt); the child gets SIGPIPE back at its default. The
 * child is also given PR_SET_PDEATHSIG=SIGKILL so it never outlives kopt (even after a kill -9
 * of kopt) and PYTHONUNBUFFERED=1 unless kopt's environment or opts.env sets it.
 *
 * Environment: the worker runs candidate code, so it inherits only an allowlist of kopt's
 * environment (worker_env_allowed: what Python, torch, Triton and CUDA read -- PATH, HOME,
 * locale, library and compiler paths, CUDA_*, TORCH*, TRITON_*, PYTHON*, KOPT_* ...), never an
 * LLM API key or a proxy; names listed in $KOPT_WORKER_ENV (comma-separated) pass too, and
 * opts.env entries always do. Its Python keeps bytecode under kopt's own directory
 * (PYTHONPYCACHEPREFIX, pycache.h; PYTHONDONTWRITEBYTECODE is dropped then) unless
 * KOPT_PYCACHE=0, the user's own PYTHONPYCACHEPREFIX or opts.env says otherwise. Caveat: Linux
 * ties PDEATHSIG to the *thread* that forked, and restarts fork from the thread that makes the
 * call; start and call workers from threads that outlive them (e.g. the main thread, or one
 * long-lived thread per GPU), or the worker is killed when that thread exits.
 *
 * Time per op: every worker_call / worker_call_setup with a worker and a non-empty op adds its
 * wall time (the monotonic clock, from entering the call to its return: the request, the wait
 * for the response, and a kill + restart + replay made inside a failing call) and one call to
 * the op's row of a table the worker keeps for its lifetime. Failed calls count too (ok:false,
 * timeout, crash, and calls refused before being sent: a pending restart failure, no worker
 * process). Rows are in the order their op was first called; the table holds at most
 * WORKER_OP_TIMES_MAX rows, one of them kept for "other": op names get a row of their own
 * while fewer than WORKER_OP_TIMES_MAX - 1 rows are taken; a later new name, and a name of
 * WORKER_OP_NAME_MAX bytes or more, is added to the row "other" (made when first needed).
 * worker_start's ready wait and worker_stop's shutdown are not an op's calls: not counted.
 *
 * Ownership: a worker is created by worker_start and freed by worker_stop (NULL-safe). Options
 * strings are copied. `args` passed to the calls is always stolen (also on failure). *result is
 * a new reference the caller must json_decref. worker_info / worker_last_error / worker_op_times
 * are borrowed and valid until the next call on the worker (a restart replaces the ready event;
 * a call may add a row to the op table).
 * Not thread-safe: one caller per worker.
 */
#ifndef KOPT_WORKER_H
#define KOPT_WORKER_H

#include <jansson.h>

#include "util/err.h"

#define WORKER_MAX_LINE_BYTES ((size_t)64 << 20)   /* one protocol line; env KOPT_MAX_LINE_BYTES */
#define WORKER_MAX_LOG_BYTES ((size_t)64 << 20)    /* the worker log file; env KOPT_MAX_LOG_BYTES */

#define WORKER_OP_TIMES_MAX 64      /* rows of the per-op time table, "other" included */
#define WORKER_OP_NAME_MAX 48       /* an op name's bytes, its NUL included; longer: "other" */

typedef struct worker worker;

/* One row of the per-op time table (see "Time per op" above). */
typedef struct worker_op_time {
    char name[WORKER_OP_NAME_MAX]; /* the op, or "other" for the folded ones */
    double seconds;                /* wall time of its calls, summed */
    long long calls;               /* how many calls, failed ones included */
} worker_op_time;

typedef struct worker_opts {
    const char *python;       /* default: $KOPT_PYTHON or "python3" (searched in PATH) */
    const char *script;       /* default: <fs_kopt_root()>/worker/kopt_worker.py */
    const char *log_path;     /* stderr of the worker is appended here if set (capped) */
    double ready_timeout_s;   /* <= 0: default 120 */
    int max_restarts;         /* 0: default 3; negative: never restart */
    const char *const *env;   /* extra NAME=VALUE entries, NULL-terminated, may be NULL;
                                 they override same-named variables of kopt's environment */
    const char *const *wrapper; /* argv run in front of python (a program and its options, e.g.
                                 * compute-sanitizer), NULL-terminated, may be NULL; it must keep
                                 * the worker's stdin/stdout for the protocol */
} worker_opts;

/* Start a worker and wait for its ready event.
 * Errors: KOPT_E_PYTHON when python cannot be executed (hint: --python / KOPT_PYTHON) or
 * exits with a status before it is ready (e.g. a python too old for the script);
 * KOPT_E_WORKER on no ready event within ready_timeout_s, a death by signal, garbage, or a
 * protocol version other than 1; KOPT_E_INTERNAL when the script does not exist (hint:
 * KOPT_ROOT) or a system call fails. On failure no process is left behind and *out is NULL. */
int worker_start(const worker_opts *o, worker **out, kerr *e);

/* The ready event of the running worker process (borrowed; NULL if none is running). */
const json_t *worker_info(const worker *w);

/* Send {"id":N,"op":op,...args} and wait up to timeout_s (<= 0: no limit) for the response.
 * args: a JSON object or NULL, stolen. On success *result (if result is not NULL) is a new
 * reference to the response's "result" (an empty object when absent). */
int worker_call(worker *w, const char *op, json_t *args, double timeout_s, json_t **result,
                kerr *e);

/* Same as worker_call; on success the request is remembered and replayed after restarts. */
int worker_call_setup(worker *w, const char *op, json_t *args, double timeout_s,
                      json_t **result, kerr *e);

/* The per-op time table (borrowed, valid until the next call on w): *out points at its rows,
 * the return value is their number (0, *out NULL, for a NULL worker). */
size_t worker_op_times(const worker *w, const worker_op_time **out);

/* Number of restarts so far (attempted ones included). */
int worker_restarts(const worker *w);

/* Pid of the running worker process (also its process group id), or -1. */
int worker_pid(const worker *w);

/* The "error" object of the last ok:false response, if the last call ended that way
 * (borrowed, NULL otherwise): gives "code", "message", "detail", "fatal". */
const json_t *worker_last_error(const worker *w);

/* The last lines of the worker's stderr (up to max_lines lines and 600 bytes), joined with
 * " | ", sanitized to printable UTF-8. malloc'd, never NULL ("" when nothing was seen). */
char *worker_stderr_tail(const worker *w, int max_lines);

/* The kopt code of a worker error code (PROTOCOL.md table); unknown or NULL -> INTERNAL. */
int worker_code_to_kopt(const char *code);

/* Send shutdown, wait up to 5 s for the worker to exit, then SIGKILL its process group; reap
 * it and free everything. NULL-safe. */
void worker_stop(worker *w);

/* Whether the environment entry "NAME=VALUE" passes to the worker: NAME is on the allowlist
 * (see "Environment" above) or in the comma-separated extra_names (may be NULL). */
int worker_env_allowed(const char *entry, const char *extra_names);

#endif
