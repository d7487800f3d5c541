/* Typed plans (src/agents/kplan.c): the executor context's "plan" object as the built-in planner
 * writes it (a rewrite with its family's variants, a launch configuration) and as an LLM
 * planner may write it (bare block sizes, an older "num_warps" list, unknown directions,
 * malformed entries), read into the struct the built-in executor and the families use. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/kplan.h"
#include "testutil.h"

static json_t *parse(const char *s) {
    json_error_t je;
    json_t *j = json_loads(s, 0, &je);
    cr_assert(j, "bad JSON in the test: %s", je.text);
    return j;
}

Test(kplan, directions) {
    static const struct {
        const char *json;
        kplan_dir dir;
    } cases[] = {{"{\"direction\":\"launch_config\"}", KP_LAUNCH_CONFIG},
                 {"{\"direction\":\"rewrite\"}", KP_REWRITE},
                 {"{\"direction\":\"one_pass\"}", KP_ONE_PASS},
                 {"{\"direction\":\"split\"}", KP_OTHER},
                 {"{\"direction\":7}", KP_NONE},
                 {"{}", KP_NONE}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *j = parse(cases[i].json);
        kplan p;
        cr_assert_eq(kplan_read(j, &p), 0);
        cr_expect_eq(p.dir, cases[i].dir, "%s: %d", cases[i].json, p.dir);
        cr_expect_eq(p.tmpl, KF_NONE);
        cr_expect_eq(p.nvar, 0);
        cr_expect_eq(p.ncfg, 0);
        kplan_free(&p);
        json_decref(j);
    }
    kplan p;
    json_t *a = json_array();
    cr_expect_eq(kplan_read(a, &p), -1, "not an object");
    cr_expect_eq(p.dir, KP_NONE);
    kplan_free(&p);
    kplan_free(&p); /* twice is harmless */
    kplan_free(NULL);
    json_decref(a);
}

/* The built-in planner's own rewrite plan for a kernel: every variant of its family read with
 * the fields the family uses. */
Test(kplan, rewrite_variants_as_the_planner_writes_them) {
    json_t *j = parse(
        "{\"direction\":\"rewrite\",\"params\":{\"template\":\"row_softmax_stats\",\"variants\":["
        "{\"num_warps\":8,\"chunk\":4096,\"rows\":4},{\"num_warps\":16,\"chunk\":8192},"
        "7,{\"seg\":16384,\"num_warps\":32,\"nsub\":3,\"sub\":2048,\"r0_block\":1024},"
        "{\"bh\":8,\"bw\":64,\"odc\":2,\"nsplit\":4,\"sb\":16,\"cb\":64,\"ib\":32,\"block_i\":16,\"block_s\":2}]}}");
    kplan p;
    cr_assert_eq(kplan_read(j, &p), 0);
    cr_expect_eq(p.dir, KP_REWRITE);
    cr_expect_eq(p.tmpl, KF_ROW_SOFTMAX_STATS);
    cr_expect_str_eq(p.tmpl_name, "row_softmax_stats");
    cr_expect(p.has_variants);
    cr_assert_eq(p.nvar, 4, "the entry that is not an object is skipped");
    cr_expect(p.var[0].num_warps == 8 && p.var[0].chunk == 4096 && p.var[0].rows == 4 && p.var[0].has_rows);
    cr_expect(p.var[1].num_warps == 16 && p.var[1].rows == 1 && !p.var[1].has_rows, "rows defaults to 1");
    cr_expect(p.var[2].seg == 16384 && p.var[2].nsub == 3 && p.var[2].sub == 2048 && p.var[2].r0_block == 1024);
    const kp_variant *v = &p.var[3];
    cr_expect(v->bh == 8 && v->bw == 64 && v->odc == 2 && v->nsplit == 4 && v->sb == 16 && v->cb == 64 && v->ib == 32 &&
              v->block_i == 16 && v->block_s == 2 && v->num_warps == 0);
    kplan_free(&p);
    json_decref(j);
    /* the planner's variants function, read back */
    json_t *kern = json_pack("{s:{s:I, s:I}}", "numels", "xnumel", 8, "r0_numel", (json_int_t)1 << 24);
    json_t *vars = builtin_rewrite_variants(KF_SPLIT_MORE, tu_kf(kern));
    json_t *plan =
        json_pack("{s:s, s:{s:s, s:o}}", "direction", "rewrite", "params", "template", "split_more", "variants", vars);
    cr_assert_eq(kplan_read(plan, &p), 0);
    cr_assert_eq(p.nvar, json_array_size(vars));
    cr_assert_gt(p.nvar, 0);
    for (size_t i = 0; i < p.nvar; i++) {
        json_t *w = json_array_get(vars, i);
        cr_expect_eq(p.var[i].nsub, json_integer_value(json_object_get(w, "nsub")));
        cr_expect_eq(p.var[i].sub, json_integer_value(json_object_get(w, "sub")));
        cr_expect_eq(p.var[i].r0_block, json_integer_value(json_object_get(w, "r0_block")));
        cr_expect_eq(p.var[i].num_warps, json_integer_value(json_object_get(w, "num_warps")));
    }
    kplan_free(&p);
    json_decref(plan);
    json_decref(kern);
}

