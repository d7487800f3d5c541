/* revloop (src/agents/revloop.c): the last pass of Inductor's looped kernels over its chunks in
 * reverse order, where it applies and where it must not; the planner's twin configuration and
 * the executor's candidate. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/revloop.h"
#include "artifact/artifact.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"
#include "util/fs.h"

#define SMALL "handmade_layer_norm_looped_small.py"
#define HEADER "    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n"
#define REVERSED                                                                                                               \
    "    for kopt_rev in tl.range(0, r0_numel, R0_BLOCK):\n"                                                                      \
    "        r0_offset = ((r0_numel - 1) // R0_BLOCK) * R0_BLOCK - kopt_rev\n"

/* The planner / executor context of an Inductor fixture's kernel 0 (caller frees both). */
static json_t *ctx_of(const char *name, artifact **a) {
    *a = tu_load_inductor(name);
    return opt_kernel_ctx(*a, 0, NULL);
}

static const char *jit_of(const json_t *k) { return json_string_value(json_object_get(k, "jit_source")); }

/* The last r0 loop header of src (the pass revloop turns), or NULL. */
static const char *last_header(const char *src) {
    const char *last = NULL;
    for (const char *p = strstr(src, HEADER); p; p = strstr(p + 1, HEADER)) last = p;
    return last;
}

static int applies(const char *src, char *why, size_t n) {
    why[0] = 0;
    return revloop_applies(src, why, n);
}

/* The looped bf16 layer norm: the second loop's header alone changes; the first pass is as it was. */
Test(revloop, reverses_only_the_last_pass_header) {
    artifact *a = NULL;
    json_t *k = ctx_of("17_layernorm_bf16_g0.py", &a);
    const char *src = jit_of(k);
    char why[200];
    cr_assert(applies(src, why, sizeof why), "%s", why);
    char *out = revloop_apply(src, why, sizeof why);
    cr_assert_not_null(out, "%s", why);
    /* the expected text: the original with its last header replaced */
    const char *last = last_header(src);
    cr_assert_not_null(last);
    kbuf want = KBUF_INIT;
    kbuf_append(&want, src, (size_t)(last - src));
    kbuf_puts(&want, REVERSED);
    kbuf_puts(&want, last + strlen(HEADER));
    cr_expect_str_eq(out, kbuf_str(&want));
    cr_expect(strstr(out, HEADER) != NULL, "the statistics pass keeps its order");
    kbuf_free(&want);
    free(out);
    json_decref(k);
    artifact_free(a);
}

/* Recorded kernels: the normalizing passes of softmax / log-softmax / layer, instance, L1, L2 norm
 * take it; a last pass that reduces (a logsumexp's sum, the split softmax's statistics), a single
 * loop and a pointwise kernel do not. */
Test(revloop, applies_to_recorded_normalizing_passes_only) {
    static const char *const yes[] = {"03_log_softmax_g0.py",
                                       "04_layernorm_g0.py",
                                       "suite_level1_11_layer_norm_2d_bf16_g0.py",
                                       "suite_level1_09_instance_norm_g0.py",
                                       "suite_level1_12_l1_normalize_g0.py",
                                       "suite_level1_13_l2_normalize_g0.py",
                                       "suite_level1_05_softmax_middle_dim_small_g0.py",
                                       "suite_level2_01_linear_gelu_layernorm_bf16_g0.py",
                                       SMALL};
    static const struct {
        const char *name, *why;
    } no[] = {
        {"handmade_softmax_def.py", "a statement after the last pass"},         /* the sum's tl.sum after its loop */
        {"22_logsumexp_middle_g0.py", "a statement after the last pass"},       /* log(sum) + max after it */
        {"handmade_layer_norm_rows_small.py", "1 loop(s) over r0 chunks"},      /* one pass only */
        {"01_gelu_residual_g0.py", "0 loop(s) over r0 chunks"},                 /* pointwise */
    };
    char why[200];
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
        artifact *a = NULL;
        json_t *k = ctx_of(yes[i], &a);
        cr_expect(applies(jit_of(k), why, sizeof why), "%s: %s", yes[i], why);
        json_decref(k);
        artifact_free(a);
    }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        artifact *a = NULL;
        json_t *k = ctx_of(no[i].name, &a);
        cr_expect_not(applies(jit_of(k), why, sizeof why), "%s", no[i].name);
        cr_expect(strstr(why, no[i].why) != NULL, "%s: %s", no[i].name, why);
        cr_expect_null(revloop_apply(jit_of(k), why, sizeof why));
        json_decref(k);
        artifact_free(a);
    }
    cr_expect_not(applies(NULL, why, sizeof why));
}

