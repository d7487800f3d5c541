/* owner.c — owners of shared state and their liveness (contract in owner.h). */
#include "util/owner.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fs.h"

/* This host's name ("localhost" when it has none). */
static void ow_host(char *host, size_t n) {
    if (gethostname(host, n - 1) != 0 || !host[0]) snprintf(host, n, "localhost");
    host[n - 1] = '\0';
}

char *owner_self(void) {
    char host[256];
    ow_host(host, sizeof host);
    return kasprintf("%s:%ld", host, (long)getpid());
}

void owner_liveness_init(owner_liveness *l, const char *verb, double foreign_stale_s) {
    memset(l, 0, sizeof *l);
    l->self = owner_self();
    ow_host(l->host, sizeof l->host);
    l->foreign_stale_s = foreign_stale_s;
    l->verb = verb;
}

void owner_liveness_clear(owner_liveness *l) {
    if (!l) return;
    free(l->self);
    l->self = NULL;
}

/* Whether the live process pid runs `kopt <verb>`: one of its arguments is verb. Unknown
 * (cmdline unreadable, e.g. another user's process under hidepid) counts as yes. */
static int ow_runs(long pid, const char *verb) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    char *text = NULL;
    size_t len = 0;
    kerr e = {0};
    if (fs_read(path, &text, &len, &e)) return 1;
    int yes = 0;
    for (size_t i = 0; i < len && !yes; i += strlen(text + i) + 1)
        if (!strcmp(text + i, verb)) yes = 1;
    free(text);
    return yes;
}

int owner_alive(const char *owner, double age_s, void *ctx) {
    const owner_liveness *l = ctx;
    if (owner && l->self && !strcmp(owner, l->self)) return 0;
    const char *colon = owner ? strrchr(owner, ':') : NULL;
    char *end = NULL;
    long pid = colon ? strtol(colon + 1, &end, 10) : 0;
    int parsed = colon && end && !*end && pid > 0;
    if (parsed && strlen(l->host) == (size_t)(colon - owner) && !strncmp(owner, l->host, (size_t)(colon - owner))) {
        if (kill((pid_t)pid, 0) != 0 && errno != EPERM) return 0;
        return !l->verb || ow_runs(pid, l->verb);
    }
    return age_s <= l->foreign_stale_s;
}
