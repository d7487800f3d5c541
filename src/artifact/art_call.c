/* art_call.c — classify each statement of call()'s body (nested blocks included) into
 * art_stmt records, and the Triton launches and vendor calls among them into art_launch
 * records numbered in textual order. Unclassifiable statements become ART_ST_UNKNOWN with
 * their span: nothing is dropped. Ownership as in artifact.h. */
#include <stdlib.h>
#include <string.h>

#include "artifact/art_internal.h"

typedef struct walker {
    art_ctx *c;
    artifact *a;
    const art_line *L;      /* the line being classified */
    int depth;              /* relative to the body */
    art_strlist nodes, aten;   /* pending "Source Nodes" comment for the next launch */
} walker;

void art_stmt_free(art_stmt *s) {
    free(s->target);
    free(s->of);
    free(s->shape);
    free(s->stride);
    free(s->dtype);
    art_strlist_free(&s->names);
}

void art_launch_free(art_launch *l) {
    free(l->callee);
    free(l->indent);
    art_strlist_free(&l->args);
    art_strlist_free(&l->kwnames);
    art_strlist_free(&l->kwvals);
    free(l->out);
    free(l->target);
    free(l->numels);
    art_strlist_free(&l->source_nodes);
    art_strlist_free(&l->aten_ops);
}

static const pytok *T(const walker *w, size_t i) { return &w->c->toks[i]; }
static const char *src(const walker *w) { return w->a->text; }
static int is_name(const walker *w, size_t i, const char *s) { return pytok_is_name(src(w), T(w, i), s); }
static int is_op(const walker *w, size_t i, const char *s) { return pytok_is_op(src(w), T(w, i), s); }

static int bracket_delta(const walker *w, size_t i) {
    return pytok_opens(src(w), T(w, i)) - pytok_closes(src(w), T(w, i));
}

/* Index of the first top-level `op` token in [a, b), or b. */
static size_t find_top(const walker *w, size_t a, size_t b, const char *op) {
    int depth = 0;
    for (size_t i = a; i < b; i++) {
        if (depth == 0 && is_op(w, i, op)) return i;
        depth += bracket_delta(w, i);
    }
    return b;
}

static art_stmt new_stmt(const walker *w, size_t a, size_t b, art_stmt_kind k) {
    art_stmt s = {0};
    s.kind = k;
    s.launch = -1;
    s.line = (int)T(w, a)->line;
    s.depth = w->depth;
    size_t so = T(w, a)->off, eo = (size_t)T(w, b - 1)->off + T(w, b - 1)->len;
    s.span = (art_span){so, eo - so};
    s.line_start = w->L->phys_start;
    s.line_end = w->L->phys_end;
    return s;
}

static void push_stmt(walker *w, art_stmt *s) {
    artifact *a = w->a;
    a->stmts = art_grow(a->stmts, &w->c->scap, a->nstmts, sizeof *a->stmts);
    a->stmts[a->nstmts++] = *s;
}

static char *dotted(const pyval *v) {
    kbuf b = KBUF_INIT;
    if (!pyval_dotted(v, &b)) { kbuf_free(&b); return NULL; }
    return kbuf_steal(&b);
}

