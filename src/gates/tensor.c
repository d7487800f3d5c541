/* tensor.c — see tensor.h for the contract. */
#include "gates/tensor.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/buf.h"

typedef enum { TN_F64, TN_F32, TN_F16, TN_BF16, TN_I64, TN_I32, TN_I16, TN_I8, TN_U8, TN_BOOL } tn_kind;

static const struct {
    const char *name;
    tn_kind kind;
    size_t size;
} TN_DTYPES[] = {
    {"float64", TN_F64, 8}, {"float32", TN_F32, 4}, {"float16", TN_F16, 2},
    {"bfloat16", TN_BF16, 2}, {"int64", TN_I64, 8}, {"int32", TN_I32, 4},
    {"int16", TN_I16, 2}, {"int8", TN_I8, 1}, {"uint8", TN_U8, 1}, {"bool", TN_BOOL, 1},
};

static int tn_lookup(const char *dtype) {
    if (!dtype) return -1;
    for (size_t i = 0; i < sizeof TN_DTYPES / sizeof *TN_DTYPES; i++)
        if (!strcmp(dtype, TN_DTYPES[i].name)) return (int)i;
    return -1;
}

size_t tensor_itemsize(const char *dtype) {
    int i = tn_lookup(dtype);
    return i < 0 ? 0 : TN_DTYPES[i].size;
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

/* ------------------------------------------------------------------ decoding */

static uint64_t tn_le(const unsigned char *p, size_t n) {
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
    return v;
}

static double tn_half(uint16_t h) {
    int sign = h >> 15, ex = (h >> 10) & 0x1F, man = h & 0x3FF;
    double v;
    if (ex == 0) v = ldexp((double)man, -24);                 /* zero / subnormal */
    else if (ex == 31) v = man ? NAN : INFINITY;
    else v = ldexp((double)(man + 1024), ex - 25);
    return sign ? -v : v;
}

static double tn_decode(tn_kind k, const unsigned char *p) {
    switch (k) {
    case TN_F64: { uint64_t u = tn_le(p, 8); double d; memcpy(&d, &u, 8); return d; }
    case TN_F32: { uint32_t u = (uint32_t)tn_le(p, 4); float f; memcpy(&f, &u, 4); return f; }
    case TN_F16: return tn_half((uint16_t)tn_le(p, 2));
    case TN_BF16: {
        uint32_t u = (uint32_t)tn_le(p, 2) << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    case TN_I64: return (double)(int64_t)tn_le(p, 8);
    case TN_I32: return (double)(int32_t)(uint32_t)tn_le(p, 4);
    case TN_I16: return (double)(int16_t)(uint16_t)tn_le(p, 2);
    case TN_I8: return (double)(int8_t)p[0];
    case TN_U8: return (double)p[0];
    case TN_BOOL: return p[0] ? 1.0 : 0.0;
    }
    return NAN;
}

/* ------------------------------------------------------------------ loading */

void tensor_free(ktensor *t) {
    if (!t) return;
    free(t->data);
    memset(t, 0, sizeof *t);
}

static int tn_load_value(const json_t *v, ktensor *out, kerr *e) {
    double d;
    const char *dt;
    if (json_is_boolean(v)) { d = json_is_true(v); dt = "bool"; }
    else if (json_is_integer(v)) { d = (double)json_integer_value(v); dt = "int64"; }
    else if (json_is_real(v)) { d = json_real_value(v); dt = "float64"; }
    else return kerr_set(e, KOPT_E_INTERNAL, "output value is not a number or a bool");
    out->data = kmalloc(sizeof(double));
    out->data[0] = d;
    out->numel = 1;
    out->ndim = 0;
    snprintf(out->dtype, sizeof out->dtype, "%s", dt);
    return 0;
}

int tensor_load(const json_t *desc, ktensor *out, kerr *e) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(desc))
        return kerr_set(e, KOPT_E_WORKER, "tensor description is not a JSON object");
    json_t *val = json_object_get(desc, "value");
    if (val && !json_object_get(desc, "path")) return tn_load_value(val, out, e);

    const char *path = json_string_value(json_object_get(desc, "path"));
    const char *dtype = json_string_value(json_object_get(desc, "dtype"));
    json_t *shape = json_object_get(desc, "shape");
    if (!path || !*path) return kerr_set(e, KOPT_E_WORKER, "tensor description has no path");
    int di = tn_lookup(dtype);
    if (di < 0)
        return kerr_set(e, KOPT_E_WORKER, "tensor %s has unknown dtype '%s'", path,
                        dtype ? dtype : "(none)");
    if (!json_is_array(shape))
        return kerr_set(e, KOPT_E_WORKER, "tensor %s has no shape array", path);
    size_t nd = json_array_size(shape);
    if (nd > KTENSOR_MAX_DIMS)
        return kerr_set(e, KOPT_E_WORKER, "tensor %s has %zu dimensions; kopt supports up to %d",
                        path, nd, KTENSOR_MAX_DIMS);
    size_t numel = 1, isz = TN_DTYPES[di].size;
    int overflow = 0;
    for (size_t i = 0; i < nd; i++) {
        json_t *d = json_array_get(shape, i);
        if (!json_is_integer(d) || json_integer_value(d) < 0)
            return kerr_set(e, KOPT_E_WORKER, "tensor %s has a bad shape entry at %zu", path, i);
        uint64_t dim = (uint64_t)json_integer_value(d);
        out->shape[i] = (int64_t)dim;
        if (dim && numel > SIZE_MAX / isz / dim) overflow = 1;
        numel *= (size_t)dim;
    }
    if (overflow)
        return kerr_set(e, KOPT_E_WORKER, "tensor %s is too large to load", path);
    json_t *jn = json_object_get(desc, "numel");
    if (jn && (!json_is_integer(jn) || (uint64_t)json_integer_value(jn) != (uint64_t)numel))
        return kerr_set(e, KOPT_E_WORKER, "tensor %s: numel does not match its shape (%zu)", path,
                        numel);

    FILE *f = fopen(path, "rb");
    if (!f) return kerr_set(e, KOPT_E_NOFILE, "cannot open tensor file %s: %s", path,
                            strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int r = kerr_set(e, KOPT_E_NOFILE, "cannot stat tensor file %s: %s", path,
                         strerror(errno));
        fclose(f);
        return r;
    }
    size_t want = numel * isz;
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != (uint64_t)want) {
        fclose(f);
        return kerr_set(e, KOPT_E_WORKER,
                        "tensor file %s has %lld bytes, expected %zu (%zu x %s of %zu bytes)",
                        path, (long long)st.st_size, want, numel, TN_DTYPES[di].name, isz);
    }
    double *data = kmalloc(numel * sizeof(double));
    unsigned char chunk[1 << 16];   /* a multiple of every itemsize */
    size_t done = 0;
    tn_kind kind = TN_DTYPES[di].kind;
    while (done < numel) {
        size_t n = numel - done;
        if (n > sizeof chunk / isz) n = sizeof chunk / isz;
        if (fread(chunk, isz, n, f) != n) {
            free(data);
            fclose(f);
            return kerr_set(e, KOPT_E_NOFILE, "error reading tensor file %s", path);
        }
        for (size_t i = 0; i < n; i++) data[done + i] = tn_decode(kind, chunk + i * isz);
        done += n;
    }
    fclose(f);
    out->data = data;
    out->numel = numel;
    out->ndim = (int)nd;
    snprintf(out->dtype, sizeof out->dtype, "%s", TN_DTYPES[di].name);
    return 0;
}

