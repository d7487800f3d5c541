/* Inductor's autotuned configuration (src/optimize/tuned.h) and the planner's first step from it
 * (src/agents/builtin_planner.c). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "optimize/optimize_int.h"
#include "optimize/tuned.h"
#include "testutil.h"
#include "util/buf.h"

/* The worker's answer for one kernel, parsed (1 when it is a configuration). */
static int parse(const char *text, tuned_config *t) {
    json_error_t je;
    json_t *j = json_loads(text, JSON_DECODE_ANY, &je);
    int ok = tuned_config_parse(j, t);
    json_decref(j);
    return ok;
}

Test(tuned, reads_the_configuration_the_worker_reports) {
    tuned_config t;
    cr_assert_eq(parse("{\"XBLOCK\": 1, \"R0_BLOCK\": 2048, \"num_warps\": 16, \"num_stages\": 1, "
                       "\"choices\": 6, \"found_by_coordesc\": false, \"extra\": \"ignored\"}", &t), 1);
    cr_assert(t.xblock == 1 && t.r0_block == 2048 && t.yblock == 0 && t.num_warps == 16 && t.num_stages == 1);
    cr_assert(t.found_by_coordesc == 0 && t.choices == 6);
    json_t *j = tuned_config_json(&t);
    cr_assert_eq(json_integer_value(json_object_get(j, "R0_BLOCK")), 2048);
    cr_assert_eq(json_integer_value(json_object_get(j, "choices")), 6);
    cr_assert_null(json_object_get(j, "YBLOCK"));
    cr_assert(json_is_false(json_object_get(j, "found_by_coordesc")));
    json_decref(j);
    cr_assert_eq(parse("{\"XBLOCK\": 64, \"YBLOCK\": 32, \"num_warps\": 4, \"num_stages\": 2, \"found_by_coordesc\": true}", &t), 1);
    cr_assert(t.xblock == 64 && t.yblock == 32 && t.r0_block == 0 && t.found_by_coordesc == 1);
    cr_assert_eq(t.choices, 1, "no count: the kernel had one configuration");
    /* the edges: 4096 / 65536 / 32 warps / 8 stages are configurations */
    cr_assert_eq(parse("{\"XBLOCK\": 4096, \"YBLOCK\": 4096, \"R0_BLOCK\": 65536, \"num_warps\": 32, \"num_stages\": 8}", &t), 1);
    cr_assert_eq(parse("{\"XBLOCK\": 1, \"num_warps\": 1, \"num_stages\": 1, \"choices\": 1}", &t), 1);
}

Test(tuned, refuses_what_is_not_a_configuration) {
    static const char *const bad[] = {
        "{\"XBLOCK\": 3, \"num_warps\": 4, \"num_stages\": 1}",            /* not a power of two */
        "{\"XBLOCK\": 8192, \"num_warps\": 4, \"num_stages\": 1}",         /* past 4096 */
        "{\"XBLOCK\": 0, \"num_warps\": 4, \"num_stages\": 1}",
        "{\"XBLOCK\": 64, \"num_warps\": 64, \"num_stages\": 1}",          /* past 32 warps */
        "{\"XBLOCK\": 64, \"num_warps\": 3, \"num_stages\": 1}",
        "{\"XBLOCK\": 64, \"num_warps\": 4}",                              /* no stages */
        "{\"num_warps\": 4, \"num_stages\": 1}",                             /* no XBLOCK */
        "{\"XBLOCK\": 64, \"num_warps\": 4, \"num_stages\": 9}",           /* past 8 stages */
        "{\"XBLOCK\": 64, \"num_warps\": 4, \"num_stages\": 0}",
        "{\"XBLOCK\": \"64\", \"num_warps\": 4, \"num_stages\": 1}",       /* a string */
        "{\"XBLOCK\": 64.0, \"num_warps\": 4, \"num_stages\": 1}",         /* a real */
        "{\"XBLOCK\": 64, \"R0_BLOCK\": 0, \"num_warps\": 4, \"num_stages\": 1}",
        "{\"XBLOCK\": 64, \"R0_BLOCK\": 131072, \"num_warps\": 4, \"num_stages\": 1}",
        "{\"XBLOCK\": 64, \"YBLOCK\": 8192, \"num_warps\": 4, \"num_stages\": 1}",
        "{\"XBLOCK\": 64, \"num_warps\": 4, \"num_stages\": 1, \"choices\": 0}",
        "{\"XBLOCK\": 64, \"num_warps\": 4, \"num_stages\": 1, \"choices\": \"4\"}",
        "[1, 2]",
        "7",
    };
    tuned_config t;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&t, 0x5a, sizeof t);
        cr_assert_eq(parse(bad[i], &t), 0, "accepted: %s", bad[i]);
        cr_assert(t.xblock == 0 && t.num_warps == 0 && t.choices == 0, "not zeroed: %s", bad[i]);
    }
    cr_assert_eq(tuned_config_parse(NULL, &t), 0, "no answer");
}

/* The planner's round 0 on the log-softmax fixture's kernel with a tuned configuration. */
static json_t *round0(json_t *k) {
    agent *p = builtin_planner_new();
    json_t *ctx = json_pack("{s:O, s:[], s:i, s:{s:i}}", "kernel", k, "history", "round", 0, "budget", "candidates_left", 64);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(p, ctx, &out, &e), 0, "%s", e.msg);
    json_decref(ctx);
    agent_free(p);
    json_t *plans = json_object_get(out, "plans"), *lc = NULL;
    size_t i;
    json_t *pl;
    json_array_foreach(plans, i, pl)
        if (!strcmp(json_string_value(json_object_get(pl, "direction")), "launch_config")) lc = pl;
    cr_assert_not_null(lc);
    json_incref(lc);
    json_decref(out);
    return lc;
}

