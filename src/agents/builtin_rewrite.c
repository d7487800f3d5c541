/* builtin_rewrite.c — the executor's rewrite templates: kernels written anew (not Inductor's
 * body re-launched) for the patterns where the compiler leaves the most, chosen by the ATen
 * ops the kernel fuses, its signature and its index expressions.
 *
 *   row_softmax, row_log_softmax  one pass over contiguous rows of <= 16384 fp32 elements held
 *                                 in registers (Inductor's looped kernel reads each row twice)
 *   row_layer_norm                the same for native_layer_norm with weight and bias
 *   row_cumsum                    an inclusive row scan in chunks with a carried scalar total,
 *                                 one program per row (Inductor selects the last lane of each
 *                                 chunk's scan to carry it, and its heuristics pick small chunks)
 *   split_more                    a looped sum/max/min reduction with few, long reductions (a
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
#include "util/buf.h"

static int has_str(const json_t *arr, const char *s) {
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (json_string_value(v) && strstr(json_string_value(v), s)) return 1;
    return 0;
}

static int params_are(const json_t *k, const char *const *want, size_t n) {
    const json_t *rt = json_object_get(k, "runtime_params");
    if (json_array_size(rt) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = json_string_value(json_array_get(rt, i));
        size_t m = strlen(want[i]);
        if (!p || strncmp(p, want[i], m)) return 0;   /* prefix: out_ptr0 / out_ptr2 ... */
    }
    return 1;
}

/* The declared Triton type of runtime parameter i ("*fp32", "i32"), or "". */
static const char *param_type(const json_t *k, size_t i) {
    const char *name = json_string_value(json_array_get(json_object_get(k, "runtime_params"), i));
    size_t j;
    json_t *p;
    json_array_foreach(json_object_get(k, "signature"), j, p) {
        const char *n = json_string_value(json_object_get(p, "name"));
        if (name && n && !strcmp(n, name)) return json_string_value(json_object_get(p, "type")) ? json_string_value(json_object_get(p, "type")) : "";
    }
    return "";
}

/* The eps of a layer norm kernel: the small constant added before rsqrt. 0 if not found. */
static double find_eps(const char *src) {
    const char *rs = src ? strstr(src, "rsqrt(") : NULL;
    double eps = 0;
    for (const char *p = src; p && rs && p < rs; p++) {
        if (strncmp(p, "tl.full([1, 1], ", 16)) continue;
        double v = strtod(p + 16, NULL);
        if (v > 0 && v < 1e-2) eps = v;
    }
    return eps;
}

/* split_more: the kernel's single accumulator and its final reduction line, when the kernel
 * has the shape the transform knows (see builtin.h). op: "sum", "max" or "min". */
typedef struct split_info {
    char op[4];
    char acc[32];         /* "_tmp5" */
    char res[32];         /* "tmp5" */
    const char *store;    /* the final store line within the source */
} split_info;

