/* artifact.h — the model of one Inductor output module (one graph, one file).
 *
 * Contract: artifact_parse reads the Python module that torch 2.11's Inductor writes for a
 * compiled graph and records, without running it:
 *   - every `NAME = async_compile.triton('NAME', '''<source>''', device_str='cuda')`
 *     statement as a kernel: kind, comment block (kernel path, source nodes, ATen ops, graph
 *     fragment), the Triton source, its signature with argument roles, mutated args, size
 *     hints, grid type, and byte spans of the statement and of the source literal;
 *   - other `async_compile.*` statements (kept verbatim, listed);
 *   - the entry point (`def call(args):` or `class Runner` / `def call(self, args):`) and, in
 *     order, each statement of its body, nested `with` blocks included, classified (see
 *     art_stmt_kind); Triton `.run(...)` launches and vendor calls (extern_kernels.*,
 *     torch.ops.*, aten.*) are numbered 0..n-1 in textual order as launches;
 *   - the inputs that get_args() (or benchmark_compiled_module) builds with rand_strided.
 * Nothing is dropped: statements it cannot classify are ART_ST_UNKNOWN and keep their span;
 * all text outside the model stays in `text`, so emitting reproduces the file exactly.
 * A lexing error, or a module without a call() entry point, is KOPT_E_PARSE with "line N" in
 * the message. Oddities that do not stop the parse (a kernel whose decorator cannot be read, a
 * launch of an unknown kernel, several entry points) become `warnings`.
 * Spans are byte offsets into `text`, except a kernel's `decorator`, which indexes its
 * `source`; art_kernel_decorator parses that call into a full value tree on demand.
 *
 * Ownership: artifact_parse copies the input text; the artifact owns every string, array and
 * pyval it holds, all released by artifact_free. Accessors return borrowed pointers.
 * artifact_to_json returns a new reference owned by the caller.
 */
#ifndef KOPT_ARTIFACT_H
#define KOPT_ARTIFACT_H

#include <jansson.h>
#include <stddef.h>

#include "artifact/pylit.h"
#include "util/err.h"

typedef struct art_span {
    size_t off, len;
} art_span;

typedef struct art_strlist {
    char **v;
    size_t n;
} art_strlist;

typedef enum {
    ART_K_POINTWISE = 0,
    ART_K_REDUCTION,
    ART_K_PERSISTENT,   /* persistent_reduction */
    ART_K_TEMPLATE,
    ART_K_FOREACH,
    ART_K_OTHER,
    ART_K_REGION,       /* a region launcher written by region_build (region.h) */
} art_kernel_kind;

typedef enum {
    ART_ROLE_IN = 0,    /* in_ptr*, or any other pointer not mutated */
    ART_ROLE_OUT,       /* out_ptr* */
    ART_ROLE_INOUT,     /* in_out_ptr*, or named in mutated_arg_names */
    ART_ROLE_SCALAR,    /* non-pointer runtime argument (xnumel, ks0...) */
    ART_ROLE_CONSTEXPR, /* 'constexpr': not passed at launch */
} art_role;

typedef struct art_param {
    char *name;
    char *type;         /* "*fp32", "i32", "constexpr"... */
    art_role role;
} art_param;

typedef struct art_hint {
    char *dim;          /* "x", "y", "r0_"; "0", "1"... for the old list form */
    long long value;
} art_hint;