/* Each edit of the small layer norm's last pass that could make the order matter is refused
 * with its rule. */
Test(revloop, refuses_what_could_make_the_order_matter) {
    artifact *a = NULL;
    json_t *k = ctx_of(SMALL, &a);
    const char *src = jit_of(k);
    static const struct {
        const char *from, *to, *why;
    } edits[] = {
        /* a value carried from one chunk to the next */
        {"tmp11 = tmp10 - tmp3", "tmp11 = tmp10 - tmp24", "'tmp24' is read before the pass assigns it"},
        {"tmp23 = tmp20 + tmp22", "tmp23 = tmp20 + tmp22\n        tmp22 += tmp23", "augmented assignment"},
        /* effects beyond the stores */
        {"tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)", "tl.atomic_add(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)",
         "has effects beyond its stores"},
        {"tmp23 = tmp20 + tmp22", "tmp23 = tmp20 + tmp22\n        tl.debug_barrier()", "has effects beyond its stores"},
        /* every chunk storing to one place: the last one written would change */
        {"tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)", "tl.store(out_ptr2 + (x0), tmp24, xmask)",
         "does not depend on the chunk"},
        /* control flow and statements other than assignments and stores */
        {"        tmp12 = tl.full([1, 1], 1000.0, tl.float32)\n",
         "        if xnumel > 0:\n            tmp12 = tl.full([1, 1], 1000.0, tl.float32)\n", "a block inside the last pass"},
        {"tmp23 = tmp20 + tmp22", "tmp23 = tmp20 + tmp22\n        pass", "'pass' in the last pass"},
        {"tmp23 = tmp20 + tmp22", "tmp23 = tmp21 = tmp20 + tmp22", "a chained assignment"},
        {"tmp23 = tmp20 + tmp22", "tmp23[0] = tmp20 + tmp22", "to something other than names"},
        {"tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)", "tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask) + 1",
         "neither an assignment nor a store"},
        {"tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)", "tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)(0)",
         "neither an assignment nor one store"},
        /* a statement after the pass: it would see the last chunk's values */
        {"tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)",
         "tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)\n    tl.store(out_ptr2 + (x0), tmp24, xmask)",
         "a statement after the last pass"},
        /* a chunk reading what the next one writes (the element after its own) */
        {"tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)", "tl.store(in_ptr0 + (r0_1 + 1 + 1000*x0), tmp24, r0_mask)",
         "'in_ptr0' is loaded at other elements than the pass stores there"},
        /* the pass reads nothing the statistics pass read: nothing to find in L2 */
        {"tmp9 = tl.load(in_ptr0 + ", "tmp9 = tl.load(in_ptr3 + ", "loads nothing an earlier pass loaded"},
        /* the name the transform introduces is taken */
        {"tmp23 = tmp20 + tmp22", "tmp23 = tmp20 + tmp22\n        kopt_rev = tmp23", "already names kopt_rev"},
    };
    char why[200];
    cr_assert(applies(src, why, sizeof why), "%s", why);
    const char *last = last_header(src);
    /* in place, each element read and written at one index (Inductor's in_out_ptr): taken */
    char *inplace = tu_replace_once(src, "tl.store(out_ptr2 + (r0_1 + 1000*x0), tmp24, r0_mask)",
                                    "tl.store(in_ptr0 + (r0_1 + 1000*x0), tmp24, r0_mask)");
    cr_expect(applies(inplace, why, sizeof why), "in place: %s", why);
    free(inplace);
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        const char *at = strstr(src, edits[i].from);
        /* the edits are to the last pass: its first occurrence after the last header */
        if (at && at < last) at = strstr(last, edits[i].from);
        cr_assert_not_null(at, "edit %zu: '%s' not in the last pass", i, edits[i].from);
        kbuf ed = KBUF_INIT;
        kbuf_append(&ed, src, (size_t)(at - src));
        kbuf_puts(&ed, edits[i].to);
        kbuf_puts(&ed, at + strlen(edits[i].from));
        cr_expect_not(applies(kbuf_str(&ed), why, sizeof why), "edit %zu was taken:\n%s", i, kbuf_str(&ed));
        cr_expect(strstr(why, edits[i].why) != NULL, "edit %zu: '%s', not '%s'", i, why, edits[i].why);
        kbuf_free(&ed);
    }
    json_decref(k);
    artifact_free(a);
}

