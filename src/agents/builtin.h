/* builtin.h — the built-in, deterministic, measurement-driven agents (agent.h), one module
 * per role. They need no LLM: every decision is a rule over measured numbers.
 *
 *   profiler   (builtin_profiler.c)   worker `ceilings` + `profile` of the instrumented module
 *                                     -> per-launch rows (profile/inspect.h's table)
 *   analyst    (builtin_analyst.c)    class per kernel and ranking by model time to gain
 *   planner    (builtin_planner.c)    launch-configuration plans (coarse grid, then a beam
 *                                     around the best measured configs), diversity rule
 *   executor   (builtin_executor.c)   Inductor's own kernel body re-launched with explicit
 *                                     configurations, as launcher-form candidates
 *   summarizer (builtin_summarizer.c) one-line experience per attempt
 *
 * The profiler needs the worker and the paths of the session: pass them at construction.
 * Ownership: constructors return a new agent (agent_free releases it); borrowed pointers given
 * to constructors must outlive the agent.
 */
#ifndef KOPT_BUILTIN_H
#define KOPT_BUILTIN_H

#include "agents/agent.h"
#include "agents/family.h"
#include "agents/kfacts.h"
#include "agents/kplan.h"
#include "util/buf.h"
#include "worker/worker.h"

typedef struct builtin_profiler_env {
    worker *w;
    const char *profile_module;   /* instrumented module (emit.h) */
    const char *module;           /* the module itself (for Nsight Compute) */
    const char *args;             /* its call() arguments */
    int reps;
    int use_ncu;                  /* add Nsight Compute counters when ncu is usable */
    const char *python;           /* python for ncu's target process (NULL: KOPT_PYTHON/python3) */
} builtin_profiler_env;

agent *builtin_profiler_new(const builtin_profiler_env *env);
agent *builtin_analyst_new(void);
agent *builtin_planner_new(void);
agent *builtin_executor_new(void);
agent *builtin_summarizer_new(void);
agent *builtin_new(agent_role role);   /* profiler excluded (needs its env): NULL */
/* The common part of the constructors: a "builtin" agent of `role` with vtable vt and impl. */
agent *builtin_agent(agent_role role, const agent_vtable *vt, void *impl);

/* The analyst's classes are agent.h's agent_class. */

/* Append Inductor's kernel source `src` as a form-P file's kernel part: every line but the
 * module-level `triton_helpers.set_driver_to_gpu()` call (a statement form P refuses; Triton's
 * active driver is the GPU's already), ending in '\n'. */
void builtin_plan_source(const char *src, kbuf *out);
/* Executor helper, exposed for tests: the kernel's Triton source with its
 * @triton_heuristics decorator removed (malloc'd), or NULL when there is none. */
char *builtin_strip_heuristics(const char *source, size_t dec_off, size_t dec_len);

/* Whether the kernel's runtime parameters are n, each starting with want[i] ("out_ptr" matches
 * out_ptr0, out_ptr2...). */
int builtin_params_are(const kfacts *k, const char *const *want, size_t n);

/* Inductor's FX graph fragment (the "Graph fragment" comment lines above a kernel, in the
 * kernel facts as `fragment`): builtin_fx_line, the line of the node calling `target`
 * ("aten.cumsum.default") or NULL; builtin_fx_rank, the rank of that node's `Tensor "f32[..]"`
 * type (0 when absent); builtin_fx_int_arg, the integer after the node's first argument
 * (`args = (%x, D` or a one-element list `args = (%x, [D]` -> D; 1 when read). */
const char *builtin_fx_line(const kf_strs *fragment, const char *target);
/* One FX node line ("%name : ... = call_function[target=torch.ops.T](args = (...), kwargs = {...})")
 * parsed by builtin_fx_parse (1 when it is one, its parts within the sizes below);
 * builtin_fx_arg copies argument i (top-level commas) of it into out (1 when there is one). */
