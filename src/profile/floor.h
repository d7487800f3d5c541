/* floor.h — the model's floor (the least time a module doing the model's work can take on this
 * GPU) and the check that no measured time falls below a floor.
 *
 * The model floor is the larger of
 *   - the I/O floor: the graph's own inputs read once and outputs written once
 *     (inspect_io_bytes) at the memory rates (roof_memory_floor_s), and
 *   - the library calls' floor: each vendor call's own floor (its flops at the matrix rate of
 *     its arithmetic, roof_vendor_math; its bytes at the memory rates), never more than the
 *     call was measured to take in the module itself (a call that beats its floor proves the
 *     rate is not its ceiling: another algorithm or arithmetic). Inductor's Triton GEMM
 *     templates (a row with flops: arg_A @ arg_B) count here as library calls do.
 * The memory rates are the measured ceilings, raised where a Triton kernel of the module moved
 * its bytes faster (each of read, write and total raised only as far as that kernel proves):
 * a kernel counts as such evidence only when it moves at least FLOOR_EVIDENCE_L2_TIMES times
 * the L2 cache (else part of it came from cache) and needs at most FLOOR_PLAUSIBLE_RATE times
 * the best measured rate (beyond that its counted bytes are more than it moves).
 *
 * The floor check lists every measured time below its floor — a module's against the model
 * floor, a kernel's or a library call's against its own floor at the measured ceilings — with
 * why that floor is wrong. Nothing is hidden: a floor that the evidence raised still reports
 * the kernels that beat the measured rates.
 *
 * Launch rows are inspect_launch_table's (kind, name, time_ms, bytes_read, bytes_written,
 * flops, frac_of_ceiling, math). Pure functions over borrowed JSON.
 */
#ifndef KOPT_FLOOR_H
#define KOPT_FLOOR_H

#include <jansson.h>
#include <stddef.h>

#include "profile/roofline.h"

#define FLOOR_EVIDENCE_L2_TIMES 4.0 /* a kernel proves rates only when it moves >= 4x the L2 */
#define FLOOR_PLAUSIBLE_RATE 1.25   /* ... and needs <= 1.25x the best measured memory rate */

typedef struct floor_model {
    roof_ceilings rates;     /* the measured ceilings, memory rates raised by the evidence */
    int rate_from;           /* the launch (row index) that raised them most; -1: none */
    double rate_from_gbps;   /* that launch's (read + written) / time, GB/s */
    double io_floor_ms;      /* the graph's I/O at `rates` (0: no I/O bytes known) */
    double vendor_floor_ms;  /* sum of min(floor, measured time) over the library calls */
    double kernels_floor_ms; /* sum of time x frac_of_ceiling over every launch */
    double floor_ms;         /* max(io_floor_ms, vendor_floor_ms) */
} floor_model;

/* The model floor of a profile. `launches`: the rows; io_read / io_written: the graph's own
 * bytes; `measured`: the ceilings as measured; l2_bytes: the GPU's L2 (0: unknown, then
 * no kernel is taken as evidence). */
void floor_model_compute(const json_t *launches, double io_read, double io_written, const roof_ceilings *measured,
                         double l2_bytes, floor_model *out);

typedef struct floor_module_time {
    const char *what; /* "torch.compile default", "max-autotune", "kopt's module" */
    double time_ms;   /* measured median (<= 0: not measured, skipped) */
} floor_module_time;

/* The check as a new JSON object:
 *   {"ok": bool, "checked": n, "below": [{"what", "kind": "module"|"kernel"|"library call",
 *     "time_ms", "floor_ms", "ratio": time / floor, "why"}], "why": "..."}
 * Modules are judged against f->floor_ms (when > 0), launches against their own floors at
 * the measured ceilings (time x frac_of_ceiling). */
json_t *floor_check(const json_t *launches, const floor_model *f, const roof_ceilings *measured, double l2_bytes,
                    const floor_module_time *mods, size_t nmods);

/* The names of the Triton kernels a check (floor_check's object, borrowed) lists below their own
 * floor, as a new JSON array (empty when none): kernels whose counted floor is wrong, which the
 * analyst must not call near their ceiling on its evidence. */
json_t *floor_check_kernels_below(const json_t *check);

#endif
