/* candidate.h — the model of one candidate kernel file (docs/CANDIDATES.md) and its stitching.
 *
 * Contract: candidate_parse tokenizes a candidate (pylex, comments kept) and records, without
 * running it:
 *   - the form: L (a top-level `def launch(...)`) or I (one `@triton.jit def NAME` decorated
 *     with `@triton_heuristics.<kind>(...)`, and no launch); a file with a top-level
 *     `KOPT_PLAN = {...}` and neither is form P (plan.h): candidate_parse checks its plan and
 *     returns the candidate of the text kopt writes for it (plan_lower), a form-L candidate
 *     whose `from_plan` is set and whose text is that lowered text;
 *   - the binding `# kopt-candidate: replaces=NAME` (or `replaces=K1+K2+...`: a region of
 *     consecutive launches, region.h) from the comment lines before the first
 *     code token (NULL if absent);
 *   - the top-level definitions (functions, classes, assigned names) with their spans;
 *   - the top-level @triton.jit functions (`@triton.jit` or `@triton.jit(...)`, possibly under
 *     other decorators such as @triton.autotune);
 *   - form L: launch's parameters in order, without a trailing `stream` / `stream=None`;
 *     form I: the decorated jit function's parameters, `: tl.constexpr` ones marked;
 *   - every import statement (anywhere), with the module and the name it binds;
 *   - per code token, a resolution (scopes: module, def, lambda, class) used by the renaming of
 *     form L stitching and by gate 1 (static.h): whether a NAME is an attribute after '.', a
 *     keyword-argument or parameter name, a function-local name, a reference to a top-level
 *     definition, a module-level import, or free (builtin / unknown).
 * Malformed text — a lexer error, no @triton.jit function, both forms or neither, two top-level
 * `def launch`, two heuristics-decorated jit functions, a conflicting binding, a file over
 * CANDIDATE_MAX_BYTES or nesting defs/lambdas deeper than CANDIDATE_MAX_NEST — is
 * KOPT_E_CANDIDATE with a message starting "line N: ".
 *
 * candidate_check_interface compares the candidate with the kernel it replaces (form L: launch
 * parameters == the kernel's runtime parameters, by name and order; form I: the jit function is
 * named like the kernel and its parameters == all the kernel's parameters, constexpr flags
 * equal; both: a `replaces=` binding, when present, names that kernel, or — a region kernel —
 * lists its member kernels joined by '+', in order); the first difference
 * is a KOPT_E_CANDIDATE sentence ("launch parameter 2 is xnumel, the kernel has out_ptr2;
 * expected (in_ptr0, out_ptr2, xnumel, r0_numel)").
 *
 * candidate_stitch_text appends the Python statement(s) that replace the kernel's
 * `NAME = async_compile.triton(...)` statement (see the function's comment);
 * candidate_launch_shim returns the `_KoptLaunch` class text, which the module needs once,
 * before the first form-L stitched kernel (emitting it twice is harmless).
 *
 * Ownership: candidate_parse copies the text; the candidate owns every string and array it
 * holds, all released by candidate_free (NULL-safe). Accessors and the public fields are
 * borrowed, read-only views. candidate_launch_shim returns a static string.
 */
#ifndef KOPT_CANDIDATE_H
#define KOPT_CANDIDATE_H

#include <stddef.h>
#include <stdint.h>

#include "artifact/artifact.h"
#include "artifact/pylex.h"
#include "util/buf.h"
#include "util/err.h"

#define CANDIDATE_MAX_BYTES (2 * 1024 * 1024)
#define CANDIDATE_MAX_NEST 200

typedef enum { CAND_FORM_L = 0, CAND_FORM_I } cand_form;

typedef enum { CAND_DEF_FUNC = 0, CAND_DEF_CLASS, CAND_DEF_ASSIGN } cand_def_kind;

typedef struct cand_def {
    char *name;
    cand_def_kind kind;     /* ASSIGN: any other binding statement at module level too */
    int line;               /* line of the statement's first token (a decorator's '@') */
    size_t off, len;        /* byte span: decorators included, through the last token */
    size_t tok0, tok1;      /* code-token range [tok0, tok1) of the whole statement */
    size_t body0, body1;    /* FUNC/CLASS: code-token range of the body; ASSIGN: the value
                               (tokens after the last top-level '=') — empty when none */
    int jit;                /* FUNC: decorated with triton.jit */
    char *heuristic;        /* FUNC: "pointwise" for @triton_heuristics.pointwise; else NULL */
} cand_def;

