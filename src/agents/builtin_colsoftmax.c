/* builtin_colsoftmax.c — softmax and log-softmax over a dimension that is not the last: Inductor
 * reduces such a dimension with strided loads and reads the input twice (an online max and sum,
 * then the normalisation) or three times (the max, the sum of exponentials, the normalisation).
 * Two one-read templates:
 *   col_softmax (templates/kernels/col_softmax.py.tmpl): the whole reduced dimension of a few
 *     adjacent inner columns in registers, one program per tile (short reduced dimensions);
 *   col_split_softmax (col_split_softmax.py.tmpl): the reduced dimension cut into segments, one
 *     program per segment of a wider tile, partial max/sum exchanged between the tile's
 *     programs (split_softmax's scheme, column-wise). Measured on the H200 on 64 x 2048 x 4096
 *     (softmax over dim 1): 128-row segments of 32 columns, 4 warps, 1.456 ms against Inductor's
 *     1.582; 2048 x 16 register tiles with 32 warps (32 elements a thread) 1.40-1.42 ms, with
 *     16 warps or 2048 x 8 tiles slower than Inductor. Softmax (not log) keeps the exponentials
 *     of its one read and rescales them (one multiply an element instead of a second exp).
 *
 * Recognised from what the kernel computes: one input and one output of one type, fp32, fp16
 * or bf16 (in_ptr0, out_ptrN, xnumel, r0_numel; 16-bit values loaded and computed in fp32 and
 * stored in their own type, every conversion in the source to fp32), the input's shape from
 * call(), a dimension d with shape[d] == r0_numel, the rest multiplying to xnumel and something
 * after it (inner > 1; the last dimension is the row templates'), at most 65536 long. Two forms:
 *   - the online form (prims.prepare_softmax_online among the ATen ops): ATen ops of a softmax
 *     only (prepare_softmax_online, sub, exp, div / log, _softmax / _log_softmax, amax, sum, the
 *     dtype conversions);
 *   - the three-loop form (a looped kernel without it): a softmax (not log) read from the source
 *     line by line -- loop 1 the max of x, loop 2 the sum of exp(x - max), loop 3 exp(x - max) /
 *     sum stored, each loop loading the input at the one index of the dimension (converted to
 *     fp32 only) -- or softmax(x * c) for a constant c > 0 as Inductor writes it for x * c or
 *     x / t: x times tl.full 1.0 in every loop, then exp((x - max) * c) with c the same printed
 *     tl.full constant in loops 2 and 3 (read with strtod: the value the kernel rounds to fp32);
 *     ATen ops _to_copy, convert_element_type, mul (with the scale, only then), amax, sub, div,
 *     exp, sum, _softmax. Anything else (a scale elsewhere, zero or negative, another op or cast,
 *     another line) leaves the kernel unmatched.
 * The FX graph fragment's softmax node (or amax node) settles d when several fit. Plans:
 * {"direction":"rewrite","params":{"template":"col_softmax","variants":[{"block_i":I,
 * "num_warps":W} | {"cb":R,"ib":I,"num_warps":W},..]}}. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"
#include "util/buf.h"

enum { CS_MAX_C = 65536, CS_MAX_TILE = 32768, CS_MAX_SEGS = 132 };

/* What a middle-dimension softmax kernel computes. */
typedef struct cs_facts {
    int log;                           /* log-softmax */
    int scaled;                        /* softmax(x * scale), scale > 0 */
    double scale;
    int dims[KF_MAX_DIMS], ndims;      /* the dimensions that fit, the last first */
    long long c, inner, outer;         /* the reduced length, the inner and outer sizes (of dims[0]) */
    const char *in, *out;
} cs_facts;

/* The Triton name of a 16-bit pointer type's elements ("tl.float16", "tl.bfloat16"), else NULL. */
static const char *cs_tl16(const char *ptr_type) {
    return !strcmp(ptr_type, "*fp16") ? "tl.float16" : !strcmp(ptr_type, "*bf16") ? "tl.bfloat16" : NULL;
}

/* Reading the three-loop form: the kernel's lines compared with patterns in which {x} stands for
 * an identifier, {#x} a decimal number and {@x} an index expression (names, integers, spaces,
 * + * / % and balanced parentheses), each bound to slot x at its first occurrence and compared at
 * later ones: slots a-z for one loop's names, A-Z for the kernel's. */
