/* builtin_region.c — the executor's templates for region kernels (several Inductor launches
 * replaced together, artifact/region.h): reductions whose rows are too long for one program,
 * which Inductor splits into partial-reduction, combine and pointwise kernels that read the
 * input two or three times.
 *
 *   region_softmax, region_log_softmax   softmax over the last dimension (contiguous rows)
 *   region_group_norm                    native_group_norm with weight and bias (N, C, *),
 *                                        fp32, fp16 or bf16; also with a convolution's
 *                                        per-channel bias before it and, after it, a GELU or
 *                                        ReLU (the template's own) or any chain of elementwise
 *                                        ops over the norm's result and constants, which
 *                                        Inductor fuses into its two kernels: its lines taken
 *                                        as written into _post(t) (gn_fusion_of,
 *                                        builtin_pointwise_tail)
 *   region_layer_norm                    native_layer_norm with an elementwise weight and bias
 *                                        over trailing dimensions whose rows Inductor splits
 *                                        (a norm over (C, H, W)), fp32, fp16 or bf16, rows of
 *                                        at most 32 segments
 *   region_avg_pool                      a vendor region's avg_pool2d/3d (builtin_pool.c)
 *
 * One kernel, one read of the input, one write of the output: each row (group) is cut into
 * segments of SEG elements, one program per segment holding it in registers. A program takes
 * a ticket (an atomic counter: the tickets handed out are always 0..T-1, so every program a
 * program waits for has started and is resident), computes its segment's partial statistics
 * (max and sum of exp; mean and centred sum of squares), publishes them and counts itself in
 * for its row, waits until the row's count is complete, combines the row's partials in segment
 * order (deterministic) and writes its segment from registers. Progress needs only that one
 * row's programs fit on the GPU at once: the launcher refuses (raises) when a row has more
 * segments than the GPU has SMs, so a candidate never waits for a program that cannot start.
 *
 * Plans: {"direction":"rewrite","params":{"template":T,"variants":[{"seg":S,"num_warps":W}..]}}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"
#include "util/buf.h"

/* Layer norm's rows in at most this many segments (of at most LN_MAX_SEG). With more, the GPU holds
 * only a row or two at once and their programs load, wait and store in step, without overlap:
 * on the H200, rows of 2,097,152 fp32 in 64-128 segments took 0.64-0.66 ms against Inductor's
 * 0.57 ms for its split statistics and normalisation. */
enum { LN_MAX_SEGS = 32, LN_MAX_SEG = 32768 /* the largest segment its variants use */ };

/* Every parameter of the region is a tensor of type t, or (t NULL) of a floating type, with
 * in_ptr0 and out_ptr0 of the same one (or no out_ptr0: the output written in place, in_out_ptr0). */
static int params_typed(const kfacts *k, const char *t) {
    for (size_t i = 0; i < k->nparams; i++) {
        const char *pt = k->params[i].type;
        if (!*pt || (t ? strcmp(pt, t) : !builtin_float_ptr(pt))) return 0;
    }
    const char *o = kfacts_param_type(k, "out_ptr0");
    return !*o ? *kfacts_param_type(k, "in_out_ptr0") != '\0' : !strcmp(kfacts_param_type(k, "in_ptr0"), o);
}

/* Whether every member kernel computes only `op` (its recorded ATen ops are exactly that one):
 * a norm region that also fuses other work (an activation, a residual) is not the norm alone. */
static int members_compute_only(const kfacts *k, const char *op) {
    for (size_t i = 0; i < k->nmembers; i++) {
        const kf_strs *ops = &k->members[i].aten_ops;
        if (!ops->n) return 0;
        for (size_t j = 0; j < ops->n; j++)
            if (strcmp(ops->v[j], op)) return 0;
    }
    return k->nmembers > 0;
}

/* A norm's constants in its member kernels: the element count it divides by and eps, the
 * `tl.full([1], v, tl.float32)` constants (count >= 2, 0 < eps < 1e-2). 1 when both are found,
 * the same in every member that has them. */
