/* pylit.c — see pylit.h: the parser (pylit_parse, pylit_parse_tokens, pyval_free), recursive
 * descent over pylex tokens. What it does not model is kept as a RAW span: a primary followed
 * by an operator becomes RAW up to the next terminator, and a bracketed form it cannot read
 * (comprehension, **-unpacking, lambda defaults) becomes RAW up to its closing bracket, so valid
 * Python expressions parse; malformed ones (two operands in a row, a trailing operator, a
 * missing value) are KOPT_E_PARSE. Recursion is bounded: `depth` counts the nesting that
 * pylit.h defines (parse_expr levels, unary +/-, postfix links) and stops at PYLIT_MAX_DEPTH;
 * pylit_check_nesting bounds the same count from above on raw tokens, without recursing. */
#include "artifact/pylit.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct pp {
    const char *src;
    const pytok *t;
    size_t n;
    size_t i;     /* next token */
    size_t last;  /* last consumed token (for span ends) */
    pytok end;    /* what cur() returns past the end */
    int comp;     /* scan_raw met a top-level `for` (a comprehension) */
    int depth;    /* current nesting (pylit.h), at most PYLIT_MAX_DEPTH */
    kerr *e;
} pp;

/* ---------- tokens ---------- */

static const pytok *cur(pp *p) {
    while (p->i < p->n && p->t[p->i].kind == PYT_COMMENT) p->i++;
    return p->i < p->n ? &p->t[p->i] : &p->end;
}
/* The token after the current one (comments skipped). */
static const pytok *peek2(pp *p) {
    cur(p);
    size_t j = p->i + 1;
    while (j < p->n && p->t[j].kind == PYT_COMMENT) j++;
    return j < p->n ? &p->t[j] : &p->end;
}
static void advance(pp *p) {
    cur(p);
    if (p->i < p->n) p->last = p->i++;
}
static int is_op(pp *p, const pytok *t, const char *s) { return pytok_is_op(p->src, t, s); }
static int is_close(pp *p, const pytok *t) { return pytok_closes(p->src, t); }
static int is_open(pp *p, const pytok *t) { return pytok_opens(p->src, t); }
static int is_term(pp *p, const pytok *t) {
    if (t->kind == PYT_END || t->kind == PYT_NEWLINE || t->kind == PYT_INDENT ||
        t->kind == PYT_DEDENT)
        return 1;
    if (t->kind != PYT_OP) return 0;
    return is_close(p, t) || is_op(p, t, ",") || is_op(p, t, ":") || is_op(p, t, "=") ||
           is_op(p, t, ";");
}
static int unexpected(pp *p, const pytok *t, const char *where) {
    if (t->kind == PYT_END || t->kind == PYT_NEWLINE)
        return kerr_set(p->e, KOPT_E_PARSE, "line %u: unexpected end of expression%s", t->line,
                        where);
    if (t->kind == PYT_INDENT || t->kind == PYT_DEDENT)
        return kerr_set(p->e, KOPT_E_PARSE, "line %u: unexpected indentation%s", t->line, where);
    return kerr_set(p->e, KOPT_E_PARSE, "line %u: unexpected '%.*s'%s", t->line,
                    (int)(t->len > 40 ? 40 : t->len), p->src + t->off, where);
}

static int too_deep(kerr *e, unsigned line) {
    return kerr_set(e, KOPT_E_PARSE, "line %u: nesting deeper than %d", line, PYLIT_MAX_DEPTH);
}
/* Enter one more nesting level at token t: 0, or KOPT_E_PARSE past PYLIT_MAX_DEPTH. */
static int nest(pp *p, const pytok *t) {
    return ++p->depth > PYLIT_MAX_DEPTH ? too_deep(p->e, t->line) : 0;
}

/* ---------- nodes ---------- */

