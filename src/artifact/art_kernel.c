/* art_kernel.c — one `NAME = async_compile.triton('NAME', '''<source>''', ...)` statement:
 * its comment block, and what the Triton source's @triton_heuristics decorator says (kind,
 * signature and roles, mutated args, size hints, grid type). Also the comment-line helpers
 * that art_call.c uses. Ownership as in artifact.h: everything stored is owned by the kernel. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/art_internal.h"

/* ---------- comments ---------- */

art_span art_comment_before(const char *text, size_t lower, size_t start) {
    size_t p = start, first = start, end = start;
    int have = 0;
    while (p > lower) {
        size_t le = p - 1;  /* the newline that ends the previous line */
        const char *nl = le > lower ? memrchr(text + lower, '\n', le - lower) : NULL;
        size_t ls = nl ? (size_t)(nl - text) + 1 : lower;
        size_t q = ls;
        while (q < le && (text[q] == ' ' || text[q] == '\t')) q++;
        if (q >= le || text[q] == '\r') {        /* blank */
            if (have) break;
            p = ls;
            continue;
        }
        if (text[q] != '#') break;               /* code */
        if (!have) { end = le + 1; have = 1; }
        first = ls;
        p = ls;
    }
    return have ? (art_span){first, end - first} : (art_span){start, 0};
}

int art_comment_list(const char *line, size_t n, const char *marker, art_strlist *out) {
    size_t ml = strlen(marker);
    const char *m = memmem(line, n, marker, ml);
    if (!m) return 0;
    const char *p = m + ml, *end = line + n;
    const char *close = memchr(p, ']', (size_t)(end - p));
    if (!close) close = end;
    while (p < close) {
        const char *comma = memchr(p, ',', (size_t)(close - p));
        const char *ie = comma ? comma : close;
        const char *s = p, *e = ie;
        while (s < e && (*s == ' ' || *s == '\t')) s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
        if (e > s) art_strlist_push(out, kstrndup(s, (size_t)(e - s)));
        p = comma ? comma + 1 : close;
    }
    return 1;
}

/* Line [s, e) is a comment line: its text after the '#' and one space, else NULL. */
static const char *comment_body(const char *s, const char *e) {
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    if (s >= e || *s != '#') return NULL;
    s++;
    if (s < e && *s == ' ') s++;
    return s;
}

int art_comment_sources(const char *text, size_t from, size_t to, art_strlist *nodes,
                        art_strlist *aten) {
    int found = 0;
    const char *p = text + from, *end = text + to;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *b = comment_body(p, le);
        if (b && memmem(b, (size_t)(le - b), "Source Nodes: [", 15)) {
            art_strlist_free(nodes);
            art_strlist_free(aten);
            art_comment_list(b, (size_t)(le - b), "Source Nodes: [", nodes);
            art_comment_list(b, (size_t)(le - b), "Original ATen: [", aten);
            found = 1;
        }
        p = nl ? nl + 1 : end;
    }
    return found;
}

static int starts(const char *s, const char *e, const char *prefix) {
    size_t n = strlen(prefix);
    return (size_t)(e - s) >= n && !memcmp(s, prefix, n);
}

static void read_comment_block(art_kernel *k, const char *text) {
    const char *p = text + k->comment.off, *end = p + k->comment.len;
    int fragment = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (le > p && le[-1] == '\r') le--;
        const char *b = comment_body(p, le);
        p = nl ? nl + 1 : end;
        if (!b) continue;
        size_t bl = (size_t)(le - b);
        if (fragment && b < le && *b == ' ') {   /* "#   %node : ..." */
            const char *q = b;
            while (q < le && (*q == ' ' || *q == '\t')) q++;
            if (q < le) art_strlist_push(&k->graph_fragment, kstrndup(q, (size_t)(le - q)));
            continue;
        }
        if (starts(b, le, "kernel path:")) {
            const char *s = b + 12;
            while (s < le && *s == ' ') s++;
            free(k->kernel_path);
            k->kernel_path = kstrndup(s, (size_t)(le - s));
            fragment = 0;
        } else if (memmem(b, bl, "Source Nodes: [", 15) || memmem(b, bl, "Original ATen: [", 16)) {
            art_comment_list(b, bl, "Source Nodes: [", &k->source_nodes);
            art_comment_list(b, bl, "Original ATen: [", &k->aten_ops);
            fragment = 0;
        } else if (starts(b, le, "Graph fragment:")) {
            fragment = 1;
        } else if (starts(b, le, "Source node to ATen node mapping:")) {
            fragment = 0;
        } else if (fragment) {
            const char *s = b;
            while (s < le && (*s == ' ' || *s == '\t')) s++;
            if (s < le) art_strlist_push(&k->graph_fragment, kstrndup(s, (size_t)(le - s)));
        }
    }
}

