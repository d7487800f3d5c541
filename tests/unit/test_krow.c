/* The optimize kernel table (src/optimize/krow.h): typed rows, written to the document once. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "optimize/krow.h"
#include "util/buf.h"

Test(krow, rows_to_the_documents_arrays) {
    krows t = {0};
    krow *a = krows_add(&t, "k0");
    a->time_ms = 1.5;
    a->share = 0.75;
    krow_set(&a->cls, "memory-bound");
    krow_set(&a->why, "first");
    krow_setf(&a->why, "%s, then %d", a->why, 2);   /* formats from the old value before freeing it */
    a->has_aten_ops = 1;
    krow *r = krows_add(&t, "_kopt_region_0");
    krow_set(&r->kernel_kind, "region");
    art_strlist_push(&r->members, kstrdup("torch.ops.aten.avg_pool3d.default"));
    r->status = KROW_OPTIMIZED;
    r->searched = 1;
    r->tried = 5;
    r->refused[2] = 3;
    r->speedup = json_pack("{s:f}", "estimate", 2.5);
    krow_set(&r->change, "region_avg_pool");
    r->kernel_ms_before = 2.0;
    r->kernel_ms_after = 0.8;
    r->tuned = (tuned_config){.xblock = 64, .r0_block = 512, .num_warps = 8, .num_stages = 1, .found_by_coordesc = 1};
    a = krows_find(&t, "k0");   /* pointers may move on add: look it up again */
    cr_assert_not_null(a);
    a->status = KROW_IN_REGION;
    cr_assert_null(krows_find(&t, "nope"));
    vrow *v = krows_add_vendor(&t, "torch.ops.aten.avg_pool3d.default", 2.0, 0.5);
    art_strlist_push(&v->replaced_by, kstrdup("_kopt_region_0"));
    krows_add_vendor(&t, "extern_kernels.mm", 1.0, 0.25);
    cr_assert_eq(krows_find_vendor(&t, "extern_kernels.mm")->time_ms, 1.0);

    json_t *k = krows_to_json(&t), *vc = krows_vendor_json(&t);
    cr_assert_eq(json_array_size(k), 2);
    const json_t *k0 = json_array_get(k, 0), *k1 = json_array_get(k, 1);
    cr_assert_str_eq(json_string_value(json_object_get(k0, "status")), "in_region");
    cr_assert_str_eq(json_string_value(json_object_get(k0, "why")), "first, then 2");
    cr_assert_str_eq(json_string_value(json_object_get(k0, "class")), "memory-bound");
    cr_assert(json_is_array(json_object_get(k0, "aten_ops")) && json_array_size(json_object_get(k0, "aten_ops")) == 0);
    cr_assert_null(json_object_get(k0, "tried"), "not searched: no tried / refused_by_gate");
    cr_assert_null(json_object_get(k0, "kernel_kind"));
    cr_assert_null(json_object_get(k0, "frac_of_ceiling"));
    cr_assert_str_eq(json_string_value(json_object_get(k1, "status")), "optimized");
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(k1, "members"), 0)), "torch.ops.aten.avg_pool3d.default");
    cr_assert_eq(json_integer_value(json_object_get(k1, "tried")), 5);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(k1, "refused_by_gate"), "2")), 3);
    cr_assert_float_eq(json_number_value(json_object_get(json_object_get(k1, "speedup"), "estimate")), 2.5, 1e-12);
    cr_assert_float_eq(json_number_value(json_object_get(k1, "kernel_ms_after")), 0.8, 1e-12);
    cr_assert_null(json_object_get(k1, "after_ms"));
    cr_assert_null(json_object_get(k1, "aten_ops"), "aten_ops only when reported");
    const json_t *tc = json_object_get(k1, "tuned_config");   /* where the search started */
    cr_assert_eq(json_integer_value(json_object_get(tc, "XBLOCK")), 64);
    cr_assert_eq(json_integer_value(json_object_get(tc, "R0_BLOCK")), 512);
    cr_assert_eq(json_integer_value(json_object_get(tc, "num_warps")), 8);
    cr_assert(json_is_true(json_object_get(tc, "found_by_coordesc")));
    cr_assert_null(json_object_get(k0, "tuned_config"), "only when a .best_config was read");
    cr_assert_eq(json_array_size(vc), 2);
    cr_assert_str_eq(json_string_value(json_array_get(json_object_get(json_array_get(vc, 0), "replaced_by"), 0)), "_kopt_region_0");
    cr_assert_null(json_object_get(json_array_get(vc, 1), "replaced_by"));
    cr_assert_str_eq(krow_status_name(KROW_KEPT), "kept");
    json_decref(k);
    json_decref(vc);
    krows_free(&t);
    cr_assert_eq(t.n, 0);
}
