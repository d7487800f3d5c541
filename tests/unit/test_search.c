/* The search's limits (src/optimize/search.c) that no CLI test can wait for: the kernel screen's
 * worker limit. */
#include <criterion/criterion.h>

#include "optimize/optimize_int.h"

/* Four candidate steps: 4 x timeout_s when set, else 4 x the 120 s default (kopt optimize leaves
 * timeout_s at 0); never 0, which the worker would take as no limit at all. */
Test(search, screen_timeout_is_four_candidate_steps) {
    optimize_opts o = {0};
    cr_expect_float_eq(opt_screen_timeout_s(&o), 480, 1e-9, "unset: 4 x 120 s");
    o.timeout_s = -1;
    cr_expect_float_eq(opt_screen_timeout_s(&o), 480, 1e-9);
    o.timeout_s = 0.5;
    cr_expect_float_eq(opt_screen_timeout_s(&o), 2, 1e-9, "a step below 1 s is still its own");
    o.timeout_s = 10;
    cr_expect_float_eq(opt_screen_timeout_s(&o), 40, 1e-9);
}
