/* builtin_rewrite.c — the executor's rewrite templates: kernels written anew (not Inductor's
 * body re-launched) for the patterns where the compiler leaves the most, chosen by the ATen
 * ops the kernel fuses, its signature and its index expressions.
 *
 *   row_softmax, row_log_softmax  one pass over contiguous rows of <= 16384 fp32 elements held
 *                                 in registers (Inductor's looped kernel reads each row twice)
 *   row_layer_norm                the same for native_layer_norm with weight and bias
 *   row_layer_norm_prologue,      a layer norm / softmax with the pointwise prologue Inductor fused
 *   row_softmax_prologue          before it (or of 16-bit rows), one or more rows a program:
 *                                 Inductor's prologue lines lifted into a jit function
 *                                 (builtin_prologue.c)
 *   row_softmax_stats             a row's max and sum of exponentials alone (a cross-entropy's
 *                                 first kernel, known from the FX graph): one read with per-lane
 *                                 running statistics over chunks (Inductor's looped kernel
 *                                 masks and selects its accumulators at every step)
 *   row_logsumexp                 a logsumexp over contiguous rows (known from the FX graph):
 *                                 the same one-read loop, then log(sum) + max with Inductor's
 *                                 infinities (its looped kernel reads each row twice)
 *   row_cumsum                    an inclusive row scan in chunks with a carried scalar total,
 *                                 one program per row (Inductor selects the last lane of each
 *                                 chunk's scan to carry it, and its heuristics pick small chunks)
 *   row_split_l1_normalize,       rows longer than one program divided by their own L1 / L2 norm
 *   row_split_l2_normalize        (known from the FX graph, builtin_normalize.c): the split
 *                                 softmax's one-read scheme, segments exchanging partial sums
 *   row_split_instance_norm       an instance norm over rows longer than one program (known from
 *                                 the FX graph): the same scheme, segments exchanging their mean
 *                                 and centred sum of squares (Chan's combination, in order)
 *   row_split_layer_norm          a layer norm over trailing dimensions of rows longer than one
 *                                 program (fp32/fp16/bf16, known from the FX graph): the same
 *                                 kernel with the weight and bias read at the row's positions
 *   split_more                    a looped sum/max/min/Welford reduction with few, long ones (a
 *                                 grid of a few waves, the last one partly idle): Inductor's own
 *                                 body run over NSUB sub-ranges of each reduction (a second grid
 *                                 axis) into scratch, then a small kernel combines the partials
 *                                 in a fixed order (deterministic, same per-element arithmetic)
 *
 * Templates that were written and measured slower than Inductor on the H200 (row argmax with
 * the row in registers, middle-dimension max in coalesced tiles, pooling by output rows) are
 * not offered; docs/BENCHMARKS.md has the figures.
 *
 * A plan {"direction":"rewrite","params":{"template":T,"variants":[{"num_warps":n,
 * "chunk":c?},..]}} gives one candidate per variant; "num_warps":[..] instead of "variants" is
 * accepted too. */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "gates/plan.h"
#include "agents/template.h"
#include "util/buf.h"
#include "util/log.h"

/* The declared Triton type of runtime parameter i ("*fp32", "i32"), or "". */
static const char *param_type(const kfacts *k, size_t i) {
    return kfacts_param_type(k, kfacts_runtime(k, i));
}


double builtin_find_eps(const char *src) {
    const char *rs = src ? strstr(src, "rsqrt(") : NULL;
    double eps = 0;
    for (const char *p = src; p && rs && p < rs; p++) {
        if (strncmp(p, "tl.full([1, 1], ", 16)) continue;
        double v = strtod(p + 16, NULL);
        if (v > 0 && v < 1e-2) eps = v;
    }
    return eps;
}

/* split_more: the kernel's final reduction, when the kernel has the shape the transform
 * knows (see builtin.h): op "sum", "max", "min" (one accumulator, one output) or "welford"
 * (mean, m2 and weight accumulators, three outputs: a norm's statistics). res: the values the
 * stores write, in the order of out_ptr0.. */
typedef struct split_info {
    char op[8];
    int nout;
    char res[3][32];
} split_info;

/* The source after the reduction loop must be exactly the final reduction and the stores of
 * its results at out_ptr0.. + (x3); nothing else. */