typedef struct art_kernel {
    char *name;
    art_kernel_kind kind;
    char *heuristic;        /* "pointwise", "reduction", "split_scan"...; NULL: no decorator */
    char *jit_name;         /* the @triton.jit function's name; NULL if not found */
    int line;               /* line of the statement */
    art_span stmt;          /* NAME = async_compile.triton(...) */
    art_span literal;       /* the source literal, prefix and quotes included */
    art_span comment;       /* the comment block right before the statement (len 0: none) */
    char *source;           /* the Triton source, escapes decoded */
    size_t source_len;
    char *kernel_path;      /* from "# kernel path: ..."; NULL if absent */
    art_strlist source_nodes, aten_ops, graph_fragment;
    art_param *params;      /* triton_meta['signature'], in order */
    size_t nparams;
    art_strlist mutated;    /* inductor_meta['mutated_arg_names'] */
    art_hint *hints;        /* size_hints, in order */
    size_t nhints;
    char *grid_type;        /* inductor_meta['grid_type']; NULL if absent */
    art_span decorator;     /* `triton_heuristics.<kind>(...)` within `source` (len 0: none) */
    int decorator_line;     /* its line within `source` */
    art_strlist members;    /* REGION: the kernels it launches, in order; else empty */
    char *vendor_call;      /* REGION of one ATen call (region.h): "torch.ops.aten.OP.default(in_ptr0,
                               <literals>)" from its kopt-region-vendor line; else NULL */
} art_kernel;

typedef enum {
    ART_ST_UNPACK = 0,  /* arg0_1, arg1_1 = args */
    ART_ST_ARGS_CLEAR,  /* args.clear() */
    ART_ST_ASSERT,      /* assert_size_stride(...), assert_alignment(...) */
    ART_ST_STREAM,      /* stream0 = get_raw_stream(0) */
    ART_ST_DEVICE,      /* with torch.cuda._DeviceGuard(0): / torch.cuda.set_device(0) */
    ART_ST_ALLOC,       /* buf0 = empty_strided_cuda(shape, stride, dtype) */
    ART_ST_ALIAS,       /* buf4 = buf2 / reinterpret_tensor(buf1, ...) / buf5[1] (reuse flag) */
    ART_ST_DEL,         /* del a, b */
    ART_ST_LAUNCH,      /* kernel.run(...) */
    ART_ST_VENDOR,      /* extern_kernels.mm(...), buf2 = extern_kernels.convolution(...), ... */
    ART_ST_SCALAR,      /* name = arithmetic (symbolic sizes) */
    ART_ST_RETURN,
    ART_ST_BLOCK,       /* a `with` header other than the device guard */
    ART_ST_UNKNOWN,     /* anything else, kept verbatim and listed */
} art_stmt_kind;

typedef struct art_stmt {
    art_stmt_kind kind;
    int line;               /* first physical line */
    int depth;              /* nesting inside call()'s body: 0 = directly in the body */
    art_span span;          /* first token to last token (trailing comment excluded) */
    size_t line_start;      /* start of its first physical line */
    size_t line_end;        /* just past the newline that ends its last physical line */
    int inline_part;        /* shares its line with other statements (`a; b`) */
    char *target;           /* assigned name (ALLOC, ALIAS, STREAM, SCALAR, VENDOR); else NULL */
    char *of;               /* ALIAS: the buffer aliased, when a plain name; else NULL */
    int reuse;              /* ALIAS: followed by `del <of>` or marked `# reuse` */
    char *shape, *stride, *dtype;   /* ALLOC: argument texts (stride NULL for empty()) */
    art_strlist names;      /* UNPACK: targets; DEL: names */
    int launch;             /* LAUNCH / VENDOR: index into launches; else -1 */
} art_stmt;

typedef enum { ART_L_TRITON = 0, ART_L_VENDOR } art_launch_kind;

typedef struct art_launch {
    int index;              /* 0..n-1, textual order in call() */
    art_launch_kind kind;
    char *callee;           /* kernel name, or "extern_kernels.mm", "torch.ops.aten.x.default" */
    int kernel;             /* TRITON: index into kernels, -1 if unknown; VENDOR: -1 */
    size_t stmt;            /* index into stmts */
    int line;
    art_span span;          /* the call (the assignment, when assigned) */
    char *indent;           /* whitespace before the statement on its line */
    art_strlist args;       /* positional argument texts */
    art_strlist kwnames, kwvals;   /* keyword arguments (names, value texts) */
    char *out;              /* VENDOR: the out= text; else NULL */
    char *target;           /* VENDOR: the assigned name; else NULL */
    long long *numels;      /* TRITON: integer numel arguments, in order */
    size_t nnumels;
    size_t nextra;          /* TRITON: positional args past the kernel's runtime params */
    art_strlist source_nodes, aten_ops;  /* from the "# ... Source Nodes" comment before it */
} art_launch;

