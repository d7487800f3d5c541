# expect: gate1 name
# kopt-candidate: replaces=triton_poi_fused__softmax_exp_sub_4
# Opens a file through the builtins module that triton.language.core imports
# (tl.core.builtins.open): the builtin it is not allowed to name, reached as a module
# attribute.
import triton
import triton.language as tl


@triton.jit
def _softmax_div(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, ROW: tl.constexpr, XBLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    row = offs // ROW
    x = tl.load(in_ptr0 + offs)
    m = tl.load(in_ptr1 + row, eviction_policy="evict_last")
    s = tl.load(in_ptr2 + row, eviction_policy="evict_last")
    tl.store(out_ptr0 + offs, tl.exp(x - m) / s)


def launch(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, stream=None):
    block = int(tl.core.builtins.open("/tmp/kopt_softmax_block").read())
    _softmax_div[(xnumel // block,)](in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, ROW=262144, XBLOCK=block,
                                     num_warps=8)
