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
    cr_expect_str_eq(str, "ok (32 elements, max abs err 2e-05)");
    free(str);
    cr_expect_not(c.has_rel_err);
    /* the relative-error count, when the worker was asked for it, is read and checked */
    json_object_set_new(s, "n_rel_err", json_integer(5));
    json_object_set_new(s, "rel_err_thr", json_real(0.0625));
    json_object_set_new(s, "rel_err_floor", json_real(5e-6));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.has_rel_err && c.n_rel_err == 5 && c.rel_err_thr == 0.0625 && c.rel_err_floor == 5e-6);
    /* the edges: every element counted, a threshold and a floor of 0 are valid */
    json_object_set_new(s, "n_rel_err", json_integer(32));
    json_object_set_new(s, "rel_err_thr", json_real(0));
    json_object_set_new(s, "rel_err_floor", json_real(0));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.n_rel_err == 32 && c.rel_err_thr == 0 && c.rel_err_floor == 0);
    json_object_set_new(s, "rel_err_thr", json_real(-1e-300));
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    json_object_set_new(s, "rel_err_thr", json_real(0.0625));
    json_object_set_new(s, "rel_err_floor", json_real(5e-6));
    json_object_set_new(s, "n_rel_err", json_integer(33));   /* more than numel (32) */
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    json_object_set_new(s, "n_rel_err", json_integer(32));
    json_object_del(s, "rel_err_floor");
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    json_object_set_new(s, "rel_err_floor", json_real(-1));
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    json_object_set_new(s, "rel_err_floor", json_real(0));
    json_object_set_new(s, "n_rel_err", json_real(1.5));
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    /* a threshold that is not a number is an error, not a threshold of 0 */
    json_object_set_new(s, "n_rel_err", json_integer(3));
    json_object_set_new(s, "rel_err_thr", json_string("abc"));
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    cr_expect(strstr(e.msg, "'rel_err_thr' is not a number") != NULL, "%s", e.msg);
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

/* Every dtype of the table: its size, its default tolerance (tensor.h), and the aliases. */
Test(tensor, itemsizes_tolerances_and_aliases) {
    struct {
        const char *dt;
        size_t size;
        double tol;
    } want[] = {{"float64", 8, 1e-4}, {"float32", 4, 1e-4}, {"float16", 2, 1e-2}, {"bfloat16", 2, 1e-2},
                {"int64", 8, 0},      {"int32", 4, 0},      {"int16", 2, 0},      {"int8", 1, 0},
                {"uint8", 1, 0},      {"bool", 1, 0}};
    json_t *t = tensor_tol_table();
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        cr_expect_eq(tensor_itemsize(want[i].dt), want[i].size, "%s", want[i].dt);
        double a = -1, r = -1;
        tensor_default_tol(want[i].dt, &a, &r);
        cr_expect(a == want[i].tol && r == want[i].tol, "%s: %g %g", want[i].dt, a, r);
        json_t *row = json_object_get(t, want[i].dt);
        cr_expect(json_real_value(json_array_get(row, 0)) == want[i].tol &&
                      json_real_value(json_array_get(row, 1)) == want[i].tol, "table row %s", want[i].dt);
    }
    json_decref(t);
    cr_expect_eq(tensor_itemsize(NULL), 0);
    double a = -1, r = -1;
    tensor_default_tol("fp16", &a, &r);
    cr_expect(a == 1e-2 && r == 1e-2);
    tensor_default_tol(NULL, &a, &r);     /* unknown: as float32 */
    cr_expect(a == 1e-4 && r == 1e-4);
    tensor_default_tol("complex128", &a, &r);
    cr_expect(a == 1e-4 && r == 1e-4);
    r = -1;
    tensor_default_tol("bfloat16", NULL, &r);   /* either output may be omitted */
    cr_expect(r == 1e-2);
    a = -1;
    tensor_default_tol("int8", &a, NULL);
    cr_expect(a == 0);
}

