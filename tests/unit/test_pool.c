/* The average-pooling family on Inductor's own Triton pooling kernels (src/agents/builtin_pool.c):
 * recognised from the FX graph fragment and the shapes call() gives, not from the kernel's text;
 * on two captured kernels of two forms (a pointwise kernel with out_ptr0, a persistent reduction
 * writing in_out_ptr0) and on hand-edited contexts for 1-D pooling and the refusals. Every
 * candidate goes through gate 1's C checks bound to the kernel it replaces. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"

/* Example problem 12 (16x64x256x256 fp32, 3x3 stride 2 pad 1): triton_poi_fused_avg_pool2d_0(in_ptr0,
 * out_ptr0, xnumel). Suite level1/37 at a small size (64x64x80x40, 5x5 stride 3 pad 2):
 * triton_per_fused_avg_pool2d_0(in_out_ptr0, in_ptr0, xnumel, r0_numel). */
static const char *FX_POI = "tests/fixtures/inductor/12_avgpool2d_g0.py";
static const char *FX_PER = "tests/fixtures/inductor/suite_level1_37_avg_pool2d_small_g0.py";

static json_t *kernel_ctx(const char *fixture, artifact **out) {
    size_t len = 0;
    char *text = tu_read_fixture(fixture, &len);
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, len, out, &e), 0, "%s", e.msg);
    free(text);
    cr_assert_eq((*out)->nkernels, 1);
    return opt_kernel_ctx(*out, 0, NULL);
}

static json_t *candidates(const json_t *k, const char *tmpl) {
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", tmpl, "variants",
                             builtin_rewrite_variants(kfamily_parse(tmpl), tu_kf(k)));
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    json_decref(plan);
    return out;
}

/* Every candidate is bound to the kernel by its name and passes gate 1's C checks (the
 * launcher's parameters are the kernel's, in order). */
static void gate1_all_bound(const artifact *a, const json_t *cands) {
    size_t i;
    json_t *c;
    cr_assert_gt(json_array_size(json_object_get(cands, "candidates")), 0);
    json_array_foreach(json_object_get(cands, "candidates"), i, c) {
        const char *src = json_string_value(json_object_get(c, "source"));
        char *want = kasprintf("# kopt-candidate: replaces=%s\n", a->kernels[0].name);
        cr_assert(strstr(src, want) == src, "%s", src);
        free(want);
    }
    tu_expect_gate1(cands, &a->kernels[0]);
}

static const char *first_source(const json_t *c) {
    return json_string_value(json_object_get(json_array_get(json_object_get(c, "candidates"), 0), "source"));
}

/* The source of the first candidate that slides (its config's odc > 0); NULL when none does. */
static const char *sliding_source(const json_t *c) {
    size_t i;
    const json_t *x;
    json_array_foreach(json_object_get(c, "candidates"), i, x) {
        if (json_integer_value(json_object_get(json_object_get(x, "config"), "odc")) > 0)
            return json_string_value(json_object_get(x, "source"));
    }
    return NULL;
}

Test(pool, inductor_pointwise_pooling_kernel) {
    artifact *a = NULL;
    json_t *k = kernel_ctx(FX_POI, &a);
    pool_spec ps;
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    cr_assert(ps.kernel && !ps.out_first && ps.kernel && !ps.r0numel && !ps.in3);
    cr_assert_str_eq(ps.in, "in_ptr0");
    cr_assert_str_eq(ps.out, "out_ptr0");
    cr_assert_eq(ps.nd, 2);
    cr_assert(ps.k[0] == 3 && ps.k[1] == 3 && ps.s[0] == 2 && ps.s[1] == 2 && ps.p[0] == 1 && ps.p[1] == 1);
    cr_assert_eq(ps.count_pad, 1, "avg_pool2d's default counts the padding");
    cr_assert_eq(ps.out_w, 128);
    double eps = 0;
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "avg_pool",
                     "the planner's entry point finds the family");
    json_t *c = candidates(k, "avg_pool");
    const char *src = first_source(c);
    cr_assert(strstr(src, "# kopt-candidate: replaces=triton_poi_fused_avg_pool2d_0\n") == src, "%s", src);
    cr_assert(strstr(src, "\"params\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\"],") != NULL, "%s", src);
    cr_assert(strstr(src, "\"KH\": 3, \"KW\": 3") && strstr(src, "\"COUNT_PAD\": True"), "%s", src);
    gate1_all_bound(a, c);
    /* the vendor template's name does not apply to a Triton kernel, nor this one to a region */
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "region_avg_pool",
                             "variants", builtin_pool_variants(tu_kf(k)));
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_neq(builtin_pool_act(tu_kf(k), tu_kp(plan), &out, &e), 0);
    cr_assert_null(out);
    json_decref(plan);
    json_decref(c);
    json_decref(k);
    artifact_free(a);
}

