# expect: pass-or-gate4
# kopt-candidate: replaces=triton_poi_fused_max_pool2d_with_indices_0
# Form P. 2x2/stride-2 max pooling of (16, 64, 256, 256) by output rows: each program loads the two input
# rows of 8 output rows as contiguous [8, 128, 2] tiles (vectorised loads, no stride-2 gathers),
# splits the pairs and takes the NaN-propagating max as Inductor's helper does.
# Measured on the H200 (kopt verify, 2026-11-30): 0.746x -> refused at gate 4 (16 rows, 8 warps: 0.575x).
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _maxpool_rows(in_ptr0, out_ptr0, xnumel, W_IN: tl.constexpr, BR: tl.constexpr):
    W_OUT: tl.constexpr = W_IN // 2
    r = tl.program_id(0) * BR + tl.arange(0, BR)[:, None, None]
    c = tl.arange(0, W_OUT)[None, :, None]
    j = tl.arange(0, 2)[None, None, :]
    off = r.to(tl.int64) * (2 * W_IN) + 2 * c + j
    top = tl.load(in_ptr0 + off, eviction_policy="evict_first")
    bot = tl.load(in_ptr0 + off + W_IN, eviction_policy="evict_first")
    t0, t1 = tl.split(top)
    b0, b1 = tl.split(bot)
    res = triton_helpers.maximum(triton_helpers.maximum(t0, t1), triton_helpers.maximum(b0, b1))
    ro = tl.program_id(0) * BR + tl.arange(0, BR)[:, None]
    co = tl.arange(0, W_OUT)[None, :]
    tl.store(out_ptr0 + ro.to(tl.int64) * W_OUT + co, res)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_maxpool_rows", "grid": ["xnumel // 128 // 8"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"],
                  "constexprs": {"W_IN": 256, "BR": 8}, "num_warps": 4, "num_stages": 1}],
}
