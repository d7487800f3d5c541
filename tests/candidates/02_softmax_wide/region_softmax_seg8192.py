# expect: pass
# kopt-candidate: replaces=triton_red_fused_prepare_softmax_online_0+triton_per_fused_prepare_softmax_online_1+triton_red_fused_prepare_softmax_online_2+triton_per_fused_prepare_softmax_online_3+triton_poi_fused__softmax_exp_sub_4
# kopt built-in executor, rewrite: region_softmax: one pass, rows cut into segments of 8192 held in registers, partials exchanged between programs, num_warps=8
import torch
import triton
import triton.language as tl


@triton.jit
def _rows_split_softmax(x_ptr, y_ptr, part_ptr, sync_ptr, N, nseg, NSEG: tl.constexpr, SEG: tl.constexpr,
                        LOG: tl.constexpr):
    t = tl.atomic_add(sync_ptr, 1)            # ticket: programs 0..t-1 have all started
    row = t // nseg
    seg = t - row * nseg
    cols = seg * SEG + tl.arange(0, SEG)
    mask = cols < N
    base = row.to(tl.int64) * N
    x = tl.load(x_ptr + base + cols, mask=mask, other=float("-inf"))
    m = tl.max(x, 0)
    m_safe = tl.where(m == float("-inf"), 0.0, m)
    s = tl.sum(tl.where(mask, tl.exp(x - m_safe), 0.0), 0)
    tl.store(part_ptr + 2 * t, m)
    tl.store(part_ptr + 2 * t + 1, s)
    tl.debug_barrier()
    tl.atomic_add(sync_ptr + 1 + row, 1, sem="release")
    while tl.atomic_add(sync_ptr + 1 + row, 0, sem="acquire") < nseg:
        pass
    ks = tl.arange(0, NSEG)
    km = ks < nseg
    pm = tl.load(part_ptr + 2 * (row * nseg + ks), mask=km, other=float("-inf"), volatile=True)
    ps = tl.load(part_ptr + 2 * (row * nseg + ks) + 1, mask=km, other=0.0, volatile=True)
    big = tl.max(pm, 0)
    big_safe = tl.where(big == float("-inf"), 0.0, big)
    total = tl.sum(tl.where(km, ps * tl.exp(pm - big_safe), 0.0), 0)
    if LOG:
        y = x - big - tl.log(total)
    else:
        y = tl.exp(x - big) / total
    tl.store(y_ptr + base + cols, y, mask=mask)


def launch(in_ptr0, out_ptr0, stream=None):
    n = in_ptr0.shape[-1]
    rows = in_ptr0.numel() // n
    nseg = triton.cdiv(n, 8192)
    if nseg > torch.cuda.get_device_properties(in_ptr0.device).multi_processor_count:
        raise ValueError("a row's %d programs must all fit on the GPU at once" % nseg)
    part = torch.empty(2 * rows * nseg, device=in_ptr0.device, dtype=torch.float32)
    sync = torch.zeros(1 + rows, device=in_ptr0.device, dtype=torch.int32)
    _rows_split_softmax[(rows * nseg,)](in_ptr0, out_ptr0, part, sync, n, nseg,
                                        NSEG=triton.next_power_of_2(nseg), SEG=8192, LOG=False, num_warps=8)