Test(pool, inductor_persistent_reduction_writing_in_out_ptr0) {
    artifact *a = NULL;
    json_t *k = kernel_ctx(FX_PER, &a);
    pool_spec ps;
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    cr_assert(ps.out_first && ps.r0numel && ps.kernel);
    cr_assert_str_eq(ps.out, "in_out_ptr0");
    cr_assert(ps.k[0] == 5 && ps.s[1] == 3 && ps.p[0] == 2);
    cr_assert_eq(ps.out_w, 14);
    json_t *c = candidates(k, "avg_pool");
    const char *src = first_source(c);
    cr_assert(strstr(src, "\"params\": [\"in_out_ptr0\", \"in_ptr0\", \"xnumel\", \"r0_numel\"],") != NULL, "%s", src);
    cr_assert(strstr(src, "\"args\": [\"in_ptr0\", \"in_out_ptr0\", \"D\"") != NULL,
              "reads in_ptr0, writes in_out_ptr0");
    cr_assert(strstr(src, "numel(in_out_ptr0) // (OH * OW)") != NULL);
    gate1_all_bound(a, c);
    json_decref(c);
    json_decref(k);
    artifact_free(a);
}

/* The pooling node's line of fixture 12 with its arguments replaced. */
static void set_pool_line(json_t *k, const char *line) {
    json_t *fr = json_object_get(k, "graph_fragment");
    size_t i;
    json_t *v;
    json_array_foreach(fr, i, v) {
        if (strstr(json_string_value(v), "avg_pool2d.default")) {
            json_array_set_new(fr, i, json_string(line));
            return;
        }
    }
    cr_assert_fail("no pooling line");
}

#define POOL_HEAD \
    "%avg_pool2d : Tensor \"f32[16, 64, 128, 128][1048576, 16384, 128, 1]cuda:0\"[num_users=1] = " \
    "call_function[target=torch.ops.aten.avg_pool2d.default](args = ("
#define POOL_LINE(args) POOL_HEAD args ")"

Test(pool, what_the_graph_must_say) {
    artifact *a = NULL;
    pool_spec ps;
    static const struct {
        const char *line;
        int ok;
        const char *why;
    } cases[] = {
        {POOL_LINE("%arg0_1, [3, 3], [2, 2], [1, 1], False, False") ", kwargs = {})", 1, "count_include_pad off"},
        {POOL_LINE("%arg0_1, [3, 3], [2, 2], [1, 1], False, True, 5") ", kwargs = {})", 1, "a divisor"},
        {POOL_LINE("%arg0_1, [3, 3], [2, 2], [1, 1], True") ", kwargs = {})", 0, "ceil_mode"},
        {POOL_LINE("%arg0_1, [3, 3], [2, 2], [1, 1]") ", kwargs = {divisor_override: 5})", 0, "a keyword argument"},
        {POOL_LINE("%arg0_1, [3, 3], [1, 1], [1, 1]") ", kwargs = {})", 0, "stride 1: not the output call() allocates"},
        {POOL_LINE("%arg0_1, [3, 3], [2, 2], [2, 2]") ", kwargs = {})", 0, "padding above half the window"},
        {POOL_LINE("%arg0_1, [3, 3], [2, 2], [1, 1], False, True, 0") ", kwargs = {})", 0, "a zero divisor"},
        {POOL_LINE("%arg0_1, [3, 3], [2, 2], [1, 1], False, True, %x") ", kwargs = {})", 0, "a divisor from the graph"},
        {POOL_LINE("5, [3, 3], [2, 2], [1, 1]") ", kwargs = {})", 0, "the input not a node"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *k = kernel_ctx(FX_POI, &a);
        set_pool_line(k, cases[i].line);
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), cases[i].ok, "%s: %s", cases[i].why, cases[i].line);
        json_decref(k);
        artifact_free(a);
    }
    /* another node in the fragment: the kernel computes more than the pooling */
    json_t *k = kernel_ctx(FX_POI, &a);
    json_array_append_new(json_object_get(k, "graph_fragment"),
                          json_string("%relu : Tensor \"f32[16, 64, 128, 128][1048576, 16384, 128, 1]cuda:0\" = "
                                      "call_function[target=torch.ops.aten.relu.default](args = (%avg_pool2d,), "
                                      "kwargs = {})"));
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "a relu fused after the pooling");
    double eps = 0;
    cr_assert_neq(builtin_rewrite_match(tu_kf(k), &eps), KF_AVG_POOL);
    json_decref(k);
    artifact_free(a);
    /* another signature: an extra input */
    k = kernel_ctx(FX_POI, &a);
    json_array_insert_new(json_object_get(k, "runtime_params"), 1, json_string("in_ptr1"));
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "in_ptr0, in_ptr1, out_ptr0, xnumel");
    json_decref(k);
    artifact_free(a);
    /* the output's type not the input's */
    k = kernel_ctx(FX_POI, &a);
    json_t *sig;
    size_t j;
    json_array_foreach(json_object_get(k, "signature"), j, sig) {
        if (!strcmp(json_string_value(json_object_get(sig, "name")), "out_ptr0"))
            json_object_set_new(sig, "type", json_string("*fp16"));
    }
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "fp32 in, fp16 out");
    json_decref(k);
    artifact_free(a);
}

/* 1-D pooling as Inductor writes it: avg_pool2d of unsqueeze(x, -2) with a window of height 1,
 * the input (N, C, L) and the output buffer (N, C, 1, OL) (the form of level1/33's max pooling
 * capture). Built on fixture 12's kernel with its graph and shapes replaced. */