static int split_tail(const char *tail, split_info *si) {
    char line[256], a[32], b[32], c[32], m[32], m2[32], w[32];
    int n = 0;
    const char *p = builtin_next_line(tail, line, sizeof line);
    if (!strncmp(line, "    tmp", 7) && strstr(line, " = triton_helpers.welford(")) {
        if (sscanf(line, "    %31[a-z0-9_], %31[a-z0-9_], %31[a-z0-9_] = triton_helpers.welford(%31[a-z0-9_], %31[a-z0-9_], "
                         "%31[a-z0-9_], 1)%n", a, b, c, m, m2, w, &n) != 6 || line[n])
            return 0;
        size_t bl = strlen(m) - 5;   /* "<acc>_mean" */
        if (strlen(m) < 6 || strcmp(m + bl, "_mean") || strncmp(m2, m, bl) || strcmp(m2 + bl, "_m2") || strncmp(w, m, bl) ||
            strcmp(w + bl, "_weight"))
            return 0;
        const char *parts[3] = {a, b, c};
        for (int i = 0; i < 3; i++) {   /* tmpX = tmpA[:, None] */
            char lhs[32], rhs[32];
            p = builtin_next_line(p, line, sizeof line);
            if (sscanf(line, "    %31[a-z0-9_] = %31[a-z0-9_][:, None]%n", lhs, rhs, &n) != 2 || line[n] || strcmp(rhs, parts[i]))
                return 0;
            snprintf(si->res[i], sizeof si->res[i], "%s", lhs);
        }
        snprintf(si->op, sizeof si->op, "welford");
        si->nout = 3;
    } else {
        static const char *const ops[][2] = {{"triton_helpers.max2(", "max"}, {"triton_helpers.min2(", "min"}, {"tl.sum(", "sum"}};
        char res[32], acc[64];
        size_t o;
        for (o = 0; o < 3; o++) {
            char fmt[96];
            snprintf(fmt, sizeof fmt, "    %%31[a-z0-9_] = %s%%63[a-z0-9_], 1)[:, None]%%n", ops[o][0]);
            if (sscanf(line, fmt, res, acc, &n) == 2 && !line[n]) break;
        }
        if (o == 3 || acc[0] != '_' || strcmp(acc + 1, res)) return 0;
        snprintf(si->op, sizeof si->op, "%s", ops[o][1]);
        snprintf(si->res[0], sizeof si->res[0], "%s", res);
        si->nout = 1;
    }
    for (int i = 0; i < si->nout; i++) {
        char want[96];
        p = builtin_next_line(p, line, sizeof line);
        snprintf(want, sizeof want, "    tl.store(out_ptr%d + (x3), %s, xmask)", i, si->res[i]);
        if (strcmp(line, want)) return 0;
    }
    while (*p == ' ' || *p == '\n') p++;
    return *p == '\0';
}

static int split_match(const kfacts *k, split_info *si) {
    const char *src = k->jit_source;
    const char *grid = k->grid_type;
    long long xn = kfacts_numel(k, "xnumel");
    long long rn = kfacts_numel(k, "r0_numel");
    const kf_strs *ce = &k->constexprs;
    if (!src || k->kind != ART_K_REDUCTION || (grid && strcmp(grid, "Grid1D"))) return 0;
    if (xn <= 0 || xn > 4096 || rn < 16384) return 0;   /* few, long reductions only */
    if (ce->n != 2 || strcmp(ce->v[0], "XBLOCK") || strcmp(ce->v[1], "R0_BLOCK")) return 0;
    int nout = 0;
    for (size_t i = 0; i < k->runtime.n; i++) {
        const char *n = k->runtime.v[i];
        if (!strncmp(n, "in_out_ptr", 10)) return 0;
        nout += !strncmp(n, "out_ptr", 7);
    }
    static const char *const loop = "    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n";
    const char *at = strstr(src, loop);
    if (!at || builtin_count(src, "for ") != 1 || !strstr(src, "    x3 = xindex\n") || !strstr(src, "R0_BLOCK : tl.constexpr):\n"))
        return 0;
    /* the loop body: lines indented by 8; the tail starts at the first line indented by 4 */
    const char *tail = builtin_block_end(at + strlen(loop));
    memset(si, 0, sizeof *si);
    if (!split_tail(tail, si) || si->nout != nout || builtin_count(src, "tl.store(") != nout) return 0;
    /* the accumulators start at the op's identity */
    char init[160];
    if (!strcmp(si->op, "welford")) {
        static const char *const f[] = {"mean", "m2", "weight"};
        char base[32];
        const char *w = strstr(tail, "triton_helpers.welford(");
        if (!w || sscanf(w + 23, "%31[a-z0-9]_mean", base) != 1) return 0;
        for (int j = 0; j < 3; j++) {
            snprintf(init, sizeof init, "    %s_%s = tl.zeros([XBLOCK, R0_BLOCK], tl.float32)\n", base, f[j]);
            if (!strstr(src, init)) return 0;
        }
    } else {
        snprintf(init, sizeof init, "    _%s = tl.full([XBLOCK, R0_BLOCK], %s, tl.float32)\n", si->res[0],
                 !strcmp(si->op, "max") ? "float(\"-inf\")" : !strcmp(si->op, "min") ? "float(\"inf\")" : "0");
        if (!strstr(src, init)) return 0;
    }
    return 1;
}

/* Whether every ATen op the kernel fuses is a plain softmax's or log-softmax's own (its online
 * statistics, the shift, exp, log, the dtype casts): nothing computed before or after it that the
 * split template would leave out. */
static int softmax_ops_only(const kf_strs *aten) {
    static const char *const own[] = {"aten._softmax", "aten._log_softmax", "prims.prepare_softmax_online",
                                      "aten.sub",      "aten.exp",          "aten.log",
                                      "aten.amax",     "aten.sum",          "prims.convert_element_type"};
    unsigned has = 0;
    return aten->n > 0 && builtin_ops_within(aten, own, sizeof own / sizeof *own, &has);
}

/* The parameters of a softmax statistics kernel that also stores the rows' log-probability sums. */
static const char *const STATS_LSUM[] = {"in_ptr0", "out_ptr0", "out_ptr1", "out_ptr2", "xnumel", "r0_numel"};

