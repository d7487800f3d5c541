/* Group-norm statistics over channels-last data (src/agents/builtin_groupstats.c) on the suite's
 * level2/02 captured at a small size (fp16 conv 128 -> GroupNorm(16, 128) on 64 x 64 pixels:
 * triton_red_fused_convolution_native_group_norm_2(in_ptr0, in_ptr1 the conv bias, out_ptr0,
 * out_ptr1, 2048, 32768)), and on hand-edited contexts for what must be refused: a different
 * computation in the FX graph, a different layout or reduced value in the source, other
 * parameter types or sizes. Every candidate goes through gate 1's C checks. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"

static const char *FX = "tests/fixtures/inductor/suite_level2_02_conv2d_groupnorm_relu_fp16_small_g0.py";
/* the same problem at the suite's size (256 x 256 pixels) compiled with max-autotune on the H200:
 * its loads carry `xmask` alone (r0_numel divides every R0_BLOCK) */
static const char *FX_MA =
    "tests/fixtures/inductor/suite_level2_02_conv2d_groupnorm_relu_fp16__max_autotune_no_cudagraphs_g0.py";

static json_t *stats_ctx_of(const char *fixture, artifact **out) {
    size_t len = 0;
    char *text = tu_read_fixture(fixture, &len);
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, len, out, &e), 0, "%s", e.msg);
    free(text);
    int k = artifact_find_kernel(*out, "triton_red_fused_convolution_native_group_norm_2");
    cr_assert_geq(k, 0);
    return opt_kernel_ctx(*out, k, NULL);
}

static json_t *stats_ctx(artifact **out) { return stats_ctx_of(FX, out); }

static int matches(const json_t *k) {
    gs_spec gs;
    return builtin_group_stats_match(tu_kf(k), &gs);
}

static void edit_all(json_t *c, const char *field, const char *what, const char *with) {
    if (!strcmp(field, "graph_fragment")) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(c, "graph_fragment"), i, v) {
            char *n = tu_replace_all(json_string_value(v), what, with);
            json_string_set(v, n);
            free(n);
        }
        return;
    }
    char *n = tu_replace_all(json_string_value(json_object_get(c, field)), what, with);
    json_object_set_new(c, field, json_string(n));
    free(n);
}

/* A copy of the context with `what` replaced by `with` in string field `field` (the source),
 * or in every graph line (field "graph_fragment"); the replacement must happen. */
static json_t *edited(const json_t *k, const char *field, const char *what, const char *with) {
    json_t *c = json_deep_copy(k);
    edit_all(c, field, what, with);
    cr_assert(!json_equal(c, k), "%s: no %s to edit", field, what);
    return c;
}

