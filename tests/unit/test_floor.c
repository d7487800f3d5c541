/* The model floor and the floor check (profile/floor.h), the per-launch traffic and arithmetic
 * behind them (inspect_launch_table, roof_vendor_math), and the two H200 cases that broke the
 * floor: level2/08 (conv2d + BN + hardswish + channel max under max-autotune: a TF32
 * convolution held to the fp32 rate, a reused buffer counted as written) and level1/38 (an
 * aten avg_pool3d fallback whose output is an alias of the call's result). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "profile/floor.h"
#include "profile/inspect.h"
#include "profile/roofline.h"
#include "testutil.h"

#define L2 62914560.0   /* the H200's L2, as the worker reports it */

/* A launch row as inspect_launch_table writes the fields floor.c reads. */
static json_t *row(const char *kind, const char *name, double ms, double rd, double wr, double flops, double frac,
                   const char *math) {
    json_t *r = json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:f}", "kind", kind, "name", name, "time_ms", ms,
                          "bytes_read", rd, "bytes_written", wr, "flops", flops, "frac_of_ceiling", frac);
    if (math) json_object_set_new(r, "math", json_string(math));
    return r;
}

static roof_ceilings h200(void) {
    roof_ceilings c = {.copy_bytes_per_s = 3.79e12, .read_bytes_per_s = 4.40e12, .write_bytes_per_s = 4.50e12,
                       .fp32_flops_per_s = 51.3e12, .tf32_flops_per_s = 417e12, .bf16_flops_per_s = 790e12,
                       .tf32_matmul = 0, .tf32_cudnn = 1};
    return c;
}

/* frac_of_ceiling of a row at c, as inspect_launch_table computes it. */
static double frac(double ms, double rd, double wr, double flops, const roof_ceilings *c, roof_math m) {
    roof_traffic t = {.bytes_read = rd, .bytes_written = wr, .flops = flops};
    return roof_fraction_of_peak(&t, ms, c, m);
}

Test(floor, vendor_math_follows_the_dtype_and_torch_tf32_settings) {
    roof_ceilings c = h200();
    cr_expect_eq(roof_vendor_math("convolution", "float32", &c), ROOF_MATH_TF32);   /* cudnn.allow_tf32 on */
    cr_expect_eq(roof_vendor_math("mm", "float32", &c), ROOF_MATH_FP32);            /* matmul.allow_tf32 off */
    cr_expect_eq(roof_vendor_math("addmm", "bfloat16", &c), ROOF_MATH_BF16);
    cr_expect_eq(roof_vendor_math("convolution", "float16", &c), ROOF_MATH_BF16);
    c.tf32_cudnn = 0;
    c.tf32_matmul = 1;
    cr_expect_eq(roof_vendor_math("convolution", "float32", &c), ROOF_MATH_FP32);
    cr_expect_eq(roof_vendor_math("bmm", "float32", &c), ROOF_MATH_TF32);
    c.tf32_cudnn = c.tf32_matmul = -1;   /* unknown: the faster arithmetic, a floor never too high */
    cr_expect_eq(roof_vendor_math("convolution", "float32", &c), ROOF_MATH_TF32);
    cr_expect_eq(roof_vendor_math("mm", NULL, &c), ROOF_MATH_TF32);
    cr_expect_eq(roof_vendor_math("avg_pool3d", "float32", &c), ROOF_MATH_FP32);
    cr_expect_float_eq(roof_math_rate(&c, ROOF_MATH_TF32), 417e12, 1);
    c.tf32_flops_per_s = 0;   /* no TF32 rate measured: bf16's, never slower */
    cr_expect_float_eq(roof_math_rate(&c, ROOF_MATH_TF32), 790e12, 1);
}

