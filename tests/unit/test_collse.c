/* The middle-dimension logsumexp family (src/agents/builtin_collse.c, builtin_normalize.c's
 * matcher): recognised from the FX graph over a dimension that is not the last; its variants
 * and candidates (every one through gate 1's C checks); the row form stays row_logsumexp, and a
 * non-contiguous input, another dimension in the sum than in the max or a store elsewhere than
 * the flat position are not taken for it. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"

/* The handmade fixture's module text with its first `from` replaced by `to`, parsed into *a;
 * kernel 0's context (the caller frees it and *a). */
static json_t *edited(const char *from, const char *to, artifact **a) {
    size_t len = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/handmade_lse_middle_g0.py", &len);
    *a = tu_parse_edited(text, from, to);
    free(text);
    return opt_kernel_ctx(*a, 0, NULL);
}

/* The executor's col_logsumexp candidates for kernel context k from the given variants (stolen),
 * every one through gate 1's C checks against kernel K; the answer is the caller's. */
static json_t *candidates(const json_t *k, json_t *variants, const art_kernel *K) {
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "col_logsumexp",
                             "variants", variants);
    json_t *ans = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &ans, &e), 0, "%s", e.msg);
    json_decref(plan);
    tu_expect_gate1(ans, K);
    return ans;
}

Test(col_logsumexp, middle_dimension) {
    artifact *a = tu_load_inductor("handmade_lse_middle_g0.py");
    cr_assert_eq(a->nkernels, 1);
    json_t *k = opt_kernel_ctx(a, 0, NULL);
    double eps = 0;
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "col_logsumexp");
    char out[16];
    cr_expect_eq(builtin_logsumexp_match(tu_kf(k), out, sizeof out, NULL), 0, "the row form took a middle dimension");
    json_t *vars = builtin_rewrite_variants(KF_COL_LOGSUMEXP, tu_kf(k));
    /* fp32, (32, 1024, 4096): 64-column tiles of 32 rows on 4 warps first, in 2 parts (2048
     * programs brought to 4096); the parts of each tile as its programs and the 1024 rows allow */
    static const long long want[][4] = {{64, 32, 4, 2}, {128, 32, 8, 1}, {64, 16, 4, 2},
                                        {64, 32, 8, 1}, {32, 64, 4, 2},  {128, 16, 8, 2}};
    cr_assert_eq(json_array_size(vars), 6);
    for (size_t v = 0; v < 6; v++) {
        const json_t *x = json_array_get(vars, v);
        static const char *const keys[] = {"block_i", "rows", "num_warps", "nsplit"};
        for (size_t j = 0; j < 4; j++)
            cr_expect_eq(json_integer_value(json_object_get(x, keys[j])), want[v][j], "variant %zu: %s", v, keys[j]);
    }
    json_incref(vars);
    json_t *ans = candidates(k, vars, &a->kernels[0]);
    kerr e = {0};
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(ans, "candidates"), i, c) {
        const char *src = json_string_value(json_object_get(c, "source"));
        cr_expect(strstr(src, "\"params\": [\"in_out_ptr0\", \"in_ptr0\", \"xnumel\", \"r0_numel\"]") != NULL, "%s",
                  src);
        cr_expect(strstr(src, "\"n\": \"shape(in_ptr0, 1)\"") != NULL && strstr(src, "\"n == r0_numel\"") != NULL, "%s",
                  src);
        cr_expect(strstr(src, "_col_logsumexp(x_ptr, out_ptr, part_ptr, C, INNER, NIB, NT, CHUNK,") != NULL, "%s", src);
        /* with parts, a scratch of pairs and the second kernel */
        long long sp = json_integer_value(json_object_get(json_object_get(c, "config"), "nsplit"));
        cr_expect_eq(strstr(src, "_col_logsumexp_combine\", \"grid\"") != NULL, sp > 1, "%s", src);
        cr_expect_eq(strstr(src, "\"scratch\": [{\"name\": \"part\", \"shape\": [\"2 * 2 * xnumel\"]") != NULL, sp == 2,
                     "%s", src);
    }
    cr_expect_eq(json_array_size(json_object_get(ans, "candidates")), json_array_size(vars));
    json_decref(ans);
    /* on a GPU of 1024 SMs the first tile wants 8x the programs: 16 parts, but the 1024 rows
     * allow 8 parts of 4 steps of 32 rows, no more */
    json_object_set_new(k, "sm_count", json_integer(1024));
    json_t *many = builtin_rewrite_variants(KF_COL_LOGSUMEXP, tu_kf(k));
    cr_expect_eq(json_integer_value(json_object_get(json_array_get(many, 0), "nsplit")), 8);
    json_decref(many);
    json_object_del(k, "sm_count");
    /* parts not a power of two, or more than 64: no candidate */
    json_t *odd = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i, s:i}, {s:i, s:i, s:i, s:i}]}}", "direction", "rewrite",
                            "params", "template", "col_logsumexp", "variants", "block_i", 64, "rows", 32, "num_warps",
                            4, "nsplit", 3, "block_i", 64, "rows", 32, "num_warps", 4, "nsplit", 128);
    ans = NULL;
    cr_expect_neq(builtin_rewrite_act(tu_kf(k), tu_kp(odd), &ans, &e), 0);
    json_decref(ans);
    json_decref(odd);
    /* a variant outside the limits makes no candidate; none left: refused with the limits */
    json_t *bad = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i}]}}", "direction", "rewrite", "params", "template",
                            "col_logsumexp", "variants", "block_i", 48, "rows", 32, "num_warps", 4);
    ans = NULL;
    cr_expect_neq(builtin_rewrite_act(tu_kf(k), tu_kp(bad), &ans, &e), 0);
    cr_expect(strstr(e.msg, "block_i") != NULL, "%s", e.msg);
    json_decref(ans);
    json_decref(bad);
    json_decref(vars);
    json_decref(k);
    artifact_free(a);
}

