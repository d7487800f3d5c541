/* test_tensor.c — gates/tensor: reading the worker's comparison statistics (and refusing
 * malformed ones), the sentence that names a mismatch, the NaN-aware max difference, and the
 * tolerance table. The element rule itself runs in the worker (tests/worker/test_compare.py). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gates/tensor.h"

/* Statistics of a [4, 8] float32 comparison under atol = rtol = 1e-4. */
static json_t *tt_stats(void) {
    return json_pack("{s:b, s:[i, i], s:i, s:s, s:s, s:f, s:f, s:i, s:i, s:i, s:n, s:f, s:i, s:f, s:f, s:f, s:i, s:f, s:f, "
                     "s:f, s:f, s:f}",
                     "shape_mismatch", 0, "shape", 4, 8, "numel", 32, "dtype", "float32", "got_dtype", "float32", "atol",
                     1e-4, "rtol", 1e-4, "n_mismatch", 2, "n_nonfinite_mismatch", 1, "first_mismatch", 11,
                     "max_rel_index", "max_abs_err", 0.5, "max_abs_index", 11, "ref_at_max_abs", 1.0, "got_at_max_abs", 1.5,
                     "max_rel_err", 0.5, "first_nonfinite_mismatch", 31, "ref_at_first_nonfinite", 0.25,
                     "ref_abs_max", 5.5, "sum_sq_ref", 100.0, "sum_sq_diff", 0.25, "ref_at_first", 1.0);
}

TestSuite(tensor);

Test(tensor, default_tolerances_and_table) {
    double a, r;
    tensor_default_tol("float32", &a, &r);
    cr_assert(a == 1e-4 && r == 1e-4);
    tensor_default_tol("float64", &a, &r);
    cr_assert(a == 1e-4 && r == 1e-4);
    tensor_default_tol("float16", &a, &r);
    cr_assert(a == 1e-2 && r == 1e-2);
    tensor_default_tol("bf16", &a, &r);
    cr_assert(a == 1e-2 && r == 1e-2);
    const char *exact[] = {"int64", "int32", "int16", "int8", "uint8", "bool"};
    for (int i = 0; i < 6; i++) {
        tensor_default_tol(exact[i], &a, &r);
        cr_assert(a == 0 && r == 0, "%s", exact[i]);
    }
    cr_assert_eq(tensor_itemsize("bfloat16"), 2);
    cr_assert_eq(tensor_itemsize("int64"), 8);
    cr_assert_eq(tensor_itemsize("bool"), 1);
    cr_assert_eq(tensor_itemsize("nope"), 0);
    json_t *t = tensor_tol_table();
    cr_expect_eq(json_real_value(json_array_get(json_object_get(t, "bfloat16"), 0)), 1e-2);
    cr_expect_eq(json_real_value(json_array_get(json_object_get(t, "int32"), 1)), 0);
    cr_expect_eq(json_object_size(t), 10);
    json_decref(t);
}

Test(tensor, reads_statistics_and_names_the_mismatch) {
    json_t *s = tt_stats();
    json_object_set_new(s, "got_at_first_nonfinite", json_string("nan"));
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect_not(c.pass);
    cr_expect_eq(c.n_mismatch, 2);
    cr_expect_eq(c.ndim, 2);
    cr_expect(isnan(c.got_at_first_nonfinite));
    cr_expect(isinf(tensor_cmp_max_diff(&c)));   /* a non-finite mismatch: infinitely far */
    char *str = tensor_cmp_str(&c);
    /* flat 11 of [4, 8] is [1, 3]; flat 31 is [3, 7] */
    cr_expect(strstr(str, "2 of 32 elements differ (1 non-finite)") && strstr(str, "at [1, 3] (ref 1, got 1.5)") &&
                  strstr(str, "first non-finite mismatch at [3, 7] (ref 0.25, got nan)"),
              "%s", str);
    free(str);
    json_decref(s);
}

Test(tensor, a_clean_comparison_passes) {
    json_t *s = tt_stats();
    json_object_set_new(s, "n_mismatch", json_integer(0));
    json_object_set_new(s, "n_nonfinite_mismatch", json_integer(0));
    json_object_set_new(s, "first_mismatch", json_null());
    json_object_set_new(s, "first_nonfinite_mismatch", json_null());
    json_object_set_new(s, "max_abs_err", json_real(2e-5));
    json_object_set_new(s, "sum_sq_diff", json_real(32 * 4e-10));
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.pass);
    cr_expect_float_eq(tensor_cmp_max_diff(&c), 2e-5, 0);
    char *str = tensor_cmp_str(&c);
    cr_expect(strstr(str, "ok (32 elements") != NULL, "%s", str);
    free(str);
    json_decref(s);
}

