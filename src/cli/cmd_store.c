/* cmd_store.c — `kopt store`: look into and combine the SQLite memory of `kopt optimize`.
 *   kopt store [--store PATH] runs               recent runs, one line each
 *   kopt store [--store PATH] export RUN_ID      a run as JSON (kernels, attempts, experiences)
 *   kopt store [--store PATH] merge OTHER...     import other hosts' stores (idempotent) */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "store/store.h"
#include "util/buf.h"

static const char USAGE[] =
    "usage: kopt store [--store PATH] runs | export RUN_ID | merge OTHER.sqlite...\n"
    "\n"
    "The memory of 'kopt optimize' (default $KOPT_STORE or ~/.cache/kopt/store.sqlite).\n"
    "  runs            one line per run: id, problem, GPU, start, status\n"
    "  export RUN_ID   the run as JSON: its kernels, every attempt with its verdict, experiences\n"
    "  merge OTHER...  import runs from other stores (one per host of a multi-host run);\n"
    "                  merging the same file again adds nothing\n";

static char *default_path(const char *arg) {
    const char *env = getenv("KOPT_STORE"), *home = getenv("HOME");
    if (arg) return kstrdup(arg);
    if (env && *env) return kstrdup(env);
    return kasprintf("%s/.cache/kopt/store.sqlite", home && *home ? home : ".");
}

int cmd_store(int argc, char **argv) {
    static const struct option longopts[] = {{"store", required_argument, 0, 'S'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    const char *arg = NULL;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        if (opt == 'S') arg = optarg;
        else if (opt == 'h') { fputs(USAGE, stdout); return 0; }
        else { fputs(USAGE, stderr); return KOPT_E_USAGE; }
    }
    if (optind >= argc) { fputs(USAGE, stderr); return KOPT_E_USAGE; }
    const char *verb = argv[optind];
    kerr e = {0};
    char *path = default_path(arg);
    kstore *s = NULL;
    int rc = store_open(path, &s, &e);
    free(path);
    if (rc) return cli_fail("store", &e, 0);
    if (!strcmp(verb, "export") && optind + 1 < argc) {
        json_t *doc = NULL;
        rc = store_export_json(s, atoll(argv[optind + 1]), &doc, &e);
        if (!rc) {
            char *t = json_dumps(doc, JSON_INDENT(2));
            puts(t);
            free(t);
        }
        json_decref(doc);
    } else if (!strcmp(verb, "merge") && optind + 1 < argc) {
        for (int i = optind + 1; i < argc && !rc; i++) {
            store_merge_stats st = {0};
            rc = store_merge(s, argv[i], &st, &e);
            if (!rc)
                printf("%s: %d runs, %d kernels, %d attempts, %d experiences, %d LLM calls added; %d completed\n", argv[i],
                       st.runs, st.kernels, st.attempts, st.experiences, st.llm_calls, st.updated);
        }
    } else if (!strcmp(verb, "runs")) {
        json_t *all = NULL;
        rc = store_runs_list(s, 50, &all, &e);
        if (rc) goto done;
        size_t i;
        json_t *d;
        printf("%-6s %-40s %-14s %-24s %s\n", "run", "problem", "gpu", "started", "status");
        json_array_foreach(all, i, d) {
            const json_t *r = d;
            const char *prob = json_string_value(json_object_get(r, "problem_path"));
            const char *base = prob ? strrchr(prob, '/') : NULL;
            printf("%-6lld %-40.40s %-14.14s %-24.24s %s\n", (long long)json_integer_value(json_object_get(r, "id")),
                   base ? base + 1 : (prob ? prob : "?"),
                   json_string_value(json_object_get(r, "gpu")) ? json_string_value(json_object_get(r, "gpu")) : "?",
                   json_string_value(json_object_get(r, "started_at")) ? json_string_value(json_object_get(r, "started_at")) : "?",
                   json_string_value(json_object_get(r, "status")) ? json_string_value(json_object_get(r, "status")) : "unfinished");
        }
        json_decref(all);
    } else {
        fputs(USAGE, stderr);
        rc = KOPT_E_USAGE;
    }
done:
    if (rc && rc != KOPT_E_USAGE) cli_fail("store", &e, 0);
    store_close(s);
    return rc;
}
