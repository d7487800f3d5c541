"""CUDA's timing and synchronisation stood in for on the CPU, for the worker tests that time
runs (install()): events read the host clock and, queried, say the GPU has not reached them
(unless Event.late_queries says otherwise), synchronize does nothing, the spin kernel's lengths
are kept in SLEEPS, the current stream is a handle of 0."""
import time
import types

import torch


SLEEPS = []   # every spin kernel's length in cycles, in order


class Event:
    """torch.cuda.Event on the host clock: elapsed_time in ms between two record() calls."""

    def __init__(self, enable_timing=True):
        self.t = 0.0

    def record(self):
        self.t = time.perf_counter()

    def elapsed_time(self, other):
        return (other.t - self.t) * 1000.0

    late_queries = 0   # the next this many query() calls say the GPU is past the event (a host that fell behind)

    def query(self):
        if Event.late_queries > 0:
            Event.late_queries -= 1
            return True
        return False


def install():
    torch.cuda.Event = Event
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda._sleep = lambda cycles, *a, **k: SLEEPS.append(cycles)
    torch.cuda.current_stream = lambda *a, **k: types.SimpleNamespace(cuda_stream=0)
