# expect: gate2 wrong grid: sized from r0_numel (5) instead of xnumel (128), one program of 32 rows; rows 32-127 stay NaN-poisoned
# kopt-candidate: replaces=triton_per_fused_prepare_softmax_online_1
# Combines the 5 partial maxima of each row, 32 rows per program, but sizes the grid with the
# reduced extent (r0_numel) where the row count (xnumel) belongs: KernelBench's wrong grid.
# Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _combine_partial_max(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK: tl.constexpr, PARTS: tl.constexpr):
    rows = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)[:, None]
    parts = tl.arange(0, PARTS)[None, :]
    m = (rows < xnumel) & (parts < r0_numel)
    v = tl.load(in_ptr0 + rows * r0_numel + parts, mask=m, other=float("-inf"))
    tl.store(out_ptr0 + rows, tl.max(v, 1)[:, None], mask=rows < xnumel)


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    grid = (triton.cdiv(r0_numel, 32),)        # BUG: xnumel
    _combine_partial_max[grid](in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK=32, PARTS=8, num_warps=1)
