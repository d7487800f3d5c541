/* builtin_aligned.c — aligned_chunks: a split reduction whose chunks start off 16-byte boundaries.
 *
 * Inductor reduces a large flat range (a loss's mean, a whole-tensor sum) in two kernels: the
 * first sums xnumel chunks of r0_numel consecutive elements, `tl.load(in_ptrK + (r0_1 +
 * L*x0), ...)` with L = r0_numel, and the second combines the partials. Where L is not a multiple
 * of the 16-byte vector (4 fp32, 8 fp16/bf16 elements), no chunk but the first starts aligned,
 * Triton cannot prove alignment and every load is a scalar 4-byte one (a held-out smooth L1 loss
 * over 2 x 134,217,728 fp32 on the H200: 528 chunks of 254,201, Inductor's kernel at 1.63x its
 * memory floor, where the suite's losses with power-of-two chunks run at 1.04-1.14x).
 *
 * The candidate is Inductor's own kernel with the loop moved onto aligned vectors: each chunk's
 * loop starts at kopt_base = (L*x0 // VEC) * VEC, the loads read whole aligned vectors bounded
 * by the flat range Inductor's kernel reads (so every element a load touches lies in it; where
 * the range's size is not a multiple of VEC, the loop stops at its last whole vector and a copy
 * of the loop body after it reads the last elements with a per-element bound), and the chunk's
 * own positions are r0_index = g - L*x0, so r0_mask keeps exactly the chunk's elements in the
 * accumulation (Inductor's `tl.where(r0_mask & xmask, ...)`); everything else, the arithmetic
 * on each element, the final reduction and the stores, is Inductor's text. Same partial per
 * chunk up to summation order.
 *
 * The same holds per row where Inductor splits each of several rows (a layer norm over trailing
 * dimensions, a wide softmax's split max: rows of R elements, S chunks each, x0 = xindex % S,
 * x1 = xindex // S, loads at R*x1 + ((r + L*x0) % R) or r + L*x0 + R*x1 under its check
 * r + L*x0 < R): each chunk's loop on aligned vectors of its row, for rows of a whole number of
 * vectors only.
 *
 * Recognised from the text Inductor writes for the first kernel: a looped reduction (Grid1D,
 * constexprs XBLOCK and R0_BLOCK, one loop, x0 = xindex or the row form), every load a chunk
 * load of an fp32/fp16/bf16 input, the flat index used only by Inductor's bound check, no store
 * inside the loop, accumulators updated under r0_mask, L not a multiple of the vector of the
 * narrowest input. Plans: {"direction":"rewrite","params":{"template":"aligned_chunks",
 * "variants":[{"r0_block":R,"num_warps":W},..]}}; each variant launches one program per chunk
 * (XBLOCK=1). Ownership: the answers are new JSON the caller owns (as agent_act's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "util/buf.h"

enum { AL_MAX_LOADS = 8 };

/* What the transform needs of the kernel. */
typedef struct al_facts {
    long long xn, rn, vec;    /* chunks, chunk length, elements per 16-byte vector */
    char var[32];             /* Inductor's name for r0_index in the loads ("r0_1") */
    int nload;
    char ptr[AL_MAX_LOADS][32];   /* each load's pointer parameter */
    long long bound;              /* elements below it are the flat range's (flat_bound) */
    long long row, split;         /* the row form: rows of `row` elements, each cut in `split`
                                   * chunks (x0 = xindex % split, x1 = xindex // split); 0: flat */
    int form;                     /* the row form's loads: 1 VAR + L*x0 + R*x1, 2 R*x1 + ((VAR + L*x0) % R) */
} al_facts;

static const char LOOP[] = "    for r0_offset in tl.range(0, r0_numel, R0_BLOCK):\n";
static const char IDX[] = "        r0_index = r0_offset + r0_base\n";
static const char MASK[] = "        r0_mask = r0_index < r0_numel\n";

/* The flat range's bound: the constant of Inductor's check `A = VAR + L*x0`, `B = tl.full([1, 1],
 * NT, tl.int32)`, `A < B` (the chunks overrun the tensor), else xn * rn (they tile it); 0 when
 * the flat index is used otherwise. Every element below the bound is one Inductor's kernel reads. */