enum { CS_SLOT = 128, CS_LINES = 128 };

typedef struct cs_scan {
    builtin_line ls[CS_LINES + 1];
    size_t n, i;            /* the lines of the kernel's body, the next one */
    char slot[52][CS_SLOT]; /* the bound names ("" unbound) */
    int wide;               /* fp32 input: loads without a conversion */
    int scaled;             /* x * 1.0 in loop 1: a scale follows */
    const char *out_tl;     /* the output's 16-bit Triton type (NULL: fp32) */
} cs_scan;

static char *cs_slot(cs_scan *s, char c) { return s->slot[islower((unsigned char)c) ? c - 'a' : 26 + c - 'A']; }

/* Whether [t, e) is exactly pattern p (see cs_scan); on a mismatch the slots are as before. */
static int cs_pat(cs_scan *s, const char *t, const char *e, const char *p) {
    char bound[52];
    int nb = 0;
    while (*p) {
        if (*p != '{') {
            if (t == e || *t != *p) goto no;
            t++, p++;
            continue;
        }
        char kind = (p[1] == '#' || p[1] == '@') ? p[1] : 'n';
        char c = kind == 'n' ? p[1] : p[2];
        p += kind == 'n' ? 3 : 4;
        const char *b = t;
        int depth = 0;
        for (; t < e; t++) {
            unsigned char ch = (unsigned char)*t;
            int ok = kind == 'n'   ? isalnum(ch) || ch == '_'
                     : kind == '#' ? isdigit(ch) || (ch && strchr(".eE+-", ch))
                                   : isalnum(ch) || (ch && strchr(" _+*/%(", ch)) || (ch == ')' && depth > 0);
            if (!ok) break;
            depth += (ch == '(') - (ch == ')');
        }
        size_t len = (size_t)(t - b);
        char *v = cs_slot(s, c);
        if (!len || depth || len >= CS_SLOT) goto no;
        if (!*v) {
            memcpy(v, b, len);
            v[len] = '\0';
            bound[nb++] = c;
        } else if (strlen(v) != len || memcmp(v, b, len)) {
            goto no;
        }
    }
    if (t == e) return 1;
no:
    while (nb) cs_slot(s, bound[--nb])[0] = '\0';
    return 0;
}

/* Whether the next line is indented by ind and matches pattern p (then past it). */
static int cs_next(cs_scan *s, int ind, const char *p) {
    if (s->i >= s->n || s->ls[s->i].ind != ind || !cs_pat(s, s->ls[s->i].p, s->ls[s->i].p + s->ls[s->i].n, p)) return 0;
    s->i++;
    return 1;
}

/* Slot c set to the name in slot from (a value carried to the next pattern). */
static void cs_carry(cs_scan *s, char c, char from) { memcpy(cs_slot(s, c), cs_slot(s, from), CS_SLOT); }

/* Conversions to fp32 of the value (slot v), at most max, each then the value. */
static void cs_casts(cs_scan *s, int max) {
    for (int i = 0; i < max; i++) {
        cs_slot(s, 'c')[0] = '\0';
        if (!cs_next(s, 8, "{c} = {v}.to(tl.float32)")) return;
        cs_carry(s, 'v', 'c');
    }
}

/* A loop's head and index lines (its r0 name in slot R), the load of the input (P) at the
 * index (I), converted to fp32 where the input is 16-bit, and up to two conversions to fp32 after
 * it; then, where the kernel scales, the sign's multiplication by 1.0: the value in slot v. */
static int cs_loop_load(cs_scan *s) {
    for (int c = 'a'; c <= 'z'; c++) cs_slot(s, (char)c)[0] = '\0';
    static const char *const head[] = {"r0_index = r0_offset + r0_base", "r0_mask = r0_index < r0_numel",
                                       "roffset = r0_offset", "rindex = r0_index", "{R} = r0_index"};
    if (!cs_next(s, 4, "for r0_offset in tl.range(0, r0_numel, R0_BLOCK):")) return 0;
    for (size_t h = 0; h < sizeof head / sizeof *head; h++)
        if (!cs_next(s, 8, head[h])) return 0;
    char ld[2][160];
    for (int j = 0; j < 2; j++)
        snprintf(ld[j], sizeof ld[j], "{v} = tl.load({P} + ({@I}), r0_mask, eviction_policy='%s', other=0.0)%s",
                 j ? "evict_first" : "evict_last", s->wide ? "" : ".to(tl.float32)");
    if (!cs_next(s, 8, ld[0]) && !cs_next(s, 8, ld[1])) return 0;
    cs_casts(s, 2);
    if (!s->scaled) return 1;
    if (!cs_next(s, 8, "{o} = tl.full([1, 1], 1.0, tl.float32)") || !cs_next(s, 8, "{w} = {v} * {o}")) return 0;
    cs_carry(s, 'v', 'w');
    return 1;
}

