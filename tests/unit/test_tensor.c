/* test_tensor.c — gates/tensor: loading worker tensor files and comparing them. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gates/tensor.h"
#include "util/buf.h"
#include "util/fs.h"

static char *g_dir;

static void tt_setup(void) {
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-tensor", &g_dir, &e), 0, "%s", e.msg);
}
static void tt_teardown(void) {
    fs_rmtree(g_dir);
    free(g_dir);
    g_dir = NULL;
}

TestSuite(tensor, .init = tt_setup, .fini = tt_teardown);

/* Write raw bytes to <dir>/name.bin; returns the malloc'd path. */
static char *tt_write(const char *name, const void *data, size_t n) {
    char *path = kasprintf("%s/%s.bin", g_dir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    if (n) cr_assert_eq(fwrite(data, 1, n, f), n);
    fclose(f);
    return path;
}

/* {"path":..,"dtype":..,"shape":[dims],"numel":..}; numel < 0: leave it out. */
static json_t *tt_desc(const char *path, const char *dtype, int ndim, const int64_t *shape,
                       long long numel) {
    json_t *sh = json_array();
    for (int i = 0; i < ndim; i++) json_array_append_new(sh, json_integer(shape[i]));
    json_t *d = json_pack("{s:s, s:s, s:o}", "path", path, "dtype", dtype, "shape", sh);
    if (numel >= 0) json_object_set_new(d, "numel", json_integer(numel));
    return d;
}

/* Write n float32 values as a tensor of the given shape and load it. */
static void tt_f32(const char *name, const float *v, size_t n, int ndim, const int64_t *shape,
                   ktensor *out) {
    char *p = tt_write(name, v, n * sizeof(float));
    json_t *d = tt_desc(p, "float32", ndim, shape, (long long)n);
    kerr e = {0};
    cr_assert_eq(tensor_load(d, out, &e), 0, "%s", e.msg);
    json_decref(d);
    free(p);
}

static void tt_load_ok(const char *name, const char *dtype, const void *bytes, size_t nbytes,
                       int ndim, const int64_t *shape, ktensor *out) {
    char *p = tt_write(name, bytes, nbytes);
    size_t numel = 1;
    for (int i = 0; i < ndim; i++) numel *= (size_t)shape[i];
    json_t *d = tt_desc(p, dtype, ndim, shape, (long long)numel);
    kerr e = {0};
    cr_assert_eq(tensor_load(d, out, &e), 0, "%s: %s", dtype, e.msg);
    cr_assert_str_eq(out->dtype, dtype);
    cr_assert_eq(out->numel, numel);
    cr_assert_eq(out->ndim, ndim);
    json_decref(d);
    free(p);
}

Test(tensor, loads_every_dtype) {
    ktensor t;
    int64_t s4[] = {4}, s23[] = {2, 3};

    double f64[] = {1.5, -2.25, 1e300, 0x1p-1074};
    tt_load_ok("f64", "float64", f64, sizeof f64, 1, s4, &t);
    for (int i = 0; i < 4; i++) cr_assert(t.data[i] == f64[i]);
    tensor_free(&t);

    float f32[] = {1.5f, -2.25f, 3.0e38f, 1e-45f, 0.1f, -0.0f};
    tt_load_ok("f32", "float32", f32, sizeof f32, 2, s23, &t);
    for (int i = 0; i < 6; i++) cr_assert(t.data[i] == (double)f32[i]);
    cr_assert_eq(t.shape[0], 2);
    cr_assert_eq(t.shape[1], 3);
    tensor_free(&t);

    /* float16: 1, -2, 0.5, 65504, smallest subnormal, -inf, nan, 1/3 (0x3555) */
    uint16_t f16[] = {0x3C00, 0xC000, 0x3800, 0x7BFF, 0x0001, 0xFC00, 0x7E00, 0x3555};
    int64_t s8[] = {8};
    tt_load_ok("f16", "float16", f16, sizeof f16, 1, s8, &t);
    cr_assert(t.data[0] == 1.0 && t.data[1] == -2.0 && t.data[2] == 0.5);
    cr_assert(t.data[3] == 65504.0);
    cr_assert(t.data[4] == ldexp(1.0, -24));
    cr_assert(isinf(t.data[5]) && t.data[5] < 0);
    cr_assert(isnan(t.data[6]));
    cr_assert(t.data[7] == 1365.0 / 4096.0);   /* 0x3555 = 0.333251953125 */
    tensor_free(&t);

    /* bfloat16: 1, -2, 3.140625, +inf, nan, 1e-40-ish subnormal 0x0001 */
    uint16_t bf16[] = {0x3F80, 0xC000, 0x4049, 0x7F80, 0x7FC0, 0x0001};
    int64_t s6[] = {6};
    tt_load_ok("bf16", "bfloat16", bf16, sizeof bf16, 1, s6, &t);
    cr_assert(t.data[0] == 1.0 && t.data[1] == -2.0 && t.data[2] == 3.140625);
    cr_assert(isinf(t.data[3]) && t.data[3] > 0);
    cr_assert(isnan(t.data[4]));
    cr_assert(t.data[5] == ldexp(1.0, -133));
    tensor_free(&t);

    int64_t i64[] = {-5, 0, 9007199254740992LL, 7};
    tt_load_ok("i64", "int64", i64, sizeof i64, 1, s4, &t);
    cr_assert(t.data[0] == -5 && t.data[2] == 9007199254740992.0 && t.data[3] == 7);
    tensor_free(&t);

    int32_t i32[] = {-2147483647 - 1, 2147483647, -1, 0};
    tt_load_ok("i32", "int32", i32, sizeof i32, 1, s4, &t);
    cr_assert(t.data[0] == -2147483648.0 && t.data[1] == 2147483647.0 && t.data[2] == -1);
    tensor_free(&t);

    int16_t i16[] = {-32768, 32767, -3, 4};
    tt_load_ok("i16", "int16", i16, sizeof i16, 1, s4, &t);
    cr_assert(t.data[0] == -32768 && t.data[1] == 32767 && t.data[2] == -3);
    tensor_free(&t);

    int8_t i8[] = {-128, 127, -1, 0};
    tt_load_ok("i8", "int8", i8, sizeof i8, 1, s4, &t);
    cr_assert(t.data[0] == -128 && t.data[1] == 127 && t.data[2] == -1);
    tensor_free(&t);

    uint8_t u8[] = {0, 255, 128, 1};
    tt_load_ok("u8", "uint8", u8, sizeof u8, 1, s4, &t);
    cr_assert(t.data[1] == 255 && t.data[2] == 128);
    tensor_free(&t);

    uint8_t b[] = {0, 1, 1, 0};
    tt_load_ok("bool", "bool", b, sizeof b, 1, s4, &t);
    cr_assert(t.data[0] == 0 && t.data[1] == 1 && t.data[3] == 0);
    tensor_free(&t);

    /* 0-d tensor and empty tensor */
    float scalar = 2.5f;
    tt_load_ok("scalar", "float32", &scalar, sizeof scalar, 0, NULL, &t);
    cr_assert(t.numel == 1 && t.data[0] == 2.5);
    tensor_free(&t);
    int64_t s0[] = {3, 0};
    tt_load_ok("empty", "float32", NULL, 0, 2, s0, &t);
    cr_assert_eq(t.numel, 0);
    tensor_free(&t);
    tensor_free(&t);   /* idempotent */
}

Test(tensor, rejects_bad_files_and_descriptions) {
    ktensor t;
    kerr e = {0};
    float v[6] = {0};
    int64_t s23[] = {2, 3}, s24[] = {2, 4};
    char *p = tt_write("short", v, sizeof v);

    json_t *d = tt_desc(p, "float32", 2, s24, 8);     /* file holds 6 elements, not 8 */
    cr_assert_eq(tensor_load(d, &t, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "24 bytes") && strstr(e.msg, "expected 32"), "%s", e.msg);
    cr_assert_null(t.data);
    json_decref(d);

    d = tt_desc(p, "float64", 2, s23, 6);             /* wrong itemsize */
    cr_assert_eq(tensor_load(d, &t, &e), KOPT_E_WORKER);
    json_decref(d);

    d = tt_desc(p, "complex64", 2, s23, 6);
    cr_assert_eq(tensor_load(d, &t, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "complex64"), "%s", e.msg);
    json_decref(d);

    d = tt_desc(p, "float32", 2, s23, 7);             /* numel disagrees with the shape */
    cr_assert_eq(tensor_load(d, &t, &e), KOPT_E_WORKER);
    json_decref(d);

    d = tt_desc(p, "float32", 2, s23, -1);            /* numel is optional */
    cr_assert_eq(tensor_load(d, &t, &e), 0, "%s", e.msg);
    tensor_free(&t);
    json_decref(d);

    char *missing = kasprintf("%s/nope.bin", g_dir);
    d = tt_desc(missing, "float32", 2, s23, 6);
    cr_assert_eq(tensor_load(d, &t, &e), KOPT_E_NOFILE);
    json_decref(d);
    free(missing);

    d = json_pack("{s:s, s:[i, i]}", "dtype", "float32", "shape", 2, 3);
    cr_assert_eq(tensor_load(d, &t, &e), KOPT_E_WORKER);
    json_decref(d);
    d = json_pack("{s:s, s:s, s:[i, i]}", "path", p, "dtype", "float32", "shape", 2, -3);
    cr_assert_eq(tensor_load(d, &t, &e), KOPT_E_WORKER);
    json_decref(d);
    cr_assert_eq(tensor_load(json_null(), &t, &e), KOPT_E_WORKER);
    free(p);
}

Test(tensor, loads_non_tensor_values) {
    ktensor t;
    kerr e = {0};
    json_t *d = json_pack("{s:f}", "value", 0.25);
    cr_assert_eq(tensor_load(d, &t, &e), 0);
    cr_assert(t.ndim == 0 && t.numel == 1 && t.data[0] == 0.25);
    cr_assert_str_eq(t.dtype, "float64");
    tensor_free(&t);
    json_decref(d);
    d = json_pack("{s:b}", "value", 1);
    cr_assert_eq(tensor_load(d, &t, &e), 0);
    cr_assert_str_eq(t.dtype, "bool");
    tensor_free(&t);
    json_decref(d);
    d = json_pack("{s:s}", "value", "text");
    cr_assert_eq(tensor_load(d, &t, &e), KOPT_E_INTERNAL);
    json_decref(d);
}

Test(tensor, default_tolerances) {
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
}

#define N 32
static const int64_t SH48[] = {4, 8};

static void tt_ramp(float *v) {
    for (int i = 0; i < N; i++) v[i] = (float)(i - 10) * 0.5f;
}

Test(tensor, identical_and_within_tolerance_pass) {
    float a[N], b[N];
    tt_ramp(a);
    tt_ramp(b);
    b[3] += 5e-5f;                        /* under atol */
    ktensor ref, got;
    tt_f32("ref", a, N, 2, SH48, &ref);
    tt_f32("got", b, N, 2, SH48, &got);
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_compare(&ref, &ref, 0, 0, &c, &e), 0);
    cr_assert(c.pass && c.n_mismatch == 0 && c.max_abs_err == 0);
    cr_assert_eq(c.first_mismatch, SIZE_MAX);
    cr_assert_eq(tensor_compare(&ref, &got, 1e-4, 1e-4, &c, &e), 0);
    cr_assert(c.pass);
    cr_assert(c.max_abs_err > 4e-5 && c.max_abs_err < 6e-5, "%g", c.max_abs_err);
    cr_assert_eq(c.max_abs_index, 3);
    cr_assert_eq(tensor_compare(&ref, &got, 0, 0, &c, &e), 0);   /* exact: fails */
    cr_assert(!c.pass && c.n_mismatch == 1);
    char *s = tensor_cmp_str(&ref, &got, &c);
    cr_assert(strstr(s, "1 of 32 elements differ") && strstr(s, "[0, 3]"), "%s", s);
    free(s);
    tensor_free(&ref);
    tensor_free(&got);
}

