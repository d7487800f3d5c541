#include "verify/memcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gates/machine.h"
#include "util/buf.h"
#include "util/fs.h"
#include "worker/worker.h"

struct memcheck {
    worker *w;
    char *sanitizer, *python, *dir;
    json_t *load; /* the load request, replayed when the worker is started again */
    double timeout_s;
    char *log;      /* the sanitizer's log file */
    long long seen; /* bytes of it already parsed */
};

char *memcheck_find(void) {
    const char *env = getenv("KOPT_COMPUTE_SANITIZER");
    if (env && *env) return env[0] == '/' && access(env, X_OK) == 0 ? kstrdup(env) : NULL;
    char *p = machine_which("compute-sanitizer");
    if (p) return p;
    static const char cuda[] = "/usr/local/cuda/bin/compute-sanitizer";
    return access(cuda, X_OK) == 0 ? kstrdup(cuda) : NULL;
}

int memcheck_locate(char **out, kerr *e) {
    if ((*out = memcheck_find())) return 0;
    return kerr_set(e, KOPT_E_PYTHON,
                    "--memcheck: compute-sanitizer not found (PATH, /usr/local/cuda/bin); hint: set "
                    "KOPT_COMPUTE_SANITIZER to its absolute path");
}

/* Report lines that are not errors: the banner, summaries, API-error notes. */
static int mc_not_error(const char *t, size_t n) {
    static const char *const skip[] = {"COMPUTE-SANITIZER", "ERROR SUMMARY",      "LEAK SUMMARY",
                                       "Program hit",       "Target application", "Saved host backtrace"};
    for (size_t i = 0; i < sizeof skip / sizeof *skip; i++) {
        size_t k = strlen(skip[i]);
        if (n >= k && !strncmp(t, skip[i], k)) return 1;
    }
    return 0;
}

static void mc_copy(char *dst, size_t cap, const char *what, size_t wn, const char *at, size_t an) {
    if (at) snprintf(dst, cap, "%.*s %.*s", (int)wn, what, (int)an, at);
    else snprintf(dst, cap, "%.*s", (int)wn, what);
}

void memcheck_parse(const char *log, size_t len, memcheck_result *r) {
    memset(r, 0, sizeof *r);
    const char *p = log, *end = log + len;
    const char *what = NULL; /* the open report's header text */
    size_t wn = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        size_t n = (size_t)(le - p);
        if (n >= 9 && !strncmp(p, "=========", 9)) {
            const char *t = p + 9;
            size_t tn = n - 9;
            size_t ind = 0;
            while (ind < tn && t[ind] == ' ') ind++;
            const char *txt = t + ind;
            size_t xn = tn - ind;
            while (xn && (txt[xn - 1] == '\r' || txt[xn - 1] == ' ')) xn--;
            if (ind == 1 && xn > 0 && !mc_not_error(txt, xn)) {
                if (what) { /* the previous report had no location */
                    if (!r->other_errors) mc_copy(r->first_other, sizeof r->first_other, what, wn, NULL, 0);
                    r->other_errors++;
                }
                what = txt;
                wn = xn;
            } else if (what && ind > 1 && xn > 3 && !strncmp(txt, "at ", 3)) {
                int cand = 0;
                for (size_t i = 0; i + sizeof MEMCHECK_CAND_PREFIX - 1 <= xn && !cand; i++)
                    cand = !strncmp(txt + i, MEMCHECK_CAND_PREFIX, sizeof MEMCHECK_CAND_PREFIX - 1);
                if (cand) {
                    if (!r->cand_errors) mc_copy(r->first, sizeof r->first, what, wn, txt, xn);
                    r->cand_errors++;
                } else {
                    if (!r->other_errors) mc_copy(r->first_other, sizeof r->first_other, what, wn, txt, xn);
                    r->other_errors++;
                }
                what = NULL;
            }
        }
        p = nl ? nl + 1 : end;
    }
    if (what) {
        if (!r->other_errors) mc_copy(r->first_other, sizeof r->first_other, what, wn, NULL, 0);
        r->other_errors++;
    }
}

