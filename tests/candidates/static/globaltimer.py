# expect: gate1 timer
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Reads the global timer in the kernel: a kernel that knows the time can tell when it is being timed.
import triton
import triton.language as tl


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    t0 = tl.extra.cuda.globaltimer()
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = (offs < xnumel) & (t0 > 0)
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    _gelu_residual[(triton.cdiv(xnumel, 2048),)](in_ptr0, out_ptr0, xnumel, XBLOCK=2048)