static int norm_constants(const kfacts *k, long long *count, double *eps) {
    *count = 0;
    *eps = 0;
    for (size_t i = 0; i < k->nmembers; i++) {
        const char *src = k->members[i].source;
        for (const char *p = src; p && (p = strstr(p, "tl.full([1], ")) != NULL; p += 13) {
            char *end = NULL;
            double v = strtod(p + 13, &end);
            if (!end || strncmp(end, ", tl.float32)", 13)) continue;
            if (v >= 2 && v == (double)(long long)v) {
                if (*count && *count != (long long)v) return 0;
                *count = (long long)v;
            } else if (v > 0 && v < 1e-2) {
                if (*eps > 0 && *eps != v) return 0;
                *eps = v;
            }
        }
    }
    return *count > 0 && *eps > 0;
}

/* What a group-norm region fuses around the norm, and which of its parameters is which. */
typedef struct gn_fusion {
    const char *x, *cb, *w, *b, *y; /* the input, the bias before (x where there is none: unread),
                                       weight, bias, output (x itself where written in place) */
    int pre_bias;   /* a per-channel bias added before the statistics */
    int act;        /* after it: 0 none, 1 GELU (erf), 2 ReLU, 3 Inductor's own pointwise lines (post) */
    char post[2048]; /* act 3: the function `_post(t)`: Inductor's lines after the affine transform
                        (its result renamed t), then `    return <ret>` */
} gn_fusion;

/* Whether a normalising kernel's source reads its pointer `ptr` (in_ptr0, or in_out_ptr0 where
 * it writes its result there) at xindex itself (`tl.load(in_ptr0 + (x4), ...)` with `x4 =
 * xindex`): the convolution's result laid out as the output, contiguous (N, C, *). A
 * channels-last one is read at a permuted index (`y0 + 128*x2 + ...`), which the template's
 * contiguous reading would get wrong. */
