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

/* gate2_decide on matching runs whose set carries `key` = value (stolen): 1 passed, 0 refused
 * (*why: the reason, or ""), -1 the worker's error (a malformed result). */
static int decide_flag(const char *key, json_t *value, char *why, size_t cap) {
    json_t *r = iso(st(0, 0, 0, 0), st(0, 0, 0, 0), NULL), *v = NULL;
    json_object_set_new(json_array_get(json_object_get(r, "sets"), 0), key, value);
    int passed = -1;
    kerr e = {0};
    int rc = gate2_decide(r, &passed, &v, &e);
    const char *reason = json_string_value(json_object_get(v, "reason"));
    snprintf(why, cap, "%s", reason ? reason : "");
    json_decref(v);
    json_decref(r);
    return rc ? (rc == KOPT_E_WORKER ? -1 : -2) : passed;
}

/* What the worker saw written where the candidate must not write, refused whatever the
 * comparisons say: the original's outputs kept as the reference (its kernel wrote into them),
 * a fence around an output or around a scratch buffer of its plan; absent or empty means
 * nothing; a value of another type is the worker's error. */
Test(decide, gate2_refuses_writes_outside_the_candidates_own_buffers) {
    char why[512];
    cr_expect_eq(decide_flag("reference_changed", json_true(), why, sizeof why), 0, "a tampered reference");
    cr_expect(strstr(why, "kept as the reference, changed while the candidate ran"), "%s", why);
    cr_expect_eq(decide_flag("outside_writes", json_pack("[i]", 1), why, sizeof why), 0, "an output's fence");
    cr_expect(strstr(why, "wrote outside its output argument 1"), "%s", why);
    cr_expect_eq(decide_flag("scratch_outside_writes", json_true(), why, sizeof why), 0, "a scratch buffer's fence");
    cr_expect(strstr(why, "wrote outside a scratch buffer of its plan"), "%s", why);
    cr_expect_eq(decide_flag("reference_changed", json_false(), why, sizeof why), 1, "unchanged: the comparisons decide");
    cr_expect_eq(decide_flag("outside_writes", json_array(), why, sizeof why), 1, "no output fence written");
    cr_expect_eq(decide_flag("scratch_outside_writes", json_false(), why, sizeof why), 1, "no scratch fence written");
    cr_expect_eq(decide_flag("reference_changed", json_integer(1), why, sizeof why), -1, "not a boolean");
    cr_expect_eq(decide_flag("scratch_outside_writes", json_integer(1), why, sizeof why), -1, "not a boolean");
    cr_expect_eq(decide_flag("outside_writes", json_object(), why, sizeof why), -1, "not a list");
    cr_expect_eq(decide_flag("outside_writes", json_pack("[s]", "1"), why, sizeof why), -1, "not a list of arguments");
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
    cr_expect(gate3_accept_rho(oe, be, 1.0, 0, &o));
    o.rho_max = 3;
    cr_expect_not(gate3_accept_rho(oe, be, 1.0, 0, &o));
    /* exact baseline: rho 1 when opt is exact too, infinite otherwise */
    cr_expect_float_eq(gate3_rho(&exact, &exact, &oe, &be), 1.0, 0);
    cr_expect(isinf(gate3_rho(&opt, &exact, &oe, &be)));
    /* a NaN where the reference is finite: infinite error, never accepted */
    tensor_cmp nan_opt = c64(1e-7, 1);
    cr_expect(isinf(gate3_rho(&nan_opt, &base, &oe, &be)));
    cr_expect_not(gate3_accept_rho(oe, be, 1.0, 0, &o));
}

Test(decide, gate3_bounds_are_inclusive_and_scale_aware) {
    gate3_opts o = {.rho_max = 4.0, .abs_bound = 5e-3};
    /* rho exactly at rho_max passes, just above does not */
    cr_expect(gate3_accept_rho(4e-6, 1e-6, 1.0, 0, &o));
    cr_expect_not(gate3_accept_rho(nextafter(4e-6, 1.0), 1e-6, 1.0, 0, &o));
    /* the absolute bound: max(5e-3, 1e-3 * ||ref||inf), inclusive */
    o.rho_max = 1e9;
    cr_expect_float_eq(gate3_abs_bound(1.0, 0, &o), 5e-3, 0);
    cr_expect_float_eq(gate3_abs_bound(100.0, 0, &o), 0.1, 1e-15);
    cr_expect(gate3_accept_rho(5e-3, 1e-4, 1.0, 0, &o));
    cr_expect_not(gate3_accept_rho(nextafter(5e-3, 1.0), 1e-4, 1.0, 0, &o));
    /* outputs that reach ~100: an error of 0.05 is within 1e-3 * 100 (the old fixed 1e-2 refused it) */
    cr_expect(gate3_accept_rho(0.05, 0.01, 100.0, 0, &o));
    cr_expect_not(gate3_accept_rho(0.2, 0.1, 100.0, 0, &o));
}

