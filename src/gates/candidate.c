/* candidate.c — see candidate.h.
 *
 * Parsing runs in passes over the code tokens (comments removed):
 *   1. statement starts (after NEWLINE / INDENT / DEDENT / ';');
 *   2. scopes: a recursive scan builds the module scope and one scope per def, lambda and
 *      class body, recording every binding (assignment and for/with/except targets, walrus,
 *      def/class names, parameters, imports, global declarations);
 *   3. resolution of each NAME token through its scope chain (Python's LEGB, class scopes
 *      seen only from their own body);
 *   4. top-level statements: definitions, decorators (@triton.jit, @triton_heuristics.*);
 *   5. form detection and the main function's parameters.
 * Everything is bounded by the token array, whose last element is END; tk() clamps indices so
 * malformed text never reads past it.
 */
#include "gates/candidate.h"

#include "artifact/region.h"

#include "artifact/region.h"
#include "gates/plan.h"

#include <stdlib.h>
#include <string.h>

/* ---------- small helpers ---------- */

static const char *const PY_KEYWORDS[] = {
    "False", "None",   "True",    "and",      "as",     "assert", "async",  "await",
    "break", "class",  "continue", "def",     "del",    "elif",   "else",   "except",
    "finally", "for",  "from",    "global",   "if",     "import", "in",     "is",
    "lambda", "nonlocal", "not",  "or",       "pass",   "raise",  "return", "try",
    "while", "with",   "yield",   NULL};

static int kw_is(const char *s, size_t n) {
    for (int i = 0; PY_KEYWORDS[i]; i++)
        if (strlen(PY_KEYWORDS[i]) == n && !memcmp(PY_KEYWORDS[i], s, n)) return 1;
    return 0;
}

static void *grow(void *arr, size_t *cap, size_t n, size_t elsz) {
    if (n < *cap) return arr;
    size_t nc = *cap ? *cap * 2 : 8;
    while (nc <= n) nc *= 2;
    *cap = nc;
    return krealloc(arr, nc * elsz);
}

int candidate_is_ident(const char *s) {
    if (!s || !*s) return 0;
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (const char *p = s + 1; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
              (*p >= '0' && *p <= '9')))
            return 0;
    return !kw_is(s, strlen(s));
}

/* A `replaces=` value: a kernel name, or a region's kernels joined by '+' ("K1+K2"). */
static int is_binding(const char *s) {
    if (region_vendor_op(s) >= 0) return 1;   /* one ATen call (a vendor region) */
    char *copy = kstrdup(s), *save = NULL;
    int ok = *s && s[strlen(s) - 1] != '+';
    for (char *t = strtok_r(copy, "+", &save); t && ok; t = strtok_r(NULL, "+", &save)) ok = candidate_is_ident(t);
    free(copy);
    return ok && !strstr(s, "++") && *s != '+';
}

/* ---------- parse context ---------- */

enum { SC_MODULE = 0, SC_FUNC, SC_LAMBDA, SC_CLASS };

typedef struct cbind {
    uint32_t off, len;      /* the name, in the text */
    size_t tok;             /* first binding token */
    int import;             /* bound only by import statements so far */
} cbind;

typedef struct cscope {
    int kind, parent;
    cbind *b;
    size_t nb, cb;
    cbind *glob;            /* names declared global / nonlocal */
    size_t ng, cg;
} cscope;

typedef struct mevent {     /* one module-scope binding event */
    size_t tok;
    int import;
} mevent;

typedef struct cctx {
    candidate *c;
    const char *s;
    pytok *t;
    size_t n;
    cscope *sc;
    size_t nsc, csc;
    size_t *tscope;
    mevent *ev;
    size_t nev, cev;
    size_t defcap, impcap, jitcap, mncap;
    kerr *e;
    int failed;
    int nest;               /* scan_range recursion depth */
} cctx;

static const pytok *tk(const cctx *x, size_t i) { return &x->t[i < x->n ? i : x->n - 1]; }
static int is_op(const cctx *x, size_t i, const char *s) { return pytok_is_op(x->s, tk(x, i), s); }
static int is_nm(const cctx *x, size_t i, const char *s) {
    return pytok_is_name(x->s, tk(x, i), s);
}
static int kind_of(const cctx *x, size_t i) { return (int)tk(x, i)->kind; }
static int is_kwtok(const cctx *x, size_t i) {
    const pytok *t = tk(x, i);
    return t->kind == PYT_NAME && kw_is(x->s + t->off, t->len);
}
static int is_plain_name(const cctx *x, size_t i) {
    return kind_of(x, i) == PYT_NAME && !is_kwtok(x, i);
}
static int depth_at(const cctx *x, size_t i) { return x->c->depth[i < x->n ? i : x->n - 1]; }
static int is_opener(const cctx *x, size_t i) {
    return is_op(x, i, "(") || is_op(x, i, "[") || is_op(x, i, "{");
}
static int is_closer(const cctx *x, size_t i) {
    return is_op(x, i, ")") || is_op(x, i, "]") || is_op(x, i, "}");
}
static int is_aug_assign(const cctx *x, size_t i) {
    static const char *const ops[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=",
                                      "&=", "|=", "^=", "@=", NULL};
    for (int k = 0; ops[k]; k++)
        if (is_op(x, i, ops[k])) return 1;
    return 0;
}
static int line_end_tok(const cctx *x, size_t i) {
    int k = kind_of(x, i);
    return k == PYT_NEWLINE || k == PYT_END;
}

static int fail(cctx *x, size_t i, const char *msg) {
    if (x->failed) return x->e ? x->e->code : KOPT_E_CANDIDATE;
    x->failed = 1;
    return kerr_set(x->e, KOPT_E_CANDIDATE, "line %u: %s", tk(x, i)->line, msg);
}

/* Index of the closer matching the opener at i (END if none). */
static size_t match_close(const cctx *x, size_t i) {
    int d = depth_at(x, i);
    for (size_t k = i + 1; k < x->n; k++) {
        if (depth_at(x, k) == d + 1 && is_closer(x, k)) return k;
        if (kind_of(x, k) == PYT_END) return k;
    }
    return x->n - 1;
}
/* Index of the DEDENT matching the INDENT at i (END if none). */
static size_t match_dedent(const cctx *x, size_t i) {
    int level = 0;
    for (size_t k = i; k < x->n; k++) {
        if (kind_of(x, k) == PYT_INDENT) level++;
        else if (kind_of(x, k) == PYT_DEDENT && --level == 0) return k;
        else if (kind_of(x, k) == PYT_END) return k;
    }
    return x->n - 1;
}
/* The NEWLINE (or END) ending the logical line that token i is on. */
static size_t line_end(const cctx *x, size_t i) {
    while (!line_end_tok(x, i)) i++;
    return i < x->n ? i : x->n - 1;
}

/* ---------- scopes and bindings ---------- */

static int new_scope(cctx *x, int kind, int parent) {
    x->sc = grow(x->sc, &x->csc, x->nsc, sizeof *x->sc);
    cscope *s = &x->sc[x->nsc];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->parent = parent;
    return (int)x->nsc++;
}

static cbind *scope_find(const cscope *s, const char *text, const char *name, size_t len) {
    for (size_t i = 0; i < s->nb; i++)
        if (s->b[i].len == len && !memcmp(text + s->b[i].off, name, len)) return &s->b[i];
    return NULL;
}
static int scope_is_global(const cscope *s, const char *text, const char *name, size_t len) {
    for (size_t i = 0; i < s->ng; i++)
        if (s->glob[i].len == len && !memcmp(text + s->glob[i].off, name, len)) return 1;
    return 0;
}

