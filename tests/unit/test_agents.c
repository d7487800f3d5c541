/* The built-in agents (src/agents/builtin_*.c) on real kernels parsed from captured fixtures. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"
#include "util/fs.h"

/* The planner/executor context of a fixture's kernel n, as optimize builds it. */
static json_t *kernel_n_from_fixture(const char *fixture, int n, artifact **out_a) {
    size_t len = 0;
    char *text = tu_read_fixture(fixture, &len);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, len, &a, &e), 0, "%s", e.msg);
    free(text);
    *out_a = a;
    return opt_kernel_ctx(a, n, NULL);
}

static json_t *kernel_from_fixture(const char *fixture, artifact **out_a) {
    return kernel_n_from_fixture(fixture, 0, out_a);
}

static json_t *act(agent *ag, json_t *ctx) {
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(ag, ctx, &out, &e), 0, "%s", e.msg);
    return out;
}

Test(agents, strip_heuristics_keeps_the_jit_function) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &a);
    const char *jit = json_string_value(json_object_get(k, "jit_source"));
    cr_assert(strstr(jit, "@triton.jit\ndef triton_red_fused__log_softmax") != NULL);
    cr_expect(strstr(jit, "@triton_heuristics") == NULL);
    cr_expect(strstr(jit, "size_hints") == NULL);
    json_decref(k);
    artifact_free(a);
}

/* The FX graph's dimension argument: an integer or a one-element list (amax's), nothing else. */
Test(agents, fx_int_arg_reads_an_integer_or_a_one_element_list) {
    long long d = -9;
    cr_assert(builtin_fx_int_arg("%c : Tensor = call_function[target=torch.ops.aten.cumsum.default](args = (%x, -1), kwargs = {})", &d));
    cr_expect_eq(d, -1);
    cr_assert(builtin_fx_int_arg("%m : Tensor = call_function[target=torch.ops.aten.amax.default](args = (%x, [1], True), kwargs = {})", &d));
    cr_expect_eq(d, 1);
    cr_expect_not(builtin_fx_int_arg("%m : Tensor = call_function[target=torch.ops.aten.amax.default](args = (%x, [1, 2]), kwargs = {})", &d));
    cr_expect_not(builtin_fx_int_arg("%v : Tensor = call_function[target=torch.ops.aten.view.default](args = (%x, [a]), kwargs = {})", &d));
}

Test(agents, planner_round0_rewrite_first_then_valid_configs) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &a);
    agent *p = builtin_planner_new();
    json_t *ctx = json_pack("{s:O, s:[], s:i, s:{s:i}}", "kernel", k, "history", "round", 0, "budget", "candidates_left", 64);
    json_t *out = act(p, ctx);
    const json_t *plans = json_object_get(out, "plans");
    cr_assert_eq(json_array_size(plans), 2, "%s", json_dumps(out, 0));
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(plans, 0), "direction")), "rewrite");
    cr_expect_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(plans, 0), "params"), "template")),
                     "row_log_softmax");
    const json_t *cfgs = json_object_get(json_object_get(json_array_get(plans, 1), "params"), "configs");
    cr_assert(json_array_size(cfgs) > 4 && json_array_size(cfgs) <= 16);
    size_t i;
    json_t *c;
    json_array_foreach(cfgs, i, c) {
        /* xnumel = 4096 is unmasked: XBLOCK must divide it; tiles within the register budget */
        long long xb = json_integer_value(json_object_get(c, "XBLOCK")), rb = json_integer_value(json_object_get(c, "R0_BLOCK"));
        cr_expect_eq(4096 % xb, 0);
        cr_expect(xb * rb <= 32768 && xb * rb >= 1024, "XBLOCK %lld R0_BLOCK %lld", xb, rb);
    }
    /* the first configuration keeps a whole row (16384) per program */
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(cfgs, 0), "R0_BLOCK")), 16384);
    json_decref(out);
    json_decref(ctx);
    agent_free(p);
    json_decref(k);
    artifact_free(a);
}

/* The XBLOCK values (bit i: 2^i) of round 0's launch configurations for fixture's kernel 0 with
 * left candidates, how many configurations there were, and the first 16's log2 XBLOCK in order. */
static unsigned round0_xblocks(const char *fixture, int left, size_t *n, int order[16]) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture(fixture, &a);
    agent *p = builtin_planner_new();
    json_t *ctx = json_pack("{s:O, s:[], s:i, s:{s:i}}", "kernel", k, "history", "round", 0, "budget", "candidates_left", left);
    json_t *out = act(p, ctx);
    const json_t *plans = json_object_get(out, "plans");
    const json_t *cfgs = json_object_get(json_object_get(json_array_get(plans, json_array_size(plans) - 1), "params"), "configs");
    unsigned seen = 0;
    size_t i;
    json_t *c;
    json_array_foreach(cfgs, i, c) {
        int b = __builtin_ctzll((unsigned long long)json_integer_value(json_object_get(c, "XBLOCK")));
        seen |= 1u << b;
        if (i < 16) order[i] = b;
    }
    *n = json_array_size(cfgs);
    json_decref(out);
    json_decref(ctx);
    agent_free(p);
    json_decref(k);
    artifact_free(a);
    return seen;
}

/* A short list (the planner's 16 configurations) still spans the tile shapes: every XBLOCK the
 * kernel takes, for a looped reduction (03: 1 to 32; 64 rows of 1024 exceed the register budget)
 * and a persistent one (05: 1 to 256), not only the first rows of the grid's order (ha08 on the
 * H100 wanted XBLOCK 16-64, and the list ordered by row length had ended at 8). */
Test(agents, planner_round0_short_grid_spans_every_xblock) {
    const char *fx[] = {"tests/fixtures/inductor/03_log_softmax_g0.py", "tests/fixtures/inductor/05_rmsnorm_g0.py"};
    const unsigned want[] = {0x3f, 0x1ff};
    for (int f = 0; f < 2; f++) {
        size_t n = 0;
        int order[16];
        unsigned seen = round0_xblocks(fx[f], 16, &n, order);
        cr_expect_eq(n, 16, "%s", fx[f]);
        cr_expect_eq(seen, want[f], "%s: XBLOCK powers seen %#x, want %#x", fx[f], seen, want[f]);
        /* whole passes: the XBLOCKs in turn, 1, 2, 4, ... and again (a configuration listed twice
         * for one XBLOCK once cost it its turn: 03's second pass had no XBLOCK 8). 03 only: each
         * of its XBLOCKs has more than three configurations, 05's XBLOCK 1 has one. */
        int nseen = __builtin_popcount(seen);
        for (int i = 0; f == 0 && i < 16 && i < (int)n; i++)
            cr_expect_eq(order[i], i % nseen, "%s: configuration %d has XBLOCK 2^%d", fx[f], i, order[i]);
    }
}

/* The prologue families reach the search: round 0's plans start with the family's rewrite
 * (level2/01's GELU + layer norm, level3/02's masked softmax), or give it second, beside
 * row_layer_norm (04's plain layer norm); the executor turns each plan into one candidate per
 * variant. */
Test(agents, planner_offers_the_prologue_families) {
    static const struct {
        const char *fixture, *first, *second;
    } cases[] = {
        {"tests/fixtures/inductor/suite_level2_01_linear_gelu_layernorm_bf16_g0.py", "row_layer_norm_prologue", NULL},
        {"tests/fixtures/inductor/suite_level3_02_transformer_block_bf16_softmax_g0.py", "row_softmax_prologue", NULL},
        {"tests/fixtures/inductor/04_layernorm_g0.py", "row_layer_norm", "row_layer_norm_prologue"}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        artifact *a = NULL;
        json_t *k = kernel_from_fixture(cases[c].fixture, &a);
        agent *p = builtin_planner_new(), *x = builtin_executor_new();
        json_t *ctx =
            json_pack("{s:O, s:[], s:i, s:{s:i}}", "kernel", k, "history", "round", 0, "budget", "candidates_left", 64);
        json_t *out = act(p, ctx);
        const json_t *plans = json_object_get(out, "plans");
        for (int j = 0; j < (cases[c].second ? 2 : 1); j++) {
            const json_t *pl = json_array_get(plans, (size_t)j);
            const char *want = j ? cases[c].second : cases[c].first;
            cr_assert_str_eq(json_string_value(json_object_get(pl, "direction")), "rewrite", "%s", cases[c].fixture);
            cr_expect_str_eq(json_string_value(json_object_get(json_object_get(pl, "params"), "template")), want);
            size_t nv = json_array_size(json_object_get(json_object_get(pl, "params"), "variants"));
            cr_expect(nv >= 3 && nv <= 5, "%s: %zu variants", want, nv);
            json_t *xctx = json_pack("{s:O, s:O}", "kernel", k, "plan", pl);
            json_t *cands = act(x, xctx);
            cr_expect_eq(json_array_size(json_object_get(cands, "candidates")), nv, "%s", want);
            json_decref(cands);
            json_decref(xctx);
        }
        json_decref(out);
        json_decref(ctx);
        agent_free(p);
        agent_free(x);
        json_decref(k);
        artifact_free(a);
    }
}