/* A bf16 model's layer norm on inputs x1e3 (seen on the H200): the compiled baseline is 0.0282 from
 * float64 at outputs up to ~5 (under one bf16 ulp there); a candidate with the same error was
 * refused by the fp32-sized bound 5e-3. The bound now grows to 4 u ||ref||inf of the output dtype. */
Test(decide, gate3_bound_follows_the_output_dtype_rounding) {
    gate3_opts o = {.rho_max = 10, .abs_bound = 5e-3};
    double bf16 = tensor_unit_roundoff("bfloat16"), f16 = tensor_unit_roundoff("float16");
    cr_expect_float_eq(bf16, 1.0 / 256, 0);
    cr_expect_float_eq(f16, 1.0 / 2048, 0);
    cr_expect_float_eq(tensor_unit_roundoff("float32"), ldexp(1.0, -24), 0);
    cr_expect_float_eq(tensor_unit_roundoff("float64"), ldexp(1.0, -53), 0);
    cr_expect_float_eq(tensor_unit_roundoff("fp64"), ldexp(1.0, -53), 0);
    cr_expect_float_eq(tensor_unit_roundoff("int64"), 0, 0);
    cr_expect_float_eq(tensor_unit_roundoff(NULL), 0, 0);
    /* (a baseline as far off as the candidate is now accepted without the dtype term: see
     * gate3_bound_never_below_the_baseline_error; here the baseline is closer) */
    cr_expect_not(gate3_accept_rho(0.0282, 0.01, 5.0, 0, &o));
    cr_expect(gate3_accept_rho(0.0282, 0.01, 5.0, bf16, &o));
    /* inclusive at 4 u ||ref||inf, and still the ratio rule under it */
    double b = gate3_abs_bound(5.0, bf16, &o);
    cr_expect_float_eq(b, 4.0 * 5.0 / 256, 1e-15);
    cr_expect(gate3_accept_rho(b, b / 10, 5.0, bf16, &o));
    cr_expect_not(gate3_accept_rho(nextafter(b, 1.0), b / 10, 5.0, bf16, &o));
    cr_expect_not(gate3_accept_rho(b, b / 11, 5.0, bf16, &o));
    /* float16: 4 u = 1.95e-3 of the scale, above the 1e-3 of fp32 outputs */
    cr_expect_float_eq(gate3_abs_bound(100.0, f16, &o), 400.0 / 2048, 1e-15);
    /* float32: the rounding term stays below 1e-3 of the scale and changes nothing */
    cr_expect_float_eq(gate3_abs_bound(100.0, tensor_unit_roundoff("float32"), &o), 0.1, 1e-15);
    cr_expect_float_eq(gate3_abs_bound(1.0, bf16, &o), 4.0 / 256, 1e-15);
    cr_expect_float_eq(gate3_abs_bound(0.5, bf16, &o), 2.0 / 256, 1e-15);
}

/* Held-out hx01 (fp32 Conv1d + GroupNorm + LeakyReLU) on the H100, constant rows: the compiled
 * baseline is 0.0261 from float64 at outputs up to ~14.5 (bound 1e-3 x 14.5 = 0.0145; rstd ~
 * 1/sqrt(eps) magnifies the mean's fp32 rounding), and a region candidate with exactly that error
 * was refused. Beyond the bound, opt may be as far as the baseline and no further. */
Test(decide, gate3_bound_never_below_the_baseline_error) {
    gate3_opts o = {.rho_max = 10, .abs_bound = 5e-3};
    double f32 = tensor_unit_roundoff("float32");
    cr_expect_float_eq(gate3_abs_bound(14.5, f32, &o), 0.0145, 1e-12);
    cr_expect(gate3_accept_rho(0.0261, 0.0261, 14.5, f32, &o));
    cr_expect(gate3_accept_rho(0.02, 0.0261, 14.5, f32, &o));
    cr_expect_not(gate3_accept_rho(nextafter(0.0261, 1.0), 0.0261, 14.5, f32, &o));
    cr_expect_not(gate3_accept_rho(0.2, 0.0261, 14.5, f32, &o));
    /* a baseline within the bound leaves the bound as it was */
    cr_expect(gate3_accept_rho(0.0145, 0.01, 14.5, f32, &o));
    cr_expect_not(gate3_accept_rho(nextafter(0.0145, 1.0), 0.01, 14.5, f32, &o));
    /* rho still applies under the baseline's error: it can only refuse less than the bound does */
    cr_expect_not(gate3_accept_rho(nextafter(0.0145, 1.0), 0.0014, 14.5, f32, &o));
}

