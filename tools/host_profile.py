"""Where a shipped module's per-call time goes as the model is called (developer tool, GPU only).

usage: python3 tools/host_profile.py PROBLEM.py OUT_DIR [--calls N]
OUT_DIR is a `kopt optimize`/`kopt verify` output directory (its kopt_loader.py). For the eager
model, torch.compile (default) and kopt's module: the median of N calls (a) as called: device idle,
L2 not flushed, wall time from the call to the end of its GPU work, as the worker's host_samples;
(b) host enqueue: the call's own wall time without waiting for the GPU. Then one torch.profiler
trace of 5 calls of kopt's module: the host operations by total CPU time, and for each call the
gap from its start to the first GPU kernel's start (what as-called timing sees before the GPU
works). Written because kopt bench's as-called speedups trail the GPU-time ones (twenty-first
session, docs/BENCHMARKS.md: about 0.17 ms a call on level1/01); first run in the twenty-second
session (docs/BENCHMARKS.md: kopt's module 1.010 ms as called against torch.compile's 1.443 ms).
"""
import importlib.util
import statistics
import sys
import time

import torch


def load_problem(path):
    spec = importlib.util.spec_from_file_location("problem", path)
    prob = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prob)
    return prob


def problem_and_kopt(prob_path, out_dir):
    """(model, inputs, kopt's module): the problem's model built as the worker builds it (seed 0,
    eval, CUDA), its inputs (seed 0, on the GPU), and OUT_DIR's kopt_loader.py module over it."""
    prob = load_problem(prob_path)
    torch.manual_seed(0)
    model = prob.Model(*prob.get_init_inputs()).cuda().eval()
    torch.manual_seed(0)
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in prob.get_inputs()]
    sys.path.insert(0, out_dir)
    from kopt_loader import load_optimized
    return model, inputs, load_optimized(model)


def timings(fn, inputs, calls, flush=None):
    """(median as-called ms, median host-enqueue ms) of `calls` calls of fn(*inputs) after five
    warm-up calls; with `flush` (a buffer of twice the L2), the buffer is zeroed before each call,
    outside the timed span, as the worker's host_samples does."""
    for _ in range(5):
        fn(*inputs)
    torch.cuda.synchronize()
    called, enqueue = [], []
    for _ in range(calls):
        if flush is not None:
            flush.zero_()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(*inputs)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        t2 = time.perf_counter()
        enqueue.append((t1 - t0) * 1e3)
        called.append((t2 - t0) * 1e3)
    return statistics.median(called), statistics.median(enqueue)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    prob_path, out_dir = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[sys.argv.index("--calls") + 1]) if "--calls" in sys.argv else 50
    model, inputs, fast = problem_and_kopt(prob_path, out_dir)
    compiled = torch.compile(model)
    with torch.no_grad():
        for name, fn in (("eager", model), ("torch.compile default", compiled), ("kopt", fast)):
            c, q = timings(fn, inputs, calls)
            print("%-22s as called %.4f ms, host enqueue %.4f ms (median of %d)" % (name, c, q, calls))
        act = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=act) as prof:
            for k in range(5):
                with torch.profiler.record_function("kopt_call_%d" % k):
                    fast(*inputs)
                torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=20))
    events = prof.events()
    for k in range(5):
        call = [e for e in events if e.name == "kopt_call_%d" % k and e.device_type == torch.autograd.DeviceType.CPU]
        if not call:
            continue
        start, end = call[0].time_range.start, call[0].time_range.end
        gpu = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA and e.time_range.start >= start]
        first = min(gpu, key=lambda e: e.time_range.start) if gpu else None
        print("call %d: host %.1f us; first GPU kernel %s starts %.1f us after the call"
              % (k, end - start, first.name[:60] if first else "-", (first.time_range.start - start) if first else -1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
