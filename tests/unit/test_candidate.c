/* test_candidate.c — the candidate model (gates/candidate): form detection, the recorded
 * parameters / definitions / imports / binding, malformed files and their line numbers, the
 * interface check against kernels of real fixtures, and stitching: the form-L renaming (names
 * in strings, comments, after '.', keyword names and locals untouched), the form-I triple-quote
 * escaping (round trip through artifact_emit and artifact_parse) and the launch shim. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "artifact/pylex.h"
#include "artifact/pylit.h"
#include "gates/candidate.h"
#include "gates/gate1.h"
#include "gates/static.h"
#include "testutil.h"
#include "util/buf.h"

#define LSM "triton_red_fused__log_softmax_prepare_softmax_online_sub_0"
#define GELU "triton_poi_fused_add_gelu_mul_0"

static artifact *load_fixture(const char *rel, char **text) {
    size_t len;
    *text = tu_read_fixture(rel, &len);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(*text, len, &a, &e), 0, "%s: %s", rel, e.msg);
    return a;
}

static const art_kernel *kernel_of(const artifact *a, const char *name) {
    int k = artifact_find_kernel(a, name);
    cr_assert_geq(k, 0, "no kernel %s", name);
    return &a->kernels[k];
}

static const char *const LAUNCHER =
    "# kopt-candidate: replaces=" LSM "\n"
    "import triton\n"
    "import triton.language as tl\n"
    "from torch._inductor.runtime.triton_helpers import math as tl_math\n"
    "\n"
    "MAX_BLOCK = 4096\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _row_log_softmax(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):\n"
    "    row = tl.program_id(0).to(tl.int64)\n"
    "    offs = tl.arange(0, R0_BLOCK)\n"
    "    m = tl.full([R0_BLOCK], float('-inf'), tl.float32)\n"
    "    for start in tl.range(0, r0_numel, R0_BLOCK):\n"
    "        x = tl.load(in_ptr0 + row * r0_numel + start + offs, mask=start + offs < r0_numel,\n"
    "                    other=float('-inf'))\n"
    "        m = tl.maximum(m, x)\n"
    "    mx = tl.max(m, axis=0)\n"
    "    s = tl.zeros([R0_BLOCK], tl.float32)\n"
    "    for start in tl.range(0, r0_numel, R0_BLOCK):\n"
    "        x = tl.load(in_ptr0 + row * r0_numel + start + offs, mask=start + offs < r0_numel,\n"
    "                    other=float('-inf'))\n"
    "        s += tl.exp(x - mx)\n"
    "    lse = mx + tl_math.log(tl.sum(s, axis=0))\n"
    "    for start in tl.range(0, r0_numel, R0_BLOCK):\n"
    "        mask = start + offs < r0_numel\n"
    "        x = tl.load(in_ptr0 + row * r0_numel + start + offs, mask=mask, other=0.0)\n"
    "        tl.store(out_ptr2 + row * r0_numel + start + offs, x - lse, mask=mask)\n"
    "\n"
    "\n"
    "def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):\n"
    "    block = min(triton.next_power_of_2(r0_numel), MAX_BLOCK)\n"
    "    _row_log_softmax[(xnumel,)](in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK=block,\n"
    "                                num_warps=8)\n";

static const char *span_text(const candidate *c, const cand_def *d, char *buf, size_t n) {
    size_t l = d->len < n - 1 ? d->len : n - 1;
    memcpy(buf, c->text + d->off, l);
    buf[l] = '\0';
    return buf;
}

/* ---------- parsing ---------- */

Test(static_candidate, form_l_model) {
    candidate *c = tu_parse_candidate(LAUNCHER);
    cr_assert_eq(candidate_form(c), CAND_FORM_L);
    cr_assert_str_eq(candidate_form_name(candidate_form(c)), "L");
    cr_assert_str_eq(candidate_replaces(c), LSM);
    cr_assert_eq(c->replaces_line, 1);
    cr_assert_str_eq(candidate_main_name(c), "launch");
    static const char *const want[] = {"in_ptr0", "out_ptr2", "xnumel", "r0_numel"};
    cr_assert_eq(candidate_nparams(c), 4);
    for (size_t i = 0; i < 4; i++) {
        cr_assert_str_eq(candidate_param(c, i)->name, want[i]);
        cr_assert_eq(candidate_param(c, i)->constexpr_, 0);
    }
    cr_assert_null(candidate_param(c, 4));
    cr_assert_eq(c->launch_stream, 1);
    cr_assert_eq(c->njit, 1);
    cr_assert_str_eq(c->jit_names[0], "_row_log_softmax");
    cr_assert(candidate_is_jit(c, "_row_log_softmax") && !candidate_is_jit(c, "launch"));

    cr_assert_eq(c->ndefs, 3);
    char buf[256];
    cr_assert_str_eq(c->defs[0].name, "MAX_BLOCK");
    cr_assert_eq(c->defs[0].kind, CAND_DEF_ASSIGN);
    cr_assert_eq(c->defs[0].line, 6);
    cr_assert_str_eq(span_text(c, &c->defs[0], buf, sizeof buf), "MAX_BLOCK = 4096");
    cr_assert_str_eq(c->defs[1].name, "_row_log_softmax");
    cr_assert_eq(c->defs[1].kind, CAND_DEF_FUNC);
    cr_assert_eq(c->defs[1].line, 9, "the span starts at the decorator");
    cr_assert(c->defs[1].jit && !c->defs[1].heuristic);
    cr_assert(!strncmp(span_text(c, &c->defs[1], buf, sizeof buf), "@triton.jit\ndef _row", 20));
    cr_assert_str_eq(c->defs[2].name, "launch");
    cr_assert_eq(c->defs[2].line, 31);
    span_text(c, &c->defs[2], buf, sizeof buf);
    cr_assert(!strncmp(buf, "def launch(", 11));
    cr_assert(strstr(buf, "num_warps=8)"));
    cr_assert_eq(c->defs[2].off + c->defs[2].len, strlen(LAUNCHER) - 1, "ends at the last token");

    cr_assert_eq(c->nimports, 3);
    cr_assert_str_eq(c->imports[0].module, "triton");
    cr_assert_str_eq(c->imports[0].bound, "triton");
    cr_assert_null(c->imports[0].name);
    cr_assert_str_eq(c->imports[1].module, "triton.language");
    cr_assert_str_eq(c->imports[1].bound, "tl");
    cr_assert_str_eq(c->imports[1].target, "triton.language");
    cr_assert_str_eq(c->imports[2].module, "torch._inductor.runtime.triton_helpers");
    cr_assert_str_eq(c->imports[2].name, "math");
    cr_assert_str_eq(c->imports[2].bound, "tl_math");
    cr_assert_str_eq(c->imports[2].target, "torch._inductor.runtime.triton_helpers.math");
    cr_assert_eq(c->imports[2].line, 4);
    cr_assert(c->imports[2].toplevel);
    candidate_free(c);
    candidate_free(NULL);
}