Test(floor, io_floor_and_library_calls_capped_at_their_time) {
    roof_ceilings c = h200();
    json_t *l = json_array();
    /* a TF32-rate conv of 3e11 flops: floor 0.72 ms, measured 1.3 ms */
    json_array_append_new(l, row("vendor", "extern_kernels.convolution", 1.3, 1e9, 2e9, 3e11,
                                 frac(1.3, 1e9, 2e9, 3e11, &c, ROOF_MATH_TF32), "tf32"));
    /* a GEMM whose floor (4 ms at the fp32 rate) is above its measured 1 ms: capped at 1 ms */
    json_array_append_new(l, row("vendor", "extern_kernels.mm", 1.0, 1e6, 1e6, 2.052e11,
                                 frac(1.0, 1e6, 1e6, 2.052e11, &c, ROOF_MATH_FP32), "fp32"));
    json_array_append_new(l, row("triton", "triton_poi_0", 0.9, 2e9, 2e9, 0, frac(0.9, 2e9, 2e9, 0, &c, 0), NULL));
    floor_model f;
    floor_model_compute(l, 1e9, 3e9, &c, L2, &f);
    cr_expect_float_eq(f.io_floor_ms, roof_memory_floor_s(1e9, 3e9, &c) * 1e3, 1e-12);
    cr_expect_float_eq(f.vendor_floor_ms, 3e11 / 417e12 * 1e3 + 1.0, 1e-9);
    cr_expect_float_eq(f.floor_ms, fmax(f.io_floor_ms, f.vendor_floor_ms), 1e-12);
    cr_expect_eq(f.rate_from, -1);
    cr_expect_float_eq(f.rates.read_bytes_per_s, c.read_bytes_per_s, 1);
    /* the GEMM is reported as below its floor, with why; the modules at or above the floor are not */
    floor_module_time mods[] = {{"torch.compile default", 3.5}, {"max-autotune", 2.0}};
    json_t *chk = floor_check(l, &f, &c, L2, mods, 2);
    cr_expect(json_is_false(json_object_get(chk, "ok")));
    cr_expect_eq(json_integer_value(json_object_get(chk, "checked")), 5);
    json_t *below = json_object_get(chk, "below");
    cr_assert_eq(json_array_size(below), 1);
    json_t *b = json_array_get(below, 0);
    cr_expect_str_eq(json_string_value(json_object_get(b, "what")), "extern_kernels.mm");
    cr_expect_str_eq(json_string_value(json_object_get(b, "kind")), "library call");
    cr_expect_float_eq(json_real_value(json_object_get(b, "floor_ms")), 2.052e11 / 51.3e12 * 1e3, 1e-9);
    cr_expect(strstr(json_string_value(json_object_get(b, "why")), "above the measured fp32 matrix rate") != NULL);
    json_decref(chk);
    json_decref(l);
}

Test(floor, a_large_kernel_above_the_rates_raises_them_as_far_as_it_proves) {
    roof_ceilings c = h200();
    json_t *l = json_array();
    /* reads 6 GB in 1.3 ms: 4.615 TB/s, above the measured 4.40 (a 512 MiB pass) */
    json_array_append_new(l, row("triton", "triton_red_fused_mean_0", 1.3, 6e9, 1e5, 0, frac(1.3, 6e9, 1e5, 0, &c, 0), NULL));
    floor_model f;
    floor_model_compute(l, 6e9, 1e5, &c, L2, &f);
    cr_expect_eq(f.rate_from, 0);
    cr_expect_float_eq(f.rates.read_bytes_per_s, 6e9 / 1.3e-3, 1);
    cr_expect_float_eq(f.rates.write_bytes_per_s, c.write_bytes_per_s, 1);   /* its writes prove nothing */
    cr_expect_float_eq(roof_memory_floor_s(6e9, 1e5, &f.rates) * 1e3, 1.3, 1e-9);   /* at the floor, not below */
    /* a module a little slower than the kernel is not below the raised floor; the kernel is
     * still reported against the measured rates */
    floor_module_time mods[] = {{"torch.compile default", 1.301}};
    json_t *chk = floor_check(l, &f, &c, L2, mods, 1);
    json_t *below = json_object_get(chk, "below");
    cr_assert_eq(json_array_size(below), 1);
    const char *why = json_string_value(json_object_get(json_array_get(below, 0), "why"));
    cr_expect(strstr(why, "the measured bandwidth is low") && strstr(why, "floor_rate_from: this kernel"), "%s", why);
    json_decref(chk);
    json_decref(l);
}