Test(tensor, relative_tolerance_scales_with_ref) {
    float a[2] = {1000.0f, 1.0f}, b[2] = {1000.05f, 1.0f};
    int64_t s2[] = {2};
    ktensor ref, got;
    tt_f32("ref", a, 2, 1, s2, &ref);
    tt_f32("got", b, 2, 1, s2, &got);
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_compare(&ref, &got, 1e-4, 1e-4, &c, &e), 0);
    cr_assert(c.pass);                                /* 0.05 <= 1e-4 + 0.1 */
    cr_assert_eq(tensor_compare(&ref, &got, 1e-4, 1e-5, &c, &e), 0);
    cr_assert(!c.pass);                               /* 0.05 > 1e-4 + 0.01 */
    cr_assert(c.max_rel_err > 4e-5 && c.max_rel_err < 6e-5, "%g", c.max_rel_err);
    tensor_free(&ref);
    tensor_free(&got);
}

Test(tensor, single_off_element_is_located) {
    float a[N], b[N];
    tt_ramp(a);
    tt_ramp(b);
    b[2 * 8 + 5] += 0.75f;                 /* position [2, 5] */
    b[1] += 0.01f;                         /* a smaller error elsewhere */
    ktensor ref, got;
    tt_f32("ref", a, N, 2, SH48, &ref);
    tt_f32("got", b, N, 2, SH48, &got);
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_compare(&ref, &got, 1e-4, 1e-4, &c, &e), 0);
    cr_assert(!c.pass);
    cr_assert_eq(c.n_mismatch, 2);
    cr_assert_eq(c.n_nonfinite_mismatch, 0);
    cr_assert_eq(c.first_mismatch, 1);
    cr_assert_eq(c.max_abs_index, 21);
    cr_assert_eq(c.max_abs_pos[0], 2);
    cr_assert_eq(c.max_abs_pos[1], 5);
    cr_assert(fabs(c.max_abs_err - 0.75) < 1e-6);
    cr_assert(c.ref_at_max_abs == a[21] && c.got_at_max_abs == b[21]);
    cr_assert(fabs(tensor_max_abs_diff(&ref, &got) - 0.75) < 1e-6);
    char *s = tensor_cmp_str(&ref, &got, &c);
    cr_assert(strstr(s, "2 of 32") && strstr(s, "[2, 5]"), "%s", s);
    free(s);
    tensor_free(&ref);
    tensor_free(&got);
}

