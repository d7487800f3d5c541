/* The parser on Inductor modules of the KernelBench-scale suite (bench/suite), captured on an
 * H200 by tools/capture_suite_fixtures.py at scaled-down shapes: each problem's kernels (kind),
 * its launches in order (Triton kernels and library calls), no warnings, and a byte-identical
 * round trip through the emitter. */
#include <criterion/criterion.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "testutil.h"

typedef struct {
    const char *file;
    const char *kinds;     /* kernel kinds, comma-separated */
    const char *callees;   /* launches in call() order */
} suite_case;

#define D "tests/fixtures/inductor/suite_"
static const suite_case SUITE[] = {
    {D "level1_01_softmax_wide_rows_small_g0.py", "reduction", "triton_red_fused__softmax_exp_prepare_softmax_online_sub_0"},
    {D "level1_02_log_softmax_wide_rows_small_g0.py", "reduction", "triton_red_fused__log_softmax_prepare_softmax_online_sub_0"},
    {D "level1_06_layer_norm_small_g0.py", "reduction", "triton_red_fused_native_layer_norm_0"},
    {D "level1_08_group_norm_small_g0.py", "reduction,pointwise",
     "triton_red_fused_native_group_norm_0,triton_poi_fused_native_group_norm_1"},
    {D "level1_16_sum_middle_dim_keepdim_small_g0.py", "reduction", "triton_red_fused_sum_0"},
    {D "level1_22_argmax_last_dim_small_g0.py", "reduction", "triton_red_fused_argmax_0"},
    {D "level1_27_cumsum_rows_small_g0.py", "reduction", "triton_red_fused_cumsum_0"},
    {D "level1_34_max_pool2d_small_g0.py", "pointwise", "triton_poi_fused_max_pool2d_with_indices_0"},
    {D "level1_37_avg_pool2d_small_g0.py", "persistent_reduction", "triton_per_fused_avg_pool2d_0"},
    {D "level1_40_cross_entropy_small_g0.py", "reduction,reduction",
     "triton_red_fused_prepare_softmax_online_0,triton_red_fused__log_softmax_nll_loss_forward_sub_1"},
    {D "level2_02_conv2d_groupnorm_relu_fp16_small_g0.py", "pointwise,pointwise,reduction,pointwise",
     "triton_poi_fused_convolution_0,triton_poi_fused_convolution_1,extern_kernels.convolution,"
     "triton_red_fused_convolution_native_group_norm_2,triton_poi_fused_convolution_native_group_norm_relu_3"},
    {D "level2_06_linear_scale_residual_rmsnorm_small_g0.py", "reduction",
     "extern_kernels.mm,triton_red_fused__fused_rms_norm_add_addmm_mul_0"},
};
#undef D

Test(suite_fixtures, kernels_launches_and_round_trip) {
    for (size_t c = 0; c < sizeof SUITE / sizeof *SUITE; c++) {
        size_t n = 0;
        char *text = tu_read_fixture(SUITE[c].file, &n);
        artifact *a = NULL;
        kerr e = {0};
        cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s: %s", SUITE[c].file, e.msg);
        cr_expect_eq(a->warnings.n, 0, "%s: %s", SUITE[c].file, a->warnings.n ? a->warnings.v[0] : "");
        cr_expect_eq(artifact_count(a, ART_ST_UNKNOWN), 0, "%s", SUITE[c].file);
        kbuf k = KBUF_INIT, l = KBUF_INIT, rt = KBUF_INIT;
        for (size_t i = 0; i < a->nkernels; i++)
            kbuf_printf(&k, "%s%s", i ? "," : "", art_kernel_kind_name(a->kernels[i].kind));
        for (size_t i = 0; i < a->nlaunches; i++) kbuf_printf(&l, "%s%s", i ? "," : "", a->launches[i].callee);
        cr_expect_str_eq(kbuf_str(&k), SUITE[c].kinds, "%s", SUITE[c].file);
        cr_expect_str_eq(kbuf_str(&l), SUITE[c].callees, "%s", SUITE[c].file);
        for (size_t i = 0; i < a->nkernels; i++) cr_expect_gt(a->kernels[i].aten_ops.n, 0, "%s", SUITE[c].file);
        art_emit_opts eo = {0};
        cr_assert_eq(artifact_emit(a, &eo, &rt, &e), 0, "%s: %s", SUITE[c].file, e.msg);
        cr_expect(rt.len == n && !memcmp(kbuf_str(&rt), text, n), "%s: the round trip is not byte-identical", SUITE[c].file);
        kbuf_free(&k);
        kbuf_free(&l);
        kbuf_free(&rt);
        artifact_free(a);
        free(text);
    }
}
