/* The region templates (src/agents/builtin_region.c) and the planner on region kernels built
 * from captured fixtures (artifact/region.h), and their candidates through gate 1's C checks. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "artifact/region.h"
#include "gates/candidate.h"
#include "gates/gate1.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"

/* The regioned artifact of launches [first, last] of a module's text, and its region's context. */
static json_t *region_ctx_text(const char *text, int first, int last, artifact **out) {
    artifact *a = NULL, *r = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, strlen(text), &a, &e), 0, "%s", e.msg);
    kbuf b = KBUF_INIT;
    cr_assert_eq(region_build(a, first, last, REGION_PREFIX "0", &b, &e), 0, "%s", e.msg);
    cr_assert_eq(artifact_parse(kbuf_str(&b), b.len, &r, &e), 0, "%s", e.msg);
    artifact_free(a);
    kbuf_free(&b);
    *out = r;
    int k = artifact_find_kernel(r, REGION_PREFIX "0");
    cr_assert_geq(k, 0);
    return opt_kernel_ctx(r, k, NULL);
}

/* The same for a fixture. */
static json_t *region_ctx(const char *fixture, int first, int last, artifact **out) {
    size_t len = 0;
    char *text = tu_read_fixture(fixture, &len);
    json_t *k = region_ctx_text(text, first, last, out);
    free(text);
    return k;
}

static json_t *candidates(const json_t *k, const char *tmpl) {
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", tmpl, "variants",
                             builtin_region_variants(kfamily_parse(tmpl), tu_kf(k)));
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    json_decref(plan);
    return out;
}

/* Every candidate parses, binds to the region (by its members "K1+K2..."; or by `binding`, when
 * given) and passes gate 1's C checks. */
static void gate1_all_bound(const artifact *r, const json_t *cands, const char *binding) {
    const art_kernel *K = &r->kernels[artifact_find_kernel(r, REGION_PREFIX "0")];
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(cands, "candidates"), i, c) {
        const char *src = json_string_value(json_object_get(c, "source"));
        candidate *cd = NULL;
        kerr e = {0};
        cr_assert_eq(candidate_parse(src, strlen(src), &cd, &e), 0, "%s\n%s", e.msg, src);
        if (binding) cr_assert_str_eq(candidate_replaces(cd), binding);
        else cr_assert(strchr(candidate_replaces(cd), '+') != NULL);
        static_opts so = {0};
        kbuf st = KBUF_INIT;
        char *why = NULL;
        cr_assert_eq(gate1_check(cd, K, &so, &st, &why, NULL), 1, "gate 1 refused: %s\n%s", why, src);
        cr_assert(strstr(kbuf_str(&st), "_kopt_region_0 = _KoptLaunch(") != NULL);
        free(why);
        kbuf_free(&st);
        candidate_free(cd);
    }
}

static void gate1_all(const artifact *r, const json_t *cands) { gate1_all_bound(r, cands, NULL); }

Test(region_agents, wide_softmax) {
    artifact *r = NULL;
    json_t *k = region_ctx("tests/fixtures/inductor/02_softmax_wide_g0.py", 0, 4, &r);
    cr_assert_str_eq(json_string_value(json_object_get(k, "kind")), "region");
    cr_assert_eq(json_array_size(json_object_get(k, "members")), 5);
    cr_assert_str_eq(kfamily_name(builtin_region_match(tu_kf(k))), "region_softmax");
    double eps = 0;
    cr_assert_str_eq(kfamily_name(builtin_rewrite_match(tu_kf(k), &eps)), "region_softmax", "the rewrite entry point dispatches to regions");
    json_t *c = candidates(k, "region_softmax");
    cr_assert_eq(json_array_size(json_object_get(c, "candidates")), 6);
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(c, "candidates"), 0), "source"));
    cr_assert(strstr(src, "# kopt-candidate: replaces=triton_red_fused_prepare_softmax_online_0+"
                          "triton_per_fused_prepare_softmax_online_1+") != NULL);
    cr_assert(strstr(src, "y = e * scale") != NULL, "softmax rescales the exponentials it kept");
    cr_assert(strstr(src, "\"checks\": [\"nseg <= sm_count()\"]") != NULL, "the plan refuses rows that cannot be co-resident");
    gate1_all(r, c);
    json_decref(c);
    json_decref(k);
    artifact_free(r);
}

/* Group norms captured on the H200: the example problem's (fp32, groups of 524,288) and
 * held-out h11's (8 groups of 16 channels of 128 x 128, fp16 input, weight, bias and output;
 * statistics in fp32, one rounding at the store), both Inductor's statistics and normalising
 * kernels: the group size and eps read from the kernels. */
