"""GPU timing: L2 flush, stream stall, and the `time` op (PROTOCOL.md, `time`).

One timed run of a variant, all on the current stream:
    prepared = variant.prepare()         the argument list (outside the timed region)
    flush_buf.zero_()                    write over 2x the L2 size: nothing of the run's data
                                         stays cached (skipped with flush_l2:false)
    torch.cuda._sleep(cycles)            a spin kernel that holds the GPU while the CPU
                                         enqueues the whole run, so the events measure GPU time
                                         and not Python launch time
    start.record(); variant.run(prepared); end.record()
    (after end.record(): every output of the run is overwritten with NaN -- integers with
    their minimum -- before it is freed, outside the timed region, so the next run's outputs,
    carved from the same memory, never start out holding correct results: a kernel that skips
    work whose output "already looks right" gains nothing; poison_outputs:false turns it off)
Rounds: each round runs every variant once, in an order rotated by one per round; the round
ends with torch.cuda.synchronize(), then every elapsed_time is read. Nothing is cloned between
runs (kopt.targets): the arguments are the loaded inputs and the model's weights. After the
rounds the loaded inputs are verified against their checksums from `load` and restored if a
variant changed them; the result names the variants that ran when that happened
(`loaded_inputs_changed`: the core refuses a candidate that changes the model's inputs). The
model's parameters and buffers are verified too (Problem.check_state): they cannot be drawn
again, so a change is the fatal `state_changed` error (the core refuses the candidate and
restarts the worker, which loads them afresh): a kernel that writes them only once it can tell
it is being timed (docs/SECURITY.md, "Timing") is caught here.

The stall. `cycles_per_ms` is calibrated once per worker by timing torch.cuda._sleep with
events. Warm-up runs (untimed, each followed by a synchronize) measure each variant's CPU
enqueue time; the stall is max(0.2 ms, 1.5 x the largest per-variant median enqueue time),
capped at 50 ms (a variant that needs more is CPU-bound: its samples then include launch gaps).
With warmup 0 there is nothing to measure and the stall is 0.2 ms. A round in which the host
still fell behind (the GPU had reached a run's start event when its last launch was enqueued: a
descheduled process on a busy host, whose samples would then hold idle gaps) is dropped and timed
again with the stall doubled (_timed_rounds; at most `rounds` such rounds, rounds_timed_again
counts them). The result's sleep_ms is the stall at the end. Results are raw samples;
statistics are the core's.

fresh_inputs (default false) rotates the loaded inputs and the model's parameters (kopt.fresh;
fresh_inputs.state_rotated counts them; not its buffers) in place before every run but the first
-- the timed runs and the host_rounds' -- so that no run reads the contents the run before it
read (kopt.fresh: fresh contents, so that no kernel finds results it stashed for contents it has
seen, or an intermediate another variant left for the same contents), and undoes the rotations
at the end; recheck_rounds (default 0; needs fresh_inputs) copies, in that many rounds drawn at
random, each candidate's (variant >= 1) outputs to pageable host memory, runs variant 0 once
more, untimed, right after it on the same contents, and compares the two (rechecks: the core
decides); recheck_rel (default [0.01, 0, 0.01]) is compare_stats' rel_err for it.

host_rounds (default 0) adds that many rounds timed as the model is called (host_samples): the
wall time from a call to the end of its GPU work, the device idle before it and no stall, so
host-side work (launchers, allocations, dispatch) is in the sample; host_recheck_rounds
(default 0; needs fresh_inputs) re-checks that many of them, drawn at random, as recheck_rounds
does the timed ones (after the timed span; their rechecks entries say "host": true), so that a
kernel cannot cheat in the as-called rounds alone.
"""

import statistics
import time

import torch

from kopt.compare import count_nonfinite
from kopt.errors import BadRequest
from kopt.fresh import HostWindow, Rotator, new_rng, pick_rounds, recheck_stats, rotation_bytes
from kopt.poison import fill
from kopt.protocol import get_arg
from kopt.targets import make_target
from kopt.tensors import flatten