static json_t *one_d_ctx(artifact **a, const char *unsq_dim, const char *window, long long out_len) {
    json_t *k = kernel_ctx(FX_POI, a);
    json_t *fr = json_array();
    json_array_append_new(fr, json_string("%arg0_1 : Tensor \"f32[8, 16, 1000][16000, 1000, 1]cuda:0\" = "
                                          "PlaceHolder[target=arg0_1]"));
    json_array_append_new(fr, json_sprintf("%%unsqueeze : Tensor \"f32[8, 16, 1, 1000][16000, 1000, 1000, 1]cuda:0\""
                                           "[num_users=1] = call_function[target=torch.ops.aten.unsqueeze.default]"
                                           "(args = (%%arg0_1, %s), kwargs = {})",
                                           unsq_dim));
    json_array_append_new(fr, json_sprintf("%%avg_pool2d : Tensor \"f32[8, 16, 1, 250][4000, 250, 250, 1]cuda:0\""
                                           "[num_users=1] = call_function[target=torch.ops.aten.avg_pool2d.default]"
                                           "(args = (%%unsqueeze, %s), kwargs = {})",
                                           window));
    json_object_set_new(k, "graph_fragment", fr);
    json_t *sh = json_object_get(k, "shapes");
    json_object_set_new(sh, "in_ptr0", json_pack("[i, i, i]", 8, 16, 1000));
    json_object_set_new(sh, "out_ptr0", json_pack("[i, i, i, I]", 8, 16, 1, (json_int_t)out_len));
    return k;
}

Test(pool, one_d_pooling_through_unsqueeze) {
    artifact *a = NULL;
    pool_spec ps;
    /* window 8, stride 4, padding 2: (1000 + 4 - 8) / 4 + 1 = 250 */
    json_t *k = one_d_ctx(&a, "-2", "[1, 8], [1, 4], [0, 2]", 250);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    cr_assert(ps.in3 && ps.nd == 2 && ps.k[1] == 8 && ps.s[1] == 4 && ps.p[1] == 2 && ps.out_w == 250);
    json_t *c = candidates(k, "avg_pool");
    const char *src = first_source(c);
    cr_assert(strstr(src, "\"H\": 1") && strstr(src, "\"OH == 1\"") && strstr(src, "\"KH\": 1, \"KW\": 8"), "%s", src);
    cr_assert(strstr(src, "avg_pool: 1d average pooling") != NULL, "%s", src);
    gate1_all_bound(a, c);
    json_decref(c);
    json_decref(k);
    artifact_free(a);
    k = one_d_ctx(&a, "2", "[1, 8], [1, 4], [0, 2]", 250);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "unsqueeze(x, 2) of a 3-D tensor is the same");
    json_decref(k);
    artifact_free(a);
    static const struct {
        const char *dim, *window;
        long long out;
        const char *why;
    } no[] = {{"-1", "[1, 8], [1, 4], [0, 2]", 250, "unsqueeze(x, -1): the pooled dimension is not the length"},
              {"-2", "[2, 8], [1, 4], [0, 2]", 250, "a window of height 2 over a height of 1"},
              {"-2", "[1, 8], [2, 4], [0, 2]", 250, "a vertical stride"},
              {"-2", "[1, 8], [1, 4], [0, 2]", 251, "the output length is not the pooling's"}};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        k = one_d_ctx(&a, no[i].dim, no[i].window, no[i].out);
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "%s", no[i].why);
        json_decref(k);
        artifact_free(a);
    }
}

/* The argument forms and limits, on fixture 12's kernel (256x256 -> 128x128: any window k with
 * k - 2p in {1, 2} and stride 2 gives its output). */
Test(pool, argument_forms_and_limits) {
    artifact *a = NULL;
    pool_spec ps;
    static const struct {
        const char *args;
        int ok;
        const char *why;
    } cases[] = {
        {"%arg0_1, [2, 2]", 1, "stride defaults to the window, padding to 0"},
        {"%arg0_1, [2, 2], [2, 2]", 1, "padding absent"},
        {"%arg0_1, 3, 2, 1", 1, "one int for every dimension"},
        {"%arg0_1, (3, 3), (2, 2), (1, 1)", 1, "tuples"},
        {"%arg0_1, [3], [2], [1]", 1, "one-element lists"},
        {"%arg0_1, [7, 49], [2, 2], [3, 24]", 1, "a window of 343 elements, the unrolled limit"},
        {"%arg0_1, [8, 43], [2, 2], [3, 21]", 0, "a window of 344 elements"},
        {"%arg0_1, [64, 1], [2, 2], [31, 0]", 1, "a window 64 high"},
        {"%arg0_1, [65, 1], [2, 2], [32, 0]", 0, "a window 65 high"},
        {"%arg0_1, [3, 3, 3], [2, 2], [1, 1]", 0, "a list of neither 1 nor 2 values"},
        {"%arg0_1, [3, 3], [2, 2], [1, 1], False, True, None, 1", 0, "too many arguments"},
        {"%arg0_1", 0, "no window"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *k = kernel_ctx(FX_POI, &a);
        char *line = kasprintf("%s%s), kwargs = {})", POOL_HEAD, cases[i].args);
        set_pool_line(k, line);
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), cases[i].ok, "%s: %s", cases[i].why, line);
        if (i == 0) cr_assert(ps.s[0] == 2 && ps.s[1] == 2 && ps.p[0] == 0 && ps.p[1] == 0 && ps.count_pad == 1);
        if (i == 1) cr_assert(ps.p[0] == 0 && ps.p[1] == 0);
        if (i == 2)
            cr_assert(ps.k[0] == 3 && ps.k[1] == 3 && ps.s[0] == 2 && ps.s[1] == 2 && ps.p[0] == 1 && ps.p[1] == 1);
        if (i == 5) cr_assert(ps.k[0] == 7 && ps.k[1] == 49 && ps.p[1] == 24);
        free(line);
        json_decref(k);
        artifact_free(a);
    }
}

