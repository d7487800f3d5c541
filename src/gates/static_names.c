/* static_names.c — see static_names.h. The lists follow triton 3.6 (triton/language/__init__.py,
 * math.py, extra/libdevice.py) and torch 2.11 (torch/_inductor/runtime/triton_helpers.py,
 * triton_heuristics.py, hints.py); a name missing here is refused with the rule `name`, which
 * says which module's list it is not on. */
#include "gates/static_names.h"

#include <stdio.h>
#include <string.h>

/* ---------- the lists ---------- */

/* clang-format off */
static const char *const TRITON_MEMBERS[] = {"jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2",
                                             NULL};

static const char *const TL_MEMBERS[] = {
    "PropagateNan", "TRITON_MAX_TENSOR_NUMEL", "abs", "add", "advance", "arange", "argmax", "argmin",
    "associative_scan", "assume", "atomic_add", "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or",
    "atomic_xchg", "atomic_xor", "bfloat16", "bitonic_merge", "broadcast", "broadcast_to", "cast", "cat", "cdiv",
    "ceil", "clamp", "const", "constexpr", "cos", "cumprod", "cumsum", "debug_barrier", "device_assert",
    "device_print", "div_rn", "dot", "dot_scaled", "erf", "exp", "exp2", "expand_dims", "fdiv", "flip", "float16",
    "float32", "float64", "float8e4b15", "float8e4b8", "float8e4nv", "float8e5", "float8e5b16", "floor", "fma", "full",
    "gather", "histogram", "inline_asm_elementwise", "int1", "int16", "int32", "int64", "int8", "interleave", "join",
    "load", "load_tensor_descriptor", "log", "log2", "make_block_ptr", "make_tensor_descriptor", "map_elementwise",
    "max", "max_constancy", "max_contiguous", "maximum", "min", "minimum", "multiple_of", "num_programs",
    "pair_uniform_to_normal", "permute", "philox", "philox_impl", "pi32_t", "program_id", "rand", "rand4x", "randint",
    "randint4x", "randn", "randn4x", "range", "ravel", "reduce", "reduce_or", "reshape", "rsqrt", "sigmoid", "sin",
    "slice", "softmax", "sort", "split", "sqrt", "sqrt_rn", "static_assert", "static_print", "static_range", "store",
    "store_tensor_descriptor", "sum", "swizzle2d", "tensor", "tensor_descriptor", "topk", "trans", "tuple", "uint16",
    "uint32", "uint64", "uint8", "uint_to_uniform_float", "umulhi", "view", "void", "where", "xor_sum", "zeros",
    "zeros_like", NULL};

static const char *const TL_MATH_MEMBERS[] = {"abs", "ceil", "cos", "div_rn", "erf", "exp", "exp2", "fdiv",
                                              "floor", "fma", "log", "log2", "rsqrt", "sin", "sqrt", "sqrt_rn",
                                              "umulhi", NULL};

#define R4(f) f "_rn", f "_rz", f "_rd", f "_ru"
static const char *const LIBDEVICE_MEMBERS[] = {
    "clz", "popc", "byte_perm", "mulhi", "mul24", "brev", "sad", "abs", "floor", "rcp64h", "rsqrt", "ceil", "trunc",
    "exp2", "saturatef", R4("fma"), "fast_dividef", R4("div"), R4("rcp"), R4("sqrt"), "sqrt", R4("add"), R4("mul"),
    R4("double2float"), R4("double2int"), R4("double2uint"), "int2double_rn", "uint2double_rn", R4("float2int"),
    R4("float2uint"), R4("int2float"), R4("uint2float"), "hiloint2double", "double2loint", "double2hiint",
    R4("float2ll"), R4("float2ull"), R4("double2ll"), R4("double2ull"), R4("ll2float"), R4("ull2float"),
    R4("ll2double"), R4("ull2double"), "int_as_float", "float_as_int", "uint_as_float", "float_as_uint",
    "longlong_as_double", "double_as_longlong", "fast_sinf", "fast_cosf", "fast_log2f", "fast_logf", "fast_expf",
    "fast_tanf", "fast_exp10f", "fast_log10f", "fast_powf", "hadd", "rhadd", R4("sub"), "rsqrt_rn", "ffs", "rint",
    "llrint", "nearbyint", "isnan", "signbit", "copysign", "finitef", "isinf", "nextafter", "sin", "cos", "sinpi",
    "cospi", "tan", "log2", "exp", "exp10", "cosh", "sinh", "tanh", "atan2", "atan", "asin", "acos", "log", "log10",
    "log1p", "acosh", "asinh", "atanh", "expm1", "hypot", "rhypot", "norm3d", "rnorm3d", "norm4d", "rnorm4d", "cbrt",
    "rcbrt", "j0", "j1", "y0", "y1", "yn", "jn", "cyl_bessel_i0", "cyl_bessel_i1", "erf", "erfinv", "erfc", "erfcx",
    "erfcinv", "normcdfinv", "normcdf", "lgamma", "ldexp", "scalbn", "fmod", "remainder", "fma", "pow", "tgamma",
    "round", "llround", "fdim", "ilogb", "logb", "isfinited", NULL};