/* The executor's candidate for configuration `cfg` (a JSON object) over kernel k: its source,
 * and its label in *label; NULL when it gives none. Caller frees both. */
static char *exec_config(const json_t *k, json_t *cfg, char **label) {
    agent *x = builtin_executor_new();
    json_t *ctx = json_pack("{s:O, s:{s:s, s:{s:[o]}}}", "kernel", k, "plan", "direction", "launch_config", "params", "configs", cfg);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(x, ctx, &out, &e), 0, "%s", e.msg);
    const json_t *c0 = json_array_get(json_object_get(out, "candidates"), 0);
    char *src = c0 ? kstrdup(json_string_value(json_object_get(c0, "source"))) : NULL;
    *label = c0 ? kstrdup(json_string_value(json_object_get(c0, "label"))) : NULL;
    json_decref(out);
    json_decref(ctx);
    agent_free(x);
    return src;
}

/* The executor: a configuration with "reverse_last_pass" gives Inductor's kernel with the last
 * pass turned (gate 1 takes it, the label says so), the same configuration without it the
 * kernel as it is; both are golden files that tests/interp/test_revloop_interp.py runs and
 * compares bit for bit. Where revloop refuses, the reversed configuration gives no candidate. */
Test(revloop, executor_candidate_and_goldens) {
    artifact *a = NULL;
    json_t *k = ctx_of(SMALL, &a);
    char *label = NULL, *lf = NULL;
    char *rev = exec_config(k, json_pack("{s:i, s:i, s:i, s:i, s:b}", "XBLOCK", 2, "R0_BLOCK", 256, "num_warps", 4, "num_stages", 1,
                                         "reverse_last_pass", 1), &label);
    char *fwd = exec_config(k, json_pack("{s:i, s:i, s:i, s:i}", "XBLOCK", 2, "R0_BLOCK", 256, "num_warps", 4, "num_stages", 1), &lf);
    cr_assert_not_null(rev);
    cr_assert_not_null(fwd);
    cr_expect_str_eq(label, "XBLOCK=2 R0_BLOCK=256 num_warps=4 num_stages=1 last pass reversed");
    cr_expect_str_eq(lf, "XBLOCK=2 R0_BLOCK=256 num_warps=4 num_stages=1");
    cr_expect(strstr(rev, REVERSED) != NULL);
    cr_expect(strstr(fwd, "kopt_rev") == NULL);
    candidate *c = tu_parse_candidate(rev);
    cr_expect_str_eq(candidate_form_label(c), "P");
    candidate_free(c);
    json_t *out = json_pack("{s:[{s:s}]}", "candidates", "source", rev);
    tu_expect_gate1(out, &a->kernels[0]);
    json_decref(out);
    tu_golden("tests/fixtures/revloop/candidate_reversed.py", rev);
    tu_golden("tests/fixtures/revloop/candidate_forward.py", fwd);
    free(rev);
    free(fwd);
    free(label);
    free(lf);
    /* a plan's bare parameters (an LLM planner's {"XBLOCK": .., "reverse_last_pass": true}) ask
     * for it too */
    {
        agent *x = builtin_executor_new();
        json_t *ctx = json_pack("{s:O, s:{s:s, s:{s:i, s:i, s:i, s:b}}}", "kernel", k, "plan", "direction", "launch_config",
                                "params", "XBLOCK", 2, "R0_BLOCK", 256, "num_warps", 4, "reverse_last_pass", 1);
        json_t *o = NULL;
        kerr e = {0};
        cr_assert_eq(agent_act(x, ctx, &o, &e), 0, "%s", e.msg);
        const json_t *c0 = json_array_get(json_object_get(o, "candidates"), 0);
        cr_expect(strstr(json_string_value(json_object_get(c0, "source")), REVERSED) != NULL);
        cr_expect(json_is_true(json_object_get(json_object_get(c0, "config"), "reverse_last_pass")), "the history sees it");
        json_decref(o);
        json_decref(ctx);
        agent_free(x);
    }
    json_decref(k);
    artifact_free(a);
    /* a kernel whose last pass reduces: no candidate */
    k = ctx_of("handmade_softmax_def.py", &a);
    rev = exec_config(k, json_pack("{s:i, s:i, s:i, s:i, s:b}", "XBLOCK", 1, "R0_BLOCK", 2048, "num_warps", 8, "num_stages", 1,
                                   "reverse_last_pass", 1), &label);
    cr_expect_null(rev);
    json_decref(k);
    artifact_free(a);
}