Test(decide, gate3_exact_baseline_uses_the_scale_relative_test) {
    gate3_opts o = {.rho_max = 10, .abs_bound = 5e-3};
    /* baseline error below 1e-8: rho is undefined; opt must be within max(1e-8, 1e-6 * scale) */
    cr_expect(gate3_accept_rho(0, 0, 1.0, 0, &o));
    cr_expect(gate3_accept_rho(1e-6, 5e-9, 1.0, 0, &o));
    cr_expect_not(gate3_accept_rho(nextafter(1e-6, 1.0), 5e-9, 1.0, 0, &o));
    cr_expect(gate3_accept_rho(1e-8, 0, 1e-5, 0, &o));          /* tiny outputs: the 1e-8 floor */
    cr_expect_not(gate3_accept_rho(2e-8, 0, 1e-5, 0, &o));
    /* a baseline error of exactly 1e-8 is no longer "exact": the ratio rule applies */
    cr_expect(gate3_accept_rho(5e-8, 1e-8, 1.0, 0, &o));
    cr_expect_not(gate3_accept_rho(2e-7, 1e-8, 1.0, 0, &o));
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

Test(decide, gate4_host_check_edges) {
    /* every ratio exactly 1: the interval is [1, 1], not below 1 -- not slower (lo < 1 alone is not) */
    double base[12], same[12], slow[12], noisy[12];
    for (int i = 0; i < 12; i++) {
        base[i] = 1.0 + 0.1 * i;
        same[i] = base[i];
        slow[i] = base[i] * 1.05;
        noisy[i] = base[i] * (i % 2 ? 1.05 : 0.97);
    }
    stats_ci ci;
    int slower = -1;
    kerr e = {0};
    cr_assert_eq(gate4_host_decide(base, same, 12, 5, &ci, &slower, &e), 0);
    cr_expect_float_eq(ci.hi, 1.0, 1e-12);
    cr_expect_eq(slower, 0);
    cr_assert_eq(gate4_host_decide(base, slow, 12, 5, &ci, &slower, &e), 0);
    cr_expect(ci.hi < 1.0 && ci.estimate < 0.96, "[%f, %f]", ci.lo, ci.hi);
    cr_expect_eq(slower, 1);
    cr_assert_eq(gate4_host_decide(base, noisy, 12, 5, &ci, &slower, &e), 0);
    cr_expect(ci.lo < 1.0 && ci.hi >= 1.0, "[%f, %f]", ci.lo, ci.hi);   /* straddles 1: not refused */
    cr_expect_eq(slower, 0);
    cr_expect_eq(ci.resamples, 4000);
    cr_expect_float_eq(ci.conf, 0.95, 1e-12);
    /* half a percent slower throughout: the interval ends just below 1, refused */
    for (int i = 0; i < 12; i++) noisy[i] = base[i] * 1.005;
    cr_assert_eq(gate4_host_decide(base, noisy, 12, 5, &ci, &slower, &e), 0);
    cr_expect(ci.hi > 0.99 && ci.hi < 1.0, "[%f, %f]", ci.lo, ci.hi);
    cr_expect_eq(slower, 1);
    cr_expect_eq(gate4_host_decide(base, slow, 2, 5, &ci, &slower, &e), 0);   /* two rounds suffice */
    cr_expect_eq(slower, 1);
    cr_expect_eq(gate4_host_decide(base, slow, 1, 5, &ci, &slower, &e), KOPT_E_INTERNAL);
    cr_expect(ci.estimate == 0 && ci.hi == 0 && slower == 0, "an error leaves a zeroed interval");
    slow[3] = NAN;   /* a non-finite sample: unusable */
    cr_expect_eq(gate4_host_decide(base, slow, 12, 5, &ci, &slower, &e), KOPT_E_WORKER);
    cr_expect_eq(slower, 0);
}

Test(decide, gate4_physics_floor_edges) {
    double l2 = 60e6, big = 4 * 60e6;   /* the check needs I/O of at least 4x the L2 */
    cr_expect(gate4_below_floor(0.899, 1.0, big, l2));
    cr_expect_not(gate4_below_floor(0.9, 1.0, big, l2));          /* exactly at the margin: allowed */
    cr_expect_not(gate4_below_floor(0.5, 1.0, nextafter(big, 0), l2));   /* fits the L2's reach: no verdict */
    cr_expect_not(gate4_below_floor(0.5, 0, big, l2));            /* floor unknown */
    cr_expect_not(gate4_below_floor(0.5, 1.0, big, 0));           /* L2 unknown */
    cr_expect(gate4_below_floor(0, 1.0, big, l2));                /* a zero time is below any floor */
    cr_expect(gate4_below_floor(0.4, 0.5, big, l2));              /* any known floor, however small */
    cr_expect(gate4_below_floor(1.79, 2.0, big, l2));             /* the margin scales with the floor */
    cr_expect_not(gate4_below_floor(1.8, 2.0, big, l2));
    cr_expect(gate4_below_floor(0.5, 1.0, 4.0, 1.0));             /* any known L2, however small */
    cr_expect_not(gate4_below_floor(0.5, 1.0, big, -1));
}

/* The verdict's figures per argument: the first mismatch when there is one, shape mismatches
 * flagged, later runs under self_consistency with their run number. */
Test(decide, gate2_verdict_figures) {
    json_t *shape = json_pack("{s:b, s:[i], s:[i, i], s:s, s:s, s:i}", "shape_mismatch", 1, "shape", 100, "got_shape", 10,
                              10, "dtype", "float32", "got_dtype", "float32", "numel", 100);
    json_t *v = NULL;
    cr_expect_eq(decide(iso(st(1, 42, 0.01, 0), shape, NULL), &v), 0);
    json_t *set = json_array_get(json_object_get(v, "sets"), 0);
    json_t *a = json_array_get(json_object_get(set, "args"), 0);
    cr_expect_eq(json_integer_value(json_object_get(a, "first_mismatch")), 42);
    cr_expect_null(json_object_get(a, "shape_mismatch"));
    json_t *r1 = json_array_get(json_object_get(set, "self_consistency"), 0);
    cr_expect(json_is_true(json_object_get(r1, "shape_mismatch")));
    cr_expect_eq(json_integer_value(json_object_get(r1, "run")), 1);
    cr_expect_null(json_object_get(r1, "first_mismatch"));
    json_decref(v);
    cr_expect_eq(decide(iso(st(0, 0, 0, 0), st(0, 0, 0, 0), NULL), &v), 1);
    a = json_array_get(json_object_get(json_array_get(json_object_get(v, "sets"), 0), "args"), 0);
    cr_expect_null(json_object_get(a, "first_mismatch"), "a clean comparison has no first mismatch");
    cr_expect_null(json_object_get(v, "reason"));
    json_decref(v);
}

Test(decide, gate2_reasons_name_the_run_the_argument_and_the_input) {
    json_t *v = NULL;
    /* a plain failure of the first run is not called a race */
    cr_expect_eq(decide(iso(st(1, 42, 0.01, 0), st(0, 0, 0, 0), NULL), &v), 0);
    const char *why = json_string_value(json_object_get(v, "reason"));
    cr_expect(why && !strstr(why, "race") && !strstr(why, "disagrees"), "%s", why);
    json_decref(v);
    /* the second run disagreeing is named as run 2 */
    cr_expect_eq(decide(iso(st(0, 0, 0, 0), st(1, 7, 0.5, 0), NULL), &v), 0);
    why = json_string_value(json_object_get(v, "reason"));
    cr_expect(why && strstr(why, "run 2 of the candidate disagrees with its first run"), "%s", why);
    json_decref(v);
    /* the first written read-only input is named */
    cr_expect_eq(decide(iso(st(0, 0, 0, 0), st(0, 0, 0, 0), json_pack("[i, i]", 3, 5)), &v), 0);
    why = json_string_value(json_object_get(v, "reason"));
    cr_expect(why && strstr(why, "read-only input argument 3"), "%s", why);
    json_decref(v);
    /* a malformed later run is an error that names it */
    json_t *bad = st(0, 0, 0, 0);
    json_object_set_new(bad, "numel", json_integer(7));
    json_t *r = iso(st(0, 0, 0, 0), bad, NULL);
    int passed = 1;
    kerr e = {0};
    cr_expect_eq(gate2_decide(r, &passed, &v, &e), KOPT_E_WORKER);
    cr_expect(strstr(e.msg, "isolate, set captured, argument 1, run 2") != NULL, "%s", e.msg);
    json_decref(v);
    json_decref(r);
}

/* Two sets of two arguments: the reason is the first failure only. */
Test(decide, gate2_reason_is_the_first_failure) {
    json_t *r = json_pack("{s:[{s:s, s:[{s:i, s:[o]}, {s:i, s:[o]}], s:[]}, {s:s, s:[{s:i, s:[o]}, {s:i, s:[o]}], s:[]}],"
                          " s:[i, i]}",
                          "sets", "name", "captured", "args", "arg", 1, "runs", st(0, 0, 0, 0), "arg", 2, "runs",
                          st(0, 0, 0, 0), "inputs_changed", "name", "seed1", "args", "arg", 1, "runs", st(0, 0, 0, 0),
                          "arg", 2, "runs", st(2, 11, 0.5, 0), "inputs_changed", "checked", 1, 2);
    json_t *v = NULL;
    cr_expect_eq(decide(r, &v), 0);
    const char *why = json_string_value(json_object_get(v, "reason"));
    cr_expect_str_eq(why, "input set seed1, argument 2: 2 of 100 elements differ; max abs err 0.5 at [11] (ref 2, got 2.5)");
    json_decref(v);
    r = json_pack("{s:[{s:s, s:[{s:i, s:[o]}, {s:i, s:[o]}], s:[]}], s:[i, i]}", "sets", "name", "captured", "args", "arg",
                  1, "runs", st(1, 5, 0.5, 0), "arg", 2, "runs", st(2, 11, 0.5, 0), "inputs_changed", "checked", 1, 2);
    cr_expect_eq(decide(r, &v), 0);
    why = json_string_value(json_object_get(v, "reason"));
    cr_expect(why && strstr(why, "argument 1:") && !strstr(why, "argument 2"), "%s", why);
    json_decref(v);
}

/* A result that does not say what the gate needs is kopt's error (the worker misbehaved), never
 * a verdict about the candidate. */
Test(decide, gate2_incomplete_results_are_errors) {
    const char *const cases[] = {
        "{\"sets\": [{\"args\": [{\"arg\": 1, \"runs\": [R]}], \"inputs_changed\": []}], \"checked\": [1]}",    /* no name */
        "{\"sets\": [{\"name\": \"s\", \"args\": {}, \"inputs_changed\": []}], \"checked\": [1]}",             /* args */
        "{\"sets\": [{\"name\": \"s\", \"args\": [{\"arg\": 1, \"runs\": [R]}]}], \"checked\": [1]}",          /* changed */
        "{\"sets\": [{\"name\": \"s\", \"args\": [{\"arg\": 1, \"runs\": [R]}], \"inputs_changed\": []}], \"checked\": [1, 2]}",
        "{\"sets\": [{\"name\": \"s\", \"args\": [{\"arg\": 1, \"runs\": []}], \"inputs_changed\": []}], \"checked\": [1]}",
        "{\"sets\": [{\"name\": \"s\", \"args\": [{\"arg\": 1, \"runs\": {}}], \"inputs_changed\": []}], \"checked\": [1]}",
        "{\"sets\": {}, \"checked\": [1]}",
    };
    const char *const why[] = {"incomplete", "incomplete", "incomplete", "incomplete", "has no runs", "has no runs",
                               "no input sets"};
    json_t *good = st(1, 3, 0.5, 0);   /* a failing run: only an error may stop the verdict */
    char *run = json_dumps(good, JSON_COMPACT);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kbuf b = KBUF_INIT;
        for (const char *p = cases[i]; *p; p++) {
            if (*p == 'R') kbuf_puts(&b, run);
            else kbuf_putc(&b, *p);
        }
        json_error_t je;
        json_t *r = json_loads(kbuf_str(&b), 0, &je);
        cr_assert_not_null(r, "case %zu: %s", i, je.text);
        int passed = 1;
        json_t *v = NULL;
        kerr e = {0};
        cr_expect_eq(gate2_decide(r, &passed, &v, &e), KOPT_E_WORKER, "case %zu accepted", i);
        cr_expect(strstr(e.msg, why[i]) != NULL, "case %zu: %s", i, e.msg);
        json_decref(v);
        json_decref(r);
        kbuf_free(&b);
    }
    free(run);
    json_decref(good);
}

