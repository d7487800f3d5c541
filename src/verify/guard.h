/* guard.h — what ships is what was verified (issue 11 item 10; docs/CANDIDATES.md, "The guard").
 *
 * Contract: a replaced kernel NAME in a stitched module is a `_KoptGuard` that runs the verified
 * candidate only on the launch signature the gates ran it on and Inductor's own kernel on any
 * other (a user's other batch size gets Inductor's correct result, counted in the guard's
 * `_kopt_fallbacks`). Where the capture pinned every tensor's 16-byte alignment (what Triton
 * specialises a compiled kernel on, with the integer values the signature pins too), a matching
 * launch goes to the candidate's `run_verified` when it has one: a launcher kopt wrote from a
 * plan then launches its compiled kernels directly (plan.h, candidate_launch_shim), which cuts
 * Triton's per-launch dispatch from the call's host time. The signature is typed here (guard_sig)
 * and comes from the worker's
 * `capture_launch` answer (the only JSON edge: guard_sig_from_json); it is written into the
 * module as a Python literal, with the sha256 of the verified candidate file, in a header dict
 * `_KOPT_VERIFIED = {NAME: {'sha256': ..., 'signature': (...)}}`.
 *
 *   guard_sig_from_json  the capture's argument descriptions -> guard_sig (tensor: shape,
 *                        stride, dtype, device type and 16-byte alignment when described;
 *                        int/float/bool/None
 *                        scalars: their value; anything else (a repr string, a list): not
 *                        checked). A dtype or device that is not a plain lowercase word, or a
 *                        malformed description, is KOPT_E_WORKER.
 *   guard_sig_python     the signature as a Python tuple literal:
 *                        ('t', (shape...), (stride...), 'float32', 'cuda'|None[, True|False]),
 *                        ('i', 7),
 *                        ('f', 0.5), ('b', True), ('n',), ('*',).
 *   guard_wrap           the replacement text of NAME's statement: Inductor's statement kept
 *                        verbatim and aliased `_kopt_orig_NAME = NAME`, the candidate's stitched
 *                        text, `_kopt_cand_NAME = NAME`, the `_KoptGuard` shim and
 *                        `NAME = _KoptGuard(...)` reading its signature from _KOPT_VERIFIED.
 *   guard_env_from_json  the worker's ready event -> guard_env: the Triton version and GPU
 *                        compute capability the gates ran with (a version outside
 *                        [0-9A-Za-z.+_-], or a malformed capability, is KOPT_E_WORKER).
 *   guard_header         the header block (comments + `_KOPT_VERIFIED = {...}` +
 *                        `_KOPT_VERIFIED_ON = {'triton': ..., 'capability': ...}`) for entries.
 *                        At its first launch the guard compares the Triton it runs under and
 *                        the compute capability of its first tensor's device with
 *                        _KOPT_VERIFIED_ON and runs Inductor's kernel on any difference (what
 *                        the candidate's source compiles to depends on both; kopt verified one).
 *   guard_insert_header  module text with the header inserted at the top (after any
 *                        `from __future__` line, which Python requires first).
 *
 * Ownership: guard_sig owns its arrays and strings (guard_sig_free, NULL-safe, leaves it
 * empty); guard_entry borrows everything it points to; outputs are appended to caller-owned
 * kbufs; guard_shim returns a static string.
 */
#ifndef KOPT_GUARD_H
#define KOPT_GUARD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/err.h"

typedef enum {
    GUARD_TENSOR = 0,   /* shape, stride, dtype, device (when known) must match */
    GUARD_INT,          /* a Python int (not bool) equal to ival */
    GUARD_FLOAT,        /* a Python float equal to fval (NaN matches NaN) */
    GUARD_BOOL,         /* a Python bool equal to ival */
    GUARD_NONE,         /* None */
    GUARD_ANY,          /* not checked: the capture described it only by its repr */
} guard_kind;

typedef struct guard_arg {
    guard_kind kind;
    size_t ndim;              /* TENSOR */
    int64_t *shape, *stride;  /* TENSOR: ndim each (NULL when ndim == 0) */
    char *dtype;              /* TENSOR: "float32" (torch's name without "torch.") */
    char *device;             /* TENSOR: "cuda"; NULL when the capture did not say */
    int align16;              /* TENSOR: 1 its data pointer was 16-byte aligned at the capture, 0 not,
                                 -1 the capture did not say (then not checked) */
    long long ival;           /* INT, BOOL */
    double fval;              /* FLOAT */
} guard_arg;

typedef struct guard_sig {
    guard_arg *args;
    size_t nargs;
} guard_sig;

/* One replaced kernel's record in _KOPT_VERIFIED. */
typedef struct guard_entry {
    const char *kernel;
    const char *sha256;       /* 64 lowercase hex digits of the verified candidate file */
    const guard_sig *sig;
} guard_entry;

/* The environment the gates verified in. Unknown parts (a fake worker) are not checked. */
typedef struct guard_env {
    char triton[48];          /* triton.__version__ in the worker ("3.6.0"); "" unknown */
    int cap_major, cap_minor; /* its GPU's compute capability; -1 unknown */
} guard_env;

/* Fill *out from the worker's ready event (worker_info); NULL or absent fields: unknown. */
int guard_env_from_json(const json_t *ready, guard_env *out, kerr *e);

/* Parse the capture_launch answer's "args" array into *out (zeroed first). */
int guard_sig_from_json(const json_t *args, guard_sig *out, kerr *e);
void guard_sig_free(guard_sig *s);

/* Append the signature's Python tuple literal. */
void guard_sig_python(const guard_sig *s, kbuf *out);

/* Append NAME's guarded replacement text (see above). orig is Inductor's statement of NAME
 * (orig_len bytes), stitch the candidate's stitched text (gate1_check). A kernel name that is
 * not a Python identifier is KOPT_E_CANDIDATE; on error out is left as it was. */
int guard_wrap(const char *kernel, const char *orig, size_t orig_len, const char *stitch, kbuf *out, kerr *e);

/* The `_KoptGuard` class, under `if '_KoptGuard' not in globals():`, ending in '\n'. */
const char *guard_shim(void);

/* Append the header block for n entries (nothing when n == 0); env NULL: nothing recorded. */
void guard_header(const guard_entry *ents, size_t n, const guard_env *env, kbuf *out);

/* Append text[0..len) to out with header inserted at the top (after a `from __future__` line). */
void guard_insert_header(const char *text, size_t len, const char *header, kbuf *out);

#endif