enum { BUILTIN_FX_NAME = 64, BUILTIN_FX_ARGS = 256 };
typedef struct fx_node {
    char name[BUILTIN_FX_NAME];   /* without '%' */
    char target[BUILTIN_FX_NAME]; /* "aten.div.Tensor" */
    char args[BUILTIN_FX_ARGS];   /* the text between "args = (" and the matching ")" */
    char kwargs[BUILTIN_FX_NAME]; /* the text between "kwargs = {" and "}" ("" when too long) */
    int rank;                     /* the node's tensor rank (0: not given) */
} fx_node;
int builtin_fx_parse(const char *line, fx_node *n);
int builtin_fx_arg(const fx_node *n, int i, char *out, size_t cap);
int builtin_fx_rank(const char *line);
int builtin_fx_int_arg(const char *line, long long *out);

/* Kernel-fact readers shared by the families (builtin_common.c; a kernel's own facts are read
 * with kfacts.h's queries): builtin_ops_within, 1 when every ATen op of `ops` is one of
 * allowed[0..n) (bit j of *has set for each allowed[j] seen, n <= 32); builtin_fx_dim, the
 * dimension argument of the FX node calling `target` (`args = (%x, D`), made non-negative with
 * the node's own rank or else `rank`; -1 when the graph does not say; builtin_dims_keep, the
 * graph's word over a guess from sizes: with d >= 0 only d remains of dims[0..*ndims), none when
 * the sizes did not allow it; powers of two. */
/* The executor's answer for a family's candidates (cands stolen): {"candidates": cands} in *out
 * and 0; none: KOPT_E_CANDIDATE, "rewrite <tmpl>: no usable variant in the plan (<limits>)". */
int builtin_candidates_answer(json_t *cands, const char *tmpl, const char *limits, json_t **out, kerr *e);
int builtin_ops_within(const kf_strs *ops, const char *const *allowed, size_t n, unsigned *has);
int builtin_fx_dim(const kf_strs *fragment, const char *target, int rank);
void builtin_dims_keep(int *dims, int *ndims, int d);
/* Kernel-text readers (builtin_common.c): builtin_count, the occurrences of needle in s;
 * builtin_next_line, the line at p copied into buf (without its newline, cut to cap) and the
 * next line's start; builtin_block_end, the first line from p not indented by 8 spaces (the end
 * of a loop body that starts at p). */
int builtin_count(const char *s, const char *needle);
/* Whether a parameter's Triton type is a pointer to fp32, fp16 or bf16 ("*fp32"). */
int builtin_float_ptr(const char *t);
/* A line of kernel source (borrowed): its text without indentation and trailing blanks, and its
 * indentation. builtin_split_lines: src's non-blank lines into ls[0..cap), their count. */
typedef struct builtin_line {
    const char *p;
    size_t n;
    int ind;
} builtin_line;
size_t builtin_split_lines(const char *src, builtin_line *ls, size_t cap);
/* Appends to out the rendered template text `t` with the jit function text `helper` placed just
 * before t's "@triton.jit\ndef <kernel>(" (a function the kernel calls must be defined above it):
 * 0, else KOPT_E_INTERNAL (t has no such kernel; out unchanged). */
int builtin_splice_helper(kbuf *out, const char *t, const char *kernel, const char *helper, kerr *e);
/* Whether every conversion (`.to(`) in a kernel's source is to fp32, or to the output's 16-bit
 * type out_tl ("tl.bfloat16"; NULL: none allowed) in a line `A = B.to(out_tl)` whose next line
 * stores A: 16-bit values computed in fp32, nothing rounded narrower on the way, which a
 * template computing in fp32 would not repeat. 0 for a NULL source. */
int builtin_casts_to_fp32(const char *src, const char *out_tl);
/* Appends to s a KOPT_PLAN of one launch of k's own kernel (its name) over its runtime
 * parameters (the plan's parameters and the launch's arguments alike), grid expression `grid`,
 * constexprs `constexprs` (the dict's inside: "\"XBLOCK\": 1"), num_warps, one stage. */
void builtin_one_launch_plan(kbuf *s, const kfacts *k, const char *grid, const char *constexprs, long long num_warps);
/* Appends to cands (the executor's answer) a rewrite candidate: its label, its configuration
 * {"template": tmpl, knob: value, "num_warps": num_warps} and its source (copied). */
