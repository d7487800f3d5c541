/* tensor.h — tensor files written by the worker (PROTOCOL.md "Tensor files") and their
 * comparison, in C without Python.
 *
 * A tensor file PREFIX.bin holds the elements in row-major order, little-endian, in one of the
 * dtypes float64, float32, float16, bfloat16, int64, int32, int16, int8, uint8, bool; the JSON
 * description {"path","dtype","shape","numel"} says how to read it. tensor_load converts every
 * element to double (exact for all dtypes except int64 values beyond 2^53) and keeps the
 * original dtype and shape. A non-tensor output {"value": number|bool} loads as a 0-d tensor
 * (dtype float64, int64 or bool).
 *
 * Comparison (tensor_compare): shapes must match. For each element, both finite:
 * match iff |got - ref| <= atol + rtol * |ref|. Non-finite values must sit at the same places:
 * NaN matches only NaN, +Inf only +Inf, -Inf only -Inf; any other pairing involving a
 * non-finite value (e.g. NaN left in `got` by the worker's poison fill where `ref` is finite)
 * is a "non-finite mismatch". max_abs_err / max_rel_err are taken over the finite pairs only
 * (max_rel_err over pairs with ref != 0); non-finite mismatches are counted separately.
 *
 * Default tolerances (tensor_default_tol): float32 and float64 atol = rtol = 1e-4; float16 and
 * bfloat16 atol = rtol = 1e-2; integer dtypes and bool exact (0, 0); unknown dtypes as float32.
 *
 * Ownership: a ktensor owns `data`; tensor_free releases it and resets the struct (NULL-safe,
 * idempotent). Strings returned by the *_str helpers are malloc'd, owned by the caller.
 */
#ifndef KOPT_TENSOR_H
#define KOPT_TENSOR_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define KTENSOR_MAX_DIMS 16

typedef struct ktensor {
    double *data;                     /* numel elements, row-major; owned */
    size_t numel;                     /* product of shape (1 for a 0-d tensor) */
    int ndim;
    int64_t shape[KTENSOR_MAX_DIMS];
    char dtype[16];                   /* the dtype in the file ("float32", ...) */
} ktensor;

typedef struct tensor_cmp {
    int pass;                         /* 1 when shapes match and there is no mismatch */
    int shape_mismatch;               /* 1 when the shapes differ (nothing else is filled) */
    size_t numel;
    size_t n_mismatch;                /* elements outside tolerance, non-finite ones included */
    size_t n_nonfinite_mismatch;      /* mismatches where ref or got is NaN/Inf */
    size_t first_mismatch;            /* flat index, SIZE_MAX when none */
    size_t first_nonfinite_mismatch;  /* flat index, SIZE_MAX when none */
    double max_abs_err;               /* over finite pairs; 0 when none */
    size_t max_abs_index;             /* flat index (valid when max_abs_err > 0) */
    int64_t max_abs_pos[KTENSOR_MAX_DIMS]; /* multi-index of max_abs_index, ndim entries */
    double ref_at_max_abs, got_at_max_abs;
    double max_rel_err;               /* |got-ref|/|ref| over finite pairs with ref != 0 */
    size_t max_rel_index;
    int64_t max_rel_pos[KTENSOR_MAX_DIMS];
} tensor_cmp;

/* Read the tensor described by desc into *out (which is overwritten, not freed).
 * Errors: KOPT_E_WORKER for a malformed description (no path, unknown dtype, bad shape,
 * numel disagreeing with the shape, more than KTENSOR_MAX_DIMS dims) or a file whose size is
 * not numel x itemsize; KOPT_E_NOFILE when the file cannot be opened or read;
 * KOPT_E_INTERNAL for a {"value"} that is not a number or bool. */
int tensor_load(const json_t *desc, ktensor *out, kerr *e);

void tensor_free(ktensor *t);

/* Compare got against ref (see the top of this file). Returns 0 when the comparison was made
 * (verdict in res->pass); KOPT_E_CANDIDATE when the shapes differ (res->pass = 0,
 * res->shape_mismatch = 1, e names both shapes). The dtypes may differ. */
int tensor_compare(const ktensor *ref, const ktensor *got, double atol, double rtol,
                   tensor_cmp *res, kerr *e);

/* Load two tensor files (worker descriptions) and compare them; atol/rtol < 0 mean the
 * reference dtype's defaults (tensor_default_tol). A shape mismatch is a verdict
 * (res->shape_mismatch, pass 0), not an error: errors are only unreadable or malformed files.
 * When `where` is given and the comparison fails, *where is tensor_cmp_str's sentence
 * (malloc'd), else NULL. */
int tensor_compare_files(const json_t *ref, const json_t *got, double atol, double rtol, tensor_cmp *res,
                         char **where, kerr *e);

/* max |a - b| over all elements, NaN-aware: matching non-finite pairs (NaN/NaN, +Inf/+Inf,
 * -Inf/-Inf) count 0, any other pair involving a non-finite value, or a numel mismatch, gives
 * INFINITY. 0 for empty tensors. */
double tensor_max_abs_diff(const ktensor *a, const ktensor *b);

/* Default tolerances for a dtype (also accepts fp64/fp32/fp16/bf16). */
void tensor_default_tol(const char *dtype, double *atol, double *rtol);

/* Bytes per element of a dtype, 0 when unknown. */
size_t tensor_itemsize(const char *dtype);

/* Row-major multi-index of a flat index (t->ndim entries written to idx). */
void tensor_unravel(const ktensor *t, size_t flat, int64_t *idx);

/* "[4, 8]" for a shape; "[]" for a 0-d tensor. */
char *tensor_shape_str(const ktensor *t);

/* One line describing a comparison: "ok (512 elements, max abs err 1.2e-07)" or
 * "3 of 512 elements differ (1 non-finite); max abs err 0.5 at [2, 7] (ref 1, got 1.5),
 * first non-finite mismatch at [15, 31] (ref 0.25, got nan)". */
char *tensor_cmp_str(const ktensor *ref, const ktensor *got, const tensor_cmp *res);

#endif
