/* tensor.h — comparison statistics of two tensors, as the worker computes them where the
 * tensors live (PROTOCOL.md `compare` and `isolate`), read into a typed struct the gates
 * decide on; and the tolerances the core hands the worker.
 *
 * Why the worker reduces: KernelBench-sized outputs are GBs; writing them to disk and reading
 * them back (what an earlier kopt did) cost tens of GB of disk per problem. The worker now
 * reduces each comparison to sufficient statistics under the tolerances the core passes, and
 * the core applies every threshold. The element rule (the same as before) is:
 *   both finite: match iff |got - ref| <= atol + rtol * |ref|;
 *   non-finite values must sit at the same places (NaN with NaN, +Inf with +Inf, -Inf with
 *   -Inf); any other pairing involving a non-finite value is a "non-finite mismatch".
 * max_abs_err / max_rel_err are over the finite pairs (rel: ref != 0); non-finite mismatches
 * are counted separately and make the NaN-aware max difference infinite. A comparison passes
 * when no element mismatches AND the relative L2 norm of the difference (finite pairs) is at
 * most rtol: elementwise atol alone lets an all-zero output pass wherever the reference is
 * smaller than atol (a softmax over 393K columns is ~4e-6 everywhere).
 *
 * Default tolerances (tensor_default_tol): float32 and float64 atol = rtol = 1e-4; float16 and
 * bfloat16 atol = rtol = 1e-2; integer dtypes and bool exact (0, 0); unknown dtypes as float32.
 *
 * Ownership: tensor_cmp is a plain value; strings returned by the *_str helpers and json_t
 * from tensor_tol_table are the caller's.
 */
#ifndef KOPT_TENSOR_H
#define KOPT_TENSOR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define KTENSOR_MAX_DIMS 16

typedef struct tensor_cmp {
    int pass;                         /* 1 when shapes match and there is no mismatch */
    int shape_mismatch;               /* 1 when the shapes differ (only shapes are filled) */
    char dtype[16], got_dtype[16];    /* the reference's and the compared tensor's dtypes */
    int ndim, got_ndim;
    int64_t shape[KTENSOR_MAX_DIMS];  /* the reference's shape */
    int64_t got_shape[KTENSOR_MAX_DIMS];
    size_t numel;
    double atol, rtol;                /* the tolerance the statistics were computed under */
    size_t n_mismatch;                /* elements outside tolerance, non-finite ones included */
    size_t n_nonfinite_mismatch;      /* mismatches where ref or got is NaN/Inf */
    size_t first_mismatch;            /* flat index, SIZE_MAX when none */
    double ref_at_first, got_at_first;
    size_t first_nonfinite_mismatch;  /* flat index, SIZE_MAX when none */
    double ref_at_first_nonfinite, got_at_first_nonfinite;
    double max_abs_err;               /* over finite pairs; 0 when none */
    size_t max_abs_index;             /* flat index (valid when max_abs_err > 0) */
    double ref_at_max_abs, got_at_max_abs;
    double max_rel_err;               /* |got-ref|/|ref| over finite pairs with ref != 0 */
    size_t max_rel_index;
    double ref_abs_max;               /* max |ref| over its finite elements */
    double sum_sq_ref, sum_sq_diff;   /* over finite pairs: a relative-norm test */
    double norm_ratio;                /* sqrt(sum_sq_diff / sum_sq_ref) (0 when both are 0) */
    int norm_ok;                      /* norm_ratio <= rtol, or an all-zero reference */
    int has_rel_err;                  /* 1 when the worker counted n_rel_err (asked for rel_err) */
    size_t n_rel_err;                 /* finite pairs off by > rel_err_thr |ref| and > rel_err_floor */
    double rel_err_thr, rel_err_floor;
} tensor_cmp;

/* Read the worker's statistics object (compare_stats) into *c, checking it: counts are
 * non-negative integers, indices within numel, the tolerance is the one asked for (atol, rtol;
 * a negative value skips that check). Numbers may be the strings "nan", "inf", "-inf". The
 * relative-error count (n_rel_err, rel_err_thr, rel_err_floor) is read when present
 * (has_rel_err). KOPT_E_WORKER when malformed. */
int tensor_cmp_from_json(const json_t *stats, double atol, double rtol, tensor_cmp *c, kerr *e);

/* max |got - ref| with NaN-awareness: INFINITY on a shape mismatch or any non-finite mismatch,
 * else max_abs_err. */
double tensor_cmp_max_diff(const tensor_cmp *c);

/* Row-major multi-index of a flat index of the reference's shape (c->ndim entries). */
void tensor_cmp_unravel(const tensor_cmp *c, size_t flat, int64_t *idx);

/* One line describing a comparison: "ok (512 elements, max abs err 1.2e-07)" or
 * "3 of 512 elements differ (1 non-finite); max abs err 0.5 at [2, 7] (ref 1, got 1.5),
 * first non-finite mismatch at [15, 31] (ref 0.25, got nan)". malloc'd. */
char *tensor_cmp_str(const tensor_cmp *c);

/* Default tolerances for a dtype (also accepts fp64/fp32/fp16/bf16). */
void tensor_default_tol(const char *dtype, double *atol, double *rtol);

/* The unit roundoff of a floating dtype (half its machine epsilon: bfloat16 2^-8, float16
 * 2^-11, float32 2^-24, float64 2^-53); 0 for integer, bool and unknown dtypes. */
double tensor_unit_roundoff(const char *dtype);

/* {"float64": [atol, rtol], "float32": ..., ...}: the default tolerance of every dtype, for the
 * worker's `isolate` (which compares each output under its reference's dtype). New reference. */
json_t *tensor_tol_table(void);

/* Bytes per element of a dtype, 0 when unknown. */
size_t tensor_itemsize(const char *dtype);

#endif
