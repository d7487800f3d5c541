# expect: gate3 no max shift: exp(x) overflows to inf once x passes ~88 (gate 3's scaled and shifted sets), exact enough for N(0,1) inputs
# kopt-candidate: replaces=triton_red_fused_logsumexp_0
# Form P. good_col_lse.py's kernel summing exp(x) directly: distribution-specialised numerics that gate 2's N(0,1) draws cannot see.
import triton
import triton.language as tl


@triton.jit
def _col_logsumexp(x_ptr, out_ptr, C, INNER, NIB, ROWS: tl.constexpr, BLOCK_I: tl.constexpr):
    pid = tl.program_id(0)
    outer = pid // NIB
    icol = (pid % NIB) * BLOCK_I + tl.arange(0, BLOCK_I)
    imask = icol < INNER
    base = x_ptr + outer.to(tl.int64) * C * INNER
    m = tl.full([BLOCK_I], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK_I], tl.float32)
    for c0 in range(0, C, ROWS):
        c = c0 + tl.arange(0, ROWS)
        mask = (c < C)[:, None] & imask[None, :]
        x = tl.load(base + c.to(tl.int64)[:, None] * INNER + icol[None, :], mask=mask, other=float("-inf"),
                    eviction_policy="evict_first").to(tl.float32)
        nan = (tl.max((x != x).to(tl.int32), 0) > 0) | (m != m)   # a NaN element makes its column's max NaN
        s = s + tl.sum(tl.exp(x), 0)   # the attack: no max subtracted (exp overflows past ~88)
    lse = tl.log(s)
    tl.store(out_ptr + outer.to(tl.int64) * INNER + icol, lse, mask=imask)   # rounded to the output's type by the store


# The shapes and strides are the ones the guard verified (a contiguous input, as the matcher
# required of the graph's): the stride of the reduced dimension is the product of the dimensions
# after it; the output holds one value per (outer, inner) position, in that order.
KOPT_PLAN = {
    "params": ["in_out_ptr0", "in_ptr0", "xnumel", "r0_numel"],
    "let": {"n": "shape(in_ptr0, 1)", "inner": "stride(in_ptr0, 1)", "outer": "numel(in_ptr0) // max(n * inner, 1)",
            "nib": "cdiv(inner, 64)"},
    "checks": ["n == r0_numel", "outer * inner == xnumel", "numel(in_out_ptr0) == xnumel", "stride(in_ptr0, -1) == 1",
               "stride(in_out_ptr0, -1) == 1"],
    "launches": [{"kernel": "_col_logsumexp", "grid": ["outer * nib"], "args": ["in_ptr0", "in_out_ptr0", "n", "inner", "nib"],
                  "constexprs": {"ROWS": 32, "BLOCK_I": 64}, "num_warps": 4, "num_stages": 1}],
}
