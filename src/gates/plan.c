/* plan.c — see plan.h. Three parts: integer expressions (a small recursive-descent parser over
 * a string, depth-bounded), the plan (a pyval dict checked key by key into typed structs) and
 * the lowering (the file's top-level statements checked against form P's allowlist, the
 * launcher written from the plan). */
#include "gates/plan.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gates/plan_eval.h"
#include "gates/tensor.h"

/* ---------- expressions ---------- */

typedef struct xparser {
    const char *s, *p;
    const char *const *ints; /* names usable as integers */
    size_t nints;
    const char *const *ptrs; /* tensors: only inside shape() / stride() / numel() */
    size_t nptrs;
    int depth;
    int uses_sms; /* sm_count() seen */
    kerr *e;
    int failed;
} xparser;

static plan_expr *xnew(plan_expr_kind k) {
    plan_expr *x = kcalloc(1, sizeof *x);
    x->kind = k;
    return x;
}

void plan_expr_free(plan_expr *x) {
    if (!x) return;
    plan_expr_free(x->a);
    plan_expr_free(x->b);
    free(x->name);
    free(x);
}

static plan_expr *xfail(xparser *P, const char *msg) {
    if (!P->failed) kerr_set(P->e, KOPT_E_CANDIDATE, "%s at offset %d of \"%s\"", msg, (int)(P->p - P->s), P->s);
    P->failed = 1;
    return NULL;
}

static void skip_ws(xparser *P) {
    while (*P->p == ' ' || *P->p == '\t') P->p++;
}

static int accept(xparser *P, const char *tok) {
    skip_ws(P);
    size_t n = strlen(tok);
    if (strncmp(P->p, tok, n)) return 0;
    if (!strcmp(tok, "/") && P->p[1] == '/') return 0;
    P->p += n;
    return 1;
}

static plan_expr *parse_sum(xparser *P);

static plan_expr *bin(plan_expr_kind k, plan_expr *a, plan_expr *b) {
    plan_expr *x = xnew(k);
    x->a = a;
    x->b = b;
    return x;
}

static plan_expr *parse_atom(xparser *P) {
    skip_ws(P);
    if (++P->depth > PLAN_MAX_EXPR_DEPTH) return xfail(P, "expression nested too deeply");
    plan_expr *r = NULL;
    if (accept(P, "(")) {
        r = parse_sum(P);
        if (r && !accept(P, ")")) {
            plan_expr_free(r);
            r = xfail(P, "expected ')'");
        }
    } else if (accept(P, "-")) {
        plan_expr *a = parse_atom(P);
        if (a) {
            r = xnew(PX_NEG);
            r->a = a;
        }
    } else if (isdigit((unsigned char)*P->p)) {
        long long v = 0;
        while (isdigit((unsigned char)*P->p)) { /* at most 2^53 (exact as a double) at each digit: no overflow */
            v = v * 10 + (*P->p++ - '0');
            if (v > (1LL << 53)) return xfail(P, "integer too large");
        }
        if (isalpha((unsigned char)*P->p) || *P->p == '_' || *P->p == '.') return xfail(P, "not an integer");
        r = xnew(PX_NUM);
        r->num = v;
    } else if (isalpha((unsigned char)*P->p) || *P->p == '_') {
        const char *w = P->p;
        while (isalnum((unsigned char)*P->p) || *P->p == '_') P->p++;
        char *name = kstrndup(w, (size_t)(P->p - w));
        static const struct {
            const char *name;
            plan_expr_kind kind;
            int nargs;
        } FN[] = {{"cdiv", PX_CDIV, 2}, {"min", PX_MIN, 2}, {"max", PX_MAX, 2}, {"next_pow2", PX_NEXT_POW2, 1}};
        static const plan_expr_kind TFN[] = {PX_SHAPE, PX_STRIDE, PX_NUMEL};
        static const char *const TNAME[] = {"shape", "stride", "numel"};
        int fn = -1, tfn = -1;
        for (size_t i = 0; i < sizeof FN / sizeof FN[0]; i++)
            if (!strcmp(name, FN[i].name)) fn = (int)i;
        for (size_t i = 0; i < 3; i++)
            if (!strcmp(name, TNAME[i])) tfn = (int)i;
        skip_ws(P);
        if (!strcmp(name, "sm_count") && *P->p == '(') {
            free(name);
            P->p++;
            if (!accept(P, ")")) return xfail(P, "sm_count() takes no argument");
            P->uses_sms = 1;
            r = xnew(PX_SM_COUNT);
        } else if (tfn >= 0 && *P->p == '(') {
            free(name);
            P->p++;
            skip_ws(P);
            const char *w2 = P->p;
            while (isalnum((unsigned char)*P->p) || *P->p == '_') P->p++;
            char *t = kstrndup(w2, (size_t)(P->p - w2));
            int ok = 0;
            for (size_t i = 0; i < P->nptrs && !ok; i++) ok = !strcmp(P->ptrs[i], t);
            if (!ok) {
                free(t);
                return xfail(P, "shape(), stride() and numel() take a pointer parameter of the launcher");
            }
            r = xnew(TFN[tfn]);
            r->name = t;
            if (TFN[tfn] != PX_NUMEL) {
                if (!accept(P, ",")) {
                    plan_expr_free(r);
                    return xfail(P, "expected ', DIM' (a dimension: an integer, negative from the end)");
                }
                skip_ws(P);
                int neg = accept(P, "-");
                skip_ws(P);
                if (!isdigit((unsigned char)*P->p)) {
                    plan_expr_free(r);
                    return xfail(P, "a dimension must be an integer literal");
                }
                long long dim = 0;
                while (isdigit((unsigned char)*P->p) && dim < 64) dim = dim * 10 + (*P->p++ - '0');
                if (dim >= 64) {
                    plan_expr_free(r);
                    return xfail(P, "dimension out of range");
                }
                r->num = neg ? -dim : dim;
            }
            if (!accept(P, ")")) {
                plan_expr_free(r);
                return xfail(P, "expected ')'");
            }
        } else if (fn >= 0 && *P->p == '(') {
            free(name);
            P->p++;
            r = xnew(FN[fn].kind);
            r->a = parse_sum(P);
            if (r->a && FN[fn].nargs == 2) {
                if (!accept(P, ",")) {
                    plan_expr_free(r);
                    return xfail(P, "expected ',' (two arguments)");
                }
                r->b = parse_sum(P);
            }
            if (P->failed || !accept(P, ")")) {
                plan_expr_free(r);
                return xfail(P, "expected ')' after the function's arguments");
            }
        } else {
            int ok = 0;
            for (size_t i = 0; i < P->nints && !ok; i++) ok = !strcmp(P->ints[i], name);
            if (!ok) {
                char *msg = kasprintf("unknown name '%s' (integer parameters of the launcher, names of "
                                      "\"let\", or cdiv / min / max / next_pow2 / shape / stride / numel / "
                                      "sm_count calls)",
                                      name);
                free(name);
                xfail(P, msg);
                free(msg);
                return NULL;
            }
            r = xnew(PX_NAME);
            r->name = name;
        }
    } else {
        r = xfail(P, *P->p ? "unexpected character" : "unexpected end");
    }
    P->depth--;
    return r;
}