/* A persistent reduction holds its whole reduction (R0_BLOCK fixed inside, 64 for 05's RMS norm)
 * in each of its XBLOCK rows: every proposed tile, rows x 64, stays within 64 elements a thread
 * (1M rows of 768 on the H100 were offered XBLOCK=256 with 2 warps, 4096 a thread, whose compile
 * did not end within the screen's 77 s). */
Test(agents, planner_counts_a_persistent_kernels_whole_row_in_its_tile) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/05_rmsnorm_g0.py", &a);
    cr_assert(json_is_true(json_object_get(k, "persistent")), "%s", json_dumps(k, 0));
    agent *p = builtin_planner_new();
    json_t *ctx = json_pack("{s:O, s:[], s:i, s:{s:i}}", "kernel", k, "history", "round", 0, "budget", "candidates_left", 64);
    json_t *out = act(p, ctx);
    const json_t *plans = json_object_get(out, "plans"), *cfgs = NULL;
    size_t i;
    json_t *pl, *c;
    json_array_foreach(plans, i, pl) if (!strcmp(json_string_value(json_object_get(pl, "direction")), "launch_config"))
        cfgs = json_object_get(json_object_get(pl, "params"), "configs");
    cr_assert(json_array_size(cfgs) > 0, "%s", json_dumps(out, 0));
    int small = 0;
    json_array_foreach(cfgs, i, c) {
        long long xb = json_integer_value(json_object_get(c, "XBLOCK")), nw = json_integer_value(json_object_get(c, "num_warps"));
        cr_expect(xb * 64 <= 64 * 32 * nw && xb * 64 >= 32 * nw, "XBLOCK %lld x 64 over %lld warps", xb, nw);
        small += xb < 64;
    }
    cr_expect(small > 0, "tiles of fewer rows than 32 x num_warps are offered: %s", json_dumps(cfgs, 0));
    json_decref(out);
    json_decref(ctx);
    agent_free(p);
    json_decref(k);
    artifact_free(a);
}

Test(agents, planner_never_repeats_and_stops_when_converged) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/01_gelu_residual_g0.py", &a);
    agent *p = builtin_planner_new();
    json_t *ctx = json_pack("{s:O, s:[], s:i, s:{s:i}}", "kernel", k, "history", "round", 0, "budget", "candidates_left", 64);
    json_t *out = act(p, ctx);
    const json_t *cfgs = json_object_get(json_object_get(json_array_get(json_object_get(out, "plans"), 0), "params"), "configs");
    cr_assert(json_array_size(cfgs) > 0);
    /* round 1 with every round-0 configuration measured: only new ones (a beam) */
    json_t *hist = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(cfgs, i, c)
        json_array_append_new(hist, json_pack("{s:O, s:f, s:s, s:i}", "config", c, "kernel_ms", 1.0 + 0.01 * (double)i, "outcome",
                                              "screened-out", "round", 0));
    json_object_set(ctx, "history", hist);
    json_object_set_new(ctx, "round", json_integer(1));
    json_t *out1 = act(p, ctx);
    const json_t *cfgs1 = json_object_get(json_object_get(json_array_get(json_object_get(out1, "plans"), 0), "params"), "configs");
    json_t *c1;
    size_t j;
    json_array_foreach(cfgs1, j, c1) json_array_foreach(cfgs, i, c) cr_expect_not(json_equal(c1, c), "repeated a configuration");
    /* round 2 after a round 1 that did not improve: the planner stops */
    json_array_foreach(cfgs1, j, c1)
        json_array_append_new(hist, json_pack("{s:O, s:f, s:s, s:i}", "config", c1, "kernel_ms", 5.0, "outcome", "screened-out",
                                              "round", 1));
    json_object_set_new(ctx, "round", json_integer(2));
    json_t *out2 = act(p, ctx);
    cr_expect_eq(json_array_size(json_object_get(out2, "plans")), 0);
    cr_expect(strstr(json_string_value(json_object_get(out2, "why")), "converged") != NULL);
    json_decref(out);
    json_decref(out1);
    json_decref(out2);
    json_decref(hist);
    json_decref(ctx);
    agent_free(p);
    json_decref(k);
    artifact_free(a);
}

Test(agents, executor_writes_launcher_candidates_that_keep_the_interface) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/04_layernorm_g0.py", &a);
    agent *x = builtin_executor_new();
    json_t *plan = json_pack("{s:s, s:{s:[{s:i, s:i, s:i, s:i}]}}", "direction", "launch_config", "params", "configs", "XBLOCK", 1,
                             "R0_BLOCK", 8192, "num_warps", 16, "num_stages", 1);
    json_t *ctx = json_pack("{s:O, s:o}", "kernel", k, "plan", plan);
    json_t *out = act(x, ctx);
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source"));
    cr_assert_not_null(src);
    cr_expect(strstr(src, "triton_heuristics.reduction(") == NULL);
    cr_expect(strstr(src, "set_driver_to_gpu") == NULL, "form P has no module-level call");
    /* the launcher kopt writes from the plan: the kernel's interface, the grid and the config */
    candidate *c = tu_parse_candidate(src);
    cr_expect_str_eq(candidate_form_label(c), "P");
    cr_expect(
        strstr(c->text,
               "def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, stream=None, _kopt_plan_go=None):") !=
            NULL,
        "%s", c->text);
    cr_expect(strstr(c->text,
                     "[(((xnumel + 1 - 1) // 1), )](in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, "
                     "XBLOCK=1, R0_BLOCK=8192, num_warps=16, num_stages=1)") != NULL,
              "%s", c->text);
    candidate_free(c);
    json_decref(out);
    /* the one-pass rewrite reads eps from the kernel */
    json_t *rw = json_pack("{s:s, s:{s:s, s:[i]}}", "direction", "rewrite", "params", "template", "row_layer_norm", "num_warps", 16);
    json_object_set_new(ctx, "plan", rw);
    out = act(x, ctx);
    src = json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source"));
    cr_expect(strstr(src, "tl.rsqrt(var + 1.0000000000000001e-05)") != NULL, "%s", src);
    cr_expect(strstr(src, "tl.store(out_ptr2 + base + cols") != NULL);
    json_decref(out);
    json_decref(ctx);
    agent_free(x);
    json_decref(k);
    artifact_free(a);
}

Test(agents, rewrite_matches_only_its_patterns) {
    artifact *a = NULL;
    double eps = 0;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &a);
    cr_expect_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "row_log_softmax");
    json_decref(k);
    artifact_free(a);
    k = kernel_from_fixture("tests/fixtures/inductor/01_gelu_residual_g0.py", &a);
    cr_expect_eq(builtin_rewrite_match(tu_kf(k), &eps), KF_NONE);
    json_decref(k);
    artifact_free(a);
    /* a row length too large for one block */
    k = kernel_from_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &a);
    json_object_set_new(json_object_get(k, "numels"), "r0_numel", json_integer(65536));
    cr_expect_eq(builtin_rewrite_match(tu_kf(k), &eps), KF_NONE);
    json_decref(k);
    artifact_free(a);
}

