/* test_candidate_edges.c — the candidate model (gates/candidate) at the edges of its rules:
 * identifier characters at the ends of their ranges, the `replaces=` binding's syntax, every
 * augmented assignment binding its target, scopes (global / nonlocal, class bodies, lambdas,
 * comprehension and with / except / walrus targets), the per-token flags gate 1 relies on, the
 * definitions' spans, decorators, form detection and the interface check, one rule per test.
 * These decide what gate 1's static rules see (a name resolved as local instead of free is not
 * checked against the allowlist), so each case names the behaviour it pins. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/pylex.h"
#include "gates/candidate.h"
#include "testutil.h"
#include "util/buf.h"


/* Code-token index of the nth occurrence of NAME on a line. */
static size_t tok_of(const candidate *c, int line, const char *name, int nth) {
    for (size_t i = 0; i < c->ntoks; i++)
        if ((int)c->toks[i].line == line && pytok_is_name(c->text, &c->toks[i], name) && !nth--) return i;
    cr_assert_fail("no name %s on line %d", name, line);
    return 0;
}
static const char *ref_at(const candidate *c, int line, const char *name, int nth) {
    return cand_ref_name((cand_ref)c->ref[tok_of(c, line, name, nth)]);
}
#define REF(c, line, name, nth, want)                                                                                  \
    cr_expect_str_eq(ref_at(c, line, name, nth), want, "line %d: %s #%d is %s", line, name, nth,                     \
                     ref_at(c, line, name, nth))

/* A form-L candidate: one jit kernel (lines 1-4), then `rest` from line 5. */
#define KHEAD "import triton\n@triton.jit\ndef k(p):\n    pass\n"
static candidate *parse_l(const char *rest) {
    char *t = kasprintf("%s%s", KHEAD, rest);
    candidate *c = tu_parse_candidate(t);
    free(t);
    return c;
}

/* ---------- identifiers and the binding comment ---------- */

Test(static_candidate_edges, identifier_characters_at_the_ends_of_their_ranges) {
    const char *const ok[] = {"a", "z", "A", "Z", "_", "az", "aZ", "a0", "a9", "a_", "_9", "Za", "zz", "xA", "xz"};
    const char *const bad[] = {"", "0a", "9", "@a", "[a", "`a", "{a", "a@", "a[", "a`", "a{", "a/", "a:", "a-b",
                               "a b", "for", "None", "lambda"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) cr_expect(candidate_is_ident(ok[i]), "%s", ok[i]);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) cr_expect_not(candidate_is_ident(bad[i]), "'%s'", bad[i]);
    cr_expect_not(candidate_is_ident(NULL));
    cr_expect(candidate_is_ident("forx") && candidate_is_ident("Nonex"), "a keyword's prefix is a name");
}

Test(static_candidate_edges, binding_names_kernels_joined_by_single_pluses) {
    const char *const ok[] = {"K", "K1+K2", "a+b+c"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char *t = kasprintf("# kopt-candidate: replaces=%s\n" KHEAD "def launch(a):\n    pass\n", ok[i]);
        candidate *c = tu_parse_candidate(t);
        cr_expect_str_eq(candidate_replaces(c), ok[i]);
        cr_expect_eq(c->replaces_line, 1);
        candidate_free(c);
        free(t);
    }
    const char *const bad[] = {"K+", "+K", "K++L", "K+1x", "+", "K+for"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *t = kasprintf("# kopt-candidate: replaces=%s\n" KHEAD "def launch(a):\n    pass\n", bad[i]);
        char *m = tu_parse_refusal(t);
        cr_expect(strstr(m, "not a kernel name") && !strncmp(m, "line 1:", 7), "%s: %s", bad[i], m);
        free(m);
        free(t);
    }
}

/* ---------- bindings ---------- */

/* Every augmented assignment binds its target (Python makes it local to the function). */
Test(static_candidate_edges, every_augmented_assignment_binds_its_target) {
    static const char *const ops[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", ">>=", "<<=", "&=", "|=", "^=", "@="};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        char *rest = kasprintf("def launch(a):\n    n %s 1\n    return n\n", ops[i]);
        candidate *c = parse_l(rest);
        REF(c, 6, "n", 0, "local");
        REF(c, 7, "n", 0, "local");
        candidate_free(c);
        free(rest);
    }
    /* a comparison is not an assignment */
    candidate *c = parse_l("def launch(a):\n    n <= 1\n    n >= 1\n    n != 1\n");
    REF(c, 6, "n", 0, "free");
    candidate_free(c);
}

/* `global` / `nonlocal` names are not local to the function that declares them: every name of
 * the declaration, the first one included, and only those names (not one that shares a prefix). */
Test(static_candidate_edges, global_declarations_name_exactly_their_names) {
    candidate *c = parse_l("A = 0\nAB = 0\nB = 0\n"                  /* 5-7 */
                           "def launch(a):\n"                        /* 8 */
                           "    global A, B\n"                       /* 9 */
                           "    A = 1\n"                             /* 10 */
                           "    B = 2\n"                             /* 11 */
                           "    AB = 3\n"                            /* 12 */
                           "    return A + B + AB\n");               /* 13 */
    REF(c, 10, "A", 0, "module");
    REF(c, 11, "B", 0, "module");
    REF(c, 12, "AB", 0, "local");
    REF(c, 13, "A", 0, "module");
    REF(c, 13, "AB", 0, "local");
    candidate_free(c);
    /* a shorter name that is a prefix of the declared one is still local */
    c = parse_l("AB = 0\ndef launch(a):\n    global AB\n    A = 1\n    return A\n");
    REF(c, 8, "A", 0, "local");
    REF(c, 9, "A", 0, "local");
    candidate_free(c);
    /* `global` in a nested function sends the name to the module scope, past the enclosing
     * function (A is bound nowhere at module level: a free name, not the inner local) */
    c = parse_l("def launch(a):\n    def inner():\n        global A\n        A = 2\n    return inner\n");
    REF(c, 8, "A", 0, "free");   /* global, and no module binding: a free name */
    candidate_free(c);
}

/* Subscripts and calls of subscripts are not assignment targets of their base name, however
 * many trailers follow (a[0][1] = v writes into a, it does not bind it). */
