/* plan.h — form P: a candidate as data, a Triton kernel source plus a declarative launch plan
 * (docs/CANDIDATES.md, "Form P"). kopt writes the host-side Python itself from the plan.
 *
 * Contract: a form-P file holds only imports of `triton`, `triton.language[...]`, `math` and
 * (from-imports only) Inductor's Triton helpers (`torch._inductor.runtime` triton_helpers /
 * triton_heuristics, `torch._inductor.runtime.triton_helpers`, `torch._inductor.runtime.hints`),
 * top-level @triton.jit functions (no other decorator), constants (`NAME = <literal>` or
 * `NAME = tl.constexpr(<literal>)`), docstrings, and one `KOPT_PLAN = {...}`: a dict literal
 *   {"params":   ["in_ptr0", "out_ptr0", "xnumel", ...],        the launcher's parameters
 *    "let":      {NAME: expr, ...},               optional, in order; later ones may use earlier
 *    "checks":   ["expr OP expr", ...],           optional (OP: == != <= >= < >): each must hold
 *                                                 or the launch raises (nothing is launched)
 *    "scratch":  [{"name", "shape": [expr...], "dtype", "zero": bool}],        optional
 *    "launches": [{"kernel": jit name, "grid": [expr, expr?, expr?], "args": [arg...],
 *                  "constexprs": {NAME: int | float | bool | expr}, "num_warps": 1..32 (power
 *                  of two), "num_stages": 1..8 (optional)}]}
 * where an expr is an int or a string over the integer parameters (names without "ptr") and the
 * names of "let", with + - * // % unary -, parentheses and cdiv(a, b), min(a, b), max(a, b),
 * next_pow2(a), shape(P, DIM), stride(P, DIM), numel(P) (P a pointer parameter, DIM an integer
 * literal, negative from the end) and sm_count() (the device's SMs: a check that every program
 * of a cooperative kernel is resident), integer literals at most 2^53; an arg is a parameter or
 * scratch name, an int, a float, a bool, or an expr string. Unknown keys,
 * names, dtypes or functions, a kernel that is not a jit function of the file, arguments that
 * do not fit its signature (runtime parameters positionally, every constexpr without a default
 * given by name, no other name), or limits exceeded (PLAN_MAX_*) are KOPT_E_CANDIDATE with a
 * message starting "line N: ".
 *
 * plan_lower checks a form-P candidate (parsed by candidate_parse with form CAND_FORM_P) and
 * returns the text kopt judges and ships instead: the file with the KOPT_PLAN statement blanked
 * (same line numbers for everything else), then kopt's launcher, `def launch(<params>,
 * stream=None)`, which computes the lets, raises ValueError when a check fails, allocates the
 * scratch buffers (at most PLAN_SCRATCH_FACTOR x the pointer arguments' bytes + PLAN_SCRATCH_SLACK_MIB
 * MiB, else it raises ValueError) on the first pointer parameter's device, fresh for each launch (zero-filled,
 * or poisoned: NaN, the integer type's minimum, 255 for uint8, True, so that no kernel finds a
 * previous launch's results in recycled memory) and launches each kernel as
 * `K[(g0, g1, g2)](args..., CONST=v, num_warps=w, num_stages=s)`. Called with
 * `_kopt_plan_go=F` (the guard does, on the signature the gates verified: guard.h, the shim's
 * run_verified in candidate.h) a bindable launch is instead
 * `F(i, (g0, g1, g2), (every parameter's value in declared order), (None for a runtime
 * parameter, the name for a constexpr, ...), w, s, stream)`: kopt's shim, which knows launch i's
 * kernel (candidate.h, plan_kernels), binds the compiled kernel once and launches it directly,
 * without Triton's per-call dispatch. On that path the checks and the scratch bound are skipped
 * (they read only shapes, strides and integers the guard pins, and gate 1's compile step ran them
 * on exactly those), except a check, or a scratch size, that reads sm_count() (directly or through
 * a let), which differs between GPUs.
 * That text is an ordinary form-L candidate: gate 1's rules, the interface check, stitching and
 * the guard treat it as one.
 *
 * Ownership: plan_lower returns a malloc'd NUL-terminated text (caller frees) and, when `plan`
 * is not NULL, the typed plan it lowered (caller plan_free's it; else freed inside); plan_parse hands back a launch_plan owned by the caller (plan_free,
 * NULL-safe); plan_emit appends to a caller's buffer.
 */
#ifndef KOPT_PLAN_H
#define KOPT_PLAN_H

#include <stddef.h>

#include "artifact/pylit.h"
#include "gates/candidate.h"
#include "util/buf.h"
#include "util/err.h"

#define PLAN_MAX_LAUNCHES 16
#define PLAN_MAX_SCRATCH 16
#define PLAN_MAX_LETS 16
#define PLAN_MAX_CHECKS 16
#define PLAN_MAX_ARGS 64
#define PLAN_MAX_DIMS 8
#define PLAN_MAX_EXPR_CHARS 256
#define PLAN_MAX_EXPR_DEPTH 32
/* The scratch a launch may ask for: PLAN_SCRATCH_FACTOR x the bytes of its pointer arguments +
 * PLAN_SCRATCH_SLACK_MIB MiB (the launcher raises ValueError beyond it, before allocating). */
#define PLAN_SCRATCH_FACTOR 4
#define PLAN_SCRATCH_SLACK_MIB 64

