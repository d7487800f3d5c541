# expect: gate3 no max shift: log(sum(exp(x))) overflows to inf on gate 3's inputs x1e3 and +1e3 (outputs -inf where the reference is finite)
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# Row log-softmax as x - log(sum(exp(x))), without subtracting the row max first: one pass fewer
# over the row, and within ~1e-6 of Inductor's for N(0,1) rows (|x| < 6, the sum ~3e4), which is
# all gate 2 draws. Distribution-specialised numerics for gate 3's adversarial sets (exp overflows
# above 88). Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _log_softmax_unshifted(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * r0_numel
    offs = tl.arange(0, R0_BLOCK)
    acc = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        idx = start + offs
        x = tl.load(in_ptr0 + base + idx, mask=idx < r0_numel, other=float("-inf"), eviction_policy="evict_last")
        acc += tl.exp(x)
    log_sum = tl.log(tl.sum(acc, 0))
    for start in tl.range(0, r0_numel, R0_BLOCK):
        idx = start + offs
        mask = idx < r0_numel
        x = tl.load(in_ptr0 + base + idx, mask=mask, other=0.0, eviction_policy="evict_first")
        tl.store(out_ptr2 + base + idx, x - log_sum, mask=mask)


def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):
    _log_softmax_unshifted[(xnumel,)](in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK=2048, num_warps=8)