Test(static_candidate_edges, chained_trailers_do_not_bind) {
    candidate *c = parse_l("BUF = [[0]]\n"                           /* 5 */
                           "def launch(a):\n"                        /* 6 */
                           "    BUF[0][0] = a\n"                     /* 7 */
                           "    BUF[0](1)[2] = a\n"                  /* 8 */
                           "    BUF.x[0].y = a\n"                    /* 9 */
                           "    (q, (r, s)) = a\n"                   /* 10 */
                           "    [t, u[0]] = a\n"                     /* 11 */
                           "    return BUF, q, r, s, t, u\n");       /* 12 */
    REF(c, 7, "BUF", 0, "module");
    REF(c, 8, "BUF", 0, "module");
    REF(c, 9, "BUF", 0, "module");
    REF(c, 12, "BUF", 0, "module");
    REF(c, 12, "q", 0, "local");
    REF(c, 12, "r", 0, "local");
    REF(c, 12, "s", 0, "local");
    REF(c, 12, "t", 0, "local");
    REF(c, 12, "u", 0, "free");
    candidate_free(c);
}

/* Names inside a trailer's brackets (an index, a call's arguments) and attribute names are not
 * bound by an assignment to the subscript or attribute; neither is the base name. */
Test(static_candidate_edges, names_inside_trailers_and_attributes_are_not_bound) {
    candidate *c = parse_l("BUF = [[0]]\n"                           /* 5 */
                           "def launch(a):\n"                        /* 6 */
                           "    BUF[i1] = a\n"                       /* 7 */
                           "    BUF(1)[i2] = a\n"                    /* 8 */
                           "    BUF[0][i3] = a\n"                    /* 9 */
                           "    'ab'[i4] = a\n"                      /* 10 */
                           "    BUF.attr = a\n"                      /* 11 */
                           "    BUF[0].attr2[i5] = a\n"              /* 12 */
                           "    return i1, i2, i3, i4, i5, attr, attr2, BUF\n");   /* 13 */
    static const char *const free_names[] = {"i1", "i2", "i3", "i4", "i5", "attr", "attr2"};
    for (size_t i = 0; i < sizeof free_names / sizeof *free_names; i++) REF(c, 13, free_names[i], 0, "free");
    REF(c, 13, "BUF", 0, "module");
    REF(c, 8, "BUF", 0, "module");
    REF(c, 11, "attr", 0, "attr");
    candidate_free(c);
}

/* Flags of each code token: CTOK_STMT_START on exactly the first token of every simple
 * statement (one-line compound bodies and the statements after ';' included, never a NEWLINE,
 * INDENT or DEDENT), CTOK_DEFAULT on exactly the tokens of default values. */
static int has_flag(const candidate *c, size_t i, int f) { return (c->tflags[i] & f) != 0; }

Test(static_candidate_edges, statement_starts_are_exactly_the_first_tokens) {
    const char *t = KHEAD                                            /* 1-4 */
        "if True: Q = 1\n"                                           /* 5 */
        "R = 2; S = 3\n"                                             /* 6 */
        "def launch(a): return a\n"                                  /* 7 */
        "class C:\n"                                                 /* 8 */
        "    T = (1,\n"                                              /* 9 */
        "         2)\n"                                              /* 10 */
        "    def m(self):\n"                                         /* 11 */
        "        for i in range(2): U = i\n"                         /* 12 */
        "        return U\n";                                        /* 13 */
    candidate *c = tu_parse_candidate(t);
    /* (line, text) of every statement start */
    static const struct { int line; const char *text; } want[] = {
        {1, "import"}, {2, "@"}, {3, "def"}, {4, "pass"}, {5, "if"}, {5, "Q"}, {6, "R"}, {6, "S"}, {7, "def"},
        {7, "return"}, {8, "class"}, {9, "T"}, {11, "def"}, {12, "for"}, {12, "U"}, {13, "return"}};
    size_t n = 0;
    for (size_t i = 0; i < c->ntoks; i++) {
        const pytok *k = &c->toks[i];
        if (!has_flag(c, i, CTOK_STMT_START)) continue;
        cr_expect(k->kind != PYT_NEWLINE && k->kind != PYT_INDENT && k->kind != PYT_DEDENT && k->kind != PYT_END,
                  "a layout token flagged at line %u", k->line);
        int found = 0;
        for (size_t w = 0; w < sizeof want / sizeof *want; w++)
            if ((int)k->line == want[w].line && pytok_is(c->text, k, want[w].text)) found = 1;
        cr_expect(found, "unexpected statement start `%.*s` at line %u", (int)k->len, c->text + k->off, k->line);
        n++;
    }
    cr_expect_eq(n, sizeof want / sizeof *want);
    /* the bindings those statements make */
    REF(c, 5, "Q", 0, "module");
    REF(c, 6, "S", 0, "module");
    REF(c, 13, "U", 0, "local");
    REF(c, 9, "T", 0, "local");   /* a class-body binding, seen from the body */
    cr_expect(has_flag(c, tok_of(c, 9, "T", 0), CTOK_CLASS_BODY) && !has_flag(c, tok_of(c, 9, "T", 0), CTOK_MODULE_LEVEL));
    cr_expect(!has_flag(c, tok_of(c, 12, "U", 0), CTOK_CLASS_BODY) && has_flag(c, tok_of(c, 12, "U", 0), CTOK_IN_FUNC));
    cr_expect(has_flag(c, tok_of(c, 6, "S", 0), CTOK_MODULE_LEVEL) && !has_flag(c, tok_of(c, 6, "S", 0), CTOK_IN_FUNC));
    candidate_free(c);
}

Test(static_candidate_edges, default_values_are_flagged_token_by_token) {
    candidate *c = parse_l("def launch(a, b=[1, 2], c=3, *d, e: int = (4, 5), f=lambda g=6: g):\n    pass\n");
    /* line 5: every token and whether it belongs to a default value */
    static const struct { const char *text; int dflt; } want[] = {
        {"def", 0}, {"launch", 0}, {"(", 0}, {"a", 0}, {",", 0}, {"b", 0}, {"=", 0}, {"[", 1}, {"1", 1}, {",", 1},
        {"2", 1}, {"]", 1}, {",", 0}, {"c", 0}, {"=", 0}, {"3", 1}, {",", 0}, {"*", 0}, {"d", 0}, {",", 0},
        {"e", 0}, {":", 0}, {"int", 0}, {"=", 0}, {"(", 1}, {"4", 1}, {",", 1}, {"5", 1}, {")", 1}, {",", 0},
        {"f", 0}, {"=", 0}, {"lambda", 1}, {"g", 1}, {"=", 1}, {"6", 1}, {":", 1}, {"g", 1}, {")", 0}, {":", 0}};
    size_t i = tok_of(c, 5, "def", 0);
    for (size_t w = 0; w < sizeof want / sizeof *want; w++, i++) {
        cr_assert(pytok_is(c->text, &c->toks[i], want[w].text), "token %zu is `%.*s`, expected `%s`", w,
                  (int)c->toks[i].len, c->text + c->toks[i].off, want[w].text);
        cr_expect_eq(has_flag(c, i, CTOK_DEFAULT), want[w].dflt, "token %zu `%s`", w, want[w].text);
    }
    /* the lambda's own default (g=6) is flagged too: it is inside f's default */
    cr_expect_eq(candidate_nparams(c), 6);
    const char *names[] = {"a", "b", "c", "*d", "e", "f"};
    const int dflt[] = {0, 1, 1, 0, 1, 1};
    for (size_t k = 0; k < 6; k++) {
        cr_expect_str_eq(candidate_param(c, k)->name, names[k]);
        cr_expect_eq(candidate_param(c, k)->has_default, dflt[k], "%s", names[k]);
        cr_expect_eq(candidate_param(c, k)->line, 5);
    }
    candidate_free(c);
}