static long long flat_bound(const char *body, const char *tail, const al_facts *f) {
    char line[256], a[32] = "", b[32], x[32], y[32], want[96];
    long long nt = 0, found = 0;
    snprintf(want, sizeof want, " = %s + %lld*x0", f->var, f->rn);
    for (const char *p = body; p < tail;) {
        p = builtin_next_line(p, line, sizeof line);
        const char *eq = strstr(line, want);
        if (eq && !strcmp(eq + strlen(want), "")) {
            if (a[0] || sscanf(line, " %31[a-z0-9_]", a) != 1) return 0;
            continue;
        }
        long long v = 0;
        int m = 0;
        if (sscanf(line, " %31[a-z0-9_] = tl.full([1, 1], %lld, tl.int32)%n", b, &v, &m) == 2 && !line[m]) nt = v;
        if (a[0] && sscanf(line, " %31[a-z0-9_] = %31[a-z0-9_] < %31[a-z0-9_]%n", y, x, b, &m) == 3 && !line[m] &&
            !strcmp(x, a) && nt > 0)
            found = nt;
    }
    if (!a[0]) return f->xn * f->rn;
    return found > 0 && found <= f->xn * f->rn ? found : 0;
}

static int facts_of(const kfacts *k, al_facts *f) {
    memset(f, 0, sizeof *f);
    const char *src = k->jit_source;
    const char *grid = k->grid_type;
    const kf_strs *ce = &k->constexprs;
    f->xn = kfacts_numel(k, "xnumel");
    f->rn = kfacts_numel(k, "r0_numel");
    if (!src || k->kind != ART_K_REDUCTION || (grid && strcmp(grid, "Grid1D"))) return 0;
    if (f->xn < 2 || f->rn < 1024 || f->xn * f->rn >= (1LL << 31)) return 0;   /* int32 indexing, as Inductor's */
    if (ce->n != 2 || strcmp(ce->v[0], "XBLOCK") || strcmp(ce->v[1], "R0_BLOCK")) return 0;
    const char *loop = strstr(src, LOOP);
    /* x0: the chunk (flat form), or the chunk within its row (row form, x1 the row) */
    const char *xs = strstr(src, "    x0 = (xindex % ");
    if (xs) {
        char want_x1[64];
        if (sscanf(xs, "    x0 = (xindex %% %lld)\n", &f->split) != 1 || f->split < 2 || f->xn % f->split) return 0;
        snprintf(want_x1, sizeof want_x1, "    x1 = xindex // %lld\n", f->split);
        if (!strstr(src, want_x1)) return 0;
    }
    /* Inductor's loop head as it writes it, each name used where the transform expects it */
    static const struct {
        const char *text;
        int n;
    } uses[] = {{"for ", 1},     {LOOP, 1},        {IDX, 1},     {MASK, 1},      {"r0_index", 4},
                {"r0_offset", 3}, {"rindex", 1},    {"roffset", 1}, {"kopt_", 0}, {"tl.atomic", 0},
                {"        rindex = r0_index\n", 1}, {"        roffset = r0_offset\n", 1}};
    for (size_t i = 0; i < sizeof uses / sizeof *uses; i++)
        if (builtin_count(src, uses[i].text) != uses[i].n) return 0;
    if ((!xs && !strstr(src, "    x0 = xindex\n")) || !builtin_count(src, "tl.where(r0_mask & xmask, ")) return 0;
    const char *body = loop + strlen(LOOP), *tail = builtin_block_end(body);   /* the loop body */
    if (builtin_count(tail, "tl.load(") || builtin_count(src, "tl.store(") != builtin_count(tail, "tl.store(")) return 0;
    /* the chunk's index variable: `        r0_N = r0_index` */
    for (const char *v = strstr(body, " = r0_index\n"); v && v < tail && !f->var[0]; v = strstr(v + 1, " = r0_index\n")) {
        const char *w = v;
        while (w > body && w[-1] != ' ') w--;
        if (sscanf(w, "%31[a-z0-9_] = r0_index", f->var) != 1 || strncmp(f->var, "r0_", 3) || !strcmp(f->var, "r0_index"))
            f->var[0] = 0;
    }
    if (!f->var[0]) return 0;
    /* every load a chunk load of a float input: `tl.load(in_ptrK + (VAR + L*x0), ` (flat) or
     * `tl.load(in_ptrK + (R*x1 + (((VAR + L*x0) % R))), ` (row form, one R for all) */
    char want[96];
    snprintf(want, sizeof want, " + (%s + %lld*x0), ", f->var, f->rn);
    int narrow = 0;
    for (const char *p = strstr(src, "tl.load("); p; p = strstr(p + 8, "tl.load(")) {
        char ptr[32], v2[32];
        int n = 0, m = 0;
        long long r1 = 0, r2 = 0, l2 = 0;
        if (f->nload == AL_MAX_LOADS || sscanf(p + 8, "%31[a-z0-9_]%n", ptr, &n) != 1 || strncmp(ptr, "in_ptr", 6))
            return 0;
        if (!f->split && strncmp(p + 8 + n, want, strlen(want))) return 0;
        if (f->split) {   /* R*x1 + (((VAR + L*x0) % R)), or VAR + L*x0 + R*x1 */
            int mod = sscanf(p + 8 + n, " + (%lld*x1 + (((%31[a-z0-9_] + %lld*x0) %% %lld))), %n", &r1, v2, &l2, &r2, &m) == 4 && m;
            if (!mod) {
                m = 0;
                if (sscanf(p + 8 + n, " + (%31[a-z0-9_] + %lld*x0 + %lld*x1), %n", v2, &l2, &r1, &m) != 3 || !m) return 0;
                r2 = r1;
            }
            if (r1 != r2 || r1 <= 0 || strcmp(v2, f->var) || l2 != f->rn || (f->row && f->row != r1) ||
                (f->form && f->form != 1 + mod))
                return 0;
            f->form = 1 + mod;
        }
        if (f->split) f->row = r1;
        const char *t = kfacts_param_type(k, ptr);
        int two = !strcmp(t, "*fp16") || !strcmp(t, "*bf16");
        if (!two && strcmp(t, "*fp32")) return 0;
        narrow |= two;
        snprintf(f->ptr[f->nload++], sizeof f->ptr[0], "%s", ptr);
    }
    if ((f->bound = flat_bound(body, tail, f)) <= 0) return 0;
    f->vec = narrow ? 8 : 4;
    /* the row form: the range is one row (Inductor's check against R, or chunks tiling it
     * exactly), and rows start on whole vectors */
    if (f->split && (f->row % f->vec || (f->bound != f->row && !(f->bound == f->xn * f->rn && f->split * f->rn == f->row))))
        return 0;
    if (f->split) f->bound = f->row;
    return f->nload > 0 && f->rn % f->vec != 0;   /* aligned chunks already: nothing to gain */
}