Test(decide, gate3_rho_of_a_nan_error_is_infinite) {
    tensor_cmp base = c64(1e-6, 0), opt = c64(NAN, 0);
    double oe, be;
    cr_expect(isinf(gate3_rho(&opt, &base, &oe, &be)));
    cr_expect(isnan(oe));
    cr_expect_float_eq(be, 1e-6, 0);
    cr_expect_not(gate3_accept_rho(oe, be, 1.0, 0, NULL));
    /* opt exact, baseline not: rho 0 */
    tensor_cmp exact = c64(0, 0);
    cr_expect_float_eq(gate3_rho(&exact, &base, &oe, &be), 0.0, 0);
}

Test(decide, gate3_defaults_when_options_are_absent_or_zero) {
    gate3_opts zero = {0};
    /* the absolute bound's floor is 5e-3 by default */
    cr_expect_float_eq(gate3_abs_bound(1.0, 0, NULL), 5e-3, 0);
    cr_expect_float_eq(gate3_abs_bound(1.0, 0, &zero), 5e-3, 0);
    cr_expect_float_eq(gate3_abs_bound(INFINITY, 0, NULL), 5e-3, 0);   /* a non-finite scale is ignored */
    cr_expect_float_eq(gate3_abs_bound(20.0, 0, NULL), 0.02, 1e-18);
    gate3_opts f = {.abs_bound = 1e-2};
    cr_expect_float_eq(gate3_abs_bound(1.0, 0, &f), 1e-2, 0);
    /* rho_max is 10 by default, inclusive: 10x passes, 10.05x does not */
    cr_expect(gate3_accept_rho(0.01, 0.001, 100.0, 0, NULL));
    cr_expect(gate3_accept_rho(0.01, 0.001, 100.0, 0, &zero));
    cr_expect_not(gate3_accept_rho(0.01005, 0.001, 100.0, 0, NULL));
    cr_expect_not(gate3_accept_rho(0.01005, 0.001, 100.0, 0, &zero));
    /* a rho_max below 1 is used as given */
    gate3_opts tight = {.rho_max = 0.5};
    cr_expect(gate3_accept_rho(5e-4, 1e-3, 1.0, 0, &tight));
    cr_expect_not(gate3_accept_rho(6e-4, 1e-3, 1.0, 0, &tight));
    /* the default absolute bound applies too: 6e-3 at rho 2 is refused for outputs of scale 1 */
    cr_expect_not(gate3_accept_rho(6e-3, 3e-3, 1.0, 0, NULL));
    cr_expect(gate3_accept_rho(5e-3, 3e-3, 1.0, 0, NULL));
}