Test(groupstats, conv_bias_group_norm_statistics_channels_last) {
    artifact *a = NULL;
    json_t *k = stats_ctx(&a);
    gs_spec gs;
    cr_assert_eq(builtin_group_stats_match(tu_kf(k), &gs), 1);
    cr_assert(gs.n == 128 && gs.g == 16 && gs.cg == 8 && gs.hw == 4096 && gs.bias == 1, "%lld %lld %lld %lld %d", gs.n,
              gs.g, gs.cg, gs.hw, gs.bias);
    double eps = 0;
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "cl_group_stats",
                     "the planner's entry point finds the family");
    /* the other kernels of the model are not this */
    for (size_t i = 0; i < a->nkernels; i++) {
        if (!strcmp(a->kernels[i].name, "triton_red_fused_convolution_native_group_norm_2")) continue;
        json_t *o = opt_kernel_ctx(a, (int)i, NULL);
        cr_assert_eq(matches(o), 0, "%s", a->kernels[i].name);
        json_decref(o);
    }
    /* variants: 1024 programs (128 samples x 8 chunks) first, all tiling 4096 pixels */
    json_t *v = builtin_group_stats_variants(tu_kf(k));
    cr_assert_geq(json_array_size(v), 4);
    const json_t *v0 = json_array_get(v, 0);
    cr_assert(json_integer_value(json_object_get(v0, "nsplit")) == 8 &&
              json_integer_value(json_object_get(v0, "sb")) == 16 &&
              json_integer_value(json_object_get(v0, "num_warps")) == 16);
    json_t *plan =
        json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "cl_group_stats", "variants", v);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    int kk = artifact_find_kernel(a, "triton_red_fused_convolution_native_group_norm_2");
    tu_expect_gate1(out, &a->kernels[kk]);
    const char *src =
        json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source"));
    cr_assert(strstr(src, "# kopt-candidate: replaces=triton_red_fused_convolution_native_group_norm_2\n") == src, "%s",
              src);
    cr_assert(
        strstr(src, "\"params\": [\"in_ptr0\", \"in_ptr1\", \"out_ptr0\", \"out_ptr1\", \"xnumel\", \"r0_numel\"],"),
        "%s", src);
    cr_assert(strstr(src, "\"C\": 128, \"G\": 16, \"SB\": 16, \"NSPLIT\": 8, \"BIAS\": True"), "%s", src);
    cr_assert(strstr(src, "\"stride(in_ptr0, 1) == 1\""), "the launch checks the layout: %s", src);
    json_decref(out);
    /* a variant whose chunks do not tile the pixels, or past the limits, is not rendered */
    json_t *bad =
        json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i}, {s:i, s:i, s:i}, {s:i, s:i, s:i}]}}", "direction", "rewrite",
                  "params", "template", "cl_group_stats", "variants", "nsplit", 64, "sb", 128, "num_warps", 8, "nsplit",
                  8, "sb", 256, "num_warps", 8, "nsplit", 6, "sb", 16, "num_warps", 8);
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(bad), &out, &e), KOPT_E_CANDIDATE);
    json_decref(bad);
    json_decref(plan);
    json_decref(k);
    artifact_free(a);
}

Test(groupstats, the_suite_size_under_max_autotune) {
    artifact *a = NULL;
    json_t *k = stats_ctx_of(FX_MA, &a);
    gs_spec gs;
    cr_assert_eq(builtin_group_stats_match(tu_kf(k), &gs), 1);
    cr_assert(gs.n == 128 && gs.g == 16 && gs.cg == 8 && gs.hw == 65536 && gs.bias == 1);
    json_t *v = builtin_group_stats_variants(tu_kf(k));
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(v, 0), "nsplit")), 8,
                 "128 samples x 8 = 1024 programs");
    json_t *plan =
        json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "cl_group_stats", "variants", v);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    tu_expect_gate1(out, &a->kernels[artifact_find_kernel(a, "triton_red_fused_convolution_native_group_norm_2")]);
    json_decref(out);
    json_decref(plan);
    json_decref(k);
    artifact_free(a);
}

