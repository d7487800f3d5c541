# expect: gate2 reads the previous chunk's running total from the output before that chunk's program has written it (no flag, no ordering): NaN poison or garbage carried into every later chunk of the row
# kopt-candidate: replaces=triton_red_fused_cumsum_0
# Row scan split into 8 chunks of 4096 per row, one program per chunk; each program takes its
# carry from the last output element of the previous chunk, as a decoupled look-back would,
# but without the flag that says the value is there: it reads the output before its neighbour
# has written it (a race and a read of the poisoned output). Correct only when the programs of
# a row run one after another. Not yet run on the H200.
import triton
import triton.language as tl


@triton.jit
def _chunk_scan_lookback(in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    nchunks = tl.cdiv(r0_numel, CHUNK)
    row = (pid // nchunks).to(tl.int64)
    c = pid % nchunks
    base = row * r0_numel
    cols = c * CHUNK + tl.arange(0, CHUNK)
    mask = cols < r0_numel
    carry = tl.load(out_ptr0 + base + c * CHUNK - 1, mask=c > 0, other=0.0)   # "the previous chunk is done"
    x = tl.load(in_ptr0 + base + cols, mask=mask, other=0.0, eviction_policy="evict_first")
    tl.store(out_ptr0 + base + cols, tl.cumsum(x, 0) + carry, mask=mask)


def launch(in_ptr0, out_ptr0, xnumel, r0_numel, stream=None):
    _chunk_scan_lookback[(xnumel * triton.cdiv(r0_numel, 4096),)](in_ptr0, out_ptr0, xnumel, r0_numel, CHUNK=4096,
                                                                  num_warps=8)
