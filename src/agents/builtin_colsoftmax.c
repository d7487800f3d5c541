/* builtin_colsoftmax.c — softmax and log-softmax over a dimension that is not the last: Inductor
 * reduces such a dimension with strided loads and reads the input twice (an online max and sum,
 * then the normalisation). Two one-read templates:
 *   col_softmax (templates/kernels/col_softmax.py.tmpl): the whole reduced dimension of a few
 *     adjacent inner columns in registers, one program per tile (short reduced dimensions);
 *   col_split_softmax (col_split_softmax.py.tmpl): the reduced dimension cut into segments, one
 *     program per segment of a wider tile, partial max/sum exchanged between the tile's
 *     programs (split_softmax's scheme, column-wise). Measured on the H200 on 64 x 2048 x 4096
 *     (softmax over dim 1): 128-row segments of 32 columns, 4 warps, 1.456 ms against Inductor's
 *     1.582; 2048 x 16 register tiles with 32 warps (32 elements a thread) 1.40-1.42 ms, with
 *     16 warps or 2048 x 8 tiles slower than Inductor. Softmax (not log) keeps the exponentials
 *     of its one read and rescales them (one multiply an element instead of a second exp).
 *
 * Recognised from what the kernel computes: ATen ops of a softmax only (prepare_softmax_online,
 * sub, exp, div / log, _softmax / _log_softmax, amax, sum), one fp32 input and one fp32 output
 * (in_ptr0, out_ptrN, xnumel, r0_numel), the input's shape from call(), a dimension d with
 * shape[d] == r0_numel, the rest multiplying to xnumel and something after it (inner > 1; the
 * last dimension is the row templates'), at most 65536 long. The FX graph fragment's softmax
 * node settles d when several fit. Plans: {"direction":"rewrite","params":{"template":
 * "col_softmax","variants":[{"block_i":I,"num_warps":W} | {"cb":R,"ib":I,"num_warps":W},..]}}. */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"
#include "util/buf.h"

enum { CS_MAX_C = 65536, CS_MAX_TILE = 32768, CS_MAX_SEGS = 132 };

/* What a middle-dimension softmax kernel computes. */
typedef struct cs_facts {
    int log;                           /* log-softmax */
    int dims[KF_MAX_DIMS], ndims; /* the dimensions that fit, the last first */
    long long c, inner;                /* the reduced length and the inner size (of dims[0]) */
    const char *in, *out;
} cs_facts;

static int cs_facts_of(const kfacts *k, cs_facts *f) {
    memset(f, 0, sizeof *f);
    if (k->kind != ART_K_REDUCTION && k->kind != ART_K_PERSISTENT) return 0;
    static const char *const allowed[] = {"prims.prepare_softmax_online",
                                          "aten.sub",
                                          "aten.exp",
                                          "aten.div",
                                          "aten.log",
                                          "aten._softmax",
                                          "aten._log_softmax",
                                          "aten.amax",
                                          "aten.sum"};
    unsigned has = 0;
    if (!builtin_ops_within(&k->aten_ops, allowed, 9, &has)) return 0;
    int softmax = (has & (1u << 5)) || (has & (1u << 3));
    f->log = (has & (1u << 6)) || (has & (1u << 4));
    if (softmax == f->log) return 0; /* neither, or both: not one of the two */
    if (k->runtime.n != 4) return 0;
    f->in = kfacts_runtime(k, 0);
    f->out = kfacts_runtime(k, 1);
    const char *xn_name = kfacts_runtime(k, 2), *rn_name = kfacts_runtime(k, 3);
    if (!f->in || !f->out || strcmp(f->in, "in_ptr0") || strncmp(f->out, "out_ptr", 7) || !xn_name || !rn_name ||
        strcmp(xn_name, "xnumel") || strcmp(rn_name, "r0_numel"))
        return 0;
    if (strcmp(kfacts_param_type(k, f->in), "*fp32") || strcmp(kfacts_param_type(k, f->out), "*fp32")) return 0;
    long long xn = kfacts_numel(k, "xnumel"), rn = kfacts_numel(k, "r0_numel");
    const kf_shape *sh = kfacts_shape(k, f->in);
    size_t rank = sh ? (size_t)sh->ndims : 0;
    if (!sh || rn < 2 || rn > CS_MAX_C || xn <= 0) return 0;
    long long total = 1;
    for (size_t d = 0; d < rank; d++) total *= sh->d[d];
    for (size_t d = rank; d-- > 0;) {
        long long inner = 1;
        for (size_t e = d + 1; e < rank; e++) inner *= sh->d[e];
        if (sh->d[d] == rn && total / rn == xn && inner > 1) f->dims[f->ndims++] = (int)d;
    }
    /* the graph's word: softmax(x, d) / prepare_softmax_online(x, d) */
    static const char *const nodes[] = {"aten._softmax.default", "aten._log_softmax.default",
                                        "prims.prepare_softmax_online.default"};
    for (size_t i = 0; i < 3; i++) {
        int d = builtin_fx_dim(&k->fragment, nodes[i], (int)rank);
        if (d < 0) continue;
        builtin_dims_keep(f->dims, &f->ndims, d);
        break;
    }
    if (!f->ndims) return 0;
    f->c = rn;
    f->inner = 1;
    for (size_t e = (size_t)f->dims[0] + 1; e < rank; e++) f->inner *= sh->d[e];
    return 1;
}

const char *builtin_col_softmax_match(const kfacts *k) {
    cs_facts f;
    return cs_facts_of(k, &f) ? "col_softmax" : NULL;
}