static void bind(cctx *x, int sc, size_t tok, int import) {
    const pytok *t = tk(x, tok);
    if (t->kind != PYT_NAME || kw_is(x->s + t->off, t->len)) return;
    cscope *s = &x->sc[sc];
    if (sc == 0) {
        x->ev = grow(x->ev, &x->cev, x->nev, sizeof *x->ev);
        x->ev[x->nev++] = (mevent){tok, import};
    }
    cbind *b = scope_find(s, x->s, x->s + t->off, t->len);
    if (b) {
        b->import &= import;
        return;
    }
    s->b = grow(s->b, &s->cb, s->nb, sizeof *s->b);
    s->b[s->nb++] = (cbind){t->off, t->len, tok, import};
}

/* Bind the plain names of an assignment target expression in tokens [a, b). Names followed by
 * '.', '(' or '[' (attribute / subscript / call targets) and everything inside a trailer's
 * brackets are not bound; tuple and list displays are descended into. */
static void bind_targets(cctx *x, size_t a, size_t b, int sc) {
    size_t j = a;
    while (j < b) {
        if (is_opener(x, j)) {
            int trailer = j > a && (is_plain_name(x, j - 1) || is_op(x, j - 1, ")") ||
                                    is_op(x, j - 1, "]") || kind_of(x, j - 1) == PYT_STRING);
            if (trailer) {
                j = match_close(x, j) + 1;
                continue;
            }
            j++;
            continue;
        }
        if (is_plain_name(x, j) && !(j > a && is_op(x, j - 1, ".")) && !is_op(x, j + 1, ".") &&
            !is_op(x, j + 1, "(") && !is_op(x, j + 1, "["))
            bind(x, sc, j, 0);
        j++;
    }
}

static void mark_stmt_start(cctx *x, size_t i) {
    if (i < x->n && !line_end_tok(x, i)) x->c->tflags[i] |= CTOK_STMT_START;
}

static int scan_range(cctx *x, size_t a, size_t b, int sc);

/* Parameters of a def (between the parens lp..rp) or a lambda (between `lambda` and its ':'):
 * names marked CREF_PARAM and bound in `child`; default values flagged CTOK_DEFAULT.
 * If `out` is non-NULL the list is also returned. */
static void do_params(cctx *x, size_t a, size_t b, int d, int child, cand_param **out,
                      size_t *nout) {
    size_t cap = 0;
    size_t j = a;
    while (j < b) {
        /* one parameter: [*|**] NAME [: annotation] [= default] | * | / */
        size_t seg_end = j;
        while (seg_end < b && !(depth_at(x, seg_end) == d && is_op(x, seg_end, ","))) seg_end++;
        size_t k = j;
        const char *star = "";
        if (is_op(x, k, "*")) { star = "*"; k++; }
        else if (is_op(x, k, "**")) { star = "**"; k++; }
        if (k < seg_end && is_plain_name(x, k)) {
            if (child >= 0) {
                x->c->ref[k] = CREF_PARAM;
                bind(x, child, k, 0);
            }
            int cexpr = 0, dflt = 0;
            size_t m = k + 1;
            if (m < seg_end && is_op(x, m, ":")) {
                size_t ann = m + 1, last = ann;
                while (m < seg_end && !(depth_at(x, m) == d && is_op(x, m, "="))) last = m++;
                /* tl.constexpr, triton.language.constexpr or constexpr: the annotation is a
                 * plain dotted chain ending in `constexpr` */
                int chain = ann <= last;
                for (size_t q = ann; q <= last && chain; q++)
                    chain = ((q - ann) % 2 == 0) ? is_plain_name(x, q) : is_op(x, q, ".");
                cexpr = chain && is_nm(x, last, "constexpr") && (last - ann) % 2 == 0;
            }
            while (m < seg_end && !(depth_at(x, m) == d && is_op(x, m, "="))) m++;
            if (m < seg_end) {
                dflt = 1;
                for (size_t q = m + 1; q < seg_end; q++) x->c->tflags[q] |= CTOK_DEFAULT;
            }
            if (out) {
                *out = grow(*out, &cap, *nout, sizeof **out);
                const pytok *t = tk(x, k);
                char *nm = kstrndup(x->s + t->off, t->len);
                char *full = kasprintf("%s%s", star, nm);
                free(nm);
                (*out)[(*nout)++] = (cand_param){full, cexpr, dflt, (int)t->line};
            }
        }
        j = seg_end + 1;
    }
}

/* Header and body of a compound statement whose header starts at h (`def`, `class`).
 * *colon: the header's ':'; [*b0, *b1): body tokens; returns the index after the statement. */
static size_t block_of(cctx *x, size_t h, size_t from, size_t *colon, size_t *b0, size_t *b1) {
    int d = depth_at(x, h);
    size_t j = from;
    while (!line_end_tok(x, j) && !(depth_at(x, j) == d && is_op(x, j, ":"))) j++;
    if (line_end_tok(x, j)) {
        fail(x, h, is_nm(x, h, "class") ? "malformed class statement: no ':' ending its header"
                                        : "malformed def: no ':' ending its header");
        *colon = *b0 = *b1 = j;
        return j + 1;
    }
    *colon = j;
    if (kind_of(x, j + 1) == PYT_NEWLINE && kind_of(x, j + 2) == PYT_INDENT) {
        *b0 = j + 3;
        *b1 = match_dedent(x, j + 2);
        return kind_of(x, *b1) == PYT_END ? *b1 : *b1 + 1;
    }
    if (kind_of(x, j + 1) == PYT_NEWLINE || kind_of(x, j + 1) == PYT_END) {
        fail(x, h, is_nm(x, h, "class") ? "class statement without a body"
                                        : "def statement without a body");
        *b0 = *b1 = j + 1;
        return j + 2;
    }
    *b0 = j + 1;
    *b1 = line_end(x, j + 1);
    mark_stmt_start(x, *b0);
    return kind_of(x, *b1) == PYT_END ? *b1 : *b1 + 1;
}

static void set_scope(cctx *x, size_t a, size_t b, int sc) {
    for (size_t i = a; i < b && i < x->n; i++) x->tscope[i] = (size_t)sc;
}

static size_t do_def(cctx *x, size_t i, int sc) {
    size_t nm = i + 1, lp = i + 2;
    if (!is_plain_name(x, nm) || !is_op(x, lp, "(")) {
        fail(x, i, "malformed def: expected `def NAME(`");
        return line_end(x, i) + 1;
    }
    bind(x, sc, nm, 0);
    size_t rp = match_close(x, lp);
    size_t colon, b0, b1;
    size_t end = block_of(x, i, rp + 1, &colon, &b0, &b1);
    if (x->failed) return end;
    int child = new_scope(x, SC_FUNC, sc);
    do_params(x, lp + 1, rp, depth_at(x, lp) + 1, child, NULL, NULL);
    /* defaults, annotations and the return annotation are evaluated in the enclosing scope */
    if (scan_range(x, lp + 1, colon, sc)) return end;
    set_scope(x, b0, b1, child);
    scan_range(x, b0, b1, child);
    return end;
}

static size_t do_class(cctx *x, size_t i, int sc) {
    size_t nm = i + 1;
    if (!is_plain_name(x, nm)) {
        fail(x, i, "malformed class statement: expected `class NAME`");
        return line_end(x, i) + 1;
    }
    bind(x, sc, nm, 0);
    size_t colon, b0, b1;
    size_t end = block_of(x, i, nm + 1, &colon, &b0, &b1);
    if (x->failed) return end;
    if (scan_range(x, nm + 1, colon, sc)) return end;
    int child = new_scope(x, SC_CLASS, sc);
    set_scope(x, b0, b1, child);
    scan_range(x, b0, b1, child);
    return end;
}

