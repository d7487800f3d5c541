/* tknobs.h — Triton's code-generation knobs: the environment variables Triton 3.6 reads that
 * change the machine code it generates for an NVIDIA GPU (an IR override, sanitizer or
 * instrumentation passes, debug mode, the interpreter, another arch or PTX version, the default
 * fp32 dot precision, FMA fusion, ptxas and LLVM options, a pass plugin, another libdevice).
 * kopt verifies candidates as Triton compiles them by default: the sandbox's compile runs with an
 * exact environment, the worker is started without these (worker.c), and the guard of a module
 * kopt writes runs Inductor's kernels instead of the candidates where one is set at its first
 * launch (guard.h). Not in the list: knobs that only dump, cache, time or locate things.
 *
 *   tknob_changed   whether NAME=VALUE sets a knob away from its default (0: not a knob, or at
 *                   its default: an unset variable, "", "0", "false", "off", "no" for the
 *                   default-off ones; "1", "true", "on", "yes" for TRITON_DEFAULT_FP_FUSION)
 *   tknobs_python   appends a Python tuple literal of (name, default_on) pairs, the guard's copy
 *
 * Ownership: nothing allocated; tknobs_python appends to the caller's buffer.
 */
#ifndef KOPT_TKNOBS_H
#define KOPT_TKNOBS_H

#include "util/buf.h"

int tknob_changed(const char *entry);
void tknobs_python(kbuf *out);

#endif