/* The value (slot v) minus the max (M), times the scale (C) where the kernel scales, and its
 * exponential (into slot x). */
static int cs_exp(cs_scan *s) {
    if (!cs_next(s, 8, "{d} = {v} - {M}")) return 0;
    if (s->scaled) {
        if (!cs_next(s, 8, "{k} = tl.full([1, 1], {#C}, tl.float32)") || !cs_next(s, 8, "{t} = {d} * {k}")) return 0;
        cs_carry(s, 'd', 't');
    }
    return cs_next(s, 8, "{x} = libdevice.exp({d})") || cs_next(s, 8, "{x} = tl_math.exp({d})");
}

/* The kernel's body lines (after its def line, blank ones left out, up to the first line
 * indented less than 4) into s; 0 when there is no def or more lines than CS_LINES. */
static int cs_split(cs_scan *s, const char *src, const char *name) {
    char def[192];
    snprintf(def, sizeof def, "\ndef %s(", name);
    const char *p = strstr(src, def);
    p = p ? strchr(p + 1, '\n') : NULL;
    if (!p) return 0;
    size_t n = builtin_split_lines(p + 1, s->ls, CS_LINES + 1);
    for (s->n = 0; s->n < n && s->ls[s->n].ind >= 4;) s->n++;
    return s->n > 0 && s->n <= CS_LINES;
}

/* The three-loop form (see the header) over f's dimension: 1 and f->scaled, f->scale set when
 * the source is exactly that, else 0. */