int builtin_aligned_match(const kfacts *k) {
    al_facts f;
    return facts_of(k, &f);
}

json_t *builtin_aligned_variants(const kfacts *k) {
    json_t *v = json_array();
    if (!builtin_aligned_match(k)) return v;
    static const int rw[][2] = {{2048, 8}, {4096, 16}, {1024, 4}, {2048, 16}};
    for (size_t i = 0; i < sizeof rw / sizeof rw[0]; i++)
        json_array_append_new(v, json_pack("{s:i, s:i}", "r0_block", rw[i][0], "num_warps", rw[i][1]));
    return v;
}

/* The loop of b (from `    for kopt_i` to its last body line) copied once more after it at the
 * function's level, as the block that reads the flat range's last bound % VEC elements (see the
 * top of the file): its vector at `down`, loads and chunk mask bounded by the range's end. */
static int add_tail(kbuf *b, const al_facts *f, long long down) {
    const char *loop = strstr(b->data, "    for kopt_i in ");
    if (!loop) return -1;
    const char *body = loop + strcspn(loop, "\n") + 1, *end = builtin_block_end(body);
    char main_mask[96], tail_mask[128], main_load[64], tail_load[64], main_g[80], tail_g[80];
    snprintf(main_mask, sizeof main_mask, "r0_mask = (r0_index >= 0) & (r0_index < r0_numel) & (kopt_g < %lld)", down);
    snprintf(tail_mask, sizeof tail_mask, "r0_mask = (r0_index >= 0) & (r0_index < r0_numel) & (kopt_g >= %lld)", down);
    snprintf(main_load, sizeof main_load, "(kopt_g < %lld) & xmask", down);
    snprintf(tail_load, sizeof tail_load, "(kopt_g < %lld) & xmask", f->bound);
    snprintf(main_g, sizeof main_g, "kopt_g = kopt_base + r0_offset + r0_base");
    snprintf(tail_g, sizeof tail_g, "kopt_g = %lld + r0_base", down);
    kbuf tail = KBUF_INIT;
    for (const char *p = body; p < end;) {   /* each body line, one level out */
        size_t n = strcspn(p, "\n");
        char line[512];
        if (n >= sizeof line || n < 8) { kbuf_free(&tail); return -1; }
        snprintf(line, sizeof line, "%.*s", (int)(n - 4), p + 4);
        p += n + (p[n] ? 1 : 0);
        if (!strcmp(line, "    r0_offset = kopt_i * R0_BLOCK")) continue;
        const char *subs[][2] = {{main_g, tail_g}, {main_mask, tail_mask}, {main_load, tail_load}};
        kbuf l = KBUF_INIT;
        kbuf_puts(&l, line);
        for (size_t i = 0; i < 3; i++)
            while (kbuf_replace_first(&l, subs[i][0], subs[i][1]) == 0) {}
        kbuf_printf(&tail, "%s\n", kbuf_str(&l));
        kbuf_free(&l);
    }
    kbuf nb = KBUF_INIT;
    kbuf_append(&nb, b->data, (size_t)(end - b->data));
    kbuf_puts(&nb, "    # kopt: the flat range's last elements, past its last whole vector\n    r0_offset = 0\n");
    kbuf_append(&nb, tail.data, tail.len);
    kbuf_puts(&nb, end);
    kbuf_free(&tail);
    kbuf_free(b);
    *b = nb;
    return 0;
}

