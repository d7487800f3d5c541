# expect: gate2 flushes running sums below 0.05 to zero: errors of up to 0.05 where the sum crosses zero, far above gate 2's summation-order bound (1e-5 of an output scale of a few hundred)
# kopt-candidate: replaces=triton_red_fused_cumsum_0
# Attack on gate 2's deferral to float64 (dfadad6): a result wrong only near zero, where a fixed
# fp32 tolerance and a rounding look alike. The deferral admits only errors <= 1e-5 of the
# output's scale with a relative norm <= 1e-5; this one is ~10x above that, so gate 2 refuses it.
# Not yet run on the H200 (added after the session's device time was spent).
import triton
import triton.language as tl


@triton.jit
def _row_cumsum_flushed(in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, CHUNK)
    carry = tl.zeros([], dtype=tl.float32)
    for off in tl.range(0, r0_numel, CHUNK, num_stages=2):
        mask = off + cols < r0_numel
        x = tl.load(in_ptr0 + base + off + cols, mask=mask, other=0.0, eviction_policy="evict_first")
        y = tl.cumsum(x, 0) + carry
        tl.store(out_ptr0 + base + off + cols, tl.where(tl.abs(y) < 0.05, 0.0, y), mask=mask)
        carry += tl.sum(x, 0)


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    _row_cumsum_flushed[(xnumel,)](in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK=4096, num_warps=8)
