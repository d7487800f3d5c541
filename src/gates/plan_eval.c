/* plan_eval.c — see plan_eval.h. */
#include "gates/plan_eval.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find(const char *const *names, size_t n, const char *s) {
    for (size_t i = n; i-- > 0;) /* the latest binding of a name wins */
        if (names[i] && !strcmp(names[i], s)) return (int)i;
    return -1;
}

static int overflow(kerr *e) { return kerr_set(e, KOPT_E_CANDIDATE, "an expression overflows 64-bit integers"); }

/* Python's a // b and a % b for b != 0. */
static long long floordiv(long long a, long long b) {
    long long q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int shape_dim(const plan_values *v, const char *t, long long d, int stride, long long *out, kerr *e) {
    int i = find(v->ptr_names, v->nptrs, t);
    if (i < 0 || !v->ndims[i])
        return kerr_set(e, KOPT_E_USAGE, "the shape of %s is needed (give it: --shape %s=D0xD1...)", t, t);
    long long n = (long long)v->ndims[i];
    if (d < 0) d += n;
    if (d < 0 || d >= n) return kerr_set(e, KOPT_E_CANDIDATE, "dimension out of range for %s", t);
    if (!stride) {
        *out = v->shapes[i][d];
        return 0;
    }
    if (v->has_strides[i]) {
        *out = v->strides[i][d];
        return 0;
    }
    long long s = 1;
    for (long long k = n - 1; k > d; k--)
        if (__builtin_mul_overflow(s, v->shapes[i][k], &s)) return overflow(e);
    *out = s;
    return 0;
}

int plan_expr_eval(const plan_expr *x, const plan_values *v, long long *out, kerr *e) {
    long long a = 0, b = 0, r = 0;
    switch (x->kind) {
    case PX_NUM: *out = x->num; return 0;
    case PX_NAME: {
        int i = find(v->int_names, v->nints, x->name);
        if (i < 0)
            return kerr_set(e, KOPT_E_USAGE, "the value of %s is needed (give it: --value %s=N)", x->name, x->name);
        *out = v->ints[i];
        return 0;
    }
    case PX_SM_COUNT:
        if (v->sms <= 0) return kerr_set(e, KOPT_E_USAGE, "the SM count is needed (give it: --sms N)");
        *out = v->sms;
        return 0;
    case PX_SHAPE: return shape_dim(v, x->name, x->num, 0, out, e);
    case PX_STRIDE: return shape_dim(v, x->name, x->num, 1, out, e);
    case PX_NUMEL: {
        int i = find(v->ptr_names, v->nptrs, x->name);
        if (i < 0 || !v->ndims[i])
            return kerr_set(e, KOPT_E_USAGE, "the shape of %s is needed (give it: --shape %s=D0xD1...)", x->name,
                            x->name);
        long long n = 1;
        for (size_t k = 0; k < v->ndims[i]; k++)
            if (__builtin_mul_overflow(n, v->shapes[i][k], &n)) return overflow(e);
        *out = n;
        return 0;
    }
    default: break;
    }
    int rc = plan_expr_eval(x->a, v, &a, e);
    if (rc) return rc;
    if (x->kind == PX_NEG) {
        if (a == LLONG_MIN) return overflow(e);
        *out = -a;
        return 0;
    }
    if (x->kind == PX_NEXT_POW2) { /* triton.next_power_of_2: 0 for n <= 0 (Triton 3.6) */
        r = a > 0 ? 1 : 0;
        while (r && r < a)
            if (__builtin_mul_overflow(r, 2, &r)) return overflow(e);
        *out = r;
        return 0;
    }
    if ((rc = plan_expr_eval(x->b, v, &b, e))) return rc;
    switch (x->kind) {
    case PX_ADD:
        if (__builtin_add_overflow(a, b, &r)) return overflow(e);
        break;
    case PX_SUB:
        if (__builtin_sub_overflow(a, b, &r)) return overflow(e);
        break;
    case PX_MUL:
        if (__builtin_mul_overflow(a, b, &r)) return overflow(e);
        break;
    case PX_FLOORDIV:
    case PX_MOD:
    case PX_CDIV:
        if (b == 0) return kerr_set(e, KOPT_E_CANDIDATE, "a division by zero");
        if (a == LLONG_MIN && b == -1) return overflow(e);
        if (x->kind == PX_FLOORDIV) r = floordiv(a, b);
        else if (x->kind == PX_MOD) r = a - floordiv(a, b) * b;
        else { /* triton.cdiv(a, b) = (a + b - 1) // b */ long long t;
            if (__builtin_add_overflow(a, b - 1, &t)) return overflow(e);
            r = floordiv(t, b);
        }
        break;
    case PX_MIN: r = a < b ? a : b; break;
    case PX_MAX: r = a > b ? a : b; break;
    default: return kerr_set(e, KOPT_E_INTERNAL, "plan_expr_eval: unknown expression kind %d", (int)x->kind);
    }
    *out = r;
    return 0;
}

static int cmp_holds(plan_cmp op, long long a, long long b) {
    switch (op) {
    case PCMP_EQ: return a == b;
    case PCMP_NE: return a != b;
    case PCMP_LE: return a <= b;
    case PCMP_GE: return a >= b;
    case PCMP_LT: return a < b;
    case PCMP_GT: return a > b;
    }
    return 0;
}

int plan_eval_lets(const launch_plan *p, plan_values *v, kerr *e) {
    for (size_t i = 0; i < p->nlets; i++) {
        long long x;
        int rc = plan_expr_eval(p->lets[i].value, v, &x, e);
        if (rc) return kerr_wrap(e, "let %s", p->lets[i].name), rc;
        if (v->nints >= PLAN_MAX_VALUES) return kerr_set(e, KOPT_E_USAGE, "too many values");
        v->int_names[v->nints] = p->lets[i].name;
        v->ints[v->nints++] = x;
    }
    for (size_t i = 0; i < p->nchecks; i++) {
        long long a, b;
        int rc = plan_expr_eval(p->checks[i].a, v, &a, e);
        if (!rc) rc = plan_expr_eval(p->checks[i].b, v, &b, e);
        if (rc) return kerr_wrap(e, "check %s", p->checks[i].text), rc;
        if (!cmp_holds(p->checks[i].op, a, b))
            return kerr_set(e, KOPT_E_CANDIDATE, "the plan's check %s fails for these values (%lld, %lld)",
                            p->checks[i].text, a, b);
    }
    return 0;
}

long long plan_grid_max(size_t dim) { return dim ? PLAN_GRID_MAX_YZ : PLAN_GRID_MAX_X; }

/* No names at all: any part that reads one is not constant. */
static const plan_values NO_VALUES;

int plan_expr_constant(const plan_expr *x, long long *out) {
    kerr ie = {0};
    return !plan_expr_eval(x, &NO_VALUES, out, &ie);
}

int plan_expr_const_fault(const plan_expr *x, kerr *e) {
    if (!x) return 0;
    int rc = plan_expr_const_fault(x->a, e);
    if (!rc) rc = plan_expr_const_fault(x->b, e);
    if (rc) return rc;
    long long r;
    if ((x->kind == PX_FLOORDIV || x->kind == PX_MOD || x->kind == PX_CDIV) && plan_expr_constant(x->b, &r) && r == 0)
        return kerr_set(e, KOPT_E_CANDIDATE, "a division by zero");
    kerr ie = {0};
    if (plan_expr_eval(x, &NO_VALUES, &r, &ie) == KOPT_E_CANDIDATE) return kerr_set(e, KOPT_E_CANDIDATE, "%s", ie.msg);
    return 0;
}

int plan_eval_launches(const launch_plan *p, const plan_values *v, kerr *e) {
    long long x;
    int rc = 0;
    for (size_t i = 0; i < p->nscratch; i++)
        for (size_t d = 0; d < p->scratch[i].ndim; d++) {
            if ((rc = plan_expr_eval(p->scratch[i].shape[d], v, &x, e)))
                return kerr_wrap(e, "scratch %s, size %zu", p->scratch[i].name, d), rc;
            if (x < 0)
                return kerr_set(e, KOPT_E_CANDIDATE, "scratch %s: size %zu is %lld for these values",
                                p->scratch[i].name, d, x);
        }
    for (size_t i = 0; i < p->nlaunches; i++) {
        const plan_launch *L = &p->launches[i];
        for (size_t g = 0; g < L->ngrid && !rc; g++) {
            long long max = plan_grid_max(g);
            if ((rc = plan_expr_eval(L->grid[g], v, &x, e))) break;
            if (x < 0 || x > max)
                rc = kerr_set(e, KOPT_E_CANDIDATE,
                              "grid size %zu is %lld for these values, outside 0..%lld (CUDA's limit for that "
                              "dimension): the launch would fail when it runs",
                              g, x, max);
        }
        for (size_t a = 0; a < L->nargs + L->ncx && !rc; a++) {
            const plan_arg *A = a < L->nargs ? &L->args[a] : &L->cx[a - L->nargs];
            if (A->kind == PARG_EXPR) rc = plan_expr_eval(A->expr, v, &x, e);
        }
        if (rc) return kerr_wrap(e, "line %d: launch %zu (%s)", L->line, i, L->kernel), rc;
    }
    return 0;
}

static const char *int_type(long long x) { return (x >= INT_MIN && x <= INT_MAX) ? "i32" : "i64"; }

void plan_spec_free(plan_spec *s) {
    if (!s) return;
    free(s->kernel);
    for (size_t i = 0; i < s->nargs; i++) free(s->arg_names[i]);
    for (size_t i = 0; i < s->nsig; i++) free(s->sig_names[i]), free(s->sig_types[i]);
    for (size_t i = 0; i < s->ncx; i++) free(s->cx_names[i]), free(s->cx_values[i]);
    memset(s, 0, sizeof *s);
}

static void add_cx(plan_spec *s, const char *name, char *json) {
    s->cx_names[s->ncx] = kstrdup(name);
    s->cx_values[s->ncx++] = json;
}

/* The JSON text of an integer-valued argument, and its Triton type (value 1: a constexpr). */
static int int_arg(const plan_arg *a, const plan_values *v, long long *x, kerr *e) {
    if (a->kind == PARG_EXPR) return plan_expr_eval(a->expr, v, x, e);
    return kerr_set(e, KOPT_E_INTERNAL, "not an integer argument");
}

int plan_specialize(const candidate *c, const launch_plan *p, size_t li, const plan_values *v, plan_spec *s, kerr *e) {
    memset(s, 0, sizeof *s);
    if (li >= p->nlaunches) return kerr_set(e, KOPT_E_INTERNAL, "plan_specialize: no launch %zu", li);
    const plan_launch *L = &p->launches[li];
    cand_param *ps = NULL;
    size_t np = 0;
    for (size_t i = 0; i < c->ndefs; i++)
        if (c->defs[i].kind == CAND_DEF_FUNC && c->defs[i].jit && !strcmp(c->defs[i].name, L->kernel)) {
            candidate_def_params(c, i, &ps, &np);
            break;
        }
    if (!ps) return kerr_set(e, KOPT_E_CANDIDATE, "launch of %s: not a jit function of the file", L->kernel);
    s->kernel = kstrdup(L->kernel);
    for (size_t i = 0; i < np && i < sizeof s->arg_names / sizeof *s->arg_names; i++)
        s->arg_names[s->nargs++] = kstrdup(ps[i].name);
    s->num_warps = L->num_warps;
    s->num_stages = L->num_stages;
    int rc = 0;
    size_t ai = 0;
    for (size_t i = 0; i < np && !rc; i++) {
        if (ps[i].constexpr_) continue;
        if (ai >= L->nargs) {
            rc = kerr_set(e, KOPT_E_CANDIDATE, "launch of %s: too few arguments", L->kernel);
            break;
        }
        const plan_arg *a = &L->args[ai++];
        const char *type = NULL;
        int div16 = 0;
        if (a->kind == PARG_PARAM) {
            int pi = find(v->ptr_names, v->nptrs, a->name);
            if (strstr(a->name, "ptr")) {
                type = pi >= 0 && v->ptr_types[pi] ? v->ptr_types[pi] : "*fp32";
                div16 = !(pi >= 0 && v->ptr_misaligned[pi]);
            } else {
                int ii = find(v->int_names, v->nints, a->name);
                if (ii < 0) {
                    rc = kerr_set(e, KOPT_E_USAGE, "the value of %s is needed (give it: --value %s=N)", a->name,
                                  a->name);
                    break;
                }
                if (v->ints[ii] == 1) {
                    s->sig_names[s->nsig] = kstrdup(ps[i].name);
                    s->sig_types[s->nsig++] = kstrdup("constexpr");
                    add_cx(s, ps[i].name, kstrdup("1"));
                    continue;
                }
                type = int_type(v->ints[ii]);
                div16 = v->ints[ii] % 16 == 0;
            }
        } else if (a->kind == PARG_SCRATCH) {
            for (size_t k = 0; k < p->nscratch && !type; k++)
                if (!strcmp(p->scratch[k].name, a->name))
                    type = plan_triton_of_dtype(plan_dtype_name(p->scratch[k].dtype));
            if (!type) rc = kerr_set(e, KOPT_E_CANDIDATE, "unknown scratch %s", a->name);
            div16 = 1; /* kopt's launcher allocates it: torch's allocations are aligned */
        } else if (a->kind == PARG_EXPR) {
            long long x;
            if ((rc = int_arg(a, v, &x, e))) break;
            if (x == 1) {
                s->sig_names[s->nsig] = kstrdup(ps[i].name);
                s->sig_types[s->nsig++] = kstrdup("constexpr");
                add_cx(s, ps[i].name, kstrdup("1"));
                continue;
            }
            type = int_type(x);
            div16 = x % 16 == 0;
        } else if (a->kind == PARG_FLOAT) {
            type = "fp32";
        } else {
            type = "i1";
        }
        if (rc) break;
        s->sig_div16[s->nsig] = div16;
        s->sig_names[s->nsig] = kstrdup(ps[i].name);
        s->sig_types[s->nsig++] = kstrdup(type);
    }
    for (size_t k = 0; k < L->ncx && !rc; k++) {
        const plan_arg *a = &L->cx[k];
        if (a->kind == PARG_EXPR) {
            long long x;
            if ((rc = plan_expr_eval(a->expr, v, &x, e))) break;
            add_cx(s, a->name, kasprintf("%lld", x));
        } else if (a->kind == PARG_FLOAT) {
            add_cx(s, a->name, kasprintf("%.17g", a->f));
        } else if (a->kind == PARG_BOOL) {
            add_cx(s, a->name, kstrdup(a->b ? "true" : "false"));
        } else {
            rc = kerr_set(e, KOPT_E_CANDIDATE, "constexpr %s: not a value", a->name);
        }
    }
    /* every constexpr parameter is in the signature as "constexpr" */
    for (size_t i = 0; i < np && !rc; i++) {
        if (!ps[i].constexpr_) continue;
        int given = 0;
        for (size_t k = 0; k < s->ncx; k++) given |= !strcmp(s->cx_names[k], ps[i].name);
        if (!given) continue; /* its default: Triton fills it */
        s->sig_names[s->nsig] = kstrdup(ps[i].name);
        s->sig_types[s->nsig++] = kstrdup("constexpr");
    }
    candidate_params_free(ps, np);
    if (rc) plan_spec_free(s);
    return rc;
}
