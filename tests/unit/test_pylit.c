/* test_pylit.c — expressions to value trees: literals, containers, calls, attributes,
 * subscripts, unary minus, RAW fallbacks, spans, accessors, JSON, token-level lookups, errors. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "artifact/pylit.h"

static pyval *parse_ok(const char *src) {
    pyval *v = NULL;
    kerr e = {0};
    int rc = pylit_parse(src, strlen(src), 1, &v, &e);
    cr_assert_eq(rc, 0, "parse of <<%s>> failed: %s", src, e.msg);
    cr_assert_not_null(v);
    return v;
}

static kerr parse_err(const char *src) {
    pyval *v = NULL;
    kerr e = {0};
    int rc = pylit_parse(src, strlen(src), 1, &v, &e);
    cr_assert_eq(rc, KOPT_E_PARSE, "expected an error for <<%s>>", src);
    cr_assert_null(v);
    return e;
}

/* Assert that v's span is exactly `want` in src. */
static void span_is(const pyval *v, const char *src, const char *want) {
    char *t = pyval_text(v, src);
    cr_assert_str_eq(t, want);
    free(t);
}

Test(pylit, size_hints_dict) {
    const char *src = "{'x': 1024, 'r0_': 4096}";
    pyval *v = parse_ok(src);
    cr_assert_eq(v->kind, PYV_DICT);
    cr_assert_eq(v->n, 2);
    cr_assert_eq(v->keys[0]->kind, PYV_STR);
    cr_assert_str_eq(v->keys[1]->s, "r0_");
    cr_assert_eq(pyval_dict_get(v, "x")->i, 1024);
    cr_assert_eq(pyval_dict_get(v, "r0_")->i, 4096);
    cr_assert_null(pyval_dict_get(v, "y"));
    span_is(v, src, src);
    pyval_free(v);
}

Test(pylit, triton_meta_nested) {
    const char *src =
        "{'signature': {'in_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}, "
        "'device': DeviceProperties(type='cuda', index=0, cc=90, warp_size=32), 'constants': {}, "
        "'configs': [{(0,): [['tt.divisibility', 16]], (1,): [['tt.divisibility', 16]]}]}";
    pyval *v = parse_ok(src);
    const pyval *sig = pyval_dict_get(v, "signature");
    cr_assert_eq(sig->kind, PYV_DICT);
    cr_assert_eq(sig->n, 3);
    cr_assert_str_eq(sig->keys[2]->s, "XBLOCK");
    cr_assert_str_eq(sig->items[2]->s, "constexpr");
    const pyval *dev = pyval_dict_get(v, "device");
    cr_assert_eq(dev->kind, PYV_CALL);
    cr_assert(pyval_is_name(dev->base, "DeviceProperties"));
    cr_assert_eq(dev->n, 0);
    cr_assert_eq(dev->nkw, 4);
    cr_assert_str_eq(pyval_kwarg(dev, "type")->s, "cuda");
    cr_assert_eq(pyval_kwarg(dev, "cc")->i, 90);
    cr_assert_null(pyval_kwarg(dev, "major"));
    const pyval *consts = pyval_dict_get(v, "constants");
    cr_assert_eq(consts->kind, PYV_DICT);
    cr_assert_eq(consts->n, 0);
    const pyval *cfg = pyval_dict_get(v, "configs");
    cr_assert_eq(cfg->kind, PYV_LIST);
    cr_assert_eq(cfg->items[0]->kind, PYV_DICT);
    const pyval *k0 = cfg->items[0]->keys[0];
    cr_assert_eq(k0->kind, PYV_TUPLE);
    cr_assert_eq(k0->n, 1);
    cr_assert_eq(k0->items[0]->i, 0);
    span_is(k0, src, "(0,)");
    const pyval *pair = cfg->items[0]->items[1]->items[0];
    cr_assert_eq(pair->kind, PYV_LIST);
    cr_assert_str_eq(pair->items[0]->s, "tt.divisibility");
    cr_assert_eq(pair->items[1]->i, 16);
    pyval_free(v);
}

