/* static.h — gate 1, the static rules of docs/CANDIDATES.md (no GPU, no Python).
 *
 * Contract: static_check walks a parsed candidate's tokens and reports every violation as
 * {rule, line, column, offending text, one-line explanation}, sorted by position; the
 * candidate passes only with none. Rules (ids as in the report):
 *   torch-compute  torch.* other than the allocation calls torch.empty / empty_like / zeros /
 *                  zeros_like / empty_strided, dtypes, torch.device / dtype / Size / Tensor /
 *                  finfo / iinfo / is_tensor, torch.cuda.current_device / device_count /
 *                  is_available / get_device_capability / get_device_properties and
 *                  Inductor's torch._inductor.runtime helpers;
 *                  F.* / torch.nn(.functional) / torch.ops / aten / extern_kernels; outside
 *                  @triton.jit bodies, compute methods called on objects (.sum(), .matmul(),
 *                  .softmax(), .to(), .contiguous(), .copy_() ...) and every in-place method
 *                  (a name ending in one '_': .set_(), .resize_(), .requires_grad_() change a
 *                  tensor's data, storage or flags), the `@` operator,
 *                  arithmetic on in_ptr* / out_ptr* / in_out_ptr* names and writes through
 *                  their subscripts.
 *   stream-sync    streams, events, synchronisation, CUDA graphs (torch.cuda.Stream, Event,
 *                  synchronize, stream(), set_stream, current_stream, wait_stream,
 *                  record_stream ...), host syncs outside jit (.item(), .cpu(), .tolist()),
 *                  triton.testing (do_bench synchronises and re-runs kernels).
 *   state          global / nonlocal; module- or class-level values that are mutable (list,
 *                  dict, set displays; calls other than tl.constexpr, triton.jit, triton.Config,
 *                  triton.cdiv, triton.next_power_of_2, math.*, int/float/min/max/...; the
 *                  arguments of those are judged the same way, a triton.Config's kwargs dict
 *                  excepted: `S = max((make_cache(),))`, `S = tuple([{}])`);
 *                  module-level call statements, their arguments' calls included (except
 *                  triton_helpers.set_driver_to_gpu());
 *                  mutable default arguments; functools cache / lru_cache / cached_property;
 *                  attributes set on modules, functions or module-level objects
 *                  (`launch.cache = ...`); in functions, writes into module-level objects
 *                  (`CACHE[k] = v`, `CACHE.append(...)`); outside @triton.jit bodies, any
 *                  attribute written, on an argument or a local too (`in_ptr0.calls = n`,
 *                  `f = launch; f.x = 1`: as targets of =, op=, tuples, for, with, del) and any
 *                  write through an attribute (`a.b[k] = v`, `a.b.c.append(v)`); a decorator
 *                  that is not an allowlisted member (triton.jit / autotune / heuristics,
 *                  Inductor's kinds): one defined in the file returns a wrapper that can keep
 *                  a closure cache; a module-level name bound to a triton.Config (which keeps
 *                  its kwargs in a dict) named anywhere but in a decorator's arguments;
 *                  @triton.jit(...) with an argument other than do_not_specialize,
 *                  do_not_specialize_on_alignment, debug, noinline with literal values (repr=
 *                  and launch_metadata= take callables Triton runs on the host).
 *   env            os.environ / getenv / putenv, torch.backends, torch.set_*, torch.cuda.set_*,
 *                  seeds, torch._C / _dynamo / _inductor.config, triton.knobs,
 *                  triton.runtime.driver, sys, importlib,
 *                  builtins, gc, inspect, setattr / delattr, any getattr (a literal dunder name:
 *                  io), globals(), locals(), vars().
 *   io             files, processes, network, native code: open, eval, exec, compile,
 *                  __import__, input(), breakpoint; modules os, subprocess, socket, ctypes,
 *                  cffi, pathlib, shutil, urllib, http, requests, pickle, marshal, tempfile,
 *                  multiprocessing, threading, signal, mmap, ... ; torch.load / save /
 *                  utils.cpp_extension; any dunder name, attribute (`.__class__`) or not
 *                  (`__builtins__`, `def __init__`), also through getattr(x, '__dunder__'); the
 *                  one exception is Inductor's `filename=__file__` in a decorator. print is
 *                  allowed.
 *   import         imports other than triton, triton.language(.extra(.cuda)(.libdevice)),
 *                  triton.language.math, math, torch, torch._inductor.runtime(.triton_helpers,
 *                  .triton_heuristics, .hints) — forbidden modules of another rule are reported
 *                  under that rule, a from-import of a name off the allowlist under `name`;
 *                  every star import.
 *   precision      only when !allow_precision_change and the model dtype is float32 (NULL
 *                  counts as float32): tl / torch float16, bfloat16, float8* (any use, casts
 *                  included), allow_tf32=True (or a name assigned True, by a statement or by
 *                  a keyword argument such as a launch's `TF32=True`; any expression other
 *                  than False / None / a name), the strings "tf32" / "tf32x3"
 *                  (input_precision=...; any value there but one string literal),
 *                  fp_downcast_rounding=, inline PTX
 *                  (tl.inline_asm_elementwise), and tl.dot without input_precision= or
 *                  allow_tf32= (TF32 is Triton's default for float32 dots).
 *   syntax         async / await / yield (a launcher must be a plain function); in form L, an
 *                  f-string naming a top-level definition (stitching renames those names but
 *                  not inside strings).
 *   name           the allowlist (static_names.h): a name of an allowed module that is not on
 *                  its list (triton_heuristics.os, tl.core, tl.dtype, triton.runtime...); an
 *                  allowed module used as a value (`m = triton`, `f(tl)`: under another name it
 *                  would escape the list); a free name that is neither defined in the file nor
 *                  an allowed builtin (type, object, chr, hasattr, Inductor's module globals
 *                  such as get_raw_stream); an attribute of a @triton.jit function (`_k.fn`),
 *                  and such a function used as a value outside the kernels (`k = _k`: only
 *                  `_k[grid](...)`); a private attribute (leading underscore) of any other
 *                  object (`in_ptr0._cdata`).
 *   identifier     a non-ASCII identifier (Python NFKC-normalises identifiers: full-width
 *                  `open` is open; refusing them all is stricter than normalising).
 *   string         a string literal holding a backslash (escapes spell any name), "__" (in a
 *                  decorator's arguments, where Inductor's kernel names hold `fused__x`: a
 *                  "__" at a word's edge), or an f-string field other than a plain name.
 *   launcher       a form-L file's own `def launch` (host Python written by the candidate, which
 *                  would run in the judging process), unless allow_launcher (NULL options
 *                  refuse it): a candidate is a kernel plus a plan (form P, plan.h), whose
 *                  launcher kopt writes; form P's lowering and form I are not concerned.
 *   timer          triton.language.extra.cuda's globaltimer / smid / clock..., a string naming
 *                  %globaltimer / %clock / %smid / %nsmid, tl.inline_asm_elementwise whose
 *                  assembly is not one string literal or names a %-register off
 *                  static_names_ptx_registers' allowlist (declared ones, thread / block / lane
 *                  positions): a kernel must not detect that it is being timed.
 * The precision rule also refuses, in a float32 model, a string naming a reduced-precision
 * type ('*fp16', 'bf16': Form I's signature).
 * Names are resolved through the candidate's imports (`import torch.nn.functional as F`,
 * `from torch import cuda`, aliases): uses are judged by what they refer to; F and tl are
 * torch.nn.functional and triton.language when not imported (a stitched form-L candidate sees
 * Inductor's module globals), triton, torch and math themselves.
 *
 * static_check returns 0 when the candidate passes, KOPT_E_CANDIDATE when it has violations
 * (e->msg: the count and the first one); it does not check the interface
 * (candidate_check_interface) nor compile.
 *
 * Ownership: the caller owns the report (zero-initialise it, or reuse one: static_check clears
 * it first) and releases it with static_report_free. Violation strings belong to the report.
 * static_report_json returns a new reference.
 */