#undef R4

static const char *const CUDA_TIMERS[] = {"globaltimer", "globaltimer_lo", "globaltimer_hi", "smid", "nsmid",
                                          "clock", "clock64", "clock_lo", "clock_hi", NULL};

static const char *const HELPERS_MEMBERS[] = {
    "set_driver_to_gpu", "promote_to_tensor", "div_floor_integer", "remainder_integer", "is_floating", "prod",
    "minimum", "maximum", "min2", "max2", "minimum_with_index", "maximum_with_index", "min_with_index",
    "max_with_index", "welford_reduce", "welford_combine", "welford", "online_softmax_reduce",
    "online_softmax_combine", "device_assert_then", "randint64", "any", "bucketize_binary_search", "pack_value_flag",
    "unpack_value", "unpack_flag", "exclusive_scan_decoupled_lookback", "exclusive_scan_decoupled_lookback_64",
    "frexp", "sort_with_index", "select_one", "gpu_barrier", NULL};

static const char *const HEURISTICS_MEMBERS[] = {"pointwise", "reduction", "persistent_reduction",
                                                 "cooperative_reduction", "split_scan", "template", "user_autotune",
                                                 "foreach", "fixed_config", NULL};

static const char *const HINTS_MEMBERS[] = {"ReductionHint", "TileHint", "AutotuneHint", "DeviceProperties",
                                            "TRITON_MAX_BLOCK", "TRITON_MAX_RSPLIT", NULL};

static const char *const NONE[] = {NULL};

/* Members whose own public attributes may be named (enumerations: tl.PropagateNan.ALL,
 * ReductionHint.INNER). Any other member is a function or a @triton.jit helper, whose public
 * attributes are Triton's runtime (triton_helpers.welford.cache is a dict kept across calls). */
static const char *const ATTR_MEMBERS[] = {"triton.language.PropagateNan",
                                           "torch._inductor.runtime.hints.ReductionHint",
                                           "torch._inductor.runtime.hints.TileHint",
                                           "torch._inductor.runtime.hints.AutotuneHint", NULL};
/* clang-format on */

/* One allowlisted module: its canonical name, its members (NULL: any public name), and the
 * module a name of this spelling stands for (triton_helpers.libdevice is tl.extra.libdevice). */
typedef struct sn_module {
    const char *name;
    const char *const *members;
    const char *alias_of;
} sn_module;

static const sn_module MODULES[] = {
    {"triton", TRITON_MEMBERS, NULL},
    {"triton.language", TL_MEMBERS, NULL},
    {"triton.language.math", TL_MATH_MEMBERS, NULL},
    {"triton.language.extra", NONE, NULL},
    {"triton.language.extra.libdevice", LIBDEVICE_MEMBERS, NULL},
    {"triton.language.extra.cuda", NONE, NULL},
    {"triton.language.extra.cuda.libdevice", LIBDEVICE_MEMBERS, NULL},
    {"math", NULL, NULL},
    {"torch._inductor.runtime", NONE, NULL},
    {"torch._inductor.runtime.triton_helpers", HELPERS_MEMBERS, NULL},
    {"torch._inductor.runtime.triton_helpers.libdevice", NULL, "triton.language.extra.libdevice"},
    {"torch._inductor.runtime.triton_helpers.math", NULL, "triton.language.math"},
    {"torch._inductor.runtime.triton_heuristics", HEURISTICS_MEMBERS, NULL},
    {"torch._inductor.runtime.hints", HINTS_MEMBERS, NULL},
};
static const char *const ROOTS[] = {"triton", "math", "torch._inductor.runtime", NULL};

/* clang-format off */
static const char *const BUILTINS[] = {
    "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float", "frozenset", "int", "isinstance",
    "iter", "len", "list", "map", "max", "min", "next", "pow", "print", "range", "reversed", "round", "set", "slice",
    "sorted", "str", "sum", "tuple", "zip", "NotImplemented", "Ellipsis", "ArithmeticError", "AssertionError",
    "Exception", "IndexError", "KeyError", "NotImplementedError", "OverflowError", "RuntimeError", "StopIteration",
    "TypeError", "ValueError", "ZeroDivisionError", NULL};
/* clang-format on */

/* ---------- helpers ---------- */