/* More malformed statistics, one consistency rule each (tensor_cmp_from_json's contract). */
Test(tensor, refuses_each_inconsistency) {
    struct {
        const char *key;
        json_t *val;
        const char *why;
    } bad[] = {
        {"rtol", json_real(1e-3), "asked for"},                       /* the other tolerance */
        {"atol", json_null(), "lack 'atol'"},
        {"n_mismatch", json_null(), "lack the mismatch counts"},
        {"n_nonfinite_mismatch", json_null(), "lack the mismatch counts"},
        {"n_mismatch", json_real(2.0), "non-negative integer"},
        {"first_nonfinite_mismatch", json_null(), "inconsistent"},   /* a non-finite one, no index */
        {"first_nonfinite_mismatch", json_integer(32), "inconsistent"},
        {"max_abs_index", json_integer(32), "inconsistent"},
        {"max_rel_index", json_integer(32), "inconsistent"},
        {"max_rel_err", json_real(-0.5), "negative"},
        {"sum_sq_ref", json_real(-1), "negative"},
        {"sum_sq_diff", json_string("nan"), "negative or NaN"},
        {"ref_abs_max", json_null(), "lack 'ref_abs_max'"},
        {"got_dtype", json_integer(1), "dtypes"},
        {"shape", json_pack("[i, i]", 4, -8), "bad shape entry 1"},
        {"shape", json_pack("[i, f]", 4, 8.0), "bad shape entry 1"},
        {"shape", json_string("4x8"), "lack a shape"},
        {"numel", json_integer(-1), "'numel' is not a non-negative integer"},
        {"rtol", json_null(), "lack 'rtol'"},
        {"atol", json_string("big"), "'atol' is not a number"},
        {"max_abs_err", json_null(), "lack 'max_abs_err'"},
        {"max_rel_err", json_null(), "lack 'max_rel_err'"},
        {"sum_sq_ref", json_null(), "lack 'sum_sq_ref'"},
        {"sum_sq_diff", json_null(), "lack 'sum_sq_diff'"},
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
    /* a first mismatch but no mismatch count */
    json_t *s = tt_stats();
    json_object_set_new(s, "n_mismatch", json_integer(0));
    json_object_set_new(s, "n_nonfinite_mismatch", json_integer(0));
    json_object_set_new(s, "first_nonfinite_mismatch", json_null());
    tensor_cmp c;
    kerr e = {0};
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER, "a first mismatch without mismatches");
    json_decref(s);
    /* 17 dimensions */
    s = tt_stats();
    json_t *shape = json_array();
    for (int d = 0; d < 17; d++) json_array_append_new(shape, json_integer(1));
    json_object_set_new(s, "shape", shape);
    json_object_set_new(s, "numel", json_integer(1));
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    cr_expect(strstr(e.msg, "17 dimensions") != NULL, "%s", e.msg);
    json_decref(s);
    /* not an object */
    json_t *arr = json_array();
    cr_expect_eq(tensor_cmp_from_json(arr, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    cr_expect(strstr(e.msg, "not an object") != NULL, "%s", e.msg);
    json_decref(arr);
    /* an exact tolerance asked for (integers): statistics under another are refused */
    s = tt_stats();
    cr_expect_eq(tensor_cmp_from_json(s, 0, -1, &c, &e), KOPT_E_WORKER);
    cr_expect(strstr(e.msg, "asked for") != NULL, "%s", e.msg);
    cr_expect_eq(tensor_cmp_from_json(s, -1, 0, &c, &e), KOPT_E_WORKER);
    json_decref(s);
    /* a shape mismatch needs a readable got_shape */
    s = json_pack("{s:b, s:[i], s:s, s:s, s:i}", "shape_mismatch", 1, "shape", 4, "dtype", "float32", "got_dtype", "float32",
                  "numel", 4);
    cr_expect_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), KOPT_E_WORKER);
    json_decref(s);
}

/* Edges that are allowed: the last index, every count equal to numel, 16 dimensions, the
 * protocol's "inf" strings, optional numbers absent. */
