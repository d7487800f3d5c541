/* Regions (region.h, art_region.c): consecutive launches moved into one launcher that parses
 * back as a kernel, call() launching it in their place. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/region.h"
#include "gates/candidate.h"
#include "testutil.h"

static artifact *parse_fixture(const char *rel, char **text) {
    size_t n = 0;
    *text = tu_read_fixture(rel, &n);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(*text, n, &a, &e), 0, "%s", e.msg);
    return a;
}

static artifact *regioned(const artifact *a, int first, int last, kbuf *out) {
    kerr e = {0};
    cr_assert_eq(region_build(a, first, last, "_kopt_region_0", out, &e), 0, "%s", e.msg);
    artifact *r = NULL;
    cr_assert_eq(artifact_parse(kbuf_str(out), out->len, &r, &e), 0, "%s\n%s", e.msg, kbuf_str(out));
    return r;
}

static const art_kernel *region_kernel(const artifact *r) {
    int k = artifact_find_kernel(r, "_kopt_region_0");
    cr_assert_geq(k, 0, "the region parses back as a kernel");
    return &r->kernels[k];
}

Test(region, wide_softmax_five_launches_become_one) {
    char *text = NULL;
    artifact *a = parse_fixture("tests/fixtures/inductor/02_softmax_wide_g0.py", &text);
    cr_assert_eq(a->nlaunches, 5);
    kbuf out = KBUF_INIT;
    artifact *r = regioned(a, 0, 4, &out);
    const art_kernel *k = region_kernel(r);
    cr_assert_eq(k->kind, ART_K_REGION);
    cr_assert_str_eq(k->heuristic, "region");
    cr_assert_eq(k->nparams, 2);
    cr_assert_str_eq(k->params[0].name, "in_ptr0");
    cr_assert_eq(k->params[0].role, ART_ROLE_IN);
    cr_assert_str_eq(k->params[0].type, "*fp32");
    cr_assert_str_eq(k->params[1].name, "out_ptr0");
    cr_assert_eq(k->params[1].role, ART_ROLE_OUT);
    cr_assert_eq(k->members.n, 5);
    cr_assert_str_eq(k->members.v[0], "triton_red_fused_prepare_softmax_online_0");
    cr_assert_str_eq(k->members.v[4], "triton_poi_fused__softmax_exp_sub_4");
    int has_softmax = 0;
    for (size_t i = 0; i < k->aten_ops.n; i++) has_softmax |= !strcmp(k->aten_ops.v[i], "aten._softmax");
    cr_assert(has_softmax, "the region's ATen ops are its kernels'");
    /* call() launches only the region, on the graph input and the returned buffer */
    cr_assert_eq(r->nlaunches, 1);
    cr_assert_str_eq(r->launches[0].callee, "_kopt_region_0");
    cr_assert_eq(r->launches[0].kernel, artifact_find_kernel(r, "_kopt_region_0"));
    cr_assert_eq(r->launches[0].args.n, 2);
    cr_assert_str_eq(r->launches[0].args.v[0], "arg0_1");
    cr_assert_str_eq(r->launches[0].args.v[1], "buf4");
    /* the output is allocated in call(), the intermediates inside the region */
    const char *t = kbuf_str(&out);
    const char *fn = strstr(t, "def _kopt_region_0__launch(in_ptr0, out_ptr0, stream=None):");
    const char *call = strstr(t, "def call(self, args):");
    cr_assert(fn && call && fn < call);
    cr_assert(strstr(fn, "    buf0 = empty_strided_cuda((128, 1, 5)") < call);
    cr_assert(strstr(call, "buf4 = empty_strided_cuda((128, 262144)") != NULL);
    cr_assert(strstr(call, "buf0 = empty_strided_cuda") == NULL);
    cr_assert(strstr(call, "_kopt_region_0.run(arg0_1, buf4, stream=stream0)") != NULL);
    /* the five kernels are still defined (the region's function launches them) */
    cr_assert_eq(r->nkernels, a->nkernels + 1);
    artifact_free(r);
    artifact_free(a);
    kbuf_free(&out);
    free(text);
}

