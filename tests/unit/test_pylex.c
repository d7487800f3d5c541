/* test_pylex.c — the tokenizer: token kinds, texts, offsets and lines; logical lines and
 * indentation; and the errors it must report with their line. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/pylex.h"
#include "testutil.h"

typedef struct lexed {
    const char *src;
    pytok *t;
    size_t n;
} lexed;

static lexed lex_ok(const char *src, int flags) {
    lexed l = {src, NULL, 0};
    kerr e = {0};
    int rc = pylex_all(src, strlen(src), flags, &l.t, &l.n, &e);
    cr_assert_eq(rc, 0, "lexing failed: %s", e.msg);
    return l;
}

static kerr lex_err(const char *src) {
    kerr e = {0};
    pytok *t = NULL;
    size_t n = 0;
    int rc = pylex_all(src, strlen(src), 0, &t, &n, &e);
    cr_assert_eq(rc, KOPT_E_PARSE, "expected a parse error for <<%s>>", src);
    cr_assert_eq(e.code, KOPT_E_PARSE);
    cr_assert_null(t);
    return e;
}

/* "KIND:text" for each token, space separated (NEWLINE/INDENT/DEDENT/END without text). */
static char *render(const lexed *l) {
    kbuf b = KBUF_INIT;
    for (size_t i = 0; i < l->n; i++) {
        const pytok *t = &l->t[i];
        if (i) kbuf_putc(&b, ' ');
        if (t->kind == PYT_NEWLINE || t->kind == PYT_INDENT || t->kind == PYT_DEDENT || t->kind == PYT_END)
            kbuf_puts(&b, pytok_kind_name((int)t->kind));
        else
            kbuf_printf(&b, "%s:%.*s", pytok_kind_name((int)t->kind), (int)t->len, l->src + t->off);
    }
    return kbuf_steal(&b);
}

static void expect_tokens(const char *src, int flags, const char *want) {
    lexed l = lex_ok(src, flags);
    char *got = render(&l);
    cr_assert_str_eq(got, want, "for <<%s>>", src);
    free(got);
    free(l.t);
}

Test(pylex, simple_statement) {
    expect_tokens("buf0 = empty_strided_cuda((16, 1024), (1024, 1), torch.float32)\n", 0,
                  "NAME:buf0 OP:= NAME:empty_strided_cuda OP:( OP:( NUMBER:16 OP:, NUMBER:1024 OP:) "
                  "OP:, OP:( NUMBER:1024 OP:, NUMBER:1 OP:) OP:, NAME:torch OP:. NAME:float32 OP:) "
                  "NEWLINE END");
}

Test(pylex, numbers) {
    expect_tokens("a(1, 2.5, 1e-05, 0x1F, 1_000, .5, 1., 3j, 0o17, 0b101, 1.0E+3)", PYLEX_NOINDENT,
                  "NAME:a OP:( NUMBER:1 OP:, NUMBER:2.5 OP:, NUMBER:1e-05 OP:, NUMBER:0x1F OP:, "
                  "NUMBER:1_000 OP:, NUMBER:.5 OP:, NUMBER:1. OP:, NUMBER:3j OP:, NUMBER:0o17 OP:, "
                  "NUMBER:0b101 OP:, NUMBER:1.0E+3 OP:) NEWLINE END");
}

Test(pylex, string_forms) {
    expect_tokens("f('a', \"b\", r'c\\'d', b\"e\", f'{x}', rb'g', BR\"h\", u'i', 'j\\'k')", PYLEX_NOINDENT,
                  "NAME:f OP:( STRING:'a' OP:, STRING:\"b\" OP:, STRING:r'c\\'d' OP:, STRING:b\"e\" OP:, "
                  "STRING:f'{x}' OP:, STRING:rb'g' OP:, STRING:BR\"h\" OP:, STRING:u'i' OP:, "
                  "STRING:'j\\'k' OP:) NEWLINE END");
}

