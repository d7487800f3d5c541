/* test_static.c — gate 1's static rules (gates/static): one small refused candidate per rule
 * (the rule id and the exact position of the offending text), candidates that must pass with
 * zero violations (a realistic launcher, every Inductor kernel of the fixtures as form I), the
 * precision switches, the report's JSON and text, and the on-disk bad candidates of
 * tests/candidates/static/, each refused with exactly the rule its `# expect:` line names. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "gates/candidate.h"
#include "gates/static.h"
#include "testutil.h"
#include "util/buf.h"

/* A form-L candidate: a jit kernel (lines 1-11), then `pre` (module level), then launch with
 * `body` before its kernel launch. */
#define HDR                                                                                  \
    "import torch\n"                                                                         \
    "import triton\n"                                                                        \
    "import triton.language as tl\n"                                                         \
    "\n"                                                                                     \
    "\n"                                                                                     \
    "@triton.jit\n"                                                                          \
    "def _k(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n"                             \
    "    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)\n"                          \
    "    tl.store(out_ptr0 + offs, tl.load(in_ptr0 + offs, mask=offs < xnumel), mask=offs < " \
    "xnumel)\n"                                                                              \
    "\n"                                                                                     \
    "\n"

static char *make_l(const char *pre, const char *body) {
    return kasprintf("%s%sdef launch(in_ptr0, out_ptr0, xnumel, stream=None):\n%s"
                     "    _k[(triton.cdiv(xnumel, 1024),)](in_ptr0, out_ptr0, xnumel, "
                     "XBLOCK=1024)\n",
                     HDR, pre, body);
}

static candidate *parse_ok(const char *text) {
    candidate *c = NULL;
    kerr e = {0};
    int rc = candidate_parse(text, strlen(text), &c, &e);
    cr_assert_eq(rc, 0, "candidate_parse failed: %s\n--- text:\n%s", e.msg, text);
    return c;
}

static char *report_text(const static_report *r) {
    kbuf b = KBUF_INIT;
    static_report_format(r, "cand.py", &b);
    return kbuf_steal(&b);
}

/* Line and 1-based column of the first occurrence of `marker` in text. */
static void locate(const char *text, const char *marker, int *line, int *col) {
    const char *p = strstr(text, marker);
    cr_assert(p, "marker <<%s>> not in the text", marker);
    *line = 1;
    const char *ls = text;
    for (const char *q = text; q < p; q++)
        if (*q == '\n') {
            (*line)++;
            ls = q + 1;
        }
    *col = (int)(p - ls) + 1;
}

/* Check that `text` is refused with violations of `rule` only, one of them at `marker`. */
static void expect_refused(const char *text, const char *rule, const char *marker,
                           const static_opts *o) {
    candidate *c = parse_ok(text);
    static_report r = {0};
    kerr e = {0};
    int rc = static_check(c, o, &r, &e);
    char *rt = report_text(&r);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "expected a refusal (%s) for:\n%s\nreport:\n%s", rule,
                 text, rt);
    cr_assert(strstr(e.msg, "violation"), "%s", e.msg);
    int line, col, found = 0;
    locate(text, marker, &line, &col);
    for (size_t i = 0; i < r.n; i++) {
        cr_assert_str_eq(static_rule_name(r.v[i].rule), rule,
                         "only %s violations expected; report:\n%s\ntext:\n%s", rule, rt, text);
        cr_assert(r.v[i].text && *r.v[i].text && r.v[i].why && *r.v[i].why);
        if (r.v[i].line == line && r.v[i].col == col) found = 1;
    }
    cr_assert(found, "no %s violation at %d:%d (<<%s>>); report:\n%s", rule, line, col, marker,
              rt);
    free(rt);
    static_report_free(&r);
    candidate_free(c);
}