void builtin_push_rewrite(json_t *cands, const char *label, const char *tmpl, const char *knob, long long value,
                          long long num_warps, const char *src);
const char *builtin_next_line(const char *p, char *buf, size_t cap);
const char *builtin_block_end(const char *p);
long long builtin_next_pow2(long long v);
int builtin_pow2_in(long long v, long long lo, long long hi);

/* Rewrite templates (builtin_rewrite.c). builtin_rewrite_match: the family (agents/family.h)
 * whose template applies to a kernel (its planner context), or KF_NONE: "avg_pool" (Inductor's kernel of one average
 * pooling, builtin_pool.c); "cl_group_stats" (group-norm statistics over channels-last data,
 * builtin_groupstats.c); "row_softmax", "row_log_softmax" (ATen
 * softmax/log_softmax, 1 input, 1 output) or "row_layer_norm" (native_layer_norm with weight
 * and bias; *eps read from the kernel) for contiguous rows of at most 16384 elements;
 * "row_cumsum" (a plain fp32 cumsum over contiguous rows of any length); "aligned_chunks"
 * (builtin_aligned.c) for a split reduction whose chunks start off 16-byte boundaries; otherwise
 * "split_more" for a looped (triton_red) kernel of at most 4096 reductions of at least 16384
 * elements whose outputs are its final reduction stored as is: one sum/max/min accumulator,
 * or Welford's mean, m2 and weight.
 * builtin_rewrite_variants: the variants the planner proposes for a family (new array).
 * builtin_rewrite_act: the executor's candidates for a "rewrite" plan (*out new, as
 * agent_act), its "template" read with kfamily_parse. */
kfamily builtin_rewrite_match(const kfacts *k, double *eps);
/* Region templates (builtin_region.c) for region kernels (artifact/region.h; their context
 * has "kind": "region" and "members": [{name, aten_ops, source}]): "region_softmax",
 * "region_log_softmax" (softmax over contiguous rows of any length, the region reading the
 * input and writing the output, nothing else, fp32), "region_group_norm" and
 * "region_layer_norm" (native_group_norm / native_layer_norm with weight and bias, every member
 * computing that op alone, fp32/fp16/bf16; the group or row size and eps read from the member
 * kernels; a group norm also as Inductor fuses it around a convolution's output: the conv bias
 * added before, a GELU or ReLU after), "scan" (a flipped
 * cumsum) or "region_avg_pool" (a vendor region's average pooling), else KF_NONE. The
 * rewrite entry points above dispatch to them for templates named region_*. */
kfamily builtin_region_match(const kfacts *k);
json_t *builtin_region_variants(kfamily f, const kfacts *k);
int builtin_region_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* The scan family (builtin_scan.c): "scan" when the kernel (or region) is a cumulative sum the
 * scan template computes (inclusive, shifted, masked, reversed; over any dimension) or a
 * logcumsumexp (a kernel's, inclusive and forward), else NULL;
 * its variants (new array); its candidates for a "rewrite" plan (*out new, as
 * builtin_rewrite_act). builtin_rewrite_* and builtin_region_* dispatch to them. */
const char *builtin_scan_match(const kfacts *k);
json_t *builtin_scan_variants(const kfacts *k);
int builtin_scan_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* The aligned_chunks family (builtin_aligned.c): 1 when the kernel is the first of Inductor's
 * split reductions over a flat range whose chunks start off 16-byte boundaries. */
int builtin_aligned_match(const kfacts *k);
json_t *builtin_aligned_variants(const kfacts *k);
int builtin_aligned_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* The column_reuse family (builtin_colreuse.c): 1 when the kernel is a pointwise kernel over
 * rows whose column operands (1 MiB or more) it re-reads for every row; its variants (new array);
 * its candidates (*out new, as builtin_rewrite_act). builtin_rewrite_* dispatch to them. */
int builtin_colreuse_match(const kfacts *k);
json_t *builtin_colreuse_variants(const kfacts *k);
int builtin_colreuse_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* The middle-dimension softmax family (builtin_colsoftmax.c): "col_softmax" when the kernel is
 * a softmax / log-softmax over a dimension with something after it (<= 65536 long) of fp32, fp16
 * or bf16 (computed in fp32, stored in the input's type), or a softmax of x * c (c > 0, a
 * temperature) read line by line from Inductor's three-loop kernel, else NULL; its variants (new
 * array); its candidates (*out new). builtin_rewrite_* dispatch to them. */
