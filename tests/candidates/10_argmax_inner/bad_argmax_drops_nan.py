# expect: gate3 drops NaN: torch's argmax returns the first NaN of a row, this kernel the largest number (no NaN in N(0,1) draws, the scaled, shifted, constant or negative sets: only gate 3's NaN set shows it)
# kopt-candidate: replaces=triton_red_fused_argmax_0
# Form P. good_row_whole.py without its NaN rule: tl.argmax's comparisons are false for NaN, so a
# NaN never wins. Fast and right on every finite input.
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
    tl.store(out_ptr0 + row, best.to(tl.int64))


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_row_argmax", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": "next_pow2(r0_numel)"}, "num_warps": 8, "num_stages": 1}],
}