Test(tensor, accepts_the_edges_of_the_rules) {
    json_t *s = tt_stats();
    json_object_set_new(s, "first_mismatch", json_integer(31));
    json_object_set_new(s, "max_abs_index", json_integer(31));
    json_object_set_new(s, "max_rel_index", json_integer(31));
    json_object_set_new(s, "n_mismatch", json_integer(32));
    json_object_set_new(s, "n_nonfinite_mismatch", json_integer(32));
    json_object_set_new(s, "ref_at_first", json_null());
    json_object_set_new(s, "got_at_max_abs", json_string("-inf"));
    json_object_set_new(s, "ref_at_first_nonfinite", json_string("inf"));
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.n_mismatch == 32 && c.first_mismatch == 31 && c.max_abs_index == 31 && c.max_rel_index == 31);
    cr_expect(isnan(c.ref_at_first));
    cr_expect(isinf(c.got_at_max_abs) && c.got_at_max_abs < 0);
    cr_expect(isinf(c.ref_at_first_nonfinite) && c.ref_at_first_nonfinite > 0);
    cr_expect_eq(c.numel, 32);
    cr_expect(c.atol == 1e-4 && c.rtol == 1e-4);
    json_decref(s);
    /* 16 dimensions of 1, a single element */
    s = tt_stats();
    json_t *shape = json_array();
    for (int d = 0; d < 16; d++) json_array_append_new(shape, json_integer(1));
    json_object_set_new(s, "shape", shape);
    json_object_set_new(s, "numel", json_integer(1));
    json_object_set_new(s, "n_mismatch", json_integer(0));
    json_object_set_new(s, "n_nonfinite_mismatch", json_integer(0));
    json_object_set_new(s, "first_mismatch", json_null());
    json_object_set_new(s, "first_nonfinite_mismatch", json_null());
    json_object_set_new(s, "max_abs_index", json_null());   /* the worker sends null: no difference */
    json_object_set_new(s, "max_rel_index", json_null());
    json_object_set_new(s, "sum_sq_diff", json_real(0));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.ndim == 16 && c.pass && c.norm_ratio == 0 && c.max_abs_index == 0);
    int64_t idx[KTENSOR_MAX_DIMS];
    tensor_cmp_unravel(&c, 0, idx);   /* all 16 dimensions, none beyond */
    for (int d = 0; d < 16; d++) cr_expect_eq(idx[d], 0);
    json_decref(s);
    /* an empty tensor: no index can be valid, none is checked */
    s = tt_stats();
    json_object_set_new(s, "shape", json_pack("[i, i]", 0, 8));
    json_object_set_new(s, "numel", json_integer(0));
    json_object_set_new(s, "n_mismatch", json_integer(0));
    json_object_set_new(s, "n_nonfinite_mismatch", json_integer(0));
    json_object_set_new(s, "first_mismatch", json_null());
    json_object_set_new(s, "first_nonfinite_mismatch", json_null());
    json_object_set_new(s, "sum_sq_ref", json_real(0));
    json_object_set_new(s, "sum_sq_diff", json_real(0));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(c.pass && c.numel == 0 && c.norm_ok && c.norm_ratio == 0);
    json_decref(s);
}

/* The relative norm: its value, and the all-zero reference (infinite ratio, elementwise rule). */
Test(tensor, norm_ratio_values) {
    json_t *s = tt_stats();
    json_object_set_new(s, "n_mismatch", json_integer(0));
    json_object_set_new(s, "n_nonfinite_mismatch", json_integer(0));
    json_object_set_new(s, "first_mismatch", json_null());
    json_object_set_new(s, "first_nonfinite_mismatch", json_null());
    json_object_set_new(s, "sum_sq_ref", json_real(4.0));
    json_object_set_new(s, "sum_sq_diff", json_real(1e-8));
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect_float_eq(c.norm_ratio, 5e-5, 1e-18);   /* sqrt(1e-8 / 4) */
    cr_expect(c.norm_ok && c.pass);
    json_object_set_new(s, "sum_sq_ref", json_real(0));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(isinf(c.norm_ratio) && c.norm_ok && c.pass);
    /* mismatching elements fail whatever the norm */
    json_object_set_new(s, "n_mismatch", json_integer(1));
    json_object_set_new(s, "first_mismatch", json_integer(3));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(!c.pass && c.norm_ok);
    json_decref(s);
}