Test(pylit, inductor_meta_values) {
    pyval *v = parse_ok("{'kernel_name': 'triton_per_fused_0', 'mutated_arg_names': ['in_out_ptr0'], "
                        "'grid_type': 'Grid1D', 'autotune_hints': set(), 'no_x_dim': None, "
                        "'optimize_mem': True, 'x': False, 'f': 1.5}");
    cr_assert_str_eq(pyval_dict_get(v, "grid_type")->s, "Grid1D");
    const pyval *m = pyval_dict_get(v, "mutated_arg_names");
    cr_assert_eq(m->kind, PYV_LIST);
    cr_assert_str_eq(m->items[0]->s, "in_out_ptr0");
    cr_assert_eq(pyval_dict_get(v, "autotune_hints")->kind, PYV_CALL);
    cr_assert_eq(pyval_dict_get(v, "no_x_dim")->kind, PYV_NONE);
    cr_assert_eq(pyval_dict_get(v, "optimize_mem")->kind, PYV_BOOL);
    cr_assert_eq(pyval_dict_get(v, "optimize_mem")->i, 1);
    cr_assert_eq(pyval_dict_get(v, "x")->i, 0);
    cr_assert_float_eq(pyval_dict_get(v, "f")->f, 1.5, 1e-12);
    pyval_free(v);
}

Test(pylit, launch_argument_call) {
    const char *src = "reinterpret_tensor(buf0, (1024, 4096), (1, 1024), 0)";
    pyval *v = parse_ok(src);
    cr_assert_eq(v->kind, PYV_CALL);
    cr_assert(pyval_is_name(v->base, "reinterpret_tensor"));
    cr_assert_eq(v->n, 4);
    cr_assert(pyval_is_name(pyval_arg(v, 0), "buf0"));
    cr_assert_eq(pyval_arg(v, 1)->kind, PYV_TUPLE);
    cr_assert_eq(pyval_arg(v, 1)->items[1]->i, 4096);
    span_is(pyval_arg(v, 1), src, "(1024, 4096)");
    span_is(pyval_arg(v, 2), src, "(1, 1024)");
    cr_assert_null(pyval_arg(v, 4));
    span_is(v, src, src);
    pyval_free(v);
}

Test(pylit, vendor_call_keywords) {
    const char *src = "extern_kernels.addmm(arg4_1, buf1, reinterpret_tensor(arg3_1, (4096, 1024), "
                      "(1, 4096), 0), alpha=1, beta=1, out=buf2)";
    pyval *v = parse_ok(src);
    kbuf b = KBUF_INIT;
    cr_assert(pyval_dotted(v->base, &b));
    cr_assert_str_eq(kbuf_str(&b), "extern_kernels.addmm");
    kbuf_free(&b);
    cr_assert_eq(v->n, 3);
    cr_assert_eq(v->nkw, 3);
    cr_assert_str_eq(v->kwnames[2], "out");
    cr_assert(pyval_is_name(pyval_kwarg(v, "out"), "buf2"));
    span_is(pyval_arg(v, 2), src, "reinterpret_tensor(arg3_1, (4096, 1024), (1, 4096), 0)");
    pyval_free(v);
}

Test(pylit, attribute_chain) {
    pyval *v = parse_ok("torch.ops.aten.mm.default");
    cr_assert_eq(v->kind, PYV_ATTR);
    cr_assert_str_eq(v->s, "default");
    kbuf b = KBUF_INIT;
    cr_assert(pyval_dotted(v, &b));
    cr_assert_str_eq(kbuf_str(&b), "torch.ops.aten.mm.default");
    kbuf_free(&b);
    pyval_free(v);
    /* a call in the chain is not a dotted name */
    v = parse_ok("f().x");
    kbuf c = KBUF_INIT;
    cr_assert(!pyval_dotted(v, &c));
    cr_assert_eq(c.len, 0);
    kbuf_free(&c);
    pyval_free(v);
}

