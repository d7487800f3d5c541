/* builtin_prologue.c — the row_layer_norm_prologue family (contract in builtin.h): a layer norm
 * with the pointwise work Inductor fused before it (the GELU after a Linear, a residual add, a
 * bias) over rows that fit on chip. Inductor's looped kernel reads each row twice, computes the
 * prologue twice and runs Welford's update (a division) per element; the template reads the row
 * once, runs the prologue once and takes the mean and centred variance from registers.
 *
 * The prologue is Inductor's own lines, lifted from the first loop into a jit function: only
 * loads of the kernel's pointers at the row or at (r0_1), and pointwise lines over tmp names,
 * Triton's and Inductor's math helpers and literals (no strings, no index or block names). What
 * the lines compute is then checked as every candidate is, by gates 2 and 3. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"

enum { LNP_MAX_LINES = 96, LNP_MAX_LOADS = 8 };

/* A line of the source: its text without indentation, and the indentation. */
typedef struct lnp_line {
    const char *p;
    size_t n;
    int indent;
} lnp_line;

/* A load line `tmpN = tl.load(PTR + (IDX), r0_mask, eviction_policy='..', other=0.0)[.to(..)]`. */
typedef struct lnp_load {
    char var[16], ptr[16];
    int row; /* IDX is the row's (r0_1 + RN*x0), else (r0_1) */
} lnp_load;

static int starts(const lnp_line *l, const char *s) { return l->n >= strlen(s) && !strncmp(l->p, s, strlen(s)); }

/* Where s occurs within line l, or NULL. */
static const char *line_has(const lnp_line *l, const char *s) { return memmem(l->p, l->n, s, strlen(s)); }

/* The lines of one `for r0_offset in tl.range(0, r0_numel, R0_BLOCK):` loop body, after the index
 * lines (r0_index, r0_mask, roffset, rindex, r0_1 = r0_index): [*from, *to). */
static int loop_body(const lnp_line *ls, size_t n, size_t head, size_t *from, size_t *to) {
    size_t i = head + 1;
    int r01 = 0;
    static const char *const idx[] = {"r0_index = ", "r0_mask = ", "roffset = ", "rindex = ", "r0_1 = "};
    for (; i < n && ls[i].indent > ls[head].indent; i++) {
        int is_idx = 0;
        for (size_t j = 0; j < sizeof idx / sizeof *idx; j++) is_idx |= starts(&ls[i], idx[j]);
        if (!is_idx) break;
        r01 |= ls[i].n == 15 && !strncmp(ls[i].p, "r0_1 = r0_index", 15);
    }
    *from = i;
    while (i < n && ls[i].indent > ls[head].indent) i++;
    *to = i;
    return r01 ? 0 : -1;
}

/* `tmpN = ` at the start of l: the name's length, else 0. */
static size_t tmp_lhs(const lnp_line *l) {
    if (!starts(l, "tmp")) return 0;
    size_t i = 3;
    while (i < l->n && isdigit((unsigned char)l->p[i])) i++;
    if (i == 3 || i + 3 > l->n || strncmp(l->p + i, " = ", 3)) return 0;
    return i;
}

/* Whether parameter `name` is one of the kernel's pointers. */
static int is_ptr(const lnp_spec *sp, const char *name, size_t n) {
    for (size_t i = 0; i < sp->nptrs; i++)
        if (strlen(sp->ptrs[i]) == n && !strncmp(sp->ptrs[i], name, n)) return 1;
    return 0;
}

