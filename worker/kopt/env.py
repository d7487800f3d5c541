"""The worker's environment: the private Inductor cache, the lazy torch import, the ready event.

* TORCHINDUCTOR_CACHE_DIR is pointed at a fresh private temporary directory (unless the
  environment already sets it), before torch is imported, so each worker has its own Inductor
  cache (PROTOCOL.md: "Inductor's caches are pointed at a private directory per worker"). The
  directory is removed when the worker exits through shutdown, EOF or a fatal error.
* torch and triton are imported inside try blocks: a missing or broken torch is reported in the
  ready event (torch: null, import_error: "...") rather than crashing; the core decides.
* The ready event describes the device the worker sees as cuda:0 (the core sets
  CUDA_VISIBLE_DEVICES per worker).
"""

import os
import platform
import shutil
import sys
import tempfile

from kopt.errors import exc_message


def setup_cache_dir():
    """Point Inductor at a private cache directory; returns it if we created it, else None."""
    if os.environ.get("TORCHINDUCTOR_CACHE_DIR"):
        return None
    d = tempfile.mkdtemp(prefix="kopt-inductor-%d-" % os.getpid())
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = d
    return d


# PyTorch's allocator setting for the worker when the user sets none: expandable segments map
# memory in small pages into growing segments, so a freed block of one size serves a request of
# another and reserved memory stays close to what is allocated. Without it, a step that frees a
# 1 GB buffer and then allocates 1 GB in pieces of other sizes reserves both (level3/02's
# 3.3x-working-set peak in docs/BENCHMARKS.md was reserved, not allocated, memory).
ALLOC_CONF = "expandable_segments:True"


def setup_allocator():
    """Set PYTORCH_CUDA_ALLOC_CONF to ALLOC_CONF unless the user set an allocator
    configuration (either variable name); before torch is imported. Returns the value in force."""
    for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        if os.environ.get(name):
            return os.environ[name]
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = ALLOC_CONF
    return ALLOC_CONF


def remove_cache_dir(d):
    if d:
        shutil.rmtree(d, ignore_errors=True)


def import_torch():
    """(torch module or None, triton module or None, import error message or None)."""
    try:
        import torch  # noqa: F401  (the lazy import the protocol asks for)
    except BaseException as e:  # a broken install can raise anything, even SystemExit
        if isinstance(e, KeyboardInterrupt):
            raise
        return None, None, exc_message(e)
    triton = None
    try:
        import triton  # noqa: F401
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        print("kopt worker: triton import failed: %s" % exc_message(e), file=sys.stderr)
    return torch, triton, None


def ready_event(torch, triton, import_error):
    """The first protocol line (PROTOCOL.md, "Transport")."""
    ev = {
        "event": "ready",
        "protocol": 1,
        "pid": os.getpid(),
        "python": platform.python_version(),
        "torch": getattr(torch, "__version__", None) if torch else None,
        "triton": getattr(triton, "__version__", None) if triton else None,
        "cuda": False,
        "device": None,
        "capability": None,
        "sm_count": None,
        "l2_bytes": None,
        "mem_bytes": None,
        "import_error": import_error,
    }
    if torch is None:
        return ev
    try:
        if torch.cuda.is_available():
            props = torch.cuda.get_device_properties(0)
            ev["cuda"] = True
            ev["device"] = props.name
            ev["capability"] = [int(props.major), int(props.minor)]
            ev["sm_count"] = int(props.multi_processor_count)
            l2 = getattr(props, "L2_cache_size", None)
            ev["l2_bytes"] = int(l2) if l2 is not None else None
            ev["mem_bytes"] = int(props.total_memory)
    except Exception as e:
        ev["cuda"] = False
        print("kopt worker: CUDA is not usable: %s" % exc_message(e), file=sys.stderr)
    return ev