/* row_layer_norm_prologue or row_softmax_prologue where one matches, else KF_NONE. */
static kfamily prologue_family(const kfacts *k) {
    if (builtin_ln_prologue_match(k, NULL)) return KF_ROW_LN_PROLOGUE;
    return builtin_sm_prologue_match(k, NULL) ? KF_ROW_SM_PROLOGUE : KF_NONE;
}

kfamily builtin_rewrite_match(const kfacts *k, double *eps) {
    kfamily region = builtin_region_match(k);
    if (region != KF_NONE) return region;
    pool_spec ps;   /* Inductor's own pooling kernel, known from its FX graph (any kernel kind) */
    if (builtin_pool_match(k, &ps) && ps.kernel) return builtin_pool_family(&ps);
    gs_spec gs;   /* group-norm statistics over channels-last data (FX graph and loads) */
    if (builtin_group_stats_match(k, &gs)) return KF_CL_GROUP_STATS;
    if (builtin_colreuse_match(k)) return KF_COLUMN_REUSE;   /* a pointwise kernel over rows */
    const kf_strs *aten = &k->aten_ops;
    const char *src = k->source;
    long long rn = kfacts_numel(k, "r0_numel");
    if (!src || rn <= 0 || (k->kind != ART_K_REDUCTION && k->kind != ART_K_PERSISTENT)) return KF_NONE;
    split_info si;
    /* what applies when no row template does: a family chosen by what the kernel computes (a
     * cumulative sum over any dimension, a softmax over a middle one), else split_more */
    kfamily split = builtin_scan_match(k)          ? KF_SCAN
                    : builtin_col_softmax_match(k) ? KF_COL_SOFTMAX
                    : builtin_col_lse_match(k)     ? KF_COL_LOGSUMEXP
                    : builtin_aligned_match(k)     ? KF_ALIGNED_CHUNKS
                    : split_match(k, &si)          ? KF_SPLIT_MORE
                                                   : KF_NONE;
    char rows[64];
    snprintf(rows, sizeof rows, "(r0_1 + %lld*x0)", rn);   /* contiguous rows of r0_numel */
    if (!strstr(src, rows)) {   /* other index names: a row family with a prologue still may match */
        kfamily pf = prologue_family(k);
        return pf != KF_NONE ? pf : split;
    }
    static const char *const one[] = {"in_ptr0", "out_ptr", "xnumel", "r0_numel"};
    static const char *const ln[] = {"in_ptr0", "in_ptr1", "in_ptr2", "out_ptr", "xnumel", "r0_numel"};
    static const char *const stats[] = {"in_ptr0", "out_ptr0", "out_ptr1", "xnumel", "r0_numel"};
    /* a logsumexp (known from the FX graph) that Inductor's looped kernel reads twice: fp32, fp16
     * or bf16 rows, the output of the input's type */
    char lo[16];
    if (k->kind == ART_K_REDUCTION && builtin_logsumexp_match(k, lo, sizeof lo, NULL)) {
        int of = !strcmp(lo, "in_out_ptr0");
        const char *lse[] = {of ? lo : "in_ptr0", of ? "in_ptr0" : lo, "xnumel", "r0_numel"};
        const char *ti = kfacts_param_type(k, "in_ptr0");
        if (builtin_params_are(k, lse, 4) && builtin_float_ptr(ti) && !strcmp(ti, kfacts_param_type(k, lo))) return KF_ROW_LOGSUMEXP;
    }
    /* a row's softmax statistics alone (known from the FX graph): fp32, fp16 or bf16 rows; or
     * with the row's sum of log-probabilities (a label-smoothed cross-entropy, from the source) */
    if (builtin_params_are(k, stats, 5) && !strcmp(param_type(k, 1), "*fp32") && !strcmp(param_type(k, 2), "*fp32") &&
        builtin_float_ptr(param_type(k, 0)) && builtin_softmax_stats_match(k))
        return KF_ROW_SOFTMAX_STATS;
    if (builtin_params_are(k, STATS_LSUM, 6) && !strcmp(param_type(k, 1), "*fp32") && !strcmp(param_type(k, 2), "*fp32") &&
        !strcmp(param_type(k, 3), "*fp32") && builtin_float_ptr(param_type(k, 0)) && builtin_softmax_lsum_match(k))
        return KF_ROW_SOFTMAX_STATS;
    /* a plain fp32 row scan with addition: cumsum is the only ATen op fused (an expression under
     * the scan would add its ops), one load, one store, an add combine function */
    if (builtin_params_are(k, one, 4) && aten->n == 1 && kf_strs_find(aten, "aten.cumsum") &&
        strstr(src, "tl.associative_scan(") && strstr(src, "'num_load': 1, 'num_store': 1") &&
        strstr(src, "tmp0 = arg0_0 + arg1_0") && !strcmp(param_type(k, 0), "*fp32") && !strcmp(param_type(k, 1), "*fp32"))
        return KF_ROW_CUMSUM;
    /* rows too long for one program that Inductor reads twice get the one-read kernels over row
     * segments (at most 132 segments of 32K a row: one GPU) */
    int long_rows = rn > 16384 && rn <= 132LL * 32768;
    /* an instance norm (known from its FX graph) */
    if (long_rows && !strcmp(param_type(k, 0), "*fp32")) {
        double ie = 0;
        long long ch = 0;
        int aff = 0;
        if (builtin_instance_norm_match(k, &ie, &ch, &aff) && builtin_params_are(k, aff ? ln : one, aff ? 6 : 4) &&
            !strcmp(param_type(k, aff ? 3 : 1), "*fp32") &&
            (!aff || (!strcmp(param_type(k, 1), "*fp32") && !strcmp(param_type(k, 2), "*fp32")))) {
            *eps = ie;
            return KF_ROW_SPLIT_INSTANCE_NORM;
        }
    }
    /* ... and a layer norm over trailing dimensions (fp32, fp16 or bf16, one type throughout) */
    if (long_rows && builtin_params_are(k, ln, 6)) {
        const char *t0 = param_type(k, 0);
        int same = builtin_float_ptr(t0);
        for (size_t i = 1; i < 4; i++) same &= !strcmp(param_type(k, i), t0);
        double le = 0;
        if (same && builtin_layer_norm_match(k, &le)) {
            *eps = le;
            return KF_ROW_SPLIT_LAYER_NORM;
        }
    }
    /* a softmax over fp32, fp16 or bf16 rows (computed in fp32, stored in the rows' type) with
     * nothing fused before or after it */
    if (long_rows && builtin_params_are(k, one, 4) && builtin_float_ptr(param_type(k, 0)) &&
        !strcmp(param_type(k, 0), param_type(k, 1)) && softmax_ops_only(aten)) {
        if (kf_strs_find(aten, "aten._log_softmax")) return KF_ROW_SPLIT_LOG_SOFTMAX;
        if (kf_strs_find(aten, "aten._softmax")) return KF_ROW_SPLIT_SOFTMAX;
    }
    /* a row over its own L1 / L2 norm, fp32 */
    if (long_rows && builtin_params_are(k, one, 4) && !strcmp(param_type(k, 0), "*fp32") &&
        !strcmp(param_type(k, 1), "*fp32")) {
        int np = 0;
        double ne = 0;
        if (builtin_normalize_match(k, &np, &ne)) {
            *eps = ne;
            return np == 1 ? KF_ROW_SPLIT_L1_NORMALIZE : KF_ROW_SPLIT_L2_NORMALIZE;
        }
    }
    if (rn > 16384) return split;   /* the one-pass templates hold the whole row in registers */
    if (builtin_params_are(k, one, 4) && kf_strs_find(aten, "aten._log_softmax")) return KF_ROW_LOG_SOFTMAX;
    if (builtin_params_are(k, one, 4) && kf_strs_find(aten, "aten._softmax")) return KF_ROW_SOFTMAX;
    if (builtin_params_are(k, ln, 6) && kf_strs_find(aten, "aten.native_layer_norm")) {
        *eps = builtin_find_eps(src);
        if (*eps > 0) return KF_ROW_LAYER_NORM;
    }
    /* a layer norm or softmax with a pointwise prologue (or of 16-bit rows, in place) over rows
     * that fit on chip, known from the source and the ATen ops */
    kfamily pf = prologue_family(k);
    return pf != KF_NONE ? pf : split;
}

