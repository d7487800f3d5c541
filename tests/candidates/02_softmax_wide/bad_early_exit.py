# expect: gate2 the last block is never written: its program exits early (off-by-one guard), its 2048 outputs stay NaN-poisoned
# kopt-candidate: replaces=triton_poi_fused__softmax_exp_sub_4
# The final softmax pass exp(x - max) / sum with an early-exit guard meant for padding programs
# ("return if this block does not fit"), written with >= instead of >: the last real block
# returns at once. KernelBench's early exit / partial write. Not yet run on the H200.
import triton
import triton.language as tl

_ROW = 262144


@triton.jit
def _softmax_div_guarded(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, ROW: tl.constexpr, XBLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * XBLOCK
    if start + XBLOCK >= xnumel:               # BUG: should be >, and a partial block needs a mask
        return
    offs = start + tl.arange(0, XBLOCK)
    row = offs // ROW
    x = tl.load(in_ptr0 + offs)
    m = tl.load(in_ptr1 + row, eviction_policy="evict_last")
    s = tl.load(in_ptr2 + row, eviction_policy="evict_last")
    tl.store(out_ptr0 + offs, tl.exp(x - m) / s)


def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, stream=None):
    _softmax_div_guarded[(triton.cdiv(xnumel, 2048),)](in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, ROW=_ROW,
                                                       XBLOCK=2048, num_warps=8)
