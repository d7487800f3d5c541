/* model.floor_gap (src/optimize/gap.c): why a model stays above 1.3x its memory floor, named
 * from its kernel rows and library calls. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "optimize/optimize_int.h"

static json_t *model(double kopt_ms, double floor_ms) {
    return json_pack("{s:f, s:f}", "optimized_ms", kopt_ms, "floor_ms", floor_ms);
}

static const char *reason(const json_t *g) { return json_string_value(json_object_get(g, "reason")); }

Test(gap, only_above_the_threshold) {
    json_t *k =
        json_pack("[{s:s, s:f, s:f, s:s}]", "name", "k0", "time_ms", 1.0, "frac_of_ceiling", 0.5, "status", "kept");
    json_t *v = json_array(), *m = model(1.3, 1.0);
    cr_expect_null(opt_floor_gap(m, k, v), "exactly 1.3x the floor is within it");
    json_decref(m);
    m = model(1.31, 1.0);
    json_t *g = opt_floor_gap(m, k, v);
    cr_assert_not_null(g);
    cr_expect_float_eq(json_real_value(json_object_get(g, "ratio")), 1.31, 1e-9);
    json_decref(g);
    json_decref(m);
    m = json_pack("{s:f}", "optimized_ms", 2.0); /* no floor: nothing to say */
    cr_expect_null(opt_floor_gap(m, k, v));
    json_decref(m);
    json_decref(k);
    json_decref(v);
}

Test(gap, library_calls) {
    json_t *none = json_array(), *v = json_pack("[{s:s, s:f}]", "name", "aten.avg_pool3d", "time_ms", 2.1);
    json_t *m = model(2.1, 0.5);
    json_t *g = opt_floor_gap(m, none, v);
    cr_expect(g && strstr(reason(g), "no Triton kernel") && strstr(reason(g), "aten.avg_pool3d"), "%s",
              g ? reason(g) : "-");
    json_decref(g);
    /* a GEMM taking 3/4 of the time */
    json_t *k =
        json_pack("[{s:s, s:f, s:f, s:s}]", "name", "k0", "time_ms", 1.0, "frac_of_ceiling", 0.9, "status", "kept");
    json_decref(v);
    v = json_pack("[{s:s, s:f}]", "name", "extern_kernels.mm", "time_ms", 3.0);
    g = opt_floor_gap(m, k, v);
    cr_expect(g && strstr(reason(g), "library calls (extern_kernels.mm) take 75% of the profiled time"), "%s",
              g ? reason(g) : "-");
    json_decref(g);
    json_decref(k);
    json_decref(v);
    json_decref(none);
    json_decref(m);
}

Test(gap, the_largest_kernel_after_the_search) {
    /* k1 was the largest before the search; after kopt's kernel k0 is (1.2 ms of k0 against 1.0) */
    json_t *k = json_pack("[{s:s, s:f, s:f, s:s, s:f, s:s, s:[s, s]}, {s:s, s:f, s:f, s:s, s:s}, {s:s, s:f, s:s}]",
                          "name", "k0", "time_ms", 1.6, "frac_of_ceiling", 0.5, "status", "optimized", "after_ms", 1.2,
                          "change", "col_split_softmax: ...", "aten_ops", "aten._softmax", "aten.exp", "name", "k1",
                          "time_ms", 1.0, "frac_of_ceiling", 0.95, "status", "kept", "why",
                          "no candidate was faster and correct through the four gates", "name", "k2", "time_ms", 9.0,
                          "status", "in_region");
    json_t *v = json_array(), *m = model(2.2, 1.0);
    json_t *g = opt_floor_gap(m, k, v);
    cr_assert_not_null(g);
    cr_expect(strstr(reason(g),
                     "k0 (aten._softmax, aten.exp; 55% of the profiled time) runs at 1.50x its own memory floor "
                     "with kopt's kernel (col_split_softmax: ...)") != NULL,
              "%s", reason(g));
    cr_expect(!strstr(reason(g), "near its own floor"), "%s", reason(g));
    json_decref(g);
    /* k1 alone: near its own floor (1.05x), kept */
    json_array_remove(k, 0);
    g = opt_floor_gap(m, k, v);
    cr_assert_not_null(g);
    cr_expect(strstr(reason(g),
                     "k1 (no ATen ops recorded; 100% of the profiled time) runs at 1.05x its own memory floor, "
                     "kept: no candidate was faster") != NULL,
              "%s", reason(g));
    cr_expect(strstr(reason(g), "near its own floor, so the gap is traffic the model's floor does not count") != NULL,
              "%s", reason(g));
    json_decref(g);
    json_decref(k);
    json_decref(v);
    json_decref(m);
}

/* A library call a vendor region replaced is not "kept": the region's row (its time after the
 * search) names the gap. */
Test(gap, a_replaced_library_call_is_the_regions) {
    json_t *k = json_pack("[{s:s, s:f, s:f, s:s, s:s, s:[s]}]", "name", "_kopt_region_0", "time_ms", 2.148, "after_ms", 0.725,
                          "status", "optimized", "change", "region_avg_pool: 1 x 64", "aten_ops", "aten.avg_pool3d");
    json_t *v = json_pack("[{s:s, s:f, s:s}]", "name", "torch.ops.aten.avg_pool3d.default", "time_ms", 2.148, "replaced_by",
                          "_kopt_region_0");
    json_t *m = model(0.717, 0.515);
    json_t *g = opt_floor_gap(m, k, v);
    cr_assert_not_null(g);
    cr_expect(strstr(reason(g), "library calls") == NULL, "%s", reason(g));
    cr_expect(strstr(reason(g), "_kopt_region_0 (aten.avg_pool3d; 100% of the profiled time)") &&
                  strstr(reason(g), "with kopt's kernel (region_avg_pool: 1 x 64)"),
              "%s", reason(g));
    json_decref(g);
    /* the same call kept: the library-call reason */
    json_object_del(json_array_get(v, 0), "replaced_by");
    json_t *k2 = json_array();
    g = opt_floor_gap(m, k2, v);
    cr_expect(g && strstr(reason(g), "no Triton kernel"), "%s", g ? reason(g) : "-");
    json_decref(g);
    json_decref(k2);
    json_decref(m);
    json_decref(k);
    json_decref(v);
}

/* A region searched without a winner is not counted next to its members. */
Test(gap, a_region_that_did_not_win_is_its_members) {
    json_t *k = json_pack("[{s:s, s:s, s:f, s:s}]", "name", "_kopt_region_0", "kernel_kind", "region", "time_ms", 2.148, "status",
                          "kept");
    json_t *v = json_pack("[{s:s, s:f}]", "name", "torch.ops.aten.avg_pool3d.default", "time_ms", 2.148);
    json_t *m = model(2.148, 0.515);
    json_t *g = opt_floor_gap(m, k, v);
    cr_assert_not_null(g);
    cr_expect(strstr(reason(g), "no Triton kernel: the time is in library calls (torch.ops.aten.avg_pool3d.default)") != NULL,
              "%s", reason(g));
    json_decref(g);
    json_decref(m);
    json_decref(k);
    json_decref(v);
}
