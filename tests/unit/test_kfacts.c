/* Kernel facts (src/agents/kfacts.c): the planner context's "kernel" object, as opt_kernel_ctx
 * writes it from recorded Inductor modules (a reduction, a pointwise kernel, a region of
 * several kernels), read into the typed struct the built-in agents use; and what a malformed
 * or partial object leaves (an LLM's or a test's context). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "agents/kfacts.h"
#include "artifact/artifact.h"
#include "artifact/region.h"
#include "optimize/optimize_int.h"
#include "optimize/tuned.h"
#include "testutil.h"
#include "util/buf.h"

/* Every field of kf agrees with the artifact's kernel K and the context it came from. */
static void expect_kernel(const kfacts *kf, const art_kernel *K) {
    cr_assert_str_eq(kf->name, K->name);
    cr_expect_eq(kf->kind, K->kind, "kind %d, want %d", kf->kind, K->kind);
    cr_expect_eq(kf->persistent, K->kind == ART_K_PERSISTENT);
    cr_assert_eq(kf->nparams, K->nparams);
    size_t nconst = 0;
    for (size_t i = 0; i < K->nparams; i++) {
        cr_expect_str_eq(kf->params[i].name, K->params[i].name);
        cr_expect_str_eq(kf->params[i].type, K->params[i].type);
        cr_expect_eq(kf->params[i].role, K->params[i].role, "%s", K->params[i].name);
        nconst += K->params[i].role == ART_ROLE_CONSTEXPR;
    }
    cr_expect_eq(kf->constexprs.n, nconst);
    cr_expect_eq(kf->runtime.n, K->nparams - nconst);
    cr_assert_eq(kf->aten_ops.n, K->aten_ops.n);
    for (size_t i = 0; i < K->aten_ops.n; i++) cr_expect_str_eq(kf->aten_ops.v[i], K->aten_ops.v[i]);
    cr_assert_eq(kf->fragment.n, K->graph_fragment.n);
    for (size_t i = 0; i < K->graph_fragment.n; i++) cr_expect_str_eq(kf->fragment.v[i], K->graph_fragment.v[i]);
    cr_assert_str_eq(kf->source, K->source);
}

Test(kfacts, reduction_from_a_recorded_module) {
    artifact *a = tu_load_inductor("03_log_softmax_g0.py");
    int k = 0;
    cr_assert_eq(a->kernels[k].kind, ART_K_REDUCTION, "the fixture's first kernel is a looped reduction");
    tuned_config t = {.xblock = 1, .r0_block = 2048, .num_warps = 8, .num_stages = 1, .found_by_coordesc = 1};
    json_t *ctx = opt_kernel_ctx(a, k, &t);
    kfacts kf;
    cr_assert_eq(kfacts_read(ctx, &kf), 0);
    expect_kernel(&kf, &a->kernels[k]);
    /* the numels are the first launch's integer scalars; the shapes, call()'s buffers */
    cr_expect_gt(kfacts_numel(&kf, "xnumel"), 0);
    cr_expect_eq(kfacts_numel(&kf, "xnumel"),
                 json_integer_value(json_object_get(json_object_get(ctx, "numels"), "xnumel")));
    cr_expect_gt(kfacts_numel(&kf, "r0_numel"), 1);
    cr_expect_eq(kfacts_numel(&kf, "no_such_numel"), 0);
    const kf_shape *sh = kfacts_shape(&kf, "in_ptr0");
    cr_assert_not_null(sh, "call() states the input's shape");
    long long total = 1;
    for (int d = 0; d < sh->ndims; d++) total *= sh->d[d];
    cr_expect_eq(total, kfacts_numel(&kf, "xnumel") * kfacts_numel(&kf, "r0_numel"),
                 "the shape holds xnumel rows of r0_numel");
    cr_expect_null(kfacts_shape(&kf, "xnumel"), "a scalar has no shape");
    cr_expect_str_eq(kfacts_param_type(&kf, "in_ptr0"), "*fp32");
    cr_expect_str_eq(kfacts_param_type(&kf, "nonexistent"), "");
    cr_expect_str_eq(kfacts_runtime(&kf, 0), "in_ptr0");
    cr_expect_null(kfacts_runtime(&kf, kf.runtime.n));
    cr_expect(kf_strs_has(&kf.constexprs, "R0_BLOCK"));
    cr_expect_not(kf_strs_has(&kf.constexprs, "R0_BLOC"), "whole names only");
    cr_expect(kf.masked_x || kf.masked_r0 || !kf.masked_y, "masks read as booleans");
    cr_expect_not_null(kf.jit_source);
    cr_expect_null(strstr(kf.jit_source, "@triton_heuristics"), "jit_source is the source without its decorator");
    /* the tuned configuration, typed */
    cr_expect(kf.tuned.present);
    cr_expect_eq(kf.tuned.xblock, 1);
    cr_expect_eq(kf.tuned.r0_block, 2048);
    cr_expect_eq(kf.tuned.yblock, 0);
    cr_expect_eq(kf.tuned.num_warps, 8);
    cr_expect_eq(kf.tuned.num_stages, 1);
    cr_expect(kf.tuned.found_by_coordesc);
    cr_expect_eq(kf.nmembers, 0);
    cr_expect_null(kf.vendor_call);
    kfacts_free(&kf);
    kfacts_free(&kf); /* idempotent on the emptied struct */
    json_decref(ctx);
    artifact_free(a);
}