static pyval *node(pyv_kind k, const pytok *first) {
    pyval *v = kcalloc(1, sizeof *v);
    v->kind = k;
    v->off = first->off;
    v->line = (int)first->line;
    return v;
}
/* Extend v's span to the end of the last consumed token. */
static void span_end(pp *p, pyval *v) {
    const pytok *l = &p->t[p->last];
    size_t end = (size_t)l->off + l->len;
    v->len = end > v->off ? end - v->off : 0;
}
/* Room for element n of a growing array (capacity: 4, then powers of two). */
static void *grow_for(void *arr, size_t n, size_t elsz) {
    if (n == 0) return kmalloc(4 * elsz);
    if (n >= 4 && (n & (n - 1)) == 0) return krealloc(arr, 2 * n * elsz);
    return arr;
}
static void push_item(pyval *v, pyval *x) {
    v->items = grow_for(v->items, v->n, sizeof *v->items);
    v->items[v->n++] = x;
}
static void push_pair(pyval *v, pyval *k, pyval *x) {
    v->keys = grow_for(v->keys, v->n, sizeof *v->keys);
    v->keys[v->n] = k;
    push_item(v, x);
}
static void push_kw(pyval *v, char *name, pyval *x) {
    v->kwnames = grow_for(v->kwnames, v->nkw, sizeof *v->kwnames);
    v->kwvals = grow_for(v->kwvals, v->nkw, sizeof *v->kwvals);
    v->kwnames[v->nkw] = name;
    v->kwvals[v->nkw++] = x;
}

void pyval_free(pyval *v) {
    if (!v) return;
    free(v->s);
    pyval_free(v->base);
    for (size_t i = 0; i < v->n; i++) {
        pyval_free(v->items[i]);
        if (v->keys) pyval_free(v->keys[i]);
    }
    for (size_t i = 0; i < v->nkw; i++) {
        free(v->kwnames[i]);
        pyval_free(v->kwvals[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->kwnames);
    free(v->kwvals);
    free(v);
}

/* ---------- literals ---------- */

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
static void put_utf8(kbuf *b, unsigned long cp) {
    char u[4];
    if (cp < 0x80) { kbuf_putc(b, (char)cp); return; }
    if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6)); u[1] = (char)(0x80 | (cp & 0x3F));
        kbuf_append(b, u, 2);
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12)); u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        kbuf_append(b, u, 3);
    } else {
        u[0] = (char)(0xF0 | (cp >> 18)); u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); u[3] = (char)(0x80 | (cp & 0x3F));
        kbuf_append(b, u, 4);
    }
}
/* Decode escapes of s[0..n) (a non-raw literal's content) into b. */
static void decode_escapes(const char *s, size_t n, kbuf *b) {
    size_t i = 0;
    while (i < n) {
        const char *bs = memchr(s + i, '\\', n - i);
        size_t run = bs ? (size_t)(bs - (s + i)) : n - i;
        kbuf_append(b, s + i, run);
        i += run;
        if (i >= n) break;
        if (i + 1 >= n) { kbuf_putc(b, '\\'); break; }
        char c = s[i + 1];
        i += 2;
        switch (c) {
        case '\n': break;
        case '\r': if (i < n && s[i] == '\n') i++; break;
        case '\\': case '\'': case '"': kbuf_putc(b, c); break;
        case 'n': kbuf_putc(b, '\n'); break;
        case 't': kbuf_putc(b, '\t'); break;
        case 'r': kbuf_putc(b, '\r'); break;
        case 'a': kbuf_putc(b, '\a'); break;
        case 'b': kbuf_putc(b, '\b'); break;
        case 'f': kbuf_putc(b, '\f'); break;
        case 'v': kbuf_putc(b, '\v'); break;
        case 'x': case 'u': case 'U': {
            size_t want = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            unsigned long cp = 0;
            size_t k = 0;
            while (k < want && i + k < n && hexval(s[i + k]) >= 0) cp = cp * 16 + (unsigned long)hexval(s[i + k++]);
            if (k != want || cp > 0x10FFFF) { kbuf_putc(b, '\\'); kbuf_putc(b, c); break; }
            i += k;
            if (c == 'x') kbuf_putc(b, (char)cp);
            else put_utf8(b, cp);
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                unsigned v = (unsigned)(c - '0');
                for (int k = 0; k < 2 && i < n && s[i] >= '0' && s[i] <= '7'; k++) v = v * 8 + (unsigned)(s[i++] - '0');
                kbuf_putc(b, (char)(v & 0xFF));
            } else {
                kbuf_putc(b, '\\');
                kbuf_putc(b, c);
            }
        }
    }
}
/* Append the value of one STRING token to b. */
static void decode_string(const char *tok, size_t n, kbuf *b) {
    size_t i = 0;
    int raw = 0;
    while (i < n && tok[i] != '\'' && tok[i] != '"') {
        if (tok[i] == 'r' || tok[i] == 'R') raw = 1;
        i++;
    }
    if (i >= n) return;
    char q = tok[i];
    size_t ql = (n - i >= 6 && tok[i + 1] == q && tok[i + 2] == q) ? 3 : 1;
    if (n < i + 2 * ql) return;
    const char *c = tok + i + ql;
    size_t cl = n - i - 2 * ql;
    if (raw || !memchr(c, '\\', cl)) kbuf_append(b, c, cl);
    else decode_escapes(c, cl, b);
}