static int reads_input_linearly(const char *src, const char *ptr) {
    char load[40];
    snprintf(load, sizeof load, "tl.load(%s + (", ptr);
    const char *p = src ? strstr(src, load) : NULL;
    if (!p) return 0;
    p += strlen(load);
    size_t n = 0;
    while (p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9')) n++;
    if (!n || n > 16 || p[n] != ')') return 0;
    char want[48];
    snprintf(want, sizeof want, "\n    %.*s = xindex\n", (int)n, p);
    return strstr(src, want) != NULL;
}

/* Whether the source line after the newline at *l (then past it) is exactly `lhs = x OP y`, its
 * names into lhs, x, y (16 bytes each). */
static int binop_line(const char **l, char op, char *lhs, char *x, char *y) {
    const char *p = *l ? *l + 1 : NULL;
    char fmt[48];
    int n = 0;
    snprintf(fmt, sizeof fmt, " %%15[a-z0-9] = %%15[a-z0-9] %c %%15[a-z0-9]%%n", op);
    if (!p || sscanf(p, fmt, lhs, x, y, &n) != 3 || p[n] != '\n') return 0;
    *l = p + n;
    return 1;
}

/* Whether the source line after the newline at *l (then past it) is exactly `lhs =
 * of.to(tl.float32)`, its names into lhs and of (16 bytes each): a 16-bit model's widening of a
 * loaded value. */
static int to_f32_line(const char **l, char *lhs, char *of) {
    const char *p = *l ? *l + 1 : NULL;
    int n = 0;
    if (!p || sscanf(p, " %15[a-z0-9] = %15[a-z0-9].to(tl.float32)%n", lhs, of, &n) != 2 || !n || p[n] != '\n') return 0;
    *l = p + n;
    return 1;
}

/* The line `lhs = x OP y` after *l as binop_line reads it, where a 16-bit model may widen y
 * first (`y = y0.to(tl.float32)` on the line before): y0 then stands for y. */
static int binop_widened(const char **l, char op, char *lhs, char *x, char *y) {
    char wl[16], wof[16];
    const char *save = *l;
    int widened = to_f32_line(l, wl, wof);
    if (!widened) *l = save;
    if (!binop_line(l, op, lhs, x, y) || (widened && strcmp(y, wl))) return 0;
    if (widened) memcpy(y, wof, 16);
    return 1;
}

/* The tmp name of the normalising kernel's affine result: the lines `tmpR = libdevice.rsqrt(..)`,
 * `tmpM = tmpD * tmpR`, `tmpW = tmpM * tmpA`, `tmpS = tmpW + tmpB` in a row, tmpA and tmpB loaded
 * (the weight and bias; in a 16-bit model each may be widened to fp32 on the line before its
 * use), into out (cap bytes): 1, else 0. */
static int gn_affine_var(const char *src, char *out, size_t cap) {
    const char *p = src ? strstr(src, " = libdevice.rsqrt(") : NULL;
    if (!p || strstr(p + 1, " = libdevice.rsqrt(")) return 0;
    while (p > src && p[-1] != ' ' && p[-1] != '\n') p--;
    char r[16], d[16], m[16], x[16], a[16], w[16], b[16], sv[16];
    if (sscanf(p, "%15[a-z0-9] = libdevice.rsqrt(", r) != 1) return 0;
    const char *l = strchr(p, '\n');
    if (!binop_line(&l, '*', m, d, x) || strcmp(x, r) || !binop_widened(&l, '*', w, x, a) || strcmp(x, m) ||
        !binop_widened(&l, '+', sv, x, b) || strcmp(x, w))
        return 0;
    char la[32], lb[32];
    snprintf(la, sizeof la, "\n    %s = tl.load(", a);
    snprintf(lb, sizeof lb, "\n    %s = tl.load(", b);
    if (!strstr(src, la) || !strstr(src, lb)) return 0;
    snprintf(out, cap, "%s", sv);
    return 1;
}

/* A group norm region's fusion, read from its parameters and its members' ATen ops: (in_ptr0,
 * weight in_ptr1, bias in_ptr2, out_ptr0) and the norm alone; or Inductor's fusion of a
 * convolution's output: (in_ptr0 the convolution's result without its bias, in_ptr1 that bias,
 * in_ptr2 weight, in_ptr3 bias, out_ptr0) -- or, where Inductor writes the result into the
 * convolution's buffer (`buf4 = buf0; del buf0  # reuse`), (in_ptr0 the bias, in_ptr1 weight,
 * in_ptr2 bias, in_out_ptr0 the convolution's result and the output) --, exactly two members,
 * the statistics kernel's ops convolution and native_group_norm, the normalising kernel's the
 * same plus elementwise ops: relu alone, or gelu alone in its erf form (the source computes
 * libdevice.erf), take the template's own code (act 2, 1); any other set, the tanh-form GELU
 * among them, takes the kernel's lines after its affine result as written (act 3, post:
 * gn_affine_var, builtin_pointwise_tail), or is refused when they are not a pointwise chain. The
 * parameters are the region's external tensors in the order the kernels first use them
 * (artifact/region.h; in_out_ptr* after the others): the convolution's result and its bias
 * first (the statistics kernel's inputs), then weight and bias. 1 with *g filled, else 0. */
static int gn_fusion_of(const kfacts *k, gn_fusion *g) {
    static const char *const affine[] = {"in_ptr0", "in_ptr1", "in_ptr2", "out_ptr0"};
    static const char *const fused[] = {"in_ptr0", "in_ptr1", "in_ptr2", "in_ptr3", "out_ptr0"};
    static const char *const inplace[] = {"in_ptr0", "in_ptr1", "in_ptr2", "in_out_ptr0"};
    static const char *const stats_ops[] = {"aten.convolution", "aten.native_group_norm"};
    /* the normalising kernel's ops: the two, then (bits 2, 3) GELU or ReLU alone -- the template's
     * own -- or any of the elementwise ops after them, whose lines the template takes as written
     * (act 3: builtin_pointwise_tail checks that they are pointwise over the affine result) */
    static const char *const norm_ops[] = {
        "aten.convolution", "aten.native_group_norm", "aten.gelu",    "aten.relu",       "aten.silu",
        "aten.sigmoid",     "aten.tanh",              "aten.hardswish", "aten.hardtanh", "aten.mish",
        "aten.leaky_relu",  "aten.elu",               "aten.softplus", "aten.hardsigmoid", "aten.mul",
        "aten.add",         "aten.sub",               "aten.div",      "aten.clamp",     "aten.clamp_min",
        "aten.clamp_max",   "aten.neg",               "aten.abs",      "aten.exp",       "aten.log1p",
        "aten.minimum",     "aten.maximum",           "aten.pow",      "aten.sqrt",      "aten.rsub"};
    memset(g, 0, sizeof *g);
    if (builtin_params_are(k, affine, 4)) {
        *g = (gn_fusion){.x = "in_ptr0", .cb = "in_ptr0", .w = "in_ptr1", .b = "in_ptr2", .y = "out_ptr0"};
        return members_compute_only(k, "aten.native_group_norm");
    }
    int in_place = builtin_params_are(k, inplace, 4);
    if (in_place) *g = (gn_fusion){.x = "in_out_ptr0", .cb = "in_ptr0", .w = "in_ptr1", .b = "in_ptr2", .y = "in_out_ptr0"};
    else *g = (gn_fusion){.x = "in_ptr0", .cb = "in_ptr1", .w = "in_ptr2", .b = "in_ptr3", .y = "out_ptr0"};
    if (!(in_place || builtin_params_are(k, fused, 5)) || k->nmembers != 2) return 0;
    unsigned stats = 0, norm = 0;   /* bits: the ops seen, in the lists' order */
    size_t nn = sizeof norm_ops / sizeof *norm_ops;
    if (!builtin_ops_within(&k->members[0].aten_ops, stats_ops, 2, &stats) || stats != 3u ||
        !builtin_ops_within(&k->members[1].aten_ops, norm_ops, nn, &norm) || (norm & 3u) != 3u)
        return 0;   /* convolution and the norm in both */
    const char *src = k->members[1].source;
    if (!reads_input_linearly(src, g->x)) return 0;
    g->pre_bias = 1;
    unsigned extra = norm & ~3u;
    if (extra == 0u) return 1;
    if (extra == 8u) return g->act = 2, 1;
    if (extra == 4u && src && strstr(src, "libdevice.erf(") && !strstr(src, "libdevice.tanh(")) return g->act = 1, 1;
    /* anything else: Inductor's lines after the affine transform, lifted into _post(t) */
    char sv[16], ret[16];
    kbuf post = KBUF_INIT;
    int ok = gn_affine_var(src, sv, sizeof sv) && builtin_pointwise_tail(src, sv, &post, ret, sizeof ret) &&
             post.len + strlen(ret) + 48 < sizeof g->post;
    if (ok) {
        snprintf(g->post, sizeof g->post, "@triton.jit\ndef _post(t):\n%s    return %s\n", kbuf_str(&post), ret);
        g->act = 3;
    }
    kbuf_free(&post);
    return ok;
}

kfamily builtin_region_match(const kfacts *k) {
    if (k->kind != ART_K_REGION) return KF_NONE;
    if (k->vendor_call) {   /* one ATen call (a vendor region) */
        pool_spec ps;
        return builtin_pool_match(k, &ps) ? KF_REGION_AVG_POOL : KF_NONE;
    }
    const kf_strs *aten = &k->aten_ops;
    static const char *const one[] = {"in_ptr0", "out_ptr0"};
    static const char *const affine[] = {"in_ptr0", "in_ptr1", "in_ptr2", "out_ptr0"};
    long long count;
    double eps;
    gn_fusion g;
    /* the norms: x, weight, bias and output of one floating type or another, statistics in fp32 */
    if (params_typed(k, NULL) && norm_constants(k, &count, &eps) && gn_fusion_of(k, &g)) return KF_REGION_GROUP_NORM;
    if (builtin_params_are(k, affine, 4) && params_typed(k, NULL) && norm_constants(k, &count, &eps)) {
        if (members_compute_only(k, "aten.native_layer_norm") && count <= (long long)LN_MAX_SEGS * LN_MAX_SEG) return KF_REGION_LAYER_NORM;
    }
    if (builtin_scan_match(k)) return KF_SCAN;   /* flip, cumsum, flip: one suffix scan (fp32, fp16, bf16) */
    if (!params_typed(k, "*fp32")) return KF_NONE;
    if (builtin_params_are(k, one, 2) && kf_strs_find(aten, "aten._log_softmax")) return KF_REGION_LOG_SOFTMAX;
    if (builtin_params_are(k, one, 2) && kf_strs_find(aten, "aten._softmax")) return KF_REGION_SOFTMAX;
    return KF_NONE;
}

/* The length of the row (a norm's group) that f's template cuts into segments, one program
 * each, when k tells it; 0 when it does not. */
static long long segmented_row(kfamily f, const kfacts *k) {
    long long count = 0;
    double eps = 0;
    if (f == KF_REGION_GROUP_NORM || f == KF_REGION_LAYER_NORM) return norm_constants(k, &count, &eps) ? count : 0;
    if (kfamily_is_row_split(f)) return kfacts_numel(k, "r0_numel");
    const kf_shape *sh = kfacts_shape(k, "in_ptr0");   /* region softmax: the input's last dimension */
    return sh ? sh->d[sh->ndims - 1] : 0;
}

/* Whether segments of `seg` elements cut f's row into no more programs than the GPU has SMs
 * (all of a row's programs wait for each other: the templates' "nseg <= sm_count()" check);
 * 1 when the SMs or the row are not known. */
static int fits_sms(kfamily f, const kfacts *k, long long seg) {
    long long row = k->sms ? segmented_row(f, k) : 0;
    return !row || (row + seg - 1) / seg <= k->sms;
}

json_t *builtin_region_variants(kfamily f, const kfacts *k) {
    if (f == KF_SCAN) return builtin_scan_variants(k);
    if (f == KF_REGION_AVG_POOL) return builtin_pool_variants(k);
    /* segments of 8K-32K fp32 elements, 32-64 elements per thread: whole segments in registers;
     * layer norm's rows also load the weight and bias at each element (32-64 per thread), its
     * longer rows in bigger segments. 64 a thread (8192 x 4 warps, 16384 x 8) from a sweep on the
     * H100 (session 40, tools/split_sweep.py): log-softmax over 512 x 786432 fp32 1.131 and
     * 1.158 ms against 1.166 for 8192 x 8 (Inductor 1.687); layer norm over 16384 x 65536 bf16
     * 1.923 and 1.966 against 2.019 (8192 x 8) and 2.757 (16384 x 16; Inductor 2.271) */
    static const int sw[][2] = {{8192, 8}, {16384, 16}, {32768, 32}, {8192, 16}, {8192, 4}, {16384, 8}};
    static const int lw[][2] = {{16384, 16}, {LN_MAX_SEG, 16}, {LN_MAX_SEG, 32}, {8192, 8}};
    /* group norm: 32 elements a thread first -- on the H100 (session 49, tools/gn_sweep.py) 4096 x
     * 4 warps and 8192 x 8 led on hz02's (128, 256, 8192) and hz09's (64, 256, 8190) with a bias
     * and GELU; 16384 x 4 spilled (2.97 ms against 0.66) */
    static const int gw[][2] = {{4096, 4}, {8192, 8}, {8192, 4}, {4096, 8}, {16384, 16}, {16384, 8}};
    int ln = f == KF_REGION_LAYER_NORM, gn = f == KF_REGION_GROUP_NORM;
    const int(*w)[2] = ln ? lw : gn ? gw : sw;
    size_t nw = ln ? sizeof lw / sizeof lw[0] : gn ? sizeof gw / sizeof gw[0] : sizeof sw / sizeof sw[0];
    /* a variant cutting the row into more segments than the GPU has SMs would only be refused
     * at gate 1, so it does not take a candidate's place (session 53: hb08's 8192-element
     * segments, 256 a group, on 132 SMs) */
    json_t *v = json_array();
    for (size_t i = 0; i < nw; i++)
        if (fits_sms(f, k, w[i][0]))
            json_array_append_new(v, json_pack("{s:i, s:i}", "seg", w[i][0], "num_warps", w[i][1]));
    return v;
}

/* The region templates (templates/kernels/region_*.py.tmpl) for one variant; count: a norm's
 * elements per group (row); g: a group norm's fusion. */
static int region_source(kbuf *s, const kfacts *k, kfamily f, long long count, double eps, int seg, int nw,
                         const gn_fusion *g, kerr *e) {
    if (f == KF_REGION_GROUP_NORM) {
        long long nseg = (count + seg - 1) / seg;
        tpl_arg a[] = {{.name = "PARAMS", .type = TPL_IDENTS, .idents = (const char *const *)k->runtime.v, .nidents = k->runtime.n},
                       {.name = "X", .type = TPL_IDENT, .ident = g->x},
                       {.name = "CBP", .type = TPL_IDENT, .ident = g->cb},
                       {.name = "WP", .type = TPL_IDENT, .ident = g->w},
                       {.name = "BP", .type = TPL_IDENT, .ident = g->b},
                       {.name = "Y", .type = TPL_IDENT, .ident = g->y},
                       {.name = "GSIZE", .type = TPL_INT, .i = count},
                       {.name = "EPS", .type = TPL_FLOAT, .f = eps},
                       {.name = "SEG", .type = TPL_INT, .i = seg},
                       {.name = "NSEG", .type = TPL_INT, .i = nseg},
                       {.name = "NSEG_P2", .type = TPL_INT, .i = builtin_next_pow2(nseg)},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw},
                       {.name = "PRE_BIAS", .type = TPL_BOOL, .b = g->pre_bias},
                       {.name = "ACT", .type = TPL_INT, .i = g->act},
                       {.name = "POST", .type = TPL_BOOL, .b = g->act == 3}};
        if (g->act != 3) return template_render("region_group_norm", a, sizeof a / sizeof *a, s, e);
        /* Inductor's lines after the affine transform, as _post(t) before the kernel that calls it */
        kbuf t = KBUF_INIT;
        int rc = template_render("region_group_norm", a, sizeof a / sizeof *a, &t, e);
        if (!rc) rc = builtin_splice_helper(s, kbuf_str(&t), "_group_norm_split", g->post, e);
        kbuf_free(&t);
        return rc;
    }
    if (f == KF_REGION_LAYER_NORM) {
        tpl_arg a[] = {{.name = "N", .type = TPL_INT, .i = count}, {.name = "EPS", .type = TPL_FLOAT, .f = eps},
                       {.name = "SEG", .type = TPL_INT, .i = seg}, {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("region_layer_norm", a, 4, s, e);
    }
    tpl_arg a[] = {{.name = "SEG", .type = TPL_INT, .i = seg},
                   {.name = "LOG", .type = TPL_BOOL, .b = f == KF_REGION_LOG_SOFTMAX},
                   {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
    return template_render("region_softmax", a, 3, s, e);
}

int builtin_region_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    const char *tmpl = plan->tmpl_name;
    kfamily f = plan->tmpl, match = builtin_region_match(k);
    if (f == KF_NONE || f != match)
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template %s does not apply to this kernel", tmpl ? tmpl : "?");
    if (f == KF_REGION_AVG_POOL) return builtin_pool_act(k, plan, out, e);
    long long count = 0;
    double eps = 0;
    int gn = f == KF_REGION_GROUP_NORM, ln = f == KF_REGION_LAYER_NORM;
    gn_fusion g = {0};
    if (gn || ln) norm_constants(k, &count, &eps);
    if (gn) gn_fusion_of(k, &g);
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        int seg = (int)plan->var[i].seg;
        int nw = (int)plan->var[i].num_warps;
        if (nw <= 0 || nw > 32 || (nw & (nw - 1)) || seg < 1024 || seg > 65536 || (seg & (seg - 1))) continue;
        /* group norm: at most 256 segments a group (the last one masked where seg does not divide it) */
        if (gn && (count + seg - 1) / seg > 256) continue;
        /* layer norm: at most LN_MAX_SEGS segments a row */
        if (ln && (count + seg - 1) / seg > LN_MAX_SEGS) continue;
        if (!fits_sms(f, k, seg)) continue;   /* more programs a row than SMs */
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        static const char *const acts[] = {"", ", GELU after", ", ReLU after", ", Inductor's pointwise lines after"};
        kbuf_printf(&label, "%s%s%s: one pass, rows cut into segments of %d held in registers, partials exchanged "
                    "between programs, num_warps=%d", tmpl, g.pre_bias ? " with the convolution's bias before" : "",
                    acts[g.act], seg, nw);
        kbuf_puts(&s, "# kopt-candidate: replaces=");
        for (size_t j = 0; j < k->nmembers; j++) kbuf_printf(&s, "%s%s", j ? "+" : "", k->members[j].name);
        kbuf_printf(&s, "\n# kopt built-in executor, rewrite: %s\n", kbuf_str(&label));
        if (region_source(&s, k, f, count, eps, seg, nw, &g, e)) {
            kbuf_free(&s);
            kbuf_free(&label);
            json_decref(cands);
            return e->code;
        }
        json_array_append_new(cands, json_pack("{s:s, s:{s:s, s:i, s:i}, s:s}", "label", kbuf_str(&label), "config", "template",
                                               tmpl, "seg", seg, "num_warps", nw, "source", kbuf_str(&s)));
        kbuf_free(&s);
        kbuf_free(&label);
    }
    return builtin_candidates_answer(cands, tmpl,
                                     gn   ? "seg a power of two in [1024, 65536] cutting the group into at most 256 segments, "
                                            "num_warps a power of two <= 32"
                                     : ln ? "seg a power of two in [1024, 65536] cutting the row into at most 32, "
                                            "num_warps a power of two <= 32"
                                          : "seg a power of two in [1024, 65536], num_warps a power of two <= 32",
                                     out, e);
}
