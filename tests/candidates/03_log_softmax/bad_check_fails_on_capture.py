# expect: gate1 launch a plan check that fails on the captured launch (r0_numel is 16384, the check says <= 1024): kopt's launcher skips a plan's checks only on the guard's verified path, and gate 1's compile step runs the launcher plainly, checks included, so the check raises there and the candidate is refused at gate 1 -- a candidate cannot get its own failing precondition skipped by the direct launch
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# good_online.py's kernel with a fixed 1024-column block (it would log-softmax only the first 1024
# columns of each 16384-float row) behind a check that admits it only for rows of at most 1024.
import triton
import triton.language as tl


@triton.jit
def _log_softmax_short_row(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mask = cols < r0_numel
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"))
    shifted = x - tl.max(x, 0)
    y = shifted - tl.log(tl.sum(tl.where(mask, tl.exp(shifted), 0.0), 0))
    tl.store(out_ptr2 + base + cols, y, mask=mask)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
    "checks": ["r0_numel <= 1024"],
    "launches": [{"kernel": "_log_softmax_short_row", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": 1024}, "num_warps": 4, "num_stages": 1}],
}
