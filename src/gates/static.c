/* static.c — see static.h. One walk over the candidate's code tokens, using the resolution
 * candidate_parse computed (attribute / keyword / local / module-level / import / free), plus
 * one pass over its imports and one over module-level statements and parameter defaults. The
 * allowlists (modules' members, builtins) and the single-token checks are static_names.c's. */
#include "gates/static.h"

#include "gates/static_names.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------- name lists ---------- */

static const char *const IO_MODULES[] = {
    "os", "posix", "nt", "subprocess", "socket", "ssl", "select", "selectors", "ctypes", "cffi",
    "pathlib", "shutil", "glob", "fcntl", "io", "tempfile", "urllib", "urllib3", "http",
    "requests", "httpx", "aiohttp", "ftplib", "smtplib", "telnetlib", "xmlrpc", "webbrowser",
    "pickle", "cPickle", "dill", "cloudpickle", "marshal", "shelve", "dbm", "sqlite3",
    "multiprocessing", "threading", "_thread", "concurrent", "asyncio", "signal", "mmap", "pty",
    "runpy", "zipfile", "tarfile", "code", "codeop", "resource", "pwd", "grp", NULL};
static const char *const ENV_MODULES[] = {"sys", "importlib", "builtins", "__builtins__", "gc",
                                          "inspect", NULL};
static const char *const IO_BUILTINS[] = {"open", "eval", "exec", "compile", "__import__",
                                          "breakpoint", "exit", "quit", "__loader__",
                                          "__spec__", NULL};
static const char *const ENV_BUILTINS[] = {"setattr", "delattr", "globals", "locals", "vars",
                                           NULL};
static const char *const STREAM_WORDS[] = {
    "Stream", "Event", "ExternalStream", "StreamContext", "synchronize", "stream", "streams",
    "set_stream", "current_stream", "default_stream", "wait_stream", "record_stream",
    "wait_event", "record_event", "graph", "graphs", "CUDAGraph", "make_graphed_callables",
    NULL};
static const char *const TORCH_ALLOWED[] = {
    "torch", "torch.empty", "torch.empty_like", "torch.zeros", "torch.zeros_like", "torch.full",
    "torch.empty_strided", "torch.float32", "torch.float", "torch.float64", "torch.double",
    "torch.int8", "torch.int16", "torch.short", "torch.int32", "torch.int", "torch.int64",
    "torch.long", "torch.uint8", "torch.bool", "torch.complex64", "torch.complex128",
    "torch.device", "torch.dtype", "torch.Size", "torch.Tensor", "torch.finfo", "torch.iinfo",
    "torch.cuda.current_device", "torch.cuda.get_device_capability",
    "torch.cuda.get_device_properties", "torch.cuda.is_available", "torch.cuda.device_count",
    "torch.is_tensor", NULL};
static const char *const TORCH_COMPUTE_NS[] = {
    "torch.nn", "torch.ops", "torch.linalg", "torch.fft", "torch.special", "torch.sparse",
    "torch.library", "torch.classes", "torch._inductor.select_algorithm", "torch.compile",
    "torch.jit", NULL};
static const char *const TORCH_ENV[] = {
    "torch.backends", "torch._C", "torch._dynamo", "torch._inductor.config", "torch.random",
    "torch.manual_seed", "torch.seed", "torch.use_deterministic_algorithms", "torch.config",
    "torch.cuda.manual_seed", "torch.cuda.manual_seed_all", "torch.cuda.seed",
    "torch.cuda.empty_cache", "torch.cuda.memory", "torch.cuda.init", NULL};
static const char *const TORCH_IO[] = {"torch.load", "torch.save", "torch.utils.cpp_extension",
                                       "torch.hub", NULL};
static const char *const LOWP_TORCH[] = {"float16", "half", "bfloat16", "complex32", "chalf",
                                         NULL};
static const char *const ALLOWED_IMPORTS[] = {
    "triton", "triton.language", "triton.language.extra", "triton.language.extra.cuda",
    "triton.language.extra.libdevice", "triton.language.extra.cuda.libdevice",
    "triton.language.math", "math", "torch", "torch._inductor.runtime",
    "torch._inductor.runtime.triton_helpers", "torch._inductor.runtime.triton_heuristics",
    "torch._inductor.runtime.hints", NULL};
static const char *const MODULE_LEVEL_CALLS[] = {
    "triton.language.constexpr", "triton.jit", "triton.Config", "triton.cdiv",
    "triton.next_power_of_2", "int", "float", "bool", "str", "abs", "min", "max", "round",
    "tuple", "frozenset", "range", "len",
    "torch._inductor.runtime.triton_helpers.set_driver_to_gpu", NULL};
static const char *const COMPUTE_METHODS[] = {
    "sum", "mean", "max", "min", "amax", "amin", "matmul", "mm", "bmm", "addmm", "baddbmm",
    "softmax", "log_softmax", "exp", "exp_", "log", "log_", "log1p", "expm1", "add", "add_",
    "sub", "sub_", "mul", "mul_", "div", "div_", "pow", "pow_", "sqrt", "rsqrt", "relu",
    "relu_", "sigmoid", "tanh", "gelu", "abs", "neg", "clamp", "clamp_", "clip", "where",
    "masked_fill", "masked_fill_", "fill_", "zero_", "copy_", "clone", "contiguous", "to",
    "type", "float", "half", "double", "bfloat16", "int", "long", "cuda", "cumsum", "cumprod",
    "prod", "argmax", "argmin", "topk", "sort", "argsort", "norm", "var", "std", "dot",
    "index_select", "gather", "scatter", "scatter_", "scatter_add", "scatter_add_",
    "index_add_", "index_copy_", "index_put_", "masked_scatter", "all", "any", "eq", "ne", "lt",
    "gt", "le", "ge", "isnan", "isinf", "isfinite", "allclose", "equal", "sign", "floor",
    "ceil", "round", "reciprocal", "square", "lerp", "addcmul", "addcdiv", "logsumexp", "flip",
    "roll", "repeat", "tile", "repeat_interleave", "new_tensor", "cat", "stack", "t_",
    "transpose_", "uniform_", "normal_", "random_", "bernoulli_", "exponential_", NULL};
static const char *const SYNC_METHODS[] = {"synchronize", "wait_stream", "record_stream",
                                           "wait_event", "record_event", NULL};
static const char *const HOST_SYNC_METHODS[] = {"item", "cpu", "tolist", "numpy", NULL};
static const char *const MUTATING_METHODS[] = {"append", "extend", "insert", "update",
                                               "setdefault", "pop", "popitem", "clear", "add",
                                               "discard", "remove", NULL};
static const char *const CACHE_NAMES[] = {"cache", "lru_cache", "cached_property", NULL};
/* Inside a kernel, Triton's code generator looks an attribute up on the Python object a name
 * holds (getattr) and calls what it gets at compile time; the attributes a kernel may use on a
 * value (a tensor, a dtype, a constexpr, a block pointer or descriptor) are Triton 3.6's public
 * tl.tensor / tl.dtype / tl.constexpr / pointer, block and descriptor members and their
 * instance fields, less those that reach the IR builder (to_ir, handle, codegen_name, mangle,
 * cache_key_part). A jit function or module member that reached a name has none of these. */
static const char *const TENSOR_ATTRS[] = {
    "FP_TYPES", "KIND", "OTHER_TYPES", "SIGNEDNESS", "SINT_TYPES", "STANDARD_FP_TYPES", "T",
    "UINT_TYPES", "abs", "advance", "argmax", "argmin", "associative_scan", "atomic_add",
    "atomic_and", "atomic_cas", "atomic_max", "atomic_min", "atomic_or", "atomic_xchg",
    "atomic_xor", "block_shape", "block_type", "broadcast_to", "cast", "cdiv", "ceil", "cos",
    "cumprod", "cumsum", "dtype", "erf", "exp", "exp2", "expand_dims", "flip", "floor", "gather",
    "get_block_shapes", "get_int_max_value", "get_int_min_value", "histogram", "is_bf16",
    "is_block", "is_bool", "is_const", "is_dtype", "is_floating", "is_fp16", "is_fp32", "is_fp64",
    "is_fp8", "is_fp8e4b15", "is_fp8e4b8", "is_fp8e4nv", "is_fp8e5", "is_fp8e5b16", "is_int",
    "is_int1", "is_int16", "is_int32", "is_int64", "is_int8", "is_int_signed", "is_int_unsigned",
    "is_ptr", "is_standard_floating", "is_uint16", "is_uint32", "is_uint64", "is_uint8", "is_void",
    "item", "kind", "load", "log", "log2", "logical_and", "logical_or", "max", "min", "nbytes",
    "permute", "ravel", "reduce", "reduce_or", "reshape", "rsqrt", "scalar", "scatter", "sigmoid",
    "sin", "softmax", "sort", "split", "sqrt", "sqrt_rn", "store", "sum", "to", "trans", "view",
    "with_element_ty", "xor_sum",
    /* instance fields */
    "shape", "type", "numel", "value", "element_ty", "primitive_bitwidth", "int_bitwidth",
    "int_signedness", "fp_mantissa_width", "exponent_bias", "name", "address_space",
    "itemsize", NULL};

/* Triton 3.6's compile options (CUDAOptions' fields) and JITFunction.run's own keywords: a
 * launch's keyword of one of these names is not a kernel argument. */
