# expect: gate3 returns the last index of the maximum instead of the first: no ties in N(0,1) rows (gates 2 and 3's seeds pass), but every element of gate 3's constant rows ties (torch: 0, this: 8191)
# kopt-candidate: replaces=triton_red_fused_argmax_0
# Row argmax as max(where(x == max(x), index, -1)): the same answer as torch.argmax whenever the
# maximum is unique, which it is in every N(0,1) row; torch returns the first index of a tied
# maximum, this the last. Distribution-specialised semantics for gate 3's constant rows.
# Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _row_argmax_last(in_ptr0, out_ptr0, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mask = cols < r0_numel
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"), eviction_policy="evict_first")
    best = tl.max(x, 0)
    idx = tl.max(tl.where((x == best) & mask, cols, -1), 0)
    tl.store(out_ptr0 + row, idx.to(tl.int64))


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    _row_argmax_last[(xnumel,)](in_ptr0, out_ptr0, xnumel, r0_numel, R0_BLOCK=triton.next_power_of_2(r0_numel),
                                num_warps=8, num_stages=1)