/* A lambda at i: returns the index after its body. */
static size_t do_lambda(cctx *x, size_t i, int sc) {
    int d = depth_at(x, i);
    size_t colon = i + 1;
    while (!line_end_tok(x, colon) && !(depth_at(x, colon) == d && is_op(x, colon, ":"))) colon++;
    if (line_end_tok(x, colon)) {
        fail(x, i, "malformed lambda: no ':'");
        return colon;
    }
    int child = new_scope(x, SC_LAMBDA, sc);
    do_params(x, i + 1, colon, d, child, NULL, NULL);
    if (scan_range(x, i + 1, colon, sc)) return colon;
    size_t j = colon + 1;
    int pending = 0;
    while (j < x->n) {
        if (depth_at(x, j) < d) break;
        if (depth_at(x, j) == d) {
            if (line_end_tok(x, j) || is_op(x, j, ";") || is_op(x, j, ",") || is_closer(x, j) ||
                is_nm(x, j, "for") || is_op(x, j, "="))
                break;
            if (is_nm(x, j, "lambda")) pending++;
            if (is_op(x, j, ":")) {
                if (!pending) break;
                pending--;
            }
        }
        j++;
    }
    set_scope(x, colon + 1, j, child);
    scan_range(x, colon + 1, j, child);
    return j;
}

static void add_import(cctx *x, const char *module, const char *name, const char *bound,
                       const char *target, size_t kwtok, int sc) {
    candidate *c = x->c;
    c->imports = grow(c->imports, &x->impcap, c->nimports, sizeof *c->imports);
    const pytok *t = tk(x, kwtok);
    c->imports[c->nimports++] = (cand_import){
        kstrdup(module), name ? kstrdup(name) : NULL, bound ? kstrdup(bound) : NULL,
        target ? kstrdup(target) : NULL, (int)t->line, candidate_col(c, t->off, (int)t->line),
        kwtok, sc == 0};
}

/* A dotted name at *j (NAME ('.' NAME)*) appended to b; *j moves past it. 0 if none. */
static int read_dotted(cctx *x, size_t *j, kbuf *b) {
    if (!is_plain_name(x, *j)) return 0;
    for (;;) {
        const pytok *t = tk(x, *j);
        kbuf_append(b, x->s + t->off, t->len);
        (*j)++;
        if (is_op(x, *j, ".") && is_plain_name(x, *j + 1)) {
            kbuf_putc(b, '.');
            (*j)++;
            continue;
        }
        return 1;
    }
}

static void do_import(cctx *x, size_t s, int sc) {
    size_t end = s;
    while (!line_end_tok(x, end) && !(depth_at(x, end) == 0 && is_op(x, end, ";"))) end++;
    for (size_t k = s; k < end; k++) x->c->tflags[k] |= CTOK_IN_IMPORT;
    kbuf mod = KBUF_INIT, tmp = KBUF_INIT;
    size_t j = s + 1;
    if (is_nm(x, s, "import")) {
        while (j < end) {
            kbuf_reset(&mod);
            size_t j0 = j;
            if (!read_dotted(x, &j, &mod)) break;
            if (is_nm(x, j, "as") && is_plain_name(x, j + 1)) {
                const pytok *t = tk(x, j + 1);
                char *as = kstrndup(x->s + t->off, t->len);
                bind(x, sc, j + 1, 1);
                add_import(x, kbuf_str(&mod), NULL, as, kbuf_str(&mod), s, sc);
                free(as);
                j += 2;
            } else {
                const char *dot = strchr(kbuf_str(&mod), '.');
                char *head = dot ? kstrndup(kbuf_str(&mod), (size_t)(dot - kbuf_str(&mod)))
                                 : kstrdup(kbuf_str(&mod));
                bind(x, sc, j0, 1);
                add_import(x, kbuf_str(&mod), NULL, head, head, s, sc);
                free(head);
            }
            if (is_op(x, j, ",")) j++;
            else break;
        }
    } else { /* from */
        while (is_op(x, j, ".") || is_op(x, j, "...")) {
            const pytok *t = tk(x, j);
            kbuf_append(&mod, x->s + t->off, t->len);
            j++;
        }
        read_dotted(x, &j, &mod);
        if (is_nm(x, j, "import")) {
            j++;
            if (is_op(x, j, "(")) j++;
            if (is_op(x, j, "*")) {
                add_import(x, kbuf_str(&mod), "*", NULL, NULL, s, sc);
            } else {
                while (j < end && is_plain_name(x, j)) {
                    const pytok *t = tk(x, j);
                    char *nm = kstrndup(x->s + t->off, t->len);
                    size_t btok = j;
                    j++;
                    if (is_nm(x, j, "as") && is_plain_name(x, j + 1)) {
                        btok = j + 1;
                        j += 2;
                    }
                    const pytok *bt = tk(x, btok);
                    char *bn = kstrndup(x->s + bt->off, bt->len);
                    kbuf_reset(&tmp);
                    kbuf_printf(&tmp, "%s.%s", kbuf_str(&mod), nm);
                    bind(x, sc, btok, 1);
                    add_import(x, kbuf_str(&mod), nm, bn, kbuf_str(&tmp), s, sc);
                    free(nm);
                    free(bn);
                    if (is_op(x, j, ",")) j++;
                    else break;
                }
            }
        }
    }
    kbuf_free(&mod);
    kbuf_free(&tmp);
}

static int is_compound_kw(const cctx *x, size_t i) {
    static const char *const kws[] = {"if", "elif", "else", "for", "while", "with", "try",
                                      "except", "finally", "async", NULL};
    for (int k = 0; kws[k]; k++)
        if (is_nm(x, i, kws[k])) return 1;
    return 0;
}

/* Bindings made by the simple statement starting at s (assignment targets, global
 * declarations), and the start of a one-line compound statement's body. */
static void stmt_bindings(cctx *x, size_t s, int sc) {
    if (is_op(x, s, "@")) {
        for (size_t k = s; !line_end_tok(x, k); k++) x->c->tflags[k] |= CTOK_DECORATOR;
        return;
    }
    if (is_nm(x, s, "import") || is_nm(x, s, "from")) {
        do_import(x, s, sc);
        return;
    }
    if (is_nm(x, s, "global") || is_nm(x, s, "nonlocal")) {
        cscope *S = &x->sc[sc];
        for (size_t k = s + 1; !line_end_tok(x, k) && !is_op(x, k, ";"); k++) {
            if (!is_plain_name(x, k)) continue;
            const pytok *t = tk(x, k);
            S->glob = grow(S->glob, &S->cg, S->ng, sizeof *S->glob);
            S->glob[S->ng++] = (cbind){t->off, t->len, k, 0};
        }
        return;
    }
    int compound = is_compound_kw(x, s);
    const size_t NONE = (size_t)-1;
    size_t seg = s;
    for (size_t j = s; !line_end_tok(x, j); j++) {
        if (depth_at(x, j) != 0) continue;
        if (is_op(x, j, ";")) break;
        if (is_nm(x, j, "lambda") && !compound) break;
        if (is_op(x, j, ":")) {
            if (compound) {
                mark_stmt_start(x, j + 1);
                break;
            }
            if (seg != NONE) bind_targets(x, seg, j, sc); /* annotated assignment */
            seg = NONE;
            continue;
        }
        if (compound) continue;
        if (is_op(x, j, "=")) {
            if (seg != NONE) bind_targets(x, seg, j, sc);
            seg = j + 1;
        } else if (is_aug_assign(x, j)) {
            if (seg != NONE) bind_targets(x, seg, j, sc);
            seg = NONE;
        }
    }
}