Test(col_logsumexp, not_taken_for_other_graphs) {
    static const char *const edits[][2] = {
        /* the input not contiguous: the kernel's (outer, C, inner) view would not be its layout */
        {"f32[32, 1024, 4096][4194304, 4096, 1]cuda:0\" = PlaceHolder",
         "f32[32, 1024, 4096][4194304, 1, 1024]cuda:0\" = PlaceHolder"},
        /* the sum over another dimension than the max */
        {"(args = (%exp, [1])", "(args = (%exp, [0])"},
        /* two dimensions */
        {"(args = (%arg0_1, [1], True)", "(args = (%arg0_1, [0, 1], True)"},
        /* the output stored at a column index, not the flat position */
        {"tl.store(in_out_ptr0 + (x3)", "tl.store(in_out_ptr0 + (x0)"},
        /* an output read back */
        {"tmp0 = tl.load(in_ptr0", "tmp0 = tl.load(in_out_ptr0"},
    };
    for (size_t t = 0; t < sizeof edits / sizeof edits[0]; t++) {
        artifact *a = NULL;
        json_t *k = edited(edits[t][0], edits[t][1], &a);
        cr_expect_eq(builtin_col_lse_match(tu_kf(k)), 0, "still matched with %s", edits[t][1]);
        json_decref(k);
        artifact_free(a);
    }
    artifact *a = tu_load_inductor("handmade_lse_middle_g0.py");
    json_t *k = opt_kernel_ctx(a, 0, NULL);
    cr_expect_eq(builtin_col_lse_match(tu_kf(k)), 1, "the unedited fixture");
    json_decref(k);
    artifact_free(a);
    /* the recorded row logsumexps stay row_logsumexp */
    static const char *const rows[] = {"scratch_lse_3d_g0.py", "scratch_lse_bf16_keepdim_g0.py",
                                       "suite_level1_47_logsumexp_rows_g0.py"};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        artifact *ra = tu_load_inductor(rows[r]);
        json_t *rk = opt_kernel_ctx(ra, 0, NULL);
        double eps = 0;
        cr_expect_eq(builtin_col_lse_match(tu_kf(rk)), 0, "%s", rows[r]);
        cr_expect_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(rk), &eps)), "row_logsumexp", "%s", rows[r]);
        json_decref(rk);
        artifact_free(ra);
    }
}

/* logsumexp(x * c) with c > 0 (Inductor fuses the mul in front): the constant read from the
 * graph, every candidate multiplying what it loads by it and saying so in its label. */
Test(col_logsumexp, scaled_input) {
    size_t len = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/handmade_lse_middle_g0.py", &len);
    /* the mul node before amax, and sub reading it */
    char *scaled = tu_replace_once(text, "(args = (%arg0_1, [1], True), kwargs = {})",
                                   "(args = (%mul, [1], True), kwargs = {})\n#   %mul : Tensor \"f32[32, 1024, 4096]"
                                   "[4194304, 4096, 1]cuda:0\"[num_users=2] = call_function[target=torch.ops.aten.mul."
                                   "Tensor](args = (%arg0_1, 0.7071067811865476), kwargs = {})");
    artifact *a = tu_parse_edited(scaled, "(args = (%arg0_1, %where)", "(args = (%mul, %where)");
    free(scaled);
    free(text);
    json_t *k = opt_kernel_ctx(a, 0, NULL);
    char out[16];
    int dim = -1;
    double scale = 1;
    cr_assert_eq(builtin_col_logsumexp_match(tu_kf(k), out, sizeof out, &dim, &scale), 1);
    cr_expect_eq(scale, 0.7071067811865476);
    cr_expect_eq(dim, 1);
    json_t *ans = candidates(k, builtin_rewrite_variants(KF_COL_LOGSUMEXP, tu_kf(k)), &a->kernels[0]);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(ans, "candidates"), i, c) {
        const char *src = json_string_value(json_object_get(c, "source"));
        cr_expect(strstr(src, "        x = x * 0.70710678118654757   #") != NULL, "%s", src);
        cr_expect(strstr(json_string_value(json_object_get(c, "label")), "logsumexp of x * 0.70710678118654757 over") !=
                  NULL);
    }
    cr_expect_geq(json_array_size(json_object_get(ans, "candidates")), 4);
    json_decref(ans);
    json_decref(k);
    artifact_free(a);
}
