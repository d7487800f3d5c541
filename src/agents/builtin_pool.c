/* builtin_pool.c — the pooling families (templates/kernels/pool.py.tmpl), known from what is
 * computed, not from how Inductor wrote it: an ATen avg_pool2d / avg_pool3d call that Inductor
 * kept as a library call (a vendor region, artifact/region.h: read from the region's ATen call),
 * or Inductor's own Triton kernel of one average or max pooling node (read from the FX graph
 * fragment above it); the literal arguments and the shapes call() gives the tensors decide, and
 * one Triton kernel takes the launch's place.
 *
 * Plans: {"direction":"rewrite","params":{"template":"region_avg_pool" | "avg_pool" | "max_pool",
 * "variants":[{"bh":BH,"bw":BW,"num_warps":W[,"odc":ODC]},..]}}; odc selects the template's
 * sliding strategy (pooling whose consecutive windows share input planes: 3-D down its depth,
 * 2-D down its rows). */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"
#include "artifact/pylit.h"
#include "util/buf.h"

/* The largest window unrolled into loads (KD * KH * KW). */
enum { POOL_MAX_WINDOW = 343 };

/* An int list argument of ATen's pooling schema (`int[N]`: one value for all, or N), filled
 * into out[0..nd); `dflt` when the argument is absent, or (dflt < 0) copied from `like`. */
static int int_list(const pyval *v, int nd, long long dflt, const long long *like, long long *out) {
    if (!v || ((v->kind == PYV_LIST || v->kind == PYV_TUPLE) && v->n == 0)) {
        for (int i = 0; i < nd; i++) out[i] = dflt >= 0 ? dflt : like[i];
        return dflt >= 0 || like != NULL;
    }
    if (v->kind == PYV_INT) {
        for (int i = 0; i < nd; i++) out[i] = v->i;
        return 1;
    }
    if ((v->kind != PYV_LIST && v->kind != PYV_TUPLE) || (v->n != 1 && v->n != (size_t)nd)) return 0;
    for (int i = 0; i < nd; i++) {
        const pyval *x = v->items[v->n == 1 ? 0 : i];
        if (x->kind != PYV_INT) return 0;
        out[i] = x->i;
    }
    return 1;
}

static int bool_arg(const pyval *v, int dflt, int *out) {
    if (!v) {
        *out = dflt;
        return 1;
    }
    if (v->kind != PYV_BOOL) return 0;
    *out = (int)v->i;
    return 1;
}

#define MAX_POOL_TARGET "torch.ops.prims._low_memory_max_pool_with_offsets.default"

/* Reads `call`, "torch.ops.aten.avg_pool{2,3}d.default(in_ptr0, <literal arguments>)",
 * "torch.ops.aten.max_pool{2,3}d_with_indices.default(in_ptr0, ...)" or MAX_POOL_TARGET "(in_ptr0,
 * kernel, stride, padding, dilation, ceil_mode)" (all given), into *ps's window,
 * stride, padding, dilation, ceil_mode, count_include_pad and divisor; 0 when it is not a pooling
 * the template computes. */