static int in_list_n(const char *const *l, const char *s, size_t n) {
    for (int i = 0; l[i]; i++)
        if (strlen(l[i]) == n && !memcmp(l[i], s, n)) return 1;
    return 0;
}

/* The module named s[0..n), following aliases; NULL when not allowlisted. */
static const sn_module *find_module(const char *s, size_t n) {
    for (size_t i = 0; i < sizeof MODULES / sizeof *MODULES; i++) {
        const sn_module *m = &MODULES[i];
        if (strlen(m->name) != n || memcmp(m->name, s, n)) continue;
        return m->alias_of ? find_module(m->alias_of, strlen(m->alias_of)) : m;
    }
    return NULL;
}

static int is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
static int is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

static const char *find_n(const char *s, size_t n, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        if (!memcmp(s + i, needle, k)) return s + i;
    return NULL;
}

/* ---------- modules ---------- */

static_name_verdict static_names_lookup(const char *q) {
    const sn_module *cur = NULL;
    size_t used = 0;
    for (int i = 0; ROOTS[i]; i++) {
        size_t n = strlen(ROOTS[i]);
        if (!strncmp(q, ROOTS[i], n) && (q[n] == '\0' || q[n] == '.')) {
            cur = find_module(ROOTS[i], n);
            used = n;
            break;
        }
    }
    if (!cur) return SN_OUTSIDE;
    const char *p = q + used;
    char key[256];
    for (;;) {
        if (*p == '\0') return SN_MODULE;
        const char *seg = p + 1;
        size_t sl = strcspn(seg, ".");
        size_t kl = strlen(cur->name);
        if (kl + 1 + sl < sizeof key) {
            memcpy(key, cur->name, kl);
            key[kl] = '.';
            memcpy(key + kl + 1, seg, sl);
            const sn_module *child = find_module(key, kl + 1 + sl);
            if (child) {
                cur = child;
                p = seg + sl;
                continue;
            }
        }
        if (!strcmp(cur->name, "triton.language.extra.cuda") && in_list_n(CUDA_TIMERS, seg, sl)) return SN_TIMER;
        int ok = cur->members ? in_list_n(cur->members, seg, sl) : (sl > 0 && seg[0] != '_');
        if (!ok) return SN_REFUSED;
        p = seg + sl;
        if (*p == '\0') return SN_MEMBER;
        /* an attribute of a member: only of the enumerations (tl.PropagateNan.ALL), and never
         * a private one; cur->name is the canonical module (aliases followed) */
        size_t cl = strlen(cur->name);
        int attrs = 0;
        for (int i = 0; ATTR_MEMBERS[i]; i++)
            if (strlen(ATTR_MEMBERS[i]) == cl + 1 + sl && !strncmp(ATTR_MEMBERS[i], cur->name, cl) &&
                ATTR_MEMBERS[i][cl] == '.' && !memcmp(ATTR_MEMBERS[i] + cl + 1, seg, sl))
                attrs = 1;
        if (!attrs) return SN_REFUSED;
        for (; *p == '.'; p += 1 + strcspn(p + 1, "."))
            if (p[1] == '_') return SN_REFUSED;
        return SN_MEMBER;
    }
}

int static_names_builtin(const char *name) { return in_list_n(BUILTINS, name, strlen(name)); }

/* ---------- single tokens ---------- */

int static_names_ascii(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0x80) return 0;
    return 1;
}

int static_names_string_escape(const char *s, size_t n) { return memchr(s, '\\', n) != NULL; }

int static_names_string_dunder(const char *s, size_t n, int strict) {
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] != '_' || s[i + 1] != '_') continue;
        if (strict) return 1;
        size_t j = i;
        while (j < n && s[j] == '_') j++;
        int inside = i > 0 && is_alnum(s[i - 1]) && j < n && is_alnum(s[j]);
        if (!inside) return 1;
        i = j;
    }
    return 0;
}

int static_names_string_timer(const char *s, size_t n) {
    static const char *const REGS[] = {"%globaltimer", "%clock", "%smid", "%nsmid", NULL};
    for (int i = 0; REGS[i]; i++)
        if (find_n(s, n, REGS[i])) return 1;
    return 0;
}

/* The identifier at s[i..n) (letters, digits, '_', '$'), its length. */
static size_t ptx_ident(const char *s, size_t n, size_t i) {
    size_t j = i;
    while (j < n && (is_ident_char(s[j]) || s[j] == '$')) j++;
    return j - i;
}

/* Whether name (len bytes) is one of the names a `.reg` declaration of s[0..n) introduces; a
 * parameterised one (`%f<4>`) covers the name followed by digits. */
