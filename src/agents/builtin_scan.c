/* builtin_scan.c — the scan family (templates/kernels/scan.py.tmpl): a cumulative sum of fp32
 * (or of fp16/bf16 summed in fp32, a single kernel's), or a logcumsumexp, over any dimension of a
 * contiguous tensor, recognised by what the kernel computes (its ATen ops, its tensors' shapes
 * and its sizes), not by the text Inductor wrote for it.
 *
 *   a kernel whose ATen ops are cumsum plus only   inclusive scan over dimension d, where
 *   constant_pad_nd/slice (a shifted input) and    shape[d] == r0_numel and the other
 *   where/zeros_like (a masked one)                dimensions multiply to xnumel
 *   a region whose kernels' ATen ops are cumsum    a suffix scan (flip, cumsum, flip) over
 *   and flip only (and the conversions of a        any dimension longer than 1
 *   16-bit one)
 *   a kernel whose ATen ops are logcumsumexp       the template's LSE scan over dimension d
 *   (plus the dtype conversions of a 16-bit one)   (inclusive, forward), the same fit of d
 *   a kernel whose ATen ops are cummax (and the    the template's MAX scan (the running
 *   conversions) storing one float output: the     maximum, a NaN sticky), the same fit of d
 *   values, its indices unused
 *
 * The FX graph fragment Inductor writes above each kernel settles the reading where it says:
 * cumsum's dim (`aten.cumsum.default](args = (%x, 1)`) picks the dimension, a constant_pad_nd
 * of [1, 0] / [0, 1] the shift. Where it is silent and several dimensions fit, or a shift could
 * go either way, each reading is a candidate of its own: the gates refuse the wrong ones.
 * Plans: {"direction":"rewrite","params":{"template":"scan","variants":[{"chunk":C,
 * "block_s":S,"block_i":I,"num_warps":W},..]}}. */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"
#include "util/buf.h"

/* What a scan kernel computes, read from its context. */
typedef struct scan_facts {
    int region;                 /* replaces a region (in, out) */
    int lse;                    /* logcumsumexp, not cumsum */
    int cmax;                   /* cummax's values (the running maximum), not cumsum */
    int masked;                 /* where(mask, x, 0) under the scan */
    int reverse;                /* suffix sums */
    int shifts[2], nshift;      /* the input shifts to try: {0} or {1, -1} */
    int dims[KF_MAX_DIMS], ndims;   /* the dimensions that fit, the last first */
    const char *in0, *in1, *out, *xarg, *marg;   /* parameter names */
} scan_facts;

/* The shift a pad of the last dimension states: constant_pad_nd(x, [1, 0]) then a slice keeps
 * the first n (+1: out[j] sums x[< j]); [0, 1] the last n (-1). 0 when the graph does not say. */
static int fx_pad_shift(const kf_strs *fragment) {
    const char *l = builtin_fx_line(fragment, "aten.constant_pad_nd.default");
    const char *b = l ? strstr(l, ", [") : NULL;
    if (!b) return 0;
    if (!strncmp(b, ", [1, 0]", 8)) return 1;
    if (!strncmp(b, ", [0, 1]", 8)) return -1;
    return 0;
}

/* Region reading: (in_ptr0, out_ptr0), the member kernels' ops cumsum and flip only, plus the
 * dtype conversions where the tensors are 16-bit. In and out of one type: fp32, or fp16/bf16
 * (held-out ha05, bf16: Inductor's scan sums in fp32 and stores the type, as the template does). */
