/* artifact.c — artifact_parse's driver: lex once, cut logical lines, walk the top level
 * (kernels, async_compile statements, entry point, get_args), then the call() body.
 * See artifact.h for the contract; art_kernel.c and art_call.c do the detailed reading.
 * Right after lexing, pylit_check_nesting rejects an expression nested deeper than
 * PYLIT_MAX_DEPTH (KOPT_E_PARSE "line N: nesting deeper than 200", as a lexing error), so the
 * recursive parsing of statements below never meets its limit. */
#include "artifact/artifact.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/art_internal.h"

/* ---------- shared helpers ---------- */

void *art_grow(void *arr, size_t *cap, size_t n, size_t elsz) {
    if (n < *cap) return arr;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc <= n) nc *= 2;
    void *p = krealloc(arr, nc * elsz);
    memset((char *)p + *cap * elsz, 0, (nc - *cap) * elsz);
    *cap = nc;
    return p;
}

char *art_dup(const artifact *a, size_t off, size_t len) { return kstrndup(a->text + off, len); }

char *art_tok_text(const art_ctx *c, size_t t0, size_t t1) {
    if (t1 <= t0) return kstrdup("");
    size_t s = c->toks[t0].off, e = (size_t)c->toks[t1 - 1].off + c->toks[t1 - 1].len;
    return art_dup(c->a, s, e - s);
}

void art_warn(artifact *a, const char *fmt, ...) {
    kbuf b = KBUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    kbuf_vprintf(&b, fmt, ap);
    va_end(ap);
    art_strlist_push(&a->warnings, kbuf_steal(&b));
}

void art_strlist_push(art_strlist *l, char *s) {
    if (l->n == 0 || (l->n >= 4 && (l->n & (l->n - 1)) == 0))
        l->v = krealloc(l->v, (l->n < 4 ? 4 : 2 * l->n) * sizeof *l->v);
    l->v[l->n++] = s;
}

