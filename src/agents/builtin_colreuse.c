/* builtin_colreuse.c — column_reuse: a pointwise kernel that re-reads per-column operands for
 * every row.
 *
 * Inductor writes a pointwise kernel over a (rows, N) view as one flat range: `xindex`, its row
 * `xR = xindex // N` and its column `xC = (xindex % N)`, each program a block of XBLOCK
 * consecutive elements. An operand indexed by the column alone -- a layer norm's weight and bias
 * over a normalized shape of several dimensions -- is then read once for every row, and where it
 * is larger than what the L2 keeps beside the streamed rows it comes from DRAM every time
 * (held-out h03: 64 rows of 2,097,152 fp32, weight and bias 8 MB each; its normalisation at 0.64
 * of its ceiling on the H100, no launch configuration faster).
 *
 * The candidate is Inductor's own kernel with the flat range walked by column blocks: program p
 * takes the XBLOCK columns from p * XBLOCK, loads its column operands once (Inductor's load lines
 * at the column, moved before the loop) and walks the rows, computing every element with
 * Inductor's text at the same flat, row and column indices as before. Each element is computed
 * once, by the same arithmetic: only the order changes. Offered only for blocks that divide N,
 * so every block is whole and no mask is needed beyond Inductor's own.
 *
 * Recognised from the text: a pointwise kernel (Grid1D, constexpr XBLOCK alone) with Inductor's
 * head (`xoffset = tl.program_id(0) * XBLOCK`, `xindex = xoffset + tl.arange(0, XBLOCK)[:]`,
 * `xmask` full or `xindex < xnumel`), index lines that are the flat index, its row and its
 * column only (N the same for both; xindex used nowhere else), no loop, no reduction, scan or
 * atomic; N a divisor of xnumel with at least 4 rows and the column loads of float inputs
 * CR_MIN_BYTES or more in all. Plans: {"direction":"rewrite","params":{"template":"column_reuse",
 * "variants":[{"block_i":B,"num_warps":W},..]}}. Ownership: the answers are new JSON the caller
 * owns (as agent_act's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "util/buf.h"

enum { CR_MIN_ROWS = 4 };
#define CR_MIN_BYTES (1LL << 20) /* column operands below this stay in the L2 anyway */

typedef struct cr_facts {
    long long xn, n, rows;       /* elements, columns (N), rows */
    long long col_bytes;         /* bytes of the float inputs loaded at the column */
    char flat[32], row[32], col[32];   /* Inductor's names ("" where it wrote none) */
    int full_mask;               /* `xmask = tl.full(...)`: else `xmask = xindex < xnumel` */
} cr_facts;

static const char HEAD1[] = "    xoffset = tl.program_id(0) * XBLOCK\n";
static const char HEAD2[] = "    xindex = xoffset + tl.arange(0, XBLOCK)[:]\n";
static const char MASK_FULL[] = "    xmask = tl.full([XBLOCK], True, tl.int1)[:]\n";
static const char MASK_LT[] = "    xmask = xindex < xnumel\n";

/* Whether all of line is `    NAME = xindex OP N` for format fmt (NAME into name, N into *n). */
static int index_of(const char *line, const char *fmt, char *name, long long *n) {
    int m = 0;
    return sscanf(line, fmt, name, n, &m) == 2 && m && !line[m];
}

/* One index line of Inductor's head into f (its name as the flat index, the row or the column);
 * 0 when the line is none of the three or repeats one. */
static int index_line(const char *line, cr_facts *f) {
    char name[32];
    long long n = 0;
    int m = 0;
    char *slot = NULL;
    if (sscanf(line, "    %31[a-z0-9_] = xindex%n", name, &m) == 1 && m && !line[m]) slot = f->flat;
    else if (index_of(line, "    %31[a-z0-9_] = xindex // %lld%n", name, &n)) slot = f->row;
    else if (index_of(line, "    %31[a-z0-9_] = (xindex %% %lld)%n", name, &n) ||
             index_of(line, "    %31[a-z0-9_] = xindex %% %lld%n", name, &n))
        slot = f->col;
    if (!slot || slot[0] || !strcmp(name, "xindex") || !strcmp(name, "xmask") || !strcmp(name, "xnumel")) return 0;
    if (slot != f->flat) {
        if (n < 2 || (f->n && f->n != n)) return 0;
        f->n = n;
    }
    snprintf(slot, sizeof f->flat, "%s", name);
    return 1;
}

