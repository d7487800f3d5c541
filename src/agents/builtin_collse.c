/* builtin_collse.c — logsumexp over a dimension that is not the last (col_logsumexp,
 * templates/kernels/col_logsumexp.py.tmpl).
 *
 * Inductor reduces such a dimension with a looped kernel of XBLOCK adjacent output columns whose
 * two loops (the max, then the sum of exponentials) each load the whole dimension, XBLOCK
 * elements a row: on the H100, a (64, 2048, 2048) fp16 logsumexp over dimension 1 ran at 0.347
 * ms against a memory floor of 0.168 (held-out ha08, session 52), no launch configuration
 * within 2% of it faster. The template reads the input once, in tiles of ROWS rows by BLOCK_I
 * adjacent columns, with a running max and rescaled sum per column.
 *
 * Recognised from the FX graph (builtin_col_logsumexp_match: ATen's decomposition over one
 * dimension d < rank - 1 of a contiguous input, or of an fp32 one times a constant c > 0, stored
 * at the flat output position), a looped
 * or persistent reduction whose runtime parameters are its output and in_ptr0 (either order), xnumel and
 * r0_numel, fp32, fp16 or bf16 in and the same type out; the input's shape from call() gives
 * the columns after d. Plans: {"direction":"rewrite","params":{"template":"col_logsumexp",
 * "variants":[{"block_i":B,"rows":R,"num_warps":W,"nsplit":P},..]}} (P parts of the reduced
 * dimension merged by the template's second kernel where the tiles alone make too few programs:
 * a first-axis logsumexp; absent: 1). Ownership: answers are new JSON the
 * caller owns (as agent_act's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "agents/template.h"
#include "util/buf.h"

enum {
    CL_MIN_PROGRAMS = 128, /* fewer programs leave most of a GPU's SMs idle */
    CL_MAX_SPLIT = 64,
    CL_REF_SMS = 132, /* the H100's SMs, on which the tiles' program targets were measured */
};

typedef struct cl_facts {
    char out[16];       /* the output's parameter name */
    int dim;            /* the reduced dimension */
    long long c, inner; /* its length; the elements after it */
    long long outer;    /* xnumel / inner */
    int esize;          /* bytes an element */
    double scale;       /* logsumexp(x * scale): 1 when the input is not scaled */
} cl_facts;

/* What kernel k computes, into *f: 1 when it is the family's (see the top), else 0. */
static int cl_facts_of(const kfacts *k, cl_facts *f) {
    memset(f, 0, sizeof *f);
    /* looped or persistent: the template does not depend on Inductor's form */
    if ((k->kind != ART_K_REDUCTION && k->kind != ART_K_PERSISTENT) || k->runtime.n != 4) return 0;
    if (!builtin_col_logsumexp_match(k, f->out, sizeof f->out, &f->dim, &f->scale)) return 0;
    int of = !strcmp(f->out, "in_out_ptr0");
    const char *want[] = {of ? f->out : "in_ptr0", of ? "in_ptr0" : f->out, "xnumel", "r0_numel"};
    const char *ti = kfacts_param_type(k, "in_ptr0");
    if (!builtin_params_are(k, want, 4) || !builtin_float_ptr(ti) || strcmp(ti, kfacts_param_type(k, f->out))) return 0;
    f->esize = !strcmp(ti, "*fp32") ? 4 : 2;
    const kf_shape *sh = kfacts_shape(k, "in_ptr0");
    long long xn = kfacts_numel(k, "xnumel"), rn = kfacts_numel(k, "r0_numel");
    if (!sh || f->dim >= sh->ndims || sh->d[f->dim] != rn || rn < 2 || xn <= 0) return 0;
    f->c = rn;
    f->inner = 1;
    for (int e = f->dim + 1; e < sh->ndims; e++) f->inner *= sh->d[e];
    if (f->inner < 2 || xn % f->inner) return 0;
    f->outer = xn / f->inner;
    return 1;
}

int builtin_col_lse_match(const kfacts *k) {
    cl_facts f;
    return cl_facts_of(k, &f);
}

/* The parts (a power of two) that cut the reduced dimension for tiles of bi columns by `rows`
 * rows: the fewest that make `target` programs on CL_REF_SMS SMs (scaled to the GPU's `sms` when
 * known), each part at least 4 steps of `rows`; 1 where the tiles alone make that many. */
static long long cl_split(const cl_facts *f, long long bi, long long rows, long long target, long long sms) {
    long long programs = f->outer * ((f->inner + bi - 1) / bi), sp = 1;
    if (sms > 0) target = target * sms / CL_REF_SMS;
    while (programs * sp < target && sp < CL_MAX_SPLIT && f->c / (sp * 2) >= 4 * rows) sp *= 2;
    return sp;
}