Test(region_agents, group_norm_reads_its_constants) {
    static const struct {
        const char *fx;
        int last;
        const char *gsize;
    } cases[] = {{"tests/fixtures/inductor/06_groupnorm_g0.py", 2, "\"GSIZE\": 524288"},
                 {"tests/fixtures/inductor/heldout_h11_group_norm_8_fp16_g0.py", 1, "\"GSIZE\": 262144"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        artifact *r = NULL;
        json_t *k = region_ctx(cases[i].fx, 0, cases[i].last, &r);
        cr_assert_str_eq(kfamily_name(builtin_region_match(tu_kf(k))), "region_group_norm", "%s", cases[i].fx);
        json_t *c = candidates(k, "region_group_norm");
        const json_t *cs = json_object_get(c, "candidates");
        cr_assert_eq(json_array_size(cs), 6);
        const char *src = json_string_value(json_object_get(json_array_get(cs, 0), "source"));
        cr_assert(strstr(src, cases[i].gsize) != NULL, "%s", src);
        cr_assert(strstr(src, "\"groups\", 1e-05]") != NULL, "%s", src);
        cr_assert(strstr(src, "tl.load(x_ptr + base + offs, mask=ok, other=0.0).to(tl.float32)") != NULL, "statistics in fp32");
        cr_assert(strstr(src, "y.to(y_ptr.dtype.element_ty)") != NULL, "one rounding at the store");
        gate1_all(r, c);
        json_decref(c);
        json_decref(k);
        artifact_free(r);
    }
}

/* The group-norm region of launches 1..2 of fixture fx (its context into *k, the regioned
 * artifact into *r): matched, its six candidates. */
static json_t *gn_region_candidates(const char *fx, json_t **k, artifact **r) {
    *k = region_ctx(fx, 1, 2, r);
    cr_assert_str_eq(kfamily_name(builtin_region_match(tu_kf(*k))), "region_group_norm");
    json_t *c = candidates(*k, "region_group_norm");
    cr_assert_eq(json_array_size(json_object_get(c, "candidates")), 6);
    return c;
}

/* A group norm around a convolution's output (held-out hz09: Conv1d, GroupNorm(8, 256), GELU;
 * Inductor adds the convolution's bias in both its kernels and the GELU in the second): one
 * region, bias before and GELU after in the template, groups of 262,080 (32 channels of 8,190)
 * that no power of two divides, so the last segment of each group is masked; every variant
 * through gate 1. Not a region the template takes where an op it does not compute is fused, the
 * GELU is the tanh form, or the input is read at a permuted (channels-last) index. */
Test(region_agents, group_norm_with_bias_before_and_gelu_after) {
    static const char *const fx = "tests/fixtures/inductor/heldout4_hz09_conv1d_groupnorm_gelu_synthetic_g0.py";
    artifact *r = NULL;
    json_t *k = NULL, *c = gn_region_candidates(fx, &k, &r);
    const json_t *cs = json_object_get(c, "candidates");
    size_t i;
    json_t *cand;
    json_array_foreach(cs, i, cand) {
        const char *src = json_string_value(json_object_get(cand, "source"));
        cr_assert(strstr(src, "\"GSIZE\": 262080") && strstr(src, "\"PRE_BIAS\": True") && strstr(src, "\"ACT\": 1"), "%s", src);
        cr_assert(strstr(src, "\"params\": [\"in_ptr0\", \"in_ptr1\", \"in_ptr2\", \"in_ptr3\", \"out_ptr0\"]"), "%s", src);
        cr_assert(strstr(json_string_value(json_object_get(cand, "label")), "bias before, GELU after") != NULL);
    }
    gate1_all(r, c);
    json_decref(c);
    json_decref(k);
    artifact_free(r);
    size_t len = 0;
    char *text = tu_read_fixture(fx, &len);
    /* not taken: an op that is not elementwise fused, the input read at a permuted index, a line
     * after the affine transform reading something else (the mean), a load among those lines, a
     * store of an earlier value, an affine line with more after the bias */
    static const char *const edits[][2] = {
        {"Original ATen: [aten.convolution, aten.native_group_norm, aten.gelu]\n# Source node",
         "Original ATen: [aten.convolution, aten.native_group_norm, aten.gelu, aten.mean]\n# Source node"},
        {"tmp0 = tl.load(in_ptr0 + (x4), None)", "tmp0 = tl.load(in_ptr0 + (x0 + 8190*x3), None)"},
        {"Original ATen: [aten.convolution, aten.native_group_norm, aten.gelu]\n# Source node",
         "Original ATen: [aten.convolution, aten.native_group_norm, aten.gelu, aten.tanh]\n# Source node"},
        {"tmp20 = libdevice.erf(tmp19)", "tmp20 = libdevice.tanh(tmp19)"}};
    static const char *const tail_edits[][2] = {
        {"tmp22 = tmp20 + tmp21", "tmp22 = tmp20 + tmp3"},
        {"tmp21 = tl.full([1], 1.0, tl.float32)", "tmp21 = tl.load(in_ptr1 + (x1), None)"},
        {"    tl.store(out_ptr1 + (x4), tmp23, None)", "    tl.store(out_ptr1 + (x4), tmp22, None)"},
        {"tmp15 = tmp13 + tmp14\n", "tmp15 = tmp13 + tmp14 * tmp3\n"}};
    for (size_t t = 0; t < sizeof edits / sizeof *edits + sizeof tail_edits / sizeof *tail_edits; t++) {
        int pre = t < sizeof edits / sizeof *edits;
        const char *const *ed2 = pre ? edits[t] : tail_edits[t - sizeof edits / sizeof *edits];
        char *ed = tu_replace_once(text, ed2[0], ed2[1]);
        /* the tail edits with an op beyond GELU, so that the lines are lifted (act 3) */
        char *ed3 = pre || t == 0 ? NULL : tu_replace_once(ed, edits[2][0], edits[2][1]);
        k = region_ctx_text(ed3 ? ed3 : ed, 1, 2, &r);
        int want = t >= 2 && t < 4; /* Inductor's lines taken as written: the tanh form, a fused tanh */
        if (want) {
            cr_expect_eq(builtin_region_match(tu_kf(k)), KF_REGION_GROUP_NORM, "not matched after: %s", ed2[1]);
            json_t *cc = candidates(k, "region_group_norm");
            const char *src = json_string_value(
                json_object_get(json_array_get(json_object_get(cc, "candidates"), 0), "source"));
            cr_assert(strstr(src, "@triton.jit\ndef _post(t):\n    tmp16 = tl.full([1], 0.5, tl.float32)\n"
                                  "    tmp17 = t * tmp16\n") &&
                          strstr(src, "    return tmp23\n") && strstr(src, "\"ACT\": 3") &&
                          strstr(src, "        y = _post(y)\n") && strstr(src, t == 3 ? "libdevice.tanh(tmp19)" : "libdevice.erf(tmp19)"),
                      "%s", src);
            gate1_all(r, cc);
            json_decref(cc);
        } else {
            cr_expect_neq(builtin_region_match(tu_kf(k)), KF_REGION_GROUP_NORM, "matched after: %s", ed2[1]);
        }
        json_decref(k);
        artifact_free(r);
        free(ed);
        free(ed3);
    }
    free(text);
}

/* Held-out hv02 (Conv1d, GroupNorm(12, 192), tanh; recorded on the H100): Inductor writes the
 * normalised result into the convolution's buffer (`buf4 = buf0; del buf0  # reuse`, its second
 * kernel's in_out_ptr0). The region takes that buffer as in_out_ptr0, call() keeps the alias
 * after the region's launch (it returns buf4), and the template reads and writes it in place:
 * the plan's parameters in the region's order, the tanh lifted into _post(t), every variant
 * through gate 1. The same region with the alias used after it left out of call() would return
 * an unbound name. */
Test(region_agents, group_norm_written_in_place) {
    static const char *const fx = "tests/fixtures/inductor/heldout6_hv02_conv1d_groupnorm_tanh_g0.py";
    size_t len = 0;
    char *text = tu_read_fixture(fx, &len);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, len, &a, &e), 0, "%s", e.msg);
    kbuf b = KBUF_INIT;
    cr_assert_eq(region_build(a, 1, 2, REGION_PREFIX "0", &b, &e), 0, "%s", e.msg);
    cr_assert(strstr(kbuf_str(&b), "            _kopt_region_0.run(arg1_1, arg3_1, arg4_1, buf0, stream=stream0)\n"
                                   "            buf4 = buf0; del buf0\n"
                                   "            del arg1_1, arg3_1, arg4_1\n"
                                   "        return (buf4, )\n") != NULL,
              "%s", kbuf_str(&b));
    kbuf_free(&b);
    artifact_free(a);
    free(text);
    artifact *r = NULL;
    json_t *k = NULL, *c = gn_region_candidates(fx, &k, &r);
    size_t i;
    json_t *cand;
    json_array_foreach(json_object_get(c, "candidates"), i, cand) {
        const char *src = json_string_value(json_object_get(cand, "source"));
        cr_assert(strstr(src, "\"params\": [\"in_ptr0\", \"in_ptr1\", \"in_ptr2\", \"in_out_ptr0\"]") &&
                      strstr(src, "\"args\": [\"in_out_ptr0\", \"in_ptr0\", \"in_ptr1\", \"in_ptr2\", \"in_out_ptr0\", ") &&
                      strstr(src, "\"stride(in_out_ptr0, 1) == hw\"") && strstr(src, "\"GSIZE\": 262080") &&
                      strstr(src, "@triton.jit\ndef _post(t):\n    tmp16 = libdevice.tanh(t)\n    return tmp16\n") &&
                      strstr(src, "\"ACT\": 3") && strstr(src, "\"PRE_BIAS\": True"),
                  "%s", src);
    }
    gate1_all(r, c);
    json_decref(c);
    json_decref(k);
    artifact_free(r);
}

