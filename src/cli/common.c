#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_fail(const char *cmd, const kerr *e, int json_mode) {
    fprintf(stderr, "kopt %s: error: %s\n", cmd, e->msg[0] ? e->msg : "unknown error");
    if (json_mode) {
        json_t *o = json_pack("{s:b, s:{s:s, s:i, s:s}}", "ok", 0, "error", "kind",
                              kopt_code_name(e->code), "exit_code", e->code, "message", e->msg);
        char *s = json_dumps(o, JSON_INDENT(2));
        if (s) { puts(s); free(s); }
        json_decref(o);
    }
    return e->code ? e->code : KOPT_E_INTERNAL;
}

int cli_wants_help(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return 1;
    return 0;
}
