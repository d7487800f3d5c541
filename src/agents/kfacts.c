/* kfacts.c — the planner / executor context's "kernel" object read into a kfacts (kfacts.h). */
#include "agents/kfacts.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static const char *str_of(const json_t *o, const char *key) { return json_string_value(json_object_get(o, key)); }

/* The strings of JSON array `arr` (non-strings skipped) into *l (the array allocated even when
 * empty: kcalloc takes 0). */
static void strs_read(const json_t *arr, kf_strs *l) {
    l->n = 0;
    l->v = kcalloc(json_array_size(arr), sizeof *l->v);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) if (json_is_string(v)) l->v[l->n++] = json_string_value(v);
}

static art_kernel_kind kind_parse(const char *s) {
    for (int k = ART_K_POINTWISE; s && k <= ART_K_REGION; k++)
        if (!strcmp(s, art_kernel_kind_name((art_kernel_kind)k))) return (art_kernel_kind)k;
    return ART_K_OTHER;
}

static art_role role_parse(const char *s) {
    for (int r = ART_ROLE_IN; s && r <= ART_ROLE_CONSTEXPR; r++)
        if (!strcmp(s, art_role_name((art_role)r))) return (art_role)r;
    return ART_ROLE_IN;
}

static void params_read(const json_t *sig, kfacts *k) {
    k->params = kcalloc(json_array_size(sig), sizeof *k->params);
    size_t i;
    json_t *p;
    json_array_foreach(sig, i, p) {
        const char *n = str_of(p, "name");
        if (!n) continue;
        const char *t = str_of(p, "type");
        k->params[k->nparams++] = (kf_param){n, t ? t : "", role_parse(str_of(p, "role"))};
    }
}

static void numels_read(const json_t *o, kfacts *k) {
    k->numels = kcalloc(json_object_size(o), sizeof *k->numels);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) if (json_is_integer(v)) k->numels[k->nnumels++] =
        (kf_numel){key, json_integer_value(v)};
}

/* Shapes of 1..KF_MAX_DIMS integers; any other value leaves the parameter without a shape. */
static void shapes_read(const json_t *o, kfacts *k) {
    k->shapes = kcalloc(json_object_size(o), sizeof *k->shapes);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        size_t n = json_array_size(v);
        if (!json_is_array(v) || n == 0 || n > KF_MAX_DIMS) continue;
        kf_shape *s = &k->shapes[k->nshapes];
        s->param = key;
        s->ndims = (int)n;
        int ok = 1;
        for (size_t d = 0; d < n; d++) {
            ok &= json_is_integer(json_array_get(v, d));
            s->d[d] = json_integer_value(json_array_get(v, d));
        }
        k->nshapes += ok;
    }
}

static void members_read(const json_t *arr, kfacts *k) {
    k->members = kcalloc(json_array_size(arr), sizeof *k->members);
    size_t i;
    json_t *m;
    json_array_foreach(arr, i, m) {
        if (!json_is_object(m)) continue;
        kf_member *x = &k->members[k->nmembers++];
        x->name = str_of(m, "name");
        x->source = str_of(m, "source");
        strs_read(json_object_get(m, "aten_ops"), &x->aten_ops);
        strs_read(json_object_get(m, "graph_fragment"), &x->fragment);
    }
}

static int int_of(const json_t *o, const char *key) { return (int)json_integer_value(json_object_get(o, key)); }

static void tuned_read(const json_t *t, kf_tuned *out) {
    memset(out, 0, sizeof *out);
    if (!json_is_object(t)) return;
    *out = (kf_tuned){1,
                      int_of(t, "XBLOCK"),
                      int_of(t, "R0_BLOCK"),
                      int_of(t, "YBLOCK"),
                      int_of(t, "num_warps"),
                      int_of(t, "num_stages"),
                      json_is_true(json_object_get(t, "found_by_coordesc"))};
}

int kfacts_read(const json_t *kernel, kfacts *out) {
    memset(out, 0, sizeof *out);
    out->kind = ART_K_OTHER;
    if (!json_is_object(kernel)) return -1;
    out->name = str_of(kernel, "name");
    out->kind = kind_parse(str_of(kernel, "kind"));
    out->heuristic = str_of(kernel, "heuristic");
    out->grid_type = str_of(kernel, "grid_type");
    out->persistent = json_is_true(json_object_get(kernel, "persistent"));
    params_read(json_object_get(kernel, "signature"), out);
    strs_read(json_object_get(kernel, "runtime_params"), &out->runtime);
    strs_read(json_object_get(kernel, "constexprs"), &out->constexprs);
    numels_read(json_object_get(kernel, "numels"), out);
    shapes_read(json_object_get(kernel, "shapes"), out);
    const json_t *m = json_object_get(kernel, "masked");
    out->masked_x = json_is_true(json_object_get(m, "x"));
    out->masked_r0 = json_is_true(json_object_get(m, "r0"));
    out->masked_y = json_is_true(json_object_get(m, "y"));
    strs_read(json_object_get(kernel, "aten_ops"), &out->aten_ops);
    strs_read(json_object_get(kernel, "graph_fragment"), &out->fragment);
    members_read(json_object_get(kernel, "members"), out);
    out->vendor_call = str_of(kernel, "vendor_call");
    out->jit_source = str_of(kernel, "jit_source");
    out->source = str_of(kernel, "source");
    tuned_read(json_object_get(kernel, "tuned_config"), &out->tuned);
    const json_t *sms = json_object_get(kernel, "sm_count");
    if (json_is_integer(sms) && json_integer_value(sms) > 0) out->sms = json_integer_value(sms);
    return 0;
}

void kfacts_free(kfacts *k) {
    if (!k) return;
    for (size_t i = 0; i < k->nmembers; i++) {
        free(k->members[i].aten_ops.v);
        free(k->members[i].fragment.v);
    }
    free(k->members);
    free(k->params);
    free(k->runtime.v);
    free(k->constexprs.v);
    free(k->numels);
    free(k->shapes);
    free(k->aten_ops.v);
    free(k->fragment.v);
    memset(k, 0, sizeof *k);
    k->kind = ART_K_OTHER;
}

long long kfacts_numel(const kfacts *k, const char *name) {
    for (size_t i = 0; name && i < k->nnumels; i++)
        if (!strcmp(k->numels[i].name, name)) return k->numels[i].v;
    return 0;
}

const kf_shape *kfacts_shape(const kfacts *k, const char *name) {
    for (size_t i = 0; name && i < k->nshapes; i++)
        if (!strcmp(k->shapes[i].param, name)) return &k->shapes[i];
    return NULL;
}

const char *kfacts_param_type(const kfacts *k, const char *name) {
    for (size_t i = 0; name && i < k->nparams; i++)
        if (!strcmp(k->params[i].name, name)) return k->params[i].type;
    return "";
}

const char *kfacts_runtime(const kfacts *k, size_t i) { return i < k->runtime.n ? k->runtime.v[i] : NULL; }

int kf_strs_has(const kf_strs *l, const char *s) {
    for (size_t i = 0; s && i < l->n; i++)
        if (!strcmp(l->v[i], s)) return 1;
    return 0;
}

const char *kf_strs_find(const kf_strs *l, const char *needle) {
    for (size_t i = 0; needle && i < l->n; i++)
        if (strstr(l->v[i], needle)) return l->v[i];
    return NULL;
}