Test(tensor, nan_and_inf_placement) {
    int64_t s6[] = {6};
    float a[6] = {NAN, INFINITY, -INFINITY, 1.0f, 2.0f, 3.0f};
    float same[6] = {NAN, INFINITY, -INFINITY, 1.0f, 2.0f, 3.0f};
    ktensor ref, got;
    tensor_cmp c;
    kerr e = {0};
    tt_f32("ref", a, 6, 1, s6, &ref);
    tt_f32("same", same, 6, 1, s6, &got);
    cr_assert_eq(tensor_compare(&ref, &got, 0, 0, &c, &e), 0);
    cr_assert(c.pass, "matching NaN/Inf must pass");
    cr_assert(tensor_max_abs_diff(&ref, &got) == 0.0);
    tensor_free(&got);

    /* each kind of misplacement, one at a time */
    struct { int idx; float val; } cases[] = {
        {0, 1.0f},        /* NaN in ref, finite in got */
        {3, NAN},         /* finite in ref, NaN in got */
        {1, -INFINITY},   /* +Inf vs -Inf */
        {2, NAN},         /* -Inf vs NaN */
        {4, INFINITY},    /* finite vs +Inf */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        float b[6];
        memcpy(b, same, sizeof b);
        b[cases[k].idx] = cases[k].val;
        tt_f32("case", b, 6, 1, s6, &got);
        cr_assert_eq(tensor_compare(&ref, &got, 1e-4, 1e-4, &c, &e), 0);
        cr_assert(!c.pass, "case %zu", k);
        cr_assert_eq(c.n_mismatch, 1, "case %zu", k);
        cr_assert_eq(c.n_nonfinite_mismatch, 1, "case %zu", k);
        cr_assert_eq(c.first_nonfinite_mismatch, (size_t)cases[k].idx, "case %zu", k);
        cr_assert(isinf(tensor_max_abs_diff(&ref, &got)), "case %zu", k);
        tensor_free(&got);
    }
    tensor_free(&ref);
}

