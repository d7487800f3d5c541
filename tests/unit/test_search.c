/* The search's limits (src/optimize/search.c) that no CLI test can wait for: the kernel screen's
 * worker limit. */
#include <criterion/criterion.h>

#include <stdlib.h>

#include "optimize/optimize_int.h"

/* Four candidate steps: 4 x timeout_s when set, else 4 x the 120 s default (kopt optimize leaves
 * timeout_s at 0); never 0, which the worker would take as no limit at all. With plenty of
 * budget left the steps decide. */
Test(search, screen_timeout_is_four_candidate_steps) {
    optimize_opts o = {0};
    const double plenty = 3600;
    cr_expect_float_eq(opt_screen_timeout_s(&o, plenty), 480, 1e-9, "unset: 4 x 120 s");
    o.timeout_s = -1;
    cr_expect_float_eq(opt_screen_timeout_s(&o, plenty), 480, 1e-9);
    o.timeout_s = 0.5;
    cr_expect_float_eq(opt_screen_timeout_s(&o, plenty), 2, 1e-9, "a step below 1 s is still its own");
    o.timeout_s = 10;
    cr_expect_float_eq(opt_screen_timeout_s(&o, plenty), 40, 1e-9);
}

/* The budget bounds it: what is left + 15 s, at least 15 s (a screen started past the end of the
 * budget still gets its 15 s), never above the four steps. */
Test(search, screen_timeout_is_bounded_by_the_budget_left) {
    optimize_opts o = {0};
    cr_expect_float_eq(opt_screen_timeout_s(&o, 60), 75, 1e-9, "a minute left: 75 s, not 480");
    cr_expect_float_eq(opt_screen_timeout_s(&o, 464), 479, 1e-9);
    cr_expect_float_eq(opt_screen_timeout_s(&o, 465), 480, 1e-9, "the cap meets the steps");
    cr_expect_float_eq(opt_screen_timeout_s(&o, 0), 15, 1e-9);
    cr_expect_float_eq(opt_screen_timeout_s(&o, -200), 15, 1e-9, "past the budget: still 15 s");
    cr_expect_float_eq(opt_screen_timeout_s(&o, -0.5), 15, 1e-9, "just past it: 15 s, not 14.5");
    cr_expect_float_eq(opt_screen_timeout_s(&o, 0.5), 15.5, 1e-9, "just before it: 15.5 s");
    o.timeout_s = 3;
    cr_expect_float_eq(opt_screen_timeout_s(&o, 60), 12, 1e-9, "four short steps are below the cap");
}

/* The store's reason for a screened-out candidate says what the screen decided: held-out hx01's
 * group-norm region screened 0.410 ms against 0.558 and was left ungated for lack of budget, yet
 * the store said "not 2% faster". */
Test(search, stored_reason_of_a_screened_out_candidate) {
    char *r = opt_stored_reason(1, NULL);
    cr_expect_str_eq(r, "kernel-level screen: not 2% faster than the original");
    free(r);
    r = opt_stored_reason(1, "budget: no time left for its gates and the final measurement");
    cr_expect_str_eq(r, "kernel-level screen: budget: no time left for its gates and the final measurement");
    free(r);
    r = opt_stored_reason(0, "seed 3: differs");
    cr_expect_str_eq(r, "seed 3: differs");
    free(r);
    cr_expect_null(opt_stored_reason(0, NULL));
}