static int cs_three_loops(const kfacts *k, cs_facts *f) {
    cs_scan *s = calloc(1, sizeof *s);
    int ok = 0;
    if (!s || !k->source || !k->name || !cs_split(s, k->source, k->name)) goto done;
    s->wide = !strcmp(kfacts_param_type(k, f->in), "*fp32");
    s->out_tl = cs_tl16(kfacts_param_type(k, f->out));
    snprintf(cs_slot(s, 'P'), CS_SLOT, "%s", f->in);
    snprintf(cs_slot(s, 'O'), CS_SLOT, "%s", f->out);
    /* before loop 1: the x index definitions of the dimension and the max's accumulator, no other
     * temporary and no load */
    char x0[64], x1[64];
    if (f->outer > 1) {
        snprintf(x0, sizeof x0, "x0 = (xindex %% %lld)", f->inner);
        snprintf(x1, sizeof x1, "x1 = xindex // %lld", f->inner);
    } else {
        snprintf(x0, sizeof x0, "x0 = xindex");
        snprintf(x1, sizeof x1, "%s", x0);
    }
    int has0 = 0, has1 = 0, acc = 0;
    for (; s->i < s->n && s->ls[s->i].ind == 4 && strncmp(s->ls[s->i].p, "for ", 4); s->i++) {
        const builtin_line *l = &s->ls[s->i];
        has0 |= l->n == strlen(x0) && !memcmp(l->p, x0, l->n);
        has1 |= l->n == strlen(x1) && !memcmp(l->p, x1, l->n);
        if (cs_pat(s, l->p, l->p + l->n, "{A} = tl.full([XBLOCK, R0_BLOCK], float(\"-inf\"), tl.float32)")) acc++;
        else if (memmem(l->p, l->n, "tmp", 3) || memmem(l->p, l->n, "tl.load(", 8)) goto done;
    }
    if (!has0 || !has1 || acc != 1) goto done;
    /* loop 1: the max of x (times 1.0 where a scale follows: the kernel scales) */
    size_t at = s->i;
    s->scaled = 1;
    if (!cs_loop_load(s)) {
        s->i = at;
        s->scaled = 0;
        if (!cs_loop_load(s)) goto done;
    }
    if (!cs_next(s, 8, "{b} = tl.broadcast_to({v}, [XBLOCK, R0_BLOCK])") ||
        !cs_next(s, 8, "{n} = triton_helpers.maximum({A}, {b})") || !cs_next(s, 8, "{A} = tl.where(r0_mask, {n}, {A})") ||
        !cs_next(s, 4, "{M} = triton_helpers.max2({A}, 1)[:, None]") ||
        !cs_next(s, 4, "{S} = tl.full([XBLOCK, R0_BLOCK], 0, tl.float32)"))
        goto done;
    /* loop 2: the sum of exp((x - max) [* c]) */
    if (!cs_loop_load(s) || !cs_exp(s) || !cs_next(s, 8, "{b} = tl.broadcast_to({x}, [XBLOCK, R0_BLOCK])") ||
        !cs_next(s, 8, "{s} = {S} + {b}") || !cs_next(s, 8, "{S} = tl.where(r0_mask, {s}, {S})") ||
        !cs_next(s, 4, "{T} = tl.sum({S}, 1)[:, None]"))
        goto done;
    /* loop 3: exp((x - max) [* c]) / sum, converted to fp32 at most once, stored at the index */
    if (!cs_loop_load(s) || !cs_exp(s) || !cs_next(s, 8, "{q} = ({x} / {T})")) goto done;
    cs_carry(s, 'v', 'q');
    char last[64];
    cs_slot(s, 'c')[0] = '\0';
    snprintf(last, sizeof last, "{c} = {v}.to(%s)", s->out_tl ? s->out_tl : "tl.float32");
    if (cs_next(s, 8, "{c} = {v}.to(tl.float32)") || (s->out_tl && cs_next(s, 8, last))) cs_carry(s, 'v', 'c');
    if (!cs_next(s, 8, "tl.store({O} + ({@I}), {v}, r0_mask)") || s->i != s->n) goto done;
    /* the index: the dimension's (x0 the inner position, x1 the outer one) */
    char idx[CS_SLOT];
    if (f->outer > 1)
        snprintf(idx, sizeof idx, "x0 + %lld*%s + %lld*x1", f->inner, cs_slot(s, 'R'), f->inner * f->c);
    else
        snprintf(idx, sizeof idx, "x0 + %lld*%s", f->inner, cs_slot(s, 'R'));
    if (strcmp(idx, cs_slot(s, 'I'))) goto done;
    f->scaled = s->scaled;
    f->scale = 1;
    if (s->scaled) {
        char *end = NULL;
        const char *c = cs_slot(s, 'C');
        f->scale = strtod(c, &end);
        if (end == c || *end || !isfinite(f->scale) || f->scale <= 0) goto done;
    }
    ok = 1;
done:
    free(s);
    return ok;
}

