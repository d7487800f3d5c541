/* pylit.h — a Python expression as a small value tree.
 *
 * Contract: parses the literal-like expressions of Inductor output — decorator arguments
 * (size_hints, triton_meta, inductor_meta) and launch arguments — into pyval nodes:
 * dict, list, tuple, set, str (escapes decoded, adjacent literals joined), int, float, bool,
 * None, name, attribute (a.b.c), call (callee, positional and keyword args), subscript, unary
 * minus (folded into int/float literals; PYV_NEG otherwise) and RAW: any other expression
 * (binary operators, lambdas, comprehensions, slices, *args...) kept as its source span.
 * Every node carries the byte span of its source text (parentheses around it included) in the
 * buffer the tokens came from, and its line. Malformed input (a truncated expression, a stray
 * token) gives KOPT_E_PARSE with "line N: ..." in e.
 * Nesting is bounded (the parser recurses, and so do pyval_free and the tree readers): the
 * nesting of a point in an expression counts each enclosing expression level (brackets), each
 * unary +/- and each attribute / call / subscript link of the chains it sits in; more than
 * PYLIT_MAX_DEPTH is KOPT_E_PARSE "line N: nesting deeper than 200", so a tree is never deeper
 * than about twice that. Forms kept as RAW (`not`, `~`, `lambda`, binary operators, long flat
 * sequences) are scanned iteratively and have no limit.
 *
 * Ownership: pylit_parse* hand back a tree owned by the caller, released with pyval_free (which
 * frees the node, its strings and all its children). Accessors return borrowed pointers into
 * the tree. The source buffer is not referenced by the tree: spans are plain offsets.
 */
#ifndef KOPT_PYLIT_H
#define KOPT_PYLIT_H

#include <jansson.h>
#include <stddef.h>

#include "artifact/pylex.h"
#include "util/buf.h"
#include "util/err.h"

typedef enum {
    PYV_NONE = 0,
    PYV_BOOL,
    PYV_INT,
    PYV_FLOAT,
    PYV_STR,
    PYV_NAME,
    PYV_ATTR,
    PYV_CALL,
    PYV_SUBSCRIPT,
    PYV_NEG,
    PYV_TUPLE,
    PYV_LIST,
    PYV_SET,
    PYV_DICT,
    PYV_RAW,
} pyv_kind;

typedef struct pyval pyval;
struct pyval {
    pyv_kind kind;
    size_t off, len;   /* source span */
    int line;
    long long i;       /* INT value; BOOL: 0 or 1 */
    double f;          /* FLOAT value */
    char *s;           /* STR: decoded bytes (NUL-terminated, slen long); NAME: the name;
                          ATTR: the attribute's name; NULL otherwise */
    size_t slen;
    pyval *base;       /* ATTR: object; CALL: callee; SUBSCRIPT: object; NEG: operand */
    pyval **items;     /* TUPLE/LIST/SET: elements; DICT: values; CALL: positional args;
                          SUBSCRIPT: items[0] is the index */
    pyval **keys;      /* DICT: keys, n of them */
    size_t n;
    char **kwnames;    /* CALL: keyword names, nkw of them */
    pyval **kwvals;
    size_t nkw;
};

#define PYLIT_MAX_DEPTH 200   /* nesting of one expression (see above) */

/* Parse src[0..len) as one expression (a bare `a, b` is a tuple); trailing tokens are an
 * error. `first_line` numbers src's first line (1 for a whole buffer). */
int pylit_parse(const char *src, size_t len, int first_line, pyval **out, kerr *e);

/* Parse one expression from toks[*pos] (a bare tuple is not taken: the parse stops before a
 * top-level ',', ')', ']', '}', ':', '=', ';', NEWLINE or END). COMMENT tokens are skipped.
 * On success *pos indexes the first token not consumed. `src` is the buffer the tokens index. */
int pylit_parse_tokens(const char *src, const pytok *toks, size_t ntok, size_t *pos, pyval **out,
                       kerr *e);

void pyval_free(pyval *v);

/* Check, without parsing or recursing, that no expression in toks[0..ntok) nests deeper than
 * PYLIT_MAX_DEPTH: an upper bound of what the parser counts (every NAME is taken for an
 * operand, every '.' for a link), so tokens that pass here never hit the parser's limit.
 * 0, or KOPT_E_PARSE "line N: nesting deeper than 200". Allocates nothing. */
int pylit_check_nesting(const char *src, const pytok *toks, size_t ntok, kerr *e);

/* Token-level lookups that build no tree: for reading a few entries of a large literal (an
 * Inductor decorator holds hundreds of values) without allocating for all of them. Ranges
 * are token indices [v0, v1) into toks; ntok bounds the search. All return 1 if found. */
/* Index of the bracket that closes the one at toks[open] (ntok if none). */
size_t pylit_match(const char *src, const pytok *toks, size_t ntok, size_t open);
/* toks[open] is the '(' of a call: the value of keyword argument `name`. */
int pylit_find_kwarg(const char *src, const pytok *toks, size_t ntok, size_t open,
                     const char *name, size_t *v0, size_t *v1);
/* toks[open] is the '(' of a call: positional argument i (counting from 0; keyword arguments
 * end the positional ones). */
int pylit_find_arg(const char *src, const pytok *toks, size_t ntok, size_t open, size_t i,
                   size_t *v0, size_t *v1);
/* toks[open] is the '{' of a dict: the value of the entry whose key is the plain string
 * literal `key` (no escapes). */
int pylit_find_key(const char *src, const pytok *toks, size_t ntok, size_t open,
                   const char *key, size_t *v0, size_t *v1);

const char *pyv_kind_name(pyv_kind k);
/* DICT lookup by string key (NULL if absent or v is not a dict). */
const pyval *pyval_dict_get(const pyval *v, const char *key);
/* CALL keyword argument by name (NULL if absent). */
const pyval *pyval_kwarg(const pyval *call, const char *name);
/* CALL positional argument i (NULL if out of range). */
const pyval *pyval_arg(const pyval *call, size_t i);
/* Whether v is NAME spelled `name`. */
int pyval_is_name(const pyval *v, const char *name);
/* For a NAME or ATTR chain (a.b.c) append "a.b.c" to out and return 1; else 0 (out untouched). */
int pyval_dotted(const pyval *v, kbuf *out);
/* v's source text, as a new malloc'd string (src: the buffer v's spans index). */
char *pyval_text(const pyval *v, const char *src);
/* Hand over a STR's decoded bytes (caller frees); the node keeps an empty string. */
char *pyval_take_str(pyval *v, size_t *len);
/* A JSON rendering (new reference): literals as JSON values, dicts with str/int keys as
 * objects, sequences as arrays; anything else as {"expr": "<source text>"}. */
json_t *pyval_to_json(const pyval *v, const char *src);

#endif