Test(pylit, unary_minus) {
    pyval *v = parse_ok("-1");
    cr_assert_eq(v->kind, PYV_INT);
    cr_assert_eq(v->i, -1);
    cr_assert_eq(v->len, 2);
    pyval_free(v);
    v = parse_ok("-1.5e-05");
    cr_assert_eq(v->kind, PYV_FLOAT);
    cr_assert_float_eq(v->f, -1.5e-05, 1e-15);
    pyval_free(v);
    const char *src = "-x.y";
    v = parse_ok(src);
    cr_assert_eq(v->kind, PYV_NEG);
    cr_assert_eq(v->base->kind, PYV_ATTR);
    span_is(v, src, src);
    pyval_free(v);
    v = parse_ok("(-3, +4)");
    cr_assert_eq(v->items[0]->i, -3);
    cr_assert_eq(v->items[1]->i, 4);
    pyval_free(v);
}

Test(pylit, numbers) {
    pyval *v = parse_ok("[0x1F, 1_000, 1e-05, .5, 0o17, 0b101, 2j, 99999999999999999999999]");
    cr_assert_eq(v->items[0]->i, 31);
    cr_assert_eq(v->items[1]->i, 1000);
    cr_assert_eq(v->items[2]->kind, PYV_FLOAT);
    cr_assert_float_eq(v->items[2]->f, 1e-05, 1e-15);
    cr_assert_float_eq(v->items[3]->f, 0.5, 1e-15);
    cr_assert_eq(v->items[4]->i, 15);
    cr_assert_eq(v->items[5]->i, 5);
    cr_assert_eq(v->items[6]->kind, PYV_RAW);   /* complex */
    cr_assert_eq(v->items[7]->kind, PYV_RAW);   /* too big for int64 */
    pyval_free(v);
}

Test(pylit, strings) {
    pyval *v = parse_ok("['a\\nb\\t\\'c\\x41\\u00e9', r'a\\nb', 'x' \"y\" '''z''', b'\\101', '\\\nq']");
    cr_assert_str_eq(v->items[0]->s, "a\nb\t'cA\xc3\xa9");
    cr_assert_str_eq(v->items[1]->s, "a\\nb");
    cr_assert_str_eq(v->items[2]->s, "xyz");
    cr_assert_str_eq(v->items[3]->s, "A");
    cr_assert_str_eq(v->items[4]->s, "q");
    pyval_free(v);
    const char *src = "f('''\nimport triton\n@triton.jit\n''', device_str='cuda')";
    v = parse_ok(src);
    cr_assert_str_eq(pyval_arg(v, 0)->s, "\nimport triton\n@triton.jit\n");
    span_is(pyval_arg(v, 0), src, "'''\nimport triton\n@triton.jit\n'''");
    size_t n = 0;
    char *taken = pyval_take_str(v->items[0], &n);
    cr_assert_eq(n, strlen("\nimport triton\n@triton.jit\n"));
    cr_assert_str_eq(pyval_arg(v, 0)->s, "");
    free(taken);
    pyval_free(v);
}

Test(pylit, containers) {
    pyval *v = parse_ok("({1, 2}, {}, (), (1,), (1), [], [1, 2,])");
    cr_assert_eq(v->kind, PYV_TUPLE);
    cr_assert_eq(v->n, 7);
    cr_assert_eq(v->items[0]->kind, PYV_SET);
    cr_assert_eq(v->items[0]->n, 2);
    cr_assert_eq(v->items[1]->kind, PYV_DICT);
    cr_assert_eq(v->items[1]->n, 0);
    cr_assert_eq(v->items[2]->kind, PYV_TUPLE);
    cr_assert_eq(v->items[2]->n, 0);
    cr_assert_eq(v->items[3]->kind, PYV_TUPLE);
    cr_assert_eq(v->items[3]->n, 1);
    cr_assert_eq(v->items[4]->kind, PYV_INT);   /* parenthesised, not a tuple */
    cr_assert_eq(v->items[4]->len, 3);          /* span includes the parentheses */
    cr_assert_eq(v->items[5]->kind, PYV_LIST);
    cr_assert_eq(v->items[6]->n, 2);
    pyval_free(v);
}

Test(pylit, bare_tuple_at_top) {
    pyval *v = parse_ok("buf1, buf2, ");
    cr_assert_eq(v->kind, PYV_TUPLE);
    cr_assert_eq(v->n, 2);
    pyval_free(v);
}