Test(groupstats, what_must_be_refused) {
    artifact *a = NULL;
    json_t *k = stats_ctx(&a);
    static const struct {
        const char *field, *what, *with, *why;
    } cases[] = {
        {"graph_fragment", "kwargs = {correction: 0, keepdim: True}", "kwargs = {correction: 1, keepdim: True}",
         "the sample variance"},
        {"graph_fragment", "args = (%view, [2, 3])", "args = (%view, [3])", "over the pixels only"},
        {"graph_fragment", "[128, 16, 8, 4096]), kwargs", "[128, 16, 8, 4096, 1]), kwargs", "a 5-D view"},
        {"graph_fragment", "[128, 16, 8, 4096]), kwargs", "[128, 32, 4, 4096]), kwargs", "other groups than the loads"},
        {"graph_fragment", "torch.ops.prims.convert_element_type.default", "torch.ops.aten.abs.default", "another op"},
        {"graph_fragment", "torch.ops.aten.convolution.default", "torch.ops.aten.mm.default", "another op"},
        {"source", "128*r0_3", "4096*r0_3", "channels-first: pixels contiguous"},
        {"source", "524288*x1", "524289*x1", "another sample stride"},
        {"source", "tmp2 = tmp0 + tmp1", "tmp2 = tmp0 * tmp1", "the bias multiplied"},
        {"source", "tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])",
         "tmp4 = tl.broadcast_to(tmp0, [XBLOCK, R0_BLOCK])", "the value without its bias"},
        {"source", "tl.store(out_ptr0 + (x4), tmp5, xmask)", "tl.store(out_ptr0 + (x4), tmp9, xmask)",
         "m2 stored as the mean"},
        {"source", "tl.store(out_ptr1 + (x4), tmp9, xmask)", "tl.store(out_ptr1 + (x4), tmp10, xmask)",
         "the weight stored"},
        {"source", "'num_load': 2", "'num_load': 3", "a third load"},
        {"source", "x0 = (xindex % 16)", "x0 = (xindex % 32)", "another group count"},
        {"source", "r0_3 = r0_index // 8", "r0_3 = r0_index // 4", "another group size"},
        {"kind", "reduction", "persistent_reduction", "a persistent kernel (another form)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *c = edited(k, cases[i].field, cases[i].what, cases[i].with);
        cr_expect_eq(matches(c), 0, "accepted: %s", cases[i].why);
        json_decref(c);
    }
    /* parameter types: fp16 statistics, a bias of another type */
    json_t *c = json_deep_copy(k);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(c, "signature"), i,
                       p) if (!strcmp(json_string_value(json_object_get(p, "name")), "out_ptr1"))
        json_object_set_new(p, "type", json_string("*fp16"));
    cr_expect_eq(matches(c), 0, "fp16 statistics accepted");
    json_decref(c);
    c = json_deep_copy(k);
    json_array_foreach(json_object_get(c, "signature"), i,
                       p) if (!strcmp(json_string_value(json_object_get(p, "name")), "in_ptr1"))
        json_object_set_new(p, "type", json_string("*fp32"));
    cr_expect_eq(matches(c), 0, "a bias of another type accepted");
    json_decref(c);
    /* the launch's sizes must be the graph's */
    c = json_deep_copy(k);
    json_object_set_new(json_object_get(c, "numels"), "r0_numel", json_integer(16384));
    cr_expect_eq(matches(c), 0, "r0_numel other than the view's");
    json_decref(c);
    /* without the convolution (its bias) in the graph the kernel has nothing to add */
    c = json_deep_copy(k);
    json_t *frag = json_array();
    json_array_foreach(json_object_get(k, "graph_fragment"), i,
                       p) if (!strstr(json_string_value(p), "aten.convolution.default")) json_array_append(frag, p);
    json_object_set_new(c, "graph_fragment", frag);
    cr_expect_eq(matches(c), 0, "a bias with no convolution");
    json_decref(c);
    json_decref(k);
    artifact_free(a);
}

/* ------------------------------------------------------------------ synthetic sizes and forms */

/* The max-autotune capture's context with its sizes rewritten as Inductor would write them for
 * n samples of g groups of cg channels and hw pixels (numbers in the loads, the index lines,
 * the graph's view and the launch's numels). */