static plan_expr *parse_term(xparser *P) {
    plan_expr *a = parse_atom(P);
    while (a && !P->failed) {
        plan_expr_kind k;
        if (accept(P, "*")) k = PX_MUL;
        else if (accept(P, "//")) k = PX_FLOORDIV;
        else if (accept(P, "%")) k = PX_MOD;
        else break;
        plan_expr *b = parse_atom(P);
        if (!b) {
            plan_expr_free(a);
            return NULL;
        }
        a = bin(k, a, b);
    }
    return a;
}

static plan_expr *parse_sum(xparser *P) {
    plan_expr *a = parse_term(P);
    while (a && !P->failed) {
        plan_expr_kind k;
        if (accept(P, "+")) k = PX_ADD;
        else if (accept(P, "-")) k = PX_SUB;
        else break;
        plan_expr *b = parse_term(P);
        if (!b) {
            plan_expr_free(a);
            return NULL;
        }
        a = bin(k, a, b);
    }
    return a;
}

/* An expression, or with `cmp` a comparison `expr OP expr` (*cmp gets the operator's index in
 * CMP_OPS). */
static const char *const CMP_OPS[] = {"==", "!=", "<=", ">=", "<", ">"};

static int parse_top(const plan_names *n, const char *s, int *cmp, plan_expr **out, plan_expr **rhs, int *uses_sms,
                     kerr *e) {
    *out = NULL;
    if (rhs) *rhs = NULL;
    if (strlen(s) > PLAN_MAX_EXPR_CHARS)
        return kerr_set(e, KOPT_E_CANDIDATE, "expression longer than %d characters", PLAN_MAX_EXPR_CHARS);
    xparser P = {s, s, n->ints, n->nints, n->ptrs, n->nptrs, 0, 0, e, 0};
    plan_expr *x = parse_sum(&P);
    plan_expr *y = NULL;
    if (x && !P.failed && cmp) {
        *cmp = -1;
        for (int i = 0; i < 6 && *cmp < 0; i++)
            if (accept(&P, CMP_OPS[i])) *cmp = i;
        if (*cmp < 0) {
            plan_expr_free(x);
            x = xfail(&P, "expected a comparison (==, !=, <=, >=, <, >)");
        } else if (!(y = parse_sum(&P))) {
            plan_expr_free(x);
            x = NULL;
        }
    }
    skip_ws(&P);
    if (x && !P.failed && *P.p) {
        plan_expr_free(x);
        plan_expr_free(y);
        x = y = NULL;
        xfail(&P, "unexpected text after the expression");
    }
    if (!x) {
        if (!P.failed) kerr_set(e, KOPT_E_CANDIDATE, "malformed expression \"%s\"", s);
        return KOPT_E_CANDIDATE;
    }
    if (uses_sms) *uses_sms |= P.uses_sms;
    *out = x;
    if (rhs) *rhs = y;
    return 0;
}

int plan_expr_parse(const char *s, const plan_names *names, plan_expr **out, kerr *e) {
    return parse_top(names, s, NULL, out, NULL, NULL, e);
}

void plan_expr_emit(const plan_expr *x, kbuf *out) {
    static const char *const OP[] = {
        [PX_ADD] = " + ", [PX_SUB] = " - ", [PX_MUL] = " * ", [PX_FLOORDIV] = " // ", [PX_MOD] = " % "};
    switch (x->kind) {
    case PX_NUM: kbuf_printf(out, "%lld", x->num); return;
    case PX_NAME: kbuf_puts(out, x->name); return;
    case PX_NEG:
        kbuf_puts(out, "(-");
        plan_expr_emit(x->a, out);
        kbuf_puts(out, ")");
        return;
    case PX_ADD:
    case PX_SUB:
    case PX_MUL:
    case PX_FLOORDIV:
    case PX_MOD:
        kbuf_puts(out, "(");
        plan_expr_emit(x->a, out);
        kbuf_puts(out, OP[x->kind]);
        plan_expr_emit(x->b, out);
        kbuf_puts(out, ")");
        return;
    /* cdiv and next_pow2 as plain integer arithmetic, as triton.cdiv and triton.next_power_of_2
     * compute them (plan_eval.c): Triton 3.6 wraps both in its constexpr-function machinery, a few
     * microseconds of the launcher's per-call host time that as-called timing counts */
    case PX_CDIV:
        kbuf_puts(out, "((");
        plan_expr_emit(x->a, out);
        kbuf_puts(out, " + ");
        plan_expr_emit(x->b, out);
        kbuf_puts(out, " - 1) // ");
        plan_expr_emit(x->b, out);
        kbuf_puts(out, ")");
        return;
    case PX_MIN:
    case PX_MAX:
        kbuf_puts(out, x->kind == PX_MIN ? "min(" : "max(");
        plan_expr_emit(x->a, out);
        kbuf_puts(out, ", ");
        plan_expr_emit(x->b, out);
        kbuf_puts(out, ")");
        return;
    case PX_NEXT_POW2:
        kbuf_puts(out, "_kopt_plan_np2(");
        plan_expr_emit(x->a, out);
        kbuf_puts(out, ")");
        return;
    case PX_SHAPE: kbuf_printf(out, "%s.shape[%lld]", x->name, x->num); return;
    case PX_STRIDE: kbuf_printf(out, "%s.stride(%lld)", x->name, x->num); return;
    case PX_NUMEL: kbuf_printf(out, "%s.numel()", x->name); return;
    case PX_SM_COUNT: kbuf_puts(out, "_kopt_plan_sms"); return;
    }
}

/* ---------- the plan ---------- */

static const char *const DTYPES[] = {
    [PDT_FLOAT32] = "float32", [PDT_FLOAT16] = "float16", [PDT_BFLOAT16] = "bfloat16", [PDT_FLOAT64] = "float64",
    [PDT_INT8] = "int8",       [PDT_INT16] = "int16",     [PDT_INT32] = "int32",       [PDT_INT64] = "int64",
    [PDT_UINT8] = "uint8",     [PDT_BOOL] = "bool"};

/* What a scratch buffer that is not zero-filled holds when a launch starts: NaN, the integer
 * type's minimum (uint8: 255), True. A kernel reading what it did not write sees garbage, never
 * a previous launch's results left in recycled memory. */
