/* region_vendor.c — one ATen fallback call of call() as a region (region.h, "Vendor regions"):
 * Inductor keeps some operations as library calls (`buf0 = torch.ops.aten.avg_pool3d.default(x,
 * ...)`: no Triton lowering for 3-D pooling), which a Triton kernel can beat. The call becomes a
 * region launcher that computes the same thing through the op's out= overload into a buffer
 * call() allocates, so a candidate can take its place like any region's. */
#include <stdlib.h>
#include <string.h>

#include "artifact/pylit.h"
#include "artifact/region.h"
#include "gates/candidate.h"

/* The ATen ops a vendor region may hold: one tensor input first, then literal arguments, one
 * output of the input's dtype; `out` the overload that writes into a given tensor. */
static const struct {
    const char *callee, *out, *aten;
} VENDOR_OPS[] = {
    {"torch.ops.aten.avg_pool2d.default", "torch.ops.aten.avg_pool2d.out", "aten.avg_pool2d"},
    {"torch.ops.aten.avg_pool3d.default", "torch.ops.aten.avg_pool3d.out", "aten.avg_pool3d"},
};

int region_vendor_op(const char *callee) {
    for (size_t i = 0; i < sizeof VENDOR_OPS / sizeof *VENDOR_OPS; i++)
        if (!strcmp(VENDOR_OPS[i].callee, callee)) return (int)i;
    return -1;
}

int region_is_binding(const char *b) { return b && (strchr(b, '+') || region_vendor_op(b) >= 0); }

/* Whether v is a literal the launcher may repeat: an int, a bool, None, or a list/tuple of ints. */
static int plain_literal(const pyval *v) {
    if (v->kind == PYV_INT || v->kind == PYV_BOOL || v->kind == PYV_NONE) return 1;
    if (v->kind != PYV_LIST && v->kind != PYV_TUPLE) return 0;
    for (size_t i = 0; i < v->n; i++)
        if (v->items[i]->kind != PYV_INT) return 0;
    return 1;
}

/* The type word of a torch dtype text ("torch.float32" -> "*fp32"), or NULL. */
static const char *ptr_type(const char *dtype) {
    static const char *const map[][2] = {
        {"torch.float32", "*fp32"}, {"torch.float16", "*fp16"}, {"torch.bfloat16", "*bf16"}};
    for (size_t i = 0; dtype && i < sizeof map / sizeof *map; i++)
        if (!strcmp(dtype, map[i][0])) return map[i][1];
    return NULL;
}

/* The dtype text call() gives tensor `name`: a graph input's rand_strided or an allocation,
 * through plain aliases (art_tensor_origin) and the results of allowlisted calls (their input's
 * dtype, at most 16 calls back). */
static const char *dtype_of(const artifact *a, const char *name) {
    for (int calls = 0; calls <= 16; calls++) {
        const art_input *in;
        const art_stmt *st;
        if (!art_tensor_origin(a, name, &in, &st)) return NULL;
        if (in) return in->dtype;
        if (st->kind == ART_ST_ALLOC) return st->dtype;
        const art_launch *l = st->launch >= 0 ? &a->launches[st->launch] : NULL;
        if (!l || region_vendor_op(l->callee) < 0 || l->args.n < 1) return NULL;
        name = l->args.v[0];
    }
    return NULL;
}

/* The shape and stride texts of `assert_size_stride(N, shape, stride, ...)` after statement s0
 * for N the call's result or a plain alias of it (both malloc'd), 0; else -1. */
static int output_layout(const artifact *a, size_t s0, const char *target, char **shape, char **stride) {
    const char *names[16];
    size_t nn = 0;
    names[nn++] = target;
    for (size_t s = s0 + 1; s < a->nstmts; s++) {
        const art_stmt *st = &a->stmts[s];
        if (st->kind == ART_ST_ALIAS && st->of && nn < 16)
            for (size_t j = 0; j < nn; j++)
                if (!strcmp(st->of, names[j])) {
                    names[nn++] = st->target;
                    break;
                }
        if (st->kind != ART_ST_ASSERT) continue;
        pyval *v = NULL;
        kerr e = {0};
        if (pylit_parse(a->text + st->span.off, st->span.len, st->line, &v, &e)) continue;
        const pyval *x = pyval_arg(v, 0), *sh = pyval_arg(v, 1), *sd = pyval_arg(v, 2);
        int hit = v->kind == PYV_CALL && pyval_is_name(v->base, "assert_size_stride") && x && x->kind == PYV_NAME &&
                  sh && sd && sh->kind == PYV_TUPLE && sd->kind == PYV_TUPLE && sh->n == sd->n && sh->n >= 1 &&
                  plain_literal(sh) && plain_literal(sd);
        for (size_t j = 0; hit && j < nn; j++)
            if (!strcmp(x->s, names[j])) {
                *shape = pyval_text(sh, a->text + st->span.off);
                *stride = pyval_text(sd, a->text + st->span.off);
                pyval_free(v);
                return 0;
            }
        pyval_free(v);
    }
    return -1;
}

/* Where the launcher goes: after the last kernel statement, or (a module without Triton
 * kernels) before the top-level statement that holds call(). */