/* hv02's kernel as a 16-bit model writes it: the weight and bias widened to fp32 on the line
 * before their use and the affine result widened before the activation. The weight and bias are
 * still read through the widening, the widened result's line starts _post. Not taken: a
 * narrowing in that place, or a widened value the next line does not use. */
Test(region_agents, group_norm_affine_read_through_16_bit_widening) {
    static const char *const fx = "tests/fixtures/inductor/heldout6_hv02_conv1d_groupnorm_tanh_g0.py";
    static const char *const from = "    tmp13 = tmp11 * tmp12\n    tmp15 = tmp13 + tmp14\n    tmp16 = libdevice.tanh(tmp15)\n";
    static const char *const cases[][2] = {
        {"    tmp30 = tmp12.to(tl.float32)\n    tmp13 = tmp11 * tmp30\n    tmp31 = tmp14.to(tl.float32)\n"
         "    tmp15 = tmp13 + tmp31\n    tmp32 = tmp15.to(tl.float32)\n    tmp16 = libdevice.tanh(tmp32)\n",
         "@triton.jit\ndef _post(t):\n    tmp32 = t.to(tl.float32)\n    tmp16 = libdevice.tanh(tmp32)\n    return tmp16\n"},
        {"    tmp30 = tmp12.to(tl.float16)\n    tmp13 = tmp11 * tmp30\n    tmp15 = tmp13 + tmp14\n"
         "    tmp16 = libdevice.tanh(tmp15)\n",
         NULL},
        {"    tmp30 = tmp12.to(tl.float32)\n    tmp13 = tmp11 * tmp12\n    tmp15 = tmp13 + tmp14\n"
         "    tmp16 = libdevice.tanh(tmp15)\n",
         NULL}};
    size_t len = 0;
    char *text = tu_read_fixture(fx, &len);
    for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
        char *ed = tu_replace_once(text, from, cases[t][0]);
        artifact *r = NULL;
        json_t *k = region_ctx_text(ed, 1, 2, &r);
        if (cases[t][1]) {
            cr_assert_eq(builtin_region_match(tu_kf(k)), KF_REGION_GROUP_NORM, "%s", cases[t][0]);
            json_t *c = candidates(k, "region_group_norm");
            const char *src = json_string_value(json_object_get(json_array_get(json_object_get(c, "candidates"), 0), "source"));
            cr_assert(strstr(src, cases[t][1]) != NULL, "%s", src);
            gate1_all(r, c);
            json_decref(c);
        } else {
            cr_expect_neq(builtin_region_match(tu_kf(k)), KF_REGION_GROUP_NORM, "matched: %s", cases[t][0]);
        }
        json_decref(k);
        artifact_free(r);
        free(ed);
    }
    free(text);
}

