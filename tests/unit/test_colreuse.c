/* column_reuse (src/agents/builtin_colreuse.c) on recorded Inductor modules: held-out h03's layer
 * norm over (128, 64, 256), whose normalisation re-reads 16 MB of weight and bias for each of its
 * 64 rows, and the kernels it must leave alone. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "gates/candidate.h"
#include "gates/gate1.h"
#include "optimize/optimize_int.h"
#include "testutil.h"
#include "util/buf.h"
#include "util/fs.h"

#define H03 "tests/fixtures/inductor/heldout_h03_layer_norm_3dims__max_autotune_no_cudagraphs_g0.py"

/* The artifact of fixture `rel` with its first `from` replaced by `to` (none when from is NULL). */
static artifact *parsed(const char *rel, const char *from, const char *to) {
    size_t len = 0;
    char *text = tu_read_fixture(rel, &len);
    kbuf b = KBUF_INIT;
    const char *at = from ? strstr(text, from) : NULL;
    cr_assert(!from || at, "%s not in %s", from, rel);
    if (at) {
        kbuf_append(&b, text, (size_t)(at - text));
        kbuf_puts(&b, to);
        kbuf_puts(&b, at + strlen(from));
    } else kbuf_append(&b, text, len);
    free(text);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(kbuf_str(&b), b.len, &a, &e), 0, "%s", e.msg);
    kbuf_free(&b);
    return a;
}

/* The index of the kernel named `name` in a (asserts it is there). */
static int kernel_index(const artifact *a, const char *name) {
    for (size_t i = 0; i < a->nkernels; i++)
        if (!strcmp(a->kernels[i].name, name)) return (int)i;
    cr_assert_fail("no kernel %s", name);
    return -1;
}

/* The family builtin_rewrite_match gives kernel `name` of a. */
static kfamily family_of(const artifact *a, const char *name) {
    json_t *kc = opt_kernel_ctx(a, kernel_index(a, name), NULL);
    double eps = 0;
    kfamily f = builtin_rewrite_match(tu_kf(kc), &eps);
    json_decref(kc);
    return f;
}

static const char POI[] = "triton_poi_fused_native_layer_norm_2";

/* The source of the one candidate a column_reuse plan of one variant (bi columns, nw warps) gives
 * for kernel context kc; *out holds it (the caller frees *out). */
static const char *one_candidate(const json_t *kc, int bi, int nw, json_t **out) {
    json_t *plan = json_pack("{s:s, s:{s:s, s:[{s:i, s:i}]}}", "direction", "rewrite", "params", "template", "column_reuse",
                             "variants", "block_i", bi, "num_warps", nw);
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(kc), tu_kp(plan), out, &e), 0, "%s", e.msg);
    json_decref(plan);
    const char *src = json_string_value(json_object_get(json_array_get(json_object_get(*out, "candidates"), 0), "source"));
    cr_assert(src);
    return src;
}

/* h03's normalisation: matched, four variants, each a plan-form candidate that passes gate 1's
 * C checks against the kernel it replaces; the column loads before the row loop, Inductor's
 * arithmetic and store inside it, at the same indices. */
