/* builtin_prologue.c — the row families with a prologue (contract in builtin.h): a layer norm or
 * a softmax over rows that fit on chip, with the pointwise work Inductor fused before it (the
 * GELU after a Linear, a residual add, an attention mask and scale). Inductor's looped kernel
 * reads each row twice and computes the prologue twice (the layer norm also runs Welford's
 * update, a division, per element); the templates read the row once, run the prologue once and
 * take the statistics from registers.
 *
 * The prologue is Inductor's own lines, lifted from the first loop into a jit function
 * `_prologue(pointers..., xindex, r0_index, r0_mask)`: the kernel's x index definitions (over
 * xindex alone), loads of its pointers at index expressions over those and the reduction index,
 * and pointwise lines over tmp names, Triton's and Inductor's math helpers, numbers and
 * float("-inf")-style literals; nothing else. A softmax Inductor writes in three loops (max, sum,
 * normalise) also has a chain of pointwise lines after x - max (its scale), lifted the same way
 * into `_post(t)`. What the lines compute is then checked as every candidate is, by gates 2 and 3. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"

enum { PRO_MAX_LINES = 512, PRO_MAX_LOADS = 8, PRO_MAX_X = 4 };

/* A load line `tmpN = tl.load(PTR + (IDX), r0_mask, eviction_policy='..', other=0.0)[.to(..)]`. */
typedef struct pro_load {
    char var[16], ptr[16], idx[64];
} pro_load;

/* What both families read from a kernel: its pointers, loops, x index definitions, and the first
 * loop's prologue (the helper's body) up to the line that broadcasts its result. */
typedef struct pro_scan {
    const char *ptrs[8]; /* borrowed from the kfacts */
    size_t nptrs;
    long long rn;
    builtin_line *ls; /* owned */
    size_t n;
    size_t loop2, a0, a1, b0, b1; /* loop 2's head; the loops' bodies after their index lines */
    size_t loop3, c0, c1;         /* a third loop's (the softmax's three-loop form), else 0 */
    size_t bcast;                 /* loop 1's `tmpB = tl.broadcast_to(tmpV, ..)` */
    char r0v[16], xrow[16];       /* the reduction index's name; the x defined as xindex */
    char xv[PRO_MAX_X][16];
    size_t nx;
    pro_load l1[PRO_MAX_LOADS];
    size_t n1;
    kbuf body; /* owned: the helper's lines */
    char res[16], bvar[16];
    kbuf post;     /* owned: the lines of `_post(t)` (the softmax's work after x - max), t renamed */
    char pres[16]; /* what _post returns; "" for t itself */
} pro_scan;

static int starts(const builtin_line *l, const char *s) { return l->n >= strlen(s) && !strncmp(l->p, s, strlen(s)); }

/* Whether line l is exactly s. */
static int line_is(const builtin_line *l, const char *s) { return l->n == strlen(s) && !strncmp(l->p, s, l->n); }

/* Where s occurs within line l, or NULL. */
static const char *line_has(const builtin_line *l, const char *s) { return memmem(l->p, l->n, s, strlen(s)); }

/* `NAME = ` at the start of l with NAME = prefix + digits: the name's length, else 0. */
static size_t named_lhs(const builtin_line *l, const char *prefix) {
    size_t i = strlen(prefix);
    if (!starts(l, prefix)) return 0;
    while (i < l->n && isdigit((unsigned char)l->p[i])) i++;
    if (i == strlen(prefix) || i + 3 > l->n || strncmp(l->p + i, " = ", 3)) return 0;
    return i;
}

static size_t tmp_lhs(const builtin_line *l) { return named_lhs(l, "tmp"); }

static int is_ptr(const pro_scan *s, const char *name, size_t n) {
    for (size_t i = 0; i < s->nptrs; i++)
        if (strlen(s->ptrs[i]) == n && !strncmp(s->ptrs[i], name, n)) return 1;
    return 0;
}

/* Whether identifier [p, p+n) is one of the x index names. */
static int is_xv(const pro_scan *s, const char *p, size_t n) {
    for (size_t i = 0; i < s->nx; i++)
        if (strlen(s->xv[i]) == n && !strncmp(s->xv[i], p, n)) return 1;
    return 0;
}

/* Whether [p, end) uses only the names in `names` (a predicate), integers and + * % / ( ) and
 * spaces; *uses_x set when one of them is an x index name. */
