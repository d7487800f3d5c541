/* Gate 2-4 verdicts on synthetic data (src/gates/decide.h): the worker's comparison statistics
 * (tensor.h) as it would send them, and timing samples. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/decide.h"
#include "util/buf.h"

/* Statistics of a 100-element float32 comparison under fp32's default tolerance: `bad`
 * mismatches (the first at `at`, max abs err `err` there), `nonfin` of them non-finite. */
static json_t *st(size_t bad, size_t at, double err, size_t nonfin) {
    json_t *o = json_pack("{s:b, s:[i], s:i, s:s, s:s, s:f, s:f, s:I, s:I, s:f, s:f, s:I, s:f, s:f, s:f}", "shape_mismatch", 0,
                          "shape", 100, "numel", 100, "dtype", "float32", "got_dtype", "float32", "atol", 1e-4, "rtol", 1e-4,
                          "n_mismatch", (json_int_t)bad, "n_nonfinite_mismatch", (json_int_t)nonfin, "max_abs_err", err,
                          "max_rel_err", err / 2, "max_abs_index", (json_int_t)at, "ref_at_max_abs", 2.0, "got_at_max_abs",
                          2.0 + err, "ref_abs_max", 2.2);
    /* reference values of about 1 (sum of squares 100); the difference's norm follows the error */
    json_object_set_new(o, "sum_sq_ref", json_real(100.0));
    json_object_set_new(o, "sum_sq_diff", json_real(err * err * (bad ? (double)bad : 1.0)));
    json_object_set_new(o, "first_mismatch", bad ? json_integer((json_int_t)at) : json_null());
    json_object_set_new(o, "first_nonfinite_mismatch", nonfin ? json_integer(90) : json_null());
    json_object_set_new(o, "got_at_first_nonfinite", nonfin ? json_string("nan") : json_null());
    return o;
}

/* An isolate result with one set and one checked argument (index 1), two candidate runs. */
static json_t *iso(json_t *run0, json_t *run1, json_t *changed) {
    return json_pack("{s:[{s:s, s:[{s:i, s:[o, o]}], s:o}], s:[i]}", "sets", "name", "captured", "args", "arg", 1, "runs",
                     run0, run1, "inputs_changed", changed ? changed : json_array(), "checked", 1);
}

static int decide(json_t *r, json_t **v) {
    int passed = -1;
    kerr e = {0};
    cr_assert_eq(gate2_decide(r, &passed, v, &e), 0, "%s", e.msg);
    json_decref(r);
    return passed;
}

Test(decide, gate2_passes_matching_runs) {
    json_t *v = NULL;
    cr_expect_eq(decide(iso(st(0, 0, 3e-5, 0), st(0, 0, 3e-5, 0), NULL), &v), 1);
    cr_expect(json_is_true(json_object_get(v, "passed")));
    json_decref(v);
}

Test(decide, gate2_refuses_one_wrong_element_and_names_it) {
    json_t *v = NULL;
    cr_expect_eq(decide(iso(st(1, 42, 0.01, 0), st(1, 42, 0.01, 0), NULL), &v), 0);
    const char *why = json_string_value(json_object_get(v, "reason"));
    cr_assert_not_null(why);
    cr_expect(strstr(why, "argument 1") && strstr(why, "[42]") && strstr(why, "1 of 100"), "%s", why);
    json_t *a = json_array_get(json_object_get(json_array_get(json_object_get(v, "sets"), 0), "args"), 0);
    cr_expect_eq(json_integer_value(json_object_get(a, "mismatches")), 1);
    json_decref(v);
}

Test(decide, gate2_refuses_unwritten_tail_left_as_nan_poison) {
    json_t *v = NULL;
    cr_expect_eq(decide(iso(st(10, 90, 0, 10), st(10, 90, 0, 10), NULL), &v), 0);
    json_t *a = json_array_get(json_object_get(json_array_get(json_object_get(v, "sets"), 0), "args"), 0);
    cr_expect_eq(json_integer_value(json_object_get(a, "nonfinite_mismatches")), 10);
    cr_expect(strstr(json_string_value(json_object_get(v, "reason")), "non-finite") != NULL);
    json_decref(v);
}

Test(decide, gate2_refuses_a_candidate_that_disagrees_with_itself) {
    /* first run right, second run off: a race */
    json_t *v = NULL;
    cr_expect_eq(decide(iso(st(0, 0, 0, 0), st(1, 7, 0.5, 0), NULL), &v), 0);
    cr_expect(strstr(json_string_value(json_object_get(v, "reason")), "race") != NULL);
    json_decref(v);
}

