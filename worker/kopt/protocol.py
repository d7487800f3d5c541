"""The JSON-lines channel between the C core and the worker (docs/PROTOCOL.md, "Transport").

Stream hygiene. The protocol owns the process's original stdin and stdout; nothing else may
touch them:
  * the real stdout fd is duplicated for protocol use (os.dup(1)); then fd 1 and sys.stdout are
    pointed at stderr (os.dup2(2, 1)), so prints from user models, torch, triton, and raw C-level
    writes to fd 1 (by this process or by children that inherit fd 1) all land on stderr;
  * the real stdin fd is duplicated for reading requests, and fd 0 is pointed at /dev/null, so
    that no child process (Inductor's compile workers, ...) can ever consume a request line.
Duplicated fds are non-inheritable (Python's default), so children never see the protocol.

Each protocol line is one JSON object, ASCII-encoded (a subset of UTF-8), written in one piece
and flushed at once. Floats that JSON cannot represent (NaN, +-inf) are written as the strings
"nan", "inf", "-inf"; objects JSON does not know become their repr() string.
"""

import json
import math
import os
import sys

_REQUIRED = object()


class ChannelClosed(Exception):
    """The core closed the protocol pipe (it is gone, or it killed us): nothing to answer."""


class Channel:
    """Reads requests from the protocol input and writes responses/events to the protocol output."""

    def __init__(self):
        # Flush anything Python buffered for the old stdout before fd 1 changes meaning.
        try:
            sys.stdout.flush()
        except Exception:
            pass
        out_fd = os.dup(1)
        in_fd = os.dup(0)
        os.dup2(2, 1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        sys.stdout = sys.stderr
        self._out = os.fdopen(out_fd, "wb")
        self._in = os.fdopen(in_fd, "rb")

    def read_line(self):
        """The next request line as bytes, or None at EOF."""
        line = self._in.readline()
        if not line:
            return None
        return line

    def write(self, obj):
        """Write one protocol line (one JSON object) and flush it."""
        data = encode(obj) + b"\n"
        try:
            self._out.write(data)
            self._out.flush()
        except (BrokenPipeError, ValueError, OSError) as e:
            raise ChannelClosed(str(e))

    def log(self, message):
        """A progress event: the core logs it at debug level and keeps waiting."""
        self.write({"event": "log", "message": str(message)})


def sanitize(obj):
    """A copy of obj made of JSON types only (see the module docstring for the rules)."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [sanitize(v) for v in obj]
    return repr(obj)


def encode(obj):
    """One protocol line's bytes (without the newline)."""
    return json.dumps(sanitize(obj), ensure_ascii=True, allow_nan=False,
                      separators=(",", ":")).encode("ascii")


def get_arg(req, name, types, default=_REQUIRED):
    """Argument `name` of request `req`, type-checked; raises BadRequest when missing or wrong.

    A missing argument or JSON null gives `default` (BadRequest if there is none). `types` is
    a type or a tuple of types; a boolean is never accepted as a number, a whole float is
    accepted as an int, an int as a float."""
    from kopt.errors import BadRequest

    v = req.get(name)
    if v is None:
        if default is _REQUIRED:
            raise BadRequest("missing argument '%s'" % name)
        return default
    if not isinstance(types, tuple):
        types = (types,)
    if isinstance(v, bool):
        if bool in types:
            return v
        raise BadRequest("argument '%s' must be %s, got a boolean" % (name, _names(types)))
    if int in types and not isinstance(v, int) and isinstance(v, float) and v.is_integer():
        return int(v)
    if float in types and isinstance(v, int):
        return v if int in types else float(v)
    if not isinstance(v, types):
        raise BadRequest("argument '%s' must be %s, got %s" % (name, _names(types), _json_type(v)))
    return v


def _json_type(v):
    return {dict: "an object", list: "an array", str: "a string", int: "an integer",
            float: "a number"}.get(type(v), type(v).__name__)


def _names(types):
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
             dict: "an object", list: "an array"}
    return " or ".join(names.get(t, t.__name__) for t in types)