Test(decide, gate3_refuses_impossible_errors_and_unknown_scales) {
    gate3_opts o = {.rho_max = 10, .abs_bound = 5e-3};
    /* an error below zero is not a measurement */
    cr_expect_not(gate3_accept_rho(-1e-9, 0, 1.0, 0, &o));
    cr_expect_not(gate3_accept_rho(-1e-9, 1e-6, 1.0, 0, &o));
    cr_expect_not(gate3_accept_rho(INFINITY, 1e-6, 1.0, 0, &o));
    /* exact baseline and a non-finite scale: only the 1e-8 floor */
    cr_expect(gate3_accept_rho(1e-8, 0, INFINITY, 0, &o));
    cr_expect_not(gate3_accept_rho(2e-8, 0, INFINITY, 0, &o));
    /* a large scale: 1e-6 of it */
    cr_expect(gate3_accept_rho(1e-3, 0, 1000.0, 0, &o));
    cr_expect_not(gate3_accept_rho(1.01e-3, 0, 1000.0, 0, &o));
}

Test(decide, gate4_interval_is_the_95_percent_paired_bootstrap) {
    double base[12], cand[12];
    for (int i = 0; i < 12; i++) {
        base[i] = 1.0 + 0.013 * ((i * 7) % 12);
        cand[i] = 0.8 + 0.011 * ((i * 5) % 12);
    }
    gate4_result r;
    kerr e = {0};
    cr_assert_eq(gate4_decide(base, cand, 12, 0.02, 5, &r, &e), 0, "%s", e.msg);
    stats_ci want;
    cr_assert_eq(stats_speedup_ci_paired(base, cand, 12, 0.95, 4000, 5, &want), 0);
    cr_expect(r.ci.lo == want.lo && r.ci.hi == want.hi && r.ci.estimate == want.estimate);
    cr_expect(r.ci.conf == 0.95 && r.ci.resamples == 4000);
    cr_expect_float_eq(r.base_ms, stats_median(base, 12), 0);
    cr_expect_float_eq(r.cand_ms, stats_median(cand, 12), 0);
    cr_expect(r.passed);
    /* two rounds are enough to decide; unusable samples are the worker's error */
    cr_expect_eq(gate4_decide(base, cand, 2, 0.02, 5, &r, &e), 0, "%s", e.msg);
    double zero[3] = {0, 0, 0};
    cr_expect_eq(gate4_decide(base, zero, 3, 0.02, 5, &r, &e), KOPT_E_WORKER);
    cr_expect_not(r.passed);
}