static int is_vendor(const char *cn) {
    return !strncmp(cn, "extern_kernels.", 15) || !strncmp(cn, "torch.ops.", 10) ||
           !strncmp(cn, "aten.", 5);
}
static int is_alloc(const char *cn) {
    return !strcmp(cn, "empty_strided_cuda") || !strcmp(cn, "empty_strided_cpu") ||
           !strcmp(cn, "empty_strided_xpu") || !strcmp(cn, "empty_strided_cpu_pinned") ||
           !strcmp(cn, "empty_strided") || !strcmp(cn, "torch.empty_strided") ||
           !strcmp(cn, "empty") || !strcmp(cn, "torch.empty");
}
static int is_view(const char *cn) {
    return !strcmp(cn, "reinterpret_tensor") || !strcmp(cn, "alloc_from_pool") ||
           !strcmp(cn, "torch.ops.inductor._alloc_from_pool");
}
static int ends_with(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

/* Kernel name of a Triton launch callee: `K.run` or the older `K[grid]` form; else NULL. */
static const char *launch_kernel(const pyval *callee) {
    if (callee->kind == PYV_ATTR && !strcmp(callee->s, "run") && callee->base->kind == PYV_NAME)
        return callee->base->s;
    if (callee->kind == PYV_SUBSCRIPT && callee->base->kind == PYV_NAME &&
        !strncmp(callee->base->s, "triton_", 7))
        return callee->base->s;
    return NULL;
}

static void triton_numels(walker *w, art_launch *l, const pyval *call) {
    artifact *a = w->a;
    const art_kernel *k = l->kernel >= 0 ? &a->kernels[l->kernel] : NULL;
    if (k && k->nparams) {
        size_t nrt = 0;
        for (size_t p = 0; p < k->nparams; p++) nrt += k->params[p].role != ART_ROLE_CONSTEXPR;
        for (size_t i = 0; i < call->n && i < nrt; i++) {
            const art_param *pa = art_launch_param(a, l, i);
            if (pa && ends_with(pa->name, "numel") && call->items[i]->kind == PYV_INT) {
                l->numels = krealloc(l->numels, (l->nnumels + 1) * sizeof *l->numels);
                l->numels[l->nnumels++] = call->items[i]->i;
            }
        }
        l->nextra = call->n > nrt ? call->n - nrt : 0;
        if (call->n < nrt)
            art_warn(a, "line %d: launch of %s passes %zu arguments, its signature wants %zu",
                     l->line, l->callee, call->n, nrt);
        return;
    }
    size_t first = call->n;
    while (first > 0 && call->items[first - 1]->kind == PYV_INT) first--;
    for (size_t i = first; i < call->n; i++) {
        l->numels = krealloc(l->numels, (l->nnumels + 1) * sizeof *l->numels);
        l->numels[l->nnumels++] = call->items[i]->i;
    }
}

static void add_launch(walker *w, art_stmt *st, art_launch_kind kind, const char *callee,
                       const pyval *call, const char *target) {
    artifact *a = w->a;
    art_launch l = {0};
    l.index = (int)a->nlaunches;
    l.kind = kind;
    l.callee = kstrdup(callee);
    l.kernel = kind == ART_L_TRITON ? artifact_find_kernel(a, callee) : -1;
    l.stmt = a->nstmts;
    l.line = st->line;
    l.span = st->span;
    size_t p = w->L->phys_start, q = p;
    while (q < a->len && (a->text[q] == ' ' || a->text[q] == '\t')) q++;
    l.indent = art_dup(a, p, q - p);
    for (size_t i = 0; i < call->n; i++) art_strlist_push(&l.args, pyval_text(call->items[i], a->text));
    for (size_t i = 0; i < call->nkw; i++) {
        art_strlist_push(&l.kwnames, kstrdup(call->kwnames[i]));
        art_strlist_push(&l.kwvals, pyval_text(call->kwvals[i], a->text));
        if (kind == ART_L_VENDOR && !strcmp(call->kwnames[i], "out"))
            l.out = pyval_text(call->kwvals[i], a->text);
    }
    if (target && kind == ART_L_VENDOR) l.target = kstrdup(target);
    if (kind == ART_L_TRITON) {
        if (l.kernel < 0) art_warn(a, "line %d: launch of unknown kernel %s", l.line, callee);
        triton_numels(w, &l, call);
    }
    l.source_nodes = w->nodes;
    l.aten_ops = w->aten;
    memset(&w->nodes, 0, sizeof w->nodes);
    memset(&w->aten, 0, sizeof w->aten);
    a->launches = art_grow(a->launches, &w->c->lcap, a->nlaunches, sizeof *a->launches);
    a->launches[a->nlaunches++] = l;
    st->launch = l.index;
    st->kind = kind == ART_L_TRITON ? ART_ST_LAUNCH : ART_ST_VENDOR;
}

/* Parse tokens [a, b) as one expression; NULL unless it is exactly that. */
static pyval *parse_range(walker *w, size_t a, size_t b) {
    size_t pos = a;
    pyval *v = NULL;
    kerr e2 = {0};
    if (pylit_parse_tokens(src(w), w->c->toks, b, &pos, &v, &e2) || pos != b) {
        pyval_free(v);
        return NULL;
    }
    return v;
}

/* target = value */
static void classify_assign(walker *w, art_stmt *st, const char *target, size_t a, size_t b) {
    pyval *v = parse_range(w, a, b);
    if (!v) return;
    const char *text = src(w);
    char *cn = v->kind == PYV_CALL ? dotted(v->base) : NULL;
    if (v->kind == PYV_CALL && cn && is_alloc(cn)) {
        st->kind = ART_ST_ALLOC;
        const pyval *sh = pyval_arg(v, 0), *sd = NULL, *dt = pyval_kwarg(v, "dtype");
        if (strcmp(cn, "empty") && strcmp(cn, "torch.empty")) sd = pyval_arg(v, 1);
        if (!dt) dt = pyval_arg(v, 2);
        st->shape = sh ? pyval_text(sh, text) : NULL;
        st->stride = sd ? pyval_text(sd, text) : NULL;
        st->dtype = dt ? pyval_text(dt, text) : NULL;
    } else if (v->kind == PYV_CALL && cn && is_view(cn)) {
        st->kind = ART_ST_ALIAS;
        const pyval *of = pyval_arg(v, 0);
        if (of && of->kind == PYV_NAME) st->of = kstrdup(of->s);
    } else if (v->kind == PYV_CALL && cn && (!strcmp(cn, "get_raw_stream") || !strcmp(cn, "get_cuda_stream"))) {
        st->kind = ART_ST_STREAM;
    } else if (v->kind == PYV_CALL && cn && is_vendor(cn)) {
        add_launch(w, st, ART_L_VENDOR, cn, v, target);
    } else if (v->kind == PYV_CALL && launch_kernel(v->base)) {
        add_launch(w, st, ART_L_TRITON, launch_kernel(v->base), v, target);
    } else if (v->kind == PYV_NAME) {
        st->kind = ART_ST_ALIAS;
        st->of = kstrdup(v->s);
    } else if (v->kind == PYV_SUBSCRIPT && v->base->kind == PYV_NAME) {
        st->kind = ART_ST_ALIAS;
        st->of = kstrdup(v->base->s);
    } else if (v->kind == PYV_INT || v->kind == PYV_FLOAT || v->kind == PYV_NEG || v->kind == PYV_RAW) {
        st->kind = ART_ST_SCALAR;
    }
    if (st->kind != ART_ST_UNKNOWN) st->target = kstrdup(target);
    free(cn);
    pyval_free(v);
}

/* An expression statement. */
static void classify_expr(walker *w, art_stmt *st, size_t a, size_t b) {
    pyval *v = parse_range(w, a, b);
    if (!v) return;
    if (v->kind == PYV_CALL) {
        char *cn = dotted(v->base);
        const char *kn = launch_kernel(v->base);
        if (cn && !strcmp(cn, "args.clear")) st->kind = ART_ST_ARGS_CLEAR;
        else if (cn && (ends_with(cn, "assert_size_stride") || ends_with(cn, "assert_alignment")))
            st->kind = ART_ST_ASSERT;
        else if (cn && !strcmp(cn, "torch.cuda.set_device")) st->kind = ART_ST_DEVICE;
        else if (kn) add_launch(w, st, ART_L_TRITON, kn, v, NULL);
        else if (cn && is_vendor(cn)) add_launch(w, st, ART_L_VENDOR, cn, v, NULL);
        free(cn);
    }
    pyval_free(v);
}

/* Comma-separated items of [a, b) as texts (top level only). */
static void split_items(walker *w, size_t a, size_t b, art_strlist *out) {
    while (a < b) {
        size_t e = find_top(w, a, b, ",");
        if (e > a) art_strlist_push(out, art_tok_text(w->c, a, e));
        a = e + 1;
    }
}

/* One simple statement, tokens [a, b). */
static art_stmt classify_part(walker *w, size_t a, size_t b) {
    art_stmt st = new_stmt(w, a, b, ART_ST_UNKNOWN);
    if (is_name(w, a, "del")) {
        st.kind = ART_ST_DEL;
        split_items(w, a + 1, b, &st.names);
        return st;
    }
    if (is_name(w, a, "return")) {
        st.kind = ART_ST_RETURN;
        return st;
    }
    size_t eq = find_top(w, a, b, "=");
    if (eq == b) {
        classify_expr(w, &st, a, b);
        return st;
    }
    if (eq + 1 >= b) return st;
    if (eq == a + 1 && T(w, a)->kind == PYT_NAME) {
        char *target = art_tok_text(w->c, a, a + 1);
        classify_assign(w, &st, target, eq + 1, b);
        free(target);
        return st;
    }
    /* a, b = args */
    int names_only = 1;
    for (size_t i = a; i < eq; i++)
        if (!(T(w, i)->kind == PYT_NAME || is_op(w, i, ","))) names_only = 0;
    if (names_only && eq + 2 == b && is_name(w, eq + 1, "args")) {
        st.kind = ART_ST_UNPACK;
        split_items(w, a, eq, &st.names);
    }
    return st;
}

static int is_compound(const walker *w, size_t a) {
    static const char *const kw[] = {"with", "if", "elif", "else", "for", "while", "try",
                                     "except", "finally", "async", NULL};
    for (int i = 0; kw[i]; i++)
        if (is_name(w, a, kw[i])) return 1;
    return 0;
}

/* Whether the text after the line's last token (its trailing comment) says "reuse". */
static int marked_reuse(const walker *w) {
    size_t from = (size_t)T(w, w->L->t1 - 1)->off + T(w, w->L->t1 - 1)->len;
    const char *p = src(w) + from;
    size_t n = w->L->phys_end - from;
    const char *hash = memchr(p, '#', n);
    return hash && memmem(hash, n - (size_t)(hash - p), "reuse", 5);
}

static void classify_line(walker *w) {
    size_t a = w->L->t0, b = w->L->t1;
    if (is_compound(w, a) && is_op(w, b - 1, ":")) {
        art_stmt st = new_stmt(w, a, b, ART_ST_UNKNOWN);
        if (is_name(w, a, "with")) {
            st.kind = ART_ST_BLOCK;
            for (size_t i = a; i < b; i++)
                if (is_name(w, i, "_DeviceGuard")) st.kind = ART_ST_DEVICE;
        }
        push_stmt(w, &st);
        return;
    }
    /* parts separated by top-level ';' */
    size_t (*parts)[2] = NULL;
    size_t nparts = 0, cap = 0;
    for (size_t s = a; s < b;) {
        size_t e = find_top(w, s, b, ";");
        if (e > s) {
            parts = art_grow(parts, &cap, nparts, sizeof *parts);
            parts[nparts][0] = s;
            parts[nparts][1] = e;
            nparts++;
        }
        s = e + 1;
    }
    if (nparts == 2) {
        /* `x = <alias of y>; del y  # reuse` is one aliasing statement */
        size_t a1 = parts[1][0];
        art_stmt st = classify_part(w, parts[0][0], parts[0][1]);
        if (st.kind == ART_ST_ALIAS && st.of && is_name(w, a1, "del") && parts[1][1] == a1 + 2 &&
            pytok_is(src(w), T(w, a1 + 1), st.of)) {
            art_stmt whole = new_stmt(w, a, b, ART_ST_ALIAS);
            whole.target = st.target;
            whole.of = st.of;
            whole.reuse = 1;
            st.target = st.of = NULL;
            art_stmt_free(&st);
            push_stmt(w, &whole);
            free(parts);
            return;
        }
        st.inline_part = 1;
        if (st.kind == ART_ST_ALIAS && marked_reuse(w)) st.reuse = 1;
        push_stmt(w, &st);
        art_stmt st2 = classify_part(w, parts[1][0], parts[1][1]);
        st2.inline_part = 1;
        push_stmt(w, &st2);
        free(parts);
        return;
    }
    for (size_t i = 0; i < nparts; i++) {
        art_stmt st = classify_part(w, parts[i][0], parts[i][1]);
        st.inline_part = nparts > 1;
        if (st.kind == ART_ST_ALIAS && marked_reuse(w)) st.reuse = 1;
        push_stmt(w, &st);
    }
    free(parts);
}

void art_walk_call(art_ctx *c, size_t b0, size_t b1, size_t gap_start) {
    walker w = {0};
    w.c = c;
    w.a = c->a;
    int base = c->lines[b0].depth;
    size_t prev = gap_start;
    for (size_t li = b0; li < b1; li++) {
        w.L = &c->lines[li];
        w.depth = w.L->depth - base;
        art_comment_sources(c->a->text, prev, w.L->phys_start, &w.nodes, &w.aten);
        classify_line(&w);
        prev = w.L->phys_end;
    }
    art_strlist_free(&w.nodes);
    art_strlist_free(&w.aten);
    for (size_t i = 0; i < c->a->nstmts; i++)
        if (c->a->stmts[i].kind == ART_ST_UNPACK && c->a->entry.inputs.n == 0)
            for (size_t k = 0; k < c->a->stmts[i].names.n; k++)
                art_strlist_push(&c->a->entry.inputs, kstrdup(c->a->stmts[i].names.v[k]));
}