static int cs_facts_of(const kfacts *k, cs_facts *f) {
    memset(f, 0, sizeof *f);
    f->scale = 1;
    if (k->kind != ART_K_REDUCTION && k->kind != ART_K_PERSISTENT) return 0;
    static const char *const allowed[] = {"prims.prepare_softmax_online",
                                          "aten.sub",
                                          "aten.exp",
                                          "aten.div",
                                          "aten.log",
                                          "aten._softmax",
                                          "aten._log_softmax",
                                          "aten.amax",
                                          "aten.sum",
                                          "aten._to_copy",
                                          "prims.convert_element_type",
                                          "aten.mul"};
    unsigned has = 0;
    if (!builtin_ops_within(&k->aten_ops, allowed, 12, &has)) return 0;
    int online = (has & 1u) != 0, mul = (has & (1u << 11)) != 0;
    int softmax = (has & (1u << 5)) || (has & (1u << 3));
    f->log = (has & (1u << 6)) || (has & (1u << 4));
    if (softmax == f->log) return 0; /* neither, or both: not one of the two */
    if (online ? mul : f->log || k->kind != ART_K_REDUCTION) return 0;
    if (k->runtime.n != 4) return 0;
    f->in = kfacts_runtime(k, 0);
    f->out = kfacts_runtime(k, 1);
    const char *xn_name = kfacts_runtime(k, 2), *rn_name = kfacts_runtime(k, 3);
    if (!f->in || !f->out || strcmp(f->in, "in_ptr0") || strncmp(f->out, "out_ptr", 7) || !xn_name || !rn_name ||
        strcmp(xn_name, "xnumel") || strcmp(rn_name, "r0_numel"))
        return 0;
    /* one type in and out; 16-bit values computed in fp32 */
    const char *t = kfacts_param_type(k, f->in);
    if (!builtin_float_ptr(t) || strcmp(t, kfacts_param_type(k, f->out)) || !builtin_casts_to_fp32(k->source, cs_tl16(t))) return 0;
    long long xn = kfacts_numel(k, "xnumel"), rn = kfacts_numel(k, "r0_numel");
    const kf_shape *sh = kfacts_shape(k, f->in);
    size_t rank = sh ? (size_t)sh->ndims : 0;
    if (!sh || rn < 2 || rn > CS_MAX_C || xn <= 0) return 0;
    long long total = 1;
    for (size_t d = 0; d < rank; d++) total *= sh->d[d];
    for (size_t d = rank; d-- > 0;) {
        long long inner = 1;
        for (size_t e = d + 1; e < rank; e++) inner *= sh->d[e];
        if (sh->d[d] == rn && total / rn == xn && inner > 1) f->dims[f->ndims++] = (int)d;
    }
    /* the graph's word: softmax(x, d) / prepare_softmax_online(x, d), else amax(x, [d]) */
    static const char *const nodes[] = {"aten._softmax.default", "aten._log_softmax.default",
                                        "prims.prepare_softmax_online.default"};
    int said = -1;
    for (size_t i = 0; i < 3 && said < 0; i++) said = builtin_fx_dim(&k->fragment, nodes[i], (int)rank);
    if (said < 0) said = builtin_fx_dim(&k->fragment, "aten.amax.default", (int)rank);
    builtin_dims_keep(f->dims, &f->ndims, said);
    if (!f->ndims) return 0;
    f->c = rn;
    f->inner = 1;
    for (size_t e = (size_t)f->dims[0] + 1; e < rank; e++) f->inner *= sh->d[e];
    f->outer = xn / f->inner;
    /* the three-loop form read from the source over that one dimension (the index tells which);
     * the scale's mul among the ATen ops exactly where the source scales */
    if (!online && (f->ndims != 1 || !cs_three_loops(k, f) || f->scaled != mul)) return 0;
    return 1;
}

const char *builtin_col_softmax_match(const kfacts *k) {
    cs_facts f;
    return cs_facts_of(k, &f) ? "col_softmax" : NULL;
}

json_t *builtin_col_softmax_variants(const kfacts *k) {
    cs_facts f;
    json_t *v = json_array();
    if (!cs_facts_of(k, &f)) return v;
    long long bc = builtin_next_pow2(f.c), imax = builtin_next_pow2(f.inner);
    /* BLOCK_I adjacent columns: 32-byte runs and more; about 32 elements per thread (H200, 2048 x
     * 4096 inner: 2048 x 16 tiles with 32 warps 1.40 ms, 2048 x 8 with 16 warps 1.84, Inductor 1.58) */
    static const int bis[] = {16, 8, 4, 32};
    for (size_t i = 0; i < sizeof bis / sizeof bis[0]; i++) {
        long long bi = bis[i];
        if (bi > imax || bc * bi > CS_MAX_TILE) continue;
        long long nw = bc * bi / 1024;
        nw = nw < 4 ? 4 : nw > 32 ? 32 : nw;
        json_array_append_new(v, json_pack("{s:I, s:I}", "block_i", (json_int_t)bi, "num_warps", (json_int_t)nw));
    }
    /* split segments (rows, columns, warps), from a sweep on the H200 (session 40,
     * tools/colsoftmax_sweep.py; Inductor 1.702 / 0.400 / 0.482 ms): on 64 x 2048 x 4096 256x32x4
     * 1.460 ms, 128x32x2 1.461, 128x64x4 1.466, 128x32x4 1.525; on 16 x 8192 x 1024 256x32x4
     * 0.391, 256x16x2 0.408, 128x32x4 0.475; 8 warps and 64-row segments slower everywhere, wider
     * runs (64-128 columns) no better */
    static const int splits[][3] = {{256, 32, 4}, {128, 32, 2}, {128, 64, 4}, {128, 32, 4}, {256, 16, 2}, {512, 16, 8}};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        long long cb = splits[i][0], ib = splits[i][1];
        if (ib > imax || (f.c + cb - 1) / cb > CS_MAX_SEGS || (f.c + cb - 1) / cb < 2) continue;
        json_array_append_new(
            v, json_pack("{s:I, s:I, s:i}", "cb", (json_int_t)cb, "ib", (json_int_t)ib, "num_warps", splits[i][2]));
    }
    return v;
}