typedef enum { ART_ENTRY_DEF = 0, ART_ENTRY_RUNNER } art_entry_form;

typedef struct art_entry {
    art_entry_form form;
    int line;               /* line of `def call(...)` */
    art_span header;        /* the `def call(...):` line */
    art_span body;          /* first body line's start to the end of the last body line */
    int runner_instance;    /* RUNNER: `runner = Runner(...)` present */
    int call_bound;         /* RUNNER: `call = runner.call` present */
    art_strlist inputs;     /* names unpacked from args */
} art_entry;

typedef struct art_input {
    char *name;
    char *shape, *stride, *dtype, *device;  /* rand_strided inputs; NULL for scalars */
    char *value;            /* scalar inputs: the literal text; NULL for tensors */
} art_input;

typedef struct art_verbatim {
    int line;
    art_span span;
} art_verbatim;

typedef struct artifact {
    char *text;             /* the module, NUL-terminated copy */
    size_t len;
    int nlines;
    art_kernel *kernels;
    size_t nkernels;
    art_stmt *stmts;        /* call()'s statements in order */
    size_t nstmts;
    art_launch *launches;
    size_t nlaunches;
    art_entry entry;
    art_span get_args;      /* def get_args(): ... (len 0 if absent) */
    art_span benchmark;     /* def benchmark_compiled_module(...): ... (len 0 if absent) */
    art_input *inputs;
    size_t ninputs;
    art_verbatim *async_other;  /* other async_compile.* statements */
    size_t nasync_other;
    art_strlist warnings;
    int *khash;             /* private: kernel name hash table (indices, -1 empty) */
    size_t khcap;
} artifact;

int artifact_parse(const char *text, size_t len, artifact **out, kerr *e);
void artifact_free(artifact *a);
json_t *artifact_to_json(const artifact *a);

/* Whether identifier `name` occurs in text[from, to) as a whole word, not after '.'. */
int art_word_in(const char *text, size_t from, size_t to, const char *name);

/* Where call()'s tensor `name` comes from, through plain aliases (`b = a`, at most 16 links):
 * 1 with *in the graph input (rand_strided in get_args()) or *st the ALLOC or VENDOR statement
 * that defines it (the other NULL); 0 when none is found. */
int art_tensor_origin(const artifact *a, const char *name, const art_input **in, const art_stmt **st);

/* Index of the kernel named `name` (the first one if repeated), or -1. */
int artifact_find_kernel(const artifact *a, const char *name);
/* For a Triton launch: the kernel parameter bound to positional argument i (runtime params in
 * signature order, constexprs skipped), or NULL. */
const art_param *art_launch_param(const artifact *a, const art_launch *l, size_t i);
/* The kernel's @triton_heuristics.<kind>(...) call as a value tree (*out owned by the caller;
 * its spans index k->source + k->decorator.off). KOPT_E_PARSE if there is none. */
int art_kernel_decorator(const art_kernel *k, pyval **out, kerr *e);
/* Whether the kernel's body may write through pointer parameter `name`: 0 only when every use
 * of the name after the `def` line is the first argument of a `tl.load(` (an in_out_ptr that
 * Inductor declares mutated for a reused buffer but only reads); 1 otherwise, and when the
 * source has no `def <jit_name>(`. For traffic counts; the parameter's role is unchanged. */
int art_kernel_param_stored(const art_kernel *k, const char *name);

/* Number of statements of kind k. */
size_t artifact_count(const artifact *a, art_stmt_kind k);

const char *art_kernel_kind_name(art_kernel_kind k);
const char *art_role_name(art_role r);
const char *art_stmt_kind_name(art_stmt_kind k);

/* Small helpers shared by the artifact modules. */
void art_strlist_push(art_strlist *l, char *s);  /* takes ownership of s */
void art_strlist_free(art_strlist *l);

#endif