static int pool_parse_call(const char *call, pool_spec *ps) {
    pyval *v = NULL;
    kerr e = {0};
    if (pylit_parse(call, strlen(call), 1, &v, &e)) return 0;
    kbuf callee = KBUF_INIT;
    int ok = v->kind == PYV_CALL && pyval_dotted(v->base, &callee) && v->nkw == 0 && v->n >= 2 && v->n <= 7 &&
             pyval_is_name(v->items[0], "in_ptr0");
    const pyval *win = ok ? v->items[1] : NULL;
    const char *f = kbuf_str(&callee);
    if (ok && !strcmp(f, "torch.ops.aten.avg_pool3d.default")) ps->nd = 3;
    else if (ok && !strcmp(f, "torch.ops.aten.avg_pool2d.default")) ps->nd = 2;
    else if (ok && !strcmp(f, "torch.ops.aten.max_pool3d_with_indices.default") && v->n <= 6) ps->nd = 3, ps->max = 1;
    else if (ok && !strcmp(f, "torch.ops.aten.max_pool2d_with_indices.default") && v->n <= 6) ps->nd = 2, ps->max = 1;
    else if (ok && !strcmp(f, MAX_POOL_TARGET) && v->n == 6 && (win->kind == PYV_LIST || win->kind == PYV_TUPLE) &&
             (win->n == 2 || win->n == 3))
        ps->nd = (int)win->n, ps->max = 1;
    else ok = 0;
    const pyval *div = ok && !ps->max ? pyval_arg(v, 6) : NULL;
    ok = ok && int_list(pyval_arg(v, 1), ps->nd, -1, NULL, ps->k) &&
         int_list(pyval_arg(v, 2), ps->nd, -1, ps->k, ps->s) && int_list(pyval_arg(v, 3), ps->nd, 0, NULL, ps->p);
    if (ok && ps->max) /* (x, kernel, stride, padding, dilation = 1, ceil_mode = False) */
        ok = int_list(pyval_arg(v, 4), ps->nd, 1, NULL, ps->dl) && bool_arg(pyval_arg(v, 5), 0, &ps->ceil);
    else if (ok)
        ok = bool_arg(pyval_arg(v, 4), 0, &ps->ceil) && bool_arg(pyval_arg(v, 5), 1, &ps->count_pad) &&
             (!div || div->kind == PYV_NONE || div->kind == PYV_INT);
    int div_given = ok && div && div->kind == PYV_INT;
    if (div_given) ps->divisor = div->i;
    pyval_free(v);
    kbuf_free(&callee);
    if (!ok || ps->ceil || (div_given && ps->divisor <= 0)) return 0;
    long long window = 1;
    for (int i = 0; i < ps->nd; i++) {
        if (!ps->max) ps->dl[i] = 1;
        /* ATen's limit: padding at most half the dilated window */
        if (ps->k[i] < 1 || ps->k[i] > 64 || ps->s[i] < 1 || ps->s[i] > 64 || ps->dl[i] < 1 || ps->dl[i] > 64 ||
            ps->p[i] < 0 || 2 * ps->p[i] > ps->dl[i] * (ps->k[i] - 1) + 1)
            return 0;
        window *= ps->k[i];
    }
    return window <= POOL_MAX_WINDOW;
}

/* The extent of the (dilated) window in spatial dimension i. */
static long long pool_extent(const pool_spec *ps, int i) { return ps->dl[i] * (ps->k[i] - 1) + 1; }

/* The input and output tensors call() gives the launch against the pooling: (N, C, spatial...)
 * both with the output's size the pooling's, or with ps->in3 an (N, C, L) input and an (N, C, 1,
 * OL) output; both of one type among fp32/fp16/bf16. Sets ps->out_w. */
static int pool_tensors_ok(const kfacts *k, pool_spec *ps) {
    const char *t = kfacts_param_type(k, ps->in);
    if (strcmp(t, kfacts_param_type(k, ps->out)) || !builtin_float_ptr(t)) return 0;
    const kf_shape *in = kfacts_shape(k, ps->in), *out = kfacts_shape(k, ps->out);
    int in_rank = ps->in3 ? 3 : ps->nd + 2;
    if (!in || !out || in->ndims != in_rank || out->ndims != ps->nd + 2) return 0;
    for (int d = 0; d < 2; d++)
        if (in->d[d] != out->d[d]) return 0;
    for (int i = 0; i < ps->nd; i++) {
        /* 1-D: the unsqueezed input's height is 1 */
        long long n = ps->in3 ? (i == 0 ? 1 : in->d[2]) : in->d[2 + i];
        long long o = out->d[2 + i];
        long long span = n + 2 * ps->p[i] - pool_extent(ps, i);
        if (n < 1 || span < 0 || o != span / ps->s[i] + 1) return 0;
    }
    ps->out_w = out->d[ps->nd + 1];
    return 1;
}

static int pool_match_vendor(const kfacts *k, pool_spec *ps) {
    const char *call = k->vendor_call;
    static const char *const io[] = {"in_ptr0", "out_ptr0"};
    if (!call || !builtin_params_are(k, io, 2)) return 0;
    ps->in = "in_ptr0";
    ps->out = "out_ptr0";
    return pool_parse_call(call, ps) && !ps->max && pool_tensors_ok(k, ps);
}

