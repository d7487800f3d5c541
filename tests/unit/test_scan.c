/* The scan family (src/agents/builtin_scan.c) on Inductor modules captured on the H200 from the
 * suite's scan problems, small and at their own sizes (tests/fixtures/inductor/suite_level1_
 * {27,29,30,31,32}_*): what each kernel computes is read from its ATen ops, its tensors' shapes
 * and its sizes; every candidate passes gate 1's C checks. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "artifact/region.h"
#include "gates/candidate.h"
#include "gates/gate1.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"

/* The context of the only Triton kernel of a fixture. */
static json_t *only_kernel(const artifact *a) {
    cr_assert_eq(a->nkernels, 1);
    return opt_kernel_ctx(a, 0, NULL);
}

/* The candidates of the planner's scan variants; each through gate 1 against kernel K. */
static json_t *scan_candidates(const json_t *k, const art_kernel *K) {
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "scan", "variants",
                             builtin_rewrite_variants(kfamily_parse("scan"), tu_kf(k)));
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    json_decref(plan);
    tu_expect_gate1(out, K);
    return out;
}

/* The number of candidates whose source contains `needle`. */
static size_t count_with(const json_t *out, const char *needle) {
    size_t n = 0, i;
    json_t *c;
    json_array_foreach(json_object_get(out, "candidates"), i, c) n += strstr(json_string_value(json_object_get(c, "source")), needle) != NULL;
    return n;
}

/* The planner's scan variants (builtin_scan_variants): one candidate each per reading. */
enum { SCAN_VARIANTS = 5 };

/* the third: held-out hb02's fp16 (32, 4096, 1024), captured on the H100 (session 54) */
Test(scan, middle_dimension_at_two_sizes) {
    static const char *const fx[] = {"suite_level1_32_cumsum_middle_dim_g0.py", "suite_level1_32_cumsum_middle_dim_small_g0.py",
                                     "heldout9_hb02_cumsum_middle_fp16_g0.py"};
    for (size_t f = 0; f < 3; f++) {
        artifact *a = tu_load_inductor(fx[f]);
        json_t *k = only_kernel(a);
        cr_assert_eq(json_array_size(json_object_get(json_object_get(k, "shapes"), "in_ptr0")), 3, "%s: the input's shape", fx[f]);
        double eps = 0;
        cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "scan", "%s", fx[f]);
        json_t *out = scan_candidates(k, &a->kernels[0]);
        size_t n = json_array_size(json_object_get(out, "candidates"));
        /* the small module is (256, 256, 256): every dimension fits the sizes, and the FX graph's
         * cumsum(x, 1) settles it */
        cr_expect_eq(n, SCAN_VARIANTS, "%s: %zu candidates", fx[f], n);
        cr_expect_eq(count_with(out, "\"SHIFT\": 0,"), n);
        cr_expect_eq(count_with(out, "shape(in_ptr0, 1)"), SCAN_VARIANTS, "%s: dimension 1 in every variant", fx[f]);
        cr_expect_eq(count_with(out, "\"REVERSE\": False"), n);
        /* the column kernel's tiles: 64 rows x 32 columns on one warp first (hb02's sweep) */
        const char *src = json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source"));
        cr_expect(strstr(src, "\"BLOCK_S\": 64, \"BLOCK_I\": 32,") != NULL && strstr(src, "\"num_warps\": 1}") != NULL, "%s", src);
        json_decref(out);
        json_decref(k);
        artifact_free(a);
    }
}

