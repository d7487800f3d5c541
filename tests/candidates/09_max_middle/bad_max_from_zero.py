# expect: gate3 wrong on all-negative inputs only
# kopt-candidate: replaces=triton_red_fused_max_0
# Form P. good_tiled64.py's kernel with its running max started at 0 instead of -inf (and 0 as
# the masked fill): the max of 4096 N(0,1) values is positive, so gates 2 and 3's N(0,1) draws
# cannot tell; gate 3's all-negative adversarial set (inputs -(|x|+1)) must refuse it.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _middle_max(in_ptr0, out_ptr0, xnumel, r0_numel, INNER: tl.constexpr,
                R_BLOCK: tl.constexpr, K_BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    kblocks = INNER // K_BLOCK
    b = pid // kblocks
    k = (pid % kblocks) * K_BLOCK + tl.arange(0, K_BLOCK)[None, :]
    r = tl.arange(0, R_BLOCK)[:, None]
    base = b.to(tl.int64) * r0_numel * INNER
    acc = tl.zeros([R_BLOCK, K_BLOCK], tl.float32)   # the attack: a max started at 0
    for off in tl.range(0, r0_numel, R_BLOCK):
        m = (off + r) < r0_numel
        v = tl.load(in_ptr0 + base + (off + r) * INNER + k, mask=m, other=0.0, eviction_policy="evict_first")
        acc = triton_helpers.maximum(acc, v)
    res = triton_helpers.max2(acc, 0)
    tl.store(out_ptr0 + b * INNER + tl.arange(0, K_BLOCK) + (pid % kblocks) * K_BLOCK, res)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_middle_max", "grid": ["xnumel // 64"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
                  "constexprs": {"INNER": 256, "R_BLOCK": 64, "K_BLOCK": 64}, "num_warps": 4, "num_stages": 2}],
}
