/* Regions (region.h, art_region.c): consecutive launches moved into one launcher that parses
 * back as a kernel, call() launching it in their place. */
#include <criterion/criterion.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/region.h"
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