/* Statistics of a summation-order difference: `bad` finite mismatches of `err` each, on an
 * output whose scale (max |ref|) is `scale`, under fp32's default tolerance. */
static json_t *st_scaled(size_t bad, double err, double scale, const char *dtype) {
    json_t *o = st(bad, 7, err, 0);
    json_object_set_new(o, "ref_abs_max", json_real(scale));
    json_object_set_new(o, "sum_sq_ref", json_real(100.0 * scale * scale));
    json_object_set_new(o, "dtype", json_string(dtype));
    json_object_set_new(o, "got_dtype", json_string(dtype));
    return o;
}

Test(decide, gate2_defers_a_summation_order_difference_to_float64) {
    /* 5 elements near zero off by 3e-4 on an output of scale 1000: 3e-7 of the scale */
    json_t *v = NULL;
    cr_expect_eq(decide(iso(st_scaled(5, 3e-4, 1000.0, "float32"), st_scaled(5, 3e-4, 1000.0, "float32"), NULL), &v), 1);
    cr_expect(json_is_true(json_object_get(v, "passed")));
    const char *why = json_string_value(json_object_get(v, "deferred"));
    cr_expect(why && strstr(why, "float64"), "%s", why ? why : "(none)");
    json_t *a = json_array_get(json_object_get(json_array_get(json_object_get(v, "sets"), 0), "args"), 0);
    cr_expect(json_is_true(json_object_get(a, "deferred_to_float64")));
    json_decref(v);
}