/* ---------- the Triton source ---------- */

static art_kernel_kind kind_of_heuristic(const char *h) {
    if (!strcmp(h, "pointwise")) return ART_K_POINTWISE;
    if (!strcmp(h, "reduction") || !strcmp(h, "cooperative_reduction")) return ART_K_REDUCTION;
    if (!strcmp(h, "persistent_reduction")) return ART_K_PERSISTENT;
    if (!strcmp(h, "template")) return ART_K_TEMPLATE;
    if (!strcmp(h, "foreach")) return ART_K_FOREACH;
    return ART_K_OTHER;
}

static art_kernel_kind kind_of_name(const char *n) {
    if (!strncmp(n, "triton_poi_", 11)) return ART_K_POINTWISE;
    if (!strncmp(n, "triton_red_", 11)) return ART_K_REDUCTION;
    if (!strncmp(n, "triton_per_", 11)) return ART_K_PERSISTENT;
    if (!strncmp(n, "triton_tem_", 11)) return ART_K_TEMPLATE;
    if (!strncmp(n, "triton_for_", 11)) return ART_K_FOREACH;
    return ART_K_OTHER;
}

static int in_list(const art_strlist *l, const char *s) {
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) return 1;
    return 0;
}

static art_role role_of(const art_kernel *k, const char *name, const char *type) {
    if (type[0] == '*') {
        if (!strncmp(name, "in_out_ptr", 10) || in_list(&k->mutated, name)) return ART_ROLE_INOUT;
        if (!strncmp(name, "out_ptr", 7)) return ART_ROLE_OUT;
        return ART_ROLE_IN;
    }
    if (!strcmp(type, "constexpr")) return ART_ROLE_CONSTEXPR;
    return ART_ROLE_SCALAR;
}

/* Parse tokens [v0, v1) of the source as one value (NULL if that fails). */
static pyval *parse_value(const art_kernel *k, const pytok *t, size_t v0, size_t v1) {
    size_t pos = v0;
    pyval *v = NULL;
    kerr e2 = {0};
    if (pylit_parse_tokens(k->source, t, v1, &pos, &v, &e2) || pos != v1) {
        pyval_free(v);
        return NULL;
    }
    return v;
}

/* Token ranges of the decorator call's arguments that kopt reads. */
typedef struct deco_args {
    size_t sh0, sh1;        /* size_hints= (or the first positional argument) */
    size_t tm0, tm1;        /* triton_meta= */
    size_t im0, im1;        /* inductor_meta= */
} deco_args;

/* One pass over the call's top-level arguments (`open` is its '('; tokens end at n). */
static void find_deco_args(const art_kernel *k, const pytok *t, size_t n, size_t open, deco_args *d) {
    const char *s = k->source;
    int depth = 0, first = 1;
    size_t start = open + 1;
    for (size_t i = open + 1; i < n; i++) {
        if (t[i].kind != PYT_OP || t[i].len != 1) continue;
        char c = s[t[i].off];
        if (c == '(' || c == '[' || c == '{') { depth++; continue; }
        int close = c == ')' || c == ']' || c == '}';
        if (close && depth > 0) { depth--; continue; }
        if (depth != 0 || !(close || c == ',')) continue;
        if (i > start) {
            int kw = i - start >= 3 && t[start].kind == PYT_NAME && pytok_is_op(s, &t[start + 1], "=");
            if (kw && pytok_is(s, &t[start], "size_hints")) { d->sh0 = start + 2; d->sh1 = i; }
            else if (kw && pytok_is(s, &t[start], "triton_meta")) { d->tm0 = start + 2; d->tm1 = i; }
            else if (kw && pytok_is(s, &t[start], "inductor_meta")) { d->im0 = start + 2; d->im1 = i; }
            else if (!kw && first && !d->sh1) { d->sh0 = start; d->sh1 = i; }
            first = 0;
        }
        if (close) break;
        start = i + 1;
    }
}