Test(floor, cache_sized_and_overcounted_kernels_prove_nothing) {
    roof_ceilings c = h200();
    json_t *l = json_array();
    /* 100 MB in 10 us: from L2 (under 4x the 63 MB L2) */
    json_array_append_new(l, row("triton", "small", 0.01, 5e7, 5e7, 0, frac(0.01, 5e7, 5e7, 0, &c, 0), NULL));
    /* 4.1 GB counted in 0.49 ms: 8.4 TB/s, 1.87x the best measured rate -- level2/08's in_out_ptr */
    json_array_append_new(l, row("triton", "overcounted", 0.49, 4.11e9, 3.2e7, 0, frac(0.49, 4.11e9, 3.2e7, 0, &c, 0), NULL));
    floor_model f;
    floor_model_compute(l, 1e9, 3.2e7, &c, L2, &f);
    cr_expect_eq(f.rate_from, -1);
    cr_expect_float_eq(f.rates.read_bytes_per_s, c.read_bytes_per_s, 1);
    cr_expect_float_eq(f.rates.copy_bytes_per_s, c.copy_bytes_per_s, 1);
    json_t *chk = floor_check(l, &f, &c, L2, NULL, 0);
    json_t *below = json_object_get(chk, "below");
    cr_assert_eq(json_array_size(below), 2);
    cr_expect(strstr(json_string_value(json_object_get(json_array_get(below, 0), "why")), "L2 cache"));
    cr_expect(strstr(json_string_value(json_object_get(json_array_get(below, 1), "why")), "the count is more than the kernel moves"));
    cr_expect(strstr(json_string_value(json_object_get(chk, "why")), "2 of the 2 measured times are below"));
    /* the analyst's list: both kernels, by name; a library call below its floor is not one */
    json_t *names = floor_check_kernels_below(chk);
    cr_assert_eq(json_array_size(names), 2);
    cr_expect_str_eq(json_string_value(json_array_get(names, 0)), "small");
    cr_expect_str_eq(json_string_value(json_array_get(names, 1)), "overcounted");
    json_decref(names);
    json_array_append_new(json_object_get(chk, "below"), json_pack("{s:s, s:s}", "what", "extern_kernels.mm", "kind", "library call"));
    names = floor_check_kernels_below(chk);
    cr_expect_eq(json_array_size(names), 2);
    json_decref(names);
    json_decref(chk);
    names = floor_check_kernels_below(NULL);
    cr_expect_eq(json_array_size(names), 0);
    json_decref(names);
    /* without the L2 size nothing is evidence */
    json_array_clear(l);
    json_array_append_new(l, row("triton", "big", 1.3, 6e9, 1e5, 0, frac(1.3, 6e9, 1e5, 0, &c, 0), NULL));
    floor_model_compute(l, 6e9, 1e5, &c, 0, &f);
    cr_expect_eq(f.rate_from, -1);
    json_decref(l);
}

Test(floor, a_module_below_the_model_floor_is_reported) {
    roof_ceilings c = h200();
    json_t *l = json_array();
    json_array_append_new(l, row("triton", "k", 1.0, 4.2e9, 0, 0, frac(1.0, 4.2e9, 0, 0, &c, 0), NULL));
    floor_model f;
    floor_model_compute(l, 8.8e9, 0, &c, L2, &f);   /* an input of 8.8 GB of which the model reads half */
    floor_module_time mods[] = {{"torch.compile default", 1.02}, {"max-autotune", 0}, {"kopt's module", 0.99}};
    json_t *chk = floor_check(l, &f, &c, L2, mods, 3);
    cr_expect(json_is_false(json_object_get(chk, "ok")));
    cr_expect_eq(json_integer_value(json_object_get(chk, "checked")), 3);   /* max-autotune not measured */
    json_t *below = json_object_get(chk, "below");
    cr_assert_eq(json_array_size(below), 2);
    json_t *b = json_array_get(below, 1);
    cr_expect_str_eq(json_string_value(json_object_get(b, "what")), "kopt's module");
    cr_expect_str_eq(json_string_value(json_object_get(b, "kind")), "module");
    cr_expect_float_eq(json_real_value(json_object_get(b, "ratio")), 0.99 / f.floor_ms, 1e-9);
    json_decref(chk);
    /* all at or above their floors: ok */
    mods[0].time_ms = mods[2].time_ms = 2.5;
    chk = floor_check(l, &f, &c, L2, mods, 3);
    cr_expect(json_is_true(json_object_get(chk, "ok")));
    cr_expect_eq(json_array_size(json_object_get(chk, "below")), 0);
    cr_expect(strstr(json_string_value(json_object_get(chk, "why")), "none of the 3 measured times"));
    json_decref(chk);
    json_decref(l);
}

