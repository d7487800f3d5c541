# expect: gate3 flushes every |y| < 0.008 to 0: inside bf16's tolerance (1e-2 absolute) at gates 2 and 3's strict check, and inside the float64 bound at the largest magnitude (4 u ||ref||, ~0.09) with rho ~1; about 0.7% of the outputs are wrong by 100% of their value, which only the count rule of gate 3 sees
# kopt-candidate: replaces=triton_red_fused_native_layer_norm_0
# Form P. The honest control good_fp32_rowwise.py with one change: outputs below 0.008 in
# magnitude are written as 0 (the dtype-sized bound's hole, docs/SECURITY.md). Expected at gate 3
# by the count of elements far off float64 (before it, accepted).
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _layer_norm_flush(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
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
        y = tl.where(tl.abs(y) < 0.008, 0.0, y)              # BUG: small outputs flushed
        tl.store(out_ptr2 + base + start + cols, y, mask=mask)   # the store rounds to bf16


KOPT_PLAN = {
    "params": ["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr2", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_layer_norm_flush", "grid": ["xnumel"],
                  "args": ["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr2", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": 2048}, "num_warps": 8}],
}