static pyval *parse_number(pp *p, const pytok *t) {
    char buf[72];
    size_t k = 0;
    const char *s = p->src + t->off;
    pyval *v = node(PYV_INT, t);
    v->len = t->len;
    for (size_t i = 0; i < t->len; i++) {
        if (s[i] == '_') continue;
        if (k + 1 >= sizeof buf) { v->kind = PYV_RAW; return v; }
        buf[k++] = s[i];
    }
    buf[k] = '\0';
    if (k && (buf[k - 1] == 'j' || buf[k - 1] == 'J')) { v->kind = PYV_RAW; return v; }
    char *end = NULL;
    errno = 0;
    if (k > 1 && buf[0] == '0' && strchr("xXoObB", buf[1])) {
        int base = (buf[1] == 'x' || buf[1] == 'X') ? 16 : (buf[1] == 'o' || buf[1] == 'O') ? 8 : 2;
        v->i = strtoll(buf + 2, &end, base);
    } else if (strpbrk(buf, ".eE")) {
        v->kind = PYV_FLOAT;
        v->f = strtod(buf, &end);
    } else {
        v->i = strtoll(buf, &end, 10);
    }
    if (errno == ERANGE || !end || *end) v->kind = PYV_RAW;
    return v;
}

/* ---------- expressions ---------- */

static int parse_expr(pp *p, pyval **out);

static int is_keyword(const char *src, const pytok *t) {
    static const char *const kw[] = {"and", "or", "not", "in", "is", "if", "else", "for",
                                     "lambda", "await", "yield", "async", "from", NULL};
    if (t->kind != PYT_NAME) return 0;
    for (int i = 0; kw[i]; i++)
        if (pytok_is(src, t, kw[i])) return 1;
    return 0;
}
/* Token kinds for adjacency: an operand cannot directly follow another operand. */
static int starts_operand(const char *src, const pytok *t) {
    return t->kind == PYT_NUMBER || t->kind == PYT_STRING || (t->kind == PYT_NAME && !is_keyword(src, t));
}
static int ends_operand(const char *src, const pytok *t) {
    return starts_operand(src, t) || pytok_closes(src, t);
}

/* RAW from token `start` up to (not including) the next terminator at bracket depth 0. */
static int scan_raw(pp *p, size_t start, pyval **out) {
    p->i = start;
    const pytok *first = cur(p);
    size_t i = p->i;
    int depth = 0, lambdas = 0, any = 0;
    const pytok *prev = NULL;
    for (;;) {
        while (i < p->n && p->t[i].kind == PYT_COMMENT) i++;
        const pytok *t = i < p->n ? &p->t[i] : &p->end;
        if (t->kind == PYT_END || t->kind == PYT_NEWLINE) {
            if (depth > 0) return unexpected(p, t, "");
            break;
        }
        if (depth == 0) {
            if (pytok_is_name(p->src, t, "lambda")) lambdas++;
            else if (lambdas > 0 && is_op(p, t, ":")) lambdas--;
            else if (is_term(p, t)) break;
            if (pytok_is_name(p->src, t, "for")) p->comp = 1;
        }
        if (prev && ends_operand(p->src, prev) && starts_operand(p->src, t) &&
            !(prev->kind == PYT_STRING && t->kind == PYT_STRING))
            return unexpected(p, t, "");
        if (is_open(p, t)) depth++;
        else if (is_close(p, t)) depth--;
        prev = t;
        p->last = i++;
        any = 1;
    }
    if (!any) return unexpected(p, first, "");
    /* an operator cannot end an expression (`1 +`) */
    if (prev->kind == PYT_OP && !pytok_closes(p->src, prev) && !is_op(p, prev, "..."))
        return unexpected(p, i < p->n ? &p->t[i] : &p->end, "");
    p->i = i;
    pyval *v = node(PYV_RAW, first);
    span_end(p, v);
    *out = v;
    return 0;
}

