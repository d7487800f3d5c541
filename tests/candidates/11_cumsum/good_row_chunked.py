# expect: pass-or-gate4
# kopt-candidate: replaces=triton_red_fused_cumsum_0
# Form P. Row scan in chunks of 4096 with a carried scalar total (one program per row, 8 warps): the
# chunk's total comes from a reduction, not from selecting the scan's last lane.
# Measured on the H200 (kopt verify, 2026-11-30): accepted, 1.252x [1.248, 1.262]. The whole row in
# one tl.cumsum (32768 lanes) was refused at gate 2 then: its different summation order differs
# from Inductor's by more than atol=1e-4 where the running sum passes near zero. Since dfadad6
# such a difference (<= 1e-5 of the output's scale) is judged by gate 3's float64 test instead.
import triton
import triton.language as tl


@triton.jit
def _row_cumsum_chunked(in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK: tl.constexpr):
    row = tl.program_id(0)
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, CHUNK)
    carry = tl.zeros([], dtype=tl.float32)
    for off in tl.range(0, r0_numel, CHUNK, num_stages=2):
        mask = off + cols < r0_numel
        x = tl.load(in_ptr0 + base + off + cols, mask=mask, other=0.0, eviction_policy="evict_first")
        tl.store(out_ptr0 + base + off + cols, tl.cumsum(x, 0) + carry, mask=mask)
        carry += tl.sum(x, 0)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_row_cumsum_chunked", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr0", "xnumel", "r0_numel"],
                  "constexprs": {"CHUNK": 4096}, "num_warps": 8}],
}