kfamily builtin_rewrite_second(const kfacts *k, kfamily first) {
    split_info si;
    if (first == KF_ROW_LAYER_NORM && builtin_ln_prologue_match(k, NULL)) return KF_ROW_LN_PROLOGUE;
    if (first == KF_ROW_SOFTMAX && builtin_sm_prologue_match(k, NULL)) return KF_ROW_SM_PROLOGUE;
    return first == KF_ALIGNED_CHUNKS && split_match(k, &si) ? KF_SPLIT_MORE : KF_NONE;
}

/* {"chunk", "num_warps"} variants of a chunked row template from (chunk, warps) pairs in rising
 * chunk order, each chunk capped at the row's next power of two; short rows get fewer (a capped
 * chunk no larger than the one before ends the list). */
static json_t *chunk_variants(const kfacts *k, const int (*chunk_warps)[2], size_t n) {
    long long np2 = builtin_next_pow2(kfacts_numel(k, "r0_numel"));
    json_t *v = json_array();
    for (size_t i = 0; i < n; i++) {
        long long c = chunk_warps[i][0] < np2 ? chunk_warps[i][0] : np2;
        if (i && c < chunk_warps[i][0] && c <= chunk_warps[i - 1][0]) break;
        json_array_append_new(v, json_pack("{s:I, s:i}", "chunk", (json_int_t)c, "num_warps", chunk_warps[i][1]));
    }
    return v;
}

/* The online-statistics templates' variants (row_softmax_stats, row_logsumexp): one lane per
 * element of a chunk (two exponentials an element; chunk and warps measured on 16384 rows of
 * 32000 fp32 on the H200: 1024/4 and 2048/8 best, 4096/8 2% behind), then tiles of 4 or 8 rows
 * whose lanes span the program once with 16-byte loads (4 fp32 or 8 fp16/bf16 a thread, 32
 * threads a warp): one exponential an element plus one a lane, for 16-bit rows, which the
 * exponentials limit (a bf16 logsumexp over 16384 x 65536 on the H200: one lane per element
 * 0.89 ms, Inductor's tuned kernel 0.69, the memory floor 0.46). Tiles longer than the row's
 * next power of two are not offered. */