Test(scan, exclusive_rows_shift_from_the_graph) {
    artifact *a = tu_load_inductor("suite_level1_30_exclusive_cumsum_g0.py");
    json_t *k = only_kernel(a);
    double eps = 0;
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "scan");
    json_t *out = scan_candidates(k, &a->kernels[0]);
    /* constant_pad_nd(x, [1, 0]) in the graph: the input shifted by +1 only */
    cr_expect_eq(json_array_size(json_object_get(out, "candidates")), SCAN_VARIANTS);
    cr_expect_eq(count_with(out, "\"SHIFT\": 1,"), SCAN_VARIANTS);
    cr_expect_eq(count_with(out, "\"SHIFT\": -1,"), 0u);
    /* rows: the row kernel's chunks, 4096 on 8 warps first */
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source"));
    cr_expect(strstr(src, "\"CHUNK\": 4096,") != NULL && strstr(src, "\"num_warps\": 8}") != NULL, "%s", src);
    /* without the graph fragment both shifts are readings */
    json_object_set_new(k, "graph_fragment", json_array());
    json_decref(out);
    out = scan_candidates(k, &a->kernels[0]);
    cr_expect_eq(count_with(out, "\"SHIFT\": 1,"), SCAN_VARIANTS);
    cr_expect_eq(count_with(out, "\"SHIFT\": -1,"), SCAN_VARIANTS);
    json_decref(out);
    json_decref(k);
    artifact_free(a);
}

Test(scan, masked_rows_find_the_boolean_argument) {
    artifact *a = tu_load_inductor("suite_level1_31_masked_cumsum_g0.py");
    json_t *k = only_kernel(a);
    double eps = 0;
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "scan");
    json_t *out = scan_candidates(k, &a->kernels[0]);
    cr_expect_eq(count_with(out, "\"MASKED\": True"), json_array_size(json_object_get(out, "candidates")));
    /* the mask is whichever input is declared *i1: here in_ptr0, the values in_ptr1 */
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source"));
    cr_expect(strstr(src, "\"params\": [\"in_ptr0\", \"in_ptr1\", \"out_ptr0\", \"xnumel\", \"r0_numel\"]") != NULL, "%s", src);
    cr_expect(strstr(src, "\"args\": [\"in_ptr1\", \"in_ptr0\", \"out_ptr0\", \"n\"]") != NULL, "%s", src);
    json_decref(out);
    json_decref(k);
    artifact_free(a);
}

Test(scan, plain_last_dimension_keeps_row_cumsum) {
    artifact *a = tu_load_inductor("suite_level1_27_cumsum_rows_small_g0.py");
    json_t *k = only_kernel(a);
    double eps = 0;
    const char *m = tu_family(builtin_rewrite_match(tu_kf(k), &eps));
    cr_assert(m && (!strcmp(m, "row_cumsum") || !strcmp(m, "scan")), "%s", m ? m : "(none)");
    json_decref(k);
    artifact_free(a);
}

Test(scan, flip_cumsum_flip_region_is_one_suffix_scan) {
    /* the third: held-out ha05, bf16 (captured on the H100, session 53) */
    static const char *const fx[] = {"suite_level1_29_reverse_cumsum_g0.py", "suite_level1_29_reverse_cumsum_small_g0.py",
                                     "heldout8_ha05_reverse_cumsum_bf16_g0.py"};
    for (size_t f = 0; f < 3; f++) {
        artifact *a = tu_load_inductor(fx[f]), *r = NULL;
        cr_assert_eq(a->nlaunches, 2);
        kbuf b = KBUF_INIT;
        kerr e = {0};
        cr_assert_eq(region_build(a, 0, 1, REGION_PREFIX "0", &b, &e), 0, "%s", e.msg);
        cr_assert_eq(artifact_parse(kbuf_str(&b), b.len, &r, &e), 0, "%s", e.msg);
        int ki = artifact_find_kernel(r, REGION_PREFIX "0");
        cr_assert_geq(ki, 0);
        json_t *k = opt_kernel_ctx(r, ki, NULL);
        cr_assert_str_eq(kfamily_name(builtin_region_match(tu_kf(k))), "scan", "%s", fx[f]);
        json_t *out = scan_candidates(k, &r->kernels[ki]);
        /* cumsum(rev(x), -1): the last dimension only (the sizes alone allow both) */
        cr_expect_eq(json_array_size(json_object_get(out, "candidates")), SCAN_VARIANTS, "%s", fx[f]);
        cr_expect_eq(count_with(out, "shape(in_ptr0, 1)"), SCAN_VARIANTS, "%s", fx[f]);
        cr_expect_eq(count_with(out, "\"REVERSE\": True"), json_array_size(json_object_get(out, "candidates")));
        cr_expect_eq(count_with(out, "# kopt-candidate: replaces=triton_red_fused_cumsum_flip_0+triton_poi_fused_flip_1"),
                     json_array_size(json_object_get(out, "candidates")));
        /* the member kernels alone are not scans the template computes */
        for (size_t i = 0; i < a->nkernels; i++) {
            json_t *mk = opt_kernel_ctx(a, (int)i, NULL);
            cr_expect_null(builtin_scan_match(tu_kf(mk)), "%s alone", a->kernels[i].name);
            json_decref(mk);
        }
        json_decref(out);
        json_decref(k);
        kbuf_free(&b);
        artifact_free(r);
        artifact_free(a);
    }
}

