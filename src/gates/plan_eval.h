/* plan_eval.h — a form-P plan evaluated for one concrete launch: integer expressions with Python's
 * semantics (floor division and modulo, triton.cdiv, next_power_of_2), the lets in order, and each
 * launch's Triton specialisation (the signature types of its runtime arguments and the values of
 * its constexprs) -- what the machine-code check compiles (src/gates/machine.h).
 *
 * Values come from the caller: integer parameters by name, each pointer parameter's Triton type
 * ("*fp32", default when not given), shape and strides (contiguous unless given), the SM count. Integer
 * arguments are typed as Triton types them (i32 when they fit, else i64; a value of 1 becomes the
 * constexpr 1); pointer alignment (Triton's divisibility-by-16 specialisation) is not modelled.
 *
 * Ownership: plan_values holds borrowed name strings and fixed arrays; a plan_spec is filled
 * into caller storage and holds copies (plan_spec_free releases them).
 */
#ifndef KOPT_PLAN_EVAL_H
#define KOPT_PLAN_EVAL_H

#include <stddef.h>

#include "gates/plan.h"
#include "util/err.h"

#define PLAN_MAX_VALUES 64

typedef struct plan_values {
    size_t nints;
    const char *int_names[PLAN_MAX_VALUES]; /* parameters, then lets (plan_eval_lets adds them) */
    long long ints[PLAN_MAX_VALUES];
    size_t nptrs;
    const char *ptr_names[PLAN_MAX_VALUES];
    const char *ptr_types[PLAN_MAX_VALUES]; /* "*fp32", "*bf16", ... (NULL: "*fp32") */
    long long shapes[PLAN_MAX_VALUES][PLAN_MAX_DIMS];
    size_t ndims[PLAN_MAX_VALUES]; /* 0: shape unknown */
    long long strides[PLAN_MAX_VALUES][PLAN_MAX_DIMS];
    int has_strides[PLAN_MAX_VALUES];    /* else contiguous */
    int ptr_misaligned[PLAN_MAX_VALUES]; /* 1: its data pointer is known not to be 16-byte aligned
                                            (else taken as aligned, as torch allocates) */
    long long sms;                       /* sm_count(); 0: unknown */
} plan_values;

/* Evaluate x; an unknown name, shape or SM count, a division by zero or an overflow is an error
 * naming what is missing. */
int plan_expr_eval(const plan_expr *x, const plan_values *v, long long *out, kerr *e);

/* Evaluate p's lets in order into v (each becomes an integer name) and its checks (a failing one
 * is an error naming it). */
int plan_eval_lets(const launch_plan *p, plan_values *v, kerr *e);

/* CUDA's limits on a grid: up to 2^31 - 1 programs along x, 65535 along y and z. */
#define PLAN_GRID_MAX_X 2147483647LL
#define PLAN_GRID_MAX_YZ 65535LL
/* The most programs a grid may have along dimension `dim` (0 = x). */
long long plan_grid_max(size_t dim);

/* Whether x has a value without any names (no parameter, shape or SM count): 1 with it in *out. */
int plan_expr_constant(const plan_expr *x, long long *out);

/* A fault of x that no values avoid: a division, modulo or cdiv by a part without names that is
 * zero, or literals that overflow (KOPT_E_CANDIDATE, e); 0 when there is none. */
int plan_expr_const_fault(const plan_expr *x, kerr *e);

/* p's launch for the values v, after plan_eval_lets filled them: every scratch size >= 0, every
 * grid size within 0 and CUDA's limit for its dimension, every expression argument and constexpr
 * evaluated. The first fault is KOPT_E_CANDIDATE naming the launch, its kernel and its line (a
 * launch that Triton or the driver would refuse only when it runs); a missing value KOPT_E_USAGE. */
int plan_eval_launches(const launch_plan *p, const plan_values *v, kerr *e);

/* One launch's specialisation. */
typedef struct plan_spec {
    char *kernel;
    size_t nargs;
    char *arg_names[PLAN_MAX_ARGS + PLAN_MAX_ARGS]; /* every parameter of the kernel, declared order */
    size_t nsig;
    char *sig_names[PLAN_MAX_ARGS];
    char *sig_types[PLAN_MAX_ARGS]; /* Triton types; "constexpr" for an argument fixed by value */
    int sig_div16[PLAN_MAX_ARGS];   /* Triton's divisibility specialisation ("D", tt.divisibility 16):
                                       a 16-byte aligned pointer, an integer multiple of 16 */
    size_t ncx;
    char *cx_names[PLAN_MAX_ARGS + PLAN_MAX_ARGS];
    char *cx_values[PLAN_MAX_ARGS + PLAN_MAX_ARGS]; /* JSON text: 1024, 0.5, true */
    int num_warps, num_stages;
} plan_spec;

/* The specialisation of launch `li` of p (a form-P candidate c as written), after
 * plan_eval_lets filled v. */
int plan_specialize(const candidate *c, const launch_plan *p, size_t li, const plan_values *v, plan_spec *out, kerr *e);
void plan_spec_free(plan_spec *s);

#endif
