/* builtin_groupstats.c — group-norm statistics over channels-last data
 * (templates/kernels/cl_group_stats.py.tmpl): the kernel Inductor emits between a channels-last
 * convolution (cuDNN's NHWC output) and a GroupNorm, which takes the mean and Welford's m2 of each
 * (sample, group) and reads every group's few channels of each pixel as a separate strided
 * piece (level2/02 of the suite: 2.44x its own memory floor on the H200).
 *
 * What the kernel computes is read from its FX graph fragment: exactly var_mean (correction 0,
 * keepdim) over dims [2, 3] of a reshape to (N, G, C/G, H*W) of the input converted to float32,
 * optionally of a convolution (whose bias the kernel adds). How it reads is confirmed from its
 * source: the loads at (r0_2 + CG*x0 + C*r0_3 + H*W*C*x1) -- channel g*CG + r0_2 of pixel r0_3 of
 * sample x1, the channels-last address -- and, with a bias, in_ptr1 at (r0_2 + CG*x0) added to
 * it; Welford's mean stored to out_ptr0 and m2 to out_ptr1 at x4 = xindex. The plan checks the
 * layout again at each launch (sizes and strides of in_ptr0).
 *
 * Plans: {"direction":"rewrite","params":{"template":"cl_group_stats","variants":
 * [{"nsplit":S,"sb":B,"num_warps":W},..]}}. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"
#include "util/buf.h"

/* The FX graph: [convolution ->] [convert_element_type ->] reshape [N, G, CG, HW] -> var_mean
 * over [2, 3], nothing else; fills gs->n, g, cg, hw and whether a convolution is there. */
static int gs_graph(const kfacts *k, gs_spec *gs, int *conv) {
    const char *vm = NULL, *rs = NULL;
    int nconv = 0, ncvt = 0;
    for (size_t i = 0; i < k->fragment.n; i++) {
        const char *l = k->fragment.v[i];
        if (!strstr(l, "= call_function[")) continue;
        if (strstr(l, "call_function[target=torch.ops.aten.var_mean.correction]") && !vm) vm = l;
        else if (strstr(l, "call_function[target=torch.ops.aten.reshape.default]") && !rs) rs = l;
        else if (strstr(l, "call_function[target=torch.ops.aten.convolution.default]")) nconv++;
        else if (strstr(l, "call_function[target=torch.ops.prims.convert_element_type.default]")) ncvt++;
        else return 0;
    }
    fx_node vn, rn;
    char a0[BUILTIN_FX_NAME], a1[BUILTIN_FX_NAME], extra[BUILTIN_FX_NAME];
    if (!vm || !rs || nconv > 1 || ncvt > 1 || !builtin_fx_parse(vm, &vn) || !builtin_fx_parse(rs, &rn)) return 0;
    if (!builtin_fx_arg(&vn, 0, a0, sizeof a0) || a0[0] != '%' || strcmp(a0 + 1, rn.name) ||
        !builtin_fx_arg(&vn, 1, a1, sizeof a1) || strcmp(a1, "[2, 3]") || builtin_fx_arg(&vn, 2, extra, sizeof extra) ||
        strcmp(vn.kwargs, "correction: 0, keepdim: True"))
        return 0;
    long long d[4];
    char shape[BUILTIN_FX_ARGS];
    if (!builtin_fx_arg(&rn, 1, shape, sizeof shape) || builtin_fx_arg(&rn, 2, extra, sizeof extra) ||
        sscanf(shape, "[%lld, %lld, %lld, %lld]", &d[0], &d[1], &d[2], &d[3]) != 4)
        return 0;
    char back[BUILTIN_FX_ARGS]; /* the list is exactly those four integers */
    snprintf(back, sizeof back, "[%lld, %lld, %lld, %lld]", d[0], d[1], d[2], d[3]);
    if (strcmp(back, shape)) return 0;
    gs->n = d[0];
    gs->g = d[1];
    gs->cg = d[2];
    gs->hw = d[3];
    *conv = nconv;
    return 1;
}

