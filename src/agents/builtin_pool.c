/* builtin_pool.c — the average-pooling family (templates/kernels/region_avg_pool.py.tmpl) for
 * vendor regions (artifact/region.h): an ATen avg_pool2d / avg_pool3d call that Inductor kept
 * as a library call, read from the region's ATen call (its literal arguments) and the shapes
 * call() gives its tensors, replaced by one Triton kernel.
 *
 * Plans: {"direction":"rewrite","params":{"template":"region_avg_pool","variants":[{"bh":BH,
 * "bw":BW,"num_warps":W},..]}}. */
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

int builtin_avg_pool_match(const json_t *k, pool_spec *ps) {
    memset(ps, 0, sizeof *ps);
    const char *call = json_string_value(json_object_get(k, "vendor_call"));
    static const char *const io[] = {"in_ptr0", "out_ptr0"};
    if (!call || !builtin_params_are(k, io, 2)) return 0;
    const char *t = builtin_param_type(k, "in_ptr0");
    if (strcmp(t, builtin_param_type(k, "out_ptr0")) ||
        (strcmp(t, "*fp32") && strcmp(t, "*fp16") && strcmp(t, "*bf16")))
        return 0;
    pyval *v = NULL;
    kerr e = {0};
    if (pylit_parse(call, strlen(call), 1, &v, &e)) return 0;
    kbuf callee = KBUF_INIT;
    int ok = v->kind == PYV_CALL && pyval_dotted(v->base, &callee) && v->nkw == 0 && v->n >= 2 && v->n <= 7 &&
             pyval_is_name(v->items[0], "in_ptr0");
    if (ok && !strcmp(kbuf_str(&callee), "torch.ops.aten.avg_pool3d.default")) ps->nd = 3;
    else if (ok && !strcmp(kbuf_str(&callee), "torch.ops.aten.avg_pool2d.default")) ps->nd = 2;
    else ok = 0;
    const pyval *div = ok ? pyval_arg(v, 6) : NULL;
    ok = ok && int_list(pyval_arg(v, 1), ps->nd, -1, NULL, ps->k) &&
         int_list(pyval_arg(v, 2), ps->nd, -1, ps->k, ps->s) && int_list(pyval_arg(v, 3), ps->nd, 0, NULL, ps->p) &&
         bool_arg(pyval_arg(v, 4), 0, &ps->ceil) && bool_arg(pyval_arg(v, 5), 1, &ps->count_pad) &&
         (!div || div->kind == PYV_NONE || div->kind == PYV_INT);
    int div_given = ok && div && div->kind == PYV_INT;
    if (div_given) ps->divisor = div->i;
    pyval_free(v);
    kbuf_free(&callee);
    if (!ok || ps->ceil || (div_given && ps->divisor <= 0)) return 0;
    long long window = 1;
    for (int i = 0; i < ps->nd; i++) {
        if (ps->k[i] < 1 || ps->k[i] > 64 || ps->s[i] < 1 || ps->s[i] > 64 || ps->p[i] < 0 || 2 * ps->p[i] > ps->k[i])
            return 0;
        window *= ps->k[i];
    }
    if (window > POOL_MAX_WINDOW) return 0;
    /* the tensors: (N, C, spatial...) with the output's size the pooling's */
    const json_t *in = builtin_shape(k, "in_ptr0"), *out = builtin_shape(k, "out_ptr0");
    if (!in || !out || json_array_size(in) != (size_t)ps->nd + 2 || json_array_size(out) != (size_t)ps->nd + 2)
        return 0;
    for (int d = 0; d < 2; d++)
        if (builtin_shape_dim(in, (size_t)d) != builtin_shape_dim(out, (size_t)d)) return 0;
    for (int i = 0; i < ps->nd; i++) {
        long long n = builtin_shape_dim(in, (size_t)(2 + i)), o = builtin_shape_dim(out, (size_t)(2 + i));
        if (n < 1 || o != (n + 2 * ps->p[i] - ps->k[i]) / ps->s[i] + 1 || o < 1) return 0;
    }
    ps->out_w = builtin_shape_dim(out, (size_t)ps->nd + 1);
    return 1;
}