Test(decide, gate2_refuses_a_write_to_a_read_only_input) {
    json_t *v = NULL;
    cr_expect_eq(decide(iso(st(0, 0, 0, 0), st(0, 0, 0, 0), json_pack("[i]", 0)), &v), 0);
    cr_expect(strstr(json_string_value(json_object_get(v, "reason")), "read-only input argument 0") != NULL);
    json_decref(v);
}

Test(decide, gate2_statistics_under_another_tolerance_are_an_error) {
    /* a worker that compared fp32 under 1e-2 would pass what fp32's 1e-4 refuses */
    json_t *s0 = st(0, 0, 1e-3, 0);
    json_object_set_new(s0, "atol", json_real(1e-2));
    json_t *r = iso(s0, st(0, 0, 0, 0), NULL), *v = NULL;
    int passed = 1;
    kerr e = {0};
    cr_expect_eq(gate2_decide(r, &passed, &v, &e), KOPT_E_WORKER);
    cr_expect(strstr(e.msg, "asked for") != NULL, "%s", e.msg);
    json_decref(v);
    json_decref(r);
}

Test(decide, gate2_malformed_results_are_errors_not_verdicts) {
    kerr e = {0};
    int passed = 1;
    json_t *v = NULL;
    json_t *r = json_pack("{s:[], s:[i]}", "sets", "checked", 1);
    cr_expect_eq(gate2_decide(r, &passed, &v, &e), KOPT_E_WORKER);
    json_decref(v);
    json_decref(r);
    /* counts that contradict each other */
    json_t *s0 = st(0, 0, 0, 0);
    json_object_set_new(s0, "first_mismatch", json_integer(3));
    r = iso(s0, st(0, 0, 0, 0), NULL);
    v = NULL;
    cr_expect_eq(gate2_decide(r, &passed, &v, &e), KOPT_E_WORKER);
    json_decref(v);
    json_decref(r);
}

/* A comparison against the float64 reference: max abs err `err` (`nonfin` non-finite pairs). */
static tensor_cmp c64(double err, size_t nonfin) {
    tensor_cmp c = {0};
    c.numel = 3;
    c.max_abs_err = err;
    c.n_nonfinite_mismatch = nonfin;
    c.n_mismatch = nonfin + (err > 0);
    return c;
}

Test(decide, gate3_rho_against_float64) {
    tensor_cmp base = c64(1e-6, 0), opt = c64(4e-6, 0), exact = c64(0, 0);
    double oe, be;
    double rho = gate3_rho(&opt, &base, &oe, &be);
    cr_expect_float_eq(rho, 4.0, 1e-6);
    gate3_opts o = {.rho_max = 10, .abs_bound = 5e-3};
    cr_expect(gate3_accept_rho(oe, be, 1.0, &o));
    o.rho_max = 3;
    cr_expect_not(gate3_accept_rho(oe, be, 1.0, &o));
    /* exact baseline: rho 1 when opt is exact too, infinite otherwise */
    cr_expect_float_eq(gate3_rho(&exact, &exact, &oe, &be), 1.0, 0);
    cr_expect(isinf(gate3_rho(&opt, &exact, &oe, &be)));
    /* a NaN where the reference is finite: infinite error, never accepted */
    tensor_cmp nan_opt = c64(1e-7, 1);
    cr_expect(isinf(gate3_rho(&nan_opt, &base, &oe, &be)));
    cr_expect_not(gate3_accept_rho(oe, be, 1.0, &o));
}

Test(decide, gate3_bounds_are_inclusive_and_scale_aware) {
    gate3_opts o = {.rho_max = 4.0, .abs_bound = 5e-3};
    /* rho exactly at rho_max passes, just above does not */
    cr_expect(gate3_accept_rho(4e-6, 1e-6, 1.0, &o));
    cr_expect_not(gate3_accept_rho(nextafter(4e-6, 1.0), 1e-6, 1.0, &o));
    /* the absolute bound: max(5e-3, 1e-3 * ||ref||inf), inclusive */
    o.rho_max = 1e9;
    cr_expect_float_eq(gate3_abs_bound(1.0, &o), 5e-3, 0);
    cr_expect_float_eq(gate3_abs_bound(100.0, &o), 0.1, 1e-15);
    cr_expect(gate3_accept_rho(5e-3, 1e-4, 1.0, &o));
    cr_expect_not(gate3_accept_rho(nextafter(5e-3, 1.0), 1e-4, 1.0, &o));
    /* outputs that reach ~100: an error of 0.05 is within 1e-3 * 100 (the old fixed 1e-2 refused it) */
    cr_expect(gate3_accept_rho(0.05, 0.01, 100.0, &o));
    cr_expect_not(gate3_accept_rho(0.2, 0.1, 100.0, &o));
}

