# expect: gate4 host work: good_online's one-read kernel (1.139x in GPU time on the H200, 0.881x as called) followed by 15 launches of an empty kernel: each adds a launch's host dispatch and almost no GPU time, so the model is slower as it is called; gate 4 refuses it (slower as called, or not faster once the launches' GPU gaps count)
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# Form P. good_online.py's kernel, then 15 launches of `_idle` (a kernel that reads its program id and does nothing): host work hidden from a GPU-only timing with a stalled stream.
import triton
import triton.language as tl


@triton.jit
def _log_softmax_row(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0)
    # int64 row base: 4096 * 16384 = 2**26 fits in int32, but keep the address math safe.
    base = row.to(tl.int64) * r0_numel
    cols = tl.arange(0, R0_BLOCK)
    mask = cols < r0_numel
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=float("-inf"))
    row_max = tl.max(x, 0)
    shifted = x - row_max                      # Inductor: tmp5 = tmp4 - tmp2
    e = tl.where(mask, tl.exp(shifted), 0.0)   # masked lanes are -inf -> exp = 0, kept explicit
    log_sum = tl.log(tl.sum(e, 0))             # Inductor: tmp6 = log(tmp3)
    y = shifted - log_sum                      # Inductor: tmp7 = tmp5 - tmp6
    tl.store(out_ptr2 + base + cols, y, mask=mask)


@triton.jit
def _idle(out_ptr2, xnumel):
    pid = tl.program_id(0)
    if pid < 0:   # never true: the launch costs its dispatch and no work
        tl.store(out_ptr2 + xnumel, 0.0)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
    "checks": ["next_pow2(r0_numel) <= 16384"],
    "launches": [{"kernel": "_log_softmax_row", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr2", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": "next_pow2(r0_numel)"}, "num_warps": 16, "num_stages": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1},
                 {"kernel": "_idle", "grid": [1], "args": ["out_ptr2", "xnumel"], "num_warps": 1}],
}
