# expect: gate1 stream-sync
# kopt-candidate: replaces=triton_red_fused_prepare_softmax_online_2
# Launches its kernel while another stream is current, the stream reached through the
# device-generic torch.accelerator API instead of torch.cuda.Stream, so the timed stream's end
# event does not wait for it.
import torch
import triton
import triton.language as tl


@triton.jit
def _partial_sum(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, ROW: tl.constexpr, R0_BLOCK: tl.constexpr):
    x = tl.program_id(0)
    part = x % 5
    row = (x // 5).to(tl.int64)
    row_max = tl.load(in_ptr1 + row)
    offs = tl.arange(0, R0_BLOCK)
    acc = tl.zeros([R0_BLOCK], tl.float32)
    for start in tl.range(0, r0_numel, R0_BLOCK):
        col = part * r0_numel + start + offs
        m = (start + offs < r0_numel) & (col < ROW)
        v = tl.load(in_ptr0 + row * ROW + col, mask=m, other=float("-inf"))
        acc += tl.where(m, tl.exp(v - row_max), 0.0)
    tl.store(out_ptr0 + x, tl.sum(acc, 0))


def launch(in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, stream=None):
    side = torch.Stream(device=in_ptr0.device)
    prev = torch.accelerator.current_stream()
    torch.accelerator.set_stream(side)
    _partial_sum[(xnumel,)](in_ptr0, in_ptr1, out_ptr0, xnumel, r0_numel, ROW=262144, R0_BLOCK=4096, num_warps=8)
    torch.accelerator.set_stream(prev)