MIN_STALL_MS = 0.2
MAX_STALL_MS = 50.0
STALL_FACTOR = 1.5
DEFAULT_L2 = 64 << 20


def flush_buffer(ctx):
    """The persistent flush buffer: 2x the device's L2 size, bytes."""
    if ctx.flush_buf is None:
        l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", 0) or DEFAULT_L2
        ctx.flush_buf = torch.empty(2 * int(l2), dtype=torch.uint8, device="cuda")
    return ctx.flush_buf


def cycles_per_ms(ctx):
    """GPU clock cycles of torch.cuda._sleep per millisecond (calibrated once)."""
    if ctx.cycles_per_ms is None:
        torch.cuda._sleep(1000)  # load the kernel
        torch.cuda.synchronize()
        n = 2_000_000
        rates = []
        for _ in range(5):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            torch.cuda._sleep(n)
            e.record()
            e.synchronize()
            ms = s.elapsed_time(e)
            if ms > 0:
                rates.append(n / ms)
        ctx.cycles_per_ms = statistics.median(rates) if rates else 1.5e6
    return ctx.cycles_per_ms


def stall_ms(enqueue_s_per_variant):
    """The stall for a list of per-variant lists of warm-up enqueue times (seconds)."""
    worst = 0.0
    for samples in enqueue_s_per_variant:
        # The first warm-up run may include compilation/autotuning: drop it when we can.
        s = samples[1:] if len(samples) > 1 else samples
        if s:
            worst = max(worst, statistics.median(s) * 1000.0)
    return min(MAX_STALL_MS, max(MIN_STALL_MS, STALL_FACTOR * worst))


def stall(ctx, ms):
    """Enqueue the spin kernel for about `ms` milliseconds."""
    torch.cuda._sleep(max(1, int(ms * cycles_per_ms(ctx))))


def poison_outputs(out):
    """Overwrite every output tensor of a run (see the module docstring)."""
    for t in flatten(out):
        if isinstance(t, torch.Tensor):
            fill(t, "nan")


def warm_up(variants, warmup, poison):
    """The warm-up rounds of op_time: compiles / autotunes lazily built targets and measures each
    variant's CPU enqueue time (seconds, per run). Outputs are poisoned like the timed runs'
    (poison_outputs), so that no timed run finds a warm-up's correct results in recycled
    memory."""
    enqueue = [[] for _ in variants]
    for _ in range(warmup):
        for i, v in enumerate(variants):
            p = v.prepare()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = v.run(p)
            enqueue[i].append(time.perf_counter() - t0)
            if poison:
                poison_outputs(out)
            del out, p
            torch.cuda.synchronize()
    return enqueue


def host_samples(variants, rounds, buf, poison, rot=None, rng=None, recheck_rounds=0, recheck_rel=None):
    """Host-inclusive times (ms) of each variant, as the model is called, and their re-checks:
    (samples, rechecks). Per round, every variant once in a rotated order, its L2 flushed and the
    device idle before the call, then the wall time of the call (Python, launchers, host dispatch)
    to the end of its GPU work; no stall, so host work the call adds is in the sample. With a
    Rotator `rot`, the loaded inputs are rotated before every call (outside the timed span), as in
    the timed rounds, and in `recheck_rounds` rounds drawn at random with `rng` each candidate's
    outputs are compared with an untimed baseline run's on the same contents, after the timed
    span (_recheck_run; entries marked "host"), so these rounds are no safer to cheat in than the
    timed ones."""
    n = len(variants)
    out = [[] for _ in range(n)]
    checked = set(pick_rounds(rounds, recheck_rounds, rng)) if rot is not None and rng is not None and n > 1 else set()
    rechecks = []
    for r in range(rounds):
        window = HostWindow(rng) if r in checked else None
        for k in range(n):
            i = (r + k) % n
            if rot is not None:
                rot.step()
            p = variants[i].prepare()
            if buf is not None:
                buf.zero_()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            o = _run(variants[i], p, i == 0 and rot is not None)
            torch.cuda.synchronize()
            out[i].append((time.perf_counter() - t0) * 1000.0)
            got = window.copy(o) if window is not None and i > 0 else None
            if poison:
                poison_outputs(o)
            del o, p
            if got is not None:
                rechecks.append(_recheck_run(variants[0], window, got, poison, recheck_rel, r, i, host=True))
    return out, rechecks


