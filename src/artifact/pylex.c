/* pylex.c — see pylex.h. One pass over the bytes; no allocation except in pylex_all. */
#include "artifact/pylex.h"

#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

void pylex_init(pylex *lx, const char *src, size_t len, int flags) {
    memset(lx, 0, sizeof *lx);
    lx->src = src;
    lx->len = len;
    lx->line = 1;
    lx->flags = flags;
    lx->nind = 1;   /* ind[0] = 0 */
    lx->at_bol = 1;
}

static int is_name_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
static int is_name_char(unsigned char c) {
    return is_name_start(c) || (c >= '0' && c <= '9');
}
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_prefix_char(char c) {
    return c == 'r' || c == 'R' || c == 'b' || c == 'B' || c == 'u' || c == 'U' || c == 'f' ||
           c == 'F';
}

static void set_tok(pytok *t, int kind, size_t off, size_t len, uint32_t line) {
    t->kind = (uint32_t)kind;
    t->off = (uint32_t)off;
    t->len = (uint32_t)len;
    t->line = line;
}

/* Length of the newline at p (1 for "\n" or a lone "\r", 2 for "\r\n"), 0 if none. */
static size_t newline_len(const pylex *lx, size_t p) {
    if (p >= lx->len) return 0;
    if (lx->src[p] == '\n') return 1;
    if (lx->src[p] == '\r') return (p + 1 < lx->len && lx->src[p + 1] == '\n') ? 2 : 1;
    return 0;
}

/* Offset of the first '\n' or '\r' at or after p (len if none). */
static size_t line_end(const pylex *lx, size_t p) {
    const char *s = lx->src;
    const char *nl = memchr(s + p, '\n', lx->len - p);
    size_t q = nl ? (size_t)(nl - s) : lx->len;
    const char *cr = memchr(s + p, '\r', q - p);
    return cr ? (size_t)(cr - s) : q;
}

/* Bytes that end a run of ordinary string content: quotes, backslash, newlines. */
static const unsigned char STR_SPECIAL[256] = {
    ['\''] = 1, ['"'] = 1, ['\\'] = 1, ['\n'] = 1, ['\r'] = 1,
};

/* A string literal whose opening quote is at q (its prefix starts at start). */
static int lex_string(pylex *lx, size_t start, size_t q, pytok *t, kerr *e) {
    const char *s = lx->src;
    char quote = s[q];
    int triple = q + 2 < lx->len && s[q + 1] == quote && s[q + 2] == quote;
    uint32_t line0 = lx->line;
    size_t p = q + (triple ? 3 : 1);
    for (;;) {
        while (p < lx->len && !STR_SPECIAL[(unsigned char)s[p]]) p++;
        if (p >= lx->len)
            return kerr_set(e, KOPT_E_PARSE, "line %u: unterminated %sstring literal", line0,
                            triple ? "triple-quoted " : "");
        char c = s[p];
        if (c == '\\') {
            size_t nl = newline_len(lx, p + 1);
            if (nl) { lx->line++; p += 1 + nl; }
            else p += 2;
            continue;
        }
        if (c == '\n' || c == '\r') {
            if (!triple)
                return kerr_set(e, KOPT_E_PARSE, "line %u: unterminated string literal", line0);
            p += newline_len(lx, p);
            lx->line++;
            continue;
        }
        if (c == quote) {
            if (!triple) { p++; break; }
            if (p + 2 < lx->len && s[p + 1] == quote && s[p + 2] == quote) { p += 3; break; }
        }
        p++;
    }
    if (p > lx->len) p = lx->len;
    set_tok(t, PYT_STRING, start, p - start, line0);
    lx->pos = p;
    lx->in_line = 1;
    return 0;
}

static void lex_number(pylex *lx, pytok *t) {
    const char *s = lx->src;
    size_t p = lx->pos, n = lx->len;
    if (s[p] == '0' && p + 1 < n && strchr("xXoObB", s[p + 1]) && s[p + 1]) {
        p += 2;
        while (p < n && (is_name_char((unsigned char)s[p]))) p++;
    } else {
        while (p < n && (is_digit((unsigned char)s[p]) || s[p] == '_')) p++;
        if (p < n && s[p] == '.') {
            p++;
            while (p < n && (is_digit((unsigned char)s[p]) || s[p] == '_')) p++;
        }
        if (p < n && (s[p] == 'e' || s[p] == 'E')) {
            size_t q = p + 1;
            if (q < n && (s[q] == '+' || s[q] == '-')) q++;
            if (q < n && is_digit((unsigned char)s[q])) {
                p = q;
                while (p < n && (is_digit((unsigned char)s[p]) || s[p] == '_')) p++;
            }
        }
        if (p < n && (s[p] == 'j' || s[p] == 'J')) p++;
    }
    set_tok(t, PYT_NUMBER, lx->pos, p - lx->pos, lx->line);
    lx->pos = p;
    lx->in_line = 1;
}

