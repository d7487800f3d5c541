# expect: pass-or-gate4
# kopt-candidate: replaces=triton_red_fused_max_0
# Form P. Max over the middle dimension of (128, 4096, 256): each program owns 64 contiguous columns of
# one batch (256-byte lines) and walks the reduced dimension in [64, 64] tiles, columns on the
# fast axis so every load is a full, coalesced line. NaN propagates as in Inductor's helpers.
# Measured on the H200 (kopt verify, 2026-11-30): 0.980x [0.977, 0.986] -> refused at gate 4; [128, 32] tiles 0.918x.
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
    acc = tl.full([R_BLOCK, K_BLOCK], float("-inf"), tl.float32)
    for off in tl.range(0, r0_numel, R_BLOCK):
        m = (off + r) < r0_numel
        v = tl.load(in_ptr0 + base + (off + r) * INNER + k, mask=m, other=float("-inf"), eviction_policy="evict_first")
        acc = triton_helpers.maximum(acc, v)
    res = triton_helpers.max2(acc, 0)
    tl.store(out_ptr0 + b * INNER + tl.arange(0, K_BLOCK) + (pid % kblocks) * K_BLOCK, res)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_middle_max", "grid": ["xnumel // 64"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
                  "constexprs": {"INNER": 256, "R_BLOCK": 64, "K_BLOCK": 64}, "num_warps": 4, "num_stages": 2}],
}
