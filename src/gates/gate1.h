/* gate1.h — the part of gate 1 that needs no GPU, for one parsed candidate against the kernel
 * it replaces (docs/CANDIDATES.md): the static rules, the launch interface, and the statement
 * that replaces the kernel's in the module (preceded by the launcher shim for form L). The
 * compile-only step is the worker's (`compile_candidate`); `kopt verify` and the optimizer's
 * screen both start here.
 *
 * gate1_check returns 1 when the candidate passes, with the replacement statement appended to
 * `stitch`; 0 when refused, with *why set to the reason (malloc'd, the caller frees it). When
 * `report` is not NULL it receives the static rules' report (new reference) whenever they ran.
 * When so->model_dtype is NULL, the dtype the static precision rules judge against is the
 * replaced kernel's own (gate1_kernel_dtype): a float16 kernel's replacement may name float16.
 */
#ifndef KOPT_GATE1_H
#define KOPT_GATE1_H

#include <jansson.h>

#include "artifact/artifact.h"
#include "gates/candidate.h"
#include "gates/static.h"
#include "util/buf.h"

/* The narrowest float type among k's pointer parameters: "float8", "bfloat16" or "float16";
 * NULL when they are all 32- or 64-bit floats or integers (a static string, never freed). */
const char *gate1_kernel_dtype(const art_kernel *k);

int gate1_check(const candidate *c, const art_kernel *k, const static_opts *so, kbuf *stitch, char **why,
                json_t **report);

#endif