static void expect_passes(const char *text, const static_opts *o) {
    candidate *c = parse_ok(text);
    static_report r = {0};
    kerr e = {0};
    int rc = static_check(c, o, &r, &e);
    char *rt = report_text(&r);
    cr_assert_eq(rc, 0, "expected no violation; report:\n%s\ntext:\n%s", rt, text);
    cr_assert_eq(r.n, 0);
    cr_assert(static_report_passed(&r));
    free(rt);
    static_report_free(&r);
    candidate_free(c);
}

typedef struct rcase {
    const char *rule, *pre, *body, *marker;
} rcase;

static void run_cases(const rcase *cases, size_t n) {
    static_opts o = {0, "float32"};
    for (size_t i = 0; i < n; i++) {
        char *text = make_l(cases[i].pre, cases[i].body);
        expect_refused(text, cases[i].rule, cases[i].marker, &o);
        free(text);
    }
}

#define NCASES(a) (sizeof(a) / sizeof((a)[0]))

/* ---------- one refused candidate per rule ---------- */

Test(static_rules, torch_compute) {
    static const rcase cases[] = {
        {"torch-compute", "", "    y = torch.matmul(in_ptr0, in_ptr0)\n", "torch.matmul"},
        {"torch-compute", "", "    y = F.relu(in_ptr0)\n", "F.relu"},
        {"torch-compute", "import torch.nn.functional as fn\n", "    fn.softmax(in_ptr0, -1)\n",
         "fn.softmax"},
        {"torch-compute", "from torch import softmax\n", "", "from torch import softmax"},
        {"torch-compute", "", "    s = in_ptr0.sum()\n", "sum()"},
        {"torch-compute", "", "    out_ptr0.copy_(in_ptr0)\n", "copy_("},
        {"torch-compute", "", "    x = in_ptr0.contiguous().view(-1)\n", "contiguous("},
        {"torch-compute", "", "    y = in_ptr0 @ in_ptr0\n", "@ in_ptr0"},
        {"torch-compute", "", "    torch.ops.aten.mm(in_ptr0, in_ptr0)\n", "torch.ops"},
        {"torch-compute", "", "    extern_kernels.mm(in_ptr0, in_ptr0, out=out_ptr0)\n",
         "extern_kernels"},
        {"torch-compute", "", "    y = in_ptr0.to(torch.float64)\n", "to(torch"},
        {"torch-compute", "", "    y = in_ptr0 * 2\n", "in_ptr0 * 2"},
        {"torch-compute", "", "    out_ptr0[0] = 1.0\n", "out_ptr0[0]"},
        {"torch-compute", "", "    out_ptr0 += in_ptr0\n", "out_ptr0 +="},
        {"torch-compute", "", "    y = -in_ptr0\n", "in_ptr0\n"},
        {"torch-compute", "", "    mm = getattr(torch, 'matmul')\n", "getattr"},
    };
    run_cases(cases, NCASES(cases));
}

Test(static_rules, stream_sync) {
    static const rcase cases[] = {
        {"stream-sync", "", "    torch.cuda.synchronize()\n", "torch.cuda.synchronize"},
        {"stream-sync", "", "    ev = torch.cuda.Event(enable_timing=True)\n", "torch.cuda.Event"},
        {"stream-sync", "", "    s = torch.cuda.Stream()\n", "torch.cuda.Stream"},
        {"stream-sync", "", "    n = in_ptr0[0].item()\n", "item()"},
        {"stream-sync", "from torch.cuda import set_stream\n", "", "from torch.cuda"},
        {"stream-sync", "", "    torch.cuda.current_stream().synchronize()\n", "synchronize"},
        {"stream-sync", "", "    ms = triton.testing.do_bench(lambda: None)\n", "triton.testing"},
    };
    run_cases(cases, NCASES(cases));
}

