# expect: gate3 not exact on constant rows: each thread sums its 16 equal values in sequence, which rounds (3c is not always a float), so x - mean is not 0 and rsqrt(var + eps) multiplies the rounding by ~300 (H200: error 2.3e-4 where Inductor's Welford and eager are exact)
# kopt-candidate: replaces=triton_red_fused_native_layer_norm_0
# Form P. LayerNorm with one program per 8192-wide row held in registers: mean, then the biased variance as mean((x - mean)^2) over the same registers, then (x - mean) * rsqrt(var + 1e-5) * w + b.
import triton
import triton.language as tl


@triton.jit
def _layer_norm_row(in_ptr0, in_ptr1, in_ptr2, out_ptr2, xnumel, r0_numel,
                    R0_BLOCK: tl.constexpr):
    # in_ptr0: x [xnumel, r0_numel] fp32 contiguous; in_ptr1: weight [r0_numel];
    # in_ptr2: bias [r0_numel]; out_ptr2: y [xnumel, r0_numel]. No mean/rstd side outputs:
    # the module only returns y (buf3).
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mask = cols < r0_numel
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=0.0, eviction_policy="evict_first")
    mean = tl.sum(x, 0) / r0_numel                    # fp32 / i32 -> fp32 division
    d = tl.where(mask, x - mean, 0.0)                 # Inductor: tmp9 = tmp8 - tmp2
    var = tl.sum(d * d, 0) / r0_numel                 # Inductor: tmp11 = m2 / 8192.0 (correction 0)
    rstd = tl.rsqrt(var + 1e-05)                      # Inductor: tmp14 = rsqrt(tmp11 + 1e-05)
    w = tl.load(in_ptr1 + cols, mask=mask, other=0.0, eviction_policy="evict_last")
    b = tl.load(in_ptr2 + cols, mask=mask, other=0.0, eviction_policy="evict_last")
    y = (d * rstd) * w + b                            # Inductor: tmp19 = (tmp9*tmp14)*tmp16 + tmp18
    tl.store(out_ptr2 + base + cols, y, mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr2", "xnumel", "r0_numel"],
    "checks": ["next_pow2(r0_numel) <= 16384"],
    "launches": [{"kernel": "_layer_norm_row", "grid": ["xnumel"],
                  "args": ["in_ptr0", "in_ptr1", "in_ptr2", "out_ptr2", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": "next_pow2(r0_numel)"}, "num_warps": 16, "num_stages": 1}],
}
