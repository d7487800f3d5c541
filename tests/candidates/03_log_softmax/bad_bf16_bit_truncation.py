# expect: gate2 bfloat16 precision spelled with integer bit operations: every output truncated to 8 significant bits, errors up to ~0.08 on outputs near -10
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# A correct online log-softmax whose stores keep only the top 16 bits of each float32 (a bitcast
# to int32 and a mask, bfloat16's precision) to "halve the write traffic later": no reduced-
# precision name or string anywhere, so gate 1's precision rule cannot see it; the numeric gates
# must. Precision downgrade spelled indirectly. Not yet run on the H200.
import triton
import triton.language as tl

_TOP16 = -65536   # 0xFFFF0000 as an int32


@triton.jit
def _log_softmax_truncated(in_ptr0, out_ptr2, xnumel, r0_numel, TOP16: tl.constexpr, R0_BLOCK: tl.constexpr):
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
        y = (x - row_max) - log_sum
        bits = y.to(tl.int32, bitcast=True) & TOP16
        tl.store(out_ptr2 + base + idx, bits.to(tl.float32, bitcast=True), mask=mask)


def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):
    _log_softmax_truncated[(xnumel,)](in_ptr0, out_ptr2, xnumel, r0_numel, TOP16=_TOP16, R0_BLOCK=2048,
                                      num_warps=8)