/* Parameters: the markers `*` and `/` are not parameters; only an annotation that is a dotted
 * chain of names ending in `constexpr` marks a constexpr (not a default value, a string, a
 * subscript or a longer name). */
Test(static_candidate_edges, parameters_markers_and_constexpr_annotations) {
    const char *t = "import triton\nimport triton.language as tl\n"
                    "from torch._inductor.runtime import triton_heuristics\n"
                    "@triton_heuristics.pointwise(size_hints={'x': 16})\n@triton.jit\n"
                    "def K(a, /, b: constexpr, c: tl.constexpr, d: triton.language.constexpr = 4, *, e=constexpr,\n"
                    "      f: tl.constexpr2, g: 'tl.constexpr', h: tl.constexpr[0], i: tl.x, j: x.tl.constexpr,\n"
                    "      k: tl.constexpr.x, l: int = 1, **m):\n"
                    "    pass\n";
    candidate *c = tu_parse_candidate(t);
    cr_assert_eq(candidate_form(c), CAND_FORM_I);
    static const struct { const char *name; int cexpr, dflt; } want[] = {
        {"a", 0, 0}, {"b", 1, 0}, {"c", 1, 0}, {"d", 1, 1}, {"e", 0, 1}, {"f", 0, 0}, {"g", 0, 0},
        {"h", 0, 0}, {"i", 0, 0}, {"j", 1, 0}, {"k", 0, 0}, {"l", 0, 1}, {"**m", 0, 0}};
    cr_assert_eq(candidate_nparams(c), sizeof want / sizeof *want);
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        const cand_param *p = candidate_param(c, k);
        cr_expect_str_eq(p->name, want[k].name);
        cr_expect_eq(p->constexpr_, want[k].cexpr, "%s", want[k].name);
        cr_expect_eq(p->has_default, want[k].dflt, "%s", want[k].name);
    }
    candidate_free(c);
    /* form L: launch's markers are not parameters either */
    c = parse_l("def launch(in_ptr0, /, out_ptr0, *, n, stream=None):\n    pass\n");
    cr_assert_eq(candidate_nparams(c), 3);
    cr_expect_str_eq(candidate_param(c, 1)->name, "out_ptr0");
    cr_expect_str_eq(candidate_param(c, 2)->name, "n");
    cr_expect_eq(c->launch_stream, 1);
    candidate_free(c);
}

/* Every import form: the module, the imported name, the name bound and what it stands for, the
 * position, the statement's tokens flagged (up to a ';', not past it), and what the bound names
 * resolve to (module-level imports: import; in a function: local). */
Test(static_candidate_edges, imports_record_what_they_bind) {
    const char *t = KHEAD                                                    /* 1-4 */
        "import a.b.c, d as e, f\n"                                          /* 5 */
        "from ..g.h import (i as j, kk)\n"                                   /* 6 */
        "from . import l; m = 1\n"                                           /* 7 */
        "from n import *\n"                                                  /* 8 */
        "def launch(p):\n"                                                   /* 9 */
        "    import q.r as s\n"                                              /* 10 */
        "    return a, e, f, j, kk, l, m, s, q, i\n";                       /* 11 */
    candidate *c = tu_parse_candidate(t);
    static const struct { const char *module, *name, *bound, *target; int line, col, top; } want[] = {
        {"triton", NULL, "triton", "triton", 1, 1, 1},
        {"a.b.c", NULL, "a", "a", 5, 1, 1},
        {"d", NULL, "e", "d", 5, 1, 1},
        {"f", NULL, "f", "f", 5, 1, 1},
        {"..g.h", "i", "j", "..g.h.i", 6, 1, 1},
        {"..g.h", "kk", "kk", "..g.h.kk", 6, 1, 1},
        {".", "l", "l", "?", 7, 1, 1},   /* relative imports are refused by gate 1 anyway */
        {"n", "*", NULL, NULL, 8, 1, 1},
        {"q.r", NULL, "s", "q.r", 10, 5, 0},
    };
    cr_assert_eq(c->nimports, sizeof want / sizeof *want);
    for (size_t i = 0; i < c->nimports; i++) {
        const cand_import *im = &c->imports[i];
        cr_expect_str_eq(im->module, want[i].module, "import %zu", i);
        if (want[i].name) cr_expect_str_eq(im->name, want[i].name, "import %zu", i);
        else cr_expect_null(im->name, "import %zu", i);
        if (want[i].bound) cr_expect_str_eq(im->bound, want[i].bound, "import %zu", i);
        else cr_expect_null(im->bound, "import %zu", i);
        if (want[i].target && !strcmp(want[i].target, "?")) cr_expect_not_null(im->target);
        else if (want[i].target) cr_expect_str_eq(im->target, want[i].target, "import %zu", i);
        else cr_expect_null(im->target, "import %zu", i);
        cr_expect_eq(im->line, want[i].line, "import %zu", i);
        cr_expect_eq(im->col, want[i].col, "import %zu", i);
        cr_expect_eq(im->toplevel, want[i].top, "import %zu", i);
        cr_expect(pytok_is(c->text, &c->toks[im->tok], im->name ? "from" : "import"), "import %zu", i);
    }
    REF(c, 11, "a", 0, "import");
    REF(c, 11, "e", 0, "import");
    REF(c, 11, "f", 0, "import");
    REF(c, 11, "j", 0, "import");
    REF(c, 11, "kk", 0, "import");
    REF(c, 11, "l", 0, "import");
    REF(c, 11, "m", 0, "module");
    REF(c, 11, "s", 0, "local");
    REF(c, 11, "q", 0, "free");    /* `import q.r as s` binds s only */
    REF(c, 11, "i", 0, "free");    /* `i as j` binds j only */
    /* the statement's tokens, up to the ';' */
    cr_expect(has_flag(c, tok_of(c, 7, "l", 0), CTOK_IN_IMPORT));
    cr_expect(!has_flag(c, tok_of(c, 7, "m", 0), CTOK_IN_IMPORT));
    cr_expect(has_flag(c, tok_of(c, 6, "kk", 0), CTOK_IN_IMPORT) && has_flag(c, tok_of(c, 10, "s", 0), CTOK_IN_IMPORT));
    cr_expect(!has_flag(c, tok_of(c, 11, "s", 0), CTOK_IN_IMPORT));
    /* module names (renamed by stitching): not the imports */
    for (size_t i = 0; i < c->nmodule_names; i++)
        cr_expect(strcmp(c->module_names[i], "e") && strcmp(c->module_names[i], "a") && strcmp(c->module_names[i], "l"),
                  "%s", c->module_names[i]);
    candidate_free(c);
    /* a name bound by an import and by an assignment is a module name, whatever the order */
    c = parse_l("import x\nx = 1\ny = 2\nimport y\ndef launch(a):\n    return x, y\n");
    REF(c, 10, "x", 0, "module");
    REF(c, 10, "y", 0, "module");
    candidate_free(c);
}