/* An older plan's warps list becomes one variant each; variants win over it when both are
 * there. */
Test(kplan, num_warps_list) {
    json_t *j =
        parse("{\"direction\":\"rewrite\",\"params\":{\"template\":\"row_softmax\",\"num_warps\":[4,8,\"x\"]}}");
    kplan p;
    cr_assert_eq(kplan_read(j, &p), 0);
    cr_expect(!p.has_variants);
    cr_assert_eq(p.nvar, 3);
    cr_expect(p.var[0].num_warps == 4 && p.var[1].num_warps == 8 && p.var[2].num_warps == 0);
    cr_expect(p.var[0].rows == 1 && !p.var[0].has_rows);
    kplan_free(&p);
    json_decref(j);
    j = parse("{\"params\":{\"num_warps\":[4,8],\"variants\":[{\"num_warps\":32}]}}");
    cr_assert_eq(kplan_read(j, &p), 0);
    cr_assert_eq(p.nvar, 1);
    cr_expect_eq(p.var[0].num_warps, 32);
    kplan_free(&p);
    json_decref(j);
}

Test(kplan, launch_configs_and_bare_block_sizes) {
    json_t *j = parse("{\"direction\":\"launch_config\",\"params\":{\"configs\":[{\"XBLOCK\":1,\"R0_BLOCK\":4096,"
                      "\"num_warps\":16,\"num_stages\":1},\"x\",{\"XBLOCK\":64,\"YBLOCK\":32,\"num_warps\":4}]}}");
    kplan p;
    cr_assert_eq(kplan_read(j, &p), 0);
    cr_expect(p.has_configs);
    cr_assert_eq(p.ncfg, 2);
    const kp_config *c = &p.cfg[0];
    cr_expect(c->xblock == 1 && c->r0_block == 4096 && c->num_warps == 16 && c->num_stages == 1 && c->has_r0_block &&
              !c->has_yblock);
    cr_expect(c->raw == json_array_get(json_object_get(json_object_get(j, "params"), "configs"), 0), "borrowed");
    c = &p.cfg[1];
    cr_expect(c->xblock == 64 && c->yblock == 32 && c->has_yblock && !c->has_r0_block && !c->has_num_stages);
    cr_expect(!p.bare.has_xblock && !p.bare.has_num_warps);
    kplan_free(&p);
    json_decref(j);
    /* an LLM planner's block sizes in params itself */
    j = parse("{\"direction\":\"tile\",\"params\":{\"XBLOCK\":8,\"num_warps\":4}}");
    cr_assert_eq(kplan_read(j, &p), 0);
    cr_expect_eq(p.dir, KP_OTHER);
    cr_expect(!p.has_configs && p.ncfg == 0);
    cr_expect(p.bare.has_xblock && p.bare.xblock == 8 && p.bare.has_num_warps && p.bare.num_warps == 4);
    cr_expect(!p.bare.has_r0_block && !p.bare.has_yblock && !p.bare.has_num_stages);
    kplan_free(&p);
    json_decref(j);
}