static const char *const TRITON_OPTIONS[] = {
    "num_warps", "num_ctas", "num_stages", "warp_size", "maxnreg", "ptx_version", "ptx_options",
    "ir_override", "enable_fp_fusion", "enable_reflect_ftz", "launch_cooperative_grid",
    "launch_pdl", "supported_fp8_dtypes", "deprecated_fp8_dot_operand_dtypes",
    "default_dot_input_precision", "allowed_dot_input_precisions",
    "max_num_imprecise_acc_default", "extern_libs", "debug", "backend_name", "sanitize_overflow",
    "arch", "instrumentation_mode", "grid", "warmup", "stream", "device", "device_type", NULL};

static int in_list(const char *const *l, const char *s) {
    for (int i = 0; l[i]; i++)
        if (!strcmp(l[i], s)) return 1;
    return 0;
}
static int in_list_n(const char *const *l, const char *s, size_t n) {
    for (int i = 0; l[i]; i++)
        if (strlen(l[i]) == n && !memcmp(l[i], s, n)) return 1;
    return 0;
}
/* q equals p or starts with p followed by '.' */
static int seg_prefix(const char *q, const char *p) {
    size_t n = strlen(p);
    return !strncmp(q, p, n) && (q[n] == '\0' || q[n] == '.');
}
static int prefix_in_list(const char *const *l, const char *q) {
    for (int i = 0; l[i]; i++)
        if (seg_prefix(q, l[i])) return 1;
    return 0;
}
static int is_dunder(const char *s, size_t n) {
    return n > 4 && s[0] == '_' && s[1] == '_' && s[n - 1] == '_' && s[n - 2] == '_';
}

/* What an attribute name reaches: an interpreter's or object's internals, or neither. */
typedef enum attr_internals {
    ATTR_PLAIN,   /* none of the below */
    ATTR_DUNDER,  /* __x__ */
    ATTR_INTERP,  /* frames, code objects, tracebacks, generators, coroutines: gi_frame.f_builtins
                   * reaches exec and f_back the caller's frame, with no dunder */
    ATTR_PRIVATE, /* a leading underscore */
} attr_internals;

static attr_internals internals_attr(const char *s, size_t n) {
    static const char *const pre[] = {"gi_", "cr_", "ag_", "f_", "tb_", "co_", NULL};
    if (is_dunder(s, n)) return ATTR_DUNDER;
    for (int i = 0; pre[i]; i++)
        if (n > strlen(pre[i]) && !strncmp(s, pre[i], strlen(pre[i]))) return ATTR_INTERP;
    return n > 0 && s[0] == '_' ? ATTR_PRIVATE : ATTR_PLAIN;
}
static int lowp_name(const char *s) {
    return in_list(LOWP_TORCH, s) || !strncmp(s, "float8", 6);
}

/* ---------- context ---------- */

typedef struct sctx {
    const candidate *c;
    const static_opts *o;
    static_report *r;
    int enforce_prec;
    const char **config_names;   /* module-level names bound to a value holding triton.Config */
    size_t nconfig;
} sctx;

static const pytok *tk(const sctx *x, size_t i) {
    return &x->c->toks[i < x->c->ntoks ? i : x->c->ntoks - 1];
}
static int is_op(const sctx *x, size_t i, const char *s) {
    return pytok_is_op(x->c->text, tk(x, i), s);
}
static int is_nm(const sctx *x, size_t i, const char *s) {
    return pytok_is_name(x->c->text, tk(x, i), s);
}
static int kind_of(const sctx *x, size_t i) { return (int)tk(x, i)->kind; }
static int depth_at(const sctx *x, size_t i) {
    return x->c->depth[i < x->c->ntoks ? i : x->c->ntoks - 1];
}

/* Attribute k of a chain inside a kernel whose head is not a module: one of TENSOR_ATTRS. */
static int kernel_attr_ok(const sctx *x, size_t k) {
    const pytok *t = tk(x, k);
    const char *s = x->c->text + t->off;
    /* a dunder, frame or private attribute is dunder_check's finding already (one report) */
    if (internals_attr(s, t->len) != ATTR_PLAIN) return 1;
    return in_list_n(TENSOR_ATTRS, s, t->len);
}
static uint8_t flags(const sctx *x, size_t i) {
    return x->c->tflags[i < x->c->ntoks ? i : x->c->ntoks - 1];
}
static int line_end_tok(const sctx *x, size_t i) {
    return kind_of(x, i) == PYT_NEWLINE || kind_of(x, i) == PYT_END;
}
static int is_aug_assign(const sctx *x, size_t i) {
    const pytok *t = tk(x, i);
    return t->kind == PYT_OP && t->len >= 2 && x->c->text[t->off + t->len - 1] == '=' &&
           !pytok_is(x->c->text, t, "==") && !pytok_is(x->c->text, t, "!=") &&
           !pytok_is(x->c->text, t, "<=") && !pytok_is(x->c->text, t, ">=") &&
           !pytok_is(x->c->text, t, ":=");
}
static int is_trailer_open(const sctx *x, size_t i) {
    if (!(is_op(x, i, "(") || is_op(x, i, "["))) return 0;
    if (i == 0) return 0;
    const pytok *p = tk(x, i - 1);
    if (p->kind == PYT_NAME)
        return !candidate_is_keyword(x->c->text + p->off, p->len);
    return is_op(x, i - 1, ")") || is_op(x, i - 1, "]") || p->kind == PYT_STRING;
}

/* Text of tokens [a, b] (first's start to last's end). */
static char *tok_text(const sctx *x, size_t a, size_t b) {
    const pytok *ta = tk(x, a), *tb = tk(x, b);
    size_t end = (size_t)tb->off + tb->len;
    return kstrndup(x->c->text + ta->off, end > ta->off ? end - ta->off : 0);
}
/* The logical line from token s, shortened to ~72 bytes and to its first physical line. */
static char *stmt_text(const sctx *x, size_t s) {
    size_t e = s;
    while (!line_end_tok(x, e + 1)) e++;
    char *t = tok_text(x, s, e);
    size_t n = strcspn(t, "\r\n"), cut = n > 68 ? 68 : n;
    if (cut < strlen(t)) {
        char *u = kasprintf("%.*s ...", (int)cut, t);
        free(t);
        t = u;
    }
    return t;
}

/* ---------- report ---------- */

/* One line of at most ~80 bytes: whitespace runs holding a line break become one space. */
static char *one_line(char *text) {
    size_t w = 0;
    for (size_t r = 0; text[r]; r++) {
        if (text[r] == '\n' || text[r] == '\r') {
            while (w > 0 && (text[w - 1] == ' ' || text[w - 1] == '\t')) w--;
            while (text[r + 1] == ' ' || text[r + 1] == '\t' || text[r + 1] == '\n' ||
                   text[r + 1] == '\r')
                r++;
            text[w++] = ' ';
        } else {
            text[w++] = text[r];
        }
    }
    text[w] = '\0';
    if (w > 80) strcpy(text + 76, " ...");
    return text;
}

/* A finding at (line, col), once per rule and place. */
static void add_at(sctx *x, static_rule rule, int line, int col, char *text, const char *why) {
    text = one_line(text);
    static_report *r = x->r;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].rule == rule && r->v[i].line == line && r->v[i].col == col) {
            free(text);
            return;
        }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 8;
        r->v = krealloc(r->v, r->cap * sizeof *r->v);
    }
    r->v[r->n++] = (static_violation){rule, line, col, text, kstrdup(why)};
}

static void add(sctx *x, static_rule rule, size_t tok, char *text, const char *why) {
    const pytok *t = tk(x, tok);
    add_at(x, rule, (int)t->line, candidate_col(x->c, t->off, (int)t->line), text, why);
}

static int cmp_violation(const void *pa, const void *pb) {
    const static_violation *a = pa, *b = pb;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    if (a->col != b->col) return a->col < b->col ? -1 : 1;
    return (int)a->rule - (int)b->rule;
}

/* ---------- classification of dotted names ---------- */

typedef struct verdict {
    int rule;          /* static_rule, or -1 */
    int dflt;          /* torch-compute only because torch.X is not on the allowed list */
    const char *why;
} verdict;

static verdict V(int rule, const char *why) { return (verdict){rule, 0, why}; }

/* The allowlists of static_names.h for q: a name of an allowlisted module that is not on its
 * list is refused (rule name), a timer of tl.extra.cuda too (rule timer); anything else is
 * left to the other rules. */
static verdict allowlist(const char *q) {
    switch (static_names_lookup(q)) {
    case SN_REFUSED:
        return V(STATIC_NAME, "not on the allowlist of that module (only the kernel API of "
                              "triton / triton.language, its math and libdevice functions, "
                              "Inductor's jit helpers and decorators may be named)");
    case SN_TIMER:
        return V(STATIC_TIMER, "reads a clock or the SM id: a kernel must not detect that it is "
                               "being timed");
    default:
        return V(-1, NULL);
    }
}