#ifndef KOPT_STATIC_H
#define KOPT_STATIC_H

#include <jansson.h>
#include <stddef.h>

#include "gates/candidate.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum {
    STATIC_TORCH_COMPUTE = 0,
    STATIC_STREAM_SYNC,
    STATIC_STATE,
    STATIC_ENV,
    STATIC_IO,
    STATIC_IMPORT,
    STATIC_PRECISION,
    STATIC_SYNTAX,
    STATIC_NAME,
    STATIC_IDENT,
    STATIC_STRING,
    STATIC_TIMER,
    STATIC_LAUNCHER,
    STATIC_NRULES
} static_rule;

typedef struct static_opts {
    int allow_precision_change;   /* --allow-precision-change */
    int allow_launcher;           /* --allow-launcher: accept form L's own `def launch` */
    const char *model_dtype;      /* "float32" (also "fp32", "f32", "torch.float32"),
                                     "float16", "bfloat16"...; NULL: float32 */
} static_opts;

typedef struct static_violation {
    static_rule rule;
    int line, col;                /* 1-based */
    char *text;                   /* the offending text */
    char *why;                    /* one-line explanation */
} static_violation;

typedef struct static_report {
    static_violation *v;
    size_t n, cap;
} static_report;

int static_check(const candidate *c, const static_opts *o, static_report *r, kerr *e);

int static_report_passed(const static_report *r);
size_t static_report_count(const static_report *r, static_rule rule);
/* {"passed": bool, "violations": [{"rule","line","column","text","explanation"}...]} */
json_t *static_report_json(const static_report *r);
/* One line per violation: "PATH:LINE:COL: [rule] text: explanation", or "PATH: static rules
 * passed". path may be NULL ("candidate"). */
void static_report_format(const static_report *r, const char *path, kbuf *out);
void static_report_free(static_report *r);

const char *static_rule_name(static_rule r);
/* The rule named s, or -1. */
int static_rule_from_name(const char *s);

#endif