Test(tensor, a_shape_mismatch_is_a_verdict) {
    json_t *s = json_pack("{s:b, s:[i, i], s:[i, i, i], s:s, s:s, s:i}", "shape_mismatch", 1, "shape", 4, 8, "got_shape", 2, 2,
                          8, "dtype", "float32", "got_dtype", "float32", "numel", 32);
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.shape_mismatch && !c.pass);
    cr_expect(isinf(tensor_cmp_max_diff(&c)));
    char *str = tensor_cmp_str(&c);
    cr_expect_str_eq(str, "shape mismatch: expected [4, 8], got [2, 2, 8]");
    free(str);
    json_decref(s);
}

/* Each mutation of good statistics must be refused as a worker error. */
Test(tensor, refuses_malformed_statistics) {
    struct {
        const char *key;
        json_t *val;
        const char *why;
    } bad[] = {
        {"atol", json_real(1e-2), "asked for"},                 /* another tolerance */
        {"n_mismatch", json_integer(-1), "non-negative"},
        {"n_mismatch", json_integer(33), "inconsistent"},        /* more than numel */
        {"n_nonfinite_mismatch", json_integer(3), "inconsistent"},
        {"first_mismatch", json_integer(32), "inconsistent"},    /* out of range */
        {"first_mismatch", json_null(), "inconsistent"},         /* mismatches but no first */
        {"max_abs_err", json_string("nan"), "NaN"},
        {"max_abs_err", json_real(-1), "negative"},
        {"numel", json_integer(31), "does not match"},
        {"shape", json_string("4x8"), "shape"},
        {"dtype", json_null(), "dtypes"},
        {"shape_mismatch", json_null(), "shape_mismatch"},
        {"max_abs_err", json_string("big"), "not a number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_t *s = tt_stats();
        json_object_set_new(s, bad[i].key, bad[i].val);
        tensor_cmp c;
        kerr e = {0};
        cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER, "case %zu (%s) accepted", i, bad[i].key);
        cr_expect(strstr(e.msg, bad[i].why) != NULL, "case %zu: %s", i, e.msg);
        json_decref(s);
    }
    tensor_cmp c;
    kerr e = {0};
    json_t *arr = json_array();
    cr_expect_eq(tensor_cmp_from_json(arr, -1, -1, &c, &e), KOPT_E_WORKER);
    json_decref(arr);
}

Test(tensor, negative_expected_tolerance_skips_the_check) {
    json_t *s = tt_stats();
    json_object_set_new(s, "atol", json_real(0));
    json_object_set_new(s, "rtol", json_real(0));
    tensor_cmp c;
    kerr e = {0};
    cr_expect_eq(tensor_cmp_from_json(s, -1, -1, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(tensor_cmp_from_json(s, 0, 0, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, -1, &c, &e), KOPT_E_WORKER);
    json_decref(s);
}

Test(tensor, tiny_outputs_cannot_pass_as_zeros) {
    /* every element within atol 1e-4 of a reference of ~4e-6 (an all-zero output), but the
     * difference is as large as the reference itself: refused by the relative norm */
    json_t *s = tt_stats();
    json_object_set_new(s, "n_mismatch", json_integer(0));
    json_object_set_new(s, "n_nonfinite_mismatch", json_integer(0));
    json_object_set_new(s, "first_mismatch", json_null());
    json_object_set_new(s, "first_nonfinite_mismatch", json_null());
    json_object_set_new(s, "max_abs_err", json_real(4e-6));
    json_object_set_new(s, "sum_sq_ref", json_real(32 * 16e-12));
    json_object_set_new(s, "sum_sq_diff", json_real(32 * 16e-12));
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect_not(c.pass);
    cr_expect_float_eq(c.norm_ratio, 1.0, 1e-12);
    char *str = tensor_cmp_str(&c);
    cr_expect(strstr(str, "L2 norm") != NULL, "%s", str);
    free(str);
    /* at the edge: a relative norm of exactly rtol passes, just above does not */
    json_object_set_new(s, "sum_sq_ref", json_real(1.0));
    json_object_set_new(s, "sum_sq_diff", json_real(1e-8));   /* sqrt = 1e-4 = rtol */
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.pass, "ratio %.17g", c.norm_ratio);
    json_object_set_new(s, "sum_sq_diff", json_real(1.0001e-8));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect_not(c.pass);
    /* an all-zero reference: only the elementwise rule applies */
    json_object_set_new(s, "sum_sq_ref", json_real(0));
    json_object_set_new(s, "sum_sq_diff", json_real(1e-9));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.pass);
    json_decref(s);
}