/* q: a canonical dotted name ("torch.cuda.synchronize"); call: it is called. */
static verdict classify(const sctx *x, const char *q, int call) {
    char head[128];
    size_t hl = strcspn(q, ".");
    if (hl >= sizeof head) hl = sizeof head - 1;
    memcpy(head, q, hl);
    head[hl] = '\0';
    const char *last = strrchr(q, '.');
    last = last ? last + 1 : q;
    int single = q[hl] == '\0';

    if (single) {
        if (in_list(IO_BUILTINS, q) || (call && !strcmp(q, "input")))
            return V(STATIC_IO, "a builtin that reaches files, code or the terminal");
        if (in_list(ENV_BUILTINS, q))
            return V(STATIC_ENV, "reads or changes interpreter-global state");
    }
    if (in_list(IO_MODULES, head)) {
        if (!strcmp(head, "os") && (seg_prefix(q, "os.environ") || seg_prefix(q, "os.environb") ||
                                    seg_prefix(q, "os.getenv") || seg_prefix(q, "os.putenv") ||
                                    seg_prefix(q, "os.unsetenv")))
            return V(STATIC_ENV, "the process environment is global state");
        return V(STATIC_IO, "files, processes, the network and native code are out of reach");
    }
    if (in_list(ENV_MODULES, head))
        return V(STATIC_ENV, "interpreter internals and global state are out of reach");
    if (!strcmp(head, "functools") && in_list(CACHE_NAMES, last))
        return V(STATIC_STATE, "a cache keeps results across calls");
    if (!strcmp(head, "extern_kernels") || !strcmp(head, "aten"))
        return V(STATIC_TORCH_COMPUTE, "vendor / ATen kernels: the candidate must compute with "
                                       "its own Triton kernels");
    if (!strcmp(head, "torch")) {
        if (prefix_in_list(TORCH_IO, q))
            return V(STATIC_IO, "files and native extensions are out of reach");
        for (const char *p = q + hl; *p == '.';) {
            p++;
            size_t n = strcspn(p, ".");
            if (in_list_n(STREAM_WORDS, p, n))
                return V(STATIC_STREAM_SYNC,
                         "streams, events, graphs and synchronisation are kopt's to manage");
            p += n;
        }
        if (prefix_in_list(TORCH_ENV, q) || !strncmp(q, "torch.set_", 10) ||
            !strncmp(q, "torch.cuda.set_", 15))
            return V(STATIC_ENV, "changes global torch / CUDA state");
        if (!strncmp(q, "torch._inductor.runtime", 23) && (q[23] == '\0' || q[23] == '.'))
            return allowlist(q);
        if (!single && !strchr(q + hl + 1, '.') && lowp_name(last)) {
            if (x->enforce_prec)
                return V(STATIC_PRECISION, "a reduced-precision dtype in a float32 model "
                                           "(needs --allow-precision-change)");
            return V(-1, NULL);
        }
        if (in_list(TORCH_ALLOWED, q)) return V(-1, NULL);
        if (prefix_in_list(TORCH_COMPUTE_NS, q))
            return V(STATIC_TORCH_COMPUTE, "a PyTorch op: the candidate must compute with its own "
                                           "Triton kernels");
        return (verdict){STATIC_TORCH_COMPUTE, 1,
                         "a PyTorch op: only torch.empty/empty_like/zeros/zeros_like/full/"
                         "empty_strided and dtypes are allowed"};
    }
    if (!strcmp(head, "triton")) {
        if (seg_prefix(q, "triton.knobs") || seg_prefix(q, "triton.runtime.driver"))
            return V(STATIC_ENV, "changes Triton's global configuration");
        if (seg_prefix(q, "triton.testing"))
            return V(STATIC_STREAM_SYNC, "benchmarking helpers synchronise and re-run kernels");
        if (x->enforce_prec && !strcmp(last, "dot_scaled"))
            return V(STATIC_PRECISION, "tl.dot_scaled multiplies fp8 / fp4 / bf16 operands (needs "
                                       "--allow-precision-change)");
        if (x->enforce_prec && (lowp_name(last) || !strcmp(last, "inline_asm_elementwise")))
            return V(STATIC_PRECISION,
                     !strcmp(last, "inline_asm_elementwise")
                         ? "inline PTX can change numerics (needs --allow-precision-change)"
                         : "a reduced-precision dtype in a float32 model (needs "
                           "--allow-precision-change)");
    }
    return allowlist(q);
}

/* ---------- names ---------- */

static const char *alias_target(const sctx *x, const char *s, size_t n) {
    const char *t = NULL;
    for (size_t i = 0; i < x->c->nimports; i++) {
        const cand_import *im = &x->c->imports[i];
        if (im->bound && strlen(im->bound) == n && !memcmp(im->bound, s, n)) t = im->target;
    }
    return t;
}

typedef struct chain {
    size_t head, last;   /* NAME tokens */
    size_t nseg;
    int call;
    int module;          /* the head is a module, an imported name or a builtin */
    char *canon;
} chain;

static void chain_read(const sctx *x, size_t i, chain *ch) {
    memset(ch, 0, sizeof *ch);
    ch->head = ch->last = i;
    ch->nseg = 1;
    while (is_op(x, ch->last + 1, ".") && kind_of(x, ch->last + 2) == PYT_NAME) {
        ch->last += 2;
        ch->nseg++;
    }
    ch->call = is_op(x, ch->last + 1, "(");
    const pytok *h = tk(x, i);
    const char *hs = x->c->text + h->off;
    int ref = x->c->ref[i < x->c->ntoks ? i : 0];
    const char *target = alias_target(x, hs, h->len);
    kbuf b = KBUF_INIT;
    if (target && (ref == CREF_IMPORT || ref == CREF_LOCAL || ref == CREF_FREE)) {
        ch->module = 1;
        kbuf_puts(&b, target);
    } else if (ref == CREF_FREE) {
        ch->module = 1;
        if (h->len == 2 && !memcmp(hs, "tl", 2)) kbuf_puts(&b, "triton.language");
        else if (h->len == 1 && hs[0] == 'F') kbuf_puts(&b, "torch.nn.functional");
        else kbuf_append(&b, hs, h->len);
    } else {
        kbuf_append(&b, hs, h->len);
    }
    for (size_t k = i + 2; k <= ch->last; k += 2) {
        const pytok *t = tk(x, k);
        kbuf_putc(&b, '.');
        kbuf_append(&b, x->c->text + t->off, t->len);
    }
    ch->canon = kbuf_steal(&b);
}

/* The decoded content of a simple string literal token (prefix and quotes removed). */
static char *string_value(const sctx *x, size_t i) {
    const pytok *t = tk(x, i);
    const char *s = x->c->text + t->off;
    size_t n = t->len, p = 0;
    while (p < n && s[p] != '\'' && s[p] != '"') p++;
    if (p >= n) return kstrdup("");
    size_t q = (n - p >= 6 && s[p + 1] == s[p] && s[p + 2] == s[p]) ? 3 : 1;
    if (n < p + 2 * q) return kstrdup("");
    return kstrndup(s + p + q, n - p - 2 * q);
}

/* Index of the closer matching the opener at i. */
static size_t match_close(const sctx *x, size_t i) {
    int d = depth_at(x, i);
    for (size_t k = i + 1; k < x->c->ntoks; k++) {
        if (depth_at(x, k) == d + 1 &&
            (is_op(x, k, ")") || is_op(x, k, "]") || is_op(x, k, "}")))
            return k;
        if (kind_of(x, k) == PYT_END) return k;
    }
    return x->c->ntoks - 1;
}

static void method_check(sctx *x, size_t m) {
    if (!is_op(x, m + 1, "(")) return;
    const pytok *t = tk(x, m);
    const char *s = x->c->text + t->off;
    int in_jit = flags(x, m) & CTOK_IN_JIT;
    if (in_list_n(SYNC_METHODS, s, t->len)) {
        add(x, STATIC_STREAM_SYNC, m, kstrndup(s - 1, t->len + 1),
            "synchronisation is kopt's to manage");
    } else if (!in_jit && in_list_n(HOST_SYNC_METHODS, s, t->len)) {
        add(x, STATIC_STREAM_SYNC, m, kstrndup(s - 1, t->len + 1),
            "copies to the host and synchronises the device");
    } else if (!in_jit && in_list_n(COMPUTE_METHODS, s, t->len)) {
        add(x, STATIC_TORCH_COMPUTE, m, kstrndup(s - 1, t->len + 1),
            "a tensor method that runs a PyTorch op outside the Triton kernels");
    } else if (!in_jit && t->len >= 2 && s[t->len - 1] == '_' && s[t->len - 2] != '_') {
        add(x, STATIC_TORCH_COMPUTE, m, kstrndup(s - 1, t->len + 1),
            "an in-place tensor method (PyTorch's end in '_': set_, resize_, requires_grad_ ...) "
            "changes a tensor's data, storage or flags outside the Triton kernels");
    }
}

/* Attribute k: a dunder or a frame attribute (rule io); with `private`, also a name starting
 * with '_' (rule name): an object's internals (in_ptr0._cdata, x._typed_storage()). Attributes
 * of allowed modules are classify's (their lists). */
static void dunder_check(sctx *x, size_t k, int private) {
    const pytok *t = tk(x, k);
    const char *s = x->c->text + t->off;
    switch (internals_attr(s, t->len)) {
    case ATTR_DUNDER:
        add(x, STATIC_IO, k, kstrndup(s - 1, t->len + 1),
            "dunder attributes reach interpreter internals");
        break;
    case ATTR_INTERP:
        add(x, STATIC_IO, k, kstrndup(s - 1, t->len + 1),
            "frame, code, traceback and generator attributes (gi_frame, f_builtins, f_back ...) "
            "reach the interpreter and the caller's frames");
        break;
    case ATTR_PRIVATE:
        if (private)
            add(x, STATIC_NAME, k, kstrndup(s - 1, t->len + 1),
                "a private attribute (a leading underscore) reaches an object's internals");
        break;
    case ATTR_PLAIN: break;
    }
}

/* Argument i (0-based, positional or not) of the call whose '(' is at p: [*a, *b). */
static int call_arg(const sctx *x, size_t p, size_t idx, size_t *a, size_t *b) {
    size_t close = match_close(x, p);
    int d = depth_at(x, p) + 1;
    size_t start = p + 1, n = 0;
    for (size_t j = p + 1; j <= close; j++) {
        if (j == close || (depth_at(x, j) == d && is_op(x, j, ","))) {
            if (n == idx) {
                *a = start;
                *b = j;
                return j > start;
            }
            n++;
            start = j + 1;
        }
    }
    return 0;
}

