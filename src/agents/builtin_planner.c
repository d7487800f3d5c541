/* builtin_planner.c — the planner role: launch-configuration plans for one kernel.
 *
 * ctx {"kernel": {"name","heuristic","persistent":bool,"constexprs":["XBLOCK","R0_BLOCK",..],
 *                 "numels":{"xnumel":N,"r0_numel":N,"ynumel":N}, "masked":{"x":b,"r0":b,"y":b}},
 *      "history":[{"config":{...},"kernel_ms":x|null,"outcome":"accepted|refused|screened-out",
 *                  "gate":N}], "round": k, "budget":{"candidates_left":N}}
 * -> {"plans":[{"direction":"rewrite","params":{"template":..,"variants":[..]}} (round 0,
 *      when a one-pass template applies and was not refused before),
 *      {"direction":"launch_config","params":{"configs":[{XBLOCK,R0_BLOCK,YBLOCK,
 *      num_warps,num_stages}]},"rationale":"..."}]} or {"plans":[]} when there is nothing new.
 *
 * Round 0 is, first, the neighbours of the configuration Inductor's autotuner chose for the
 * kernel on these shapes ("tuned_config", as the worker's profile reported it; when Inductor's own
 * coordinate descent found it, only its twin with the last pass walked backward, where revloop
 * allows one) and then a coarse grid over the block sizes the kernel's masks
 * allow (an unmasked dimension only takes block sizes that divide its numel), with warps
 * matched to the tile;
 * later rounds are a beam around the fastest measured configurations (neighbours: one step in
 * one knob; where revloop.h allows it, the knob "reverse_last_pass" turns the kernel's last pass
 * over its chunks backward, so that its re-reads start with what the pass before read last). Diversity rule: a configuration already tried is never proposed again, and when
 * the last round brought no improvement over the round before, the planner stops proposing
 * (the search moves to the next kernel) instead of collapsing onto the same region. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/revloop.h"
#include "util/buf.h"

/* A launch configuration; rv: the last r0 pass over its chunks backward (revloop.h). */
typedef struct { int xb, rb, yb, nw, ns, rv; } cfg;

/* One entry of the search's history (agent.h's planner context), read once at the planner's
 * edge by hist_read. */
typedef struct hentry {
    cfg c;                 /* its configuration's block sizes, warps and stages (0: absent) */
    int is_template;       /* a rewrite's candidate: "template" in its configuration */
    double ms;             /* kernel_ms; NAN when it was not measured */
    agent_outcome outcome;
    int round;
} hentry;
typedef struct hist {
    hentry *v;
    size_t n;
} hist;

/* The configurations proposed so far (in order; push keeps it within its cap). */
enum { PLAN_MAX_CFGS = 64 };
typedef struct clist {
    cfg v[PLAN_MAX_CFGS];
    size_t n;
} clist;

static cfg cfg_of(const json_t *o) {
    return (cfg){(int)json_integer_value(json_object_get(o, "XBLOCK")), (int)json_integer_value(json_object_get(o, "R0_BLOCK")),
                 (int)json_integer_value(json_object_get(o, "YBLOCK")), (int)json_integer_value(json_object_get(o, "num_warps")),
                 (int)json_integer_value(json_object_get(o, "num_stages")), json_is_true(json_object_get(o, "reverse_last_pass"))};
}

static void hist_read(const json_t *history, hist *h) {
    h->n = 0;
    h->v = json_array_size(history) ? kcalloc(json_array_size(history), sizeof *h->v) : NULL;
    size_t i;
    json_t *e;
    json_array_foreach(history, i, e) {
        const json_t *c = json_object_get(e, "config"), *ms = json_object_get(e, "kernel_ms");
        h->v[h->n++] = (hentry){cfg_of(c), json_object_get(c, "template") != NULL,
                                json_is_number(ms) ? json_number_value(ms) : NAN,
                                agent_outcome_parse(json_string_value(json_object_get(e, "outcome"))),
                                (int)json_integer_value(json_object_get(e, "round"))};
    }
}


/* block b is allowed for a dimension of n elements (masked or not) */
static int fits(long long b, long long n, int is_masked) {
    if (b < 1) return 0;
    if (n <= 0) return 1;
    if (!is_masked && n % b) return 0;
    return b <= 2 * n || b == 1;
}