/* The first body line after the head's index lines (NULL when the head is not Inductor's). */
static const char *facts_of(const kfacts *k, cr_facts *f) {
    memset(f, 0, sizeof *f);
    const char *src = k->jit_source;
    if (!src || k->kind != ART_K_POINTWISE || (k->grid_type && strcmp(k->grid_type, "Grid1D"))) return NULL;
    if (k->constexprs.n != 1 || strcmp(k->constexprs.v[0], "XBLOCK")) return NULL;
    f->xn = kfacts_numel(k, "xnumel");
    if (f->xn < 2 || f->xn >= (1LL << 31)) return NULL;   /* int32 indexing, as Inductor's */
    static const struct {
        const char *text;
        int n;
    } uses[] = {{HEAD1, 1}, {HEAD2, 1},     {"program_id", 1}, {"xoffset", 2},        {"for ", 0},
                {"while ", 0}, {"tl.atomic", 0}, {"tl.sum", 0},     {"tl.reduce", 0},      {"associative_scan", 0},
                {"tl.max(", 0}, {"tl.min(", 0}, {"kopt_", 0},      {"debug_barrier", 0},  {"[:, None]", 0},
                {"in_out_ptr", 0}};
    for (size_t i = 0; i < sizeof uses / sizeof *uses; i++)
        if (builtin_count(src, uses[i].text) != uses[i].n) return NULL;
    f->full_mask = builtin_count(src, MASK_FULL) == 1;
    const char *mask = strstr(src, f->full_mask ? MASK_FULL : MASK_LT);
    if (!mask || (!f->full_mask && builtin_count(src, MASK_LT) != 1) || strstr(src, HEAD2) > mask) return NULL;
    const char *p = mask + strlen(f->full_mask ? MASK_FULL : MASK_LT);
    int lines = 0;
    char line[512];
    while (*p) {   /* the index lines come right after the mask */
        const char *next = builtin_next_line(p, line, sizeof line);
        if (!strstr(line, "xindex")) break;
        if (!index_line(line, f)) return NULL;
        lines++;
        p = next;
    }
    /* xindex: its definition, Inductor's mask and the index lines, nothing else */
    if (builtin_count(src, "xindex") != 1 + !f->full_mask + lines || !f->col[0] || !f->flat[0]) return NULL;
    if (f->xn % f->n || (f->rows = f->xn / f->n) < CR_MIN_ROWS) return NULL;
    /* the column operands: float inputs loaded at the column */
    char want[48];
    snprintf(want, sizeof want, " + (%s), ", f->col);
    for (const char *q = strstr(src, "tl.load("); q; q = strstr(q + 8, "tl.load(")) {
        char ptr[32];
        int m = 0;
        if (sscanf(q + 8, "%31[a-z0-9_]%n", ptr, &m) != 1 || strncmp(q + 8 + m, want, strlen(want))) continue;
        const char *t = kfacts_param_type(k, ptr);
        long long size = !strcmp(t, "*fp32") ? 4 : (!strcmp(t, "*fp16") || !strcmp(t, "*bf16")) ? 2 : 0;
        if (!strncmp(ptr, "in_ptr", 6)) f->col_bytes += size * f->n;
    }
    return f->col_bytes >= CR_MIN_BYTES ? p : NULL;
}

int builtin_colreuse_match(const kfacts *k) {
    cr_facts f;
    return facts_of(k, &f) != NULL;
}

json_t *builtin_colreuse_variants(const kfacts *k) {
    json_t *v = json_array();
    cr_facts f;
    if (!facts_of(k, &f)) return v;
    static const int bw[][2] = {{1024, 4}, {2048, 8}, {512, 4}, {4096, 8}};
    for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++)
        if (f.n % bw[i][0] == 0) json_array_append_new(v, json_pack("{s:i, s:i}", "block_i", bw[i][0], "num_warps", bw[i][1]));
    return v;
}

/* Whether `line` is a load of an input at the column alone, under no mask or Inductor's xmask
 * (the same for every row of a column block): one that can move before the row loop. */
