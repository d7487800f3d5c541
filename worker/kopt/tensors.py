"""Tensor helpers: exact clones, descriptions, and the raw tensor files of PROTOCOL.md.

Exact clones. Output modules check their arguments' sizes and strides (assert_size_stride),
and an argument may be a view with a storage offset, overlapping strides, or share storage with
another argument. `clone_args` therefore copies each distinct *storage* once (all its bytes)
and rebuilds every tensor on the copy with the same offset, size and stride, the way
torch._utils._rebuild_tensor does (Tensor.set_ on an UntypedStorage). Aliasing between the
arguments of one call is preserved; nothing is shared with the originals.

Tensor files. `PREFIX<k>.bin` holds the elements in row-major order, little-endian, in the
tensor's dtype (bfloat16 written as its raw 16-bit patterns, bool as one byte 0/1); the JSON
description is {"path","dtype","shape","numel"}. Non-tensor outputs are {"value": ...}.
"""

import ctypes
import os
import sys

import torch

from kopt.errors import OpError

FILE_DTYPES = {
    torch.float64: "float64",
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}


def dtype_name(dtype):
    """'float32' for torch.float32 (any dtype, not only the file dtypes)."""
    return str(dtype).replace("torch.", "")


# ---------------------------------------------------------------- clones


def storage(t):
    """t's untyped storage (torch >= 2.0; the CPU tests may run an older torch, whose
    tensors reach it through .storage().untyped())."""
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()


def whole_storage(t):
    """Whether the strided tensor t is contiguous and all of its storage (its elements, in order,
    are the storage's bytes)."""
    return (t.layout == torch.strided and t.is_contiguous() and t.storage_offset() == 0
            and storage(t).nbytes() == t.numel() * t.element_size())


def clone_args(args):
    """A new list: tensors cloned exactly (see the module docstring), other items as they are."""
    memo = {}
    return [clone_tensor(a, memo) if isinstance(a, torch.Tensor) else a for a in args]


def clone_tensor(t, memo=None):
    """An exact copy of t: same dtype, device, size, stride and storage offset, fresh storage.
    `memo` maps storages already copied (by address) to their copy, to keep aliasing."""
    t = t.detach()
    if t.layout != torch.strided or t.is_quantized or t.device.type == "meta":
        return t.clone()
    st = storage(t)
    nbytes = st.nbytes()
    key = (t.device.type, t.device.index, st.data_ptr(), nbytes) if nbytes else None
    new_st = memo.get(key) if (memo is not None and key is not None) else None
    if new_st is None:
        raw = torch.empty(0, dtype=torch.uint8, device=t.device)
        raw.set_(st, 0, (nbytes,), (1,))
        new_st = storage(raw.clone())
        if memo is not None and key is not None:
            memo[key] = new_st
    out = torch.empty(0, dtype=t.dtype, device=t.device)
    out.set_(new_st, t.storage_offset(), t.size(), t.stride())
    return out


def to_cuda(x):
    return x.cuda() if isinstance(x, torch.Tensor) else x


# ---------------------------------------------------------------- descriptions


def flatten(obj):
    """Outputs as a flat list: tensors and other leaves, tuples/lists/dict values expanded."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        out = []
        for x in obj:
            out.extend(flatten(x))
        return out
    if isinstance(obj, dict):
        out = []
        for x in obj.values():
            out.extend(flatten(x))
        return out
    return [obj]


def json_value(x):
    """A JSON value for a non-tensor: scalars as themselves, sequences of them as arrays,
    anything else as its repr() string."""
    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        try:
            return {torch.SymInt: int, torch.SymFloat: float, torch.SymBool: bool}[type(x)](x)
        except Exception:
            return repr(x)
    if isinstance(x, (list, tuple)) and all(
            v is None or isinstance(v, (bool, int, float, str, list, tuple)) for v in x):
        return [json_value(v) for v in x]
    return repr(x)


def meta(x):
    """{"shape","dtype"} for a tensor, {"value": ...} otherwise (load's inputs/outputs)."""
    if isinstance(x, torch.Tensor):
        return {"shape": list(x.shape), "dtype": dtype_name(x.dtype)}
    return {"value": json_value(x)}


def launch_arg(x):
    """One launch argument for `profile`: a tensor's layout and sizes, or a value."""
    if isinstance(x, torch.Tensor):
        try:
            storage_bytes = int(x.untyped_storage().nbytes())
        except Exception:
            storage_bytes = None
        return {"shape": list(x.shape), "stride": list(x.stride()), "dtype": dtype_name(x.dtype),
                "nbytes": int(x.numel() * x.element_size()), "storage_bytes": storage_bytes}
    return {"value": json_value(x)}


# ---------------------------------------------------------------- tensor files


def write_tensor(t, path):
    """Write tensor t to the raw file `path`; returns its JSON description."""
    if sys.byteorder != "little":
        raise OpError("internal", "tensor files are little-endian; this host is big-endian")
    t = t.detach()
    if t.dtype not in FILE_DTYPES:
        raise OpError("internal", "cannot write a %s tensor: tensor files hold only %s"
                      % (dtype_name(t.dtype), ", ".join(FILE_DTYPES.values())))
    if t.layout != torch.strided:
        t = t.to_dense()
    c = t.cpu().contiguous()
    if c.dtype == torch.bfloat16:
        c = c.view(torch.int16)
    elif c.dtype == torch.bool:
        c = c.view(torch.uint8)
    nbytes = c.numel() * c.element_size()
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, exist_ok=True)
    with open(path, "wb") as f:
        if nbytes:
            # The CPU tensor's bytes, without a copy through Python objects (no numpy needed).
            f.write(memoryview((ctypes.c_ubyte * nbytes).from_address(c.data_ptr())))
    return {"path": os.path.abspath(path), "dtype": FILE_DTYPES[t.dtype],
            "shape": list(t.shape), "numel": int(t.numel())}


def dump_outputs(outputs, prefix):
    """Each flattened output k: a tensor -> file prefix<k>.bin, else {"value": ...}."""
    described = []
    for k, x in enumerate(flatten(outputs)):
        if isinstance(x, torch.Tensor):
            described.append(write_tensor(x, "%s%d.bin" % (prefix, k)))
        else:
            described.append({"value": json_value(x)})
    return described