static const char *const POISON[] = {[PDT_FLOAT32] = "float('nan')",
                                     [PDT_FLOAT16] = "float('nan')",
                                     [PDT_BFLOAT16] = "float('nan')",
                                     [PDT_FLOAT64] = "float('nan')",
                                     [PDT_INT8] = "-128",
                                     [PDT_INT16] = "-32768",
                                     [PDT_INT32] = "-2147483648",
                                     [PDT_INT64] = "-9223372036854775808",
                                     [PDT_UINT8] = "255",
                                     [PDT_BOOL] = "True"};

const char *plan_dtype_name(plan_dtype d) { return DTYPES[d]; }

/* Triton's pointer types and torch's dtype names of the plan dtypes. */
static const char *const TRITON_TORCH[][2] = {
    {"*fp32", "float32"}, {"*fp16", "float16"}, {"*bf16", "bfloat16"}, {"*fp64", "float64"}, {"*i8", "int8"},
    {"*i16", "int16"},    {"*i32", "int32"},    {"*i64", "int64"},     {"*u8", "uint8"},     {"*i1", "bool"}};

const char *plan_dtype_of_triton(const char *type) {
    for (size_t i = 0; type && i < sizeof TRITON_TORCH / sizeof TRITON_TORCH[0]; i++)
        if (!strcmp(type, TRITON_TORCH[i][0])) return TRITON_TORCH[i][1];
    return NULL;
}

const char *plan_triton_of_dtype(const char *dtype) {
    for (size_t i = 0; dtype && i < sizeof TRITON_TORCH / sizeof TRITON_TORCH[0]; i++)
        if (!strcmp(dtype, TRITON_TORCH[i][1])) return TRITON_TORCH[i][0];
    return NULL;
}

static void arg_free(plan_arg *a) {
    free(a->name);
    plan_expr_free(a->expr);
}

void plan_free(launch_plan *p) {
    if (!p) return;
    for (size_t i = 0; i < p->nparams; i++) free(p->params[i]);
    free(p->params);
    for (size_t i = 0; i < p->nlets; i++) {
        free(p->lets[i].name);
        plan_expr_free(p->lets[i].value);
    }
    free(p->lets);
    for (size_t i = 0; i < p->nchecks; i++) {
        plan_expr_free(p->checks[i].a);
        plan_expr_free(p->checks[i].b);
        free(p->checks[i].text);
    }
    free(p->checks);
    for (size_t i = 0; i < p->nscratch; i++) {
        free(p->scratch[i].name);
        for (size_t d = 0; d < p->scratch[i].ndim; d++) plan_expr_free(p->scratch[i].shape[d]);
    }
    free(p->scratch);
    for (size_t i = 0; i < p->nlaunches; i++) {
        plan_launch *L = &p->launches[i];
        free(L->kernel);
        for (size_t g = 0; g < L->ngrid; g++) plan_expr_free(L->grid[g]);
        for (size_t a = 0; a < L->nargs; a++) arg_free(&L->args[a]);
        free(L->args);
        for (size_t a = 0; a < L->ncx; a++) arg_free(&L->cx[a]);
        free(L->cx);
        free(L->order);
    }
    free(p->launches);
    free(p);
}

typedef struct pctx {
    const candidate *c;
    launch_plan *p;
    const char **ints; /* integer parameters and lets: the names an expression may use */
    size_t nints;
    const char **ptrs; /* pointer parameters */
    size_t nptrs;
    kerr *e;
} pctx;

static int perr(pctx *X, const pyval *v, const char *fmt, const char *a, const char *b) {
    char *msg = kasprintf(fmt, a ? a : "", b ? b : "");
    int rc = kerr_set(X->e, KOPT_E_CANDIDATE, "line %d: KOPT_PLAN: %s", v ? v->line : X->p->line, msg);
    free(msg);
    return rc;
}

static int is_pointer_name(const char *s) { return strstr(s, "ptr") != NULL; }

/* dict v may only have keys from `keys` (NULL-terminated); `what` names it in messages. */
static int check_keys(pctx *X, const pyval *v, const char *const *keys, const char *what) {
    if (v->kind != PYV_DICT) return perr(X, v, "%s must be a dict", what, NULL);
    for (size_t i = 0; i < v->n; i++) {
        const pyval *k = v->keys[i];
        if (k->kind != PYV_STR) return perr(X, k, "%s has a key that is not a string", what, NULL);
        int ok = 0;
        for (size_t j = 0; keys[j] && !ok; j++) ok = !strcmp(keys[j], k->s);
        if (!ok) return perr(X, k, "%s has an unknown key '%s'", what, k->s);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(v->keys[j]->s, k->s)) return perr(X, k, "%s repeats the key '%s'", what, k->s);
    }
    return 0;
}

static int is_seq(const pyval *v) { return v && (v->kind == PYV_LIST || v->kind == PYV_TUPLE); }

/* A name the plan may bind in kopt's launcher: an identifier that is not kopt's own, nor a builtin
 * the launcher calls (min, max, float, ValueError). */
static int name_ok(const char *s) {
    static const char *const KOPTS[] = {"stream", "launch", "min", "max", "float", "ValueError"};
    for (size_t i = 0; i < sizeof KOPTS / sizeof KOPTS[0]; i++)
        if (!strcmp(s, KOPTS[i])) return 0;
    return candidate_is_ident(s) && strncmp(s, "_kopt", 5);
}

/* An integer expression: an int literal or an expression string. */
static int read_expr(pctx *X, const pyval *v, const char *what, plan_expr **out) {
    *out = NULL;
    if (v->kind == PYV_INT) {
        *out = xnew(PX_NUM);
        (*out)->num = v->i;
        return 0;
    }
    if (v->kind != PYV_STR) return perr(X, v, "%s must be an int or an expression string", what, NULL);
    kerr xe = {0};
    plan_names n = {X->ints, X->nints, X->ptrs, X->nptrs};
    if (parse_top(&n, v->s, NULL, out, NULL, &X->p->uses_sms, &xe)) return perr(X, v, "%s: %s", what, xe.msg);
    if (plan_expr_const_fault(*out, &xe)) { /* a fault no values avoid */
        plan_expr_free(*out);
        *out = NULL;
        return perr(X, v, "%s: %s", what, xe.msg);
    }
    return 0;
}

static int name_taken(pctx *X, const char *s) {
    launch_plan *p = X->p;
    for (size_t i = 0; i < p->nparams; i++)
        if (!strcmp(p->params[i], s)) return 1;
    for (size_t i = 0; i < p->nlets; i++)
        if (!strcmp(p->lets[i].name, s)) return 1;
    for (size_t i = 0; i < p->nscratch; i++)
        if (!strcmp(p->scratch[i].name, s)) return 1;
    return candidate_is_jit(X->c, s);
}