Test(static_rules, state) {
    static const rcase cases[] = {
        {"state", "_cache = {}\n", "", "{}"},
        {"state", "_bufs = []\n", "", "[]"},
        {"state", "_seen = set()\n", "", "()"},
        {"state", "_calls = 0\n", "    global _calls\n    _calls += 1\n", "global"},
        {"state", "from functools import lru_cache\n\n\n@lru_cache(maxsize=None)\n", "",
         "lru_cache(maxsize"},
        {"state", "", "    launch.calls = 1\n", "launch.calls"},
        {"state", "def _grid(n, memo={}):\n    return (n,)\n\n\n", "", "{}"},
        {"state", "print('candidate loaded')\n", "", "print("},
        {"state", "class _Holder:\n    bufs = []\n\n\n", "", "[]"},
        {"state", "_ws = torch.empty(1024, device='cuda')\n", "", "(1024"},
        {"state", "_T = (1, 2)\n_M = dict(a=1)\n", "", "(a=1"},
    };
    run_cases(cases, NCASES(cases));
}

Test(static_rules, state_writes_into_module_object) {
    /* the module-level object is itself flagged; so is each write from inside launch */
    char *text = make_l("_done = {}\n", "    _done[xnumel] = True\n    _done.update(a=1)\n");
    static_opts o = {0, "float32"};
    expect_refused(text, "state", "_done[xnumel]", &o);
    expect_refused(text, "state", "_done.update", &o);
    free(text);
}

Test(static_rules, env) {
    static const rcase cases[] = {
        {"env", "import sys\n", "    sys.setrecursionlimit(10000)\n", "sys.setrecursionlimit"},
        {"env", "", "    torch.backends.cudnn.benchmark = True\n", "torch.backends"},
        {"env", "", "    torch.set_float32_matmul_precision('highest')\n", "torch.set_"},
        {"env", "", "    setattr(triton, 'cdiv', None)\n", "setattr"},
        {"env", "", "    g = globals()\n", "globals"},
        {"env", "", "    f = getattr(tl, 'ma' + 'x')\n", "getattr"},
        {"env", "from os import environ\n", "", "from os import environ"},
        {"env", "", "    torch.manual_seed(0)\n", "torch.manual_seed"},
    };
    run_cases(cases, NCASES(cases));
}

Test(static_rules, io) {
    static const rcase cases[] = {
        {"io", "", "    eval('1 + 1')\n", "eval"},
        {"io", "", "    exec('x = 1')\n", "exec"},
        {"io", "", "    f = open('/tmp/x', 'w')\n", "open"},
        {"io", "", "    m = __import__('os')\n", "__import__"},
        {"io", "", "    k = in_ptr0.__class__\n", "__class__"},
        {"io", "", "    g = getattr(launch, '__globals__')\n", "getattr"},
        {"io", "import pickle\n", "", "import pickle"},
        {"io", "from pathlib import Path\n", "", "from pathlib"},
        {"io", "import os\n", "    os.system('true')\n", "os.system"},
        {"io", "", "    torch.save(in_ptr0, '/tmp/x.pt')\n", "torch.save"},
        {"io", "", "    code = compile('1', 'f', 'eval')\n", "compile"},
    };
    run_cases(cases, NCASES(cases));
}

Test(static_rules, import) {
    static const rcase cases[] = {
        {"import", "import numpy as np\n", "", "import numpy"},
        {"import", "from collections import OrderedDict\n", "", "from collections"},
        {"import", "import torch.cuda\n", "", "import torch.cuda"},
        {"import", "from . import helpers\n", "", "from . import"},
        {"import", "", "    import functools\n", "import functools"},
        {"import", "from torch import *\n", "", "from torch import *"},
    };
    run_cases(cases, NCASES(cases));
}

#define MM_PRE(call)                                                                       \
    "@triton.jit\n"                                                                        \
    "def _mm(a_ptr, b_ptr, c_ptr, B: tl.constexpr):\n"                                     \
    "    r = tl.arange(0, B)\n"                                                            \
    "    a = tl.load(a_ptr + r[:, None] * B + r[None, :])\n"                               \
    "    b = tl.load(b_ptr + r[:, None] * B + r[None, :])\n"                               \
    "    tl.store(c_ptr + r[:, None] * B + r[None, :], " call ")\n"                        \
    "\n\n"

