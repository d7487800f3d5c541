# expect: gate2 inaccurate
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# Whole-row log-softmax whose exp is a hand-rolled 2**k * (quadratic Taylor of 2**f) approximation, biased low by ~1% on average, so every output is off by ~9e-3 (about 6-13x the fp32 tolerance).
import triton
import triton.language as tl


@triton.jit
def _log_softmax_row_fastexp(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mask = cols < r0_numel
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"))
    row_max = tl.max(x, 0)
    shifted = x - row_max
    # BUG (accuracy): exp(s) = 2**t, t = s*log2(e), split as 2**k * 2**f with k = floor(t),
    # f in [0, 1); 2**f by its 2nd-order Taylor polynomial 1 + f*ln2 + (f*ln2)**2/2, which
    # underestimates by up to 3.3% (at f -> 1). The row sum comes out ~0.9% low, so log(sum),
    # and with it every output of the row, is off by ~9e-3 (simulated on randn rows:
    # 0.0092 vs a tolerance of 1e-4 + 1e-4*|ref| <= 1.5e-3).
    t = tl.maximum(shifted * 1.4426950408889634, -126.0)   # keep 2**k a normal float
    k = tl.floor(t)
    f = t - k
    p = 1.0 + f * (0.6931471805599453 + f * 0.2402265069591007)
    two_k = ((k.to(tl.int32) + 127) << 23).to(tl.float32, bitcast=True)
    e = tl.where(mask, p * two_k, 0.0)
    log_sum = tl.log(tl.sum(e, 0))
    y = shifted - log_sum
    tl.store(out_ptr2 + base + cols, y, mask=mask)


def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):
    R0_BLOCK = triton.next_power_of_2(r0_numel)
    assert R0_BLOCK <= 16384, "whole-row kernel sized for rows of at most 16384"
    grid = (xnumel,)
    _log_softmax_row_fastexp[grid](in_ptr0, out_ptr2, xnumel, r0_numel,
                                   R0_BLOCK=R0_BLOCK, num_warps=16, num_stages=1)