Test(pylit, subscripts) {
    const char *src = "buf5[1]";
    pyval *v = parse_ok(src);
    cr_assert_eq(v->kind, PYV_SUBSCRIPT);
    cr_assert(pyval_is_name(v->base, "buf5"));
    cr_assert_eq(v->items[0]->i, 1);
    pyval_free(v);
    const char *s2 = "x[:, None]";
    v = parse_ok(s2);
    cr_assert_eq(v->kind, PYV_SUBSCRIPT);
    cr_assert_eq(v->items[0]->kind, PYV_RAW);
    span_is(v->items[0], s2, ":, None");
    pyval_free(v);
    v = parse_ok("a[1, 2]");
    cr_assert_eq(v->items[0]->kind, PYV_TUPLE);
    cr_assert_eq(v->items[0]->n, 2);
    pyval_free(v);
    const char *s3 = "triton_poi_fused_0[grid(16)](a, 16)";
    v = parse_ok(s3);
    cr_assert_eq(v->kind, PYV_CALL);
    cr_assert_eq(v->base->kind, PYV_SUBSCRIPT);
    span_is(v->base, s3, "triton_poi_fused_0[grid(16)]");
    pyval_free(v);
}

Test(pylit, raw_expressions_keep_their_text) {
    const char *src = "f(1024*s0, lambda: (a, b,), x if y else z, [i for i in r], {**d}, *args, "
                      "**kw, not q, a == b, ...)";
    pyval *v = parse_ok(src);
    cr_assert_eq(v->kind, PYV_CALL);
    cr_assert_eq(v->n, 10);
    const char *want[] = {"1024*s0", "lambda: (a, b,)", "x if y else z", "[i for i in r]", "{**d}",
                          "*args", "**kw", "not q", "a == b", "..."};
    for (size_t i = 0; i < 10; i++) {
        cr_assert_eq(v->items[i]->kind, PYV_RAW, "arg %zu is %s", i, pyv_kind_name(v->items[i]->kind));
        span_is(v->items[i], src, want[i]);
    }
    pyval_free(v);
}

Test(pylit, comments_inside_brackets) {
    const char *src = "f(\n  a,  # first\n  b,\n)";
    pyval *v = NULL;
    kerr e = {0};
    pytok *t = NULL;
    size_t n = 0;
    cr_assert_eq(pylex_all(src, strlen(src), PYLEX_COMMENTS | PYLEX_NOINDENT, &t, &n, &e), 0);
    size_t pos = 0;
    cr_assert_eq(pylit_parse_tokens(src, t, n, &pos, &v, &e), 0, "%s", e.msg);
    cr_assert_eq(v->n, 2);
    span_is(v->items[0], src, "a");
    cr_assert_eq(v->items[1]->line, 3);
    cr_assert_eq(t[pos].kind, PYT_NEWLINE);
    pyval_free(v);
    free(t);
}

Test(pylit, parse_tokens_stops_at_terminator) {
    const char *src = "buf0 = empty_strided_cuda((16, 1024), (1024, 1), torch.float32); del x";
    pytok *t = NULL;
    size_t n = 0;
    kerr e = {0};
    cr_assert_eq(pylex_all(src, strlen(src), PYLEX_NOINDENT, &t, &n, &e), 0);
    size_t pos = 2;
    pyval *v = NULL;
    cr_assert_eq(pylit_parse_tokens(src, t, n, &pos, &v, &e), 0);
    cr_assert_eq(v->kind, PYV_CALL);
    cr_assert(pytok_is_op(src, &t[pos], ";"));
    span_is(pyval_arg(v, 2), src, "torch.float32");
    pyval_free(v);
    free(t);
}

Test(pylit, json_rendering) {
    const char *src = "{'a': [1, 2.5, 'x', None, True], 3: (1,), 'c': foo(1), 'd': {(0,): 1}}";
    pyval *v = parse_ok(src);
    json_t *j = pyval_to_json(v, src);
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    cr_assert_str_eq(s, "{\"a\":[1,2.5,\"x\",null,true],\"3\":[1],\"c\":{\"expr\":\"foo(1)\"},"
                        "\"d\":{\"expr\":\"{(0,): 1}\"}}");
    free(s);
    json_decref(j);
    pyval_free(v);
}