Test(agents, cumsum_rewrite_matches_plain_row_scans_and_writes_chunked_candidates) {
    artifact *a = NULL;
    double eps = 0;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/11_cumsum_g0.py", &a);
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "row_cumsum");
    /* rows of 32768: all four variants, chunks powers of two, the largest 8192 */
    json_t *vars = builtin_rewrite_variants(kfamily_parse("row_cumsum"), tu_kf(k));
    cr_assert_eq(json_array_size(vars), 4, "%s", json_dumps(vars, 0));
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(vars, 1), "chunk")), 4096);
    agent *x = builtin_executor_new();
    json_t *ctx = json_pack("{s:O, s:{s:s, s:{s:s, s:o}}}", "kernel", k, "plan", "direction", "rewrite", "params", "template",
                            "row_cumsum", "variants", vars);
    json_t *out = act(x, ctx);
    const json_t *cands = json_object_get(out, "candidates");
    cr_assert_eq(json_array_size(cands), 4);
    const char *src = json_string_value(json_object_get(json_array_get(cands, 1), "source"));
    cr_expect(strstr(src, "\"params\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\", \"r0_numel\"]") != NULL, "%s", src);
    cr_expect(strstr(src, "\"constexprs\": {\"CHUNK\": 4096}, \"num_warps\": 8}") != NULL, "%s", src);
    cr_expect(strstr(src, "tl.cumsum(x, 0) + carry") != NULL);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(json_array_get(cands, 1), "config"), "chunk")), 4096);
    json_decref(out);
    /* a variant that is not a power of two is dropped; none left is an error */
    json_object_set_new(ctx, "plan", json_pack("{s:s, s:{s:s, s:[{s:i, s:i}]}}", "direction", "rewrite", "params", "template",
                                               "row_cumsum", "variants", "chunk", 3000, "num_warps", 8));
    json_t *none = NULL;
    kerr e = {0};
    cr_expect_neq(agent_act(x, ctx, &none, &e), 0);
    cr_expect(strstr(e.msg, "no usable variant") != NULL, "%s", e.msg);
    json_decref(ctx);
    /* short rows give fewer, smaller chunks */
    json_object_set_new(json_object_get(k, "numels"), "r0_numel", json_integer(3000));
    vars = builtin_rewrite_variants(kfamily_parse("row_cumsum"), tu_kf(k));
    cr_expect_eq(json_array_size(vars), 2, "%s", json_dumps(vars, 0));
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(vars, 1), "chunk")), 4096);
    json_decref(vars);
    /* a scan of an expression (another ATen op fused) is not a plain cumsum */
    json_object_set_new(json_object_get(k, "numels"), "r0_numel", json_integer(32768));
    json_array_append_new(json_object_get(k, "aten_ops"), json_string("aten.mul"));
    cr_expect_eq(builtin_rewrite_match(tu_kf(k), &eps), KF_NONE);
    json_decref(k);
    artifact_free(a);
    /* an argmax row reduction: no template (measured slower than Inductor's) */
    k = kernel_from_fixture("tests/fixtures/inductor/10_argmax_inner_g0.py", &a);
    cr_expect_eq(builtin_rewrite_match(tu_kf(k), &eps), KF_NONE);
    json_decref(k);
    artifact_free(a);
    agent_free(x);
}

Test(agents, analyst_classifies_and_ranks_by_gain) {
    json_t *rows = json_pack("[{s:s,s:s,s:s,s:f,s:f,s:f,s:i},{s:s,s:s,s:s,s:f,s:f,s:f,s:i},"
                             "{s:s,s:s,s:s,s:f,s:f,s:f,s:i},{s:s,s:s,s:f,s:f,s:f,s:i},{s:s,s:s,s:s,s:f,s:f,s:f,s:i}]",
                             "name", "k_far", "kind", "triton", "kernel_kind", "reduction", "time_ms", 0.1, "share", 0.2,
                             "frac_of_ceiling", 0.5, "index", 0,
                             "name", "k_near", "kind", "triton", "kernel_kind", "pointwise", "time_ms", 0.2, "share", 0.4,
                             "frac_of_ceiling", 0.97, "index", 1,
                             "name", "k_tiny", "kind", "triton", "kernel_kind", "persistent_reduction", "time_ms", 0.003,
                             "share", 0.01, "frac_of_ceiling", 0.1, "index", 2,
                             "name", "extern_kernels.mm", "kind", "vendor", "time_ms", 0.5, "share", 0.3, "frac_of_ceiling", 0.6,
                             "index", 3,
                             "name", "k_mid", "kind", "triton", "kernel_kind", "reduction", "time_ms", 0.3, "share", 0.1,
                             "frac_of_ceiling", 0.85, "index", 4);
    agent *an = builtin_analyst_new();
    json_t *ctx = json_pack("{s:o, s:f}", "launches", rows, "model_ms", 1.1);
    json_t *out = act(an, ctx);
    const json_t *ranked = json_object_get(out, "ranked");
    cr_assert_eq(json_array_size(ranked), 2, "%s", json_dumps(out, 0));
    /* memory-bound first, then near-ceiling kernels under 95%; vendor, tiny and 97% ones never */
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ranked, 0), "kernel")), "k_far");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ranked, 1), "kernel")), "k_mid");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(out, "all"), i, r) {
        const char *n = json_string_value(json_object_get(r, "kernel")), *cls = json_string_value(json_object_get(r, "class"));
        if (!strcmp(n, "extern_kernels.mm")) cr_expect_eq(agent_class_parse(cls), AGENT_CLASS_VENDOR, "%s: %s", n, cls);
        if (!strcmp(n, "k_tiny")) cr_expect_eq(agent_class_parse(cls), AGENT_CLASS_LATENCY, "%s: %s", n, cls);
        if (!strcmp(n, "k_near")) cr_expect_eq(agent_class_parse(cls), AGENT_CLASS_NEAR_CEILING, "%s: %s", n, cls);
    }
    cr_expect_float_eq(json_number_value(json_object_get(json_array_get(ranked, 0), "gain_ms")), 0.05, 1e-9);
    /* the class names read back to their enum; anything else is unknown */
    for (int c = AGENT_CLASS_MEMORY; c < AGENT_CLASS_UNKNOWN; c++)
        cr_expect_eq(agent_class_parse(agent_class_name((agent_class)c)), c, "%s", agent_class_name((agent_class)c));
    cr_expect_str_eq(agent_class_name(AGENT_CLASS_MEMORY), "memory-bound");
    cr_expect_eq(agent_class_parse("Vendor"), AGENT_CLASS_UNKNOWN);
    cr_expect_eq(agent_class_parse(NULL), AGENT_CLASS_UNKNOWN);
    cr_expect_str_eq(agent_class_name((agent_class)42), "unknown");
    json_decref(out);
    json_decref(ctx);
    agent_free(an);
}

/* A kernel the floor check lists below its own floor (its counted bytes more than it moves: session
 * 59's heldout10/hc06, whose cumsum-then-subtract kernel counted 3.2 GB and ran at 1.30x "of its
 * floor") is a target at the model's gap to its floor, not "near its ceiling"; without a model
 * floor its gain is 0 (not ranked); an unnamed kernel at the same fraction stays near its ceiling. */
Test(agents, analyst_takes_a_wrong_count_to_the_model_gap) {
    json_t *rows = json_pack("[{s:s,s:s,s:f,s:f,s:f,s:i},{s:s,s:s,s:f,s:f,s:f,s:i}]", "name", "k_wrong", "kind", "triton",
                             "time_ms", 0.75, "share", 0.75, "frac_of_ceiling", 1.2986, "index", 0, "name", "k_fast", "kind",
                             "triton", "time_ms", 0.25, "share", 0.25, "frac_of_ceiling", 1.2986, "index", 1);
    agent *an = builtin_analyst_new();
    for (int with_floor = 0; with_floor < 2; with_floor++) {
        json_t *ctx = json_pack("{s:O, s:f, s:[s]}", "launches", rows, "model_ms", 1.0, "count_wrong", "k_wrong");
        if (with_floor) json_object_set_new(ctx, "model_floor_ms", json_real(0.8));
        json_t *out = act(an, ctx);
        const json_t *ranked = json_object_get(out, "ranked"), *all = json_object_get(out, "all");
        const json_t *w = json_array_get(all, 0), *f = json_array_get(all, 1);
        cr_expect_str_eq(json_string_value(json_object_get(w, "class")), "memory-bound", "%s", json_dumps(out, 0));
        cr_expect_str_eq(json_string_value(json_object_get(f, "class")), "near-ceiling", "%s", json_dumps(out, 0));
        cr_expect_float_eq(json_number_value(json_object_get(w, "gain_ms")), with_floor ? 0.75 * 0.2 : 0.0, 1e-9);
        cr_expect(strstr(json_string_value(json_object_get(w, "why")), "counted bytes") != NULL);
        cr_assert_eq(json_array_size(ranked), (size_t)with_floor, "%s", json_dumps(out, 0));
        if (with_floor) cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ranked, 0), "kernel")), "k_wrong");
        json_decref(out);
        json_decref(ctx);
    }
    json_decref(rows);
    agent_free(an);
}

/* A kernel launched several times is one entry: its times and gains added, ranked by the sum
 * (here past a kernel that beats each of its launches alone), its first launch's row index. */