static json_t *stats_variants(const kfacts *k) {
    static const int chunk_warps[][2] = {{1024, 4}, {2048, 8}, {2048, 4}, {4096, 8}};
    json_t *v = chunk_variants(k, chunk_warps, sizeof chunk_warps / sizeof chunk_warps[0]);
    long long np2 = builtin_next_pow2(kfacts_numel(k, "r0_numel"));
    const char *in = kfacts_param_type(k, "in_ptr0");
    long long vec = !strcmp(in, "*fp16") || !strcmp(in, "*bf16") ? 8 : 4;
    static const int rows_warps[][2] = {{4, 4}, {8, 4}, {4, 8}};
    for (size_t i = 0; i < sizeof rows_warps / sizeof rows_warps[0]; i++) {
        long long chunk = rows_warps[i][0] * vec * 32 * rows_warps[i][1];
        if (chunk > np2 || chunk > 16384) continue;
        json_array_append_new(v, json_pack("{s:I, s:I, s:i}", "chunk", (json_int_t)chunk, "rows", (json_int_t)rows_warps[i][0],
                                           "num_warps", rows_warps[i][1]));
    }
    return v;
}

json_t *builtin_rewrite_variants(kfamily f, const kfacts *k) {
    if (f == KF_SCAN) return builtin_scan_variants(k);
    if (f == KF_COL_SOFTMAX) return builtin_col_softmax_variants(k);
    if (f == KF_COL_LOGSUMEXP) return builtin_col_lse_variants(k);
    if (f == KF_ALIGNED_CHUNKS) return builtin_aligned_variants(k);
    if (f == KF_COLUMN_REUSE) return builtin_colreuse_variants(k);
    if (f == KF_AVG_POOL || f == KF_MAX_POOL) return builtin_pool_variants(k);
    if (f == KF_CL_GROUP_STATS) return builtin_group_stats_variants(k);
    if (f == KF_ROW_LN_PROLOGUE || f == KF_ROW_SM_PROLOGUE) return builtin_prologue_variants(k);
    if (kfamily_is_region(f) || kfamily_is_row_split(f)) return builtin_region_variants(f, k);
    if (f == KF_ROW_SOFTMAX_STATS || f == KF_ROW_LOGSUMEXP) return stats_variants(k);   /* row_online_stats.part */
    if (f == KF_ROW_CUMSUM) {
        static const int chunk_warps[][2] = {{2048, 4}, {4096, 8}, {8192, 8}, {8192, 16}};
        return chunk_variants(k, chunk_warps, sizeof chunk_warps / sizeof chunk_warps[0]);
    }
    json_t *v = json_array();
    if (f == KF_SPLIT_MORE) {
        /* programs in all: about 2048 or 4096 (many waves on ~132 SMs); tiles of 2048 or 4096 */
        long long xn = kfacts_numel(k, "xnumel");
        long long rn = kfacts_numel(k, "r0_numel");
        static const int pw[][3] = {{2048, 2048, 8}, {2048, 4096, 16}, {4096, 2048, 8}, {4096, 4096, 16}};
        for (size_t i = 0; xn > 0 && i < sizeof pw / sizeof pw[0]; i++) {
            long long want = (pw[i][0] + xn - 1) / xn;
            if (want < 2) want = 2;
            if (want > 64) want = 64;
            long long rb = pw[i][1];
            long long sub = ((rn + want - 1) / want + rb - 1) / rb * rb;
            long long nsub = (rn + sub - 1) / sub;
            int dup = 0;
            size_t j;
            json_t *w;
            json_array_foreach(v, j, w) dup |= json_integer_value(json_object_get(w, "sub")) == sub &&
                                               json_integer_value(json_object_get(w, "r0_block")) == rb;
            if (nsub < 2 || dup) continue;
            json_array_append_new(v, json_pack("{s:I, s:I, s:I, s:i}", "nsub", (json_int_t)nsub, "sub", (json_int_t)sub,
                                               "r0_block", (json_int_t)rb, "num_warps", pw[i][2]));
        }
        return v;
    }
    for (int nw = 8; nw <= 32; nw *= 2) json_array_append_new(v, json_pack("{s:i}", "num_warps", nw));
    return v;
}

/* The split_more candidate: Inductor's body over sub-ranges of r0 into scratch (grid axis 1),
 * then a combine kernel. 0, or -1 when the source does not have the expected lines. */
