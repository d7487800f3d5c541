"""The keyed checksum's Triton kernel (worker/kopt/hashkernel.py) run by Triton's interpreter on
the CPU, launched as the worker launches it (kopt.compare._hash_cuda), against the same mix in
torch ops (kopt.compare._mix_torch, what the CPU tests check):
the two sums of every case must be equal, for keys whose words Triton passes as a constant (1),
an i32 and an i64, for word positions that cross 2^32 (the base of a host chunk), for a partial
last block, and for words of every bit pattern (negative int32, NaN floats).

usage: TRITON_INTERPRET=1 PY tests/interp/test_checksum_interp.py (`make interp-check`); exit 0
when every case agrees, 1 otherwise; skipped (exit 0, one line) when triton does not import.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interp_util import ROOT, require_triton  # noqa: E402

require_triton()
import torch  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "worker"))
from kopt import compare  # noqa: E402
from kopt.hashkernel import kopt_checksum  # noqa: E402

KEYS = [(1, 2, 3, 4, 5, 6), (0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xDEADBEEF, 1, 0), compare.new_key()]
BLOCK = 4096   # compare._hash_cuda's block: the cases cut blocks at and past it


def kernel_sums(w, base, key):
    """The kernel's two sums through compare._hash_cuda, the launch the worker makes (host
    tensors here: the interpreter runs it on the CPU)."""
    return compare._hash_cuda(kopt_checksum, w, base, key)


def main():
    torch.manual_seed(0)
    words = torch.randint(-2 ** 31, 2 ** 31 - 1, (2 * BLOCK + 77,), dtype=torch.int32)
    words[5] = -1
    words[6] = torch.tensor([float("nan")]).view(torch.int32)[0]
    cases = [(words, 0), (words[:BLOCK], 1 << 24), (words[:900], (1 << 32) - 450), (words[:10], 3 << 32)]
    failed = 0
    for key in KEYS:
        for w, base in cases:
            got, want = kernel_sums(w, base, key), compare._mix_torch(w, base, key)
            ok = got == want
            failed += not ok
            print("%s key=%s n=%d base=%d kernel=%s torch=%s" % ("ok  " if ok else "FAIL", key, w.numel(), base, got, want))
    # the sum depends on the key: a check that could fail if the kernel ignored it
    if kernel_sums(words, 0, KEYS[0]) == kernel_sums(words, 0, KEYS[1]):
        print("FAIL the kernel's sums do not depend on the key")
        failed += 1
    print("checksum interp: %d cases, %d failed" % (len(KEYS) * len(cases) + 1, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