static json_t *cfg_json(const cfg *c) {
    json_t *o = json_pack("{s:i, s:i, s:i}", "XBLOCK", c->xb, "num_warps", c->nw, "num_stages", c->ns);
    if (c->rb) json_object_set_new(o, "R0_BLOCK", json_integer(c->rb));
    if (c->yb) json_object_set_new(o, "YBLOCK", json_integer(c->yb));
    if (c->rv) json_object_set_new(o, "reverse_last_pass", json_true());
    return o;
}

static int cfg_eq(const cfg *a, const cfg *b) {
    return a->xb == b->xb && a->rb == b->rb && a->yb == b->yb && a->nw == b->nw && a->ns == b->ns && a->rv == b->rv;
}

static int tried(const hist *history, const cfg *c) {
    for (size_t i = 0; i < history->n; i++)
        if (cfg_eq(c, &history->v[i].c)) return 1;
    return 0;
}

/* A plausible configuration: the tile has between 1 and 64 elements per thread. A persistent
 * reduction without an R0_BLOCK parameter holds its whole reduction (r0_numel rounded up to a
 * power of two) in each of its XBLOCK rows: that is part of its tile (1M rows of 768 on the H100:
 * XBLOCK=256 with 2 warps, 4096 elements a thread, did not compile within 77 s). */
static int plausible(const kfacts *k, const cfg *c) {
    long long rb = c->rb;
    if (!rb && k->persistent && !kf_strs_has(&k->constexprs, "R0_BLOCK") && kfacts_numel(k, "r0_numel") > 0)
        rb = builtin_next_pow2(kfacts_numel(k, "r0_numel"));
    long long tile = (long long)c->xb * (rb ? rb : 1) * (c->yb ? c->yb : 1);
    long long threads = 32LL * c->nw;
    return tile >= threads && tile <= 64 * threads && tile <= 65536;
}

static int valid(const kfacts *k, const cfg *c) {
    const kf_strs *ce = &k->constexprs;
    if (c->nw < 1 || c->ns < 1) return 0;
    long long yn = kfacts_numel(k, "ynumel");
    if (!fits(c->xb, kfacts_numel(k, "xnumel"), k->masked_x)) return 0;
    if (kf_strs_has(ce, "R0_BLOCK") && !fits(c->rb, kfacts_numel(k, "r0_numel"), k->masked_r0)) return 0;
    if (kf_strs_has(ce, "YBLOCK") && !fits(c->yb, yn, k->masked_y)) return 0;
    if (kf_strs_has(ce, "YBLOCK") && yn / (c->yb ? c->yb : 1) > 65535) return 0;
    return plausible(k, c);
}

static void push(clist *list, const kfacts *k, const hist *history, const cfg *c, size_t max) {
    if (list->n >= max || list->n >= PLAN_MAX_CFGS || !valid(k, c) || tried(history, c)) return;
    for (size_t i = 0; i < list->n; i++)
        if (cfg_eq(c, &list->v[i])) return;
    list->v[list->n++] = *c;
}

static const int WARPS[] = {2, 4, 8, 16, 32};

/* A grid kept by XBLOCK (powers of two, 1 to 256), in the order each was added, only the
 * configurations the kernel takes and the history has not tried, each once (the reduction
 * blocks' list may name one size twice: rfull / 4 == 4096). */
enum { GRID_XB = 9, GRID_PER_XB = 64 };
typedef struct xgrid {
    cfg v[GRID_XB][GRID_PER_XB];
    size_t n[GRID_XB];
} xgrid;

static void xgrid_add(xgrid *g, const kfacts *k, const hist *history, const cfg *c) {
    int xi = 0;
    while (xi < GRID_XB && (1 << xi) != c->xb) xi++;
    if (xi == GRID_XB || g->n[xi] >= GRID_PER_XB || !valid(k, c) || tried(history, c)) return;
    for (size_t i = 0; i < g->n[xi]; i++)
        if (cfg_eq(c, &g->v[xi][i])) return;
    g->v[xi][g->n[xi]++] = *c;
}

/* The grid taken in passes over XBLOCK, so that a short list still spans the tile shapes:
 * pass p takes each XBLOCK's p-th configuration (ha08, a logsumexp over a middle axis, wanted
 * XBLOCK 16-64, and a 16-entry list ordered by row length had ended at 8). */
static void xgrid_push(const xgrid *g, clist *list, const kfacts *k, const hist *history, size_t max) {
    for (size_t p = 0; p < GRID_PER_XB; p++)
        for (int xi = 0; xi < GRID_XB; xi++)
            if (p < g->n[xi]) push(list, k, history, &g->v[xi][p], max);
}

