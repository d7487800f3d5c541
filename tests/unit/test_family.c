/* The kernel families as a typed enum (src/agents/family.h): every family's name parses back to
 * it, unknown names and NULL are KF_NONE, every family has the planner's reason, and the
 * classifications hold exactly for the families they name. */
#include <criterion/criterion.h>
#include <string.h>

#include "agents/family.h"

Test(family, names_round_trip_and_classify) {
    int regions = 0, row_splits = 0;
    for (int f = KF_NONE + 1; f < KF_COUNT; f++) {
        const char *n = kfamily_name((kfamily)f);
        cr_assert(n && *n, "family %d has no name", f);
        cr_expect_eq(kfamily_parse(n), (kfamily)f, "%s does not parse back", n);
        const char *why = kfamily_rationale((kfamily)f);
        cr_expect(why && strlen(why) > 20, "%s: no rationale", n);
        cr_expect_eq(kfamily_is_region((kfamily)f), !strncmp(n, "region_", 7), "%s", n);
        cr_expect_eq(kfamily_is_row_split((kfamily)f), !strncmp(n, "row_split_", 10), "%s", n);
        regions += kfamily_is_region((kfamily)f);
        row_splits += kfamily_is_row_split((kfamily)f);
        for (int g = KF_NONE + 1; g < f; g++) cr_expect(strcmp(n, kfamily_name((kfamily)g)), "%s twice", n);
    }
    cr_expect_eq(regions, 5);
    cr_expect_eq(row_splits, 6);
    static const char *const unknown[] = {"", "Row_softmax", "row_softmax ", "region_", "one_pass", "none"};
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++)
        cr_expect_eq(kfamily_parse(unknown[i]), KF_NONE, "%s", unknown[i]);
    cr_expect_eq(kfamily_parse(NULL), KF_NONE);
    cr_expect_str_eq(kfamily_name(KF_NONE), "");
    cr_expect_str_eq(kfamily_name(KF_COUNT), "");
    cr_expect_str_eq(kfamily_name((kfamily)-1), "");
    cr_expect_str_eq(kfamily_rationale(KF_NONE), "");
    cr_expect_eq(kfamily_is_region(KF_NONE) || kfamily_is_row_split(KF_NONE), 0);
    /* the reasons the planner gives: a family's own, or its kind's */
    cr_expect(strstr(kfamily_rationale(KF_CL_GROUP_STATS), "channels-last") != NULL);
    cr_expect(strstr(kfamily_rationale(KF_ROW_SPLIT_LAYER_NORM), "segments") != NULL);
    cr_expect(strstr(kfamily_rationale(KF_REGION_GROUP_NORM), "several kernels") != NULL);
}