static json_t *sized(const json_t *k, long long n, long long g, long long cg, long long hw) {
    json_t *c = json_deep_copy(k);
    char a[128], b[128];
    snprintf(b, sizeof b, "(r0_2 + %lld*x0 + %lld*r0_3 + %lld*x1)", cg, g * cg, g * cg * hw);
    edit_all(c, "source", "(r0_2 + 8*x0 + 128*r0_3 + 8388608*x1)", b);
    snprintf(b, sizeof b, "(r0_2 + %lld*x0)", cg);
    edit_all(c, "source", "(r0_2 + 8*x0)", b);
    snprintf(b, sizeof b, "x0 = (xindex %% %lld)\n    x1 = xindex // %lld\n", g, g);
    edit_all(c, "source", "x0 = (xindex % 16)\n    x1 = xindex // 16\n", b);
    snprintf(b, sizeof b, "r0_2 = (r0_index %% %lld)\n        r0_3 = r0_index // %lld\n", cg, cg);
    edit_all(c, "source", "r0_2 = (r0_index % 8)\n        r0_3 = r0_index // 8\n", b);
    snprintf(a, sizeof a, "[128, 16, 8, 65536]");
    snprintf(b, sizeof b, "[%lld, %lld, %lld, %lld]", n, g, cg, hw);
    edit_all(c, "graph_fragment", a, b);
    json_object_set_new(json_object_get(c, "numels"), "xnumel", json_integer(n * g));
    json_object_set_new(json_object_get(c, "numels"), "r0_numel", json_integer(cg * hw));
    return c;
}

/* The same without the convolution and its bias: GroupNorm on a channels-last tensor. */
static json_t *no_bias(const json_t *k) {
    json_t *c = json_deep_copy(k);
    edit_all(
        c, "source",
        "        tmp1 = tl.load(in_ptr1 + (r0_2 + 8*x0), xmask, eviction_policy='evict_last', other=0.0).to(tl.float32)\n"
        "        tmp2 = tmp0 + tmp1\n        tmp3 = tmp2.to(tl.float32)\n",
        "        tmp3 = tmp0.to(tl.float32)\n");
    edit_all(c, "source", "'num_load': 2", "'num_load': 1");
    json_t *frag = json_array(), *rt = json_array(), *sig = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(k, "graph_fragment"), i,
                       p) if (!strstr(json_string_value(p), "aten.convolution.default")) json_array_append(frag, p);
    json_array_foreach(json_object_get(k, "runtime_params"), i, p) if (strcmp(json_string_value(p), "in_ptr1"))
        json_array_append(rt, p);
    json_array_foreach(json_object_get(k, "signature"), i, p) if (strcmp(json_string_value(json_object_get(p, "name")),
                                                                         "in_ptr1")) json_array_append(sig, p);
    json_object_set_new(c, "graph_fragment", frag);
    json_object_set_new(c, "runtime_params", rt);
    json_object_set_new(c, "signature", sig);
    return c;
}

static json_t *ma_ctx(artifact **a) { return stats_ctx_of(FX_MA, a); }

Test(groupstats, sizes_at_their_edges) {
    artifact *a = NULL;
    json_t *k = ma_ctx(&a);
    static const struct {
        long long n, g, cg, hw;
        int ok;
        const char *why;
    } cases[] = {
        {128, 16, 8, 65536, 1, "the suite's size"},
        {1, 8, 2, 64, 1, "C = 16 in groups of 2, 64 pixels: the smallest accepted"},
        {1, 4, 2, 64, 0, "C = 8"},
        {1, 16, 1, 64, 0, "one channel a group (instance norm's statistics)"},
        {1, 8, 2, 63, 0, "63 pixels"},
        {2, 1, 64, 4096, 1, "one group of 64 channels"},
        {2, 1, 128, 4096, 0, "128 channels a group"},
        {2, 16, 64, 1024, 1, "C = 1024"},
        {2, 32, 64, 1024, 0, "C = 2048"},
        {2, 16, 3, 1024, 0, "3 channels a group"},
        {1, 16, 8, 16777215, 1, "a sample's offsets just within int32"},
        {1, 16, 8, 16777216, 0, "a sample's offsets past int32"},
        {0, 16, 8, 4096, 0, "no samples"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *c = sized(k, cases[i].n, cases[i].g, cases[i].cg, cases[i].hw);
        gs_spec gs;
        int got = builtin_group_stats_match(tu_kf(c), &gs);
        cr_expect_eq(got, cases[i].ok, "%s: %d", cases[i].why, got);
        if (got)
            cr_expect(gs.n == cases[i].n && gs.g == cases[i].g && gs.cg == cases[i].cg && gs.hw == cases[i].hw, "%s",
                      cases[i].why);
        else cr_expect(gs.n == 0 && gs.g == 0 && gs.bias == 0, "%s: the spec is zeroed when refused", cases[i].why);
        json_decref(c);
    }
    /* the launch's numels must be the graph's: xnumel and r0_numel each */
    json_t *c = sized(k, 4, 16, 8, 4096);
    cr_expect_eq(matches(c), 1);
    json_object_set_new(json_object_get(c, "numels"), "xnumel", json_integer(63));
    cr_expect_eq(matches(c), 0, "xnumel other than N * G");
    json_decref(c);
    /* fp32 and bf16 inputs too; fp64 not */
    static const char *const types[] = {"*fp32", "*bf16", "*fp64"};
    for (size_t t = 0; t < 3; t++) {
        c = json_deep_copy(k);
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(c, "signature"), i, p) {
            const char *nm = json_string_value(json_object_get(p, "name"));
            if (!strcmp(nm, "in_ptr0") || !strcmp(nm, "in_ptr1")) json_object_set_new(p, "type", json_string(types[t]));
        }
        cr_expect_eq(matches(c), t < 2, "input type %s", types[t]);
        json_decref(c);
    }
    json_decref(k);
    artifact_free(a);
}

