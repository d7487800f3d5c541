"""CUDA's timing and synchronisation stood in for on the CPU, for the worker tests that time
runs (install()): events read the host clock, synchronize and the spin kernel do nothing, the
current stream is a handle of 0."""
import time
import types

import torch


class Event:
    """torch.cuda.Event on the host clock: elapsed_time in ms between two record() calls."""

    def __init__(self, enable_timing=True):
        self.t = 0.0

    def record(self):
        self.t = time.perf_counter()

    def elapsed_time(self, other):
        return (other.t - self.t) * 1000.0


def install():
    torch.cuda.Event = Event
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda._sleep = lambda *a, **k: None
    torch.cuda.current_stream = lambda *a, **k: types.SimpleNamespace(cuda_stream=0)
