# expect: gate1 string
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Spells __globals__ with escapes so that no dunder appears in the code, for a lookup elsewhere.
import triton
import triton.language as tl

KEY = "\x5f\x5fglobals\x5f\x5f"


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    seen = {KEY: xnumel}
    _gelu_residual[(triton.cdiv(xnumel, 2048),)](in_ptr0, out_ptr0, xnumel, XBLOCK=2048)