/* Whether some configuration of the planner's answer `out` has "reverse_last_pass", and whether
 * one has it with block sizes, warps and stages equal to `like`'s. */
static int has_reversed(const json_t *out, const json_t *like, int *twin) {
    int any = 0;
    *twin = 0;
    size_t i, j;
    json_t *p, *c;
    json_array_foreach(json_object_get(out, "plans"), i, p) json_array_foreach(json_object_get(json_object_get(p, "params"), "configs"), j, c) {
        if (!json_is_true(json_object_get(c, "reverse_last_pass"))) continue;
        any = 1;
        json_t *c2 = json_deep_copy(c);
        json_object_del(c2, "reverse_last_pass");
        *twin |= json_equal(c2, like);
        json_decref(c2);
    }
    return any;
}

/* The planner: round 0 keeps its grid (nothing reversed without a tuned configuration to turn);
 * round 1's beam adds the reversed twin of the fastest configuration where revloop applies,
 * never where it does not; a reversed twin measured already is not proposed again. */
Test(revloop, planner_beam_adds_the_reversed_twin) {
    static const char *const fx[] = {SMALL, "handmade_softmax_def.py"};
    for (int f = 0; f < 2; f++) {
        artifact *a = NULL;
        json_t *k = ctx_of(fx[f], &a);
        agent *p = builtin_planner_new();
        json_t *ctx = json_pack("{s:O, s:[], s:i, s:{s:i}}", "kernel", k, "history", "round", 0, "budget", "candidates_left", 64);
        json_t *out = NULL;
        kerr e = {0};
        cr_assert_eq(agent_act(p, ctx, &out, &e), 0, "%s", e.msg);
        int twin = 0;
        cr_expect_not(has_reversed(out, NULL, &twin), "%s: round 0 reversed something", fx[f]);
        /* round 1: the first configuration measured fastest */
        const json_t *plan = NULL;
        size_t i;
        json_t *pl;
        json_array_foreach(json_object_get(out, "plans"), i, pl) if (json_object_get(json_object_get(pl, "params"), "configs")) plan = pl;
        cr_assert_not_null(plan, "%s: no launch configurations", fx[f]);
        const json_t *cfgs = json_object_get(json_object_get(plan, "params"), "configs");
        json_t *hist = json_array(), *c;
        json_array_foreach(cfgs, i, c)
            json_array_append_new(hist, json_pack("{s:O, s:f, s:s, s:i}", "config", c, "kernel_ms", 1.0 + 0.01 * (double)i, "outcome",
                                                  "screened-out", "round", 0));
        json_t *best = json_deep_copy(json_array_get(cfgs, 0));
        json_object_set(ctx, "history", hist);
        json_object_set_new(ctx, "round", json_integer(1));
        json_t *out1 = NULL;
        cr_assert_eq(agent_act(p, ctx, &out1, &e), 0, "%s", e.msg);
        int any = has_reversed(out1, best, &twin);
        if (f == 0) {
            cr_expect(any && twin, "%s: no reversed twin of the fastest in\n%s", fx[f], json_dumps(out1, 0));
            /* measured already: not again */
            json_t *tw = json_deep_copy(best);
            json_object_set_new(tw, "reverse_last_pass", json_true());
            json_array_append_new(hist, json_pack("{s:o, s:f, s:s, s:i}", "config", tw, "kernel_ms", 0.99, "outcome", "screened-out",
                                                  "round", 1));
            json_object_set_new(ctx, "round", json_integer(2));
            json_t *out2 = NULL;
            cr_assert_eq(agent_act(p, ctx, &out2, &e), 0, "%s", e.msg);
            has_reversed(out2, best, &twin);
            cr_expect_not(twin, "the measured twin was proposed again");
            json_decref(out2);
        } else {
            cr_expect_not(any, "%s: reversed where revloop refuses", fx[f]);
        }
        json_decref(best);
        json_decref(out1);
        json_decref(hist);
        json_decref(out);
        json_decref(ctx);
        agent_free(p);
        json_decref(k);
        artifact_free(a);
    }
}