Test(agents, analyst_adds_up_repeated_launches) {
    json_t *rows = json_pack("[{s:s, s:s, s:f, s:f, s:f, s:i}, {s:s, s:s, s:f, s:f, s:f, s:i}, {s:s, s:s, s:f, s:f, s:f, s:i}]",
                             "name", "k_rep", "kind", "triton", "time_ms", 0.1, "share", 0.1, "frac_of_ceiling", 0.5, "index", 0,
                             "name", "k_one", "kind", "triton", "time_ms", 0.15, "share", 0.15, "frac_of_ceiling", 0.5, "index",
                             1, "name", "k_rep", "kind", "triton", "time_ms", 0.1, "share", 0.1, "frac_of_ceiling", 0.5, "index",
                             2);
    agent *an = builtin_analyst_new();
    json_t *ctx = json_pack("{s:o, s:f}", "launches", rows, "model_ms", 1.0);
    json_t *out = act(an, ctx);
    const json_t *ranked = json_object_get(out, "ranked");
    cr_assert_eq(json_array_size(json_object_get(out, "all")), 2, "%s", json_dumps(out, 0));
    cr_assert_eq(json_array_size(ranked), 2);
    const json_t *first = json_array_get(ranked, 0);
    cr_expect_str_eq(json_string_value(json_object_get(first, "kernel")), "k_rep");
    cr_expect_float_eq(json_number_value(json_object_get(first, "time_ms")), 0.2, 1e-12);
    cr_expect_float_eq(json_number_value(json_object_get(first, "gain_ms")), 0.1, 1e-12);
    cr_expect_eq(json_integer_value(json_object_get(first, "index")), 0);
    cr_expect_str_eq(json_string_value(json_object_get(first, "class")), "memory-bound");
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(ranked, 1), "kernel")), "k_one");
    json_decref(out);
    json_decref(ctx);
    agent_free(an);
}

Test(agents, executor_takes_plans_in_an_llm_planners_shape) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &a);
    agent *x = builtin_executor_new();
    /* a launch_config with its knobs directly in params */
    json_t *ctx = json_pack("{s:O, s:{s:s, s:{s:i, s:i}}}", "kernel", k, "plan", "direction", "launch_config", "params",
                            "R0_BLOCK", 4096, "num_warps", 8);
    json_t *out = act(x, ctx);
    const json_t *cands = json_object_get(out, "candidates");
    cr_assert_eq(json_array_size(cands), 1);
    cr_expect(strstr(json_string_value(json_object_get(json_array_get(cands, 0), "source")),
                     "\"constexprs\": {\"XBLOCK\": 1, \"R0_BLOCK\": 4096}, \"num_warps\": 8, \"num_stages\": 1}") != NULL);
    json_decref(out);
    /* one_pass becomes the matching rewrite */
    json_object_set_new(ctx, "plan", json_pack("{s:s, s:{}}", "direction", "one_pass", "params"));
    out = act(x, ctx);
    cr_expect_eq(json_array_size(json_object_get(out, "candidates")), 3);
    cr_expect(strstr(json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "label")),
                     "row_log_softmax") != NULL);
    json_decref(out);
    /* a direction without anything the built-in executor can carry out: a clear error */
    json_object_set_new(ctx, "plan", json_pack("{s:s, s:{s:s}}", "direction", "vectorize", "params", "idea", "wider loads"));
    json_t *none = NULL;
    kerr e = {0};
    cr_expect_neq(agent_act(x, ctx, &none, &e), 0);
    cr_expect(strstr(e.msg, "vectorize") != NULL);
    json_decref(ctx);
    agent_free(x);
    json_decref(k);
    artifact_free(a);
}

Test(agents, budget_holds_back_the_final_measurement) {
    optimize_opts o = {.budget_s = 120, .max_candidates = 64};
    octx c = {.o = &o, .t0 = opt_now() - 100};
    cr_expect_not(opt_over_budget(&c));   /* 100 s of 120 used */
    c.check_s = 25;                       /* a final measurement of 25 s no longer fits */
    cr_expect(opt_over_budget(&c));
    c.check_s = 0;
    c.used = 64;                          /* the candidate limit */
    cr_expect(opt_over_budget(&c));
}

Test(agents, split_more_reruns_inductors_body_over_sub_ranges) {
    artifact *a = NULL;
    double eps = 0;
    /* the wide softmax's two split passes (max, then sum of exp): 640 reductions of 52429 */
    static const int idx[] = {0, 2};
    static const char *const op[] = {"max over 4 sub-ranges", "sum over 4 sub-ranges"};
    for (int t = 0; t < 2; t++) {
        json_t *k = kernel_n_from_fixture("tests/fixtures/inductor/02_softmax_wide_g0.py", idx[t], &a);
        /* the split max's chunks of 52429 start off 16-byte boundaries: aligned_chunks first,
         * split_more offered beside it; the split sum reads the row max too: split_more alone */
        kfamily first = builtin_rewrite_match(tu_kf(k), &eps);
        cr_assert_str_eq(kfamily_name(first), t == 0 ? "aligned_chunks" : "split_more");
        cr_assert_str_eq(kfamily_name(t == 0 ? builtin_rewrite_second(tu_kf(k), first) : first), "split_more");
        json_t *vars = builtin_rewrite_variants(kfamily_parse("split_more"), tu_kf(k));
        cr_assert(json_array_size(vars) >= 2, "%s", json_dumps(vars, 0));
        size_t i;
        json_t *v;
        json_array_foreach(vars, i, v) {   /* sub-ranges tile r0 exactly, no empty one */
            long long n = json_integer_value(json_object_get(v, "nsub")), sub = json_integer_value(json_object_get(v, "sub"));
            long long rb = json_integer_value(json_object_get(v, "r0_block"));
            cr_expect(sub % rb == 0 && n * sub >= 52429 && (n - 1) * sub < 52429, "%s", json_dumps(v, 0));
        }
        json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "split_more", "variants", vars);
        json_t *out = NULL;
        kerr e = {0};
        cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
        const json_t *c0 = json_array_get(json_object_get(out, "candidates"), 0);
        const char *src = json_string_value(json_object_get(c0, "source"));
        cr_expect(strstr(json_string_value(json_object_get(c0, "label")), op[t]) != NULL, "%s",
                  json_string_value(json_object_get(c0, "label")));
        cr_expect(strstr(src, "for r0_offset in tl.range(tl.program_id(1) * SUB, tl.program_id(1) * SUB + SUB, R0_BLOCK):") != NULL);
        cr_expect(strstr(src, "tl.store(out_ptr0 + ((x3) * NSUB + tl.program_id(1)), ") != NULL, "%s", src);
        cr_expect(strstr(src, "R0_BLOCK : tl.constexpr, SUB : tl.constexpr, NSUB : tl.constexpr):") != NULL);
        cr_expect(strstr(src, t == 0 ? "triton_helpers.max2(v, 1)" : "tl.sum(v, 1)") != NULL);
        cr_expect(strstr(src, "tl.range(0, r0_numel, R0_BLOCK)") == NULL);   /* the original loop is gone */
        /* the launcher kopt writes from the plan keeps the launch interface, a scratch of the
         * output's dtype per output, both launches */
        candidate *c = tu_parse_candidate(src);
        cr_expect_str_eq(candidate_form_label(c), "P");
        cr_expect(strstr(c->text, "    scratch0 = _kopt_plan_torch.full(((xnumel * 4), ), float('nan'), "
                                  "dtype=_kopt_plan_torch.float32, device=in_ptr0.device)\n") != NULL, "%s", c->text);
        cr_expect(strstr(c->text, t == 0 ? "def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None, _kopt_plan_go=None):"
                                         : "def launch(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, stream=None, _kopt_plan_go=None):") != NULL);
        cr_expect(strstr(c->text, "    _combine_partials[(((xnumel + 64 - 1) // 64), )](scratch0, out_ptr0, xnumel, "
                                  "NSUB=4, NP2=4, XB=64, num_warps=2)\n") != NULL, "%s", c->text);
        candidate_free(c);
        json_decref(out);
        /* a variant whose sub-ranges do not tile r0 is dropped */
        json_decref(plan);
        plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i, s:i}]}}", "direction", "rewrite", "params", "template", "split_more",
                         "variants", "nsub", 2, "sub", 4096, "r0_block", 4096, "num_warps", 8);
        cr_expect_neq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0);
        json_decref(plan);
        /* many outputs (a grid already wide) or a short reduction: no split */
        json_object_set_new(json_object_get(k, "numels"), "xnumel", json_integer(65536));
        cr_expect_eq(builtin_rewrite_match(tu_kf(k), &eps), KF_NONE);
        json_decref(k);
        artifact_free(a);
    }
    /* group norm's statistics: three Welford accumulators, three outputs, combined with welford */
    {
        json_t *k = kernel_from_fixture("tests/fixtures/inductor/06_groupnorm_g0.py", &a);
        cr_assert_str_eq(kfamily_name(builtin_rewrite_second(tu_kf(k), builtin_rewrite_match(tu_kf(k), &eps))), "split_more");
        json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "split_more", "variants",
                                 builtin_rewrite_variants(kfamily_parse("split_more"), tu_kf(k)));
        json_t *out = NULL;
        kerr e = {0};
        cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
        const char *src = json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source"));
        for (int j = 0; j < 3; j++) {
            char want[128];
            snprintf(want, sizeof want, "tl.store(out_ptr%d + ((x3) * NSUB + tl.program_id(1)), ", j);
            cr_expect(strstr(src, want) != NULL, "%s", want);
            snprintf(want, sizeof want, "{\"name\": \"scratch%d\", \"shape\": [\"xnumel * ", j);
            cr_expect(strstr(src, want) != NULL, "%s", want);
        }
        cr_expect(strstr(src, "mean, m2, weight = triton_helpers.welford(v0, v1, v2, 1)") != NULL, "%s", src);
        cr_expect(strstr(src, "\"args\": [\"in_ptr0\", \"scratch0\", \"scratch1\", \"scratch2\", \"xnumel\", \"r0_numel\"]") != NULL,
                  "%s", src);
        candidate *c = tu_parse_candidate(src);   /* the plan fits the kernels */
        candidate_free(c);
        json_decref(out);
        json_decref(plan);
        /* a Welford kernel that also stores something else is not the known shape */
        json_t *k2 = json_deep_copy(k);
        char *mod = kasprintf("%s    tl.store(out_ptr0 + (x3), tmp13, xmask)\n", json_string_value(json_object_get(k2, "jit_source")));
        json_object_set_new(k2, "jit_source", json_string(mod));
        free(mod);
        /* (aligned_chunks keeps Inductor's stores as they are, so it still applies; split_more does not) */
        kfamily first2 = builtin_rewrite_match(tu_kf(k2), &eps);
        cr_expect_eq(first2, KF_ALIGNED_CHUNKS);
        cr_expect_eq(builtin_rewrite_second(tu_kf(k2), first2), KF_NONE);
        json_decref(k2);
        json_decref(k);
        artifact_free(a);
    }
    /* not a plain reduction stored as is: an index reduction (argmax), a persistent kernel, a
     * pointwise one, a scan */
    static const char *const no[] = {"tests/fixtures/inductor/10_argmax_inner_g0.py", "tests/fixtures/inductor/05_rmsnorm_g0.py",
                                     "tests/fixtures/inductor/01_gelu_residual_g0.py", "tests/fixtures/inductor/07_sum_inner_g0.py"};
    for (size_t f = 0; f < 4; f++) {
        json_t *k = kernel_from_fixture(no[f], &a);
        const char *m = tu_family(builtin_rewrite_match(tu_kf(k), &eps));
        cr_expect(m == NULL || strcmp(m, "split_more"), "%s matched split_more", no[f]);
        json_decref(k);
        artifact_free(a);
    }
}

