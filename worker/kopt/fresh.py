"""Fresh input contents for gate 4's timed rounds, and the re-check of what timed runs returned
(`time` with fresh_inputs / recheck_rounds: PROTOCOL.md).

Why. Without this, every timed run reads the same loaded inputs. A candidate kernel can stash
results in device memory that no checksum covers (the slack the caching allocator leaves past a
storage, say) and, on a later launch with the same pointers, or the same values at a few sampled
positions, write the stashed results instead of computing them: correct for those contents,
and fast only while the contents repeat -- which they do only while kopt is timing it. Fresh
contents for each run make such a cache miss (keyed on values) or return stale results (keyed on
pointers), and re-checking some rounds' outputs catches the stale ones.

Rotations (Rotator). Before each timed run but the first, every loaded input's storage is
rotated in place, flat -- as one run of elements in memory order -- by an offset drawn from
os.urandom. Inputs that are views of one storage (a tensor and its transpose, a strided slice,
a tensor and a part of it) are rotated as one, by rotating the storage they share, so every
view sees the same new contents and how they alias is kept; since the fortieth session (before,
they were left alone). Since the forty-first session, also: an input that is a dense slice of
a larger tensor the problem does not pass (a[:n], a[2:7].t()) rotates only the range it fills,
and views of one storage in different dtypes rotate as one, by elements of the widest (every
member's elements move whole: an int32 view of a float32 tensor stays its bit pattern).
Since the forty-second session, an input that is a strided slice of a larger tensor (x[:, ::2],
alone on its storage, no two elements at one place) rotates its own elements, in its own order,
gathered and scattered a block at a time by their storage positions (_Elems): what it leaves
out, which it never reads and which could be anything, keeps its place.
Left alone (_storage_flat): several views of one storage that neither reach from its first
element to its last nor fill a range densely, a storage shared with a tensor that is not
rotated or by inputs and model tensors, dtypes whose elements a rotation by the widest's would
split, fewer than two elements. Offsets are drawn so that no run sees an arrangement an earlier run saw, the loaded one
included, and none keeps a row whole, wherever the storage has room for that (_draw): a kernel
that kept what it computed for the contents it saw once (at the loaded arrangement, in the
warm-up or the correctness gates) never finds those contents again, however small the tensor
(before the forty-first session, a 30-element buffer returned to its loaded arrangement about
one run in 29). Values are kept, only their places change: indices stay in range, a
positive input stays positive, a [0, 1] input stays in [0, 1]. Flat, not by whole slices or
rows: a rotation that kept every row (or group) whole would only permute the rows, and a kernel
could key results it stashed on something a permutation keeps (a row's sum) -- a flat offset
moves every row's and group's boundary through the data (offsets that are a multiple of their
length are avoided where the storage allows: _draw), so their contents are new (rows of probabilities no longer sum to 1: a re-check
compares two runs on the same contents, so the comparison holds). Offsets accumulate; restore()
undoes them exactly, so the loaded inputs' checksums hold again afterwards. A rotation is three
in-place reversals done in blocks of at most CHUNK_ELEMS elements and 1/BLOCK_SHARE of the
tensor (block_elems), so the extra memory is two blocks whatever the inputs' sizes
(rotation_bytes).
The model's parameters are rotated as well, by the same rules (the Rotator's `state`): a kernel
that reads only weights (a layout change of a convolution's weight, a weight normalisation)
would otherwise read the same contents in every run, and could return what it left in a buffer
the compiler recycles -- right while the weights stay as loaded, which they do while kopt times,
wrong for a user who updates them. Rotated weights change what the model computes, not whether
two runs on the same contents agree. Its buffers (running statistics, tables) are rotated too,
where the problem's own model takes that: a buffer may hold structure the model relies on (a causal mask
sliced from a larger one: rotated, some rows are masked whole), so op_time first runs the
baseline with them rotated and leaves them alone when it raises or its outputs turn non-finite
(where an honest kernel may differ from Inductor's without being wrong for any input the model
can get). A kernel that reads only such a buffer is the gap left.
Inputs left alone (the cases above) are reported with the reason. What
rotations cannot change: a result that depends only on the multiset of one input's values (a
sum of all its elements); gate 4's memory-traffic floor is what judges a kernel that skips
reading such an input.

Re-check (HostWindow, recheck_stats). In `recheck_rounds` rounds drawn at random (a candidate
cannot tell them from the others: same rotations, same order), each candidate's outputs are
copied, right after its end event, to ordinary pageable host memory (which no kernel can
address) -- each output whole up to WINDOW_ELEMS elements, else one window of that many at a
random offset, the same for every run of the round -- and poisoned on the device as in every
round; then the baseline (variant 0) runs once more, untimed, on the same contents, and its
outputs are copied the same way. The two are compared by compare_stats: exactly (atol = rtol =
0: n_mismatch, for integer outputs) and loosely (n_rel_err over rel_err = (thr, 0, floor_rel):
off by more than thr x |ref| and floor_rel x max |ref|). The core decides from those counts
(src/gates/decide.h).
Why rotate before every run, not once per round: only outputs are poisoned between runs. The
compiler's intermediate buffers (and the slack past any allocation) are recycled by the caching
allocator at the same addresses for every variant, so a candidate run right after the baseline
on the same contents would find the baseline's intermediates for those very contents there -- a
kernel that skips its work whenever its buffers "already hold results" would be right and fast
in such a run. With a rotation before every run, whatever a run finds was made for other
contents; the re-check's baseline run comes after the candidate's, where it cannot help it. A
kernel that cheats only in some runs is caught with the probability that a re-checked round
falls on one: to move gate 4's medians it must cheat in most runs, and then escapes all of
GATE4_RECHECK_ROUNDS (8) re-checks with a chance below 1/2^8.
"""

