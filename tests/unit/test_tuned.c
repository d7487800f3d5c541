/* Inductor's autotuned configuration (src/optimize/tuned.h) and the planner's first step from it
 * (src/agents/builtin_planner.c). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/builtin.h"
#include "artifact/artifact.h"
#include "optimize/optimize_int.h"
#include "optimize/tuned.h"
#include "testutil.h"
#include "util/buf.h"

static char dir[] = "/tmp/kopt-tuned-XXXXXX";

static void setup(void) { cr_assert_not_null(mkdtemp(dir)); }
static void teardown(void) {
    char *cmd = kasprintf("rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(cmd);
}

static void write_file(const char *name, const char *text) {
    char *p = kasprintf("%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    free(p);
}

/* A kernel whose kernel path is DIR/NAME.py, its .best_config holding `json` (NULL: no file). */
static art_kernel kernel_with(const char *name, const char *json) {
    art_kernel k;
    memset(&k, 0, sizeof k);
    k.kernel_path = kasprintf("%s/%s.py", dir, name);
    if (json) {
        char *b = kasprintf("%s.best_config", name);
        write_file(b, json);
        free(b);
    }
    return k;
}

TestSuite(tuned, .init = setup, .fini = teardown);


/* The name Inductor's local autotune cache gives the file (torch 2.5+: AutotuneCache._prepare_key):
 * sha256("<kernel file basename>:<cache_key_tag>"), the digests computed with Python's hashlib,
 * not with kopt's own sha256 */
Test(tuned, finds_the_file_under_inductors_hashed_name) {
    unsetenv("TORCH_COMPILE_CACHE_KEY_TAG");
    write_file("719499cce639dcf1eb5c4c76f9b9c661cd2af6f9403d6677dc18b40b83fbe948.best_config",
               "{\"XBLOCK\": 128, \"num_warps\": 2, \"num_stages\": 1, \"found_by_coordesc\": false}");
    write_file("a776b97c1462aa4ca1cff70882089f713753bf0281c8e50c4cf2d857e76dc54f.best_config",
               "{\"XBLOCK\": 256, \"num_warps\": 8, \"num_stages\": 1}");
    art_kernel k = kernel_with("ckopt_tuned_test", NULL);
    tuned_config t;
    cr_assert_eq(tuned_config_read(&k, &t), 1);
    cr_assert(t.xblock == 128 && t.num_warps == 2);
    setenv("TORCH_COMPILE_CACHE_KEY_TAG", "mytag", 1);   /* the tag is part of the name */
    cr_assert_eq(tuned_config_read(&k, &t), 1);
    cr_assert(t.xblock == 256 && t.num_warps == 8);
    setenv("TORCH_COMPILE_CACHE_KEY_TAG", "other", 1);
    cr_assert_eq(tuned_config_read(&k, &t), 0, "no file under that tag's name");
    unsetenv("TORCH_COMPILE_CACHE_KEY_TAG");
    free(k.kernel_path);
    /* the hashed name wins over the old one beside the kernel */
    k = kernel_with("ckopt_tuned_test", "{\"XBLOCK\": 16, \"num_warps\": 4, \"num_stages\": 1}");
    cr_assert_eq(tuned_config_read(&k, &t), 1);
    cr_assert_eq(t.xblock, 128);
    free(k.kernel_path);
}

Test(tuned, reads_inductors_best_config) {
    art_kernel k = kernel_with("cabc", "{\"XBLOCK\": 1, \"R0_BLOCK\": 2048, \"num_warps\": 16, \"num_stages\": 1, "
                                       "\"configs_hash\": \"9f\", \"found_by_coordesc\": false, \"time_taken_ms\": 3}");
    tuned_config t;
    cr_assert_eq(tuned_config_read(&k, &t), 1);
    cr_assert(t.xblock == 1 && t.r0_block == 2048 && t.yblock == 0 && t.num_warps == 16 && t.num_stages == 1);
    cr_assert_eq(t.found_by_coordesc, 0);
    json_t *j = tuned_config_json(&t);
    cr_assert_eq(json_integer_value(json_object_get(j, "R0_BLOCK")), 2048);
    cr_assert_null(json_object_get(j, "YBLOCK"));
    cr_assert(json_is_false(json_object_get(j, "found_by_coordesc")));
    json_decref(j);
    free(k.kernel_path);
    k = kernel_with("cdef", "{\"XBLOCK\": 64, \"YBLOCK\": 32, \"num_warps\": 4, \"num_stages\": 2, \"found_by_coordesc\": true}");
    cr_assert_eq(tuned_config_read(&k, &t), 1);
    cr_assert(t.xblock == 64 && t.yblock == 32 && t.r0_block == 0 && t.found_by_coordesc == 1);
    free(k.kernel_path);
}