/* Inductor's kernel with its loop on aligned vectors (see the top of the file). */
static int aligned_source(const kfacts *k, const al_facts *f, kbuf *out) {
    kbuf b = KBUF_INIT, t = KBUF_INIT;
    long long down = f->bound - f->bound % f->vec;   /* the range's whole vectors end here */
    kbuf_puts(&b, k->jit_source);
    kbuf_printf(&t,
                "    kopt_start = %lld*x0\n"
                "    kopt_base = (kopt_start // %lld) * %lld\n"
                "    for kopt_i in tl.range(0, (r0_numel + %lld + R0_BLOCK - 1) // R0_BLOCK):\n"
                "        r0_offset = kopt_i * R0_BLOCK\n",
                f->rn, f->vec, f->vec, f->vec - 1);
    int rc = kbuf_replace_first(&b, LOOP, kbuf_str(&t));
    rc = rc ? rc : kbuf_replace_first(&b, IDX, "        kopt_g = kopt_base + r0_offset + r0_base\n        r0_index = kopt_g - kopt_start\n");
    kbuf_reset(&t);
    if (down == f->bound) kbuf_puts(&t, "        r0_mask = (r0_index >= 0) & (r0_index < r0_numel)\n");
    else kbuf_printf(&t, "        r0_mask = (r0_index >= 0) & (r0_index < r0_numel) & (kopt_g < %lld)\n", down);
    rc = rc ? rc : kbuf_replace_first(&b, MASK, kbuf_str(&t));
    for (int i = 0; !rc && i < f->nload; i++) {   /* each load: the aligned index, whole vectors of the range */
        char from[128], base[48] = "";
        if (f->split == 0) {
            snprintf(from, sizeof from, "tl.load(%s + (%s + %lld*x0), ", f->ptr[i], f->var, f->rn);
        } else if (f->form == 2) {
            snprintf(from, sizeof from, "tl.load(%s + (%lld*x1 + (((%s + %lld*x0) %% %lld))), ", f->ptr[i], f->row, f->var, f->rn,
                     f->row);
            snprintf(base, sizeof base, "%lld*x1 + ", f->row);
        } else {
            snprintf(from, sizeof from, "tl.load(%s + (%s + %lld*x0 + %lld*x1), ", f->ptr[i], f->var, f->rn, f->row);
            snprintf(base, sizeof base, "%lld*x1 + ", f->row);
        }
        char *at = strstr(b.data, from);
        size_t mlen = at ? strcspn(at + strlen(from), ",)") : 0;
        if (!at || !mlen) { rc = -1; break; }
        kbuf nb = KBUF_INIT;
        kbuf_append(&nb, b.data, (size_t)(at - b.data));
        kbuf_printf(&nb, "tl.load(%s + (%skopt_g), (kopt_g < %lld) & xmask", f->ptr[i], base, down);
        kbuf_puts(&nb, at + strlen(from) + mlen);
        kbuf_free(&b);
        b = nb;
    }
    if (!rc && down != f->bound) rc = add_tail(&b, f, down);
    if (!rc) builtin_plan_source(kbuf_str(&b), out);
    kbuf_free(&b);
    kbuf_free(&t);
    return rc;
}

int builtin_aligned_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    al_facts f;
    if (!facts_of(k, &f))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template aligned_chunks does not apply to this kernel");
    const char *kname = k->name;
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        long long rb = plan->var[i].r0_block, nw = plan->var[i].num_warps;
        if (!builtin_pow2_in(rb, 64, 16384) || !builtin_pow2_in(nw, 1, 32)) continue;
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label, "aligned_chunks: Inductor's %lld partial reductions of %lld over whole aligned %lld-element vectors "
                            "(R0_BLOCK=%lld num_warps=%lld)", f.xn, f.rn, f.vec, rb, nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n", kname ? kname : "?", kbuf_str(&label));
        if (aligned_source(k, &f, &s) == 0) {
            char cx[64];
            snprintf(cx, sizeof cx, "\"XBLOCK\": 1, \"R0_BLOCK\": %lld", rb);
            builtin_one_launch_plan(&s, k, "xnumel", cx, nw);
            builtin_push_rewrite(cands, kbuf_str(&label), "aligned_chunks", "r0_block", rb, nw, kbuf_str(&s));
        }
        kbuf_free(&s);
        kbuf_free(&label);
    }
    return builtin_candidates_answer(cands, "aligned_chunks", "r0_block a power of two in [64, 16384], num_warps a power of two <= 32",
                                     out, e);
}