Test(scan, not_a_scan) {
    /* a log-softmax, a sum, a group norm: other families */
    static const char *const fx[] = {"03_log_softmax_g0.py", "07_sum_inner_g0.py", "06_groupnorm_g0.py"};
    for (size_t f = 0; f < 3; f++) {
        artifact *a = tu_load_inductor(fx[f]);
        for (size_t i = 0; i < a->nkernels; i++) {
            json_t *k = opt_kernel_ctx(a, (int)i, NULL);
            cr_expect_null(builtin_scan_match(tu_kf(k)), "%s: %s", fx[f], a->kernels[i].name);
            json_decref(k);
        }
        artifact_free(a);
    }
}

/* cummax's values (held-out hb03: 16384 x 8192 fp32 over the rows, captured on the H100, session
 * 54): the running maximum, one candidate a variant over dimension 1 (the graph's), the row
 * kernel's chunks; a kernel that also stores the indices (a second output) or only them (int64)
 * is not a scan, nor is a cummax mixed with a cumsum. */
Test(scan, cummax_values_only) {
    artifact *a = tu_load_inductor("heldout9_hb03_cummax_rows_g0.py");
    json_t *k = only_kernel(a);
    double eps = 0;
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "scan");
    json_t *out = scan_candidates(k, &a->kernels[0]);
    size_t n = json_array_size(json_object_get(out, "candidates"));
    cr_expect_eq(n, SCAN_VARIANTS);
    cr_expect_eq(count_with(out, "take_a = tl.where(a != a, b == b, a > b)"), n, "the NaN-sticky combine");
    cr_expect_eq(count_with(out, "prefix cummax (the values) over dimension 1"), n);
    cr_expect_eq(count_with(out, "\"kernel\": \"_scan_rows\""), n);
    cr_expect_eq(count_with(out, "tl.cumsum("), 0u);
    json_decref(out);
    json_decref(k);
    artifact_free(a);

    size_t len = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/heldout9_hb03_cummax_rows_g0.py", &len);
    static const char *const edits[][2] = {
        {"'out_ptr0': '*fp32'", "'out_ptr0': '*i64'"},
        {"'out_ptr0': '*fp32', 'xnumel'", "'out_ptr0': '*fp32', 'out_ptr1': '*i64', 'xnumel'"},
        {"Original ATen: [aten.cummax]\n# Source node", "Original ATen: [aten.cummax, aten.cumsum]\n# Source node"}};
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        artifact *b = tu_parse_edited(text, edits[i][0], edits[i][1]);
        json_t *kb = only_kernel(b);
        cr_expect_null(builtin_scan_match(tu_kf(kb)), "edit %zu", i);
        json_decref(kb);
        artifact_free(b);
    }
    free(text);
}