static int cfg_is(const json_t *c, int xb, int rb, int nw, int ns) {
    return json_integer_value(json_object_get(c, "XBLOCK")) == xb && json_integer_value(json_object_get(c, "R0_BLOCK")) == rb &&
           json_integer_value(json_object_get(c, "num_warps")) == nw && json_integer_value(json_object_get(c, "num_stages")) == ns;
}

Test(tuned, planner_starts_from_the_tuned_configuration) {
    /* the kernel context carries the configuration the worker reported for it */
    size_t len = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &len);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, len, &a, &e), 0, "%s", e.msg);
    free(text);
    tuned_config t;
    cr_assert_eq(parse("{\"XBLOCK\": 1, \"R0_BLOCK\": 2048, \"num_warps\": 8, \"num_stages\": 1, \"choices\": 4}", &t), 1);
    json_t *none = opt_kernel_ctx(a, 0, NULL);
    cr_assert_null(json_object_get(none, "tuned_config"), "none given, none in the context");
    json_decref(none);
    json_t *k = opt_kernel_ctx(a, 0, &t);
    const json_t *tc = json_object_get(k, "tuned_config");
    cr_assert_not_null(tc, "no tuned_config in the kernel context");
    cr_assert_eq(json_integer_value(json_object_get(tc, "R0_BLOCK")), 2048);

    json_t *lc = round0(k);
    const json_t *cfgs = json_object_get(json_object_get(lc, "params"), "configs");
    cr_assert(strstr(json_string_value(json_object_get(lc, "rationale")), "autotuner chose") != NULL);
    /* first the neighbours (one knob one step), never the tuned configuration itself */
    static const int want[][4] = {{2, 2048, 8, 1}, {1, 2048, 16, 1}, {1, 2048, 4, 1}, {1, 2048, 8, 2},
                                  {1, 2048, 8, 3}, {1, 4096, 8, 1}, {1, 1024, 8, 1}};
    size_t nw = sizeof want / sizeof *want;
    cr_assert_gt(json_array_size(cfgs), nw);
    for (size_t i = 0; i < nw; i++)
        cr_assert(cfg_is(json_array_get(cfgs, i), want[i][0], want[i][1], want[i][2], want[i][3]), "config %zu: %s", i,
                  json_dumps(json_array_get(cfgs, i), 0));
    size_t i;
    json_t *c;
    /* the configuration itself is never proposed; with its last pass walked backward it is another
     * one (revloop.h: the log-softmax's normalizing pass allows it), proposed with the neighbours */
    int twin = 0;
    json_array_foreach(cfgs, i, c) {
        int rev = json_is_true(json_object_get(c, "reverse_last_pass"));
        cr_assert_not(cfg_is(c, 1, 2048, 8, 1) && !rev, "proposed the configuration the module runs");
        twin |= cfg_is(c, 1, 2048, 8, 1) && rev;
    }
    cr_assert(twin, "no reversed twin of the tuned configuration");
    /* the coarse grid still follows (its whole-row configuration) */
    int whole_row = 0;
    json_array_foreach(cfgs, i, c) whole_row |= json_integer_value(json_object_get(c, "R0_BLOCK")) == 16384;
    cr_assert(whole_row);
    json_decref(lc);

    /* found by Inductor's coordinate descent: its neighbours were measured, no seeding but the
     * twin with the last pass walked backward, which no autotuner tries; then the grid */
    json_object_set_new((json_t *)tc, "found_by_coordesc", json_true());
    lc = round0(k);
    cfgs = json_object_get(json_object_get(lc, "params"), "configs");
    cr_assert(cfg_is(json_array_get(cfgs, 0), 1, 2048, 8, 1) && json_is_true(json_object_get(json_array_get(cfgs, 0), "reverse_last_pass")),
              "%s", json_dumps(json_array_get(cfgs, 0), 0));
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(cfgs, 1), "R0_BLOCK")), 16384, "the grid comes next");
    cr_assert(strstr(json_string_value(json_object_get(lc, "rationale")), "autotuner chose") == NULL);
    cr_assert(strstr(json_string_value(json_object_get(lc, "rationale")), "walked backward") != NULL);
    json_decref(lc);
    /* ... and where the last pass may not run backward (a kernel of one loop), nothing */
    char *one = tu_replace_once(json_string_value(json_object_get(k, "jit_source")), "for r0_offset in", "for r0_offset_ in");
    json_t *k1 = json_deep_copy(k);
    json_object_set_new(k1, "jit_source", json_string(one));
    free(one);
    lc = round0(k1);
    cfgs = json_object_get(json_object_get(lc, "params"), "configs");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(cfgs, 0), "R0_BLOCK")), 16384, "the grid comes first");
    json_decref(lc);
    json_decref(k1);
    /* a configuration without the kernel's reduction block is not this kernel's */
    json_object_set_new((json_t *)tc, "found_by_coordesc", json_false());
    json_object_del((json_t *)tc, "R0_BLOCK");
    lc = round0(k);
    cfgs = json_object_get(json_object_get(lc, "params"), "configs");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(cfgs, 0), "R0_BLOCK")), 16384);
    json_decref(lc);
    json_decref(k);
    artifact_free(a);
}
