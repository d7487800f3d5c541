/* inspect.h — `kopt inspect`'s pipeline: compile a problem with torch.compile, capture and
 * parse Inductor's output module(s), check the artifact's round trip on the GPU, profile every
 * launch, time the whole model (eager / compiled default / max-autotune), and assemble one JSON
 * document (schema: docs/schema/inspect.md). The CLI renders that document as a table or prints
 * it with --json; tests drive the same function through the fake worker.
 *
 * Every number in the document is computed here from the worker's raw samples (medians,
 * shares, bytes, bandwidth, fraction of the measured ceiling, bootstrap intervals).
 * Ownership: *doc is a new reference for the caller. The worker is borrowed.
 */
#ifndef KOPT_INSPECT_H
#define KOPT_INSPECT_H

#include <jansson.h>

#include "profile/roofline.h"

#include "util/err.h"
#include "worker/worker.h"

typedef struct inspect_opts {
    const char *problem;      /* path to the KernelBench-format problem file */
    const char *workdir;      /* where modules, args and tensors go (must exist) */
    int max_autotune;         /* also time mode="max-autotune-no-cudagraphs" */
    int reps;                 /* profile repetitions (default 20) */
    int rounds;               /* interleaved timing rounds per variant (default 20) */
    int check_roundtrip;      /* run original vs emitted module and compare (default on) */
    void (*progress)(const char *stage, void *ctx);  /* optional progress callback */
    void *progress_ctx;
} inspect_opts;

/* Run the pipeline on a started worker. On failure returns the kopt code with e filled; when
 * a partial document exists (e.g. no Triton kernels), *doc is still set. */
int inspect_run(worker *w, const inspect_opts *o, json_t **doc, kerr *e);

/* Build the per-launch profile of one parsed graph from the worker's `profile` result and the
 * ceilings (exposed for tests). Returns a new JSON array of launch objects; sets *sum_ms to the
 * sum of per-launch medians. */
struct artifact;
json_t *inspect_launch_table(const struct artifact *a, const json_t *profile,
                             const json_t *ceilings, double *sum_ms);

/* Ceilings from the worker's `ceilings` result: {"copy_gbps","read_gbps","write_gbps",
 * "fp32_tflops","bf16_tflops","method"}. */
json_t *inspect_ceilings(const json_t *raw);
/* The roofline's view of those ceilings (bytes/s, flops/s). */
struct roof_ceilings inspect_roof_ceilings(const json_t *ceilings);
/* Bytes the graph itself must move at least: each call() input read once and each returned
 * buffer written once, sized from the arguments of the launches that pass them (`rows`:
 * inspect_launch_table's; a tensor no launch passes is not counted, so this is a lower bound).
 * Returns read + written; *bytes_written (when not NULL) the written part. The model's floor is
 * roof_memory_floor_s of the two. */
double inspect_io_bytes(const struct artifact *a, const json_t *rows, double *bytes_written);

/* Summary of a sample array: {"median_ms","p10_ms","p90_ms","n"}. */
json_t *inspect_time_summary(const json_t *samples);

#endif
