/* pylit_find.c — see pylit.h: token-level lookups (pylit_match, pylit_find_kwarg,
 * pylit_find_arg, pylit_find_key) that locate an argument or dict entry inside a large literal
 * without building its value tree. They allocate nothing. */
#include <string.h>

#include "artifact/pylit.h"

size_t pylit_match(const char *src, const pytok *toks, size_t ntok, size_t open) {
    int depth = 0;
    for (size_t i = open; i < ntok && toks[i].kind != PYT_END; i++) {
        if (pytok_opens(src, &toks[i])) depth++;
        else if (pytok_closes(src, &toks[i]) && --depth == 0) return i;
    }
    return ntok;
}

/* Calls f(first, i0, i1) for each top-level item [i0, i1) of the bracketed form at `open`
 * until it returns nonzero; returns that value (0 when none did). */
typedef int (*item_fn)(const char *src, const pytok *toks, size_t i0, size_t i1, void *ctx);
static int each_item(const char *src, const pytok *toks, size_t ntok, size_t open, item_fn f,
                     void *ctx) {
    int depth = 0;
    size_t start = open + 1;
    for (size_t i = open + 1; i < ntok && toks[i].kind != PYT_END; i++) {
        const pytok *t = &toks[i];
        if (t->kind != PYT_OP || t->len != 1) continue;
        char c = src[t->off];
        if (c == '(' || c == '[' || c == '{') { depth++; continue; }
        int close = c == ')' || c == ']' || c == '}';
        if (close && depth > 0) { depth--; continue; }
        if (depth == 0 && (close || c == ',')) {
            if (i > start) {
                int r = f(src, toks, start, i, ctx);
                if (r) return r;
            }
            if (close) return 0;
            start = i + 1;
        }
    }
    return 0;
}

typedef struct find_ctx {
    const char *name;
    size_t want, seen;
    size_t v0, v1;
} find_ctx;

static int kw_item(const char *src, const pytok *toks, size_t i0, size_t i1, void *vc) {
    find_ctx *c = vc;
    if (i1 - i0 >= 3 && toks[i0].kind == PYT_NAME && pytok_is_op(src, &toks[i0 + 1], "=") &&
        pytok_is(src, &toks[i0], c->name)) {
        c->v0 = i0 + 2;
        c->v1 = i1;
        return 1;
    }
    return 0;
}

static int pos_item(const char *src, const pytok *toks, size_t i0, size_t i1, void *vc) {
    find_ctx *c = vc;
    if (i1 - i0 >= 2 && toks[i0].kind == PYT_NAME && pytok_is_op(src, &toks[i0 + 1], "="))
        return -1;  /* keyword arguments: no more positional ones */
    if (c->seen++ == c->want) {
        c->v0 = i0;
        c->v1 = i1;
        return 1;
    }
    return 0;
}

static int key_item(const char *src, const pytok *toks, size_t i0, size_t i1, void *vc) {
    find_ctx *c = vc;
    const pytok *k = &toks[i0];
    if (i1 - i0 < 3 || k->kind != PYT_STRING || !pytok_is_op(src, &toks[i0 + 1], ":")) return 0;
    const char *q = src + k->off;
    size_t n = k->len, nl = strlen(c->name);
    if (n < 2 || (q[0] != '\'' && q[0] != '"')) return 0;   /* prefixed or odd: not a plain key */
    size_t ql = (n >= 6 && q[1] == q[0] && q[2] == q[0]) ? 3 : 1;
    if (n != nl + 2 * ql || memcmp(q + ql, c->name, nl)) return 0;
    c->v0 = i0 + 2;
    c->v1 = i1;
    return 1;
}

int pylit_find_kwarg(const char *src, const pytok *toks, size_t ntok, size_t open,
                     const char *name, size_t *v0, size_t *v1) {
    find_ctx c = {.name = name};
    if (open >= ntok || !pytok_is_op(src, &toks[open], "(")) return 0;
    if (each_item(src, toks, ntok, open, kw_item, &c) != 1) return 0;
    *v0 = c.v0;
    *v1 = c.v1;
    return 1;
}

int pylit_find_arg(const char *src, const pytok *toks, size_t ntok, size_t open, size_t i,
                   size_t *v0, size_t *v1) {
    find_ctx c = {.want = i};
    if (open >= ntok || !pytok_is_op(src, &toks[open], "(")) return 0;
    if (each_item(src, toks, ntok, open, pos_item, &c) != 1) return 0;
    *v0 = c.v0;
    *v1 = c.v1;
    return 1;
}

int pylit_find_key(const char *src, const pytok *toks, size_t ntok, size_t open,
                   const char *key, size_t *v0, size_t *v1) {
    find_ctx c = {.name = key};
    if (open >= ntok || !pytok_is_op(src, &toks[open], "{")) return 0;
    if (each_item(src, toks, ntok, open, key_item, &c) != 1) return 0;
    *v0 = c.v0;
    *v1 = c.v1;
    return 1;
}