/* ---- the captured H200 modules ---- */

typedef struct shape_of {
    const char *name, *shape;
    double nbytes;
} shape_of;

/* The worker's `profile` answer for a module: each probe item described by its buffer's shape
 * (others as plain values), one rep with the given per-launch times. */
static json_t *profile_of(const artifact *a, const shape_of *sh, size_t nsh, const double *ms) {
    json_t *launches = json_array(), *times = json_array();
    for (size_t i = 0; i < a->nlaunches; i++) {
        json_t *args = json_array();
        for (size_t j = 0; j < art_launch_probe_count(&a->launches[i]); j++) {
            const char *it = art_launch_probe_item(&a->launches[i], j);
            json_t *d = NULL;
            for (size_t k = 0; k < nsh && !d; k++)
                if (it && !strcmp(it, sh[k].name))
                    d = json_pack("{s:o, s:s, s:f}", "shape", json_loads(sh[k].shape, 0, NULL), "dtype", "float32",
                                  "nbytes", sh[k].nbytes);
            json_array_append_new(args, d ? d : json_pack("{s:i}", "value", 0));
        }
        json_array_append_new(launches, json_pack("{s:o}", "args", args));
        json_array_append_new(times, json_real(ms[i]));
    }
    return json_pack("{s:o, s:[o]}", "launches", launches, "times", times);
}

static json_t *h200_ceilings(int with_tf32) {
    json_t *c = json_pack("{s:f, s:f, s:f, s:f, s:f}", "copy_gbps", 3789.7, "read_gbps", 4615.0, "write_gbps", 4692.1,
                          "fp32_tflops", 51.33, "bf16_tflops", 798.7);
    if (with_tf32) {
        json_object_set_new(c, "tf32_tflops", json_real(417.2));
        json_object_set_new(c, "tf32_allowed", json_pack("{s:b, s:b}", "matmul", 0, "cudnn", 1));
    }
    return c;
}

Test(floor, level2_08_conv_bn_hardswish_max_floor_is_below_the_modules) {
    size_t n = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/suite_level2_08_conv2d_bn_hardswish_channel_max__max_autotune_no_cudagraphs_g0.py", &n);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s", e.msg);
    cr_assert_eq(a->nlaunches, 4);
    const double x = 160.0 * 32 * 224 * 224 * 4, y = 160.0 * 64 * 224 * 224 * 4, o = 160.0 * 224 * 224 * 4;
    const shape_of sh[] = {
        {"arg0_1", "[64, 32, 3, 3]", 73728}, {"arg1_1", "[160, 32, 224, 224]", x}, {"arg2_1", "[64]", 256},
        {"arg3_1", "[64]", 256}, {"arg4_1", "[64]", 256}, {"arg5_1", "[64]", 256}, {"buf0", "[160, 32, 224, 224]", x},
        {"buf1", "[64, 32, 3, 3]", 73728}, {"buf2", "[160, 64, 224, 224]", y}, {"buf3", "[160, 64, 224, 224]", y},
        {"buf4", "[160, 224, 224]", o},
    };
    /* per-launch times measured on the H200 (ms): layout copy, weight copy, cuDNN conv, the fused max */
    const double ms[] = {0.481, 0.0039, 1.300, 0.489};
    json_t *prof = profile_of(a, sh, sizeof sh / sizeof *sh, ms);
    json_t *ceil = h200_ceilings(1);
    double sum = 0;
    json_t *rows = inspect_launch_table(a, prof, ceil, &sum);
    /* the fused max reads the conv output once: in_out_ptr0 is only loaded (a reused buffer) */
    json_t *k2 = json_array_get(rows, 3);
    cr_expect_float_eq(json_real_value(json_object_get(k2, "bytes_read")), y + 4 * 256, 1);
    cr_expect_float_eq(json_real_value(json_object_get(k2, "bytes_written")), o, 1);
    cr_expect_lt(json_real_value(json_object_get(k2, "frac_of_ceiling")), 1.0);
    /* the fp32 conv runs on TF32 tensor cores (cudnn.allow_tf32): its floor is below its time */
    json_t *conv = json_array_get(rows, 2);
    cr_expect_str_eq(json_string_value(json_object_get(conv, "math")), "tf32");
    double flops = 2.0 * 160 * 64 * 224 * 224 * 32 * 9;
    cr_expect_float_eq(json_real_value(json_object_get(conv, "flops")), flops, 1e3);
    cr_expect_lt(json_real_value(json_object_get(conv, "frac_of_ceiling")), 1.0);
    double written = 0, io = inspect_io_bytes(a, rows, &written);
    cr_expect_float_eq(io, x + 73728 + 4 * 256 + o, 1);
    roof_ceilings m = inspect_roof_ceilings(ceil);
    floor_model f;
    floor_model_compute(rows, io - written, written, &m, L2, &f);
    cr_expect_float_eq(f.vendor_floor_ms, flops / 417.2e12 * 1e3, 1e-9);
    floor_module_time mods[] = {{"torch.compile default", 2.725}, {"max-autotune", 2.312}};
    json_t *chk = floor_check(rows, &f, &m, L2, mods, 2);
    cr_expect(json_is_true(json_object_get(chk, "ok")), "%s", json_string_value(json_object_get(chk, "why")));
    json_decref(chk);
    json_decref(rows);

    /* with TF32 off for cuDNN the fp32 rate applies: the conv (1.3 ms) beats its 5.77 ms floor,
     * the model floor counts the call's time instead, and the check says so */
    json_object_set_new(ceil, "tf32_allowed", json_pack("{s:b, s:b}", "matmul", 0, "cudnn", 0));
    rows = inspect_launch_table(a, prof, ceil, &sum);
    m = inspect_roof_ceilings(ceil);
    floor_model_compute(rows, io - written, written, &m, L2, &f);
    cr_expect_float_eq(f.vendor_floor_ms, 1.300, 1e-9);
    cr_expect_leq(f.floor_ms, 2.312);
    chk = floor_check(rows, &f, &m, L2, mods, 2);
    json_t *below = json_object_get(chk, "below");
    cr_assert_eq(json_array_size(below), 1);
    cr_expect_str_eq(json_string_value(json_object_get(json_array_get(below, 0), "what")), "extern_kernels.convolution");
    json_decref(chk);
    json_decref(rows);
    json_decref(ceil);
    json_decref(prof);
    artifact_free(a);
    free(text);
}