/* hz09 with another activation chain after the group norm, as Inductor writes them (SiLU then
 * tanh: tl.sigmoid, a product, libdevice.tanh; HardSwish then a scale: constants, Inductor's
 * triton_helpers clamp): Inductor's lines become _post(t), every variant through gate 1. */
Test(region_agents, group_norm_with_a_lifted_activation_chain) {
    static const char *const fx = "tests/fixtures/inductor/heldout4_hz09_conv1d_groupnorm_gelu_synthetic_g0.py";
    size_t len = 0;
    char *text = tu_read_fixture(fx, &len);
    static const char *const gelu =
        "    tmp16 = tl.full([1], 0.5, tl.float32)\n"
        "    tmp17 = tmp15 * tmp16\n"
        "    tmp18 = tl.full([1], 0.7071067811865476, tl.float32)\n"
        "    tmp19 = tmp15 * tmp18\n"
        "    tmp20 = libdevice.erf(tmp19)\n"
        "    tmp21 = tl.full([1], 1.0, tl.float32)\n"
        "    tmp22 = tmp20 + tmp21\n"
        "    tmp23 = tmp17 * tmp22\n";
    /* SiLU then tanh; HardSwish then a scale of 0.5 (Inductor's clamp through triton_helpers) */
    static const struct {
        const char *lines, *ops, *post;
    } chains[] = {
        {"    tmp16 = tl.sigmoid(tmp15)\n    tmp17 = tmp15 * tmp16\n    tmp23 = libdevice.tanh(tmp17)\n",
         "aten.silu, aten.tanh",
         "def _post(t):\n    tmp16 = tl.sigmoid(t)\n    tmp17 = t * tmp16\n    tmp23 = libdevice.tanh(tmp17)\n"
         "    return tmp23\n"},
        {"    tmp16 = 3.0\n    tmp17 = tmp15 + tmp16\n    tmp18 = 0.0\n"
         "    tmp19 = triton_helpers.maximum(tmp17, tmp18)\n    tmp20 = 6.0\n"
         "    tmp21 = triton_helpers.minimum(tmp19, tmp20)\n    tmp22 = tmp15 * tmp21\n"
         "    tmp24 = 0.16666666666666666\n    tmp25 = tmp22 * tmp24\n    tmp26 = 0.5\n    tmp23 = tmp25 * tmp26\n",
         "aten.hardswish, aten.mul",
         "    tmp19 = triton_helpers.maximum(tmp17, tmp18)\n"},
    };
    for (size_t ci = 0; ci < sizeof chains / sizeof *chains; ci++) {
        char *a = tu_replace_once(text, gelu, chains[ci].lines);
        char *ops = kasprintf("Original ATen: [aten.convolution, aten.native_group_norm, %s]\n# Source node", chains[ci].ops);
        char *b = tu_replace_once(
            a, "Original ATen: [aten.convolution, aten.native_group_norm, aten.gelu]\n# Source node", ops);
        artifact *r = NULL;
        json_t *k = region_ctx_text(b, 1, 2, &r);
        cr_assert_eq(builtin_region_match(tu_kf(k)), KF_REGION_GROUP_NORM, "%s", chains[ci].ops);
        json_t *c = candidates(k, "region_group_norm");
        size_t i;
        json_t *cand;
        json_array_foreach(json_object_get(c, "candidates"), i, cand) {
            const char *src = json_string_value(json_object_get(cand, "source"));
            cr_assert(strstr(src, chains[ci].post) && strstr(src, "    return tmp23\n") &&
                          strstr(src, "from torch._inductor.runtime.triton_helpers import libdevice"),
                      "%s", src);
        }
        gate1_all(r, c);
        json_decref(c);
        json_decref(k);
        artifact_free(r);
        free(a);
        free(b);
        free(ops);
    }
    free(text);
}

