# expect: sass pass (with --dtype float16): conversions only
# Form P. The same pointwise y = x * 0.5 + x as half_arith.py, the way Inductor writes it for a
# float16 model: load, convert to float32, compute, convert back at the store. Its machine code
# holds float16 conversions and float32 arithmetic only.
import triton
import triton.language as tl


@triton.jit
def _half_axpy_f32(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr0 + offs, (x * 0.5 + x).to(tl.float16), mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_half_axpy_f32", "grid": ["cdiv(xnumel, 1024)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"],
                  "constexprs": {"BLOCK": 1024}, "num_warps": 4}],
}
