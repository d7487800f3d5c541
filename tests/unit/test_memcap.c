/* test_memcap.c — kopt's main-phase memory target from the model's working set
 * (verify_memory_cap, src/verify/verify.h): 2.5x the working set, at least the working set plus
 * 1.5 GiB, none for a missing or non-positive working set. */
#include <criterion/criterion.h>
#include <math.h>

#include "verify/verify.h"

#define GIB 1073741824.0

Test(memcap, scales_with_a_large_working_set) {
    cr_assert_float_eq(verify_memory_cap(4 * GIB), 10 * GIB, 1.0);
    cr_assert_float_eq(verify_memory_cap(1.24 * GIB), 3.1 * GIB, 1.0);
}

Test(memcap, floor_for_small_models) {
    cr_assert_float_eq(verify_memory_cap(0.1 * GIB), 1.6 * GIB, 1.0);
    /* the two rules meet at 1 GiB: 2.5 GiB either way */
    cr_assert_float_eq(verify_memory_cap(GIB), 2.5 * GIB, 1.0);
    cr_assert(verify_memory_cap(GIB + 1024) > 2.5 * GIB + 2000, "above 1 GiB the factor rules");
    cr_assert_float_eq(verify_memory_cap(GIB - 1024), 2.5 * GIB - 1024, 1.0);
}

Test(memcap, none_without_a_working_set) {
    cr_assert_eq(verify_memory_cap(0), 0);
    cr_assert_eq(verify_memory_cap(-5), 0);
    cr_assert_eq(verify_memory_cap(NAN), 0);
    cr_assert_eq(verify_memory_cap(INFINITY), 0);
}
