#include "profile/roofline.h"

#include <string.h>

double roof_arg_bytes(const json_t *arg) {
    const json_t *nb = json_object_get(arg, "nbytes");
    return json_is_number(nb) ? json_number_value(nb) : 0.0;
}

static size_t arg_rank(const json_t *arg) { return json_array_size(json_object_get(arg, "shape")); }
static double arg_dim(const json_t *arg, size_t i) {
    return json_number_value(json_array_get(json_object_get(arg, "shape"), i));
}
static double arg_numel(const json_t *arg) {
    size_t r = arg_rank(arg);
    if (!json_is_array(json_object_get(arg, "shape"))) return 0;
    double n = 1;
    for (size_t i = 0; i < r; i++) n *= arg_dim(arg, i);
    return n;
}
static int is_tensor(const json_t *arg) { return json_is_array(json_object_get(arg, "shape")); }

void roof_triton_traffic(const roof_role *roles, size_t nroles, const json_t *args, roof_traffic *t) {
    memset(t, 0, sizeof *t);
    size_t n = json_array_size(args);
    for (size_t i = 0; i < n && i < nroles; i++) {
        double b = roof_arg_bytes(json_array_get(args, i));
        switch (roles[i]) {
        case ROLE_IN: t->bytes_read += b; break;
        case ROLE_OUT: t->bytes_written += b; break;
        case ROLE_INOUT: t->bytes_read += b; t->bytes_written += b; break;
        case ROLE_SCALAR: break;
        }
    }
}

static int is_gemm(const char *op) {
    return !strcmp(op, "mm") || !strcmp(op, "addmm") || !strcmp(op, "bmm") || !strcmp(op, "baddbmm") ||
           !strcmp(op, "bias_addmm");   /* max-autotune's addmm with a broadcast bias: cuBLAS's epilogue */
}

/* The i-th tensor argument that is not the output, or NULL. */
static const json_t *nth_input(const json_t *args, int out_index, int want) {
    int k = 0;
    for (size_t i = 0; i < json_array_size(args); i++) {
        const json_t *a = json_array_get(args, i);
        if ((int)i == out_index || !is_tensor(a)) continue;
        if (k++ == want) return a;
    }
    return NULL;
}

double roof_gemm_flops(const json_t *a, const json_t *b) {
    if (!a || !b || arg_rank(a) < 2 || arg_rank(b) < 2) return 0;
    size_t ra = arg_rank(a), rb = arg_rank(b);
    double m = arg_dim(a, ra - 2), k = arg_dim(a, ra - 1), nn = arg_dim(b, rb - 1);
    double batch = 1;
    for (size_t i = 0; i + 2 < ra; i++) batch *= arg_dim(a, i);
    return 2.0 * batch * m * k * nn;
}

void roof_vendor_traffic(const char *op, const json_t *args, int out_index, roof_traffic *t) {
    memset(t, 0, sizeof *t);
    const json_t *out = out_index >= 0 ? json_array_get(args, (size_t)out_index) : NULL;
    for (size_t i = 0; i < json_array_size(args); i++) {
        const json_t *a = json_array_get(args, i);
        if ((int)i == out_index) t->bytes_written += roof_arg_bytes(a);
        else t->bytes_read += roof_arg_bytes(a);
    }
    /* GEMM-like: the last two dims of the operands give M, K, N. */
    int first = 0, second = 1;
    if (!strcmp(op, "addmm") || !strcmp(op, "baddbmm") || !strcmp(op, "bias_addmm")) { first = 1; second = 2; }
    if (is_gemm(op)) {
        t->flops = roof_gemm_flops(nth_input(args, out_index, first), nth_input(args, out_index, second));
    } else if (!strcmp(op, "convolution") && out && is_tensor(out)) {
        const json_t *w = nth_input(args, out_index, 1);
        if (w && arg_rank(w) >= 3 && arg_dim(w, 0) > 0)
            t->flops = 2.0 * arg_numel(out) * (arg_numel(w) / arg_dim(w, 0));
    }
}

double roof_bandwidth(const roof_traffic *t, double ms) {
    if (ms <= 0) return 0;
    return (t->bytes_read + t->bytes_written) / (ms * 1e-3);
}

static double max2(double a, double b) { return a > b ? a : b; }

double roof_memory_floor_s(double bytes_read, double bytes_written, const roof_ceilings *c) {
    double rr = c->read_bytes_per_s > 0 ? c->read_bytes_per_s : c->copy_bytes_per_s;
    double wr = c->write_bytes_per_s > 0 ? c->write_bytes_per_s : c->copy_bytes_per_s;
    double best = max2(c->copy_bytes_per_s, max2(rr, wr));
    if (best <= 0) return 0;
    double f = (bytes_read + bytes_written) / best;
    if (rr > 0) f = max2(f, bytes_read / rr);
    if (wr > 0) f = max2(f, bytes_written / wr);
    return f;
}

roof_math roof_vendor_math(const char *op, const char *dtype, const roof_ceilings *c) {
    if (dtype && (!strcmp(dtype, "bfloat16") || !strcmp(dtype, "float16"))) return ROOF_MATH_BF16;
    if (dtype && strcmp(dtype, "float32")) return ROOF_MATH_FP32;
    if (op && strstr(op, "convolution")) return c->tf32_cudnn == 0 ? ROOF_MATH_FP32 : ROOF_MATH_TF32;
    if (op && is_gemm(op)) return c->tf32_matmul == 0 ? ROOF_MATH_FP32 : ROOF_MATH_TF32;
    return ROOF_MATH_FP32;
}

double roof_math_rate(const roof_ceilings *c, roof_math m) {
    switch (m) {
    case ROOF_MATH_BF16: return c->bf16_flops_per_s;
    case ROOF_MATH_TF32: return c->tf32_flops_per_s > 0 ? c->tf32_flops_per_s : c->bf16_flops_per_s;
    case ROOF_MATH_FP32: break;
    }
    return c->fp32_flops_per_s;
}

double roof_floor_s(const roof_traffic *t, const roof_ceilings *c, roof_math m) {
    double tb = roof_memory_floor_s(t->bytes_read, t->bytes_written, c);
    double rate = roof_math_rate(c, m);
    double tf = (rate > 0 && t->flops > 0) ? t->flops / rate : 0;
    return max2(tb, tf);
}

double roof_fraction_of_peak(const roof_traffic *t, double ms, const roof_ceilings *c, roof_math m) {
    if (ms <= 0) return 0;
    return roof_floor_s(t, c, m) / (ms * 1e-3);
}
