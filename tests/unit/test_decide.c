/* Gate 2-4 verdicts on synthetic data (src/gates/decide.h). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/decide.h"
#include "util/buf.h"
#include "util/fs.h"

static char *g_dir;

static void setup(void) {
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-decide", &g_dir, &e), 0);
}
static void teardown(void) {
    fs_rmtree(g_dir);
    free(g_dir);
}

/* Write n float32 values base[i] (+ delta at index `at`) and return the file description. */
static json_t *f32(const char *name, size_t n, double delta, size_t at, double nan_from) {
    char *path = fs_join(g_dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    for (size_t i = 0; i < n; i++) {
        float v = (float)(((int)(i % 13) - 6) * 0.37);
        if (i == at) v += (float)delta;
        if ((double)i >= nan_from) v = NAN;
        fwrite(&v, sizeof v, 1, f);
    }
    fclose(f);
    json_t *d = json_pack("{s:s, s:s, s:[i], s:i}", "path", path, "dtype", "float32", "shape", (int)n, "numel", (int)n);
    free(path);
    return d;
}

static json_t *iso(json_t *orig, json_t *c0, json_t *c1) {
    return json_pack("{s:[{s:s, s:{s:[o], s:[o], s:[o]}}], s:[i]}", "sets", "name", "captured", "runs", "orig", orig,
                     "cand0", c0, "cand1", c1, "checked", 1);
}

TestSuite(decide, .init = setup, .fini = teardown);

Test(decide, gate2_passes_equal_outputs) {
    json_t *r = iso(f32("o", 100, 0, 0, 1e9), f32("a", 100, 0, 0, 1e9), f32("b", 100, 0, 0, 1e9));
    int passed = 0;
    json_t *v = NULL;
    kerr e = {0};
    cr_assert_eq(gate2_decide(r, &passed, &v, &e), 0, "%s", e.msg);
    cr_expect(passed);
    cr_expect(json_is_true(json_object_get(v, "passed")));
    json_decref(v);
    json_decref(r);
}

Test(decide, gate2_refuses_one_wrong_element_and_names_it) {
    json_t *r = iso(f32("o", 100, 0, 0, 1e9), f32("a", 100, 0.01, 42, 1e9), f32("b", 100, 0.01, 42, 1e9));
    int passed = 1;
    json_t *v = NULL;
    kerr e = {0};
    cr_assert_eq(gate2_decide(r, &passed, &v, &e), 0, "%s", e.msg);
    cr_expect_not(passed);
    const char *why = json_string_value(json_object_get(v, "reason"));
    cr_assert_not_null(why);
    cr_expect(strstr(why, "argument 1") && strstr(why, "[42]"), "%s", why);
    json_t *a = json_array_get(json_object_get(json_array_get(json_object_get(v, "sets"), 0), "args"), 0);
    cr_expect_eq(json_integer_value(json_object_get(a, "mismatches")), 1);
    json_decref(v);
    json_decref(r);
}

Test(decide, gate2_refuses_unwritten_tail_left_as_nan_poison) {
    json_t *r = iso(f32("o", 100, 0, 0, 1e9), f32("a", 100, 0, 0, 90), f32("b", 100, 0, 0, 90));
    int passed = 1;
    json_t *v = NULL;
    kerr e = {0};
    cr_assert_eq(gate2_decide(r, &passed, &v, &e), 0);
    cr_expect_not(passed);
    json_t *a = json_array_get(json_object_get(json_array_get(json_object_get(v, "sets"), 0), "args"), 0);
    cr_expect_eq(json_integer_value(json_object_get(a, "nonfinite_mismatches")), 10);
    json_decref(v);
    json_decref(r);
}

Test(decide, gate2_refuses_a_candidate_that_disagrees_with_itself) {
    /* first run right, second run off: a race */
    json_t *r = iso(f32("o", 100, 0, 0, 1e9), f32("a", 100, 0, 0, 1e9), f32("b", 100, 0.5, 7, 1e9));
    int passed = 1;
    json_t *v = NULL;
    kerr e = {0};
    cr_assert_eq(gate2_decide(r, &passed, &v, &e), 0);
    cr_expect_not(passed);
    cr_expect(strstr(json_string_value(json_object_get(v, "reason")), "race") != NULL);
    json_decref(v);
    json_decref(r);
}

Test(decide, gate2_tolerance_is_the_dtype_default) {
    /* 5e-5 absolute on values up to ~2.2: inside atol + rtol*|ref| = 1e-4 + 1e-4*|ref| */
    json_t *r = iso(f32("o", 100, 0, 0, 1e9), f32("a", 100, 5e-5, 3, 1e9), f32("b", 100, 5e-5, 3, 1e9));
    int passed = 0;
    json_t *v = NULL;
    kerr e = {0};
    cr_assert_eq(gate2_decide(r, &passed, &v, &e), 0);
    cr_expect(passed);
    json_decref(v);
    json_decref(r);
}

Test(decide, gate2_missing_file_is_an_error_not_a_verdict) {
    json_t *o = f32("o", 10, 0, 0, 1e9), *a = f32("a", 10, 0, 0, 1e9);
    json_object_set_new(a, "path", json_string("/nonexistent/kopt.bin"));
    json_t *r = iso(o, a, f32("b", 10, 0, 0, 1e9));
    int passed = 1;
    json_t *v = NULL;
    kerr e = {0};
    cr_expect_neq(gate2_decide(r, &passed, &v, &e), 0);
    json_decref(v);
    json_decref(r);
}

static ktensor vec(const double *x, size_t n) {
    ktensor t = {0};
    t.data = malloc(n * sizeof *t.data);
    memcpy(t.data, x, n * sizeof *x);
    t.numel = n;
    t.ndim = 1;
    t.shape[0] = (int64_t)n;
    strcpy(t.dtype, "float32");
    return t;
}

Test(decide, gate3_rho_against_float64) {
    double r64[] = {1.0, 2.0, 3.0}, base[] = {1.0, 2.0 + 1e-6, 3.0}, opt[] = {1.0, 2.0 + 4e-6, 3.0};
    ktensor tr = vec(r64, 3), tb = vec(base, 3), to = vec(opt, 3);
    double oe, be;
    double rho = gate3_rho(&tr, &tb, &to, &oe, &be);
    cr_expect_float_eq(rho, 4.0, 1e-6);
    gate3_opts o = {.rho_max = 10, .abs_bound = 1e-2};
    cr_expect(gate3_accept_rho(rho, oe, &o));
    o.rho_max = 3;
    cr_expect_not(gate3_accept_rho(rho, oe, &o));
    /* exact baseline: rho 1 when opt is exact too, infinite otherwise */
    ktensor tx = vec(r64, 3);
    cr_expect_float_eq(gate3_rho(&tr, &tx, &tx, &oe, &be), 1.0, 0);
    cr_expect(isinf(gate3_rho(&tr, &tx, &to, &oe, &be)));
    /* absolute bound */
    o.rho_max = 1e9;
    o.abs_bound = 1e-7;
    cr_expect_not(gate3_accept_rho(4.0, 4e-6, &o));
    tensor_free(&tr); tensor_free(&tb); tensor_free(&to); tensor_free(&tx);
}

Test(decide, gate3_strict_uses_default_tolerance_and_nan_placement) {
    double a[] = {1.0, 2.0, NAN}, b[] = {1.00005, 2.0, NAN}, c[] = {1.0, 2.0, 3.0};
    ktensor ta = vec(a, 3), tb = vec(b, 3), tc = vec(c, 3);
    tensor_cmp cmp;
    kerr e = {0};
    cr_expect_eq(gate3_strict(&ta, &tb, &cmp, &e), 1);
    cr_expect_eq(gate3_strict(&ta, &tc, &cmp, &e), 0);
    tensor_free(&ta); tensor_free(&tb); tensor_free(&tc);
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

Test(decide, tensor_compare_files_shape_mismatch_is_a_verdict) {
    json_t *a = f32("a", 12, 0, 0, 1e9), *b = f32("b", 12, 0, 0, 1e9);
    json_object_set_new(b, "shape", json_pack("[i, i]", 3, 4));   /* same bytes, other shape */
    tensor_cmp c;
    char *where = NULL;
    kerr e = {0};
    cr_assert_eq(tensor_compare_files(a, b, -1, -1, &c, &where, &e), 0, "%s", e.msg);
    cr_expect(c.shape_mismatch && !c.pass);
    cr_assert_not_null(where);
    cr_expect(strstr(where, "shape mismatch") != NULL, "%s", where);
    free(where);
    /* equal files: a pass, no sentence */
    cr_assert_eq(tensor_compare_files(a, a, -1, -1, &c, &where, &e), 0);
    cr_expect(c.pass && c.max_abs_err == 0);
    cr_expect_null(where);
    json_object_set_new(b, "path", json_string("/nonexistent/x.bin"));
    cr_expect_neq(tensor_compare_files(a, b, -1, -1, &c, NULL, &e), 0);
    json_decref(a);
    json_decref(b);
}