def _recheck_run(base, window, got, poison, recheck_rel, r, i, host=False):
    """One re-check: the baseline `base` run once more, untimed, on the contents candidate i just
    read, its outputs copied through the same window and compared with the candidate's `got`
    (a `rechecks` entry; "host": the round was an as-called one)."""
    q = base.prepare()
    ref = _run(base, q, True)
    want = window.copy(ref)
    if poison:
        poison_outputs(ref)
    del ref, q
    e = {"round": r, "variant": i, "outputs": recheck_stats(want, got, recheck_rel)}
    if host:
        e["host"] = True
    return e


def _undo_rotations(ctx, rot, done):
    """Put the loaded inputs back after fresh-content rounds. When the rounds ended in an error
    and undoing fails as well (a broken CUDA context, say), the round's error is the one
    reported: the inputs are then restored from a new draw where the checksums say so, and the
    worker is restarted anyway after a CUDA error."""
    try:
        rot.restore()
        torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - see the docstring
        if done:
            raise
        try:
            ctx.problem.verify_inputs()
        except Exception:  # noqa: BLE001
            pass


class _BaselineRefusesRotation(Exception):
    """Variant 0 (the problem's own compiled model) raised on rotated inputs: the problem's
    inputs have an order its model relies on (sorted values, offsets), so fresh contents by
    rotation do not apply to it; the rounds are timed again on the loaded inputs."""


def _run(v, p, baseline_on_rotated):
    """One run of variant v on its prepared arguments; a raise of the baseline on rotated inputs
    becomes _BaselineRefusesRotation (the problem's own model: not the candidate's fault)."""
    try:
        return v.run(p)
    except Exception as e:  # noqa: BLE001 - re-raised unless it is the baseline's
        if baseline_on_rotated:
            raise _BaselineRefusesRotation("the baseline raised on rotated inputs: %s" % e) from e
        raise


def _nonfinite(out):
    """Non-finite elements of each floating-point output of a run (a list, in output order); the
    outputs are poisoned afterwards, as after every run (no later run finds them)."""
    counts = [count_nonfinite(t) for t in flatten(out)
              if isinstance(t, torch.Tensor) and t.is_floating_point()]
    poison_outputs(out)
    return counts


def _probe_buffers(v, rot):
    """Whether the problem's own model (variant v) takes its buffers rotated: it runs once on the
    contents as loaded and once after rot.step(); _BaselineRefusesRotation when the second run
    raises or has more non-finite outputs than the first (a mask rotated so that whole rows are
    masked, a table whose order the model relies on) -- then the buffers are left alone."""
    with torch.no_grad():
        loaded = _nonfinite(v.run(v.prepare()))
        rot.step()
        try:
            rotated = _nonfinite(v.run(v.prepare()))
        except Exception as e:  # noqa: BLE001 - the problem's own model, not a candidate
            raise _BaselineRefusesRotation("the baseline raised with its buffers rotated: %s" % e) from e
    if len(rotated) != len(loaded) or any(b > a for a, b in zip(loaded, rotated)):
        raise _BaselineRefusesRotation("the baseline's outputs have non-finite values with its buffers rotated "
                                       "(%s, %s as loaded)" % (sum(rotated), sum(loaded)))