json_t *builtin_col_softmax_variants(const kfacts *k) {
    cs_facts f;
    json_t *v = json_array();
    if (!cs_facts_of(k, &f)) return v;
    long long bc = builtin_next_pow2(f.c), imax = builtin_next_pow2(f.inner);
    /* BLOCK_I adjacent columns: 32-byte runs and more; about 32 elements per thread (H200, 2048 x
     * 4096 inner: 2048 x 16 tiles with 32 warps 1.40 ms, 2048 x 8 with 16 warps 1.84, Inductor 1.58) */
    static const int bis[] = {16, 8, 4, 32};
    for (size_t i = 0; i < sizeof bis / sizeof bis[0]; i++) {
        long long bi = bis[i];
        if (bi > imax || bc * bi > CS_MAX_TILE) continue;
        long long nw = bc * bi / 1024;
        nw = nw < 4 ? 4 : nw > 32 ? 32 : nw;
        json_array_append_new(v, json_pack("{s:I, s:I}", "block_i", (json_int_t)bi, "num_warps", (json_int_t)nw));
    }
    /* split segments (rows, columns, warps), from a sweep on the H200 (session 40,
     * tools/colsoftmax_sweep.py; Inductor 1.702 / 0.400 / 0.482 ms): on 64 x 2048 x 4096 256x32x4
     * 1.460 ms, 128x32x2 1.461, 128x64x4 1.466, 128x32x4 1.525; on 16 x 8192 x 1024 256x32x4
     * 0.391, 256x16x2 0.408, 128x32x4 0.475; 8 warps and 64-row segments slower everywhere, wider
     * runs (64-128 columns) no better */
    static const int splits[][3] = {{256, 32, 4}, {128, 32, 2}, {128, 64, 4}, {128, 32, 4}, {256, 16, 2}, {512, 16, 8}};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        long long cb = splits[i][0], ib = splits[i][1];
        if (ib > imax || (f.c + cb - 1) / cb > CS_MAX_SEGS || (f.c + cb - 1) / cb < 2) continue;
        json_array_append_new(
            v, json_pack("{s:I, s:I, s:i}", "cb", (json_int_t)cb, "ib", (json_int_t)ib, "num_warps", splits[i][2]));
    }
    return v;
}

int builtin_col_softmax_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    cs_facts f;
    if (!cs_facts_of(k, &f))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template col_softmax does not apply to this kernel");
    long long bc = builtin_next_pow2(f.c);
    const char *kname = k->name;
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        const kp_variant *v = &plan->var[i];
        long long bi = v->block_i, nw = v->num_warps, cb = v->cb, ib = v->ib;
        int split = cb > 0;
        if (!builtin_pow2_in(nw, 1, 32)) continue;
        if (split && (!builtin_pow2_in(cb, 1, 4096) || !builtin_pow2_in(ib, 1, 1024) || cb * ib > CS_MAX_TILE ||
                      (f.c + cb - 1) / cb > CS_MAX_SEGS))
            continue;
        if (!split && (!builtin_pow2_in(bi, 1, 1024) || bc * bi > CS_MAX_TILE)) continue;
        for (int di = 0; di < f.ndims; di++) {
            kbuf s = KBUF_INIT, label = KBUF_INIT;
            if (split)
                kbuf_printf(&label,
                            "col_split_softmax: %s over dimension %d in one read, segments of %lld x %lld in registers "
                            "exchanging partials, num_warps=%lld",
                            f.log ? "log-softmax" : "softmax", f.dims[di], cb, ib, nw);
            else
                kbuf_printf(
                    &label,
                    "col_softmax: %s over dimension %d in one read, %lld x %lld tiles in registers, num_warps=%lld",
                    f.log ? "log-softmax" : "softmax", f.dims[di], bc, bi, nw);
            kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n",
                        kname ? kname : "?", kbuf_str(&label));
            tpl_arg a[] = {{.name = "IN", .type = TPL_IDENT, .ident = f.in},
                           {.name = "OUT", .type = TPL_IDENT, .ident = f.out},
                           {.name = "DIM", .type = TPL_INT, .i = f.dims[di]},
                           {.name = "LOG", .type = TPL_BOOL, .b = f.log},
                           {.name = split ? "CB" : "BLOCK_C", .type = TPL_INT, .i = split ? cb : bc},
                           {.name = split ? "IB" : "BLOCK_I", .type = TPL_INT, .i = split ? ib : bi},
                           {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
            int rc = template_render(split ? "col_split_softmax" : "col_softmax", a, sizeof a / sizeof a[0], &s, e);
            json_t *cfg =
                split ? json_pack("{s:s, s:i, s:I, s:I, s:I}", "template", "col_split_softmax", "dim", f.dims[di], "cb",
                                  (json_int_t)cb, "ib", (json_int_t)ib, "num_warps", (json_int_t)nw)
                      : json_pack("{s:s, s:i, s:I, s:I}", "template", "col_softmax", "dim", f.dims[di], "block_i",
                                  (json_int_t)bi, "num_warps", (json_int_t)nw);
            if (!rc)
                json_array_append_new(cands, json_pack("{s:s, s:O, s:s}", "label", kbuf_str(&label), "config", cfg,
                                                       "source", kbuf_str(&s)));
            json_decref(cfg);
            kbuf_free(&s);
            kbuf_free(&label);
            if (rc) {
                json_decref(cands);
                return e->code;
            }
        }
    }
    char limits[256];
    snprintf(limits, sizeof limits,
             "block_i a power of two with %lld x block_i <= %d, or cb and ib powers of two with cb x ib <= %d and at "
             "most %d segments; num_warps a power of two <= 32",
             bc, CS_MAX_TILE, CS_MAX_TILE, CS_MAX_SEGS);
    return builtin_candidates_answer(cands, "col_softmax", limits, out, e);
}