const char *builtin_col_softmax_match(const kfacts *k);
json_t *builtin_col_softmax_variants(const kfacts *k);
int builtin_col_softmax_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* The middle-dimension logsumexp family (builtin_collse.c): 1 when builtin_col_logsumexp_match
 * holds for a looped or persistent reduction with runtime parameters (output, in_ptr0 in either order,
 * xnumel, r0_numel) of one float type, else 0; its variants (new array; none where fewer than
 * 128 programs would run); its candidates (*out new). builtin_rewrite_* dispatch to them. */
int builtin_col_lse_match(const kfacts *k);
json_t *builtin_col_lse_variants(const kfacts *k);
int builtin_col_lse_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* The row-normalize family (builtin_normalize.c): 1 when the kernel's FX graph fragment is
 * exactly y = x / (norm(x, last dim, keepdim) [+ eps]) with norm the L1 norm (*p = 1: sum of
 * |x|) or the L2 norm (*p = 2: sqrt of the sum of squares), *eps the constant added (0 when
 * none); else 0. */
int builtin_normalize_match(const kfacts *k, int *p, double *eps);
/* Instance norm (builtin_normalize.c): 1 when the kernel's FX graph fragment is exactly
 * var_mean (correction 0) over a [1, rows, ...] view's non-row dimensions, (x - mean) *
 * rsqrt(var + *eps), and, when *affine, times a weight and plus a bias of *channels values each
 * repeated over the batch (read from the kernel's `x0 % C` loads of in_ptr1 / in_ptr2); else 0. */
int builtin_instance_norm_match(const kfacts *k, double *eps, long long *channels, int *affine);
/* Layer norm over the trailing dimensions (builtin_normalize.c): 1 when the FX graph fragment is
 * exactly var_mean (correction 0) over every dimension but the first, (x - mean) * rsqrt(var +
 * *eps) * W + B with W and B graph inputs (converts to float32 and back around it, or none), and
 * the kernel loads in_ptr1 / in_ptr2 at the row's own positions; else 0. */
int builtin_layer_norm_match(const kfacts *k, double *eps);
/* Softmax statistics (builtin_normalize.c): 1 when the FX graph fragment is one
 * prims.prepare_softmax_online over the last dimension of a graph input with unit last stride,
 * and the source stores the row max to out_ptr0 and the sum to out_ptr1 (at x0), nothing else. */
int builtin_softmax_stats_match(const kfacts *k);
/* Softmax statistics with the row's sum of log-probabilities (builtin_normalize.c): 1 when the
 * kernel's ATen ops are exactly prepare_softmax_online, sub, _log_softmax and sum (a
 * label-smoothed cross-entropy's first kernel), it stores the reduce's max to out_ptr0 and sum to
 * out_ptr1, and its only other store, to out_ptr2, is the row sum of in_ptr0's row minus that max
 * minus log(that sum), read from the source line by line (up to conversions to fp32); else 0. */
int builtin_softmax_lsum_match(const kfacts *k);
/* logsumexp (builtin_normalize.c): 1 when the FX graph fragment is exactly ATen's logsumexp
 * decomposition over the last dimension of a graph input with unit last stride -- amax (keepdim),
 * where(|max| == inf, 0, max), log(sum(exp(x - that))) plus it (squeezed, or keepdim), with the
 * input converted to float32 and the result back (fp16/bf16) or no convert at all, or with an
 * fp32 input times a constant c > 0 first (logsumexp(x * c), Inductor's mul fused in front) --
 * and the source stores once, at x0, to in_out_ptr0 or an out_ptrN (its name into out[0..cap)),
 * loading no output; that c into *scale unless scale is NULL (1 when there is no mul, or no
 * match). */