/* Length of the operator at the current position (longest match), 0 if none. */
static size_t match_op(const pylex *lx) {
    const char *s = lx->src + lx->pos;
    size_t left = lx->len - lx->pos;
    char c0 = s[0], c1 = left > 1 ? s[1] : '\0', c2 = left > 2 ? s[2] : '\0';
    switch (c0) {
    case '(': case ')': case '[': case ']': case '{': case '}': case ',': case ';': case '~':
        return 1;
    case '.':
        return (c1 == '.' && c2 == '.') ? 3 : 1;
    case ':': case '+': case '%': case '&': case '|': case '^': case '@': case '=': case '!':
        return c1 == '=' ? 2 : (c0 == '!' ? 0 : 1);
    case '-':
        return (c1 == '=' || c1 == '>') ? 2 : 1;
    case '*': case '/': case '<': case '>':
        if (c1 == c0) return c2 == '=' ? 3 : 2;       /* ** // << >> and **= //= <<= >>= */
        return c1 == '=' ? 2 : 1;
    default:
        return 0;
    }
}

static int lex_op(pylex *lx, pytok *t, kerr *e) {
    size_t n = match_op(lx);
    char c = lx->src[lx->pos];
    if (!n) {
        unsigned char uc = (unsigned char)c;
        if (uc >= 0x20 && uc < 0x7f)
            return kerr_set(e, KOPT_E_PARSE, "line %u: unexpected character '%c'", lx->line, c);
        return kerr_set(e, KOPT_E_PARSE, "line %u: unexpected byte 0x%02x", lx->line, uc);
    }
    if (n == 1 && (c == '(' || c == '[' || c == '{')) {
        if (lx->depth >= PYLEX_MAX_DEPTH)
            return kerr_set(e, KOPT_E_PARSE, "line %u: brackets nesting deeper than %d",
                            lx->line, PYLEX_MAX_DEPTH);
        lx->brk[lx->depth] = c;
        lx->brk_line[lx->depth] = lx->line;
        lx->depth++;
    } else if (n == 1 && (c == ')' || c == ']' || c == '}')) {
        if (lx->depth == 0)
            return kerr_set(e, KOPT_E_PARSE, "line %u: unbalanced brackets: '%c' closes nothing",
                            lx->line, c);
        char open = lx->brk[lx->depth - 1];
        char want = open == '(' ? ')' : open == '[' ? ']' : '}';
        if (c != want)
            return kerr_set(e, KOPT_E_PARSE,
                            "line %u: unbalanced brackets: '%c' does not close '%c' opened at line %u",
                            lx->line, c, open, lx->brk_line[lx->depth - 1]);
        lx->depth--;
    }
    set_tok(t, PYT_OP, lx->pos, n, lx->line);
    lx->pos += n;
    lx->in_line = 1;
    return 0;
}

/* At the start of a logical line (outside brackets): measure the indentation, skip blank and
 * comment-only lines. Returns 1 if a token was produced (INDENT, DEDENT or COMMENT), 0 to go
 * on lexing normally, or -1 on error. */
static int lex_bol(pylex *lx, pytok *t, kerr *e) {
    const char *s = lx->src;
    for (;;) {
        size_t p = lx->pos;
        int col = 0;
        while (p < lx->len) {
            if (s[p] == ' ') col++;
            else if (s[p] == '\t') col = (col / 8 + 1) * 8;
            else if (s[p] == '\f') col = 0;
            else break;
            p++;
        }
        if (p >= lx->len) { lx->pos = p; return 0; }
        size_t nl = newline_len(lx, p);
        if (nl) { lx->pos = p + nl; lx->line++; continue; }
        if (s[p] == '#') {
            size_t q = line_end(lx, p);
            lx->pos = q;
            if (lx->flags & PYLEX_COMMENTS) {
                set_tok(t, PYT_COMMENT, p, q - p, lx->line);
                return 1;
            }
            continue;
        }
        lx->pos = p;
        lx->at_bol = 0;
        if (lx->flags & PYLEX_NOINDENT) return 0;
        int top = lx->ind[lx->nind - 1];
        if (col > top) {
            if (lx->nind >= PYLEX_MAX_INDENT) {
                kerr_set(e, KOPT_E_PARSE, "line %u: indentation nested too deeply", lx->line);
                return -1;
            }
            lx->ind[lx->nind++] = col;
            set_tok(t, PYT_INDENT, p, 0, lx->line);
            return 1;
        }
        if (col < top) {
            int pops = 0;
            while (lx->nind > 1 && col < lx->ind[lx->nind - 1]) { lx->nind--; pops++; }
            if (col != lx->ind[lx->nind - 1]) {
                kerr_set(e, KOPT_E_PARSE,
                         "line %u: unindent does not match any outer indentation level", lx->line);
                return -1;
            }
            lx->pending_dedents = pops - 1;
            set_tok(t, PYT_DEDENT, p, 0, lx->line);
            return 1;
        }
        return 0;
    }
}