Test(static_rules, precision) {
    static const rcase cases[] = {
        {"precision", "", "    dt = tl.bfloat16\n", "tl.bfloat16"},
        {"precision", "", "    ws = torch.empty(8, dtype=torch.float16, device='cuda')\n",
         "torch.float16"},
        {"precision", MM_PRE("tl.dot(a, b, allow_tf32=True)"), "", "allow_tf32"},
        {"precision", MM_PRE("tl.dot(a, b, input_precision=\"tf32\")"), "", "\"tf32\""},
        {"precision", MM_PRE("tl.dot(a, b, input_precision='tf32x3')"), "", "'tf32x3'"},
        {"precision", MM_PRE("tl.dot(a, b)"), "", "tl.dot"},
        {"precision", MM_PRE("tl.dot(a.to(tl.float8e4nv), b.to(tl.float8e4nv), "
                             "input_precision='ieee')"),
         "", "tl.float8e4nv"},
        {"precision",
         MM_PRE("tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [a], dtype=tl.float32, "
                "is_pure=True, pack=1)"),
         "", "tl.inline_asm_elementwise"},
        {"precision", "TF32: tl.constexpr = True\n" MM_PRE("tl.dot(a, b, allow_tf32=TF32)"), "",
         "allow_tf32"},
    };
    run_cases(cases, NCASES(cases));
}

Test(static_rules, precision_allowed_by_consent_or_dtype) {
    const char *pres[] = {MM_PRE("tl.dot(a.to(tl.float16), b.to(tl.float16), allow_tf32=True)"),
                          MM_PRE("tl.dot(a, b, input_precision='tf32')"),
                          MM_PRE("tl.dot(a, b)")};
    static_opts consent = {1, "float32"}, half = {0, "float16"}, bf = {0, "bfloat16"};
    static_opts strict = {0, "float32"}, dflt = {0, NULL};
    for (size_t i = 0; i < 3; i++) {
        char *text = make_l(pres[i], "    dt = tl.bfloat16\n");
        expect_passes(text, &consent);
        expect_passes(text, &half);
        expect_passes(text, &bf);
        /* NULL model dtype counts as float32 */
        candidate *c = parse_ok(text);
        static_report r1 = {0}, r2 = {0};
        cr_assert_eq(static_check(c, &strict, &r1, NULL), KOPT_E_CANDIDATE);
        cr_assert_eq(static_check(c, &dflt, &r2, NULL), KOPT_E_CANDIDATE);
        cr_assert_eq(r1.n, r2.n);
        cr_assert_eq(static_report_count(&r1, STATIC_PRECISION), r1.n);
        static_report_free(&r1);
        static_report_free(&r2);
        candidate_free(c);
        free(text);
    }
    /* ieee or an explicit allow_tf32=False is full precision */
    char *ok1 = make_l(MM_PRE("tl.dot(a, b, input_precision='ieee')"), "");
    char *ok2 = make_l(MM_PRE("tl.dot(a, b, allow_tf32=False)"), "");
    expect_passes(ok1, &strict);
    expect_passes(ok2, &strict);
    free(ok1);
    free(ok2);
}

Test(static_rules, syntax) {
    static const rcase cases[] = {
        {"syntax", "", "    yield\n", "yield"},
        {"syntax", "async def _helper():\n    return 1\n\n\n", "", "async"},
        {"syntax", "TAG = 'k'\n", "    print(f\"{TAG} {xnumel}\")\n", "f\"{TAG}"},
    };
    run_cases(cases, NCASES(cases));
}

