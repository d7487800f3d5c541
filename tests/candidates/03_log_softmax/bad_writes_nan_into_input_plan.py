# expect: gate2 writes NaN into its read-only input (the row's first element, after its last read of the row): gate 2's input checksums change
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# bad_writes_nan_into_input.py's kernel in form P (kopt writes the launcher), so that kopt
# optimize takes it from an LLM: there the kernel screen, which runs before gate 2, must refuse
# it by name (tests/gpu/run.sh, suite llm); in `kopt verify`, gate 2's input checksums.
import triton
import triton.language as tl


@triton.jit
def _log_softmax_marking(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
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
    tl.store(in_ptr0 + base, float("nan"))      # the "done" mark, in the input


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_log_softmax_marking", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": 2048}, "num_warps": 8}],
}
