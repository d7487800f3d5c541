/* inspect_io_bytes: the graph's own inputs and returned buffers, sized from launch arguments. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>

#include "artifact/artifact.h"
#include "profile/inspect.h"
#include "testutil.h"

/* Rows as inspect_launch_table makes them: per launch, per probe item, an "nbytes" of
 * 1000 * (launch + 1) + item, so that the test can tell which arguments were counted. */
static json_t *rows_for(const artifact *a) {
    json_t *rows = json_array();
    for (size_t i = 0; i < a->nlaunches; i++) {
        json_t *args = json_array();
        for (size_t j = 0; j < a->launches[i].args.n; j++)
            json_array_append_new(args, json_pack("{s:f}", "nbytes", 1000.0 * (double)(i + 1) + (double)j));
        json_array_append_new(rows, json_pack("{s:o}", "args", args));
    }
    return rows;
}

static double io_of(const char *fixture) {
    size_t n = 0;
    char *text = tu_read_fixture(fixture, &n);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s", e.msg);
    json_t *rows = rows_for(a);
    double b = inspect_io_bytes(a, rows, NULL);
    json_decref(rows);
    artifact_free(a);
    free(text);
    return b;
}

Test(inspect_io, wide_softmax_counts_input_once_and_output_once) {
    /* arg0_1 first passed by launch 0 (item 0: 1000), read again by launches 2 and 4 (not
     * counted twice); buf4, returned, written by launch 4 as item 3 (5003); the intermediates
     * buf0..buf3 are not the graph's */
    cr_assert_float_eq(io_of("tests/fixtures/inductor/02_softmax_wide_g0.py"), 1000.0 + 5003.0, 1e-9);
}

Test(inspect_io, group_norm_counts_three_inputs_and_the_output) {
    /* arg2_1 at launch 0 item 0 (1000); at launch 2: arg0_1 item 3 (3003), arg1_1 item 4
     * (3004), buf6 item 5 (3005) */
    cr_assert_float_eq(io_of("tests/fixtures/inductor/06_groupnorm_g0.py"), 1000.0 + 3003.0 + 3004.0 + 3005.0, 1e-9);
}
