# expect: gate1 name+syntax
# kopt-candidate: replaces=triton_poi_fused_add_gelu_mul_0
# `tl = 0` before `import triton.language as tl`: the name is then a module-level variable to the
# resolution, and every chain through it (here the global timer) went unchecked.
tl = 0
import triton
import triton.language as tl


@triton.jit
def _gelu_residual(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    t = tl.extra.cuda.globaltimer()
    gelu = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(out_ptr0 + offs, gelu * 0.5 + x + (t * 0).to(tl.float32), mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_gelu_residual", "grid": ["cdiv(xnumel, 1024)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"], "constexprs": {"XBLOCK": 1024}, "num_warps": 4}],
}