/* Inductor's Triton kernel of one pooling node (builtin.h). */
static int pool_match_kernel(const kfacts *k, pool_spec *ps) {
    size_t n = k->runtime.n;
    const char *p0 = kfacts_runtime(k, 0), *p1 = kfacts_runtime(k, 1);
    const char *p2 = kfacts_runtime(k, 2), *p3 = kfacts_runtime(k, 3);
    if ((n != 3 && n != 4) || !p0 || !p1 || !p2 || strcmp(p2, "xnumel") || (n == 4 && strcmp(p3, "r0_numel"))) return 0;
    if (!strcmp(p0, "in_ptr0") && !strcmp(p1, "out_ptr0")) {
        ps->in = "in_ptr0";
        ps->out = "out_ptr0";
    } else if (!strcmp(p0, "in_out_ptr0") && !strcmp(p1, "in_ptr0")) {
        ps->in = "in_ptr0";
        ps->out = "in_out_ptr0";
        ps->out_first = 1;
    } else {
        return 0;
    }
    ps->kernel = 1;
    ps->r0numel = n == 4;
    /* the graph: one pooling node, for 1-D pooling the unsqueeze feeding it, for max pooling the
     * getitem of its values (its offsets unused), nothing else */
    const char *pool = NULL, *unsq = NULL, *item = NULL;
    for (size_t i = 0; i < k->fragment.n; i++) {
        const char *l = k->fragment.v[i];
        if (!strstr(l, "= call_function[")) continue;
        if (!pool && (strstr(l, "call_function[target=torch.ops.aten.avg_pool2d.default]") ||
                      strstr(l, "call_function[target=torch.ops.aten.avg_pool3d.default]") ||
                      strstr(l, "call_function[target=torch.ops.aten.max_pool2d_with_indices.default]") ||
                      strstr(l, "call_function[target=torch.ops.aten.max_pool3d_with_indices.default]") ||
                      strstr(l, "call_function[target=" MAX_POOL_TARGET "]")))
            pool = l;
        else if (!unsq && strstr(l, "call_function[target=torch.ops.aten.unsqueeze.default]")) unsq = l;
        else if (!item && strstr(l, "call_function[target=operator.getitem]")) item = l;
        else return 0;
    }
    /* every node with no keyword arguments; the pooling's first argument a node */
    fx_node pn, un;
    char first[BUILTIN_FX_NAME], ux[BUILTIN_FX_NAME], udim[BUILTIN_FX_NAME], extra[BUILTIN_FX_NAME];
    if (!pool || !builtin_fx_parse(pool, &pn) || !strstr(pool, "kwargs = {})") ||
        !builtin_fx_arg(&pn, 0, first, sizeof first) || first[0] != '%' || !builtin_fx_arg(&pn, 1, extra, sizeof extra))
        return 0;
    /* max pooling gives (values, offsets or indices): the graph may list the getitem of the values,
     * or not (a fragment's last line "return %getitem"); either way the output's type must be the
     * input's (pool_tensors_ok), which the offsets' (int8) and indices' (int64) are not */
    if (item && !strstr(pool, "max_pool")) return 0;
    if (item) { /* getitem(pool, 0): the values */
        char *want = kasprintf("= call_function[target=operator.getitem](args = (%%%s, 0), kwargs = {})", pn.name);
        int same = item[0] == '%' && strstr(item, want) != NULL;
        free(want);
        if (!same) return 0;
    }
    if (unsq) { /* 1-D: the pooling's input is unsqueeze(x, -2) of a graph input */
        if (!builtin_fx_parse(unsq, &un) || !strstr(unsq, "kwargs = {})") || strcmp(un.name, first + 1) ||
            !builtin_fx_arg(&un, 0, ux, sizeof ux) || ux[0] != '%' || !builtin_fx_arg(&un, 1, udim, sizeof udim) ||
            builtin_fx_arg(&un, 2, extra, sizeof extra) || (strcmp(udim, "-2") && strcmp(udim, "2")))
            return 0;
        ps->in3 = 1;
    }
    /* the call again, its first argument in_ptr0: "torch.ops." + the node's target */
    char *call = kasprintf("torch.ops.%s(in_ptr0%s)", pn.target, pn.args + strcspn(pn.args, ","));
    int ok = pool_parse_call(call, ps);
    free(call);
    if (!ok || (ps->in3 && (ps->nd != 2 || ps->k[0] != 1 || ps->s[0] != 1 || ps->p[0] != 0))) return 0;
    return pool_tensors_ok(k, ps);
}

