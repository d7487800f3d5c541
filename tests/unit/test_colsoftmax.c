/* The middle-dimension softmax family (src/agents/builtin_colsoftmax.c) on an Inductor module
 * captured on the H200 (suite problem 05 scaled down to (64, 512, 512), softmax over dim 1):
 * recognised from ATen ops, shapes and the FX graph; every candidate passes gate 1's C checks;
 * row softmaxes and other families are not taken for it. The three-loop form with a
 * temperature (held-out hz01) settles its dimension from the graph's amax node. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "gates/candidate.h"
#include "gates/gate1.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"

Test(col_softmax, middle_dimension_softmax) {
    artifact *a = tu_load_inductor("suite_level1_05_softmax_middle_dim_small_g0.py");
    cr_assert_eq(a->nkernels, 1);
    json_t *k = opt_kernel_ctx(a, 0, NULL);
    double eps = 0;
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "col_softmax");
    json_t *vars = builtin_rewrite_variants(kfamily_parse("col_softmax"), tu_kf(k));
    cr_assert_geq(json_array_size(vars), 2);
    /* the widest tile first, about 32 elements a thread: 512 x 16 with 8 warps */
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(vars, 0), "block_i")), 16);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(vars, 0), "num_warps")), 8);
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "col_softmax", "variants", vars);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    size_t i, splits = 0;
    json_t *c;
    json_array_foreach(json_object_get(out, "candidates"), i, c) {
        const char *src = json_string_value(json_object_get(c, "source"));
        /* (64, 512, 512): dims 1 and 2 both have 512 elements; the graph says 1 */
        cr_expect(strstr(src, "shape(in_ptr0, 1)") != NULL, "%s", src);
        if (strstr(src, "_col_split_softmax"))   /* segments exchanging partials: a tile's programs all resident */
            cr_expect(strstr(src, "\"nseg\": \"cdiv(n, ") != NULL && strstr(src, "\"nseg <= sm_count()\"") != NULL &&
                          strstr(src, "\"LOG\": False") != NULL, "%s", src);
        else
            cr_expect(strstr(src, "\"BLOCK_C\": 512") != NULL && strstr(src, "\"LOG\": False") != NULL, "%s", src);
        splits += strstr(src, "_col_split_softmax") != NULL;
        cr_expect(strstr(src, "\"params\": [\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"]") != NULL, "%s", src);
    }
    /* 256x32, 128x32 (2 and 4 warps), 128x64, 256x16 (512x16 would be one segment of 512 rows) */
    cr_expect_eq(splits, 5, "split variants: %zu", splits);
    tu_expect_gate1(out, &a->kernels[0]);
    cr_expect_eq(json_array_size(json_object_get(out, "candidates")), json_array_size(vars));
    json_decref(out);
    json_decref(plan);
    /* the graph naming the last dimension: a row softmax, not this family */
    json_object_set_new(k, "graph_fragment",
                        json_pack("[s]", "#   %p : [num_users=2] = call_function[target=torch.ops.prims.prepare_softmax_online."
                                         "default](args = (%arg0_1, -1), kwargs = {})"));
    cr_expect_null(builtin_col_softmax_match(tu_kf(k)));
    /* without a graph fragment, both readings the sizes allow */
    json_object_set_new(k, "graph_fragment", json_array());
    cr_expect_str_eq(builtin_col_softmax_match(tu_kf(k)), "col_softmax");
    json_decref(k);
    artifact_free(a);
}

/* A split variant with "reread" loads its block again after the exchange: the plan passes
 * REREAD True, the label and the config say so; without the key it holds the block (False). */