/* A planner's answer read at the edge into typed plans: entries that are not objects are
 * skipped, a plan without a direction is "?", the plan object is kept by reference for the
 * executor, the answer's "why" is kept. */
Test(agents, planner_answer_read_into_typed_plans) {
    json_t *ans = json_loads("{\"plans\":[{\"direction\":\"rewrite\",\"params\":{\"template\":\"max_pool\"}},"
                             "\"junk\",{\"params\":{}},7],\"why\":\"w\"}",
                             0, NULL);
    cr_assert_not_null(ans);
    opt_plans p;
    opt_plans_read(ans, &p);
    json_decref(ans); /* the plans own what they hold */
    cr_assert_eq(p.n, 2);
    cr_assert_str_eq(p.v[0].direction, "rewrite");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(p.v[0].raw, "params"), "template")), "max_pool");
    cr_assert_str_eq(p.v[1].direction, "?");
    cr_assert_str_eq(p.why, "w");
    opt_plans_free(&p);
    cr_assert(p.n == 0 && p.why == NULL);
    opt_plans_free(&p); /* twice is harmless */
    json_t *none = json_pack("{s:[]}", "plans");
    opt_plans_read(none, &p);
    cr_assert(p.n == 0 && p.why == NULL);
    opt_plans_free(&p);
    json_decref(none);
}

/* An executor's answer read at the edge into typed candidates: entries without a source string
 * are skipped, the label is optional, the config is kept by reference, order is kept. */
Test(agents, executor_answer_read_into_typed_candidates) {
    json_t *ans = json_loads("{\"candidates\":[{\"label\":\"a\",\"source\":\"S1\",\"config\":{\"num_warps\":4}},"
                             "{\"label\":\"no source\"},{\"source\":7},{\"source\":\"S2\"},\"junk\"],\"extra\":1}",
                             0, NULL);
    cr_assert_not_null(ans);
    opt_cands c;
    opt_cands_read(ans, &c);
    json_decref(ans); /* the candidates own what they hold */
    cr_assert_eq(c.n, 2);
    cr_assert_str_eq(c.v[0].label, "a");
    cr_assert_str_eq(c.v[0].source, "S1");
    cr_assert_eq(json_integer_value(json_object_get(c.v[0].config, "num_warps")), 4);
    cr_assert_null(c.v[1].label);
    cr_assert_str_eq(c.v[1].source, "S2");
    cr_assert_null(c.v[1].config);
    opt_cands_free(&c);
    cr_assert_eq(c.n, 0);
    opt_cands_free(&c); /* twice is harmless */
    json_t *none = json_pack("{s:s}", "error", "no kernel");
    opt_cands_read(none, &c);
    cr_assert_eq(c.n, 0);
    opt_cands_free(&c);
    json_decref(none);
}

/* k with `from` replaced by `to` in its jit_source (the first occurrence; all with every). */
static json_t *with_source(const json_t *k, const char *from, const char *to, int every) {
    json_t *k2 = json_deep_copy(k);
    kbuf b = KBUF_INIT;
    kbuf_puts(&b, json_string_value(json_object_get(k2, "jit_source")));
    while (kbuf_replace_first(&b, from, to) == 0 && every) {}
    json_object_set_new(k2, "jit_source", json_string(kbuf_str(&b)));
    kbuf_free(&b);
    return k2;
}

/* The first candidate's source for k (aligned_chunks, one variant: R0_BLOCK rb, nw warps), or
 * NULL when the executor refuses it. Caller frees. */
static char *aligned_src(const json_t *k, int rb, int nw) {
    json_t *plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i}]}}", "direction", "rewrite", "params", "template", "aligned_chunks",
                             "variants", "r0_block", rb, "num_warps", nw);
    json_t *out = NULL;
    kerr e = {0};
    char *src = NULL;
    if (builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e) == 0)
        src = kstrdup(json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source")));
    json_decref(out);
    json_decref(plan);
    return src;
}

/* aligned_chunks: Inductor's partial sums of a smooth L1 loss over chunks of 254201 (not a
 * multiple of 4) read as aligned vectors; everything but the loop head, the index, the mask and
 * the loads' addresses is Inductor's text. */