/* Captured layer norms over trailing dimensions, Inductor's split Welford, combine and
 * normalising kernels. Held-out h03's 64 rows of 2,097,152 (default and max-autotune) need 64
 * segments a row or more: no region (measured slower on the H200). 64 rows of 1,048,576 fp32
 * and 128 rows of 524,288 bf16 (written for the check): one region whose candidates read the row
 * length and eps from the kernels and cut a row into at most 32 segments. */
Test(region_agents, layer_norm_over_trailing_dims) {
    static const char *const longer[] = {"tests/fixtures/inductor/heldout_h03_layer_norm_3dims_g0.py",
                                         "tests/fixtures/inductor/heldout_h03_layer_norm_3dims__max_autotune_no_cudagraphs_g0.py"};
    artifact *r = NULL;
    for (size_t f = 0; f < 2; f++) {
        json_t *k = region_ctx(longer[f], 0, 2, &r);
        cr_assert_eq(builtin_region_match(tu_kf(k)), KF_NONE, "%s: rows of 64 segments or more", longer[f]);
        json_decref(k);
        artifact_free(r);
    }
    static const struct {
        const char *fx, *rows, *n;
        size_t ncands;
    } ok[] = {{"tests/fixtures/inductor/scratch_ln_1m_rows_g0.py", "\"rows\": \"numel(in_ptr0) // 1048576\"",
               "\"numel(in_ptr1) == 1048576\"", 2},
              {"tests/fixtures/inductor/scratch_ln_512k_rows_bf16_g0.py", "\"rows\": \"numel(in_ptr0) // 524288\"",
               "\"numel(in_ptr1) == 524288\"", 3}};
    for (size_t f = 0; f < 2; f++) {
        json_t *k = region_ctx(ok[f].fx, 0, 2, &r);
        cr_assert_str_eq(kfamily_name(builtin_region_match(tu_kf(k))), "region_layer_norm", "%s", ok[f].fx);
        json_t *c = candidates(k, "region_layer_norm");
        const json_t *cs = json_object_get(c, "candidates");
        cr_assert_eq(json_array_size(cs), ok[f].ncands, "%s: the segment sizes that cut a row into at most 32", ok[f].fx);
        size_t i;
        json_t *cd;
        json_array_foreach(cs, i, cd) {
            const char *src = json_string_value(json_object_get(cd, "source"));
            cr_assert(strstr(src, ok[f].rows) != NULL, "%s", src);
            cr_assert(strstr(src, ok[f].n) != NULL, "%s", src);
            cr_assert(strstr(src, "\"EPS\": 1e-05") != NULL, "%s", src);
            cr_assert(strstr(src, "\"SEG\": 8192") == NULL, "%s", src);
        }
        gate1_all(r, c);
        json_decref(c);
        json_decref(k);
        artifact_free(r);
    }
}

