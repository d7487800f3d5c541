# expect: gate1 does not compile
# kopt-candidate: replaces=triton_poi_fused_add_addmm_relu_0
# CPU test candidate for the fake worker; marker: FAKE_NOCOMPILE
import triton
import triton.language as tl


@triton.jit
def _bias_bias_relu_tile(in_out_ptr0, in_ptr0, in_ptr1, n_rows, n_cols,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # in_out_ptr0: GEMM output [n_rows, n_cols] fp32 contiguous, read then overwritten in place;
    # in_ptr0: nn.Linear bias [n_cols]; in_ptr1: extra bias [n_cols].
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    rmask = rows < n_rows
    cmask = cols < n_cols
    b_lin = tl.load(in_ptr0 + cols, mask=cmask, other=0.0, eviction_policy="evict_last")
    b_ext = tl.load(in_ptr1 + cols, mask=cmask, other=0.0, eviction_policy="evict_last")
    offs = rows.to(tl.int64)[:, None] * n_cols + cols[None, :]
    mask = rmask[:, None] & cmask[None, :]
    acc = tl.load(in_out_ptr0 + offs, mask=mask, other=0.0)
    v = (b_lin[None, :] + acc) + b_ext[None, :]      # Inductor: tmp4 = (tmp0 + tmp1) + tmp3
    y = tl.where(v < 0.0, 0.0, v)                     # Inductor: maximum(0, tmp4); NaN stays NaN
    tl.store(in_out_ptr0 + offs, y, mask=mask)


def launch(in_out_ptr0, in_ptr0, in_ptr1, xnumel, stream=None):
    n_cols = in_ptr0.shape[0]          # 4096 (the bias length; Inductor hard-codes x % 4096)
    assert xnumel % n_cols == 0
    n_rows = xnumel // n_cols          # 2048
    BLOCK_M, BLOCK_N = 8, 512
    grid = (triton.cdiv(n_rows, BLOCK_M), triton.cdiv(n_cols, BLOCK_N))
    _bias_bias_relu_tile[grid](in_out_ptr0, in_ptr0, in_ptr1, n_rows, n_cols,
                               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, num_warps=8, num_stages=1)
