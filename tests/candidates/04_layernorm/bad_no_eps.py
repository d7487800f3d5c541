# expect: gate3 drops the 1e-5 in rsqrt(var + eps): harmless for unit-variance rows, but on gate 3's inputs x1e-3 (variance 1e-6) the outputs are ~3.3x too large, and constant rows give NaN
# kopt-candidate: replaces=triton_red_fused_native_layer_norm_0
# LayerNorm with Inductor's own Welford statistics (triton_helpers.welford_reduce / welford, so
# exact on constant rows), one row per program, but rsqrt(var) without the eps "because it only
# guards against division by zero": off by ~5e-6 relative for N(0,1) rows, which passes gates 2
# and 3's strict seeds. Distribution-specialised numerics. Not yet run on the H200.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _layer_norm_no_eps(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mean = tl.zeros([R0_BLOCK], tl.float32)
    m2 = tl.zeros([R0_BLOCK], tl.float32)
    weight = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        mask = start + cols < r0_numel
        x = tl.load(in_ptr0 + base + start + cols, mask=mask, other=0.0, eviction_policy="evict_last")
        mean_n, m2_n, weight_n = triton_helpers.welford_reduce(x, mean, m2, weight, start == 0)
        mean = tl.where(mask, mean_n, mean)
        m2 = tl.where(mask, m2_n, m2)
        weight = tl.where(mask, weight_n, weight)
    row_mean, row_m2, row_w = triton_helpers.welford(mean, m2, weight, 0)
    rstd = tl.rsqrt(row_m2 / r0_numel)                   # BUG: + 1e-05 dropped
    for start in tl.range(0, r0_numel, R0_BLOCK):
        mask = start + cols < r0_numel
        x = tl.load(in_ptr0 + base + start + cols, mask=mask, other=0.0, eviction_policy="evict_first")
        w = tl.load(in_ptr1 + start + cols, mask=mask, other=0.0, eviction_policy="evict_last")
        b = tl.load(in_ptr2 + start + cols, mask=mask, other=0.0, eviction_policy="evict_last")
        tl.store(out_ptr2 + base + start + cols, ((x - row_mean) * rstd) * w + b, mask=mask)


def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, stream=None):
    _layer_norm_no_eps[(xnumel,)](in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel, R0_BLOCK=2048, num_warps=8)
