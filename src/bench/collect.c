/* collect.c — summary records from the store (contract in collect.h). */
#include "bench/collect.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

void bench_records_free(bench_records *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) bench_record_clear(&r->v[i]);
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

/* How much a row tells: done > failed/timeout > running. */
static int bc_rank(store_bench_status st) {
    return st == STORE_BENCH_DONE ? 3 : st == STORE_BENCH_RUNNING ? 1 : 2;
}

/* Whether row a tells more than row b about the same problem. */
static int bc_better(const store_bench_row *a, const store_bench_row *b) {
    int ra = bc_rank(a->status), rb = bc_rank(b->status);
    if (ra != rb) return ra > rb;
    return strcmp(a->started_at ? a->started_at : "", b->started_at ? b->started_at : "") > 0;
}

/* Suite order: relative path (bench_rel_cmp), then start. */
static int bc_rec_cmp(const void *x, const void *y) {
    const bench_record *a = x, *b = y;
    int c = bench_rel_cmp(a->rel, b->rel);
    return c ? c : strcmp(a->started_at ? a->started_at : "", b->started_at ? b->started_at : "");
}

int bench_collect(kstore *s, const char *const *keys, size_t nkeys, const bench_suite *sel, double budget_s,
                  bench_records *out, kerr *e) {
    memset(out, 0, sizeof *out);
    store_bench_rowset rows = {0};
    int rc = store_bench_rows(s, keys, nkeys, &rows, e);
    if (rc) return rc;
    if (sel) {
        out->v = kcalloc(sel->n ? sel->n : 1, sizeof *out->v);
        for (size_t i = 0; i < sel->n; i++) {
            const bench_problem *p = &sel->v[i];
            const store_bench_row *best = NULL;
            for (size_t j = 0; j < rows.n; j++)
                if (!strcmp(rows.v[j].problem_rel, p->rel) && !strcmp(rows.v[j].problem_sha, p->sha) &&
                    (!best || bc_better(&rows.v[j], best)))
                    best = &rows.v[j];
            if (best) bench_record_from_row(&out->v[out->n], best);
            else bench_record_init(&out->v[out->n], p->rel, p->sha, p->level, budget_s);
            out->n++;
        }
    } else {
        out->v = kcalloc(rows.n ? rows.n : 1, sizeof *out->v);
        for (size_t j = 0; j < rows.n; j++) bench_record_from_row(&out->v[out->n++], &rows.v[j]);
        if (out->n > 1) qsort(out->v, out->n, sizeof *out->v, bc_rec_cmp);
    }
    store_bench_rows_clear(&rows);
    return 0;
}
