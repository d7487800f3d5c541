# expect: gate1 precision+name
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# tl.inline_asm_elementwise bound to a parameter's default and called under that name, with the
# assembly in pieces: the one-literal check looked at direct calls only. Refused by default as
# inline PTX and, with --allow-precision-change, as a timer risk.
import triton
import triton.language as tl


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr, ASM: tl.constexpr = tl.inline_asm_elementwise):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    c = ASM("mov.u32 $0, %clo" "ck;", "=r", [], dtype=tl.uint32, is_pure=False, pack=1)
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x + (c * 0).to(tl.float32), mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_gelu_residual", "grid": ["cdiv(xnumel, 1024)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"], "constexprs": {"XBLOCK": 1024}, "num_warps": 4}],
}
