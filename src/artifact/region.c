/* region.c — build a region launcher out of consecutive launches of call() (region.h). */
#include "artifact/region.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "gates/candidate.h"

typedef struct rbuf {
    char *name;        /* as written in the launches */
    char *canon;       /* what it aliases (itself unless `name = other` in the region) */
    int in_span;       /* defined (ALLOC or ALIAS) inside the region */
    int alias;         /* defined by an ALIAS inside the region */
    int written, read_ext;   /* written by a region kernel; read before any region write */
    int order_in, order_out;
    int hoist;         /* its allocation stays in call() (an output, or used only after) */
    char *type;        /* the kernel parameter's type at first use ("*fp32") */
} rbuf;

typedef struct rstate {
    rbuf *b;
    size_t n, cap;
    int nin, nout;
} rstate;

static rbuf *find_buf(rstate *r, const char *name) {
    for (size_t i = 0; i < r->n; i++) if (!strcmp(r->b[i].name, name)) return &r->b[i];
    return NULL;
}

static rbuf *add_buf(rstate *r, const char *name) {
    rbuf *b = find_buf(r, name);
    if (b) return b;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->b = krealloc(r->b, r->cap * sizeof *r->b);
    }
    b = &r->b[r->n++];
    memset(b, 0, sizeof *b);
    b->name = kstrdup(name);
    b->canon = kstrdup(name);
    b->order_in = b->order_out = -1;
    return b;
}

static void rstate_free(rstate *r) {
    for (size_t i = 0; i < r->n; i++) { free(r->b[i].name); free(r->b[i].canon); free(r->b[i].type); }
    free(r->b);
}

/* The buffer record that `name` stands for (its alias root). */
static rbuf *root_of(rstate *r, const char *name) {
    rbuf *b = find_buf(r, name);
    for (int guard = 0; b && strcmp(b->canon, b->name) && guard < 64; guard++) {
        rbuf *n = find_buf(r, b->canon);
        if (!n) break;
        b = n;
    }
    return b;
}


/* Whether `name` is used by a statement of call() after stmt index s1 (a later `del` counts:
 * the name must still exist in call()). */
static int used_after(const artifact *a, size_t s1, const char *name) {
    for (size_t s = s1 + 1; s < a->nstmts; s++) {
        const art_stmt *st = &a->stmts[s];
        if (art_word_in(a->text, st->span.off, st->span.off + st->span.len, name)) return 1;
    }
    return 0;
}

static int by_first_read(const void *x, const void *y) {
    return (*(rbuf *const *)x)->order_in - (*(rbuf *const *)y)->order_in;
}
static int by_first_write(const void *x, const void *y) {
    return (*(rbuf *const *)x)->order_out - (*(rbuf *const *)y)->order_out;
}

static int stmt_allowed(art_stmt_kind k) {
    return k == ART_ST_ALLOC || k == ART_ST_ALIAS || k == ART_ST_DEL || k == ART_ST_STREAM || k == ART_ST_LAUNCH;
}

int region_find_launches(const artifact *a, const char *const *names, size_t n, int *first, int *last, kerr *e) {
    if (n == 1 && region_vendor_op(names[0]) >= 0) {
        for (size_t i = 0; i < a->nlaunches; i++)
            if (a->launches[i].kind == ART_L_VENDOR && !strcmp(a->launches[i].callee, names[0])) {
                *first = *last = (int)i;
                return 0;
            }
        return kerr_set(e, KOPT_E_CANDIDATE, "call() never calls %s", names[0]);
    }
    if (n < 2) return kerr_set(e, KOPT_E_CANDIDATE, "a region names at least two kernels (or one ATen call kopt can replace)");
    for (size_t i = 0; i < a->nlaunches; i++) {
        const art_launch *l = &a->launches[i];
        if (l->kind != ART_L_TRITON || strcmp(l->callee, names[0])) continue;
        if (i + n > a->nlaunches)
            return kerr_set(e, KOPT_E_CANDIDATE, "the region's kernels are not launched one after another by call()");
        for (size_t j = 1; j < n; j++) {
            const art_launch *m = &a->launches[i + j];
            if (m->kind != ART_L_TRITON || strcmp(m->callee, names[j]))
                return kerr_set(e, KOPT_E_CANDIDATE, "call() launches %s after %s, not %s: the region's kernels must be "
                                "launched one after another, in the order named", m->callee, names[j - 1], names[j]);
        }
        *first = (int)i;
        *last = (int)(i + n - 1);
        return 0;
    }
    return kerr_set(e, KOPT_E_CANDIDATE, "call() never launches %s", names[0]);
}

