/* cmd_store.c — `kopt store`: look into and combine the SQLite memory of `kopt optimize`.
 *   kopt store [--store PATH] runs               recent runs, one line each
 *   kopt store [--store PATH] export RUN_ID      a run as JSON (kernels, attempts, experiences)
 *   kopt store [--store PATH] merge OTHER...     import other hosts' stores (idempotent)
 * runs and export never create a store; merge creates its target when missing. */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/fs.h"

static const char USAGE[] =
    "usage: kopt store [--store PATH] runs | export RUN_ID | merge OTHER.sqlite...\n"
    "\n"
    "The memory of 'kopt optimize' (default $KOPT_STORE or ~/.cache/kopt/store.sqlite).\n"
    "  runs            one line per run: id, problem, GPU, start, status\n"
    "  export RUN_ID   the run as JSON: its kernels, every attempt with its verdict, experiences\n"
    "  merge OTHER...  import runs from other stores (one per host of a multi-host run) into the\n"
    "                  store (created when missing); merging the same file again adds nothing\n"
    "'runs' and 'export' only read: on a missing store they create nothing and exit 3.\n"
    "\n"
    "exit codes: 0 ok, 2 bad command line, 3 the store (runs, export) or an OTHER (merge) does\n"
    "  not exist or is not a file, 11 store failure (damaged or foreign file, unknown run id),\n"
    "  1 internal error\n";

static char *default_path(const char *arg) {
    const char *env = getenv("KOPT_STORE"), *home = getenv("HOME");
    if (arg) return kstrdup(arg);
    if (env && *env) return kstrdup(env);
    return kasprintf("%s/.cache/kopt/store.sqlite", home && *home ? home : ".");
}

/* The verb's arguments, checked before the store is opened (so a bad command line touches no
 * file): 0, or an exit code with e filled. */
static int store_check_args(const char *verb, int nargs, char **args, int64_t *run_id, kerr *e) {
    if (!strcmp(verb, "runs")) {
        if (nargs) return kerr_set(e, KOPT_E_USAGE, "'runs' takes no argument, got '%s'", args[0]);
        return 0;
    }
    if (!strcmp(verb, "export")) {
        if (nargs != 1) return kerr_set(e, KOPT_E_USAGE, "'export' takes one RUN_ID; see 'kopt store --help'");
        long id = 0;
        int rc = cli_parse_long("RUN_ID", args[0], 1, LONG_MAX, &id, e);
        *run_id = id;
        return rc;
    }
    if (!strcmp(verb, "merge")) {
        if (nargs < 1) return kerr_set(e, KOPT_E_USAGE, "'merge' takes one or more OTHER.sqlite files");
        for (int i = 0; i < nargs; i++) {
            int rc = cli_input_file("store to merge", args[i], e);
            if (rc) return rc;
        }
        return 0;
    }
    return kerr_set(e, KOPT_E_USAGE, "'%s' is not a store command (runs, export, merge); see 'kopt store --help'",
                    verb);
}

/* One line per run, newest first. */
static int store_print_runs(kstore *s, kerr *e) {
    json_t *all = NULL;
    int rc = store_runs_list(s, 50, &all, e);
    if (rc) return rc;
    size_t i;
    json_t *r;
    if (!json_array_size(all)) printf("no runs in %s\n", store_path(s));
    else printf("%-6s %-40s %-14s %-24s %s\n", "run", "problem", "gpu", "started", "status");
    json_array_foreach(all, i, r) {
        const char *prob = json_string_value(json_object_get(r, "problem_path"));
        const char *base = prob ? strrchr(prob, '/') : NULL;
        const char *gpu = json_string_value(json_object_get(r, "gpu"));
        const char *started = json_string_value(json_object_get(r, "started_at"));
        const char *status = json_string_value(json_object_get(r, "status"));
        printf("%-6lld %-40.40s %-14.14s %-24.24s %s\n", (long long)json_integer_value(json_object_get(r, "id")),
               base ? base + 1 : (prob ? prob : "?"), gpu ? gpu : "?", started ? started : "?",
               status ? status : "unfinished");
    }
    json_decref(all);
    return 0;
}

int cmd_store(int argc, char **argv) {
    static const struct option longopts[] = {
        {"store", required_argument, 0, 'S'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *arg = NULL;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (opt == 'S') arg = optarg;
        else if (opt == 'h') {
            fputs(USAGE, stdout);
            return 0;
        } else {
            fputs(USAGE, stderr);
            return KOPT_E_USAGE;
        }
    }
    if (cli_wants_help(argc, argv)) {
        fputs(USAGE, stdout);
        return 0;
    }
    if (optind >= argc) {
        fputs(USAGE, stderr);
        return KOPT_E_USAGE;
    }
    const char *verb = argv[optind];
    kerr e = {0};
    int64_t run_id = 0;
    int rc = store_check_args(verb, argc - optind - 1, argv + optind + 1, &run_id, &e);
    if (rc) return cli_fail("store", &e, 0);
    char *path = default_path(arg);
    /* runs and export only read: a missing store is reported, never created */
    if (strcmp(verb, "merge") != 0) {
        if (!fs_exists(path))
            kerr_set(&e, KOPT_E_NOFILE,
                     "no store at %s (kopt optimize creates it; --store or $KOPT_STORE name another)", path);
        else cli_input_file("store", path, &e);
        if (e.code) {
            free(path);
            return cli_fail("store", &e, 0);
        }
    }
    kstore *s = NULL;
    rc = store_open(path, &s, &e);
    free(path);
    if (rc) return cli_fail("store", &e, 0);
    if (!strcmp(verb, "export")) {
        json_t *doc = NULL;
        rc = store_export_json(s, run_id, &doc, &e);
        if (!rc) {
            char *t = json_dumps(doc, JSON_INDENT(2));
            puts(t);
            free(t);
        }
        json_decref(doc);
    } else if (!strcmp(verb, "merge")) {
        for (int i = optind + 1; i < argc && !rc; i++) {
            store_merge_stats st = {0};
            rc = store_merge(s, argv[i], &st, &e);
            if (!rc)
                printf("%s: %d runs, %d kernels, %d attempts, %d experiences, %d LLM calls added; %d completed\n",
                       argv[i], st.runs, st.kernels, st.attempts, st.experiences, st.llm_calls, st.updated);
        }
    } else {
        rc = store_print_runs(s, &e);
    }
    if (rc) cli_fail("store", &e, 0);
    store_close(s);
    return rc;
}
