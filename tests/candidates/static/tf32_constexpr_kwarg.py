# expect: gate1 precision
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# Sums each row's exponentials with tl.dot against a ones matrix, allow_tf32=TF32 where TF32 is a
# constexpr the launch sets to True by keyword: TF32 (10-bit mantissa) products in a float32 model
# without the literal allow_tf32=True.
import triton
import triton.language as tl


@triton.jit
def _row_log_softmax(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * r0_numel
    offs = tl.arange(0, R0_BLOCK)
    m_vec = tl.full([R0_BLOCK], float("-inf"), tl.float32)
    s_vec = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        idx = start + offs
        x = tl.load(in_ptr0 + base + idx, mask=idx < r0_numel, other=float("-inf"))
        m_new = tl.maximum(m_vec, x)
        s_vec = s_vec * tl.exp(m_vec - m_new) + tl.exp(x - m_new)
        m_vec = m_new
    row_max = tl.max(m_vec, 0)
    log_sum = tl.log(tl.sum(s_vec * tl.exp(m_vec - row_max), 0))
    for start in tl.range(0, r0_numel, R0_BLOCK):
        idx = start + offs
        mask = idx < r0_numel
        x = tl.load(in_ptr0 + base + idx, mask=mask, other=0.0)
        tl.store(out_ptr2 + base + idx, (x - row_max) - log_sum, mask=mask)


@triton.jit
def _log_softmax_dot(in_ptr0, out_ptr2, xnumel, r0_numel, TF32: tl.constexpr, ROWS: tl.constexpr,
                     R0_BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    base = rows.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)[None, :]
    m = tl.full([ROWS, 1], float("-inf"), tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        m = tl.maximum(m, tl.max(tl.load(in_ptr0 + base + start + cols), 1)[:, None])
    ones = tl.full([R0_BLOCK, 16], 1.0, tl.float32)
    s = tl.zeros([ROWS, 16], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        e = tl.exp(tl.load(in_ptr0 + base + start + cols) - m)
        s += tl.dot(e, ones, allow_tf32=TF32)
    lse = m + tl.log(tl.sum(s, 1)[:, None] / 16)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        x = tl.load(in_ptr0 + base + start + cols)
        tl.store(out_ptr2 + base + start + cols, x - lse)


def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):
    _log_softmax_dot[(xnumel // 16,)](in_ptr0, out_ptr2, xnumel, r0_numel, TF32=True, ROWS=16, R0_BLOCK=256,
                                      num_warps=4)