/* Scan tokens [a, b) belonging to scope sc. */
static int scan_range(cctx *x, size_t a, size_t b, int sc) {
    if (x->nest >= CANDIDATE_MAX_NEST) {
        fail(x, a, "definitions and lambdas nested too deeply");
        return 1;
    }
    x->nest++;
    size_t i = a;
    while (i < b && !x->failed) {
        if (x->c->tflags[i] & CTOK_STMT_START) {
            if (is_nm(x, i, "def") || (is_nm(x, i, "async") && is_nm(x, i + 1, "def"))) {
                size_t d = is_nm(x, i, "async") ? i + 1 : i;
                i = do_def(x, d, sc);
                continue;
            }
            if (is_nm(x, i, "class")) {
                i = do_class(x, i, sc);
                continue;
            }
            stmt_bindings(x, i, sc);
        }
        if (is_nm(x, i, "lambda")) {
            i = do_lambda(x, i, sc);
            continue;
        }
        if (is_nm(x, i, "for")) {
            size_t k = i + 1;
            int d = depth_at(x, i);
            while (!line_end_tok(x, k) && !(depth_at(x, k) == d && is_nm(x, k, "in"))) k++;
            bind_targets(x, i + 1, k, sc);
        } else if (is_nm(x, i, "as") && !(x->c->tflags[i] & CTOK_IN_IMPORT)) {
            if (is_plain_name(x, i + 1)) bind(x, sc, i + 1, 0);
        } else if (is_op(x, i, ":=") && i > 0 && is_plain_name(x, i - 1)) {
            bind(x, sc, i - 1, 0);
        }
        i++;
    }
    x->nest--;
    return x->failed;
}

/* ---------- resolution ---------- */

static void resolve_all(cctx *x) {
    candidate *c = x->c;
    for (size_t i = 0; i < x->n; i++) {
        const pytok *t = &x->t[i];
        if (t->kind != PYT_NAME || c->ref[i] == CREF_PARAM) continue;
        const char *nm = x->s + t->off;
        if (kw_is(nm, t->len)) { c->ref[i] = CREF_NONE; continue; }
        if (i > 0 && is_op(x, i - 1, ".")) { c->ref[i] = CREF_ATTR; continue; }
        if (c->depth[i] > 0 && is_op(x, i + 1, "=")) { c->ref[i] = CREF_KWNAME; continue; }
        int s = (int)x->tscope[i], innermost = 1;
        cand_ref r = CREF_FREE;
        while (s >= 0) {
            const cscope *S = &x->sc[s];
            if (S->kind == SC_FUNC || S->kind == SC_LAMBDA) {
                if (scope_is_global(S, x->s, nm, t->len)) { s = 0; innermost = 0; continue; }
                if (scope_find(S, x->s, nm, t->len)) { r = CREF_LOCAL; break; }
            } else if (S->kind == SC_CLASS) {
                if (innermost && scope_find(S, x->s, nm, t->len)) { r = CREF_LOCAL; break; }
            } else {
                const cbind *b = scope_find(S, x->s, nm, t->len);
                if (b) r = b->import ? CREF_IMPORT : CREF_MODULE;
                break;
            }
            s = S->parent;
            innermost = 0;
        }
        c->ref[i] = (uint8_t)r;
    }
    for (size_t i = 0; i < x->n; i++) {
        int s = (int)x->tscope[i];
        if (s == 0) c->tflags[i] |= CTOK_MODULE_LEVEL;
        if (x->sc[s].kind == SC_CLASS) c->tflags[i] |= CTOK_CLASS_BODY;
        for (int k = s; k >= 0; k = x->sc[k].parent)
            if (x->sc[k].kind == SC_FUNC || x->sc[k].kind == SC_LAMBDA) {
                c->tflags[i] |= CTOK_IN_FUNC;
                break;
            }
    }
}

/* ---------- top-level statements ---------- */

/* The dotted chain of a decorator at '@' (at), its head resolved through the imports
 * (`import triton as tr` makes "tr.jit" "triton.jit"); an unimported head stays as written. */
static char *decorator_chain(cctx *x, size_t at) {
    kbuf b = KBUF_INIT;
    size_t j = at + 1;
    read_dotted(x, &j, &b);
    const char *ch = kbuf_str(&b);
    size_t hl = strcspn(ch, ".");
    const char *target = NULL;
    for (size_t i = 0; i < x->c->nimports; i++) {
        const cand_import *im = &x->c->imports[i];
        if (im->bound && strlen(im->bound) == hl && !memcmp(im->bound, ch, hl)) target = im->target;
    }
    if (!target) return kbuf_steal(&b);
    char *r = kasprintf("%s%s", target, ch + hl);
    kbuf_free(&b);
    return r;
}

static void push_def(cctx *x, const char *name, cand_def_kind kind, size_t s, size_t end,
                     size_t b0, size_t b1) {
    candidate *c = x->c;
    size_t last = end;
    while (last > s && (kind_of(x, last - 1) == PYT_NEWLINE || kind_of(x, last - 1) == PYT_INDENT ||
                        kind_of(x, last - 1) == PYT_DEDENT || kind_of(x, last - 1) == PYT_END))
        last--;
    const pytok *t0 = tk(x, s), *tl = tk(x, last ? last - 1 : 0);
    c->defs = grow(c->defs, &x->defcap, c->ndefs, sizeof *c->defs);
    cand_def *d = &c->defs[c->ndefs++];
    memset(d, 0, sizeof *d);
    d->name = kstrdup(name);
    d->kind = kind;
    d->line = (int)t0->line;
    d->off = t0->off;
    d->len = last > s ? (size_t)tl->off + tl->len - t0->off : 0;
    d->tok0 = s;
    d->tok1 = end;
    d->body0 = b0;
    d->body1 = b1;
}