Test(agents, aligned_chunks_moves_the_loop_onto_aligned_vectors) {
    artifact *a = NULL;
    double eps = 0;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/heldout_h10_smooth_l1_loss_g0.py", &a);
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "aligned_chunks");
    json_t *vars = builtin_rewrite_variants(KF_ALIGNED_CHUNKS, tu_kf(k));
    cr_assert_eq(json_array_size(vars), 4, "%s", json_dumps(vars, 0));
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "aligned_chunks", "variants", vars);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    cr_expect_eq(json_array_size(json_object_get(out, "candidates")), 4);
    const json_t *c0 = json_array_get(json_object_get(out, "candidates"), 0);
    const char *src = json_string_value(json_object_get(c0, "source"));
    static const char *const want[] = {
        "    kopt_start = 254201*x0\n    kopt_base = (kopt_start // 4) * 4\n",
        "    for kopt_i in tl.range(0, (r0_numel + 3 + R0_BLOCK - 1) // R0_BLOCK):\n        r0_offset = kopt_i * R0_BLOCK\n",
        "        kopt_g = kopt_base + r0_offset + r0_base\n        r0_index = kopt_g - kopt_start\n",
        "        r0_mask = (r0_index >= 0) & (r0_index < r0_numel)\n",
        "tmp3 = tl.load(in_ptr0 + (kopt_g), (kopt_g < 134217728) & xmask, eviction_policy='evict_first', other=0.0)",
        "tmp4 = tl.load(in_ptr1 + (kopt_g), (kopt_g < 134217728) & xmask, eviction_policy='evict_first', other=0.0)",
        "        tmp0 = r0_1 + 254201*x0\n",                            /* Inductor's bound check, unchanged */
        "        _tmp19 = tl.where(r0_mask & xmask, tmp20, _tmp19)\n",  /* the accumulation under the chunk's mask */
        "    tl.store(out_ptr0 + (x0), tmp19, xmask)\n",
        "\"grid\": [\"xnumel\"], \"args\": [\"in_ptr0\", \"in_ptr1\", \"out_ptr0\", \"xnumel\", \"r0_numel\"]",
        "\"constexprs\": {\"XBLOCK\": 1, \"R0_BLOCK\": 2048}, \"num_warps\": 8",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) cr_expect(strstr(src, want[i]) != NULL, "missing %s in\n%s", want[i], src);
    cr_expect(strstr(src, "tl.range(0, r0_numel, R0_BLOCK)") == NULL, "the original loop is gone");
    cr_expect(strstr(src, "(r0_1 + 254201*x0), r0_mask") == NULL, "no load keeps the unaligned address");
    candidate *c = tu_parse_candidate(src);
    cr_expect_str_eq(candidate_form_label(c), "P");
    candidate_free(c);
    json_decref(out);
    json_decref(plan);
    /* a variant outside the limits gives no candidate */
    plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i}]}}", "direction", "rewrite", "params", "template", "aligned_chunks",
                     "variants", "r0_block", 3000, "num_warps", 8);
    cr_expect_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), KOPT_E_CANDIDATE);
    json_decref(plan);
    /* chunks of a multiple of 4 start aligned already: not this family */
    json_t *k2 = json_deep_copy(k);
    json_object_set_new(json_object_get(k2, "numels"), "r0_numel", json_integer(254204));
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0);
    json_decref(k2);
    /* a load that is not a flat chunk load (a broadcast weight) is refused */
    k2 = with_source(k, "tl.load(in_ptr1 + (r0_1 + 254201*x0)", "tl.load(in_ptr1 + (r0_1 % 254201*x0)", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0);
    json_decref(k2);
    /* rows cut in chunks (group norm's statistics: rows of 524288, 5 chunks of 104858 each, loads
     * at 524288*x1 + ((r0_2 + 104858*x0) % 524288)): each chunk on aligned vectors of its row */
    artifact *a3 = NULL;
    json_t *k3 = kernel_from_fixture("tests/fixtures/inductor/06_groupnorm_g0.py", &a3);
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k3), &eps)), "aligned_chunks");
    char *rsrc = aligned_src(k3, 2048, 8);
    cr_assert(rsrc);
    cr_expect(strstr(rsrc, "    kopt_start = 104858*x0\n    kopt_base = (kopt_start // 4) * 4\n") != NULL, "%s", rsrc);
    cr_expect(strstr(rsrc, "tmp3 = tl.load(in_ptr0 + (524288*x1 + kopt_g), (kopt_g < 524288) & xmask, eviction_policy='evict_last'") != NULL,
              "%s", rsrc);
    cr_expect(strstr(rsrc, "tmp13_mean = tl.where(r0_mask & xmask, tmp13_mean_next, tmp13_mean)") != NULL);
    cr_expect(strstr(rsrc, "kopt: the flat range's last elements") == NULL, "rows of whole vectors: no copy after the loop");
    free(rsrc);
    json_decref(k3);
    artifact_free(a3);
    /* the wide softmax's split max: loads at r0_2 + 52429*x0 + 262144*x1 */
    k3 = kernel_from_fixture("tests/fixtures/inductor/02_softmax_wide_g0.py", &a3);
    rsrc = aligned_src(k3, 2048, 8);
    cr_assert(rsrc);
    cr_expect(strstr(rsrc, "tmp3 = tl.load(in_ptr0 + (262144*x1 + kopt_g), (kopt_g < 262144) & xmask, ") != NULL, "%s", rsrc);
    free(rsrc);
    json_decref(k3);
    artifact_free(a3);
    /* rows of a multiple of 4 (03's log-softmax, rows of 16384) start aligned: not this family */
    k3 = kernel_from_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &a3);
    cr_expect_eq(builtin_aligned_match(tu_kf(k3)), 0);
    json_decref(k3);
    artifact_free(a3);
    json_decref(k);
    artifact_free(a);
}

/* The reduced fixture (53 chunks of 2541 over 134,573 elements: not a multiple of 4): the loop's
 * loads stop at the last whole vector, a copy of the body reads the rest. The candidate is a
 * golden file that tests/interp/test_aligned_interp.py runs in Triton's interpreter against
 * float64 (KOPT_WRITE_GOLDEN=1 rewrites it). */
Test(agents, aligned_chunks_reads_a_ragged_end_after_the_loop) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/handmade_smooth_l1_split_small.py", &a);
    cr_assert(builtin_aligned_match(tu_kf(k)));
    char *src = aligned_src(k, 256, 4);
    cr_assert(src);
    cr_expect(strstr(src, "        r0_mask = (r0_index >= 0) & (r0_index < r0_numel) & (kopt_g < 134572)\n") != NULL, "%s", src);
    cr_expect(strstr(src, "tmp3 = tl.load(in_ptr0 + (kopt_g), (kopt_g < 134572) & xmask, ") != NULL);
    cr_expect(strstr(src, "    kopt_g = 134572 + r0_base\n    r0_index = kopt_g - kopt_start\n"
                          "    r0_mask = (r0_index >= 0) & (r0_index < r0_numel) & (kopt_g >= 134572)\n") != NULL, "%s", src);
    cr_expect(strstr(src, "    tmp3 = tl.load(in_ptr0 + (kopt_g), (kopt_g < 134573) & xmask, ") != NULL);
    cr_expect(strstr(src, "    _tmp19 = tl.where(r0_mask & xmask, tmp20, _tmp19)\n    tmp19 = tl.sum(_tmp19, 1)[:, None]\n") != NULL,
              "the copy accumulates into Inductor's accumulator before its final reduction");
    cr_expect(strstr(src, "    r0_offset = kopt_i * R0_BLOCK\n    kopt_g") == NULL, "the copy does not use the loop's counter");
    tu_golden("tests/fixtures/aligned/candidate_small.py", src);
    free(src);
    json_decref(k);
    artifact_free(a);
}

/* The row form reduced (group-norm statistics: 6 rows of 4052, 3 chunks of 1351, Welford): a
 * golden candidate that tests/interp/test_aligned_interp.py runs against float64 per chunk. */
Test(agents, aligned_chunks_rows_golden) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/handmade_group_stats_rows_small.py", &a);
    double eps = 0;
    kfamily first = builtin_rewrite_match(tu_kf(k), &eps);
    cr_assert_eq(first, KF_ALIGNED_CHUNKS);
    cr_expect_eq(builtin_rewrite_second(tu_kf(k), first), KF_NONE, "1351 is too short for split_more");
    char *src = aligned_src(k, 256, 4);
    cr_assert(src);
    cr_expect(strstr(src, "tmp3 = tl.load(in_ptr0 + (4052*x1 + kopt_g), (kopt_g < 4052) & xmask, ") != NULL, "%s", src);
    tu_golden("tests/fixtures/aligned/candidate_rows_small.py", src);
    free(src);
    json_decref(k);
    artifact_free(a);
}

/* aligned_chunks' edges: the flat range's bound read from Inductor's check (or the chunks'
 * extent without one), anything else using the flat index refused, 16-bit inputs, the row form's
 * conditions. */
