/* builtin_executor.c — the executor role: turns a launch_config plan into launcher-form
 * candidates (docs/CANDIDATES.md) that run Inductor's own kernel body with explicit block
 * sizes, warps and stages instead of its heuristics.
 *
 * Directions: "launch_config" (below) and "rewrite" (one-pass row kernels from templates,
 * chosen by the ATen ops the kernel fuses and its shapes: builtin_rewrite_match).
 * ctx {"kernel": {"name", "jit_source" (the kernel's Triton source without its
 *      @triton_heuristics decorator), "runtime_params":["in_ptr0",...], "grid_type":"Grid1D|Grid2D",
 *      "constexprs":[..]}, "plan": {"direction":"launch_config","params":{"configs":[..]}}}
 * -> {"candidates":[{"label":"XBLOCK=1 R0_BLOCK=16384 num_warps=16 num_stages=1",
 *                    "config":{...}, "source":"..."}]} */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "util/buf.h"

char *builtin_strip_heuristics(const char *source, size_t dec_off, size_t dec_len) {
    if (!dec_len) return NULL;
    /* the '@' before the decorator call, and the rest of the call's line */
    size_t at = dec_off;
    while (at > 0 && source[at - 1] != '@' && source[at - 1] != '\n') at--;
    if (at == 0 || source[at - 1] != '@') return NULL;
    at--;
    size_t end = dec_off + dec_len;
    while (source[end] && source[end] != '\n') end++;
    if (source[end] == '\n') end++;
    kbuf b = KBUF_INIT;
    kbuf_append(&b, source, at);
    kbuf_puts(&b, source + end);
    return kbuf_steal(&b);
}

/* ---------------------------------------------------------------- rewrites
 * One-pass row kernels for the patterns where Inductor re-reads its input: softmax,
 * log-softmax and layer norm over contiguous rows that fit on chip. The whole row is loaded
 * once into registers; Inductor's looped kernels read it twice (or three times). */

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

const char *builtin_rewrite_match(const json_t *k, double *eps) {
    const json_t *aten = json_object_get(k, "aten_ops");
    const char *src = json_string_value(json_object_get(k, "source"));
    long long rn = json_integer_value(json_object_get(json_object_get(k, "numels"), "r0_numel"));
    const char *kind = json_string_value(json_object_get(k, "kind"));
    if (!src || rn <= 0 || rn > 16384 || !kind || (strcmp(kind, "reduction") && strcmp(kind, "persistent_reduction")))
        return NULL;
    char rows[64];
    snprintf(rows, sizeof rows, "(r0_1 + %lld*x0)", rn);   /* contiguous rows of r0_numel */
    if (!strstr(src, rows)) return NULL;
    static const char *const one[] = {"in_ptr0", "out_ptr", "xnumel", "r0_numel"};
    static const char *const ln[] = {"in_ptr0", "in_ptr1", "in_ptr2", "out_ptr", "xnumel", "r0_numel"};
    if (params_are(k, one, 4) && has_str(aten, "aten._log_softmax")) return "row_log_softmax";
    if (params_are(k, one, 4) && has_str(aten, "aten._softmax")) return "row_softmax";
    if (params_are(k, ln, 6) && has_str(aten, "aten.native_layer_norm")) {
        *eps = find_eps(src);
        return *eps > 0 ? "row_layer_norm" : NULL;
    }
    return NULL;
}

static void rewrite_source(kbuf *s, const char *tmpl, const json_t *k, double eps, int nw) {
    const json_t *rt = json_object_get(k, "runtime_params");
    const char *out = json_string_value(json_array_get(rt, !strcmp(tmpl, "row_layer_norm") ? 3 : 1));
    kbuf_puts(s, "import triton\nimport triton.language as tl\n\n\n@triton.jit\n");
    if (!strcmp(tmpl, "row_layer_norm")) {
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
        return;
    }
    int log = !strcmp(tmpl, "row_log_softmax");
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

static int rewrite_act(const json_t *k, const json_t *plan, json_t **out, kerr *e) {
    const json_t *params = json_object_get(plan, "params");
    const char *tmpl = json_string_value(json_object_get(params, "template"));
    double eps = 0;
    const char *match = builtin_rewrite_match(k, &eps);
    if (!tmpl || !match || strcmp(tmpl, match))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template %s does not apply to this kernel", tmpl ? tmpl : "?");
    json_t *cands = json_array();
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(params, "num_warps"), i, w) {
        int nw = (int)json_integer_value(w);
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label, "one-pass %s, whole row in registers, num_warps=%d", tmpl, nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n",
                    json_string_value(json_object_get(k, "name")), kbuf_str(&label));
        rewrite_source(&s, tmpl, k, eps, nw);
        json_array_append_new(cands, json_pack("{s:s, s:{s:s, s:i}, s:s}", "label", kbuf_str(&label), "config", "template",
                                               tmpl, "num_warps", nw, "source", kbuf_str(&s)));
        kbuf_free(&s);
        kbuf_free(&label);
    }
    *out = json_pack("{s:o}", "candidates", cands);
    return 0;
}