static int index_expr(const pro_scan *s, const char *p, const char *end, int *uses_x) {
    *uses_x = 0;
    for (const char *q = p; q < end;) {
        if (isalpha((unsigned char)*q) || *q == '_') {
            const char *id = q;
            while (q < end && (isalnum((unsigned char)*q) || *q == '_')) q++;
            size_t n = (size_t)(q - id);
            int x = is_xv(s, id, n);
            if (!x && !(n == strlen(s->r0v) && !strncmp(id, s->r0v, n))) return 0;
            *uses_x |= x;
        } else if (isdigit((unsigned char)*q) || strchr(" +*%/()", *q)) {
            q++;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Parses a load line into *ld; 0 when the line has exactly the known form. */
static int parse_load(const builtin_line *l, const pro_scan *s, pro_load *ld) {
    size_t v = tmp_lhs(l);
    if (!v || v >= sizeof ld->var) return -1;
    memcpy(ld->var, l->p, v);
    ld->var[v] = '\0';
    const char *p = l->p + v + 3, *end = l->p + l->n;
    if (strncmp(p, "tl.load(", 8)) return -1;
    p += 8;
    const char *plus = memchr(p, ' ', (size_t)(end - p));
    if (!plus || (size_t)(plus - p) >= sizeof ld->ptr || !is_ptr(s, p, (size_t)(plus - p)) || end - plus < 5 ||
        strncmp(plus, " + (", 4))
        return -1;
    memcpy(ld->ptr, p, (size_t)(plus - p));
    ld->ptr[plus - p] = '\0';
    p = plus + 4;
    const char *close = memmem(p, (size_t)(end - p), "), r0_mask, ", 12);
    int ux = 0;
    if (!close || (size_t)(close - p) >= sizeof ld->idx || !index_expr(s, p, close, &ux)) return -1;
    memcpy(ld->idx, p, (size_t)(close - p));
    ld->idx[close - p] = '\0';
    p = close + 12;
    static const char *const ev[] = {"eviction_policy='evict_last', ", "eviction_policy='evict_first', ", ""};
    size_t j = 0;
    while (strncmp(p, ev[j], strlen(ev[j]))) j++;
    p += strlen(ev[j]);
    static const char *const tails[] = {"other=0.0)", "other=0.0).to(tl.float32)", "other=0.0).to(tl.int1)"};
    for (j = 0; j < sizeof tails / sizeof *tails; j++)
        if ((size_t)(end - p) == strlen(tails[j]) && !strncmp(p, tails[j], strlen(tails[j]))) return 0;
    return -1;
}

/* Whether the right-hand side of a pointwise line uses only tmp names, tl, libdevice, tl_math,
 * triton_helpers (attributes after a '.' free), numbers, operators and the literals
 * float("-inf"), float("inf"), float("nan"): no other strings, no index or block names, no
 * loads, stores, reductions or masks. */
static int pointwise_rhs(const char *p, const char *end) {
    static const char *const roots[] = {"tl", "libdevice", "tl_math", "triton_helpers"};
    static const char *const banned[] = {"load",    "store",      "sum",    "reduce", "atomic",     "max2",    "min2",
                                         "welford", "program_id", "arange", "debug",  "inline_asm", "device_", "scan"};
    static const char *const lits[] = {"float(\"-inf\")", "float(\"inf\")", "float(\"nan\")",
                                       "float('-inf')",   "float('inf')",   "float('nan')"};
    for (const char *q = p; q < end;) {
        size_t lit = 0;
        for (size_t j = 0; !lit && j < sizeof lits / sizeof *lits; j++)
            if ((size_t)(end - q) >= strlen(lits[j]) && !strncmp(q, lits[j], strlen(lits[j])) &&
                (q == p || !isalnum((unsigned char)q[-1])))
                lit = strlen(lits[j]);
        if (lit) {
            q += lit;
            continue;
        }
        if (*q == '\'' || *q == '"' || *q == '\\' || *q == '#') return 0;
        if (isalpha((unsigned char)*q) || *q == '_') {
            const char *s = q;
            while (q < end && (isalnum((unsigned char)*q) || *q == '_')) q++;
            size_t n = (size_t)(q - s);
            for (size_t j = 0; j < sizeof banned / sizeof *banned; j++)
                if (n >= strlen(banned[j]) && memmem(s, n, banned[j], strlen(banned[j]))) return 0;
            if (s > p && s[-1] == '.') continue; /* an attribute */
            int ok = n > 3 && !strncmp(s, "tmp", 3);
            for (size_t j = 3; ok && j < n; j++) ok = isdigit((unsigned char)s[j]) != 0;
            for (size_t j = 0; !ok && j < sizeof roots / sizeof *roots; j++)
                ok = n == strlen(roots[j]) && !strncmp(s, roots[j], n);
            if (!ok) return 0;
        } else if (isdigit((unsigned char)*q)) { /* a number, with its exponent */
            while (q < end && (isalnum((unsigned char)*q) || *q == '.' ||
                               ((*q == '-' || *q == '+') && (q[-1] == 'e' || q[-1] == 'E'))))
                q++;
        } else {
            q++;
        }
    }
    return 1;
}

/* A loop's body after its index lines (r0_index, r0_mask, roffset, rindex, r0_N = r0_index):
 * [*from, *to); the reduction index's name into r0v (the same in both loops). */
static int loop_body(pro_scan *s, size_t head, size_t *from, size_t *to) {
    const builtin_line *ls = s->ls;
    size_t i = head + 1;
    char r0v[16] = "";
    static const char *const idx[] = {"r0_index = ", "r0_mask = ", "roffset = ", "rindex = "};
    for (; i < s->n && ls[i].ind > ls[head].ind; i++) {
        int is_idx = 0;
        for (size_t j = 0; j < sizeof idx / sizeof *idx; j++) is_idx |= starts(&ls[i], idx[j]);
        size_t v = named_lhs(&ls[i], "r0_");
        if (v && v < sizeof r0v && ls[i].n == v + 3 + 8 && !strncmp(ls[i].p + v + 3, "r0_index", 8)) {
            memcpy(r0v, ls[i].p, v);
            r0v[v] = '\0';
            is_idx = 1;
        }
        if (!is_idx) break;
    }
    *from = i;
    while (i < s->n && ls[i].ind > ls[head].ind) i++;
    *to = i;
    if (!r0v[0] || (s->r0v[0] && strcmp(r0v, s->r0v))) return -1;
    snprintf(s->r0v, sizeof s->r0v, "%s", r0v);
    return 0;
}

static void scan_free(pro_scan *s) {
    free(s->ls);
    s->ls = NULL;
    kbuf_free(&s->body);
    kbuf_free(&s->post);
}

/* The kernel's shared facts (see pro_scan): 0, or -1 (nothing held) when it is not a looped
 * reduction of two loops (three with `three`: the softmax's max, sum and normalising loops, whose
 * one max2 and one tl.sum the caller places) over rows of <= 16384 whose first loop is a
 * prologue. */
static int scan_kernel(const kfacts *k, pro_scan *s, int three) {
    memset(s, 0, sizeof *s);
    s->body = (kbuf)KBUF_INIT;
    s->post = (kbuf)KBUF_INIT;
    const char *src = k->source;
    long long rn = kfacts_numel(k, "r0_numel"), xn = kfacts_numel(k, "xnumel");
    s->rn = rn;
    if (!src || k->kind != ART_K_REDUCTION || rn < 16 || rn > 16384 || xn <= 0 || xn * rn >= (1LL << 31)) return -1;
    /* no other reduction than the family's own */
    if (builtin_count(src, "tl.sum(") != three || builtin_count(src, "max2(") != three || strstr(src, "min2(") ||
        strstr(src, "tl.reduce(") || strstr(src, "tl.associative_scan("))
        return -1;
    /* the signature: pointers (float, or a bool mask), then xnumel and r0_numel */
    size_t nr = k->runtime.n;
    if (nr < 3 || nr - 2 > sizeof s->ptrs / sizeof *s->ptrs || strcmp(k->runtime.v[nr - 2], "xnumel") ||
        strcmp(k->runtime.v[nr - 1], "r0_numel"))
        return -1;
    for (size_t i = 0; i + 2 < nr; i++) {
        const char *t = kfacts_param_type(k, k->runtime.v[i]);
        if (strcmp(t, "*fp32") && strcmp(t, "*bf16") && strcmp(t, "*fp16") && strcmp(t, "*i1")) return -1;
        s->ptrs[s->nptrs++] = k->runtime.v[i];
    }
    s->ls = malloc(PRO_MAX_LINES * sizeof *s->ls);
    if (!s->ls) return -1;
    s->n = builtin_split_lines(src, s->ls, PRO_MAX_LINES);
    const builtin_line *ls = s->ls;
    size_t loops[3], nl = 0, rbase = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (ls[i].n == 49 && !strncmp(ls[i].p, "for r0_offset in tl.range(0, r0_numel, R0_BLOCK):", 49) && nl++ < 3)
            loops[nl - 1] = i;
        if (!nl && starts(&ls[i], "rbase = r0_base")) rbase = i;
    }
    if (nl != (size_t)(2 + three) || !rbase) goto fail;
    s->loop2 = loops[1];
    if (loop_body(s, loops[0], &s->a0, &s->a1) || loop_body(s, loops[1], &s->b0, &s->b1) || s->a1 > loops[1]) goto fail;
    if (three && (loop_body(s, loops[2], &s->c0, &s->c1) || s->b1 > loops[2])) goto fail;
    s->loop3 = three ? loops[2] : 0;
    /* the x index definitions between rbase and the first loop: over xindex alone */
    for (size_t i = rbase + 1; i < loops[0]; i++) {
        size_t v = named_lhs(&ls[i], "x");
        if (!v) continue;
        const char *r = ls[i].p + v + 3, *e = ls[i].p + ls[i].n;
        for (const char *q = r; q < e; q++) {
            if (isalpha((unsigned char)*q) || *q == '_') {
                if ((size_t)(e - q) < 6 || strncmp(q, "xindex", 6)) goto fail;
                q += 5;
            } else if (!isdigit((unsigned char)*q) && !strchr(" +*%/()", *q)) {
                goto fail;
            }
        }
        if (s->nx == PRO_MAX_X || v >= sizeof s->xv[0]) goto fail;
        memcpy(s->xv[s->nx], ls[i].p, v);
        s->xv[s->nx][v] = '\0';
        if (ls[i].n == v + 3 + 6) snprintf(s->xrow, sizeof s->xrow, "%s", s->xv[s->nx]);
        s->nx++;
        kbuf_printf(&s->body, "    %.*s\n", (int)ls[i].n, ls[i].p);
    }
    if (!s->xrow[0]) goto fail;
    kbuf_printf(&s->body, "    %s = r0_index\n", s->r0v);
    /* loop 1: loads and pointwise lines up to a broadcast; at least one load of the row */
    char row[64];
    snprintf(row, sizeof row, "%s + %lld*%s", s->r0v, rn, s->xrow);
    int has_row = 0;
    size_t i = s->a0;
    for (; i < s->a1 && !line_has(&ls[i], "tl.broadcast_to("); i++) {
        size_t t = tmp_lhs(&ls[i]);
        if (!t || ls[i].n > 400) goto fail;
        if (!strncmp(ls[i].p + t + 3, "tl.load(", 8)) {
            pro_load *ld = &s->l1[s->n1];
            if (s->n1 == PRO_MAX_LOADS || parse_load(&ls[i], s, ld)) goto fail;
            int is_row = !strcmp(ld->idx, row);
            has_row |= is_row;
            s->n1++;
            /* read once: the row's loads evict first */
            const char *ev = is_row ? line_has(&ls[i], "eviction_policy='evict_last'") : NULL;
            size_t cut = ev ? (size_t)(ev - ls[i].p) : ls[i].n;
            kbuf_printf(&s->body, "    %.*s", (int)cut, ls[i].p);
            if (ev)
                kbuf_printf(&s->body, "eviction_policy='evict_first'%.*s", (int)(ls[i].n - cut - 28),
                            ls[i].p + cut + 28);
            kbuf_putc(&s->body, '\n');
        } else if (!pointwise_rhs(ls[i].p + t + 3, ls[i].p + ls[i].n)) {
            goto fail;
        } else {
            kbuf_printf(&s->body, "    %.*s\n", (int)ls[i].n, ls[i].p);
        }
    }
    if (!has_row || i >= s->a1) goto fail;
    /* `tmpB = tl.broadcast_to(tmpV, [XBLOCK, R0_BLOCK])`, tmpV defined above */
    size_t t = tmp_lhs(&ls[i]);
    const char *r = t ? ls[i].p + t + 3 : NULL, *tail = ", [XBLOCK, R0_BLOCK])";
    size_t vl = r ? ls[i].n - t - 3 : 0;
    if (!r || t >= sizeof s->bvar || vl <= 16 + strlen(tail) || strncmp(r, "tl.broadcast_to(", 16) ||
        strncmp(r + vl - strlen(tail), tail, strlen(tail)) || vl - 16 - strlen(tail) >= sizeof s->res)
        goto fail;
    memcpy(s->bvar, ls[i].p, t);
    s->bvar[t] = '\0';
    memcpy(s->res, r + 16, vl - 16 - strlen(tail));
    s->res[vl - 16 - strlen(tail)] = '\0';
    char def[24];
    snprintf(def, sizeof def, "    %s = ", s->res);
    if (!strstr(kbuf_str(&s->body), def)) goto fail;
    s->bcast = i;
    return 0;
fail:
    scan_free(s);
    return -1;
}

/* The `tmpN = tl.load(..)` lines of [from, to), parsed in order into l (at most cap): 0 and *n,
 * else -1 (one of another form, or more than cap). */
static int loop_loads(const pro_scan *s, size_t from, size_t to, pro_load *l, size_t cap, size_t *n) {
    *n = 0;
    for (size_t j = from; j < to; j++) {
        size_t t = tmp_lhs(&s->ls[j]);
        if (t && !strncmp(s->ls[j].p + t + 3, "tl.load(", 8) && (*n == cap || parse_load(&s->ls[j], s, &l[(*n)++])))
            return -1;
    }
    return 0;
}

/* Whether load b reads what load a reads. */
static int same_load(const pro_load *a, const pro_load *b) {
    return !strcmp(a->ptr, b->ptr) && !strcmp(a->idx, b->idx);
}

/* Whether l[0..n) are loop 1's loads, in order. */
static int same_loads(const pro_scan *s, const pro_load *l, size_t n) {
    int ok = n == s->n1;
    for (size_t j = 0; ok && j < n; j++) ok = same_load(&l[j], &s->l1[j]);
    return ok;
}

/* The last loop's ([from, to)) loads (loop_loads) and its one store `tl.store(OUT + (row),
 * tmpZ, r0_mask)` with OUT a float pointer, every other line a tmp assignment: 0 and *out, else
 * -1. What the other lines compute is left to the family. */
static int scan_store_loop(const kfacts *k, const pro_scan *s, size_t from, size_t to, pro_load *l2, size_t cap,
                           size_t *n2, const char **out) {
    size_t nstore = 0;
    *out = NULL;
    if (loop_loads(s, from, to, l2, cap, n2)) return -1;
    for (size_t j = from; j < to; j++) {
        const builtin_line *l = &s->ls[j];
        if (starts(l, "tl.store(")) {
            nstore++;
            for (size_t p = 0; p < s->nptrs && !*out; p++) {
                char st[96];
                snprintf(st, sizeof st, "tl.store(%s + (%s + %lld*%s), tmp", s->ptrs[p], s->r0v, s->rn, s->xrow);
                const char *t = kfacts_param_type(k, s->ptrs[p]);
                if (starts(l, st) && l->n > 10 && !strncmp(l->p + l->n - 10, ", r0_mask)", 10) && strcmp(t, "*i1"))
                    *out = s->ptrs[p];
            }
            continue;
        }
        if (!tmp_lhs(l)) return -1;
    }
    return nstore == 1 && *out ? 0 : -1;
}

/* Whether line l is `tmpA = v.to(tl.float32)`; its tmpA into lhs. */
static int is_float_copy(const builtin_line *l, const char *v, char *lhs, size_t cap) {
    size_t t = tmp_lhs(l);
    char want[48];
    snprintf(want, sizeof want, "%s.to(tl.float32)", v);
    if (!t || t >= cap || l->n != t + 3 + strlen(want) || strncmp(l->p + t + 3, want, strlen(want))) return 0;
    memcpy(lhs, l->p, t);
    lhs[t] = '\0';
    return 1;
}

/* Whether some line of [from, to) is `tmpX = tmpY OP v` (or `(tmpY OP v)`) or `tmpX = v OP tmpY`
 * for v or its float copy. */
static int used_with(const builtin_line *ls, size_t from, size_t to, const char *v, char op) {
    char cp[16] = "";
    for (size_t i = from; i < to && !cp[0]; i++) is_float_copy(&ls[i], v, cp, sizeof cp);
    const char *name = cp[0] ? cp : v;
    for (size_t i = from; i < to; i++) {
        size_t t = tmp_lhs(&ls[i]);
        if (!t) continue;
        char a[40], a2[40], b[40];
        snprintf(a, sizeof a, " %c %s", op, name);
        snprintf(a2, sizeof a2, " %c %s)", op, name);
        snprintf(b, sizeof b, "%s %c ", name, op);
        const char *r = ls[i].p + t + 3;
        size_t rn = ls[i].n - t - 3;
        int end_a = rn > strlen(a) && !strncmp(r + rn - strlen(a), a, strlen(a));
        int end_a2 = rn > strlen(a2) && r[0] == '(' && !strncmp(r + rn - strlen(a2), a2, strlen(a2));
        int start_b = rn > strlen(b) && !strncmp(r, b, strlen(b));
        if (end_a || end_a2 || start_b) return 1;
    }
    return 0;
}

/* A matcher's end: where it matched (ok) and the caller wants the spec, *out = *sp with the
 * scan's pointers and the _prologue function's text (with `post`, also `_post(t)`'s: the softmax
 * family's); the scan released either way. */
static int scan_finish(pro_scan *s, int ok, int post, prologue_spec *sp, prologue_spec *out) {
    if (ok && out) {
        memcpy(sp->ptrs, s->ptrs, sizeof sp->ptrs);
        sp->nptrs = s->nptrs;
        sp->helper = (kbuf)KBUF_INIT;
        kbuf_puts(&sp->helper, "@triton.jit\ndef _prologue(");
        for (size_t p = 0; p < s->nptrs; p++) kbuf_printf(&sp->helper, "%s, ", s->ptrs[p]);
        kbuf_printf(&sp->helper, "xindex, r0_index, r0_mask):\n%s    return %s\n", kbuf_str(&s->body), s->res);
        if (post)
            kbuf_printf(&sp->helper, "\n\n@triton.jit\ndef _post(t):\n%s    return %s\n", kbuf_str(&s->post),
                        s->pres[0] ? s->pres : "t");
        *out = *sp;
    }
    scan_free(s);
    return ok;
}

/* scan_kernel, then whether loop 1 goes on after its broadcast with exactly: a call of `call`
 * (its only one in the kernel) whose arguments' line contains `arg_fmt` with the broadcast's
 * name for %s, the call's closing line, then selects of its results under r0_mask alone. 0 with
 * *s held, else -1 with nothing held. */
static int scan_with_update(const kfacts *k, pro_scan *s, const char *call, const char *arg_fmt) {
    if (scan_kernel(k, s, 0)) return -1;
    const builtin_line *ls = s->ls;
    size_t i = s->bcast;
    char arg[48];
    snprintf(arg, sizeof arg, arg_fmt, s->bvar);
    const char *c1 = strstr(k->source, call);
    int ok = i + 3 < s->a1 && line_has(&ls[i + 1], call) && line_has(&ls[i + 2], arg) && ls[i + 3].n == 1 &&
             ls[i + 3].p[0] == ')' && c1 && !strstr(c1 + 1, call);
    for (size_t j = i + 4; ok && j < s->a1; j++) ok = line_has(&ls[j], " = tl.where(r0_mask, ") != NULL;
    if (!ok) scan_free(s);
    return ok ? 0 : -1;
}

int builtin_ln_prologue_match(const kfacts *k, prologue_spec *out) {
    if (!kf_strs_has(&k->aten_ops, "aten.native_layer_norm")) return 0;
    pro_scan s; /* the Welford update of the broadcast (its first argument) */
    if (scan_with_update(k, &s, "triton_helpers.welford_reduce(", "%s, ")) return 0;
    const builtin_line *ls = s.ls;
    int ok = 1;
    /* loop 2: loop 1's loads in order, then the weight and the bias at the reduction index */
    pro_load l2[PRO_MAX_LOADS + 2];
    size_t n2 = 0, m = 0;
    prologue_spec sp = {.nptrs = 0};
    const char *wv = NULL, *bv = NULL;
    ok = ok && !scan_store_loop(k, &s, s.b0, s.b1, l2, PRO_MAX_LOADS + 2, &n2, &sp.out) && n2 == s.n1 + 2;
    for (size_t j = 0; ok && j < n2; j++) {
        if (m < s.n1 && same_load(&l2[j], &s.l1[m])) {
            m++;
            continue;
        }
        const char *t = kfacts_param_type(k, l2[j].ptr);
        if (strcmp(l2[j].idx, s.r0v) || (wv && bv) || !strcmp(t, "*i1")) {
            ok = 0;
            break;
        }
        for (size_t p = 0; p < s.nptrs; p++)
            if (!strcmp(s.ptrs[p], l2[j].ptr)) *(wv ? &sp.b : &sp.w) = s.ptrs[p];
        *(wv ? &bv : &wv) = l2[j].var;
    }
    ok = ok && m == s.n1 && wv && bv && sp.w && sp.b && strcmp(sp.w, sp.b);
    /* scaled by the weight, shifted by the bias; rsqrt of the variance over r0_numel plus eps */
    ok = ok && used_with(ls, s.b0, s.b1, wv, '*') && used_with(ls, s.b0, s.b1, bv, '+');
    char div[48];
    snprintf(div, sizeof div, "tl.full([1, 1], %lld.0, tl.float32)", s.rn);
    kbuf l2t = KBUF_INIT;
    for (size_t j = s.b0; ok && j < s.b1; j++) kbuf_printf(&l2t, "%.*s\n", (int)ls[j].n, ls[j].p);
    ok = ok && strstr(kbuf_str(&l2t), "libdevice.rsqrt(") && strstr(kbuf_str(&l2t), div);
    sp.eps = ok ? builtin_find_eps(kbuf_str(&l2t)) : 0;
    kbuf_free(&l2t);
    ok = ok && sp.eps > 0;
    return scan_finish(&s, ok, 0, &sp, out);
}

/* The online softmax form: loop 1 the prologue and online_softmax_combine, loop 2 exp(x - max) /
 * sum stored (_post is t itself). */
static int sm_online_match(const kfacts *k, prologue_spec *out) {
    pro_scan s; /* the online softmax's update of the broadcast (its third argument) */
    if (scan_with_update(k, &s, "triton_helpers.online_softmax_combine(", ", %s, False")) return 0;
    const builtin_line *ls = s.ls;
    int ok = 1;
    /* between the loops: `tmpM, tmpS = triton_helpers.online_softmax_reduce(` */
    char mx[16] = "", sm[16] = "";
    for (size_t j = s.a1; ok && j < s.loop2; j++) {
        const char *at = line_has(&ls[j], " = triton_helpers.online_softmax_reduce(");
        if (!at) continue;
        const char *comma = memchr(ls[j].p, ',', (size_t)(at - ls[j].p));
        if (!comma || (size_t)(comma - ls[j].p) >= sizeof mx || (size_t)(at - comma - 2) >= sizeof sm ||
            comma[1] != ' ')
            ok = 0;
        else {
            memcpy(mx, ls[j].p, (size_t)(comma - ls[j].p));
            mx[comma - ls[j].p] = '\0';
            memcpy(sm, comma + 2, (size_t)(at - comma - 2));
            sm[at - comma - 2] = '\0';
        }
    }
    ok = ok && !strncmp(mx, "tmp", 3) && !strncmp(sm, "tmp", 3);
    /* loop 2: loop 1's loads in order; x - max, its exponential, over the sum */
    pro_load l2[PRO_MAX_LOADS];
    size_t n2 = 0;
    prologue_spec sp = {.nptrs = 0};
    ok = ok && !scan_store_loop(k, &s, s.b0, s.b1, l2, PRO_MAX_LOADS, &n2, &sp.out) && same_loads(&s, l2, n2);
    int sub = 0, ex = 0, div = 0;
    char subv[16] = "", exv[16] = "";
    for (size_t j = s.b0; ok && j < s.b1; j++) {
        size_t t = tmp_lhs(&ls[j]);
        if (!t || t >= sizeof subv) continue;
        const char *r = ls[j].p + t + 3;
        size_t rl = ls[j].n - t - 3;
        char pat[48];
        snprintf(pat, sizeof pat, " - %s", mx);
        if (!sub && rl > strlen(pat) && !strncmp(r + rl - strlen(pat), pat, strlen(pat))) {
            sub = 1;
            memcpy(subv, ls[j].p, t);
            subv[t] = '\0';
            continue;
        }
        snprintf(pat, sizeof pat, "libdevice.exp(%s)", subv);
        if (sub && !ex && rl == strlen(pat) && !strncmp(r, pat, rl)) {
            ex = 1;
            memcpy(exv, ls[j].p, t);
            exv[t] = '\0';
            continue;
        }
        snprintf(pat, sizeof pat, "(%s / %s)", exv, sm);
        if (ex && rl == strlen(pat) && !strncmp(r, pat, rl)) div = 1;
    }
    ok = ok && sub && ex && div;
    return scan_finish(&s, ok, 1, &sp, out);
}

/* The length of the tmp name (tmp + digits, not inside another identifier) at q of [p, end),
 * else 0. */
static size_t tmp_at(const char *p, const char *q, const char *end) {
    if ((size_t)(end - q) < 3 || strncmp(q, "tmp", 3) || (q > p && (isalnum((unsigned char)q[-1]) || q[-1] == '_')))
        return 0;
    size_t len = 3;
    while (q + len < end && isdigit((unsigned char)q[len])) len++;
    return len;
}

/* Whether the tmp names in [p, end) are all in names[0..n). */
static int tmps_within(const char *p, const char *end, char names[][16], size_t n) {
    for (const char *q = p; q < end; q++) {
        size_t len = tmp_at(p, q, end);
        if (!len) continue;
        int found = 0;
        for (size_t j = 0; !found && j < n; j++) found = strlen(names[j]) == len && !strncmp(q, names[j], len);
        if (!found) return 0;
        q += len - 1;
    }
    return 1;
}

/* Appends line l to out, indented 4, with the tmp name var (where it stands whole) written t: a
 * line of a lifted `_post(t)`. */
static void put_renamed(kbuf *out, const builtin_line *l, const char *var) {
    const char *e = l->p + l->n;
    size_t vlen = strlen(var);
    kbuf_puts(out, "    ");
    for (const char *q = l->p; q < e; q++) {
        size_t len = tmp_at(l->p, q, e);
        if (len == vlen && !strncmp(q, var, vlen)) {
            kbuf_putc(out, 't');
            q += len - 1;
        } else if (len) {
            kbuf_append(out, q, len);
            q += len - 1;
        } else {
            kbuf_putc(out, *q);
        }
    }
    kbuf_putc(out, '\n');
}

/* In [from, to): `tmpD = ... - mx`, then pointwise lines over tmpD and each other only (the chain:
 * a scale, a shift), then `tmpE = libdevice.exp(last)`. The exponential's name into exv, the
 * chain's lines with each tmp name replaced by T and its place in the chain into sig, with tmpD
 * renamed t into post (when not NULL) and its result into pres: 0, else -1. */
static int exp_chain(const builtin_line *ls, size_t from, size_t to, const char *mx, char *exv, kbuf *sig, kbuf *post,
                     char *pres) {
    char names[16][16], pat[48];
    size_t nn = 0, j = from;
    snprintf(pat, sizeof pat, " - %s", mx);
    for (; j < to; j++) {
        size_t t = tmp_lhs(&ls[j]), rl = t ? ls[j].n - t - 3 : 0;
        if (t && t < 16 && rl > strlen(pat) && !strncmp(ls[j].p + ls[j].n - strlen(pat), pat, strlen(pat))) {
            memcpy(names[nn], ls[j].p, t);
            names[nn++][t] = '\0';
            break;
        }
    }
    for (j++; j < to && nn < 16; j++) {
        size_t t = tmp_lhs(&ls[j]);
        if (!t || t >= 16) return -1;
        const char *r = ls[j].p + t + 3, *e = ls[j].p + ls[j].n;
        snprintf(pat, sizeof pat, "libdevice.exp(%s)", names[nn - 1]);
        if ((size_t)(e - r) == strlen(pat) && !strncmp(r, pat, strlen(pat))) {
            memcpy(exv, ls[j].p, t);
            exv[t] = '\0';
            if (pres) snprintf(pres, 16, "%s", nn > 1 ? names[nn - 1] : "");
            return 0;
        }
        if (!pointwise_rhs(r, e) || !tmps_within(r, e, names, nn)) return -1;
        memcpy(names[nn], ls[j].p, t);
        names[nn++][t] = '\0';
        if (post) put_renamed(post, &ls[j], names[0]);
        for (const char *q = ls[j].p; q < e; q++) { /* the line with its tmp names as T */
            size_t len = tmp_at(ls[j].p, q, e);
            if (len) { /* T and the name's place in the chain (tmpD is T0) */
                size_t at = 0;
                while (at + 1 < nn && (strlen(names[at]) != len || strncmp(q, names[at], len))) at++;
                kbuf_printf(sig, "T%zu", at);
                q += len - 1;
                continue;
            }
            kbuf_putc(sig, *q);
        }
        kbuf_putc(sig, '\n');
    }
    return -1;
}

/* The three-loop softmax form (what Inductor emits where the softmax is not online, e.g. after a
 * masked_fill): loop 1 the prologue and a running maximum, `tmpM = triton_helpers.max2(_tmpM, 1)`;
 * loop 2 the sum of exp(f(x - tmpM)) for a chain f of pointwise lines (Inductor's scale), `tmpS =
 * tl.sum(_tmpS, 1)`; loop 3 exp(f(x - tmpM)) / tmpS stored. f becomes _post. */
static int sm_three_loop_match(const kfacts *k, prologue_spec *out) {
    pro_scan s;
    if (scan_kernel(k, &s, 1)) return 0;
    const builtin_line *ls = s.ls;
    size_t i = s.bcast;
    char acc[16] = "", accs[16] = "", mx[16], sm[16], want[96], ex2[16] = "", ex3[16] = "";
    /* loop 1 after the broadcast: `tmpA = triton_helpers.maximum(_tmpM, tmpB)`, `_tmpM =
     * tl.where(r0_mask, tmpA, _tmpM)` */
    size_t t = i + 1 < s.a1 ? tmp_lhs(&ls[i + 1]) : 0;
    const char *r = t ? ls[i + 1].p + t + 3 : NULL, *comma = r ? memchr(r, ',', ls[i + 1].n - t - 3) : NULL;
    int ok = i + 3 == s.a1 && comma && !strncmp(r, "triton_helpers.maximum(_tmp", 27) &&
             (size_t)(comma - r - 23) < sizeof acc && t < sizeof mx;
    if (ok) {
        memcpy(acc, r + 23, (size_t)(comma - r - 23));
        snprintf(want, sizeof want, "%.*s = triton_helpers.maximum(%s, %s)", (int)t, ls[i + 1].p, acc, s.bvar);
        ok = line_is(&ls[i + 1], want);
        snprintf(want, sizeof want, "%s = tl.where(r0_mask, %.*s, %s)", acc, (int)t, ls[i + 1].p, acc);
        ok = ok && line_is(&ls[i + 2], want);
    }
    /* between loops 1 and 2: the max, and loop 2's zero accumulator; between 2 and 3: the sum */
    snprintf(mx, sizeof mx, "%s", acc + 1);
    snprintf(want, sizeof want, "%s = triton_helpers.max2(%s, 1)[:, None]", mx, acc);
    int seen = 0;
    for (size_t j = s.a1; ok && j < s.loop2; j++) {
        const char *z = line_has(&ls[j], " = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)");
        if (line_is(&ls[j], want))
            seen++;
        else if (z && starts(&ls[j], "_tmp") && !accs[0] && (size_t)(z - ls[j].p) < sizeof accs)
            memcpy(accs, ls[j].p, (size_t)(z - ls[j].p));
        else
            ok = 0;
    }
    ok = ok && seen == 1 && accs[0] && s.loop3 == s.b1 + 1;
    snprintf(sm, sizeof sm, "%s", accs + 1);
    snprintf(want, sizeof want, "%s = tl.sum(%s, 1)[:, None]", sm, accs);
    ok = ok && line_is(&ls[s.b1], want);
    /* loop 2: loop 1's loads, no store, exp of the chain, accumulated into _tmpS */
    kbuf sig2 = KBUF_INIT, sig3 = KBUF_INIT;
    pro_load l2[PRO_MAX_LOADS], l3[PRO_MAX_LOADS];
    size_t n2 = 0, n3 = 0;
    ok = ok && !loop_loads(&s, s.b0, s.b1, l2, PRO_MAX_LOADS, &n2) && same_loads(&s, l2, n2) &&
         !exp_chain(ls, s.b0, s.b1, mx, ex2, &sig2, NULL, NULL);
    snprintf(want, sizeof want, "%s = tl.where(r0_mask, ", accs);
    int accumulated = 0;
    for (size_t j = s.b0; ok && j < s.b1; j++) {
        accumulated |= starts(&ls[j], want);
        ok = !starts(&ls[j], "tl.store(");
    }
    ok = ok && accumulated;
    /* loop 3: loop 1's loads in order, the same chain, its exponential over the sum, one store */
    prologue_spec sp = {.nptrs = 0};
    ok = ok && !scan_store_loop(k, &s, s.c0, s.c1, l3, PRO_MAX_LOADS, &n3, &sp.out) && same_loads(&s, l3, n3) &&
         !exp_chain(ls, s.c0, s.c1, mx, ex3, &sig3, &s.post, s.pres) && !strcmp(kbuf_str(&sig2), kbuf_str(&sig3));
    snprintf(want, sizeof want, " = (%s / %s)", ex3, sm);
    int div = 0;
    for (size_t j = s.c0; ok && j < s.c1; j++) div |= line_has(&ls[j], want) != NULL;
    ok = ok && div;
    kbuf_free(&sig2);
    kbuf_free(&sig3);
    return scan_finish(&s, ok, 1, &sp, out);
}

int builtin_sm_prologue_match(const kfacts *k, prologue_spec *out) {
    if (!kf_strs_has(&k->aten_ops, "aten._softmax") || kf_strs_has(&k->aten_ops, "aten._log_softmax")) return 0;
    return sm_online_match(k, out) || sm_three_loop_match(k, out);
}

void builtin_prologue_free(prologue_spec *sp) {
    if (sp) kbuf_free(&sp->helper);
}

json_t *builtin_prologue_variants(const kfacts *k) {
    json_t *v = json_array();
    long long np2 = builtin_next_pow2(kfacts_numel(k, "r0_numel"));
    /* rows a program and warps: 4 to 64 fp32 values a thread, at most 16384 a program (rows of
     * 16384: one row, 8, 16 or 32 warps) */
    static const int rw[][2] = {{1, 8}, {1, 4}, {2, 8}, {1, 16}, {4, 8}, {8, 8}, {1, 32}};
    for (size_t i = 0; i < sizeof rw / sizeof *rw && json_array_size(v) < 5; i++) {
        long long per = rw[i][0] * np2 / (32LL * rw[i][1]);
        if (rw[i][0] * np2 > 16384 || per < 4 || per > 64) continue;
        json_array_append_new(v, json_pack("{s:i, s:i}", "rows", rw[i][0], "num_warps", rw[i][1]));
    }
    return v;
}

int builtin_prologue_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    prologue_spec sp;
    int ln = plan->tmpl == KF_ROW_LN_PROLOGUE;
    const char *tmpl = ln ? "row_layer_norm_prologue" : "row_softmax_prologue";
    if (!(ln ? builtin_ln_prologue_match(k, &sp) : builtin_sm_prologue_match(k, &sp)))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite %s does not apply to this kernel", tmpl);
    long long np2 = builtin_next_pow2(kfacts_numel(k, "r0_numel"));
    json_t *cands = json_array();
    int rc = 0;
    for (size_t i = 0; !rc && i < plan->nvar; i++) {
        long long xb = plan->var[i].has_rows ? plan->var[i].rows : 1, nw = plan->var[i].num_warps;
        if (!builtin_pow2_in(xb, 1, 64) || !builtin_pow2_in(nw, 1, 32) || xb * np2 > 16384) continue;
        tpl_arg a[7] = {{.name = "PARAMS", .type = TPL_IDENTS, .idents = sp.ptrs, .nidents = sp.nptrs},
                        {.name = "OUT", .type = TPL_IDENT, .ident = sp.out},
                        {.name = "XB", .type = TPL_INT, .i = xb},
                        {.name = "NUM_WARPS", .type = TPL_INT, .i = nw},
                        {.name = "W", .type = TPL_IDENT, .ident = sp.w},
                        {.name = "B", .type = TPL_IDENT, .ident = sp.b},
                        {.name = "EPS", .type = TPL_FLOAT, .f = sp.eps}};
        kbuf s = KBUF_INIT, t = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label, "%s: %lld row%s a program in registers, Inductor's prologue once, one read, num_warps=%lld",
                    tmpl, xb, xb > 1 ? "s" : "", nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n", k->name,
                    kbuf_str(&label));
        rc = template_render(tmpl, a, ln ? 7 : 4, &t, e);
        /* the prologue's function goes before the kernel that calls it */
        if (!rc) rc = builtin_splice_helper(&s, kbuf_str(&t), "_row_kernel", kbuf_str(&sp.helper), e);
        if (!rc) {
            json_array_append_new(cands, json_pack("{s:s, s:{s:s, s:I, s:I}, s:s}", "label", kbuf_str(&label), "config",
                                                   "template", tmpl, "rows", (json_int_t)xb, "num_warps",
                                                   (json_int_t)nw, "source", kbuf_str(&s)));
        }
        kbuf_free(&s);
        kbuf_free(&t);
        kbuf_free(&label);
    }
    builtin_prologue_free(&sp);
    if (rc) {
        json_decref(cands);
        return rc;
    }
    return builtin_candidates_answer(cands, tmpl,
                                     "rows and num_warps powers of two, rows <= 64, num_warps <= 32, rows x the row's "
                                     "next power of two <= 16384",
                                     out, e);
}

