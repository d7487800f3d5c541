# expect: pass-or-gate4
# kopt-candidate: replaces=triton_red_fused_native_layer_norm_0
# Form P. Honest control for the count rule: Inductor's Welford statistics in fp32 (inputs
# upcast on load), one row per program in 2048-wide chunks, (x - mean) * rsqrt(var + 1e-5) * w + b
# computed in fp32 and rounded once to bf16 on the store, as the compiled model does.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _layer_norm_bf16(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mean = tl.zeros([R0_BLOCK], tl.float32)
    m2 = tl.zeros([R0_BLOCK], tl.float32)
    weight = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        mask = start + cols < r0_numel
        x = tl.load(in_ptr0 + base + start + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        mean_n, m2_n, weight_n = triton_helpers.welford_reduce(x, mean, m2, weight, start == 0)
        mean = tl.where(mask, mean_n, mean)
        m2 = tl.where(mask, m2_n, m2)
        weight = tl.where(mask, weight_n, weight)
    row_mean, row_m2, row_w = triton_helpers.welford(mean, m2, weight, 0)
    rstd = tl.rsqrt(row_m2 / r0_numel + 1e-05)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        mask = start + cols < r0_numel
        x = tl.load(in_ptr0 + base + start + cols, mask=mask, other=0.0, eviction_policy="evict_first").to(tl.float32)
        w = tl.load(in_ptr1 + start + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        b = tl.load(in_ptr2 + start + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
        y = ((x - row_mean) * rstd) * w + b
        tl.store(out_ptr2 + base + start + cols, y, mask=mask)   # the store rounds to bf16


KOPT_PLAN = {
    "params": ["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr2", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_layer_norm_bf16", "grid": ["xnumel"],
                  "args": ["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr2", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": 2048}, "num_warps": 8}],
}