static void coarse(clist *list, const kfacts *k, const hist *history, size_t max) {
    int has_r = kf_strs_has(&k->constexprs, "R0_BLOCK"), has_y = kf_strs_has(&k->constexprs, "YBLOCK");
    long long rn = kfacts_numel(k, "r0_numel");
    xgrid g = {.n = {0}};
    if (has_r) {
        /* Rows that fit on chip first (one pass, the re-read served by L2), then narrower tiles;
         * within an XBLOCK one stage before two (the shapes before their stage variants). */
        int rfull = 1;
        while (rn > 0 && rfull < rn && rfull < 16384) rfull *= 2;
        int rbs[] = {rfull, rfull / 2, rfull / 4, 4096, 2048, 1024};
        for (int xb = 1; xb <= 64; xb *= 2)
            for (int ns = 1; ns <= 2; ns++)
                for (size_t r = 0; r < sizeof rbs / sizeof *rbs; r++)
                    for (size_t w = 0; w < 5; w++) {
                        cfg c = {xb, rbs[r], 0, WARPS[w], ns, 0};
                        long long tile = (long long)xb * rbs[r];
                        if (tile < 1024 || tile > 32768) continue;
                        if (tile / (32 * WARPS[w]) > 32 || tile / (32 * WARPS[w]) < 8) continue;
                        xgrid_add(&g, k, history, &c);
                    }
        xgrid_push(&g, list, k, history, max);
    } else if (has_y) {
        int xbs[] = {16, 32, 64, 128, 256}, ybs[] = {16, 32, 64, 128};
        for (size_t a = 0; a < 5; a++)
            for (size_t b = 0; b < 4; b++)
                for (size_t w = 1; w < 4; w++) {
                    cfg c = {xbs[a], 0, ybs[b], WARPS[w], 1, 0};
                    if ((long long)xbs[a] * ybs[b] / (32 * WARPS[w]) != 8) continue;
                    push(list, k, history, &c, max);
                }
    } else if (k->persistent) {
        for (int xb = 1; xb <= 256; xb *= 2)
            for (size_t w = 0; w < 5; w++) {
                cfg c = {xb, 0, 0, WARPS[w], 1, 0};
                xgrid_add(&g, k, history, &c);
            }
        xgrid_push(&g, list, k, history, max);
    } else {
        int xbs[] = {1024, 2048, 4096, 512, 8192};
        for (size_t a = 0; a < 5; a++)
            for (size_t w = 1; w < 5; w++) {
                cfg c = {xbs[a], 0, 0, WARPS[w], 1, 0};
                if (xbs[a] / (32 * WARPS[w]) < 4 || xbs[a] / (32 * WARPS[w]) > 16) continue;
                push(list, k, history, &c, max);
            }
    }
}

enum { NEIGHBOURS = 13 };

/* The configurations one knob one step away from b: block sizes doubled and halved, warps
 * doubled and halved, stages 1 <-> 2 and 3, and the tile reshaped at its size (XBLOCK doubled
 * with R0_BLOCK halved and the reverse: a step in XBLOCK alone can leave the register budget
 * at the warps that won, as ha08's XBLOCK 16 -> 32 at R0_BLOCK 2048 and 16 warps did), and, where
 * the kernel's last pass may run backward (rev), the same configuration with that pass turned.
 * Some may equal b or be invalid: push() filters. */
static void neighbours(const cfg *b, int rev, cfg n[NEIGHBOURS]) {
    for (int j = 0; j < NEIGHBOURS; j++) n[j] = *b;
    n[0].xb *= 2; n[1].xb = b->xb > 1 ? b->xb / 2 : 1;
    n[2].nw *= 2; n[3].nw = b->nw > 1 ? b->nw / 2 : 1;
    n[4].ns = b->ns == 1 ? 2 : 1; n[5].ns = 3;
    if (b->rb) { n[6].rb *= 2; n[7].rb /= 2; }
    if (b->yb) { n[8].yb *= 2; n[9].yb /= 2; }
    if (b->rb > 1) { n[10].xb *= 2; n[10].rb /= 2; }
    if (b->rb && b->xb > 1) { n[11].xb /= 2; n[11].rb *= 2; }
    if (rev) n[12].rv = !b->rv;
}