Test(colreuse, h03_normalisation_walks_rows_by_column_blocks) {
    artifact *a = parsed(H03, NULL, NULL);
    int ki = kernel_index(a, POI);
    json_t *kc = opt_kernel_ctx(a, ki, NULL);
    cr_assert_eq(family_of(a, POI), KF_COLUMN_REUSE);
    cr_expect_eq(family_of(a, "triton_red_fused_native_layer_norm_0"), KF_ALIGNED_CHUNKS, "the statistics: another family");
    json_t *vars = builtin_rewrite_variants(KF_COLUMN_REUSE, tu_kf(kc));
    cr_assert_eq(json_array_size(vars), 4, "%s", json_dumps(vars, 0));
    json_t *plan = json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "column_reuse", "variants", vars);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(builtin_rewrite_act(tu_kf(kc), tu_kp(plan), &out, &e), 0, "%s", e.msg);
    const json_t *cands = json_object_get(out, "candidates");
    cr_assert_eq(json_array_size(cands), 4);
    tu_expect_gate1(out, &a->kernels[ki]);   /* every candidate */
    const char *src = json_string_value(json_object_get(json_array_get(cands, 0), "source"));
    static const char *const want[] = {
        "    xnumel = 134217728\n"
        "    kopt_col = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]\n"
        "    xmask = tl.full([XBLOCK], True, tl.int1)[:]\n"
        "    x0 = kopt_col\n"
        "    tmp10 = tl.load(in_ptr3 + (x0), None, eviction_policy='evict_last')\n"
        "    tmp12 = tl.load(in_ptr4 + (x0), None, eviction_policy='evict_last')\n"
        "    for kopt_row in tl.range(0, 64):\n"
        "        xindex = kopt_row * 2097152 + kopt_col\n"
        "        x2 = xindex\n"
        "        x1 = kopt_row + tl.zeros([XBLOCK], tl.int32)\n"
        "        tmp0 = tl.load(in_ptr0 + (x2), None)\n"
        "        tmp1 = tl.load(in_ptr1 + (x1), None, eviction_policy='evict_last')\n",
        "        tmp13 = tmp11 + tmp12\n        tl.store(out_ptr0 + (x2), tmp13, None)\n",
        "\"grid\": [\"xnumel // 65536\"]",   /* 64 rows x 1024 columns a program */
        "\"constexprs\": {\"XBLOCK\": 1024}, \"num_warps\": 4",
    };
    for (size_t w = 0; w < sizeof want / sizeof *want; w++) cr_expect(strstr(src, want[w]) != NULL, "missing %s in\n%s", want[w], src);
    cr_expect(strstr(src, "xoffset") == NULL, "Inductor's flat block is gone");
    json_decref(out);
    /* a block that does not divide the columns gives no candidate */
    json_t *bad = json_pack("{s:s, s:{s:s, s:[{s:i, s:i}]}}", "direction", "rewrite", "params", "template", "column_reuse",
                            "variants", "block_i", 3000, "num_warps", 4);
    cr_expect_eq(builtin_rewrite_act(tu_kf(kc), tu_kp(bad), &out, &e), KOPT_E_CANDIDATE);
    json_decref(bad);
    json_decref(plan);
    json_decref(kc);
    artifact_free(a);
}

/* A bf16 layer norm over 128 rows of 524,288 (the second recorded module it matches): the column
 * loads, converted to fp32 as Inductor loads them, move before the loop; through gate 1. */
Test(colreuse, bf16_column_loads_keep_their_conversion) {
    artifact *a = parsed("tests/fixtures/inductor/scratch_ln_512k_rows_bf16_g0.py", NULL, NULL);
    int ki = kernel_index(a, POI);
    json_t *kc = opt_kernel_ctx(a, ki, NULL);
    json_t *out = NULL;
    const char *src = one_candidate(kc, 2048, 8, &out);
    cr_expect(strstr(src, "    x0 = kopt_col\n"
                          "    tmp11 = tl.load(in_ptr3 + (x0), None, eviction_policy='evict_last').to(tl.float32)\n"
                          "    tmp14 = tl.load(in_ptr4 + (x0), None, eviction_policy='evict_last').to(tl.float32)\n"
                          "    for kopt_row in tl.range(0, 128):\n") != NULL,
              "%s", src);
    cr_expect(strstr(src, "        tmp12 = tmp11.to(tl.float32)\n") != NULL, "the conversions of the loaded values stay in the loop");
    cr_expect(strstr(src, "\"grid\": [\"xnumel // 262144\"]") != NULL, "%s", src);   /* 128 rows x 2048 columns */
    tu_expect_gate1(out, &a->kernels[ki]);
    json_decref(out);
    json_decref(kc);
    artifact_free(a);
}

/* One-place edits of h03's normalisation, each refused: two periods, an index line of another
 * form, xindex used in the body, a reduction, another grid axis, a name of kopt's own; no column
 * operand left; a recorded kernel of another shape. */
