/* revloop.c — the last pass of a looped reduction kernel over its chunks in reverse order
 * (revloop.h has the rules and why). Read with pylex's tokens: statements are NEWLINE-separated
 * token runs, the loop's body the run between its INDENT and the matching DEDENT. */
#include "agents/revloop.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/pylex.h"
#include "util/buf.h"

typedef struct rl {
    const char *s;
    const pytok *t;
    size_t n;
} rl;

/* One statement of the last pass: tokens [a, b), its reads from `reads` (a plain assignment's
 * right-hand side; the whole statement for a store). */
typedef struct stmt {
    size_t a, b, reads;
    int store;
} stmt;

/* A name's text as (offset, length): the body's assigned names are kept this way. */
typedef struct span {
    uint32_t off, len;
} span;
typedef struct spans {
    span *v;
    size_t n, cap;
} spans;

static void spans_add(spans *a, const pytok *t) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        a->v = krealloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = (span){t->off, t->len};
}

static int spans_has(const spans *a, const char *s, const pytok *t) {
    for (size_t i = 0; i < a->n; i++)
        if (a->v[i].len == t->len && !memcmp(s + a->v[i].off, s + t->off, t->len)) return 1;
    return 0;
}

static int refuse(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t whylen, const char *fmt, ...) {
    if (why && whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return 0;
}

/* Whether tokens i.. spell `for r0_offset in [tl.]range(0, r0_numel, R0_BLOCK):` NEWLINE INDENT;
 * *indent gets the INDENT's index. */
static int is_header(const rl *r, size_t i, size_t *indent) {
    static const char *const head[] = {"for", "r0_offset", "in"};
    static const char *const rng[] = {"range", "(", "0", ",", "r0_numel", ",", "R0_BLOCK", ")", ":"};
    size_t j = i;
    for (size_t k = 0; k < 3; k++, j++)
        if (j >= r->n || !pytok_is(r->s, &r->t[j], head[k])) return 0;
    if (j + 1 < r->n && pytok_is_name(r->s, &r->t[j], "tl") && pytok_is_op(r->s, &r->t[j + 1], ".")) j += 2;
    for (size_t k = 0; k < sizeof rng / sizeof *rng; k++, j++)
        if (j >= r->n || !pytok_is(r->s, &r->t[j], rng[k])) return 0;
    if (j + 1 >= r->n || r->t[j].kind != PYT_NEWLINE || r->t[j + 1].kind != PYT_INDENT) return 0;
    *indent = j + 1;
    return 1;
}

static int is_kwarg(const rl *r, size_t k, size_t end, int depth) {
    return depth > 0 && k + 1 < end && pytok_is_op(r->s, &r->t[k + 1], "=");
}

/* A name read at token k (not an attribute after '.', not a keyword argument's name). */
static int is_read(const rl *r, size_t k, size_t end, int depth) {
    if (r->t[k].kind != PYT_NAME) return 0;
    if (k > 0 && pytok_is_op(r->s, &r->t[k - 1], ".")) return 0;
    return !is_kwarg(r, k, end, depth);
}

/* Whether tokens k.. spell `tl.NAME(` (k + 3 < n). */
static int is_tl_call(const rl *r, size_t k, const char *name) {
    return k + 3 < r->n && pytok_is_name(r->s, &r->t[k], "tl") && pytok_is_op(r->s, &r->t[k + 1], ".") &&
           pytok_is_name(r->s, &r->t[k + 2], name) && pytok_is_op(r->s, &r->t[k + 3], "(");
}

/* Whether token k is the first argument of a `tl.load(` call (a name). */
static int is_load_arg(const rl *r, size_t k) {
    return k >= 4 && r->t[k].kind == PYT_NAME && is_tl_call(r, k - 4, "load");
}

static const char *const KEYWORDS[] = {"if",       "elif", "else",   "for",    "while",  "return",   "pass",  "break",
                                       "continue", "with", "assert", "del",    "global", "nonlocal", "try",   "raise",
                                       "yield",    "def",  "class",  "lambda", "import", "from",     "async", "await"};
static const char *const EFFECTS[] = {"atomic", "barrier", "print", "assert", "inline_asm"};

/* One statement [a, b) of the body: its targets (a plain assignment's names; none for a store)
 * and where its reads start. 0 with why filled when it is neither form. */
static int statement_form(const rl *r, size_t a, size_t b, size_t *reads_from, int *is_store, char *why,
                          size_t whylen) {
    const char *s = r->s;
    if (r->t[a].kind == PYT_NAME)
        for (size_t k = 0; k < sizeof KEYWORDS / sizeof *KEYWORDS; k++)
            if (pytok_is(s, &r->t[a], KEYWORDS[k]))
                return refuse(why, whylen, "line %u: '%s' in the last pass (only assignments and stores)", r->t[a].line,
                              KEYWORDS[k]);
    for (size_t k = a; k < b; k++)
        if (r->t[k].kind == PYT_NAME)
            for (size_t e = 0; e < sizeof EFFECTS / sizeof *EFFECTS; e++)
                if (memmem(s + r->t[k].off, r->t[k].len, EFFECTS[e], strlen(EFFECTS[e])))
                    return refuse(why, whylen, "line %u: '%.*s' has effects beyond its stores", r->t[k].line,
                                  (int)r->t[k].len, s + r->t[k].off);
    int depth = 0;
    size_t eq = b;
    for (size_t k = a; k < b; k++) {
        const pytok *t = &r->t[k];
        if (pytok_opens(s, t)) depth++;
        else if (pytok_closes(s, t)) depth--;
        else if (depth == 0 && t->kind == PYT_OP && t->len == 2 && s[t->off + 1] == '=' && !pytok_is(s, t, "==") &&
                 !pytok_is(s, t, "<=") && !pytok_is(s, t, ">=") && !pytok_is(s, t, "!="))
            return refuse(why, whylen, "line %u: an augmented assignment carries a value between chunks", t->line);
        else if (depth == 0 && pytok_is_op(s, t, "=") && eq == b) eq = k;
        else if (depth == 0 && pytok_is_op(s, t, "="))
            return refuse(why, whylen, "line %u: a chained assignment", t->line);
    }
    if (eq < b) {
        for (size_t k = a; k < eq; k++) {
            int want_name = (k - a) % 2 == 0;
            if (want_name ? r->t[k].kind != PYT_NAME : !pytok_is_op(s, &r->t[k], ","))
                return refuse(why, whylen, "line %u: an assignment to something other than names", r->t[a].line);
        }
        if (eq == a || (eq - a) % 2 == 0)
            return refuse(why, whylen, "line %u: an assignment to something other than names", r->t[a].line);
        *reads_from = eq + 1;
        *is_store = 0;
        return 1;
    }
    if (b - a >= 5 && is_tl_call(r, a, "store") && pytok_is_op(s, &r->t[b - 1], ")")) {
        int d = 0; /* the call's parenthesis must close at the statement's end */
        for (size_t k = a + 3; k < b; k++) {
            if (pytok_opens(s, &r->t[k])) d++;
            else if (pytok_closes(s, &r->t[k]) && --d == 0 && k != b - 1)
                return refuse(why, whylen, "line %u: a statement that is neither an assignment nor one store",
                              r->t[a].line);
        }
        *reads_from = a;
        *is_store = 1;
        return 1;
    }
    return refuse(why, whylen, "line %u: a statement that is neither an assignment nor a store", r->t[a].line);
}

/* The end (exclusive) of the call argument starting at token k: its ',' or the call's ')'. */
static size_t arg_end(const rl *r, size_t k, size_t end) {
    int d = 0;
    for (; k < end; k++) {
        const pytok *t = &r->t[k];
        if (pytok_opens(r->s, t)) d++;
        else if (pytok_closes(r->s, t) && d-- == 0) break;
        else if (d == 0 && pytok_is_op(r->s, t, ",")) break;
    }
    return k;
}

/* Whether token runs [a, ae) and [b, be) spell the same tokens. */
static int same_tokens(const rl *r, size_t a, size_t ae, size_t b, size_t be) {
    if (ae - a != be - b) return 0;
    for (; a < ae; a++, b++)
        if (r->t[a].len != r->t[b].len || memcmp(r->s + r->t[a].off, r->s + r->t[b].off, r->t[a].len)) return 0;
    return 1;
}

/* A chunk reading what another chunk writes would see the order: every load of the body from
 * a pointer the body stores through must address the very elements the store does (Inductor's
 * in-place `in_out_ptr` reads and writes one element at one index). 1, or 0 with why. */
static int no_memory_carry(const rl *r, size_t a, size_t end, char *why, size_t whylen) {
    for (size_t k = a; k + 4 < end; k++) {
        if (!is_tl_call(r, k, "store")) continue;
        size_t sa = k + 4, se = arg_end(r, sa, end);
        for (size_t q = a; q < end; q++) {
            if (!is_load_arg(r, q) || !same_tokens(r, q, q + 1, sa, sa + 1)) continue;
            if (!same_tokens(r, q, arg_end(r, q, end), sa, se))
                return refuse(why, whylen, "line %u: '%.*s' is loaded at other elements than the pass stores there",
                              r->t[q].line, (int)r->t[q].len, r->s + r->t[q].off);
        }
    }
    return 1;
}

/* The analysis; on success *hdr is the header's `r0_offset` token and *body the body's first. */
static int analyse(const rl *r, size_t *hdr, size_t *body, char *why, size_t whylen) {
    const char *s = r->s;
    size_t nloops = 0, last = 0, last_indent = 0;
    int level = 0, last_level = -1;
    for (size_t i = 0; i < r->n; i++) {
        if (r->t[i].kind == PYT_INDENT) level++;
        else if (r->t[i].kind == PYT_DEDENT) level--;
        size_t ind;
        if (pytok_is_name(s, &r->t[i], "for") && is_header(r, i, &ind)) {
            nloops++;
            last = i;
            last_indent = ind;
            last_level = level;
        }
    }
    if (nloops < 2) return refuse(why, whylen, "%zu loop(s) over r0 chunks: no second pass to re-read a row", nloops);
    if (last_level != 1) return refuse(why, whylen, "the last pass is not at the kernel's top level");
    /* the body: from the INDENT to its DEDENT, no nested block */
    size_t a = last_indent + 1, end = a;
    while (end < r->n && r->t[end].kind != PYT_DEDENT) {
        if (r->t[end].kind == PYT_INDENT)
            return refuse(why, whylen, "line %u: a block inside the last pass", r->t[end].line);
        end++;
    }
    if (end == r->n) return refuse(why, whylen, "the last pass has no end");
    for (size_t k = end; k < r->n; k++)
        if (r->t[k].kind != PYT_DEDENT && r->t[k].kind != PYT_END)
            return refuse(why, whylen, "line %u: a statement after the last pass", r->t[k].line);
    /* the body's statements, each checked for its form once; the names they assign */
    size_t cap = 0;
    for (size_t k = a; k < end; k++) cap += r->t[k].kind == PYT_NEWLINE;
    stmt *sv = kcalloc(cap + 1, sizeof *sv);
    size_t ns = 0;
    spans targets = {0}, assigned = {0}, derived = {0};
    int ok = 1, loads_again = 0;
    for (size_t st = a; ok && st < end; ns++) {
        stmt *x = &sv[ns];
        x->a = st;
        x->b = st;
        while (x->b < end && r->t[x->b].kind != PYT_NEWLINE) x->b++;
        ok = statement_form(r, x->a, x->b, &x->reads, &x->store, why, whylen);
        for (size_t k = x->a; ok && !x->store && k + 1 < x->reads; k += 2) spans_add(&targets, &r->t[k]);
        st = x->b + 1;
    }
    /* in order: what each reads was assigned before it; which names follow the chunk */
    for (size_t i = 0; ok && i < ns; i++) {
        const stmt *x = &sv[i];
        int depth = 0, is_derived = 0, ptr_derived = 0, in_ptr = x->store;
        for (size_t k = x->reads; ok && k < x->b; k++) {
            const pytok *t = &r->t[k];
            if (pytok_opens(s, t)) depth++;
            else if (pytok_closes(s, t)) depth--;
            if (x->store && depth == 1 && pytok_is_op(s, t, ",")) in_ptr = 0;
            if (!is_read(r, k, x->b, depth)) continue;
            if (spans_has(&targets, s, t) && !spans_has(&assigned, s, t))
                ok = refuse(why, whylen, "line %u: '%.*s' is read before the pass assigns it (carried between chunks)",
                            t->line, (int)t->len, s + t->off);
            int d = pytok_is_name(s, t, "r0_offset") || spans_has(&derived, s, t);
            is_derived |= d;
            if (in_ptr && depth >= 1) ptr_derived |= d;
            /* `tl.load(NAME` also loaded before the pass: a re-read */
            if (is_load_arg(r, k))
                for (size_t q = 0; q < last && !loads_again; q++)
                    loads_again =
                        is_load_arg(r, q) && r->t[q].len == t->len && !memcmp(s + r->t[q].off, s + t->off, t->len);
        }
        if (ok && x->store && !ptr_derived)
            ok = refuse(why, whylen, "line %u: a store whose address does not depend on the chunk", r->t[x->a].line);
        for (size_t k = x->a; ok && !x->store && k + 1 < x->reads; k += 2) {
            spans_add(&assigned, &r->t[k]);
            if (is_derived) spans_add(&derived, &r->t[k]);
        }
    }
    free(sv);
    free(targets.v);
    free(assigned.v);
    free(derived.v);
    if (!ok) return 0;
    if (!no_memory_carry(r, a, end, why, whylen)) return 0;
    if (!loads_again)
        return refuse(why, whylen, "the last pass loads nothing an earlier pass loaded: no re-read to serve from L2");
    *hdr = last + 1;
    *body = a;
    return 1;
}

static int analyse_src(const char *src, pytok **toks, size_t *hdr, size_t *body, char *why, size_t whylen) {
    *toks = NULL;
    if (!src) return refuse(why, whylen, "no Triton source");
    if (strstr(src, "kopt_rev")) return refuse(why, whylen, "the source already names kopt_rev");
    size_t n = 0;
    kerr e = {0};
    if (pylex_all(src, strlen(src), 0, toks, &n, &e)) return refuse(why, whylen, "%s", e.msg);
    rl r = {src, *toks, n};
    return analyse(&r, hdr, body, why, whylen);
}

int revloop_applies(const char *src, char *why, size_t whylen) {
    pytok *t = NULL;
    size_t hdr = 0, body = 0;
    int ok = analyse_src(src, &t, &hdr, &body, why, whylen);
    free(t);
    return ok;
}

char *revloop_apply(const char *src, char *why, size_t whylen) {
    pytok *t = NULL;
    size_t hdr = 0, body = 0;
    if (!analyse_src(src, &t, &hdr, &body, why, whylen)) {
        free(t);
        return NULL;
    }
    const pytok *h = &t[hdr], *b = &t[body];
    const char *line = src + b->off; /* the body's indentation: its first line's leading blanks */
    while (line > src && line[-1] != '\n') line--;
    const char *nl = strchr(src + h->off, '\n');
    kbuf out = KBUF_INIT;
    kbuf_append(&out, src, h->off);
    kbuf_puts(&out, "kopt_rev");
    kbuf_append(&out, src + h->off + h->len, (size_t)(nl + 1 - (src + h->off + h->len)));
    kbuf_append(&out, line, (size_t)(src + b->off - line));
    kbuf_puts(&out, "r0_offset = ((r0_numel - 1) // R0_BLOCK) * R0_BLOCK - kopt_rev\n");
    kbuf_puts(&out, nl + 1);
    free(t);
    return kbuf_steal(&out);
}