/* Parses a load line into *ld; 0 when the line is exactly one of the two known forms. */
static int parse_load(const lnp_line *l, const lnp_spec *sp, long long rn, lnp_load *ld) {
    size_t v = tmp_lhs(l);
    if (!v || v >= sizeof ld->var) return -1;
    memcpy(ld->var, l->p, v);
    ld->var[v] = '\0';
    const char *p = l->p + v + 3, *end = l->p + l->n;
    if (strncmp(p, "tl.load(", 8)) return -1;
    p += 8;
    const char *sp_ = memchr(p, ' ', (size_t)(end - p));
    if (!sp_ || (size_t)(sp_ - p) >= sizeof ld->ptr || !is_ptr(sp, p, (size_t)(sp_ - p))) return -1;
    memcpy(ld->ptr, p, (size_t)(sp_ - p));
    ld->ptr[sp_ - p] = '\0';
    p = sp_;
    char row[64];
    snprintf(row, sizeof row, " + (r0_1 + %lld*x0), r0_mask, ", rn);
    if (!strncmp(p, row, strlen(row))) {
        ld->row = 1;
        p += strlen(row);
    } else if (!strncmp(p, " + (r0_1), r0_mask, ", 20)) {
        ld->row = 0;
        p += 20;
    } else {
        return -1;
    }
    static const char *const ev[] = {"eviction_policy='evict_last', ", "eviction_policy='evict_first', ", ""};
    size_t j = 0;
    while (strncmp(p, ev[j], strlen(ev[j]))) j++;
    p += strlen(ev[j]);
    static const char *const tails[] = {"other=0.0)", "other=0.0).to(tl.float32)"};
    for (j = 0; j < 2; j++)
        if ((size_t)(end - p) == strlen(tails[j]) && !strncmp(p, tails[j], strlen(tails[j]))) return 0;
    return -1;
}

/* Whether the right-hand side of a pointwise prologue line uses only tmp names, tl, libdevice,
 * tl_math, triton_helpers (attributes after a '.' free), numbers and operators: no strings, no
 * index or block names, no loads, stores, reductions or masks. */