int builtin_pool_match(const kfacts *k, pool_spec *ps) {
    memset(ps, 0, sizeof *ps);
    int ok = k->kind == ART_K_REGION ? pool_match_vendor(k, ps) : pool_match_kernel(k, ps);
    if (!ok) memset(ps, 0, sizeof *ps);
    return ok;
}

kfamily builtin_pool_family(const pool_spec *ps) {
    return !ps->kernel ? KF_REGION_AVG_POOL : ps->max ? KF_MAX_POOL : KF_AVG_POOL;
}

/* The input planes (3-D: depths; 2-D: rows) consecutive windows of the first spatial dimension
 * share, which pool.py.tmpl's sliding strategy keeps for the next output (SHARE): 1 where the
 * window is one longer than the stride, 2 for a window of 3 at stride 1, else 0 (not slid; nor a
 * dilated one, nor 1-D pooling, whose height is 1). 2-D pooling slides down its rows (ROWS). */
static int pool_slide_share(const pool_spec *ps) {
    if (ps->in3 || ps->dl[0] != 1) return 0;
    if (ps->k[0] == ps->s[0] + 1) return 1;
    return ps->s[0] == 1 && ps->k[0] == 3 ? 2 : 0;
}

static int pool_can_slide(const pool_spec *ps) { return pool_slide_share(ps) > 0; }

/* Whether its width window is {2ow-1, 2ow, 2ow+1} (PAIR: one contiguous load a row). */

static int pool_can_pair(const pool_spec *ps) {
    int w = ps->nd - 1;
    return ps->k[w] == 3 && ps->s[w] == 2 && ps->p[w] == 1 && ps->dl[w] == 1;
}

/* Appends variant {bh, bw, num_warps[, odc when > 0]} to v unless v already holds it (narrow
 * outputs make some of the tables' entries equal). */
static void add_variant(json_t *v, long long bh, long long bw, long long nw, long long odc) {
    size_t i;
    const json_t *x;
    json_array_foreach(v, i, x) {
        if (json_integer_value(json_object_get(x, "bh")) == bh && json_integer_value(json_object_get(x, "bw")) == bw &&
            json_integer_value(json_object_get(x, "num_warps")) == nw &&
            json_integer_value(json_object_get(x, "odc")) == odc)
            return;
    }
    json_t *o = json_pack("{s:I, s:I, s:I}", "bh", (json_int_t)bh, "bw", (json_int_t)bw, "num_warps", (json_int_t)nw);
    if (odc > 0) json_object_set_new(o, "odc", json_integer((json_int_t)odc));
    json_array_append_new(v, o);
}

