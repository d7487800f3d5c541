/* test_memcap.c — kopt's main-phase memory target from the model's working set
 * (verify_memory_cap, src/verify/verify.h): 2.5x the working set, at least the working set plus
 * 1.5 GiB, at most 2.75x it, none for a missing or non-positive working set. */
#include <criterion/criterion.h>
#include <math.h>

#include "verify/verify.h"

#define GIB 1073741824.0

Test(memcap, scales_with_a_large_working_set) {
    cr_assert_float_eq(verify_memory_cap(4 * GIB), 10 * GIB, 1.0);
    cr_assert_float_eq(verify_memory_cap(1.24 * GIB), 3.1 * GIB, 1.0);
}

Test(memcap, floor_for_small_models) {
    /* the extra 1.5 GiB rules between 0.857 GiB (where it meets 2.75x) and 1 GiB */
    cr_assert_float_eq(verify_memory_cap(0.9 * GIB), 2.4 * GIB, 1.0);
    /* the two rules meet at 1 GiB: 2.5 GiB either way */
    cr_assert_float_eq(verify_memory_cap(GIB), 2.5 * GIB, 1.0);
    cr_assert(verify_memory_cap(GIB + 1024) > 2.5 * GIB + 2000, "above 1 GiB the factor rules");
    cr_assert_float_eq(verify_memory_cap(GIB - 1024), 2.5 * GIB - 1024, 1.0);
}

Test(memcap, never_above_2_75x) {
    /* held-out h14 (0.745 GiB): the extra would allow 3.01x */
    cr_assert_float_eq(verify_memory_cap(0.745 * GIB), 2.75 * 0.745 * GIB, 1.0);
    cr_assert_float_eq(verify_memory_cap(0.1 * GIB), 0.275 * GIB, 1.0);
    double at = 1.5 / 1.75 * GIB; /* where 2.75x and the extra meet */
    cr_assert_float_eq(verify_memory_cap(at), 2.75 * at, 1.0);
    cr_assert(verify_memory_cap(at - 4096) < at - 4096 + VERIFY_MEM_CAP_EXTRA - 1000, "below it 2.75x rules");
    for (double ws = 0.01 * GIB; ws < 64 * GIB; ws *= 1.37)
        cr_assert(verify_memory_cap(ws) <= 2.75 * ws + 1.0, "at most 2.75x at %.3g bytes", ws);
}

Test(memcap, none_without_a_working_set) {
    cr_assert_eq(verify_memory_cap(0), 0);
    cr_assert_eq(verify_memory_cap(-5), 0);
    cr_assert_eq(verify_memory_cap(NAN), 0);
    cr_assert_eq(verify_memory_cap(INFINITY), 0);
}
