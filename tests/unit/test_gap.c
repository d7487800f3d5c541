/* model.floor_gap (src/optimize/gap.c): why a model stays above 1.3x its memory floor, named
 * from the kernel table's rows and library calls (optimize/krow.h). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "optimize/optimize_int.h"
#include "util/buf.h"

static json_t *model(double kopt_ms, double floor_ms) {
    return json_pack("{s:f, s:f}", "optimized_ms", kopt_ms, "floor_ms", floor_ms);
}

static const char *reason(const json_t *g) { return json_string_value(json_object_get(g, "reason")); }

/* A kernel row: its profiled time, fraction of the ceiling (< 0: none) and status. */
static krow *row(krows *t, const char *name, double time_ms, double frac, krow_status status) {
    krow *k = krows_add(t, name);
    k->time_ms = time_ms;
    k->has_frac = frac >= 0;
    k->frac_of_ceiling = frac >= 0 ? frac : 0;
    k->status = status;
    return k;
}

Test(gap, only_above_the_threshold) {
    krows t = {0};
    row(&t, "k0", 1.0, 0.5, KROW_KEPT);
    json_t *m = model(1.3, 1.0);
    cr_expect_null(opt_floor_gap(m, &t), "exactly 1.3x the floor is within it");
    json_decref(m);
    m = model(1.31, 1.0);
    json_t *g = opt_floor_gap(m, &t);
    cr_assert_not_null(g);
    cr_expect_float_eq(json_real_value(json_object_get(g, "ratio")), 1.31, 1e-9);
    json_decref(g);
    json_decref(m);
    m = json_pack("{s:f}", "optimized_ms", 2.0); /* no floor: nothing to say */
    cr_expect_null(opt_floor_gap(m, &t));
    json_decref(m);
    krows_free(&t);
}

Test(gap, library_calls) {
    krows t = {0};
    krows_add_vendor(&t, "aten.avg_pool3d", 2.1, 0);
    json_t *m = model(2.1, 0.5);
    json_t *g = opt_floor_gap(m, &t);
    cr_expect(g && strstr(reason(g), "no Triton kernel") && strstr(reason(g), "aten.avg_pool3d"), "%s",
              g ? reason(g) : "-");
    json_decref(g);
    krows_free(&t);
    /* a GEMM taking 3/4 of the time */
    row(&t, "k0", 1.0, 0.9, KROW_KEPT);
    krows_add_vendor(&t, "extern_kernels.mm", 3.0, 0);
    g = opt_floor_gap(m, &t);
    cr_expect(g && strstr(reason(g), "library calls (extern_kernels.mm) take 75% of the profiled time"), "%s",
              g ? reason(g) : "-");
    json_decref(g);
    krows_free(&t);
    json_decref(m);
}