Test(decide, gate2_reorder_bound_edges) {
    /* at exactly 1e-5 of the scale: deferred; just above: refused (bf16/TF32 are far above) */
    json_t *v = NULL;
    cr_expect_eq(decide(iso(st_scaled(1, 1e-2, 1000.0, "float32"), st_scaled(1, 1e-2, 1000.0, "float32"), NULL), &v), 1);
    json_decref(v);
    cr_expect_eq(decide(iso(st_scaled(1, 1.0001e-2, 1000.0, "float32"), st_scaled(1, 1e-2, 1000.0, "float32"), NULL), &v), 0);
    json_decref(v);
    /* a low-precision result: 4e-3 of the scale */
    cr_expect_eq(decide(iso(st_scaled(50, 4.0, 1000.0, "float32"), st_scaled(50, 4.0, 1000.0, "float32"), NULL), &v), 0);
    json_decref(v);
}

Test(decide, gate2_reorder_rule_never_covers_nan_shape_or_other_dtypes) {
    tensor_cmp c;
    kerr e = {0};
    json_t *s = st_scaled(5, 3e-4, 1000.0, "float32");
    cr_assert_eq(tensor_cmp_from_json(s, 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_expect_eq(gate2_reorder_only(&c), 1);
    c.n_nonfinite_mismatch = 1;   /* an unwritten (NaN-poisoned) element is never a rounding */
    cr_expect_eq(gate2_reorder_only(&c), 0);
    c.n_nonfinite_mismatch = 0;
    c.shape_mismatch = 1;
    cr_expect_eq(gate2_reorder_only(&c), 0);
    c.shape_mismatch = 0;
    c.norm_ratio = 2e-5;          /* many elements off: the norm says so */
    cr_expect_eq(gate2_reorder_only(&c), 0);
    c.norm_ratio = 1e-7;
    strcpy(c.got_dtype, "bfloat16");
    cr_expect_eq(gate2_reorder_only(&c), 0);
    strcpy(c.dtype, "bfloat16");  /* half precision has tolerances of its own, no deferral */
    cr_expect_eq(gate2_reorder_only(&c), 0);
    c.pass = 1;
    cr_expect_eq(gate2_reorder_only(&c), 0);
    json_decref(s);
}

/* The deferral is relative to the output's scale, whatever tolerance made the comparison fail:
 * on a small scale too, each limit inclusive; never without a positive scale. */
Test(decide, gate2_reorder_rule_edges_of_scale_and_norm) {
    tensor_cmp c = {0};
    strcpy(c.dtype, "float32");
    strcpy(c.got_dtype, "float32");
    c.ref_abs_max = 0.5;
    c.max_abs_err = 4e-6;          /* 8e-6 of the scale */
    c.norm_ratio = 1e-6;
    cr_expect_eq(gate2_reorder_only(&c), 1, "a scale below 1 is a scale");
    c.norm_ratio = GATE2_REORDER_REL;   /* the norm's limit is inclusive */
    cr_expect_eq(gate2_reorder_only(&c), 1);
    c.norm_ratio = nextafter(GATE2_REORDER_REL, 1.0);
    cr_expect_eq(gate2_reorder_only(&c), 0);
    c.norm_ratio = 0;
    c.max_abs_err = GATE2_REORDER_REL * c.ref_abs_max;   /* so is the error's */
    cr_expect_eq(gate2_reorder_only(&c), 1);
    c.max_abs_err = nextafter(GATE2_REORDER_REL * c.ref_abs_max, 1.0);
    cr_expect_eq(gate2_reorder_only(&c), 0);
    /* an all-zero reference has no scale to be relative to: no deferral, even of a zero error */
    c.ref_abs_max = 0;
    c.max_abs_err = 0;
    cr_expect_eq(gate2_reorder_only(&c), 0);
    c.ref_abs_max = INFINITY;
    cr_expect_eq(gate2_reorder_only(&c), 0);
    /* float64 results are deferred like float32 ones */
    strcpy(c.dtype, "float64");
    strcpy(c.got_dtype, "float64");
    c.ref_abs_max = 2.0;
    c.max_abs_err = 1e-5;
    cr_expect_eq(gate2_reorder_only(&c), 1);
}

/* The count rule (measured on the H200, tests/problems/17_layernorm_bf16.py): torch.compile's
 * bf16 layer norm has 0 elements off float64 by more than 1/16 of their value on every input
 * set, while flushing |y| < 0.002 makes 54,352 of 33.5M such elements and still passes the
 * bound at the largest magnitude. Limit: rho_max * base + 64 + 1e-6 * numel, inclusive. */
Test(decide, gate3_count_rule_limits_elements_far_off_their_value) {
    gate3_opts o = {.rho_max = 10, .abs_bound = 5e-3};
    size_t n = 33554432;   /* 4096 x 8192 */
    cr_expect_eq(gate3_count_limit(0, n, &o), 64 + 33);
    cr_expect(97 <= gate3_count_limit(0, n, &o));
    cr_expect_not(98 <= gate3_count_limit(0, n, &o));
    cr_expect_not(54352 <= gate3_count_limit(0, n, &o));
    /* the baseline's own count scales the limit by rho_max (04_layernorm, inputs +1e3: 8,773) */
    cr_expect_eq(gate3_count_limit(8773, n, &o), 87730 + 64 + 33);
    cr_expect(87827 <= gate3_count_limit(8773, n, &o));
    cr_expect_not(87828 <= gate3_count_limit(8773, n, &o));
    o.rho_max = 4;
    cr_expect_eq(gate3_count_limit(100, 0, &o), 464);
    /* rho_max 0 means the default 10; small outputs keep the slack */
    cr_expect_eq(gate3_count_limit(1, 3, NULL), 74);
    cr_expect(3 <= gate3_count_limit(0, 3, NULL));
    /* the default rho_max is 10 exactly; an explicit 1 is used as given, 0 means the default */
    cr_expect_eq(gate3_count_limit(10, 0, NULL), 164);
    gate3_opts one = {.rho_max = 1}, zero = {.rho_max = 0};
    cr_expect_eq(gate3_count_limit(5, 0, &one), 69);
    cr_expect_eq(gate3_count_limit(10, 0, &zero), 164);
    /* never wraps: also a limit of exactly 2^64 as a double saturates */
    cr_expect_eq(gate3_count_limit(SIZE_MAX / 2, SIZE_MAX, &o), SIZE_MAX);
    cr_expect_eq(gate3_count_limit((size_t)1 << 62, 0, &o), SIZE_MAX);
}

/* Gate 4's re-check of timed outputs on fresh contents: at most GATE4_RECHECK_FRACTION of an
 * output's elements off, counted exactly for integer outputs and past the tolerance (plus
 * non-finite mismatches) for float ones; a mismatch of form disagrees whatever the counts. */
Test(decide, gate4_recheck_at_its_edges) {
    gate4_recheck_out o = {.numel = 4000, .n_mismatch = 3000};
    cr_expect(gate4_recheck_agrees(&o), "a float output: exact differences are rounding");
    o.n_rel_err = 4;
    cr_expect(gate4_recheck_agrees(&o), "4 of 4000 off: at the fraction, agrees");
    o.n_rel_err = 5;
    cr_expect_not(gate4_recheck_agrees(&o), "5 of 4000: past it");
    o.n_rel_err = 3;
    o.n_nonfinite = 1;
    cr_expect(gate4_recheck_agrees(&o), "3 off + 1 non-finite: 4, at the fraction");
    o.n_nonfinite = 2;
    cr_expect_not(gate4_recheck_agrees(&o), "non-finite mismatches count as off");
    gate4_recheck_out i = {.integer = 1, .numel = 2000, .n_mismatch = 2, .n_rel_err = 0};
    cr_expect(gate4_recheck_agrees(&i), "an integer output: 2 of 2000 different (ties), at the fraction");
    i.n_mismatch = 3;
    cr_expect_not(gate4_recheck_agrees(&i), "3 of 2000 different");
    i.n_mismatch = 0;
    i.n_rel_err = 2000;
    cr_expect(gate4_recheck_agrees(&i), "an integer output is judged by its exact count only");
    gate4_recheck_out s = {.numel = 1, .n_rel_err = 1};
    cr_expect_not(gate4_recheck_agrees(&s), "a scalar off: disagrees");
    s.n_rel_err = 0;
    cr_expect(gate4_recheck_agrees(&s));
    s.mismatch = 1;
    cr_expect_not(gate4_recheck_agrees(&s), "another shape or number of outputs");
    gate4_recheck_out neg = {.numel = -1};
    cr_expect_not(gate4_recheck_agrees(&neg), "no element count: nothing was compared");
    gate4_recheck_out empty = {.numel = 0};
    cr_expect(gate4_recheck_agrees(&empty), "an empty output agrees");
}

/* The re-checked rounds a timing owes per candidate: GATE4_RECHECK_ROUNDS, or every round when
 * there are fewer. */
Test(decide, gate4_recheck_want_at_its_edges) {
    int want[][2] = {{0, 0}, {1, 1}, {2, 2}, {7, 7}, {8, 8}, {9, 8}, {40, 8}, {-3, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect_eq(gate4_recheck_want(want[i][0]), want[i][1], "%d rounds: %d re-checked, got %d", want[i][0],
                     want[i][1], gate4_recheck_want(want[i][0]));
}

/* The as-called rounds a host timing re-checks per candidate: GATE4_HOST_CHECKED_ROUNDS (3), or
 * every host round when there are fewer (gate 4's 12, the 36 added: 3 each). */
Test(decide, gate4_host_checked_want_at_its_edges) {
    int want[][2] = {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 3}, {12, 3}, {36, 3}, {-1, 0}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_expect_eq(gate4_host_checked_want(want[i][0]), want[i][1], "%d host rounds: %d re-checked, got %d",
                     want[i][0], want[i][1], gate4_host_checked_want(want[i][0]));
}