/* The source reads channels-last and stores Welford's mean and m2 (see the file's comment). */
static int gs_source(const kfacts *k, const gs_spec *gs) {
    const char *src = k->source;
    if (!src || !strstr(src, "triton_helpers.welford_reduce(")) return 0;
    char want[256];
    const long long c = gs->g * gs->cg;
    snprintf(want, sizeof want, "    x0 = (xindex %% %lld)\n    x1 = xindex // %lld\n", gs->g, gs->g);
    if (!strstr(src, want)) return 0;
    snprintf(want, sizeof want, "        r0_2 = (r0_index %% %lld)\n        r0_3 = r0_index // %lld\n", gs->cg, gs->cg);
    if (!strstr(src, want)) return 0;
    /* (the masks vary with the sizes: "r0_mask & xmask", "xmask"; the plan checks the sizes) */
    snprintf(want, sizeof want, "    tmp0 = tl.load(in_ptr0 + (r0_2 + %lld*x0 + %lld*r0_3 + %lld*x1), ", gs->cg, c,
             gs->hw * c);
    if (!strstr(src, want)) return 0;
    const char *acc = "tmp0";
    if (gs->bias) {
        snprintf(want, sizeof want, "    tmp1 = tl.load(in_ptr1 + (r0_2 + %lld*x0), ", gs->cg);
        if (!strstr(src, want) || !strstr(src, "        tmp2 = tmp0 + tmp1\n")) return 0;
        acc = "tmp2";
    }
    /* the reduced value is the load (plus the bias) converted and broadcast, nothing more */
    const char *w = strstr(src, "= triton_helpers.welford_reduce(\n            ");
    if (!w) return 0;
    w += strlen("= triton_helpers.welford_reduce(\n            ");
    char bname[32];
    if (sscanf(w, "%31[a-z0-9_],", bname) != 1) return 0;
    snprintf(want, sizeof want, "        %s = tl.broadcast_to(", bname);
    const char *b = strstr(src, want);
    if (!b) return 0;
    char inner[32];
    if (sscanf(b + strlen(want), "%31[a-z0-9_]", inner) != 1) return 0;
    snprintf(want, sizeof want, "        %s = tl.broadcast_to(%s, [XBLOCK, R0_BLOCK])\n", bname, inner);
    if (strncmp(b, want, strlen(want))) return 0; /* the whole line: a name broadcast, nothing else */
    if (strcmp(inner, acc)) {                     /* one conversion to float32 between them */
        snprintf(want, sizeof want, "        %s = %s.to(tl.float32)\n", inner, acc);
        if (!strstr(src, want)) return 0;
    }
    /* the final combine and the two stores */
    const char *f = strstr(src, " = triton_helpers.welford(");
    if (!f) return 0;
    const char *ls = f;
    while (ls > src && ls[-1] != '\n') ls--;
    char mean[32], m2[32], wt[32], mcol[32], qcol[32];
    if (sscanf(ls, " %31[a-z0-9_], %31[a-z0-9_], %31[a-z0-9_] = triton_helpers.welford(", mean, m2, wt) != 3) return 0;
    const char *st = f;
    const char *m = NULL, *q = NULL;
    char line[96];
    snprintf(line, sizeof line, " = %s[:, None]\n", mean);
    if (!(m = strstr(st, line))) return 0;
    snprintf(line, sizeof line, " = %s[:, None]\n", m2);
    if (!(q = strstr(st, line))) return 0;
    while (m > src && m[-1] != ' ') m--;
    while (q > src && q[-1] != ' ') q--;
    if (sscanf(m, "%31[a-z0-9_] =", mcol) != 1 || sscanf(q, "%31[a-z0-9_] =", qcol) != 1) return 0;
    snprintf(line, sizeof line, "    tl.store(out_ptr0 + (x4), %s, xmask)\n", mcol);
    if (!strstr(src, line)) return 0;
    snprintf(line, sizeof line, "    tl.store(out_ptr1 + (x4), %s, xmask)\n", qcol);
    if (!strstr(src, line) || !strstr(src, "    x4 = xindex\n")) return 0;
    snprintf(line, sizeof line, "'num_load': %d, 'num_store': 2, 'num_reduction': 2", gs->bias ? 2 : 1);
    return strstr(src, line) != NULL;
}

int builtin_group_stats_match(const kfacts *k, gs_spec *gs) {
    memset(gs, 0, sizeof *gs);
    static const char *const with_bias[] = {"in_ptr0", "in_ptr1", "out_ptr0", "out_ptr1", "xnumel", "r0_numel"};
    static const char *const no_bias[] = {"in_ptr0", "out_ptr0", "out_ptr1", "xnumel", "r0_numel"};
    if (k->kind != ART_K_REDUCTION) return 0;
    if (builtin_params_are(k, with_bias, 6)) gs->bias = 1;
    else if (!builtin_params_are(k, no_bias, 5)) return 0;
    int conv = 0;
    if (!gs_graph(k, gs, &conv) || (gs->bias && !conv)) goto no;
    /* an input of fp32/fp16/bf16 (the bias of the same type), fp32 statistics */
    const char *t = kfacts_param_type(k, "in_ptr0");
    if (!builtin_float_ptr(t) || (gs->bias && strcmp(kfacts_param_type(k, "in_ptr1"), t)) ||
        strcmp(kfacts_param_type(k, "out_ptr0"), "*fp32") || strcmp(kfacts_param_type(k, "out_ptr1"), "*fp32"))
        goto no;
    /* sizes the template takes: C a power of two up to 1024 in groups of 2..64 channels, a
     * sample's pixels addressable in int32 */
    long long c = gs->g * gs->cg;
    if (gs->n < 1 || gs->g < 1 || !builtin_pow2_in(gs->cg, 2, 64) || !builtin_pow2_in(c, 16, 1024) || gs->hw < 64 ||
        gs->hw * c > 2147483647LL)
        goto no;
    if (kfacts_numel(k, "xnumel") != gs->n * gs->g || kfacts_numel(k, "r0_numel") != gs->cg * gs->hw) goto no;
    if (!gs_source(k, gs)) goto no;
    return 1;
no:
    memset(gs, 0, sizeof *gs);
    return 0;
}

