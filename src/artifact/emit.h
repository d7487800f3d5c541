/* emit.h — write an artifact back out as Python, optionally edited.
 *
 * Contract: artifact_emit appends to `out` the module's original text with these edits, and
 * nothing else changed:
 *   - replacements: each {kernel, text} replaces the whole `NAME = async_compile.triton(...)`
 *     statement span of kernel `kernel` (its comment block and the line's end stay);
 *   - instrument: every launch (Triton .run and vendor call) i gets, on the line before it,
 *     `<indent>_kopt_prof.pre(<i>)` (Triton launches: `_kopt_prof.pre(<i>, lambda: (<args>,))`,
 *     the same tuple as post's, evaluated only by a harness that captures the launch's inputs)
 *     and on the line after it
 *     `<indent>_kopt_prof.post(<i>, lambda: (<arg>, <arg>, ...,))`, the args being its
 *     positional argument texts, then its keyword argument texts except stream=, then (vendor
 *     calls) the name it is assigned to. A launch that shares its line with other statements
 *     (`a; launch`) is wrapped inline with `;` instead. Zero args give `lambda: ()`.
 * With o == NULL or no options it reproduces the original bytes exactly. Emitting never
 * reorders or loses text. Errors: a replacement naming no kernel, or the same kernel twice,
 * is KOPT_E_CANDIDATE; overlapping edits (a bug) are KOPT_E_INTERNAL. On error `out` is left
 * as it was.
 *
 * Ownership: the caller owns `a`, `o` (and the strings it points to) and `out`; nothing is
 * retained after the call.
 */
#ifndef KOPT_EMIT_H
#define KOPT_EMIT_H

#include <stddef.h>

#include "artifact/artifact.h"
#include "util/buf.h"
#include "util/err.h"

typedef struct art_replacement {
    const char *kernel;   /* kernel (variable) name */
    const char *text;     /* the new statement text */
} art_replacement;

typedef struct art_emit_opts {
    const art_replacement *replace;
    size_t nreplace;
    int instrument;
} art_emit_opts;

int artifact_emit(const artifact *a, const art_emit_opts *o, kbuf *out, kerr *e);

/* The lambda tuple of launch l as written by the instrumentation: "(a, b, c,)" or "()". */
char *art_launch_probe_args(const artifact *a, const art_launch *l);
/* Its number of items (positional args, keyword args but stream=, the assigned name). */
/* Probe item i's text, in that order; NULL past the end. */
const char *art_launch_probe_item(const art_launch *l, size_t i);
size_t art_launch_probe_count(const art_launch *l);
/* The item holding a vendor call's output: the assigned name, else the out= keyword; -1 if
 * neither. */
int art_launch_probe_out(const art_launch *l);

#endif