/* What the kernel's parameters and shapes must be. */
Test(pool, signature_and_shapes) {
    artifact *a = NULL;
    pool_spec ps;
    static const char *const sigs[][4] = {
        {"in_ptr0", "in_ptr1", "xnumel", NULL},     {"out_ptr0", "in_ptr0", "xnumel", NULL},
        {"in_out_ptr0", "in_ptr1", "xnumel", NULL}, {"in_ptr0", "out_ptr0", "xnumel", "ks0"},
        {"in_ptr0", "out_ptr0", "x", NULL},         {"in_ptr0", "out_ptr0", NULL, NULL}};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        json_t *k = kernel_ctx(FX_POI, &a);
        json_t *rt = json_array();
        for (size_t j = 0; j < 4 && sigs[i][j]; j++) json_array_append_new(rt, json_string(sigs[i][j]));
        json_object_set_new(k, "runtime_params", rt);
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "signature %zu accepted", i);
        json_decref(k);
        artifact_free(a);
    }
    /* the shapes: another rank, another channel count, another output size */
    static const int shapes[][2][4] = {{{16, 64, 256, 0}, {16, 64, 128, 128}},
                                       {{16, 64, 256, 256}, {16, 32, 128, 128}},
                                       {{16, 64, 256, 256}, {8, 64, 128, 128}},
                                       {{16, 64, 256, 256}, {16, 64, 128, 127}}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        json_t *k = kernel_ctx(FX_POI, &a);
        json_t *in = json_array(), *out = json_array();
        for (int d = 0; d < 4 && shapes[i][0][d]; d++) json_array_append_new(in, json_integer(shapes[i][0][d]));
        for (int d = 0; d < 4; d++) json_array_append_new(out, json_integer(shapes[i][1][d]));
        json_object_set_new(json_object_get(k, "shapes"), "in_ptr0", in);
        json_object_set_new(json_object_get(k, "shapes"), "out_ptr0", out);
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "shapes %zu accepted", i);
        json_decref(k);
        artifact_free(a);
    }
}

/* 1-D: the unsqueeze must be what the pooling reads. */
Test(pool, one_d_unsqueeze_must_feed_the_pooling) {
    artifact *a = NULL;
    pool_spec ps;
    json_t *k = one_d_ctx(&a, "-2", "[1, 8], [1, 4], [0, 2]", 250);
    json_t *fr = json_object_get(k, "graph_fragment");
    json_array_set_new(
        fr, 2,
        json_string("%avg_pool2d : Tensor \"f32[8, 16, 1, 250][4000, 250, 250, 1]cuda:0\"[num_users=1] = "
                    "call_function[target=torch.ops.aten.avg_pool2d.default](args = (%arg0_1, [1, 8], "
                    "[1, 4], [0, 2]), kwargs = {})"));
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "the pooling reads the input, not its unsqueeze");
    json_decref(k);
    artifact_free(a);
}

/* The variants follow the output's width; a plan's variants are checked. */
Test(pool, variants_and_plan_limits) {
    artifact *a = NULL;
    json_t *k = kernel_ctx(FX_POI, &a); /* 128 outputs a row */
    json_t *v = builtin_pool_variants(tu_kf(k));
    static const long long want[][3] = {{1, 128, 2}, {2, 128, 2}, {1, 64, 1}, {4, 128, 2}};
    /* the plain tiles, then (3 x 3 s2: a row shared) four sliding down the rows */
    cr_assert_eq(json_array_size(v), 8);
    for (size_t i = 4; i < 8; i++) cr_assert_gt(json_integer_value(json_object_get(json_array_get(v, i), "odc")), 0);
    for (size_t i = 0; i < 4; i++) {
        const json_t *x = json_array_get(v, i);
        cr_assert(json_integer_value(json_object_get(x, "bh")) == want[i][0] &&
                      json_integer_value(json_object_get(x, "bw")) == want[i][1] &&
                      json_integer_value(json_object_get(x, "num_warps")) == want[i][2],
                  "variant %zu", i);
    }
    json_decref(v);
    /* a plan's own variants: the largest tile accepted, anything past the limits dropped */
    json_t *plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i}, {s:i, s:i, s:i}, {s:i, s:i, s:i}, {s:i, s:i, s:i}]}}",
                             "direction", "rewrite", "params", "template", "avg_pool", "variants", "bh", 64, "bw", 64,
                             "num_warps", 16, "bh", 128, "bw", 16, "num_warps", 4, "bh", 32, "bw", 256, "num_warps", 4,
                             "bh", 3, "bw", 64, "num_warps", 4);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_pool_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    cr_assert_eq(json_array_size(json_object_get(out, "candidates")), 1,
                 "only 64 x 64 (4096 outputs) is within the limits");
    json_decref(out);
    json_decref(plan);
    plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i}]}}", "direction", "rewrite", "params", "template", "avg_pool",
                     "variants", "bh", 1, "bw", 64, "num_warps", 3);
    out = NULL;
    cr_assert_neq(builtin_pool_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "no usable variant is an error");
    cr_assert_null(out);
    cr_assert(strstr(e.msg, "no usable variant") != NULL, "%s", e.msg);
    json_decref(plan);
    json_decref(k);
    artifact_free(a);
    /* no variants for a kernel the family does not apply to */
    k = kernel_ctx(FX_POI, &a);
    json_array_append_new(json_object_get(k, "runtime_params"), json_string("ks0"));
    v = builtin_pool_variants(tu_kf(k));
    cr_assert_eq(json_array_size(v), 0);
    json_decref(v);
    json_decref(k);
    artifact_free(a);
    /* a narrow output: tiles of 16 */
    k = kernel_ctx(FX_PER, &a); /* 14 outputs a row */
    v = builtin_pool_variants(tu_kf(k));
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(v, 0), "bw")), 16);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(v, 2), "bw")), 16);
    json_decref(v);
    json_decref(k);
    artifact_free(a);
}

