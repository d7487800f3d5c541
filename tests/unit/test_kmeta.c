/* The sandbox's compile metadata checked against what kopt asked (gates/kmeta.h), on Triton
 * 3.6's own metadata of an sm_90 compile (tests/fixtures/kmeta/, recorded without a GPU), and on
 * one-field edits of it that a candidate's code in the sandbox could make. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "gates/kmeta.h"
#include "testutil.h"

static const char *FX = "tests/fixtures/kmeta/triton36_sm90_k.json";

/* The fixture with field k set to v (JSON text; NULL deletes it), as text (caller frees). */
static char *edited(const char *k, const char *v) {
    size_t n = 0;
    char *text = tu_read_fixture(FX, &n);
    json_t *m = json_loadb(text, n, 0, NULL);
    free(text);
    cr_assert(json_is_object(m));
    if (v) json_object_set_new(m, k, json_loads(v, JSON_DECODE_ANY, NULL));
    else json_object_del(m, k);
    char *s = json_dumps(m, 0);
    json_decref(m);
    return s;
}

Test(kmeta, triton_metadata_of_what_was_asked_passes) {
    size_t n = 0;
    char *text = tu_read_fixture(FX, &n);
    kmeta m;
    kerr e = {0};
    cr_assert_eq(kmeta_check(text, n, "_k", 4, 0, 90, &m, &e), 0, "%s", e.msg);
    cr_expect_str_eq(m.name, "_k");
    cr_expect_eq(m.num_warps, 4);
    cr_expect_eq(m.num_stages, 3);
    cr_expect_eq(m.shared, 0);
    cr_expect_eq(kmeta_check(text, n, "_k", 4, 3, 90, &m, &e), 0, "%s", e.msg);
    /* kopt's copy: the loader's fields, the checked values, nothing of the sandbox's text */
    char *mine = kmeta_json(&m);
    json_t *o = json_loads(mine, 0, NULL);
    cr_assert(json_is_object(o));
    cr_expect_eq(json_object_size(o), 15);
    cr_expect_str_eq(json_string_value(json_object_get(o, "name")), "_k");
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(o, "target"), "arch")), 90);
    cr_expect(json_is_false(json_object_get(o, "launch_pdl")));
    cr_expect_null(json_object_get(o, "extern_libs"));
    /* and it passes its own check */
    cr_expect_eq(kmeta_check(mine, strlen(mine), "_k", 4, 3, 90, &m, &e), 0, "%s", e.msg);
    json_decref(o);
    free(mine);
    /* what was not asked */
    cr_expect_eq(kmeta_check(text, n, "_other", 4, 0, 90, &m, &e), KOPT_E_CANDIDATE);
    cr_expect_eq(kmeta_check(text, n, "_k", 8, 0, 90, &m, &e), KOPT_E_CANDIDATE);
    cr_expect_eq(kmeta_check(text, n, "_k", 4, 2, 90, &m, &e), KOPT_E_CANDIDATE);
    cr_expect_eq(kmeta_check(text, n, "_k", 4, 0, 80, &m, &e), KOPT_E_CANDIDATE);
    free(text);
}