Test(groupstats, without_a_bias) {
    artifact *a = NULL;
    json_t *k = ma_ctx(&a);
    json_t *c = no_bias(k);
    gs_spec gs;
    cr_assert_eq(builtin_group_stats_match(tu_kf(c), &gs), 1);
    cr_assert(gs.bias == 0 && gs.g == 16 && gs.cg == 8);
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "cl_group_stats",
                             "variants", builtin_group_stats_variants(tu_kf(c)));
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(c), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    const json_t *c0 = json_array_get(json_object_get(out, "candidates"), 0);
    const char *src = json_string_value(json_object_get(c0, "source"));
    cr_assert(strstr(src, "\"params\": [\"in_ptr0\", \"out_ptr0\", \"out_ptr1\", \"xnumel\", \"r0_numel\"],"), "%s",
              src);
    cr_assert(strstr(src, "\"BIAS\": False") && !strstr(src, "numel(in_ptr1)"), "%s", src);
    cr_assert(strstr(json_string_value(json_object_get(c0, "label")), "plus a bias") == NULL);
    json_decref(out);
    json_decref(plan);
    /* a bias load left in the source of a kernel without one: a third parameter it never had */
    json_t *c2 = no_bias(k);
    edit_all(c2, "source", "tmp3 = tmp0.to(tl.float32)", "tmp3 = tmp9.to(tl.float32)");
    cr_expect_eq(matches(c2), 0, "the reduced value is not the load");
    json_decref(c2);
    /* the bias form's parameters with no convolution in the graph */
    c2 = json_deep_copy(k);
    json_object_set(c2, "graph_fragment", json_object_get(c, "graph_fragment"));
    cr_expect_eq(matches(c2), 0, "a bias with no convolution");
    json_decref(c2);
    /* a parameter list that is neither form */
    c2 = json_deep_copy(c);
    json_array_append_new(json_object_get(c2, "runtime_params"), json_string("ks0"));
    cr_expect_eq(matches(c2), 0, "an extra runtime parameter");
    json_decref(c2);
    json_decref(c);
    json_decref(k);
    artifact_free(a);
}

