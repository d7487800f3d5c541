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
 * buffers>, stream=streamN)`, the region's aliases of external buffers as written (Inductor's
 * `buf4 = buf0; del buf0  # reuse` where a kernel writes its input's memory: call()'s later
 * lines use buf4) and the `del` of external names the region deleted. The
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
 * Vendor regions (region_vendor.c): a region can also be ONE ATen fallback call that a Triton
 * kernel may beat (region_vendor_op's allowlist: avg_pool2d/3d), `bufN = torch.ops.aten.OP.default(
 * x, <ints, bools, None, lists of ints>)` on a line of its own, x's dtype (fp32/fp16/bf16) and
 * the result's shape and stride stated in call() (an `assert_size_stride` of it or of a plain
 * alias). region_build(a, i, i, ...) on such a launch writes
 *
 *     # kopt-region: torch.ops.aten.OP.default
 *     # kopt-region-signature: in_ptr0:*fp32 out_ptr0:*fp32
 *     # kopt-region-aten: aten.OP
 *     # kopt-region-vendor: torch.ops.aten.OP.default(in_ptr0, <the literals>)
 *     def NAME__launch(in_ptr0, out_ptr0, stream=None):
 *         torch.ops.aten.OP.out(in_ptr0, <the literals>, out=out_ptr0)
 *     NAME = _KoptLaunch(NAME__launch)
 *
 * and replaces the call with `bufN = empty_strided_cuda(shape, stride, dtype)` and
 * `NAME.run(x, bufN)`: the same computation (the out= overload runs the same ATen kernel) into a
 * buffer call() allocates. A candidate bound to "torch.ops.aten.OP.default" replaces the first
 * such call.
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
/* The vendor region of launch li (first == last in region_build). */
int region_build_vendor(const artifact *a, int li, const char *name, kbuf *out, kerr *e);
/* The index of `callee` in the vendor regions' allowlist, or -1. */
int region_vendor_op(const char *callee);
/* Whether a candidate's binding names a region: "K1+K2+..." or one allowlisted ATen call. */
int region_is_binding(const char *binding);

/* Whether `binding` ("K1+K2+...") lists region kernel k's member kernels, in order. */
int region_binding_is(const art_kernel *k, const char *binding);

/* The launch indices [*first, *last] of the region that launches exactly the kernels `names`
 * (n >= 2) in this order, each once, with nothing else launched between them; or, n == 1, of
 * the first call of the allowlisted ATen op names[0] (a vendor region). 0, or
 * KOPT_E_CANDIDATE with the reason. */
int region_find_launches(const artifact *a, const char *const *names, size_t n, int *first, int *last, kerr *e);

#endif