Test(static_rules, every_violation_is_reported_in_order) {
    char *text = make_l("import subprocess\n_c = []\n",
                        "    torch.cuda.synchronize()\n    s = in_ptr0.sum()\n"
                        "    subprocess.run(['true'])\n");
    candidate *c = parse_ok(text);
    static_report r = {0};
    kerr e = {0};
    cr_assert_eq(static_check(c, NULL, &r, &e), KOPT_E_CANDIDATE);
    char *rt = report_text(&r);
    static const char *const want[] = {"io", "state", "stream-sync", "torch-compute", "io"};
    cr_assert_eq(r.n, 5, "report:\n%s", rt);
    for (size_t i = 0; i < r.n; i++) {
        cr_assert_str_eq(static_rule_name(r.v[i].rule), want[i], "report:\n%s", rt);
        if (i) cr_assert(r.v[i - 1].line <= r.v[i].line);
    }
    cr_assert(strstr(e.msg, "5 violations") && strstr(e.msg, "[io]"), "%s", e.msg);
    /* a second run on the same report starts afresh */
    cr_assert_eq(static_check(c, NULL, &r, NULL), KOPT_E_CANDIDATE);
    cr_assert_eq(r.n, 5);
    free(rt);
    static_report_free(&r);
    candidate_free(c);
    free(text);
}

/* ---------- candidates that must pass ---------- */

static const char *const GOOD_LAUNCHER =
    "# kopt-candidate: replaces=triton_red_fused__log_softmax_prepare_softmax_online_sub_0\n"
    "# One program per row, three passes over the row: max, sum of exp, store.\n"
    "import math\n"
    "\n"
    "import torch\n"
    "import triton\n"
    "import triton.language as tl\n"
    "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n"
    "\n"
    "MAX_BLOCK = 4096\n"
    "LOG2E: tl.constexpr = 1.4426950408889634\n"
    "CONFIGS = (triton.Config({'SPLIT': 2}, num_warps=4), triton.Config({'SPLIT': 4}, "
    "num_warps=8))\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _row_log_softmax(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr):\n"
    "    row = tl.program_id(0).to(tl.int64)\n"
    "    base = row * r0_numel\n"
    "    offs = tl.arange(0, R0_BLOCK)\n"
    "    acc_max = tl.full([R0_BLOCK], float('-inf'), tl.float32)\n"
    "    for start in tl.range(0, r0_numel, R0_BLOCK):\n"
    "        idx = start + offs\n"
    "        x = tl.load(in_ptr0 + base + idx, mask=idx < r0_numel, other=float('-inf'))\n"
    "        acc_max = tl.maximum(acc_max, x)\n"
    "    row_max = tl.max(acc_max, axis=0)\n"
    "    acc_sum = tl.zeros([R0_BLOCK], tl.float32)\n"
    "    for start in tl.range(0, r0_numel, R0_BLOCK):\n"
    "        idx = start + offs\n"
    "        x = tl.load(in_ptr0 + base + idx, mask=idx < r0_numel, other=float('-inf'))\n"
    "        acc_sum += tl.exp2((x - row_max) * LOG2E)\n"
    "    log_sum = tl_math.log(tl.sum(acc_sum, axis=0))\n"
    "    for start in tl.range(0, r0_numel, R0_BLOCK):\n"
    "        idx = start + offs\n"
    "        mask = idx < r0_numel\n"
    "        x = tl.load(in_ptr0 + base + idx, mask=mask, other=0.0)\n"
    "        y = (x - row_max - log_sum).to(tl.float32)\n"
    "        tl.store(out_ptr2 + base + idx, y, mask=mask)\n"
    "\n"
    "\n"
    "def _block(n):\n"
    "    # 'torch.matmul' and open() in a comment are not code\n"
    "    return min(triton.next_power_of_2(n), MAX_BLOCK)\n"
    "\n"
    "\n"
    "def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):\n"
    "    \"\"\"Log-softmax over rows; never calls torch.matmul or os.system.\"\"\"\n"
    "    assert in_ptr0.is_contiguous() and in_ptr0.stride(1) == 1, in_ptr0.shape\n"
    "    scratch = torch.empty((xnumel,), device=in_ptr0.device, dtype=torch.float32)\n"
    "    del scratch\n"
    "    grid = lambda meta: (xnumel,)\n"
    "    block = _block(r0_numel)\n"
    "    warps = 8 if block >= 2048 else 4\n"
    "    _row_log_softmax[grid](in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK=block,\n"
    "                           num_warps=warps, num_stages=1)\n"
    "    if math.isfinite(1.0):\n"
    "        print('launched', block, warps)\n";