/* builtin.h: the pointwise tail of a kernel after `var` (lines lifted into `_post(t)`). */
int builtin_pointwise_tail(const char *src, const char *var, kbuf *post, char *ret, size_t cap) {
    enum { TAIL_LINES = 256, TAIL_NAMES = 32 };
    builtin_line *ls = calloc(TAIL_LINES, sizeof *ls);
    size_t n = src && ls ? builtin_split_lines(src, ls, TAIL_LINES) : 0, vlen = strlen(var), j = 0, nn = 0;
    char names[TAIL_NAMES][16];
    kbuf body = KBUF_INIT;
    int ok = 0;
    /* the line that defines var */
    while (vlen > 3 && vlen < 16 && j < n && !(tmp_lhs(&ls[j]) == vlen && !strncmp(ls[j].p, var, vlen))) j++;
    if (vlen <= 3 || vlen >= 16 || j >= n) goto out;
    memcpy(names[nn++], var, vlen + 1);
    for (j++; j < n; j++) {
        size_t t = tmp_lhs(&ls[j]);
        const char *e = ls[j].p + ls[j].n;
        if (!t) break;
        const char *r = ls[j].p + t + 3;
        if (t >= 16 || nn == TAIL_NAMES || !pointwise_rhs(r, e) || !tmps_within(r, e, names, nn)) goto out;
        memcpy(names[nn], ls[j].p, t);
        names[nn++][t] = '\0';
        put_renamed(&body, &ls[j], var);
    }
    /* the kernel's last line: the store of the chain's last value */
    if (j + 1 != n || !starts(&ls[j], "tl.store(")) goto out;
    const char *last = names[nn - 1];
    char tail1[40], tail2[40];
    snprintf(tail1, sizeof tail1, ", %s, None)", last);
    snprintf(tail2, sizeof tail2, ", %s, xmask)", last);
    size_t l1 = strlen(tail1), l2 = strlen(tail2);
    if (!((ls[j].n > l1 && !strncmp(ls[j].p + ls[j].n - l1, tail1, l1)) ||
          (ls[j].n > l2 && !strncmp(ls[j].p + ls[j].n - l2, tail2, l2))))
        goto out;
    snprintf(ret, cap, "%s", nn > 1 ? last : "t");
    if (body.len) kbuf_append(post, body.data, body.len);
    ok = 1;
out:
    kbuf_free(&body);
    free(ls);
    return ok;
}
