# expect: pass-or-gate4
# kopt-candidate: replaces=triton_red_fused_prepare_softmax_online_2
# Form P. Honest control for bad_sum_without_max_shift.py: the same partial sums of exp(x - max) over the
# 5 segments of each 262144-wide row, one program per segment, with the shift inside the
# exponential as Inductor writes it (finite for every input gate 3 draws). Not yet run on the H200.
import triton
import triton.language as tl

_ROW = 262144   # the softmax row (the kernel's 5 segments of r0_numel = 52429 cover it)


@triton.jit
def _partial_exp_sum(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, ROW: tl.constexpr, R0_BLOCK: tl.constexpr):
    x = tl.program_id(0)
    part = x % 5
    row = (x // 5).to(tl.int64)
    row_max = tl.load(in_ptr1 + row)
    offs = tl.arange(0, R0_BLOCK)
    acc = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        col = part * r0_numel + start + offs
        m = (start + offs < r0_numel) & (col < ROW)
        v = tl.load(in_ptr0 + row * ROW + col, mask=m, other=0.0, eviction_policy="evict_first")
        acc += tl.where(m, tl.exp(v - row_max), 0.0)
    tl.store(out_ptr0 + x, tl.sum(acc, 0))


KOPT_PLAN = {
    "params": ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_partial_exp_sum", "grid": ["xnumel"],
                  "args": ["in_ptr0", "in_ptr1", "out_ptr0", "xnumel", "r0_numel"],
                  "constexprs": {"ROW": 262144, "R0_BLOCK": 4096}, "num_warps": 8}],
}