json_t *builtin_pool_variants(const kfacts *k) {
    pool_spec ps;
    json_t *v = json_array();
    if (!builtin_pool_match(k, &ps)) return v;
    /* measured on the H200 (3-D, 64 columns): small tiles, many programs, win; one warp per 64
     * columns of one row first */
    if (ps.in3) { /* 1-D: one output row per plane, long; wider tiles, more warps */
        static const long long r[][2] = {{256, 2}, {128, 1}, {256, 4}, {128, 2}};
        for (size_t i = 0; i < sizeof r / sizeof *r; i++) add_variant(v, 1, r[i][0], r[i][1], 0);
        return v;
    }
    long long bw = builtin_next_pow2(ps.out_w);
    if (bw > 128) bw = 128;
    if (bw < 16) bw = 16;
    long long half = bw / 2 < 16 ? 16 : bw / 2;
    if (pool_can_slide(&ps) && ps.nd == 3) {
        /* measured on the H200 (k3 s2 p1, 64 output columns; do_bench medians, L2 flushed): a
         * one-row tile walking 8-16 depths, one warp: fp16 max 0.668 ms and fp32 average 0.593 ms,
         * against 0.710 (max-autotune) and 0.755 ms (the plain template's best) */
        const long long t[][3] = {{1, half, 8}, {1, bw, 16}, {1, bw, 8}, {2, half, 8}};
        for (size_t i = 0; i < sizeof t / sizeof *t; i++) add_variant(v, t[i][0], t[i][1], 1, t[i][2]);
    }
    const long long t[][3] = {
        {1, bw, bw >= 128 ? 2 : 1}, {2, bw, bw >= 64 ? 2 : 1}, {1, half, 1}, {4, bw, 2}, {1, bw, bw >= 64 ? 2 : 1}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) add_variant(v, t[i][0], t[i][1], t[i][2], 0);
    if (pool_can_slide(&ps) && ps.nd == 2) {
        /* 2-D, down the rows: a tile one output row high and the row's width (up to 256), walking
         * 16-64 output rows. On the H100 (session 49, hy05: 3x3 s1 p1 over 64 x 64 x 224 x 224
         * fp32) all four beat every plain tile and Inductor's kernel: 0.636-0.647 ms against
         * 0.760 (the best plain tile) and 0.711; the k3 s2 case (one row shared, paired loads) is
         * unmeasured, so they stay after the plain variants */
        long long rw = builtin_next_pow2(ps.out_w);
        if (rw > 256) rw = 256;
        if (rw < 16) rw = 16;
        long long nw = rw >= 256 ? 2 : 1;
        const long long r[][2] = {{rw, 32}, {rw, 16}, {rw, 64}, {rw / 2 < 16 ? 16 : rw / 2, 32}};
        for (size_t i = 0; i < sizeof r / sizeof *r; i++) add_variant(v, 1, r[i][0], nw, r[i][1]);
    }
    return v;
}