Test(groupstats, the_graph_and_source_forms) {
    artifact *a = NULL;
    json_t *k = ma_ctx(&a);
    const char *conv_line = NULL, *cvt_line = NULL;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(k, "graph_fragment"), i, p) {
        if (strstr(json_string_value(p), "aten.convolution.default")) conv_line = json_string_value(p);
        if (strstr(json_string_value(p), "convert_element_type.default")) cvt_line = json_string_value(p);
    }
    cr_assert(conv_line && cvt_line);
    /* a second convolution or conversion in the graph: another computation */
    const char *dup[] = {conv_line, cvt_line};
    for (int d = 0; d < 2; d++) {
        json_t *c = json_deep_copy(k);
        json_array_append_new(json_object_get(c, "graph_fragment"), json_string(dup[d]));
        cr_expect_eq(matches(c), 0, "a second %s", d ? "conversion" : "convolution");
        json_decref(c);
    }
    static const struct {
        const char *field, *what, *with, *why;
    } cases[] = {
        {"graph_fragment", "torch.ops.aten.var_mean.correction]", "torch.ops.aten.var.correction]", "no var_mean"},
        {"graph_fragment", "torch.ops.aten.reshape.default]", "torch.ops.aten.permute.default]", "no reshape"},
        {"graph_fragment", "args = (%view, [2, 3])", "args = (%view, [2, 3], 1)", "a third var_mean argument"},
        {"graph_fragment", "args = (%view, [2, 3])", "args = (%convert_element_type, [2, 3])",
         "var_mean not of the view"},
        {"graph_fragment", "[128, 16, 8, 65536]), kwargs", "[128, 16, 8, 65536], 1), kwargs",
         "a third reshape argument"},
        {"graph_fragment", "[128, 16, 8, 65536]), kwargs", "[128, 16, 8, s0]), kwargs", "a symbolic size"},
        {"graph_fragment", "[128, 16, 8, 65536]), kwargs", "[128, 16, 8,  65536]), kwargs",
         "not the list's plain form"},
        {"source", "triton_helpers.welford_reduce(", "triton_helpers.welford_combine(", "no welford_reduce"},
        {"source", " = triton_helpers.welford(tmp5_mean", " = triton_helpers.other(tmp5_mean", "no final welford"},
        {"source", "tmp4 = tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])", "tmp4 = tmp3", "no broadcast"},
        {"source", "tl.broadcast_to(tmp3, [XBLOCK, R0_BLOCK])", "tl.broadcast_to(tmp3 + 1.0, [XBLOCK, R0_BLOCK])",
         "an expression broadcast"},
        {"source", "        tmp3 = tmp2.to(tl.float32)\n", "        tmp3 = tmp2 * 2.0\n", "the value doubled"},
        {"source", "    tmp5 = tmp6[:, None]\n", "    tmp5 = tmp6 + 0\n", "the mean not taken as is"},
        {"source", "    tmp9 = tmp7[:, None]\n", "    tmp9 = tmp7 + 0\n", "m2 not taken as is"},
        {"source", "    x4 = xindex\n", "    x4 = xindex + 1\n", "stored at other positions"},
        {"source", "tmp6, tmp7, tmp8 = triton_helpers.welford(", "tmp6, tmp7 = triton_helpers.welford(", "two results"},
        {"source", "tl.store(out_ptr0 + (x4), tmp5, xmask)", "tl.store(out_ptr0 + (x4), tmp5 * 2, xmask)",
         "the mean scaled on the way out"},
        {"source", "welford_reduce(\n            tmp4, ", "welford_reduce(tmp4, ", "the reduce call on one line"},
        {"source", "welford_reduce(\n            tmp4, ", "welford_reduce(\n            (tmp4), ",
         "a parenthesised value"},
        {"source", "tl.broadcast_to(tmp3, [XBLOCK", "tl.broadcast_to((tmp3), [XBLOCK", "a parenthesised broadcast"},
        {"source", "    tmp5 = tmp6[:, None]\n", "    (tmp5) = tmp6[:, None]\n", "a parenthesised target"},
    };
    for (size_t j = 0; j < sizeof cases / sizeof *cases; j++) {
        json_t *c = edited(k, cases[j].field, cases[j].what, cases[j].with);
        cr_expect_eq(matches(c), 0, "accepted: %s", cases[j].why);
        json_decref(c);
    }
    json_decref(k);
    artifact_free(a);
}