static void dot_check(sctx *x, const chain *ch) {
    size_t p = ch->last + 1, close = match_close(x, p);
    int d = depth_at(x, p) + 1;
    for (size_t j = p + 1; j < close; j++)
        if (depth_at(x, j) == d && x->c->ref[j] == CREF_KWNAME &&
            (is_nm(x, j, "input_precision") || is_nm(x, j, "allow_tf32")))
            return;
    add(x, STATIC_PRECISION, ch->head, tok_text(x, ch->head, ch->last),
        "tl.dot on float32 defaults to TF32: pass input_precision=\"ieee\" (or "
        "--allow-precision-change)");
}

static int is_tensor_op(const sctx *x, size_t i) {
    static const char *const ops[] = {"+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^",
                                      "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "~", NULL};
    if (kind_of(x, i) != PYT_OP) return 0;
    for (int k = 0; ops[k]; k++)
        if (is_op(x, i, ops[k])) return 1;
    return is_aug_assign(x, i);
}

static int is_pointer_name(const sctx *x, size_t i) {
    const pytok *t = tk(x, i);
    const char *s = x->c->text + t->off;
    return (t->len > 6 && !memcmp(s, "in_ptr", 6)) || (t->len > 7 && !memcmp(s, "out_ptr", 7)) ||
           (t->len > 10 && !memcmp(s, "in_out_ptr", 10));
}

/* Outside @triton.jit bodies, in_ptr* / out_ptr* / in_out_ptr* are tensors: arithmetic on them,
 * or a write through a subscript, runs PyTorch ops. */
static void pointer_check(sctx *x, size_t i, size_t after) {
    if (!is_pointer_name(x, i) || x->c->ref[i] != CREF_LOCAL) return;
    int bad = 0;
    if (i > 0 && is_tensor_op(x, i - 1)) {
        /* f(*in_ptr0) and f(**kw) unpack, they do not multiply */
        bad = !((is_op(x, i - 1, "*") || is_op(x, i - 1, "**")) && i > 1 &&
                (is_op(x, i - 2, "(") || is_op(x, i - 2, ",")));
    }
    size_t nxt = after;
    if (is_op(x, nxt, "[")) {
        nxt = match_close(x, nxt) + 1;
        if (is_op(x, nxt, "=") && (flags(x, i) & CTOK_STMT_START)) bad = 1;
    }
    if (is_tensor_op(x, nxt)) bad = 1;
    if (bad)
        add(x, STATIC_TORCH_COMPUTE, i, stmt_text(x, i),
            "tensor arithmetic outside the Triton kernels runs PyTorch ops");
}

/* The allowlist side of a chain that starts at a module, an import or a free name: a module
 * used as a value (under another name it would escape the allowlist), a free name that is
 * neither an allowed builtin nor a module name, inline PTX assembled from pieces. */
static verdict allowlist_use(const sctx *x, const chain *ch, int ref) {
    const pytok *h = tk(x, ch->head);
    const char *hs = x->c->text + h->off;
    if (ch->call && !strcmp(ch->canon, "triton.language.inline_asm_elementwise")) {
        size_t a, b;
        if (!call_arg(x, ch->last + 1, 0, &a, &b) || b != a + 1 ||
            kind_of(x, a) != PYT_STRING)
            return V(STATIC_TIMER, "inline PTX assembled from pieces may read a clock or the SM "
                                   "id: give the assembly as one string literal");
        char reg[48];
        const char *at = x->c->text + tk(x, a)->off;
        size_t alen = tk(x, a)->len;
        /* a clock or SM-id name is the string rule's finding already (one report per cause) */
        if (!static_names_string_timer(at, alen) && !static_names_ptx_registers(at, alen, reg, sizeof reg))
            return V(STATIC_TIMER, "inline PTX names a register it does not declare and that is not a thread, block "
                                   "or lane position: special registers give counters, clocks and launch identities");
    }
    if (!ch->call && !strcmp(ch->canon, "triton.language.inline_asm_elementwise"))
        return V(STATIC_TIMER, "inline PTX used as a value (an alias, a default, a tuple) is called where its "
                               "assembly cannot be read: call tl.inline_asm_elementwise directly with one string "
                               "literal");
    static_name_verdict sv = static_names_lookup(ch->canon);
    if (sv == SN_MODULE || !strcmp(ch->canon, "torch"))
        return V(STATIC_NAME, "a module used as a value escapes the allowlist under another name: "
                              "name its members (tl.load, triton.cdiv)");
    if (ref == CREF_FREE && sv == SN_OUTSIDE && !alias_target(x, hs, h->len)) {
        static const char *const MODULE_NAMES[] = {"tl", "F", "triton", "torch", "math", NULL};
        char *head = kstrndup(hs, h->len);
        int ok = in_list(MODULE_NAMES, head) || static_names_builtin(head);
        free(head);
        if (!ok)
            return V(STATIC_NAME, "not defined in the file, not imported from an allowed module "
                                  "and not an allowed builtin");
    }
    return V(-1, NULL);
}

/* Whether NAME token i is one of the file's top-level @triton.jit functions. */
static int jit_name(const sctx *x, size_t i) {
    const pytok *t = tk(x, i);
    for (size_t k = 0; k < x->c->njit; k++)
        if (strlen(x->c->jit_names[k]) == t->len &&
            !memcmp(x->c->jit_names[k], x->c->text + t->off, t->len))
            return 1;
    return 0;
}

static int is_opener(const sctx *x, size_t i) {
    return is_op(x, i, "(") || is_op(x, i, "[") || is_op(x, i, "{");
}

/* The brackets around token i are plain parentheses or list displays, none a call, a
 * subscript or a dict/set display: i may be part of a target list (`(a.b, c) = ...`). */
static int only_target_brackets(const sctx *x, size_t i) {
    int d = depth_at(x, i);
    for (size_t k = i; k-- > 0 && d > 0;) {
        if (depth_at(x, k) != d - 1 || !is_opener(x, k)) continue;
        if (is_op(x, k, "{") || is_trailer_open(x, k)) return 0;
        d--;
    }
    return 1;
}

/* Whether the attribute chain [head, last] is written: an assignment target (`a.b = v`,
 * `a.b += v`, `a.b: T = v`, one of a tuple's targets `a.b, n = v, w`, also parenthesised),
 * a target of `for` (loops and comprehensions), of `with ... as`, or deleted (`del a.b`).
 * A default value is never a target (`lambda k=a.b, m=1: k`). */
static int chain_is_store(const sctx *x, size_t head, size_t last) {
    size_t after = last + 1;
    uint8_t f = flags(x, head);
    if (f & CTOK_DEFAULT) return 0;
    if (head > 0 && is_op(x, head - 1, ":")) return 0;   /* an annotation: `n: tl.constexpr = 4` */
    /* `NAME.NAME =`: only an assignment (keyword arguments are single names) */
    if (is_op(x, after, "=") || is_aug_assign(x, after)) return 1;
    if ((f & CTOK_STMT_START) && is_op(x, after, ":")) {
        for (size_t k = after + 1; !line_end_tok(x, k) && !(depth_at(x, k) == 0 && is_op(x, k, ";")); k++)
            if (depth_at(x, k) == 0 && is_op(x, k, "=")) return 1;
        return 0;
    }
    /* back over a target list to `for`, `as` or `del` */
    for (size_t k = head; k-- > 0;) {
        const pytok *t = tk(x, k);
        if (t->kind == PYT_NAME && candidate_is_keyword(x->c->text + t->off, t->len)) {
            if (is_nm(x, k, "for") || is_nm(x, k, "as") || is_nm(x, k, "del")) return 1;
            break;
        }
        if (t->kind == PYT_NAME || is_op(x, k, ",") || is_op(x, k, ".") || is_op(x, k, "*") ||
            is_op(x, k, ")") || is_op(x, k, "]") || ((is_op(x, k, "(") || is_op(x, k, "[")) && !is_trailer_open(x, k)))
            continue;
        break;
    }
    /* forward to the statement's '=' (at depth 0), over the rest of a target list */
    if (!(is_op(x, after, ",") || is_op(x, after, ")") || is_op(x, after, "]")) || !only_target_brackets(x, head))
        return 0;
    for (size_t k = after; !line_end_tok(x, k); k++) {
        if (depth_at(x, k) != 0) continue;
        if (is_op(x, k, ";") || is_op(x, k, ":") || is_nm(x, k, "lambda")) return 0;
        if (is_op(x, k, "=")) return 1;
    }
    return 0;
}

/* Whether module-level name token i is bound to a value holding a triton.Config. */
static int config_name(const sctx *x, size_t i) {
    const pytok *t = tk(x, i);
    for (size_t k = 0; k < x->nconfig; k++)
        if (strlen(x->config_names[k]) == t->len && !memcmp(x->config_names[k], x->c->text + t->off, t->len))
            return 1;
    return 0;
}

/* The arguments of `@triton.jit(...)` whose opening parenthesis is token open: keywords from an
 * allowlist with literal values only. triton.jit's other keywords take callables (repr=,
 * launch_metadata=) that Triton calls on the host, in the judging process. 1 when they pass. */
static int jit_args_ok(const sctx *x, size_t open) {
    static const char *const KEYWORDS[] = {"do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline",
                                           NULL};
    int depth = 0;
    for (size_t k = open; k < x->c->ntoks && kind_of(x, k) != PYT_END; k++) {
        const pytok *t = tk(x, k);
        const char *s = x->c->text + t->off;
        if (t->kind == PYT_OP) {
            if (is_op(x, k, "(") || is_op(x, k, "[")) depth++;
            else if (is_op(x, k, ")") || is_op(x, k, "]")) {
                if (--depth == 0) return 1;
            } else if (!is_op(x, k, ",") && !is_op(x, k, "=") && !is_op(x, k, "-"))
                return 0;
            continue;
        }
        if (t->kind == PYT_STRING || t->kind == PYT_NUMBER) continue;
        if (t->kind != PYT_NAME) return 0;
        if (pytok_is(x->c->text, t, "True") || pytok_is(x->c->text, t, "False") || pytok_is(x->c->text, t, "None"))
            continue;
        /* a keyword's name: at the call's own level, before '=' */
        int named = 0;
        for (int w = 0; KEYWORDS[w]; w++) named |= strlen(KEYWORDS[w]) == t->len && !strncmp(s, KEYWORDS[w], t->len);
        if (!(named && depth == 1 && is_op(x, k + 1, "="))) return 0;
    }
    return 0;
}

/* A decorator (`@` at i): only the allowlisted modules' members (triton.jit, triton.autotune,
 * triton.heuristics, Inductor's triton_heuristics kinds). Anything else replaces the function
 * with what it returns, and a wrapper defined in the file keeps whatever it likes across calls
 * (a closure dict keyed on data_ptr). Names refused by another rule are that rule's; the
 * arguments of triton.jit are jit_args_ok's. */
static void decorator_check(sctx *x, size_t at) {
    size_t h = at + 1;
    int ok = 0;
    const pytok *t = tk(x, h);
    if (t->kind == PYT_NAME && !candidate_is_keyword(x->c->text + t->off, t->len)) {
        chain ch;
        chain_read(x, h, &ch);
        if (ch.module)
            ok = static_names_lookup(ch.canon) == SN_MEMBER || classify(x, ch.canon, 0).rule >= 0 ||
                 allowlist_use(x, &ch, x->c->ref[h]).rule >= 0;
        if (ok && ch.module && !strcmp(ch.canon, "triton.jit") && is_op(x, ch.last + 1, "(") &&
            !jit_args_ok(x, ch.last + 1)) {
            add(x, STATIC_STATE, at, stmt_text(x, at),
                "triton.jit's arguments other than do_not_specialize, do_not_specialize_on_alignment, debug and "
                "noinline (with literal values) take callables that Triton runs on the host, where kopt judges");
            free(ch.canon);
            return;
        }
        free(ch.canon);
    }
    if (!ok)
        add(x, STATIC_STATE, at, stmt_text(x, at),
            "only triton.jit / autotune / heuristics and Inductor's decorators may decorate: any "
            "other replaces the function with what it returns, which can keep state across calls");
}

/* Form I is Inductor's kernel text, and the plan-form rule holds for it too: no host callable
 * of the candidate may run where kopt judges. A function that is not @triton.jit, a class, a
 * lambda, and triton.autotune / triton.heuristics (whose heuristics, pre/post hooks, config
 * pruning and do_bench are host callables run at every launch) are refused, also with
 * --allow-launcher: Inductor's text never has them, and trusted host code belongs in form L. */
static void formi_host_check(sctx *x) {
    static const char why[] = "form I is Inductor's kernel text: a host callable of the candidate (a function that is not "
                              "@triton.jit, a class, a lambda, triton.autotune / triton.heuristics and their hooks) would "
                              "run where kopt judges (write host code, when trusted, as form L with --allow-launcher)";
    const candidate *c = x->c;
    for (size_t d = 0; d < c->ndefs; d++) {
        const cand_def *def = &c->defs[d];
        if ((def->kind == CAND_DEF_FUNC && !def->jit) || def->kind == CAND_DEF_CLASS)
            add(x, STATIC_LAUNCHER, def->tok0, kasprintf("%s %s", def->kind == CAND_DEF_CLASS ? "class" : "def", def->name),
                why);
    }
    for (size_t i = 0; i < c->ntoks; i++) {
        uint8_t f = c->tflags[i];
        if (is_nm(x, i, "lambda") && kind_of(x, i) == PYT_NAME) {
            add(x, STATIC_LAUNCHER, i, kstrdup("lambda"), why);
        } else if ((f & CTOK_DECORATOR) && (f & CTOK_STMT_START) && is_op(x, i, "@") && kind_of(x, i + 1) == PYT_NAME) {
            chain ch;
            chain_read(x, i + 1, &ch);
            if (ch.module && (!strcmp(ch.canon, "triton.autotune") || !strcmp(ch.canon, "triton.heuristics")))
                add(x, STATIC_LAUNCHER, i, tok_text(x, i, ch.last), why);
            free(ch.canon);
        }
    }
}

/* The module-level names whose value holds a triton.Config (x->config_names). */
static void collect_config_names(sctx *x) {
    const candidate *c = x->c;
    for (size_t d = 0; d < c->ndefs; d++) {
        const cand_def *def = &c->defs[d];
        if (def->kind != CAND_DEF_ASSIGN) continue;
        int found = 0;
        for (size_t k = def->body0; k < def->body1 && !found; k++) {
            if (kind_of(x, k) != PYT_NAME || (k > 0 && is_op(x, k - 1, "."))) continue;
            chain ch;
            chain_read(x, k, &ch);
            found = ch.module && !strcmp(ch.canon, "triton.Config");
            free(ch.canon);
        }
        if (found) {
            x->config_names = krealloc(x->config_names, (x->nconfig + 1) * sizeof *x->config_names);
            x->config_names[x->nconfig++] = def->name;
        }
    }
}

static void chain_check(sctx *x, size_t i, size_t *consumed) {
    chain ch;
    chain_read(x, i, &ch);
    *consumed = ch.last + 1;
    for (size_t k = i + 2; k <= ch.last; k += 2) dunder_check(x, k, !ch.module);
    int ref = x->c->ref[i];
    uint8_t f = flags(x, i);
    size_t after = ch.last + 1;
    int assigned = ch.nseg >= 2 && chain_is_store(x, i, ch.last);
    /* a subscript store or a mutating method through an attribute (`a.b[k] = v`,
     * `a.b.append(v)`): the object behind the attribute is changed */
    int through = 0;
    if (ch.nseg >= 2 && !(f & CTOK_IN_JIT)) {
        if (is_op(x, after, "[")) {
            size_t close = match_close(x, after);
            through = is_op(x, close + 1, "=") || is_aug_assign(x, close + 1);
        } else if (ch.call && (ch.nseg >= 3 || ch.module || ref == CREF_MODULE)) {
            const pytok *m = tk(x, ch.last);
            through = in_list_n(MUTATING_METHODS, x->c->text + m->off, m->len);
        }
    }
    if (ch.module) {
        verdict v = classify(x, ch.canon, ch.call);
        if (v.rule < 0 && ch.nseg == 1 && !strcmp(ch.canon, "getattr")) {
            /* any getattr: a name looked up by a string can be built from pieces */
            size_t a, b;
            char *sv = NULL;
            if (ch.call && call_arg(x, after, 1, &a, &b) && b == a + 1 &&
                kind_of(x, a) == PYT_STRING)
                sv = string_value(x, a);
            if (sv && is_dunder(sv, strlen(sv)))
                v = V(STATIC_IO, "dunder attributes reach interpreter internals");
            else
                v = V(STATIC_ENV, "getattr looks an attribute up by a string, which can name "
                                  "anything: write the attribute out");
            free(sv);
        }
        if (v.rule < 0) v = allowlist_use(x, &ch, ref);
        if (v.rule == STATIC_NAME && assigned)
            v.rule = -1; /* setting a module's attribute: the state rule says it better */
        if (v.rule >= 0) {
            add(x, (static_rule)v.rule, i, tok_text(x, i, ch.last), v.why);
        } else if (ch.call && x->enforce_prec && !strcmp(ch.canon, "triton.language.dot")) {
            dot_check(x, &ch);
        } else if (!ch.call && x->enforce_prec && !strcmp(ch.canon, "triton.language.dot")) {
            add(x, STATIC_PRECISION, i, tok_text(x, i, ch.last),
                "tl.dot used as a value (a default, an argument, an alias) is called where its precision "
                "cannot be read: TF32 by default; call tl.dot directly with input_precision=\"ieee\" (or "
                "--allow-precision-change)");
        } else if (assigned || through) {
            add(x, STATIC_STATE, i, stmt_text(x, i), "sets an attribute on a module");
        }
        free(ch.canon);
        return;
    }
    /* a variable: a module-level object, a local, a parameter */
    if (f & CTOK_IN_JIT)
        for (size_t k = i + 2; k <= ch.last; k += 2)
            if (!kernel_attr_ok(x, k) && !(ref == CREF_MODULE && jit_name(x, i))) {
                add(x, STATIC_NAME, k, tok_text(x, i, k),
                    "an attribute of a value inside a kernel: Triton looks it up on the Python object "
                    "at compile time (a jit function or a module member passed in reaches its "
                    "globals); only tensor, dtype and constexpr attributes are allowed");
                break;
            }
    if (ch.nseg == 1 && !(f & CTOK_IN_JIT)) pointer_check(x, i, after);
    int binding = (f & CTOK_MODULE_LEVEL) && (f & CTOK_STMT_START) && (is_op(x, after, "=") || is_op(x, after, ":"));
    if (ref == CREF_MODULE && !binding && !(f & CTOK_DECORATOR) && config_name(x, i)) {
        add(x, STATIC_STATE, i, tok_text(x, i, ch.last),
            "a module-level triton.Config keeps its kwargs in a dict: state kept across calls; "
            "name it only in @triton.autotune(configs=...)");
    } else if (ref == CREF_MODULE) {
        if (assigned) {
            add(x, STATIC_STATE, i, stmt_text(x, i),
                "sets an attribute on a module-level function or object: state kept across "
                "calls");
        } else if (ch.nseg >= 2 && jit_name(x, i)) {
            add(x, STATIC_NAME, i, tok_text(x, i, ch.last),
                "an attribute of a @triton.jit function reaches Triton's runtime (its Python "
                "function, caches, compiled kernels): launch it as kernel[grid](...)");
        } else if (ch.nseg == 1 && jit_name(x, i) && !(f & CTOK_IN_JIT) && !is_op(x, after, "[") &&
                   !(i > 0 && is_nm(x, i - 1, "def"))) {
            add(x, STATIC_NAME, i, tok_text(x, i, ch.last),
                "a @triton.jit function used as a value: under another name its attributes (Triton's "
                "runtime, caches) escape the rules; launch it as kernel[grid](...)");
        } else if ((f & CTOK_IN_FUNC) && ch.nseg == 1 && is_op(x, after, "[")) {
            size_t close = match_close(x, after);
            if ((f & CTOK_STMT_START) && (is_op(x, close + 1, "=") || is_aug_assign(x, close + 1)))
                add(x, STATIC_STATE, i, stmt_text(x, i),
                    "writes into a module-level object: state kept across calls");
        } else if ((f & CTOK_IN_FUNC) && ch.nseg == 2 && ch.call) {
            const pytok *m = tk(x, ch.last);
            if (in_list_n(MUTATING_METHODS, x->c->text + m->off, m->len))
                add(x, STATIC_STATE, i, tok_text(x, i, ch.last),
                    "mutates a module-level object: state kept across calls");
        } else if (through) {
            add(x, STATIC_STATE, i, stmt_text(x, i),
                "writes into an attribute of a module-level object: state kept across calls");
        }
    } else if ((assigned || through) && !(f & CTOK_IN_JIT)) {
        add(x, STATIC_STATE, i, stmt_text(x, i),
            "sets or changes an attribute of an argument or a local object (a tensor, an alias of "
            "a function): state that outlives the call");
    }
    if (ch.nseg >= 2 && ch.call) method_check(x, ch.last);
    free(ch.canon);
}

static void kwarg_check(sctx *x, size_t i) {
    if (!x->enforce_prec) return;
    if (is_nm(x, i, "allow_tf32")) {
        size_t v = i + 2;
        /* the literal False only: None falls back to Triton's default (TF32), and a name may
         * hold any truthy value (1, "yes"), not only True */
        int single = kind_of(x, v) == PYT_NAME && (is_op(x, v + 1, ",") || is_op(x, v + 1, ")"));
        if (!single || !is_nm(x, v, "False"))
            add(x, STATIC_PRECISION, i, tok_text(x, i, v),
                "TF32 matmul in a float32 model: only allow_tf32=False (or input_precision=\"ieee\") "
                "keeps float32 (needs --allow-precision-change)");
    } else if (is_nm(x, i, "input_precision")) {
        size_t v = i + 2;
        /* the string "ieee" (Triton reads it case-blind): any other mode (tf32, tf32x3,
         * bf16x3 ...) is reduced precision; a name or pieces may be any of them */
        char *val = kind_of(x, v) == PYT_STRING && (is_op(x, v + 1, ",") || is_op(x, v + 1, ")")) ? string_value(x, v) : NULL;
        /* "tf32" / "tf32x3" exactly are the string rule's (one report) */
        if (!val || (strcasecmp(val, "ieee") && strcmp(val, "tf32") && strcmp(val, "tf32x3")))
            add(x, STATIC_PRECISION, i, tok_text(x, i, v),
                "input_precision other than the string \"ieee\" is a reduced-precision matmul "
                "(needs --allow-precision-change)");
        free(val);
    } else if (is_nm(x, i, "fp_downcast_rounding")) {
        add(x, STATIC_PRECISION, i, tok_text(x, i, i + 2),
            "a rounding-mode downcast (needs --allow-precision-change)");
    }
}

/* ---------- imports ---------- */

static void import_check(sctx *x, const cand_import *im) {
    char *text = im->name ? kasprintf("from %s import %s", im->module, im->name)
                          : kasprintf("import %s", im->module);
    size_t tok = im->tok;
    if (im->module[0] == '.') {
        add(x, STATIC_IMPORT, tok, text, "relative imports are not allowed");
        return;
    }
    if (im->name && !strcmp(im->name, "*")) {
        add(x, STATIC_IMPORT, tok, text,
            "a star import hides what is used: import the module and name its members");
        return;
    }
    char *q = im->name ? kasprintf("%s.%s", im->module, im->name) : kstrdup(im->module);
    verdict v = classify(x, q, 0);
    int allowed_mod = in_list(ALLOWED_IMPORTS, im->module);
    if (v.rule >= 0 && !(v.dflt && !im->name)) {
        add(x, (static_rule)v.rule, tok, text, v.why);
    } else if (!allowed_mod) {
        add(x, STATIC_IMPORT, tok, text,
            "only triton, triton.language, math, torch and Inductor's Triton runtime helpers "
            "may be imported");
    } else {
        free(text);
    }
    free(q);
}

/* ---------- module-level statements and defaults ---------- */

/* Whether the call whose '(' is p may run at module level (MODULE_LEVEL_CALLS, math.*); else
 * *classified tells whether another rule refuses it anyway. *config (when not NULL): the call is
 * triton.Config, whose dict argument is the Config's kwargs (the Config rule follows its name). */
static int call_allowed(const sctx *x, size_t p, int *classified, int *config) {
    *classified = 0;
    if (config) *config = 0;
    if (p == 0 || kind_of(x, p - 1) != PYT_NAME) return 0;
    size_t k = p - 1;
    while (k >= 2 && is_op(x, k - 1, ".") && kind_of(x, k - 2) == PYT_NAME) k -= 2;
    if (k > 0 && is_op(x, k - 1, ".")) return 0;   /* a method of a call's result */
    chain ch;
    chain_read(x, k, &ch);
    int ok = 0;
    if (ch.module) {
        ok = in_list(MODULE_LEVEL_CALLS, ch.canon) || seg_prefix(ch.canon, "math");
        if (!ok) *classified = classify(x, ch.canon, 1).rule >= 0;
        if (config) *config = !strcmp(ch.canon, "triton.Config");
    }
    free(ch.canon);
    return ok;
}

/* The value tokens [a, b) of a module- or class-level assignment. */
static void value_check(sctx *x, size_t s, size_t a, size_t b) {
    size_t config_end = 0;   /* tokens before it are a triton.Config's arguments */
    for (size_t v = a; v < b; v++) {
        if (flags(x, v) & (CTOK_IN_FUNC | CTOK_DEFAULT)) continue;
        if ((is_op(x, v, "[") || is_op(x, v, "{")) && !is_trailer_open(x, v)) {
            if (v < config_end) continue;   /* the Config's kwargs: the Config rule's */
            add(x, STATIC_STATE, v, stmt_text(x, s),
                "a module-level list/dict/set is mutable: state shared by every call");
            return;
        }
        if (is_op(x, v, "(") && is_trailer_open(x, v)) {
            /* an allowed call's arguments are judged like the value itself: they run at import
             * time too, and min / max / tuple hand back what they are given
             * (`S = max((make_cache(),))`, `S = tuple([{}])` would keep state) */
            int classified, config;
            if (call_allowed(x, v, &classified, &config) || classified) {
                if (config && match_close(x, v) > config_end) config_end = match_close(x, v);
                continue;
            }
            add(x, STATIC_STATE, v, stmt_text(x, s),
                "a module-level value made by a call may be mutable: state shared by every "
                "call");
            return;
        }
    }
}

static void toplevel_check(sctx *x, size_t s) {
    const pytok *t = tk(x, s);
    if (t->kind == PYT_NAME && candidate_is_keyword(x->c->text + t->off, t->len)) return;
    if (t->kind == PYT_STRING || is_op(x, s, "@")) return;
    size_t end = s, eq = 0;
    int has_eq = 0;
    for (; !line_end_tok(x, end); end++) {
        if (depth_at(x, end) != 0) continue;
        if (is_op(x, end, ";") || is_nm(x, end, "lambda")) break;
        if (is_op(x, end, "=")) { eq = end; has_eq = 1; }
        if (is_aug_assign(x, end)) break;
    }
    if (has_eq) {
        size_t stop = eq + 1;
        while (!line_end_tok(x, stop) && !(depth_at(x, stop) == 0 && is_op(x, stop, ";"))) stop++;
        value_check(x, s, eq + 1, stop);
        return;
    }
    /* an expression statement: a call at import time (each call of the statement is judged,
     * its arguments' calls too: an allowed one excuses neither the next nor the ones it is
     * given, `math.floor(1.5) + setup()`, `math.floor(setup())`; not a lambda's body) */
    for (size_t v = s; v < end; v++) {
        if ((flags(x, v) & (CTOK_IN_FUNC | CTOK_DEFAULT)) || !is_op(x, v, "(") || !is_trailer_open(x, v)) continue;
        int classified;
        if (!call_allowed(x, v, &classified, NULL) && !classified) {
            add(x, STATIC_STATE, s, stmt_text(x, s),
                "a module-level call runs at import time and may set up state");
            return;
        }
    }
}

static void defaults_check(sctx *x) {
    for (size_t v = 0; v < x->c->ntoks; v++) {
        uint8_t f = flags(x, v);
        if (!(f & CTOK_DEFAULT)) continue;
        int bad = 0;
        if ((is_op(x, v, "[") || is_op(x, v, "{")) && !is_trailer_open(x, v)) bad = 1;
        if (is_op(x, v, "(") && is_trailer_open(x, v)) {
            int classified;
            bad = !call_allowed(x, v, &classified, NULL) && !classified;
        }
        if (bad) {
            size_t a = v;
            while (a > 0 && (flags(x, a - 1) & CTOK_DEFAULT)) a--;
            add(x, STATIC_STATE, v, tok_text(x, a > 1 ? a - 2 : a, v),
                "a mutable default value is created once and kept across calls");
        }
    }
}

/* Annotations run when Python defines the function -- in the sandbox's compile and in the
 * module kopt ships -- and no other rule looks inside them: a parameter's annotation must be
 * tl.constexpr (triton.language's constexpr through an import) and nothing else, and a return
 * annotation is refused. */
static void annotations_check(sctx *x) {
    for (size_t i = 0; i + 2 < x->c->ntoks; i++) {
        if (!is_nm(x, i, "def") || kind_of(x, i + 1) != PYT_NAME || !is_op(x, i + 2, "(")) continue;
        size_t open = i + 2, close = match_close(x, open);
        int d = depth_at(x, open) + 1;
        for (size_t k = open + 1; k < close; k++) {
            if (depth_at(x, k) != d || !is_op(x, k, ":") || (flags(x, k) & CTOK_DEFAULT)) continue;
            size_t end = k + 1;
            while (end < close && !(depth_at(x, end) == d && (is_op(x, end, ",") || is_op(x, end, "=")))) end++;
            int ok = 0;
            if (kind_of(x, k + 1) == PYT_NAME) {
                chain ch;
                chain_read(x, k + 1, &ch);
                ok = ch.last + 1 == end && ch.module && !strcmp(ch.canon, "triton.language.constexpr");
                free(ch.canon);
            }
            if (!ok)
                add(x, STATIC_SYNTAX, k + 1, tok_text(x, k + 1, end > k + 1 ? end - 1 : k + 1),
                    "a parameter annotation runs when Python defines the function: only tl.constexpr");
        }
        if (is_op(x, close + 1, "->"))
            add(x, STATIC_SYNTAX, close + 1, tok_text(x, close + 1, close + 2),
                "a return annotation runs when Python defines the function");
    }
}

/* A kernel parameter's default is a constexpr whose attributes Triton looks up, and which it
 * calls, at compile time (`D: tl.constexpr = tl.dot` then `D(a, b)` is tl.dot at its TF32
 * default; a jit function there reaches its globals): inside a @triton.jit header a default
 * must be a literal (a number, optionally negated, a string, True, False, None) or a
 * triton.language dtype. */
static void jit_defaults_check(sctx *x) {
    static const char *const DTYPES[] = {"float32", "float64", "float16", "bfloat16", "int1", "int8", "int16", "int32",
                                         "int64", "uint8", "uint16", "uint32", "uint64", NULL};
    for (size_t a = 0; a < x->c->ntoks; a++) {
        uint8_t f = flags(x, a);
        if (!(f & CTOK_DEFAULT) || !(f & CTOK_IN_JIT) || (a > 0 && (flags(x, a - 1) & CTOK_DEFAULT))) continue;
        size_t b = a;
        while (b < x->c->ntoks && (flags(x, b) & CTOK_DEFAULT)) b++;
        size_t v = is_op(x, a, "-") ? a + 1 : a;
        int ok = 0;
        if (b == v + 1)
            ok = kind_of(x, v) == PYT_NUMBER ||
                 (v == a && (kind_of(x, v) == PYT_STRING || is_nm(x, v, "True") || is_nm(x, v, "False") ||
                             is_nm(x, v, "None")));
        if (!ok && v == a && kind_of(x, a) == PYT_NAME) {
            chain ch;
            chain_read(x, a, &ch);
            ok = ch.last + 1 == b && ch.module && !ch.call && !strncmp(ch.canon, "triton.language.", 16) &&
                 in_list(DTYPES, ch.canon + 16);
            free(ch.canon);
        }
        if (!ok)
            add(x, STATIC_NAME, a, tok_text(x, a, b - 1),
                "a kernel parameter's default is a constexpr Triton looks attributes up on and calls "
                "at compile time: only a literal or a tl dtype");
        a = b - 1;
    }
}

/* A source-encoding declaration (PEP 263: a comment matching coding[:=] on line 1 or 2) makes
 * Python decode another program than the one the rules read as UTF-8 (utf-7 hides lines in
 * "+AAo-"): only a UTF-8 one is accepted. */
static void encoding_check(sctx *x) {
    const char *p = x->c->text;
    for (int line = 1; line <= 2 && *p; line++) {
        size_t n = strcspn(p, "\n");
        const char *q = p;
        while (q < p + n && (*q == ' ' || *q == '\t' || *q == '\f')) q++;
        if (q < p + n && *q == '#') {
            for (const char *c = q; c + 7 <= p + n; c++) {
                if (strncmp(c, "coding", 6) || (c[6] != ':' && c[6] != '=')) continue;
                const char *v = c + 7;
                while (v < p + n && (*v == ' ' || *v == '\t')) v++;
                size_t vl = 0;
                while (v + vl < p + n && (isalnum((unsigned char)v[vl]) || strchr("-_.", v[vl]))) vl++;
                if (!vl) continue; /* no name: Python's declaration needs one (it reads on) */
                if (!((vl == 5 && !strncasecmp(v, "utf-8", 5)) || (vl == 5 && !strncasecmp(v, "utf_8", 5)) ||
                      (vl == 4 && !strncasecmp(v, "utf8", 4))))
                    add_at(x, STATIC_SYNTAX, line, (int)(q - p) + 1, kstrndup(q, (size_t)(p + n - q)),
                        "a source-encoding declaration other than UTF-8: Python would decode "
                        "another program than the one judged");
                break;
            }
        }
        p += n + (p[n] == '\n');
    }
}

/* A module-level name bound by an import and by another statement (`tl = 0` then `import
 * triton.language as tl`), or by two imports of different modules, is no longer the import the
 * rules resolve it to. */
static void shadow_check(sctx *x) {
    const candidate *c = x->c;
    for (size_t i = 0; i < c->nimports; i++) {
        const cand_import *im = &c->imports[i];
        if (!im->bound || !im->toplevel) continue;
        int bad = 0;
        for (size_t d = 0; d < c->ndefs && !bad; d++) bad = !strcmp(c->defs[d].name, im->bound);
        for (size_t j = 0; j < i && !bad; j++) {
            const cand_import *o = &c->imports[j];
            bad = o->bound && !strcmp(o->bound, im->bound) && strcmp(o->target, im->target);
        }
        if (bad)
            add(x, STATIC_NAME, im->tok, kstrdup(im->bound),
                "a name bound by an import and again by another statement or import: the rules "
                "could no longer tell which module it is");
    }
}

/* Form L: an f-string naming a top-level definition would break when stitching renames it. */
static void fstring_check(sctx *x, size_t i) {
    const pytok *t = tk(x, i);
    const char *s = x->c->text + t->off, *end = s + t->len;
    const char *q = s;
    int f = 0;
    while (q < end && *q != '\'' && *q != '"') f |= *q == 'f' || *q == 'F', q++;
    if (!f) return;
    for (; q < end; q++) {
        if (*q != '{') continue;
        if (q + 1 < end && q[1] == '{') { q++; continue; }
        const char *n0 = q + 1;
        while (n0 < end && (*n0 == ' ' || *n0 == '(')) n0++;
        const char *n1 = n0;
        while (n1 < end && ((*n1 >= 'a' && *n1 <= 'z') || (*n1 >= 'A' && *n1 <= 'Z') ||
                            *n1 == '_' || (n1 > n0 && *n1 >= '0' && *n1 <= '9')))
            n1++;
        for (size_t k = 0; n1 > n0 && k < x->c->nmodule_names; k++)
            if (strlen(x->c->module_names[k]) == (size_t)(n1 - n0) &&
                !memcmp(x->c->module_names[k], n0, (size_t)(n1 - n0))) {
                add(x, STATIC_SYNTAX, i, kstrndup(s, t->len),
                    "an f-string names a top-level definition, which stitching renames: copy it "
                    "to a local first");
                return;
            }
    }
}

/* ---------- single tokens ---------- */

/* A NAME token: ASCII only (Python NFKC-normalises identifiers, so a full-width `open` is
 * open: refusing every non-ASCII identifier is stricter than normalising and needs no Unicode
 * tables); no dunder name anywhere but Inductor's `filename=__file__` in a decorator (attribute
 * dunders are dunder_check's). 1 when the token is settled here (reported, or that one allowed
 * `__file__`): the other rules skip it. */
static int name_token_check(sctx *x, size_t i) {
    const pytok *t = tk(x, i);
    const char *s = x->c->text + t->off;
    if (!static_names_ascii(s, t->len)) {
        add(x, STATIC_IDENT, i, kstrndup(s, t->len),
            "a non-ASCII identifier: Python normalises identifiers (NFKC: a full-width name is "
            "the ASCII one), so only ASCII names are accepted");
        return 1;
    }
    if (x->c->ref[i] == CREF_ATTR || !is_dunder(s, t->len)) return 0;
    if (pytok_is(x->c->text, t, "__file__") && (flags(x, i) & CTOK_DECORATOR) && i >= 2 &&
        is_op(x, i - 1, "=") && is_nm(x, i - 2, "filename"))
        return 1;
    add(x, STATIC_IO, i, kstrndup(s, t->len), "dunder names reach interpreter internals");
    return 1;
}

static const char *const LOWP_STRINGS[] = {"fp16", "bf16", "fp8e4nv", "fp8e5", "fp8e4b15",
                                           "fp8e4b8", "fp8e5b16", "float16", "bfloat16", NULL};

/* A string literal: no backslash (escapes spell any name: "\x5f\x5fglobals\x5f\x5f"), no "__"
 * (in a decorator's arguments, where Inductor's kernel names hold "fused__x", none at a
 * word's edge), f-string fields that are plain names, no PTX clock / SM-id register; in a
 * float32 model no reduced-precision type name ('*fp16' in a signature) or TF32 mode. */
static void string_token_check(sctx *x, size_t i) {
    const pytok *t = tk(x, i);
    const char *s = x->c->text + t->off;
    int in_dec = (flags(x, i) & CTOK_DECORATOR) != 0;
    if (static_names_string_escape(s, t->len))
        add(x, STATIC_STRING, i, kstrndup(s, t->len),
            "a backslash in a string can spell any name (\\x5f\\x5f is __): write the text "
            "plainly");
    else if (static_names_string_dunder(s, t->len, !in_dec))
        add(x, STATIC_STRING, i, kstrndup(s, t->len),
            "a string holding \"__\" can name interpreter internals");
    else if (!static_names_fstring_fields(s, t->len))
        add(x, STATIC_STRING, i, kstrndup(s, t->len),
            "an f-string field runs code the rules do not see: keep its fields to plain names");
    if (static_names_string_timer(s, t->len))
        add(x, STATIC_TIMER, i, kstrndup(s, t->len),
            "reads a clock or the SM id: a kernel must not detect that it is being timed");
    if (!x->enforce_prec) return;
    char *v = string_value(x, i);
    const char *w = v;
    if (*w == '*') w++;
    if (*w == 'k' && w > v) w++;
    if (!strcmp(v, "tf32") || !strcmp(v, "tf32x3"))
        add(x, STATIC_PRECISION, i, kstrndup(s, t->len),
            "TF32 matmul precision in a float32 model (needs --allow-precision-change)");
    else if (in_list(LOWP_STRINGS, w))
        add(x, STATIC_PRECISION, i, kstrndup(s, t->len),
            "a reduced-precision type named in a float32 model (needs --allow-precision-change)");
    free(v);
}

/* ---------- driver ---------- */

static int prec_enforced(const static_opts *o) {
    if (o && o->allow_precision_change) return 0;
    const char *d = o ? o->model_dtype : NULL;
    return !d || !strcmp(d, "float32") || !strcmp(d, "fp32") || !strcmp(d, "f32") ||
           !strcmp(d, "torch.float32");
}

int static_check(const candidate *c, const static_opts *o, static_report *r, kerr *e) {
    static_report_free(r);
    sctx x = {c, o, r, prec_enforced(o), NULL, 0};
    collect_config_names(&x);
    for (size_t i = 0; i < c->nimports; i++) import_check(&x, &c->imports[i]);
    if (c->form == CAND_FORM_L && !c->from_plan && !(o && o->allow_launcher) && c->main_def >= 0)
        add(&x, STATIC_LAUNCHER, c->defs[c->main_def].tok0, kstrdup("def launch"),
            "host Python written by the candidate would run where kopt judges; write the kernel and a "
            "KOPT_PLAN instead (form P, docs/CANDIDATES.md), from which kopt writes the launcher "
            "(--allow-launcher accepts it, for trusted code only)");
    if (c->form == CAND_FORM_I) formi_host_check(&x);
    size_t consumed = 0;
    for (size_t i = 0; i < c->ntoks; i++) {
        const pytok *t = &c->toks[i];
        uint8_t f = c->tflags[i];
        if (t->kind == PYT_NAME && name_token_check(&x, i)) continue;
        if (t->kind == PYT_STRING) string_token_check(&x, i);
        if (f & CTOK_IN_IMPORT) continue;
        if ((f & CTOK_STMT_START) && (f & (CTOK_MODULE_LEVEL | CTOK_CLASS_BODY)) &&
            !(f & CTOK_DECORATOR))
            toplevel_check(&x, i);
        const char *s = c->text + t->off;
        if (t->kind == PYT_OP && (f & CTOK_DECORATOR) && (f & CTOK_STMT_START) && pytok_is(c->text, t, "@"))
            decorator_check(&x, i);
        if (t->kind == PYT_OP) {
            if ((pytok_is(c->text, t, "@") && !(f & CTOK_DECORATOR)) ||
                pytok_is(c->text, t, "@=")) {
                if (!(f & CTOK_IN_JIT))
                    add(&x, STATIC_TORCH_COMPUTE, i, kstrndup(s, t->len),
                        "the matrix-multiply operator runs a PyTorch op");
                else if (x.enforce_prec)
                    add(&x, STATIC_PRECISION, i, kstrndup(s, t->len),
                        "the matrix-multiply operator is tl.dot at Triton's default precision "
                        "(TF32 for float32): call tl.dot with input_precision=\"ieee\" (or "
                        "--allow-precision-change)");
            }
            continue;
        }
        if (t->kind == PYT_STRING) {
            if (c->form == CAND_FORM_L) fstring_check(&x, i);
            continue;
        }
        if (t->kind != PYT_NAME) continue;
        if (candidate_is_keyword(s, t->len)) {
            if (pytok_is(c->text, t, "global") || pytok_is(c->text, t, "nonlocal"))
                add(&x, STATIC_STATE, i, stmt_text(&x, i),
                    "rebinding outer names keeps state across calls");
            else if (pytok_is(c->text, t, "async") || pytok_is(c->text, t, "await") ||
                     pytok_is(c->text, t, "yield"))
                add(&x, STATIC_SYNTAX, i, kstrndup(s, t->len),
                    "a launcher must be a plain function (no coroutines or generators)");
            continue;
        }
        if (i < consumed) continue;
        switch (c->ref[i]) {
        case CREF_KWNAME: kwarg_check(&x, i); break;
        case CREF_PARAM:
            if ((f & CTOK_IN_JIT) && in_list_n(TRITON_OPTIONS, s, t->len))
                add(&x, STATIC_NAME, i, kstrndup(s, t->len),
                    "a kernel parameter named like a Triton compile option: Triton reads a keyword "
                    "of that name as the option, so the kernel would compile differently where "
                    "it is launched than where it was judged");
            break;
        case CREF_ATTR:
            dunder_check(&x, i, 1);
            method_check(&x, i);
            if ((f & CTOK_IN_JIT) && !kernel_attr_ok(&x, i))
                add(&x, STATIC_NAME, i, kstrndup(s - 1, t->len + 1),
                    "an attribute of a value inside a kernel: Triton looks it up on the Python object "
                    "at compile time; only tensor, dtype and constexpr attributes are allowed");
            break;
        default:
            chain_check(&x, i, &consumed);
        }
    }
    defaults_check(&x);
    annotations_check(&x);
    jit_defaults_check(&x);
    encoding_check(&x);
    shadow_check(&x);
    free(x.config_names);
    if (r->n) qsort(r->v, r->n, sizeof *r->v, cmp_violation);
    if (!r->n) return 0;
    const static_violation *v = &r->v[0];
    return kerr_set(e, KOPT_E_CANDIDATE,
                    "gate 1 (static rules): %zu violation%s; first: line %d:%d [%s] %s: %s",
                    r->n, r->n == 1 ? "" : "s", v->line, v->col, static_rule_name(v->rule),
                    v->text, v->why);
}

int static_report_passed(const static_report *r) { return r->n == 0; }

size_t static_report_count(const static_report *r, static_rule rule) {
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) n += r->v[i].rule == rule;
    return n;
}

