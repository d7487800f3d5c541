/* sass_gate.h — gate 1's machine-code precision check inside `kopt verify` (opt-in:
 * `--sass-check`): a form-P candidate's plan specialised with the launch the gates captured
 * (each argument's dtype, shape and strides, or its integer value), compiled in the sandbox,
 * disassembled and classified (gates/machine.h). Not form P: nothing to check (form L's launcher
 * decides its launches at run time).
 *
 * Ownership: sass_gate_check adds a "sass" object to the caller's gate record and returns a
 * malloc'd refusal reason (caller frees) or NULL.
 */
#ifndef KOPT_SASS_GATE_H
#define KOPT_SASS_GATE_H

#include <jansson.h>

#include "gates/plan.h"
#include "gates/plan_eval.h"
#include "util/err.h"
#include "gates/machine.h"
#include "verify/guard.h"

/* The values of plan p's parameters from the captured launch sig (by position), and the classes
 * its tensors' dtypes allow. KOPT_E_CANDIDATE when the plan's parameters do not match the
 * launch's arguments. */
int sass_gate_values(const launch_plan *p, const guard_sig *sig, plan_values *v, unsigned *allowed, kerr *e);

/* Check candidate file `path` (as written; its sha256 must still be `sha`, the one gate 1 judged
 * and the report records, else it is refused as changed) for the launch `sig`. Returns 0 with *why NULL
 * (passes, or not form P) or set (refused: the machine code, or a kernel that does not compile
 * in the sandbox); an error code (no python/triton/cuobjdump, the sandbox) when the check cannot
 * run. allow_precision_change records the classes without refusing. server: the caller's compile
 * server (machine.h; NULL or closed: a sandbox process per compile). kernel (the replaced
 * kernel's name) and keep_dir, when not NULL: the file is compiled with its names as the stitched
 * module has them and each launch's cubin, metadata and spec kept in keep_dir (machine.h), and
 * *kept is set to 1 when they were (a form-P file that passed). */
int sass_gate_check(const char *path, const char *sha, const guard_sig *sig, const char *python, machine_server *server,
                    int allow_precision_change, const char *kernel, const char *keep_dir, int *kept, json_t *g1,
                    char **why, kerr *e);

#endif
