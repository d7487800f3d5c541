"""Protocol errors and the classification of exceptions (docs/PROTOCOL.md, "Error codes").

Ops raise OpError(code, message, exc=...) for failures they understand (syntax_error,
model_raises, ...). Whatever an op raises, the server first asks `classify` whether the
underlying exception (or anything in its __cause__/__context__ chain) is really a CUDA error or
an out-of-memory: those take precedence over the op's own code, because a CUDA error leaves the
context unusable (cuda_error, fatal) whichever step met it, and an OOM is handled the same way
everywhere (caches emptied, worker stays up).

Messages are one line: "ExceptionType: text" (newlines folded). Tracebacks go in "detail".
"""

import sys
import traceback

MAX_MESSAGE = 2000
MAX_DETAIL = 30000

# Substrings of RuntimeError texts that mean the CUDA context met an error (sticky or not, the
# safe reaction is the same: answer fatal and let the core start a fresh worker).
_CUDA_MARKERS = (
    "CUDA error",
    "CUDA driver error",
    "illegal memory access",
    "illegal instruction",
    "misaligned address",
    "device-side assert",
    "unspecified launch failure",
    "launch timed out",
    "Triton Error [CUDA]",
    "CUBLAS_STATUS_EXECUTION_FAILED",
    "CUBLAS_STATUS_INTERNAL_ERROR",
    "CUDNN_STATUS_EXECUTION_FAILED",
    "CUDNN_STATUS_MAPPING_ERROR",
    "cudaErrorLaunchFailure",
    "cudaErrorIllegalAddress",
)
_OOM_MARKERS = ("CUDA out of memory", "CUDA error: out of memory", "CUBLAS_STATUS_ALLOC_FAILED")


class OpError(Exception):
    """A failure with a protocol error code. `exc` is the underlying exception, if any."""

    def __init__(self, code, message, detail=None, exc=None, fatal=False):
        super().__init__(message)
        self.code = code
        self.message = one_line(message)
        self.detail = detail if detail is not None else (exc_detail(exc) if exc is not None else "")
        self.exc = exc
        self.fatal = fatal


class BadRequest(OpError):
    def __init__(self, message):
        super().__init__("bad_request", message)


def wrap(code, what, exc):
    """OpError(code) for exception `exc`, with the message "what: Type: text"."""
    msg = exc_message(exc)
    return OpError(code, "%s: %s" % (what, msg) if what else msg, exc=exc)


def one_line(text, limit=MAX_MESSAGE):
    s = " ".join(str(text).split())
    return s if len(s) <= limit else s[: limit - 3] + "..."


def exc_message(exc):
    """'ExceptionType: text' on one line; SyntaxErrors get 'file:line'."""
    if isinstance(exc, SyntaxError):
        where = "%s:%s" % (exc.filename or "?", exc.lineno or "?")
        return one_line("%s: %s (%s)" % (type(exc).__name__, exc.msg, where))
    text = str(exc)
    return one_line("%s: %s" % (type(exc).__name__, text) if text else type(exc).__name__)


def exc_detail(exc):
    """The traceback of exc (its tail if very long)."""
    try:
        s = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    except Exception:
        s = repr(exc)
    return s if len(s) <= MAX_DETAIL else "...\n" + s[-MAX_DETAIL:]


def _chain(exc):
    seen = set()
    while exc is not None and id(exc) not in seen and len(seen) < 32:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def classify(exc):
    """'out_of_memory', 'cuda_error' or None for an exception and its cause chain."""
    torch = sys.modules.get("torch")
    oom_t = getattr(getattr(torch, "cuda", None), "OutOfMemoryError", None) if torch else None
    acc_t = getattr(torch, "AcceleratorError", None) if torch else None
    has_oom = has_cuda = False
    for e in _chain(exc):
        text = str(e)
        if (oom_t is not None and isinstance(e, oom_t)) or any(m in text for m in _OOM_MARKERS):
            has_oom = True
        elif (acc_t is not None and isinstance(e, acc_t)) or any(m in text for m in _CUDA_MARKERS):
            has_cuda = True
    # A real CUDA error anywhere in the chain wins: the context may be unusable.
    return "cuda_error" if has_cuda else ("out_of_memory" if has_oom else None)