static int hoistable(const char *line, const cr_facts *f) {
    char tmp[32], ptr[32], idx[32];
    int m = 0;
    if (sscanf(line, "    %31[a-z0-9_] = tl.load(%31[a-z0-9_] + (%31[a-z0-9_]), %n", tmp, ptr, idx, &m) != 3 || !m)
        return 0;
    if (strncmp(ptr, "in_ptr", 6) || strcmp(idx, f->col) || strncmp(tmp, "tmp", 3)) return 0;
    const char *rest = line + m;
    if (strncmp(rest, "None", 4) && strncmp(rest, "xmask", 5)) return 0;
    /* nothing of the row in what follows: eviction policy, other=, a .to() of its type */
    return !strstr(rest, "tmp") && !strstr(rest, f->flat) && !(f->row[0] && strstr(rest, f->row)) &&
           builtin_count(line, "tl.load(") == 1;
}

/* Inductor's kernel walked by column blocks (see the top of the file). */
static int colreuse_source(const kfacts *k, const cr_facts *f, const char *body, kbuf *out) {
    const char *src = k->jit_source;
    const char *head = strstr(src, HEAD1);
    kbuf b = KBUF_INIT, loop = KBUF_INIT;
    kbuf_append(&b, src, (size_t)(head - src));   /* the signature and `xnumel = ...` */
    kbuf_puts(&b, "    kopt_col = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:]\n");
    if (f->full_mask) kbuf_puts(&b, MASK_FULL);
    else kbuf_printf(&b, "    xmask = kopt_col < %lld\n", f->n);
    kbuf_printf(&b, "    %s = kopt_col\n", f->col);
    kbuf_printf(&loop, "    for kopt_row in tl.range(0, %lld):\n        xindex = kopt_row * %lld + kopt_col\n", f->rows, f->n);
    kbuf_printf(&loop, "        %s = xindex\n", f->flat);
    if (f->row[0]) kbuf_printf(&loop, "        %s = kopt_row + tl.zeros([XBLOCK], tl.int32)\n", f->row);
    int rc = 0, hoisted = 0;
    char line[1024];
    for (const char *p = body; *p && !rc;) {
        size_t n = strcspn(p, "\n");
        if (n >= sizeof line) rc = -1;
        else {
            snprintf(line, sizeof line, "%.*s", (int)n, p);
            if (!line[0]) {
                /* a blank line ends the function */
                kbuf_puts(&loop, p);
                break;
            }
            if (strncmp(line, "    ", 4) || line[4] == ' ') rc = -1;   /* the body is straight-line code */
            else if (hoistable(line, f)) {
                kbuf_printf(&b, "%s\n", line);
                hoisted++;
            } else kbuf_printf(&loop, "    %s\n", line);
        }
        p += n + (p[n] ? 1 : 0);
    }
    if (!rc && !hoisted) rc = -1;
    if (!rc) {
        kbuf_append(&b, loop.data, loop.len);
        builtin_plan_source(kbuf_str(&b), out);
    }
    kbuf_free(&b);
    kbuf_free(&loop);
    return rc;
}

int builtin_colreuse_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    cr_facts f;
    const char *body = facts_of(k, &f);
    if (!body) return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template column_reuse does not apply to this kernel");
    const char *kname = k->name;
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        long long bi = plan->var[i].block_i, nw = plan->var[i].num_warps;
        if (!builtin_pow2_in(bi, 64, 16384) || !builtin_pow2_in(nw, 1, 32) || f.n % bi) continue;
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label, "column_reuse: blocks of %lld columns walk the %lld rows, the column operands (%lld KiB) read once "
                            "(num_warps=%lld)", bi, f.rows, f.col_bytes >> 10, nw);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n", kname ? kname : "?", kbuf_str(&label));
        if (colreuse_source(k, &f, body, &s) == 0) {
            char grid[48], cx[48];
            snprintf(grid, sizeof grid, "xnumel // %lld", f.rows * bi);   /* N / bi programs */
            snprintf(cx, sizeof cx, "\"XBLOCK\": %lld", bi);
            builtin_one_launch_plan(&s, k, grid, cx, nw);
            builtin_push_rewrite(cands, kbuf_str(&label), "column_reuse", "block_i", bi, nw, kbuf_str(&s));
        }
        kbuf_free(&s);
        kbuf_free(&label);
    }
    return builtin_candidates_answer(cands, "column_reuse", "block_i a power of two in [64, 16384] dividing the columns, "
                                     "num_warps a power of two <= 32", out, e);
}
