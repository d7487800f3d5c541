/* krow.c — the optimize kernel table (krow.h). */
#include "optimize/krow.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

krow *krows_add(krows *t, const char *name) {
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 8;
        t->v = krealloc(t->v, t->cap * sizeof *t->v);
    }
    krow *r = &t->v[t->n++];
    memset(r, 0, sizeof *r);
    r->name = kstrdup(name ? name : "?");
    return r;
}

krow *krows_find(const krows *t, const char *name) {
    for (size_t i = 0; name && i < t->n; i++)
        if (!strcmp(t->v[i].name, name)) return &t->v[i];
    return NULL;
}

vrow *krows_add_vendor(krows *t, const char *name, double time_ms, double share) {
    if (t->nlib == t->libcap) {
        t->libcap = t->libcap ? 2 * t->libcap : 4;
        t->lib = krealloc(t->lib, t->libcap * sizeof *t->lib);
    }
    vrow *r = &t->lib[t->nlib++];
    memset(r, 0, sizeof *r);
    r->name = kstrdup(name ? name : "?");
    r->time_ms = time_ms;
    r->share = share;
    return r;
}

vrow *krows_find_vendor(const krows *t, const char *name) {
    for (size_t i = 0; name && i < t->nlib; i++)
        if (!strcmp(t->lib[i].name, name)) return &t->lib[i];
    return NULL;
}

void krow_set(char **s, const char *v) {
    char *n = v ? kstrdup(v) : NULL;
    free(*s);
    *s = n;
}

void krow_setf(char **s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    kbuf b = KBUF_INIT;
    kbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    free(*s);
    *s = kbuf_steal(&b);
}

const char *krow_status_name(krow_status s) {
    switch (s) {
    case KROW_OPTIMIZED: return "optimized";
    case KROW_IN_REGION: return "in_region";
    case KROW_KEPT: break;
    }
    return "kept";
}

static json_t *strlist_json(const art_strlist *l) {
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++) json_array_append_new(a, json_string(l->v[i]));
    return a;
}

json_t *krows_to_json(const krows *t) {
    json_t *arr = json_array();
    for (size_t i = 0; i < t->n; i++) {
        const krow *r = &t->v[i];
        json_t *o = json_pack("{s:s, s:f, s:f}", "name", r->name, "time_ms", r->time_ms, "share", r->share);
        if (r->kernel_kind) json_object_set_new(o, "kernel_kind", json_string(r->kernel_kind));
        if (r->has_frac) json_object_set_new(o, "frac_of_ceiling", json_real(r->frac_of_ceiling));
        if (r->cls) json_object_set_new(o, "class", json_string(r->cls));
        if (r->has_bytes) json_object_set_new(o, "bytes", json_real(r->bytes));
        json_object_set_new(o, "status", json_string(krow_status_name(r->status)));
        if (r->members.n) json_object_set_new(o, "members", strlist_json(&r->members));
        if (r->has_aten_ops) json_object_set_new(o, "aten_ops", strlist_json(&r->aten_ops));
        if (r->ncu) json_object_set(o, "ncu", r->ncu);
        if (r->change) json_object_set_new(o, "change", json_string(r->change));
        if (r->speedup) json_object_set(o, "speedup", r->speedup);
        if (r->kernel_ms_after > 0) json_object_set_new(o, "kernel_ms_after", json_real(r->kernel_ms_after));
        if (r->kernel_ms_before > 0) json_object_set_new(o, "kernel_ms_before", json_real(r->kernel_ms_before));
        if (r->search_end) json_object_set_new(o, "search_end", json_string(r->search_end));
        if (r->searched) {
            json_object_set_new(o, "tried", json_integer(r->tried));
            json_object_set_new(o, "refused_by_gate",
                                json_pack("{s:i, s:i, s:i, s:i}", "1", r->refused[1], "2", r->refused[2], "3",
                                          r->refused[3], "4", r->refused[4]));
            /* gate 4's refusals of candidates whose GPU time passed: their launches' host work */
            if (r->host_slower) json_object_set_new(o, "refused_as_called", json_integer(r->host_slower));
        }
        if (r->after_ms > 0) json_object_set_new(o, "after_ms", json_real(r->after_ms));
        if (r->tuned.num_warps) json_object_set_new(o, "tuned_config", tuned_config_json(&r->tuned));
        if (r->why) json_object_set_new(o, "why", json_string(r->why));
        json_array_append_new(arr, o);
    }
    return arr;
}

json_t *krows_vendor_json(const krows *t) {
    json_t *arr = json_array();
    for (size_t i = 0; i < t->nlib; i++) {
        const vrow *r = &t->lib[i];
        json_t *o = json_pack("{s:s, s:f, s:f}", "name", r->name, "time_ms", r->time_ms, "share", r->share);
        if (r->replaced_by.n) json_object_set_new(o, "replaced_by", strlist_json(&r->replaced_by));
        json_array_append_new(arr, o);
    }
    return arr;
}

void krows_free(krows *t) {
    for (size_t i = 0; i < t->n; i++) {
        krow *r = &t->v[i];
        free(r->name);
        free(r->kernel_kind);
        free(r->cls);
        free(r->why);
        free(r->search_end);
        free(r->change);
        json_decref(r->speedup);
        json_decref(r->ncu);
        art_strlist_free(&r->members);
        art_strlist_free(&r->aten_ops);
    }
    for (size_t i = 0; i < t->nlib; i++) {
        free(t->lib[i].name);
        art_strlist_free(&t->lib[i].replaced_by);
    }
    free(t->v);
    free(t->lib);
    memset(t, 0, sizeof *t);
}