Test(kfacts, every_kernel_of_several_modules) {
    static const char *const mods[] = {"01_gelu_residual_g0.py", "06_groupnorm_g0.py", "11_cumsum_g0.py",
                                       "13_maxpool2d_g0.py", "17_layernorm_bf16_g0.py"};
    int kinds = 0;
    for (size_t m = 0; m < sizeof mods / sizeof *mods; m++) {
        artifact *a = tu_load_inductor(mods[m]);
        for (size_t k = 0; k < a->nkernels; k++) {
            json_t *ctx = opt_kernel_ctx(a, (int)k, NULL);
            kfacts kf;
            cr_assert_eq(kfacts_read(ctx, &kf), 0);
            expect_kernel(&kf, &a->kernels[k]);
            cr_expect_not(kf.tuned.present, "%s: no tuned configuration given", mods[m]);
            kinds |= 1 << kf.kind;
            kfacts_free(&kf);
            json_decref(ctx);
        }
        artifact_free(a);
    }
    cr_expect(kinds & (1 << ART_K_POINTWISE), "a pointwise kernel was read");
    cr_expect(kinds & ((1 << ART_K_REDUCTION) | (1 << ART_K_PERSISTENT)), "a reduction was read");
}

Test(kfacts, region_members) {
    size_t len = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/02_softmax_wide_g0.py", &len);
    artifact *a = NULL, *r = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, len, &a, &e), 0, "%s", e.msg);
    kbuf b = KBUF_INIT;
    cr_assert_eq(region_build(a, 0, 4, REGION_PREFIX "0", &b, &e), 0, "%s", e.msg);
    cr_assert_eq(artifact_parse(kbuf_str(&b), b.len, &r, &e), 0, "%s", e.msg);
    int k = artifact_find_kernel(r, REGION_PREFIX "0");
    cr_assert_geq(k, 0);
    json_t *ctx = opt_kernel_ctx(r, k, NULL);
    kfacts kf;
    cr_assert_eq(kfacts_read(ctx, &kf), 0);
    cr_expect_eq(kf.kind, ART_K_REGION);
    const art_kernel *R = &r->kernels[k];
    cr_assert_eq(kf.nmembers, R->members.n);
    cr_assert_gt(kf.nmembers, 1);
    for (size_t i = 0; i < kf.nmembers; i++) {
        int mk = artifact_find_kernel(r, R->members.v[i]);
        cr_assert_geq(mk, 0);
        cr_expect_str_eq(kf.members[i].name, R->members.v[i]);
        cr_expect_str_eq(kf.members[i].source, r->kernels[mk].source);
        cr_expect_eq(kf.members[i].aten_ops.n, r->kernels[mk].aten_ops.n);
        cr_expect_eq(kf.members[i].fragment.n, r->kernels[mk].graph_fragment.n);
    }
    cr_expect_not(kf.tuned.present, "a region has no tuned configuration");
    kfacts_free(&kf);
    json_decref(ctx);
    artifact_free(r);
    artifact_free(a);
    kbuf_free(&b);
    free(text);
}