/* ------------------------------------------------------------------ comparing */

void tensor_unravel(const ktensor *t, size_t flat, int64_t *idx) {
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t n = t->shape[d];
        if (n <= 0) { idx[d] = 0; continue; }
        idx[d] = (int64_t)(flat % (uint64_t)n);
        flat /= (uint64_t)n;
    }
}

static int tn_same_shape(const ktensor *a, const ktensor *b) {
    if (a->ndim != b->ndim) return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

char *tensor_shape_str(const ktensor *t) {
    kbuf b = KBUF_INIT;
    kbuf_putc(&b, '[');
    for (int i = 0; i < t->ndim; i++)
        kbuf_printf(&b, "%s%lld", i ? ", " : "", (long long)t->shape[i]);
    kbuf_putc(&b, ']');
    return kbuf_steal(&b);
}

/* Same class of non-finite value (NaN, +Inf, -Inf)? Both arguments are not both finite. */
static int tn_nonfinite_match(double r, double g) {
    if (isnan(r) || isnan(g)) return isnan(r) && isnan(g);
    return r == g;
}

int tensor_compare(const ktensor *ref, const ktensor *got, double atol, double rtol,
                   tensor_cmp *res, kerr *e) {
    memset(res, 0, sizeof *res);
    res->first_mismatch = res->first_nonfinite_mismatch = SIZE_MAX;
    if (!tn_same_shape(ref, got) || ref->numel != got->numel) {
        res->shape_mismatch = 1;
        char *a = tensor_shape_str(ref), *b = tensor_shape_str(got);
        int r = kerr_set(e, KOPT_E_CANDIDATE, "shape mismatch: expected %s, got %s", a, b);
        free(a);
        free(b);
        return r;
    }
    res->numel = ref->numel;
    for (size_t i = 0; i < ref->numel; i++) {
        double r = ref->data[i], g = got->data[i];
        int bad;
        if (isfinite(r) && isfinite(g)) {
            double d = fabs(g - r);
            if (d > res->max_abs_err) {
                res->max_abs_err = d;
                res->max_abs_index = i;
                res->ref_at_max_abs = r;
                res->got_at_max_abs = g;
            }
            if (r != 0.0 && d / fabs(r) > res->max_rel_err) {
                res->max_rel_err = d / fabs(r);
                res->max_rel_index = i;
            }
            bad = !(d <= atol + rtol * fabs(r));
        } else {
            bad = !tn_nonfinite_match(r, g);
            if (bad) {
                res->n_nonfinite_mismatch++;
                if (res->first_nonfinite_mismatch == SIZE_MAX) res->first_nonfinite_mismatch = i;
            }
        }
        if (bad) {
            res->n_mismatch++;
            if (res->first_mismatch == SIZE_MAX) res->first_mismatch = i;
        }
    }
    tensor_unravel(ref, res->max_abs_index, res->max_abs_pos);
    tensor_unravel(ref, res->max_rel_index, res->max_rel_pos);
    res->pass = res->n_mismatch == 0;
    return 0;
}

double tensor_max_abs_diff(const ktensor *a, const ktensor *b) {
    if (!tn_same_shape(a, b) || a->numel != b->numel) return INFINITY;
    double m = 0.0;
    for (size_t i = 0; i < a->numel; i++) {
        double x = a->data[i], y = b->data[i];
        if (isfinite(x) && isfinite(y)) {
            double d = fabs(x - y);
            if (d > m) m = d;
        } else if (!tn_nonfinite_match(x, y)) {
            return INFINITY;
        }
    }
    return m;
}

static void tn_put_index(kbuf *b, const ktensor *t, size_t flat) {
    int64_t idx[KTENSOR_MAX_DIMS];
    tensor_unravel(t, flat, idx);
    kbuf_putc(b, '[');
    for (int i = 0; i < t->ndim; i++) kbuf_printf(b, "%s%lld", i ? ", " : "", (long long)idx[i]);
    kbuf_putc(b, ']');
}

int tensor_compare_files(const json_t *ref_desc, const json_t *got_desc, double atol, double rtol, tensor_cmp *res,
                         char **where, kerr *e) {
    ktensor ref, got;
    if (where) *where = NULL;
    memset(res, 0, sizeof *res);
    if (tensor_load(ref_desc, &ref, e)) return e->code;
    if (tensor_load(got_desc, &got, e)) {
        tensor_free(&ref);
        return e->code;
    }
    if (atol < 0 || rtol < 0) tensor_default_tol(ref.dtype, &atol, &rtol);
    kerr ce = {0};
    int rc = tensor_compare(&ref, &got, atol, rtol, res, &ce);
    if (rc && !res->shape_mismatch) *e = ce;   /* a shape mismatch is a verdict */
    else rc = 0;
    if (!rc && !res->pass && where) *where = tensor_cmp_str(&ref, &got, res);
    tensor_free(&ref);
    tensor_free(&got);
    return rc;
}

char *tensor_cmp_str(const ktensor *ref, const ktensor *got, const tensor_cmp *res) {
    kbuf b = KBUF_INIT;
    if (res->shape_mismatch) {
        char *x = tensor_shape_str(ref), *y = tensor_shape_str(got);
        kbuf_printf(&b, "shape mismatch: expected %s, got %s", x, y);
        free(x);
        free(y);
        return kbuf_steal(&b);
    }
    if (res->pass) {
        kbuf_printf(&b, "ok (%zu elements, max abs err %.3g)", res->numel, res->max_abs_err);
        return kbuf_steal(&b);
    }
    kbuf_printf(&b, "%zu of %zu elements differ", res->n_mismatch, res->numel);
    if (res->n_nonfinite_mismatch)
        kbuf_printf(&b, " (%zu non-finite)", res->n_nonfinite_mismatch);
    if (res->max_abs_err > 0) {
        kbuf_printf(&b, "; max abs err %.3g at ", res->max_abs_err);
        tn_put_index(&b, ref, res->max_abs_index);
        kbuf_printf(&b, " (ref %.6g, got %.6g)", res->ref_at_max_abs, res->got_at_max_abs);
    }
    if (res->first_nonfinite_mismatch != SIZE_MAX) {
        size_t i = res->first_nonfinite_mismatch;
        kbuf_puts(&b, "; first non-finite mismatch at ");
        tn_put_index(&b, ref, i);
        kbuf_printf(&b, " (ref %.6g, got %.6g)", ref->data[i], got->data[i]);
    }
    return kbuf_steal(&b);
}