json_t *builtin_avg_pool_variants(const json_t *k) {
    pool_spec ps;
    json_t *v = json_array();
    if (!builtin_avg_pool_match(k, &ps)) return v;
    /* measured on the H200 (3-D, 64 columns): small tiles, many programs, win; one warp per 64
     * columns of one row first */
    long long bw = builtin_next_pow2(ps.out_w);
    if (bw > 128) bw = 128;
    if (bw < 16) bw = 16;
    const long long t[][3] = {{1, bw, bw >= 128 ? 2 : 1},
                              {2, bw, bw >= 64 ? 2 : 1},
                              {1, bw / 2 < 16 ? 16 : bw / 2, 1},
                              {4, bw, 2},
                              {1, bw, bw >= 64 ? 2 : 1}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        int dup = 0;
        for (size_t j = 0; j < i; j++) dup |= t[j][0] == t[i][0] && t[j][1] == t[i][1] && t[j][2] == t[i][2];
        if (!dup)
            json_array_append_new(v, json_pack("{s:I, s:I, s:I}", "bh", t[i][0], "bw", t[i][1], "num_warps", t[i][2]));
    }
    return v;
}

int builtin_avg_pool_act(const json_t *k, const json_t *plan, json_t **out, kerr *e) {
    pool_spec ps;
    if (!builtin_avg_pool_match(k, &ps))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite region_avg_pool does not apply to this kernel");
    const json_t *mem = json_array_get(json_object_get(k, "members"), 0);
    const char *binding = json_string_value(json_object_get(mem, "name"));
    if (!binding) return kerr_set(e, KOPT_E_CANDIDATE, "region_avg_pool: the region names no ATen call");
    int d3 = ps.nd == 3, o = d3 ? 0 : -1; /* index of depth in k/s/p; 2-D: none */
    json_t *cands = json_array();
    size_t i;
    json_t *var;
    json_array_foreach(json_object_get(json_object_get(plan, "params"), "variants"), i, var) {
        long long bh = json_integer_value(json_object_get(var, "bh")),
                  bw = json_integer_value(json_object_get(var, "bw"));
        long long nw = json_integer_value(json_object_get(var, "num_warps"));
        if (!builtin_pow2_in(bh, 1, 64) || !builtin_pow2_in(bw, 1, 256) || !builtin_pow2_in(nw, 1, 16) ||
            bh * bw > 4096)
            continue;
        tpl_arg a[] = {{.name = "ND3", .type = TPL_BOOL, .b = d3},
                       {.name = "KD", .type = TPL_INT, .i = d3 ? ps.k[0] : 1},
                       {.name = "KH", .type = TPL_INT, .i = ps.k[o + 1]},
                       {.name = "KW", .type = TPL_INT, .i = ps.k[o + 2]},
                       {.name = "SD", .type = TPL_INT, .i = d3 ? ps.s[0] : 1},
                       {.name = "SH", .type = TPL_INT, .i = ps.s[o + 1]},
                       {.name = "SW", .type = TPL_INT, .i = ps.s[o + 2]},
                       {.name = "PD", .type = TPL_INT, .i = d3 ? ps.p[0] : 0},
                       {.name = "PH", .type = TPL_INT, .i = ps.p[o + 1]},
                       {.name = "PW", .type = TPL_INT, .i = ps.p[o + 2]},
                       {.name = "COUNT_PAD", .type = TPL_BOOL, .b = ps.count_pad},
                       {.name = "DIVISOR", .type = TPL_INT, .i = ps.divisor},
                       {.name = "BH", .type = TPL_INT, .i = bh},
                       {.name = "BW", .type = TPL_INT, .i = bw},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label, "region_avg_pool: %dd average pooling, %lld x %lld outputs per program, num_warps=%lld",
                    ps.nd, bh, bw, nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n", binding,
                    kbuf_str(&label));
        int rc = template_render("region_avg_pool", a, sizeof a / sizeof *a, &s, e);
        if (!rc)
            json_array_append_new(cands,
                                  json_pack("{s:s, s:{s:s, s:I, s:I, s:I}, s:s}", "label", kbuf_str(&label), "config",
                                            "template", "region_avg_pool", "bh", (json_int_t)bh, "bw", (json_int_t)bw,
                                            "num_warps", (json_int_t)nw, "source", kbuf_str(&s)));
        kbuf_free(&s);
        kbuf_free(&label);
        if (rc) {
            json_decref(cands);
            return rc;
        }
    }
    if (!json_array_size(cands)) {
        json_decref(cands);
        return kerr_set(e, KOPT_E_CANDIDATE,
                        "rewrite region_avg_pool: no usable variant (bh <= 64, bw <= 256, num_warps <= 16, "
                        "powers of two, bh * bw <= 4096)");
    }
    *out = json_pack("{s:o}", "candidates", cands);
    return 0;
}