/* Not the norm alone, or not of one type: no norm region. */
Test(region_agents, norm_regions_refuse_other_work_and_mixed_types) {
    size_t len = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/scratch_ln_1m_rows_g0.py", &len);
    artifact *r = NULL;
    json_t *k0 = region_ctx_text(text, 0, 2, &r);
    cr_assert_eq(builtin_region_match(tu_kf(k0)), KF_REGION_LAYER_NORM, "the module as captured is one");
    json_decref(k0);
    artifact_free(r);
    /* the statistics alone (launches 0..1): x in, mean and m2 out */
    json_t *k = region_ctx_text(text, 0, 1, &r);
    cr_assert_eq(builtin_region_match(tu_kf(k)), KF_NONE);
    json_decref(k);
    artifact_free(r);
    /* one edit of the captured module each: none of them is a norm region */
    static const struct {
        const char *from, *to, *why;
    } edits[] = {
        {"[aten.native_layer_norm]\n# Source node to ATen node mapping:\n#   layer_norm => add, add_1,",
         "[aten.native_layer_norm, aten.relu]\n# Source node to ATen node mapping:\n#   layer_norm => add, add_1,",
         "the normalising kernel also computes a relu: a norm that fuses other work"},
        {"'in_ptr4': '*fp32', 'out_ptr0': '*fp32'", "'in_ptr4': '*fp32', 'out_ptr0': '*bf16'",
         "x and the output of different types"},
        {"tl.full([1], 1e-05, tl.float32)", "tl.full([1], 0.5, tl.float32)", "no eps constant to read"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        kbuf t = KBUF_INIT;
        kbuf_puts(&t, text);
        cr_assert_geq(kbuf_replace_first(&t, edits[i].from, edits[i].to), 0, "%s", edits[i].why);
        k = region_ctx_text(kbuf_str(&t), 0, 2, &r);
        cr_assert_eq(builtin_region_match(tu_kf(k)), KF_NONE, "%s", edits[i].why);
        json_decref(k);
        artifact_free(r);
        kbuf_free(&t);
    }
    free(text);
}

Test(region_agents, no_template_for_other_regions_or_kernels) {
    artifact *r = NULL;
    /* the softmax's statistics alone: three external tensors, no template */
    json_t *k = region_ctx("tests/fixtures/inductor/02_softmax_wide_g0.py", 0, 3, &r);
    cr_assert_eq(builtin_region_match(tu_kf(k)), KF_NONE);
    json_t *plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i}]}}", "direction", "rewrite", "params", "template",
                             "region_softmax", "variants", "seg", 8192, "num_warps", 8);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(k), tu_kp(plan), &out, &e), KOPT_E_CANDIDATE);
    json_decref(plan);
    json_decref(k);
    /* an ordinary kernel is not a region */
    int n = artifact_find_kernel(r, "triton_poi_fused__softmax_exp_sub_4");
    k = opt_kernel_ctx(r, n, NULL);
    cr_assert_eq(builtin_region_match(tu_kf(k)), KF_NONE);
    json_decref(k);
    artifact_free(r);
}

Test(region_agents, planner_rewrites_a_region_once) {
    artifact *r = NULL;
    json_t *k = region_ctx("tests/fixtures/inductor/02_softmax_wide_g0.py", 0, 4, &r);
    agent *pl = builtin_new(AGENT_PLANNER);
    for (int round = 0; round < 2; round++) {
        json_t *ctx = json_pack("{s:O, s:[], s:i, s:{s:i}}", "kernel", k, "history", "round", round, "budget", "candidates_left", 64);
        json_t *out = NULL;
        kerr e = {0};
        cr_assert_eq(agent_act(pl, ctx, &out, &e), 0, "%s", e.msg);
        const json_t *plans = json_object_get(out, "plans");
        if (round == 0) {
            cr_assert_eq(json_array_size(plans), 1);
            cr_assert_str_eq(json_string_value(json_object_get(json_array_get(plans, 0), "direction")), "rewrite");
        } else {
            cr_assert_eq(json_array_size(plans), 0);
            cr_assert(json_string_value(json_object_get(out, "why")) != NULL);
        }
        json_decref(out);
        json_decref(ctx);
    }
    agent_free(pl);
    json_decref(k);
    artifact_free(r);
}

/* ---- the average-pooling family on a vendor region (builtin_pool.c) */

static const char *FX_POOL3D = "tests/fixtures/inductor/suite_level1_38_avg_pool3d_g0.py";

/* The pooling context of the 3-D fixture with its ATen call's literal arguments replaced. */
static json_t *pool_ctx_with(const char *args, artifact **r) {
    json_t *k = region_ctx(FX_POOL3D, 0, 0, r);
    if (args)
        json_object_set_new(k, "vendor_call", json_sprintf("torch.ops.aten.avg_pool3d.default(in_ptr0, %s)", args));
    return k;
}

Test(region_agents, avg_pool3d_reads_its_arguments) {
    artifact *r = NULL;
    json_t *k = pool_ctx_with(NULL, &r);
    cr_assert_str_eq(json_string_value(json_object_get(k, "vendor_call")),
                     "torch.ops.aten.avg_pool3d.default(in_ptr0, [3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, None)");
    cr_assert_str_eq(kfamily_name(builtin_region_match(tu_kf(k))), "region_avg_pool");
    pool_spec ps;
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    cr_assert_eq(ps.nd, 3);
    for (int i = 0; i < 3; i++) cr_assert(ps.k[i] == 3 && ps.s[i] == 2 && ps.p[i] == 1);
    cr_assert_eq(ps.ceil, 0);
    cr_assert_eq(ps.count_pad, 0);
    cr_assert_eq(ps.divisor, 0);
    cr_assert_eq(ps.out_w, 64);
    json_t *c = candidates(k, "region_avg_pool");
    cr_assert_geq(json_array_size(json_object_get(c, "candidates")), 3);
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(c, "candidates"), 0), "source"));
    cr_assert(strstr(src, "# kopt-candidate: replaces=torch.ops.aten.avg_pool3d.default\n") == src);
    /* k3 s2 p1 in depth: the sliding strategy first (1 x 32 outputs walking 8 depths, paired
     * row loads), the plain one after it */
    cr_assert(strstr(src, "\"COUNT_PAD\": False") && strstr(src, "\"KD\": 3") && strstr(src, "\"PW\": 1") &&
                  strstr(src, "\"DIVISOR\": 0") && strstr(src, "\"BH\": 1, \"BW\": 32, \"ODC\": 8") &&
                  strstr(src, "\"kernel\": \"_pool_slide\"") && strstr(src, "\"PAIR\": True"),
              "%s", src);
    int plain64 = 0;
    for (size_t i = 0; i < json_array_size(json_object_get(c, "candidates")); i++) {
        const char *si = json_string_value(json_object_get(json_array_get(json_object_get(c, "candidates"), i), "source"));
        plain64 |= strstr(si, "\"kernel\": \"_avg_pool\"") && strstr(si, "\"BH\": 1, \"BW\": 64}");
    }
    cr_assert(plain64, "the plain 1 x 64 tile is still among the candidates");
    cr_assert(strstr(src, "OD == (D + 2 * 1 - 3) // 2 + 1") != NULL);
    /* every candidate through gate 1's C checks, bound to the region by its ATen call */
    gate1_all_bound(r, c, "torch.ops.aten.avg_pool3d.default");
    json_decref(c);
    json_decref(k);
    artifact_free(r);
}