static int toplevel(cctx *x) {
    candidate *c = x->c;
    size_t i = 0;
    while (kind_of(x, i) != PYT_END) {
        int k = kind_of(x, i);
        if (k == PYT_NEWLINE || k == PYT_DEDENT) { i++; continue; }
        if (k == PYT_INDENT) return fail(x, i, "unexpected indentation at module level");
        size_t s = i;
        while (is_op(x, i, "@")) i = line_end(x, i) + 1;
        size_t h = i;
        if (is_nm(x, h, "async") && is_nm(x, h + 1, "def")) h++;
        if (h != s && !is_nm(x, h, "def") && !is_nm(x, h, "class"))
            return fail(x, s, "a decorator must be followed by def or class");
        if (is_nm(x, h, "def") || is_nm(x, h, "class")) {
            size_t colon, b0, b1;
            int isdef = is_nm(x, h, "def");
            size_t end = block_of(x, h, h + 2, &colon, &b0, &b1);
            if (x->failed) return x->e ? x->e->code : KOPT_E_CANDIDATE;
            const pytok *nt = tk(x, h + 1);
            char *name = kstrndup(x->s + nt->off, nt->len);
            push_def(x, name, isdef ? CAND_DEF_FUNC : CAND_DEF_CLASS, s, end, b0, b1);
            cand_def *d = &c->defs[c->ndefs - 1];
            for (size_t a = s; a < h; a = line_end(x, a) + 1) {
                if (!is_op(x, a, "@")) continue;
                char *ch = decorator_chain(x, a);
                if (isdef && !strcmp(ch, "triton.jit")) d->jit = 1;
                const char *hk = NULL;
                if (!strncmp(ch, "triton_heuristics.", 18)) hk = ch + 18;
                else if (!strncmp(ch, "torch._inductor.runtime.triton_heuristics.", 42)) hk = ch + 42;
                if (hk && *hk && !strchr(hk, '.') && !d->heuristic) d->heuristic = kstrdup(hk);
                free(ch);
            }
            if (d->jit) {
                c->jit_names = grow(c->jit_names, &x->jitcap, c->njit, sizeof *c->jit_names);
                c->jit_names[c->njit++] = kstrdup(name);
                for (size_t q = h; q < end && q < x->n; q++) c->tflags[q] |= CTOK_IN_JIT;
            }
            free(name);
            i = end;
            continue;
        }
        /* any other statement: its logical line, and its block when it opens one */
        size_t nl = line_end(x, h);
        size_t end = nl + 1;
        if (nl > h && is_op(x, nl - 1, ":") && kind_of(x, nl + 1) == PYT_INDENT) {
            end = match_dedent(x, nl + 1) + 1;
        }
        if (kind_of(x, nl) == PYT_END) end = nl;
        if (end > x->n - 1) end = x->n - 1;
        /* the value of a simple assignment: after the last top-level '=' before any lambda */
        size_t b0 = nl;
        if (!is_compound_kw(x, h)) {
            for (size_t j = h; j < nl; j++) {
                if (depth_at(x, j) != 0) continue;
                if (is_nm(x, j, "lambda") || is_op(x, j, ";")) break;
                if (is_op(x, j, "=")) b0 = j + 1;
            }
        }
        size_t first_def = c->ndefs;
        for (size_t ev = 0; ev < x->nev; ev++) {
            if (x->ev[ev].import || x->ev[ev].tok < h || x->ev[ev].tok >= end) continue;
            const pytok *t = tk(x, x->ev[ev].tok);
            int dup = 0;
            for (size_t q = first_def; q < c->ndefs; q++)
                if (strlen(c->defs[q].name) == t->len &&
                    !memcmp(c->defs[q].name, x->s + t->off, t->len))
                    dup = 1;
            if (dup) continue;
            char *name = kstrndup(x->s + t->off, t->len);
            push_def(x, name, CAND_DEF_ASSIGN, s, end, b0, nl);
            free(name);
        }
        i = end;
        if (kind_of(x, i) == PYT_END) break;
    }
    return 0;
}

/* ---------- binding comment ---------- */

static int read_binding(cctx *x, const pytok *all, size_t nall) {
    candidate *c = x->c;
    for (size_t i = 0; i < nall && all[i].kind == PYT_COMMENT; i++) {
        const char *p = c->text + all[i].off, *end = p + all[i].len;
        p++;   /* '#' */
        while (p < end && (*p == ' ' || *p == '\t')) p++;
        static const char tag[] = "kopt-candidate:";
        if ((size_t)(end - p) < sizeof tag - 1 || memcmp(p, tag, sizeof tag - 1)) continue;
        p += sizeof tag - 1;
        while (p < end) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) p++;
            const char *w = p;
            while (p < end && *p != ' ' && *p != '\t' && *p != ',') p++;
            if (p == w) break;
            size_t wl = (size_t)(p - w);
            if (wl > 9 && !memcmp(w, "replaces=", 9)) {
                char *name = kstrndup(w + 9, wl - 9);
                if (!is_binding(name)) {
                    int rc = kerr_set(x->e, KOPT_E_CANDIDATE,
                                      "line %u: `# kopt-candidate: replaces=%s`: not a kernel name",
                                      all[i].line, name);
                    free(name);
                    return rc;
                }
                if (c->replaces && strcmp(c->replaces, name)) {
                    int rc = kerr_set(x->e, KOPT_E_CANDIDATE,
                                      "line %u: conflicting bindings: replaces=%s here, "
                                      "replaces=%s at line %d",
                                      all[i].line, name, c->replaces, c->replaces_line);
                    free(name);
                    return rc;
                }
                if (!c->replaces) {
                    c->replaces = name;
                    c->replaces_line = (int)all[i].line;
                } else {
                    free(name);
                }
            } else if (wl >= 9 && !memcmp(w, "replaces=", 9)) {
                return kerr_set(x->e, KOPT_E_CANDIDATE,
                                "line %u: `# kopt-candidate: replaces=` names no kernel",
                                all[i].line);
            }
        }
    }
    return 0;
}

/* ---------- form ---------- */

static int detect_form(cctx *x) {
    candidate *c = x->c;
    int launch = -1, heur = -1;
    for (size_t i = 0; i < c->ndefs; i++) {
        const cand_def *d = &c->defs[i];
        if (d->kind == CAND_DEF_ASSIGN && !strcmp(d->name, "KOPT_PLAN")) {
            if (c->plan_def >= 0)
                return kerr_set(x->e, KOPT_E_CANDIDATE, "line %d: a second KOPT_PLAN (the first is at line %d)",
                                d->line, c->defs[c->plan_def].line);
            c->plan_def = (int)i;
        }
        if (d->kind != CAND_DEF_FUNC) continue;
        if (!strcmp(d->name, "launch")) {
            if (launch >= 0)
                return kerr_set(x->e, KOPT_E_CANDIDATE,
                                "line %d: a second top-level `def launch` (the first is at line %d)",
                                d->line, c->defs[launch].line);
            if (d->jit)
                return kerr_set(x->e, KOPT_E_CANDIDATE,
                                "line %d: `launch` must be a plain Python function, not "
                                "@triton.jit", d->line);
            launch = (int)i;
        }
        if (d->jit && d->heuristic) {
            if (heur >= 0)
                return kerr_set(x->e, KOPT_E_CANDIDATE,
                                "line %d: a second @triton_heuristics-decorated @triton.jit "
                                "function (the first is `%s`, line %d)",
                                d->line, c->defs[heur].name, c->defs[heur].line);
            heur = (int)i;
        }
    }
    if (c->njit == 0)
        return kerr_set(x->e, KOPT_E_CANDIDATE,
                        "line 1: no top-level @triton.jit function: a candidate is a Triton kernel "
                        "(see docs/CANDIDATES.md)");
    if (c->plan_def >= 0 && (launch >= 0 || heur >= 0))
        return kerr_set(x->e, KOPT_E_CANDIDATE,
                        "line %d: KOPT_PLAN and %s (line %d): a plan-form candidate (form P) has no "
                        "launcher or Inductor decorator of its own; kopt writes the launch from the plan",
                        c->defs[c->plan_def].line, launch >= 0 ? "a `def launch`" : "a @triton_heuristics kernel",
                        c->defs[launch >= 0 ? launch : heur].line);
    if (c->plan_def >= 0) {   /* form P: lowered by candidate_parse (plan.h) */
        c->form = CAND_FORM_L;
        c->main_def = c->plan_def;
        return 0;
    }
    if (launch >= 0 && heur >= 0)
        return kerr_set(x->e, KOPT_E_CANDIDATE,
                        "line %d: both forms: a top-level `def launch` (form L, line %d) and a "
                        "@triton_heuristics-decorated kernel `%s` (form I); keep one",
                        c->defs[heur].line, c->defs[launch].line, c->defs[heur].name);
    if (launch < 0 && heur < 0)
        return kerr_set(x->e, KOPT_E_CANDIDATE,
                        "line 1: no form: no `KOPT_PLAN = {...}` (form P), no top-level "
                        "`def launch(...)` (form L) and no @triton.jit function decorated with "
                        "@triton_heuristics.<kind>(...) (form I)");
    c->form = launch >= 0 ? CAND_FORM_L : CAND_FORM_I;
    c->main_def = launch >= 0 ? launch : heur;
    const cand_def *d = &c->defs[c->main_def];
    /* the def's parameter list */
    size_t h = d->tok0;
    while (is_op(x, h, "@")) h = line_end(x, h) + 1;
    if (is_nm(x, h, "async")) h++;
    size_t lp = h + 2, rp = match_close(x, lp);
    do_params(x, lp + 1, rp, depth_at(x, lp) + 1, -1, &c->params, &c->nparams);
    if (c->form == CAND_FORM_L && c->nparams && !strcmp(c->params[c->nparams - 1].name, "_kopt_plan_go"))
        free(c->params[--c->nparams].name); /* kopt's launcher from a plan (plan.h): not the kernel's */
    if (c->form == CAND_FORM_L && c->nparams &&
        !strcmp(c->params[c->nparams - 1].name, "stream")) {
        free(c->params[--c->nparams].name);
        c->launch_stream = 1;
    }
    return 0;
}