Test(static_rules, realistic_launcher_passes) {
    static_opts o = {0, "float32"};
    expect_passes(GOOD_LAUNCHER, &o);
    /* the same launcher with one dunder access is refused at that access */
    char *bad = kstrdup(GOOD_LAUNCHER);
    char *p = strstr(bad, "print('launched', block, warps)");
    cr_assert(p);
    memcpy(p, "print(_block.__code__, warps)  ", 31);
    expect_refused(bad, "io", "__code__", &o);
    free(bad);
}

Test(static_rules, inductor_kernels_pass_as_form_i) {
    /* every Triton kernel Inductor wrote in the fixtures, decorator included, is a valid
     * form-I candidate for itself: parses, passes the rules, matches its own interface */
    static const char *const fixtures[] = {
        "01_gelu_residual_g0.py",        "02_softmax_wide_g0.py", "03_log_softmax_g0.py",
        "04_layernorm_g0.py",            "05_rmsnorm_g0.py",      "06_groupnorm_g0.py",
        "07_sum_inner_g0.py",            "08_mean_outer_g0.py",   "09_max_middle_g0.py",
        "10_argmax_inner_g0.py",         "11_cumsum_g0.py",       "12_avgpool2d_g0.py",
        "13_maxpool2d_g0.py",            "14_gemm_bias_relu_g0.py", "15_conv_bn_relu_g0.py",
        "16_mlp_block_g0.py"};
    size_t nk = 0;
    static_opts o = {0, "float32"};
    for (size_t f = 0; f < sizeof fixtures / sizeof *fixtures; f++) {
        char *rel = kasprintf("tests/fixtures/inductor/%s", fixtures[f]);
        size_t len;
        char *text = tu_read_fixture(rel, &len);
        artifact *a = NULL;
        kerr e = {0};
        cr_assert_eq(artifact_parse(text, len, &a, &e), 0, "%s: %s", rel, e.msg);
        for (size_t i = 0; i < a->nkernels; i++) {
            const art_kernel *k = &a->kernels[i];
            candidate *c = NULL;
            cr_assert_eq(candidate_parse(k->source, k->source_len, &c, &e), 0, "%s %s: %s", rel,
                         k->name, e.msg);
            cr_assert_eq(candidate_form(c), CAND_FORM_I, "%s", k->name);
            cr_assert_str_eq(c->defs[c->main_def].heuristic, k->heuristic);
            static_report r = {0};
            int rc = static_check(c, &o, &r, &e);
            char *rt = report_text(&r);
            cr_assert_eq(rc, 0, "%s %s:\n%s", rel, k->name, rt);
            free(rt);
            cr_assert_eq(candidate_check_interface(c, k, &e), 0, "%s %s: %s", rel, k->name,
                         e.msg);
            static_report_free(&r);
            candidate_free(c);
            nk++;
        }
        artifact_free(a);
        free(text);
        free(rel);
    }
    cr_assert_geq(nk, 20);
}