Test(pylex, names_that_look_like_prefixes) {
    expect_tokens("rb + br + f + r", PYLEX_NOINDENT, "NAME:rb OP:+ NAME:br OP:+ NAME:f OP:+ NAME:r NEWLINE END");
}

Test(pylex, operators_longest_match) {
    expect_tokens("a **= b // c -> d ... e != f := g <<= h >> i == j", PYLEX_NOINDENT,
                  "NAME:a OP:**= NAME:b OP:// NAME:c OP:-> NAME:d OP:... NAME:e OP:!= NAME:f OP::= "
                  "NAME:g OP:<<= NAME:h OP:>> NAME:i OP:== NAME:j NEWLINE END");
    expect_tokens("x[:, None] @ y ~z % 2 ^ 1 | 0 & 3", PYLEX_NOINDENT,
                  "NAME:x OP:[ OP:: OP:, NAME:None OP:] OP:@ NAME:y OP:~ NAME:z OP:% NUMBER:2 "
                  "OP:^ NUMBER:1 OP:| NUMBER:0 OP:& NUMBER:3 NEWLINE END");
}

Test(pylex, triple_quoted_spans_lines) {
    const char *src = "k = f('k', '''\nimport triton\n# not a comment\n''', device_str='cuda')\nx = 1\n";
    lexed l = lex_ok(src, 0);
    cr_assert_eq(l.t[6].kind, PYT_STRING);
    cr_assert_eq(l.t[6].line, 1);
    cr_assert_eq(l.t[6].len, strlen("'''\nimport triton\n# not a comment\n'''"));
    cr_assert_eq(l.t[6].off, (uint32_t)(strstr(src, "'''") - src));
    /* NEWLINE ends line 4; `x` is on line 5 */
    size_t i = 0;
    while (l.t[i].kind != PYT_NEWLINE) i++;
    cr_assert_eq(l.t[i].line, 4);
    cr_assert(pytok_is_name(src, &l.t[i + 1], "x"));
    cr_assert_eq(l.t[i + 1].line, 5);
    free(l.t);
}

Test(pylex, triple_double_quotes_and_embedded_quotes) {
    expect_tokens("s = \"\"\"a \"b\" ''' c\"\"\"\n", 0, "NAME:s OP:= STRING:\"\"\"a \"b\" ''' c\"\"\" NEWLINE END");
}

Test(pylex, brackets_hide_newlines) {
    const char *src = "f(a,\n  b,  # note\n\n  c)\ny\n";
    expect_tokens(src, 0, "NAME:f OP:( NAME:a OP:, NAME:b OP:, NAME:c OP:) NEWLINE NAME:y NEWLINE END");
    lexed l = lex_ok(src, 0);
    cr_assert_eq(l.t[6].line, 4);   /* c */
    cr_assert_eq(l.t[8].line, 4);   /* the NEWLINE after ')' */
    free(l.t);
}

Test(pylex, backslash_continuation) {
    expect_tokens("x = 1 + \\\n    2\ny = 3\n", 0,
                  "NAME:x OP:= NUMBER:1 OP:+ NUMBER:2 NEWLINE NAME:y OP:= NUMBER:3 NEWLINE END");
}

Test(pylex, blank_and_comment_lines_make_no_newline) {
    expect_tokens("\n\n# header\n   # indented comment\nx\n\n", 0, "NAME:x NEWLINE END");
}

Test(pylex, comments_when_asked) {
    expect_tokens("# a\nx = 1  # b\n", PYLEX_COMMENTS, "COMMENT:# a NAME:x OP:= NUMBER:1 COMMENT:# b NEWLINE END");
}

Test(pylex, indent_and_dedent) {
    expect_tokens("def call(args):\n    a = 1\n    with g:\n        b\n\n        # c\n    d\ne\n", 0,
                  "NAME:def NAME:call OP:( NAME:args OP:) OP:: NEWLINE INDENT NAME:a OP:= NUMBER:1 "
                  "NEWLINE NAME:with NAME:g OP:: NEWLINE INDENT NAME:b NEWLINE DEDENT NAME:d NEWLINE "
                  "DEDENT NAME:e NEWLINE END");
}