typedef enum {
    PX_NUM = 0,
    PX_NAME,
    PX_ADD,
    PX_SUB,
    PX_MUL,
    PX_FLOORDIV,
    PX_MOD,
    PX_NEG,
    PX_CDIV,
    PX_MIN,
    PX_MAX,
    PX_NEXT_POW2,
    PX_SHAPE,
    PX_STRIDE,
    PX_NUMEL,
    PX_SM_COUNT,
} plan_expr_kind;

/* The names an expression may use (borrowed arrays). */
typedef struct plan_names {
    const char *const *ints; /* integer parameters and "let" names */
    size_t nints;
    const char *const *ptrs; /* pointer parameters: in shape() / stride() / numel() only */
    size_t nptrs;
} plan_names;

/* An integer expression over the launcher's integer parameters. */
typedef struct plan_expr {
    plan_expr_kind kind;
    long long num;           /* PX_NUM; PX_SHAPE / PX_STRIDE: the dimension */
    char *name;              /* PX_NAME; PX_SHAPE / PX_STRIDE / PX_NUMEL: the tensor */
    struct plan_expr *a, *b; /* operands (b: binary kinds only) */
} plan_expr;

typedef enum {
    PDT_FLOAT32 = 0,
    PDT_FLOAT16,
    PDT_BFLOAT16,
    PDT_FLOAT64,
    PDT_INT8,
    PDT_INT16,
    PDT_INT32,
    PDT_INT64,
    PDT_UINT8,
    PDT_BOOL,
} plan_dtype;

typedef struct plan_scratch {
    char *name;
    plan_expr *shape[PLAN_MAX_DIMS];
    size_t ndim;
    plan_dtype dtype;
    int zero; /* zero-filled; else uninitialised (torch.empty) */
} plan_scratch;

typedef enum { PARG_PARAM = 0, PARG_SCRATCH, PARG_EXPR, PARG_FLOAT, PARG_BOOL } plan_arg_kind;

/* A launch argument or a constexpr value. */
typedef struct plan_arg {
    plan_arg_kind kind;
    char *name;      /* PARAM, SCRATCH; the constexpr's name for constexprs */
    plan_expr *expr; /* EXPR */
    double f;        /* FLOAT */
    int b;           /* BOOL */
} plan_arg;

typedef struct plan_launch {
    char *kernel; /* a @triton.jit function of the file */
    plan_expr *grid[3];
    size_t ngrid;
    plan_arg *args;
    size_t nargs;
    plan_arg *cx; /* constexprs, by name */
    size_t ncx;
    int num_warps;
    int num_stages; /* 0: Triton's default */
    int line;
    /* The kernel's parameters in declared order, each an index into args (>= 0) or -(1 + an
     * index into cx); bindable when every parameter is given (none left to its default): then
     * the launcher can hand the compiled kernel its arguments in that order (plan_emit). */
    int *order;
    size_t norder;
    int bindable;
} plan_launch;

typedef struct plan_let {
    char *name;
    plan_expr *value;
} plan_let;

typedef enum { PCMP_EQ = 0, PCMP_NE, PCMP_LE, PCMP_GE, PCMP_LT, PCMP_GT } plan_cmp;

typedef struct plan_check {
    plan_expr *a, *b;
    plan_cmp op;
    char *text; /* as written, for the error message */
} plan_check;

typedef struct launch_plan {
    char **params;
    size_t nparams;
    plan_let *lets;
    size_t nlets;
    plan_check *checks;
    size_t nchecks;
    int uses_sms; /* an expression calls sm_count() */
    plan_scratch *scratch;
    size_t nscratch;
    plan_launch *launches;
    size_t nlaunches;
    int line; /* the KOPT_PLAN statement's line */
} launch_plan;

/* Parse and check the KOPT_PLAN literal `v` of candidate c (form P). */
int plan_parse(const candidate *c, const pyval *v, launch_plan **out, kerr *e);
void plan_free(launch_plan *p);

/* Append the launcher kopt writes for p (ends in '\n'). */
void plan_emit(const launch_plan *p, kbuf *out);

/* The checked plan of form-P candidate c as written (candidate_parse_raw): the file's
 * allowlist, then plan_parse. */
int plan_of(const candidate *c, launch_plan **out, kerr *e);

/* The text kopt judges in place of form-P candidate c (see above); *plan (may be NULL) its plan. */
/* *launcher_off (when not NULL): the byte offset in *out where kopt's launcher begins (everything
 * before it is the candidate's file, everything from it kopt's own text). */
int plan_lower(const candidate *c, char **out, launch_plan **plan, size_t *launcher_off, kerr *e);

/* Parse an expression string (see above) over `names`. */
int plan_expr_parse(const char *s, const plan_names *names, plan_expr **out, kerr *e);
void plan_expr_free(plan_expr *x);
/* Append x as Python source. */
void plan_expr_emit(const plan_expr *x, kbuf *out);

const char *plan_dtype_name(plan_dtype d);
/* The plan dtype name of a Triton pointer type ("*fp32" -> "float32"); NULL for any other. */
const char *plan_dtype_of_triton(const char *type);
/* The other way: the Triton pointer type of a torch dtype name ("bfloat16" -> "*bf16"); NULL for
 * a dtype that is not a plan dtype. */
const char *plan_triton_of_dtype(const char *dtype);

#endif
