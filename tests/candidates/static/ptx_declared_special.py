# expect: gate1 precision
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# Declares registers under a performance counter's name (%pm<4>) and reads %pm0 from inline PTX:
# a declared name that is, or starts, a special register's must still be refused (a kernel that
# reads counters or clocks can tell when it is being timed). Refused by default as inline PTX
# (rule precision); with --allow-precision-change by rule timer (tests/cli/lint.sh, section 3).
import triton
import triton.language as tl


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    c = tl.inline_asm_elementwise("{ .reg .u32 %pm<4>; mov.u32 $0, %pm0; }", "=r,r", [offs],
                                  dtype=tl.uint32, is_pure=False, pack=1)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x + (c * 0).to(tl.float32), mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, stream=None):
    _gelu_residual[(triton.cdiv(xnumel, 2048),)](in_ptr0, out_ptr0, xnumel, XBLOCK=2048)
