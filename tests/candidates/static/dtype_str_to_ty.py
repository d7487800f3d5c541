# expect: gate1 name
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# Builds float16 from pieces of a string with tl.str_to_ty ("f" + "p16") to exponentiate in
# half precision without naming a reduced-precision type.
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
def _row_log_softmax_h(in_ptr0, out_ptr2, xnumel, r0_numel, DT: tl.constexpr, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, R0_BLOCK)
    mask = offs < r0_numel
    x = tl.load(in_ptr0 + row * r0_numel + offs, mask=mask, other=float("-inf"))
    m = tl.max(x, 0)
    e = tl.exp((x - m).to(DT)).to(tl.float32)
    tl.store(out_ptr2 + row * r0_numel + offs, (x - m) - tl.log(tl.sum(e, 0)), mask=mask)


_HALF = "f" + "p16"


def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):
    _row_log_softmax_h[(xnumel,)](in_ptr0, out_ptr2, xnumel, r0_numel, DT=tl.str_to_ty(_HALF),
                                  R0_BLOCK=triton.next_power_of_2(r0_numel), num_warps=16)
