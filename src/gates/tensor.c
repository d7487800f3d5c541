/* tensor.c — see tensor.h for the contract. */
#include "gates/tensor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static const struct {
    const char *name;
    size_t size;
} TN_DTYPES[] = {
    {"float64", 8}, {"float32", 4}, {"float16", 2}, {"bfloat16", 2}, {"int64", 8},
    {"int32", 4},   {"int16", 2},   {"int8", 1},    {"uint8", 1},    {"bool", 1},
};
#define TN_NDTYPES (sizeof TN_DTYPES / sizeof *TN_DTYPES)

size_t tensor_itemsize(const char *dtype) {
    if (!dtype) return 0;
    for (size_t i = 0; i < TN_NDTYPES; i++)
        if (!strcmp(dtype, TN_DTYPES[i].name)) return TN_DTYPES[i].size;
    return 0;
}

void tensor_default_tol(const char *dtype, double *atol, double *rtol) {
    double a = 1e-4, r = 1e-4;
    if (dtype) {
        if (!strcmp(dtype, "float16") || !strcmp(dtype, "bfloat16") || !strcmp(dtype, "fp16") ||
            !strcmp(dtype, "bf16")) {
            a = r = 1e-2;
        } else if (!strcmp(dtype, "int64") || !strcmp(dtype, "int32") ||
                   !strcmp(dtype, "int16") || !strcmp(dtype, "int8") ||
                   !strcmp(dtype, "uint8") || !strcmp(dtype, "bool")) {
            a = r = 0.0;
        }
    }
    if (atol) *atol = a;
    if (rtol) *rtol = r;
}

double tensor_unit_roundoff(const char *dtype) {
    if (!dtype) return 0;
    if (!strcmp(dtype, "bfloat16") || !strcmp(dtype, "bf16")) return ldexp(1.0, -8);
    if (!strcmp(dtype, "float16") || !strcmp(dtype, "fp16")) return ldexp(1.0, -11);
    if (!strcmp(dtype, "float32") || !strcmp(dtype, "fp32")) return ldexp(1.0, -24);
    if (!strcmp(dtype, "float64") || !strcmp(dtype, "fp64")) return ldexp(1.0, -53);
    return 0;
}

json_t *tensor_tol_table(void) {
    json_t *t = json_object();
    for (size_t i = 0; i < TN_NDTYPES; i++) {
        double a, r;
        tensor_default_tol(TN_DTYPES[i].name, &a, &r);
        json_object_set_new(t, TN_DTYPES[i].name, json_pack("[f, f]", a, r));
    }
    return t;
}

/* ------------------------------------------------------------------ reading statistics */

/* A number of the statistics: a JSON number, or the protocol's "nan"/"inf"/"-inf" strings. */
static int tc_num(const json_t *o, const char *key, int required, double *out, kerr *e) {
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) {
        *out = NAN;
        return required ? kerr_set(e, KOPT_E_WORKER, "comparison statistics lack '%s'", key) : 0;
    }
    if (json_is_number(v)) { *out = json_number_value(v); return 0; }
    const char *s = json_string_value(v);
    if (s && !strcmp(s, "nan")) { *out = NAN; return 0; }
    if (s && !strcmp(s, "inf")) { *out = INFINITY; return 0; }
    if (s && !strcmp(s, "-inf")) { *out = -INFINITY; return 0; }
    return kerr_set(e, KOPT_E_WORKER, "comparison statistics: '%s' is not a number", key);
}

/* A count or flat index: a non-negative integer; null/absent gives `none`. */
static int tc_index(const json_t *o, const char *key, size_t none, size_t *out, kerr *e) {
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v)) { *out = none; return 0; }
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return kerr_set(e, KOPT_E_WORKER, "comparison statistics: '%s' is not a non-negative integer", key);
    *out = (size_t)json_integer_value(v);
    return 0;
}

static int tc_shape(const json_t *arr, int64_t *shape, int *ndim, size_t *numel, kerr *e) {
    if (!json_is_array(arr)) return kerr_set(e, KOPT_E_WORKER, "comparison statistics lack a shape");
    size_t nd = json_array_size(arr);
    if (nd > KTENSOR_MAX_DIMS) return kerr_set(e, KOPT_E_WORKER, "a compared tensor has %zu dimensions; kopt supports %d", nd, KTENSOR_MAX_DIMS);
    size_t n = 1;
    for (size_t i = 0; i < nd; i++) {
        const json_t *d = json_array_get(arr, i);
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return kerr_set(e, KOPT_E_WORKER, "comparison statistics: bad shape entry %zu", i);
        shape[i] = json_integer_value(d);
        n *= (size_t)shape[i];
    }
    *ndim = (int)nd;
    if (numel) *numel = n;
    return 0;
}