int builtin_pool_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    pool_spec ps;
    const char *tmpl = plan->tmpl_name;
    if (!builtin_pool_match(k, &ps) || plan->tmpl != builtin_pool_family(&ps))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite %s does not apply to this kernel", tmpl ? tmpl : "?");
    /* a vendor region is bound by its ATen call, a Triton kernel by its name */
    const char *binding = ps.kernel ? k->name : k->nmembers ? k->members[0].name : NULL;
    if (!binding) return kerr_set(e, KOPT_E_CANDIDATE, "%s: the launch has no name to bind to", tmpl);
    int d3 = ps.nd == 3, o = d3 ? 0 : -1; /* index of depth in k/s/p; 2-D: none */
    int share = pool_slide_share(&ps);
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        const kp_variant *var = &plan->var[i];
        long long bh = var->bh, bw = var->bw, nw = var->num_warps;
        /* odc: output depths per program, the sliding strategy (absent: the plain one) */
        long long odc = var->odc;
        int slide = odc > 0;
        if (!builtin_pow2_in(bh, 1, 64) || !builtin_pow2_in(bw, 1, 256) || !builtin_pow2_in(nw, 1, 16) ||
            bh * bw > 4096 || (slide && (!share || !builtin_pow2_in(odc, 1, 64) || (!d3 && bh != 1))))
            continue;
        int pair = slide && pool_can_pair(&ps);
        /* 2-D slid down its rows (ROWS): the template's depth is the height, its planes single
         * rows (kd/sd/pd the height's; kh 1, no padding) */
        int rows = slide && !d3;
        int dep = d3 || rows; /* k/s/p[0] are the template's depth */
        long long kd = dep ? ps.k[0] : 1, sd = dep ? ps.s[0] : 1, pd = dep ? ps.p[0] : 0;
        long long ekd = dep ? pool_extent(&ps, 0) : 1;
        long long kh = rows ? 1 : ps.k[o + 1], sh = rows ? 1 : ps.s[o + 1], ph = rows ? 0 : ps.p[o + 1];
        long long dh = rows ? 1 : ps.dl[o + 1], ekh = rows ? 1 : pool_extent(&ps, o + 1);
        tpl_arg a[] = {{.name = "MAX", .type = TPL_BOOL, .b = ps.max},
                       {.name = "IN", .type = TPL_IDENT, .ident = ps.in},
                       {.name = "OUT", .type = TPL_IDENT, .ident = ps.out},
                       {.name = "OUT_FIRST", .type = TPL_BOOL, .b = ps.out_first},
                       {.name = "XNUMEL", .type = TPL_BOOL, .b = ps.kernel},
                       {.name = "R0NUMEL", .type = TPL_BOOL, .b = ps.r0numel},
                       {.name = "IN3", .type = TPL_BOOL, .b = ps.in3},
                       {.name = "ND3", .type = TPL_BOOL, .b = d3},
                       {.name = "KD", .type = TPL_INT, .i = kd},
                       {.name = "KH", .type = TPL_INT, .i = kh},
                       {.name = "KW", .type = TPL_INT, .i = ps.k[o + 2]},
                       {.name = "SD", .type = TPL_INT, .i = sd},
                       {.name = "SH", .type = TPL_INT, .i = sh},
                       {.name = "SW", .type = TPL_INT, .i = ps.s[o + 2]},
                       {.name = "PD", .type = TPL_INT, .i = pd},
                       {.name = "PH", .type = TPL_INT, .i = ph},
                       {.name = "PW", .type = TPL_INT, .i = ps.p[o + 2]},
                       {.name = "DD", .type = TPL_INT, .i = d3 ? ps.dl[0] : 1},
                       {.name = "DH", .type = TPL_INT, .i = dh},
                       {.name = "DW", .type = TPL_INT, .i = ps.dl[o + 2]},
                       {.name = "EKD", .type = TPL_INT, .i = ekd},
                       {.name = "EKH", .type = TPL_INT, .i = ekh},
                       {.name = "EKW", .type = TPL_INT, .i = pool_extent(&ps, o + 2)},
                       {.name = "COUNT_PAD", .type = TPL_BOOL, .b = ps.count_pad},
                       {.name = "DIVISOR", .type = TPL_INT, .i = ps.divisor},
                       {.name = "BH", .type = TPL_INT, .i = bh},
                       {.name = "BW", .type = TPL_INT, .i = bw},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw},
                       {.name = "SLIDE", .type = TPL_BOOL, .b = slide},
                       {.name = "PAIR", .type = TPL_BOOL, .b = pair},
                       {.name = "ODC", .type = TPL_INT, .i = slide ? odc : 1},
                       {.name = "SHARE", .type = TPL_INT, .i = slide ? share : 1},
                       {.name = "ROWS", .type = TPL_BOOL, .b = rows}};
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label, "%s: %dd %s pooling, %lld x %lld outputs per program", tmpl, ps.in3 ? 1 : ps.nd,
                    ps.max ? "max" : "average", bh, bw);
        if (slide)
            kbuf_printf(&label, " sliding down %lld output %s%s", odc, rows ? "rows" : "depths",
                        pair ? ", paired row loads" : "");
        kbuf_printf(&label, ", num_warps=%lld", nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n", binding,
                    kbuf_str(&label));
        int rc = template_render("pool", a, sizeof a / sizeof *a, &s, e);
        if (!rc)
            json_array_append_new(cands, json_pack("{s:s, s:{s:s, s:I, s:I, s:I, s:I}, s:s}", "label", kbuf_str(&label),
                                                   "config", "template", tmpl, "bh", (json_int_t)bh, "bw",
                                                   (json_int_t)bw, "num_warps", (json_int_t)nw, "odc",
                                                   (json_int_t)(slide ? odc : 0), "source", kbuf_str(&s)));
        kbuf_free(&s);
        kbuf_free(&label);
        if (rc) {
            json_decref(cands);
            return rc;
        }
    }
    return builtin_candidates_answer(cands, tmpl,
                                     "bh <= 64, bw <= 256, num_warps <= 16, powers of two, bh * bw <= 4096; odc (a "
                                     "power of two <= 64) only where consecutive windows share input planes (3-D: "
                                     "depths; 2-D: rows, with bh 1), undilated, with a window one longer than the "
                                     "stride or of 3 at stride 1",
                                     out, e);
}
