# expect: gate2 drops the between-segment term of the m2 combine: negligible for the model's own statistics (segment means within ~3e-3), wrong by O(1) on gate 2's redrawn N(0,1) segment statistics
# kopt-candidate: replaces=triton_per_fused_native_group_norm_1
# Combines the 5 segment statistics of each group as mean = sum(w * mean_i) / sum(w) and
# m2 = sum(m2_i), leaving out sum(w_i * (mean_i - mean)^2): the segments of an N(0,1) group have
# nearly equal means, so on the captured launch the error is ~1e-5 of m2, but gate 2 redraws the
# segment statistics themselves from N(0,1). Distribution-specialised numerics, caught in
# isolation. Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _combine_naive(in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1, xnumel, r0_numel, XBLOCK: tl.constexpr,
                   PARTS: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    parts = tl.arange(0, PARTS)[None, :]
    m = (rows < xnumel) & (parts < r0_numel)
    mean = tl.load(in_ptr0 + rows * r0_numel + parts, mask=m, other=0.0)
    m2 = tl.load(in_ptr1 + rows * r0_numel + parts, mask=m, other=0.0)
    w = tl.load(in_ptr2 + rows * r0_numel + parts, mask=m, other=0.0)
    tl.store(out_ptr0 + rows, (tl.sum(w * mean, 1) / tl.sum(w, 1))[:, None], mask=rows < xnumel)
    tl.store(out_ptr1 + rows, tl.sum(m2, 1)[:, None], mask=rows < xnumel)


def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1, xnumel, r0_numel, stream=None):
    _combine_naive[(triton.cdiv(xnumel, 32),)](in_ptr0, in_ptr1, in_ptr2, out_ptr0, out_ptr1, xnumel, r0_numel,
                                               XBLOCK=32, PARTS=8, num_warps=1)