typedef struct cand_param {
    char *name;             /* "*args" / "**kw" for star parameters */
    int constexpr_;         /* annotated `tl.constexpr` (or triton.language.constexpr) */
    int has_default;
    int line;
} cand_param;

typedef struct cand_import {
    char *module;           /* `import a.b` -> "a.b"; `from a.b import c` -> "a.b" */
    char *name;             /* from-import: the imported name ("*" for a star); else NULL */
    char *bound;            /* the name bound: `import a.b` -> "a"; `as x` -> "x"; star: NULL */
    char *target;           /* what `bound` refers to: "a", "a.b" (as), "a.b.c" (from) */
    int line, col;
    size_t tok;             /* code-token index of the `import` / `from` keyword */
    int toplevel;           /* at module level (not inside a def/class) */
} cand_import;

/* Resolution of one code token (candidate.ref[i]). */
typedef enum {
    CREF_NONE = 0,          /* not a NAME, or a keyword */
    CREF_ATTR,              /* a NAME right after '.' */
    CREF_KWNAME,            /* f(name=...) keyword argument name */
    CREF_PARAM,             /* a parameter name in a def or lambda header */
    CREF_LOCAL,             /* bound in an enclosing def/lambda (or the class body it is in) */
    CREF_MODULE,            /* a top-level (module-scope) non-import binding: renamed in L */
    CREF_IMPORT,            /* a module-scope binding made only by import statements */
    CREF_FREE,              /* builtin or unknown */
} cand_ref;

/* Per-token flags (candidate.tflags[i]). */
enum {
    CTOK_IN_FUNC = 1,       /* inside the body of a def or lambda (any) */
    CTOK_IN_JIT = 2,        /* inside a top-level @triton.jit function (header and body) */
    CTOK_DECORATOR = 4,     /* part of a decorator line */
    CTOK_IN_IMPORT = 8,     /* part of an import statement */
    CTOK_STMT_START = 16,   /* first token of a simple statement (after NEWLINE/INDENT/DEDENT,
                               ';', or the ':' of a one-line compound statement) */
    CTOK_MODULE_LEVEL = 32, /* not inside any def, lambda or class body */
    CTOK_CLASS_BODY = 64,   /* directly in a class body (not in one of its methods) */
    CTOK_DEFAULT = 128,     /* part of a parameter's default value (def or lambda) */
};

typedef struct candidate {
    char *text;             /* NUL-terminated copy of the file */
    size_t len;
    pytok *toks;            /* code tokens: all tokens but COMMENT, ending with END */
    size_t ntoks;
    uint16_t *depth;        /* bracket depth before each code token */
    uint8_t *ref;           /* cand_ref per code token */
    uint8_t *tflags;        /* CTOK_* per code token */
    uint32_t *line_start;   /* byte offset of each line's start; line_start[0] = line 1 */
    size_t nlines;
    cand_form form;
    char *replaces;         /* the `# kopt-candidate: replaces=NAME` binding; NULL if absent */
    int replaces_line;
    cand_def *defs;         /* top-level definitions in order; assignments one per name */
    size_t ndefs;
    char **jit_names;       /* top-level @triton.jit function names, in order */
    size_t njit;
    int main_def;           /* index into defs: L: launch; I: the heuristics-decorated jit */
    cand_param *params;     /* L: launch's (stream excluded); I: the jit function's */
    size_t nparams;
    int launch_stream;      /* L: launch takes a trailing `stream` parameter */
    cand_import *imports;
    size_t nimports;
    char **module_names;    /* names renamed by form-L stitching (CREF_MODULE bindings) */
    size_t nmodule_names;
    int plan_def;           /* index into defs of `KOPT_PLAN = ...` (form P, before lowering);
                               -1 otherwise */
    int from_plan;          /* the text is kopt's lowering of a form-P file (plan.h) */
    char **plan_kernels;    /* from_plan: each launch's kernel, in the plan's order (the stitched
                               shim binds launch i to plan_kernels[i]) */
    size_t nplan_kernels;
    size_t plan_launcher_off; /* from_plan: where kopt's launcher begins in text (plan_lower) */
} candidate;