/* Neighbours of the best measured configurations (launch configurations only, not a rewrite's
 * variants): one knob one step away. */
static void beam(clist *list, const kfacts *k, const hist *history, int rev, size_t width, size_t max) {
    /* the measured entries, fastest first (a stable insertion: ties keep the history's order) */
    const hentry **best = history->n ? kcalloc(history->n, sizeof *best) : NULL;
    size_t nbest = 0;
    for (size_t i = 0; i < history->n; i++) {
        const hentry *h = &history->v[i];
        /* a rewrite's entry is no configuration of this kernel: its "config" holds the
         * template's variant (level1/35's pool template, the fastest, once made a centre
         * with num_stages 0) */
        if (isnan(h->ms) || h->is_template) continue;
        size_t pos = 0;
        while (pos < nbest && best[pos]->ms <= h->ms) pos++;
        memmove(best + pos + 1, best + pos, (nbest - pos) * sizeof *best);
        best[pos] = h;
        nbest++;
    }
    for (size_t i = 0; i < nbest && i < width; i++) {
        cfg n[NEIGHBOURS];
        neighbours(&best[i]->c, rev, n);
        for (int j = 0; j < NEIGHBOURS; j++)
            if (n[j].nw <= 32) push(list, k, history, &n[j], max);
    }
    free(best);
}

/* Coordinate descent's first step from Inductor's own autotuned configuration (the kernel
 * context's "tuned_config", the worker's report of it: optimize/tuned.h): its neighbours, one
 * knob one step away, the configuration itself left out (it is what the module runs). When
 * Inductor's coordinate descent found it, its neighbours were measured already: only its twin
 * with the last pass walked backward (rev), which no autotuner tries. Returns how many were
 * added; *twin_only is set when that twin is all the step is. */
static size_t seed_from_tuned(clist *list, const kfacts *k, const hist *history, int rev, size_t max, int *twin_only) {
    const kf_tuned *t = &k->tuned;
    *twin_only = 0;
    if (!t->present || (t->found_by_coordesc && !rev)) return 0;
    cfg b = {t->xblock, t->r0_block, t->yblock, t->num_warps, t->num_stages, 0};
    if (b.xb < 1 || b.nw < 1 || b.ns < 1) return 0;
    /* its block sizes must be the kernel's: a reduction block for a kernel without one is not
     * this kernel's configuration */
    if (kf_strs_has(&k->constexprs, "R0_BLOCK") != (b.rb > 0) || kf_strs_has(&k->constexprs, "YBLOCK") != (b.yb > 0)) return 0;
    size_t before = list->n;
    if (t->found_by_coordesc) {
        cfg tw = b;
        tw.rv = 1;
        push(list, k, history, &tw, max);
        *twin_only = list->n > before;
        return list->n - before;
    }
    cfg n[NEIGHBOURS];
    neighbours(&b, rev, n);
    for (int j = 0; j < NEIGHBOURS; j++)
        if (n[j].nw <= 32 && memcmp(&n[j], &b, sizeof b)) push(list, k, history, &n[j], max);
    return list->n - before;
}

static double best_ms(const hist *history, int before_round) {
    double best = INFINITY;
    for (size_t i = 0; i < history->n; i++) {
        const hentry *h = &history->v[i];
        if (before_round >= 0 && h->round >= before_round) continue;
        if (!isnan(h->ms) && h->ms < best) best = h->ms;
    }
    return best;
}

/* The plans for kernel k in the planner's context ctx into *out (a new {"plans": [...]}, with
 * "why" when there are none). */