/* Leading whitespace of the line starting at off. */
static size_t indent_len(const char *text, size_t off, size_t end) {
    size_t i = off;
    while (i < end && (text[i] == ' ' || text[i] == '\t')) i++;
    return i - off;
}

/* Append lines [from, to) re-indented: the prefix `base` (base_n bytes) becomes 4 spaces. */
static void put_reindented(kbuf *o, const char *text, size_t from, size_t to, const char *base, size_t base_n) {
    size_t p = from;
    while (p < to) {
        const char *nl = memchr(text + p, '\n', to - p);
        size_t e = nl ? (size_t)(nl - text) + 1 : to;
        size_t ind = indent_len(text, p, e);
        if (p + ind >= e - (nl ? 1 : 0)) { kbuf_putc(o, '\n'); p = e; continue; }   /* blank */
        size_t cut = ind >= base_n && !memcmp(text + p, base, base_n) ? base_n : ind;
        kbuf_puts(o, "    ");
        kbuf_append(o, text + p + cut, e - p - cut);
        p = e;
    }
    if (o->len && o->data[o->len - 1] != '\n') kbuf_putc(o, '\n');
}

int region_build(const artifact *a, int first, int last, const char *name, kbuf *out, kerr *e) {
    if (first == last && first >= 0 && (size_t)first < a->nlaunches && a->launches[first].kind == ART_L_VENDOR)
        return region_build_vendor(a, first, name, out, e);
    if (first < 0 || last <= first || (size_t)last >= a->nlaunches)
        return kerr_set(e, KOPT_E_CANDIDATE, "a region spans at least two launches of call() (got %d..%d of %zu)", first, last,
                        a->nlaunches);
    if (!candidate_is_ident(name)) return kerr_set(e, KOPT_E_CANDIDATE, "region name '%s' is not a Python identifier", name);
    for (int i = first; i <= last; i++)
        if (a->launches[i].kind != ART_L_TRITON || a->launches[i].kernel < 0)
            return kerr_set(e, KOPT_E_CANDIDATE, "launch %d (%s) is not a launch of a Triton kernel of this module", i,
                            a->launches[i].callee);
    size_t s0 = a->launches[first].stmt, s1 = a->launches[last].stmt;
    int depth = a->stmts[s0].depth;
    /* extend backwards over the allocations and stream statements right before it */
    while (s0 > 0 && a->stmts[s0 - 1].depth == depth &&
           (a->stmts[s0 - 1].kind == ART_ST_ALLOC || a->stmts[s0 - 1].kind == ART_ST_STREAM))
        s0--;
    /* and forwards over the `del` statements right after it (of its intermediates, mostly) */
    while (s1 + 1 < a->nstmts && a->stmts[s1 + 1].depth == depth && a->stmts[s1 + 1].kind == ART_ST_DEL) s1++;
    for (size_t s = s0; s <= s1; s++) {
        const art_stmt *st = &a->stmts[s];
        if (!stmt_allowed(st->kind) || st->depth != depth)
            return kerr_set(e, KOPT_E_CANDIDATE, "line %d: a %s statement between the region's launches (only allocations, "
                            "aliases, del and stream statements may be)", st->line, art_stmt_kind_name(st->kind));
        if (st->kind == ART_ST_LAUNCH && (st->launch < first || st->launch > last))
            return kerr_set(e, KOPT_E_CANDIDATE, "line %d: another launch inside the region", st->line);
        if (st->kind == ART_ST_ALIAS && !st->of)
            return kerr_set(e, KOPT_E_CANDIDATE, "line %d: a view or reinterpretation inside the region", st->line);
    }
    size_t lo = a->stmts[s0].line_start, hi = a->stmts[s1].line_end;
    if ((s0 > 0 && a->stmts[s0 - 1].line_end > lo) || (s1 + 1 < a->nstmts && a->stmts[s1 + 1].line_start < hi))
        return kerr_set(e, KOPT_E_CANDIDATE, "line %d: the region shares a line with a statement outside it", a->stmts[s0].line);

    rstate r = {0};
    int rc = 0;
    /* definitions inside the span, then the launches in order */
    for (size_t s = s0; s <= s1; s++) {
        const art_stmt *st = &a->stmts[s];
        if (st->kind == ART_ST_ALLOC || st->kind == ART_ST_ALIAS) {
            rbuf *b = add_buf(&r, st->target);
            b->in_span = 1;
            if (st->kind == ART_ST_ALIAS) {
                b->alias = 1;
                free(b->canon);
                b->canon = kstrdup(st->of);
            }
        }
    }
    for (int i = first; i <= last && !rc; i++) {
        const art_launch *l = &a->launches[i];
        for (size_t j = 0; j < l->args.n && !rc; j++) {
            const art_param *p = art_launch_param(a, l, j);
            if (!p || p->role == ART_ROLE_SCALAR || p->role == ART_ROLE_CONSTEXPR) continue;
            const char *arg = l->args.v[j];
            if (!candidate_is_ident(arg)) {
                rc = kerr_set(e, KOPT_E_CANDIDATE, "line %d: pointer argument '%s' of %s is not a plain name", l->line, arg,
                              l->callee);
                break;
            }
            add_buf(&r, arg);
            rbuf *b = root_of(&r, arg);
            if (!b->type) b->type = kstrdup(p->type);
            int reads = p->role == ART_ROLE_IN || p->role == ART_ROLE_INOUT;
            int writes = p->role == ART_ROLE_OUT || p->role == ART_ROLE_INOUT;
            if (reads && !b->written) {
                if (b->in_span) {
                    rc = kerr_set(e, KOPT_E_CANDIDATE, "line %d: %s reads %s, allocated in the region, before a region "
                                  "kernel writes it", l->line, l->callee, arg);
                    break;
                }
                if (b->order_in < 0) { b->read_ext = 1; b->order_in = r.nin++; }
            }
            if (writes && !b->written) {
                b->written = 1;
                if (b->order_out < 0) b->order_out = r.nout++;
            }
        }
    }
    /* classify: external inputs, outputs (used after, or defined outside), internal */
    rbuf **ins = kcalloc(r.n + 1, sizeof *ins), **outs = kcalloc(r.n + 1, sizeof *outs), **inouts = kcalloc(r.n + 1, sizeof *inouts);
    size_t nin = 0, nout = 0, ninout = 0;
    for (size_t i = 0; i < r.n && !rc; i++) {
        rbuf *b = &r.b[i];
        if (strcmp(b->canon, b->name)) continue;   /* aliases: their root decides */
        int live = used_after(a, s1, b->name);
        for (size_t j = 0; j < r.n && !live; j++)
            if (strcmp(r.b[j].name, b->name) && root_of(&r, r.b[j].name) == b) live = used_after(a, s1, r.b[j].name);
        int output = b->written && (live || !b->in_span);
        if (b->written && !output) continue;   /* internal */
        if (output && b->alias) {
            rc = kerr_set(e, KOPT_E_CANDIDATE, "region output %s is an alias created inside the region", b->name);
            break;
        }
        if (!b->written && !b->read_ext) {   /* allocated here, not used by the region */
            if (live && b->alias) {
                rc = kerr_set(e, KOPT_E_CANDIDATE, "%s, an alias created inside the region, is used after it", b->name);
                break;
            }
            b->hoist = live;
            continue;
        }
        b->hoist = output && b->in_span;
        if (b->read_ext && b->written) inouts[ninout++] = b;
        else if (b->read_ext) ins[nin++] = b;
        else outs[nout++] = b;
    }
    /* orders: inputs by first read, outputs by first write */
    qsort(ins, nin, sizeof *ins, by_first_read);
    qsort(outs, nout, sizeof *outs, by_first_write);
    if (!rc && nout + ninout == 0) rc = kerr_set(e, KOPT_E_CANDIDATE, "the region writes nothing used after it");
    if (rc) { free(ins); free(outs); free(inouts); rstate_free(&r); return rc; }

    /* ---- the function */
    const char *text = a->text;
    const art_stmt *st0 = &a->stmts[s0];
    size_t base_n = indent_len(text, st0->line_start, st0->line_end);
    char *base = kstrndup(text + st0->line_start, base_n);
    kbuf fn = KBUF_INIT, params = KBUF_INIT, sig = KBUF_INIT, callargs = KBUF_INIT, binds = KBUF_INIT;
    struct { rbuf **v; size_t n; const char *pfx; } groups[3] = {{ins, nin, "in_ptr"}, {outs, nout, "out_ptr"}, {inouts, ninout, "in_out_ptr"}};
    for (int g = 0; g < 3; g++)
        for (size_t i = 0; i < groups[g].n; i++) {
            const rbuf *b = groups[g].v[i];
            kbuf_printf(&params, "%s%s%zu", params.len ? ", " : "", groups[g].pfx, i);
            kbuf_printf(&sig, " %s%zu:%s", groups[g].pfx, i, b->type ? b->type : "*fp32");
            kbuf_printf(&callargs, "%s%s", callargs.len ? ", " : "", b->name);
            kbuf_printf(&binds, "    %s = %s%zu\n", b->name, groups[g].pfx, i);
        }
    kbuf_printf(&fn, "\n\n%s", candidate_launch_shim());
    kbuf_puts(&fn, "\n\n# kopt-region:");
    for (int i = first; i <= last; i++) kbuf_printf(&fn, " %s", a->launches[i].callee);
    kbuf_printf(&fn, "\n# kopt-region-signature:%s\n# kopt-region-aten:", kbuf_str(&sig));
    {
        art_strlist seen = {0};
        for (int i = first; i <= last; i++) {
            const art_kernel *k = &a->kernels[a->launches[i].kernel];
            for (size_t j = 0; j < k->aten_ops.n; j++) {
                int dup = 0;
                for (size_t m = 0; m < seen.n; m++) dup |= !strcmp(seen.v[m], k->aten_ops.v[j]);
                if (dup) continue;
                kbuf_printf(&fn, "%s %s", seen.n ? "," : "", k->aten_ops.v[j]);
                art_strlist_push(&seen, kstrdup(k->aten_ops.v[j]));
            }
        }
        art_strlist_free(&seen);
    }
    kbuf_printf(&fn, "\ndef %s__launch(%s, stream=None):\n%s", name, kbuf_str(&params), kbuf_str(&binds));
    /* the region's lines, hoisted output allocations left out */
    kbuf hoist = KBUF_INIT, dels = KBUF_INIT;
    const art_stmt *last_stream = NULL;
    size_t p = lo;
    for (size_t s = s0; s <= s1; s++) {
        const art_stmt *st = &a->stmts[s];
        if (st->kind == ART_ST_STREAM) last_stream = st;
        if (st->kind == ART_ST_DEL)
            for (size_t j = 0; j < st->names.n; j++) {
                rbuf *b = find_buf(&r, st->names.v[j]);
                if (!b || !b->in_span) kbuf_printf(&dels, "%s%s", dels.len ? ", " : "", st->names.v[j]);
            }
        rbuf *hb = st->kind == ART_ST_ALLOC ? find_buf(&r, st->target) : NULL;
        if (hb && hb->hoist) {
            put_reindented(&fn, text, p, st->line_start, base, base_n);
            kbuf_append(&hoist, text + st->line_start, st->line_end - st->line_start);
            p = st->line_end;
        }
    }
    put_reindented(&fn, text, p, hi, base, base_n);
    kbuf_printf(&fn, "%s = _KoptLaunch(%s__launch)\n", name, name);

    /* ---- call()'s replacement of the span */
    kbuf rep = KBUF_INIT;
    kbuf_append(&rep, kbuf_str(&hoist), hoist.len);
    if (last_stream) {
        kbuf_puts(&rep, base);
        kbuf_append(&rep, text + last_stream->span.off, last_stream->span.len);
        kbuf_putc(&rep, '\n');
        kbuf_printf(&rep, "%s%s.run(%s, stream=%s)\n", base, name, kbuf_str(&callargs), last_stream->target);
    } else {
        kbuf_printf(&rep, "%s%s.run(%s)\n", base, name, kbuf_str(&callargs));
    }
    /* aliases of outside buffers made inside the region (`buf4 = buf0; del buf0  # reuse`, a
     * kernel writing its input's memory): the same bindings after the launch, for call()'s later
     * lines, before the dels */
    for (size_t s = s0; s <= s1; s++) {
        const art_stmt *st = &a->stmts[s];
        if (st->kind != ART_ST_ALIAS || !st->of) continue;
        const rbuf *rb = root_of(&r, st->target);
        if (rb && !rb->in_span) {
            kbuf_puts(&rep, base);
            kbuf_append(&rep, text + st->span.off, st->span.len);
            kbuf_putc(&rep, '\n');
        }
    }
    if (dels.len) kbuf_printf(&rep, "%sdel %s\n", base, kbuf_str(&dels));

    /* ---- the module: the function after the last kernel statement, the span replaced */
    size_t at = 0;
    for (size_t k = 0; k < a->nkernels; k++) {
        size_t end = a->kernels[k].stmt.off + a->kernels[k].stmt.len;
        if (end > at) at = end;
    }
    while (at < a->len && text[at] != '\n') at++;
    if (at < a->len) at++;
    if (at > lo) {
        rc = kerr_set(e, KOPT_E_CANDIDATE, "the module's kernels are not all defined before call()");
    } else {
        kbuf_append(out, text, at);
        kbuf_append(out, kbuf_str(&fn), fn.len);
        kbuf_append(out, text + at, lo - at);
        kbuf_append(out, kbuf_str(&rep), rep.len);
        kbuf_append(out, text + hi, a->len - hi);
    }
    free(base);
    kbuf_free(&fn);
    kbuf_free(&params);
    kbuf_free(&sig);
    kbuf_free(&callargs);
    kbuf_free(&binds);
    kbuf_free(&hoist);
    kbuf_free(&dels);
    kbuf_free(&rep);
    free(ins);
    free(outs);
    free(inouts);
    rstate_free(&r);
    return rc;
}