static int split_more_source(kbuf *s, const kfacts *k, const split_info *si, long long nsub, long long sub, long long rb,
                             int nw) {
    long long np2 = builtin_next_pow2(nsub);
    const char *src = k->jit_source;
    const char *name = k->name;
    kbuf body = KBUF_INIT;
    kbuf_puts(&body, src);
    for (int i = -2; i < si->nout; i++) {
        char from[96], to[128];
        if (i == -2) {
            snprintf(from, sizeof from, "for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n");
            snprintf(to, sizeof to, "for r0_offset in tl.range(tl.program_id(1) * SUB, tl.program_id(1) * SUB + SUB, R0_BLOCK):\n");
        } else if (i == -1) {
            snprintf(from, sizeof from, "R0_BLOCK : tl.constexpr):\n");
            snprintf(to, sizeof to, "R0_BLOCK : tl.constexpr, SUB : tl.constexpr, NSUB : tl.constexpr):\n");
        } else {
            snprintf(from, sizeof from, "tl.store(out_ptr%d + (x3), %s, xmask)", i, si->res[i]);
            snprintf(to, sizeof to, "tl.store(out_ptr%d + ((x3) * NSUB + tl.program_id(1)), %s, xmask)", i, si->res[i]);
        }
        if (kbuf_replace_first(&body, from, to)) { kbuf_free(&body); return -1; }
    }
    /* the plan: every runtime parameter, out_ptrI replaced by scratchI for the first kernel;
     * scratch of each output's dtype */
    kbuf params = KBUF_INIT, first = KBUF_INIT, scratch = KBUF_INIT;
    for (size_t i = 0; i < k->runtime.n; i++) {
        const char *n = k->runtime.v[i];
        kbuf_printf(&params, "%s\"%s\"", i ? ", " : "", n);
        if (!strncmp(n, "out_ptr", 7)) kbuf_printf(&first, "%s\"scratch%s\"", i ? ", " : "", n + 7);
        else kbuf_printf(&first, "%s\"%s\"", i ? ", " : "", n);
    }
    for (int j = 0; j < si->nout; j++) {
        char out[32];
        snprintf(out, sizeof out, "out_ptr%d", j);
        const char *dt = plan_dtype_of_triton(kfacts_param_type(k, out));
        if (!dt) {
            kbuf_free(&params);
            kbuf_free(&first);
            kbuf_free(&scratch);
            kbuf_free(&body);
            return -1;
        }
        kbuf_printf(&scratch, "%s{\"name\": \"scratch%d\", \"shape\": [\"xnumel * %lld\"], \"dtype\": \"%s\"}", j ? ",\n                " : "",
                    j, nsub, dt);
    }
    builtin_plan_source(body.data, s);
    /* the combine kernel is a template file (templates/kernels/split_combine.py.tmpl) */
    int welford = !strcmp(si->op, "welford");
    if (si->nout != (welford ? 3 : 1)) {
        kbuf_free(&params);
        kbuf_free(&first);
        kbuf_free(&scratch);
        kbuf_free(&body);
        return -1;
    }
    tpl_arg targs[] = {{.name = "WELFORD", .type = TPL_BOOL, .b = welford},
                       {.name = "IS_MAX", .type = TPL_BOOL, .b = !strcmp(si->op, "max")},
                       {.name = "IS_MIN", .type = TPL_BOOL, .b = !strcmp(si->op, "min")}};
    kerr te = {0};
    if (template_render("split_combine", targs, 3, s, &te)) {
        log_warn("split_more: %s", te.msg);
        kbuf_free(&params);
        kbuf_free(&first);
        kbuf_free(&scratch);
        kbuf_free(&body);
        return -1;
    }
    kbuf_printf(s, "\n\nKOPT_PLAN = {\n    \"params\": [%s],\n    \"scratch\": [%s],\n", kbuf_str(&params), kbuf_str(&scratch));
    kbuf_printf(s, "    \"launches\": [\n        {\"kernel\": \"%s\", \"grid\": [\"xnumel\", %lld], \"args\": [%s],\n"
                   "         \"constexprs\": {\"XBLOCK\": 1, \"R0_BLOCK\": %lld, \"SUB\": %lld, \"NSUB\": %lld}, "
                   "\"num_warps\": %d, \"num_stages\": 1},\n",
                name, nsub, kbuf_str(&first), rb, sub, nsub, nw);
    kbuf_puts(s, "        {\"kernel\": \"_combine_partials\", \"grid\": [\"cdiv(xnumel, 64)\"], \"args\": [");
    for (int j = 0; j < si->nout; j++) kbuf_printf(s, "\"scratch%d\", ", j);
    for (int j = 0; j < si->nout; j++) kbuf_printf(s, "\"out_ptr%d\", ", j);
    kbuf_printf(s, "\"xnumel\"],\n         \"constexprs\": {\"NSUB\": %lld, \"NP2\": %lld, \"XB\": 64}, \"num_warps\": 2},\n    ],\n}\n",
                nsub, np2);
    kbuf_free(&params);
    kbuf_free(&first);
    kbuf_free(&scratch);
    kbuf_free(&body);
    return 0;
}

typedef struct inorm_info {
    long long channels;   /* row r takes weight and bias r % channels */
    int affine;
} inorm_info;

/* The one-pass row templates (templates/kernels/row_*.py.tmpl) for one variant; `in`: the
 * instance norm's channels and affine, for row_split_instance_norm; `scale`: row_logsumexp's
 * input scale (1: none). */