Test(tensor, unwritten_poisoned_tail_is_detected) {
    /* the worker fills outputs with NaN before a run; a kernel that skips the last 5
     * elements leaves them NaN */
    float a[N], b[N];
    tt_ramp(a);
    tt_ramp(b);
    for (int i = N - 5; i < N; i++) b[i] = NAN;
    ktensor ref, got;
    tt_f32("ref", a, N, 2, SH48, &ref);
    tt_f32("got", b, N, 2, SH48, &got);
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_compare(&ref, &got, 1e-2, 1e-2, &c, &e), 0);
    cr_assert(!c.pass);
    cr_assert_eq(c.n_mismatch, 5);
    cr_assert_eq(c.n_nonfinite_mismatch, 5);
    cr_assert_eq(c.first_nonfinite_mismatch, N - 5);
    cr_assert_eq(c.max_abs_err, 0.0);    /* the finite part is exact */
    char *s = tensor_cmp_str(&ref, &got, &c);
    cr_assert(strstr(s, "5 non-finite") && strstr(s, "[3, 3]") && strstr(s, "nan"), "%s", s);
    free(s);
    tensor_free(&ref);
    tensor_free(&got);
}

Test(tensor, shape_mismatch_is_reported) {
    float a[N];
    tt_ramp(a);
    int64_t s84[] = {8, 4}, s32[] = {32};
    ktensor ref, got, flat;
    tt_f32("ref", a, N, 2, SH48, &ref);
    tt_f32("got", a, N, 2, s84, &got);
    tt_f32("flat", a, N, 1, s32, &flat);
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_compare(&ref, &got, 1e-4, 1e-4, &c, &e), KOPT_E_CANDIDATE);
    cr_assert(!c.pass && c.shape_mismatch);
    cr_assert(strstr(e.msg, "[4, 8]") && strstr(e.msg, "[8, 4]"), "%s", e.msg);
    cr_assert_eq(tensor_compare(&ref, &flat, 1e-4, 1e-4, &c, &e), KOPT_E_CANDIDATE);
    cr_assert(isinf(tensor_max_abs_diff(&ref, &flat)));
    tensor_free(&ref);
    tensor_free(&got);
    tensor_free(&flat);
}

Test(tensor, compares_across_dtypes) {
    /* a float64 reference against a float16 result of the same values */
    double a[4] = {1.0, -2.0, 0.5, 0.333251953125};
    uint16_t h[4] = {0x3C00, 0xC000, 0x3800, 0x3555};
    int64_t s4[] = {4};
    ktensor ref, got;
    tt_load_ok("ref64", "float64", a, sizeof a, 1, s4, &ref);
    tt_load_ok("got16", "float16", h, sizeof h, 1, s4, &got);
    tensor_cmp c;
    kerr e = {0};
    cr_assert_eq(tensor_compare(&ref, &got, 0, 0, &c, &e), 0);
    cr_assert(c.pass);
    tensor_free(&ref);
    tensor_free(&got);
}