static int ptx_declared(const char *s, size_t n, const char *name, size_t len) {
    for (size_t i = 0; i + 4 <= n; i++) {
        if (strncmp(s + i, ".reg", 4) || (i + 4 < n && is_ident_char(s[i + 4]))) continue;
        size_t j = i + 4;
        while (j < n && s[j] != ';') {
            while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == ',')) j++;
            if (j < n && s[j] == '.') { /* a type or vector modifier: .f32, .v2 */
                j += 1 + ptx_ident(s, n, j + 1);
                continue;
            }
            size_t at = j + (j < n && s[j] == '%');
            size_t l = ptx_ident(s, n, at);
            if (!l) {
                if (j < n && s[j] != ';') j++;
                continue;
            }
            int param = at + l < n && s[at + l] == '<';
            if (l <= len && !strncmp(s + at, name, l)) {
                size_t k = l;
                if (k == len) return 1;
                if (param) {
                    while (k < len && name[k] >= '0' && name[k] <= '9') k++;
                    if (k == len) return 1;
                }
            }
            j = at + l;
            if (param)
                while (j < n && s[j] != '>' && s[j] != ';') j++;
        }
    }
    return 0;
}

int static_names_ptx_registers(const char *s, size_t n, char *bad, size_t cap) {
    static const char *const SPECIAL[] = {"tid",         "ntid",        "laneid",      "ctaid",
                                          "nctaid",      "lanemask_eq", "lanemask_le", "lanemask_lt",
                                          "lanemask_ge", "lanemask_gt", NULL};
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '%') continue;
        size_t len = ptx_ident(s, n, i + 1);
        if (!len) continue; /* '%%' or a lone '%' names nothing */
        const char *name = s + i + 1;
        /* a declaration cannot make a special register's name harmless (PTX may let it stand
         * for the register itself): those names count as undeclared */
        static const char *const RESERVED[] = {"pm",
                                               "envreg",
                                               "clock",
                                               "globaltimer",
                                               "gridid",
                                               "smid",
                                               "nsmid",
                                               "warpid",
                                               "nwarpid",
                                               "cluster",
                                               "nclusterid",
                                               "is_explicit_cluster",
                                               "current_graph_exec",
                                               "reserved_smem",
                                               "aggr_smem",
                                               "total_smem",
                                               "dynamic_smem",
                                               NULL};
        /* a reserved name, or one it starts (%pm0, %envreg3, %clock64): the scanned name is
         * compared, never more of s than its len bytes (the rest may lie past n) */
        int reserved = 0;
        for (int k = 0; RESERVED[k]; k++) {
            size_t rl = strlen(RESERVED[k]);
            reserved |= rl <= len && !memcmp(name, RESERVED[k], rl);
        }
        int ok = !reserved && ptx_declared(s, n, name, len);
        for (int k = 0; !ok && SPECIAL[k]; k++) ok = strlen(SPECIAL[k]) == len && !strncmp(name, SPECIAL[k], len);
        if (!ok) {
            if (bad && cap) snprintf(bad, cap, "%%%.*s", (int)(len < 40 ? len : 40), name);
            return 0;
        }
        i += len;
    }
    return 1;
}

/* One replacement field's text [a, b): a dotted name (in parentheses or not), optional '=',
 * !conversion, :spec without brackets, quotes or backslashes. */
static int plain_field(const char *a, const char *b) {
    int open = 0;
    while (a < b && (*a == ' ' || *a == '(')) open += *a++ == '(';
    if (a >= b || !is_ident_start(*a)) return 0;
    for (;;) {
        while (a < b && is_ident_char(*a)) a++;
        if (a + 1 < b && *a == '.' && is_ident_start(a[1])) {
            a++;
            continue;
        }
        break;
    }
    while (a < b && (*a == ' ' || (*a == ')' && open > 0))) open -= *a++ == ')';
    if (open) return 0;
    if (a < b && *a == '=') a++;
    if (a + 1 < b && *a == '!' && (a[1] == 'r' || a[1] == 's' || a[1] == 'a')) a += 2;
    if (a < b && *a == ':') {
        for (a++; a < b; a++)
            if (strchr("{}()[]'\"\\", *a)) return 0;
    }
    return a == b;
}

int static_names_fstring_fields(const char *s, size_t n) {
    size_t p = 0;
    int f = 0;
    while (p < n && s[p] != '\'' && s[p] != '"') f |= s[p] == 'f' || s[p] == 'F', p++;
    if (!f) return 1;
    for (size_t i = p; i < n; i++) {
        if (s[i] != '{') continue;
        if (i + 1 < n && s[i + 1] == '{') {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < n && s[j] != '}' && s[j] != '{') j++;
        if (j >= n || s[j] != '}' || !plain_field(s + i + 1, s + j)) return 0;
        i = j;
    }
    return 1;
}