/* Max pooling (family max_pool): example problem 13 (16x64x256x256 fp32, 2x2 stride 2 pad 0,
 * Inductor's pointwise kernel of prims._low_memory_max_pool_with_offsets whose values alone are
 * used) and suite level1/34 at a small size (3x3 stride 2 pad 1). */
static const char *FX_MAX = "tests/fixtures/inductor/13_maxpool2d_g0.py";
static const char *FX_MAX34 = "tests/fixtures/inductor/suite_level1_34_max_pool2d_small_g0.py";

Test(pool, inductor_max_pooling_kernel) {
    const char *fx[] = {FX_MAX, FX_MAX34};
    const long long out_w[] = {128, 32}, win[] = {2, 3}, pad[] = {0, 1};
    for (size_t f = 0; f < 2; f++) {
        artifact *a = NULL;
        json_t *k = kernel_ctx(fx[f], &a);
        pool_spec ps;
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "%s", fx[f]);
        cr_assert(ps.kernel && ps.max && !ps.out_first && !ps.r0numel && !ps.in3);
        cr_assert_eq(ps.nd, 2);
        cr_assert(ps.k[0] == win[f] && ps.k[1] == win[f] && ps.s[0] == 2 && ps.s[1] == 2 && ps.p[0] == pad[f] &&
                  ps.p[1] == pad[f]);
        cr_assert(ps.dl[0] == 1 && ps.dl[1] == 1);
        cr_assert_eq(ps.out_w, out_w[f]);
        cr_assert_eq(builtin_pool_family(&ps), KF_MAX_POOL);
        double eps = 0;
        cr_assert_eq(builtin_rewrite_match(tu_kf(k), &eps), KF_MAX_POOL, "the planner's entry point finds the family");
        json_t *c = candidates(k, "max_pool");
        const char *src = first_source(c);
        cr_assert(strstr(src, "def _max_pool(") && !strstr(src, "def _avg_pool("), "%s", src);
        cr_assert(strstr(src, "\"kernel\": \"_max_pool\"") && strstr(src, "\"DD\": 1, \"DH\": 1, \"DW\": 1"), "%s",
                  src);
        cr_assert(strstr(src, "propagate_nan=tl.PropagateNan.ALL") != NULL, "NaN propagates as ATen's does");
        char *oh = kasprintf("\"OH == (H + 2 * %lld - %lld) // 2 + 1\"", pad[f], win[f]);
        cr_assert(strstr(src, oh) != NULL, "%s", src);
        free(oh);
        cr_assert(strstr(src, "max pooling") != NULL);
        gate1_all_bound(a, c);
        /* the average-pooling name does not apply */
        json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "avg_pool",
                                 "variants", builtin_pool_variants(tu_kf(k)));
        json_t *out = NULL;
        kerr e = {0};
        cr_assert_neq(builtin_pool_act(tu_kf(k), tu_kp(plan), &out, &e), 0);
        json_decref(plan);
        json_decref(c);
        json_decref(k);
        artifact_free(a);
    }
}

/* The max pooling node's line of fixture 13 with its arguments replaced. */
static void set_max_line(json_t *k, const char *needle, const char *line) {
    json_t *fr = json_object_get(k, "graph_fragment");
    size_t i;
    json_t *v;
    json_array_foreach(fr, i, v) {
        if (strstr(json_string_value(v), needle) && strstr(json_string_value(v), "call_function")) {
            json_array_set_new(fr, i, json_string(line));
            return;
        }
    }
    cr_assert_fail("no line with %s", needle);
}

#define MAX_HEAD \
    "%_low_memory_max_pool_with_offsets : [num_users=1] = call_function[target=torch.ops.prims." \
    "_low_memory_max_pool_with_offsets.default](args = ("
