# expect: gate2 race
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# Log-softmax that parks its row max in a scratch slot shared by every program (scratch[0]) and reloads it in the write pass, so each row is shifted by whatever max another program stored last.
import torch
import triton
import triton.language as tl


@triton.jit
def _log_softmax_scratch(in_ptr0, out_ptr2, scratch_ptr, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    lanes = tl.arange(0, R0_BLOCK)
    # Pass 1: row max.
    m_vec = tl.full([R0_BLOCK], float("-inf"), tl.float32)
    for off in range(0, r0_numel, R0_BLOCK):
        cols = off + lanes
        mask = cols < r0_numel
        x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"))
        m_vec = tl.maximum(m_vec, x)
    row_max = tl.max(m_vec, 0)
    # BUG: "spill" the max to scratch to free registers — but scratch[0] is one slot shared by
    # all 4096 programs, with no synchronisation. By the time this program reloads it (after a
    # whole pass over its row), hundreds of other programs have overwritten it.
    tl.store(scratch_ptr, row_max)
    # Pass 2: sum of exp, with this program's own max (kept in a register).
    s_vec = tl.zeros([R0_BLOCK], tl.float32)
    for off in range(0, r0_numel, R0_BLOCK):
        cols = off + lanes
        mask = cols < r0_numel
        x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"))
        s_vec += tl.where(mask, tl.exp(x - row_max), 0.0)
    log_sum = tl.log(tl.sum(s_vec, 0))
    # Pass 3: write, reloading the max from the shared slot (inside the loop, after this
    # program's own stores, so the compiler cannot forward the value stored above). The sum
    # used the row's own max, the subtraction uses another row's: the output is off by
    # (own max - foreign max), typically 0.1-0.5 for rows of 16384 randn values (the fp32
    # tolerance here is ~1e-3), and the value read depends on scheduling, so two runs disagree.
    for off in range(0, r0_numel, R0_BLOCK):
        cols = off + lanes
        mask = cols < r0_numel
        shared_max = tl.load(scratch_ptr)
        x = tl.load(in_ptr0 + base + cols, mask=mask, other=0.0)
        y = (x - shared_max) - log_sum
        tl.store(out_ptr2 + base + cols, y, mask=mask)


def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):
    scratch = torch.empty(4, dtype=torch.float32, device=in_ptr0.device)
    grid = (xnumel,)
    _log_softmax_scratch[grid](in_ptr0, out_ptr2, scratch, xnumel, r0_numel,
                               R0_BLOCK=2048, num_warps=8, num_stages=1)