Test(region, group_norm_inputs_in_first_read_order) {
    char *text = NULL;
    artifact *a = parse_fixture("tests/fixtures/inductor/06_groupnorm_g0.py", &text);
    cr_assert_eq(a->nlaunches, 3);
    kbuf out = KBUF_INIT;
    artifact *r = regioned(a, 0, 2, &out);
    const art_kernel *k = region_kernel(r);
    cr_assert_eq(k->nparams, 4);
    const char *want[] = {"in_ptr0", "in_ptr1", "in_ptr2", "out_ptr0"};
    for (size_t i = 0; i < 4; i++) cr_assert_str_eq(k->params[i].name, want[i]);
    cr_assert_eq(r->nlaunches, 1);
    /* x is read first (statistics), then weight and bias (the normalisation) */
    const char *args[] = {"arg2_1", "arg0_1", "arg1_1", "buf6"};
    for (size_t i = 0; i < 4; i++) cr_assert_str_eq(r->launches[0].args.v[i], args[i]);
    /* the deletions of graph inputs after the region stay in call() */
    const char *call = strstr(kbuf_str(&out), "def call(self, args):");
    cr_assert(strstr(call, "del arg0_1") != NULL);
    artifact_free(r);
    artifact_free(a);
    kbuf_free(&out);
    free(text);
}

Test(region, partial_region_keeps_what_follows) {
    /* the softmax's statistics only (launches 0-3): its outputs are the max and the sum the
     * normalising kernel reads after it */
    char *text = NULL;
    artifact *a = parse_fixture("tests/fixtures/inductor/02_softmax_wide_g0.py", &text);
    kbuf out = KBUF_INIT;
    artifact *r = regioned(a, 0, 3, &out);
    const art_kernel *k = region_kernel(r);
    cr_assert_eq(k->nparams, 3);
    cr_assert_eq(k->params[1].role, ART_ROLE_OUT);
    cr_assert_eq(k->params[2].role, ART_ROLE_OUT);
    cr_assert_eq(r->nlaunches, 2);
    cr_assert_str_eq(r->launches[0].args.v[1], "buf1");
    cr_assert_str_eq(r->launches[0].args.v[2], "buf3");
    cr_assert_str_eq(r->launches[1].callee, "triton_poi_fused__softmax_exp_sub_4");
    artifact_free(r);
    artifact_free(a);
    kbuf_free(&out);
    free(text);
}

