# expect: gate2 race: the second half of the reduced dimension reads the output slot before the first half has written it (NaN poison or a stale value), then both store: outputs off or NaN, scheduling-dependent
# kopt-candidate: replaces=triton_red_fused_max_0
# Max over the middle dimension of (128, 4096, 256) split in two halves of 2048 rows on a second
# grid axis for parallelism; the half-1 program "prefetches" the half-0 partial from the output
# at its start and stores max(prefetched, own) at its end, the half-0 program stores its own
# partial: correct only if every half-0 program finished before its half-1 partner started.
# No ordering exists between programs: a race (KernelBench's race condition). Not yet run on
# the H200.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _middle_max_halves(in_ptr0, out_ptr0, xnumel, r0_numel, INNER: tl.constexpr, R_BLOCK: tl.constexpr,
                       K_BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    half = tl.program_id(1)
    kblocks = INNER // K_BLOCK
    b = (pid // kblocks).to(tl.int64)
    k = (pid % kblocks) * K_BLOCK + tl.arange(0, K_BLOCK)
    dst = out_ptr0 + b * INNER + k
    other = tl.load(dst)                        # the other half's partial, "already there"
    r = tl.arange(0, R_BLOCK)[:, None]
    rows = r0_numel // 2
    acc = tl.full([R_BLOCK, K_BLOCK], float("-inf"), tl.float32)
    for off in tl.range(half * rows, half * rows + rows, R_BLOCK):
        v = tl.load(in_ptr0 + b * r0_numel * INNER + (off + r) * INNER + k[None, :], eviction_policy="evict_first")
        acc = triton_helpers.maximum(acc, v)
    part = triton_helpers.max2(acc, 0)
    res = tl.where(half == 0, part, triton_helpers.maximum(other, part))
    tl.store(dst, res)


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    _middle_max_halves[(xnumel // 64, 2)](in_ptr0, out_ptr0, xnumel, r0_numel, INNER=256, R_BLOCK=64, K_BLOCK=64,
                                          num_warps=4)