/* The value of `key` in the dict literal spanning tokens [d0, d1). */
static pyval *dict_entry(const art_kernel *k, const pytok *t, size_t d0, size_t d1, const char *key) {
    size_t v0, v1;
    if (d1 <= d0 || !pylit_find_key(k->source, t, d1, d0, key, &v0, &v1)) return NULL;
    return parse_value(k, t, v0, v1);
}

/* Read what kopt needs from the decorator call whose '(' is t[open], without building the
 * whole (large) value tree: mutated_arg_names, grid_type, the signature, size_hints. */
static void read_decorator(art_kernel *k, const pytok *t, size_t n, size_t open) {
    deco_args d = {0};
    find_deco_args(k, t, n, open, &d);
    pyval *mut = dict_entry(k, t, d.im0, d.im1, "mutated_arg_names");
    if (mut && (mut->kind == PYV_LIST || mut->kind == PYV_TUPLE))
        for (size_t i = 0; i < mut->n; i++)
            if (mut->items[i]->kind == PYV_STR)
                art_strlist_push(&k->mutated, kstrdup(mut->items[i]->s));
    pyval_free(mut);
    pyval *gt = dict_entry(k, t, d.im0, d.im1, "grid_type");
    if (gt && gt->kind == PYV_STR) k->grid_type = kstrdup(gt->s);
    pyval_free(gt);

    pyval *sig = dict_entry(k, t, d.tm0, d.tm1, "signature");
    if (sig && sig->kind == PYV_DICT && sig->n) {
        k->params = kcalloc(sig->n, sizeof *k->params);
        for (size_t i = 0; i < sig->n; i++) {
            const pyval *key = sig->keys[i], *ty = sig->items[i];
            art_param *pa = &k->params[k->nparams];
            if (key->kind == PYV_STR) pa->name = kstrdup(key->s);
            else if (key->kind == PYV_INT) pa->name = kasprintf("%lld", key->i);
            else continue;
            pa->type = kstrdup(ty->kind == PYV_STR ? ty->s : "?");
            pa->role = role_of(k, pa->name, pa->type);
            k->nparams++;
        }
    }
    pyval_free(sig);

    pyval *sh = d.sh1 > d.sh0 ? parse_value(k, t, d.sh0, d.sh1) : NULL;
    if (sh && (sh->kind == PYV_DICT || sh->kind == PYV_LIST || sh->kind == PYV_TUPLE) && sh->n) {
        k->hints = kcalloc(sh->n, sizeof *k->hints);
        for (size_t i = 0; i < sh->n; i++) {
            const pyval *v = sh->items[i];
            if (v->kind != PYV_INT) continue;
            art_hint *h = &k->hints[k->nhints++];
            if (sh->kind == PYV_DICT && sh->keys[i]->kind == PYV_STR) h->dim = kstrdup(sh->keys[i]->s);
            else h->dim = kasprintf("%zu", i);
            h->value = v->i;
        }
    }
    pyval_free(sh);
}

int art_kernel_decorator(const art_kernel *k, pyval **out, kerr *e) {
    if (!k->decorator.len)
        return kerr_set(e, KOPT_E_PARSE, "line %d: kernel %s has no @triton_heuristics decorator",
                        k->line, k->name);
    return pylit_parse(k->source + k->decorator.off, k->decorator.len, k->decorator_line, out, e);
}

