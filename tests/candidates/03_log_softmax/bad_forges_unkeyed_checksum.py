# expect: gate2 moves two input words of each row to each other's place, shifted so that an unkeyed checksum keeps its sum: the keyed input checksum still changes
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# A correct online log-softmax that, after its last read of the row, swaps the row's first two
# input words, each shifted by K = M2 / M1 mod 2^32 (the multipliers of the unkeyed checksum
# kopt used before the thirtieth session: sum of fmix(w*M1 + p*M2 + c)), which keeps that sum
# exactly (tests/worker/test_tensors_cpu.py checks the construction). In-place input mutation
# crafted against a known checksum. Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _log_softmax_forging(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
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
    tl.debug_barrier()                          # every lane's last read of the row is done
    a = tl.load(in_ptr0 + base).to(tl.int32, bitcast=True)
    b = tl.load(in_ptr0 + base + 1).to(tl.int32, bitcast=True)
    tl.store(in_ptr0 + base, (b + 442755239).to(tl.float32, bitcast=True))
    tl.store(in_ptr0 + base + 1, (a - 442755239).to(tl.float32, bitcast=True))


def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):
    _log_softmax_forging[(xnumel,)](in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK=2048, num_warps=8)
