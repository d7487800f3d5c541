/* tuned.c — Inductor's autotuned configuration of a kernel (tuned.h). */
#include "optimize/tuned.h"

#include <string.h>

/* An integer field in [lo, hi] (a power of two when pow2), 0 when absent; -1 when invalid. */
static int field(const json_t *o, const char *key, int lo, int hi, int pow2) {
    const json_t *v = json_object_get(o, key);
    if (!v) return 0;
    if (!json_is_integer(v)) return -1;
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi || (pow2 && (x & (x - 1)))) return -1;
    return (int)x;
}

int tuned_config_parse(const json_t *o, tuned_config *out) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(o)) return 0;
    int choices = field(o, "choices", 1, 1 << 20, 0);
    tuned_config t = {.xblock = field(o, "XBLOCK", 1, 4096, 1),
                      .yblock = field(o, "YBLOCK", 1, 4096, 1),
                      .r0_block = field(o, "R0_BLOCK", 1, 65536, 1),
                      .num_warps = field(o, "num_warps", 1, 32, 1),
                      .num_stages = field(o, "num_stages", 1, 8, 0),
                      .found_by_coordesc = json_is_true(json_object_get(o, "found_by_coordesc")),
                      .choices = choices > 0 ? choices : 1};
    if (t.xblock <= 0 || t.num_warps <= 0 || t.num_stages <= 0 || t.yblock < 0 || t.r0_block < 0 || choices < 0)
        return 0;
    *out = t;
    return 1;
}

json_t *tuned_config_json(const tuned_config *t) {
    json_t *o = json_pack("{s:i, s:i, s:i, s:b, s:i}", "XBLOCK", t->xblock, "num_warps", t->num_warps, "num_stages",
                          t->num_stages, "found_by_coordesc", t->found_by_coordesc, "choices", t->choices);
    if (t->r0_block) json_object_set_new(o, "R0_BLOCK", json_integer(t->r0_block));
    if (t->yblock) json_object_set_new(o, "YBLOCK", json_integer(t->yblock));
    return o;
}
