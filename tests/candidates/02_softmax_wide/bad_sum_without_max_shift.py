# expect: gate3 overflows where the inputs are large: exp(x) of inputs x1e3 or +1e3 is inf (inf * exp(-max) = NaN), where Inductor's exp(x - max) is not
# kopt-candidate: replaces=triton_red_fused_prepare_softmax_online_2
# Partial sums of exp(x - max) over the 5 segments of each 262144-wide row, computed as
# sum(exp(x)) * exp(-max): the same value in exact arithmetic and within ~1e-6 in fp32 for N(0,1)
# inputs (gate 2 redraws x and the row max from N(0,1): passes), but exp(x) overflows for x > 88.
# Distribution-specialised numerics ("softmax without the max shift"): for gate 3's adversarial
# sets. Not yet run on the H200.
import triton
import triton.language as tl

_ROW = 262144   # the softmax row (the kernel's 5 segments of r0_numel = 52429 cover it)


@triton.jit
def _partial_exp_sum_unshifted(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, ROW: tl.constexpr,
                               R0_BLOCK: tl.constexpr):
    x = tl.program_id(0)
    part = x % 5
    row = (x // 5).to(tl.int64)
    offs = tl.arange(0, R0_BLOCK)
    acc = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        col = part * r0_numel + start + offs
        m = (start + offs < r0_numel) & (col < ROW)
        v = tl.load(in_ptr0 + row * ROW + col, mask=m, other=float("-inf"), eviction_policy="evict_first")
        acc += tl.exp(v)                       # exp(-inf) = 0 on masked lanes
    row_max = tl.load(in_ptr1 + row)
    tl.store(out_ptr0 + x, tl.sum(acc, 0) * tl.exp(-row_max))   # "factor the shift out of the loop"


def launch(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, stream=None):
    _partial_exp_sum_unshifted[(xnumel,)](in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, ROW=_ROW, R0_BLOCK=4096,
                                         num_warps=8)
