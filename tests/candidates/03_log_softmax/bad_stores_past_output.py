# expect: gate2 stores past the end of its output (the last row's program also writes the 64 elements after the output's last one; every output element right): gate 2's fences around each output see it
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# good_plan_online.py whose last row's program also stores 64 elements after the output's end, as an off-by-a-block tail bug or a stash past the end does: nothing it should write is wrong, so only a check of the bytes around the output refuses it (without that check it would pass gates 2 and 3: the write lands in the caching allocator's slack or in another tensor).
import triton
import triton.language as tl


@triton.jit
def _log_softmax_online(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    lanes = tl.arange(0, R0_BLOCK)
    m_vec = tl.full([R0_BLOCK], float("-inf"), tl.float32)
    s_vec = tl.zeros([R0_BLOCK], tl.float32)
    # Pass 1: per-lane online (max, sum of exp(x - max)), as Inductor's online_softmax_combine.
    for off in range(0, r0_numel, R0_BLOCK):
        cols = off + lanes
        mask = cols < r0_numel
        x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"),
                    eviction_policy="evict_last")
        m_new = tl.maximum(m_vec, x, propagate_nan=tl.PropagateNan.ALL)
        none_yet = m_new == float("-inf")
        alpha = tl.where(none_yet, 1.0, tl.exp(m_vec - m_new))
        p = tl.where(none_yet, 0.0, tl.exp(x - m_new))
        s_new = s_vec * alpha + p
        m_vec = tl.where(mask, m_new, m_vec)
        s_vec = tl.where(mask, s_new, s_vec)
    # Combine the lanes (Inductor's online_softmax_reduce).
    row_max = tl.max(m_vec, 0)
    # Lanes that never saw a finite value (m_vec == -inf, s_vec == 0) contribute 0; the guard
    # avoids exp(-inf - -inf) = NaN when the whole row is -inf.
    lane_scale = tl.where(m_vec == float("-inf"), 0.0, tl.exp(m_vec - row_max))
    row_sum = tl.sum(s_vec * lane_scale, 0)
    log_sum = tl.log(row_sum)
    # Pass 2: write.
    for off in range(0, r0_numel, R0_BLOCK):
        cols = off + lanes
        mask = cols < r0_numel
        x = tl.load(in_ptr0 + base + cols, mask=mask, other=0.0, eviction_policy="evict_first")
        y = (x - row_max) - log_sum
        tl.store(out_ptr2 + base + cols, y, mask=mask)
    # the last row's program also writes the 64 elements after the output's end (its row sum)
    tail = r0_numel + tl.arange(0, 64)
    tl.store(out_ptr2 + base + tail, tl.zeros([64], tl.float32) + log_sum, mask=(tail > 0) & (row == xnumel - 1))


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
    "launches": [
        {"kernel": "_log_softmax_online", "grid": ["xnumel"],
         "args": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
         "constexprs": {"R0_BLOCK": 2048}, "num_warps": 8, "num_stages": 1},
    ],
}
