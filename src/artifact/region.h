/* region.h — several consecutive Triton launches of call() as one launcher (a "region"), so
 * that one candidate can replace them together (docs/CANDIDATES.md, "Regions"). A wide softmax
 * is five Inductor kernels (split max, combine, split sum, combine, normalise) that read the
 * input three times; a replacement that reads it once must replace all five at once.
 *
 * region_build(a, first, last, name, out, e) appends to `out` the module text of `a` with
 * call()'s launches first..last (indices into a->launches) moved into a module-level function,
 * semantically unchanged:
 *
 *     # kopt-region: K1 K2 ...                 (the kernels launched, in order)
 *     # kopt-region-signature: in_ptr0:*fp32 out_ptr0:*fp32 ...
 *     # kopt-region-aten: aten.exp, ...        (the ATen ops of its launches)
 *     def NAME__launch(in_ptr0, out_ptr0, stream=None):
 *         <the region's statements: internal allocations, launches, aliases, dels>
 *     NAME = _KoptLaunch(NAME__launch)
 *
 * (the region also takes the allocations and stream statements right before its first launch and
 * the `del` statements right after its last one) and, in call(), those statements replaced by the hoisted allocations of the region's
 * outputs, the last `streamN = get_raw_stream(..)` of the region (if any), `NAME.run(<external
 * buffers>, stream=streamN)` and the `del` of external names the region deleted. The
 * parameters are the region's external tensors: in_ptr<i> read and never written in the
 * region; out_ptr<i> written in it and used after it or defined outside it; in_out_ptr<i>
 * read before a region kernel writes it. Buffers used only inside the region are allocated
 * inside the function. artifact_parse reads such a function back as a kernel of kind
 * ART_K_REGION with that signature (art_region.c), so the whole pipeline (capture, isolation,
 * screening, stitching a form-L candidate in its place) treats the region as one kernel.
 *
 * Conditions (else KOPT_E_CANDIDATE with the reason): 0 <= first < last < nlaunches, all of
 * them Triton launches of known kernels; between them only allocations, plain aliases
 * (`b = a`), `del` and stream statements at the launches' nesting depth, none sharing a line
 * with a statement outside the region; pointer arguments are plain names; no region output is
 * an alias created inside the region; no region kernel reads a buffer allocated inside the
 * region before one writes it.
 *
 * Ownership: `a` is borrowed; `out` is the caller's (left as it was on error).
 */
#ifndef KOPT_REGION_H
#define KOPT_REGION_H

#include "artifact/artifact.h"
#include "util/buf.h"
#include "util/err.h"

/* Prefix of every region kernel's name. */
#define REGION_PREFIX "_kopt_region_"

int region_build(const artifact *a, int first, int last, const char *name, kbuf *out, kerr *e);

/* Whether `binding` ("K1+K2+...") lists region kernel k's member kernels, in order. */
int region_binding_is(const art_kernel *k, const char *binding);

/* The launch indices [*first, *last] of the region that launches exactly the kernels `names`
 * (n >= 2) in this order, each once, with nothing else launched between them. 0, or
 * KOPT_E_CANDIDATE with the reason. */
int region_find_launches(const artifact *a, const char *const *names, size_t n, int *first, int *last, kerr *e);

#endif