static int row_template(kbuf *s, kfamily f, const char *out, double eps, const inorm_info *in, long long chunk,
                        long long rows, long long seg, int nw, double scale, kerr *e) {
    if (f == KF_ROW_LOGSUMEXP) {
        tpl_arg a[] = {{.name = "OUT", .type = TPL_IDENT, .ident = out},
                       {.name = "OUT_FIRST", .type = TPL_BOOL, .b = !strcmp(out, "in_out_ptr0")},
                       {.name = "CHUNK", .type = TPL_INT, .i = chunk}, {.name = "ROWS", .type = TPL_INT, .i = rows},
                       {.name = "SCALED", .type = TPL_BOOL, .b = scale != 1}, {.name = "SCALE", .type = TPL_FLOAT, .f = scale},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("row_logsumexp", a, 7, s, e);
    }
    if (f == KF_ROW_SPLIT_INSTANCE_NORM) {
        long long ch = in->channels;
        int aff = in->affine;
        tpl_arg a[] = {{.name = "OUT", .type = TPL_IDENT, .ident = out}, {.name = "SEG", .type = TPL_INT, .i = seg},
                       {.name = "C", .type = TPL_INT, .i = ch},           {.name = "EPS", .type = TPL_FLOAT, .f = eps},
                       {.name = "AFFINE", .type = TPL_BOOL, .b = aff},    {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("row_split_instance_norm", a, 6, s, e);
    }
    if (f == KF_ROW_SPLIT_LAYER_NORM) {
        tpl_arg a[] = {{.name = "OUT", .type = TPL_IDENT, .ident = out}, {.name = "SEG", .type = TPL_INT, .i = seg},
                       {.name = "EPS", .type = TPL_FLOAT, .f = eps}, {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("row_split_layer_norm", a, 4, s, e);
    }
    if (f == KF_ROW_SPLIT_L1_NORMALIZE || f == KF_ROW_SPLIT_L2_NORMALIZE) {
        tpl_arg a[] = {{.name = "OUT", .type = TPL_IDENT, .ident = out}, {.name = "SEG", .type = TPL_INT, .i = seg},
                       {.name = "P", .type = TPL_INT, .i = f == KF_ROW_SPLIT_L1_NORMALIZE ? 1 : 2},
                       {.name = "EPS", .type = TPL_FLOAT, .f = eps}, {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("row_split_normalize", a, 5, s, e);
    }
    if (kfamily_is_row_split(f)) {   /* the softmax and log-softmax */
        tpl_arg a[] = {{.name = "OUT", .type = TPL_IDENT, .ident = out}, {.name = "SEG", .type = TPL_INT, .i = seg},
                       {.name = "LOG", .type = TPL_BOOL, .b = f == KF_ROW_SPLIT_LOG_SOFTMAX},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("row_split_softmax", a, 4, s, e);
    }
    if (f == KF_ROW_CUMSUM) {
        tpl_arg a[] = {{.name = "OUT", .type = TPL_IDENT, .ident = out}, {.name = "CHUNK", .type = TPL_INT, .i = chunk},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("row_cumsum", a, 3, s, e);
    }
    if (f == KF_ROW_SOFTMAX_STATS) {
        tpl_arg a[] = {{.name = "MAX", .type = TPL_IDENT, .ident = "out_ptr0"}, {.name = "SUM", .type = TPL_IDENT, .ident = "out_ptr1"},
                       {.name = "LSUM", .type = TPL_BOOL, .b = !strcmp(out, "out_ptr2")},
                       {.name = "LSUM_OUT", .type = TPL_IDENT, .ident = "out_ptr2"},
                       {.name = "CHUNK", .type = TPL_INT, .i = chunk}, {.name = "ROWS", .type = TPL_INT, .i = rows},
                       {.name = "SCALED", .type = TPL_BOOL, .b = 0}, {.name = "SCALE", .type = TPL_FLOAT, .f = 1},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("row_softmax_stats", a, 9, s, e);
    }
    if (f == KF_ROW_LAYER_NORM) {
        tpl_arg a[] = {{.name = "OUT", .type = TPL_IDENT, .ident = out}, {.name = "EPS", .type = TPL_FLOAT, .f = eps},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        return template_render("row_layer_norm", a, 3, s, e);
    }
    tpl_arg a[] = {{.name = "OUT", .type = TPL_IDENT, .ident = out},
                   {.name = "LOG", .type = TPL_BOOL, .b = f == KF_ROW_LOG_SOFTMAX},
                   {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
    return template_render("row_softmax", a, 3, s, e);
}

int builtin_rewrite_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    const char *tmpl = plan->tmpl_name;
    kfamily f = plan->tmpl;
    if (f == KF_SCAN) return builtin_scan_act(k, plan, out, e);
    if (f == KF_COL_SOFTMAX) return builtin_col_softmax_act(k, plan, out, e);
    if (f == KF_COL_LOGSUMEXP) return builtin_col_lse_act(k, plan, out, e);
    if (f == KF_ALIGNED_CHUNKS) return builtin_aligned_act(k, plan, out, e);
    if (f == KF_COLUMN_REUSE) return builtin_colreuse_act(k, plan, out, e);
    if (f == KF_AVG_POOL || f == KF_MAX_POOL) return builtin_pool_act(k, plan, out, e);
    if (f == KF_CL_GROUP_STATS) return builtin_group_stats_act(k, plan, out, e);
    if (f == KF_ROW_LN_PROLOGUE || f == KF_ROW_SM_PROLOGUE) return builtin_prologue_act(k, plan, out, e);
    if (kfamily_is_region(f)) return builtin_region_act(k, plan, out, e);
    double eps = 0;
    kfamily first = builtin_rewrite_match(k, &eps);
    if (f == KF_NONE || (first != f && builtin_rewrite_second(k, first) != f))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template %s does not apply to this kernel", tmpl ? tmpl : "?");
    inorm_info in = {1, 0};
    if (f == KF_ROW_SPLIT_INSTANCE_NORM) {   /* matched above: its channels, once */
        double ie = 0;
        builtin_instance_norm_match(k, &ie, &in.channels, &in.affine);
    }
    size_t outi = f == KF_ROW_LAYER_NORM || f == KF_ROW_SPLIT_LAYER_NORM || in.affine ? 3 : 1;
    /* a logsumexp's output (matched above): in_out_ptr0 first, or the parameter after in_ptr0 */
    if (f == KF_ROW_LOGSUMEXP) outi = strcmp(kfacts_runtime(k, 0), "in_ptr0") ? 0 : 1;
    /* softmax statistics: out_ptr0 (max and sum alone), out_ptr2 where the log-probability sums are stored too */
    if (f == KF_ROW_SOFTMAX_STATS) outi = builtin_params_are(k, STATS_LSUM, 6) ? 3 : 1;
    const char *outp = kfacts_runtime(k, outi);
    long long rn = kfacts_numel(k, "r0_numel");
    int stats = f == KF_ROW_SOFTMAX_STATS || f == KF_ROW_LOGSUMEXP;
    double scale = 1;   /* logsumexp(x * c): the constant, matched above */
    char lo[16];
    if (f == KF_ROW_LOGSUMEXP) builtin_logsumexp_match(k, lo, sizeof lo, &scale);
    int cumsum = f == KF_ROW_CUMSUM, split = f == KF_SPLIT_MORE, rowsplit = kfamily_is_row_split(f);
    split_info si;
    if (split) split_match(k, &si);   /* matched above */
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {   /* the variants, or an older plan's "num_warps": [..] */
        const kp_variant *v = &plan->var[i];
        int nw = (int)v->num_warps;
        long long chunk = v->chunk, rows = v->rows, nsub = v->nsub, sub = v->sub, rb = v->r0_block, seg = v->seg;
        if (nw <= 0 || nw > 32 || (nw & (nw - 1))) continue;   /* warps: a power of two */
        /* split rows: a power-of-two segment, at most 132 of them a row */
        if (rowsplit && (seg < 1024 || seg > 65536 || (seg & (seg - 1)) || (rn + seg - 1) / seg > 132)) continue;
        if ((cumsum || stats) && (chunk < 16 || chunk > 16384 || (chunk & (chunk - 1)))) continue;
        /* a statistics tile: ROWS x (CHUNK / ROWS), a power of two of at most 64 rows, 16 lanes or more */
        if (stats && (rows < 1 || rows > 64 || (rows & (rows - 1)) || chunk / rows < 16)) continue;
        /* split_more: the sub-ranges must tile r0 exactly (SUB a multiple of R0_BLOCK, NSUB * SUB
         * covering it, none empty), at most 64 partials per output */
        if (split && (rb < 16 || rb > 16384 || (rb & (rb - 1)) || sub <= 0 || sub % rb || nsub < 2 || nsub > 64 ||
                      nsub * sub < rn || (nsub - 1) * sub >= rn))
            continue;
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        json_t *cfg = json_pack("{s:s, s:i}", "template", tmpl, "num_warps", nw);
        if (split) {
            kbuf_printf(&label, "split_more: %s over %lld sub-ranges of %lld (R0_BLOCK=%lld num_warps=%d), combined in order",
                        si.op, nsub, sub, rb, nw);
            json_object_set_new(cfg, "nsub", json_integer(nsub));
            json_object_set_new(cfg, "sub", json_integer(sub));
            json_object_set_new(cfg, "r0_block", json_integer(rb));
        } else if (cumsum) {
            kbuf_printf(&label, "row_cumsum in chunks of %lld with a carried total, num_warps=%d", chunk, nw);
            json_object_set_new(cfg, "chunk", json_integer(chunk));
        } else if (stats) {
            kbuf_printf(&label, "%s: max and sum of exponentials", tmpl);
            if (scale != 1) kbuf_printf(&label, " of x * %.17g", scale);
            kbuf_printf(&label, " in one read, chunks of %lld", chunk);
            if (rows > 1) kbuf_printf(&label, " as %lld x %lld tiles (a lane's max updated once a tile)", rows, chunk / rows);
            kbuf_printf(&label, " with per-lane running statistics, num_warps=%d", nw);
            json_object_set_new(cfg, "chunk", json_integer(chunk));
            json_object_set_new(cfg, "rows", json_integer(rows));
        } else if (rowsplit) {
            kbuf_printf(&label, "%s: one read, rows cut into segments of %lld held in registers, partials exchanged between "
                        "programs, num_warps=%d", tmpl, seg, nw);
            json_object_set_new(cfg, "seg", json_integer(seg));
        } else {
            kbuf_printf(&label, "one-pass %s, whole row in registers, num_warps=%d", tmpl, nw);
        }
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n",
                    k->name, kbuf_str(&label));
        int ok = 1;
        if (split) {
            ok = split_more_source(&s, k, &si, nsub, sub, rb, nw) == 0;
        } else if (row_template(&s, f, outp, eps, &in, chunk, rows, seg, nw, scale, e)) {
            kbuf_free(&s);
            kbuf_free(&label);
            json_decref(cfg);
            json_decref(cands);
            return e->code;
        }
        if (ok) json_array_append_new(cands, json_pack("{s:s, s:O, s:s}", "label", kbuf_str(&label), "config", cfg, "source", kbuf_str(&s)));
        json_decref(cfg);
        kbuf_free(&s);
        kbuf_free(&label);
    }
    return builtin_candidates_answer(cands, tmpl,
                                     cumsum || stats ? "num_warps a power of two <= 32, chunk a power of two in [16, 16384], "
                                                       "rows a power of two <= 64 leaving 16 lanes or more"
                                                     : "num_warps a power of two <= 32",
                                     out, e);
}