def _timed_rounds(ctx, variants, rounds, buf, sleep, events, poison, rot, rng, recheck_rounds, recheck_rel):
    """op_time's interleaved rounds: (samples, rechecks, stall ms at the end, rounds timed again).
    With a Rotator `rot`, the loaded inputs are rotated before every run but the first, so that no
    run reads the contents the run before it read; in `recheck_rounds` rounds drawn at random,
    each candidate's (variant >= 1) outputs are compared with those of an untimed run of variant 0
    right after it, on the same contents (module docstring). A round in which the GPU reached a
    run's start event before the host had enqueued the run's last launch (the host fell behind
    the stall: a descheduled process on a busy machine) may have idle gaps in its samples: it is
    timed again with the stall doubled (late_round; at most `rounds` times, and not past
    MAX_STALL_MS), its re-checks not repeated."""
    n = len(variants)
    samples = [[] for _ in range(n)]
    checked = set(pick_rounds(rounds, recheck_rounds, rng)) if rot is not None and n > 1 else set()
    rechecks = []
    first = True
    again = 0
    r = 0
    while r < rounds:
        window = HostWindow(rng) if r in checked else None
        late = False
        for k in range(n):
            i = (r + k) % n
            if rot is not None and not first:
                rot.step()
            v = variants[i]
            p = v.prepare()
            if buf is not None:
                buf.zero_()
            stall(ctx, sleep)
            start, end = events[i]
            start.record()
            out = _run(v, p, i == 0 and rot is not None and not first)
            end.record()
            late = late or start.query()   # the GPU already past the start: it may have waited on the host
            first = False
            got = window.copy(out) if window is not None and i > 0 else None   # pageable host memory
            if poison:
                poison_outputs(out)
            del out, p
            if got is not None:   # the baseline on the very contents the candidate just read
                rechecks.append(_recheck_run(variants[0], window, got, poison, recheck_rel, r, i))
                del got
        checked.discard(r)   # re-checked once, also when the round is timed again
        torch.cuda.synchronize()
        if late_round(late, sleep, again, rounds):
            again += 1
            sleep = min(MAX_STALL_MS, 2 * sleep)
            continue
        for i in range(n):
            start, end = events[i]
            samples[i].append(start.elapsed_time(end))
        r += 1
    return samples, rechecks, sleep, again


def late_round(late, sleep, again, rounds):
    """Whether a round whose host fell behind (`late`) is timed again: while the stall can still
    grow (below MAX_STALL_MS: a variant that needs more is CPU-bound, its samples include launch
    gaps either way) and fewer than `rounds` rounds were timed again."""
    return late and sleep < MAX_STALL_MS and again < rounds