int builtin_col_softmax_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    cs_facts f;
    if (!cs_facts_of(k, &f))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template col_softmax does not apply to this kernel");
    long long bc = builtin_next_pow2(f.c);
    const char *kname = k->name;
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        const kp_variant *v = &plan->var[i];
        long long bi = v->block_i, nw = v->num_warps, cb = v->cb, ib = v->ib;
        int split = cb > 0, reread = split && v->reread != 0;
        if (!builtin_pow2_in(nw, 1, 32)) continue;
        if (split && (!builtin_pow2_in(cb, 1, 4096) || !builtin_pow2_in(ib, 1, 1024) || cb * ib > CS_MAX_TILE ||
                      (f.c + cb - 1) / cb > CS_MAX_SEGS))
            continue;
        if (!split && (!builtin_pow2_in(bi, 1, 1024) || bc * bi > CS_MAX_TILE)) continue;
        for (int di = 0; di < f.ndims; di++) {
            kbuf s = KBUF_INIT, label = KBUF_INIT, what = KBUF_INIT;
            kbuf_puts(&what, f.log ? "log-softmax" : "softmax");
            if (f.scaled) kbuf_printf(&what, " of x * %.17g", f.scale);
            if (split)
                kbuf_printf(&label,
                            "col_split_softmax: %s over dimension %d in one read, segments of %lld x %lld in registers "
                            "exchanging partials%s, num_warps=%lld",
                            kbuf_str(&what), f.dims[di], cb, ib, reread ? ", the block loaded again from the L2" : "",
                            nw);
            else
                kbuf_printf(
                    &label,
                    "col_softmax: %s over dimension %d in one read, %lld x %lld tiles in registers, num_warps=%lld",
                    kbuf_str(&what), f.dims[di], bc, bi, nw);
            kbuf_free(&what);
            kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n",
                        kname ? kname : "?", kbuf_str(&label));
            tpl_arg a[] = {{.name = "IN", .type = TPL_IDENT, .ident = f.in},
                           {.name = "OUT", .type = TPL_IDENT, .ident = f.out},
                           {.name = "DIM", .type = TPL_INT, .i = f.dims[di]},
                           {.name = "LOG", .type = TPL_BOOL, .b = f.log},
                           {.name = "SCALED", .type = TPL_BOOL, .b = f.scaled},
                           {.name = "SCALE", .type = TPL_FLOAT, .f = f.scale},
                           {.name = split ? "CB" : "BLOCK_C", .type = TPL_INT, .i = split ? cb : bc},
                           {.name = split ? "IB" : "BLOCK_I", .type = TPL_INT, .i = split ? ib : bi},
                           {.name = "NUM_WARPS", .type = TPL_INT, .i = nw},
                           {.name = "REREAD", .type = TPL_BOOL, .b = reread}};
            /* col_softmax declares no REREAD: its argument list stops before it */
            size_t na = sizeof a / sizeof a[0] - !split;
            int rc = template_render(split ? "col_split_softmax" : "col_softmax", a, na, &s, e);
            json_t *cfg =
                split ? json_pack("{s:s, s:i, s:I, s:I, s:I, s:b}", "template", "col_split_softmax", "dim", f.dims[di],
                                  "cb", (json_int_t)cb, "ib", (json_int_t)ib, "num_warps", (json_int_t)nw, "reread",
                                  reread)
                      : json_pack("{s:s, s:i, s:I, s:I}", "template", "col_softmax", "dim", f.dims[di], "block_i",
                                  (json_int_t)bi, "num_warps", (json_int_t)nw);
            if (!rc)
                json_array_append_new(cands, json_pack("{s:s, s:O, s:s}", "label", kbuf_str(&label), "config", cfg,
                                                       "source", kbuf_str(&s)));
            json_decref(cfg);
            kbuf_free(&s);
            kbuf_free(&label);
            if (rc) {
                json_decref(cands);
                return e->code;
            }
        }
    }
    char limits[256];
    snprintf(limits, sizeof limits,
             "block_i a power of two with %lld x block_i <= %d, or cb and ib powers of two with cb x ib <= %d and at "
             "most %d segments (reread 1: the block loaded again after the exchange); num_warps a power of two <= 32",
             bc, CS_MAX_TILE, CS_MAX_TILE, CS_MAX_SEGS);
    return builtin_candidates_answer(cands, "col_softmax", limits, out, e);
}