Test(decide, gate3_exact_baseline_uses_the_scale_relative_test) {
    gate3_opts o = {.rho_max = 10, .abs_bound = 5e-3};
    /* baseline error below 1e-8: rho is undefined; opt must be within max(1e-8, 1e-6 * scale) */
    cr_expect(gate3_accept_rho(0, 0, 1.0, &o));
    cr_expect(gate3_accept_rho(1e-6, 5e-9, 1.0, &o));
    cr_expect_not(gate3_accept_rho(nextafter(1e-6, 1.0), 5e-9, 1.0, &o));
    cr_expect(gate3_accept_rho(1e-8, 0, 1e-5, &o));          /* tiny outputs: the 1e-8 floor */
    cr_expect_not(gate3_accept_rho(2e-8, 0, 1e-5, &o));
    /* a baseline error of exactly 1e-8 is no longer "exact": the ratio rule applies */
    cr_expect(gate3_accept_rho(5e-8, 1e-8, 1.0, &o));
    cr_expect_not(gate3_accept_rho(2e-7, 1e-8, 1.0, &o));
}

Test(decide, gate4_needs_the_interval_above_min_gain) {
    double base[40], fast[40], same[40];
    for (int i = 0; i < 40; i++) {
        base[i] = 1.0 + 0.01 * (i % 5);
        fast[i] = 0.8 * (1.0 + 0.01 * ((i + 2) % 5));
        same[i] = 1.0 + 0.01 * ((i + 1) % 5);
    }
    gate4_result r;
    kerr e = {0};
    cr_assert_eq(gate4_decide(base, fast, 40, 0.02, 1, &r, &e), 0);
    cr_expect(r.passed);
    cr_expect(r.ci.lo > 1.15 && r.ci.hi < 1.35, "[%f, %f]", r.ci.lo, r.ci.hi);
    cr_assert_eq(gate4_decide(base, same, 40, 0.02, 1, &r, &e), 0);
    cr_expect_not(r.passed);
    /* a 10% gain with min_gain 0.2 is refused */
    for (int i = 0; i < 40; i++) fast[i] = base[i] / 1.1;
    cr_assert_eq(gate4_decide(base, fast, 40, 0.2, 1, &r, &e), 0);
    cr_expect_not(r.passed);
    cr_expect_neq(gate4_decide(base, fast, 1, 0.02, 1, &r, &e), 0);
}

Test(decide, gate4_lower_end_exactly_at_the_bar_is_refused) {
    /* every ratio exactly 1.25: the interval is [1.25, 1.25]; min_gain 0.25 needs lo > 1.25 */
    double base[20], cand[20];
    for (int i = 0; i < 20; i++) { base[i] = 1.25 * (1 + i); cand[i] = 1.0 * (1 + i); }
    gate4_result r;
    kerr e = {0};
    cr_assert_eq(gate4_decide(base, cand, 20, 0.25, 3, &r, &e), 0);
    cr_expect_float_eq(r.ci.lo, 1.25, 1e-12);
    cr_expect_not(r.passed);
    cr_assert_eq(gate4_decide(base, cand, 20, 0.2499, 3, &r, &e), 0);
    cr_expect(r.passed);
}

Test(decide, gate4_physics_floor_edges) {
    double l2 = 60e6, big = 4 * 60e6;   /* the check needs I/O of at least 4x the L2 */
    cr_expect(gate4_below_floor(0.899, 1.0, big, l2));
    cr_expect_not(gate4_below_floor(0.9, 1.0, big, l2));          /* exactly at the margin: allowed */
    cr_expect_not(gate4_below_floor(0.5, 1.0, nextafter(big, 0), l2));   /* fits the L2's reach: no verdict */
    cr_expect_not(gate4_below_floor(0.5, 0, big, l2));            /* floor unknown */
    cr_expect_not(gate4_below_floor(0.5, 1.0, big, 0));           /* L2 unknown */
    cr_expect(gate4_below_floor(0, 1.0, big, l2));                /* a zero time is below any floor */
}