/* ---------- parse ---------- */

static int parse_text(const char *text, size_t len, int lower, candidate **out, kerr *e);

int candidate_parse(const char *text, size_t len, candidate **out, kerr *e) { return parse_text(text, len, 1, out, e); }

int candidate_parse_raw(const char *text, size_t len, candidate **out, kerr *e) { return parse_text(text, len, 0, out, e); }

static int parse_text(const char *text, size_t len, int lower, candidate **out, kerr *e) {
    *out = NULL;
    if (len > CANDIDATE_MAX_BYTES)
        return kerr_set(e, KOPT_E_CANDIDATE, "line 1: candidate too large (%zu bytes, at most %d)",
                        len, CANDIDATE_MAX_BYTES);
    candidate *c = kcalloc(1, sizeof *c);
    c->text = kmalloc(len + 1);
    if (len) memcpy(c->text, text, len);
    c->text[len] = '\0';
    c->len = len;
    c->main_def = -1;
    c->plan_def = -1;

    pytok *all = NULL;
    size_t nall = 0;
    kerr le = {0};
    if (pylex_all(c->text, len, PYLEX_COMMENTS, &all, &nall, &le)) {
        int rc = kerr_set(e, KOPT_E_CANDIDATE, "%s", le.msg);
        candidate_free(c);
        return rc;
    }
    cctx x = {0};
    x.c = c;
    x.s = c->text;
    x.e = e;

    /* code tokens */
    c->toks = kmalloc(nall * sizeof *c->toks);
    for (size_t i = 0; i < nall; i++)
        if (all[i].kind != PYT_COMMENT) c->toks[c->ntoks++] = all[i];
    x.t = c->toks;
    x.n = c->ntoks;
    int rc = read_binding(&x, all, nall);
    free(all);
    if (rc) goto fail;

    /* line starts */
    size_t lcap = 0;
    c->line_start = grow(NULL, &lcap, 0, sizeof *c->line_start);
    c->line_start[c->nlines++] = 0;
    for (size_t i = 0; i < len; i++) {
        if (c->text[i] == '\n' || (c->text[i] == '\r' && (i + 1 >= len || c->text[i + 1] != '\n'))) {
            c->line_start = grow(c->line_start, &lcap, c->nlines, sizeof *c->line_start);
            c->line_start[c->nlines++] = (uint32_t)(i + 1);
        }
    }

    /* depth, flags, statement starts */
    c->depth = kcalloc(x.n, sizeof *c->depth);
    c->ref = kcalloc(x.n, sizeof *c->ref);
    c->tflags = kcalloc(x.n, sizeof *c->tflags);
    x.tscope = kcalloc(x.n, sizeof *x.tscope);
    int d = 0;   /* brackets open before each token (a closer counts as inside) */
    for (size_t i = 0; i < x.n; i++) {
        c->depth[i] = (uint16_t)d;
        if (is_opener(&x, i)) d++;
        else if (is_closer(&x, i) && d > 0) d--;
    }
    for (size_t i = 0; i < x.n; i++) {
        int k = (int)x.t[i].kind;
        if (k == PYT_NEWLINE || k == PYT_INDENT || k == PYT_DEDENT || k == PYT_END) continue;
        size_t p = i;
        while (p > 0 && (x.t[p - 1].kind == PYT_INDENT || x.t[p - 1].kind == PYT_DEDENT)) p--;
        if (p == 0 || x.t[p - 1].kind == PYT_NEWLINE ||
            (c->depth[i] == 0 && is_op(&x, i - 1, ";")))
            c->tflags[i] |= CTOK_STMT_START;
    }

    new_scope(&x, SC_MODULE, -1);
    if (scan_range(&x, 0, x.n, 0)) { rc = e ? e->code : KOPT_E_CANDIDATE; goto fail; }
    resolve_all(&x);
    if ((rc = toplevel(&x))) goto fail;
    if ((rc = detect_form(&x))) goto fail;

    /* names renamed by stitching: module-scope non-import bindings */
    const cscope *M = &x.sc[0];
    for (size_t i = 0; i < M->nb; i++) {
        if (M->b[i].import) continue;
        c->module_names = grow(c->module_names, &x.mncap, c->nmodule_names, sizeof(char *));
        c->module_names[c->nmodule_names++] = kstrndup(c->text + M->b[i].off, M->b[i].len);
    }
    rc = 0;
fail:
    for (size_t i = 0; i < x.nsc; i++) {
        free(x.sc[i].b);
        free(x.sc[i].glob);
    }
    free(x.sc);
    free(x.tscope);
    free(x.ev);
    if (rc) {
        if (!e || !e->code) kerr_set(e, KOPT_E_CANDIDATE, "line 1: unreadable candidate");
        candidate_free(c);
        return rc;
    }
    if (lower && c->plan_def >= 0) {   /* form P: judge and ship kopt's lowering instead */
        char *low = NULL;
        launch_plan *plan = NULL;
        size_t launcher_off = 0;
        rc = plan_lower(c, &low, &plan, &launcher_off, e);   /* the plan too: its launches' kernels, below */
        candidate_free(c);
        if (rc) return rc;
        char **kernels = kcalloc(plan->nlaunches, sizeof *kernels);
        size_t nkernels = plan->nlaunches;
        for (size_t i = 0; i < nkernels; i++) kernels[i] = kstrdup(plan->launches[i].kernel);
        plan_free(plan);
        candidate *l = NULL;
        rc = candidate_parse(low, strlen(low), &l, e);
        free(low);
        if (!rc && (l->plan_def >= 0 || l->form != CAND_FORM_L)) {   /* cannot happen: the plan is blanked */
            candidate_free(l);
            rc = kerr_set(e, KOPT_E_CANDIDATE, "line 1: kopt's lowering of the plan is not a launcher");
        }
        if (rc) {
            for (size_t i = 0; i < nkernels; i++) free(kernels[i]);
            free(kernels);
            return rc;
        }
        l->from_plan = 1;
        l->plan_kernels = kernels;
        l->nplan_kernels = nkernels;
        l->plan_launcher_off = launcher_off;
        *out = l;
        return 0;
    }
    *out = c;
    return 0;
}

void candidate_def_params(const candidate *c, size_t def, cand_param **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (def >= c->ndefs || c->defs[def].kind != CAND_DEF_FUNC) return;
    cctx x = {0};
    x.c = (candidate *)c;   /* do_params with no scope only re-marks defaults, as parsing did */
    x.s = c->text;
    x.t = c->toks;
    x.n = c->ntoks;
    size_t h = c->defs[def].tok0;
    while (is_op(&x, h, "@")) h = line_end(&x, h) + 1;
    if (is_nm(&x, h, "async")) h++;
    size_t lp = h + 2;
    if (!is_op(&x, lp, "(")) return;
    size_t rp = match_close(&x, lp);
    do_params(&x, lp + 1, rp, depth_at(&x, lp) + 1, -1, out, n);
}