Test(pylit, token_level_lookups) {
    const char *src = "triton_heuristics.pointwise(size_hints={'x': 1024}, "
                      "triton_meta={'signature': {'in_ptr0': '*fp32'}, 'configs': [{(0,): []}]}, "
                      "inductor_meta={'grid_type': 'Grid1D', \"mutated_arg_names\": []})";
    pytok *t = NULL;
    size_t n = 0;
    kerr e = {0};
    cr_assert_eq(pylex_all(src, strlen(src), PYLEX_NOINDENT, &t, &n, &e), 0);
    size_t open = 3;   /* triton_heuristics . pointwise ( */
    cr_assert(pytok_is_op(src, &t[open], "("));
    cr_assert_eq(pylit_match(src, t, n, open), n - 3);  /* ) NEWLINE END */
    size_t v0, v1, k0, k1;
    cr_assert(pylit_find_kwarg(src, t, n, open, "triton_meta", &v0, &v1));
    cr_assert(pytok_is_op(src, &t[v0], "{"));
    cr_assert(pylit_find_key(src, t, v1, v0, "signature", &k0, &k1));
    pyval *sig = NULL;
    size_t pos = k0;
    cr_assert_eq(pylit_parse_tokens(src, t, k1, &pos, &sig, &e), 0);
    cr_assert_eq(pos, k1);
    cr_assert_str_eq(pyval_dict_get(sig, "in_ptr0")->s, "*fp32");
    pyval_free(sig);
    cr_assert(!pylit_find_key(src, t, v1, v0, "constants", &k0, &k1));
    cr_assert(pylit_find_kwarg(src, t, n, open, "inductor_meta", &v0, &v1));
    cr_assert(pylit_find_key(src, t, v1, v0, "mutated_arg_names", &k0, &k1));
    cr_assert_eq(k1 - k0, 2);   /* [ ] */
    cr_assert(!pylit_find_kwarg(src, t, n, open, "filename", &v0, &v1));
    cr_assert(!pylit_find_arg(src, t, n, open, 0, &v0, &v1));   /* keywords only */
    free(t);

    const char *s2 = "reduction([128, 32768], reduction_hint=1)";
    cr_assert_eq(pylex_all(s2, strlen(s2), PYLEX_NOINDENT, &t, &n, &e), 0);
    cr_assert(pylit_find_arg(s2, t, n, 1, 0, &v0, &v1));
    cr_assert(pytok_is_op(s2, &t[v0], "["));
    cr_assert_eq(v1 - v0, 5);
    cr_assert(!pylit_find_arg(s2, t, n, 1, 1, &v0, &v1));
    free(t);
}

Test(pylit, errors_name_the_line) {
    kerr e = parse_err("f(1 2)");
    cr_assert(strstr(e.msg, "line 1:") && strstr(e.msg, "'2'"), "%s", e.msg);
    e = parse_err("{'a': 1,\n 'b': }");
    cr_assert(strstr(e.msg, "line 2"), "%s", e.msg);
    e = parse_err("1 +");
    cr_assert(strstr(e.msg, "line 1:"), "%s", e.msg);
    e = parse_err("a b");
    cr_assert(strstr(e.msg, "line 1: unexpected 'b'"), "%s", e.msg);
    e = parse_err("a = 1");
    cr_assert(strstr(e.msg, "'=' after the expression"), "%s", e.msg);
    e = parse_err("f(");
    cr_assert(strstr(e.msg, "never closed"), "%s", e.msg);
    e = parse_err("");
    cr_assert(strstr(e.msg, "line 1"), "%s", e.msg);
    e = parse_err("x.1");
    cr_assert(strstr(e.msg, "line 1"), "%s", e.msg);
}

Test(pylit, first_line_offsets_messages) {
    pyval *v = NULL;
    kerr e = {0};
    cr_assert_eq(pylit_parse("\n\nf(1 2)", 7, 30, &v, &e), KOPT_E_PARSE);
    cr_assert(strstr(e.msg, "line 32:"), "%s", e.msg);
}

