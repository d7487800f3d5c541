/* test_static_verdicts.c — gate 1's static rules (gates/static, gates/static_names) at the edges
 * that tests/unit/test_static.c leaves open: the order of a report whatever the order the
 * violations were found in, one-line texts of offending code that spans lines, what is and is
 * not a call at module level, the allowlists' own edges (module paths, members, builtins,
 * strings), each case asserting the rule and the text a user sees. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gates/candidate.h"
#include "gates/static.h"
#include "gates/static_names.h"
#include "util/buf.h"

/* A form-L candidate: a jit kernel (lines 1-9), `pre` at module level, then launch with `body`
 * before its kernel launch. */
#define HDR                                                                                        \
    "import torch\n"                                                                               \
    "import triton\n"                                                                              \
    "import triton.language as tl\n"                                                               \
    "@triton.jit\n"                                                                                \
    "def _k(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n"                                   \
    "    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)\n"                                \
    "    tl.store(out_ptr0 + offs, tl.load(in_ptr0 + offs, mask=offs < xnumel), mask=offs < xnumel)\n" \
    "\n"                                                                                           \
    "\n"

static char *make_l(const char *pre, const char *body) {
    return kasprintf("%s%sdef launch(in_ptr0, out_ptr0, xnumel, stream=None):\n%s"
                     "    _k[(triton.cdiv(xnumel, 1024),)](in_ptr0, out_ptr0, xnumel, XBLOCK=1024)\n",
                     HDR, pre, body);
}

static static_report report_of(const char *text, const static_opts *o) {
    candidate *c = NULL;
    kerr e = {0};
    cr_assert_eq(candidate_parse(text, strlen(text), &c, &e), 0, "candidate_parse: %s\n%s", e.msg, text);
    static_report r = {0};
    kerr se = {0};
    int rc = static_check(c, o, &r, &se);
    cr_assert_eq(rc, r.n ? KOPT_E_CANDIDATE : 0, "static_check's return and its report disagree");
    candidate_free(c);
    return r;
}

static char *report_text(const static_report *r) {
    kbuf b = KBUF_INIT;
    static_report_format(r, "cand.py", &b);
    return kbuf_steal(&b);
}

/* The report of `text` is exactly these rules (and texts, where given), in this order. */
static void expect_report(const char *text, const static_opts *o, size_t n, const char *const *rules,
                          const char *const *texts) {
    static_opts dflt = {.allow_launcher = 1, .model_dtype = "float32"};
    static_report r = report_of(text, o ? o : &dflt);
    char *rt = report_text(&r);
    cr_expect_eq(r.n, n, "expected %zu violations; report:\n%s\ntext:\n%s", n, rt, text);
    for (size_t i = 0; i < n && i < r.n; i++) {
        cr_expect_str_eq(static_rule_name(r.v[i].rule), rules[i], "violation %zu; report:\n%s", i, rt);
        if (texts && texts[i]) cr_expect_str_eq(r.v[i].text, texts[i], "violation %zu; report:\n%s", i, rt);
    }
    free(rt);
    static_report_free(&r);
}
static void expect_one(const char *pre, const char *body, const char *rule, const char *vtext) {
    char *t = make_l(pre, body);
    const char *rules[] = {rule}, *texts[] = {vtext};
    expect_report(t, NULL, 1, rules, texts);
    free(t);
}
static void expect_clean(const char *pre, const char *body) {
    char *t = make_l(pre, body);
    expect_report(t, NULL, 0, NULL, NULL);
    free(t);
}

/* ---------- the report ---------- */

/* Violations at one position are in the rules' order, whichever was found first. */
Test(static_verdicts, same_position_sorted_by_rule_either_way) {
    static const char *const env_io[] = {"env", "io"};
    char *t = make_l("from os import environ, system\n", "");
    expect_report(t, NULL, 2, env_io, NULL);
    free(t);
    t = make_l("from os import system, environ\n", "");
    expect_report(t, NULL, 2, env_io, NULL);
    free(t);
    /* one string token, two rules (a backslash, a timer register): string before timer */
    static const char *const st[] = {"string", "timer"};
    t = make_l("", "    s = '%globaltimer\\n'\n");
    expect_report(t, NULL, 2, st, NULL);
    free(t);
}