Test(pylex, dedent_several_levels_and_at_eof) {
    expect_tokens("class R:\n    def f(self):\n        x\ny\nif a:\n  z", 0,
                  "NAME:class NAME:R OP:: NEWLINE INDENT NAME:def NAME:f OP:( NAME:self OP:) OP:: "
                  "NEWLINE INDENT NAME:x NEWLINE DEDENT DEDENT NAME:y NEWLINE NAME:if NAME:a OP:: "
                  "NEWLINE INDENT NAME:z NEWLINE DEDENT END");
}

Test(pylex, noindent_mode_ignores_leading_space) {
    expect_tokens("   a\n      b", PYLEX_NOINDENT, "NAME:a NEWLINE NAME:b NEWLINE END");
}

Test(pylex, crlf_lines) {
    const char *src = "a = (1,\r\n 2)\r\nb\r\n";
    expect_tokens(src, 0, "NAME:a OP:= OP:( NUMBER:1 OP:, NUMBER:2 OP:) NEWLINE NAME:b NEWLINE END");
    lexed l = lex_ok(src, 0);
    cr_assert_eq(l.t[7].len, 2);    /* the NEWLINE is "\r\n" */
    cr_assert_eq(l.t[8].line, 3);
    free(l.t);
}

Test(pylex, missing_final_newline) {
    lexed l = lex_ok("x = 1", 0);
    cr_assert_eq(l.t[3].kind, PYT_NEWLINE);
    cr_assert_eq(l.t[3].len, 0);
    cr_assert_eq(l.t[3].off, 5);
    cr_assert_eq(l.t[4].kind, PYT_END);
    free(l.t);
}

Test(pylex, streaming_end_repeats) {
    pylex lx;
    pytok t;
    kerr e = {0};
    pylex_init(&lx, "a", 1, 0);
    cr_assert_eq(pylex_next(&lx, &t, &e), 0);
    cr_assert_eq(t.kind, PYT_NAME);
    cr_assert_eq(pylex_next(&lx, &t, &e), 0);
    cr_assert_eq(t.kind, PYT_NEWLINE);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(pylex_next(&lx, &t, &e), 0);
        cr_assert_eq(t.kind, PYT_END);
    }
}

Test(pylex, fragment_line_numbers) {
    pylex lx;
    pytok t;
    kerr e = {0};
    pylex_init(&lx, "\n(x", 3, 0);
    lx.line = 40;
    cr_assert_eq(pylex_next(&lx, &t, &e), 0);
    cr_assert_eq(t.line, 41);
    cr_assert_eq(pylex_next(&lx, &t, &e), 0);
    cr_assert_eq(pylex_next(&lx, &t, &e), KOPT_E_PARSE);
    cr_assert(strstr(e.msg, "line 41"), "%s", e.msg);
}

Test(pylex, token_helpers) {
    const char *src = "a.run(x)";
    lexed l = lex_ok(src, 0);
    cr_assert(pytok_is_name(src, &l.t[0], "a"));
    cr_assert(pytok_is_op(src, &l.t[1], "."));
    cr_assert(!pytok_is_op(src, &l.t[2], "run"));
    cr_assert(pytok_is_name(src, &l.t[2], "run"));
    cr_assert(!pytok_is(src, &l.t[2], "ru"));
    cr_assert_str_eq(pytok_kind_name(PYT_STRING), "STRING");
    free(l.t);
}

/* ---------- errors name the line ---------- */

Test(pylex, error_unterminated_triple_quote) {
    kerr e = lex_err("x = 1\nk = async_compile.triton('k', '''\nimport triton\n");
    cr_assert(strstr(e.msg, "line 2:"), "%s", e.msg);
    cr_assert(strstr(e.msg, "unterminated triple-quoted string"), "%s", e.msg);
}

Test(pylex, error_unterminated_string) {
    kerr e = lex_err("a = 1\nb = 'abc\nc = 2\n");
    cr_assert(strstr(e.msg, "line 2:") && strstr(e.msg, "unterminated string"), "%s", e.msg);
}

