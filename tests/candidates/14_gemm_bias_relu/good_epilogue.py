# expect: pass-or-gate4
# kopt-candidate: replaces=triton_poi_fused_add_addmm_relu_0
# Form P. In-place GEMM epilogue relu((b_linear + acc) + b_extra) over 2-D tiles of 8 rows x 512 columns, loading each bias slice once per tile.
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


# The launch kopt writes: n_cols from the bias (4096; Inductor hard-codes x % 4096), n_rows from
# xnumel (2048), 8 x 512 tiles.
KOPT_PLAN = {
    "params": ["in_out_ptr0", "in_ptr0", "in_ptr1", "xnumel"],
    "let": {"n_cols": "shape(in_ptr0, 0)", "n_rows": "xnumel // n_cols"},
    "checks": ["xnumel % n_cols == 0"],
    "launches": [{"kernel": "_bias_bias_relu_tile", "grid": ["cdiv(n_rows, 8)", "cdiv(n_cols, 512)"],
                  "args": ["in_out_ptr0", "in_ptr0", "in_ptr1", "n_rows", "n_cols"],
                  "constexprs": {"BLOCK_M": 8, "BLOCK_N": 512}, "num_warps": 8, "num_stages": 1}],
}