#define ITEM_HEAD \
    "%getitem : Tensor \"f32[16, 64, 128, 128][1048576, 16384, 128, 1]cuda:0\"[num_users=1] = " \
    "call_function[target=operator.getitem](args = ("

Test(pool, what_a_max_pooling_graph_must_say) {
    static const struct {
        const char *needle, *line;
        int ok;
        const char *why;
    } cases[] = {
        {"max_pool", MAX_HEAD "%arg0_1, [2, 2], [2, 2], [0, 0], [1, 1], False), kwargs = {})", 1, "as captured"},
        {"max_pool", MAX_HEAD "%arg0_1, [3, 3], [2, 2], [1, 1], [1, 1], False), kwargs = {})", 1, "3 x 3"},
        {"max_pool", MAX_HEAD "%arg0_1, [5, 3], [2, 2], [2, 1], [1, 1], False), kwargs = {})", 1, "5 x 3"},
        {"max_pool", MAX_HEAD "%arg0_1, [3, 3], [2, 2], [1, 1], [2, 2], False), kwargs = {})", 0,
         "dilation 2: the output would be 127 wide, not the 128 call() allocates"},
        {"max_pool", MAX_HEAD "%arg0_1, [3, 3], [2, 2], [2, 2], [1, 1], False), kwargs = {})", 0,
         "padding above half the window"},
        {"max_pool", MAX_HEAD "%arg0_1, [3, 3], [2, 2], [1, 1], [1, 1], True), kwargs = {})", 0, "ceil_mode"},
        {"max_pool", MAX_HEAD "%arg0_1, [3, 3], [2, 2], [1, 1], [1, 1]), kwargs = {})", 0, "ceil_mode not given"},
        {"max_pool", MAX_HEAD "%arg0_1, [3, 3], [2, 2], [1, 1], [0, 1], False), kwargs = {})", 0, "dilation 0"},
        {"max_pool", MAX_HEAD "%arg0_1, [3], [2], [1], [1], False), kwargs = {})", 0, "a 1-D window on 4-D data"},
        {"max_pool", MAX_HEAD "%arg0_1, [2, 2], [0, 2], [0, 0], [1, 1], False), kwargs = {})", 0, "stride 0"},
        {"max_pool", MAX_HEAD "%arg0_1, [2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False), kwargs = {})", 0,
         "a 3-D window on 4-D data"},
        {"max_pool", MAX_HEAD "%arg0_1, [2, 2], [2, 2], [0, 0], [1, 1, 1], False), kwargs = {})", 0,
         "a dilation of the wrong length"},
        {"max_pool", MAX_HEAD "%arg0_1, [2, 2.5], [2, 2], [0, 0], [1, 1], False), kwargs = {})", 0,
         "a window that is not an integer"},
        {"max_pool",
         "%max_pool2d_with_indices : [num_users=1] = call_function[target=torch.ops.aten.max_pool2d_with_indices."
         "default](args = (%arg0_1, [2, 2], [2, 2], [0, 0], [1, 1], False), kwargs = {})",
         1, "aten's max_pool2d_with_indices with every argument"},
        {"max_pool",
         "%max_pool2d_with_indices : [num_users=1] = call_function[target=torch.ops.aten.max_pool2d_with_indices."
         "default](args = (%arg0_1, 2), kwargs = {})",
         1, "aten's max_pool2d_with_indices: stride = window, no padding, dilation 1"},
        {"getitem", ITEM_HEAD "%_low_memory_max_pool_with_offsets, 1), kwargs = {})", 0, "the offsets, not the values"},
        {"getitem", ITEM_HEAD "%other, 0), kwargs = {})", 0, "the values of another node"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        artifact *a = NULL;
        pool_spec ps;
        json_t *k = kernel_ctx(FX_MAX, &a);
        set_max_line(k, cases[i].needle, cases[i].line);
        if (strstr(cases[i].line, "max_pool2d_with_indices")) { /* its own form: no getitem listed */
            json_t *fr = json_object_get(k, "graph_fragment");
            for (size_t j = json_array_size(fr); j-- > 0;)
                if (strstr(json_string_value(json_array_get(fr, j)), "operator.getitem")) json_array_remove(fr, j);
        }
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), cases[i].ok, "%s: %s", cases[i].why, cases[i].line);
        json_decref(k);
        artifact_free(a);
    }
    /* no getitem listed (the full-size captures' form, "return %getitem" only): the output's type
     * says it holds the values; offsets (int8) or indices (int64) would not be fp32 */
    artifact *a = NULL;
    pool_spec ps;
    json_t *k = kernel_ctx(FX_MAX, &a);
    json_t *fr = json_object_get(k, "graph_fragment");
    for (size_t i = json_array_size(fr); i-- > 0;)
        if (strstr(json_string_value(json_array_get(fr, i)), "operator.getitem")) json_array_remove(fr, i);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "a max pooling without its getitem listed");
    const char *other[] = {"*i8", "*i64"};
    for (size_t t = 0; t < 2; t++) {
        json_t *sig;
        size_t j;
        json_array_foreach(json_object_get(k, "signature"), j, sig) {
            if (!strcmp(json_string_value(json_object_get(sig, "name")), "out_ptr0"))
                json_object_set_new(sig, "type", json_string(other[t]));
        }
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "an output of %s is not the values", other[t]);
    }
    json_decref(k);
    artifact_free(a);
    /* a getitem after an average pooling: not a form Inductor writes */
    k = kernel_ctx(FX_MAX, &a);
    set_max_line(k, "max_pool",
                 "%avg_pool2d : [num_users=1] = call_function[target=torch.ops.aten.avg_pool2d.default](args = "
                 "(%arg0_1, [2, 2], [2, 2]), kwargs = {})");
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "getitem of an average pooling");
    json_decref(k);
    artifact_free(a);
    /* a second getitem (the offsets stored too) */
    k = kernel_ctx(FX_MAX, &a);
    json_array_append_new(json_object_get(k, "graph_fragment"),
                          json_string(ITEM_HEAD "%_low_memory_max_pool_with_offsets, 1), kwargs = {})"));
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "the offsets used as well");
    json_decref(k);
    artifact_free(a);
}