Test(floor, level1_38_avg_pool3d_output_through_an_alias) {
    size_t n = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/suite_level1_38_avg_pool3d_g0.py", &n);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s", e.msg);
    cr_assert_eq(a->nlaunches, 1);
    cr_expect_eq(a->launches[0].kind, ART_L_VENDOR);
    cr_expect_eq(a->nkernels, 0);
    const double x = 16.0 * 32 * 64 * 128 * 128 * 4, o = 16.0 * 32 * 32 * 64 * 64 * 4;
    const shape_of sh[] = {{"arg0_1", "[16, 32, 64, 128, 128]", x}, {"buf0", "[16, 32, 32, 64, 64]", o}};
    const double ms[] = {2.12};
    json_t *prof = profile_of(a, sh, 2, ms);
    json_t *ceil = h200_ceilings(1);
    double sum = 0;
    json_t *rows = inspect_launch_table(a, prof, ceil, &sum);
    /* `buf1 = buf0` then `return (buf1, )`: buf0 is the graph's output */
    double written = 0, io = inspect_io_bytes(a, rows, &written);
    cr_expect_float_eq(written, o, 1);
    cr_expect_float_eq(io, x + o, 1);
    json_decref(rows);
    json_decref(ceil);
    json_decref(prof);
    artifact_free(a);
    free(text);
}

Test(floor, in_out_ptr_stored_or_only_loaded) {
    size_t n = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/suite_level2_08_conv2d_bn_hardswish_channel_max__max_autotune_no_cudagraphs_g0.py", &n);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s", e.msg);
    int k = artifact_find_kernel(a, "triton_per_fused__native_batch_norm_legit_no_training_amax_hardswish_2");
    cr_assert_geq(k, 0);
    cr_expect_eq(art_kernel_param_stored(&a->kernels[k], "in_out_ptr0"), 0);
    cr_expect_eq(art_kernel_param_stored(&a->kernels[k], "out_ptr0"), 1);
    cr_expect_eq(art_kernel_param_stored(&a->kernels[k], "in_ptr0"), 0);
    artifact_free(a);
    free(text);
    /* 14_gemm_bias_relu's epilogue writes its in_out_ptr0 back */
    text = tu_read_fixture("tests/fixtures/inductor/14_gemm_bias_relu_g0.py", &n);
    cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s", e.msg);
    int stored = 0;
    for (size_t i = 0; i < a->nkernels; i++)
        for (size_t p = 0; p < a->kernels[i].nparams; p++)
            if (!strcmp(a->kernels[i].params[p].name, "in_out_ptr0"))
                stored |= art_kernel_param_stored(&a->kernels[i], "in_out_ptr0");
    cr_expect_eq(stored, 1);
    artifact_free(a);
    free(text);
}

