/* cmd_version.c — `kopt --version` / `kopt version`: the version, the torch/triton versions kopt
 * supports, and the paths it would use (share folder, worker script, python, store), so an
 * installed or copied kopt can be checked without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "util/buf.h"
#include "util/fs.h"

static const char USAGE[] =
    "usage: kopt version   (or kopt --version)\n"
    "\n"
    "Print kopt's version, the torch and triton versions it supports, and the paths it uses:\n"
    "its share folder (worker/, templates/, prompts/: $KOPT_ROOT, else ../share/kopt next to the\n"
    "binary, else the source tree the binary was built in), the worker script, the python and the\n"
    "store.\n"
    "\n"
    "exit codes: 0 ok, 2 bad command line, 3 the worker script is missing\n";

/* Where the share folder came from, in words. */
static const char *version_root_source(const char *root) {
    const char *env = getenv("KOPT_ROOT");
    if (env && *env) return "$KOPT_ROOT";
    size_t n = strlen(root);
    return n >= 11 && !strcmp(root + n - 11, "/share/kopt") ? "installed, next to the binary" : "the source tree";
}

int cmd_version(int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (argc > 1) {
        kerr e = {0};
        kerr_set(&e, KOPT_E_USAGE, "'%s' is not an argument of 'kopt version'", argv[1]);
        return cli_fail("version", &e, 0);
    }
    char *root = fs_kopt_root();
    const char *wenv = getenv("KOPT_WORKER"), *penv = getenv("KOPT_PYTHON"), *senv = getenv("KOPT_STORE");
    const char *home = getenv("HOME");
    char *worker = (wenv && *wenv) ? kstrdup(wenv) : fs_join(root, "worker/kopt_worker.py");
    char *store =
        (senv && *senv) ? kstrdup(senv) : kasprintf("%s/.cache/kopt/store.sqlite", home && *home ? home : ".");
    int have = fs_exists(worker);
    printf("kopt %s\n", KOPT_VERSION);
    printf("supports: torch %s.x with triton %s.x (--force-version runs with others)\n", CLI_TORCH_SUPPORTED,
           CLI_TRITON_SUPPORTED);
    printf("share:    %s (%s)\n", root, version_root_source(root));
    printf("worker:   %s%s%s\n", worker, (wenv && *wenv) ? " ($KOPT_WORKER)" : "", have ? "" : "  MISSING");
    printf("python:   %s\n", (penv && *penv) ? penv : "python3 (set --python or $KOPT_PYTHON for another)");
    printf("store:    %s%s\n", store, fs_exists(store) ? "" : " (not created yet)");
    free(root);
    free(worker);
    free(store);
    if (!have) {
        fprintf(stderr, "kopt version: error: the worker script is missing; hint: set KOPT_ROOT to kopt's share "
                        "folder (the one holding worker/, templates/ and prompts/)\n");
        return KOPT_E_NOFILE;
    }
    return 0;
}