Test(kfacts, malformed_and_partial_objects) {
    kfacts kf;
    json_t *notobj = json_pack("[s]", "kernel");
    cr_expect_eq(kfacts_read(notobj, &kf), -1);
    cr_expect_null(kf.name);
    cr_expect_eq(kf.kind, ART_K_OTHER);
    kfacts_free(&kf);
    cr_expect_eq(kfacts_read(NULL, &kf), -1);
    kfacts_free(&kf);
    json_decref(notobj);

    /* wrong types are absent; entries of the wrong type skipped */
    json_t *k = json_loads(
        "{\"name\": 7, \"kind\": \"no-such-kind\", \"persistent\": 1,"
        " \"signature\": [{\"name\": \"in_ptr0\", \"type\": \"*fp16\", \"role\": \"in\"}, {\"type\": \"i32\"},"
        "               {\"name\": \"xnumel\", \"role\": \"scalar\"}, {\"name\": \"X\", \"role\": \"bogus\"}, 3],"
        " \"runtime_params\": [\"in_ptr0\", 5, \"xnumel\"], \"constexprs\": \"XBLOCK\","
        " \"numels\": {\"xnumel\": 4096, \"r0_numel\": \"8\", \"ynumel\": 2.5},"
        " \"shapes\": {\"in_ptr0\": [2, 3], \"out_ptr0\": [2, \"s0\"], \"in_ptr1\": [],"
        "              \"in_ptr2\": [1, 1, 1, 1, 1, 1, 1, 1, 1], \"in_ptr3\": 4, \"in_ptr4\": [1, 2, 1, 2, 1, 2, 1, 2]},"
        " \"masked\": {\"x\": true, \"r0\": 1},"
        " \"members\": [{\"name\": \"k1\", \"aten_ops\": [\"aten.exp\", null]}, \"k2\"],"
        " \"tuned_config\": [1, 2], \"source\": \"src\"}",
        0, NULL);
    cr_assert_not_null(k);
    cr_assert_eq(kfacts_read(k, &kf), 0);
    cr_expect_null(kf.name, "a name that is not a string is absent");
    cr_expect_eq(kf.kind, ART_K_OTHER, "an unknown kind reads as other");
    cr_expect_not(kf.persistent, "only JSON true is true");
    cr_assert_eq(kf.nparams, 3, "the nameless and non-object entries are skipped");
    cr_expect_str_eq(kf.params[0].type, "*fp16");
    cr_expect_eq(kf.params[1].role, ART_ROLE_SCALAR);
    cr_expect_str_eq(kf.params[1].type, "", "no type given");
    cr_expect_eq(kf.params[2].role, ART_ROLE_IN, "an unknown role reads as an input");
    cr_expect_eq(kf.runtime.n, 2);
    cr_expect_str_eq(kfacts_runtime(&kf, 1), "xnumel");
    cr_expect_eq(kf.constexprs.n, 0, "not an array");
    cr_expect_eq(kfacts_numel(&kf, "xnumel"), 4096);
    cr_expect_eq(kfacts_numel(&kf, "r0_numel"), 0, "a string is not a numel");
    cr_expect_eq(kfacts_numel(&kf, "ynumel"), 0, "a real is not a numel");
    cr_assert_eq(kf.nshapes, 2, "only [2, 3] and the eight dimensions are shapes");
    cr_expect_eq(kfacts_shape(&kf, "in_ptr4")->ndims, KF_MAX_DIMS, "KF_MAX_DIMS dimensions are a shape");
    cr_expect_eq(kfacts_shape(&kf, "in_ptr4")->d[7], 2);
    cr_expect_eq(kfacts_shape(&kf, "in_ptr0")->ndims, 2);
    cr_expect_eq(kfacts_shape(&kf, "in_ptr0")->d[1], 3);
    cr_expect_null(kfacts_shape(&kf, "out_ptr0"), "a symbolic dimension leaves no shape");
    cr_expect_null(kfacts_shape(&kf, "in_ptr2"), "more than KF_MAX_DIMS dimensions");
    cr_expect(kf.masked_x);
    cr_expect_not(kf.masked_r0);
    cr_assert_eq(kf.nmembers, 1);
    cr_expect_str_eq(kf.members[0].name, "k1");
    cr_expect_eq(kf.members[0].aten_ops.n, 1);
    cr_expect_null(kf.members[0].source);
    cr_expect_not(kf.tuned.present);
    cr_expect_str_eq(kf.source, "src");
    cr_expect_null(kf.jit_source);
    cr_expect_str_eq(kf_strs_find(&kf.members[0].aten_ops, "exp"), "aten.exp");
    cr_expect_null(kf_strs_find(&kf.members[0].aten_ops, "log"));
    kfacts_free(&kf);
    kfacts_free(NULL);
    json_decref(k);
}
