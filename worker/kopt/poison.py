"""What an output's memory holds before a candidate's run writes it (gates 2 and 3).

Why. Outputs are poisoned before every run so that an element a kernel leaves unwritten shows:
it keeps the poison, which no reference holds. With one poison (NaN) a kernel could also tell
kopt's runs from a user's: a user's outputs are carved from recycled memory holding whatever an
earlier tensor left there, never all NaN. A kernel that reads its output buffer first and
computes honestly only where it finds NaN would pass every gate and return garbage in use. So
the candidate's runs get three kinds of poison, in turn (KINDS):
  * "nan": NaN (integers: the dtype's minimum; bool: True) -- what shows an unwritten element
    best;
  * "bits": random bytes (bool: random True/False) -- every bit pattern, NaN and infinities
    among them, as a stranger's data;
  * "normal": values drawn from N(0, 1) (integers: random values; bool: random) -- what a
    previous output of a model typically leaves.
A kernel must compute its outputs whatever it finds there; one that does not fails the gate
whose run got a poison it does not recognise.
Random poison is drawn from generators of this module's own (never the global ones the seeded
input draws use), seeded from os.urandom, or from a given seed where two runs must hold the very
same poison (gate 2 compares a candidate's outputs with the original's element by element, also
where a kernel legitimately leaves part of a shared buffer to another kernel: both runs of an
input set get the same bytes).
"""

import os

import torch

KINDS = ("nan", "bits", "normal")


def kind_at(i):
    """The poison of the i-th run (or input set) of a sequence: the kinds in turn."""
    return KINDS[i % len(KINDS)]


def new_seed():
    """A seed for fill that no kernel can predict."""
    return int.from_bytes(os.urandom(8), "little") >> 1


def fill(t, kind="nan", seed=None):
    """Overwrite the tensor t with poison `kind` (KINDS); random kinds drawn from a generator
    seeded with `seed` (new_seed() when None): equal seeds, equal tensors (same shape, dtype,
    device)."""
    if t.numel() == 0:
        return
    if kind == "nan" or t.is_complex():
        if t.is_floating_point() or t.is_complex():
            t.fill_(float("nan"))
        elif t.dtype == torch.bool:
            t.fill_(True)
        else:
            t.fill_(torch.iinfo(t.dtype).min)
        return
    if kind not in KINDS:
        raise ValueError("unknown poison kind %r" % (kind,))
    g = torch.Generator(device=t.device)
    g.manual_seed(new_seed() if seed is None else int(seed))
    # all in place: no temporary the size of the output (the memory cap)
    if t.dtype == torch.bool:
        t.random_(0, 2, generator=g)
    elif kind == "bits" and t.is_contiguous():
        t.view(-1).view(torch.uint8).random_(0, 256, generator=g)
    elif t.is_floating_point():
        t.normal_(generator=g)
    else:
        info = torch.iinfo(t.dtype)
        t.random_(max(info.min, -(1 << 62)), min(info.max, 1 << 62), generator=g)