static int lex_end(pylex *lx, pytok *t, kerr *e) {
    if (lx->depth > 0)
        return kerr_set(e, KOPT_E_PARSE, "line %u: unbalanced brackets: '%c' is never closed",
                        lx->brk_line[lx->depth - 1], lx->brk[lx->depth - 1]);
    if (lx->in_line) {
        lx->in_line = 0;
        set_tok(t, PYT_NEWLINE, lx->len, 0, lx->line);
        return 0;
    }
    if (lx->nind > 1) {
        lx->nind--;
        set_tok(t, PYT_DEDENT, lx->len, 0, lx->line);
        return 0;
    }
    set_tok(t, PYT_END, lx->len, 0, lx->line);
    return 0;
}

int pylex_next(pylex *lx, pytok *t, kerr *e) {
    const char *s = lx->src;
    if (lx->len > UINT32_MAX)
        return kerr_set(e, KOPT_E_PARSE, "line 1: source too large (%zu bytes)", lx->len);
    if (lx->pending_dedents > 0) {
        lx->pending_dedents--;
        set_tok(t, PYT_DEDENT, lx->pos, 0, lx->line);
        return 0;
    }
    for (;;) {
        if (lx->at_bol && lx->depth == 0) {
            int r = lex_bol(lx, t, e);
            if (r < 0) return e ? e->code : KOPT_E_PARSE;
            if (r > 0) return 0;
        }
        while (lx->pos < lx->len && (s[lx->pos] == ' ' || s[lx->pos] == '\t' || s[lx->pos] == '\f'))
            lx->pos++;
        if (lx->pos >= lx->len) return lex_end(lx, t, e);
        size_t p = lx->pos;
        unsigned char c = (unsigned char)s[p];
        size_t nl = newline_len(lx, p);
        if (nl) {
            lx->pos += nl;
            lx->line++;
            if (lx->depth > 0 || !lx->in_line) {
                if (lx->depth == 0) lx->at_bol = 1;
                continue;
            }
            set_tok(t, PYT_NEWLINE, p, nl, lx->line - 1);
            lx->in_line = 0;
            lx->at_bol = 1;
            return 0;
        }
        if (c == '#') {
            size_t q = line_end(lx, p);
            lx->pos = q;
            if (lx->flags & PYLEX_COMMENTS) {
                set_tok(t, PYT_COMMENT, p, q - p, lx->line);
                return 0;
            }
            continue;
        }
        if (c == '\\') {
            size_t cl = newline_len(lx, p + 1);
            if (!cl)
                return kerr_set(e, KOPT_E_PARSE, "line %u: unexpected character '\\'", lx->line);
            lx->pos = p + 1 + cl;
            lx->line++;
            continue;
        }
        if (c == '"' || c == '\'') return lex_string(lx, p, p, t, e);
        if (is_name_start(c)) {
            /* a string prefix (r, b, f, u, rb, br, fr, rf...) directly followed by a quote */
            if (is_prefix_char((char)c)) {
                size_t q = p + 1;
                if (q < lx->len && is_prefix_char(s[q])) q++;
                if (q < lx->len && (s[q] == '"' || s[q] == '\'')) return lex_string(lx, p, q, t, e);
            }
            size_t q = p + 1;
            while (q < lx->len && is_name_char((unsigned char)s[q])) q++;
            set_tok(t, PYT_NAME, p, q - p, lx->line);
            lx->pos = q;
            lx->in_line = 1;
            return 0;
        }
        if (is_digit(c) || (c == '.' && p + 1 < lx->len && is_digit((unsigned char)s[p + 1]))) {
            lex_number(lx, t);
            return 0;
        }
        return lex_op(lx, t, e);
    }
}

int pylex_all(const char *src, size_t len, int flags, pytok **out, size_t *n, kerr *e) {
    pylex lx;
    pylex_init(&lx, src, len, flags);
    size_t cap = len / 32 + 64, cnt = 0;
    pytok *v = kmalloc(cap * sizeof *v);
    for (;;) {
        if (cnt == cap) {
            cap *= 2;
            v = krealloc(v, cap * sizeof *v);
        }
        int rc = pylex_next(&lx, &v[cnt], e);
        if (rc) {
            free(v);
            return rc;
        }
        if (v[cnt++].kind == PYT_END) break;
    }
    *out = v;
    *n = cnt;
    return 0;
}

const char *pytok_kind_name(int kind) {
    switch (kind) {
    case PYT_END: return "END";
    case PYT_NAME: return "NAME";
    case PYT_NUMBER: return "NUMBER";
    case PYT_STRING: return "STRING";
    case PYT_OP: return "OP";
    case PYT_COMMENT: return "COMMENT";
    case PYT_NEWLINE: return "NEWLINE";
    case PYT_INDENT: return "INDENT";
    case PYT_DEDENT: return "DEDENT";
    default: return "?";
    }
}
