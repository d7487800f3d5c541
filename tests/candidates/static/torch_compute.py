# expect: gate1 torch-compute
# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0
# Lets PyTorch compute the row log-sum-exp and only subtracts it in Triton: a torch compute op.
import torch
import triton
import triton.language as tl


@triton.jit
def _sub_row(in_ptr0, lse_ptr, out_ptr2, r0_numel, R0_BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    lse = tl.load(lse_ptr + row)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        idx = start + tl.arange(0, R0_BLOCK)
        mask = idx < r0_numel
        x = tl.load(in_ptr0 + row * r0_numel + idx, mask=mask, other=0.0)
        tl.store(out_ptr2 + row * r0_numel + idx, x - lse, mask=mask)


def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):
    lse = torch.logsumexp(in_ptr0, dim=1)
    _sub_row[(xnumel,)](in_ptr0, lse, out_ptr2, r0_numel, R0_BLOCK=2048, num_warps=8)