/* RAW for the whole bracketed form opening at token `open`. */
static int raw_bracket(pp *p, size_t open, pyval **out) {
    int depth = 0;
    size_t i = open;
    for (; i < p->n; i++) {
        const pytok *t = &p->t[i];
        if (t->kind == PYT_END) break;
        if (is_open(p, t)) depth++;
        else if (is_close(p, t) && --depth == 0) break;
    }
    if (i >= p->n || depth != 0) return unexpected(p, &p->end, " (unclosed bracket)");
    pyval *v = node(PYV_RAW, &p->t[open]);
    p->last = i;
    p->i = i + 1;
    span_end(p, v);
    *out = v;
    return 0;
}

/* ( ... ): empty tuple, parenthesised expression or tuple. */
static int parse_paren(pp *p, pyval **out) {
    size_t open = p->i;
    const pytok *ot = cur(p);
    advance(p);
    pyval *v = NULL;
    if (is_op(p, cur(p), ")")) {
        advance(p);
        v = node(PYV_TUPLE, ot);
        span_end(p, v);
        *out = v;
        return 0;
    }
    pyval *first = NULL;
    p->comp = 0;
    if (parse_expr(p, &first)) return p->e ? p->e->code : KOPT_E_PARSE;
    if (p->comp) { pyval_free(first); return raw_bracket(p, open, out); }   /* generator */
    if (is_op(p, cur(p), ")")) {
        advance(p);
        first->off = ot->off;
        first->line = (int)ot->line;
        span_end(p, first);
        *out = first;
        return 0;
    }
    v = node(PYV_TUPLE, ot);
    push_item(v, first);
    while (is_op(p, cur(p), ",")) {
        advance(p);
        if (is_op(p, cur(p), ")")) break;
        pyval *x = NULL;
        if (parse_expr(p, &x)) goto fail;
        push_item(v, x);
    }
    if (!is_op(p, cur(p), ")")) goto fallback;
    advance(p);
    span_end(p, v);
    *out = v;
    return 0;
fallback:
    pyval_free(v);
    return raw_bracket(p, open, out);
fail:
    pyval_free(v);
    return p->e ? p->e->code : KOPT_E_PARSE;
}

/* [ ... ] */
static int parse_list(pp *p, pyval **out) {
    size_t open = p->i;
    pyval *v = node(PYV_LIST, cur(p));
    advance(p);
    while (!is_op(p, cur(p), "]")) {
        pyval *x = NULL;
        p->comp = 0;
        if (parse_expr(p, &x)) goto fail;
        push_item(v, x);
        if (p->comp) goto fallback;   /* a comprehension */
        if (is_op(p, cur(p), ",")) advance(p);
        else if (!is_op(p, cur(p), "]")) goto fallback;
    }
    advance(p);
    span_end(p, v);
    *out = v;
    return 0;
fallback:
    pyval_free(v);
    return raw_bracket(p, open, out);
fail:
    pyval_free(v);
    return p->e ? p->e->code : KOPT_E_PARSE;
}

/* { ... }: dict (also {}) or set. */
static int parse_brace(pp *p, pyval **out) {
    size_t open = p->i;
    pyval *v = node(PYV_DICT, cur(p));
    advance(p);
    int first = 1;
    while (!is_op(p, cur(p), "}")) {
        if (is_op(p, cur(p), "**")) goto fallback;
        pyval *k = NULL, *x = NULL;
        p->comp = 0;
        if (parse_expr(p, &k)) goto fail;
        if (p->comp) { pyval_free(k); goto fallback; }
        if (first) v->kind = is_op(p, cur(p), ":") ? PYV_DICT : PYV_SET;
        first = 0;
        if (v->kind == PYV_DICT) {
            if (!is_op(p, cur(p), ":")) { pyval_free(k); goto fallback; }
            advance(p);
            if (parse_expr(p, &x)) { pyval_free(k); goto fail; }
            push_pair(v, k, x);
            if (p->comp) goto fallback;   /* a dict comprehension */
        } else {
            push_item(v, k);
        }
        if (is_op(p, cur(p), ",")) advance(p);
        else if (!is_op(p, cur(p), "}")) goto fallback;
    }
    advance(p);
    span_end(p, v);
    *out = v;
    return 0;
fallback:
    pyval_free(v);
    return raw_bracket(p, open, out);
fail:
    pyval_free(v);
    return p->e ? p->e->code : KOPT_E_PARSE;
}