static int read_lets(pctx *X, const pyval *v) {
    if (v->kind != PYV_DICT || v->n > PLAN_MAX_LETS)
        return perr(X, v, "\"let\" must be a dict of at most 16 names to integer expressions", NULL, NULL);
    launch_plan *p = X->p;
    p->lets = kcalloc(v->n ? v->n : 1, sizeof *p->lets);
    for (size_t i = 0; i < v->n; i++) {
        const pyval *k = v->keys[i];
        if (k->kind != PYV_STR || !name_ok(k->s))
            return perr(X, k, "a \"let\" name must be a usable identifier", NULL, NULL);
        if (name_taken(X, k->s))
            return perr(X, k, "\"let\" name '%s' is already a parameter, let or kernel", k->s, NULL);
        plan_expr *x = NULL;
        if (read_expr(X, v->items[i], "a \"let\" value", &x)) return KOPT_E_CANDIDATE;
        p->lets[p->nlets].name = kstrdup(k->s);
        p->lets[p->nlets++].value = x;
        X->ints[X->nints++] = p->lets[p->nlets - 1].name; /* usable from the next one on */
    }
    return 0;
}

static int read_checks(pctx *X, const pyval *v) {
    if (!is_seq(v) || v->n > PLAN_MAX_CHECKS)
        return perr(X, v, "\"checks\" must be a list of at most 16 comparisons", NULL, NULL);
    launch_plan *p = X->p;
    p->checks = kcalloc(v->n ? v->n : 1, sizeof *p->checks);
    for (size_t i = 0; i < v->n; i++) {
        const pyval *s = v->items[i];
        if (s->kind != PYV_STR) return perr(X, s, "a check must be a string \"expr OP expr\"", NULL, NULL);
        plan_check *C = &p->checks[p->nchecks];
        kerr xe = {0};
        plan_names n = {X->ints, X->nints, X->ptrs, X->nptrs};
        int op = 0;
        if (parse_top(&n, s->s, &op, &C->a, &C->b, &p->uses_sms, &xe)) return perr(X, s, "a check: %s", xe.msg, NULL);
        C->op = (plan_cmp)op;
        C->text = kstrdup(s->s);
        p->nchecks++;
    }
    return 0;
}

static int find_name(char *const *names, size_t n, const char *s) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], s)) return (int)i;
    return -1;
}

/* A launch argument or constexpr value. */
static int read_arg(pctx *X, const pyval *v, const char *what, int allow_tensors, plan_arg *out) {
    memset(out, 0, sizeof *out);
    if (v->kind == PYV_BOOL) {
        out->kind = PARG_BOOL;
        out->b = (int)v->i;
        return 0;
    }
    if (v->kind == PYV_FLOAT) {
        if (!isfinite(v->f)) return perr(X, v, "%s: a float argument must be finite", what, NULL);
        out->kind = PARG_FLOAT;
        out->f = v->f;
        return 0;
    }
    if (v->kind == PYV_STR && allow_tensors && candidate_is_ident(v->s)) {
        int pi = find_name(X->p->params, X->p->nparams, v->s);
        for (size_t i = 0; pi < 0 && i < X->p->nscratch; i++)
            if (!strcmp(X->p->scratch[i].name, v->s)) {
                out->kind = PARG_SCRATCH;
                out->name = kstrdup(v->s);
                return 0;
            }
        if (pi >= 0) {
            out->kind = PARG_PARAM;
            out->name = kstrdup(v->s);
            return 0;
        }
    }
    out->kind = PARG_EXPR;
    return read_expr(X, v, what, &out->expr);
}

static int read_params(pctx *X, const pyval *v) {
    if (!is_seq(v) || v->n == 0 || v->n > PLAN_MAX_ARGS)
        return perr(X, v,
                    "\"params\" must be a list of 1 to 64 parameter names (the replaced kernel's runtime "
                    "parameters, in order)",
                    NULL, NULL);
    launch_plan *p = X->p;
    p->params = kcalloc(v->n, sizeof *p->params);
    X->ints = kcalloc(v->n + PLAN_MAX_LETS, sizeof *X->ints);
    X->ptrs = kcalloc(v->n, sizeof *X->ptrs);
    for (size_t i = 0; i < v->n; i++) {
        const pyval *s = v->items[i];
        if (s->kind != PYV_STR || !name_ok(s->s))
            return perr(X, s, "\"params\" entry %s is not a usable parameter name", s->kind == PYV_STR ? s->s : "?",
                        NULL);
        if (find_name(p->params, p->nparams, s->s) >= 0) return perr(X, s, "parameter '%s' repeated", s->s, NULL);
        p->params[p->nparams++] = kstrdup(s->s);
        if (!is_pointer_name(s->s)) X->ints[X->nints++] = p->params[p->nparams - 1];
        else X->ptrs[X->nptrs++] = p->params[p->nparams - 1];
    }
    return 0;
}

static int read_scratch(pctx *X, const pyval *v) {
    if (!is_seq(v) || v->n > PLAN_MAX_SCRATCH)
        return perr(X, v, "\"scratch\" must be a list of at most 16 buffers", NULL, NULL);
    launch_plan *p = X->p;
    p->scratch = kcalloc(v->n ? v->n : 1, sizeof *p->scratch);
    static const char *const KEYS[] = {"name", "shape", "dtype", "zero", NULL};
    for (size_t i = 0; i < v->n; i++) {
        const pyval *d = v->items[i];
        if (check_keys(X, d, KEYS, "a scratch buffer")) return KOPT_E_CANDIDATE;
        const pyval *nm = pyval_dict_get(d, "name"), *sh = pyval_dict_get(d, "shape"), *dt = pyval_dict_get(d, "dtype"),
                    *z = pyval_dict_get(d, "zero");
        if (!nm || nm->kind != PYV_STR || !name_ok(nm->s))
            return perr(X, d, "a scratch buffer needs a \"name\" that is a usable identifier", NULL, NULL);
        if (name_taken(X, nm->s))
            return perr(X, nm, "scratch buffer '%s' has the name of a parameter, let, kernel or other buffer", nm->s,
                        NULL);
        plan_scratch *S = &p->scratch[p->nscratch++];
        S->name = kstrdup(nm->s);
        if (!is_seq(sh) || sh->n == 0 || sh->n > PLAN_MAX_DIMS)
            return perr(X, d, "scratch buffer '%s' needs a \"shape\": a list of 1 to 8 sizes", nm->s, NULL);
        for (size_t k = 0; k < sh->n; k++) {
            if (read_expr(X, sh->items[k], "a scratch size", &S->shape[k])) return KOPT_E_CANDIDATE;
            S->ndim++;
        }
        int found = -1;
        for (size_t k = 0; dt && dt->kind == PYV_STR && k < sizeof DTYPES / sizeof DTYPES[0]; k++)
            if (!strcmp(DTYPES[k], dt->s)) found = (int)k;
        if (found < 0)
            return perr(X, dt ? dt : d,
                        "scratch buffer '%s' needs a \"dtype\" among float32, float16, bfloat16, "
                        "float64, int8, int16, int32, int64, uint8, bool",
                        nm->s, NULL);
        S->dtype = (plan_dtype)found;
        if (z && z->kind != PYV_BOOL) return perr(X, z, "\"zero\" must be True or False", NULL, NULL);
        S->zero = z ? (int)z->i : 0;
    }
    return 0;
}