/* Malformed definitions are refused with the line of the statement at fault (after a valid
 * kernel, so the refusal is not the missing-kernel one). */
Test(static_candidate_edges, malformed_definitions_name_their_line) {
    static const struct { const char *rest, *needle; int line; } cases[] = {
        {"def launch(a):\n", "def statement without a body", 5},
        {"def launch(a):\npass\n", "def statement without a body", 5},
        {"class C:\nX = 1\n", "class statement without a body", 5},
        {"x = 1\nclass C\n    pass\n", "malformed class statement: no ':'", 6},
        {"def (a):\n    pass\n", "malformed def: expected `def NAME(`", 5},
        {"def f:\n    pass\n", "malformed def: expected `def NAME(`", 5},
        {"def launch(a):\n    def g:\n        pass\n", "malformed def: expected `def NAME(`", 6},
        {"class (A):\n    pass\n", "malformed class statement: expected `class NAME`", 5},
        {"\n\nf = lambda x\n", "malformed lambda: no ':'", 7},
        {"def launch(a):\n    return (lambda b)\n", "malformed lambda: no ':'", 6},
        {"@triton.jit\n", "a decorator must be followed by def or class", 5},
        {"@triton.jit\nx = 1\n", "a decorator must be followed by def or class", 5},
        {"def launch(a):\n    pass\n  x = 1\n", "", 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = kasprintf("%s%s", KHEAD, cases[i].rest);
        char *m = tu_parse_refusal(t);
        char want[32];
        snprintf(want, sizeof want, "line %d: ", cases[i].line);
        cr_expect(strstr(m, cases[i].needle) && !strncmp(m, want, strlen(want)), "case %zu: %s", i, m);
        free(m);
        free(t);
    }
}

/* A lambda's scope: its parameters, its body up to the ',' / closer / `for` / end of line at its
 * own depth (a ':' deeper down is a slice or a dict, a nested lambda's ':' is the nested one's),
 * its defaults evaluated outside. */
Test(static_candidate_edges, lambda_bodies_end_where_python_ends_them) {
    candidate *c = parse_l("def launch(p):\n"                                          /* 5 */
                           "    f = lambda a, b=p: a + b, a\n"                         /* 6 */
                           "    g = lambda a: lambda b: a + b + c\n"                   /* 7 */
                           "    h = [lambda: i for i in range(3)]\n"                   /* 8 */
                           "    k2 = {'x': lambda a: a[1:2], 'y': a}\n"                /* 9 */
                           "    m = (lambda a: {a: a} if a else a)(1), a\n"            /* 10 */
                           "    n = lambda: (q := 1)\n"                                /* 11 */
                           "    return f, g, h, k2, m, n, q\n");                       /* 12 */
    REF(c, 6, "a", 0, "param");
    REF(c, 6, "b", 0, "param");
    REF(c, 6, "p", 0, "local");
    REF(c, 6, "a", 1, "local");
    REF(c, 6, "b", 1, "local");
    REF(c, 6, "a", 2, "free");
    REF(c, 7, "a", 1, "local");
    REF(c, 7, "b", 1, "local");
    REF(c, 7, "c", 0, "free");
    REF(c, 8, "i", 0, "local");
    REF(c, 8, "range", 0, "free");
    REF(c, 9, "a", 1, "local");
    REF(c, 9, "a", 2, "free");
    for (int k = 1; k <= 4; k++) REF(c, 10, "a", k, "local");
    REF(c, 10, "a", 5, "free");
    REF(c, 11, "q", 0, "local");   /* bound inside the lambda's own scope */
    REF(c, 12, "q", 0, "free");
    candidate_free(c);
    /* module level: the body is inside a function, the name is not */
    c = parse_l("F = lambda a: a + B\nB = 1\ndef launch(x):\n    return F(x)\n");
    size_t F = tok_of(c, 5, "F", 0), a1 = tok_of(c, 5, "a", 1), B = tok_of(c, 5, "B", 0);
    cr_expect(has_flag(c, F, CTOK_MODULE_LEVEL) && !has_flag(c, F, CTOK_IN_FUNC));
    cr_expect(has_flag(c, a1, CTOK_IN_FUNC) && !has_flag(c, a1, CTOK_MODULE_LEVEL));
    cr_expect_eq(c->ref[B], CREF_MODULE);
    cr_expect_eq(c->ref[a1], CREF_LOCAL);
    candidate_free(c);
    /* the token that ends a lambda's body is not in it (nor are `lambda`, its parameters, its ':') */
    c = parse_l("G = lambda a: a, [lambda: 0][0], (lambda: 1)\ndef launch(x):\n    return G\n");
    static const struct { const char *text; int in_func; } want[] = {
        {"G", 0}, {"=", 0}, {"lambda", 0}, {"a", 0}, {":", 0}, {"a", 1}, {",", 0}, {"[", 0}, {"lambda", 0},
        {":", 0}, {"0", 1}, {"]", 0}, {"[", 0}, {"0", 0}, {"]", 0}, {",", 0}, {"(", 0}, {"lambda", 0}, {":", 0},
        {"1", 1}, {")", 0}};
    size_t i = tok_of(c, 5, "G", 0);
    for (size_t w = 0; w < sizeof want / sizeof *want; w++, i++) {
        cr_assert(pytok_is(c->text, &c->toks[i], want[w].text), "token %zu", w);
        cr_expect_eq(has_flag(c, i, CTOK_IN_FUNC), want[w].in_func, "token %zu `%s`", w, want[w].text);
        cr_expect_eq(has_flag(c, i, CTOK_MODULE_LEVEL), !want[w].in_func, "token %zu `%s`", w, want[w].text);
    }
    cr_expect_eq(c->toks[i].kind, PYT_NEWLINE);
    candidate_free(c);
}

/* One entry per name: a name bound twice is one module name (stitching renames it once). */
Test(static_candidate_edges, module_names_are_listed_once) {
    candidate *c = parse_l("N = 1\nN = 2\nimport M\nM = 3\ndef launch(a):\n    return N\n");
    int n = 0, m = 0, launch = 0;
    for (size_t i = 0; i < c->nmodule_names; i++) {
        n += !strcmp(c->module_names[i], "N");
        m += !strcmp(c->module_names[i], "M");
        launch += !strcmp(c->module_names[i], "launch");
    }
    cr_expect(n == 1 && m == 1 && launch == 1, "N %d, M %d, launch %d", n, m, launch);
    cr_expect_eq(c->nmodule_names, 4);   /* k, N, M, launch */
    candidate_free(c);
}

/* A lambda used as a dict key ends at the dict's ':' (Python: {lambda: 1: 2} maps a function);
 * what follows is outside it. */
Test(static_candidate_edges, a_lambda_as_a_dict_key_ends_at_the_colon) {
    candidate *c = parse_l("D = {lambda B: 0: B, 1: lambda B: B}\ndef launch(x):\n    return D\n");
    REF(c, 5, "B", 0, "param");
    REF(c, 5, "B", 1, "free");
    REF(c, 5, "B", 2, "param");
    REF(c, 5, "B", 3, "local");
    cr_expect(!has_flag(c, tok_of(c, 5, "B", 1), CTOK_IN_FUNC));
    candidate_free(c);
}

/* Text that is not quite Python (a file cut short, a stray comma) is modelled by what it does
 * say: no empty import, no import bound to a separator. */
Test(static_candidate_edges, unfinished_imports_record_only_what_is_there) {
    candidate *c = parse_l("import a,\nimport\nfrom b import c,\ndef launch(x):\n    return a\n");
    cr_assert_eq(c->nimports, 3, "triton, a, b.c");
    cr_expect_str_eq(c->imports[1].module, "a");
    cr_expect_str_eq(c->imports[1].bound, "a");
    cr_expect_str_eq(c->imports[2].target, "b.c");
    for (size_t i = 0; i < c->nimports; i++) cr_expect(c->imports[i].module[0] != '\0');
    candidate_free(c);
}

/* The other binding forms: with / except `as` names, comprehension and for targets (only the
 * targets, not the element before `for`), async with / for, walrus at module level, chained
 * assignments after an attribute target, `global` after other statements. */
Test(static_candidate_edges, as_names_loop_targets_and_walrus) {
    candidate *c = parse_l("with open('f') as W:\n"                          /* 5 */
                           "    pass\n"                                      /* 6 */
                           "try:\n"                                          /* 7 */
                           "    pass\n"                                      /* 8 */
                           "except ValueError as ERR:\n"                     /* 9 */
                           "    pass\n"                                      /* 10 */
                           "Z = (Q2 := 3)\n"                                 /* 11 */
                           "def launch(a):\n"                                /* 12 */
                           "    async with a as b:\n"                        /* 13 */
                           "        pass\n"                                  /* 14 */
                           "    async for i in a:\n"                         /* 15 */
                           "        pass\n"                                  /* 16 */
                           "    r = [j for (n, m) in a]\n"                   /* 17 */
                           "    a.attr = v = 1\n"                            /* 18 */
                           "    x = 1; global G\n"                           /* 19 */
                           "    G = 2\n"                                     /* 20 */
                           "    return W, ERR, Q2, b, i, j, n, m, attr, v, G\n");   /* 21 */
    REF(c, 21, "W", 0, "module");
    REF(c, 21, "ERR", 0, "module");
    REF(c, 21, "Q2", 0, "module");
    REF(c, 21, "b", 0, "local");
    REF(c, 21, "i", 0, "local");
    REF(c, 21, "j", 0, "free");
    REF(c, 21, "n", 0, "local");
    REF(c, 21, "m", 0, "local");
    REF(c, 21, "attr", 0, "free");
    REF(c, 21, "v", 0, "local");
    REF(c, 21, "G", 0, "free");   /* global, and not bound at module level */
    candidate_free(c);
}

/* `global` sends a name to the module scope itself, not to the first scope of the file (here
 * the kernel k, whose parameter is also called p). */
Test(static_candidate_edges, global_skips_every_enclosing_scope) {
    candidate *c = parse_l("def launch(a):\n    global p\n    p = 1\n    return p\n");
    REF(c, 8, "p", 0, "free");
    candidate_free(c);
    c = parse_l("p = 0\ndef launch(a):\n    def inner():\n        global p\n        return p\n    return inner\n");
    REF(c, 9, "p", 0, "module");
    candidate_free(c);
}

/* CANDIDATE_MAX_NEST (200): 199 nested lambdas (200 scans deep with the module's) parse, 200
 * are refused (nested defs reach the lexer's indentation limit first). */
Test(static_candidate_edges, nesting_limit_is_exact) {
    for (int n = 199; n <= 200; n++) {
        kbuf b = KBUF_INIT;
        kbuf_puts(&b, KHEAD "def launch(a):\n    return 1\nf = ");
        for (int i = 0; i < n; i++) kbuf_puts(&b, "lambda: ");
        kbuf_puts(&b, "0\n");
        candidate *c = NULL;
        kerr e = {0};
        int rc = candidate_parse(b.data, b.len, &c, &e);
        if (n == 199) cr_expect_eq(rc, 0, "%d lambdas: %s", n, e.msg);
        else cr_expect(rc == KOPT_E_CANDIDATE && strstr(e.msg, "nested too deeply"), "%d lambdas: %s", n, e.msg);
        candidate_free(c);
        kbuf_free(&b);
    }
}

/* Top-level definitions: one per name bound at module level, in order, with the statement's
 * span (decorators included, up to its last token), its first line, and for assignments the
 * value (the tokens after the last top-level '=' before any lambda; none for a compound
 * statement or an augmented assignment). */
static char *tok_range_text(const candidate *c, size_t a, size_t b) {
    if (a >= b) return kstrdup("");
    return kstrndup(c->text + c->toks[a].off, c->toks[b - 1].off + c->toks[b - 1].len - c->toks[a].off);
}

Test(static_candidate_edges, top_level_definitions_and_their_spans) {
    const char *t = "import triton\n"                                               /* 1 */
                    "from torch._inductor.runtime import triton_heuristics\n"       /* 2 */
                    "A = B = 1 + 2\n"                                               /* 3 */
                    "if True:\n"                                                    /* 4 */
                    "    C = 3\n"                                                   /* 5 */
                    "D: int = 4\n"                                                  /* 6 */
                    "E += 5\n"                                                      /* 7 */
                    "F = lambda: G == 1\n"                                          /* 8 */
                    "for H in range(2): pass\n"                                     /* 9 */
                    "@triton.jit\n"                                                 /* 10 */
                    "def k(p):\n"                                                   /* 11 */
                    "    pass\n"                                                    /* 12 */
                    "\n"                                                            /* 13 */
                    "@triton_heuristics.pointwise(size_hints={'x': 16})\n"          /* 14 */
                    "@triton.jit\n"                                                 /* 15 */
                    "def K(a):\n"                                                   /* 16 */
                    "    pass\n"                                                    /* 17 */
                    "async def helper():\n"                                         /* 18 */
                    "    pass\n"                                                    /* 19 */
                    "@decorate\n"                                                   /* 20 */
                    "class M:\n"                                                    /* 21 */
                    "    N = 1\n"                                                   /* 22 */
                    "I = 6\n";                                                      /* 23 */
    candidate *c = tu_parse_candidate(t);
    static const struct {
        const char *name;
        cand_def_kind kind;
        int line;
        const char *span, *value;
        int jit;
        const char *heur;
    } want[] = {
        {"A", CAND_DEF_ASSIGN, 3, "A = B = 1 + 2", "1 + 2", 0, NULL},
        {"B", CAND_DEF_ASSIGN, 3, "A = B = 1 + 2", "1 + 2", 0, NULL},
        {"C", CAND_DEF_ASSIGN, 4, "if True:\n    C = 3", "", 0, NULL},
        {"D", CAND_DEF_ASSIGN, 6, "D: int = 4", "4", 0, NULL},
        {"E", CAND_DEF_ASSIGN, 7, "E += 5", "", 0, NULL},
        {"F", CAND_DEF_ASSIGN, 8, "F = lambda: G == 1", "lambda: G == 1", 0, NULL},
        {"H", CAND_DEF_ASSIGN, 9, "for H in range(2): pass", "", 0, NULL},
        {"k", CAND_DEF_FUNC, 10, "@triton.jit\ndef k(p):\n    pass", NULL, 1, NULL},
        {"K", CAND_DEF_FUNC, 14, "@triton_heuristics.pointwise(size_hints={'x': 16})\n@triton.jit\ndef K(a):\n    pass", NULL,
         1, "pointwise"},
        {"helper", CAND_DEF_FUNC, 18, "async def helper():\n    pass", NULL, 0, NULL},
        {"M", CAND_DEF_CLASS, 20, "@decorate\nclass M:\n    N = 1", NULL, 0, NULL},
        {"I", CAND_DEF_ASSIGN, 23, "I = 6", "6", 0, NULL},
    };
    cr_assert_eq(c->ndefs, sizeof want / sizeof *want, "%zu definitions", c->ndefs);
    for (size_t i = 0; i < c->ndefs; i++) {
        const cand_def *d = &c->defs[i];
        cr_expect_str_eq(d->name, want[i].name, "def %zu", i);
        cr_expect_eq(d->kind, want[i].kind, "%s", d->name);
        cr_expect_eq(d->line, want[i].line, "%s", d->name);
        char *span = kstrndup(c->text + d->off, d->len);
        cr_expect_str_eq(span, want[i].span, "%s: <<%s>>", d->name, span);
        free(span);
        cr_expect_eq(d->jit, want[i].jit, "%s", d->name);
        if (want[i].heur) cr_expect_str_eq(d->heuristic, want[i].heur, "%s", d->name);
        else cr_expect_null(d->heuristic, "%s", d->name);
        if (want[i].value) {
            char *v = tok_range_text(c, d->body0, d->body1);
            cr_expect_str_eq(v, want[i].value, "%s: value <<%s>>", d->name, v);
            free(v);
        } else {
            /* functions and classes: the body's tokens, inside the statement's */
            cr_expect(d->tok0 < d->body0 && d->body0 < d->body1 && d->body1 <= d->tok1, "%s", d->name);
        }
        cr_expect_eq(c->toks[d->tok0].off, d->off, "%s: tok0 is the span's first token", d->name);
        cr_expect(c->toks[d->tok1 - 1].kind == PYT_NEWLINE || c->toks[d->tok1 - 1].kind == PYT_DEDENT,
                  "%s: tok1 ends the statement", d->name);
    }
    /* the jit functions' tokens (header and body), nothing else */
    cr_expect_eq(c->njit, 2);
    cr_expect(has_flag(c, tok_of(c, 11, "p", 0), CTOK_IN_JIT) && has_flag(c, tok_of(c, 12, "pass", 0), CTOK_IN_JIT));
    cr_expect(has_flag(c, tok_of(c, 11, "def", 0), CTOK_IN_JIT) && !has_flag(c, tok_of(c, 10, "triton", 0), CTOK_IN_JIT));
    cr_expect(!has_flag(c, tok_of(c, 18, "helper", 0), CTOK_IN_JIT) && !has_flag(c, tok_of(c, 19, "pass", 0), CTOK_IN_JIT));
    cr_expect(has_flag(c, tok_of(c, 17, "pass", 0), CTOK_IN_JIT));
    /* decorator lines are flagged, the definitions under them are not */
    cr_expect(has_flag(c, tok_of(c, 14, "size_hints", 0), CTOK_DECORATOR) && !has_flag(c, tok_of(c, 16, "K", 0), CTOK_DECORATOR));
    cr_expect_eq(candidate_form(c), CAND_FORM_I);
    cr_expect_str_eq(candidate_main_name(c), "K");
    candidate_free(c);
}

/* The binding comment: only among the comment lines before the first code token, the tag
 * exactly `kopt-candidate:` after '#' and blanks, words separated by blanks or commas, one
 * `replaces=` word counted (a repeat of the same name is fine). */
Test(static_candidate_edges, binding_comment_syntax) {
    static const struct { const char *head; const char *want; } cases[] = {
        {"#kopt-candidate:replaces=K\n", "K"},
        {"#  \tkopt-candidate: other=1, replaces=K,more\n", "K"},
        {"# kopt-candidate: reviewed=yes-by-me replaces=K\n", "K"},
        {"# kopt-candidate: replaces=K\n# kopt-candidate: replaces=K\n", "K"},
        {"# a note\n# kopt-candidate: replaces=K\n", "K"},
        {"# kopt-candidate replaces=K\n", NULL},
        {"# kopt-candidates: replaces=K\n", NULL},
        {"# kopt-candidate: xreplaces=K\n", NULL},
        {"# kopt-candidate: replaces\n", NULL},
        {"# kopt-candidate:\n", NULL},
        {"#kopt-candidat\n", NULL},
        {"import os\n# kopt-candidate: replaces=K\n", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *t = kasprintf("%s" KHEAD "def launch(a):\n    pass\n", cases[i].head);
        candidate *c = tu_parse_candidate(t);
        if (cases[i].want) cr_expect_str_eq(candidate_replaces(c), cases[i].want, "case %zu", i);
        else cr_expect_null(candidate_replaces(c), "case %zu: %s", i, candidate_replaces(c));
        candidate_free(c);
        free(t);
    }
    /* the conflict names both lines; `replaces=` with nothing after it is an error, not ignored */
    char *m = tu_parse_refusal("# kopt-candidate: replaces=A\n#\n# kopt-candidate: replaces=B\n" KHEAD);
    cr_expect(!strncmp(m, "line 3: ", 8) && strstr(m, "replaces=B here, replaces=A at line 1"), "%s", m);
    free(m);
    m = tu_parse_refusal("# kopt-candidate: replaces=, replaces=K\n" KHEAD);
    cr_expect(strstr(m, "names no kernel"), "%s", m);
    free(m);
}

/* Form detection: `launch` must be a top-level function (a class or a nested def is not one),
 * may be async; the heuristics decorator is read through the full module path or an alias, must
 * name exactly one kind, and marks form I only on a @triton.jit function. */
Test(static_candidate_edges, form_detection_edges) {
    static const struct { const char *text; int form; const char *main; } ok[] = {
        {KHEAD "async def launch(a):\n    pass\n", CAND_FORM_L, "launch"},
        {"import triton\n@triton.jit(do_not_specialize=['n'])\ndef k(n):\n    pass\ndef launch(stream):\n    pass\n",
         CAND_FORM_L, "launch"},
        {"import triton\nimport torch._inductor.runtime.triton_heuristics\n"
         "@torch._inductor.runtime.triton_heuristics.reduction()\n@triton.jit\ndef K(a):\n    pass\n",
         CAND_FORM_I, "K"},
        {"import triton\nfrom torch._inductor.runtime import triton_heuristics as th\n"
         "@th.persistent_reduction()\n@triton.jit\ndef K(a):\n    pass\n", CAND_FORM_I, "K"},
        {"import triton\nfrom torch._inductor.runtime import triton_heuristics\n"
         "@triton_heuristics.pointwise()\n@triton_heuristics.reduction()\n@triton.jit\ndef K(a):\n    pass\n",
         CAND_FORM_I, "K"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        candidate *c = tu_parse_candidate(ok[i].text);
        cr_expect_eq(candidate_form(c), ok[i].form, "case %zu", i);
        cr_expect_str_eq(candidate_main_name(c), ok[i].main, "case %zu", i);
        if (ok[i].form == CAND_FORM_I)
            cr_expect_str_eq(c->defs[c->main_def].heuristic, i == 2 ? "reduction" : (i == 3 ? "persistent_reduction" : "pointwise"),
                             "case %zu: the first decorator's kind", i);
        candidate_free(c);
    }
    {
        candidate *c = tu_parse_candidate(ok[1].text);
        cr_expect_eq(candidate_nparams(c), 0);
        cr_expect_eq(c->launch_stream, 1);
        cr_expect_eq(c->njit, 1, "@triton.jit(...) is a jit decorator");
        candidate_free(c);
    }
    static const char *const neither[] = {
        KHEAD "class launch:\n    pass\n",
        KHEAD "def outer():\n    def launch(a):\n        pass\n",
        "import triton\nfrom torch._inductor.runtime import triton_heuristics\n"
        "@triton_heuristics.pointwise.x()\n@triton.jit\ndef K(a):\n    pass\n",
        "import triton\nfrom torch._inductor.runtime import triton_heuristics\n"
        "@triton_heuristics()\n@triton.jit\ndef K(a):\n    pass\n",
        "import triton\nfrom torch._inductor.runtime import triton_heuristics\n"
        "@triton.jit\ndef k(a):\n    pass\n@triton_heuristics.pointwise()\ndef K(a):\n    pass\n",
        "import triton\n@triton.jitx\ndef k(a):\n    pass\n@triton.jit\ndef j(a):\n    pass\n",
    };
    for (size_t i = 0; i < sizeof neither / sizeof *neither; i++) {
        char *m = tu_parse_refusal(neither[i]);
        cr_expect(strstr(m, "no form"), "case %zu: %s", i, m);
        free(m);
    }
    char *m = tu_parse_refusal("import triton\n@triton.jitx\ndef k(a):\n    pass\ndef launch(a):\n    pass\n");
    cr_expect(strstr(m, "no top-level @triton.jit"), "%s", m);
    free(m);
}

/* Lines: '\n', "\r\n" and a lone '\r' each end one (as Python counts them), for token lines
 * and columns. */
Test(static_candidate_edges, line_starts_and_columns) {
    const char *t = "import triton\r\n@triton.jit\rdef k(p):\r\n    pass\ndef launch(a):\r    x = 1\n";
    candidate *c = tu_parse_candidate(t);
    cr_expect_eq(c->nlines, 7);
    size_t x = tok_of(c, 6, "x", 0);
    cr_expect_eq(candidate_col(c, c->toks[x].off, 6), 5);
    cr_expect_eq(candidate_col(c, c->toks[tok_of(c, 3, "k", 0)].off, 3), 5);
    cr_expect_eq(candidate_col(c, 0, 1), 1);
    cr_expect_eq(candidate_col(c, c->toks[x].off, 0), 1, "no line 0");
    cr_expect_eq(candidate_col(c, c->toks[x].off, 8), 1, "past the last line");
    cr_expect_eq(candidate_col(c, c->toks[x].off, 7), 1, "an offset before its line's start");
    cr_expect_eq(candidate_col(c, strlen(t), 7), 1, "the empty last line");
    candidate_free(c);
}

/* CANDIDATE_MAX_BYTES is the largest accepted size. */
Test(static_candidate_edges, size_limit_is_inclusive) {
    const char *body = KHEAD "def launch(a):\n    pass\n#";
    size_t n = CANDIDATE_MAX_BYTES;
    char *t = kmalloc(n + 2);
    memset(t, 'x', n + 1);
    memcpy(t, body, strlen(body));
    t[n - 1] = '\n';
    t[n] = '\n';
    candidate *c = NULL;
    kerr e = {0};
    cr_expect_eq(candidate_parse(t, n, &c, &e), 0, "%s", e.msg);
    candidate_free(c);
    c = NULL;
    e = (kerr){0};
    cr_expect_eq(candidate_parse(t, n + 1, &c, &e), KOPT_E_CANDIDATE);
    cr_expect(strstr(e.msg, "too large") && !strncmp(e.msg, "line 1:", 7), "%s", e.msg);
    cr_expect_null(c);
    free(t);
}

/* A name bound twice in one statement is one definition; bound again by a later statement, it
 * is a definition of that statement too. */
Test(static_candidate_edges, one_definition_per_name_and_statement) {
    candidate *c = parse_l("for X in range(2):\n    X = 1\n    Y = X\nX = 3\ndef launch(a):\n    pass\n");
    const char *names[] = {"k", "X", "Y", "X", "launch"};
    cr_assert_eq(c->ndefs, 5);
    for (size_t i = 0; i < 5; i++) cr_expect_str_eq(c->defs[i].name, names[i], "def %zu", i);
    cr_expect_eq(c->defs[1].line, 5);
    cr_expect_eq(c->defs[3].line, 8);
    candidate_free(c);
}

/* Form detection does not depend on where launch or the heuristics kernel stands among the
 * definitions (the first definition has index 0). */
Test(static_candidate_edges, form_detection_whatever_the_order) {
    candidate *c = tu_parse_candidate("import triton\ndef launch(a):\n    _k[(1,)](a)\n@triton.jit\ndef _k(p):\n    pass\n");
    cr_expect_eq(candidate_form(c), CAND_FORM_L);
    cr_expect_str_eq(candidate_main_name(c), "launch");
    cr_expect_eq(candidate_nparams(c), 1);
    candidate_free(c);
    static const struct { const char *text, *needle; } bad[] = {
        {"import triton\ndef launch(a):\n    pass\ndef launch(b):\n    pass\n@triton.jit\ndef _k(p):\n    pass\n",
         "second top-level `def launch`"},
        {"import triton\ndef launch(a):\n    pass\n@triton_heuristics.pointwise()\n@triton.jit\ndef K(p):\n    pass\n",
         "both forms"},
        {"import triton\n@triton_heuristics.pointwise()\n@triton.jit\ndef K(p):\n    pass\ndef launch(a):\n    pass\n",
         "both forms"},
        {"import triton\n@triton_heuristics.pointwise()\n@triton.jit\ndef K(p):\n    pass\n"
         "@triton_heuristics.reduction()\n@triton.jit\ndef L(p):\n    pass\n",
         "second @triton_heuristics"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *m = tu_parse_refusal(bad[i].text);
        cr_expect(strstr(m, bad[i].needle), "case %zu: %s", i, m);
        free(m);
    }
}

/* The first line starts at offset 0 (a token inside it has its own column), a leading blank
 * line or "\r\n" is one line, and bracket depths count from the first token. */
Test(static_candidate_edges, first_line_and_first_token) {
    candidate *c = tu_parse_candidate(KHEAD "def launch(a):\n    pass\n");
    cr_expect_eq(candidate_col(c, c->toks[tok_of(c, 1, "triton", 0)].off, 1), 8);
    candidate_free(c);
    c = tu_parse_candidate("\n" KHEAD "def launch(a):\n    pass\n");
    cr_expect_eq(c->nlines, 8);
    cr_expect_eq(candidate_col(c, c->toks[tok_of(c, 2, "triton", 0)].off, 2), 8);
    candidate_free(c);
    c = tu_parse_candidate("\r\n" KHEAD "def launch(a):\n    pass\n");
    cr_expect_eq(c->nlines, 8);
    cr_expect_eq(candidate_col(c, c->toks[tok_of(c, 3, "triton", 0)].off, 3), 2);
    candidate_free(c);
    c = tu_parse_candidate("(a, [b])\n" KHEAD "def launch(a):\n    pass\n");
    static const int depth[] = {0, 1, 1, 1, 2, 2, 1, 0};   /* ( a , [ b ] ) NEWLINE */
    for (size_t i = 0; i < sizeof depth / sizeof *depth; i++) cr_expect_eq(c->depth[i], depth[i], "token %zu", i);
    candidate_free(c);
}

/* Stitching trims the blank space that ends a form-L file (spaces, tabs, CR, LF) before the
 * binding line; the column of a token on a last line without a newline is its own. */
Test(static_candidate_edges, stitch_trims_trailing_space_and_last_line_columns) {
    const char *t = "import triton\n@triton.jit\ndef k(a):\n    pass\ndef launch(a):\n    x = 1 \t \r\n  \n";
    candidate *c = tu_parse_candidate(t);
    kbuf st = KBUF_INIT;
    kerr e = {0};
    cr_assert_eq(candidate_stitch_text(c, "K", &st, &e), 0, "%s", e.msg);
    const char *s = kbuf_str(&st);
    cr_expect(strstr(s, "    x = 1\nK = _KoptLaunch(_kopt_K__launch)") != NULL, "%s", s);
    candidate_free(c);
    kbuf_free(&st);
    const char *u = "import triton\n@triton.jit\ndef k(a):\n    pass\ndef launch(a):\n    x = 1";
    c = tu_parse_candidate(u);
    size_t off = (size_t)(strrchr(u, 'x') - u);
    cr_expect_eq(candidate_col(c, off, 6), 5, "the last line's own column");
    cr_expect_eq(candidate_col(c, off, 7), 1, "past the last line: column 1");
    candidate_free(c);
}