void art_strlist_free(art_strlist *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

/* ---------- logical lines ---------- */

static size_t line_start_of(const char *text, size_t off) {
    while (off > 0 && text[off - 1] != '\n' && text[off - 1] != '\r') off--;
    return off;
}

static void build_lines(art_ctx *c) {
    size_t cap = 0;
    int depth = 0, open = 0;
    art_line cur = {0};
    for (size_t i = 0; i < c->ntok; i++) {
        const pytok *t = &c->toks[i];
        if (t->kind == PYT_END) break;
        if (t->kind == PYT_INDENT) { depth++; continue; }
        if (t->kind == PYT_DEDENT) { depth--; continue; }
        if (t->kind == PYT_NEWLINE) {
            if (!open) continue;
            cur.t1 = i;
            cur.phys_end = (size_t)t->off + t->len;
            c->lines = art_grow(c->lines, &cap, c->nlines, sizeof *c->lines);
            c->lines[c->nlines++] = cur;
            open = 0;
            continue;
        }
        if (!open) {
            open = 1;
            cur.t0 = i;
            cur.depth = depth;
            cur.line = (int)t->line;
            cur.phys_start = line_start_of(c->a->text, t->off);
        }
    }
}

/* First line after li whose depth is not greater than li's. */
static size_t block_end(const art_ctx *c, size_t li) {
    size_t j = li + 1;
    while (j < c->nlines && c->lines[j].depth > c->lines[li].depth) j++;
    return j;
}

static const pytok *tok(const art_ctx *c, size_t li, size_t k) {
    const art_line *L = &c->lines[li];
    return L->t0 + k < L->t1 ? &c->toks[L->t0 + k] : NULL;
}
static int tok_name(const art_ctx *c, size_t li, size_t k, const char *s) {
    const pytok *t = tok(c, li, k);
    return t && pytok_is_name(c->a->text, t, s);
}
static int tok_op(const art_ctx *c, size_t li, size_t k, const char *s) {
    const pytok *t = tok(c, li, k);
    return t && pytok_is_op(c->a->text, t, s);
}

/* ---------- top level ---------- */

typedef struct top_state {
    size_t entry_line, body0, body1;  /* chosen entry: def line, body lines [body0, body1) */
    int have_entry;
    art_entry_form form;
    size_t inputs_def;                 /* line of get_args / benchmark def to read inputs from */
    int have_inputs_def, inputs_from_get_args;
} top_state;

static art_span def_span(const art_ctx *c, size_t li) {
    size_t end = block_end(c, li);
    size_t s = c->lines[li].phys_start, e = c->lines[end - 1].phys_end;
    return (art_span){s, e - s};
}

static void set_entry(art_ctx *c, top_state *st, size_t li, art_entry_form form) {
    if (st->have_entry)
        art_warn(c->a, "line %d: several call() entry points; using this one (the last)",
                 c->lines[li].line);
    st->have_entry = 1;
    st->entry_line = li;
    st->form = form;
    st->body0 = li + 1;
    st->body1 = block_end(c, li);
}

static void add_verbatim(art_ctx *c, size_t li) {
    artifact *a = c->a;
    const art_line *L = &c->lines[li];
    a->async_other = art_grow(a->async_other, &c->ocap, a->nasync_other, sizeof *a->async_other);
    size_t s = c->toks[L->t0].off, e = (size_t)c->toks[L->t1 - 1].off + c->toks[L->t1 - 1].len;
    a->async_other[a->nasync_other++] = (art_verbatim){L->line, {s, e - s}};
}

static void top_runner(art_ctx *c, top_state *st, size_t li) {
    size_t end = block_end(c, li);
    for (size_t j = li + 1; j < end; j++)
        if (c->lines[j].depth == c->lines[li].depth + 1 && tok_name(c, j, 0, "def") &&
            tok_name(c, j, 1, "call") && tok_op(c, j, 2, "("))
            set_entry(c, st, j, ART_ENTRY_RUNNER);
}

static void walk_top(art_ctx *c, top_state *st) {
    artifact *a = c->a;
    for (size_t li = 0; li < c->nlines; li++) {
        const art_line *L = &c->lines[li];
        if (L->depth != 0) continue;
        size_t n = L->t1 - L->t0;
        if (n >= 6 && tok(c, li, 0)->kind == PYT_NAME && tok_op(c, li, 1, "=") &&
            tok_name(c, li, 2, "async_compile") && tok_op(c, li, 3, ".")) {
            if (tok_name(c, li, 4, "triton") && tok_op(c, li, 5, "("))
                art_parse_kernel(c, li, li > 0 ? c->lines[li - 1].phys_end : 0);
            else
                add_verbatim(c, li);
        } else if (tok_name(c, li, 0, "async_compile") && tok_op(c, li, 1, ".")) {
            add_verbatim(c, li);
        } else if (tok_name(c, li, 0, "def") && n >= 3 && tok_op(c, li, 2, "(")) {
            if (art_parse_region(c, li, li > 0 ? c->lines[li - 1].phys_end : 0)) {
                continue;
            } else if (tok_name(c, li, 1, "call")) {
                set_entry(c, st, li, ART_ENTRY_DEF);
            } else if (tok_name(c, li, 1, "get_args")) {
                a->get_args = def_span(c, li);
                st->inputs_def = li;
                st->have_inputs_def = st->inputs_from_get_args = 1;
            } else if (tok_name(c, li, 1, "benchmark_compiled_module")) {
                a->benchmark = def_span(c, li);
                if (!st->inputs_from_get_args) { st->inputs_def = li; st->have_inputs_def = 1; }
            }
        } else if (tok_name(c, li, 0, "class") && tok_name(c, li, 1, "Runner")) {
            top_runner(c, st, li);
        } else if (tok_name(c, li, 0, "runner") && tok_op(c, li, 1, "=") &&
                   tok_name(c, li, 2, "Runner")) {
            a->entry.runner_instance = 1;
        } else if (n == 5 && tok_name(c, li, 0, "call") && tok_op(c, li, 1, "=") &&
                   tok_name(c, li, 2, "runner") && tok_op(c, li, 3, ".") &&
                   tok_name(c, li, 4, "call")) {
            a->entry.call_bound = 1;
        }
    }
}

/* ---------- get_args inputs ---------- */

static char *str_or_text(const pyval *v, const char *src) {
    if (!v) return NULL;
    if (v->kind == PYV_STR) return kstrndup(v->s, v->slen);
    return pyval_text(v, src);
}

static void read_inputs(art_ctx *c, size_t li) {
    artifact *a = c->a;
    size_t end = block_end(c, li);
    for (size_t j = li + 1; j < end; j++) {
        const art_line *L = &c->lines[j];
        if (L->depth != c->lines[li].depth + 1 || L->t1 - L->t0 < 3) continue;
        if (tok(c, j, 0)->kind != PYT_NAME || !tok_op(c, j, 1, "=")) continue;
        size_t pos = L->t0 + 2;
        pyval *v = NULL;
        kerr e2 = {0};
        if (pylit_parse_tokens(a->text, c->toks, L->t1, &pos, &v, &e2) || pos != L->t1) {
            pyval_free(v);
            continue;
        }
        art_input in = {0};
        kbuf cn = KBUF_INIT;
        if (v->kind == PYV_CALL && pyval_dotted(v->base, &cn) && !strcmp(kbuf_str(&cn), "rand_strided")) {
            const pyval *sh = pyval_arg(v, 0), *sd = pyval_arg(v, 1);
            in.shape = sh ? pyval_text(sh, a->text) : NULL;
            in.stride = sd ? pyval_text(sd, a->text) : NULL;
            in.device = str_or_text(pyval_kwarg(v, "device"), a->text);
            in.dtype = str_or_text(pyval_kwarg(v, "dtype"), a->text);
        } else if (v->kind == PYV_INT || v->kind == PYV_FLOAT || v->kind == PYV_BOOL) {
            in.value = pyval_text(v, a->text);
        }
        kbuf_free(&cn);
        pyval_free(v);
        if (!in.shape && !in.value) {
            free(in.stride); free(in.device); free(in.dtype);
            continue;
        }
        in.name = art_tok_text(c, L->t0, L->t0 + 1);
        a->inputs = art_grow(a->inputs, &c->icap, a->ninputs, sizeof *a->inputs);
        a->inputs[a->ninputs++] = in;
    }
}

/* ---------- kernel lookup ---------- */

static uint64_t hash_name(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static void build_khash(artifact *a) {
    size_t cap = 16;
    while (cap < a->nkernels * 2) cap *= 2;
    a->khash = kmalloc(cap * sizeof *a->khash);
    for (size_t i = 0; i < cap; i++) a->khash[i] = -1;
    a->khcap = cap;
    for (size_t k = 0; k < a->nkernels; k++) {
        size_t h = (size_t)hash_name(a->kernels[k].name) & (cap - 1);
        for (;;) {
            int cur = a->khash[h];
            if (cur < 0) { a->khash[h] = (int)k; break; }
            if (!strcmp(a->kernels[cur].name, a->kernels[k].name)) break;  /* keep the first */
            h = (h + 1) & (cap - 1);
        }
    }
}

int art_tensor_origin(const artifact *a, const char *name, const art_input **in, const art_stmt **st) {
    *in = NULL;
    *st = NULL;
    for (int link = 0; name && link <= 16; link++) {
        for (size_t i = 0; i < a->ninputs; i++)
            if (!strcmp(a->inputs[i].name, name)) {
                *in = &a->inputs[i];
                return 1;
            }
        const char *next = NULL;
        for (size_t i = 0; i < a->nstmts && !next; i++) {
            const art_stmt *s = &a->stmts[i];
            if (!s->target || strcmp(s->target, name)) continue;
            if (s->kind == ART_ST_ALLOC || s->kind == ART_ST_VENDOR) {
                *st = s;
                return 1;
            }
            if (s->kind == ART_ST_ALIAS) next = s->of;   /* NULL: a view, not a plain alias */
        }
        name = next;
    }
    return 0;
}

int artifact_find_kernel(const artifact *a, const char *name) {
    if (!a->khash) {
        for (size_t k = 0; k < a->nkernels; k++)
            if (!strcmp(a->kernels[k].name, name)) return (int)k;
        return -1;
    }
    size_t h = (size_t)hash_name(name) & (a->khcap - 1);
    for (;;) {
        int cur = a->khash[h];
        if (cur < 0) return -1;
        if (!strcmp(a->kernels[cur].name, name)) return cur;
        h = (h + 1) & (a->khcap - 1);
    }
}

/* ---------- public ---------- */

static int count_lines(const char *t, size_t n) {
    int lines = 0;
    for (const char *p = t; (p = memchr(p, '\n', (size_t)(t + n - p))) != NULL; p++) lines++;
    if (n && t[n - 1] != '\n') lines++;
    return lines;
}

int artifact_parse(const char *text, size_t len, artifact **out, kerr *e) {
    *out = NULL;
    artifact *a = kcalloc(1, sizeof *a);
    a->text = kstrndup(text, len);
    a->len = len;
    a->nlines = count_lines(a->text, len);
    art_ctx c = {0};
    c.a = a;
    int rc = pylex_all(a->text, len, 0, &c.toks, &c.ntok, e);
    /* bound the parser's recursion up front, so that a too deep expression is this error and
     * not a statement quietly left unclassified */
    if (!rc && (rc = pylit_check_nesting(a->text, c.toks, c.ntok, e))) free(c.toks);
    if (rc) {
        artifact_free(a);
        return rc;
    }
    build_lines(&c);
    top_state st = {0};
    walk_top(&c, &st);
    build_khash(a);
    if (!st.have_entry) {
        rc = kerr_set(e, KOPT_E_PARSE,
                      "no call() entry point: expected 'def call(args):' or 'class Runner:' with "
                      "'def call(self, args):' (read lines 1-%d)", a->nlines);
        goto done;
    }
    const art_line *H = &c.lines[st.entry_line];
    if (st.body0 >= st.body1) {
        rc = kerr_set(e, KOPT_E_PARSE, "line %d: call() has no indented body", H->line);
        goto done;
    }
    a->entry.form = st.form;
    a->entry.line = H->line;
    size_t hs = c.toks[H->t0].off, he = (size_t)c.toks[H->t1 - 1].off + c.toks[H->t1 - 1].len;
    a->entry.header = (art_span){hs, he - hs};
    size_t bs = c.lines[st.body0].phys_start, be = c.lines[st.body1 - 1].phys_end;
    a->entry.body = (art_span){bs, be - bs};
    art_walk_call(&c, st.body0, st.body1, H->phys_end);
    if (st.have_inputs_def) read_inputs(&c, st.inputs_def);
    if (st.form == ART_ENTRY_RUNNER && !(a->entry.runner_instance && a->entry.call_bound))
        art_warn(a, "line %d: class Runner without 'runner = Runner(...)' and 'call = runner.call'",
                 H->line);
done:
    art_kernel_ctx_free(&c);
    free(c.toks);
    free(c.lines);
    if (rc) {
        artifact_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void artifact_free(artifact *a) {
    if (!a) return;
    for (size_t i = 0; i < a->nkernels; i++) art_kernel_free(&a->kernels[i]);
    free(a->kernels);
    for (size_t i = 0; i < a->nstmts; i++) art_stmt_free(&a->stmts[i]);
    free(a->stmts);
    for (size_t i = 0; i < a->nlaunches; i++) art_launch_free(&a->launches[i]);
    free(a->launches);
    art_strlist_free(&a->entry.inputs);
    for (size_t i = 0; i < a->ninputs; i++) {
        art_input *in = &a->inputs[i];
        free(in->name); free(in->shape); free(in->stride); free(in->dtype); free(in->device);
        free(in->value);
    }
    free(a->inputs);
    free(a->async_other);
    art_strlist_free(&a->warnings);
    free(a->khash);
    free(a->text);
    free(a);
}

int art_word_in(const char *text, size_t from, size_t to, const char *name) {
    size_t m = strlen(name);
    for (size_t i = from; m && i + m <= to; i++) {
        if (memcmp(text + i, name, m)) continue;
        char before = i > from ? text[i - 1] : ' ', after = i + m < to ? text[i + m] : ' ';
        if (isalnum((unsigned char)before) || before == '_' || before == '.') continue;
        if (isalnum((unsigned char)after) || after == '_') continue;
        return 1;
    }
    return 0;
}

const art_param *art_launch_param(const artifact *a, const art_launch *l, size_t i) {
    if (l->kind != ART_L_TRITON || l->kernel < 0) return NULL;
    const art_kernel *k = &a->kernels[l->kernel];
    size_t r = 0;
    for (size_t p = 0; p < k->nparams; p++) {
        if (k->params[p].role == ART_ROLE_CONSTEXPR) continue;
        if (r++ == i) return &k->params[p];
    }
    return NULL;
}

size_t artifact_count(const artifact *a, art_stmt_kind k) {
    size_t n = 0;
    for (size_t i = 0; i < a->nstmts; i++) n += a->stmts[i].kind == k;
    return n;
}

const char *art_kernel_kind_name(art_kernel_kind k) {
    static const char *const n[] = {"pointwise", "reduction", "persistent_reduction", "template",
                                    "foreach", "other", "region"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}

const char *art_role_name(art_role r) {
    static const char *const n[] = {"in", "out", "inout", "scalar", "constexpr"};
    return (unsigned)r < sizeof n / sizeof *n ? n[r] : "?";
}

const char *art_stmt_kind_name(art_stmt_kind k) {
    static const char *const n[] = {"unpack", "args_clear", "assert", "stream", "device", "alloc",
                                    "alias", "del", "launch", "vendor", "scalar", "return",
                                    "block", "unknown"};
    return (unsigned)k < sizeof n / sizeof *n ? n[k] : "?";
}