Test(pylex, error_unclosed_bracket_names_its_line) {
    kerr e = lex_err("a = 1\nb = f(1,\n  2\nc = 3\n");
    cr_assert(strstr(e.msg, "line 2:") && strstr(e.msg, "'(' is never closed"), "%s", e.msg);
}

Test(pylex, error_stray_closer) {
    kerr e = lex_err("a = 1\n\nb = 2)\n");
    cr_assert(strstr(e.msg, "line 3:") && strstr(e.msg, "unbalanced"), "%s", e.msg);
}

Test(pylex, error_mismatched_brackets) {
    kerr e = lex_err("x = [1,\n (2]\n");
    cr_assert(strstr(e.msg, "line 2:") && strstr(e.msg, "']' does not close '('"), "%s", e.msg);
}

Test(pylex, error_stray_character_and_backslash) {
    kerr e = lex_err("a = 1\nb = $\n");
    cr_assert(strstr(e.msg, "line 2:") && strstr(e.msg, "'$'"), "%s", e.msg);
    e = lex_err("a = 1 \\ 2\n");
    cr_assert(strstr(e.msg, "line 1:"), "%s", e.msg);
}

Test(pylex, error_inconsistent_dedent) {
    kerr e = lex_err("if a:\n        b\n    c\n");
    cr_assert(strstr(e.msg, "line 3:") && strstr(e.msg, "unindent"), "%s", e.msg);
}

Test(pylex, lexes_every_fixture) {
    static const char *const files[] = {
        "tests/fixtures/inductor/handmade_softmax_def.py",
        "tests/fixtures/inductor/handmade_mlp_runner.py",
        "tests/fixtures/inductor/handmade_edge_def.py",
    };
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        size_t len = 0;
        char *text = tu_read_fixture(files[f], &len);
        pytok *t = NULL;
        size_t n = 0;
        kerr e = {0};
        cr_assert_eq(pylex_all(text, len, 0, &t, &n, &e), 0, "%s: %s", files[f], e.msg);
        /* indentation balances and every token lies inside the text */
        int depth = 0;
        for (size_t i = 0; i < n; i++) {
            depth += t[i].kind == PYT_INDENT;
            depth -= t[i].kind == PYT_DEDENT;
            cr_assert_leq((size_t)t[i].off + t[i].len, len);
        }
        cr_assert_eq(depth, 0);
        cr_assert_eq(t[n - 1].kind, PYT_END);
        free(t);
        free(text);
    }
}

/* Brackets deeper than PYLEX_MAX_DEPTH (200, as CPython's tokenizer) stop the lexer with a
 * message naming the line; 200 levels still lex. */
Test(pylex, error_brackets_nested_too_deep) {
    static const char opens[] = "([{", closes[] = ")]}";
    for (int k = 0; k < 3; k++) {
        kbuf b = KBUF_INIT;
        kbuf_puts(&b, "a = 1\nx = ");
        for (int i = 0; i < 100000; i++) kbuf_putc(&b, opens[k]);
        kbuf_putc(&b, '1');
        for (int i = 0; i < 100000; i++) kbuf_putc(&b, closes[k]);
        kbuf_putc(&b, '\n');
        kerr e = lex_err(kbuf_str(&b));
        cr_assert(strstr(e.msg, "line 2:") && strstr(e.msg, "nesting deeper than 200"), "%s",
                  e.msg);
        kbuf_free(&b);
    }
    kbuf b = KBUF_INIT;
    for (int i = 0; i < PYLEX_MAX_DEPTH; i++) kbuf_putc(&b, '(');
    for (int i = 0; i < PYLEX_MAX_DEPTH; i++) kbuf_putc(&b, ')');
    lexed l = lex_ok(kbuf_str(&b), 0);
    cr_assert_eq(l.n, 2u * PYLEX_MAX_DEPTH + 2);
    free(l.t);
    kbuf_free(&b);
}
