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
 *                    "config":{...}, "source":"..."}]}
 * The kernel and the plan are read once at the edge (executor_act) into kfacts and a kplan. */
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/revloop.h"
#include "util/buf.h"
#include "util/log.h"

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

/* The kernel's source with its last pass walked backward (revloop.h), made once for a plan's
 * configurations that ask for it; NULL (logged) where revloop refuses the kernel. */
typedef struct rev_src {
    int made;
    char *src;
} rev_src;

static const char *rev_src_get(rev_src *r, const kfacts *k) {
    if (!r->made) {
        char why[200] = "";
        r->made = 1;
        r->src = revloop_apply(k->jit_source, why, sizeof why);
        if (!r->src) log_info("executor: %s's last pass cannot run backward: %s", k->name, why);
    }
    return r->src;
}

/* One form-P candidate relaunching kernel k (its jit source `src`, 1-D or 2-D grid) with
 * configuration c, appended to cands; `qparams` the runtime parameters as a quoted list. A
 * configuration whose last pass is to run backward takes rv's source, and gives nothing where
 * revloop refuses the kernel. */
static void config_candidate(const kfacts *k, const kp_config *c, int grid2d, const char *qparams, rev_src *rv,
                             json_t *cands) {
    const char *name = k->name;
    long long xb = c->xblock, rb = c->r0_block, yb = c->yblock, nw = c->num_warps, ns = c->num_stages;
    const char *rev = c->reverse_last ? rev_src_get(rv, k) : NULL;
    if (c->reverse_last && !rev) return;
    kbuf label = KBUF_INIT, s = KBUF_INIT;
    kbuf_printf(&label, "XBLOCK=%lld", xb);
    if (rb) kbuf_printf(&label, " R0_BLOCK=%lld", rb);
    if (yb) kbuf_printf(&label, " YBLOCK=%lld", yb);
    kbuf_printf(&label, " num_warps=%lld num_stages=%lld", nw, ns);
    if (rev) kbuf_puts(&label, " last pass reversed");
    kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, launch_config: %s\n", name, kbuf_str(&label));
    builtin_plan_source(rev ? rev : k->jit_source, &s);
    kbuf_printf(&s, "\n\nKOPT_PLAN = {\n    \"params\": [%s],\n", qparams);
    if (grid2d)
        kbuf_printf(&s, "    \"launches\": [{\"kernel\": \"%s\", \"grid\": [\"cdiv(xnumel, %lld)\", \"cdiv(ynumel, %lld)\"],\n",
                    name, xb, yb);
    else
        kbuf_printf(&s, "    \"launches\": [{\"kernel\": \"%s\", \"grid\": [\"cdiv(xnumel, %lld)\"],\n", name, xb);
    kbuf_printf(&s, "                  \"args\": [%s],\n                  \"constexprs\": {\"XBLOCK\": %lld", qparams, xb);
    if (rb) kbuf_printf(&s, ", \"R0_BLOCK\": %lld", rb);
    if (yb) kbuf_printf(&s, ", \"YBLOCK\": %lld", yb);
    kbuf_printf(&s, "}, \"num_warps\": %lld, \"num_stages\": %lld}],\n}\n", nw, ns);
    json_array_append_new(cands, json_pack("{s:s, s:O, s:s}", "label", kbuf_str(&label), "config", c->raw, "source", kbuf_str(&s)));
    kbuf_free(&label);
    kbuf_free(&s);
}

/* A plan's bare block sizes (no "configs": an LLM planner's {"XBLOCK": .., "num_warps": ..})
 * as one configuration, Inductor-like defaults for what it leaves out; its JSON in *raw (caller
 * owns). */
static kp_config bare_config(const kfacts *k, const kp_config *b, json_t **raw) {
    int has_r = kf_strs_has(&k->constexprs, "R0_BLOCK");
    kp_config c = {.xblock = b->has_xblock ? b->xblock : has_r ? 1 : 1024,
                   .num_warps = b->has_num_warps ? b->num_warps : 8,
                   .num_stages = b->has_num_stages ? b->num_stages : 1};
    *raw = json_pack("{s:I, s:I, s:I}", "XBLOCK", (json_int_t)c.xblock, "num_warps", (json_int_t)c.num_warps, "num_stages",
                     (json_int_t)c.num_stages);
    if (has_r) {
        c.r0_block = b->has_r0_block ? b->r0_block : 2048;
        json_object_set_new(*raw, "R0_BLOCK", json_integer(c.r0_block));
    }
    if (b->has_yblock) {
        c.yblock = b->yblock;
        json_object_set_new(*raw, "YBLOCK", json_integer(c.yblock));
    }
    if (b->reverse_last) {   /* the last pass walked backward (revloop.h), as a configuration may ask */
        c.reverse_last = 1;
        json_object_set_new(*raw, "reverse_last_pass", json_true());
    }
    c.raw = *raw;
    return c;
}