Test(tuned, refuses_what_is_not_a_configuration) {
    static const char *const bad[] = {
        "{\"XBLOCK\": 3, \"num_warps\": 4, \"num_stages\": 1}",            /* not a power of two */
        "{\"XBLOCK\": 8192, \"num_warps\": 4, \"num_stages\": 1}",         /* past 4096 */
        "{\"XBLOCK\": 64, \"num_warps\": 64, \"num_stages\": 1}",          /* past 32 warps */
        "{\"XBLOCK\": 64, \"num_warps\": 4}",                              /* no stages */
        "{\"XBLOCK\": 64, \"num_warps\": 4, \"num_stages\": 9}",           /* past 8 stages */
        "{\"XBLOCK\": \"64\", \"num_warps\": 4, \"num_stages\": 1}",       /* a string */
        "{\"XBLOCK\": 64, \"R0_BLOCK\": 0, \"num_warps\": 4, \"num_stages\": 1}",
        "{\"XBLOCK\": 64, \"R0_BLOCK\": 131072, \"num_warps\": 4, \"num_stages\": 1}",
        "[1, 2]",
        "not json",
    };
    tuned_config t;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%zu", i);
        art_kernel k = kernel_with(name, bad[i]);
        cr_assert_eq(tuned_config_read(&k, &t), 0, "accepted: %s", bad[i]);
        free(k.kernel_path);
    }
    art_kernel none = kernel_with("absent", NULL);
    cr_assert_eq(tuned_config_read(&none, &t), 0, "no file");
    free(none.kernel_path);
    art_kernel nopath;
    memset(&nopath, 0, sizeof nopath);
    cr_assert_eq(tuned_config_read(&nopath, &t), 0, "no kernel path");
    cr_assert_eq(tuned_config_read(NULL, &t), 0);
    /* too large for a configuration (64 KB): not read */
    kbuf big = KBUF_INIT;
    kbuf_puts(&big, "{\"XBLOCK\": 64, \"num_warps\": 4, \"num_stages\": 1, \"pad\": \"");
    for (int i = 0; i < 70000; i++) kbuf_putc(&big, 'x');
    kbuf_puts(&big, "\"}");
    art_kernel k = kernel_with("big", kbuf_str(&big));
    cr_assert_eq(tuned_config_read(&k, &t), 0);
    free(k.kernel_path);
    kbuf_free(&big);
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
    /* the kernel context carries the configuration read from the kernel path's .best_config */
    size_t len = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &len);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, len, &a, &e), 0, "%s", e.msg);
    free(text);
    art_kernel tmp = kernel_with("c03", "{\"XBLOCK\": 1, \"R0_BLOCK\": 2048, \"num_warps\": 8, \"num_stages\": 1}");
    free(a->kernels[0].kernel_path);
    a->kernels[0].kernel_path = tmp.kernel_path;
    json_t *k = opt_kernel_ctx(a, 0, NULL);
    const json_t *tc = json_object_get(k, "tuned_config");
    cr_assert_not_null(tc, "no tuned_config in the kernel context");
    cr_assert_eq(json_integer_value(json_object_get(tc, "R0_BLOCK")), 2048);

    json_t *lc = round0(k);
    const json_t *cfgs = json_object_get(json_object_get(lc, "params"), "configs");
    cr_assert(strstr(json_string_value(json_object_get(lc, "rationale")), ".best_config") != NULL);
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
    json_array_foreach(cfgs, i, c) cr_assert_not(cfg_is(c, 1, 2048, 8, 1), "proposed the configuration the module runs");
    /* the coarse grid still follows (its whole-row configuration) */
    int whole_row = 0;
    json_array_foreach(cfgs, i, c) whole_row |= json_integer_value(json_object_get(c, "R0_BLOCK")) == 16384;
    cr_assert(whole_row);
    json_decref(lc);

    /* found by Inductor's coordinate descent: its neighbours were measured, no seeding */
    json_object_set_new((json_t *)tc, "found_by_coordesc", json_true());
    lc = round0(k);
    cfgs = json_object_get(json_object_get(lc, "params"), "configs");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(cfgs, 0), "R0_BLOCK")), 16384, "the grid comes first");
    cr_assert(strstr(json_string_value(json_object_get(lc, "rationale")), ".best_config") == NULL);
    json_decref(lc);
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