static int parse_call(pp *p, pyval *callee, pyval **out) {
    pyval *v = node(PYV_CALL, cur(p));
    v->off = callee->off;
    v->line = callee->line;
    v->base = callee;
    advance(p);  /* ( */
    while (!is_op(p, cur(p), ")")) {
        const pytok *t = cur(p);
        pyval *x = NULL;
        if (t->kind == PYT_NAME && is_op(p, peek2(p), "=")) {
            char *name = kstrndup(p->src + t->off, t->len);
            advance(p);
            advance(p);
            if (parse_expr(p, &x)) { free(name); pyval_free(v); return p->e ? p->e->code : KOPT_E_PARSE; }
            push_kw(v, name, x);
        } else {
            if (parse_expr(p, &x)) { pyval_free(v); return p->e ? p->e->code : KOPT_E_PARSE; }
            push_item(v, x);
        }
        if (is_op(p, cur(p), ",")) advance(p);
        else if (!is_op(p, cur(p), ")")) {
            int rc = unexpected(p, cur(p), " in call arguments");
            pyval_free(v);
            return rc;
        }
    }
    advance(p);
    span_end(p, v);
    *out = v;
    return 0;
}

static int parse_subscript(pp *p, pyval *obj, pyval **out) {
    pyval *v = node(PYV_SUBSCRIPT, cur(p));
    v->off = obj->off;
    v->line = obj->line;
    v->base = obj;
    advance(p);  /* [ */
    /* a slice (a top-level ':') is kept as RAW */
    int depth = 0, slice = 0;
    size_t j = p->i;
    for (; j < p->n && p->t[j].kind != PYT_END; j++) {
        const pytok *t = &p->t[j];
        if (is_open(p, t)) depth++;
        else if (is_close(p, t)) { if (depth == 0) break; depth--; }
        else if (depth == 0 && is_op(p, t, ":")) slice = 1;
    }
    pyval *idx = NULL;
    if (slice) {
        if (j == p->i || j >= p->n) { int rc = unexpected(p, cur(p), " in subscript"); pyval_free(v); return rc; }
        idx = node(PYV_RAW, cur(p));
        p->last = j - 1;
        p->i = j;
        span_end(p, idx);
    } else {
        if (parse_expr(p, &idx)) { pyval_free(v); return p->e ? p->e->code : KOPT_E_PARSE; }
        if (is_op(p, cur(p), ",")) {
            pyval *tup = node(PYV_TUPLE, &p->t[p->i]);
            tup->off = idx->off;
            tup->line = idx->line;
            push_item(tup, idx);
            idx = tup;
            while (is_op(p, cur(p), ",")) {
                advance(p);
                if (is_op(p, cur(p), "]")) break;
                pyval *x = NULL;
                if (parse_expr(p, &x)) { pyval_free(tup); pyval_free(v); return p->e ? p->e->code : KOPT_E_PARSE; }
                push_item(tup, x);
            }
            span_end(p, tup);
        }
    }
    push_item(v, idx);
    if (!is_op(p, cur(p), "]")) { int rc = unexpected(p, cur(p), " in subscript"); pyval_free(v); return rc; }
    advance(p);
    span_end(p, v);
    *out = v;
    return 0;
}

static int parse_atom(pp *p, pyval **out) {
    const pytok *t = cur(p);
    const char *s = p->src + t->off;
    switch (t->kind) {
    case PYT_NAME: {
        pyval *v = node(PYV_NAME, t);
        if (pytok_is(p->src, t, "True") || pytok_is(p->src, t, "False")) {
            v->kind = PYV_BOOL;
            v->i = s[0] == 'T';
        } else if (pytok_is(p->src, t, "None")) {
            v->kind = PYV_NONE;
        } else {
            v->s = kstrndup(s, t->len);
            v->slen = t->len;
        }
        advance(p);
        span_end(p, v);
        *out = v;
        return 0;
    }
    case PYT_NUMBER:
        *out = parse_number(p, t);
        advance(p);
        return 0;
    case PYT_STRING: {
        pyval *v = node(PYV_STR, t);
        /* size the buffer once: decoding never makes a literal longer */
        size_t total = 0;
        for (size_t j = p->i; j < p->n && (p->t[j].kind == PYT_STRING || p->t[j].kind == PYT_COMMENT); j++)
            total += p->t[j].len;
        kbuf b = {kmalloc(total + 1), 0, total + 1};
        b.data[0] = '\0';
        while (cur(p)->kind == PYT_STRING) {
            decode_string(p->src + cur(p)->off, cur(p)->len, &b);
            advance(p);
        }
        v->slen = b.len;
        v->s = kbuf_steal(&b);
        span_end(p, v);
        *out = v;
        return 0;
    }
    case PYT_OP:
        if (is_op(p, t, "(")) return parse_paren(p, out);
        if (is_op(p, t, "[")) return parse_list(p, out);
        if (is_op(p, t, "{")) return parse_brace(p, out);
        if (is_op(p, t, "...")) {
            pyval *v = node(PYV_RAW, t);
            advance(p);
            span_end(p, v);
            *out = v;
            return 0;
        }
        return unexpected(p, t, "");
    default:
        return unexpected(p, t, "");
    }
}

