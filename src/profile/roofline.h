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
    double fp32_flops_per_s;   /* measured fp32 (no TF32) GEMM rate */
    double bf16_flops_per_s;   /* measured bf16 GEMM rate */
} roof_ceilings;

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

/* Achieved bandwidth (bytes/s) and its fraction of the copy ceiling; 0 when time is 0. */
double roof_bandwidth(const roof_traffic *t, double ms);
double roof_fraction_of_peak(const roof_traffic *t, double ms, const roof_ceilings *c, int is_bf16);

#endif
