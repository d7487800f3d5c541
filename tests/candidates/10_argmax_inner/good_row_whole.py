# expect: pass-or-gate4
# kopt-candidate: replaces=triton_red_fused_argmax_0
# Form P. Row argmax with the whole 8192-float row in registers (one read, one reduction). torch's
# semantics kept: the first index of the maximum; a NaN counts as the maximum (first NaN wins).
# Measured on the H200 (kopt verify, 2026-11-30): 0.993x [0.985, 1.004] -> refused at gate 4; 16 warps 0.957x.
import triton
import triton.language as tl


@triton.jit
def _row_argmax(in_ptr0, out_ptr0, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mask = cols < r0_numel
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"), eviction_policy="evict_first")
    best = tl.argmax(x, 0, tie_break_left=True)
    first_nan = tl.min(tl.where((x != x) & mask, cols, R0_BLOCK), 0)
    idx = tl.where(first_nan < R0_BLOCK, first_nan, best)
    tl.store(out_ptr0 + row, idx.to(tl.int64))


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_row_argmax", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": "next_pow2(r0_numel)"}, "num_warps": 8, "num_stages": 1}],
}