Test(col_softmax, split_variant_reread) {
    artifact *a = tu_load_inductor("suite_level1_05_softmax_middle_dim_small_g0.py");
    json_t *k = opt_kernel_ctx(a, 0, NULL);
    json_t *plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i, s:i}, {s:i, s:i, s:i}]}}", "direction", "rewrite", "params",
                             "template", "col_softmax", "variants", "cb", 128, "ib", 32, "num_warps", 4, "reread", 1,
                             "cb", 128, "ib", 32, "num_warps", 4);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    json_t *cands = json_object_get(out, "candidates");
    cr_assert_eq(json_array_size(cands), 2);
    json_t *c0 = json_array_get(cands, 0), *c1 = json_array_get(cands, 1);
    const char *s0 = json_string_value(json_object_get(c0, "source"));
    const char *s1 = json_string_value(json_object_get(c1, "source"));
    cr_expect(strstr(s0, "\"REREAD\": True") != NULL, "%s", s0);
    cr_expect(strstr(s1, "\"REREAD\": False") != NULL, "%s", s1);
    cr_expect(strstr(json_string_value(json_object_get(c0, "label")), "loaded again from the L2") != NULL);
    cr_expect(strstr(json_string_value(json_object_get(c1, "label")), "loaded again") == NULL);
    cr_expect(json_is_true(json_object_get(json_object_get(c0, "config"), "reread")));
    cr_expect(json_is_false(json_object_get(json_object_get(c1, "config"), "reread")));
    tu_expect_gate1(out, &a->kernels[0]);
    json_decref(out);
    json_decref(plan);
    json_decref(k);
    artifact_free(a);
}

Test(col_softmax, not_for_rows_or_other_families) {
    static const char *const fx[] = {"03_log_softmax_g0.py", "02_softmax_wide_g0.py", "suite_level1_01_softmax_wide_rows_small_g0.py",
                                     "06_groupnorm_g0.py", "07_sum_inner_g0.py", "suite_level1_32_cumsum_middle_dim_g0.py"};
    for (size_t f = 0; f < sizeof fx / sizeof *fx; f++) {
        artifact *a = tu_load_inductor(fx[f]);
        for (size_t i = 0; i < a->nkernels; i++) {
            json_t *k = opt_kernel_ctx(a, (int)i, NULL);
            cr_expect_null(builtin_col_softmax_match(tu_kf(k)), "%s: %s", fx[f], a->kernels[i].name);
            json_decref(k);
        }
        artifact_free(a);
    }
}

/* Held-out hz01 (softmax(x / 0.7, dim=1) of bf16 (128, 4096, 512), three loops): the graph's amax
 * node over [1] (or [-2]) agrees with the sizes; an amax over [2] contradicts them (no candidate
 * dimension left: unmatched); without a fragment the sizes alone allow dimension 1. Every
 * candidate passes gate 1 and scales by the kernel's constant. */
Test(col_softmax, temperature_dimension_from_the_graph) {
    artifact *a = tu_load_inductor("heldout4_hz01_softmax_temperature_dim1_bf16_synthetic_g0.py");
    cr_assert_eq(a->nkernels, 1);
    json_t *k = opt_kernel_ctx(a, 0, NULL);
    cr_assert_str_eq(builtin_col_softmax_match(tu_kf(k)), "col_softmax");
    json_t *vars = builtin_col_softmax_variants(tu_kf(k));
    /* 4096 x 8 (32 warps) and 4096 x 4 (16) tiles, then the six split segments */
    cr_expect_eq(json_array_size(vars), 8);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(vars, 0), "block_i")), 8);
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(vars, 0), "num_warps")), 32);
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "col_softmax", "variants", vars);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_col_softmax_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(out, "candidates"), i, c) {
        const char *src = json_string_value(json_object_get(c, "source"));
        cr_expect(strstr(src, "return t * 1.4285714285714286\n") && strstr(src, "shape(in_ptr0, 1)"), "%s", src);
    }
    tu_expect_gate1(out, &a->kernels[0]);
    json_decref(out);
    json_decref(plan);
    static const char *const amax = "%%amax : Tensor \"f32[128, 1, 512][512, 65536, 1]cuda:0\"[num_users=1] = "
                                     "call_function[target=torch.ops.aten.amax.default](args = (%%mul, [%d], True), kwargs = {})";
    const struct {
        int d, matched;
    } said[] = {{1, 1}, {-2, 1}, {2, 0}, {0, 0}};
    for (size_t t = 0; t < sizeof said / sizeof *said; t++) {
        char line[512];
        snprintf(line, sizeof line, amax, said[t].d);
        json_object_set_new(k, "graph_fragment", json_pack("[s]", line));
        const char *m = builtin_col_softmax_match(tu_kf(k));
        cr_expect_eq(m != NULL, said[t].matched, "amax over [%d]", said[t].d);
    }
    json_object_set_new(k, "graph_fragment", json_array());
    cr_expect_str_eq(builtin_col_softmax_match(tu_kf(k)), "col_softmax");
    json_decref(k);
    artifact_free(a);
}
