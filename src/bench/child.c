/* child.c — a problem's child `kopt optimize`: command, environment, verdict (contract in
 * child.h). */
#include "bench/child.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "util/buf.h"
#include "util/fs.h"

extern char **environ;

/* kopt's environment with CUDA_VISIBLE_DEVICES replaced by the lane's GPU id. */
static char **bc_env(const char *gpu_id) {
    kvec v = {0};
    for (char **p = environ; p && *p; p++)
        if (strncmp(*p, "CUDA_VISIBLE_DEVICES=", 21) != 0) kvec_push(&v, kstrdup(*p));
    kvec_push(&v, kasprintf("CUDA_VISIBLE_DEVICES=%s", gpu_id));
    kvec_push(&v, NULL);
    return (char **)v.items;
}

/* Frees a NULL-terminated vector of strings. */
static void bc_strv_free(char **v) {
    for (size_t i = 0; v && v[i]; i++) free(v[i]);
    free(v);
}

int bench_child_cmd_make(const bench_child_opts *o, const bench_problem *p, const char *gpu_id,
                         bench_child_cmd *out, kerr *e) {
    memset(out, 0, sizeof *out);
    char *runs = fs_join(o->out_dir, "runs"), *lvl = fs_join(runs, p->level_name);
    out->out = fs_join(lvl, p->name);
    free(runs);
    free(lvl);
    int rc = fs_mkdirs(out->out, e);
    if (rc) {
        bench_child_cmd_free(out);
        return rc;
    }
    out->stdout_path = fs_join(out->out, "optimize.json");
    out->stderr_path = fs_join(out->out, "optimize.log");
    kvec a = {0};
    const char *fixed[] = {"kopt", "optimize", p->path, "-o", out->out};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) kvec_push(&a, kstrdup(fixed[i]));
    kvec_push(&a, kstrdup("--budget"));
    kvec_push(&a, kasprintf("%gs", o->budget_s));
    if (o->max_autotune) kvec_push(&a, kstrdup("--max-autotune"));
    kvec_push(&a, kstrdup("--store"));
    kvec_push(&a, kstrdup(o->store_path));
    kvec_push(&a, kstrdup("--json"));
    /* optimize.log holds the child's stage log: where a slow or killed run spent its time */
    kvec_push(&a, kstrdup("-v"));
    if (o->python && *o->python) {
        kvec_push(&a, kstrdup("--python"));
        kvec_push(&a, kstrdup(o->python));
    }
    kvec_push(&a, NULL);
    out->argv = (char **)a.items;
    out->envp = bc_env(gpu_id);
    return 0;
}

void bench_child_cmd_free(bench_child_cmd *c) {
    if (!c) return;
    free(c->out);
    free(c->stdout_path);
    free(c->stderr_path);
    bc_strv_free(c->argv);
    bc_strv_free(c->envp);
    memset(c, 0, sizeof *c);
}

/* A JSON object read from a file, or NULL. */
static json_t *bc_load_object(const char *dir, const char *name) {
    char *p = fs_join(dir, name);
    json_t *j = json_load_file(p, JSON_DECODE_ANY, NULL);
    free(p);
    if (j && !json_is_object(j)) {
        json_decref(j);
        j = NULL;
    }
    return j;
}

/* The last line of the child's log that carries an error ("error:"), else its last non-empty
 * line; malloc'd, at most 400 bytes, or NULL. */
static char *bc_log_tail(const char *log_path) {
    char *text = NULL;
    kerr e = {0};
    if (fs_read(log_path, &text, NULL, &e)) return NULL;
    char *best = NULL, *last = NULL, *save = NULL;
    for (char *ln = strtok_r(text, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
        if (strspn(ln, " \t\r") == strlen(ln)) continue;
        last = ln;
        if (strstr(ln, "error:")) best = ln;
    }
    char *pick = best ? best : last, *r = NULL;
    if (pick) {
        char *msg = strstr(pick, "error: ");
        r = kstrndup(msg ? msg + 7 : pick, 400);
    }
    free(text);
    return r;
}

/* The error document {"ok": false, "error": {kind, exit_code, message}}. */
static json_t *bc_error_doc(const char *kind, int exit_code, const char *message) {
    json_t *err = json_pack("{s:s, s:s}", "kind", kind, "message", message ? message : "");
    json_object_set_new(err, "exit_code", exit_code >= 0 ? json_integer(exit_code) : json_null());
    return json_pack("{s:b, s:o}", "ok", 0, "error", err);
}

void bench_child_judge(const bench_child_cmd *c, int wait_status, int timed_out, double timeout_s,
                       bench_verdict *v) {
    memset(v, 0, sizeof *v);
    if (timed_out) {
        v->status = STORE_BENCH_TIMEOUT;
        v->exit_code = 128 + SIGKILL;
        char *msg = kasprintf("ran longer than its limit of %.0f s (budget x timeout factor + grace) and was "
                              "killed", timeout_s);
        v->doc = bc_error_doc("timeout", v->exit_code, msg);
        free(msg);
        return;
    }
    int signaled = WIFSIGNALED(wait_status);
    v->exit_code = signaled ? 128 + WTERMSIG(wait_status) : WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
    if (v->exit_code == 0) {
        json_t *doc = bc_load_object(c->out, "report.json");
        if (!doc) doc = bc_load_object(c->out, "optimize.json");
        if (doc) {
            v->status = STORE_BENCH_DONE;
            v->doc = doc;
            return;
        }
        v->status = STORE_BENCH_FAILED;
        v->doc = bc_error_doc(kopt_code_name(KOPT_E_INTERNAL), 0, "kopt optimize exited 0 but left no readable "
                              "report.json");
        return;
    }
    v->status = STORE_BENCH_FAILED;
    json_t *out = bc_load_object(c->out, "optimize.json");
    if (out && json_is_object(json_object_get(out, "error"))) {
        v->doc = out;
        return;
    }
    json_decref(out);
    char *tail = bc_log_tail(c->stderr_path);
    char *msg = signaled ? kasprintf("kopt optimize was killed by signal %d (%s)%s%s", WTERMSIG(wait_status),
                                     strsignal(WTERMSIG(wait_status)), tail ? "; last log line: " : "", tail ? tail : "")
                         : kstrdup(tail ? tail : "kopt optimize failed without a message");
    v->doc = bc_error_doc(signaled ? "signal" : kopt_code_name(v->exit_code), v->exit_code, msg);
    free(msg);
    free(tail);
}