Test(static_candidate, form_i_model_from_fixture) {
    char *text;
    artifact *a = load_fixture("tests/fixtures/inductor/01_gelu_residual_g0.py", &text);
    const art_kernel *k = kernel_of(a, GELU);
    candidate *c = NULL;
    kerr e = {0};
    cr_assert_eq(candidate_parse(k->source, k->source_len, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(candidate_form(c), CAND_FORM_I);
    cr_assert_str_eq(candidate_form_name(CAND_FORM_I), "I");
    cr_assert_null(candidate_replaces(c));
    cr_assert_str_eq(candidate_main_name(c), GELU);
    cr_assert_str_eq(c->defs[c->main_def].heuristic, "pointwise");
    cr_assert_eq(candidate_nparams(c), 4);
    static const char *const want[] = {"in_ptr0", "out_ptr0", "xnumel", "XBLOCK"};
    for (size_t i = 0; i < 4; i++) {
        cr_assert_str_eq(candidate_param(c, i)->name, want[i]);
        cr_assert_eq(candidate_param(c, i)->constexpr_, i == 3);
    }
    cr_assert_eq(candidate_check_interface(c, k, &e), 0, "%s", e.msg);
    candidate_free(c);
    artifact_free(a);
    free(text);
}

Test(static_candidate, launch_parameter_details) {
    const char *t1 = "import triton\n@triton.jit\ndef k(p):\n    pass\n"
                     "def launch(a, b, stream):\n    pass\n";
    candidate *c = tu_parse_candidate(t1);
    cr_assert_eq(candidate_nparams(c), 2);
    cr_assert_eq(c->launch_stream, 1);
    candidate_free(c);
    const char *t2 = "import triton\n@triton.jit\ndef k(p):\n    pass\n"
                     "def launch(stream, a, *rest, n=3):\n    pass\n";
    c = tu_parse_candidate(t2);
    cr_assert_eq(candidate_nparams(c), 4);
    cr_assert_eq(c->launch_stream, 0);
    cr_assert_str_eq(candidate_param(c, 0)->name, "stream");
    cr_assert_str_eq(candidate_param(c, 2)->name, "*rest");
    cr_assert(candidate_param(c, 3)->has_default);
    candidate_free(c);
    /* decorators are read through import aliases */
    const char *t4 = "import triton as tr\n@tr.jit\ndef k(p):\n    pass\n"
                     "def launch(a):\n    pass\n";
    c = tu_parse_candidate(t4);
    cr_assert_eq(c->njit, 1);
    cr_assert_eq(c->launch_stream, 0);
    candidate_free(c);
    /* form I: constexpr through the full module path, no annotation, other annotations */
    const char *t3 = "import triton\nimport triton.language as tl\n"
                     "from torch._inductor.runtime import triton_heuristics\n"
                     "@triton_heuristics.pointwise(size_hints={'x': 16})\n@triton.jit\n"
                     "def K(a, b: int, C: triton.language.constexpr, D : tl.constexpr = 4):\n"
                     "    pass\n";
    c = tu_parse_candidate(t3);
    cr_assert_eq(candidate_form(c), CAND_FORM_I);
    cr_assert_eq(candidate_nparams(c), 4);
    cr_assert(!candidate_param(c, 0)->constexpr_ && !candidate_param(c, 1)->constexpr_);
    cr_assert(candidate_param(c, 2)->constexpr_ && candidate_param(c, 3)->constexpr_);
    candidate_free(c);
}

typedef struct bad {
    const char *text, *needle;
    int line;
} bad;

Test(static_candidate, malformed_files_name_a_line) {
    static const bad cases[] = {
        {"import triton\n\nx = 'unterminated\n", "unterminated", 3},
        {"import triton\n\ndef launch(a):\n    pass\n", "no top-level @triton.jit", 1},
        {"import triton\n@triton.jit\ndef k(a):\n    pass\n", "no form", 1},
        {"import triton\n@triton.jit\ndef k(a):\n    pass\n\n"
         "@triton_heuristics.pointwise()\n@triton.jit\ndef K(a):\n    pass\n"
         "def launch(a):\n    pass\n",
         "both forms", 6},
        {"import triton\n@triton.jit\ndef k(a):\n    pass\ndef launch(a):\n    pass\n"
         "def launch(a, b):\n    pass\n",
         "second top-level `def launch`", 7},
        {"import triton\n@triton.jit\ndef launch(a):\n    pass\n", "plain Python function", 2},
        {"import triton\n@triton_heuristics.pointwise()\n@triton.jit\ndef A(a):\n    pass\n"
         "@triton_heuristics.pointwise()\n@triton.jit\ndef B(a):\n    pass\n",
         "second @triton_heuristics", 6},
        {"# kopt-candidate: replaces=a\n# kopt-candidate: replaces=b\nimport triton\n",
         "conflicting bindings", 2},
        {"# kopt-candidate: replaces=not-a-name\nimport triton\n", "not a kernel name", 1},
        /* an ATen call outside the vendor regions' allowlist is not a binding */
        {"# kopt-candidate: replaces=torch.ops.aten.cumsum.default\nimport triton\n", "not a kernel name", 1},
        {"# kopt-candidate: replaces=torch.ops.aten.avg_pool3d\nimport triton\n", "not a kernel name", 1},
        {"# kopt-candidate: replaces=\nimport triton\n", "names no kernel", 1},
        {"import triton\n@triton.jit\nx = 1\n", "decorator must be followed", 2},
        {"  import triton\n", "indentation", 1},
        {"import triton\n@triton.jit\ndef k(a):\n    return (a,\n", "never closed", 4},
        {"import triton\n@triton.jit\ndef k(a)\n    pass\n", "no ':'", 3},
        {"", "no top-level @triton.jit", 1},
    };
    /* pathological nesting is refused, not recursed into */
    kbuf deep = KBUF_INIT;
    kbuf_puts(&deep, "import triton\nf = ");
    for (int i = 0; i < 5000; i++) kbuf_puts(&deep, "lambda: ");
    kbuf_puts(&deep, "0\n");
    candidate *dc = NULL;
    kerr de = {0};
    cr_assert_eq(candidate_parse(deep.data, deep.len, &dc, &de), KOPT_E_CANDIDATE);
    cr_assert(strstr(de.msg, "nested too deeply") && !strncmp(de.msg, "line 2:", 7), "%s", de.msg);
    kbuf_free(&deep);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        candidate *c = (candidate *)1;
        kerr e = {0};
        int rc = candidate_parse(cases[i].text, strlen(cases[i].text), &c, &e);
        cr_assert_eq(rc, KOPT_E_CANDIDATE, "case %zu: rc %d (%s)", i, rc, e.msg);
        cr_assert_eq(e.code, KOPT_E_CANDIDATE);
        cr_assert_null(c, "case %zu", i);
        cr_assert(strstr(e.msg, cases[i].needle), "case %zu: <<%s>> lacks <<%s>>", i, e.msg,
                  cases[i].needle);
        char want[32];
        snprintf(want, sizeof want, "line %d:", cases[i].line);
        cr_assert(!strncmp(e.msg, want, strlen(want)), "case %zu: <<%s>> should start <<%s>>", i,
                  e.msg, want);
    }
}

static int ref_of(const candidate *c, int line, const char *name, int nth) {
    for (size_t i = 0; i < c->ntoks; i++)
        if ((int)c->toks[i].line == line && pytok_is_name(c->text, &c->toks[i], name) && !nth--)
            return c->ref[i];
    cr_assert_fail("no name %s on line %d", name, line);
    return -1;
}

Test(static_candidate, name_resolution) {
    const char *t = "import triton\n"                                    /* 1 */
                    "import triton.language as tl\n"                     /* 2 */
                    "N = 4\n"                                            /* 3 */
                    "@triton.jit\n"                                      /* 4 */
                    "def k(p, N: tl.constexpr):\n"                       /* 5 */
                    "    x = N + p\n"                                    /* 6 */
                    "class C:\n"                                         /* 7 */
                    "    N = 5\n"                                        /* 8 */
                    "    M = N\n"                                        /* 9 */
                    "    def f(self):\n"                                 /* 10 */
                    "        return N + self.N\n"                        /* 11 */
                    "def launch(a, b=N):\n"                              /* 12 */
                    "    f = lambda N=N: N + a\n"                        /* 13 */
                    "    for i in range(N):\n"                           /* 14 */
                    "        k[(1,)](a, N=N)\n"                          /* 15 */
                    "    import math as N2\n"                            /* 16 */
                    "    return [j for j in (N2, f, i, C, print)]\n";    /* 17 */
    candidate *c = tu_parse_candidate(t);
    cr_assert_eq(ref_of(c, 3, "N", 0), CREF_MODULE);
    cr_assert_eq(ref_of(c, 5, "k", 0), CREF_MODULE);
    cr_assert_eq(ref_of(c, 5, "N", 0), CREF_PARAM);
    cr_assert_eq(ref_of(c, 6, "N", 0), CREF_LOCAL, "a parameter shadows the global");
    cr_assert_eq(ref_of(c, 6, "x", 0), CREF_LOCAL);
    cr_assert_eq(ref_of(c, 9, "N", 0), CREF_LOCAL, "class body");
    cr_assert_eq(ref_of(c, 11, "N", 0), CREF_MODULE, "class scope is not seen from methods");
    cr_assert_eq(ref_of(c, 11, "N", 1), CREF_ATTR);
    cr_assert_eq(ref_of(c, 12, "N", 0), CREF_MODULE, "defaults are evaluated outside");
    cr_assert_eq(ref_of(c, 12, "b", 0), CREF_PARAM);
    cr_assert_eq(ref_of(c, 13, "N", 0), CREF_PARAM);
    cr_assert_eq(ref_of(c, 13, "N", 1), CREF_MODULE, "lambda default");
    cr_assert_eq(ref_of(c, 13, "N", 2), CREF_LOCAL, "lambda body");
    cr_assert_eq(ref_of(c, 13, "a", 0), CREF_LOCAL, "closure");
    cr_assert_eq(ref_of(c, 14, "N", 0), CREF_MODULE);
    cr_assert_eq(ref_of(c, 14, "i", 0), CREF_LOCAL);
    cr_assert_eq(ref_of(c, 14, "range", 0), CREF_FREE);
    cr_assert_eq(ref_of(c, 15, "N", 0), CREF_KWNAME);
    cr_assert_eq(ref_of(c, 15, "N", 1), CREF_MODULE);
    cr_assert_eq(ref_of(c, 17, "N2", 0), CREF_LOCAL);
    cr_assert_eq(ref_of(c, 17, "C", 0), CREF_MODULE);
    cr_assert_eq(ref_of(c, 2, "tl", 0), CREF_IMPORT);
    cr_assert_eq(ref_of(c, 5, "tl", 0), CREF_IMPORT);
    cr_assert(c->tflags[0] & CTOK_IN_IMPORT);
    /* the module names that stitching renames */
    int seen = 0;
    for (size_t i = 0; i < c->nmodule_names; i++) {
        cr_assert(strcmp(c->module_names[i], "tl") && strcmp(c->module_names[i], "triton"));
        seen += !strcmp(c->module_names[i], "N") + !strcmp(c->module_names[i], "C") +
                !strcmp(c->module_names[i], "launch");
    }
    cr_assert_eq(seen, 3);
    cr_assert_str_eq(cand_ref_name(CREF_KWNAME), "kwname");
    candidate_free(c);
}

/* ---------- interface ---------- */

static void expect_iface_error(const char *text, const art_kernel *k, const char *needle) {
    candidate *c = tu_parse_candidate(text);
    kerr e = {0};
    cr_assert_eq(candidate_check_interface(c, k, &e), KOPT_E_CANDIDATE, "accepted:\n%s", text);
    cr_assert(strstr(e.msg, needle), "<<%s>> lacks <<%s>>", e.msg, needle);
    candidate_free(c);
}

Test(static_candidate_iface, launcher_against_fixture_kernels) {
    char *t3, *t1;
    artifact *a3 = load_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &t3);
    artifact *a1 = load_fixture("tests/fixtures/inductor/01_gelu_residual_g0.py", &t1);
    const art_kernel *k = kernel_of(a3, LSM);
    candidate *c = tu_parse_candidate(LAUNCHER);
    kerr e = {0};
    cr_assert_eq(candidate_check_interface(c, k, &e), 0, "%s", e.msg);
    candidate_free(c);

    const char *sig = "def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):";
    struct {
        const char *sig, *needle;
    } cases[] = {
        {"def launch(in_ptr0, xnumel, out_ptr2, r0_numel, stream=None):",
         "launch parameter 2 is xnumel, the kernel has out_ptr2"},
        {"def launch(in_ptr0, out_ptr2, xnumel):", "parameter 4 (r0_numel) is missing"},
        {"def launch(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK, stream=None):",
         "launch parameter 5 is R0_BLOCK, the kernel has no more runtime parameters"},
        {"def launch(in_ptr1, out_ptr2, xnumel, r0_numel):",
         "launch parameter 1 is in_ptr1, the kernel has in_ptr0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *text = tu_replace_once(LAUNCHER, sig, cases[i].sig);
        expect_iface_error(text, k, cases[i].needle);
        expect_iface_error(text, k, "expected (in_ptr0, out_ptr2, xnumel, r0_numel)");
        free(text);
    }
    /* bound to the log-softmax kernel, offered for the gelu kernel */
    expect_iface_error(LAUNCHER, kernel_of(a1, GELU), "bound to kernel " LSM);
    artifact_free(a3);
    artifact_free(a1);
    free(t3);
    free(t1);
}

Test(static_candidate_iface, form_i_signature_and_name) {
    char *t1;
    artifact *a1 = load_fixture("tests/fixtures/inductor/01_gelu_residual_g0.py", &t1);
    const art_kernel *k = kernel_of(a1, GELU);
    char *src = kstrndup(k->source, k->source_len);
    char *no_cexpr = tu_replace_once(src, "XBLOCK : tl.constexpr", "XBLOCK");
    expect_iface_error(no_cexpr, k, "parameter 4 (XBLOCK) is not annotated tl.constexpr");
    char *cexpr = tu_replace_once(src, "xnumel, XBLOCK", "xnumel : tl.constexpr, XBLOCK");
    expect_iface_error(cexpr, k, "parameter 3 (xnumel) is annotated tl.constexpr");
    char *renamed = tu_replace_once(src, "def " GELU, "def my_gelu");
    expect_iface_error(renamed, k, "must be named " GELU);
    char *fewer = tu_replace_once(src, "out_ptr0, xnumel, XBLOCK", "out_ptr0, XBLOCK");
    expect_iface_error(fewer, k, "the kernel function parameter 3 is XBLOCK, the kernel has "
                                 "xnumel");
    free(no_cexpr);
    free(cexpr);
    free(renamed);
    free(fewer);
    free(src);
    artifact_free(a1);
    free(t1);
}

/* ---------- stitching ---------- */

Test(static_candidate_stitch, form_l_renames_module_names_only) {
    const char *t = "# kopt-candidate: replaces=K\n"
                    "import triton\n"
                    "import triton.language as tl\n"
                    "\n"
                    "BLOCK = 128\n"
                    "note = \"BLOCK launch _k\"  # BLOCK in a comment\n"
                    "\n"
                    "\n"
                    "@triton.jit\n"
                    "def _k(x_ptr, n, BLOCK: tl.constexpr):\n"
                    "    o = tl.arange(0, BLOCK)\n"
                    "    tl.store(x_ptr + o, tl.load(x_ptr + o))\n"
                    "\n"
                    "\n"
                    "class Box:\n"
                    "    BLOCK = 4\n"
                    "\n"
                    "    def get(self):\n"
                    "        return BLOCK + self.BLOCK\n"
                    "\n"
                    "\n"
                    "def launch(x_ptr, n, stream=None):\n"
                    "    local = BLOCK  # BLOCK\n"
                    "    _k[(1,)](x_ptr, n, BLOCK=BLOCK)\n"
                    "    return Box().get, triton.language, note, launch\n"
                    "\n\n";
    const char *want =
        "# kopt: launcher-form candidate for K; its top-level names carry the prefix _kopt_K__\n"
        "# kopt-candidate: replaces=K\n"
        "import triton\n"
        "import triton.language as tl\n"
        "\n"
        "_kopt_K__BLOCK = 128\n"
        "_kopt_K__note = \"BLOCK launch _k\"  # BLOCK in a comment\n"
        "\n"
        "\n"
        "@triton.jit\n"
        "def _kopt_K___k(x_ptr, n, BLOCK: tl.constexpr):\n"
        "    o = tl.arange(0, BLOCK)\n"
        "    tl.store(x_ptr + o, tl.load(x_ptr + o))\n"
        "\n"
        "\n"
        "class _kopt_K__Box:\n"
        "    BLOCK = 4\n"
        "\n"
        "    def get(self):\n"
        "        return _kopt_K__BLOCK + self.BLOCK\n"
        "\n"
        "\n"
        "def _kopt_K__launch(x_ptr, n, stream=None):\n"
        "    local = _kopt_K__BLOCK  # BLOCK\n"
        "    _kopt_K___k[(1,)](x_ptr, n, BLOCK=_kopt_K__BLOCK)\n"
        "    return _kopt_K__Box().get, triton.language, _kopt_K__note, _kopt_K__launch\n"
        "K = _KoptLaunch(_kopt_K__launch)";
    candidate *c = tu_parse_candidate(t);
    kbuf out = KBUF_INIT;
    kbuf_puts(&out, "<<");
    kerr e = {0};
    cr_assert_eq(candidate_stitch_text(c, "K", &out, &e), 0, "%s", e.msg);
    cr_assert_str_eq(kbuf_str(&out) + 2, want);
    /* the stitched text is still Python */
    pytok *toks = NULL;
    size_t n = 0;
    cr_assert_eq(pylex_all(kbuf_str(&out) + 2, out.len - 2, 0, &toks, &n, &e), 0, "%s", e.msg);
    free(toks);
    /* errors leave out untouched */
    size_t before = out.len;
    cr_assert_eq(candidate_stitch_text(c, "not a name", &out, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(candidate_stitch_text(c, "class", &out, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(out.len, before);
    kbuf_free(&out);
    candidate_free(c);
}

Test(static_candidate_stitch, launch_shim) {
    const char *s = candidate_launch_shim();
    cr_assert(!strncmp(s, "if '_KoptLaunch' not in globals():\n", 35));
    cr_assert(strstr(s, "class _KoptLaunch"));
    cr_assert(strstr(s, "def run(self, *args, stream=None):"));
    cr_assert(strstr(s, "self.launch(*args)"));
    cr_assert_eq(s[strlen(s) - 1], '\n');
    /* twice in a row is still valid Python */
    char *twice = kasprintf("%s%s", s, s);
    pytok *toks = NULL;
    size_t n = 0;
    kerr e = {0};
    cr_assert_eq(pylex_all(twice, strlen(twice), 0, &toks, &n, &e), 0, "%s", e.msg);
    free(toks);
    free(twice);
}

static void expect_escape_round_trip(const char *s, size_t n) {
    kbuf b = KBUF_INIT;
    kbuf_puts(&b, "'''");
    candidate_escape_triple(s, n, &b);
    kbuf_puts(&b, "'''");
    pyval *v = NULL;
    kerr e = {0};
    cr_assert_eq(pylit_parse(kbuf_str(&b), b.len, 1, &v, &e), 0, "%s: %s", kbuf_str(&b), e.msg);
    cr_assert_eq(v->kind, PYV_STR, "%s", kbuf_str(&b));
    cr_assert_eq(v->slen, n, "%s", kbuf_str(&b));
    cr_assert(!memcmp(v->s, s, n), "%s", kbuf_str(&b));
    /* one STRING token: no ''' run escapes the literal */
    pytok *toks = NULL;
    size_t nt = 0;
    cr_assert_eq(pylex_all(kbuf_str(&b), b.len, PYLEX_NOINDENT, &toks, &nt, &e), 0, "%s", e.msg);
    cr_assert_eq(toks[0].kind, PYT_STRING);
    cr_assert_eq(toks[0].len, b.len, "%s", kbuf_str(&b));
    free(toks);
    pyval_free(v);
    kbuf_free(&b);
}

Test(static_candidate_stitch, triple_quote_escaping_round_trips) {
    static const char *const cases[] = {
        "", "'", "''", "'''", "''''", "''''''", "a'''b", "end'", "\\", "\\'", "\\'''",
        "x\\ny", "tab\tnl\n", "\"\"\"", "'\"'\"'", "cr\r\nlf", "\\x41 \\N{DASH}",
        "caf\xc3\xa9",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        expect_escape_round_trip(cases[i], strlen(cases[i]));
    static const char ctl[] = {'a', 0, 1, 0x1b, 0x7f, '\'', '\\', '\''};
    expect_escape_round_trip(ctl, sizeof ctl);
}

Test(static_candidate_stitch, form_i_round_trip_through_emit_and_parse) {
    char *t3;
    artifact *a = load_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &t3);
    const art_kernel *k = kernel_of(a, LSM);
    /* Inductor's own kernel, plus text that needs escaping: ''' runs, backslashes, a CRLF
     * line, and a final quote */
    kbuf cand = KBUF_INIT;
    kbuf_append(&cand, k->source, k->source_len);
    kbuf_puts(&cand, "_NOTE = \"uses ''' and \\\\ and \\n and '\"\r\n"
                     "_RAW = r\"C:\\temp\\new\"\n"
                     "# a trailing quote '");
    candidate *c = tu_parse_candidate(kbuf_str(&cand));
    cr_assert_eq(candidate_form(c), CAND_FORM_I);
    kerr e = {0};
    cr_assert_eq(candidate_check_interface(c, k, &e), 0, "%s", e.msg);
    /* gate 1 refuses the two backslashes (rule string); the kernel itself passes. Stitching
     * does not depend on the rules: it must still round-trip such text byte for byte */
    static_report r = {0};
    cr_assert_eq(static_check(c, NULL, &r, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(r.n, 2, "%s", e.msg);
    cr_assert_eq(static_report_count(&r, STATIC_STRING), 2, "%s", e.msg);
    static_report_free(&r);

    kbuf stmt = KBUF_INIT;
    cr_assert_eq(candidate_stitch_text(c, LSM, &stmt, &e), 0, "%s", e.msg);
    cr_assert(!strncmp(kbuf_str(&stmt), LSM " = async_compile.triton('" LSM "', '''", 
                       strlen(LSM) * 2 + 31));
    cr_assert(strstr(kbuf_str(&stmt), "''', device_str='cuda')"));
    art_replacement rep = {LSM, kbuf_str(&stmt)};
    art_emit_opts o = {&rep, 1, 0};
    kbuf mod = KBUF_INIT;
    cr_assert_eq(artifact_emit(a, &o, &mod, &e), 0, "%s", e.msg);
    artifact *b = NULL;
    cr_assert_eq(artifact_parse(kbuf_str(&mod), mod.len, &b, &e), 0, "%s", e.msg);
    const art_kernel *k2 = kernel_of(b, LSM);
    cr_assert_eq(k2->source_len, cand.len);
    cr_assert(!memcmp(k2->source, cand.data, cand.len), "decoded source differs");
    cr_assert_str_eq(k2->heuristic, "reduction");
    cr_assert_eq(b->nlaunches, a->nlaunches);
    /* a form-I candidate with another jit name is not stitched */
    kbuf other = KBUF_INIT;
    cr_assert_eq(candidate_stitch_text(c, "triton_other_0", &other, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(other.len, 0);
    artifact_free(b);
    kbuf_free(&mod);
    kbuf_free(&stmt);
    kbuf_free(&other);
    kbuf_free(&cand);
    candidate_free(c);
    artifact_free(a);
    free(t3);
}

Test(static_candidate_stitch, form_l_into_module) {
    char *t3;
    artifact *a = load_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &t3);
    candidate *c = tu_parse_candidate(LAUNCHER);
    kbuf stmt = KBUF_INIT;
    kerr e = {0};
    kbuf_puts(&stmt, candidate_launch_shim());
    cr_assert_eq(candidate_stitch_text(c, LSM, &stmt, &e), 0, "%s", e.msg);
    art_replacement rep = {LSM, kbuf_str(&stmt)};
    art_emit_opts o = {&rep, 1, 0};
    kbuf mod = KBUF_INIT;
    cr_assert_eq(artifact_emit(a, &o, &mod, &e), 0, "%s", e.msg);
    artifact *b = NULL;
    cr_assert_eq(artifact_parse(kbuf_str(&mod), mod.len, &b, &e), 0, "%s", e.msg);
    /* no Triton source left for the kernel; call() and its launch untouched */
    cr_assert_eq(artifact_find_kernel(b, LSM), -1);
    cr_assert_eq(b->nlaunches, 1);
    cr_assert_str_eq(b->launches[0].callee, LSM);
    cr_assert(strstr(kbuf_str(&mod), "\n" LSM " = _KoptLaunch(_kopt_" LSM "__launch)\n"));
    cr_assert(strstr(kbuf_str(&mod), "def _kopt_" LSM "___row_log_softmax(in_ptr0,"));
    cr_assert(strstr(kbuf_str(&mod), "min(triton.next_power_of_2(r0_numel), _kopt_" LSM
                                     "__MAX_BLOCK)"));
    cr_assert(strstr(kbuf_str(&mod), LSM ".run(arg0_1, buf2, 4096, 16384, stream=stream0)"));
    artifact_free(b);
    kbuf_free(&mod);
    kbuf_free(&stmt);
    candidate_free(c);
    artifact_free(a);
    free(t3);
}

/* ---------- gate 1 without the GPU (gates/gate1.h) ---------- */

/* gate1_check on `text` against kernel k: returns its verdict; *stitch gets a "<<" prefix first
 * so that a refusal can be seen to leave it untouched. */
static int gate1_of(const char *text, const art_kernel *k, kbuf *stitch, char **why, json_t **report) {
    candidate *c = tu_parse_candidate(text);
    static_opts so = {.allow_launcher = 1};   /* these are form-L texts: rule launcher in test_plan.c */
    kbuf_puts(stitch, "<<");
    int ok = gate1_check(c, k, &so, stitch, why, report);
    candidate_free(c);
    return ok;
}

Test(static_candidate_gate1, form_l_passes_with_the_launch_shim_first) {
    char *t3;
    artifact *a = load_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &t3);
    kbuf st = KBUF_INIT;
    char *why = (char *)"unset";
    json_t *rep = NULL;
    cr_assert_eq(gate1_of(LAUNCHER, kernel_of(a, LSM), &st, &why, &rep), 1, "refused: %s", why);
    cr_expect_null(why);
    cr_expect(json_is_true(json_object_get(rep, "passed")));
    /* what was in the buffer stays; then the shim, then the renamed launcher and its binding */
    const char *s = kbuf_str(&st), *shim = candidate_launch_shim();
    cr_expect(!strncmp(s, "<<", 2));
    cr_expect(!strncmp(s + 2, shim, strlen(shim)), "no launch shim first:\n%.200s", s);
    cr_expect(strstr(s, "\n" LSM " = _KoptLaunch(_kopt_" LSM "__launch)") != NULL);
    json_decref(rep);
    kbuf_free(&st);
    artifact_free(a);
    free(t3);
}

Test(static_candidate_gate1, form_i_passes_without_the_shim) {
    char *t3;
    artifact *a = load_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &t3);
    const art_kernel *k = kernel_of(a, LSM);
    char *src = kstrndup(k->source, k->source_len);
    kbuf st = KBUF_INIT;
    char *why = NULL;
    cr_assert_eq(gate1_of(src, k, &st, &why, NULL), 1, "refused: %s", why);
    const char *want = "<<" LSM " = async_compile.triton('" LSM "', '''";
    cr_expect(!strncmp(kbuf_str(&st), want, strlen(want)), "%.200s", kbuf_str(&st));
    cr_expect_null(strstr(kbuf_str(&st), "_KoptLaunch"), "a form-I statement got the launcher shim");
    kbuf_free(&st);
    free(src);
    artifact_free(a);
    free(t3);
}

Test(static_candidate_gate1, each_step_refuses_with_its_reason_and_stitches_nothing) {
    char *t3;
    artifact *a = load_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &t3);
    const art_kernel *k = kernel_of(a, LSM);
    kbuf st = KBUF_INIT;
    char *why = NULL;
    json_t *rep = NULL;
    /* a static rule: the report says so, the reason is the static rules' message */
    char *io = tu_replace_once(LAUNCHER, "import triton\n", "import triton\nimport os\n");
    cr_expect_eq(gate1_of(io, k, &st, &why, &rep), 0);
    cr_expect(why && !strncmp(why, "gate 1 (static rules): 1 violation;", 35), "%s", why);
    cr_expect(json_is_false(json_object_get(rep, "passed")));
    cr_expect_str_eq(kbuf_str(&st), "<<");
    free(why);
    json_decref(rep);
    kbuf_reset(&st);
    /* the static rules pass, the interface does not */
    char *sig = tu_replace_once(LAUNCHER, "def launch(in_ptr0, out_ptr2,", "def launch(out_ptr2, in_ptr0,");
    cr_expect_eq(gate1_of(sig, k, &st, &why, &rep), 0);
    cr_expect(why && !strncmp(why, "launch interface: launch parameter 1 is out_ptr2", 48), "%s", why);
    cr_expect(json_is_true(json_object_get(rep, "passed")));
    cr_expect_str_eq(kbuf_str(&st), "<<");
    free(why);
    json_decref(rep);
    kbuf_reset(&st);
    /* rules and interface pass, stitching cannot (a kernel named like a Python keyword; the
     * launcher is unbound so that the interface does not compare names) */
    char *unbound = tu_replace_once(LAUNCHER, "# kopt-candidate: replaces=" LSM "\n", "");
    art_kernel kw = *k;
    kw.name = (char *)"class";
    cr_expect_eq(gate1_of(unbound, &kw, &st, &why, NULL), 0);
    cr_expect(why && !strncmp(why, "stitching: ", 11), "%s", why);
    cr_expect_str_eq(kbuf_str(&st), "<<");
    free(why);
    free(io);
    free(sig);
    free(unbound);
    kbuf_free(&st);
    artifact_free(a);
    free(t3);
}

/* A form-P copy of a float16 kernel: it names tl.float16 for its store. Against a kernel whose
 * pointers are float16 the precision rule has nothing to refuse; against a float32 kernel the
 * same text is refused for precision (gate1_kernel_dtype picks the dtype judged). */
#define HALF_CAND(K)                                                                               \
    "# kopt-candidate: replaces=" K "\n"                                                           \
    "import triton\nimport triton.language as tl\n\n\n"                                            \
    "@triton.jit\n"                                                                                \
    "def _k(in_ptr0, out_ptr0, xnumel, BLOCK: tl.constexpr):\n"                                    \
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"                                  \
    "    x = tl.load(in_ptr0 + offs, mask=offs < xnumel).to(tl.float32)\n"                         \
    "    tl.store(out_ptr0 + offs, (x * 2.0).to(tl.float16), mask=offs < xnumel)\n\n\n"           \
    "KOPT_PLAN = {\"params\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\"],\n"                          \
    "             \"launches\": [{\"kernel\": \"_k\", \"grid\": [\"cdiv(xnumel, 1024)\"],\n"         \
    "                           \"args\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\"],\n"              \
    "                           \"constexprs\": {\"BLOCK\": \"1024\"}, \"num_warps\": 4}]}\n"

Test(static_candidate_gate1, the_replaced_kernels_dtype_sets_the_precision_rule) {
    char *t16, *t3;
    artifact *a16 = load_fixture("tests/fixtures/inductor/suite_level2_02_conv2d_groupnorm_relu_fp16_small_g0.py", &t16);
    artifact *a3 = load_fixture("tests/fixtures/inductor/03_log_softmax_g0.py", &t3);
    cr_expect_str_eq(gate1_kernel_dtype(kernel_of(a16, "triton_poi_fused_convolution_0")), "float16");
    /* float16 inputs, float32 outputs: the narrowest float is judged */
    cr_expect_str_eq(gate1_kernel_dtype(kernel_of(a16, "triton_red_fused_convolution_native_group_norm_2")), "float16");
    cr_expect_null(gate1_kernel_dtype(kernel_of(a3, LSM)));
    /* the rank among pointer types: fp8 over bf16 over fp16, in any order; scalars never count */
    static const struct {
        const char *types[3];
        const char *want;
    } mix[] = {{{"*bf16", "*fp32", "i32"}, "bfloat16"},  {{"*fp16", "*bf16", "*fp32"}, "bfloat16"},
               {{"*bf16", "*fp16", "*fp32"}, "bfloat16"}, {{"*fp8e4nv", "*bf16", "*fp16"}, "float8"},
               {{"*fp16", "*fp8e5", "*fp32"}, "float8"},  {{"fp16", "bf16", "*fp32"}, NULL},
               {{"*fp64", "*i8", "*fp32"}, NULL},           {{NULL, "*fp16", "i32"}, "float16"}};
    for (size_t m = 0; m < sizeof mix / sizeof *mix; m++) {
        art_param ps[3];
        for (int j = 0; j < 3; j++) ps[j] = (art_param){.name = (char *)"p", .type = (char *)mix[m].types[j]};
        art_kernel kk = {.params = ps, .nparams = 3};
        const char *got = gate1_kernel_dtype(&kk);
        if (mix[m].want) cr_expect(got && !strcmp(got, mix[m].want), "case %zu: %s", m, got ? got : "NULL");
        else cr_expect_null(got, "case %zu: %s", m, got);
    }

    const char *t = HALF_CAND("triton_poi_fused_convolution_0");
    candidate *c = tu_parse_candidate(t);
    static_opts so = {0};
    kbuf st = KBUF_INIT;
    char *why = NULL;
    gate1_check(c, kernel_of(a16, "triton_poi_fused_convolution_0"), &so, &st, &why, NULL);
    cr_expect(!why || !strstr(why, "[precision]"), "float16 kernel: refused for precision: %s", why);
    free(why);
    why = NULL;
    kbuf_free(&st);
    cr_expect_eq(gate1_check(c, kernel_of(a3, LSM), &so, &st, &why, NULL), 0);
    cr_expect(why && strstr(why, "[precision]"), "float32 kernel: %s", why ? why : "(accepted)");
    free(why);
    why = NULL;
    /* an explicit model dtype wins over the kernel's */
    so.model_dtype = "float32";
    kbuf_free(&st);
    cr_expect_eq(gate1_check(c, kernel_of(a16, "triton_poi_fused_convolution_0"), &so, &st, &why, NULL), 0);
    cr_expect(why && strstr(why, "[precision]"), "model_dtype float32: %s", why ? why : "(accepted)");
    free(why);
    kbuf_free(&st);
    candidate_free(c);
    artifact_free(a16);
    artifact_free(a3);
    free(t16);
    free(t3);
}
