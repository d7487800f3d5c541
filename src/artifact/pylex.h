/* pylex.h — a tokenizer for the Python subset found in Inductor output modules.
 *
 * Contract: pylex_next() yields, in source order,
 *   NAME, NUMBER (ints, floats, 1e-05, 0x.., 1_000, 2j), STRING (one literal, its r/b/u/f
 *   prefix and quotes included; single, double and triple quoted), OP (operators and
 *   punctuation, longest match), COMMENT (only with PYLEX_COMMENTS),
 *   NEWLINE at the end of each logical line — never inside brackets, never after a backslash
 *   continuation, never for blank or comment-only lines; a missing final newline still yields one,
 *   INDENT / DEDENT when a logical line's indentation grows / shrinks (Python's stack rule,
 *   tabs to multiples of 8; off with PYLEX_NOINDENT, which suits lone expressions),
 *   END, repeated for every call after the end.
 * Tokens carry byte offsets into the lexed buffer and the 1-based physical line of their first
 * byte (NEWLINE: the line it ends; INDENT/DEDENT: zero length, at the line's first token).
 * Errors — unterminated string, unbalanced or unclosed bracket, brackets nested deeper than
 * PYLEX_MAX_DEPTH ("line N: brackets nesting deeper than 200"), stray character, inconsistent
 * dedent, buffer over 4 GiB — return KOPT_E_PARSE with a message that starts "line N: ".
 *
 * Ownership: the lexer borrows `src`, which must outlive the lexer and every token read from
 * it. pylex_all hands back a malloc'd token array that the caller frees with free().
 */
#ifndef KOPT_PYLEX_H
#define KOPT_PYLEX_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/err.h"

typedef enum {
    PYT_END = 0,
    PYT_NAME,
    PYT_NUMBER,
    PYT_STRING,
    PYT_OP,
    PYT_COMMENT,
    PYT_NEWLINE,
    PYT_INDENT,
    PYT_DEDENT,
} pytok_kind;

typedef struct pytok {
    uint32_t off;   /* byte offset of the first byte */
    uint32_t len;   /* bytes (0 for INDENT, DEDENT, END and a NEWLINE made up at the end) */
    uint32_t line;  /* 1-based physical line of the first byte */
    uint32_t kind;  /* pytok_kind */
} pytok;

enum {
    PYLEX_COMMENTS = 1,  /* emit COMMENT tokens */
    PYLEX_NOINDENT = 2,  /* no INDENT/DEDENT: leading whitespace is ignored */
};

#define PYLEX_MAX_DEPTH 200   /* bracket nesting (CPython's tokenizer stops at 200 too) */
#define PYLEX_MAX_INDENT 128  /* indentation levels */

typedef struct pylex {
    const char *src;
    size_t len, pos;
    uint32_t line;       /* current physical line; set it after pylex_init to lex a fragment */
    int flags;
    int depth;           /* open brackets */
    char brk[PYLEX_MAX_DEPTH];
    uint32_t brk_line[PYLEX_MAX_DEPTH];
    int ind[PYLEX_MAX_INDENT];
    int nind;
    int pending_dedents;
    int at_bol;          /* at the start of a logical line */
    int in_line;         /* a token has been emitted on the current logical line */
} pylex;

void pylex_init(pylex *lx, const char *src, size_t len, int flags);
/* Next token into *t. 0, or KOPT_E_PARSE with e filled (the lexer is then unusable). */
int pylex_next(pylex *lx, pytok *t, kerr *e);
/* Lex all of src: *out (malloc'd, ends with one END token) and *n (count including END). */
int pylex_all(const char *src, size_t len, int flags, pytok **out, size_t *n, kerr *e);

/* Whether the token's text is exactly s (any kind). Inline: with a literal `s` the length test
 * folds to a constant, which keeps the parsers' many token tests cheap. */
static inline int pytok_is(const char *src, const pytok *t, const char *s) {
    size_t n = strlen(s);
    return t->len == n && memcmp(src + t->off, s, n) == 0;
}
/* Whether the token is an OP / a NAME spelled s. */
static inline int pytok_is_op(const char *src, const pytok *t, const char *s) {
    return t->kind == PYT_OP && pytok_is(src, t, s);
}
static inline int pytok_is_name(const char *src, const pytok *t, const char *s) {
    return t->kind == PYT_NAME && pytok_is(src, t, s);
}
/* Whether the token is an opening / closing bracket. */
static inline int pytok_opens(const char *src, const pytok *t) {
    if (t->kind != PYT_OP || t->len != 1) return 0;
    char c = src[t->off];
    return c == '(' || c == '[' || c == '{';
}
static inline int pytok_closes(const char *src, const pytok *t) {
    if (t->kind != PYT_OP || t->len != 1) return 0;
    char c = src[t->off];
    return c == ')' || c == ']' || c == '}';
}
const char *pytok_kind_name(int kind);

#endif