int builtin_logsumexp_match(const kfacts *k, char *out, size_t cap, double *scale);
/* logsumexp over a dimension that is not the last (builtin_normalize.c): the same decomposition
 * over one dimension d < rank - 1 of a contiguous graph input (its placeholder's strides the
 * shape's suffix products), stored once to in_out_ptr0 or an out_ptrN (its name into
 * out[0..cap), d into *dim, the scale c into *scale), loading no output; else 0. The template
 * (col_logsumexp, builtin_collse.c) reads the input as (outer, C, inner). */
int builtin_col_logsumexp_match(const kfacts *k, char *out, size_t cap, int *dim, double *scale);
/* Pooling (builtin_pool.c): average and max pooling, one template (templates/kernels/pool.py.tmpl)
 * for these kinds of launch:
 *   - a vendor region (artifact/region.h) holding ATen's avg_pool2d / avg_pool3d: the region's
 *     ATen call (context "vendor_call") read for its literal arguments; family region_avg_pool;
 *   - Inductor's own Triton kernel of one pooling node, known from its FX graph fragment: exactly
 *     one pooling call_function with literal arguments and no keywords, on a graph input, or
 *     (1-D pooling) on the input's unsqueeze(-2) with a window of height 1 -- aten.avg_pool2d/3d
 *     (family avg_pool), or prims._low_memory_max_pool_with_offsets whose only use is its values
 *     (getitem 0; family max_pool); runtime parameters (in_ptr0, out_ptr0 | in_out_ptr0 first,
 *     xnumel[, r0_numel]).
 * builtin_pool_match: 1 when the launch is one of these with arguments the template computes
 * (no ceil_mode, padding at most half the (dilated) window, a window of at most 343 elements) over
 * (N, C, spatial...) tensors of one type among fp32/fp16/bf16 whose output size is the pooling's,
 * *ps filled; else 0. Variants (new array) and candidates (*out new) as the other families;
 * builtin_region_* dispatch to them for region_avg_pool, builtin_rewrite_* for avg_pool and
 * max_pool. */
typedef struct pool_spec {
    int nd;                     /* 2 or 3 spatial dimensions */
    int max;                    /* max pooling (else average) */
    long long k[3], s[3], p[3]; /* window, stride, padding per spatial dimension */
    long long dl[3];            /* dilation (max pooling; 1 for average pooling) */
    int ceil, count_pad;        /* ceil_mode, count_include_pad (average pooling) */
    long long divisor;          /* divisor_override; 0: none */
    long long out_w;            /* the output's last dimension */
    const char *in, *out;       /* the input and output pointer parameters (static names) */
    int kernel;                 /* Inductor's Triton kernel (else a vendor region's launcher): its
                                   parameters end with xnumel */
    int out_first;              /* the output pointer is the first parameter (in_out_ptr0) */
    int r0numel;                /* ... and r0_numel after xnumel */
    int in3;                    /* 1-D pooling: input (N, C, L), output (N, C, 1, OL) */
} pool_spec;
int builtin_pool_match(const kfacts *k, pool_spec *ps);
/* The family of a matched launch: max_pool, avg_pool (Inductor kernels) or region_avg_pool. */
kfamily builtin_pool_family(const pool_spec *ps);
json_t *builtin_pool_variants(const kfacts *k);
int builtin_pool_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* Group-norm statistics over channels-last data (builtin_groupstats.c): Inductor's looped
 * reduction (in_ptr0[, in_ptr1 a bias], out_ptr0, out_ptr1, xnumel, r0_numel) whose FX graph
 * fragment is exactly var_mean (correction 0, keepdim) over dims [2, 3] of a reshape to
 * (N, G, CG, HW) of the input converted to float32 (of a convolution, whose bias the kernel
 * adds, or not), and whose source reads the input channels-last and stores Welford's mean to
 * out_ptr0 and m2 to out_ptr1; C = G * CG a power of two in [16, 1024], CG in [2, 64].
 * builtin_group_stats_match: 1 and *gs filled when the kernel is one, else 0; variants (new
 * array) and candidates (*out new) as the other families; template "cl_group_stats". */
