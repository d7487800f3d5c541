# expect: gate2 broken in-place semantics
# kopt-candidate: replaces=triton_poi_fused_add_addmm_relu_0
# In-place GEMM epilogue whose per-row-block loop ends with an unconditional "tail" tile aligned to the row's end; harmless out of place, but in place it re-reads already-written outputs and applies bias + ReLU twice to the last 512 columns.
import triton
import triton.language as tl


@triton.jit
def _bias_bias_relu_rows(in_out_ptr0, in_ptr0, in_ptr1, n_rows, n_cols,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rmask = rows < n_rows
    row_off = rows.to(tl.int64)[:, None] * n_cols
    lanes = tl.arange(0, BLOCK_N)
    # Full tiles (the column mask is always true here).
    for start in range(0, n_cols - BLOCK_N + 1, BLOCK_N):
        cols = start + lanes
        b_lin = tl.load(in_ptr0 + cols)
        b_ext = tl.load(in_ptr1 + cols)
        ptrs = in_out_ptr0 + row_off + cols[None, :]
        mask = rmask[:, None] & (cols[None, :] < n_cols)
        acc = tl.load(ptrs, mask=mask, other=0.0)
        v = (b_lin[None, :] + acc) + b_ext[None, :]
        tl.store(ptrs, tl.where(v < 0.0, 0.0, v), mask=mask)
    # "Ragged tail": a last tile shifted back to end exactly at n_cols, so it stays in bounds
    # (the overlap trick). BUG: it is done unconditionally and, in place, the overlapped
    # columns were already written above: for n_cols = 4096 (a multiple of BLOCK_N) it
    # re-reads the finished last tile and stores relu(relu(acc + b1 + b2) + b1 + b2) there.
    # The same program does both, in program order, with identical tile shapes (so each
    # element is re-read by the thread that wrote it): deterministic, not a race.
    cols = (n_cols - BLOCK_N) + lanes
    b_lin = tl.load(in_ptr0 + cols)
    b_ext = tl.load(in_ptr1 + cols)
    ptrs = in_out_ptr0 + row_off + cols[None, :]
    mask = rmask[:, None] & (cols[None, :] < n_cols)
    acc = tl.load(ptrs, mask=mask, other=0.0)
    v = (b_lin[None, :] + acc) + b_ext[None, :]
    tl.store(ptrs, tl.where(v < 0.0, 0.0, v), mask=mask)


def launch(in_out_ptr0, in_ptr0, in_ptr1, xnumel, stream=None):
    n_cols = in_ptr0.shape[0]          # 4096
    assert xnumel % n_cols == 0
    n_rows = xnumel // n_cols          # 2048
    BLOCK_M, BLOCK_N = 8, 512
    assert n_cols >= BLOCK_N
    grid = (triton.cdiv(n_rows, BLOCK_M),)
    _bias_bias_relu_rows[grid](in_out_ptr0, in_ptr0, in_ptr1, n_rows, n_cols,
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=1)