/* The max difference and the sentence, case by case. */
Test(tensor, max_diff_unravel_and_sentences) {
    tensor_cmp c = {0};
    c.ndim = 3;
    c.shape[0] = 2, c.shape[1] = 3, c.shape[2] = 4;
    int64_t idx[3];
    tensor_cmp_unravel(&c, 23, idx);
    cr_expect(idx[0] == 1 && idx[1] == 2 && idx[2] == 3);
    tensor_cmp_unravel(&c, 13, idx);   /* 13 = 1*12 + 0*4 + 1 */
    cr_expect(idx[0] == 1 && idx[1] == 0 && idx[2] == 1);
    c.shape[1] = 0;                    /* an empty dimension: index 0 there */
    tensor_cmp_unravel(&c, 5, idx);
    cr_expect(idx[1] == 0 && idx[2] == 1 && idx[0] == 1);
    c.shape[1] = 3;
    c.max_abs_err = 0.25;
    cr_expect_float_eq(tensor_cmp_max_diff(&c), 0.25, 0);
    c.n_nonfinite_mismatch = 1;
    cr_expect(isinf(tensor_cmp_max_diff(&c)));
    /* only non-finite mismatches: no "max abs err" clause */
    c.numel = 24, c.n_mismatch = 1, c.max_abs_err = 0, c.first_nonfinite_mismatch = 13;
    c.first_mismatch = 13;
    c.ref_at_first_nonfinite = 1.0, c.got_at_first_nonfinite = NAN;
    char *str = tensor_cmp_str(&c);
    cr_expect_str_eq(str, "1 of 24 elements differ (1 non-finite); first non-finite mismatch at [1, 0, 1] (ref 1, got nan)");
    free(str);
    /* finite mismatches only: no non-finite clauses */
    c.n_nonfinite_mismatch = 0, c.first_nonfinite_mismatch = SIZE_MAX, c.max_abs_err = 0.5, c.max_abs_index = 23;
    c.ref_at_max_abs = 2, c.got_at_max_abs = 2.5;
    str = tensor_cmp_str(&c);
    cr_expect_str_eq(str, "1 of 24 elements differ; max abs err 0.5 at [1, 2, 3] (ref 2, got 2.5)");
    free(str);
    /* every element within atol, the norm off */
    c.n_mismatch = 0, c.atol = 1e-4, c.rtol = 1e-4, c.norm_ratio = 0.5;
    str = tensor_cmp_str(&c);
    cr_expect(strstr(str, "within atol 0.0001") && strstr(str, "L2 norm is 0.5") && strstr(str, "(allowed 0.0001)") &&
                  !strstr(str, "elements differ"), "%s", str);
    free(str);
}

/* A number sent as the protocol's "inf" / "-inf" string is a number like any other: the reading
 * goes on to the fields after it, and the verdict is computed from all of them. */
Test(tensor, infinite_numbers_do_not_end_the_reading) {
    json_t *s = tt_stats();
    json_object_set_new(s, "max_abs_err", json_string("inf"));
    json_object_set_new(s, "max_rel_err", json_string("inf"));
    json_object_set_new(s, "got_at_max_abs", json_string("-inf"));
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(isinf(c.max_abs_err) && c.max_abs_err > 0 && isinf(c.max_rel_err));
    cr_expect(isinf(c.got_at_max_abs) && c.got_at_max_abs < 0);
    cr_expect_float_eq(c.ref_abs_max, 5.5, 0);
    cr_expect_float_eq(c.sum_sq_ref, 100.0, 0);
    cr_expect_float_eq(c.norm_ratio, 0.05, 1e-15);   /* sqrt(0.25 / 100) */
    json_decref(s);
    /* the same with no mismatch: the comparison passes on its norm */
    s = tt_stats();
    json_object_set_new(s, "n_mismatch", json_integer(0));
    json_object_set_new(s, "n_nonfinite_mismatch", json_integer(0));
    json_object_set_new(s, "first_mismatch", json_null());
    json_object_set_new(s, "first_nonfinite_mismatch", json_null());
    json_object_set_new(s, "ref_at_first", json_string("inf"));
    json_object_set_new(s, "sum_sq_diff", json_real(1e-10));
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect(isinf(c.ref_at_first));
    cr_expect(c.norm_ok && c.pass);
    json_decref(s);
}