typedef struct gs_spec {
    long long n, g, cg, hw; /* samples, groups, channels per group, pixels per sample */
    int bias;               /* a per-channel bias (in_ptr1) is added first */
} gs_spec;
int builtin_group_stats_match(const kfacts *k, gs_spec *gs);
json_t *builtin_group_stats_variants(const kfacts *k);
int builtin_group_stats_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* A layer norm or a softmax with a pointwise prologue (builtin_prologue.c): Inductor's looped
 * reduction of two loops (three for a softmax, below) over rows of r0_numel <= 16384
 * (xnumel * r0_numel < 2^31) whose runtime parameters are pointers (float, or a bool mask)
 * then xnumel and r0_numel, whose x index definitions are over xindex alone (one of them xindex itself: the row), whose first
 * loop is loads (at index expressions of those and the reduction index) and pointwise lines
 * feeding one reduction, and whose second loop re-reads the same loads and stores one row of a
 * float pointer. The layer norm (ATen native_layer_norm): the reduction is Welford's, the
 * second loop scales by a weight and shifts by a bias read at the reduction index, rsqrt of the
 * variance over r0_numel plus eps. The softmax (ATen _softmax, not _log_softmax): the reduction
 * is the online softmax's, the second loop stores exp(x - max) / sum; or three loops (the max;
 * the sum of exp(f(x - max)); exp(f(x - max)) / sum stored) with f a chain of pointwise lines
 * over x - max alone, the same in loops 2 and 3 (Inductor's scale), which becomes the jit
 * function _post(t) (t itself in the online form). The prologue's lines become a jit
 * function _prologue(pointers..., xindex, r0_index, r0_mask) in the candidate;
 * templates row_layer_norm_prologue and row_softmax_prologue. The matchers: 1 and *sp filled
 * (sp may be NULL; a filled one is released with builtin_prologue_free; w and b NULL for a
 * softmax), else 0. */
typedef struct prologue_spec {
    const char *ptrs[8]; /* the pointer parameters, in order (borrowed from the kfacts) */
    size_t nptrs;
    const char *w, *b, *out; /* the weight, bias and output pointers (borrowed) */
    double eps;
    kbuf helper; /* owned: the _prologue function's text */
} prologue_spec;
int builtin_ln_prologue_match(const kfacts *k, prologue_spec *sp);
int builtin_sm_prologue_match(const kfacts *k, prologue_spec *sp);
void builtin_prologue_free(prologue_spec *sp);
/* Either family's variants ({"rows", "num_warps"}) and candidates. */
json_t *builtin_prologue_variants(const kfacts *k);
/* The pointwise tail of Inductor kernel source `src` after the line that defines tmp name `var`:
 * every following line up to the kernel's last must be `tmpN = <pointwise expression>` over var,
 * the tail's earlier names and constants only (tl / libdevice / tl_math / triton_helpers calls,
 * numbers; no load, store, reduction or index), and the last line `tl.store(..., R, None)` (or
 * xmask) of the tail's last value R. 1 with the tail's lines (indented 4, var renamed t) appended
 * to *post and R's name into ret (of cap bytes; "t" where var itself is stored), else 0 and
 * nothing appended. *post stays the caller's. */
int builtin_pointwise_tail(const char *src, const char *var, kbuf *post, char *ret, size_t cap);
int builtin_prologue_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);
/* The eps of a layer norm kernel's source: the small constant (0 < eps < 0.01) of the last
 * tl.full([1, 1], ..) before its rsqrt; 0 if not found. */
double builtin_find_eps(const char *src);
json_t *builtin_rewrite_variants(kfamily f, const kfacts *k);
/* A second family worth offering for a kernel whose first (builtin_rewrite_match) is `first`:
 * split_more beside aligned_chunks where both apply (an unaligned split Welford or sum),
 * row_layer_norm_prologue beside row_layer_norm (more rows a program, 16-bit rows computed in
 * fp32); else KF_NONE. builtin_rewrite_act takes either. */
kfamily builtin_rewrite_second(const kfacts *k, kfamily first);
int builtin_rewrite_act(const kfacts *k, const kplan *plan, json_t **out, kerr *e);

#endif