/* The candidates for plan p over kernel k into *out (as agent_act). */
static int execute_plan(const kfacts *k, const kplan *p, json_t **out, kerr *e) {
    const char *name = k->name, *src = k->jit_source, *grid = k->grid_type;
    if (!name) return kerr_set(e, KOPT_E_INTERNAL, "executor: kernel name missing");
    if (p->dir == KP_REWRITE) return builtin_rewrite_act(k, p, out, e);   /* written anew */
    if (!src) return kerr_set(e, KOPT_E_CANDIDATE, "executor: %s has no Triton source of its own to re-launch", name);
    if (p->dir == KP_NONE) return kerr_set(e, KOPT_E_CANDIDATE, "the plan names no direction");
    /* Plans from another planner (an LLM's) are taken in what the built-in executor can do:
     * "one_pass" becomes a rewrite when a template applies; a plan whose params are block
     * sizes / warps (any direction) becomes a launch configuration. */
    if (p->dir == KP_ONE_PASS) {
        double eps = 0;
        kfamily tmpl = builtin_rewrite_match(k, &eps);
        if (tmpl != KF_NONE) {
            json_t *rw = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", kfamily_name(tmpl),
                                   "variants", builtin_rewrite_variants(tmpl, k));
            kplan rp;
            kplan_read(rw, &rp);
            int rc = builtin_rewrite_act(k, &rp, out, e);
            kplan_free(&rp);
            json_decref(rw);
            return rc;
        }
    }
    const kp_config *b = &p->bare;
    if (!p->has_configs && !b->has_xblock && !b->has_r0_block && !b->has_yblock && !b->has_num_warps)
        return kerr_set(e, KOPT_E_CANDIDATE, "the built-in executor cannot carry out direction '%s' without block sizes",
                        p->direction ? p->direction : "?");
    int grid2d = grid && !strcmp(grid, "Grid2D");
    if (grid && strcmp(grid, "Grid1D") && !grid2d)
        return kerr_set(e, KOPT_E_CANDIDATE, "grid type %s is not supported by the built-in executor", grid);
    kbuf qparams = KBUF_INIT;   /* the runtime parameters as the plan's quoted list */
    for (size_t r = 0; r < k->runtime.n; r++) kbuf_printf(&qparams, "%s\"%s\"", r ? ", " : "", k->runtime.v[r]);
    json_t *cands = json_array();
    rev_src rv = {0};
    if (p->has_configs) {
        for (size_t i = 0; i < p->ncfg; i++) config_candidate(k, &p->cfg[i], grid2d, kbuf_str(&qparams), &rv, cands);
    } else {
        json_t *raw = NULL;
        kp_config c = bare_config(k, b, &raw);
        config_candidate(k, &c, grid2d, kbuf_str(&qparams), &rv, cands);
        json_decref(raw);
    }
    free(rv.src);
    kbuf_free(&qparams);
    *out = json_pack("{s:o}", "candidates", cands);
    return 0;
}

/* The agent edge: the context's kernel and plan read once, into kfacts and a kplan. */
static int executor_act(agent *self, const json_t *ctx, json_t **out, kerr *e) {
    (void)self;
    kfacts k;
    kplan p;
    kfacts_read(json_object_get(ctx, "kernel"), &k);
    kplan_read(json_object_get(ctx, "plan"), &p);
    int rc = execute_plan(&k, &p, out, e);
    kplan_free(&p);
    kfacts_free(&k);
    return rc;
}

static const agent_vtable EXECUTOR_VT = {executor_act, NULL, NULL};

agent *builtin_executor_new(void) { return builtin_agent(AGENT_EXECUTOR, &EXECUTOR_VT, NULL); }