Test(region, refusals) {
    char *text = NULL;
    artifact *a = parse_fixture("tests/fixtures/inductor/02_softmax_wide_g0.py", &text);
    kbuf out = KBUF_INIT;
    kerr e = {0};
    cr_assert_eq(region_build(a, 2, 2, "_kopt_region_0", &out, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(region_build(a, 0, 9, "_kopt_region_0", &out, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(region_build(a, 0, 1, "not a name", &out, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(out.len, 0, "nothing written on error");
    const char *names[] = {"triton_red_fused_prepare_softmax_online_0", "triton_red_fused_prepare_softmax_online_2"};
    int f = -1, l = -1;
    cr_assert_eq(region_find_launches(a, names, 2, &f, &l, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "one after another") != NULL, "%s", e.msg);
    const char *ok[] = {"triton_red_fused_prepare_softmax_online_0", "triton_per_fused_prepare_softmax_online_1"};
    cr_assert_eq(region_find_launches(a, ok, 2, &f, &l, &e), 0, "%s", e.msg);
    cr_assert_eq(f, 0);
    cr_assert_eq(l, 1);
    artifact_free(a);
    kbuf_free(&out);
    free(text);
}

Test(region, vendor_call_inside_is_refused) {
    char *text = NULL;
    artifact *a = parse_fixture("tests/fixtures/inductor/16_mlp_block_g0.py", &text);
    int first = -1, last = -1;
    for (size_t i = 0; i < a->nlaunches; i++) {
        if (a->launches[i].kind == ART_L_TRITON && first < 0) first = (int)i;
        if (a->launches[i].kind == ART_L_TRITON) last = (int)i;
    }
    kbuf out = KBUF_INIT;
    kerr e = {0};
    if (first >= 0 && last > first) {
        int vendor_between = 0;
        for (int i = first; i <= last; i++) vendor_between |= a->launches[i].kind == ART_L_VENDOR;
        cr_assert(vendor_between, "fixture changed: expected a vendor call between its Triton launches");
        cr_assert_eq(region_build(a, first, last, "_kopt_region_0", &out, &e), KOPT_E_CANDIDATE);
    }
    artifact_free(a);
    kbuf_free(&out);
    free(text);
}

/* ---- vendor regions: one ATen fallback call (region_vendor.c) */

static const char *FX_POOL3D = "tests/fixtures/inductor/suite_level1_38_avg_pool3d_g0.py";

Test(region, avg_pool3d_call_becomes_a_region) {
    char *text = NULL;
    artifact *a = parse_fixture(FX_POOL3D, &text);
    cr_assert_eq(a->nkernels, 0);
    cr_assert_eq(a->nlaunches, 1);
    cr_assert_eq(a->launches[0].kind, ART_L_VENDOR);
    kbuf out = KBUF_INIT;
    artifact *r = regioned(a, 0, 0, &out);
    const art_kernel *k = region_kernel(r);
    cr_assert_eq(k->kind, ART_K_REGION);
    cr_assert_eq(k->nparams, 2);
    cr_assert_str_eq(k->params[0].name, "in_ptr0");
    cr_assert_eq(k->params[0].role, ART_ROLE_IN);
    cr_assert_str_eq(k->params[0].type, "*fp32");
    cr_assert_str_eq(k->params[1].name, "out_ptr0");
    cr_assert_eq(k->params[1].role, ART_ROLE_OUT);
    cr_assert_eq(k->members.n, 1);
    cr_assert_str_eq(k->members.v[0], "torch.ops.aten.avg_pool3d.default");
    cr_assert_str_eq(k->vendor_call, "torch.ops.aten.avg_pool3d.default(in_ptr0, [3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, None)");
    cr_assert(region_binding_is(k, "torch.ops.aten.avg_pool3d.default"));
    cr_assert_eq(k->aten_ops.n, 1);
    cr_assert_str_eq(k->aten_ops.v[0], "aten.avg_pool3d");
    /* call(): the output allocated as the assert states it, the region launched on it */
    cr_assert_eq(r->nlaunches, 1);
    cr_assert_eq(r->launches[0].kind, ART_L_TRITON);
    cr_assert_str_eq(r->launches[0].callee, "_kopt_region_0");
    cr_assert_eq(r->launches[0].args.n, 2);
    cr_assert_str_eq(r->launches[0].args.v[0], "arg0_1");
    cr_assert_str_eq(r->launches[0].args.v[1], "buf0");
    const char *t = kbuf_str(&out);
    const char *fn = strstr(t, "def _kopt_region_0__launch(in_ptr0, out_ptr0, stream=None):\n"
                               "    torch.ops.aten.avg_pool3d.out(in_ptr0, [3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, None, "
                               "out=out_ptr0)\n");
    const char *cls = strstr(t, "class Runner:");
    cr_assert(fn && cls && fn < cls, "the launcher is defined before call()'s class\n%s", t);
    cr_assert(strstr(t, "            buf0 = empty_strided_cuda((16, 32, 32, 64, 64), (4194304, 131072, 4096, 64, 1), "
                        "torch.float32)\n            _kopt_region_0.run(arg0_1, buf0)\n            del arg0_1\n") != NULL);
    cr_assert(strstr(t, "= torch.ops.aten.avg_pool3d.default(") == NULL, "the ATen call is gone from call()");
    /* what follows it stays */
    cr_assert(strstr(t, "assert_size_stride(buf1, (16, 32, 32, 64, 64)") != NULL);
    /* a binding finds it */
    const char *names[] = {"torch.ops.aten.avg_pool3d.default"};
    int f = -1, l = -1;
    kerr e = {0};
    cr_assert_eq(region_find_launches(a, names, 1, &f, &l, &e), 0, "%s", e.msg);
    cr_assert(f == 0 && l == 0);
    const char *other[] = {"torch.ops.aten.avg_pool2d.default"};
    cr_assert_eq(region_find_launches(a, other, 1, &f, &l, &e), KOPT_E_CANDIDATE);
    const char *notallowed[] = {"torch.ops.aten.cumsum.default"};
    cr_assert_eq(region_find_launches(a, notallowed, 1, &f, &l, &e), KOPT_E_CANDIDATE);
    artifact_free(r);
    artifact_free(a);
    kbuf_free(&out);
    free(text);
}

/* The fixture with one edit: each must be refused (and leave `out` untouched). */
static void vendor_refused(const char *from, const char *to, const char *why) {
    size_t n = 0;
    char *text = tu_read_fixture(FX_POOL3D, &n);
    kbuf src = KBUF_INIT;   /* a copy: GCC's -O2 dangling-pointer analysis misreads the fixture's buffer */
    kbuf_append(&src, text, n);
    free(text);
    text = NULL;
    const char *s0 = kbuf_str(&src), *p = strstr(s0, from);
    cr_assert(p, "fixture changed: %s", from);
    size_t at = (size_t)(p - s0);
    kbuf t = KBUF_INIT;
    kbuf_append(&t, s0, at);
    kbuf_puts(&t, to);
    kbuf_puts(&t, s0 + at + strlen(from));
    kbuf_free(&src);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(kbuf_str(&t), t.len, &a, &e), 0, "%s", e.msg);
    kbuf out = KBUF_INIT;
    int li = -1;
    for (size_t i = 0; i < a->nlaunches; i++)
        if (a->launches[i].kind == ART_L_VENDOR) li = (int)i;
    cr_assert_geq(li, 0);
    cr_assert_eq(region_build(a, li, li, "_kopt_region_0", &out, &e), KOPT_E_CANDIDATE, "%s: built", why);
    cr_assert_eq(out.len, 0);
    cr_assert(strstr(e.msg, why) != NULL, "%s: got '%s'", why, e.msg);
    artifact_free(a);
    kbuf_free(&out);
    kbuf_free(&t);
}

Test(region, vendor_refusals) {
    vendor_refused("torch.ops.aten.avg_pool3d.default(arg0_1, [3, 3, 3]", "torch.ops.aten.max_pool3d_with_indices.default(arg0_1, [3, 3, 3]",
                   "not an ATen call kopt can take the place of");
    vendor_refused("[1, 1, 1], False, False, None)", "[1, 1, 1], False, False, divisor)", "is not an int, bool, None or list");
    vendor_refused("[1, 1, 1], False, False, None)", "[1, 1, 1], False, False, divisor_override=None)", "on a line of its own");
    vendor_refused("[1, 1, 1], False, False, None)", "[1, 1, 1], False, False, __import__('os'))", "is not an int, bool");
    vendor_refused("[1, 1, 1], False, False, None)", "[1, 1, x], False, False, None)", "is not an int, bool");
    vendor_refused("[1, 1, 1], False, False, None)", "[x, 1, 1], False, False, None)", "is not an int, bool");
    /* the input made by an ATen call outside the allowlist: its dtype is not known */
    vendor_refused("            buf0 = torch.ops.aten.avg_pool3d.default(arg0_1,",
                   "            buf7 = torch.ops.aten.cumsum.default(arg0_1, 1)\n"
                   "            buf0 = torch.ops.aten.avg_pool3d.default(buf7,",
                   "dtype of buf7");
    vendor_refused("\nempty_strided_cuda = ", "\nempty_strided_gpu = ", "defines no empty_strided_cuda");
    vendor_refused("buf0 = torch.ops.aten.avg_pool3d.default(arg0_1,", "buf0 = torch.ops.aten.avg_pool3d.default(arg0_1.t(),",
                   "on a line of its own");
    vendor_refused("assert_size_stride(buf1, (16, 32, 32, 64, 64)", "assert_size_stride(buf7, (16, 32, 32, 64, 64)",
                   "no assert_size_stride states the shape");
    vendor_refused("dtype=torch.float32)\n    return [arg0_1]", "dtype=torch.int64)\n    return [arg0_1]", "not float32/16/bfloat16");
}

/* What names a region: "K1+K2..." or one allowlisted ATen call, and a candidate may bind to it. */
Test(region, bindings) {
    cr_assert(region_is_binding("a+b"));
    cr_assert(region_is_binding("torch.ops.aten.avg_pool2d.default"));
    cr_assert(region_is_binding("torch.ops.aten.avg_pool3d.default"));
    cr_assert_not(region_is_binding("triton_poi_fused_0"));
    cr_assert_not(region_is_binding("torch.ops.aten.cumsum.default"));
    cr_assert_not(region_is_binding(NULL));
    cr_assert_eq(region_vendor_op("torch.ops.aten.avg_pool2d.default"), 0);
    cr_assert_eq(region_vendor_op("torch.ops.aten.avg_pool3d.default"), 1);
    cr_assert_eq(region_vendor_op("aten.avg_pool3d.default"), -1);
    static const char *const ok[] = {"torch.ops.aten.avg_pool2d.default", "torch.ops.aten.avg_pool3d.default"};
    for (size_t i = 0; i < 2; i++) {
        char *t = kasprintf("# kopt-candidate: replaces=%s\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                            "def k(in_ptr0, out_ptr0):\n    pass\n\n\ndef launch(in_ptr0, out_ptr0, stream=None):\n"
                            "    k[(1,)](in_ptr0, out_ptr0)\n",
                            ok[i]);
        candidate *c = NULL;
        kerr e = {0};
        cr_assert_eq(candidate_parse(t, strlen(t), &c, &e), 0, "%s: %s", ok[i], e.msg);
        cr_assert_str_eq(candidate_replaces(c), ok[i]);
        candidate_free(c);
        free(t);
    }
}

/* A second call of the op on the first one's result (through `buf1 = buf0`): its input's dtype
 * follows the alias to the first call's input; each call is a region of its own. */
Test(region, second_call_through_an_alias) {
    char *text = NULL;
    artifact *a = parse_fixture("tests/fixtures/inductor/handmade_two_avg_pool3d.py", &text);
    cr_assert_eq(a->nlaunches, 2);
    kbuf out = KBUF_INIT;
    kerr e = {0};
    cr_assert_eq(region_build(a, 1, 1, "_kopt_region_0", &out, &e), 0, "%s", e.msg);
    artifact *r = NULL;
    cr_assert_eq(artifact_parse(kbuf_str(&out), out.len, &r, &e), 0, "%s", e.msg);
    const art_kernel *k = region_kernel(r);
    cr_assert_str_eq(k->params[0].type, "*fp32");
    cr_assert_str_eq(k->vendor_call, "torch.ops.aten.avg_pool3d.default(in_ptr0, [3, 3, 3], [2, 2, 2], [1, 1, 1], False, True, None)");
    cr_assert(strstr(kbuf_str(&out), "buf2 = empty_strided_cuda((16, 32, 16, 32, 32), (524288, 16384, 1024, 32, 1), "
                                     "torch.float32)\n            _kopt_region_0.run(buf1, buf2)\n") != NULL);
    /* the first call is still a library call */
    cr_assert(strstr(kbuf_str(&out), "buf0 = torch.ops.aten.avg_pool3d.default(arg0_1,") != NULL);
    artifact_free(r);
    artifact_free(a);
    kbuf_free(&out);
    free(text);
}

/* The fixture (FX_POOL3D, or `fx`) with `from` replaced by `to` everywhere, parsed. */
static artifact *edited(const char *fx, const char *from, const char *to, kbuf *t) {
    size_t n = 0;
    char *text = tu_read_fixture(fx ? fx : FX_POOL3D, &n);
    kbuf src = KBUF_INIT;
    kbuf_append(&src, text, n);
    free(text);
    const char *s = kbuf_str(&src), *p;
    int hits = 0;
    while ((p = strstr(s, from)) != NULL) {
        kbuf_append(t, s, (size_t)(p - s));
        kbuf_puts(t, to);
        s = p + strlen(from);
        hits++;
    }
    kbuf_puts(t, s);
    kbuf_free(&src);
    cr_assert_gt(hits, 0, "fixture changed: %s", from);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(kbuf_str(t), t->len, &a, &e), 0, "%s", e.msg);
    return a;
}

/* The fixture with `from` replaced by `to` builds a vendor region (launch 0) whose text holds `want`. */
static void vendor_built(const char *from, const char *to, const char *want) {
    kbuf t = KBUF_INIT, out = KBUF_INIT;
    kerr e = {0};
    artifact *a = edited(NULL, from, to, &t);
    cr_assert_eq(region_build_vendor(a, 0, "_kopt_region_0", &out, &e), 0, "%s", e.msg);
    cr_assert(strstr(kbuf_str(&out), want) != NULL, "no <<%s>> in\n%s", want, kbuf_str(&out));
    artifact_free(a);
    kbuf_free(&out);
    kbuf_free(&t);
}

Test(region, vendor_edges) {
    /* launch indices out of range, a name that is not one */
    char *text = NULL;
    artifact *a = parse_fixture(FX_POOL3D, &text);
    kbuf out = KBUF_INIT;
    kerr e = {0};
    cr_assert_eq(region_build_vendor(a, 0, "not a name", &out, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "not a Python identifier") != NULL, "%s", e.msg);
    cr_assert_eq(region_build_vendor(a, -1, "_kopt_region_0", &out, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(region_build_vendor(a, 1, "_kopt_region_0", &out, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "no launch 1") != NULL, "%s", e.msg);
    cr_assert_eq(out.len, 0);
    /* where the launcher goes in a module without Triton kernels: right before `class Runner:`,
     * after everything above it */
    cr_assert_eq(region_build_vendor(a, 0, "_kopt_region_0", &out, &e), 0, "%s", e.msg);
    const char *t = kbuf_str(&out);
    cr_assert(strstr(t, "del async_compile\n\n\n\nif '_KoptLaunch' not in globals():\n") != NULL, "%s", t);
    cr_assert(strstr(t, "_kopt_region_0 = _KoptLaunch(_kopt_region_0__launch)\n\nclass Runner:\n") != NULL, "%s", t);
    artifact_free(a);
    kbuf_free(&out);
    free(text);

    /* the shape stated on the call's result itself (no alias in between); the tensor alone
     * (ATen's defaults for the rest); a 1-D result: built as stated */
    vendor_built("assert_size_stride(buf1, (16, 32, 32, 64, 64)", "assert_size_stride(buf0, (16, 32, 32, 64, 63)",
                 "buf0 = empty_strided_cuda((16, 32, 32, 64, 63),");
    vendor_built("torch.ops.aten.avg_pool3d.default(arg0_1, [3, 3, 3], [2, 2, 2], [1, 1, 1], False, False, None)",
                 "torch.ops.aten.avg_pool3d.default(arg0_1)", "torch.ops.aten.avg_pool3d.out(in_ptr0, out=out_ptr0)");
    vendor_built("assert_size_stride(buf1, (16, 32, 32, 64, 64), (4194304, 131072, 4096, 64, 1)",
                 "assert_size_stride(buf1, (67108864, ), (1, )", "buf0 = empty_strided_cuda((67108864, ), (1, ), torch.float32)");

    /* an alias cycle before the call: its input's dtype is not stated (and reading it ends) */
    kbuf t3 = KBUF_INIT;
    a = edited(NULL, "            buf0 = torch.ops.aten.avg_pool3d.default(arg0_1,",
               "            buf8 = buf9\n            buf9 = buf8\n            buf0 = torch.ops.aten.avg_pool3d.default(buf9,", &t3);
    int li = -1;
    for (size_t i = 0; i < a->nlaunches; i++)
        if (a->launches[i].kind == ART_L_VENDOR) li = (int)i;
    cr_assert_eq(region_build_vendor(a, li, "_kopt_region_0", &out, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "dtype of buf9") != NULL, "%s", e.msg);
    artifact_free(a);
    kbuf_free(&out);
    kbuf_free(&t3);

    /* 2-D pooling twice: the second call's input dtype comes through the first call (the
     * allowlist's first op) */
    kbuf t4 = KBUF_INIT;
    a = edited("tests/fixtures/inductor/handmade_two_avg_pool3d.py", "avg_pool3d.default", "avg_pool2d.default", &t4);
    cr_assert_eq(region_build(a, 1, 1, "_kopt_region_0", &out, &e), 0, "%s", e.msg);
    cr_assert(strstr(kbuf_str(&out), "# kopt-region-signature: in_ptr0:*fp32 out_ptr0:*fp32\n") != NULL);
    cr_assert(strstr(kbuf_str(&out), "torch.ops.aten.avg_pool2d.out(in_ptr0,") != NULL);
    artifact_free(a);
    kbuf_free(&out);
    kbuf_free(&t4);
}

/* A def-form module without Triton kernels (call() at top level, column 0): the launcher goes
 * right before the `def call` line, after everything above it, and nothing else moves. */
Test(region, vendor_launcher_before_a_top_level_call) {
    char *text = NULL;
    artifact *a = parse_fixture("tests/fixtures/inductor/handmade_vendor_def.py", &text);
    cr_assert_eq(a->entry.form, ART_ENTRY_DEF);
    cr_assert_eq(a->nkernels, 0);
    kbuf out = KBUF_INIT;
    kerr e = {0};
    cr_assert_eq(region_build_vendor(a, 0, "_kopt_region_0", &out, &e), 0, "%s", e.msg);
    const char *o = kbuf_str(&out), *def = strstr(text, "\ndef call(args):\n");
    cr_assert(def != NULL);
    size_t head = (size_t)(def - text) + 1;
    cr_assert_eq(strncmp(o, text, head), 0, "the text above call() changed:\n%s", o);
    cr_assert_eq(strncmp(o + head, "\n\nif '_KoptLaunch' not in globals():\n", 35), 0, "%s", o + head);
    cr_assert(strstr(o, "_kopt_region_0 = _KoptLaunch(_kopt_region_0__launch)\n\ndef call(args):\n    arg0_1, = args\n") !=
                  NULL,
              "%s", o);
    cr_assert(strstr(o, "        buf0 = empty_strided_cuda((16, 32, 32, 64, 64), (4194304, 131072, 4096, 64, 1), "
                        "torch.float32)\n        _kopt_region_0.run(arg0_1, buf0)\n        del arg0_1\n") != NULL,
              "%s", o);
    artifact_free(a);
    kbuf_free(&out);
    free(text);
}

/* The result's layout is read through at most 15 plain aliases (16 names): an assert_size_stride
 * on the 15th alias is found, one on the 16th is not (the search stops; nothing overflows). */
static void vendor_alias_chain(int aliases, int found) {
    kbuf chain = KBUF_INIT, t = KBUF_INIT, out = KBUF_INIT;
    kbuf_puts(&chain, "buf1 = buf0\n");
    for (int i = 0; i < aliases - 1; i++) kbuf_printf(&chain, "            buf%d = buf%d\n", 100 + i, i ? 99 + i : 1);
    kbuf_printf(&chain, "            assert_size_stride(buf%d, (16, 32, 32, 64, 64)", aliases > 1 ? 98 + aliases : 1);
    artifact *a = edited(NULL, "buf1 = buf0\n            assert_size_stride(buf1, (16, 32, 32, 64, 64)", kbuf_str(&chain), &t);
    kerr e = {0};
    int rc = region_build_vendor(a, 0, "_kopt_region_0", &out, &e);
    if (found) cr_assert_eq(rc, 0, "%d aliases: %s", aliases, e.msg);
    else {
        cr_assert_eq(rc, KOPT_E_CANDIDATE, "%d aliases", aliases);
        cr_assert(strstr(e.msg, "no assert_size_stride states the shape") != NULL, "%s", e.msg);
    }
    artifact_free(a);
    kbuf_free(&out);
    kbuf_free(&t);
    kbuf_free(&chain);
}

Test(region, vendor_alias_chain_is_bounded) {
    vendor_alias_chain(1, 1);
    vendor_alias_chain(15, 1);
    vendor_alias_chain(16, 0);
    vendor_alias_chain(24, 0);
}

/* A def-form module with Triton kernels (the hand-made edge fixture, its cumsum call made an
 * allowlisted pooling call): the launcher goes right after the last kernel definition. */
Test(region, vendor_launcher_after_the_kernels) {
    kbuf t = KBUF_INIT;
    artifact *a = edited("tests/fixtures/inductor/handmade_edge_def.py", "buf2 = torch.ops.aten.cumsum.default(buf1, 1)\n",
                         "buf2 = torch.ops.aten.avg_pool2d.default(buf1, [3, 3], [1, 1], [1, 1])\n"
                         "        assert_size_stride(buf2, (64, 256), (256, 1))\n",
                         &t);
    cr_assert_eq(a->entry.form, ART_ENTRY_DEF);
    /* a Triton launch is not a library call */
    for (size_t i = 0; i < a->nlaunches; i++)
        if (a->launches[i].kind == ART_L_TRITON) {
            kbuf o2 = KBUF_INIT;
            kerr e2 = {0};
            cr_assert_eq(region_build_vendor(a, (int)i, "_kopt_region_0", &o2, &e2), KOPT_E_CANDIDATE);
            cr_assert(strstr(e2.msg, "not an ATen call kopt can take the place of") != NULL, "%s", e2.msg);
            kbuf_free(&o2);
        }
    int li = -1;
    for (size_t i = 0; i < a->nlaunches; i++)
        if (a->launches[i].kind == ART_L_VENDOR && !strcmp(a->launches[i].callee, "torch.ops.aten.avg_pool2d.default")) li = (int)i;
    cr_assert_geq(li, 0);
    kbuf out = KBUF_INIT;
    kerr e = {0};
    cr_assert_eq(region_build(a, li, li, "_kopt_region_0", &out, &e), 0, "%s", e.msg);
    const char *o = kbuf_str(&out);
    cr_assert(strstr(o, "    tl.store(out_ptr0 + (x2), tmp4, xmask)\n''', device_str='cuda')\n\n\nif '_KoptLaunch' not in globals():\n") !=
                  NULL,
              "%s", o);
    cr_assert(strstr(o, "_kopt_region_0 = _KoptLaunch(_kopt_region_0__launch)\n\n\n\ncpp_fused_sum_2 = ") != NULL, "%s", o);
    cr_assert(strstr(o, "        buf2 = empty_strided_cuda((64, 256), (256, 1), torch.float32)\n"
                        "        _kopt_region_0.run(buf1, buf2)\n") != NULL);
    artifact *r = NULL;
    cr_assert_eq(artifact_parse(o, out.len, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r->nkernels, a->nkernels + 1);
    artifact_free(r);
    artifact_free(a);
    kbuf_free(&out);
    kbuf_free(&t);
}
