/* pylit_value.c — see pylit.h: reading pyval trees (kind names, dict / call lookups, dotted
 * names, source text, taking a string, JSON rendering). Accessors return borrowed pointers;
 * pyval_text and pyval_take_str return malloc'd strings owned by the caller; pyval_to_json a
 * new reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/pylit.h"

const char *pyv_kind_name(pyv_kind k) {
    static const char *const names[] = {"none", "bool", "int", "float", "str", "name", "attr",
                                        "call", "subscript", "neg", "tuple", "list", "set",
                                        "dict", "raw"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

const pyval *pyval_dict_get(const pyval *v, const char *key) {
    if (!v || v->kind != PYV_DICT) return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < v->n; i++) {
        const pyval *k = v->keys[i];
        if (k->kind == PYV_STR && k->slen == kl && !memcmp(k->s, key, kl)) return v->items[i];
    }
    return NULL;
}

const pyval *pyval_kwarg(const pyval *call, const char *name) {
    if (!call || call->kind != PYV_CALL) return NULL;
    for (size_t i = 0; i < call->nkw; i++)
        if (!strcmp(call->kwnames[i], name)) return call->kwvals[i];
    return NULL;
}

const pyval *pyval_arg(const pyval *call, size_t i) {
    if (!call || call->kind != PYV_CALL || i >= call->n) return NULL;
    return call->items[i];
}

int pyval_is_name(const pyval *v, const char *name) {
    return v && v->kind == PYV_NAME && !strcmp(v->s, name);
}

int pyval_dotted(const pyval *v, kbuf *out) {
    if (!v) return 0;
    if (v->kind == PYV_NAME) { kbuf_puts(out, v->s); return 1; }
    if (v->kind != PYV_ATTR) return 0;
    size_t mark = out->len;
    if (!pyval_dotted(v->base, out)) return 0;
    if (out->len == mark) return 0;
    kbuf_putc(out, '.');
    kbuf_puts(out, v->s);
    return 1;
}

char *pyval_text(const pyval *v, const char *src) { return kstrndup(src + v->off, v->len); }

char *pyval_take_str(pyval *v, size_t *len) {
    char *s = v->s;
    if (len) *len = v->slen;
    v->s = kstrdup("");
    v->slen = 0;
    return s;
}

static json_t *expr_json(const pyval *v, const char *src) {
    return json_pack("{s:s%}", "expr", src + v->off, v->len);
}

json_t *pyval_to_json(const pyval *v, const char *src) {
    json_t *j = NULL;
    switch (v->kind) {
    case PYV_NONE: return json_null();
    case PYV_BOOL: return json_boolean(v->i);
    case PYV_INT: return json_integer(v->i);
    case PYV_FLOAT: j = isfinite(v->f) ? json_real(v->f) : NULL; break;
    case PYV_STR: j = json_stringn(v->s, v->slen); break;
    case PYV_TUPLE: case PYV_LIST: case PYV_SET:
        j = json_array();
        for (size_t i = 0; i < v->n; i++) json_array_append_new(j, pyval_to_json(v->items[i], src));
        return j;
    case PYV_DICT:
        j = json_object();
        for (size_t i = 0; i < v->n; i++) {
            const pyval *k = v->keys[i];
            char num[32];
            const char *key = NULL;
            if (k->kind == PYV_STR && !memchr(k->s, '\0', k->slen)) key = k->s;
            else if (k->kind == PYV_INT) { snprintf(num, sizeof num, "%lld", k->i); key = num; }
            if (!key) { json_decref(j); j = NULL; break; }
            json_object_set_new(j, key, pyval_to_json(v->items[i], src));
        }
        break;
    default: break;
    }
    return j ? j : expr_json(v, src);
}