/* The jit function `name`'s parameters (caller frees), or -1 when the file has none. */
static int jit_params(const candidate *c, const char *name, cand_param **ps, size_t *n) {
    for (size_t i = 0; i < c->ndefs; i++)
        if (c->defs[i].kind == CAND_DEF_FUNC && c->defs[i].jit && !strcmp(c->defs[i].name, name)) {
            candidate_def_params(c, i, ps, n);
            return 0;
        }
    return -1;
}

static int check_signature(pctx *X, const pyval *lv, plan_launch *L) {
    cand_param *ps = NULL;
    size_t n = 0;
    if (jit_params(X->c, L->kernel, &ps, &n))
        return perr(X, lv, "launch of '%s': no top-level @triton.jit function of that name", L->kernel, NULL);
    size_t runtime = 0, required = 0;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (ps[i].name[0] == '*') rc = perr(X, lv, "kernel '%s' takes *args / **kwargs", L->kernel, NULL);
        else if (!ps[i].constexpr_) {
            runtime++;
            if (!ps[i].has_default) required = runtime;
        }
    }
    if (!rc && (L->nargs < required || L->nargs > runtime)) {
        char *got = kasprintf("%zu arguments; it takes %zu to %zu (its runtime parameters, in order)", L->nargs,
                              required, runtime);
        rc = perr(X, lv, "launch of '%s' gives %s", L->kernel, got);
        free(got);
    }
    for (size_t k = 0; k < L->ncx && !rc; k++) {
        int ok = 0;
        for (size_t i = 0; i < n; i++) ok |= ps[i].constexpr_ && !strcmp(ps[i].name, L->cx[k].name);
        if (!ok) rc = perr(X, lv, "constexpr '%s' is not a tl.constexpr parameter of the kernel", L->cx[k].name, NULL);
    }
    for (size_t i = 0; i < n && !rc; i++) {
        if (!ps[i].constexpr_ || ps[i].has_default) continue;
        int given = 0;
        for (size_t k = 0; k < L->ncx; k++) given |= !strcmp(ps[i].name, L->cx[k].name);
        if (!given) rc = perr(X, lv, "launch of '%s' does not give its constexpr '%s'", L->kernel, ps[i].name);
    }
    if (!rc) { /* the declared order, for a direct launch of the compiled kernel */
        L->order = kcalloc(n ? n : 1, sizeof *L->order);
        L->bindable = 1;
        size_t r = 0;
        for (size_t i = 0; i < n; i++) {
            int at = 0, given = 0;
            if (!ps[i].constexpr_) {
                given = r < L->nargs;
                at = (int)r++;
            } else {
                for (size_t k = 0; k < L->ncx; k++)
                    if (!strcmp(ps[i].name, L->cx[k].name)) given = 1, at = -1 - (int)k;
            }
            if (!given) L->bindable = 0; /* left to its default */
            L->order[L->norder++] = at;
        }
    }
    candidate_params_free(ps, n);
    return rc;
}

static int read_launch(pctx *X, const pyval *lv, plan_launch *L) {
    static const char *const KEYS[] = {"kernel", "grid", "args", "constexprs", "num_warps", "num_stages", NULL};
    if (check_keys(X, lv, KEYS, "a launch")) return KOPT_E_CANDIDATE;
    L->line = lv->line;
    const pyval *k = pyval_dict_get(lv, "kernel"), *g = pyval_dict_get(lv, "grid"), *a = pyval_dict_get(lv, "args"),
                *cx = pyval_dict_get(lv, "constexprs"), *w = pyval_dict_get(lv, "num_warps"),
                *st = pyval_dict_get(lv, "num_stages");
    if (!k || k->kind != PYV_STR || !candidate_is_ident(k->s))
        return perr(X, lv, "a launch needs a \"kernel\": the name of a @triton.jit function of the file", NULL, NULL);
    L->kernel = kstrdup(k->s);
    if (!is_seq(g) || g->n == 0 || g->n > 3)
        return perr(X, lv, "launch of '%s' needs a \"grid\" of 1 to 3 sizes", k->s, NULL);
    for (size_t i = 0; i < g->n; i++) {
        if (read_expr(X, g->items[i], "a grid size", &L->grid[i])) return KOPT_E_CANDIDATE;
        L->ngrid++;
        long long n; /* a size without names: within CUDA's limit for its dimension */
        if (plan_expr_constant(L->grid[i], &n) && (n < 0 || n > plan_grid_max(i))) {
            char lim[32];
            snprintf(lim, sizeof lim, "%lld", plan_grid_max(i));
            return perr(X, g->items[i], "a grid size is outside 0..%s, CUDA's limit for dimension %s", lim,
                        i == 0   ? "x"
                        : i == 1 ? "y"
                                 : "z");
        }
    }
    if (!is_seq(a) || a->n > PLAN_MAX_ARGS) return perr(X, lv, "launch of '%s' needs \"args\": a list", k->s, NULL);
    L->args = kcalloc(a->n ? a->n : 1, sizeof *L->args);
    for (size_t i = 0; i < a->n; i++) {
        if (read_arg(X, a->items[i], "an argument", 1, &L->args[i])) return KOPT_E_CANDIDATE;
        L->nargs++;
    }
    if (cx) {
        if (cx->kind != PYV_DICT || cx->n > PLAN_MAX_ARGS)
            return perr(X, cx, "\"constexprs\" must be a dict of names to values", NULL, NULL);
        L->cx = kcalloc(cx->n ? cx->n : 1, sizeof *L->cx);
        for (size_t i = 0; i < cx->n; i++) {
            const pyval *key = cx->keys[i];
            if (key->kind != PYV_STR || !name_ok(key->s) || !strcmp(key->s, "num_warps") ||
                !strcmp(key->s, "num_stages"))
                return perr(X, key, "a constexpr name must be a parameter name of the kernel", NULL, NULL);
            for (size_t j = 0; j < L->ncx; j++)
                if (!strcmp(L->cx[j].name, key->s)) return perr(X, key, "constexpr '%s' repeated", key->s, NULL);
            if (read_arg(X, cx->items[i], "a constexpr value", 0, &L->cx[i])) return KOPT_E_CANDIDATE;
            L->cx[i].name = kstrdup(key->s);
            L->ncx++;
        }
    }
    if (!w || w->kind != PYV_INT || w->i < 1 || w->i > 32 || (w->i & (w->i - 1)))
        return perr(X, w ? w : lv, "launch of '%s' needs \"num_warps\": 1, 2, 4, 8, 16 or 32", k->s, NULL);
    L->num_warps = (int)w->i;
    if (st && (st->kind != PYV_INT || st->i < 1 || st->i > 8))
        return perr(X, st, "\"num_stages\" must be an int from 1 to 8", NULL, NULL);
    L->num_stages = st ? (int)st->i : 0;
    return check_signature(X, lv, L);
}