json_t *builtin_group_stats_variants(const kfacts *k) {
    gs_spec gs;
    json_t *v = json_array();
    if (!builtin_group_stats_match(k, &gs)) return v;
    /* measured on the H200 (128 x 128 channels x 256 x 256 fp16, 16 groups): tiles of 16 pixels
     * and 16 warps, 1024-2048 programs in all, best (0.557 ms against Inductor's 1.11) */
    long long ns = builtin_next_pow2((1024 + gs.n - 1) / gs.n);
    if (ns > 64) ns = 64;
    const long long t[][3] = {
        {ns, 16, 16}, {ns * 2, 16, 16}, {ns, 32, 8}, {ns * 2, 16, 4}, {ns > 1 ? ns / 2 : 1, 16, 16}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        long long nsplit = t[i][0] > 64 ? 64 : t[i][0];
        if (gs.hw % (nsplit * t[i][1])) continue; /* the chunks must tile each sample */
        int dup = 0;
        for (size_t j = 0; j < json_array_size(v); j++) {
            const json_t *o = json_array_get(v, j);
            dup |= json_integer_value(json_object_get(o, "nsplit")) == nsplit &&
                   json_integer_value(json_object_get(o, "sb")) == t[i][1] &&
                   json_integer_value(json_object_get(o, "num_warps")) == t[i][2];
        }
        if (!dup)
            json_array_append_new(v,
                                  json_pack("{s:I, s:I, s:I}", "nsplit", nsplit, "sb", t[i][1], "num_warps", t[i][2]));
    }
    return v;
}

int builtin_group_stats_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    gs_spec gs;
    if (!builtin_group_stats_match(k, &gs))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite cl_group_stats does not apply to this kernel");
    const char *name = k->name;
    long long c = gs.g * gs.cg;
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        long long ns = plan->var[i].nsplit, sb = plan->var[i].sb, nw = plan->var[i].num_warps;
        if (!builtin_pow2_in(ns, 1, 64) || !builtin_pow2_in(sb, 1, 256) || !builtin_pow2_in(nw, 1, 32) ||
            sb * c > 16384 || gs.hw % (ns * sb))
            continue;
        tpl_arg a[] = {{.name = "MEAN", .type = TPL_IDENT, .ident = "out_ptr0"},
                       {.name = "M2", .type = TPL_IDENT, .ident = "out_ptr1"},
                       {.name = "BIAS", .type = TPL_BOOL, .b = gs.bias},
                       {.name = "C", .type = TPL_INT, .i = c},
                       {.name = "G", .type = TPL_INT, .i = gs.g},
                       {.name = "SB", .type = TPL_INT, .i = sb},
                       {.name = "NSPLIT", .type = TPL_INT, .i = ns},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label,
                    "cl_group_stats: %lld groups of %lld channels-last channels%s, every pixel row read whole, "
                    "%lld chunks per sample in tiles of %lld pixels, num_warps=%lld",
                    gs.g, gs.cg, gs.bias ? " plus a bias" : "", ns, sb, nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n", name,
                    kbuf_str(&label));
        int rc = template_render("cl_group_stats", a, sizeof a / sizeof *a, &s, e);
        if (!rc)
            json_array_append_new(cands,
                                  json_pack("{s:s, s:{s:s, s:I, s:I, s:I}, s:s}", "label", kbuf_str(&label), "config",
                                            "template", "cl_group_stats", "nsplit", (json_int_t)ns, "sb",
                                            (json_int_t)sb, "num_warps", (json_int_t)nw, "source", kbuf_str(&s)));
        kbuf_free(&s);
        kbuf_free(&label);
        if (rc) {
            json_decref(cands);
            return rc;
        }
    }
    return builtin_candidates_answer(cands, "cl_group_stats",
                                     "nsplit <= 64, sb <= 256, num_warps <= 32, powers of two, sb * C <= 16384, "
                                     "nsplit * sb dividing H * W",
                                     out, e);
}
