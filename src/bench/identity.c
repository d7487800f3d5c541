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
#include "util/owner.h"

void bench_suite_key(double budget_s, int max_autotune, const char *gpu, char out[STORE_SHA_HEX]) {
    char *text = kasprintf("kopt.bench.suite/1\nbudget_s=%.3f\nmax_autotune=%d\ngpu=%s\n", budget_s,
                           max_autotune ? 1 : 0, gpu ? gpu : "unknown");
    store_sha256_hex(text, strlen(text), out);
    free(text);
}

char *bench_owner_self(void) { return owner_self(); }

void bench_liveness_init(bench_liveness *l, double foreign_stale_s) { owner_liveness_init(l, "bench", foreign_stale_s); }

void bench_liveness_clear(bench_liveness *l) { owner_liveness_clear(l); }

int bench_owner_alive(const char *owner, double age_s, void *ctx) { return owner_alive(owner, age_s, ctx); }
