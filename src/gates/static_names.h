/* static_names.h — the allowlists of gate 1's static rules (static.h) and the checks on single
 * tokens that need no name resolution. static.c resolves names and reports; this module only
 * answers "is this name / token allowed?".
 *
 * Modules. A candidate names code of other modules only through the allowlisted ones:
 *   triton                       jit, autotune, heuristics, Config, cdiv, next_power_of_2;
 *                                the submodule language
 *   triton.language (tl)         its public kernel API (load, store, arange, dtypes, reductions,
 *                                atomics, ...) without the type constructors (dtype,
 *                                pointer_type, block_type, tuple_type, str_to_ty: a dtype built
 *                                from a string), constexpr_function, core, semantic, standard;
 *                                the submodules math and extra
 *   triton.language.math         the math functions (exp, log, sqrt, erf, fma, ...)
 *   triton.language.extra(.cuda).libdevice   the libdevice functions
 *   triton.language.extra.cuda   only libdevice; globaltimer, smid, clock... are the timer rule
 *   math                         any public name (Python's math module imports nothing)
 *   torch._inductor.runtime      triton_helpers (its jit helpers, set_driver_to_gpu, libdevice
 *                                and math, which are triton.language.extra.libdevice and
 *                                triton.language.math), triton_heuristics (the decorator
 *                                kinds), hints (ReductionHint, TileHint, AutotuneHint,
 *                                DeviceProperties)
 * An allowlisted member's own public attributes are allowed only for the enumerations
 * (tl.PropagateNan.ALL, ReductionHint.INNER, TileHint, AutotuneHint); the other members are
 * functions or @triton.jit helpers, whose attributes are Triton's runtime
 * (triton_helpers.welford.cache: a dict kept across calls). A name starting with '_' is never
 * allowed. torch's own names stay judged by static.c's lists (allocation calls and dtypes
 * allowed, the rest refused).
 *
 * static_names_lookup(q) judges a dotted name already resolved through the imports
 * ("torch._inductor.runtime.triton_heuristics.os"):
 *   SN_OUTSIDE  q does not start with an allowlisted module: not this module's to judge;
 *   SN_MODULE   q is an allowlisted module itself (refused by static.c when used as a value);
 *   SN_MEMBER   q is an allowlisted member, or a public attribute of an enumeration one;
 *   SN_TIMER    q is a timer or SM-id function of triton.language.extra.cuda;
 *   SN_REFUSED  q names something of an allowlisted module that is not on its list.
 *
 * static_names_builtin(name): whether a free name (no import, no definition in the file) is
 * an allowed builtin: plain values and containers, numeric helpers, print, isinstance, len,
 * range, zip, enumerate, ... and exception classes. getattr, setattr, type, object, super,
 * globals, vars, eval, exec, compile, open, __import__, chr/ord are not.
 *
 * Token checks (pointers into the candidate's text, n bytes):
 *   static_names_ascii(s, n)       1 when every byte is ASCII;
 *   static_names_string_escape     1 when a string literal token holds a backslash;
 *   static_names_string_dunder(s, n, strict)  1 when a string literal token names a dunder:
 *                                  strict: any "__"; else a run of 2+ underscores at the start
 *                                  or end of an identifier-like word ('__globals__', 'x.__a');
 *                                  a run inside a word ('fused__to_copy') is not;
 *   static_names_string_timer      1 when a string names a PTX clock or SM-id register
 *                                  (%globaltimer, %clock, %clock64, %smid, %nsmid);
 *   static_names_ptx_registers(s, n, bad, cap)  1 when every %-name of an inline-PTX string is
 *                                  a register the assembly declares (`.reg .f32 %t, %f<4>;`) or
 *                                  a special register on the allowlist (thread, block and lane
 *                                  positions: %tid, %ntid, %laneid, %ctaid, %nctaid,
 *                                  %lanemask_*); else 0 with the first other one in bad (%pm0,
 *                                  %gridid, %envreg3, %clock...: counters, launch identities and
 *                                  driver values a kernel could time or tell launches apart by);
 *   static_names_fstring_fields    1 when an f-string's replacement fields are all plain
 *                                  (dotted) names with an optional !conversion and a format
 *                                  spec without braces or calls (or the token is no f-string).
 *
 * Ownership: everything returned is static.
 */
#ifndef KOPT_STATIC_NAMES_H
#define KOPT_STATIC_NAMES_H

#include <stddef.h>

typedef enum { SN_OUTSIDE = 0, SN_MODULE, SN_MEMBER, SN_TIMER, SN_REFUSED } static_name_verdict;

static_name_verdict static_names_lookup(const char *q);
int static_names_builtin(const char *name);
int static_names_ascii(const char *s, size_t n);
int static_names_string_escape(const char *s, size_t n);
int static_names_string_dunder(const char *s, size_t n, int strict);
int static_names_string_timer(const char *s, size_t n);
int static_names_fstring_fields(const char *s, size_t n);
int static_names_ptx_registers(const char *s, size_t n, char *bad, size_t cap);

#endif