Test(agents, aligned_chunks_bounds_and_forms) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/heldout_h10_smooth_l1_loss_g0.py", &a);
    /* no check (the chunks tile the range): the bound is xnumel * r0_numel */
    json_t *k2 = with_source(k, "        tmp0 = r0_1 + 254201*x0\n", "        tmp0 = r0_1\n", 0);
    char *src = aligned_src(k2, 1024, 4);
    cr_assert(src, "no candidate without a bound check");
    cr_expect(strstr(src, "(kopt_g < 134218128) & xmask") != NULL, "%s", src);   /* 528 * 254201 */
    free(src);
    json_decref(k2);
    /* a check against more than the chunks cover, a second flat index, a check of something else */
    k2 = with_source(k, "tl.full([1, 1], 134217728, tl.int32)", "tl.full([1, 1], 134218129, tl.int32)", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a bound past the chunks");
    json_decref(k2);
    k2 = with_source(k, "        tmp1 = tl.full", "        tmp99 = r0_1 + 254201*x0\n        tmp1 = tl.full", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "the flat index twice");
    json_decref(k2);
    k2 = with_source(k, "        tmp2 = tmp0 < tmp1\n", "        tmp2 = tmp5 < tmp1\n", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a check that is not of the flat index");
    json_decref(k2);
    k2 = with_source(k, "        tmp1 = tl.full([1, 1], 134217728, tl.int32)\n", "        tmp1 = 134217728\n", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a bound not written as Inductor writes it");
    json_decref(k2);
    /* a store inside the loop, a load after it, an atomic: refused */
    k2 = with_source(k, "        _tmp19 = tl.where(", "        tl.store(out_ptr0 + (x0), tmp18, xmask)\n        _tmp19 = tl.where(", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a store in the loop");
    json_decref(k2);
    k2 = with_source(k, "    tl.store(out_ptr0", "    tmp99 = tl.load(in_ptr0 + (x0))\n    tl.store(out_ptr0", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a load after the loop");
    json_decref(k2);
    /* 16-bit inputs: vectors of 8, and 254201 % 8 != 0 still */
    k2 = json_deep_copy(k);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(k2, "signature"), i, p)
        if (!strncmp(json_string_value(json_object_get(p, "name")), "in_ptr", 6)) json_object_set_new(p, "type", json_string("*bf16"));
    src = aligned_src(k2, 1024, 4);
    cr_assert(src);
    cr_expect(strstr(src, "    kopt_base = (kopt_start // 8) * 8\n") != NULL, "%s", src);
    cr_expect(strstr(src, "(r0_numel + 7 + R0_BLOCK - 1) // R0_BLOCK") != NULL);
    free(src);
    /* an integer input: not this family */
    json_object_set_new(json_array_get(json_object_get(k2, "signature"), 0), "type", json_string("*i64"));
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "an integer input");
    json_decref(k2);
    json_decref(k);
    artifact_free(a);

    /* the row form (06's group-norm statistics) */
    k = kernel_from_fixture("tests/fixtures/inductor/06_groupnorm_g0.py", &a);
    cr_assert(builtin_aligned_match(tu_kf(k)));
    k2 = with_source(k, "    x1 = xindex // 5\n", "    x1 = xindex // 4\n", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "x1 not the row of x0's split");
    json_decref(k2);
    k2 = with_source(k, "    x0 = (xindex % 5)\n", "    x0 = (xindex % 7)\n", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "640 rows' chunks not a multiple of the split");
    json_decref(k2);
    k2 = with_source(k, "524288", "524290", 1);   /* rows of a length not a multiple of 4 */
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "rows that do not start on whole vectors");
    json_decref(k2);
    k2 = with_source(k, "(524288*x1 + (((r0_2 + 104858*x0) % 524288)))", "(524288*x1 + (((r0_2 + 104858*x0) % 262144)))", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a modulus other than the row");
    json_decref(k2);
    k2 = with_source(k, "tl.full([1, 1], 524288, tl.int32)", "tl.full([1, 1], 262144, tl.int32)", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a check against less than the row");
    json_decref(k2);
    json_decref(k);
    artifact_free(a);
}

/* More of aligned_chunks' conditions, each on one edit of a recorded kernel. */
Test(agents, aligned_chunks_conditions) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/heldout_h10_smooth_l1_loss_g0.py", &a);
    /* sizes: a short chunk, one chunk, more than int32 indexing: not this family */
    static const struct {
        const char *key;
        long long v;
    } sizes[] = {{"r0_numel", 1023}, {"xnumel", 1}, {"xnumel", 8448}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        json_t *k2 = json_deep_copy(k);
        json_object_set_new(json_object_get(k2, "numels"), sizes[i].key, json_integer(sizes[i].v));
        cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "%s = %lld", sizes[i].key, sizes[i].v);
        json_decref(k2);
    }
    /* a chunk length that is a multiple of 4 (source and numels agree): aligned already */
    json_t *k2 = with_source(k, "254201", "254204", 1);
    json_object_set_new(json_object_get(k2, "numels"), "r0_numel", json_integer(254204));
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "chunks of 254204");
    json_decref(k2);
    /* a check at exactly the chunks' extent is accepted (528 * 254201) */
    k2 = with_source(k, "134217728", "134218128", 1);
    char *src = aligned_src(k2, 1024, 4);
    cr_expect(src && strstr(src, "(kopt_g < 134218128) & xmask"), "%s", src ? src : "no candidate");
    free(src);
    json_decref(k2);
    /* accumulators not kept under r0_mask, or a load of another chunk length: refused */
    k2 = with_source(k, "tl.where(r0_mask & xmask, ", "tl.where(xmask, ", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "no accumulation under the chunk's mask");
    json_decref(k2);
    k2 = with_source(k, "tl.load(in_ptr1 + (r0_1 + 254201*x0)", "tl.load(in_ptr1 + (r0_1 + 254200*x0)", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a load of another chunk length");
    json_decref(k2);
    /* no family: no variants */
    artifact *a3 = NULL;
    json_t *k3 = kernel_from_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &a3);
    json_t *v = builtin_aligned_variants(tu_kf(k3));
    cr_expect_eq(json_array_size(v), 0);
    json_decref(v);
    json_decref(k3);
    artifact_free(a3);
    json_decref(k);
    artifact_free(a);

    /* the row form: 02's split max (loads r0_2 + 52429*x0 + 262144*x1) */
    k = kernel_from_fixture("tests/fixtures/inductor/02_softmax_wide_g0.py", &a);
    cr_assert(builtin_aligned_match(tu_kf(k)));
    k2 = with_source(k, "    x0 = (xindex % 5)\n", "    x0 = (xindex % 1)\n", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a split of 1");
    json_decref(k2);
    k2 = with_source(k, "(r0_2 + 52429*x0 + 262144*x1)", "(r0_2 + 52428*x0 + 262144*x1)", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "a load of another chunk length");
    json_decref(k2);
    k2 = with_source(k, "(r0_2 + 52429*x0 + 262144*x1)", "(r0_2 + 52429*x0 + 0*x1)", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "rows of no length");
    json_decref(k2);
    /* no check, chunks tiling the row exactly (5 x 52429 = 262145 is not 262144: refused; a row
     * of 262145 is not whole vectors either); the check's removal alone is refused */
    k2 = with_source(k, "        tmp0 = r0_2 + 52429*x0\n", "        tmp0 = r0_2\n", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "no check, chunks overrunning the row");
    json_decref(k2);
    /* two loads in the two row forms: refused */
    k2 = with_source(k, "tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])",
                     "tmp99 = tl.load(in_ptr0 + (262144*x1 + (((r0_2 + 52429*x0) % 262144))), r0_mask, other=0.0)\n"
                     "        tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])", 0);
    cr_expect_eq(builtin_aligned_match(tu_kf(k2)), 0, "loads of both row forms");
    json_decref(k2);
    json_decref(k);
    artifact_free(a);
}

/* The configuration object c one knob one step from (xb, rb, nw, ns) (neighbours' steps: blocks
 * and warps doubled or halved, stages 1 <-> 2 or 3, the tile reshaped at its size). */
static int one_step_from(const json_t *c, long long xb, long long rb, long long nw, long long ns) {
    long long v[4] = {json_integer_value(json_object_get(c, "XBLOCK")), json_integer_value(json_object_get(c, "R0_BLOCK")),
                      json_integer_value(json_object_get(c, "num_warps")), json_integer_value(json_object_get(c, "num_stages"))};
    long long b[4] = {xb, rb, nw, ns};
    int diff = 0;
    for (int i = 0; i < 4; i++) diff += v[i] != b[i];
    /* the last pass walked backward (revloop.h) is a knob of its own */
    int rev = json_is_true(json_object_get(c, "reverse_last_pass"));
    diff += rev;
    /* or the tile reshaped at its size: XBLOCK doubled with R0_BLOCK halved, or the reverse */
    int reshaped = !rev && v[2] == nw && v[3] == ns && v[0] * v[1] == xb * rb && (v[0] == 2 * xb || 2 * v[0] == xb);
    return diff == 1 || reshaped;
}

/* A rewrite measured fastest is no beam centre: its "config" is the template's variant, not a
 * launch configuration of the kernel (level1/35, session 55: the pool template's entry, read as
 * block sizes, gave XBLOCK=1 num_warps=1 num_stages=0, which gate 1 refused). The persistent
 * pooling kernel takes block sizes without R0_BLOCK, so that entry's neighbours were valid. */
Test(agents, planner_beam_ignores_a_rewrites_entry) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/suite_level1_35_max_pool3d_fp16__max_autotune_no_cudagraphs_g0.py", &a);
    agent *p = builtin_planner_new();
    json_t *hist = json_pack("[{s:{s:i, s:i, s:i}, s:f, s:s, s:i}, {s:{s:s, s:i, s:i, s:i, s:i}, s:f, s:s, s:i}]", "config", "XBLOCK",
                             128, "num_warps", 2, "num_stages", 1, "kernel_ms", 0.843, "outcome", "screened-out", "round", 0, "config",
                             "template", "max_pool", "bh", 1, "bw", 64, "odc", 16, "num_warps", 1, "kernel_ms", 0.702, "outcome",
                             "accepted", "round", 0);
    json_t *ctx = json_pack("{s:O, s:o, s:i, s:{s:i}}", "kernel", k, "history", hist, "round", 1, "budget", "candidates_left", 64);
    json_t *out = act(p, ctx);
    const json_t *cfgs = json_object_get(json_object_get(json_array_get(json_object_get(out, "plans"), 0), "params"), "configs");
    cr_assert_gt(json_array_size(cfgs), 0, "%s", json_dumps(out, 0));
    size_t i;
    json_t *c;
    json_array_foreach(cfgs, i, c) {
        cr_expect_gt(json_integer_value(json_object_get(c, "num_stages")), 0, "%s", json_dumps(c, 0));
        cr_expect(one_step_from(c, 128, 0, 2, 1), "not a neighbour of the measured configuration: %s", json_dumps(c, 0));
    }
    json_decref(out);
    json_decref(ctx);
    agent_free(p);
    json_decref(k);
    artifact_free(a);
}