void candidate_params_free(cand_param *p, size_t n) {
    for (size_t i = 0; i < n; i++) free(p[i].name);
    free(p);
}

void candidate_free(candidate *c) {
    if (!c) return;
    free(c->text);
    free(c->toks);
    free(c->depth);
    free(c->ref);
    free(c->tflags);
    free(c->line_start);
    free(c->replaces);
    for (size_t i = 0; i < c->ndefs; i++) {
        free(c->defs[i].name);
        free(c->defs[i].heuristic);
    }
    free(c->defs);
    for (size_t i = 0; i < c->njit; i++) free(c->jit_names[i]);
    free(c->jit_names);
    for (size_t i = 0; i < c->nparams; i++) free(c->params[i].name);
    free(c->params);
    for (size_t i = 0; i < c->nimports; i++) {
        free(c->imports[i].module);
        free(c->imports[i].name);
        free(c->imports[i].bound);
        free(c->imports[i].target);
    }
    free(c->imports);
    for (size_t i = 0; i < c->nplan_kernels; i++) free(c->plan_kernels[i]);
    free(c->plan_kernels);
    for (size_t i = 0; i < c->nmodule_names; i++) free(c->module_names[i]);
    free(c->module_names);
    free(c);
}

/* ---------- interface ---------- */

static void list_params(const art_kernel *k, int runtime_only, kbuf *b) {
    int first = 1;
    for (size_t i = 0; i < k->nparams; i++) {
        if (runtime_only && k->params[i].role == ART_ROLE_CONSTEXPR) continue;
        kbuf_printf(b, "%s%s", first ? "" : ", ", k->params[i].name);
        first = 0;
    }
    if (first) kbuf_puts(b, "none");
}

int candidate_check_interface(const candidate *c, const art_kernel *k, kerr *e) {
    if (c->replaces && strcmp(c->replaces, k->name) && !region_binding_is(k, c->replaces))
        return kerr_set(e, KOPT_E_CANDIDATE,
                        "the candidate is bound to kernel %s (line %d) but was given for %s",
                        c->replaces, c->replaces_line, k->name);
    int L = c->form == CAND_FORM_L;
    const char *what = L ? "launch" : "the kernel function";
    if (!L && strcmp(candidate_main_name(c), k->name))
        return kerr_set(e, KOPT_E_CANDIDATE,
                        "the @triton.jit function is named %s; async_compile.triton loads the "
                        "kernel by its name, so it must be named %s",
                        candidate_main_name(c), k->name);
    size_t ki = 0, ci = 0;
    kbuf want = KBUF_INIT;
    list_params(k, L, &want);
    int rc = 0;
    for (;;) {
        while (L && ki < k->nparams && k->params[ki].role == ART_ROLE_CONSTEXPR) ki++;
        int kend = ki >= k->nparams, cend = ci >= c->nparams;
        if (kend && cend) break;
        const cand_param *p = cend ? NULL : &c->params[ci];
        const art_param *q = kend ? NULL : &k->params[ki];
        if (!p) {
            rc = kerr_set(e, KOPT_E_CANDIDATE,
                          "%s has %zu parameters, the kernel has more: parameter %zu (%s) is "
                          "missing; expected (%s)",
                          what, c->nparams, ci + 1, q->name, kbuf_str(&want));
            break;
        }
        if (!q) {
            rc = kerr_set(e, KOPT_E_CANDIDATE,
                          "%s parameter %zu is %s, the kernel has no more %sparameters; "
                          "expected (%s)",
                          what, ci + 1, p->name, L ? "runtime " : "", kbuf_str(&want));
            break;
        }
        if (strcmp(p->name, q->name)) {
            rc = kerr_set(e, KOPT_E_CANDIDATE,
                          "%s parameter %zu is %s, the kernel has %s; expected (%s)", what,
                          ci + 1, p->name, q->name, kbuf_str(&want));
            break;
        }
        int kc = q->role == ART_ROLE_CONSTEXPR;
        if (!L && p->constexpr_ != kc) {
            rc = kerr_set(e, KOPT_E_CANDIDATE,
                          "parameter %zu (%s) is %sannotated tl.constexpr, the kernel's is %s",
                          ci + 1, p->name, p->constexpr_ ? "" : "not ",
                          kc ? "constexpr" : "a runtime argument");
            break;
        }
        ki++;
        ci++;
    }
    kbuf_free(&want);
    return rc;
}

/* ---------- stitching ---------- */

void candidate_escape_triple(const char *s, size_t n, kbuf *out) {
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\\') kbuf_puts(out, "\\\\");
        else if (ch == '\'' && (i + 1 == n || s[i + 1] == '\'')) kbuf_puts(out, "\\'");
        else if (ch == '\r') kbuf_puts(out, "\\r");
        else if (ch < 0x20 && ch != '\n' && ch != '\t') kbuf_printf(out, "\\x%02x", ch);
        else if (ch == 0x7f) kbuf_puts(out, "\\x7f");
        else kbuf_putc(out, (char)ch);
    }
}

/* c->text[from..to) with each module-level name (not in an import) prefixed _kopt_<kernel>__. */
static void prefix_range(const candidate *c, const char *kernel_name, size_t from, size_t to, kbuf *b) {
    size_t pos = from;
    for (size_t i = 0; i < c->ntoks; i++) {
        const pytok *t = &c->toks[i];
        if ((size_t)t->off < from || (size_t)t->off + t->len > to) continue;
        if (t->kind != PYT_NAME || c->ref[i] != CREF_MODULE || (c->tflags[i] & CTOK_IN_IMPORT)) continue;
        kbuf_append(b, c->text + pos, t->off - pos);
        kbuf_printf(b, "_kopt_%s__", kernel_name);
        kbuf_append(b, c->text + t->off, t->len);
        pos = (size_t)t->off + t->len;
    }
    kbuf_append(b, c->text + pos, to - pos);
}

/* Trailing blank space trimmed, then `\nNAME = _KoptLaunch(_kopt_NAME__launch[, (kernels...)])`. */
static void launch_binding(const candidate *c, const char *kernel_name, kbuf *b) {
    while (b->len && (b->data[b->len - 1] == '\n' || b->data[b->len - 1] == '\r' || b->data[b->len - 1] == ' ' ||
                      b->data[b->len - 1] == '\t'))
        b->data[--b->len] = '\0';
    kbuf_printf(b, "\n%s = _KoptLaunch(_kopt_%s__launch", kernel_name, kernel_name);
    if (c->nplan_kernels) { /* the plan's launches' kernels, in order (the shim's run_verified) */
        kbuf_puts(b, ", (");
        for (size_t i = 0; i < c->nplan_kernels; i++) kbuf_printf(b, "_kopt_%s__%s, ", kernel_name, c->plan_kernels[i]);
        kbuf_puts(b, ")");
    }
    kbuf_puts(b, ")");
}