import os
import random

import torch

from kopt.compare import compare_stats
from kopt.tensors import flatten, storage

CHUNK_ELEMS = 1 << 24        # elements per reversal block at most (64 MB of float32) ...
BLOCK_SHARE = 32             # ... and at most 1/32 of the tensor (above MIN_BLOCK_ELEMS), so that a
MIN_BLOCK_ELEMS = 1 << 16    # small model's peak grows by ~6% of an input, not by half of it
WINDOW_ELEMS = 1 << 25       # elements of an output copied to the host for a re-check (32M)


def block_elems(numel, budget=CHUNK_ELEMS):
    """Elements of one reversal block for a tensor of `numel` elements."""
    return max(1, min(budget, max(MIN_BLOCK_ELEMS, numel // BLOCK_SHARE)))


def rotation_bytes(inputs):
    """The most device memory a step's reversals hold at once (two blocks of the largest
    storage's among `inputs`': a view is rotated with its whole storage), for making room
    before the rounds."""
    return max([_step_bytes(x) for x in inputs
                if isinstance(x, torch.Tensor) and x.layout == torch.strided and x.numel() > 0] or [0])


_INDEX_BYTES = 24   # per element of a block of an _Elems rotation: its positions (int64) and their arithmetic


def _step_bytes(x):
    """Two reversal blocks of x's rotation: of its whole storage, or of its own elements with
    their positions where it is a strided slice of part of it (_Elems)."""
    size = x.element_size()
    if _byte_extent(x) != (0, storage(x).nbytes()) and not _dense(x):
        return 2 * block_elems(x.numel()) * (size + _INDEX_BYTES)
    return 2 * block_elems(storage(x).nbytes() // size) * size


def new_rng():
    """A generator seeded from os.urandom: offsets and rounds a kernel cannot predict."""
    return random.Random(os.urandom(16))


class _Elems:
    """The elements of a strided view that neither fills its range nor overlaps itself (a
    strided slice of a larger tensor: x[:, ::2]), as one sequence in the view's own order, read
    and written a block at a time at their storage positions -- what a 1-D tensor is to rotate().
    The storage's other elements never move."""

    def __init__(self, v):
        self.v = v
        self.base = v.as_strided((storage(v).nbytes() // v.element_size(),), (1,), 0)
        self.shape = (v.numel(),)

    def at(self, lo, hi):
        """Storage positions (in elements of base) of the view's elements lo..hi-1."""
        i = torch.arange(lo, hi, dtype=torch.int64, device=self.v.device)
        off = torch.full_like(i, self.v.storage_offset())
        for n, st in reversed(list(zip(self.v.shape, self.v.stride()))):
            off += (i % n) * st
            i = i // n
        return off

    def periods(self):
        """Row lengths of the view in its own order (see _periods)."""
        got, run = set(), 1
        for n in reversed(self.v.shape):
            if n > 1 and 1 < run < self.shape[0]:
                got.add(run)
            run *= n
        return sorted(got)


def _no_overlap(x):
    """Whether no two of x's elements share a storage position (a conservative test: each
    dimension's stride, smallest first, passes the reach of the ones before it)."""
    reach = 0
    for st, n in sorted((st, n) for n, st in zip(x.shape, x.stride()) if n > 1):
        if st <= reach:
            return False
        reach += (n - 1) * st
    return True


def _reverse(a, lo, hi, budget=CHUNK_ELEMS):
    """Reverse elements lo..hi-1 of a (a 1-D tensor or an _Elems) in place, swapping blocks of
    at most `budget` elements from both ends."""
    half = (hi - lo) // 2
    i = 0
    while i < half:
        bb = min(budget, half - i)
        if isinstance(a, _Elems):   # gathers copy: t and the bottom block's values are their own
            pt, pb = a.at(lo + i, lo + i + bb), a.at(hi - i - bb, hi - i)
            t = a.base[pt].flip(0)
            a.base[pt] = a.base[pb].flip(0)
            a.base[pb] = t
            del pt, pb
        else:
            top, bot = a[lo + i:lo + i + bb], a[hi - i - bb:hi - i]
            t = top.flip(0)            # flip copies: t no longer aliases top
            top.copy_(bot.flip(0))
            bot.copy_(t)
        del t
        i += bb


def rotate(a, k, budget=CHUNK_ELEMS):
    """Rotate a (a 1-D tensor, or an _Elems) in place so that index j holds what index
    (j + k) mod n held (three reversals)."""
    n = a.shape[0]
    k %= n if n else 1
    if n < 2 or k == 0:
        return
    _reverse(a, 0, k, budget)
    _reverse(a, k, n, budget)
    _reverse(a, 0, n, budget)


class Rotator:
    """The loaded inputs' rotations for fresh contents (module docstring), and those of named
    tensors of the model (`state`: [(name, tensor)], its parameters and buffers in gate 4) by the
    same rules."""

    def __init__(self, inputs, rng, budget=CHUNK_ELEMS, state=(), others=()):
        """`others`: tensors never rotated whose storage a rotated one must not share (the
        model's buffers, when only its parameters are rotated)."""
        self.rng = rng
        self.items = []       # [_Storage], one per storage rotated
        self.skipped = []     # [{"input": i, "why": ...}]
        self.state_skipped = []   # [{"state": name, "why": ...}]
        groups = {}           # storage address -> [(key, tensor)], in order of first appearance
        for key, x in [(i, x) for i, x in enumerate(inputs)] + list(state):
            if not isinstance(x, torch.Tensor):
                continue
            if x.layout != torch.strided:
                self._skip(key, "not a dense tensor")
            elif x.numel() == 0:
                self._skip(key, "fewer than two elements")
            else:
                groups.setdefault(storage(x).data_ptr(), []).append((key, x))
        kept = {storage(t).data_ptr() for t in others
                if isinstance(t, torch.Tensor) and t.layout == torch.strided and t.numel() > 0}
        for p, members in groups.items():
            flat, why = _storage_flat(members, p in kept)
            if why:
                for key, _ in members:
                    self._skip(key, why)
            else:
                self.items.append(_Storage([k for k, _ in members], flat, block_elems(flat.shape[0], budget),
                                           _periods([t for _, t in members], flat)))

    def _skip(self, key, why):
        if isinstance(key, int):
            self.skipped.append({"input": key, "why": why})
        else:
            self.state_skipped.append({"state": key, "why": why})

    @property
    def rotated(self):
        """Indices of the inputs rotated (in order)."""
        return sorted(k for it in self.items for k in it.keys if isinstance(k, int))

    @property
    def state_rotated(self):
        """Names of the `state` tensors rotated."""
        return [k for it in self.items for k in it.keys if not isinstance(k, int)]

    def step(self):
        """Rotate every input, flat, by a fresh offset (accumulated for restore)."""
        for it in self.items:
            n = it.flat.shape[0]
            k = _draw(self.rng, n, it.offset, it.seen, it.periods)
            rotate(it.flat, k, it.block)
            it.offset = (it.offset + k) % n
            it.seen.add(it.offset)

    def restore(self):
        """Undo every rotation: the inputs hold exactly what they held before the first step."""
        for it in self.items:
            if it.offset:
                rotate(it.flat, it.flat.shape[0] - it.offset, it.block)
            it.offset = 0


class _Storage:
    """One storage the Rotator rotates: the inputs' indices or state names on it (keys), the
    flat view over it, the offset its rotations add up to (0: as loaded), the elements of a
    reversal block, the offsets it has been at (seen, 0 among them) and the periods of its
    tensors' rows (_periods)."""

    __slots__ = ("keys", "flat", "offset", "block", "seen", "periods")

    def __init__(self, keys, flat, block, periods):
        self.keys, self.flat, self.block, self.periods = keys, flat, block, periods
        self.offset, self.seen = 0, {0}


DRAW_TRIES = 32   # offsets drawn for each preference before it is weighed whole (a storage of at
DRAW_ALL = 1024   # most DRAW_ALL elements) or the next, weaker one is tried (_draw)


def _periods(tensors, flat):
    """The strides of the tensors' dimensions of more than one element, in elements of `flat`
    (their rotated view), between 2 and its length - 1: an offset that is a multiple of one
    moves whole rows (slices, groups) to other places, keeping each one's contents."""
    if isinstance(flat, _Elems):
        return flat.periods()
    size, n = flat.element_size(), flat.shape[0]
    got = set()
    for t in tensors:
        for sz, st in zip(t.shape, t.stride()):
            b = st * t.element_size()
            if sz > 1 and b % size == 0 and 1 < b // size < n:
                got.add(b // size)
    return sorted(got)


def _draw(rng, n, k0, seen, periods):
    """The next rotation's offset k in [1, n) for a storage of n elements at offset k0, drawn
    from rng with, as far as n allows, in order of preference: an arrangement no run has seen
    (k0 + k not in seen: whatever a kernel kept from an earlier run, the loaded contents
    included, was made for other contents) that keeps no row whole, relative to the loaded
    contents or to the last run's (neither k0 + k nor k a multiple of a period); one no run has
    seen; one other than the loaded contents; any."""
    prefs = (lambda k, a: a not in seen and all(k % p and a % p for p in periods),
             lambda k, a: a not in seen,
             lambda k, a: a != 0)
    for ok in prefs:
        for _ in range(DRAW_TRIES):
            k = rng.randrange(1, n)
            if ok(k, (k0 + k) % n):
                return k
        if n <= DRAW_ALL:   # small: every offset weighed, so an arrangement left is always found
            ks = [k for k in range(1, n) if ok(k, (k0 + k) % n)]
            if ks:
                return rng.choice(ks)
    return rng.randrange(1, n)


def _byte_extent(x):
    """[first, end) of the storage bytes x can reach (its bounding range)."""
    last = sum((n - 1) * st for n, st in zip(x.shape, x.stride()))
    size = x.element_size()
    return x.storage_offset() * size, (x.storage_offset() + last + 1) * size


def _dense(x):
    """Whether x's elements fill its bounding range, each once (no gap, no overlap)."""
    expect = 1
    for st, n in sorted((st, n) for n, st in zip(x.shape, x.stride()) if n > 1):
        if st != expect:
            return False
        expect *= n
    return True


def _storage_flat(members, kept):
    """The flat view that members [(key, tensor)] share, to rotate as one (every view of it then
    sees the same rotated contents, so how they alias is kept), or (None, why not). It spans the
    whole storage when the members' bounding ranges start at its first byte and end at its last,
    else the range one member fills densely, when no member reaches past it (an input that is a
    slice of a larger tensor the problem never passes: only the slice's own values move); its
    elements are those of the members' widest dtype, so a rotation moves every member's elements
    whole (dtypes of different widths: their byte ranges must fall on the widest's elements).
    A lone member that fills nothing densely (a strided slice) gives an _Elems instead: its own
    elements, rotated in its order (what it leaves out could be anything: never moved in).
    Refused: a storage a tensor left as loaded also uses, inputs and model tensors on one
    storage, several members of which none fills their range densely, fewer than two
    elements."""
    if kept:
        return None, "shares its storage with a tensor left as loaded"
    if len({isinstance(k, int) for k, _ in members}) > 1:
        return None, "shares its storage with a tensor of the model"
    x = max((t for _, t in members), key=lambda t: t.element_size())
    size, nbytes = x.element_size(), storage(x).nbytes()
    ranges = [_byte_extent(t) for _, t in members]
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    if lo % size or hi % size or nbytes % size:
        return None, "shares its storage with a tensor of another dtype whose elements it splits"
    if (lo, hi) != (0, nbytes) and not any(r == (lo, hi) and _dense(t) for r, (_, t) in zip(ranges, members)):
        if len(members) == 1 and _no_overlap(x) and x.numel() >= 2:
            return _Elems(x), None   # a strided slice alone on its storage: its own elements move
        return None, "a view of part of its storage"
    if hi - lo < 2 * size:
        return None, "fewer than two elements"
    return x.as_strided(((hi - lo) // size,), (1,), lo // size), None


def pick_rounds(rounds, n, rng):
    """n distinct rounds drawn from 0 .. rounds-1 (all of them when fewer), sorted."""
    pool = list(range(rounds))
    return sorted(rng.sample(pool, min(n, len(pool))))


class HostWindow:
    """One re-check round's window: for an output of `numel` elements, the flat range copied to
    the host (the whole output up to `limit`, else `limit` elements at an offset drawn once per
    output position and reused for every variant of the round)."""

    def __init__(self, rng, limit=WINDOW_ELEMS):
        self.rng, self.limit, self.offsets = rng, limit, {}

    def span(self, pos, numel):
        if numel <= self.limit:
            return 0, numel
        if pos not in self.offsets:
            self.offsets[pos] = self.rng.randrange(0, numel - self.limit + 1)
        lo = self.offsets[pos]
        return lo, lo + self.limit

    def copy(self, out):
        """Each output's window in pageable host memory (waits for the run); non-tensor outputs
        as they are."""
        got = []
        for pos, t in enumerate(flatten(out)):
            if not isinstance(t, torch.Tensor):
                got.append(t)
                continue
            flat = t.detach().reshape(-1)
            lo, hi = self.span(pos, flat.numel())
            got.append(flat[lo:hi].to("cpu", copy=True))
        return got


def recheck_stats(base, got, rel_err):
    """compare_stats of each output window of `got` against `base`'s (both HostWindow.copy
    lists): the exact counts (n_mismatch at atol = rtol = 0) and the loose ones (n_rel_err over
    rel_err), trimmed to what the core decides from. A different number of outputs, or a
    tensor against a non-tensor, is one entry with "mismatch": why."""
    if len(base) != len(got):
        return [{"mismatch": "%d outputs, the baseline's %d" % (len(got), len(base))}]
    out = []
    for b, g in zip(base, got):
        if not isinstance(b, torch.Tensor) or not isinstance(g, torch.Tensor):
            if isinstance(b, torch.Tensor) or isinstance(g, torch.Tensor):
                out.append({"mismatch": "a tensor against a non-tensor output"})
            else:
                out.append({"numel": 1, "n_mismatch": 0 if b == g else 1, "n_rel_err": 0 if b == g else 1,
                            "n_nonfinite_mismatch": 0, "dtype": type(b).__name__})
            continue
        st = compare_stats(b, g, 0.0, 0.0, rel_err=rel_err)
        keep = ("shape_mismatch", "numel", "n_mismatch", "n_rel_err", "n_nonfinite_mismatch", "dtype",
                "got_dtype", "first_mismatch", "ref_at_first", "got_at_first", "ref_abs_max", "max_abs_err")
        out.append({k: st[k] for k in keep if k in st})
    return out