/* The planner reads its history once (typed at its edge): round 1 is a beam around the three
 * fastest measured configurations -- unmeasured entries (kernel_ms null) are no centre, the
 * fastest's neighbours come first -- and a rewrite refused before is not proposed again at
 * round 0, while one that was only screened out is. */
Test(agents, planner_history_beam_centres_and_refused_rewrite) {
    artifact *a = NULL;
    json_t *k = kernel_from_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &a);
    agent *p = builtin_planner_new();
    /* centres: (1, 2048, 8, 1) fastest, then (2, 2048, 8, 1), then (1, 4096, 8, 1); a faster entry
     * that was never measured and a slow fourth one are not centres */
    json_t *hist = json_pack("[{s:{s:i, s:i, s:i, s:i}, s:n, s:s, s:i},"
                             " {s:{s:i, s:i, s:i, s:i}, s:f, s:s, s:i},"
                             " {s:{s:i, s:i, s:i, s:i}, s:f, s:s, s:i},"
                             " {s:{s:i, s:i, s:i, s:i}, s:f, s:s, s:i},"
                             " {s:{s:i, s:i, s:i, s:i}, s:f, s:s, s:i}]",
                             "config", "XBLOCK", 4, "R0_BLOCK", 1024, "num_warps", 4, "num_stages", 1, "kernel_ms", "outcome",
                             "refused", "round", 0, "config", "XBLOCK", 2, "R0_BLOCK", 2048, "num_warps", 8, "num_stages", 1,
                             "kernel_ms", 1.5, "outcome", "screened-out", "round", 0, "config", "XBLOCK", 1, "R0_BLOCK", 2048,
                             "num_warps", 8, "num_stages", 1, "kernel_ms", 1.0, "outcome", "screened-out", "round", 0, "config",
                             "XBLOCK", 8, "R0_BLOCK", 4096, "num_warps", 32, "num_stages", 2, "kernel_ms", 9.0, "outcome",
                             "screened-out", "round", 0, "config", "XBLOCK", 1, "R0_BLOCK", 4096, "num_warps", 8, "num_stages",
                             1, "kernel_ms", 2.0, "outcome", "screened-out", "round", 0);
    cr_assert_not_null(hist);
    json_t *ctx = json_pack("{s:O, s:O, s:i, s:{s:i}}", "kernel", k, "history", hist, "round", 1, "budget", "candidates_left", 64);
    json_t *out = act(p, ctx);
    const json_t *plans = json_object_get(out, "plans");
    cr_assert_eq(json_array_size(plans), 1, "%s", json_dumps(out, 0));
    const json_t *cfgs = json_object_get(json_object_get(json_array_get(plans, 0), "params"), "configs");
    cr_assert_gt(json_array_size(cfgs), 3);
    int reshaped = 0;
    cr_expect(one_step_from(json_array_get(cfgs, 0), 1, 2048, 8, 1), "the fastest's neighbours first: %s",
              json_dumps(json_array_get(cfgs, 0), 0));
    size_t i;
    json_t *c;
    json_array_foreach(cfgs, i, c) {
        int near = one_step_from(c, 1, 2048, 8, 1) || one_step_from(c, 2, 2048, 8, 1) || one_step_from(c, 1, 4096, 8, 1);
        cr_expect(near, "not a neighbour of the three fastest measured: %s", json_dumps(c, 0));
        cr_expect_not(one_step_from(c, 4, 1024, 4, 1) && !near, "a neighbour of the unmeasured entry");
        cr_expect_not(one_step_from(c, 8, 4096, 32, 2) && !near, "a neighbour of the fourth");
        reshaped |= json_integer_value(json_object_get(c, "XBLOCK")) == 4 && json_integer_value(json_object_get(c, "R0_BLOCK")) == 1024 &&
                    json_integer_value(json_object_get(c, "num_warps")) == 8;
    }
    cr_expect(reshaped, "the second centre's tile reshaped at its size (XBLOCK 4, R0_BLOCK 1024) is not proposed");
    json_decref(out);

    /* round 0: the row template is proposed, unless a rewrite of it was refused */
    json_t *h0 = json_pack("[{s:{s:s, s:i}, s:f, s:s, s:i}]", "config", "template", "row_log_softmax", "num_warps", 8,
                           "kernel_ms", 3.0, "outcome", "screened-out", "round", 0);
    json_object_set_new(ctx, "history", h0);
    json_object_set_new(ctx, "round", json_integer(0));
    out = act(p, ctx);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(out, "plans"), 0), "direction")), "rewrite",
                     "a screened-out rewrite may be tried again");
    json_decref(out);
    json_object_set_new(json_array_get(h0, 0), "outcome", json_string("refused"));
    out = act(p, ctx);
    json_array_foreach(json_object_get(out, "plans"), i, c)
        cr_expect_str_neq(json_string_value(json_object_get(c, "direction")), "rewrite", "a refused rewrite proposed again");
    cr_expect_gt(json_array_size(json_object_get(out, "plans")), 0, "the launch configurations remain");
    json_decref(out);
    json_decref(hist);
    json_decref(ctx);
    agent_free(p);
    json_decref(k);
    artifact_free(a);
}

/* The outcome an attempt carries in the agents' JSON: every name reads back to its enum, and
 * anything else (absent, an LLM's or an old store's spelling, a case change) is unknown, never
 * taken for a refusal or an acceptance. */
Test(agents, outcome_names_read_back) {
    for (int o = AGENT_OUT_ACCEPTED; o < AGENT_OUT_UNKNOWN; o++)
        cr_assert_eq(agent_outcome_parse(agent_outcome_name((agent_outcome)o)), o, "%s",
                     agent_outcome_name((agent_outcome)o));
    cr_assert_str_eq(agent_outcome_name(AGENT_OUT_SCREENED_OUT), "screened-out");
    cr_assert_str_eq(agent_outcome_name(AGENT_OUT_REFUSED), "refused");
    cr_assert_eq(agent_outcome_parse(NULL), AGENT_OUT_UNKNOWN);
    cr_assert_eq(agent_outcome_parse("Accepted"), AGENT_OUT_UNKNOWN);
    cr_assert_eq(agent_outcome_parse("refused "), AGENT_OUT_UNKNOWN);
    cr_assert_eq(agent_outcome_parse(""), AGENT_OUT_UNKNOWN);
    cr_assert_str_eq(agent_outcome_name(AGENT_OUT_UNKNOWN), "unknown");
    cr_assert_str_eq(agent_outcome_name((agent_outcome)99), "unknown");
}

/* The summarizer's sentence follows the outcome's enum: accepted, screened out, else a refusal. */
Test(agents, summarizer_sentence_by_outcome) {
    kerr e = {0};
    agent *s = builtin_summarizer_new();
    cr_assert_not_null(s);
    /* a screened-out one with a reason was left unsent (it may have been faster), else it was slow */
    const char *want[][3] = {{"accepted", "why", "accepted, 1.250x"},
                             {"screened-out", "why", "not sent to the gates: why (kernel-level screen 0.3000 ms vs 0.5000 ms)"},
                             {"screened-out", NULL, "not faster than the original in the kernel-level screen"},
                             {"refused", "why", "refused at gate 3: why"},
                             {"bogus", "why", "refused at gate 3"}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        json_t *ctx = json_pack("{s:{s:s, s:s, s:s, s:s, s:i, s:s?, s:f, s:f, s:f}}", "attempt", "kernel_kind",
                                "reduction", "direction", "rewrite", "label", "x", "outcome", want[i][0], "gate", 3,
                                "reason", want[i][1], "speedup", 1.25, "kernel_ms", 0.3, "orig_ms", 0.5);
        json_t *out = NULL;
        cr_assert_eq(agent_act(s, ctx, &out, &e), 0, "%s", e.msg);
        const char *exp = json_string_value(json_object_get(out, "experience"));
        cr_assert(exp && strstr(exp, want[i][2]), "%s: %s", want[i][0], exp ? exp : "(none)");
        json_decref(out);
        json_decref(ctx);
    }
    agent_free(s);
}