/* A line break inside the offending text becomes one space, whatever the break (\n, \r\n, a lone
 * \r, blank lines) and whether text follows it at once. */
Test(static_verdicts, breaks_in_texts_become_one_space) {
    expect_one("", "    y = (torch.\nmatmul(in_ptr0, in_ptr0))\n", "torch-compute", "torch. matmul");
    expect_one("", "    y = (torch.\r\nmatmul(in_ptr0, in_ptr0))\n", "torch-compute", "torch. matmul");
    expect_one("", "    y = (torch.\rmatmul(in_ptr0, in_ptr0))\n", "torch-compute", "torch. matmul");
    expect_one("", "    y = (torch.\n\n  \r\n\tmatmul(in_ptr0, in_ptr0))\n", "torch-compute", "torch. matmul");
    expect_one("", "    y = (torch.  \n\n matmul(in_ptr0, in_ptr0))\n", "torch-compute", "torch. matmul");
    /* a string token over lines (a backslash in it: rule string) */
    expect_one("", "    s = '''a\\x\n  b\r\n\r\nc\rd'''\n", "string", "'''a\\x b c d'''");
}

/* ---------- module level ---------- */

/* A parenthesised expression is not a call, also as the file's first token. */
Test(static_verdicts, a_leading_parenthesis_is_not_a_call) {
    char *l = make_l("", "");
    char *t = kasprintf("(1)\n[2]\n%s", l);
    expect_report(t, NULL, 0, NULL, NULL);
    free(t);
    /* ... while a call after it is one */
    t = kasprintf("(print)(1)\n%s", l);
    static const char *const state[] = {"state"};
    expect_report(t, NULL, 1, state, NULL);
    free(t);
    free(l);
}

/* Module-level values made by the allowed calls (their arguments judged too) pass; math.* is
 * allowed by prefix, as a call and as a value. */
Test(static_verdicts, allowed_module_level_calls) {
    expect_clean("import math\nB = triton.next_power_of_2(max(1, 2))\nC = int(math.floor(2.5)) + len((1, 2))\n"
                 "D = math.pi\n", "");
    expect_one("import math\nB = max(1, print())\n", "", "state", NULL);
}

/* The arguments of an allowed module-level call run at import time too, and min / max / tuple
 * hand back what they are given: a call or a display inside them is judged like the value
 * (found by this file's edge cases: each of these passed gate 1 before). The dict a
 * triton.Config is given is its kwargs, which the Config rule follows by name. */
Test(static_verdicts, allowed_calls_do_not_excuse_their_arguments) {
    static const char *const MK = "def _mk():\n    seen = {}\n\n    def remember(key):\n        first = key not in seen\n"
                                  "        seen[key] = 1\n        return first\n\n    return remember\n\n\n";
    char *pre = kasprintf("%s_FIRST = max((_mk(),))\n", MK);
    expect_one(pre, "", "state", "_FIRST = max((_mk(),))");
    free(pre);
    expect_one("_T = tuple([{}])\n", "", "state", "_T = tuple([{}])");
    expect_one("_T = frozenset({1, 2})\n", "", "state", "_T = frozenset({1, 2})");
    expect_one("_N = int(len([1]))\n", "", "state", "_N = int(len([1]))");
    pre = kasprintf("import math\n%smath.floor(_mk()(1))\n", MK);
    expect_one(pre, "", "state", "math.floor(_mk()(1))");
    free(pre);
    expect_one("CFG = (triton.Config({'X': print()}),)\n", "", "state", "CFG = (triton.Config({'X': print()}),)");
    /* still allowed: displays given to triton.Config, tuples, nested allowed calls, and calls
     * inside a lambda's body, which do not run at import time */
    expect_clean("CONFIGS = (triton.Config({'XBLOCK': 64, 'R': [1]}, num_warps=4),)\n"
                 "_F = frozenset((1, 2))\n_M = max(min(1, 2), abs(-3))\n(lambda: print(1))\nG = lambda: print(2)\n",
                 "");
}