int plan_parse(const candidate *c, const pyval *v, launch_plan **out, kerr *e) {
    *out = NULL;
    launch_plan *p = kcalloc(1, sizeof *p);
    p->line = v->line;
    pctx X = {c, p, NULL, 0, NULL, 0, e};
    static const char *const KEYS[] = {"params", "let", "checks", "scratch", "launches", NULL};
    int rc = check_keys(&X, v, KEYS, "the plan");
    const pyval *ps = rc ? NULL : pyval_dict_get(v, "params"), *sc = rc ? NULL : pyval_dict_get(v, "scratch"),
                *ls = rc ? NULL : pyval_dict_get(v, "launches"), *lt = rc ? NULL : pyval_dict_get(v, "let"),
                *ck = rc ? NULL : pyval_dict_get(v, "checks");
    if (!rc && !ps) rc = perr(&X, v, "no \"params\"", NULL, NULL);
    if (!rc) rc = read_params(&X, ps);
    if (!rc && lt) rc = read_lets(&X, lt);
    if (!rc && ck) rc = read_checks(&X, ck);
    if (!rc && sc) rc = read_scratch(&X, sc);
    if (!rc && (!is_seq(ls) || ls->n == 0 || ls->n > PLAN_MAX_LAUNCHES))
        rc = perr(&X, ls ? ls : v, "\"launches\" must be a list of 1 to 16 launches", NULL, NULL);
    if (!rc) {
        p->launches = kcalloc(ls->n, sizeof *p->launches);
        for (size_t i = 0; i < ls->n && !rc; i++) {
            p->nlaunches++;
            rc = read_launch(&X, ls->items[i], &p->launches[i]);
        }
    }
    int has_ptr = 0;
    for (size_t i = 0; i < p->nparams; i++) has_ptr |= is_pointer_name(p->params[i]);
    if (!rc && (p->nscratch || p->uses_sms) && !has_ptr)
        rc = perr(&X, v, "scratch buffers and sm_count() need a pointer parameter (its device is theirs)", NULL, NULL);
    free(X.ints);
    free(X.ptrs);
    if (rc) {
        plan_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

static void emit_arg(const plan_arg *a, kbuf *out) {
    switch (a->kind) {
    case PARG_PARAM:
    case PARG_SCRATCH: kbuf_puts(out, a->name); break;
    case PARG_EXPR: plan_expr_emit(a->expr, out); break;
    case PARG_FLOAT:
        kbuf_printf(out, "%.17g", a->f);
        if (a->f == floor(a->f) && fabs(a->f) < 1e15) kbuf_puts(out, ".0");
        break;
    case PARG_BOOL: kbuf_puts(out, a->b ? "True" : "False"); break;
    }
}

/* The launcher's bound on scratch memory (PLAN_SCRATCH_FACTOR x the bytes of the pointer arguments
 * + PLAN_SCRATCH_SLACK): a plan asking for more raises before anything is allocated, so that a
 * scratch request beyond the GPU is the candidate's refusal (it raised), not an out-of-memory
 * the gates must report as kopt's own. skippable: only where _kopt_plan_go is None (gate 1's
 * plain run of the launcher proved it on the signature the guard pins). */
static void emit_scratch_bound(const launch_plan *p, int skippable, kbuf *out) {
    const char *in = skippable ? "        " : "    ";
    if (skippable) kbuf_puts(out, "    if _kopt_plan_go is None:\n");
    kbuf_printf(out, "%s_kopt_plan_args = 0", in);
    for (size_t i = 0; i < p->nparams; i++)
        if (is_pointer_name(p->params[i]))
            kbuf_printf(out, " + %s.numel() * %s.element_size()", p->params[i], p->params[i]);
    kbuf_printf(out, "\n%s_kopt_plan_scratch = 0", in);
    for (size_t i = 0; i < p->nscratch; i++) {
        const plan_scratch *S = &p->scratch[i];
        kbuf_printf(out, " + %zu", tensor_itemsize(DTYPES[S->dtype]));
        for (size_t d = 0; d < S->ndim; d++) {
            kbuf_puts(out, " * (");
            plan_expr_emit(S->shape[d], out);
            kbuf_puts(out, ")");
        }
    }
    kbuf_printf(out,
                "\n%sif _kopt_plan_scratch > %d * _kopt_plan_args + %lld:\n"
                "%s    raise ValueError('kopt plan: the scratch buffers ask for more than %dx the bytes of the "
                "launch arguments + %d MiB')\n",
                in, PLAN_SCRATCH_FACTOR, (long long)PLAN_SCRATCH_SLACK_MIB << 20, in, PLAN_SCRATCH_FACTOR,
                PLAN_SCRATCH_SLACK_MIB);
}

/* A bindable launch through the shim's binder (plan.h), then the `else:` of Triton's own launch. */
static void emit_direct(const plan_launch *L, size_t i, kbuf *out) {
    kbuf_printf(out, "    if _kopt_plan_go is not None:\n        _kopt_plan_go(%zu, (", i);
    for (size_t g = 0; g < 3; g++) {
        if (g < L->ngrid) plan_expr_emit(L->grid[g], out);
        else kbuf_puts(out, "1");
        kbuf_puts(out, g < 2 ? ", " : "), (");
    }
    for (size_t j = 0; j < L->norder; j++) {
        int at = L->order[j];
        emit_arg(at >= 0 ? &L->args[at] : &L->cx[-1 - at], out);
        kbuf_puts(out, ", ");
    }
    kbuf_puts(out, "), (");
    for (size_t j = 0; j < L->norder; j++) {
        int at = L->order[j];
        if (at >= 0) kbuf_puts(out, "None, ");
        else kbuf_printf(out, "'%s', ", L->cx[-1 - at].name);
    }
    kbuf_printf(out, "), %d, %d, stream)\n    else:\n", L->num_warps, L->num_stages);
}

/* Whether x reads sm_count(), itself or through the lets it names (a let names only earlier
 * lets, so the walk ends). */
static int reads_sms(const launch_plan *p, const plan_expr *x) {
    if (!x) return 0;
    if (x->kind == PX_SM_COUNT) return 1;
    if (x->kind == PX_NAME)
        for (size_t i = 0; i < p->nlets; i++)
            if (!strcmp(p->lets[i].name, x->name)) return reads_sms(p, p->lets[i].value);
    return reads_sms(p, x->a) || reads_sms(p, x->b);
}

/* Whether a scratch buffer's size reads sm_count(). */
static int scratch_reads_sms(const launch_plan *p) {
    for (size_t i = 0; i < p->nscratch; i++)
        for (size_t d = 0; d < p->scratch[i].ndim; d++)
            if (reads_sms(p, p->scratch[i].shape[d])) return 1;
    return 0;
}

/* The launcher function `def launch(...)` of p, appended to out. */
static void emit_launch(const launch_plan *p, kbuf *out) {
    kbuf_puts(out, "def launch(");
    const char *dev = NULL;
    for (size_t i = 0; i < p->nparams; i++) {
        kbuf_printf(out, "%s, ", p->params[i]);
        if (!dev && is_pointer_name(p->params[i])) dev = p->params[i];
    }
    kbuf_puts(out, "stream=None, _kopt_plan_go=None):\n");
    if (p->uses_sms)
        kbuf_printf(
            out, "    _kopt_plan_sms = _kopt_plan_torch.cuda.get_device_properties(%s.device).multi_processor_count\n",
            dev);
    for (size_t i = 0; i < p->nlets; i++) {
        kbuf_printf(out, "    %s = ", p->lets[i].name);
        plan_expr_emit(p->lets[i].value, out);
        kbuf_puts(out, "\n");
    }
    /* On the guard's verified signature (_kopt_plan_go given) every shape, stride and integer the
     * checks read is the one gate 1 ran them on (its compile step runs this launcher plainly), so
     * they are skipped there -- except a check that reads sm_count() (directly or through a let),
     * which another GPU changes. */
    for (size_t i = 0; i < p->nchecks; i++) {
        const plan_check *C = &p->checks[i];
        int sms = reads_sms(p, C->a) || reads_sms(p, C->b);
        kbuf_printf(out, "    if %snot (", sms ? "" : "_kopt_plan_go is None and ");
        plan_expr_emit(C->a, out);
        kbuf_printf(out, " %s ", CMP_OPS[C->op]);
        plan_expr_emit(C->b, out);
        kbuf_puts(out, "):\n        raise ValueError('kopt plan: a check does not hold: ");
        for (const char *q = C->text; *q; q++) /* printable ASCII, no quote or backslash */
            kbuf_append(out, (*q >= 32 && *q < 127 && *q != '\'' && *q != '\\') ? q : "?", 1);
        kbuf_puts(out, "')\n");
    }
    if (p->nscratch) emit_scratch_bound(p, !scratch_reads_sms(p), out);
    for (size_t i = 0; i < p->nscratch; i++) {
        const plan_scratch *S = &p->scratch[i];
        kbuf_printf(out, "    %s = _kopt_plan_torch.%s((", S->name, S->zero ? "zeros" : "full");
        for (size_t d = 0; d < S->ndim; d++) {
            plan_expr_emit(S->shape[d], out);
            kbuf_puts(out, ", ");
        }
        kbuf_printf(out, ")%s%s, dtype=_kopt_plan_torch.%s, device=%s.device)\n", S->zero ? "" : ", ",
                    S->zero ? "" : POISON[S->dtype], DTYPES[S->dtype], dev);
    }
    for (size_t i = 0; i < p->nlaunches; i++) {
        const plan_launch *L = &p->launches[i];
        const char *ind = L->bindable ? "        " : "    ";
        if (L->bindable) emit_direct(L, i, out);
        kbuf_printf(out, "%s%s[(", ind, L->kernel);
        for (size_t g = 0; g < L->ngrid; g++) {
            plan_expr_emit(L->grid[g], out);
            kbuf_puts(out, ", ");
        }
        kbuf_puts(out, ")](");
        for (size_t a = 0; a < L->nargs; a++) {
            emit_arg(&L->args[a], out);
            kbuf_puts(out, ", ");
        }
        for (size_t a = 0; a < L->ncx; a++) {
            kbuf_printf(out, "%s=", L->cx[a].name);
            emit_arg(&L->cx[a], out);
            kbuf_puts(out, ", ");
        }
        kbuf_printf(out, "num_warps=%d", L->num_warps);
        if (L->num_stages) kbuf_printf(out, ", num_stages=%d", L->num_stages);
        kbuf_puts(out, ")\n");
    }
}

void plan_emit(const launch_plan *p, kbuf *out) {
    kbuf fn = KBUF_INIT;
    emit_launch(p, &fn);
    kbuf_puts(out, "# kopt: the launcher kopt wrote from KOPT_PLAN (form P)\n"
                   "import torch as _kopt_plan_torch\n"
                   "import triton as _kopt_plan_triton\n\n\n");
    if (strstr(kbuf_str(&fn), "_kopt_plan_np2(")) /* next_pow2 (plan_expr_emit), where the plan uses it */
        kbuf_puts(out, "def _kopt_plan_np2(n):\n"
                       "    return 1 << (n - 1).bit_length() if n > 0 else 0\n\n\n");
    kbuf_append(out, fn.data, fn.len);
    kbuf_free(&fn);
}

/* ---------- lowering: form P's file rules, then the launcher ---------- */

static int lerr(kerr *e, int line, const char *what) {
    return kerr_set(e, KOPT_E_CANDIDATE,
                    "line %d: %s; a plan-form candidate (form P) holds only imports of triton, "
                    "triton.language and math, @triton.jit functions, constants and KOPT_PLAN",
                    line, what);
}

/* Form P's imports: triton, triton.language[.*] and math; from Inductor's runtime only its Triton
 * helpers by from-import (`from torch._inductor.runtime import triton_helpers`, `from
 * torch._inductor.runtime.triton_helpers import libdevice, math as tl_math`, hints), as
 * Inductor's own kernel sources have them. What the kernels then use of them is gate 1's. */
static int import_ok(const cand_import *im) {
    const char *m = im->module;
    if (!strcmp(m, "triton") || !strcmp(m, "math") || !strcmp(m, "triton.language") ||
        !strncmp(m, "triton.language.", 16))
        return 1;
    if (!im->name) return 0;
    if (!strcmp(m, "torch._inductor.runtime"))
        return !strcmp(im->name, "triton_helpers") || !strcmp(im->name, "triton_heuristics");
    return !strcmp(m, "torch._inductor.runtime.triton_helpers") || !strcmp(m, "torch._inductor.runtime.hints");
}

/* `NAME = literal`, `NAME: annotation = literal` or `NAME = tl.constexpr(literal)`. */
static int constant_ok(const candidate *c, const cand_def *d) {
    size_t t0 = d->tok0;
    if (c->toks[t0].kind != PYT_NAME) return 0;
    size_t eq = t0 + 1;
    if (pytok_is_op(c->text, &c->toks[eq], ":")) {
        while (eq < d->body0 && !pytok_is_op(c->text, &c->toks[eq], "=")) {
            if (c->toks[eq].kind != PYT_NAME && !pytok_is_op(c->text, &c->toks[eq], ".") &&
                !pytok_is_op(c->text, &c->toks[eq], ":"))
                return 0;
            eq++;
        }
    }
    if (!pytok_is_op(c->text, &c->toks[eq], "=") || eq + 1 != d->body0) return 0;
    size_t pos = d->body0;
    pyval *v = NULL;
    kerr e = {0};
    if (pylit_parse_tokens(c->text, c->toks, c->ntoks, &pos, &v, &e)) return 0;
    int ok = c->toks[pos].kind == PYT_NEWLINE || c->toks[pos].kind == PYT_END;
    const pyval *lit = v;
    if (ok && v->kind == PYV_CALL && v->n == 1 && v->nkw == 0) {
        kbuf b = KBUF_INIT;
        ok = pyval_dotted(v->base, &b) &&
             (!strcmp(kbuf_str(&b), "tl.constexpr") || !strcmp(kbuf_str(&b), "triton.language.constexpr"));
        kbuf_free(&b);
        lit = v->items[0];
    }
    ok = ok && (lit->kind == PYV_INT || lit->kind == PYV_FLOAT || lit->kind == PYV_BOOL || lit->kind == PYV_STR ||
                lit->kind == PYV_NONE);
    pyval_free(v);
    return ok;
}

/* Every top-level statement of c on form P's allowlist (plan.h). */
static int check_file(const candidate *c, kerr *e) {
    for (size_t i = 0; i < c->nimports; i++) {
        const cand_import *im = &c->imports[i];
        if (!import_ok(im)) {
            char *w = kasprintf("imports %s", im->module);
            int rc = lerr(e, im->line, w);
            free(w);
            return rc;
        }
    }
    for (size_t i = 0; i < c->ndefs; i++) {
        const cand_def *d = &c->defs[i];
        if (!strncmp(d->name, "_kopt", 5) || !strcmp(d->name, "launch")) {
            char *w = kasprintf("the name %s is kopt's", d->name);
            int rc = lerr(e, d->line, w);
            free(w);
            return rc;
        }
        if (d->kind == CAND_DEF_CLASS) return lerr(e, d->line, "a class");
        if (d->kind == CAND_DEF_FUNC) {
            if (!d->jit || d->heuristic) return lerr(e, d->line, "a function that is not a plain @triton.jit kernel");
            int decorators = 0;
            for (size_t t = d->tok0; t < d->tok1 && pytok_is_op(c->text, &c->toks[t], "@"); decorators++) {
                while (t < d->tok1 && c->toks[t].kind != PYT_NEWLINE) t++;
                t++;
            }
            if (decorators != 1) return lerr(e, d->line, "a decorator other than @triton.jit");
        }
    }
    /* statement by statement at module level */
    for (size_t i = 0; i < c->ntoks; i++) {
        uint8_t f = c->tflags[i];
        if (!(f & CTOK_STMT_START) || !(f & CTOK_MODULE_LEVEL)) continue;
        const pytok *t = &c->toks[i];
        int line = (int)t->line;
        if (f & (CTOK_IN_IMPORT | CTOK_DECORATOR | CTOK_IN_JIT)) continue; /* checked above */
        if (t->kind == PYT_STRING) {                                       /* a docstring: a lone string statement */
            size_t j = i + 1;
            while (c->toks[j].kind == PYT_STRING) j++;
            if (c->toks[j].kind != PYT_NEWLINE && c->toks[j].kind != PYT_END)
                return lerr(e, line, "an expression statement");
            continue;
        }
        const cand_def *d = NULL;
        for (size_t k = 0; k < c->ndefs && !d; k++)
            if (c->defs[k].tok0 == i) d = &c->defs[k];
        if (!d) return lerr(e, line, "a statement that is not a definition");
        if (d->kind == CAND_DEF_FUNC) continue;
        if ((int)(d - c->defs) == c->plan_def) {
            if (c->toks[i].kind != PYT_NAME || !pytok_is_op(c->text, &c->toks[i + 1], "=") || d->body0 != i + 2)
                return lerr(e, line, "KOPT_PLAN must be assigned as `KOPT_PLAN = {...}`");
            continue;
        }
        if (!constant_ok(c, d))
            return lerr(e, line, "an assignment that is not a constant (a literal or tl.constexpr(literal))");
    }
    return 0;
}

int plan_of(const candidate *c, launch_plan **out, kerr *e) {
    *out = NULL;
    if (c->plan_def < 0) return kerr_set(e, KOPT_E_CANDIDATE, "line 1: no KOPT_PLAN");
    int rc = check_file(c, e);
    if (rc) return rc;
    const cand_def *d = &c->defs[c->plan_def];
    size_t pos = d->body0;
    pyval *v = NULL;
    kerr pe = {0};
    if (pylit_parse_tokens(c->text, c->toks, c->ntoks, &pos, &v, &pe))
        return kerr_set(e, KOPT_E_CANDIDATE, "KOPT_PLAN is not a literal: %s", pe.msg);
    if (c->toks[pos].kind != PYT_NEWLINE && c->toks[pos].kind != PYT_END) {
        pyval_free(v);
        return kerr_set(e, KOPT_E_CANDIDATE, "line %d: KOPT_PLAN: text after the dict", (int)c->toks[pos].line);
    }
    rc = plan_parse(c, v, out, e);
    pyval_free(v);
    return rc;
}

int plan_lower(const candidate *c, char **out, launch_plan **plan, size_t *launcher_off, kerr *e) {
    *out = NULL;
    if (plan) *plan = NULL;
    launch_plan *p = NULL;
    int rc = plan_of(c, &p, e);
    if (rc) return rc;
    const cand_def *d = &c->defs[c->plan_def];
    /* the file with the plan's statement blanked (line breaks kept), then the launcher */
    kbuf b = KBUF_INIT;
    kbuf_append(&b, c->text, d->off);
    for (size_t i = d->off; i < d->off + d->len && i < c->len; i++)
        if (c->text[i] == '\n' || c->text[i] == '\r') kbuf_append(&b, &c->text[i], 1);
    kbuf_append(&b, c->text + d->off + d->len, c->len - d->off - d->len);
    kbuf_puts(&b, "\n\n\n");
    if (launcher_off) *launcher_off = b.len;
    plan_emit(p, &b);
    if (plan) *plan = p;
    else plan_free(p);
    *out = kbuf_steal(&b);
    return 0;
}
