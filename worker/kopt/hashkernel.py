"""The Triton kernel of kopt.compare.checksum (imported only where Triton is: compare.py falls
back to its torch ops without it). Grid: one program per BLOCK words; program i stores its sums
of h0 and h1 (compare.py's mix, in native uint32 arithmetic, which wraps as the mix's 32-bit
arithmetic does) at part[i] and part[nparts + i]. The key comes in as six scalar launch
parameters, never as a buffer."""
import triton
import triton.language as tl


@triton.jit
def _fmix(h):
    h = h ^ (h >> 16)
    h = h * 0x85EBCA6B
    h = h ^ (h >> 13)
    h = h * 0xC2B2AE35
    return h ^ (h >> 16)


# the key words are never specialised on: a word equal to 1 would otherwise become a constant
# (no .to() there), and the others would compile variants by their alignment
@triton.jit(do_not_specialize=["k0", "k1", "k2", "k3", "k4", "k5"])
def kopt_checksum(x_ptr, part_ptr, n, nparts, base, k0, k1, k2, k3, k4, k5, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = offs < n
    w = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    pos = offs + base
    p_lo = (pos & 0xFFFFFFFF).to(tl.uint32)
    p_hi = (pos >> 32).to(tl.uint32)
    q = _fmix(p_hi ^ k1.to(tl.uint32))
    u = _fmix((p_lo ^ k0.to(tl.uint32)) + q)
    v = u ^ w
    h0 = _fmix(_fmix(v ^ k2.to(tl.uint32)) + k3.to(tl.uint32))
    h1 = _fmix(_fmix(v ^ k4.to(tl.uint32)) + k5.to(tl.uint32))
    h0 = tl.where(mask, h0.to(tl.uint64), 0)
    h1 = tl.where(mask, h1.to(tl.uint64), 0)
    tl.store(part_ptr + pid, tl.sum(h0, axis=0).to(tl.int64))
    tl.store(part_ptr + nparts + pid, tl.sum(h1, axis=0).to(tl.int64))