static int match_region(const kfacts *k, scan_facts *f) {
    static const char *const allowed[] = {"aten.cumsum", "aten.flip", "aten._to_copy", "prims.convert_element_type"};
    unsigned has = 0;
    for (size_t i = 0; i < k->nmembers; i++)
        if (!builtin_ops_within(&k->members[i].aten_ops, allowed, 4, &has)) return 0;
    if ((has & 3u) != 3u || k->runtime.n != 2) return 0;
    f->in0 = kfacts_runtime(k, 0);
    f->out = kfacts_runtime(k, 1);
    if (!f->in0 || !f->out || strncmp(f->in0, "in_ptr", 6) || strncmp(f->out, "out_ptr", 7)) return 0;
    const char *t = kfacts_param_type(k, f->in0);
    if (!builtin_float_ptr(t) || strcmp(t, kfacts_param_type(k, f->out))) return 0;
    if (!strcmp(t, "*fp32") && (has & 12u)) return 0;   /* fp32 converted: to something the template does not compute */
    const kf_shape *sh = kfacts_shape(k, f->in0);
    if (!sh) return 0;
    for (int d = sh->ndims; d-- > 0;)
        if (sh->d[d] > 1) f->dims[f->ndims++] = d;
    for (size_t i = 0; i < k->nmembers; i++)
        builtin_dims_keep(f->dims, &f->ndims, builtin_fx_dim(&k->members[i].fragment, "aten.cumsum.default", 0));
    f->region = f->reverse = 1;
    f->in1 = f->xarg = f->marg = f->in0;
    f->shifts[f->nshift++] = 0;
    return f->ndims > 0;
}

/* Single-kernel reading: (in_ptr0[, in_ptr1], out_ptr0, xnumel, r0_numel). Values and output of
 * one type, fp32, fp16 or bf16; a 16-bit one only where every cast in the source is to fp32, the
 * dtype conversions (_to_copy / convert_element_type) only there. */
static int match_kernel(const kfacts *k, scan_facts *f) {
    static const char *const allowed[] = {"aten.cumsum",   "aten.constant_pad_nd", "aten.slice",
                                          "aten.where",    "aten.zeros_like",      "aten._to_copy",
                                          "prims.convert_element_type", "aten.logcumsumexp", "aten.cummax"};
    unsigned has = 0;
    if (!builtin_ops_within(&k->aten_ops, allowed, 9, &has)) return 0;
    f->lse = (has & 128u) != 0;
    f->cmax = (has & 256u) != 0;
    /* one scan: logcumsumexp or cummax alone (a kernel that stores cummax's indices has a second
     * output, or an int64 one, and is not taken) */
    if (f->lse + f->cmax > 1 || (f->lse || f->cmax ? (has & 31u) != 0 : !(has & 1u))) return 0;
    f->masked = (has & 8u) != 0;
    if ((has & 16u) && !f->masked) return 0;   /* zeros_like feeding something else than a select */
    size_t np = k->runtime.n;
    if (np != (f->masked ? 5u : 4u)) return 0;
    f->in0 = kfacts_runtime(k, 0);
    f->in1 = f->masked ? kfacts_runtime(k, 1) : f->in0;
    f->out = kfacts_runtime(k, f->masked ? 2 : 1);
    if (!f->in0 || !f->in1 || !f->out || strncmp(f->in0, "in_ptr", 6) || strncmp(f->in1, "in_ptr", 6) ||
        strncmp(f->out, "out_ptr", 7) || strcmp(kfacts_runtime(k, np - 2), "xnumel") || strcmp(kfacts_runtime(k, np - 1), "r0_numel"))
        return 0;
    const char *ot = kfacts_param_type(k, f->out);
    if (!builtin_float_ptr(ot)) return 0;   /* fp32, fp16 or bf16, summed in fp32 */
    f->xarg = f->marg = f->in0;
    if (f->masked) {   /* one fp32 value input and one boolean mask, either order */
        int b0 = !strcmp(kfacts_param_type(k, f->in0), "*i1"), b1 = !strcmp(kfacts_param_type(k, f->in1), "*i1");
        if (b0 == b1) return 0;
        f->xarg = b0 ? f->in1 : f->in0;
        f->marg = b0 ? f->in0 : f->in1;
    }
    if (strcmp(kfacts_param_type(k, f->xarg), ot)) return 0;
    int wide = !strcmp(ot, "*fp32");
    if ((wide && (has & 96u)) || (!wide && !builtin_casts_to_fp32(k->source, NULL))) return 0;
    const kf_strs *frag = &k->fragment;
    if (has & 6u) {
        int said = fx_pad_shift(frag);
        if (said >= 0) f->shifts[f->nshift++] = 1;
        if (said <= 0) f->shifts[f->nshift++] = -1;
    } else {
        f->shifts[f->nshift++] = 0;
    }
    long long xn = kfacts_numel(k, "xnumel"), rn = kfacts_numel(k, "r0_numel");
    const kf_shape *sh = kfacts_shape(k, f->xarg);
    if (!sh || rn <= 1 || xn <= 0) return 0;
    long long total = 1;
    for (int d = 0; d < sh->ndims; d++) total *= sh->d[d];
    for (int d = sh->ndims; d-- > 0;)
        if (sh->d[d] == rn && total / rn == xn) f->dims[f->ndims++] = d;
    builtin_dims_keep(f->dims, &f->ndims,
                      builtin_fx_dim(frag, f->lse ? "aten.logcumsumexp.default" : f->cmax ? "aten.cummax.default" : "aten.cumsum.default",
                                     sh->ndims));
    return f->ndims > 0;
}