Test(floor, ceilings_are_the_fastest_runs_with_tf32_and_torch_settings) {
    json_t *raw = json_loads("{\"copy_bytes\": 2e9, \"copy_ms\": [0.6, 0.5, 0.55], \"read_bytes\": 4e9, "
                             "\"read_ms\": [1.0, 0.9, 0.95], \"write_bytes\": 4e9, \"write_ms\": [0.9, 0.88], "
                             "\"mm_fp32\": {\"flops\": 1e12, \"ms\": [21, 20]}, \"mm_tf32\": {\"flops\": 1e12, "
                             "\"ms\": [2.6, 2.5]}, \"mm_bf16\": {\"flops\": 1e12, \"ms\": [1.3, 1.25]}, "
                             "\"tf32\": {\"matmul\": false, \"cudnn\": true}}",
                             0, NULL);
    cr_assert(raw);
    json_t *c = inspect_ceilings(raw);
    cr_expect_float_eq(json_real_value(json_object_get(c, "copy_gbps")), 2e9 / 0.5e-3 / 1e9, 1e-9);
    cr_expect_float_eq(json_real_value(json_object_get(c, "read_gbps")), 4e9 / 0.9e-3 / 1e9, 1e-9);
    cr_expect_float_eq(json_real_value(json_object_get(c, "write_gbps")), 4e9 / 0.88e-3 / 1e9, 1e-9);
    cr_expect_float_eq(json_real_value(json_object_get(c, "fp32_tflops")), 50.0, 1e-9);
    cr_expect_float_eq(json_real_value(json_object_get(c, "tf32_tflops")), 400.0, 1e-9);
    cr_expect_float_eq(json_real_value(json_object_get(c, "bf16_tflops")), 800.0, 1e-9);
    roof_ceilings r = inspect_roof_ceilings(c);
    cr_expect_eq(r.tf32_matmul, 0);
    cr_expect_eq(r.tf32_cudnn, 1);
    cr_expect_float_eq(r.tf32_flops_per_s, 400e12, 1);
    json_decref(c);
    /* an older worker: no TF32 rate, no settings -> unknown */
    json_object_del(raw, "mm_tf32");
    json_object_del(raw, "tf32");
    c = inspect_ceilings(raw);
    cr_expect_null(json_object_get(c, "tf32_tflops"));
    r = inspect_roof_ceilings(c);
    cr_expect_eq(r.tf32_matmul, -1);
    cr_expect_eq(r.tf32_cudnn, -1);
    cr_expect_float_eq(r.tf32_flops_per_s, 0, 1e-9);
    json_decref(c);
    json_decref(raw);
}

/* max-autotune's module for level2/04 (captured on the H200) calls extern_kernels.bias_addmm,
 * which once counted no flops: the model floor fell to the memory floor (0.58 ms under a
 * 21.5 ms GEMM, "kopt / floor 38"). Its flops are addmm's, at the fp32 matrix rate. */