Test(gap, the_largest_kernel_after_the_search) {
    /* k1 was the largest before the search; after kopt's kernel k0 is (1.2 ms of k0 against 1.0) */
    krows t = {0};
    krow *k0 = row(&t, "k0", 1.6, 0.5, KROW_OPTIMIZED);
    k0->after_ms = 1.2;
    krow_set(&k0->change, "col_split_softmax: ...");
    k0->has_aten_ops = 1;
    art_strlist_push(&k0->aten_ops, kstrdup("aten._softmax"));
    art_strlist_push(&k0->aten_ops, kstrdup("aten.exp"));
    krow *k1 = row(&t, "k1", 1.0, 0.95, KROW_KEPT);
    krow_set(&k1->why, "no candidate was faster and correct through the four gates");
    row(&t, "k2", 9.0, -1, KROW_IN_REGION);
    json_t *m = model(2.2, 1.0);
    json_t *g = opt_floor_gap(m, &t);
    cr_assert_not_null(g);
    cr_expect(strstr(reason(g),
                     "k0 (aten._softmax, aten.exp; 55% of the profiled time) runs at 1.50x its own memory floor "
                     "with kopt's kernel (col_split_softmax: ...)") != NULL,
              "%s", reason(g));
    cr_expect(!strstr(reason(g), "near its own floor"), "%s", reason(g));
    cr_expect(!strstr(reason(g), "gated there"), "not searched: no count: %s", reason(g));
    json_decref(g);
    /* searched: what was gated there and where it was refused */
    t.v[0].searched = 1; /* k0 may have moved since: the table grew */
    t.v[0].tried = 8;
    t.v[0].refused[4] = 6;
    t.v[0].refused[2] = 1;
    g = opt_floor_gap(m, &t);
    cr_expect(strstr(reason(g), "(col_split_softmax: ...); 8 candidates gated there, refused at gates 1-4: 0, 1, 0, 6"),
              "%s", reason(g));
    cr_expect(!strstr(reason(g), "as the model is called"), "none refused as called: %s", reason(g));
    json_decref(g);
    /* gate 4's refusals of candidates faster on the GPU, slower as the model is called */
    t.v[0].host_slower = 4;
    g = opt_floor_gap(m, &t);
    cr_expect(strstr(reason(g), "refused at gates 1-4: 0, 1, 0, 6 (4 of gate 4's faster on the GPU but slower as the "
                                "model is called)"),
              "%s", reason(g));
    json_decref(g);
    t.v[0].host_slower = 0;
    /* k1 alone: near its own floor (1.05x), kept */
    t.v[0].status = KROW_IN_REGION;
    g = opt_floor_gap(m, &t);
    cr_assert_not_null(g);
    cr_expect(strstr(reason(g),
                     "k1 (no ATen ops recorded; 100% of the profiled time) runs at 1.05x its own memory floor, "
                     "kept: no candidate was faster") != NULL,
              "%s", reason(g));
    cr_expect(strstr(reason(g), "near its own floor, so the gap is traffic the model's floor does not count") != NULL,
              "%s", reason(g));
    json_decref(g);
    krows_free(&t);
    json_decref(m);
}

/* A library call a vendor region replaced is not "kept": the region's row (its time after the
 * search) names the gap. */
Test(gap, a_replaced_library_call_is_the_regions) {
    krows t = {0};
    krow *r = row(&t, "_kopt_region_0", 2.148, -1, KROW_OPTIMIZED);
    r->after_ms = 0.725;
    krow_set(&r->change, "region_avg_pool: 1 x 64");
    art_strlist_push(&r->members, kstrdup("torch.ops.aten.avg_pool3d.default"));
    r->has_aten_ops = 1;
    art_strlist_push(&r->aten_ops, kstrdup("aten.avg_pool3d"));
    vrow *v = krows_add_vendor(&t, "torch.ops.aten.avg_pool3d.default", 2.148, 1);
    art_strlist_push(&v->replaced_by, kstrdup("_kopt_region_0"));
    json_t *m = model(0.717, 0.515);
    json_t *g = opt_floor_gap(m, &t);
    cr_assert_not_null(g);
    cr_expect(strstr(reason(g), "library calls") == NULL, "%s", reason(g));
    cr_expect(strstr(reason(g), "_kopt_region_0 (aten.avg_pool3d; 100% of the profiled time)") &&
                  strstr(reason(g), "with kopt's kernel (region_avg_pool: 1 x 64)"),
              "%s", reason(g));
    json_decref(g);
    /* the same call kept (no region row): the library-call reason */
    krows t2 = {0};
    krows_add_vendor(&t2, "torch.ops.aten.avg_pool3d.default", 2.148, 1);
    g = opt_floor_gap(m, &t2);
    cr_expect(g && strstr(reason(g), "no Triton kernel"), "%s", g ? reason(g) : "-");
    json_decref(g);
    krows_free(&t2);
    krows_free(&t);
    json_decref(m);
}

/* A region searched without a winner is not counted next to its members. */
Test(gap, a_region_that_did_not_win_is_its_members) {
    krows t = {0};
    krow *r = row(&t, "_kopt_region_0", 2.148, -1, KROW_KEPT);
    krow_set(&r->kernel_kind, "region");
    art_strlist_push(&r->members, kstrdup("torch.ops.aten.avg_pool3d.default"));
    krows_add_vendor(&t, "torch.ops.aten.avg_pool3d.default", 2.148, 1);
    json_t *m = model(2.148, 0.515);
    json_t *g = opt_floor_gap(m, &t);
    cr_assert_not_null(g);
    cr_expect(strstr(reason(g), "no Triton kernel: the time is in library calls (torch.ops.aten.avg_pool3d.default)") != NULL,
              "%s", reason(g));
    json_decref(g);
    json_decref(m);
    krows_free(&t);
}