Test(static_rules, allowed_forms_do_not_trip_rules) {
    static const char *const bodies[] = {
        "    ws = torch.empty_like(in_ptr0)\n    z = torch.zeros(4, dtype=torch.int32, device='cuda')\n",
        "    ws = torch.empty_strided((4, 4), (4, 1), device=in_ptr0.device, dtype=torch.float32)\n",
        "    n = in_ptr0.numel() + in_ptr0.shape[0] + in_ptr0.stride(0) + in_ptr0.size(0)\n",
        "    v = in_ptr0.view(-1)\n    t = in_ptr0.t()\n    p = in_ptr0.data_ptr()\n",
        "    d = torch.cuda.current_device()\n    cap = torch.cuda.get_device_capability()\n",
        "    ok = torch.cuda.is_available() and torch.is_tensor(in_ptr0)\n",
        "    meta = {'X': 1}\n    cache = []\n    cache.append(meta['X'])\n",
        "    s = 'torch.matmul(x) eval( open( .sum() __class__ tf32'\n",
        "    print('x', xnumel)\n    m = max(xnumel, 1)\n    k = getattr(tl, 'float32')\n",
        "    def helper(a, b=None):\n        return a\n    helper(1, b=2)\n",
        "    n = in_ptr0.numel() * 4 + xnumel % 2\n    ok = in_ptr0 is not None\n",
        "    args = (in_ptr0, out_ptr0)\n    print(*args)\n    t = in_ptr0\n",
    };
    static_opts o = {0, "float32"};
    for (size_t i = 0; i < sizeof bodies / sizeof *bodies; i++) {
        char *text = make_l("", bodies[i]);
        expect_passes(text, &o);
        free(text);
    }
    /* module-level constants, tuples, constexprs and allowed calls */
    char *text = make_l("BLOCK = 1024\nNAMES = ('a', 'b')\nK: tl.constexpr = tl.constexpr(3)\n"
                        "HALF = BLOCK // 2\nL2 = math.log(2.0)\nG = lambda n: (triton.cdiv(n, "
                        "BLOCK),)\n",
                        "    _ = G(xnumel)\n");
    char *with_math = kasprintf("import math\n%s", text);
    expect_passes(with_math, &o);
    free(with_math);
    free(text);
}

/* ---------- the report ---------- */

Test(static_report, texts_are_one_line) {
    char *text = make_l("", "    y = (torch.\n         matmul(in_ptr0, in_ptr0))\n");
    candidate *c = parse_ok(text);
    static_report r = {0};
    cr_assert_eq(static_check(c, NULL, &r, NULL), KOPT_E_CANDIDATE);
    cr_assert_eq(r.n, 1);
    cr_assert_str_eq(r.v[0].text, "torch. matmul");
    cr_assert_eq(r.v[0].line, 13);
    static_report_free(&r);
    candidate_free(c);
    free(text);
}

Test(static_report, json_and_text) {
    char *text = make_l("", "    torch.cuda.synchronize()\n");
    candidate *c = parse_ok(text);
    static_report r = {0};
    cr_assert_eq(static_check(c, NULL, &r, NULL), KOPT_E_CANDIDATE);
    json_t *j = static_report_json(&r);
    cr_assert(json_is_false(json_object_get(j, "passed")));
    json_t *v = json_array_get(json_object_get(j, "violations"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(v, "rule")), "stream-sync");
    cr_assert_eq(json_integer_value(json_object_get(v, "line")), 13);
    cr_assert_eq(json_integer_value(json_object_get(v, "column")), 5);
    cr_assert_str_eq(json_string_value(json_object_get(v, "text")), "torch.cuda.synchronize");
    cr_assert(json_string_length(json_object_get(v, "explanation")) > 10);
    json_decref(j);
    char *rt = report_text(&r);
    cr_assert(!strncmp(rt, "cand.py:13:5: [stream-sync] torch.cuda.synchronize: ", 52), "%s", rt);
    cr_assert_eq(strchr(rt, '\n'), rt + strlen(rt) - 1, "one line: %s", rt);
    free(rt);
    static_report_free(&r);
    static_report_free(&r); /* idempotent */
    candidate_free(c);
    free(text);

    static_report empty = {0};
    json_t *jp = static_report_json(&empty);
    cr_assert(json_is_true(json_object_get(jp, "passed")));
    cr_assert_eq(json_array_size(json_object_get(jp, "violations")), 0);
    json_decref(jp);
    kbuf b = KBUF_INIT;
    static_report_format(&empty, NULL, &b);
    cr_assert_str_eq(kbuf_str(&b), "candidate: static rules passed\n");
    kbuf_free(&b);
}

