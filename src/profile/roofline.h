/* roofline.h — bytes, flops and the position under the roofline, computed from the argument
 * descriptions the worker returns for each launch (PROTOCOL.md, op `profile`).
 *
 * Bytes are the *floor*: every tensor argument read once and every output written once
 * (an in-place argument counts as both). A kernel that re-reads its input moves more than this,
 * which is exactly the headroom kernelopt looks for. Flops are counted only where they are
 * well defined (vendor GEMM/BMM/convolution); for Triton kernels they are 0 (memory-bound
 * pointwise/reduction code: the byte floor is the bound that matters).
 *
 * Pure functions over borrowed json_t; nothing is allocated.
 */
#ifndef KOPT_ROOFLINE_H
#define KOPT_ROOFLINE_H

#include <jansson.h>
#include <stddef.h>

typedef enum { ROLE_IN, ROLE_OUT, ROLE_INOUT, ROLE_SCALAR } roof_role;

typedef struct roof_traffic {
    double bytes_read;
    double bytes_written;
    double flops;
} roof_traffic;

typedef struct roof_ceilings {
    double copy_bytes_per_s;   /* measured device-to-device copy: bytes read + written per s */
    double read_bytes_per_s;   /* measured read-only streaming (0: unknown, the copy rate is used) */
    double write_bytes_per_s;  /* measured write-only streaming (0: unknown) */
    double fp32_flops_per_s;   /* measured fp32 (no TF32) GEMM rate */
    double tf32_flops_per_s;   /* measured fp32 GEMM rate with TF32 allowed (0: unknown) */
    double bf16_flops_per_s;   /* measured bf16 GEMM rate */
    int tf32_matmul;           /* the worker's torch.backends.cuda.matmul.allow_tf32: 1, 0, -1 unknown */
    int tf32_cudnn;            /* the worker's torch.backends.cudnn.allow_tf32: 1, 0, -1 unknown */
} roof_ceilings;

/* The arithmetic a library call's flops run at, which picks the matrix rate of its floor. */
typedef enum {
    ROOF_MATH_FP32 = 0,        /* fp32 on CUDA cores (TF32 off): fp32_flops_per_s */
    ROOF_MATH_TF32,            /* fp32 data on TF32 tensor cores: tf32_flops_per_s */
    ROOF_MATH_BF16,            /* bf16/fp16 tensor cores: bf16_flops_per_s */
} roof_math;

/* Bytes of one argument description ({"nbytes":..} for tensors, {"value":..} for scalars). */
double roof_arg_bytes(const json_t *arg);

/* Traffic of a Triton launch: roles[i] is the role of the launch's i-th runtime argument (the
 * kernel signature without its constexpr entries); args is the worker's array for the launch.
 * Arguments beyond nroles are ignored; roles beyond the array are ignored. */
void roof_triton_traffic(const roof_role *roles, size_t nroles, const json_t *args, roof_traffic *t);

/* Traffic of a vendor call `op` ("mm", "addmm", "bmm", "baddbmm", "convolution", ...): args is
 * the worker's array; out_index is the position in args of the output tensor (the out= buffer
 * or the assigned result), or -1 if unknown. Every other tensor argument counts as read. */
void roof_vendor_traffic(const char *op, const json_t *args, int out_index, roof_traffic *t);
/* 2 * batch * M * K * N of a matrix product of described tensors a [..., M, K] and b [..., K, N]
 * (the batch: a's leading dimensions); 0 when either is missing or has rank below 2. */
double roof_gemm_flops(const json_t *a, const json_t *b);

/* The memory floor (seconds) of moving t's bytes: max(read / read rate, written / write rate,
 * (read + written) / the best of the three rates). Reads alone stream faster than a copy, so
 * a kernel that mostly reads is held to the read rate, not the copy rate (which Inductor's own
 * kernels can beat). Unknown read/write rates fall back to the copy rate. 0 without rates. */
double roof_memory_floor_s(double bytes_read, double bytes_written, const roof_ceilings *c);

/* The arithmetic of a library call `op` whose first tensor argument has dtype `dtype` (NULL:
 * unknown): bfloat16/float16 -> BF16; fp32 convolutions -> TF32 unless the worker reported
 * cudnn.allow_tf32 off (torch's default is on); fp32 GEMMs (mm, addmm, bmm, baddbmm) -> TF32
 * unless matmul.allow_tf32 was reported off (torch's default); anything else -> FP32. An
 * unknown setting takes the faster arithmetic: a floor may be low, never above the call. */
roof_math roof_vendor_math(const char *op, const char *dtype, const roof_ceilings *c);

/* The matrix rate (flops/s) of `m`; TF32 without a measured rate falls back to the bf16 rate
 * (never slower on tensor-core GPUs), so the floor stays a lower bound. 0: unknown. */
double roof_math_rate(const roof_ceilings *c, roof_math m);

/* The floor (seconds) of t: the larger of its memory floor and its flops at the measured
 * matrix rate of `m`. */
double roof_floor_s(const roof_traffic *t, const roof_ceilings *c, roof_math m);

/* Achieved bandwidth (bytes/s), and floor / time (1 = at the floor); 0 when time is 0. */
double roof_bandwidth(const roof_traffic *t, double ms);
double roof_fraction_of_peak(const roof_traffic *t, double ms, const roof_ceilings *c, roof_math m);

#endif
