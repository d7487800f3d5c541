/* identity.c — suite key, owner and owner liveness (contract in identity.h). */
#include "bench/identity.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/fs.h"

void bench_suite_key(double budget_s, int max_autotune, const char *gpu, char out[STORE_SHA_HEX]) {
    char *text = kasprintf("kopt.bench.suite/1\nbudget_s=%.3f\nmax_autotune=%d\ngpu=%s\n", budget_s,
                           max_autotune ? 1 : 0, gpu ? gpu : "unknown");
    store_sha256_hex(text, strlen(text), out);
    free(text);
}

/* This host's name ("localhost" when it has none). */
static void bi_host(char *host, size_t n) {
    if (gethostname(host, n - 1) != 0 || !host[0]) snprintf(host, n, "localhost");
    host[n - 1] = '\0';
}

char *bench_owner_self(void) {
    char host[256];
    bi_host(host, sizeof host);
    return kasprintf("%s:%ld", host, (long)getpid());
}

void bench_liveness_init(bench_liveness *l, double foreign_stale_s) {
    memset(l, 0, sizeof *l);
    l->self = bench_owner_self();
    bi_host(l->host, sizeof l->host);
    l->foreign_stale_s = foreign_stale_s;
}

void bench_liveness_clear(bench_liveness *l) {
    if (!l) return;
    free(l->self);
    l->self = NULL;
}

/* Whether the live process pid runs `kopt bench`: its arguments include "bench". Unknown
 * (cmdline unreadable, e.g. another user's process under hidepid) counts as yes. */
static int bi_is_bench(long pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
    char *text = NULL;
    size_t len = 0;
    kerr e = {0};
    if (fs_read(path, &text, &len, &e)) return 1;
    int yes = 0;
    for (size_t i = 0; i < len && !yes; i += strlen(text + i) + 1)
        if (!strcmp(text + i, "bench")) yes = 1;
    free(text);
    return yes;
}

int bench_owner_alive(const char *owner, double age_s, void *ctx) {
    const bench_liveness *l = ctx;
    if (owner && l->self && !strcmp(owner, l->self)) return 0;
    const char *colon = owner ? strrchr(owner, ':') : NULL;
    char *end = NULL;
    long pid = colon ? strtol(colon + 1, &end, 10) : 0;
    int parsed = colon && end && !*end && pid > 0;
    if (parsed && strlen(l->host) == (size_t)(colon - owner) && !strncmp(owner, l->host, (size_t)(colon - owner))) {
        if (kill((pid_t)pid, 0) != 0 && errno != EPERM) return 0;
        return bi_is_bench(pid);
    }
    return age_s <= l->foreign_stale_s;
}