static int pointwise_rhs(const char *p, const char *end) {
    static const char *const roots[] = {"tl", "libdevice", "tl_math", "triton_helpers"};
    static const char *const banned[] = {"load", "store",   "sum",        "reduce", "where", "atomic",     "max2",
                                         "min2", "welford", "program_id", "arange", "debug", "inline_asm", "device_"};
    for (const char *q = p; q < end;) {
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

/* Splits the source into lines (at most LNP_MAX_LINES * 4). */
static size_t split_lines(const char *src, lnp_line *ls, size_t cap) {
    size_t n = 0;
    for (const char *p = src; *p && n < cap;) {
        const char *nl = strchr(p, '\n');
        const char *e = nl ? nl : p + strlen(p);
        int ind = 0;
        while (p + ind < e && p[ind] == ' ') ind++;
        size_t len = (size_t)(e - p - ind);
        while (len && (p[ind + len - 1] == ' ' || p[ind + len - 1] == '\r')) len--;
        if (len) ls[n++] = (lnp_line){p + ind, len, ind};
        if (!nl) break;
        p = nl + 1;
    }
    return n;
}

/* Whether line l is `tmpA = v.to(tl.float32)`; its tmpA into lhs. */
static int is_float_copy(const lnp_line *l, const char *v, char *lhs, size_t cap) {
    size_t t = tmp_lhs(l);
    char want[48];
    snprintf(want, sizeof want, "%s.to(tl.float32)", v);
    if (!t || t >= cap || l->n != t + 3 + strlen(want) || strncmp(l->p + t + 3, want, strlen(want))) return 0;
    memcpy(lhs, l->p, t);
    lhs[t] = '\0';
    return 1;
}

/* Whether some line of [from, to) is `tmpX = tmpY OP v` or `tmpX = v OP tmpY` for v or its
 * float copy. */
static int used_with(const lnp_line *ls, size_t from, size_t to, const char *v, char op) {
    char cp[16] = "";
    for (size_t i = from; i < to && !cp[0]; i++) is_float_copy(&ls[i], v, cp, sizeof cp);
    const char *name = cp[0] ? cp : v;
    for (size_t i = from; i < to; i++) {
        size_t t = tmp_lhs(&ls[i]);
        if (!t) continue;
        char a[40], b[40];
        snprintf(a, sizeof a, " %c %s", op, name);
        snprintf(b, sizeof b, "%s %c ", name, op);
        const char *r = ls[i].p + t + 3;
        size_t rn = ls[i].n - t - 3;
        int end_a = rn > strlen(a) && !strncmp(r + rn - strlen(a), a, strlen(a));
        int start_b = rn > strlen(b) && !strncmp(r, b, strlen(b));
        if (end_a || start_b) return 1;
    }
    return 0;
}

int builtin_ln_prologue_match(const kfacts *k, lnp_spec *out) {
    lnp_spec sp = {.nptrs = 0};
    const char *src = k->source;
    long long rn = kfacts_numel(k, "r0_numel"), xn = kfacts_numel(k, "xnumel");
    if (!src || k->kind != ART_K_REDUCTION || rn < 16 || rn > 16384 || xn <= 0 || xn * rn >= (1LL << 31) ||
        !kf_strs_has(&k->aten_ops, "aten.native_layer_norm"))
        return 0;
    /* the signature: float pointers, then xnumel and r0_numel */
    size_t nr = k->runtime.n;
    if (nr < 4 || nr - 2 > sizeof sp.ptrs / sizeof *sp.ptrs || strcmp(k->runtime.v[nr - 2], "xnumel") ||
        strcmp(k->runtime.v[nr - 1], "r0_numel"))
        return 0;
    for (size_t i = 0; i + 2 < nr; i++) {
        const char *t = kfacts_param_type(k, k->runtime.v[i]);
        if (strcmp(t, "*fp32") && strcmp(t, "*bf16") && strcmp(t, "*fp16")) return 0;
        sp.ptrs[sp.nptrs++] = k->runtime.v[i];
    }
    lnp_line *ls = malloc(LNP_MAX_LINES * 4 * sizeof *ls);
    if (!ls) return 0;
    size_t n = split_lines(src, ls, LNP_MAX_LINES * 4);
    size_t loops[3], nl = 0;
    for (size_t i = 0; i < n; i++)
        if (ls[i].n == 49 && !strncmp(ls[i].p, "for r0_offset in tl.range(0, r0_numel, R0_BLOCK):", 49) && nl < 3)
            loops[nl++] = i;
    size_t a0, a1, b0, b1;
    if (nl != 2 || loop_body(ls, n, loops[0], &a0, &a1) || loop_body(ls, n, loops[1], &b0, &b1) || a1 > loops[1]) {
        free(ls);
        return 0;
    }
    /* loop 1: loads and pointwise lines, a broadcast, one Welford update, its three selects */
    lnp_load l1[LNP_MAX_LOADS];
    size_t n1 = 0, i = a0;
    kbuf body = KBUF_INIT;
    int ok = 1;
    for (; ok && i < a1 && !line_has(&ls[i], "tl.broadcast_to("); i++) {
        size_t t = tmp_lhs(&ls[i]);
        if (!t || ls[i].n > 400) ok = 0;
        else if (!strncmp(ls[i].p + t + 3, "tl.load(", 8)) {
            if (n1 == LNP_MAX_LOADS || parse_load(&ls[i], &sp, rn, &l1[n1])) ok = 0;
            else if (!n1 && !l1[0].row) ok = 0; /* the first load is the row */
            else {
                /* read once: the row's loads evict first */
                const char *ev = l1[n1].row ? line_has(&ls[i], "eviction_policy='evict_last'") : NULL;
                size_t cut = ev ? (size_t)(ev - ls[i].p) : ls[i].n;
                kbuf_printf(&body, "    %.*s", (int)cut, ls[i].p);
                if (cut < ls[i].n)
                    kbuf_printf(&body, "eviction_policy='evict_first'%.*s", (int)(ls[i].n - cut - 28),
                                ls[i].p + cut + 28);
                kbuf_putc(&body, '\n');
                n1++;
            }
        } else if (!pointwise_rhs(ls[i].p + t + 3, ls[i].p + ls[i].n)) {
            ok = 0;
        } else {
            kbuf_printf(&body, "    %.*s\n", (int)ls[i].n, ls[i].p);
        }
    }
    /* `tmpB = tl.broadcast_to(tmpV, [XBLOCK, R0_BLOCK])` then the Welford update of tmpB */
    char res[16] = "", bvar[16] = "";
    if (ok && n1 && i + 1 < a1) {
        size_t t = tmp_lhs(&ls[i]);
        const char *r = t ? ls[i].p + t + 3 : NULL;
        const char *tail = ", [XBLOCK, R0_BLOCK])";
        size_t vl = r ? ls[i].n - t - 3 : 0;
        if (r && t < sizeof bvar && vl > 16 + strlen(tail) && !strncmp(r, "tl.broadcast_to(", 16) &&
            !strncmp(r + vl - strlen(tail), tail, strlen(tail)) && vl - 16 - strlen(tail) < sizeof res) {
            memcpy(bvar, ls[i].p, t);
            bvar[t] = '\0';
            memcpy(res, r + 16, vl - 16 - strlen(tail));
            res[vl - 16 - strlen(tail)] = '\0';
        }
    }
    char want[64];
    snprintf(want, sizeof want, "%s, ", bvar);
    ok = ok && res[0] && strstr(body.data ? body.data : "", res) && line_has(&ls[i + 1], "welford_reduce(") &&
         i + 2 < a1 && starts(&ls[i + 2], want);
    const char *w1 = ok ? strstr(src, "welford_reduce(") : NULL;
    ok = ok && w1 && !strstr(w1 + 1, "welford_reduce(");
    /* after the update's closing line: its three selects alone */
    ok = ok && i + 3 < a1 && ls[i + 3].n == 1 && ls[i + 3].p[0] == ')';
    for (size_t j = i + 4; ok && j < a1; j++) ok = line_has(&ls[j], " = tl.where(r0_mask, ") != NULL;
    /* loop 2: the same loads plus the weight and the bias at (r0_1), one store of the row */
    lnp_load l2[LNP_MAX_LOADS + 2];
    size_t n2 = 0, nstore = 0;
    const char *wv = NULL, *bv = NULL;
    for (size_t j = b0; ok && j < b1; j++) {
        if (starts(&ls[j], "tl.store(")) {
            char st[96];
            nstore++;
            int m = 0;
            for (size_t p = 0; p < sp.nptrs && !m; p++) {
                snprintf(st, sizeof st, "tl.store(%s + (r0_1 + %lld*x0), tmp", sp.ptrs[p], rn);
                if (starts(&ls[j], st) && !strncmp(ls[j].p + ls[j].n - 10, ", r0_mask)", 10)) {
                    m = 1;
                    sp.out = sp.ptrs[p];
                }
            }
            ok = m;
            continue;
        }
        size_t t = tmp_lhs(&ls[j]);
        if (!t) ok = 0;
        else if (!strncmp(ls[j].p + t + 3, "tl.load(", 8)) {
            if (n2 == LNP_MAX_LOADS + 2 || parse_load(&ls[j], &sp, rn, &l2[n2])) ok = 0;
            else n2++;
        }
    }
    ok = ok && nstore == 1 && n2 == n1 + 2;
    /* loop 1's loads in order, then the weight and the bias, both at (r0_1) */
    size_t m = 0;
    for (size_t j = 0; ok && j < n2; j++) {
        int same = m < n1 && !strcmp(l2[j].ptr, l1[m].ptr) && l2[j].row == l1[m].row;
        if (same) {
            m++;
            continue;
        }
        if (l2[j].row || (wv && bv)) ok = 0;
        else if (!wv) {
            wv = l2[j].var;
            sp.w = NULL;
            for (size_t p = 0; p < sp.nptrs; p++)
                if (!strcmp(sp.ptrs[p], l2[j].ptr)) sp.w = sp.ptrs[p];
        } else {
            bv = l2[j].var;
            for (size_t p = 0; p < sp.nptrs; p++)
                if (!strcmp(sp.ptrs[p], l2[j].ptr)) sp.b = sp.ptrs[p];
        }
    }
    ok = ok && m == n1 && wv && bv && sp.w && sp.b && strcmp(sp.w, sp.b);
    /* scaled by the weight, shifted by the bias; rsqrt of the variance over r0_numel plus eps */
    ok = ok && used_with(ls, b0, b1, wv, '*') && used_with(ls, b0, b1, bv, '+');
    char div[48];
    snprintf(div, sizeof div, "tl.full([1, 1], %lld.0, tl.float32)", rn);
    kbuf l2t = KBUF_INIT;
    for (size_t j = b0; ok && j < b1; j++) kbuf_printf(&l2t, "%.*s\n", (int)ls[j].n, ls[j].p);
    ok = ok && strstr(kbuf_str(&l2t), "libdevice.rsqrt(") && strstr(kbuf_str(&l2t), div);
    sp.eps = ok ? builtin_find_eps(kbuf_str(&l2t)) : 0;
    kbuf_free(&l2t);
    free(ls);
    if (!ok || sp.eps <= 0) {
        kbuf_free(&body);
        return 0;
    }
    if (out) {
        *out = sp;
        out->helper = (kbuf)KBUF_INIT;
        kbuf_puts(&out->helper, "@triton.jit\ndef _ln_prologue(");
        for (size_t p = 0; p < sp.nptrs; p++) kbuf_printf(&out->helper, "%s, ", sp.ptrs[p]);
        kbuf_printf(&out->helper, "x0, r0_1, r0_mask):\n%s    return %s\n", kbuf_str(&body), res);
    }
    kbuf_free(&body);
    return 1;
}

void builtin_ln_prologue_free(lnp_spec *sp) {
    if (sp) kbuf_free(&sp->helper);
}

json_t *builtin_ln_prologue_variants(const kfacts *k) {
    json_t *v = json_array();
    long long np2 = builtin_next_pow2(kfacts_numel(k, "r0_numel"));
    /* rows a program and warps: 4 to 64 fp32 values a thread, at most 16384 a program */
    static const int rw[][2] = {{1, 8}, {1, 4}, {2, 8}, {1, 16}, {4, 8}, {8, 8}};
    for (size_t i = 0; i < sizeof rw / sizeof *rw && json_array_size(v) < 5; i++) {
        long long per = rw[i][0] * np2 / (32LL * rw[i][1]);
        if (rw[i][0] * np2 > 16384 || per < 4 || per > 64) continue;
        json_array_append_new(v, json_pack("{s:i, s:i}", "rows", rw[i][0], "num_warps", rw[i][1]));
    }
    return v;
}

int builtin_ln_prologue_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    lnp_spec sp;
    if (!builtin_ln_prologue_match(k, &sp))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite row_layer_norm_prologue does not apply to this kernel");
    long long np2 = builtin_next_pow2(kfacts_numel(k, "r0_numel"));
    json_t *cands = json_array();
    int rc = 0;
    for (size_t i = 0; !rc && i < plan->nvar; i++) {
        long long xb = plan->var[i].has_rows ? plan->var[i].rows : 1, nw = plan->var[i].num_warps;
        if (!builtin_pow2_in(xb, 1, 64) || !builtin_pow2_in(nw, 1, 32) || xb * np2 > 16384) continue;
        tpl_arg a[] = {{.name = "PARAMS", .type = TPL_IDENTS, .idents = sp.ptrs, .nidents = sp.nptrs},
                       {.name = "W", .type = TPL_IDENT, .ident = sp.w},
                       {.name = "B", .type = TPL_IDENT, .ident = sp.b},
                       {.name = "OUT", .type = TPL_IDENT, .ident = sp.out},
                       {.name = "EPS", .type = TPL_FLOAT, .f = sp.eps},
                       {.name = "XB", .type = TPL_INT, .i = xb},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw}};
        kbuf s = KBUF_INIT, t = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label,
                    "row_layer_norm_prologue: %lld row%s a program in registers, Inductor's prologue once, "
                    "one read, num_warps=%lld",
                    xb, xb > 1 ? "s" : "", nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n", k->name,
                    kbuf_str(&label));
        rc = template_render("row_layer_norm_prologue", a, sizeof a / sizeof *a, &t, e);
        /* the prologue's function goes before the kernel that calls it */
        const char *at = rc ? NULL : strstr(kbuf_str(&t), "@triton.jit\ndef _row_kernel(");
        if (!rc && !at) rc = kerr_set(e, KOPT_E_INTERNAL, "template row_layer_norm_prologue has no _row_kernel");
        if (!rc) {
            kbuf_append(&s, t.data, (size_t)(at - t.data));
            kbuf_printf(&s, "%s\n\n", kbuf_str(&sp.helper));
            kbuf_puts(&s, at);
            json_array_append_new(cands, json_pack("{s:s, s:{s:s, s:I, s:I}, s:s}", "label", kbuf_str(&label), "config",
                                                   "template", "row_layer_norm_prologue", "rows", (json_int_t)xb,
                                                   "num_warps", (json_int_t)nw, "source", kbuf_str(&s)));
        }
        kbuf_free(&s);
        kbuf_free(&t);
        kbuf_free(&label);
    }
    builtin_ln_prologue_free(&sp);
    if (rc) {
        json_decref(cands);
        return rc;
    }
    return builtin_candidates_answer(cands, "row_layer_norm_prologue",
                                     "rows and num_warps powers of two, rows <= 64, num_warps <= 32, rows x the row's "
                                     "next power of two <= 16384",
                                     out, e);
}