static size_t launcher_at(const artifact *a) {
    size_t at = 0;
    for (size_t k = 0; k < a->nkernels; k++) {
        size_t end = a->kernels[k].stmt.off + a->kernels[k].stmt.len;
        if (end > at) at = end;
    }
    const char *t = a->text;
    if (at) {
        while (at < a->len && t[at] != '\n') at++;
        return at < a->len ? at + 1 : at;
    }
    size_t p = a->entry.header.off;
    while (p > 0 && t[p - 1] != '\n') p--;
    /* a method of `class Runner:` -- back to the class line */
    for (size_t q = p; a->entry.form == ART_ENTRY_RUNNER && q > 0;) {
        size_t ls = q - 1;
        while (ls > 0 && t[ls - 1] != '\n') ls--;
        if (!strncmp(t + ls, "class ", 6)) return ls;
        q = ls;
    }
    return p;
}

int region_build_vendor(const artifact *a, int li, const char *name, kbuf *out, kerr *e) {
    if (li < 0 || (size_t)li >= a->nlaunches) return kerr_set(e, KOPT_E_CANDIDATE, "no launch %d in call()", li);
    const art_launch *l = &a->launches[li];
    int op = l->kind == ART_L_VENDOR ? region_vendor_op(l->callee) : -1;
    if (op < 0)
        return kerr_set(e, KOPT_E_CANDIDATE, "launch %d (%s) is not an ATen call kopt can take the place of", li,
                        l->callee);
    if (!candidate_is_ident(name))
        return kerr_set(e, KOPT_E_CANDIDATE, "region name '%s' is not a Python identifier", name);
    const art_stmt *st = &a->stmts[l->stmt];
    if (!l->target || !candidate_is_ident(l->target) || l->out || l->kwnames.n || l->args.n < 1 ||
        !candidate_is_ident(l->args.v[0]) || st->inline_part)
        return kerr_set(e, KOPT_E_CANDIDATE, "line %d: %s is not `buf = op(tensor, literals...)` on a line of its own",
                        l->line, l->callee);
    const char *dt = dtype_of(a, l->args.v[0]), *type = ptr_type(dt);
    if (!type)
        return kerr_set(e, KOPT_E_CANDIDATE,
                        "line %d: the dtype of %s is not stated in call() or not float32/16/bfloat16", l->line,
                        l->args.v[0]);
    for (size_t i = 1; i < l->args.n; i++) {
        pyval *v = NULL;
        kerr pe = {0};
        int ok = !pylit_parse(l->args.v[i], strlen(l->args.v[i]), l->line, &v, &pe) && plain_literal(v);
        pyval_free(v);
        if (!ok)
            return kerr_set(e, KOPT_E_CANDIDATE,
                            "line %d: argument %zu of %s is not an int, bool, None or list of ints", l->line, i,
                            l->callee);
    }
    char *shape = NULL, *stride = NULL;
    if (output_layout(a, l->stmt, l->target, &shape, &stride))
        return kerr_set(e, KOPT_E_CANDIDATE, "line %d: no assert_size_stride states the shape of %s's result", l->line,
                        l->callee);
    if (!strstr(a->text, "\nempty_strided_cuda = ")) {
        free(shape);
        free(stride);
        return kerr_set(e, KOPT_E_CANDIDATE, "the module defines no empty_strided_cuda for the region's output");
    }
    kbuf lits = KBUF_INIT;
    for (size_t i = 1; i < l->args.n; i++) kbuf_printf(&lits, ", %s", l->args.v[i]);

    kbuf fn = KBUF_INIT;
    kbuf_printf(&fn, "\n\n%s", candidate_launch_shim());
    kbuf_printf(&fn, "\n\n# kopt-region: %s\n# kopt-region-signature: in_ptr0:%s out_ptr0:%s\n# kopt-region-aten: %s\n",
                l->callee, type, type, VENDOR_OPS[op].aten);
    kbuf_printf(&fn, "# kopt-region-vendor: %s(in_ptr0%s)\n", l->callee, kbuf_str(&lits));
    kbuf_printf(&fn, "def %s__launch(in_ptr0, out_ptr0, stream=None):\n    %s(in_ptr0%s, out=out_ptr0)\n", name,
                VENDOR_OPS[op].out, kbuf_str(&lits));
    kbuf_printf(&fn, "%s = _KoptLaunch(%s__launch)\n\n", name, name);

    size_t at = launcher_at(a), lo = st->line_start, hi = st->line_end;
    int rc = 0;
    if (at > lo) rc = kerr_set(e, KOPT_E_CANDIDATE, "the module's kernels are not all defined before call()");
    else {
        kbuf_append(out, a->text, at);
        kbuf_append(out, kbuf_str(&fn), fn.len);
        kbuf_append(out, a->text + at, lo - at);
        kbuf_printf(out, "%s%s = empty_strided_cuda(%s, %s, %s)\n", l->indent ? l->indent : "", l->target, shape,
                    stride, dt);
        kbuf_printf(out, "%s%s.run(%s, %s)\n", l->indent ? l->indent : "", name, l->args.v[0], l->target);
        kbuf_append(out, a->text + hi, a->len - hi);
    }
    free(shape);
    free(stride);
    kbuf_free(&lits);
    kbuf_free(&fn);
    return rc;
}