/* Tokens of the source up to the end of the `def` line that follows the
 * `@triton_heuristics...` decorator (the kernel body is not needed); all of it when there is
 * no such decorator. Helper functions (`@triton.jit def _triton_helper_fn...`) may come
 * before the kernel. */
static pytok *lex_header(art_ctx *c, art_kernel *k, size_t *n, kerr *e) {
    pylex lx;
    /* start at the decorator when there is one: the imports before it are not needed */
    const char *at = memmem(k->source, k->source_len, "@triton_heuristics.", 19);
    size_t from = 0;
    uint32_t line = 1;
    if (at && (at == k->source || at[-1] == '\n')) {
        from = (size_t)(at - k->source);
        for (const char *p = k->source; (p = memchr(p, '\n', (size_t)(at - p))) != NULL; p++) line++;
    }
    k->decorator_line = (int)line;
    pylex_init(&lx, k->source + from, k->source_len - from, 0);
    lx.line = line;
    if (!c->scratch) {
        c->scratch_cap = 1024;
        c->scratch = kmalloc(c->scratch_cap * sizeof *c->scratch);
    }
    size_t cnt = 0;
    pytok *v = c->scratch;
    int want_def = 0, in_def = 0;
    for (;;) {
        if (cnt == c->scratch_cap)
            v = c->scratch = krealloc(c->scratch, (c->scratch_cap *= 2) * sizeof *v);
        pytok *t = &v[cnt];
        if (pylex_next(&lx, t, e)) return NULL;
        t->off += (uint32_t)from;   /* offsets index the whole source */
        cnt++;
        if (t->kind == PYT_END) break;
        if (in_def && t->kind == PYT_NEWLINE) break;
        if (t->kind != PYT_NAME) continue;
        if (want_def && pytok_is(k->source, t, "def")) in_def = 1;
        else if (cnt >= 2 && pytok_is(k->source, t, "triton_heuristics") &&
                 pytok_is_op(k->source, &v[cnt - 2], "@"))
            want_def = 1;
    }
    *n = cnt;
    return v;
}

static void analyze_source(art_ctx *c, art_kernel *k) {
    artifact *a = c->a;
    kerr e2 = {0};
    size_t n = 0;
    const pytok *t = lex_header(c, k, &n, &e2);
    if (!t) {
        art_warn(a, "line %d: kernel %s: its source does not lex (%s)", k->line, k->name, e2.msg);
        return;
    }
    const char *s = k->source;
    for (size_t i = 0; i + 4 < n; i++) {
        if (!pytok_is_op(s, &t[i], "@") || !pytok_is_name(s, &t[i + 1], "triton_heuristics") ||
            !pytok_is_op(s, &t[i + 2], ".") || t[i + 3].kind != PYT_NAME ||
            !pytok_is_op(s, &t[i + 4], "("))
            continue;
        size_t close = pylit_match(s, t, n, i + 4);
        if (close >= n) {
            art_warn(a, "line %d: kernel %s: unterminated @triton_heuristics decorator", k->line, k->name);
            break;
        }
        k->heuristic = kstrndup(s + t[i + 3].off, t[i + 3].len);
        k->decorator = (art_span){t[i + 1].off, (size_t)t[close].off + 1 - t[i + 1].off};
        k->decorator_line = (int)t[i + 1].line;  /* lexed from the decorator's own line */
        read_decorator(k, t, close + 1, i + 4);
        break;
    }
    if (!k->heuristic)
        art_warn(a, "line %d: kernel %s: no @triton_heuristics decorator; signature unknown",
                 k->line, k->name);
    /* the jit function: the def named like the kernel, else the last def read (the one after
     * the decorator when there is one) */
    for (size_t i = 0; i + 1 < n; i++)
        if (pytok_is_name(s, &t[i], "def") && t[i + 1].kind == PYT_NAME) {
            if (k->jit_name && !strcmp(k->jit_name, k->name)) break;
            free(k->jit_name);
            k->jit_name = kstrndup(s + t[i + 1].off, t[i + 1].len);
        }
}