Test(pylit, kind_names) {
    cr_assert_str_eq(pyv_kind_name(PYV_DICT), "dict");
    cr_assert_str_eq(pyv_kind_name(PYV_RAW), "raw");
    cr_assert_str_eq(pyv_kind_name((pyv_kind)99), "?");
}

/* ---------- pathological nesting: an error naming the line, never a stack overflow ---------- */

static double tp_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* prefix * n + mid + suffix * n, on the line after "\n" * (line - 1) */
static char *tp_repeat(int line, const char *prefix, size_t n, const char *mid, const char *suffix) {
    kbuf b = KBUF_INIT;
    for (int i = 1; i < line; i++) kbuf_putc(&b, '\n');
    for (size_t i = 0; i < n; i++) kbuf_puts(&b, prefix);
    kbuf_puts(&b, mid);
    for (size_t i = 0; i < n; i++) kbuf_puts(&b, suffix);
    return kbuf_steal(&b);
}

Test(pylit, deep_nesting_is_an_error) {
    static const struct { const char *prefix, *mid, *suffix; size_t n; } cases[] = {
        {"-", "1", "", 100000},          /* unary minus on a literal */
        {"-", "x", "", 100000},          /* unary minus on a name: NEG nodes */
        {"+-", "x", "", 50000},
        {"- ", "x", "", 50000},
        {"(", "1", ")", 100000},         /* brackets: stopped by the lexer */
        {"[", "1", "]", 100000},
        {"{", "1", "}", 100000},
        {"f(", "1", ")", 50000},
        {"-(", "1", ")", 50000},
        {"", "a", ".b", 50000},          /* attribute chain: an ATTR tree as deep */
        {"", "f", "()", 50000},          /* call chain */
        {"", "x", "[0]", 33000},         /* subscript chain */
        {"", "x", ".y(0)[1]", 12000},
        {"", "-a", ".b", 199},           /* unary and postfix counted together */
        {"(-", "1", ")", 150},           /* 150 brackets, 150 signs */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *src = tp_repeat(3, cases[i].prefix, cases[i].n, cases[i].mid, cases[i].suffix);
        double t0 = tp_now();
        pyval *v = NULL;
        kerr e = {0};
        int rc = pylit_parse(src, strlen(src), 1, &v, &e);
        cr_assert_eq(rc, KOPT_E_PARSE, "case %zu: rc %d", i, rc);
        cr_assert_null(v);
        cr_assert(strstr(e.msg, "line 3:") && strstr(e.msg, "nesting deeper than 200"),
                  "case %zu: %s", i, e.msg);
        cr_assert_lt(tp_now() - t0, 1.0, "case %zu", i);
        free(src);
    }
}

Test(pylit, long_flat_or_iterative_forms_still_parse) {
    /* constructs the parser reads iteratively have no depth limit */
    static const struct { const char *prefix, *mid, *suffix; size_t n; pyv_kind kind; } cases[] = {
        {"not ", "x", "", 25000, PYV_RAW},
        {"~", "x", "", 100000, PYV_RAW},
        {"lambda: ", "0", "", 10000, PYV_RAW},
        {"", "1", " - 1", 30000, PYV_RAW},
        {"", "a", ".b - a", 20000, PYV_RAW},
        {"", "x", ", x", 30000, PYV_TUPLE},
        {"[", "1", "]", 190, PYV_LIST},       /* within the limit */
        {"-", "7", "", 190, PYV_INT},
        {"", "a", ".b", 190, PYV_ATTR},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *src = tp_repeat(1, cases[i].prefix, cases[i].n, cases[i].mid, cases[i].suffix);
        double t0 = tp_now();
        pyval *v = parse_ok(src);
        cr_assert_eq(v->kind, cases[i].kind, "case %zu: %s", i, pyv_kind_name(v->kind));
        cr_assert_lt(tp_now() - t0, 1.0, "case %zu", i);
        if (v->kind == PYV_INT) cr_assert_eq(v->i, 7);   /* 190 signs: an even count */
        json_t *j = pyval_to_json(v, src);
        cr_assert_not_null(j);
        json_decref(j);
        pyval_free(v);
        free(src);
    }
}
