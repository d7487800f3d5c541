/* ncu.h — Nsight Compute metrics for the profiler, when `ncu` is usable; a clean fallback to
 * event timing when it is not (no ncu on PATH, no permission to read counters, a failure).
 *
 * ncu_profile runs
 *   ncu --clock-control none --csv --page raw --metrics <NCU_METRICS> -k regex:^triton_
 *       <python> <kopt root>/worker/ncu_run.py <module> <args>
 * as an argument vector (fork/execvp, never a shell: paths may hold any character), `ncu` being
 * $KOPT_NCU when set (one executable, searched in PATH), in a process group of its own with
 * stdin and stderr on /dev/null, killed with its group after timeout_s (<= 0: 300 s); and it
 * parses its CSV into {kernel name: {"dram_pct", "sm_pct", "occupancy_pct", "registers",
 * "time_ns"}} keeping the last profiled launch of each kernel (the first call may autotune).
 * ncu_parse_csv is the pure parser (unit-tested on recorded output shapes).
 * Ownership: *out is a new reference for the caller.
 */
#ifndef KOPT_NCU_H
#define KOPT_NCU_H

#include <jansson.h>

#include "util/err.h"

#define NCU_METRICS                                                                                     \
    "gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,"                       \
    "sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active," \
    "launch__registers_per_thread"

/* 1 when `ncu --version` (or `$KOPT_NCU --version`) runs and exits 0. */
int ncu_available(void);

/* Profile module's call() on the saved args (python: NULL or "" for $KOPT_PYTHON or python3).
 * KOPT_E_WORKER when ncu cannot be run, times out or gives no kernel row. */
int ncu_profile(const char *python, const char *module, const char *args, double timeout_s, json_t **out, kerr *e);

/* Parse ncu's `--csv --page raw` output. KOPT_E_WORKER when no kernel row is found. */
int ncu_parse_csv(const char *text, json_t **out, kerr *e);

#endif
