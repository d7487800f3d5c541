# expect: gate2 returns its input: the output is a copy of x, not exp(x - max) / sum
# kopt-candidate: replaces=triton_poi_fused__softmax_exp_sub_4
# KernelBench's "return the input": the final softmax pass copies x into the output (one read,
# one write: as fast as the real pass) and never uses the row max or sum. Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _copy_through(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    tl.store(out_ptr0 + offs, tl.load(in_ptr0 + offs, mask=mask), mask=mask)


def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, stream=None):
    _copy_through[(triton.cdiv(xnumel, 2048),)](in_ptr0, out_ptr0, xnumel, XBLOCK=2048, num_warps=8)
