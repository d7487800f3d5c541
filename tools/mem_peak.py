#!/usr/bin/env python3
"""Where a worker step's GPU memory peak comes from (developer tool).

Run kopt with the worker recording its allocations:

    KOPT_MEM_HISTORY=/tmp/mh KOPT_WORKER_ENV=KOPT_MEM_HISTORY kopt optimize problem.py ...

(kopt bench passes the environment on to its kopt optimize runs), then

    python3 tools/mem_peak.py /tmp/mh/mem-PID.pickle [--op time] [--top 12]

replays the allocator's trace, prints each step's (the report's peak_by_step names) largest
allocated bytes, and for the steps asked for (default: the three largest in the main phase,
i.e. names without a "/phase") the blocks live at that moment, grouped by where they were
allocated (the innermost frames of kopt's worker, Inductor's modules and the problem's file).
Needs no GPU; the pickle holds torch objects only as plain dicts and lists.
"""
import argparse
import bisect
import pickle
import sys

KEEP = ("/kopt/", "_inductor/", "/bench/", "/tests/", "torchinductor", "/tmp/")


def op_at(marks, times, t):
    """The step running at time t (us): the last mark at or before it."""
    i = bisect.bisect_right(times, t) - 1
    return marks[i][1] if i >= 0 else "(before the first op)"


def where(frames, depth):
    """A short signature of an allocation's stack: its innermost `depth` frames in kopt, Inductor
    or the problem's files (outermost last)."""
    got = []
    for f in frames:
        fn = f.get("filename", "?")
        if any(k in fn for k in KEEP):
            got.append("%s:%d %s" % (fn.split("/")[-1], f.get("line", 0), f.get("name", "?")))
            if len(got) == depth:
                break
    return " < ".join(got) if got else "(no kopt/inductor frame)"


GROW = ("segment_alloc", "segment_map")
SHRINK = ("segment_free", "segment_unmap")


def replay(events, marks, stop=None):
    """Replays the trace's events; returns ({step: (peak allocated, event index)}, {step: (peak
    reserved, allocated then, event index)}, unknown frees) or, with stop=index, the live blocks
    {addr: (size, frames)} right after that event. Reserved counts from the trace's start: the
    segments mapped before it are not in it."""
    times = [m[0] for m in marks]
    live, cur, res, peaks, rpeaks, unknown = {}, 0, 0, {}, {}, 0
    for i, e in enumerate(events):
        a = e.get("action")
        if a == "alloc":
            live[e["addr"]] = (e["size"], e.get("frames", []))
            cur += e["size"]
        elif a == "free_completed":
            blk = live.pop(e["addr"], None)
            if blk is None:
                unknown += 1
            else:
                cur -= blk[0]
        elif a in GROW:
            res += e["size"]
        elif a in SHRINK:
            res -= e["size"]
        if stop is not None:
            if i == stop:
                return live
            continue
        if a == "alloc" or a in GROW:
            name = op_at(marks, times, e.get("time_us", 0))
            if a == "alloc" and cur > peaks.get(name, (0, 0))[0]:
                peaks[name] = (cur, i)
            if res > rpeaks.get(name, (0, 0, 0))[0]:
                rpeaks[name] = (res, cur, i)
    return peaks, rpeaks, unknown


def show(live, title, a):
    """Prints the live blocks grouped by where they were allocated, largest first."""
    groups = {}
    for size, frames in live.values():
        k = where(frames, a.depth)
        n, s = groups.get(k, (0, 0))
        groups[k] = (n + 1, s + size)
    print("\n%s, %d blocks" % (title, len(live)))
    for k, (n, s) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:a.top]:
        print("  %8.3f GB %4d  %s" % (s / 1e9, n, k))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pickle")
    ap.add_argument("--op", action="append", help="a step to detail (repeatable)")
    ap.add_argument("--top", type=int, default=12, help="groups listed per step")
    ap.add_argument("--depth", type=int, default=4, help="frames in a group's signature")
    a = ap.parse_args()
    d = pickle.load(open(a.pickle, "rb"))
    snap, marks = d["snapshot"], d["marks"]
    traces = snap.get("device_traces") or [[]]
    events = max(traces, key=len)
    print("%d events, %d step marks" % (len(events), len(marks)))
    peaks, rpeaks, unknown = replay(events, marks)
    if unknown:
        print("note: %d frees of blocks allocated before the trace's start (the ring buffer wrapped): "
              "peaks are low by what those held" % unknown)
    print("  %-28s %12s %12s %18s" % ("step", "allocated", "reserved", "allocated then"))
    for name, (b, _) in sorted(peaks.items(), key=lambda kv: -kv[1][0]):
        r = rpeaks.get(name, (0, 0, 0))
        print("  %-28s %9.3f GB %9.3f GB %15.3f GB" % (name, b / 1e9, r[0] / 1e9, r[1] / 1e9))
    want = a.op or [n for n, _ in sorted(((n, v) for n, v in peaks.items() if "/" not in n),
                                          key=lambda kv: -kv[1][0])[:3]]
    for name in want:
        if name not in peaks:
            print("\n%s: no allocation in this step" % name)
            continue
        b, idx = peaks[name]
        show(replay(events, marks, stop=idx), "%s: %.3f GB live at its allocated peak" % (name, b / 1e9), a)
        r = rpeaks.get(name)
        if r and r[2] != idx:
            show(replay(events, marks, stop=r[2]), "%s: %.3f GB live at its reserved peak (%.3f GB reserved)"
                 % (name, r[1] / 1e9, r[0] / 1e9), a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
