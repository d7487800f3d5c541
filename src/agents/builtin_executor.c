/* builtin_executor.c — the executor role: turns a launch_config plan into form-P candidates
 * (docs/CANDIDATES.md: Inductor's own kernel body and a KOPT_PLAN launch with explicit block
 * sizes, warps and stages instead of its heuristics; kopt writes the launcher).
 *
 * Directions: "launch_config" (below) and "rewrite" (kernels written from templates, chosen
 * by the ATen ops the kernel fuses and its shapes: builtin_rewrite.c).
 * ctx {"kernel": {"name", "jit_source" (the kernel's Triton source without its
 *      @triton_heuristics decorator), "runtime_params":["in_ptr0",...], "grid_type":"Grid1D|Grid2D",
 *      "constexprs":[..]}, "plan": {"direction":"launch_config","params":{"configs":[..]}}}
 * -> {"candidates":[{"label":"XBLOCK=1 R0_BLOCK=16384 num_warps=16 num_stages=1",
 *                    "config":{...}, "source":"..."}]} */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "util/buf.h"

void builtin_plan_source(const char *src, kbuf *out) {
    const char *p = src;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p + 1) : strlen(p);
        static const char drv[] = "triton_helpers.set_driver_to_gpu()";
        size_t t = n;
        while (t && (p[t - 1] == '\n' || p[t - 1] == '\r' || p[t - 1] == ' ')) t--;
        if (!(t == sizeof drv - 1 && !memcmp(p, drv, t))) kbuf_append(out, p, n);
        p += n;
    }
    if (out->len && out->data[out->len - 1] != '\n') kbuf_putc(out, '\n');
}

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

/* The candidates for `plan` over kernel k into *out (as agent_act). */
static int execute_plan(const kfacts *k, const json_t *plan, json_t **out, kerr *e) {
    const char *name = k->name, *src = k->jit_source, *grid = k->grid_type;
    const char *dir = json_string_value(json_object_get(plan, "direction"));
    if (!name) return kerr_set(e, KOPT_E_INTERNAL, "executor: kernel name missing");
    if (dir && !strcmp(dir, "rewrite")) return builtin_rewrite_act(k, plan, out, e);   /* written anew */
    if (!src) return kerr_set(e, KOPT_E_CANDIDATE, "executor: %s has no Triton source of its own to re-launch", name);
    if (!dir) return kerr_set(e, KOPT_E_CANDIDATE, "the plan names no direction");
    /* Plans from another planner (an LLM's) are taken in what the built-in executor can do:
     * "one_pass" becomes a rewrite when a template applies; a plan whose params are block
     * sizes / warps (any direction) becomes a launch configuration. */
    const json_t *params0 = json_object_get(plan, "params");
    json_t *normalized = NULL;
    if (dir && !strcmp(dir, "one_pass")) {
        double eps = 0;
        kfamily tmpl = builtin_rewrite_match(k, &eps);
        if (tmpl != KF_NONE) {
            json_t *rw = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", kfamily_name(tmpl),
                                   "variants", builtin_rewrite_variants(tmpl, k));
            int rc = builtin_rewrite_act(k, rw, out, e);
            json_decref(rw);
            return rc;
        }
    }
    if (!json_is_array(json_object_get(params0, "configs"))) {
        if (!json_object_get(params0, "XBLOCK") && !json_object_get(params0, "R0_BLOCK") &&
            !json_object_get(params0, "YBLOCK") && !json_object_get(params0, "num_warps"))
            return kerr_set(e, KOPT_E_CANDIDATE, "the built-in executor cannot carry out direction '%s' without block sizes",
                            dir ? dir : "?");
        int has_r = kf_strs_has(&k->constexprs, "R0_BLOCK");
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
    kbuf qparams = KBUF_INIT;   /* the runtime parameters as the plan's quoted list */
    for (size_t r = 0; r < k->runtime.n; r++) kbuf_printf(&qparams, "%s\"%s\"", r ? ", " : "", k->runtime.v[r]);
    json_t *cands = json_array();
    size_t i;
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
        builtin_plan_source(src, &s);
        kbuf_printf(&s, "\n\nKOPT_PLAN = {\n    \"params\": [%s],\n", kbuf_str(&qparams));
        if (grid2d)
            kbuf_printf(&s, "    \"launches\": [{\"kernel\": \"%s\", \"grid\": [\"cdiv(xnumel, %d)\", \"cdiv(ynumel, %d)\"],\n",
                        name, xb, yb);
        else
            kbuf_printf(&s, "    \"launches\": [{\"kernel\": \"%s\", \"grid\": [\"cdiv(xnumel, %d)\"],\n", name, xb);
        kbuf_printf(&s, "                  \"args\": [%s],\n                  \"constexprs\": {\"XBLOCK\": %d", kbuf_str(&qparams), xb);
        if (rb) kbuf_printf(&s, ", \"R0_BLOCK\": %d", rb);
        if (yb) kbuf_printf(&s, ", \"YBLOCK\": %d", yb);
        kbuf_printf(&s, "}, \"num_warps\": %d, \"num_stages\": %d}],\n}\n", nw, ns);
        json_array_append_new(cands, json_pack("{s:s, s:O, s:s}", "label", kbuf_str(&label), "config", c, "source", kbuf_str(&s)));
        kbuf_free(&label);
        kbuf_free(&s);
    }
    kbuf_free(&qparams);
    json_decref(normalized);
    *out = json_pack("{s:o}", "candidates", cands);
    return 0;
}

/* The agent edge: the context's kernel read once into kfacts. */
static int executor_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    (void)self;
    kfacts k;
    kfacts_read(json_object_get(ctx, "kernel"), &k);
    int rc = execute_plan(&k, json_object_get(ctx, "plan"), out, e);
    kfacts_free(&k);
    return rc;
}

static const agent_vtable EXECUTOR_VT = {executor_act, NULL, NULL};

agent *builtin_executor_new(void) { return builtin_agent(AGENT_EXECUTOR, &EXECUTOR_VT, NULL); }