static void plan_kernel(const kfacts *k, const hist *history, const json_t *ctx, json_t **out) {
    int round = (int)json_integer_value(json_object_get(ctx, "round"));
    json_int_t left = json_integer_value(json_object_get(json_object_get(ctx, "budget"), "candidates_left"));
    size_t max = left > 0 && left < 16 ? (size_t)left : 16;
    json_t *plans = json_array();
    *out = json_pack("{s:o}", "plans", plans);
    /* a region (several launches as one): only its rewrite, once; there is no launch
     * configuration of its own to search */
    if (k->kind == ART_K_REGION) {
        kfamily rt = builtin_region_match(k);
        if (rt == KF_NONE) json_object_set_new(*out, "why", json_string("no rewrite template for this region"));
        else if (round > 0) json_object_set_new(*out, "why", json_string("the region's rewrite variants were all tried"));
        else
            json_array_append_new(plans, json_pack("{s:s, s:{s:s, s:o}, s:s}", "direction", "rewrite", "params", "template",
                                                   kfamily_name(rt), "variants", builtin_region_variants(rt, k), "rationale",
                                                   rt == KF_SCAN
                                                       ? "Inductor copies the input and the output around its scan (flip, "
                                                         "cumsum, flip): one suffix scan reads and writes each element once"
                                                       : kfamily_rationale(rt)));
        return;
    }
    for (size_t c = 0; c < k->constexprs.n; c++) {
        const char *n = k->constexprs.v[c];
        if (strcmp(n, "XBLOCK") && strcmp(n, "R0_BLOCK") && strcmp(n, "YBLOCK")) {
            json_object_set_new(*out, "why", json_sprintf("constexpr parameter %s is not a block size the built-in executor knows", n));
            return;
        }
    }
    if (!kf_strs_has(&k->constexprs, "XBLOCK")) {
        json_object_set_new(*out, "why", json_string("no XBLOCK parameter"));
        return;
    }
    /* A rewrite first, when a template applies and it has not been refused before. */
    double eps = 0;
    kfamily tmpl = builtin_rewrite_match(k, &eps);
    if (tmpl != KF_NONE && round == 0) {
        int refused = 0;
        for (size_t i = 0; i < history->n; i++) refused |= history->v[i].is_template && history->v[i].outcome == AGENT_OUT_REFUSED;
        kfamily second = builtin_rewrite_second(k, tmpl);
        for (int j = 0; !refused && j < 2; j++) {
            kfamily f = j ? second : tmpl;
            if (f != KF_NONE)
                json_array_append_new(plans, json_pack("{s:s, s:{s:s, s:o}, s:s}", "direction", "rewrite", "params", "template",
                                                       kfamily_name(f), "variants", builtin_rewrite_variants(f, k),
                                                       "rationale", kfamily_rationale(f)));
        }
    }
    clist configs = {.n = 0};
    const char *why;
    int rev = kf_strs_has(&k->constexprs, "R0_BLOCK") && revloop_applies(k->jit_source, NULL, 0);
    if (round == 0) {
        /* the autotuned configuration's neighbours first, on top of the usual grid's share */
        int twin_only = 0;
        size_t seeded = seed_from_tuned(&configs, k, history, rev, max, &twin_only);
        size_t cap = max + seeded;
        if (left > 0 && cap > (size_t)left) cap = (size_t)left;
        coarse(&configs, k, history, cap);
        why = twin_only ? "the configuration Inductor's coordinate descent found with its last pass walked backward "
                          "(revloop), then a coarse grid over the block sizes the kernel's masks allow"
              : seeded  ? "coordinate descent's first step from the configuration Inductor's autotuner chose (one "
                          "knob one step away), then a coarse grid over the block sizes the kernel's masks allow"
                        : "coarse grid over the block sizes the kernel's masks allow, warps matched to the tile";
    } else {
        /* diversity: stop when the previous round did not improve on the rounds before it */
        if (round >= 2 && !(best_ms(history, round) < best_ms(history, round - 1))) {
            json_object_set_new(*out, "why", json_string("the last round did not improve: search converged"));
            return;
        }
        beam(&configs, k, history, rev, 3, max);
        why = "beam around the three fastest measured configurations (one knob one step away)";
    }
    if (configs.n == 0) {
        if (!json_array_size(plans)) json_object_set_new(*out, "why", json_string("no untried configuration left"));
        return;
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < configs.n; i++) json_array_append_new(arr, cfg_json(&configs.v[i]));
    json_array_append_new(plans, json_pack("{s:s, s:{s:o}, s:s}", "direction", "launch_config", "params", "configs", arr,
                                           "rationale", why));
}

/* The agent edge: the context's kernel and history read once into kfacts and a hist, the plans
 * made over them. */
static int planner_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    (void)self;
    (void)e;
    kfacts k;
    hist h;
    kfacts_read(json_object_get(ctx, "kernel"), &k);
    hist_read(json_object_get(ctx, "history"), &h);
    plan_kernel(&k, &h, ctx, out);
    free(h.v);
    kfacts_free(&k);
    return 0;
}

static const agent_vtable PLANNER_VT = {planner_act, NULL, NULL};

agent *builtin_planner_new(void) { return builtin_agent(AGENT_PLANNER, &PLANNER_VT, NULL); }
