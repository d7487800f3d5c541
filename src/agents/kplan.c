/* kplan.c — a plan object read once into a kplan (kplan.h). */
#include "agents/kplan.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static long long int_of(const json_t *o, const char *key) { return json_integer_value(json_object_get(o, key)); }

static kplan_dir dir_parse(const char *s) {
    if (!s) return KP_NONE;
    if (!strcmp(s, "launch_config")) return KP_LAUNCH_CONFIG;
    if (!strcmp(s, "rewrite")) return KP_REWRITE;
    if (!strcmp(s, "one_pass")) return KP_ONE_PASS;
    return KP_OTHER;
}

/* The integer fields of a variant and their keys (rows apart: it defaults to 1). */
static const struct {
    const char *key;
    size_t off;
} VARIANT_KEYS[] = {
    {"num_warps", offsetof(kp_variant, num_warps)},
    {"block_i", offsetof(kp_variant, block_i)},
    {"block_s", offsetof(kp_variant, block_s)},
    {"chunk", offsetof(kp_variant, chunk)},
    {"cb", offsetof(kp_variant, cb)},
    {"ib", offsetof(kp_variant, ib)},
    {"reread", offsetof(kp_variant, reread)},
    {"r0_block", offsetof(kp_variant, r0_block)},
    {"sub", offsetof(kp_variant, sub)},
    {"nsub", offsetof(kp_variant, nsub)},
    {"seg", offsetof(kp_variant, seg)},
    {"bh", offsetof(kp_variant, bh)},
    {"bw", offsetof(kp_variant, bw)},
    {"odc", offsetof(kp_variant, odc)},
    {"nsplit", offsetof(kp_variant, nsplit)},
    {"sb", offsetof(kp_variant, sb)},
};

static void variant_read(const json_t *v, kp_variant *x) {
    memset(x, 0, sizeof *x);
    for (size_t i = 0; i < sizeof VARIANT_KEYS / sizeof *VARIANT_KEYS; i++)
        *(long long *)((char *)x + VARIANT_KEYS[i].off) = int_of(v, VARIANT_KEYS[i].key);
    x->has_rows = json_object_get(v, "rows") != NULL;
    x->rows = x->has_rows ? int_of(v, "rows") : 1;
}

/* A configuration's keys are Inductor's spelling (XBLOCK, R0_BLOCK, YBLOCK, num_warps, ...). */
static void config_read(const json_t *c, kp_config *x) {
    memset(x, 0, sizeof *x);
    x->raw = c;
    x->has_xblock = json_object_get(c, "XBLOCK") != NULL;
    x->has_r0_block = json_object_get(c, "R0_BLOCK") != NULL;
    x->has_yblock = json_object_get(c, "YBLOCK") != NULL;
    x->has_num_warps = json_object_get(c, "num_warps") != NULL;
    x->has_num_stages = json_object_get(c, "num_stages") != NULL;
    x->xblock = int_of(c, "XBLOCK");
    x->r0_block = int_of(c, "R0_BLOCK");
    x->yblock = int_of(c, "YBLOCK");
    x->num_warps = int_of(c, "num_warps");
    x->num_stages = int_of(c, "num_stages");
    x->reverse_last = json_is_true(json_object_get(c, "reverse_last_pass"));
}

int kplan_read(const json_t *plan, kplan *out) {
    memset(out, 0, sizeof *out);
    out->tmpl = KF_NONE;
    if (!json_is_object(plan)) return -1;
    out->direction = json_string_value(json_object_get(plan, "direction"));
    out->dir = dir_parse(out->direction);
    const json_t *params = json_object_get(plan, "params");
    out->tmpl_name = json_string_value(json_object_get(params, "template"));
    out->tmpl = kfamily_parse(out->tmpl_name);
    config_read(params, &out->bare);
    out->bare.raw = NULL;
    size_t i;
    const json_t *v;
    const json_t *vars = json_object_get(params, "variants");
    out->has_variants = json_is_array(vars);
    if (out->has_variants) {
        out->var = kcalloc(json_array_size(vars) + 1, sizeof *out->var);
        json_array_foreach(vars, i, v) if (json_is_object(v)) variant_read(v, &out->var[out->nvar++]);
    } else {
        /* an older plan's "num_warps": [..], one variant per entry */
        const json_t *nws = json_object_get(params, "num_warps");
        out->var = kcalloc(json_array_size(nws) + 1, sizeof *out->var);
        json_array_foreach(nws, i, v) {
            kp_variant *x = &out->var[out->nvar++];
            memset(x, 0, sizeof *x);
            x->num_warps = json_integer_value(v);
            x->rows = 1;
        }
    }
    const json_t *cfgs = json_object_get(params, "configs");
    out->has_configs = json_is_array(cfgs);
    out->cfg = kcalloc(json_array_size(cfgs) + 1, sizeof *out->cfg);
    json_array_foreach(cfgs, i, v) if (json_is_object(v)) config_read(v, &out->cfg[out->ncfg++]);
    return 0;
}

void kplan_free(kplan *p) {
    if (!p) return;
    free(p->var);
    free(p->cfg);
    p->var = NULL;
    p->cfg = NULL;
    p->nvar = p->ncfg = 0;
}