Test(kmeta, edits_a_sandboxed_candidate_could_make_are_refused) {
    static const struct {
        const char *k, *v, *why;
    } edits[] = {
        {"name", "\"_k2\"", "named"},
        {"name", NULL, "named"},
        {"num_warps", "8", "warps"},
        {"num_warps", "\"4\"", "warps"},
        {"num_stages", "0", "stages"},
        {"num_ctas", "2", "CTAs"},
        {"target", "{\"backend\": \"hip\", \"arch\": 90, \"warp_size\": 32}", "target"},
        {"target", "{\"backend\": \"cuda\", \"arch\": 100, \"warp_size\": 32}", "target"},
        {"target", "{\"backend\": \"cuda\", \"arch\": 90, \"warp_size\": 64}", "target"},
        {"shared", "232449", "shared"},
        {"shared", "-1", "shared"},
        {"shared", NULL, "shared"},
        {"global_scratch_size", "256", "global_scratch_size"},
        {"profile_scratch_size", "64", "profile_scratch_size"},
        {"launch_cooperative_grid", "true", "launch_cooperative_grid"},
        {"launch_pdl", "true", "launch_pdl"},
        {"tensordesc_meta", "[{\"block\": 1}]", "tensordesc_meta"},
        {"tmem_size", "128", "tmem_size"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        char *t = edited(edits[i].k, edits[i].v);
        kmeta m;
        kerr e = {0};
        cr_expect_eq(kmeta_check(t, strlen(t), "_k", 4, 0, 90, &m, &e), KOPT_E_CANDIDATE, "%s = %s passed", edits[i].k,
                     edits[i].v ? edits[i].v : "(deleted)");
        cr_expect(strstr(e.msg, edits[i].why), "%s: %s", edits[i].k, e.msg);
        free(t);
    }
    /* the largest shared memory a block may use passes; not JSON, or too long, does not */
    char *t = edited("shared", "232448");
    kmeta m;
    kerr e = {0};
    cr_expect_eq(kmeta_check(t, strlen(t), "_k", 4, 0, 90, &m, &e), 0, "%s", e.msg);
    cr_expect_eq(kmeta_check(t, strlen(t) - 1, "_k", 4, 0, 90, &m, &e), KOPT_E_CANDIDATE);
    free(t);
    char *big = kmalloc(KMETA_TEXT_MAX + 2);
    memset(big, ' ', KMETA_TEXT_MAX + 1);
    big[0] = '{';
    big[KMETA_TEXT_MAX] = '}';
    big[KMETA_TEXT_MAX + 1] = 0;
    cr_expect_eq(kmeta_check(big, KMETA_TEXT_MAX + 1, "_k", 4, 0, 90, &m, &e), KOPT_E_CANDIDATE);
    cr_expect(strstr(e.msg, "larger"), "%s", e.msg);
    free(big);
}

/* kmeta_check's edges: the size limit, one value a key, a non-object, a name that fills kopt's
 * field, the stages asked or not; its messages name what was found; kopt's own copy. */
Test(kmeta, edges_messages_and_kopts_copy) {
    size_t n = 0;
    char *text = tu_read_fixture(FX, &n);
    kmeta m;
    kerr e = {0};
    /* padded with spaces to exactly the limit: read; one byte more: not */
    char *big = malloc(KMETA_TEXT_MAX + 2);
    memcpy(big, text, n);
    memset(big + n, ' ', KMETA_TEXT_MAX + 1 - n);
    cr_expect_eq(kmeta_check(big, KMETA_TEXT_MAX, "_k", 4, 0, 90, &m, &e), 0, "%s", e.msg);
    cr_expect_eq(kmeta_check(big, KMETA_TEXT_MAX + 1, "_k", 4, 0, 90, &m, &e), KOPT_E_CANDIDATE);
    free(big);
    /* a key twice (the checked value first, another after it): refused, whichever a reader keeps */
    char *dup = kasprintf("{\"num_warps\": 4, %s", text + 1);
    cr_expect_eq(kmeta_check(dup, strlen(dup), "_k", 4, 0, 90, &m, &e), KOPT_E_CANDIDATE);
    free(dup);
    cr_expect_eq(kmeta_check("[1]", 3, "_k", 4, 0, 90, &m, &e), KOPT_E_CANDIDATE);
    cr_expect(strstr(e.msg, "not a JSON object"), "%s", e.msg);
    /* what a missing field reads as, in the message */
    static const struct {
        const char *field, *says;
    } gone[] = {{"num_warps", "has 0 warps"},
                {"num_stages", "has 0 stages"},
                {"num_ctas", "asks for 0 CTAs"},
                {"shared", "(-1 bytes)"}};
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++) {
        char *t = edited(gone[i].field, NULL);
        cr_expect_eq(kmeta_check(t, strlen(t), "_k", 4, 0, 90, &m, &e), KOPT_E_CANDIDATE);
        cr_expect(strstr(e.msg, gone[i].says), "%s: %s", gone[i].field, e.msg);
        free(t);
    }
    /* a name of 127 characters fits kopt's field, 128 do not */
    char name[130];
    for (size_t len = sizeof m.name - 1; len <= sizeof m.name; len++) {
        memset(name, 'k', len);
        name[len] = 0;
        char *v = kasprintf("\"%s\"", name);
        char *t = edited("name", v);
        int rc = kmeta_check(t, strlen(t), name, 4, 0, 90, &m, &e);
        cr_expect_eq(rc, len < sizeof m.name ? 0 : KOPT_E_CANDIDATE, "a name of %zu characters: %s", len, e.msg);
        free(v), free(t);
    }
    /* one stage, none asked: fine; one asked, two compiled: refused */
    char *one = edited("num_stages", "1");
    cr_expect_eq(kmeta_check(one, strlen(one), "_k", 4, 0, 90, &m, &e), 0, "%s", e.msg);
    cr_expect_eq(m.num_stages, 1);
    free(one);
    char *two = edited("num_stages", "2");
    cr_expect_eq(kmeta_check(two, strlen(two), "_k", 4, 1, 90, &m, &e), KOPT_E_CANDIDATE);
    free(two);
    /* kopt's copy states the plain launch's fields with their values */
    cr_assert_eq(kmeta_check(text, n, "_k", 4, 0, 90, &m, &e), 0, "%s", e.msg);
    char *mine = kmeta_json(&m);
    json_t *o = json_loads(mine, 0, NULL);
    cr_expect_eq(json_integer_value(json_object_get(o, "tmem_size")), 0);
    cr_expect(json_is_integer(json_object_get(o, "tmem_size")));
    cr_expect_eq(json_integer_value(json_object_get(o, "global_scratch_align")), 1);
    cr_expect_eq(json_integer_value(json_object_get(o, "profile_scratch_align")), 1);
    cr_expect_eq(json_integer_value(json_object_get(o, "warp_size")), 32);
    cr_expect_eq(json_integer_value(json_object_get(json_object_get(o, "target"), "warp_size")), 32);
    json_decref(o);
    free(mine);
    free(text);
}