int candidate_parse(const char *text, size_t len, candidate **out, kerr *e);
/* The same without form P's lowering: a form-P file comes back as written (plan_def >= 0), for
 * plan_of (the machine-code check reads the plan itself). */
int candidate_parse_raw(const char *text, size_t len, candidate **out, kerr *e);
void candidate_free(candidate *c);

int candidate_check_interface(const candidate *c, const art_kernel *k, kerr *e);

/* Append to `out` the text replacing `kernel_name = async_compile.triton(...)`:
 *  - form I: `NAME = async_compile.triton('NAME', '''<text>''', device_str='cuda')`, the text
 *    escaped so that Python (and artifact_parse) decode it back byte for byte: backslashes
 *    doubled, a quote followed by a quote or ending the text written \', CR as \r, other
 *    control characters except tab and newline as \xNN. The jit function must be named
 *    kernel_name (async_compile loads the kernel by that name).
 *  - form L: `# kopt: ...` comment line, then the candidate's text with every module-scope
 *    binding (CREF_MODULE tokens) renamed to `_kopt_<NAME>__<name>` — names in strings,
 *    comments, after '.', keyword-argument names and locals untouched — trailing blank space
 *    dropped, then `\nNAME = _KoptLaunch(_kopt_<NAME>__launch)`.
 * No trailing newline (the replaced statement's line end stays in the module). A kernel_name
 * that is not a Python identifier is KOPT_E_CANDIDATE; on error `out` is left as it was. */
int candidate_stitch_text(const candidate *c, const char *kernel_name, kbuf *out, kerr *e);

/* The candidate's text with every module-level name it defines prefixed `_kopt_<kernel_name>__`,
 * as candidate_stitch_text renames them (imports untouched): the source the sandbox compiles for
 * the gates (machine.h's kernel_prefix), so that the kernels it compiles carry the names the
 * stitched module gives them. */
void candidate_prefixed_text(const candidate *c, const char *kernel_name, kbuf *out);

/* The judge's stitch of a lowered form-P candidate (from_plan): what candidate_stitch_text
 * appends, but with nothing of the candidate's file -- each jit function its plan launches is a
 * kopt.cubin.CubinFunction over the launches of it that gate 1 kept in `cubin_dir` (launch<i>.*,
 * machine.h's keep_dir), followed by kopt's launcher and the `_KoptLaunch` binding. The module
 * the worker imports for gates 2-4 then runs the sandbox's machine code and no candidate Python.
 * KOPT_E_CANDIDATE for a candidate that is not a lowered plan or a bad kernel_name. */
int candidate_cubin_stitch_text(const candidate *c, const char *kernel_name, const char *cubin_dir, kbuf *out,
                                kerr *e);

/* The `_KoptLaunch` class, guarded by `if '_KoptLaunch' not in globals():`, ending in '\n'. */
const char *candidate_launch_shim(void);

/* Escape s[0..n) for the inside of a ''' literal (see candidate_stitch_text). */
void candidate_escape_triple(const char *s, size_t n, kbuf *out);

/* Accessors. */
cand_form candidate_form(const candidate *c);
const char *candidate_form_name(cand_form f);           /* "L" / "I" */
/* "P" for a lowered form-P candidate, else candidate_form_name(form). */
const char *candidate_form_label(const candidate *c);
/* The parameters of top-level function defs[def] (caller frees with candidate_params_free). */
void candidate_def_params(const candidate *c, size_t def, cand_param **out, size_t *n);
void candidate_params_free(cand_param *p, size_t n);
const char *candidate_replaces(const candidate *c);     /* NULL if unbound */
size_t candidate_nparams(const candidate *c);
const cand_param *candidate_param(const candidate *c, size_t i);   /* NULL out of range */
const char *candidate_main_name(const candidate *c);    /* "launch" or the jit name */
int candidate_is_jit(const candidate *c, const char *name);
/* 1-based column of byte offset `off` (its line known). */
int candidate_col(const candidate *c, size_t off, int line);
const char *cand_ref_name(cand_ref r);
/* Whether s is a Python identifier that is not a keyword. */
int candidate_is_ident(const char *s);
/* Whether s[0..n) is a Python keyword (soft keywords excluded). */
int candidate_is_keyword(const char *s, size_t n);

#endif