def op_time(ctx, req):
    specs = get_arg(req, "variants", list)
    rounds = get_arg(req, "rounds", int, 30)
    warmup = get_arg(req, "warmup", int, 5)
    flush = get_arg(req, "flush_l2", bool, True)
    poison = get_arg(req, "poison_outputs", bool, True)
    host_rounds = get_arg(req, "host_rounds", int, 0)
    fresh = get_arg(req, "fresh_inputs", bool, False)
    recheck_rounds = get_arg(req, "recheck_rounds", int, 0)
    host_recheck_rounds = get_arg(req, "host_recheck_rounds", int, 0)
    recheck_rel = get_arg(req, "recheck_rel", list, [0.01, 0.0, 0.01])
    if host_rounds < 0 or recheck_rounds < 0 or host_recheck_rounds < 0:
        raise BadRequest("host_rounds, recheck_rounds and host_recheck_rounds must be >= 0")
    if (recheck_rounds or host_recheck_rounds) and not fresh:
        raise BadRequest("recheck_rounds and host_recheck_rounds need fresh_inputs")
    if len(recheck_rel) != 3 or not all(isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0
                                        for x in recheck_rel):
        raise BadRequest("recheck_rel must be [thr, floor_abs, floor_rel], numbers >= 0")
    if not specs:
        raise BadRequest("variants must be a non-empty array of targets")
    if rounds < 1 or warmup < 0:
        raise BadRequest("rounds must be >= 1 and warmup >= 0")

    variants = [make_target(ctx, s) for s in specs]
    n = len(variants)
    from kopt.room import make_room
    # the model's state rotated with the inputs: parameters and buffers where the problem's own
    # model takes that; buffers may hold structure it relies on (a causal mask), so they are
    # tried first and dropped where the baseline raises or gives non-finite outputs with them
    # rotated (_probe_buffers); then parameters and inputs; then the inputs alone
    keep = ctx.problem is not None and not ctx.problem.mutates_state
    params = ctx.problem.params if keep else []
    buffers = ctx.problem.buffers if keep else []
    tries = []
    if fresh and ctx.problem is not None:
        if buffers:
            tries.append(("buffers", params + buffers))
        if params:
            tries.append(("params", params))
        tries.append(("inputs", []))
    rot_bytes = rotation_bytes(list(ctx.problem.inputs) + [t for _, t in params + buffers]) \
        if fresh and ctx.problem is not None else 0
    make_room(ctx, ctx.run_need + (flush_buffer(ctx).numel() if flush else 0) + rot_bytes)
    with torch.no_grad():
        enqueue = warm_up(variants, warmup, poison)
        sleep = stall_ms(enqueue) if warmup else MIN_STALL_MS
        buf = flush_buffer(ctx) if flush else None
        cycles_per_ms(ctx)
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(n)]
        fresh_info = None
        buffers_why = None
        for label, with_state in tries:
            rng = new_rng()
            # the model's tensors not rotated in this try: a rotated one must not share their storage
            names = {name for name, _ in with_state}
            others = [t for name, t in ctx.problem.state if name not in names]
            rot = Rotator(ctx.problem.inputs, rng, state=with_state, others=others)
            done = False
            try:
                if label == "buffers":
                    _probe_buffers(variants[0], rot)
                samples, rechecks, sleep, again = _timed_rounds(ctx, variants, rounds, buf, sleep, events, poison,
                                                                rot, rng, recheck_rounds, recheck_rel)
                host = None
                if host_rounds:
                    host, more = host_samples(variants, host_rounds, buf, poison, rot, rng, host_recheck_rounds,
                                              recheck_rel)
                    rechecks += more
                done = True
                fresh_info = {"rotated": rot.rotated, "skipped": rot.skipped}
                if params or buffers:
                    fresh_info["state_rotated"] = len(rot.state_rotated)
                    fresh_info["state_skipped"] = rot.state_skipped if with_state else "refused by the model"
                if buffers:
                    fresh_info["buffers"] = "rotated" if label == "buffers" else "refused by the model: %s" % buffers_why
                break
            except _BaselineRefusesRotation as why:   # the problem's own model: not the candidate's
                fresh_info = {"unusable": str(why)}
                if label == "buffers":
                    buffers_why = str(why)
            finally:
                _undo_rotations(ctx, rot, done)
        if fresh_info is None or "unusable" in fresh_info:
            samples, rechecks, sleep, again = _timed_rounds(ctx, variants, rounds, buf, sleep, events, poison, None,
                                                            None, 0, None)
            host = host_samples(variants, host_rounds, buf, poison)[0] if host_rounds else None
    res = {"samples": samples, "sleep_ms": sleep, "rounds_timed_again": again}
    if fresh_info is not None:
        res["fresh_inputs"] = fresh_info
        res["rechecks"] = rechecks
    if warmup:   # each variant's host time to enqueue its call (median of the warm-up runs), ms
        res["enqueue_ms"] = [sorted(e)[len(e) // 2] * 1000.0 for e in enqueue]
    if host is not None:
        res["host_samples"] = host
    if ctx.problem is not None and any(isinstance(s, dict) and s.get("kind") == "module" for s in specs):
        changed = ctx.problem.verify_inputs()
        if changed:
            res["loaded_inputs_changed"] = changed
        # the weights cannot be drawn again: a change is fatal (the restarted worker reloads them)
        ctx.problem.check_state("a timed module")
    return res
