#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "util/buf.h"
#include "util/log.h"
#include "worker/worker.h"

int cli_fail(const char *cmd, const kerr *e, int json_mode) {
    fprintf(stderr, "kopt %s: error: %s\n", cmd, e->msg[0] ? e->msg : "unknown error");
    if (json_mode) {
        json_t *o = json_pack("{s:b, s:{s:s, s:i, s:s}}", "ok", 0, "error", "kind", kopt_code_name(e->code),
                              "exit_code", e->code, "message", e->msg);
        char *s = json_dumps(o, JSON_INDENT(2));
        if (s) {
            puts(s);
            free(s);
        }
        json_decref(o);
    }
    return e->code ? e->code : KOPT_E_INTERNAL;
}

int cli_wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    return 0;
}

/* The one-line complaint about an unsupported torch/triton, or NULL when both are supported
 * (malloc'd). */
static char *cli_version_problem(const json_t *info) {
    const char *torch = json_string_value(json_object_get(info, "torch"));
    const char *triton = json_string_value(json_object_get(info, "triton"));
    if (cli_version_matches(torch, CLI_TORCH_SUPPORTED) && cli_version_matches(triton, CLI_TRITON_SUPPORTED))
        return NULL;
    return kasprintf("the worker's python has torch %s with triton %s; kopt supports torch %s.x with triton %s.x "
                     "(Inductor's output module changes between releases)",
                     torch ? torch : "(none)", triton ? triton : "(none)", CLI_TORCH_SUPPORTED, CLI_TRITON_SUPPORTED);
}

int cli_force_version(int flag) {
    const char *env = getenv("KOPT_FORCE_VERSION");
    return flag || (env && *env && strcmp(env, "0") != 0);
}

int cli_start_worker(const char *cmd, const char *python, const char *log_path, int max_restarts, int force_version,
                     worker **w, kerr *e) {
    const char *script = getenv("KOPT_WORKER");
    worker_opts wo = {.python = python,
                      .script = (script && *script) ? script : NULL,
                      .log_path = log_path,
                      .max_restarts = max_restarts};
    *w = NULL;
    int rc = worker_start(&wo, w, e);
    if (rc) return rc;
    const json_t *info = worker_info(*w);
    const char *why = json_string_value(json_object_get(info, "import_error"));
    char *vp = NULL;
    static const char no_torch[] = "the worker's python cannot import torch (%s); hint: pass --python or set "
                                   "KOPT_PYTHON to a python with torch and triton";
    if (!json_string_value(json_object_get(info, "torch")))
        rc = kerr_set(e, KOPT_E_PYTHON, no_torch, why ? why : "unknown reason");
    else if ((vp = cli_version_problem(info)) && !cli_force_version(force_version))
        rc = kerr_set(e, KOPT_E_PYTHON,
                      "%s; hint: --force-version runs anyway, --python or KOPT_PYTHON choose another python", vp);
    else if (vp) fprintf(stderr, "kopt %s: warning: %s; running anyway (--force-version)\n", cmd, vp);
    if (!rc && !json_is_true(json_object_get(info, "cuda")))
        rc = kerr_set(e, KOPT_E_NOGPU,
                      "no CUDA device is visible to torch on this machine; kopt %s needs an NVIDIA GPU", cmd);
    free(vp);
    if (rc) {
        worker_stop(*w);
        *w = NULL;
    }
    return rc;
}

void cli_progress_init(cli_progress *p, int json_mode) {
    p->tty = isatty(2) && !json_mode && log_level() < LOG_INFO;
    p->start = (long)time(NULL);
}

void cli_progress_line(const char *line, void *ctx) {
    const cli_progress *p = ctx;
    if (!p->tty) return;
    fprintf(stderr, "\r\033[K[%3lds] %.150s ...", (long)time(NULL) - p->start, line);
    fflush(stderr);
}

void cli_progress_end(const cli_progress *p) {
    if (p->tty) fputs("\r\033[K", stderr);
}