json_t *static_report_json(const static_report *r) {
    json_t *arr = json_array();
    for (size_t i = 0; i < r->n; i++) {
        const static_violation *v = &r->v[i];
        json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:s, s:s}", "rule",
                                             static_rule_name(v->rule), "line", v->line,
                                             "column", v->col, "text", v->text, "explanation",
                                             v->why));
    }
    return json_pack("{s:b, s:o}", "passed", r->n == 0, "violations", arr);
}

void static_report_format(const static_report *r, const char *path, kbuf *out) {
    if (!path) path = "candidate";
    if (!r->n) {
        kbuf_printf(out, "%s: static rules passed\n", path);
        return;
    }
    for (size_t i = 0; i < r->n; i++) {
        const static_violation *v = &r->v[i];
        kbuf_printf(out, "%s:%d:%d: [%s] %s: %s\n", path, v->line, v->col,
                    static_rule_name(v->rule), v->text, v->why);
    }
}

void static_report_free(static_report *r) {
    if (!r) return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].text);
        free(r->v[i].why);
    }
    free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}

static const char *const RULE_NAMES[STATIC_NRULES] = {
    "torch-compute", "stream-sync", "state", "env", "io", "import", "precision", "syntax",
    "name", "identifier", "string", "timer", "launcher"};

const char *static_rule_name(static_rule r) {
    return (unsigned)r < STATIC_NRULES ? RULE_NAMES[r] : "?";
}

int static_rule_from_name(const char *s) {
    for (int i = 0; i < STATIC_NRULES; i++)
        if (s && !strcmp(RULE_NAMES[i], s)) return i;
    return -1;
}
