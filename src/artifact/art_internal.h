/* art_internal.h — private plumbing shared by artifact.c (driver), art_kernel.c (kernel
 * statements), art_call.c (the call() body) and art_json.c. Not for use outside src/artifact/.
 *
 * The driver lexes the module once (pylex, no comments) and cuts the token stream into logical
 * lines (art_line); the other modules read those lines. All strings they store into the
 * artifact are malloc'd and owned by it (see artifact.h).
 */
#ifndef KOPT_ART_INTERNAL_H
#define KOPT_ART_INTERNAL_H

#include "artifact/artifact.h"
#include "artifact/pylex.h"
#include "util/buf.h"

typedef struct art_line {
    size_t t0, t1;          /* tokens [t0, t1), NEWLINE excluded */
    int depth;              /* indentation level (INDENT count) */
    int line;               /* physical line of the first token */
    size_t phys_start;      /* start of the first physical line */
    size_t phys_end;        /* just past the terminating newline */
} art_line;

typedef struct art_ctx {
    artifact *a;
    pytok *toks;
    size_t ntok;
    art_line *lines;
    size_t nlines;
    size_t kcap, scap, lcap, icap, ocap;   /* capacities of the artifact's arrays */
    pytok *scratch;         /* token buffer reused for each kernel's source header */
    size_t scratch_cap;
} art_ctx;

/* Grow *arr (elements of elsz bytes, capacity *cap) so that it can hold n + 1 elements. */
void *art_grow(void *arr, size_t *cap, size_t n, size_t elsz);
char *art_dup(const artifact *a, size_t off, size_t len);
void art_warn(artifact *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text of tokens [t0, t1) (first token's start to last token's end). */
char *art_tok_text(const art_ctx *c, size_t t0, size_t t1);

/* The comment block (comment lines, then possibly blank lines) just before `start`, not
 * reaching below `lower`. len 0 if none. */
art_span art_comment_before(const char *text, size_t lower, size_t start);
/* Parse the list after `marker` ("Source Nodes: [") on a comment line into out (appended). */
int art_comment_list(const char *line, size_t n, const char *marker, art_strlist *out);
/* Scan the comment lines of text[from, to) for "Source Nodes: [...]" / "Original ATen: [...]";
 * when found, replace *nodes / *aten with the last such lists. Returns 1 if found. */
int art_comment_sources(const char *text, size_t from, size_t to, art_strlist *nodes,
                        art_strlist *aten);

/* A top-level `NAME = async_compile.triton(...)` on line li (lower: where the gap before it
 * starts). Adds a kernel (or, if unreadable, a verbatim entry and a warning). */
void art_parse_kernel(art_ctx *c, size_t li, size_t lower);
/* A region launcher `def _kopt_region_..__launch(...)` on line li, bound on the line after its
 * block (art_region.c). Adds a kernel and returns 1; 0 (nothing added) if it is not one. */
int art_parse_region(art_ctx *c, size_t li, size_t lower);
/* Release what art_parse_kernel keeps in the context between kernels. */
void art_kernel_ctx_free(art_ctx *c);
void art_kernel_free(art_kernel *k);

/* Classify the statements of lines [b0, b1) (call()'s body); gap_start: end of the def line. */
void art_walk_call(art_ctx *c, size_t b0, size_t b1, size_t gap_start);
void art_stmt_free(art_stmt *s);
void art_launch_free(art_launch *l);

#endif