Test(static_report, rule_names_round_trip) {
    for (int i = 0; i < STATIC_NRULES; i++)
        cr_assert_eq(static_rule_from_name(static_rule_name((static_rule)i)), i);
    cr_assert_eq(static_rule_from_name("nope"), -1);
    cr_assert_eq(static_rule_from_name(NULL), -1);
}

/* ---------- the on-disk bad candidates ---------- */

static const art_kernel *fixture_kernel(artifact **fx, size_t nfx, const char *name) {
    for (size_t i = 0; i < nfx; i++) {
        int k = artifact_find_kernel(fx[i], name);
        if (k >= 0) return &fx[i]->kernels[k];
    }
    return NULL;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

Test(static_files, every_bad_candidate_is_refused_with_its_rule) {
    static const char *const fxn[] = {"tests/fixtures/inductor/01_gelu_residual_g0.py",
                                      "tests/fixtures/inductor/03_log_softmax_g0.py"};
    artifact *fx[2];
    char *fxt[2];
    for (int i = 0; i < 2; i++) {
        size_t len;
        fxt[i] = tu_read_fixture(fxn[i], &len);
        kerr e = {0};
        cr_assert_eq(artifact_parse(fxt[i], len, &fx[i], &e), 0, "%s", e.msg);
    }
    char *dir = tu_fixture_path("tests/candidates/static");
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    char *names[64];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l > 3 && !strcmp(de->d_name + l - 3, ".py")) {
            cr_assert_lt(n, 64);
            names[n++] = kstrdup(de->d_name);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    cr_assert_geq(n, 9, "expected the bad candidates in %s", dir);
    int seen[STATIC_NRULES] = {0};
    static_opts o = {0, "float32"};
    for (size_t i = 0; i < n; i++) {
        char *rel = kasprintf("tests/candidates/static/%s", names[i]);
        size_t len;
        char *text = tu_read_fixture(rel, &len);
        char rule[64] = "";
        cr_assert_eq(sscanf(text, "# expect: gate1 %63s", rule), 1,
                     "%s: first line must be `# expect: gate1 <rule>`", rel);
        int want = static_rule_from_name(rule);
        cr_assert_geq(want, 0, "%s: unknown rule %s", rel, rule);
        seen[want]++;
        candidate *c = NULL;
        kerr e = {0};
        cr_assert_eq(candidate_parse(text, len, &c, &e), 0, "%s: %s", rel, e.msg);
        cr_assert_eq(candidate_form(c), CAND_FORM_L, "%s", rel);
        cr_assert_eq(c->replaces_line, 2, "%s: binding on line 2", rel);
        /* otherwise realistic: bound to a real kernel whose interface it matches */
        const art_kernel *k = fixture_kernel(fx, 2, candidate_replaces(c));
        cr_assert(k, "%s: replaces=%s is no kernel of the fixtures", rel, candidate_replaces(c));
        cr_assert_eq(candidate_check_interface(c, k, &e), 0, "%s: %s", rel, e.msg);
        static_report r = {0};
        int rc = static_check(c, &o, &r, &e);
        char *rt = report_text(&r);
        cr_assert_eq(rc, KOPT_E_CANDIDATE, "%s passed gate 1", rel);
        cr_assert_geq(r.n, 1);
        for (size_t v = 0; v < r.n; v++)
            cr_assert_eq(r.v[v].rule, want, "%s: expected only [%s]; report:\n%s", rel, rule, rt);
        free(rt);
        static_report_free(&r);
        candidate_free(c);
        free(text);
        free(rel);
        free(names[i]);
    }
    /* the set covers the contract's refusals */
    cr_assert(seen[STATIC_STATE] && seen[STATIC_STREAM_SYNC] && seen[STATIC_IO] &&
              seen[STATIC_TORCH_COMPUTE] && seen[STATIC_PRECISION] && seen[STATIC_ENV]);
    free(dir);
    for (int i = 0; i < 2; i++) {
        artifact_free(fx[i]);
        free(fxt[i]);
    }
}