/* An atom and its chain of links; each link nests one level deeper (the tree does), until the
 * chain ends. */
static int parse_postfix(pp *p, pyval **out) {
    pyval *v = NULL;
    int depth0 = p->depth;
    int rc = parse_atom(p, &v);
    if (rc) return rc;
    for (;;) {
        const pytok *t = cur(p);
        int link = is_op(p, t, ".") || is_op(p, t, "(") || is_op(p, t, "[");
        if (link && (rc = nest(p, t))) {
            pyval_free(v);
            return rc;
        }
        if (is_op(p, t, ".")) {
            advance(p);
            const pytok *nt = cur(p);
            if (nt->kind != PYT_NAME) {
                rc = unexpected(p, nt, " after '.'");
                pyval_free(v);
                return rc;
            }
            pyval *a = node(PYV_ATTR, nt);
            a->off = v->off;
            a->line = v->line;
            a->base = v;
            a->s = kstrndup(p->src + nt->off, nt->len);
            a->slen = nt->len;
            advance(p);
            span_end(p, a);
            v = a;
        } else if (is_op(p, t, "(")) {
            pyval *c = NULL;
            if ((rc = parse_call(p, v, &c))) return rc;  /* parse_call freed v */
            v = c;
        } else if (is_op(p, t, "[")) {
            pyval *s = NULL;
            if ((rc = parse_subscript(p, v, &s))) return rc;
            v = s;
        } else {
            break;
        }
    }
    p->depth = depth0;
    *out = v;
    return 0;
}

static int parse_unary(pp *p, pyval **out) {
    const pytok *t = cur(p);
    if (is_op(p, t, "-") || is_op(p, t, "+")) {
        int neg = is_op(p, t, "-");
        const pytok first = *t;
        int rc = nest(p, t);
        if (rc) return rc;
        advance(p);
        pyval *x = NULL;
        rc = parse_unary(p, &x);
        if (rc) return rc;
        p->depth--;
        if (neg && x->kind == PYV_INT && x->i != LLONG_MIN) {
            x->i = -x->i;
        } else if (neg && x->kind == PYV_FLOAT) {
            x->f = -x->f;
        } else if (neg) {
            pyval *n = node(PYV_NEG, &first);
            n->base = x;
            x = n;
        }
        x->off = first.off;
        x->line = (int)first.line;
        span_end(p, x);
        *out = x;
        return 0;
    }
    if (is_op(p, t, "~") || is_op(p, t, "*") || is_op(p, t, "**") ||
        pytok_is_name(p->src, t, "not") || pytok_is_name(p->src, t, "lambda") ||
        pytok_is_name(p->src, t, "await") || pytok_is_name(p->src, t, "yield"))
        return scan_raw(p, p->i, out);
    return parse_postfix(p, out);
}

static int parse_expr(pp *p, pyval **out) {
    int rc = nest(p, cur(p));
    if (rc) return rc;
    size_t start = p->i;
    pyval *v = NULL;
    rc = parse_unary(p, &v);
    if (rc) return rc;
    p->depth--;
    if (is_term(p, cur(p))) {
        *out = v;
        return 0;
    }
    pyval_free(v);
    return scan_raw(p, start, out);
}

static void pp_init(pp *p, const char *src, const pytok *toks, size_t ntok, size_t pos, kerr *e) {
    memset(p, 0, sizeof *p);
    p->src = src;
    p->t = toks;
    p->n = ntok;
    p->i = pos;
    p->last = pos;
    p->e = e;
    p->end.kind = PYT_END;
    if (ntok) {
        const pytok *l = &toks[ntok - 1];
        p->end.off = l->off + l->len;
        p->end.line = l->line;
    }
}

