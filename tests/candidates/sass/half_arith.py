# expect: sass precision_sass arith_f16 (with --dtype float16)
# Form P. A float16 model's pointwise y = x * 0.5 + x computed in float16 registers, where
# Inductor loads, computes in float32 and rounds once at the store: different numerics that no
# name in the source gives away for a float16 model (the static rules judge precision only for
# float32 models). Only the machine code shows it: HFMA2/HMUL2 instructions.
import triton
import triton.language as tl


@triton.jit
def _half_axpy(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < xnumel
    x = tl.load(in_ptr0 + offs, mask=mask, other=0.0)
    tl.store(out_ptr0 + offs, x * 0.5 + x, mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel"],
    "launches": [{"kernel": "_half_axpy", "grid": ["cdiv(xnumel, BLOCK_N)"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel"],
                  "constexprs": {"BLOCK": "BLOCK_N"}, "num_warps": 4}],
    "let": {"BLOCK_N": "min(1024, next_pow2(xnumel))"},
}
