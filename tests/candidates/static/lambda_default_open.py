# expect: gate1 io
# kopt-candidate: replaces=triton_red_fused_native_group_norm_0
# Hides open as a lambda's default value (lambda path, o=open: ...) to read a block size that an
# earlier run wrote: the builtin is still named, and refused.
import triton
import triton.language as tl
from torch._inductor.runtime import triton_helpers


@triton.jit
def _partial_welford(in_ptr0, out_ptr0, out_ptr1, out_ptr2, xnumel, r0_numel, GROUP: tl.constexpr,
                     R0_BLOCK: tl.constexpr):
    x = tl.program_id(0)
    part = x % 5
    grp = (x // 5).to(tl.int64)
    offs = tl.arange(0, R0_BLOCK)
    mean = tl.zeros([R0_BLOCK], tl.float32)
    m2 = tl.zeros([R0_BLOCK], tl.float32)
    w = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        col = part * r0_numel + start + offs
        m = (start + offs < r0_numel) & (col < GROUP)
        v = tl.load(in_ptr0 + grp * GROUP + col, mask=m, other=0.0)
        mean_n, m2_n, w_n = triton_helpers.welford_reduce(v, mean, m2, w, start == 0)
        mean = tl.where(m, mean_n, mean)
        m2 = tl.where(m, m2_n, m2)
        w = tl.where(m, w_n, w)
    r_mean, r_m2, r_w = triton_helpers.welford(mean, m2, w, 0)
    tl.store(out_ptr0 + x, r_mean)
    tl.store(out_ptr1 + x, r_m2)
    tl.store(out_ptr2 + x, r_w)


def launch(in_ptr0, out_ptr0, out_ptr1, out_ptr2, xnumel, r0_numel, stream=None):
    read = lambda path, o=open: o(path).read()
    block = int(read("/tmp/kopt_gn_block"))
    _partial_welford[(xnumel,)](in_ptr0, out_ptr0, out_ptr1, out_ptr2, xnumel, r0_numel, GROUP=524288,
                                R0_BLOCK=block, num_warps=8)