/* The full-size captures of suite level1/33 (1-D, dilation 3: unsqueeze and the prims pooling, no
 * getitem listed; output (N, C, 1, OL)) and level1/35 (3-D fp16: aten.max_pool3d_with_indices as a
 * persistent reduction over the 27 window elements, its stride, padding and dilation defaults). */
Test(pool, full_size_max_pooling_captures) {
    artifact *a = NULL;
    pool_spec ps;
    json_t *k =
        kernel_ctx("tests/fixtures/inductor/suite_level1_33_max_pool1d_dilated__max_autotune_no_cudagraphs_g0.py", &a);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    cr_assert(ps.max && ps.in3 && ps.nd == 2 && !ps.r0numel);
    cr_assert(ps.k[1] == 4 && ps.s[1] == 2 && ps.p[1] == 2 && ps.dl[1] == 3 && ps.k[0] == 1);
    cr_assert_eq(ps.out_w, 8190);
    json_t *v = builtin_pool_variants(tu_kf(k)); /* one output row per plane: tiles one row high */
    static const long long want1d[][2] = {{256, 2}, {128, 1}, {256, 4}, {128, 2}};
    cr_assert_eq(json_array_size(v), 4);
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *x = json_array_get(v, i);
        cr_assert(json_integer_value(json_object_get(x, "bh")) == 1 &&
                      json_integer_value(json_object_get(x, "bw")) == want1d[i][0] &&
                      json_integer_value(json_object_get(x, "num_warps")) == want1d[i][1],
                  "1-D variant %zu", i);
    }
    json_decref(v);
    json_t *c = candidates(k, "max_pool");
    cr_assert(strstr(first_source(c), "\"DD\": 1, \"DH\": 1, \"DW\": 3") != NULL, "%s", first_source(c));
    cr_assert(strstr(first_source(c), "\"OW == (W + 2 * 2 - 10) // 2 + 1\"") != NULL, "the dilated extent");
    gate1_all_bound(a, c);
    json_decref(c);
    json_decref(k);
    artifact_free(a);
    /* 2-D pooling slides down its rows (ROWS) where consecutive windows share rows: level1/34's
     * 3 x 3 s2 p1 (one row shared, paired row loads), sliding variants one output row high first;
     * the template's depth is the height (KD 3, SD 2, PD 1) and its planes single rows (KH 1) */
    k = kernel_ctx(FX_MAX34, &a);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    v = builtin_pool_variants(tu_kf(k));
    cr_assert_gt(json_array_size(v), 0);
    size_t nrows = 0;
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *vi = json_array_get(v, i);
        if (!json_object_get(vi, "odc")) continue;
        nrows++;
        cr_assert_eq(json_integer_value(json_object_get(vi, "bh")), 1, "a sliding 2-D tile is one row high");
    }
    cr_assert(nrows >= 3, "%zu sliding variants", nrows);
    json_decref(v);
    c = candidates(k, "max_pool");
    const char *rs = sliding_source(c);
    cr_assert(strstr(rs, "\"kernel\": \"_pool_slide\"") && strstr(rs, "\"PAIR\": True") &&
                  strstr(rs, "\"KD\": 3, \"KH\": 1, \"KW\": 3, \"SD\": 2, \"SH\": 1, \"SW\": 2") &&
                  strstr(rs, "\"PD\": 1, \"PH\": 0, \"PW\": 1") && strstr(rs, "\"SHARE\": 1") &&
                  strstr(rs, "\"D\": \"shape(in_ptr0, -2)\"") && strstr(rs, "\"OD == (D + 2 * 1 - 3) // 2 + 1\""),
              "%s", rs);
    gate1_all_bound(a, c);
    json_decref(c);
    /* a sliding tile more than one row high is refused (no usable variant) */
    json_t *sp = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i, s:i}]}}", "direction", "rewrite", "params", "template",
                           "max_pool", "variants", "bh", 2, "bw", 16, "num_warps", 1, "odc", 8);
    json_t *so = NULL;
    kerr se = {0};
    cr_assert_neq(builtin_pool_act(tu_kf(k), tu_kp(sp), &so, &se), 0, "a 2-row tile slid down the rows");
    cr_assert_null(so);
    json_decref(sp);
    /* 3 x 3 at stride 1 (hy05): two rows shared (SHARE 2), no paired loads */
    set_max_line(k, "max_pool", MAX_HEAD "%arg0_1, [3, 3], [1, 1], [1, 1], [1, 1], False), kwargs = {})");
    json_object_set_new(json_object_get(k, "shapes"), "out_ptr0", json_pack("[i, i, i, i]", 64, 48, 64, 64));
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "3 x 3 s1 p1 keeps the size");
    c = candidates(k, "max_pool");
    rs = sliding_source(c);
    cr_assert(strstr(rs, "\"kernel\": \"_pool_slide\"") && strstr(rs, "\"PAIR\": False") &&
                  strstr(rs, "\"SHARE\": 2") && strstr(rs, "\"KD\": 3, \"KH\": 1, \"KW\": 3, \"SD\": 1"),
              "%s", rs);
    gate1_all_bound(a, c);
    json_decref(c);
    /* neither a dilated height nor a window of 5 at stride 1 (four rows shared) slides */
    const char *noslide[] = {MAX_HEAD "%arg0_1, [3, 3], [1, 1], [2, 1], [2, 1], False), kwargs = {})",
                             MAX_HEAD "%arg0_1, [5, 3], [1, 1], [2, 1], [1, 1], False), kwargs = {})"};
    for (size_t f = 0; f < 2; f++) {
        set_max_line(k, "max_pool", noslide[f]);
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "%s: the same size", noslide[f]);
        v = builtin_pool_variants(tu_kf(k));
        for (size_t i = 0; i < json_array_size(v); i++)
            cr_assert_null(json_object_get(json_array_get(v, i), "odc"), "%s slides (variant %zu)", noslide[f], i);
        json_decref(v);
    }
    json_decref(k);
    artifact_free(a);
    const char *d3[] = {"tests/fixtures/inductor/suite_level1_35_max_pool3d_fp16__max_autotune_no_cudagraphs_g0.py",
                        "tests/fixtures/inductor/suite_level1_35_max_pool3d_fp16_small_g0.py"};
    for (size_t f = 0; f < 2; f++) {
        k = kernel_ctx(d3[f], &a);
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "%s", d3[f]);
        cr_assert(ps.max && ps.nd == 3 && ps.r0numel && !ps.out_first && !ps.in3);
        for (int i = 0; i < 3; i++) cr_assert(ps.k[i] == 3 && ps.s[i] == 2 && ps.p[i] == 1 && ps.dl[i] == 1);
        c = candidates(k, "max_pool");
        cr_assert(strstr(first_source(c), "\"params\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\", \"r0_numel\"],"));
        /* k3 s2 p1: consecutive windows share one plane, the width window pairs: the sliding
         * strategy first, then the plain one */
        cr_assert(strstr(first_source(c), "\"kernel\": \"_pool_slide\"") && strstr(first_source(c), "\"PAIR\": True"),
                  "%s", first_source(c));
        size_t nslide = 0, nc = json_array_size(json_object_get(c, "candidates"));
        for (size_t i = 0; i < nc; i++) {
            const json_t *cf = json_object_get(json_array_get(json_object_get(c, "candidates"), i), "config");
            nslide += json_integer_value(json_object_get(cf, "odc")) > 0;
        }
        cr_assert(nslide >= 3 && nc > nslide, "%zu sliding of %zu", nslide, nc);
        gate1_all_bound(a, c);
        json_decref(c);
        if (f == 0) { /* full size (32 x 64 x 64 out): dilation 2 in depth only -- no plane shared */
            set_max_line(
                k, "max_pool3d_with_indices",
                "%max_pool3d_with_indices : [num_users=1] = call_function[target=torch.ops.aten."
                "max_pool3d_with_indices.default](args = (%arg0_1, [3, 3, 3], [2, 2, 2], [2, 1, 1], [2, 1, 1]), "
                "kwargs = {})");
            cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "a depth-dilated window of the same output size");
            json_t *dv = builtin_pool_variants(tu_kf(k));
            for (size_t i = 0; i < json_array_size(dv); i++)
                cr_assert_null(json_object_get(json_array_get(dv, i), "odc"), "a dilated depth slides (variant %zu)",
                               i);
            json_decref(dv);
        }
        /* the library's defaults: stride = window, padding 0, dilation 1 */
        set_max_line(k, "max_pool3d_with_indices",
                     "%max_pool3d_with_indices : [num_users=1] = call_function[target=torch.ops.aten."
                     "max_pool3d_with_indices.default](args = (%arg0_1, [2, 2, 2]), kwargs = {})");
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "2x2x2 of stride 2 gives the same output size");
        cr_assert(ps.s[2] == 2 && ps.p[2] == 0 && ps.dl[2] == 1);
        set_max_line(k, "max_pool3d_with_indices",
                     "%max_pool3d_with_indices : [num_users=1] = call_function[target=torch.ops.aten."
                     "max_pool3d_with_indices.default](args = (%arg0_1, [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], "
                     "True), kwargs = {})");
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "ceil_mode");
        /* the prims form of a 3-D pooling: three-element lists */
        set_max_line(k, "max_pool3d_with_indices",
                     MAX_HEAD "%arg0_1, [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], False), kwargs = {})");
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "prims pooling over three dimensions");
        cr_assert(ps.nd == 3 && ps.max);
        json_decref(k);
        artifact_free(a);
    }
}