Test(floor, level2_04_bias_addmm_counts_its_flops) {
    size_t n = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/suite_level2_04_linear_softmax__max_autotune_no_cudagraphs_g0.py", &n);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s", e.msg);
    cr_assert_eq(a->nlaunches, 2);
    cr_expect_eq(a->launches[0].kind, ART_L_VENDOR);
    const double x = 65536.0 * 8192 * 4, o = 65536.0 * 1000 * 4;
    const shape_of sh[] = {{"reinterpret_tensor(arg1_1, (65536, 1000), (0, 1), 0)", "[65536, 1000]", 4000},
                           {"arg2_1", "[65536, 8192]", x},
                           {"reinterpret_tensor(arg0_1, (8192, 1000), (1, 8192), 0)", "[8192, 1000]", 8192.0 * 1000 * 4},
                           {"buf0", "[65536, 1000]", o},
                           {"out=buf0", "[65536, 1000]", o},
                           {"buf3", "[65536, 1000]", o}};
    const double ms[] = {21.34, 0.1285};   /* the H200's times of the GEMM and the softmax */
    json_t *prof = profile_of(a, sh, sizeof sh / sizeof *sh, ms);
    json_t *ceil = h200_ceilings(1);   /* TF32 off for matmuls: the fp32 rate */
    double sum = 0;
    json_t *rows = inspect_launch_table(a, prof, ceil, &sum);
    json_t *mm = json_array_get(rows, 0);
    const double flops = 2.0 * 65536 * 8192 * 1000;
    cr_expect_str_eq(json_string_value(json_object_get(mm, "op")), "bias_addmm");
    cr_expect_float_eq(json_real_value(json_object_get(mm, "flops")), flops, 1e3);
    cr_expect_str_eq(json_string_value(json_object_get(mm, "math")), "fp32");
    cr_expect_str_eq(json_string_value(json_object_get(mm, "bound")), "compute");
    double written = 0, io = inspect_io_bytes(a, rows, &written);
    roof_ceilings m = inspect_roof_ceilings(ceil);
    floor_model f;
    floor_model_compute(rows, io - written, written, &m, L2, &f);
    cr_expect_float_eq(f.vendor_floor_ms, flops / 51.33e12 * 1e3, 1e-9);   /* 20.9 ms */
    cr_expect_float_eq(f.floor_ms, f.vendor_floor_ms, 1e-12);
    floor_module_time mods[] = {{"torch.compile default", 21.49}, {"max-autotune", 21.49}};
    json_t *chk = floor_check(rows, &f, &m, L2, mods, 2);
    cr_expect(json_is_true(json_object_get(chk, "ok")), "%s", json_string_value(json_object_get(chk, "why")));
    json_decref(chk);
    json_decref(rows);
    json_decref(ceil);
    json_decref(prof);
    artifact_free(a);
    free(text);
}

/* An Inductor GEMM template (max-autotune's triton_tem_*: arg_A @ arg_B) is a Triton launch whose
 * floor is its flops at the matrix rate, as a library call's: the model floor counts it. The
 * handmade module's template multiplies 256x128 by 128x256. */
Test(floor, gemm_template_counts_its_flops) {
    size_t n = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/handmade_edge_def.py", &n);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s", e.msg);
    int t = -1;
    for (size_t i = 0; i < a->nlaunches; i++)
        if (!strcmp(a->launches[i].callee, "triton_tem_fused_mm_0")) t = (int)i;
    cr_assert_geq(t, 0);
    const shape_of sh[] = {{"arg1_1", "[256, 128]", 256.0 * 128 * 4}, {"arg2_1", "[128, 256]", 128.0 * 256 * 4},
                           {"buf0", "[256, 256]", 256.0 * 256 * 4}};
    double ms[16];
    for (size_t i = 0; i < 16; i++) ms[i] = 0.01;
    cr_assert_leq(a->nlaunches, 16);
    json_t *prof = profile_of(a, sh, sizeof sh / sizeof *sh, ms);
    json_t *ceil = h200_ceilings(1);   /* TF32 off for matmuls */
    double sum = 0;
    json_t *rows = inspect_launch_table(a, prof, ceil, &sum);
    json_t *tem = json_array_get(rows, (size_t)t);
    const double flops = 2.0 * 256 * 128 * 256;
    cr_expect_str_eq(json_string_value(json_object_get(tem, "kind")), "triton");
    cr_expect_float_eq(json_real_value(json_object_get(tem, "flops")), flops, 1);
    cr_expect_str_eq(json_string_value(json_object_get(tem, "math")), "fp32");
    roof_ceilings m = inspect_roof_ceilings(ceil);
    floor_model f;
    floor_model_compute(rows, 0, 0, &m, L2, &f);
    /* the template's floor (its flops or its bytes, whichever is longer) is in the library floor */
    double own = json_real_value(json_object_get(tem, "frac_of_ceiling")) * 0.01;
    cr_expect_gt(own, flops / 51.33e12 * 1e3 * 0.999);
    cr_expect_geq(f.vendor_floor_ms, own * 0.999);
    json_decref(rows);
    json_decref(ceil);
    json_decref(prof);
    artifact_free(a);
    free(text);
}