Test(region_agents, avg_pool_argument_forms) {
    artifact *r = NULL;
    pool_spec ps;
    /* one value for all dimensions, stride defaulting to the window, padding counted */
    json_t *k = pool_ctx_with("[2], [], [0], False, True, None", &r);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1, "2x2x2 windows of stride 2 give the fixture's 32x64x64 too");
    cr_assert(ps.k[0] == 2 && ps.s[0] == 2 && ps.s[2] == 2 && ps.p[1] == 0 && ps.count_pad == 1);
    json_decref(k);
    artifact_free(r);
    k = pool_ctx_with("[3], [1], [1], False, True, None", &r);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "stride 1 gives 64x128x128, not the output call() allocates");
    json_decref(k);
    artifact_free(r);
    k = pool_ctx_with("[3], [2], [1]", &r);   /* count_include_pad defaults to True */
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    cr_assert_eq(ps.count_pad, 1);
    cr_assert(ps.k[2] == 3 && ps.s[1] == 2 && ps.p[0] == 1);
    json_decref(k);
    artifact_free(r);
    k = pool_ctx_with("[3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, 7", &r);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    cr_assert_eq(ps.divisor, 7);
    json_decref(k);
    artifact_free(r);
    /* a window of another shape in each dimension: each reaches its own constexpr */
    k = pool_ctx_with("[2, 3, 2], [2, 2, 2], [0, 1, 0], False, True, None", &r);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    json_t *c = candidates(k, "region_avg_pool");
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(c, "candidates"), 0), "source"));
    cr_assert(strstr(src, "\"KD\": 2, \"KH\": 3, \"KW\": 2") && strstr(src, "\"PD\": 0, \"PH\": 1, \"PW\": 0"), "%s", src);
    json_decref(c);
    json_decref(k);
    artifact_free(r);
    /* refused: ceil_mode, a zero divisor, padding above half the window, a window past the
     * limit, another op, a keyword argument, something not a literal */
    static const char *const no[] = {"[3, 3, 3], [2, 2, 2], [1, 1, 1], True, False, None",
                                     "[3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, 0",
                                     "[3, 3, 3], [2, 2, 2], [2, 2, 2], False, False, None",
                                     "[3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, None, 1",
                                     "[3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, divisor_override=None",
                                     "[3, 3, 3], [2, 2, 2], [1, 1, 1], 0, False, None",
                                     "[3, 3], [2, 2, 2], [1, 1, 1], False, False, None"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        k = pool_ctx_with(no[i], &r);
        cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "accepted: %s", no[i]);
        cr_assert_eq(builtin_region_match(tu_kf(k)), KF_NONE);
        json_decref(k);
        artifact_free(r);
    }
    k = pool_ctx_with("[9, 9, 9], [2, 2, 2], [4, 4, 4], False, False, None", &r);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0, "a 729-element window is past the unrolled limit");
    json_decref(k);
    artifact_free(r);
    k = pool_ctx_with(NULL, &r);
    json_object_set_new(k, "vendor_call", json_string("torch.ops.aten.max_pool3d.default(in_ptr0, [3, 3, 3], [2, 2, 2])"));
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 0);
    json_decref(k);
    artifact_free(r);
}

/* The sliding strategy needs the depth's windows to share one plane (k = s + 1 in depth); the
 * other dimensions do not decide it. A plan may ask for one depth per program (odc 1). */