/* (Re)starts the sanitized worker with a fresh log and loads the problem into it. */
static int mc_start(memcheck *m, kerr *e) {
    worker_stop(m->w);
    m->w = NULL;
    m->seen = 0;
    unlink(m->log);
    char *wlog = fs_join(m->dir, "memcheck-worker.log");
    const char *script = getenv("KOPT_WORKER");
    /* --report-api-errors no: PyTorch probes the runtime with calls that fail by design;
     * --padding: a guard zone after every allocation, so that a read past one tensor does not
     * land silently in the next (on the H200 an unmasked read 8 KB past the input went unseen
     * without it) */
    const char *wrap[] = {m->sanitizer,    "--tool", "memcheck",  "--log-file",     m->log, "--report-api-errors", "no",
                          "--print-limit", "100",    "--padding", MEMCHECK_PADDING, NULL};
    const char *env[] = {"PYTORCH_NO_CUDA_MEMORY_CACHING=1", NULL};
    worker_opts wo = {.python = m->python,
                      .script = (script && *script) ? script : NULL,
                      .log_path = wlog,
                      .ready_timeout_s = m->timeout_s > 300 ? m->timeout_s : 300,
                      .max_restarts = -1,
                      .env = env,
                      .wrapper = wrap};
    int rc = worker_start(&wo, &m->w, e);
    free(wlog);
    if (!rc) rc = worker_call_setup(m->w, "load", json_deep_copy(m->load), m->timeout_s, NULL, e);
    if (rc) kerr_wrap(e, "starting the worker under compute-sanitizer (%s)", m->sanitizer);
    return rc;
}

int memcheck_open(const char *sanitizer, const char *python, const char *dir, const json_t *load_args, double timeout_s,
                  memcheck **out, kerr *e) {
    *out = NULL;
    memcheck *m = kcalloc(1, sizeof *m);
    m->sanitizer = kstrdup(sanitizer);
    m->python = python ? kstrdup(python) : NULL;
    m->dir = kstrdup(dir);
    m->load = json_deep_copy(load_args);
    m->timeout_s = timeout_s;
    m->log = fs_join(dir, "memcheck.log");
    int rc = mc_start(m, e);
    if (rc) {
        memcheck_close(m);
        return rc;
    }
    *out = m;
    return 0;
}

int memcheck_run(memcheck *m, const char *op, json_t *args, double timeout_s, memcheck_result *r, kerr *e) {
    memset(r, 0, sizeof *r);
    if (!m->w) {
        json_decref(args);
        return kerr_set(e, KOPT_E_WORKER, "the worker under compute-sanitizer could not be started again");
    }
    json_t *res = NULL;
    int rc = worker_call(m->w, op, args, timeout_s, &res, e);
    json_decref(res);
    char *text = NULL;
    size_t len = 0;
    kerr le = {0};
    if (!fs_read(m->log, &text, &len, &le)) {
        if ((long long)len > m->seen) memcheck_parse(text + m->seen, len - (size_t)m->seen, r);
        m->seen = (long long)len;
    }
    free(text);
    /* the sanitizer stops printing after --print-limit reports, and a crashed kernel leaves the
     * context unusable: after any report or failure the next candidate gets a fresh worker */
    if (rc || r->cand_errors || r->other_errors) {
        kerr se = {0};
        if (mc_start(m, &se)) {
            worker_stop(m->w);
            m->w = NULL;
            if (!rc) {
                *e = se;
                rc = se.code;
            }
        }
    }
    return rc;
}

void memcheck_close(memcheck *m) {
    if (!m) return;
    worker_stop(m->w);
    free(m->sanitizer);
    free(m->python);
    free(m->dir);
    json_decref(m->load);
    free(m->log);
    free(m);
}