int candidate_stitch_text(const candidate *c, const char *kernel_name, kbuf *out, kerr *e) {
    if (!candidate_is_ident(kernel_name))
        return kerr_set(e, KOPT_E_CANDIDATE, "cannot stitch: '%s' is not a kernel name",
                        kernel_name ? kernel_name : "(null)");
    if (c->form == CAND_FORM_I) {
        if (strcmp(candidate_main_name(c), kernel_name))
            return kerr_set(e, KOPT_E_CANDIDATE,
                            "cannot stitch: the @triton.jit function is named %s, the kernel %s",
                            candidate_main_name(c), kernel_name);
        kbuf_printf(out, "%s = async_compile.triton('%s', '''", kernel_name, kernel_name);
        candidate_escape_triple(c->text, c->len, out);
        kbuf_puts(out, "''', device_str='cuda')");
        return 0;
    }
    kbuf b = KBUF_INIT;
    kbuf_printf(&b, "# kopt: launcher-form candidate for %s; its top-level names carry the "
                    "prefix _kopt_%s__\n", kernel_name, kernel_name);
    prefix_range(c, kernel_name, 0, c->len, &b);
    launch_binding(c, kernel_name, &b);
    kbuf_append(out, b.data, b.len);
    kbuf_free(&b);
    return 0;
}

void candidate_prefixed_text(const candidate *c, const char *kernel_name, kbuf *out) {
    prefix_range(c, kernel_name, 0, c->len, out);
}

/* s as a Python bytes literal (b'...': printable ASCII but quote and backslash as is, any other
 * byte escaped), for a path kopt writes into a module. */
static void py_bytes_literal(const char *s, kbuf *out) {
    kbuf_puts(out, "b'");
    for (const unsigned char *q = (const unsigned char *)s; *q; q++) {
        if (*q >= 32 && *q < 127 && *q != '\'' && *q != '\\') kbuf_putc(out, (char)*q);
        else kbuf_printf(out, "\\x%02x", *q);
    }
    kbuf_puts(out, "'");
}

int candidate_cubin_stitch_text(const candidate *c, const char *kernel_name, const char *cubin_dir, kbuf *out,
                                kerr *e) {
    if (!candidate_is_ident(kernel_name))
        return kerr_set(e, KOPT_E_CANDIDATE, "cannot stitch: '%s' is not a kernel name",
                        kernel_name ? kernel_name : "(null)");
    if (!c->from_plan || !c->nplan_kernels || c->plan_launcher_off > c->len)
        return kerr_set(e, KOPT_E_CANDIDATE, "cannot load %s's kernels from cubins: not a plan-form candidate",
                        kernel_name);
    kbuf b = KBUF_INIT;
    kbuf_printf(&b, "# kopt: the judged form of the plan-form candidate for %s: each kernel its plan launches runs "
                    "from the\n# machine code gate 1 compiled in the sandbox and checked (kopt.cubin); nothing "
                    "of the candidate's file is here\n"
                    "from kopt.cubin import CubinFunction as _kopt_CubinFunction\n", kernel_name);
    for (size_t i = 0; i < c->nplan_kernels; i++) {
        size_t first = i;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(c->plan_kernels[j], c->plan_kernels[i])) first = j;
        if (first != i) continue; /* bound with its first launch */
        kbuf_printf(&b, "_kopt_%s__%s = _kopt_CubinFunction(", kernel_name, c->plan_kernels[i]);
        py_bytes_literal(cubin_dir, &b);
        kbuf_puts(&b, ", (");
        for (size_t j = i; j < c->nplan_kernels; j++)
            if (!strcmp(c->plan_kernels[j], c->plan_kernels[i])) kbuf_printf(&b, "%zu, ", j);
        kbuf_puts(&b, "))\n");
    }
    prefix_range(c, kernel_name, c->plan_launcher_off, c->len, &b);
    launch_binding(c, kernel_name, &b);
    kbuf_append(out, b.data, b.len);
    kbuf_free(&b);
    return 0;
}

const char *candidate_launch_shim(void) {
    return "if '_KoptLaunch' not in globals():\n"
           "    class _KoptLaunch:\n"
           "        \"\"\"kopt: stands in for a Triton kernel replaced by a launcher-form "
           "candidate; call() keeps calling NAME.run(*args, stream=...). For a launcher kopt wrote from a\n"
           "        plan (kernels: its launches' kernels in order), run_verified -- the guard's call on the\n"
           "        signature the gates verified -- launches each through its compiled form, bound once per\n"
           "        launch, grid and stream (Triton's own JIT launch where this Triton cannot bind one).\"\"\"\n"
           "        __slots__ = ('launch', 'kernels', 'bound', 'unbound')\n"
           "\n"
           "        def __init__(self, launch, kernels=None):\n"
           "            self.launch = launch\n"
           "            self.kernels = kernels\n"
           "            self.bound = {}\n"
           "            self.unbound = {}   # (launch, grid, stream) -> why it could not be bound\n"
           "\n"
           "        def run(self, *args, stream=None):\n"
           "            return self.launch(*args)\n"
           "\n"
           "        def run_verified(self, *args, stream=None):\n"
           "            if self.kernels is None:\n"
           "                return self.launch(*args)\n"
           "            return self.launch(*args, stream=stream, _kopt_plan_go=self.go)\n"
           "\n"
           "        def go(self, i, grid, ordered, names, num_warps, num_stages, stream):\n"
           "            key = (i, grid, stream)\n"
           "            bound = self.bound.get(key)\n"
           "            if bound is None:\n"
           "                kernel = self.kernels[i]\n"
           "                pos = [v for v, n in zip(ordered, names) if n is None]\n"
           "                opts = {n: v for v, n in zip(ordered, names) if n is not None}\n"
           "                opts['num_warps'] = num_warps\n"
           "                if num_stages:\n"
           "                    opts['num_stages'] = num_stages\n"
           "                if key not in self.unbound:\n"
           "                    try:\n"
           "                        bound = self.bound[key] = kernel.warmup(*pos, grid=grid, **opts)[grid]\n"
           "                    except Exception as e:\n"
           "                        self.unbound[key] = '%s: %s' % (type(e).__name__, e)\n"
           "                if bound is None:\n"
           "                    return kernel[grid](*pos, **opts)\n"
           "            bound(*ordered, stream=stream)\n";
}

/* ---------- accessors ---------- */

cand_form candidate_form(const candidate *c) { return c->form; }
const char *candidate_form_name(cand_form f) { return f == CAND_FORM_L ? "L" : "I"; }
const char *candidate_form_label(const candidate *c) { return c->from_plan ? "P" : candidate_form_name(c->form); }
const char *candidate_replaces(const candidate *c) { return c->replaces; }
size_t candidate_nparams(const candidate *c) { return c->nparams; }
const cand_param *candidate_param(const candidate *c, size_t i) {
    return i < c->nparams ? &c->params[i] : NULL;
}
const char *candidate_main_name(const candidate *c) {
    return c->main_def >= 0 ? c->defs[c->main_def].name : NULL;
}
int candidate_is_jit(const candidate *c, const char *name) {
    for (size_t i = 0; i < c->njit; i++)
        if (!strcmp(c->jit_names[i], name)) return 1;
    return 0;
}
int candidate_col(const candidate *c, size_t off, int line) {
    if (line < 1 || (size_t)line > c->nlines) return 1;
    size_t ls = c->line_start[line - 1];
    return off >= ls ? (int)(off - ls) + 1 : 1;
}
int candidate_is_keyword(const char *s, size_t n) { return kw_is(s, n); }
const char *cand_ref_name(cand_ref r) {
    switch (r) {
    case CREF_NONE: return "none";
    case CREF_ATTR: return "attr";
    case CREF_KWNAME: return "kwname";
    case CREF_PARAM: return "param";
    case CREF_LOCAL: return "local";
    case CREF_MODULE: return "module";
    case CREF_IMPORT: return "import";
    case CREF_FREE: return "free";
    default: return "?";
    }
}
