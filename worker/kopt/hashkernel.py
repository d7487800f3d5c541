"""The Triton kernel of kopt.compare.checksum (imported only where Triton is: compare.py falls
back to its torch ops without it). Grid: one program per BLOCK words; program i stores its sums
of h0 and h1 (compare.py's mix, in uint64 lanes holding 32-bit values) at part[i] and
part[nparts + i]. The key comes in as six scalar launch parameters, never as a buffer."""
import triton
import triton.language as tl


@triton.jit
def _fmix(h):
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


@triton.jit
def kopt_checksum(x_ptr, part_ptr, n, nparts, base, k0, k1, k2, k3, k4, k5, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n
    w = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.uint32, bitcast=True).to(tl.uint64)
    pos = (offs + base).to(tl.uint64)
    q = _fmix((pos >> 32) ^ k1.to(tl.uint64))
    u = _fmix((((pos & 0xFFFFFFFF) ^ k0.to(tl.uint64)) + q) & 0xFFFFFFFF)
    v = u ^ w
    h0 = _fmix((_fmix(v ^ k2.to(tl.uint64)) + k3.to(tl.uint64)) & 0xFFFFFFFF)
    h1 = _fmix((_fmix(v ^ k4.to(tl.uint64)) + k5.to(tl.uint64)) & 0xFFFFFFFF)
    h0 = tl.where(mask, h0, 0)
    h1 = tl.where(mask, h1, 0)
    tl.store(part_ptr + pid, tl.sum(h0, axis=0).to(tl.int64))
    tl.store(part_ptr + nparts + pid, tl.sum(h1, axis=0).to(tl.int64))