void art_kernel_ctx_free(art_ctx *c) {
    free(c->scratch);
    c->scratch = NULL;
    c->scratch_cap = 0;
}

/* ---------- the statement ---------- */

void art_parse_kernel(art_ctx *c, size_t li, size_t lower) {
    artifact *a = c->a;
    const art_line *L = &c->lines[li];
    size_t pos = L->t0 + 2;
    pyval *v = NULL;
    kerr e2 = {0};
    int bad = pylit_parse_tokens(a->text, c->toks, L->t1, &pos, &v, &e2) || pos != L->t1 ||
              v->kind != PYV_CALL || v->n < 2 || v->items[1]->kind != PYV_STR;
    if (bad) {
        art_warn(a, "line %d: unreadable async_compile.triton statement%s%s; kept verbatim",
                 L->line, e2.msg[0] ? ": " : "", e2.msg);
        pyval_free(v);
        a->async_other = art_grow(a->async_other, &c->ocap, a->nasync_other, sizeof *a->async_other);
        size_t s = c->toks[L->t0].off, e = (size_t)c->toks[L->t1 - 1].off + c->toks[L->t1 - 1].len;
        a->async_other[a->nasync_other++] = (art_verbatim){L->line, {s, e - s}};
        return;
    }
    a->kernels = art_grow(a->kernels, &c->kcap, a->nkernels, sizeof *a->kernels);
    art_kernel *k = &a->kernels[a->nkernels++];
    memset(k, 0, sizeof *k);
    k->name = art_tok_text(c, L->t0, L->t0 + 1);
    k->line = L->line;
    size_t s = c->toks[L->t0].off, e = (size_t)c->toks[L->t1 - 1].off + c->toks[L->t1 - 1].len;
    k->stmt = (art_span){s, e - s};
    k->literal = (art_span){v->items[1]->off, v->items[1]->len};
    k->source = pyval_take_str(v->items[1], &k->source_len);
    pyval_free(v);
    k->comment = art_comment_before(a->text, lower, L->phys_start);
    read_comment_block(k, a->text);
    analyze_source(c, k);
    k->kind = k->heuristic ? kind_of_heuristic(k->heuristic) : kind_of_name(k->name);
    if (k->heuristic && k->kind == ART_K_OTHER && kind_of_name(k->name) != ART_K_OTHER &&
        strcmp(k->heuristic, "split_scan") && strcmp(k->heuristic, "user_autotune"))
        k->kind = kind_of_name(k->name);
}

static int ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

int art_kernel_param_stored(const art_kernel *k, const char *name) {
    if (!k->source || !k->jit_name || !name || !*name) return 1;
    char head[256];
    snprintf(head, sizeof head, "def %s(", k->jit_name);
    const char *def = strstr(k->source, head);
    if (!def) return 1;
    const char *body = strchr(def, '\n');   /* Inductor writes the signature on one line */
    if (!body) return 1;
    size_t n = strlen(name);
    for (const char *p = strstr(body, name); p; p = strstr(p + n, name)) {
        if (ident_char(p[-1]) || ident_char(p[n])) continue;
        const char *q = p;
        while (q > body && (q[-1] == ' ' || q[-1] == '\t')) q--;
        if ((size_t)(q - body) < 8 || strncmp(q - 8, "tl.load(", 8) || (q - 8 > body && ident_char(q[-9]))) return 1;
    }
    return 0;
}

void art_kernel_free(art_kernel *k) {
    free(k->name);
    free(k->heuristic);
    free(k->jit_name);
    free(k->source);
    free(k->kernel_path);
    art_strlist_free(&k->source_nodes);
    art_strlist_free(&k->aten_ops);
    art_strlist_free(&k->graph_fragment);
    art_strlist_free(&k->members);
    free(k->vendor_call);
    for (size_t i = 0; i < k->nparams; i++) {
        free(k->params[i].name);
        free(k->params[i].type);
    }
    free(k->params);
    art_strlist_free(&k->mutated);
    for (size_t i = 0; i < k->nhints; i++) free(k->hints[i].dim);
    free(k->hints);
    free(k->grid_type);
}