static int scan_facts_of(const kfacts *k, scan_facts *f) {
    memset(f, 0, sizeof *f);
    if (k->kind == ART_K_REGION) return match_region(k, f);
    if (k->kind != ART_K_REDUCTION && k->kind != ART_K_PERSISTENT) return 0;
    return match_kernel(k, f);
}

const char *builtin_scan_match(const kfacts *k) {
    scan_facts f;
    return scan_facts_of(k, &f) ? "scan" : NULL;
}

/* The product of the dimensions of `arg` after `dim` (1: the scan runs along rows); -1 when
 * its shape is not known. */
static long long inner_of(const kfacts *k, const char *arg, int dim) {
    const kf_shape *sh = kfacts_shape(k, arg);
    if (!sh) return -1;
    long long inner = 1;
    for (int d = dim + 1; d < sh->ndims; d++) inner *= sh->d[d];
    return inner;
}

/* Append n variants {chunk, block_s, block_i, num_warps} to arr. */
static void append_variants(json_t *arr, const int (*v)[4], size_t n) {
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:i, s:i, s:i, s:i}", "chunk", v[i][0], "block_s", v[i][1], "block_i", v[i][2],
                                             "num_warps", v[i][3]));
}

json_t *builtin_scan_variants(const kfacts *k) {
    /* chunk, rows per step, columns per program, warps. The row kernel (the last dimension) takes
     * the chunk and warps; the last: a row of up to 16K in one chunk (held-out hy04's 10,007
     * fp16, where 4-8K chunks screened 11% behind max-autotune's kernel) */
    static const int rows[][4] = {{4096, 32, 64, 8}, {8192, 16, 128, 8}, {2048, 64, 32, 4}, {8192, 32, 128, 16},
                                  {16384, 16, 256, 16}};
    /* the column kernel (a dimension that is not the last) takes the tile and warps: few warps a
     * tile, many programs. tools/scan_sweep.py on the H100 (session 54), held-out hb02's (32,
     * 4096, 1024) fp16 cumsum over dimension 1, Inductor 0.393 ms: 64 rows x 32 columns 1 warp
     * 0.219, 64 x 64 2 warps 0.233, 64 x 32 2 warps 0.236, 32 x 32 1 warp 0.250; the earlier
     * 64 x 32 4 warps 0.340 and 32 x 64 8 warps (the first before) 0.562 */
    static const int cols[][4] = {{2048, 64, 32, 1}, {2048, 64, 64, 2}, {2048, 64, 32, 2}, {2048, 32, 32, 1}, {2048, 64, 32, 4}};
    scan_facts f;
    int any_rows = 0, any_cols = 0;
    if (scan_facts_of(k, &f))
        for (int d = 0; d < f.ndims; d++) {
            long long inner = inner_of(k, f.xarg, f.dims[d]);
            any_rows |= inner == 1;
            any_cols |= inner > 1;
        }
    if (!any_rows && !any_cols) any_rows = 1;   /* the shape not known: the row list, as before */
    json_t *arr = json_array();
    if (any_rows) append_variants(arr, rows, sizeof rows / sizeof rows[0]);
    if (any_cols) append_variants(arr, cols, sizeof cols / sizeof cols[0]);
    return arr;
}