static int executor_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    (void)self;
    const json_t *k = json_object_get(ctx, "kernel"), *plan = json_object_get(ctx, "plan");
    const char *name = json_string_value(json_object_get(k, "name"));
    const char *src = json_string_value(json_object_get(k, "jit_source"));
    const char *grid = json_string_value(json_object_get(k, "grid_type"));
    const char *dir = json_string_value(json_object_get(plan, "direction"));
    if (!name || !src) return kerr_set(e, KOPT_E_INTERNAL, "executor: kernel name or source missing");
    if (dir && !strcmp(dir, "rewrite")) return rewrite_act(k, plan, out, e);
    if (!dir) return kerr_set(e, KOPT_E_CANDIDATE, "the plan names no direction");
    /* Plans from another planner (an LLM's) are taken in what the built-in executor can do:
     * "one_pass" becomes a rewrite when a template applies; a plan whose params are block
     * sizes / warps (any direction) becomes a launch configuration. */
    const json_t *params0 = json_object_get(plan, "params");
    json_t *normalized = NULL;
    if (dir && !strcmp(dir, "one_pass")) {
        double eps = 0;
        const char *tmpl = builtin_rewrite_match(k, &eps);
        if (tmpl) {
            json_t *rw = json_pack("{s:s, s:{s:s, s:[i,i,i]}}", "direction", "rewrite", "params", "template", tmpl,
                                   "num_warps", 8, 16, 32);
            int rc = rewrite_act(k, rw, out, e);
            json_decref(rw);
            return rc;
        }
    }
    if (!json_is_array(json_object_get(params0, "configs"))) {
        if (!json_object_get(params0, "XBLOCK") && !json_object_get(params0, "R0_BLOCK") &&
            !json_object_get(params0, "YBLOCK") && !json_object_get(params0, "num_warps"))
            return kerr_set(e, KOPT_E_CANDIDATE, "the built-in executor cannot carry out direction '%s' without block sizes",
                            dir ? dir : "?");
        int has_r = 0;
        size_t ci;
        json_t *cv;
        json_array_foreach(json_object_get(k, "constexprs"), ci, cv) has_r |= !strcmp(json_string_value(cv), "R0_BLOCK");
        json_t *cfg = json_pack("{s:I, s:I, s:I}", "XBLOCK",
                                json_object_get(params0, "XBLOCK") ? json_integer_value(json_object_get(params0, "XBLOCK"))
                                                                   : (json_int_t)(has_r ? 1 : 1024),
                                "num_warps", json_object_get(params0, "num_warps") ? json_integer_value(json_object_get(params0, "num_warps")) : 8,
                                "num_stages", json_object_get(params0, "num_stages") ? json_integer_value(json_object_get(params0, "num_stages")) : 1);
        if (has_r)
            json_object_set_new(cfg, "R0_BLOCK", json_integer(json_object_get(params0, "R0_BLOCK")
                                                                  ? json_integer_value(json_object_get(params0, "R0_BLOCK")) : 2048));
        if (json_object_get(params0, "YBLOCK")) json_object_set(cfg, "YBLOCK", json_object_get(params0, "YBLOCK"));
        normalized = json_pack("{s:s, s:{s:[o]}}", "direction", "launch_config", "params", "configs", cfg);
        plan = normalized;
    }
    int grid2d = grid && !strcmp(grid, "Grid2D");
    if (grid && strcmp(grid, "Grid1D") && !grid2d) {
        json_decref(normalized);
        return kerr_set(e, KOPT_E_CANDIDATE, "grid type %s is not supported by the built-in executor", grid);
    }
    kbuf params = KBUF_INIT;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(k, "runtime_params"), i, p) {
        if (i) kbuf_puts(&params, ", ");
        kbuf_puts(&params, json_string_value(p));
    }
    json_t *cands = json_array();
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(plan, "params"), "configs"), i, c) {
        int xb = (int)json_integer_value(json_object_get(c, "XBLOCK"));
        int rb = (int)json_integer_value(json_object_get(c, "R0_BLOCK"));
        int yb = (int)json_integer_value(json_object_get(c, "YBLOCK"));
        int nw = (int)json_integer_value(json_object_get(c, "num_warps"));
        int ns = (int)json_integer_value(json_object_get(c, "num_stages"));
        kbuf label = KBUF_INIT, s = KBUF_INIT;
        kbuf_printf(&label, "XBLOCK=%d", xb);
        if (rb) kbuf_printf(&label, " R0_BLOCK=%d", rb);
        if (yb) kbuf_printf(&label, " YBLOCK=%d", yb);
        kbuf_printf(&label, " num_warps=%d num_stages=%d", nw, ns);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, launch_config: %s\n", name, kbuf_str(&label));
        kbuf_puts(&s, src);
        if (s.len && s.data[s.len - 1] != '\n') kbuf_putc(&s, '\n');
        kbuf_printf(&s, "\n\ndef launch(%s, stream=None):\n", kbuf_str(&params));
        if (grid2d)
            kbuf_printf(&s, "    grid = (triton.cdiv(xnumel, %d), triton.cdiv(ynumel, %d))\n", xb, yb);
        else
            kbuf_printf(&s, "    grid = (triton.cdiv(xnumel, %d),)\n", xb);
        kbuf_printf(&s, "    %s[grid](%s, XBLOCK=%d", name, kbuf_str(&params), xb);
        if (rb) kbuf_printf(&s, ", R0_BLOCK=%d", rb);
        if (yb) kbuf_printf(&s, ", YBLOCK=%d", yb);
        kbuf_printf(&s, ", num_warps=%d, num_stages=%d)\n", nw, ns);
        json_array_append_new(cands, json_pack("{s:s, s:O, s:s}", "label", kbuf_str(&label), "config", c, "source", kbuf_str(&s)));
        kbuf_free(&label);
        kbuf_free(&s);
    }
    kbuf_free(&params);
    json_decref(normalized);
    *out = json_pack("{s:o}", "candidates", cands);
    return 0;
}

static const agent_vtable EXECUTOR_VT = {executor_act, NULL, NULL};

agent *builtin_executor_new(void) { return builtin_agent(AGENT_EXECUTOR, &EXECUTOR_VT, NULL); }
