/* child.h — one problem run as a child `kopt optimize`: its command line, environment and
 * output folder, and the verdict on what it left behind.
 *
 * The child is `/proc/self/exe optimize PROBLEM -o OUT --budget T [--max-autotune] --store S
 * --json -v [--python P]` with CUDA_VISIBLE_DEVICES set to its lane's GPU id; OUT is
 * DIR/runs/<level>/<name>, its stdout goes to OUT/optimize.json and its stderr (the stage log)
 * to OUT/optimize.log.
 *
 * Verdict (bench_child_judge): exit 0 with a readable report (OUT/report.json, else the stdout
 * document) is 'done' with that document; exit 0 without one is 'failed' (an internal error
 * object); another exit is 'failed' with the child's JSON error object from stdout, or one made
 * from the last error line of its log; death by a signal is 'failed' with exit code 128+signal;
 * a timeout is 'timeout' (exit 128+SIGKILL) with an error object of kind "timeout".
 *
 * Ownership: a bench_child_cmd owns its vectors and strings (bench_child_cmd_free); the
 * verdict's doc is a new reference for the caller.
 */
#ifndef KOPT_BENCH_CHILD_H
#define KOPT_BENCH_CHILD_H

#include <jansson.h>

#include "bench/suite.h"
#include "store/store.h"
#include "util/err.h"

typedef struct bench_child_opts {
    const char *out_dir;        /* DIR */
    const char *store_path;
    const char *python;         /* may be NULL */
    double budget_s;
    int max_autotune;
} bench_child_opts;

typedef struct bench_child_cmd {
    char *out;                  /* DIR/runs/<level>/<name> (created) */
    char *stdout_path, *stderr_path;
    char **argv, **envp;        /* NULL-terminated, owned */
} bench_child_cmd;

/* Builds the command for problem p on GPU `gpu_id` and creates its output folder
 * (KOPT_E_IO when it cannot be created). */
int bench_child_cmd_make(const bench_child_opts *o, const bench_problem *p, const char *gpu_id,
                         bench_child_cmd *out, kerr *e);
void bench_child_cmd_free(bench_child_cmd *c);

typedef struct bench_verdict {
    store_bench_status status;  /* done | failed | timeout */
    int exit_code;              /* -1 when unknown */
    json_t *doc;                /* the report, or {"ok": false, "error": {...}} */
} bench_verdict;

/* Judges a child from its wait status (ignored when timed_out) and its output folder. */
void bench_child_judge(const bench_child_cmd *c, int wait_status, int timed_out, double timeout_s,
                       bench_verdict *v);

#endif
