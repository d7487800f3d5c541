/* Family detection over every recorded Inductor module (issue 12: families chosen by what a
 * kernel computes, tested on modules of several shapes per family, not only the examples'):
 * tests/fixtures/families.txt lists, for each kernel of each module under
 * tests/fixtures/inductor/ (the numbered examples, the suite's, held-out and scratch problems' captures),
 * the family builtin_rewrite_match gives it; every module there must be listed, and every
 * listed kernel must get its family. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "optimize/optimize_int.h"
#include "testutil.h"

/* Whether the module name is one of the captures families.txt covers. */
static int listed_kind(const char *name) {
    size_t n = strlen(name);
    return n > 6 && !strcmp(name + n - 6, "_g0.py") &&
           (!strncmp(name, "suite_", 6) || !strncmp(name, "scratch_", 8) || !strncmp(name, "heldout", 7) ||
            (name[0] >= '0' && name[0] <= '9'));
}

Test(families_recorded, every_recorded_kernel_gets_its_family) {
    size_t len = 0;
    char *table = tu_read_fixture("tests/fixtures/families.txt", &len);
    int rows = 0, modules = 0;
    char prev[256] = "";
    for (char *line = strtok(table, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') continue;
        char fx[256], ix[16], kname[160], fam[64];
        cr_assert_eq(sscanf(line, "%255s %15s %159s %63s", fx, ix, kname, fam), 4, "bad line: %s", line);
        artifact *a = tu_load_inductor(fx);
        modules += strcmp(prev, fx) != 0;
        snprintf(prev, sizeof prev, "%s", fx);
        rows++;
        if (!strcmp(ix, "-")) { /* library calls only */
            cr_expect_eq(a->nkernels, 0, "%s has %zu Triton kernels, listed as none", fx, a->nkernels);
            artifact_free(a);
            continue;
        }
        int idx = atoi(ix);
        cr_assert(idx >= 0 && (size_t)idx < a->nkernels, "%s has no kernel %d", fx, idx);
        cr_expect_str_eq(a->kernels[idx].name, kname, "%s kernel %d", fx, idx);
        json_t *kc = opt_kernel_ctx(a, idx, NULL);
        double eps = 0;
        const char *got = kfamily_name(builtin_rewrite_match(tu_kf(kc), &eps));
        cr_expect_str_eq(*got ? got : "-", fam, "%s kernel %d (%s): family %s, listed %s", fx, idx, kname,
                         *got ? got : "-", fam);
        json_decref(kc);
        artifact_free(a);
    }
    free(table);
    /* every capture in the folder is in the table (a new fixture gets its row) */
    int on_disk = 0;
    char *dir = tu_fixture_path("tests/fixtures/inductor");
    DIR *d = opendir(dir);
    cr_assert(d, "cannot list %s", dir);
    free(dir);
    for (struct dirent *de; (de = readdir(d));) on_disk += listed_kind(de->d_name);
    closedir(d);
    cr_expect_eq(modules, on_disk, "families.txt lists %d modules, the folder holds %d", modules, on_disk);
    cr_expect_gt(rows, 80);
}