Test(region_agents, avg_pool3d_slides_only_down_a_shared_depth) {
    artifact *r = NULL;
    pool_spec ps;
    /* depth 2 of stride 2 (no shared plane), height and width 3 of stride 2: the same output */
    json_t *k = pool_ctx_with("[2, 3, 3], [2, 2, 2], [0, 1, 1], False, False, None", &r);
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    json_t *v = builtin_pool_variants(tu_kf(k));
    cr_assert_gt(json_array_size(v), 0);
    for (size_t i = 0; i < json_array_size(v); i++)
        cr_assert_null(json_object_get(json_array_get(v, i), "odc"), "variant %zu slides down an unshared depth", i);
    json_decref(v);
    json_decref(k);
    artifact_free(r);
    k = pool_ctx_with(NULL, &r); /* k3 s2 p1 everywhere */
    json_t *plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i, s:i, s:i}]}}", "direction", "rewrite", "params", "template",
                             "region_avg_pool", "variants", "bh", 1, "bw", 64, "num_warps", 1, "odc", 1);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_pool_act(tu_kf(k), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "source"));
    cr_assert(src && strstr(src, "\"kernel\": \"_pool_slide\"") && strstr(src, "\"ODC\": 1,") &&
                  strstr(src, "\"SHARE\": 1}"), "%s", src ? src : "?");
    json_decref(out);
    json_decref(plan);
    json_decref(k);
    artifact_free(r);
}

/* The same family on the example problem's own capture (another shape, from the H200). */
Test(region_agents, avg_pool3d_example_problem_shape) {
    artifact *r = NULL;
    json_t *k = region_ctx("tests/fixtures/inductor/18_avg_pool3d_g0.py", 0, 0, &r);
    pool_spec ps;
    cr_assert_eq(builtin_pool_match(tu_kf(k), &ps), 1);
    cr_assert_eq(ps.nd, 3);
    cr_assert_eq(ps.out_w, 32);
    json_t *v = builtin_pool_variants(tu_kf(k));
    /* the tile's width follows the output's: sliding tiles of half of it first, then plain ones */
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(v, 0), "bw")), 16);
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(v, 0), "odc")), 8);
    size_t first_plain = 0;
    while (first_plain < json_array_size(v) && json_object_get(json_array_get(v, first_plain), "odc")) first_plain++;
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(v, first_plain), "bw")), 32);
    json_decref(v);
    json_t *c = candidates(k, "region_avg_pool");
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(c, "candidates"), 0), "source"));
    cr_assert(strstr(src, "\"BH\": 1, \"BW\": 16, \"ODC\": 8") != NULL, "%s", src);
    json_decref(c);
    json_decref(k);
    artifact_free(r);
}

/* A variant that cuts a row into more segments than the GPU has SMs (the context's sm_count)
 * is not offered: its plan's "nseg <= sm_count()" check would refuse it at gate 1. Without an
 * sm_count every variant stays. */
Test(region_agents, variants_fit_the_gpus_sms) {
    static const struct {
        const char *fx, *tmpl;
        int last;
        long long sms;
        size_t nvar;
    } cases[] = {{"tests/fixtures/inductor/06_groupnorm_g0.py", "region_group_norm", 2, 0, 6},
                 {"tests/fixtures/inductor/06_groupnorm_g0.py", "region_group_norm", 2, 132, 6},
                 /* groups of 524,288: 4096-element segments make 128 programs a group */
                 {"tests/fixtures/inductor/06_groupnorm_g0.py", "region_group_norm", 2, 100, 4},
                 {"tests/fixtures/inductor/06_groupnorm_g0.py", "region_group_norm", 2, 20, 0},
                 {"tests/fixtures/inductor/02_softmax_wide_g0.py", "region_softmax", 4, 0, 6}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        artifact *r = NULL;
        json_t *k = region_ctx(cases[i].fx, 0, cases[i].last, &r);
        if (cases[i].sms) json_object_set_new(k, "sm_count", json_integer(cases[i].sms));
        const kfacts *kf = tu_kf(k);
        cr_assert_eq(kf->sms, cases[i].sms);
        json_t *v = builtin_region_variants(kfamily_parse(cases[i].tmpl), kf);
        cr_assert_eq(json_array_size(v), cases[i].nvar, "%s with %lld SMs: %zu variants", cases[i].fx, cases[i].sms,
                     json_array_size(v));
        size_t j;
        json_t *x;
        json_array_foreach(v, j, x) if (cases[i].sms) cr_assert_leq((524288 + json_integer_value(json_object_get(x, "seg")) - 1) /
                                                                        json_integer_value(json_object_get(x, "seg")),
                                                                    cases[i].sms);
        /* the executor keeps to the same bound for variants another planner names (all six) */
        json_t *all = json_deep_copy(k);
        json_object_del(all, "sm_count");
        json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", cases[i].tmpl,
                                 "variants", builtin_region_variants(kfamily_parse(cases[i].tmpl), tu_kf(all)));
        json_t *out = NULL;
        kerr e = {0};
        int rc = builtin_rewrite_act(kf, tu_kp(plan), &out, &e);
        if (cases[i].nvar) cr_assert_eq(json_array_size(json_object_get(out, "candidates")), cases[i].nvar, "%s", e.msg);
        else cr_assert(rc != 0 || json_array_size(json_object_get(out, "candidates")) == 0);
        json_decref(out);
        json_decref(plan);
        json_decref(all);
        json_decref(v);
        json_decref(k);
        artifact_free(r);
    }
}
