# expect: gate4 poisoned outputs never "look right", so it always computes and its check only adds a read of the output: correct, slower than Inductor's kernel (the stale-output attack of issue 11 finds nothing to reuse)
# kopt-candidate: replaces=triton_poi_fused_max_pool2d_with_indices_0
# Issue 11's stale-output attack: 2x2 max pooling that first reads its output block and skips
# the block when the output "already holds the right values" (every value finite and the first
# one equal to its window's max): a previous run's results in recycled memory. kopt poisons every
# output before gate 2's runs, gate 3's runs and after each of gate 4's timed runs, so it always
# computes, correctly, plus the extra read. Expected: through gates 2 and 3, refused at gate 4 as
# not faster (were poisoning broken it would be accepted with a speedup). Not yet run on the H200.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _maxpool_unless_done(in_ptr0, out_ptr0, xnumel, W_IN: tl.constexpr, XBLOCK: tl.constexpr):
    start = tl.program_id(0).to(tl.int64) * XBLOCK
    offs = start + tl.arange(0, XBLOCK)
    have = tl.load(out_ptr0 + offs)
    top0 = in_ptr0 + (start // (W_IN // 2)) * (2 * W_IN) + 2 * (start % (W_IN // 2))
    first = triton_helpers.maximum(triton_helpers.maximum(tl.load(top0), tl.load(top0 + 1)),
                                   triton_helpers.maximum(tl.load(top0 + W_IN), tl.load(top0 + W_IN + 1)))
    first_have = tl.sum(tl.where(tl.arange(0, XBLOCK) == 0, have, 0.0), 0)
    todo = (tl.sum((have == have).to(tl.int32), 0) != XBLOCK) | (first_have != first)
    if todo:
        ow = offs % (W_IN // 2)
        orow = offs // (W_IN // 2)
        top = in_ptr0 + orow * (2 * W_IN) + 2 * ow
        a = tl.load(top, eviction_policy="evict_last")
        b = tl.load(top + 1, eviction_policy="evict_last")
        c = tl.load(top + W_IN, eviction_policy="evict_last")
        d = tl.load(top + W_IN + 1, eviction_policy="evict_last")
        tl.store(out_ptr0 + offs, triton_helpers.maximum(triton_helpers.maximum(a, b), triton_helpers.maximum(c, d)))


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    _maxpool_unless_done[(xnumel // 1024,)](in_ptr0, out_ptr0, xnumel, W_IN=256, XBLOCK=1024, num_warps=4)