Test(groupstats, variants_for_other_sizes_and_limits) {
    artifact *a = NULL;
    json_t *k = ma_ctx(&a);
    /* one sample: 64 chunks (the cap), 4096 samples: one chunk each; only tilings of hw */
    static const struct {
        long long n, hw, first;
        size_t count;
    } cases[] = {{1, 65536, 64, 4},  {4096, 4096, 1, 4}, {128, 65536, 8, 5}, {64, 96, 16, 0},
                 {1024, 4096, 1, 4}, {200, 4096, 8, 5},  {4096, 72, 1, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *c = sized(k, cases[i].n, 16, 8, cases[i].hw);
        json_t *v = builtin_group_stats_variants(tu_kf(c));
        cr_expect_eq(json_array_size(v), cases[i].count, "n=%lld hw=%lld: %zu variants", cases[i].n, cases[i].hw,
                     json_array_size(v));
        size_t j;
        json_t *o;
        json_array_foreach(v, j, o) {
            long long ns = json_integer_value(json_object_get(o, "nsplit")),
                      sb = json_integer_value(json_object_get(o, "sb"));
            cr_expect(ns >= 1 && ns <= 64 && cases[i].hw % (ns * sb) == 0, "n=%lld: nsplit %lld sb %lld", cases[i].n,
                      ns, sb);
            if (!j) cr_expect_eq(ns, cases[i].first, "n=%lld: first nsplit %lld", cases[i].n, ns);
        }
        json_decref(v);
        json_decref(c);
    }
    json_t *none = json_deep_copy(k);
    json_object_set_new(none, "kind", json_string("pointwise"));
    json_t *v = builtin_group_stats_variants(tu_kf(none));
    cr_expect(json_is_array(v) && json_array_size(v) == 0, "no variants for a kernel it does not match");
    json_decref(v);
    /* the executor's limits: each variant alone, rendered or not */
    static const struct {
        long long ns, sb, nw;
        int ok;
    } lim[] = {{64, 16, 16, 1}, {128, 16, 16, 0}, {3, 16, 16, 0}, {8, 128, 8, 1}, {8, 256, 8, 0}, {8, 16, 32, 1},
               {8, 16, 64, 0},  {8, 16, 0, 0},    {1, 1, 1, 1},   {0, 16, 16, 0}, {8, 0, 16, 0}};
    for (size_t i = 0; i < sizeof lim / sizeof *lim; i++) {
        json_t *plan = json_pack("{s:s, s:{s:s, s:[{s:I, s:I, s:I}]}}", "direction", "rewrite", "params", "template",
                                 "cl_group_stats", "variants", "nsplit", (json_int_t)lim[i].ns, "sb",
                                 (json_int_t)lim[i].sb, "num_warps", (json_int_t)lim[i].nw);
        json_t *out = NULL;
        kerr e = {0};
        int rc = builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e);
        cr_expect_eq(rc == 0, lim[i].ok, "nsplit %lld sb %lld warps %lld: rc %d %s", lim[i].ns, lim[i].sb, lim[i].nw,
                     rc, e.msg);
        if (!rc) json_decref(out);
        else cr_expect(strstr(e.msg, "no usable variant") != NULL, "%s", e.msg);
        json_decref(plan);
    }
    /* a kernel it does not match: the executor refuses the plan */
    json_t *plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i}]}}", "direction", "rewrite", "params", "template",
                             "cl_group_stats", "variants", "nsplit", 8, "sb", 16, "num_warps", 16);
    json_t *out = NULL;
    kerr e = {0};
    cr_expect_eq(builtin_group_stats_act(tu_kf(none), tu_kp(plan), &out, &e), KOPT_E_CANDIDATE);
    cr_expect(strstr(e.msg, "does not apply") != NULL, "%s", e.msg);
    json_decref(plan);
    json_decref(none);
    json_decref(k);
    artifact_free(a);
}
