#include <criterion/criterion.h>
#include <jansson.h>

#include "profile/roofline.h"

static json_t *T(double nbytes, const char *shape_json) {
    json_t *o = json_pack("{s:f}", "nbytes", nbytes);
    json_object_set_new(o, "shape", json_loads(shape_json, 0, NULL));
    return o;
}

Test(roofline, triton_roles_count_inout_twice_and_skip_scalars) {
    json_t *args = json_array();
    json_array_append_new(args, T(4000, "[1000]"));            /* in_out_ptr0 */
    json_array_append_new(args, T(400, "[100]"));              /* in_ptr0 */
    json_array_append_new(args, T(800, "[200]"));              /* out_ptr0 */
    json_array_append_new(args, json_pack("{s:i}", "value", 1000)); /* xnumel */
    roof_role roles[] = {ROLE_INOUT, ROLE_IN, ROLE_OUT, ROLE_SCALAR};
    roof_traffic t;
    roof_triton_traffic(roles, 4, args, &t);
    cr_expect_float_eq(t.bytes_read, 4400, 1e-9);
    cr_expect_float_eq(t.bytes_written, 4800, 1e-9);
    cr_expect_float_eq(t.flops, 0, 1e-9);
    json_decref(args);
}

Test(roofline, addmm_flops_and_bytes) {
    /* addmm(bias[N], a[M,K], b[K,N], out=c[M,N]) with M=2048, K=4096, N=1024 */
    json_t *args = json_array();
    json_array_append_new(args, T(4 * 1024, "[1024]"));
    json_array_append_new(args, T(4.0 * 2048 * 4096, "[2048, 4096]"));
    json_array_append_new(args, T(4.0 * 4096 * 1024, "[4096, 1024]"));
    json_array_append_new(args, json_pack("{s:i}", "value", 1));
    json_array_append_new(args, T(4.0 * 2048 * 1024, "[2048, 1024]"));
    roof_traffic t;
    roof_vendor_traffic("addmm", args, 4, &t);
    cr_expect_float_eq(t.flops, 2.0 * 2048 * 4096 * 1024, 1);
    cr_expect_float_eq(t.bytes_written, 4.0 * 2048 * 1024, 1e-6);
    cr_expect_float_eq(t.bytes_read, 4.0 * (1024 + 2048.0 * 4096 + 4096.0 * 1024), 1e-6);
    json_decref(args);
}

Test(roofline, bmm_and_convolution_flops) {
    json_t *args = json_array();
    json_array_append_new(args, T(0, "[8, 64, 32]"));
    json_array_append_new(args, T(0, "[8, 32, 16]"));
    json_array_append_new(args, T(0, "[8, 64, 16]"));
    roof_traffic t;
    roof_vendor_traffic("bmm", args, 2, &t);
    cr_expect_float_eq(t.flops, 2.0 * 8 * 64 * 32 * 16, 1e-6);
    json_decref(args);

    /* conv: x[2,3,10,10], w[4,3,3,3], out[2,4,8,8]: 2 * 512 * 27 */
    args = json_array();
    json_array_append_new(args, T(0, "[2, 3, 10, 10]"));
    json_array_append_new(args, T(0, "[4, 3, 3, 3]"));
    json_array_append_new(args, T(0, "[2, 4, 8, 8]"));
    roof_vendor_traffic("convolution", args, 2, &t);
    cr_expect_float_eq(t.flops, 2.0 * 512 * 27, 1e-6);
    json_decref(args);
}

Test(roofline, fraction_of_peak_uses_the_larger_floor) {
    roof_ceilings c = {.copy_bytes_per_s = 4e12, .fp32_flops_per_s = 50e12, .bf16_flops_per_s = 700e12};
    roof_traffic mem = {.bytes_read = 2e9, .bytes_written = 2e9, .flops = 0};
    /* 4 GB at 4 TB/s = 1 ms floor; measured 2 ms -> 50% */
    cr_expect_float_eq(roof_fraction_of_peak(&mem, 2.0, &c, 0), 0.5, 1e-9);
    cr_expect_float_eq(roof_bandwidth(&mem, 2.0), 2e12, 1);
    roof_traffic gemm = {.bytes_read = 4e6, .bytes_written = 4e6, .flops = 100e9};
    /* 100 GFLOP at 50 TFLOP/s = 2 ms floor; measured 4 ms -> 50% */
    cr_expect_float_eq(roof_fraction_of_peak(&gemm, 4.0, &c, 0), 0.5, 1e-9);
    cr_expect_float_eq(roof_fraction_of_peak(&gemm, 0.0, &c, 0), 0.0, 1e-12);
}