static int count_str(const char *s, const char *needle) {
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

static int split_match(const json_t *k, split_info *si) {
    const char *src = json_string_value(json_object_get(k, "jit_source"));
    const char *kind = json_string_value(json_object_get(k, "kind"));
    const char *grid = json_string_value(json_object_get(k, "grid_type"));
    long long xn = json_integer_value(json_object_get(json_object_get(k, "numels"), "xnumel"));
    long long rn = json_integer_value(json_object_get(json_object_get(k, "numels"), "r0_numel"));
    const json_t *ce = json_object_get(k, "constexprs");
    if (!src || !kind || strcmp(kind, "reduction") || (grid && strcmp(grid, "Grid1D"))) return 0;
    if (xn <= 0 || xn > 4096 || rn < 16384) return 0;   /* few, long reductions only */
    if (json_array_size(ce) != 2 || strcmp(json_string_value(json_array_get(ce, 0)), "XBLOCK") ||
        strcmp(json_string_value(json_array_get(ce, 1)), "R0_BLOCK"))
        return 0;
    /* one output pointer, no in-place one */
    size_t i;
    json_t *p;
    int nout = 0;
    json_array_foreach(json_object_get(k, "runtime_params"), i, p) {
        const char *n = json_string_value(p);
        if (!strncmp(n, "in_out_ptr", 10)) return 0;
        nout += !strncmp(n, "out_ptr", 7);
    }
    if (nout != 1 || count_str(src, "tl.store(") != 1 || !strstr(src, "    x3 = xindex\n")) return 0;
    if (count_str(src, "for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n") != 1 || count_str(src, "for ") != 1)
        return 0;
    if (!strstr(src, "R0_BLOCK : tl.constexpr):\n")) return 0;
    /* the final reduction: "    tmpN = <reduce>(_tmpN, 1)[:, None]\n" followed only by the store */
    static const char *const ops[][2] = {{"triton_helpers.max2(", "max"}, {"triton_helpers.min2(", "min"}, {"tl.sum(", "sum"}};
    for (size_t o = 0; o < 3; o++) {
        const char *at = strstr(src, ops[o][0]);
        if (!at || count_str(src, ops[o][0]) != 1) continue;
        const char *ls = at;
        while (ls > src && ls[-1] != '\n') ls--;
        char res[32], acc[32];
        int n = 0;
        if (sscanf(ls, "    %31[A-Za-z0-9_] = %n", res, &n) != 1 || ls + n != at) return 0;
        const char *a = at + strlen(ops[o][0]);
        size_t al = strspn(a, "_tmp0123456789");
        if (al == 0 || al >= sizeof acc || strncmp(a + al, ", 1)[:, None]\n", 14)) return 0;
        memcpy(acc, a, al);
        acc[al] = '\0';
        if (acc[0] != '_' || strcmp(acc + 1, res)) return 0;
        const char *st = a + al + 14;   /* the next line must be the store of res, and the end */
        char want[96];
        snprintf(want, sizeof want, "    tl.store(out_ptr0 + (x3), %s, xmask)\n", res);
        if (strncmp(st, want, strlen(want))) return 0;
        const char *rest = st + strlen(want);
        while (*rest == ' ' || *rest == '\n') rest++;
        if (*rest) return 0;
        /* the accumulator starts at the op's identity */
        char init[128];
        snprintf(init, sizeof init, "    %s = tl.full([XBLOCK, R0_BLOCK], %s, tl.float32)\n", acc,
                 o == 0 ? "float(\"-inf\")" : o == 1 ? "float(\"inf\")" : "0");
        if (!strstr(src, init)) return 0;
        snprintf(si->op, sizeof si->op, "%s", ops[o][1]);
        snprintf(si->acc, sizeof si->acc, "%s", acc);
        snprintf(si->res, sizeof si->res, "%s", res);
        si->store = st;
        return 1;
    }
    return 0;
}

const char *builtin_rewrite_match(const json_t *k, double *eps) {
    const json_t *aten = json_object_get(k, "aten_ops");
    const char *src = json_string_value(json_object_get(k, "source"));
    long long rn = json_integer_value(json_object_get(json_object_get(k, "numels"), "r0_numel"));
    const char *kind = json_string_value(json_object_get(k, "kind"));
    if (!src || rn <= 0 || !kind || (strcmp(kind, "reduction") && strcmp(kind, "persistent_reduction"))) return NULL;
    split_info si;
    const char *split = split_match(k, &si) ? "split_more" : NULL;
    char rows[64];
    snprintf(rows, sizeof rows, "(r0_1 + %lld*x0)", rn);   /* contiguous rows of r0_numel */
    if (!strstr(src, rows)) return split;
    static const char *const one[] = {"in_ptr0", "out_ptr", "xnumel", "r0_numel"};
    static const char *const ln[] = {"in_ptr0", "in_ptr1", "in_ptr2", "out_ptr", "xnumel", "r0_numel"};
    /* a plain fp32 row scan with addition: cumsum is the only ATen op fused (an expression under
     * the scan would add its ops), one load, one store, an add combine function */
    if (params_are(k, one, 4) && json_array_size(aten) == 1 && has_str(aten, "aten.cumsum") &&
        strstr(src, "tl.associative_scan(") && strstr(src, "'num_load': 1, 'num_store': 1") &&
        strstr(src, "tmp0 = arg0_0 + arg1_0") && !strcmp(param_type(k, 0), "*fp32") && !strcmp(param_type(k, 1), "*fp32"))
        return "row_cumsum";
    if (rn > 16384) return split;   /* the one-pass templates hold the whole row in registers */
    if (params_are(k, one, 4) && has_str(aten, "aten._log_softmax")) return "row_log_softmax";
    if (params_are(k, one, 4) && has_str(aten, "aten._softmax")) return "row_softmax";
    if (params_are(k, ln, 6) && has_str(aten, "aten.native_layer_norm")) {
        *eps = find_eps(src);
        if (*eps > 0) return "row_layer_norm";
    }
    return split;
}

json_t *builtin_rewrite_variants(const char *tmpl, const json_t *k) {
    json_t *v = json_array();
    if (tmpl && !strcmp(tmpl, "row_cumsum")) {
        long long rn = json_integer_value(json_object_get(json_object_get(k, "numels"), "r0_numel"));
        static const int chunk_warps[][2] = {{2048, 4}, {4096, 8}, {8192, 8}, {8192, 16}};
        long long np2 = 1;
        while (np2 < rn) np2 <<= 1;
        for (size_t i = 0; i < sizeof chunk_warps / sizeof chunk_warps[0]; i++) {
            long long c = chunk_warps[i][0] < np2 ? chunk_warps[i][0] : np2;
            if (i && c < chunk_warps[i][0] && c <= chunk_warps[i - 1][0]) break;   /* short rows: fewer variants */
            json_array_append_new(v, json_pack("{s:I, s:i}", "chunk", (json_int_t)c, "num_warps", chunk_warps[i][1]));
        }
        return v;
    }
    if (tmpl && !strcmp(tmpl, "split_more")) {
        /* programs in all: about 2048 or 4096 (many waves on ~132 SMs); tiles of 2048 or 4096 */
        long long xn = json_integer_value(json_object_get(json_object_get(k, "numels"), "xnumel"));
        long long rn = json_integer_value(json_object_get(json_object_get(k, "numels"), "r0_numel"));
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
static int split_more_source(kbuf *s, const json_t *k, const split_info *si, long long nsub, long long sub, long long rb,
                             int nw) {
    long long np2 = 1;
    while (np2 < nsub) np2 <<= 1;
    const char *src = json_string_value(json_object_get(k, "jit_source"));
    const char *name = json_string_value(json_object_get(k, "name"));
    kbuf body = KBUF_INIT;
    kbuf_puts(&body, src);
    static const char *const loop = "for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n";
    static const char *const sig = "R0_BLOCK : tl.constexpr):\n";
    char store[96];
    snprintf(store, sizeof store, "tl.store(out_ptr0 + (x3), %s, xmask)", si->res);
    const struct { const char *from, *to; } subst[] = {
        {loop, "for r0_offset in tl.range(tl.program_id(1) * SUB, tl.program_id(1) * SUB + SUB, R0_BLOCK):\n"},
        {sig, "R0_BLOCK : tl.constexpr, SUB : tl.constexpr, NSUB : tl.constexpr):\n"},
        {store, NULL}};
    for (size_t i = 0; i < 3; i++) {
        char *at = strstr(body.data, subst[i].from);
        if (!at) { kbuf_free(&body); return -1; }
        kbuf nb = KBUF_INIT;
        kbuf_append(&nb, body.data, (size_t)(at - body.data));
        if (subst[i].to) kbuf_puts(&nb, subst[i].to);
        else kbuf_printf(&nb, "tl.store(out_ptr0 + ((x3) * NSUB + tl.program_id(1)), %s, xmask)", si->res);
        kbuf_puts(&nb, at + strlen(subst[i].from));
        kbuf_free(&body);
        body = nb;
    }
    /* the launcher: every runtime parameter, out_ptr0 replaced by the scratch for the first kernel */
    kbuf params = KBUF_INIT, first = KBUF_INIT;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(k, "runtime_params"), i, p) {
        const char *n = json_string_value(p);
        kbuf_printf(&params, "%s%s", i ? ", " : "", n);
        kbuf_printf(&first, "%s%s", i ? ", " : "", strcmp(n, "out_ptr0") ? n : "scratch");
    }
    const char *ident = !strcmp(si->op, "max") ? "float(\"-inf\")" : !strcmp(si->op, "min") ? "float(\"inf\")" : "0.0";
    const char *red = !strcmp(si->op, "max") ? "triton_helpers.max2(v, 1)[:, None]"
                      : !strcmp(si->op, "min") ? "triton_helpers.min2(v, 1)[:, None]" : "tl.sum(v, 1)[:, None]";
    kbuf_puts(s, "import torch\n");
    kbuf_puts(s, body.data);
    if (s->len && s->data[s->len - 1] != '\n') kbuf_putc(s, '\n');
    kbuf_printf(s,
        "\n\n@triton.jit\n"
        "def _kopt_combine(scratch, out_ptr0, xnumel, NSUB: tl.constexpr, NP2: tl.constexpr, XB: tl.constexpr):\n"
        "    x = tl.program_id(0) * XB + tl.arange(0, XB)[:, None]\n"
        "    j = tl.arange(0, NP2)[None, :]\n"
        "    m = x < xnumel\n"
        "    v = tl.load(scratch + x * NSUB + j, mask=m & (j < NSUB), other=%s)\n"
        "    tl.store(out_ptr0 + x, %s, m)\n\n\n"
        "def launch(%s, stream=None):\n"
        "    scratch = torch.empty((xnumel * %lld,), dtype=out_ptr0.dtype, device=out_ptr0.device)\n"
        "    %s[(xnumel, %lld)](%s, XBLOCK=1, R0_BLOCK=%lld, SUB=%lld, NSUB=%lld, num_warps=%d, num_stages=1)\n"
        "    _kopt_combine[(triton.cdiv(xnumel, 64),)](scratch, out_ptr0, xnumel, NSUB=%lld, NP2=%lld, XB=64, num_warps=2)\n",
        ident, red, kbuf_str(&params), nsub, name, nsub, kbuf_str(&first), rb, sub, nsub, nw, nsub, np2);
    kbuf_free(&params);
    kbuf_free(&first);
    kbuf_free(&body);
    return 0;
}

static void row_cumsum_source(kbuf *s, const char *out, long long chunk, int nw) {
    kbuf_printf(s,
        "def _row_scan(in_ptr0, %s, xnumel, r0_numel, CHUNK: tl.constexpr):\n"
        "    row = tl.program_id(0)\n"
        "    base = row.to(tl.int64) * r0_numel\n"
        "    cols = tl.arange(0, CHUNK)\n"
        "    carry = tl.zeros([], dtype=tl.float32)\n"
        "    for off in tl.range(0, r0_numel, CHUNK, num_stages=2):\n"
        "        mask = off + cols < r0_numel\n"
        "        x = tl.load(in_ptr0 + base + off + cols, mask=mask, other=0.0, eviction_policy=\"evict_first\")\n"
        "        tl.store(%s + base + off + cols, tl.cumsum(x, 0) + carry, mask=mask)\n"
        "        carry += tl.sum(x, 0)\n\n\n"
        "def launch(in_ptr0, %s, xnumel, r0_numel, stream=None):\n"
        "    _row_scan[(xnumel,)](in_ptr0, %s, xnumel, r0_numel, CHUNK=%lld, num_warps=%d)\n",
        out, out, out, out, chunk, nw);
}

static void row_layer_norm_source(kbuf *s, const char *out, double eps, int nw) {
    kbuf_printf(s,
        "def _row_kernel(in_ptr0, in_ptr1, in_ptr2, %s, xnumel, r0_numel, R0_BLOCK: tl.constexpr):\n"
        "    row = tl.program_id(0)\n"
        "    base = row.to(tl.int64) * r0_numel\n"
        "    cols = tl.arange(0, R0_BLOCK)\n"
        "    mask = cols < r0_numel\n"
        "    x = tl.load(in_ptr0 + base + cols, mask=mask, other=0.0, eviction_policy=\"evict_first\")\n"
        "    mean = tl.sum(x, 0) / r0_numel\n"
        "    d = tl.where(mask, x - mean, 0.0)\n"
        "    var = tl.sum(d * d, 0) / r0_numel\n"
        "    rstd = tl.rsqrt(var + %.17g)\n"
        "    w = tl.load(in_ptr1 + cols, mask=mask, other=0.0, eviction_policy=\"evict_last\")\n"
        "    b = tl.load(in_ptr2 + cols, mask=mask, other=0.0, eviction_policy=\"evict_last\")\n"
        "    tl.store(%s + base + cols, (d * rstd) * w + b, mask=mask)\n\n\n"
        "def launch(in_ptr0, in_ptr1, in_ptr2, %s, xnumel, r0_numel, stream=None):\n"
        "    _row_kernel[(xnumel,)](in_ptr0, in_ptr1, in_ptr2, %s, xnumel, r0_numel,\n"
        "                         R0_BLOCK=triton.next_power_of_2(r0_numel), num_warps=%d, num_stages=1)\n",
        out, eps, out, out, out, nw);
}

static void row_softmax_source(kbuf *s, const char *out, int log, int nw) {
    kbuf_printf(s,
        "def _row_kernel(in_ptr0, %s, xnumel, r0_numel, R0_BLOCK: tl.constexpr):\n"
        "    row = tl.program_id(0)\n"
        "    base = row.to(tl.int64) * r0_numel\n"
        "    cols = tl.arange(0, R0_BLOCK)\n"
        "    mask = cols < r0_numel\n"
        "    x = tl.load(in_ptr0 + base + cols, mask=mask, other=float(\"-inf\"))\n"
        "    shifted = x - tl.max(x, 0)\n"
        "    e = tl.where(mask, tl.exp(shifted), 0.0)\n", out);
    if (log) kbuf_puts(s, "    y = shifted - tl.log(tl.sum(e, 0))\n");
    else kbuf_puts(s, "    y = e / tl.sum(e, 0)\n");
    kbuf_printf(s,
        "    tl.store(%s + base + cols, y, mask=mask)\n\n\n"
        "def launch(in_ptr0, %s, xnumel, r0_numel, stream=None):\n"
        "    _row_kernel[(xnumel,)](in_ptr0, %s, xnumel, r0_numel,\n"
        "                         R0_BLOCK=triton.next_power_of_2(r0_numel), num_warps=%d, num_stages=1)\n",
        out, out, out, nw);
}

int builtin_rewrite_act(const json_t *k, const json_t *plan, json_t **out, kerr *e) {
    const json_t *params = json_object_get(plan, "params");
    const char *tmpl = json_string_value(json_object_get(params, "template"));
    double eps = 0;
    const char *match = builtin_rewrite_match(k, &eps);
    if (!tmpl || !match || strcmp(tmpl, match))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template %s does not apply to this kernel", tmpl ? tmpl : "?");
    json_t *variants = json_incref(json_object_get(params, "variants"));
    if (!json_is_array(variants)) {   /* "num_warps": [..] */
        json_decref(variants);
        variants = json_array();
        size_t i;
        json_t *w;
        json_array_foreach(json_object_get(params, "num_warps"), i, w) json_array_append_new(variants, json_pack("{s:O}", "num_warps", w));
    }
    const json_t *rt = json_object_get(k, "runtime_params");
    const char *outp = json_string_value(json_array_get(rt, !strcmp(tmpl, "row_layer_norm") ? 3 : 1));
    json_t *cands = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(variants, i, v) {
        int nw = (int)json_integer_value(json_object_get(v, "num_warps"));
        long long chunk = json_integer_value(json_object_get(v, "chunk"));
        if (nw <= 0 || nw > 32 || (nw & (nw - 1))) continue;   /* warps: a power of two */
        int cumsum = !strcmp(tmpl, "row_cumsum");
        if (cumsum && (chunk < 16 || chunk > 16384 || (chunk & (chunk - 1)))) continue;
        if (!strcmp(tmpl, "split_more")) {
            split_info si;
            long long nsub = json_integer_value(json_object_get(v, "nsub")), sub = json_integer_value(json_object_get(v, "sub"));
            long long rb = json_integer_value(json_object_get(v, "r0_block"));
            long long rn = json_integer_value(json_object_get(json_object_get(k, "numels"), "r0_numel"));
            /* the sub-ranges must tile r0 exactly: SUB a multiple of R0_BLOCK, NSUB * SUB covering it,
             * and at most 64 partials per output */
            if (!split_match(k, &si) || rb < 16 || rb > 16384 || (rb & (rb - 1)) || sub <= 0 || sub % rb || nsub < 2 ||
                nsub > 64 || nsub * sub < rn || (nsub - 1) * sub >= rn)
                continue;
            kbuf s = KBUF_INIT, label = KBUF_INIT;
            kbuf_printf(&label, "split_more: %s over %lld sub-ranges of %lld (R0_BLOCK=%lld num_warps=%d), combined in order",
                        si.op, nsub, sub, rb, nw);
            kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n",
                        json_string_value(json_object_get(k, "name")), kbuf_str(&label));
            if (split_more_source(&s, k, &si, nsub, sub, rb, nw) == 0) {
                json_t *cfg = json_pack("{s:s, s:i, s:I, s:I, s:I}", "template", tmpl, "num_warps", nw, "nsub", (json_int_t)nsub,
                                        "sub", (json_int_t)sub, "r0_block", (json_int_t)rb);
                json_array_append_new(cands, json_pack("{s:s, s:o, s:s}", "label", kbuf_str(&label), "config", cfg, "source",
                                                       kbuf_str(&s)));
            }
            kbuf_free(&s);
            kbuf_free(&label);
            continue;
        }
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        if (cumsum) kbuf_printf(&label, "row_cumsum in chunks of %lld with a carried total, num_warps=%d", chunk, nw);
        else kbuf_printf(&label, "one-pass %s, whole row in registers, num_warps=%d", tmpl, nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n",
                    json_string_value(json_object_get(k, "name")), kbuf_str(&label));
        kbuf_puts(&s, "import triton\nimport triton.language as tl\n\n\n@triton.jit\n");
        if (cumsum) row_cumsum_source(&s, outp, chunk, nw);
        else if (!strcmp(tmpl, "row_layer_norm")) row_layer_norm_source(&s, outp, eps, nw);
        else row_softmax_source(&s, outp, !strcmp(tmpl, "row_log_softmax"), nw);
        json_t *cfg = json_pack("{s:s, s:i}", "template", tmpl, "num_warps", nw);
        if (cumsum) json_object_set_new(cfg, "chunk", json_integer(chunk));
        json_array_append_new(cands, json_pack("{s:s, s:o, s:s}", "label", kbuf_str(&label), "config", cfg, "source", kbuf_str(&s)));
        kbuf_free(&s);
        kbuf_free(&label);
    }
    json_decref(variants);
    if (!json_array_size(cands)) {
        json_decref(cands);
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite %s: no usable variant in the plan (num_warps a power of two <= 32%s)", tmpl,
                        !strcmp(tmpl, "row_cumsum") ? ", chunk a power of two in [16, 16384]" : "");
    }
    *out = json_pack("{s:o}", "candidates", cands);
    return 0;
}