int tensor_cmp_from_json(const json_t *st, double atol, double rtol, tensor_cmp *c, kerr *e) {
    memset(c, 0, sizeof *c);
    c->first_mismatch = c->first_nonfinite_mismatch = SIZE_MAX;
    if (!json_is_object(st)) return kerr_set(e, KOPT_E_WORKER, "comparison statistics are not an object");
    size_t numel = 0;
    const char *dt = json_string_value(json_object_get(st, "dtype")), *gdt = json_string_value(json_object_get(st, "got_dtype"));
    if (!dt || !gdt) return kerr_set(e, KOPT_E_WORKER, "comparison statistics lack the dtypes");
    snprintf(c->dtype, sizeof c->dtype, "%s", dt);
    snprintf(c->got_dtype, sizeof c->got_dtype, "%s", gdt);
    if (tc_shape(json_object_get(st, "shape"), c->shape, &c->ndim, &numel, e)) return e->code;
    c->numel = numel;
    if (json_is_true(json_object_get(st, "shape_mismatch"))) {
        if (tc_shape(json_object_get(st, "got_shape"), c->got_shape, &c->got_ndim, NULL, e)) return e->code;
        c->shape_mismatch = 1;
        return 0;
    }
    if (!json_is_false(json_object_get(st, "shape_mismatch")))
        return kerr_set(e, KOPT_E_WORKER, "comparison statistics lack 'shape_mismatch'");
    memcpy(c->got_shape, c->shape, sizeof c->shape);
    c->got_ndim = c->ndim;
    size_t wn = 0;
    if (tc_index(st, "numel", SIZE_MAX, &wn, e)) return e->code;
    if (wn != numel) return kerr_set(e, KOPT_E_WORKER, "comparison statistics: numel %zu does not match the shape (%zu)", wn, numel);
    if (tc_num(st, "atol", 1, &c->atol, e) || tc_num(st, "rtol", 1, &c->rtol, e)) return e->code;
    if ((atol >= 0 && c->atol != atol) || (rtol >= 0 && c->rtol != rtol))
        return kerr_set(e, KOPT_E_WORKER, "the worker compared under atol %g, rtol %g; kopt asked for %g, %g", c->atol,
                        c->rtol, atol, rtol);
    if (tc_index(st, "n_mismatch", SIZE_MAX, &c->n_mismatch, e) ||
        tc_index(st, "n_nonfinite_mismatch", SIZE_MAX, &c->n_nonfinite_mismatch, e) ||
        tc_index(st, "first_mismatch", SIZE_MAX, &c->first_mismatch, e) ||
        tc_index(st, "first_nonfinite_mismatch", SIZE_MAX, &c->first_nonfinite_mismatch, e) ||
        tc_index(st, "max_abs_index", 0, &c->max_abs_index, e) || tc_index(st, "max_rel_index", 0, &c->max_rel_index, e))
        return e->code;
    if (c->n_mismatch == SIZE_MAX || c->n_nonfinite_mismatch == SIZE_MAX)
        return kerr_set(e, KOPT_E_WORKER, "comparison statistics lack the mismatch counts");
    if (c->n_mismatch > numel || c->n_nonfinite_mismatch > c->n_mismatch ||
        (c->n_mismatch > 0) != (c->first_mismatch != SIZE_MAX) ||
        (c->n_nonfinite_mismatch > 0) != (c->first_nonfinite_mismatch != SIZE_MAX) ||
        (c->first_mismatch != SIZE_MAX && c->first_mismatch >= numel) ||
        (c->first_nonfinite_mismatch != SIZE_MAX && c->first_nonfinite_mismatch >= numel) ||
        (numel && (c->max_abs_index >= numel || c->max_rel_index >= numel)))
        return kerr_set(e, KOPT_E_WORKER, "comparison statistics are inconsistent (counts or indices out of range)");
    if (tc_num(st, "max_abs_err", 1, &c->max_abs_err, e) || tc_num(st, "max_rel_err", 1, &c->max_rel_err, e) ||
        tc_num(st, "ref_at_max_abs", 0, &c->ref_at_max_abs, e) || tc_num(st, "got_at_max_abs", 0, &c->got_at_max_abs, e) ||
        tc_num(st, "ref_at_first", 0, &c->ref_at_first, e) || tc_num(st, "got_at_first", 0, &c->got_at_first, e) ||
        tc_num(st, "ref_at_first_nonfinite", 0, &c->ref_at_first_nonfinite, e) ||
        tc_num(st, "got_at_first_nonfinite", 0, &c->got_at_first_nonfinite, e) ||
        tc_num(st, "ref_abs_max", 1, &c->ref_abs_max, e) || tc_num(st, "sum_sq_ref", 1, &c->sum_sq_ref, e) ||
        tc_num(st, "sum_sq_diff", 1, &c->sum_sq_diff, e))
        return e->code;
    if (!(c->max_abs_err >= 0) || !(c->max_rel_err >= 0) || !(c->sum_sq_ref >= 0) || !(c->sum_sq_diff >= 0))
        return kerr_set(e, KOPT_E_WORKER, "comparison statistics: negative or NaN error");
    /* relative L2 norm of the difference (finite pairs): with rtol, so that outputs far below
     * atol (a softmax over 393K columns is ~4e-6 everywhere) cannot pass as all zeros */
    c->norm_ratio = c->sum_sq_ref > 0 ? sqrt(c->sum_sq_diff / c->sum_sq_ref) : (c->sum_sq_diff > 0 ? INFINITY : 0);
    c->norm_ok = c->sum_sq_ref > 0 ? c->norm_ratio <= c->rtol : 1;
    c->pass = c->n_mismatch == 0 && c->norm_ok;
    if (json_object_get(st, "n_rel_err")) {
        size_t n = SIZE_MAX;
        if (tc_index(st, "n_rel_err", SIZE_MAX, &n, e) || tc_num(st, "rel_err_thr", 1, &c->rel_err_thr, e) ||
            tc_num(st, "rel_err_floor", 1, &c->rel_err_floor, e))
            return e->code;
        if (n == SIZE_MAX || n > numel || !(c->rel_err_thr >= 0) || !(c->rel_err_floor >= 0))
            return kerr_set(e, KOPT_E_WORKER, "comparison statistics: n_rel_err or its threshold out of range");
        c->n_rel_err = n;
        c->has_rel_err = 1;
    }
    return 0;
}

