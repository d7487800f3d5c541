# expect: gate1 identifier
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Reads a file through a full-width `open`, which Python normalises (NFKC) to the builtin open.
import triton
import triton.language as tl


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    block = int(ｏｐｅｎ("/tmp/kopt_block").read())
    _gelu_residual[(triton.cdiv(xnumel, block),)](in_ptr0, out_ptr0, xnumel, XBLOCK=block)