int pylit_parse_tokens(const char *src, const pytok *toks, size_t ntok, size_t *pos, pyval **out,
                       kerr *e) {
    pp p;
    pp_init(&p, src, toks, ntok, *pos, e);
    int rc = parse_expr(&p, out);
    if (rc) return rc;
    cur(&p);
    *pos = p.i;
    return 0;
}

int pylit_parse(const char *src, size_t len, int first_line, pyval **out, kerr *e) {
    pylex lx;
    pylex_init(&lx, src, len, PYLEX_NOINDENT);
    lx.line = (uint32_t)(first_line > 0 ? first_line : 1);
    size_t cap = 64, n = 0;
    pytok *toks = kmalloc(cap * sizeof *toks);
    for (;;) {
        if (n == cap) toks = krealloc(toks, (cap *= 2) * sizeof *toks);
        int rc = pylex_next(&lx, &toks[n], e);
        if (rc) { free(toks); return rc; }
        if (toks[n++].kind == PYT_END) break;
    }
    pp p;
    pp_init(&p, src, toks, n, 0, e);
    pyval *v = NULL;
    int rc = parse_expr(&p, &v);
    if (!rc && is_op(&p, cur(&p), ",")) {   /* a bare tuple */
        pyval *tup = node(PYV_TUPLE, &toks[0]);
        tup->off = v->off;
        tup->line = v->line;
        push_item(tup, v);
        v = tup;
        while (!rc && is_op(&p, cur(&p), ",")) {
            advance(&p);
            const pytok *t = cur(&p);
            if (t->kind == PYT_NEWLINE || t->kind == PYT_END) break;
            pyval *x = NULL;
            rc = parse_expr(&p, &x);
            if (!rc) push_item(tup, x);
        }
        span_end(&p, tup);
    }
    if (!rc) {
        const pytok *t = cur(&p);
        if (t->kind == PYT_NEWLINE) { advance(&p); t = cur(&p); }
        if (t->kind != PYT_END) rc = unexpected(&p, t, " after the expression");
    }
    free(toks);
    if (rc) { pyval_free(v); return rc; }
    if (!v) return kerr_set(e, KOPT_E_PARSE, "line %d: empty expression", first_line);
    *out = v;
    return 0;
}

/* Per bracket level, `run` counts the unary signs and postfix links of the operand being read
 * at that level; the nesting at a token is the sum over the open levels of 1 + run, which is at
 * least the parser's count there (see pylit.h). A sign after an operand may be binary: it starts
 * a new run of 1 (it counts if the parser starts there, as after `return`). */
int pylit_check_nesting(const char *src, const pytok *toks, size_t ntok, kerr *e) {
    int run[PYLIT_MAX_DEPTH + 2];   /* every open level adds at least 1: the sum stops first */
    int lv = 0, total = 1, prev_end = 0;
    run[0] = 0;
    for (size_t i = 0; i < ntok; i++) {
        const pytok *t = &toks[i];
        switch (t->kind) {
        case PYT_COMMENT:
            continue;
        case PYT_NAME: case PYT_NUMBER: case PYT_STRING:
            prev_end = 1;
            continue;
        case PYT_OP:
            break;
        default:   /* NEWLINE, INDENT, DEDENT, END: a new statement */
            lv = 0;
            run[0] = 0;
            total = 1;
            prev_end = 0;
            continue;
        }
        if (pytok_opens(src, t)) {
            if (prev_end) { run[lv]++; total++; }   /* a call or subscript link */
            run[++lv] = 0;
            total++;
            prev_end = 0;
        } else if (pytok_closes(src, t)) {
            if (lv > 0) { total -= 1 + run[lv]; lv--; }
            prev_end = 1;
            continue;
        } else if (pytok_is(src, t, "-") || pytok_is(src, t, "+")) {
            if (prev_end) { total -= run[lv]; run[lv] = 0; }
            run[lv]++;
            total++;
            prev_end = 0;
        } else if (pytok_is(src, t, "...")) {   /* Ellipsis: an operand */
            prev_end = 1;
            continue;
        } else if (pytok_is(src, t, ".")) {
            run[lv]++;
            total++;
            prev_end = 0;
        } else {   /* any other operator ends the operand */
            total -= run[lv];
            run[lv] = 0;
            prev_end = 0;
            continue;
        }
        if (total > PYLIT_MAX_DEPTH) return too_deep(e, t->line);
    }
    return 0;
}