double tensor_cmp_max_diff(const tensor_cmp *c) {
    if (c->shape_mismatch || c->n_nonfinite_mismatch > 0) return INFINITY;
    return c->max_abs_err;
}

void tensor_cmp_unravel(const tensor_cmp *c, size_t flat, int64_t *idx) {
    for (int d = c->ndim - 1; d >= 0; d--) {
        int64_t n = c->shape[d];
        if (n <= 0) { idx[d] = 0; continue; }
        idx[d] = (int64_t)(flat % (uint64_t)n);
        flat /= (uint64_t)n;
    }
}

static void tc_put_shape(kbuf *b, const int64_t *shape, int ndim) {
    kbuf_putc(b, '[');
    for (int i = 0; i < ndim; i++) kbuf_printf(b, "%s%lld", i ? ", " : "", (long long)shape[i]);
    kbuf_putc(b, ']');
}

static void tc_put_index(kbuf *b, const tensor_cmp *c, size_t flat) {
    int64_t idx[KTENSOR_MAX_DIMS];
    tensor_cmp_unravel(c, flat, idx);
    tc_put_shape(b, idx, c->ndim);
}

char *tensor_cmp_str(const tensor_cmp *c) {
    kbuf b = KBUF_INIT;
    if (c->shape_mismatch) {
        kbuf_puts(&b, "shape mismatch: expected ");
        tc_put_shape(&b, c->shape, c->ndim);
        kbuf_puts(&b, ", got ");
        tc_put_shape(&b, c->got_shape, c->got_ndim);
        return kbuf_steal(&b);
    }
    if (c->pass) {
        kbuf_printf(&b, "ok (%zu elements, max abs err %.3g)", c->numel, c->max_abs_err);
        return kbuf_steal(&b);
    }
    if (c->n_mismatch == 0) {
        kbuf_printf(&b, "every element is within atol %.3g, but the difference's L2 norm is %.3g of the reference's "
                        "(allowed %.3g): outputs smaller than the tolerance, computed wrong",
                    c->atol, c->norm_ratio, c->rtol);
        return kbuf_steal(&b);
    }
    kbuf_printf(&b, "%zu of %zu elements differ", c->n_mismatch, c->numel);
    if (c->n_nonfinite_mismatch) kbuf_printf(&b, " (%zu non-finite)", c->n_nonfinite_mismatch);
    if (c->max_abs_err > 0) {
        kbuf_printf(&b, "; max abs err %.3g at ", c->max_abs_err);
        tc_put_index(&b, c, c->max_abs_index);
        kbuf_printf(&b, " (ref %.6g, got %.6g)", c->ref_at_max_abs, c->got_at_max_abs);
    }
    if (c->first_nonfinite_mismatch != SIZE_MAX) {
        kbuf_puts(&b, "; first non-finite mismatch at ");
        tc_put_index(&b, c, c->first_nonfinite_mismatch);
        kbuf_printf(&b, " (ref %.6g, got %.6g)", c->ref_at_first_nonfinite, c->got_at_first_nonfinite);
    }
    return kbuf_steal(&b);
}