json_t *builtin_col_lse_variants(const kfacts *k) {
    cl_facts f;
    json_t *v = json_array();
    if (!cl_facts_of(k, &f)) return v;
    /* columns x rows x warps, and the programs the parts of the reduced dimension bring the tiles
     * to: runs of 128 bytes and more a row, 8-32 elements a thread (each holds a max and a sum
     * per element: the loop has no reduction across threads), the first ones first. From
     * tools/collse_sweep.py on the H100 (session 54): ha08's (64, 2048, 2048) fp16 over dimension
     * 1, Inductor 0.352 ms: 64 columns x 32 rows x 4 warps in 2 parts (4096 programs) 0.206, 128
     * x 32 x 8 whole (1024) 0.219, 64 x 16 x 4 in 2 parts 0.223, 32 x 64 x 4 in 2 parts 0.226;
     * hb01's (1, 16384, 16384) bf16 over dimension 0, Inductor 0.411 ms: 64 x 16 x 4 in 16 parts
     * 0.223, 64 x 32 x 8 in 8 parts 0.226, 128 x 32 x 8 in 4-8 parts 0.229-0.233, 64 x 32 x 4
     * in 4-16 parts 0.232-0.237. The same tiles without parts on hb01: 0.31-0.38. */
    static const int tiles[][4] = {{64, 32, 4, 4096}, {128, 32, 8, 1024}, {64, 16, 4, 4096},
                                   {64, 32, 8, 2048}, {32, 64, 4, 8192},  {128, 16, 8, 2048}};
    long long imax = builtin_next_pow2(f.inner), cmax = builtin_next_pow2(f.c);
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        long long bi = tiles[i][0], rows = tiles[i][1];
        if (bi * f.esize < 128 || bi > imax || rows > cmax) continue;
        long long sp = cl_split(&f, bi, rows, tiles[i][3], k->sms);
        if (f.outer * ((f.inner + bi - 1) / bi) * sp < CL_MIN_PROGRAMS) continue;
        json_array_append_new(v, json_pack("{s:I, s:I, s:i, s:I}", "block_i", (json_int_t)bi, "rows", (json_int_t)rows,
                                           "num_warps", tiles[i][2], "nsplit", (json_int_t)sp));
    }
    return v;
}

int builtin_col_lse_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e) {
    cl_facts f;
    if (!cl_facts_of(k, &f))
        return kerr_set(e, KOPT_E_CANDIDATE, "rewrite template col_logsumexp does not apply to this kernel");
    json_t *cands = json_array();
    for (size_t i = 0; i < plan->nvar; i++) {
        const kp_variant *v = &plan->var[i];
        long long bi = v->block_i, rows = v->rows, nw = v->num_warps, sp = v->nsplit ? v->nsplit : 1;
        if (!builtin_pow2_in(nw, 1, 32) || !builtin_pow2_in(bi, 1, 1024) || !builtin_pow2_in(rows, 1, 1024) ||
            bi * rows > 16384 || !builtin_pow2_in(sp, 1, CL_MAX_SPLIT))
            continue;
        kbuf s = KBUF_INIT, label = KBUF_INIT;
        kbuf_printf(&label, "col_logsumexp: logsumexp");
        if (f.scale != 1) kbuf_printf(&label, " of x * %.17g", f.scale);
        kbuf_printf(&label,
                    " over dimension %d in one read, %lld x %lld tiles with a running max and sum per column, "
                    "num_warps=%lld",
                    f.dim, rows, bi, nw);
        if (sp > 1) kbuf_printf(&label, ", the dimension in %lld parts merged by a second kernel", sp);
        kbuf_printf(&s, "# kopt-candidate: replaces=%s\n# kopt built-in executor, rewrite: %s\n",
                    k->name ? k->name : "?", kbuf_str(&label));
        tpl_arg a[] = {{.name = "IN", .type = TPL_IDENT, .ident = "in_ptr0"},
                       {.name = "OUT", .type = TPL_IDENT, .ident = f.out},
                       {.name = "OUT_FIRST", .type = TPL_BOOL, .b = !strcmp(f.out, "in_out_ptr0")},
                       {.name = "DIM", .type = TPL_INT, .i = f.dim},
                       {.name = "ROWS", .type = TPL_INT, .i = rows},
                       {.name = "BLOCK_I", .type = TPL_INT, .i = bi},
                       {.name = "SCALED", .type = TPL_BOOL, .b = f.scale != 1},
                       {.name = "SCALE", .type = TPL_FLOAT, .f = f.scale},
                       {.name = "NUM_WARPS", .type = TPL_INT, .i = nw},
                       {.name = "SPLIT", .type = TPL_INT, .i = sp},
                       {.name = "PARTS", .type = TPL_BOOL, .b = sp > 1}};
        int rc = template_render("col_logsumexp", a, sizeof a / sizeof a[0], &s, e);
        if (!rc) {
            json_t *cfg = json_pack("{s:s, s:i, s:I, s:I, s:I, s:I}", "template", "col_logsumexp", "dim", f.dim,
                                    "block_i", (json_int_t)bi, "rows", (json_int_t)rows, "num_warps", (json_int_t)nw,
                                    "nsplit", (json_int_t)sp);
            json_array_append_new(
                cands, json_pack("{s:s, s:o, s:s}", "label", kbuf_str(&label), "config", cfg, "source", kbuf_str(&s)));
        }
        kbuf_free(&s);
        kbuf_free(&label);
        if (rc) {
            json_decref(cands);
            return e->code;
        }
    }
    return builtin_candidates_answer(
        cands, "col_logsumexp",
        "block_i, rows, num_warps and nsplit powers of two, block_i <= 1024, rows <= 1024, "
        "block_i x rows <= 16384, num_warps <= 32, nsplit <= 64",
        out, e);
}
