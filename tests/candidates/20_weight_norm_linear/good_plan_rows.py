# expect: pass-or-gate4
# kopt-candidate: replaces=triton_red_fused_add_div_linalg_vector_norm_0
# Form P. The honest control: Inductor's two-loop row normalisation (sum of squares, then each
# element divided by sqrt(sum) + 1e-12), one program per weight row, 4096-wide blocks, 8 warps.
import triton
import triton.language as tl


@triton.jit
def _normalize_rows(in_ptr0, out_ptr1, xnumel, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = row * r0_numel
    offs = tl.arange(0, R0_BLOCK)
    acc = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        m = start + offs < r0_numel
        v = tl.load(in_ptr0 + base + start + offs, mask=m, other=0.0, eviction_policy="evict_last")
        acc += v * v
    norm = tl.sqrt_rn(tl.sum(acc, 0)) + 1e-12
    for start in tl.range(0, r0_numel, R0_BLOCK):
        m = start + offs < r0_numel
        v = tl.load(in_ptr0 + base + start + offs, mask=m, other=0.0, eviction_policy="evict_first")
        tl.store(out_ptr1 + base + start + offs, v / norm, mask=m)


KOPT_PLAN = {
    "params": ["in_ptr0", "out_ptr1", "xnumel", "r0_numel"],
    "launches": [{"kernel": "_normalize_rows", "grid": ["xnumel"],
                  "args": ["in_ptr0", "out_ptr1", "xnumel", "r0_numel"],
                  "constexprs": {"R0_BLOCK": 4096}, "num_warps": 8}],
}