int builtin_scan_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    scan_facts f;
    if (!scan_facts_of(k, &f)) return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template scan does not apply to this kernel");
    const char *kname = k->name;
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        const kp_variant *v = &plan->var[i];
        long long chunk = v->chunk, bs = v->block_s, bi = v->block_i, nw = v->num_warps;
        if (!builtin_pow2_in(chunk, 16, 16384) || !builtin_pow2_in(bs, 1, 1024) || !builtin_pow2_in(bi, 1, 1024) || bs * bi > 16384 || !builtin_pow2_in(nw, 1, 32))
            continue;
        for (int di = 0; di < f.ndims; di++)
            for (int si = 0; si < f.nshift; si++) {
                long long inner = inner_of(k, f.xarg, f.dims[di]);
                if (inner < 1) continue;
                kbuf s = KBUF_INIT, label = KBUF_INIT;
                kbuf_printf(&label, "scan: %s%s %s over dimension %d%s%s (chunk %lld | %lld x %lld tiles), num_warps=%lld",
                            f.reverse ? "suffix" : "prefix", f.masked ? " masked" : "",
                            f.lse ? "logcumsumexp" : f.cmax ? "cummax (the values)" : "cumsum", f.dims[di],
                            f.shifts[si] ? (f.shifts[si] > 0 ? ", input shifted by +1" : ", input shifted by -1") : "",
                            f.region ? ", one pass for the region" : "", chunk, bs, bi, nw);
                kbuf_puts(&s, "# kopt-candidate: replaces=");
                if (f.region) {
                    for (size_t j = 0; j < k->nmembers; j++) kbuf_printf(&s, "%s%s", j ? "+" : "", k->members[j].name);
                } else {
                    kbuf_puts(&s, kname ? kname : "?");
                }
                kbuf_printf(&s, "\n# kopt built-in executor, rewrite: %s\n", kbuf_str(&label));
                tpl_arg a[] = {{.name = "IN0", .type = TPL_IDENT, .ident = f.in0},
                               {.name = "IN1", .type = TPL_IDENT, .ident = f.in1},
                               {.name = "OUT", .type = TPL_IDENT, .ident = f.out},
                               {.name = "XARG", .type = TPL_IDENT, .ident = f.xarg},
                               {.name = "MARG", .type = TPL_IDENT, .ident = f.marg},
                               {.name = "MASKED", .type = TPL_BOOL, .b = f.masked},
                               {.name = "REGION", .type = TPL_BOOL, .b = f.region},
                               {.name = "DIM", .type = TPL_INT, .i = f.dims[di]},
                               {.name = "SHIFT", .type = TPL_INT, .i = f.shifts[si]},
                               {.name = "REVERSE", .type = TPL_BOOL, .b = f.reverse},
                               {.name = "CHUNK", .type = TPL_INT, .i = chunk},
                               {.name = "BLOCK_S", .type = TPL_INT, .i = bs},
                               {.name = "BLOCK_I", .type = TPL_INT, .i = bi},
                               {.name = "NUM_WARPS", .type = TPL_INT, .i = nw},
                               {.name = "ROWS", .type = TPL_BOOL, .b = inner == 1},
                               {.name = "LSE", .type = TPL_BOOL, .b = f.lse},
                               {.name = "MAX", .type = TPL_BOOL, .b = f.cmax}};
                int rc = template_render("scan", a, sizeof a / sizeof a[0], &s, e);
                if (!rc)
                    json_array_append_new(cands, json_pack("{s:s, s:{s:s, s:i, s:i, s:I, s:I, s:I, s:I}, s:s}", "label",
                                                           kbuf_str(&label), "config", "template", "scan", "dim", f.dims[di],
                                                           "shift", f.shifts[si], "chunk", (json_int_t)chunk, "block_s",
                                                           (json_int_t)bs, "block_i", (json_int_t)bi, "num_warps",
                                                           (json_int_t)nw, "source", kbuf_str(&s)));
                kbuf_free(&s);
                kbuf_free(&label);
                if (rc) {
                    json_decref(cands);
                    return e->code;
                }
            }
    }
    return builtin_candidates_answer(cands, "scan",
                                     "chunk a power of two in [16, 16384], block_s and block_i powers of two with "
                                     "block_s x block_i <= 16384, num_warps a power of two <= 32",
                                     out, e);
}