Test(colreuse, what_it_leaves_alone) {
    static const struct {
        const char *from, *to, *why;
    } edits[] = {
        {"    x1 = xindex // 2097152\n    x0 = (xindex % 2097152)\n", "    x1 = xindex // 2097152\n    x0 = (xindex % 1048576)\n",
         "two periods"},
        {"    x0 = (xindex % 2097152)\n", "    x0 = (xindex // 64) % 2097152\n", "an index line of another form"},
        {"    tmp2 = tmp0 - tmp1\n", "    tmp2 = tmp0 - tmp1 + xindex\n", "xindex in the body"},
        {"    tmp2 = tmp0 - tmp1\n", "    tmp2 = tmp0 - tl.sum(tmp1, 0)\n", "a reduction"},
        {"    xoffset = tl.program_id(0) * XBLOCK\n    xindex = xoffset + tl.arange(0, XBLOCK)[:]\n",
         "    xoffset = tl.program_id(1) * XBLOCK\n    xindex = xoffset + tl.arange(0, XBLOCK)[:]\n", "another grid axis"},
        {"    xnumel = 134217728\n    xoffset", "    xnumel = 134217728\n    kopt_x = 0\n    xoffset", "a name of kopt's own"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        artifact *a = parsed(H03, edits[i].from, edits[i].to);
        cr_expect_neq(family_of(a, POI), KF_COLUMN_REUSE, "%s", edits[i].why);
        artifact_free(a);
    }
    /* one of the two column loads moved to the row: 8 MB re-read still, matched */
    artifact *a = parsed(H03, "    tmp12 = tl.load(in_ptr4 + (x0), None, eviction_policy='evict_last')\n",
                         "    tmp12 = tl.load(in_ptr4 + (x1), None, eviction_policy='evict_last')\n");
    cr_expect_eq(family_of(a, POI), KF_COLUMN_REUSE, "one 8 MB column operand is still worth it");
    artifact_free(a);
    /* both: no column operand, nothing re-read */
    kbuf b = KBUF_INIT;
    size_t len = 0;
    char *text = tu_read_fixture(H03, &len);
    kbuf_append(&b, text, len);
    free(text);
    cr_assert_eq(kbuf_replace_first(&b, "tl.load(in_ptr3 + (x0)", "tl.load(in_ptr3 + (x1)"), 0);
    cr_assert_eq(kbuf_replace_first(&b, "tl.load(in_ptr4 + (x0)", "tl.load(in_ptr4 + (x1)"), 0);
    kerr e = {0};
    cr_assert_eq(artifact_parse(kbuf_str(&b), b.len, &a, &e), 0, "%s", e.msg);
    cr_expect_neq(family_of(a, POI), KF_COLUMN_REUSE, "no column operand");
    artifact_free(a);
    kbuf_free(&b);
    /* another recorded pointwise kernel: a residual GELU (flat, no column operand) */
    a = parsed("tests/fixtures/inductor/01_gelu_residual_g0.py", NULL, NULL);
    for (size_t i = 0; i < a->nkernels; i++) {
        json_t *kc = opt_kernel_ctx(a, (int)i, NULL);
        cr_expect_eq(builtin_colreuse_match(tu_kf(kc)), 0, "%s", a->kernels[i].name);
        json_decref(kc);
    }
    artifact_free(a);
}

/* The reduced fixture (4 rows of 262,144: 2 MiB of weight and bias): one candidate, a golden file
 * tests/interp/test_colreuse_interp.py runs in Triton's interpreter against float64
 * (KOPT_WRITE_GOLDEN=1 rewrites it). */
Test(colreuse, small_golden) {
    artifact *a = parsed("tests/fixtures/inductor/handmade_layer_norm_rows_small.py", NULL, NULL);
    json_t *kc = opt_kernel_ctx(a, kernel_index(a, POI), NULL);
    json_t *out = NULL;
    const char *src = one_candidate(kc, 1024, 4, &out);
    cr_expect(strstr(src, "    for kopt_row in tl.range(0, 4):\n        xindex = kopt_row * 262144 + kopt_col\n") != NULL, "%s", src);
    tu_golden("tests/fixtures/colreuse/candidate_small.py", src);
    json_decref(out);
    json_decref(kc);
    artifact_free(a);
}
