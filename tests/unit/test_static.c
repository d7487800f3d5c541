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
#include "gates/static_names.h"
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

/* The rules' tests judge form-L texts: their launcher is accepted here (rule `launcher` has tests of
 * its own below); NULL options in the helpers mean these. */
static const static_opts L_OK = {.allow_launcher = 1};

/* Check that `text` is refused with violations of `rule` only, one of them at `marker`. */
static void expect_refused(const char *text, const char *rule, const char *marker,
                           const static_opts *o) {
    if (!o) o = &L_OK;
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
    if (!o) o = &L_OK;
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
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
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
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    expect_refused(text, "state", "_done[xnumel]", &o);
    expect_refused(text, "state", "_done.update", &o);
    free(text);
}

Test(static_rules, env) {
    static const rcase cases[] = {
        {"env", "import sys\n", "    sys.setrecursionlimit(10000)\n", "sys.setrecursionlimit"},
        {"env", "", "    torch.backends.cudnn.benchmark = True\n", "torch.backends"},
        {"env", "", "    torch.set_float32_matmul_precision('highest')\n", "torch.set_"},
        {"env", "", "    setattr(launch, 'cdiv', None)\n", "setattr"},
        {"env", "", "    g = globals()\n", "globals"},
        {"env", "", "    f = getattr(in_ptr0, 'ma' + 'x')\n", "getattr"},
        {"env", "", "    f = getattr(in_ptr0, 'shape')\n", "getattr"},
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
    static_opts consent = {.allow_precision_change = 1, .allow_launcher = 1, .model_dtype = "float32"}, half = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float16"}, bf = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "bfloat16"};
    static_opts strict = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"}, dflt = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = NULL};
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
    cr_assert_eq(static_check(c, &L_OK, &r, &e), KOPT_E_CANDIDATE);
    char *rt = report_text(&r);
    static const char *const want[] = {"io", "state", "stream-sync", "torch-compute", "io"};
    cr_assert_eq(r.n, 5, "report:\n%s", rt);
    for (size_t i = 0; i < r.n; i++) {
        cr_assert_str_eq(static_rule_name(r.v[i].rule), want[i], "report:\n%s", rt);
        if (i) cr_assert(r.v[i - 1].line <= r.v[i].line);
    }
    cr_assert(strstr(e.msg, "5 violations") && strstr(e.msg, "[io]"), "%s", e.msg);
    /* a second run on the same report starts afresh */
    cr_assert_eq(static_check(c, &L_OK, &r, NULL), KOPT_E_CANDIDATE);
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
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
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
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
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
        "    s = 'torch.matmul(x) eval( open( .sum() class tf32 fused_x'\n",
        "    print('x', xnumel)\n    m = max(xnumel, 1)\n    k = tl.float32\n",
        "    def helper(a, b=None):\n        return a\n    helper(1, b=2)\n",
        "    n = in_ptr0.numel() * 4 + xnumel % 2\n    ok = in_ptr0 is not None\n",
        "    args = (in_ptr0, out_ptr0)\n    print(*args)\n    t = in_ptr0\n",
    };
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
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
    cr_assert_eq(static_check(c, &L_OK, &r, NULL), KOPT_E_CANDIDATE);
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
    cr_assert_eq(static_check(c, &L_OK, &r, NULL), KOPT_E_CANDIDATE);
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
    /* the models of the suite's folders (tests/gpu/run.sh verifies each static candidate with
     * the folder whose fixture holds the kernel it replaces) */
    static const char *const fxn[] = {
        "tests/fixtures/inductor/01_gelu_residual_g0.py", "tests/fixtures/inductor/02_softmax_wide_g0.py",
        "tests/fixtures/inductor/03_log_softmax_g0.py",   "tests/fixtures/inductor/04_layernorm_g0.py",
        "tests/fixtures/inductor/06_groupnorm_g0.py",     "tests/fixtures/inductor/09_max_middle_g0.py",
        "tests/fixtures/inductor/10_argmax_inner_g0.py",  "tests/fixtures/inductor/11_cumsum_g0.py",
        "tests/fixtures/inductor/12_avgpool2d_g0.py",     "tests/fixtures/inductor/13_maxpool2d_g0.py",
        "tests/fixtures/inductor/08_mean_outer_g0.py"};
    enum { NFX = sizeof fxn / sizeof *fxn };
    artifact *fx[NFX];
    char *fxt[NFX];
    for (int i = 0; i < NFX; i++) {
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
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    for (size_t i = 0; i < n; i++) {
        char *rel = kasprintf("tests/candidates/static/%s", names[i]);
        size_t len;
        char *text = tu_read_fixture(rel, &len);
        char rule[64] = "";
        cr_assert_eq(sscanf(text, "# expect: gate1 %63s", rule), 1,
                     "%s: first line must be `# expect: gate1 <rule>`", rel);
        /* "env+io": every violation is one of these rules (the first is the file's) */
        int wants[4], nw = 0;
        for (char *tok = strtok(rule, "+"); tok && nw < 4; tok = strtok(NULL, "+")) {
            wants[nw] = static_rule_from_name(tok);
            cr_assert_geq(wants[nw], 0, "%s: unknown rule %s", rel, tok);
            nw++;
        }
        cr_assert_gt(nw, 0, "%s: no rule", rel);
        int want = wants[0];
        seen[want]++;
        candidate *c = NULL;
        kerr e = {0};
        cr_assert_eq(candidate_parse(text, len, &c, &e), 0, "%s: %s", rel, e.msg);
        /* form L, or form I (Inductor's text, whose host callables are refused) */
        cr_assert(candidate_form(c) == CAND_FORM_L || candidate_form(c) == CAND_FORM_I, "%s", rel);
        cr_assert_eq(c->replaces_line, 2, "%s: binding on line 2", rel);
        /* otherwise realistic: bound to a real kernel whose interface it matches */
        const art_kernel *k = fixture_kernel(fx, NFX, candidate_replaces(c));
        cr_assert(k, "%s: replaces=%s is no kernel of the fixtures", rel, candidate_replaces(c));
        cr_assert_eq(candidate_check_interface(c, k, &e), 0, "%s: %s", rel, e.msg);
        static_report r = {0};
        int rc = static_check(c, &o, &r, &e);
        char *rt = report_text(&r);
        cr_assert_eq(rc, KOPT_E_CANDIDATE, "%s passed gate 1", rel);
        cr_assert_geq(r.n, 1);
        for (size_t v = 0; v < r.n; v++) {
            int in = 0;
            for (int w = 0; w < nw; w++) in |= (int)r.v[v].rule == wants[w];
            cr_assert(in, "%s: expected only [%s]; report:\n%s", rel, static_rule_name((static_rule)want), rt);
        }
        free(rt);
        static_report_free(&r);
        candidate_free(c);
        free(text);
        free(rel);
        free(names[i]);
    }
    /* the set covers the contract's refusals */
    cr_assert(seen[STATIC_STATE] && seen[STATIC_STREAM_SYNC] && seen[STATIC_IO] &&
              seen[STATIC_TORCH_COMPUTE] && seen[STATIC_PRECISION] && seen[STATIC_ENV] && seen[STATIC_NAME] &&
              seen[STATIC_IDENT] && seen[STATIC_STRING] && seen[STATIC_TIMER]);
    free(dir);
    for (int i = 0; i < NFX; i++) {
        artifact_free(fx[i]);
        free(fxt[i]);
    }
}

/* ---------- edges of the rules and of the report (tools/mutate.py's survivors) ---------- */

/* The report of `text` under float32 rules; *n violations. Caller frees with static_report_free. */
static static_report report_of(const char *text, const static_opts *o) {
    if (!o) o = &L_OK;
    candidate *c = parse_ok(text);
    static_report r = {0};
    static_check(c, o, &r, NULL);
    candidate_free(c);
    return r;
}

/* `text` has exactly the violations rules[i] with texts texts[i] (NULL: any), in that order. */
static void expect_report(const char *text, size_t n, const char *const *rules, const char *const *texts) {
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    static_report r = report_of(text, &o);
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
    char *text = make_l(pre, body);
    const char *rules[] = {rule}, *texts[] = {vtext};
    expect_report(text, 1, rules, texts);
    free(text);
}

static void expect_clean(const char *pre, const char *body) {
    char *text = make_l(pre, body);
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    expect_passes(text, &o);
    free(text);
}

Test(static_edges, offending_texts) {
    /* methods and dunders: the attribute with its dot */
    expect_one("", "    s = in_ptr0.sum()\n", "torch-compute", ".sum");
    expect_one("", "    n = in_ptr0[0].item()\n", "stream-sync", ".item");
    expect_one("", "    k = in_ptr0.__class__\n", "io", ".__class__");
    static const char *const sync_rules[] = {"stream-sync", "stream-sync"};
    static const char *const sync_texts[] = {"torch.cuda.current_stream", ".synchronize"};
    char *t = make_l("", "    torch.cuda.current_stream().synchronize()\n");
    expect_report(t, 2, sync_rules, sync_texts);
    free(t);
    /* keyword arguments: name=value */
    expect_one("", "    print(in_ptr0, fp_downcast_rounding='rtz')\n", "precision", "fp_downcast_rounding='rtz'");
    expect_one(MM_PRE("tl.dot(a, b, allow_tf32=True)"), "", "precision", "allow_tf32=True");
    /* a mutable default: the parameter, '=' and the opener */
    expect_one("def _grid(n, memo={}):\n    return (n,)\n\n\n", "", "state", "memo={");
    expect_one("def _grid(n, m=1, memo=[]):\n    return (n,)\n\n\n", "", "state", "memo=[");
    /* statements: the whole logical line */
    expect_one("_calls = 0\n", "    global _calls\n", "state", "global _calls");
    expect_one("", "    y = in_ptr0 * 2\n", "torch-compute", "in_ptr0 * 2");
}

Test(static_edges, long_and_multi_line_texts) {
    /* a statement text is cut at 68 bytes and its first physical line: 68 kept whole, 69 cut */
    for (int len = 68; len <= 69; len++) {
        kbuf st = KBUF_INIT;
        kbuf_puts(&st, "_cache = [1");
        while ((int)st.len < len - 1) kbuf_putc(&st, '0');
        kbuf_putc(&st, ']');
        cr_assert_eq((int)st.len, len);
        char *pre = kasprintf("%s\n", kbuf_str(&st));
        char *want = len <= 68 ? kstrdup(kbuf_str(&st)) : kasprintf("%.68s ...", kbuf_str(&st));
        expect_one(pre, "", "state", want);
        free(want);
        free(pre);
        kbuf_free(&st);
    }
    /* a statement over several lines: its first line, then " ..." */
    expect_one("_cache = [\n    1,\n]\n", "", "state", "_cache = [ ...");
    /* a name split over lines: blank space around the break is one space (tabs, CRLF too) */
    expect_one("", "    y = (torch. \t\n         matmul(in_ptr0, in_ptr0))\n", "torch-compute", "torch. matmul");
    expect_one("", "    y = (torch.\t\r\n\t  matmul(in_ptr0, in_ptr0))\n", "torch-compute", "torch. matmul");
    /* texts longer than 80 bytes end in " ..." after 76; 80 are kept */
    char name[128];
    memset(name, 'a', sizeof name);
    for (int len = 80; len <= 81; len++) {
        /* f"{TAG}" + padding: the f-string token is the text */
        int pad = len - 8;   /* f"{TAG}" and the padding */
        char *fs = kasprintf("f\"{TAG}%.*s\"", pad, name);
        cr_assert_eq((int)strlen(fs), len);
        char *body = kasprintf("    print(%s)\n", fs);
        char *w = len <= 80 ? kstrdup(fs) : kasprintf("%.76s ...", fs);
        expect_one("TAG = 'k'\n", body, "syntax", w);
        free(w);
        free(body);
        free(fs);
    }
}

Test(static_edges, order_and_duplicates) {
    /* one violation per rule and position: two names of one from-import share the position */
    expect_one("from os import path, sep\n", "", "io", "from os import path");
    /* the same position, two rules: in the rules' order, whatever the imports' order */
    static const char *const env_io[] = {"env", "io"};
    char *t = make_l("from os import system, environ\n", "");
    expect_report(t, 2, env_io, NULL);
    free(t);
    /* the same line: by column, although the default is judged after the body */
    static const char *const by_col[] = {"state", "torch-compute"};
    t = make_l("def _g(n, a=[], b=torch.matmul):\n    return n\n\n\n", "");
    expect_report(t, 2, by_col, NULL);
    free(t);
    /* by line, although imports are judged first: an import at the end comes last */
    static const char *const by_line[] = {"stream-sync", "io"};
    char *l = make_l("", "    torch.cuda.synchronize()\n");
    t = kasprintf("%simport os\n", l);
    expect_report(t, 2, by_line, NULL);
    free(t);
    free(l);
    /* many violations: all kept (the report grows past its first allocations) */
    kbuf b = KBUF_INIT;
    for (int i = 0; i < 20; i++) kbuf_printf(&b, "    torch.cuda.synchronize()\n");
    t = make_l("", kbuf_str(&b));
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    static_report r = report_of(t, &o);
    cr_expect_eq(r.n, 20);
    cr_expect_eq(static_report_count(&r, STATIC_STREAM_SYNC), 20);
    cr_expect_eq(static_report_count(&r, STATIC_IO), 0);
    for (size_t i = 1; i < r.n; i++) cr_expect_eq(r.v[i].line, r.v[i - 1].line + 1);
    static_report_free(&r);
    free(t);
    kbuf_free(&b);
    cr_expect_str_eq(static_rule_name((static_rule)STATIC_NRULES), "?");
    cr_expect_str_eq(static_rule_name((static_rule)-1), "?");
}

Test(static_edges, names_the_rules_resolve) {
    /* torch.cuda.set_*, Triton's global configuration */
    expect_one("", "    torch.cuda.set_device(0)\n", "env", "torch.cuda.set_device");
    expect_one("", "    triton.knobs.cache.dir = '/tmp'\n", "env", "triton.knobs.cache.dir");
    expect_one("", "    d = triton.runtime.driver.active\n", "env", "triton.runtime.driver.active");
    /* Inductor's runtime helpers are allowed, a look-alike is not */
    expect_clean("from torch._inductor.runtime import triton_helpers\n",
                 "    triton_helpers.set_driver_to_gpu()\n");
    expect_one("", "    y = torch._inductor.runtimes.f(in_ptr0)\n", "torch-compute", "torch._inductor.runtimes.f");
    /* free names: `os` is still the os module, `tl` triton.language; other free names are
     * neither defined nor allowed builtins */
    expect_one("", "    os.system('true')\n", "io", "os.system");
    expect_one("", "    y = K.relu_all(in_ptr0)\n", "name", "K.relu_all");
    expect_one("", "    y = Fx.relu(in_ptr0)\n", "name", "Fx.relu");
    const char *free_tl = "import triton\n\n\n@triton.jit\ndef _k(x_ptr):\n    pass\n\n\n"
                          "def launch(x_ptr, stream=None):\n    dt = tl.float16\n";
    static const char *const prec[] = {"precision"}, *const prec_t[] = {"tl.float16"};
    expect_report(free_tl, 1, prec, prec_t);
    /* a function-level import alias is resolved like a module-level one */
    static const char *const two[] = {"torch-compute", "torch-compute"};
    static const char *const two_t[] = {"import torch.nn.functional", "fn2.relu"};
    char *loc = make_l("", "    import torch.nn.functional as fn2\n    y = fn2.relu(in_ptr0)\n");
    expect_report(loc, 2, two, two_t);
    free(loc);
    /* a module attribute set from a launcher */
    expect_one("", "    triton.cache_dir = '/tmp'\n", "state", "triton.cache_dir = '/tmp'");
    /* reduced precision with consent: torch dtypes are allowed then, not torch ops */
    static_opts consent = {.allow_precision_change = 1, .allow_launcher = 1, .model_dtype = "float32"};
    char *t = make_l("", "    ws = torch.empty(8, dtype=torch.float16, device='cuda')\n    h = torch.half\n");
    expect_passes(t, &consent);
    free(t);
    /* a 128-byte name is judged without overflowing anything */
    char head[129];
    memset(head, 'q', 128);
    head[128] = '\0';
    char *body = kasprintf("    y = %s.relu(in_ptr0)\n", head);
    char *lt = make_l("", body);
    expect_report(lt, 1, (const char *const[]){"name"}, NULL);
    free(lt);
    free(body);
}

Test(static_edges, getattr_and_strings) {
    /* getattr is refused whatever it is given: a literal name, a built one, none, no call */
    expect_one("", "    f = getattr(in_ptr0, 'shape')\n", "env", "getattr");
    expect_one("", "    f = getattr(in_ptr0, 'sh' + 'ape')\n", "env", "getattr");
    expect_one("", "    f = getattr(in_ptr0)\n", "env", "getattr");
    expect_one("", "    f = getattr\n", "env", "getattr");
    /* a dunder literal: io, and the string itself */
    static const char *const io_str[] = {"io", "string"}, *const io_str_t[] = {"getattr", "'__a__'"};
    char *t = make_l("", "    f = getattr(in_ptr0, '__a__')\n");
    expect_report(t, 2, io_str, io_str_t);
    free(t);
    /* a module given to it is also a module used as a value */
    static const char *const env_name[] = {"env", "name"}, *const env_name_t[] = {"getattr", "torch"};
    t = make_l("", "    mm = getattr(torch, \"\"\"matmul\"\"\")\n");
    expect_report(t, 2, env_name, env_name_t);
    free(t);
    static const char *const env_tc[] = {"env", "torch-compute"}, *const env_tc_t[] = {"getattr", "torch.cuda"};
    t = make_l("", "    s = getattr(torch.cuda, 'synchronize')\n");
    expect_report(t, 2, env_tc, env_tc_t);
    free(t);
    /* the TF32 strings, whatever their quoting; other strings are text */
    expect_one(MM_PRE("tl.dot(a, b, input_precision=\"\"\"tf32\"\"\")"), "", "precision", "\"\"\"tf32\"\"\"");
    expect_one(MM_PRE("tl.dot(a, b, input_precision=r\"tf32\")"), "", "precision", "r\"tf32\"");
    expect_clean(MM_PRE("tl.dot(a, b, input_precision='ieee')"), "    s = 'tf32 ' + '' + \"\"\"tf3\"\"\"\n");
}

Test(static_edges, dunders_and_pointer_names) {
    expect_one("", "    k = in_ptr0.__a__\n", "io", ".__a__");
    /* not dunders: one side only, or too short; those with a leading underscore are private
     * attributes (rule name) */
    expect_clean("", "    b = in_ptr0.data__\n    c = in_ptr0.a__b__\n");
    char *pt = make_l("", "    a = in_ptr0.__data\n    d = in_ptr0._ab__\n    e = in_ptr0.____\n");
    expect_report(pt, 3, (const char *const[]){"name", "name", "name"},
                  (const char *const[]){".__data", "._ab__", ".____"});
    free(pt);
    /* in_out_ptr* names are tensors too; the name must go on past the prefix */
    expect_one("", "    in_out_ptr1 = in_ptr0\n    y = in_out_ptr1 * 2\n", "torch-compute", "in_out_ptr1 * 2");
    expect_clean("", "    nblocks2 = xnumel // 2\n    total = nblocks2 * 4\n");
    /* every arithmetic operator, on either side */
    expect_one("", "    y = in_ptr0 + 1\n", "torch-compute", "in_ptr0 + 1");
    expect_one("", "    y = 2 * in_ptr0\n", "torch-compute", "in_ptr0");
    /* unpacking is not arithmetic */
    expect_clean("", "    print(*in_ptr0)\n    print(xnumel, *out_ptr0)\n");
    /* augmented writes into a module-level object */
    char *t = make_l("_done = {}\n", "    _done[xnumel] += 1\n");
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    expect_refused(t, "state", "_done[xnumel]", &o);
    free(t);
}

Test(static_edges, double_star_unpacking_is_not_arithmetic) {
    /* f(**kw) unpacks like f(*args): a pointer name after a '**' that opens an argument is passed
     * on, not raised to a power */
    expect_clean("", "    print(**in_ptr0)\n    print(xnumel, **out_ptr0)\n");
    /* '**' between two operands is a power, on either side of the pointer name */
    expect_one("", "    y = 2 ** in_ptr0\n", "torch-compute", "in_ptr0");
    expect_one("", "    y = in_ptr0 ** 2\n", "torch-compute", "in_ptr0 ** 2");
}

Test(static_edges, star_imports) {
    /* every star import is refused (also triton.language's and math's, allowed before the
     * allowlist); the names it would bring are free names, not defined and not builtins */
    static const char *const imp_name[] = {"import", "name"};
    const char *tl_star = "from triton.language import *\nimport triton\n\n\n@triton.jit\ndef _k(x_ptr):\n    pass\n\n\n"
                          "def launch(x_ptr, stream=None):\n    dt = float16\n";
    expect_report(tl_star, 2, imp_name, (const char *const[]){"from triton.language import *", "float16"});
    char *t = make_l("from torch import *\n", "    y = matmul(in_ptr0, in_ptr0)\n");
    expect_report(t, 2, imp_name, (const char *const[]){"from torch import *", "matmul"});
    free(t);
    static const char *const imp_2[] = {"import", "name", "name"};
    t = make_l("from math import *\n", "    r = sqrt(2.0) + floor(1.5)\n");
    expect_report(t, 3, imp_2, (const char *const[]){"from math import *", "sqrt", "floor"});
    free(t);
    /* the module itself, imported, is fine */
    expect_clean("import math\n", "    r = math.sqrt(2.0) + math.floor(1.5)\n");
}

Test(static_edges, module_level_values_and_calls) {
    /* a value made by a call: allowed helpers, judged calls, anything else */
    expect_one("_S = 'a,b'.split(',')\n", "", "state", "_S = 'a,b'.split(',')");
    expect_one("_F = (lambda n: [n])(3)\n", "", "state", "_F = (lambda n: [n])(3)");
    expect_one("_T = (min, max)\n_V = _T[0](1, 2)\n", "", "state", "_V = _T[0](1, 2)");
    expect_one("def _mk():\n    return {}\n\n\n_V = _mk()\n", "", "state", "_V = _mk()");
    expect_one("_W = torch.ones(4)\n", "", "torch-compute", "torch.ones");
    expect_one("_I = input()\n", "", "io", "input");
    expect_clean("_N = int(3.5) + min(4, 8)\n_C = triton.cdiv(10, 3)\n_L = math.log(2.0)\n", "");
    /* one violation per statement */
    expect_one("_c = [[], {}]\n", "", "state", "_c = [[], {}]");
    expect_one("_d = dict(x=list())\n", "", "state", "_d = dict(x=list())");
    expect_one("_seen = set()\n", "", "state", "_seen = set()");
    /* two statements on a line: each its own text */
    expect_one("_a = 1; _b = []\n", "", "state", "_b = []");
    /* an expression statement: a call at import time, also after an allowed one */
    expect_one("math.floor(1.5) + print(2)\n", "", "state", "math.floor(1.5) + print(2)");
    expect_clean("from torch._inductor.runtime import triton_helpers\ntriton_helpers.set_driver_to_gpu()\n", "");
    /* the first line of the file is judged like any other */
    const char *first = "print('loading')\nimport triton\n\n\n@triton.jit\ndef _k(x_ptr):\n    pass\n\n\n"
                        "def launch(x_ptr, stream=None):\n    pass\n";
    static const char *const st[] = {"state"};
    expect_report(first, 1, st, (const char *const[]){"print('loading')"});
    const char *first_io = "import os\nimport triton\n\n\n@triton.jit\ndef _k(x_ptr):\n    pass\n\n\n"
                           "def launch(x_ptr, stream=None):\n    pass\n";
    static const char *const io[] = {"io"};
    expect_report(first_io, 1, io, (const char *const[]){"import os"});
    const char *first_tok = "torch.cuda.synchronize()\nimport triton\n\n\n@triton.jit\ndef _k(x_ptr):\n    pass\n\n\n"
                            "def launch(x_ptr, stream=None):\n    pass\n";
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    static_report r = report_of(first_tok, &o);
    cr_expect(r.n >= 1 && r.v[0].line == 1 && r.v[0].col == 1 && r.v[0].rule == STATIC_STREAM_SYNC);
    static_report_free(&r);
}

Test(static_edges, defaults_locals_and_imports) {
    /* immutable defaults and allowed calls are fine; a judged call is refused once, by its rule */
    expect_clean("def _g(n, dims=(1, 2), b=min(4, 8), c=None):\n    return n\n\n\n", "");
    expect_one("def _g(n, m=torch.ones(2)):\n    return n\n\n\n", "", "torch-compute", "torch.ones");
    /* a local function named like a tensor method is not a method call */
    expect_clean("", "    def mean(v):\n        return v\n    m = mean(in_ptr0)\n");
    /* attributes without a call are not method calls */
    expect_clean("", "    f = in_ptr0.sum\n    g = in_ptr0.item\n");
    /* a relative import says so */
    char *t = make_l("from . import helpers\n", "");
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    static_report r = report_of(t, &o);
    cr_expect(r.n == 1 && strstr(r.v[0].why, "relative"), "%s", r.n ? r.v[0].why : "-");
    static_report_free(&r);
    free(t);
}

Test(static_edges, tf32_flags_by_name) {
    /* allow_tf32=NAME: refused whatever the name holds (1 is truthy and TF32 as much as True;
     * None falls back to Triton's default, TF32): only the literal False keeps float32 */
    expect_one("FLAG = True\n" MM_PRE("tl.dot(a, b, allow_tf32=FLAG)"), "", "precision", "allow_tf32=FLAG");
    expect_one("FLAG = False\nOTHER = True\n" MM_PRE("tl.dot(a, b, allow_tf32=FLAG)"), "", "precision", "allow_tf32=FLAG");
    expect_one("FLAG = 1\n" MM_PRE("tl.dot(a, b, allow_tf32=FLAG)"), "", "precision", "allow_tf32=FLAG");
    expect_one(MM_PRE("tl.dot(a, b, allow_tf32=None)"), "", "precision", "allow_tf32=None");
    expect_clean(MM_PRE("tl.dot(a, b, allow_tf32=False)"), "");
    /* the assignment on the file's first line counts */
    const char *first = "USE = True\nimport triton\nimport triton.language as tl\n\n\n" MM_PRE("tl.dot(a, b, allow_tf32=USE)")
                        "def launch(x_ptr, stream=None):\n    pass\n";
    static const char *const prec[] = {"precision"};
    expect_report(first, 1, prec, (const char *const[]){"allow_tf32=USE"});
    /* a keyword given inside a nested call does not configure tl.dot */
    expect_one(MM_PRE("tl.dot(a, tl.trans(b, input_precision='ieee'))"), "", "precision", "tl.dot");
}

Test(static_edges, fstrings_naming_top_level_definitions) {
    /* f-strings, any case of prefix, with spaces or parentheses before the name */
    expect_one("TAG = 'k'\n", "    print(F\"{TAG}\")\n", "syntax", "F\"{TAG}\"");
    expect_one("TAG = 'k'\n", "    print(rf\"{ (TAG)}\")\n", "syntax", "rf\"{ (TAG)}\"");
    expect_one("", "    print(f\"{_k}\")\n", "syntax", "f\"{_k}\"");
    /* every character a name can hold */
    expect_one("a9_zA0Z = 1\n", "    print(f\"x{a9_zA0Z}y\")\n", "syntax", "f\"x{a9_zA0Z}y\"");
    /* plain strings, escaped braces, other names, prefixes of a name */
    expect_clean("TAG = 'k'\n", "    print(\"{TAG}\", r\"{TAG}\", f\"{{TAG}}\", f\"{xnumel}\", f\"{TAGS}\", f\"{TA}\")\n");
}

/* ---------- the allowlist (issue 11): each rule refuses what the denylist let through ---------- */

/* expect_report under options o. */
static void expect_report_o(const char *text, const static_opts *o, size_t n, const char *const *rules,
                            const char *const *texts) {
    if (!o) o = &L_OK;
    static_report r = report_of(text, o);
    char *rt = report_text(&r);
    cr_expect_eq(r.n, n, "expected %zu violations; report:\n%s\ntext:\n%s", n, rt, text);
    for (size_t i = 0; i < n && i < r.n; i++) {
        cr_expect_str_eq(static_rule_name(r.v[i].rule), rules[i], "violation %zu; report:\n%s", i, rt);
        if (texts && texts[i]) cr_expect_str_eq(r.v[i].text, texts[i], "violation %zu; report:\n%s", i, rt);
    }
    free(rt);
    static_report_free(&r);
}

#define HEUR "from torch._inductor.runtime import triton_helpers, triton_heuristics\n"
#define HELP "from torch._inductor.runtime.triton_helpers import libdevice, math as tl_math\n"

Test(static_allowlist, modules_are_not_allowed_wholesale) {
    /* Inductor's runtime modules and triton re-export os, builtins, their own internals */
    expect_one(HEUR, "    triton_heuristics.os.system('id')\n", "name", "triton_heuristics.os.system");
    expect_one("from torch._inductor.runtime.triton_heuristics import os\n", "", "name",
               "from torch._inductor.runtime.triton_heuristics import os");
    expect_one("", "    torch._inductor.runtime.triton_helpers.triton.runtime.driver.active\n", "name",
               "torch._inductor.runtime.triton_helpers.triton.runtime.driver.active");
    expect_one("", "    j = triton.runtime.jit\n", "name", "triton.runtime.jit");
    expect_one("", "    b = tl.core.builtins\n", "name", "tl.core.builtins");
    expect_one("", "    c = tl.math.core\n", "name", "tl.math.core");
    expect_one(HELP, "    c = libdevice.core\n", "name", "libdevice.core");
    expect_one(HELP, "    c = tl_math.wraps\n", "name", "tl_math.wraps");
    expect_one("from triton.language.extra import libdevice\n", "    d = libdevice.cuda_libdevice\n", "name",
               "libdevice.cuda_libdevice");
    /* a private attribute of an allowed member */
    expect_one("", "    p = tl.load._x\n", "name", "tl.load._x");
    /* what a kernel needs stays allowed: members, their public attributes, math */
    expect_clean(HEUR HELP "from torch._inductor.runtime.hints import ReductionHint, DeviceProperties\n"
                           "import math\n",
                 "    f = (triton_heuristics.pointwise, triton_helpers.maximum, libdevice.erf, tl_math.exp)\n"
                 "    g = (tl.math.exp, tl.PropagateNan.ALL, ReductionHint.INNER, math.pi, math.log(2.0))\n"
                 "    h = (tl.extra.libdevice.exp, tl.extra.cuda.libdevice.exp, triton.language.sum)\n");
}

Test(static_allowlist, dtypes_are_not_built_from_strings) {
    expect_one("", "    dt = tl.dtype('fp' + '32')\n", "name", "tl.dtype");
    expect_one("", "    dt = tl.pointer_type(tl.float32)\n", "name", "tl.pointer_type");
    expect_one("", "    dt = tl.str_to_ty('fp32')\n", "name", "tl.str_to_ty");
    /* a reduced-precision type named in a string (Form I's signature) in a float32 model */
    expect_one("", "    sig = {'in_ptr0': '*fp16'}\n", "precision", "'*fp16'");
    expect_one("", "    t = 'bf16'\n", "precision", "'bf16'");
    static_opts half = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float16"};
    char *t = make_l("", "    sig = {'in_ptr0': '*fp16', 'x': 'bf16'}\n");
    expect_passes(t, &half);
    free(t);
    expect_clean("", "    sig = {'in_ptr0': '*fp32', 'x': 'i32', 'note': 'fp16 later'}\n");
}

Test(static_allowlist, modules_are_not_values) {
    /* under another name a module escapes the allowlist: mod.runtime.driver... */
    expect_one("", "    m = triton\n", "name", "triton");
    expect_one("", "    print(tl)\n", "name", "tl");
    expect_one("", "    m = torch\n", "name", "torch");
    expect_one("", "    m = tl.extra.cuda\n", "name", "tl.extra.cuda");
    expect_one(HEUR, "    m = triton_heuristics\n", "name", "triton_heuristics");
    expect_one("T = triton\n", "", "name", "triton");
    expect_one("def _g(n, mod=tl):\n    return n\n\n\n", "", "name", "tl");
}

Test(static_allowlist, free_names_are_builtins_on_the_list) {
    expect_one("", "    k = type(in_ptr0)\n", "name", "type");
    expect_one("", "    o = object()\n", "name", "object");
    expect_one("", "    s = chr(95)\n", "name", "chr");
    expect_one("", "    h = hasattr(in_ptr0, 'x')\n", "name", "hasattr");
    expect_one("", "    d = dir(in_ptr0)\n", "name", "dir");
    /* Inductor's module names a form-L launcher would see after stitching */
    expect_one("", "    s = get_raw_stream(0)\n", "name", "get_raw_stream");
    expect_one("", "    triton_poi_fused_add_0.run(in_ptr0)\n", "name", "triton_poi_fused_add_0.run");
    expect_clean("", "    n = len((1, 2)) + sum(range(3)) + abs(-1) + max(1, 2) + round(1.5)\n"
                     "    if not isinstance(xnumel, int):\n        raise ValueError('xnumel')\n"
                     "    pairs = list(zip(range(2), range(2))) + sorted(set([1])) + [dict(a=1)]\n"
                     "    for i, v in enumerate(pairs):\n        print(i, v, str(i), float(i), bool(i))\n");
}

Test(static_allowlist, dunder_names_anywhere) {
    expect_one("", "    b = __builtins__\n", "io", "__builtins__");
    expect_one("", "    n = __name__\n", "io", "__name__");
    expect_one("", "    f = __file__\n", "io", "__file__");
    expect_one("", "    print(__x__=1)\n", "io", "__x__");
    {
        /* the store into self is an attribute store on whatever object the method is given
         * (_Box.bump(in_ptr0) would mark the input tensor): state, since issue 11's suite */
        char *t = make_l("class _Box:\n    def __init__(self):\n        self.v = 1\n\n\n", "");
        static const char *const rules[] = {"io", "state"}, *const texts[] = {"__init__", "self.v = 1"};
        expect_report(t, 2, rules, texts);
        free(t);
    }
    expect_one("", "    def __helper__(n):\n        return n\n", "io", "__helper__");
    /* Inductor's decorator keeps filename=__file__ (every fixture kernel, static_rules) */
    expect_clean("@triton.autotune(configs=[], key=['xnumel'])\n@triton.jit\ndef _k2(x_ptr, filename=0):\n"
                 "    pass\n\n\n",
                 "");
}

Test(static_allowlist, identifiers_are_ascii) {
    /* Python normalises identifiers (NFKC): full-width open is open */
    expect_one("", "    f = \xef\xbd\x8f\xef\xbd\x90\xef\xbd\x85\xef\xbd\x8e('/tmp/x')\n", "identifier",
               "\xef\xbd\x8f\xef\xbd\x90\xef\xbd\x85\xef\xbd\x8e");
    /* an attribute: also not on triton.language's list */
    char *t = make_l("", "    x = tl.\xef\xbd\x8coad\n");
    expect_report(t, 2, (const char *const[]){"name", "identifier"},
                  (const char *const[]){"tl.\xef\xbd\x8coad", "\xef\xbd\x8coad"});
    free(t);
    expect_one("", "    caf\xc3\xa9 = 1\n", "identifier", "caf\xc3\xa9");
    /* non-ASCII text in strings and comments is text */
    expect_clean("", "    s = 'caf\xc3\xa9'  # d\xc3\xa9j\xc3\xa0 vu\n");
}

Test(static_allowlist, strings_do_not_spell_names) {
    expect_one("", "    k = '\\x5f\\x5fglobals\\x5f\\x5f'\n", "string", "'\\x5f\\x5fglobals\\x5f\\x5f'");
    expect_one("", "    k = r'\\d'\n", "string", "r'\\d'");
    expect_one("", "    k = '__globals__'\n", "string", "'__globals__'");
    expect_one("", "    k = 'fused__x'\n", "string", "'fused__x'");
    expect_one("", "    k = 'a' '__' 'b'\n", "string", "'__'");
    /* in a decorator (Inductor's kernel names): "__" inside a word only */
    expect_clean("@triton.autotune(configs=[], key=['triton_poi_fused__to_copy_0'])\n@triton.jit\n"
                 "def _k2(x_ptr):\n    pass\n\n\n",
                 "");
    expect_one("@triton.autotune(configs=[], key=['__x'])\n@triton.jit\ndef _k2(x_ptr):\n    pass\n\n\n", "",
               "string", "'__x'");
    expect_one("@triton.autotune(configs=[], key=['x.__a'])\n@triton.jit\ndef _k2(x_ptr):\n    pass\n\n\n", "",
               "string", "'x.__a'");
    expect_one("@triton.autotune(configs=[], key=['x__'])\n@triton.jit\ndef _k2(x_ptr):\n    pass\n\n\n", "",
               "string", "'x__'");
    /* f-strings evaluate their fields: plain names only */
    expect_one("", "    print(f\"{open('/etc/passwd').read()}\")\n", "string", "f\"{open('/etc/passwd').read()}\"");
    expect_one("", "    print(f\"{xnumel + 1}\")\n", "string", "f\"{xnumel + 1}\"");
    expect_one("", "    print(f\"{xnumel:{xnumel}}\")\n", "string", "f\"{xnumel:{xnumel}}\"");
    expect_clean("", "    print(f\"{xnumel} {in_ptr0.shape!r} {xnumel:>8} {{x}} {xnumel=}\")\n");
}

Test(static_allowlist, no_timers_or_sm_ids) {
    expect_one("", "    t = tl.extra.cuda.globaltimer()\n", "timer", "tl.extra.cuda.globaltimer");
    expect_one("", "    t = tl.extra.cuda.smid()\n", "timer", "tl.extra.cuda.smid");
    static const char *const two[] = {"timer", "timer"};
    char *t = make_l("from triton.language.extra.cuda import clock64\n", "    c = clock64()\n");
    expect_report(t, 2, two, (const char *const[]){"from triton.language.extra.cuda import clock64", "clock64"});
    free(t);
    /* inline PTX: precision in a float32 model; with consent still no clock register and no
     * assembly built from pieces */
    static_opts consent = {.allow_precision_change = 1, .allow_launcher = 1, .model_dtype = "float32"};
    const char *asm_t = "tl.inline_asm_elementwise('mov.u32 $0, %smid;', '=r', [], dtype=tl.int32, is_pure=False, "
                        "pack=1)";
    char *body = kasprintf("    s = %s\n", asm_t);
    char *a = make_l("", body);
    free(body);
    expect_report_o(a, &consent, 1, (const char *const[]){"timer"}, (const char *const[]){"'mov.u32 $0, %smid;'"});
    static_opts strict = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    expect_report_o(a, &strict, 2, (const char *const[]){"precision", "timer"}, NULL);
    free(a);
    char *b = make_l("", "    s = tl.inline_asm_elementwise('mov.u32 $0, %sm' + 'id;', '=r', [], dtype=tl.int32, "
                         "is_pure=False, pack=1)\n");
    expect_report_o(b, &consent, 1, (const char *const[]){"timer"}, (const char *const[]){"tl.inline_asm_elementwise"});
    free(b);
    char *c = make_l("", "    s = tl.inline_asm_elementwise('mov.b32 $0, $1;', '=r,r', [xnumel], dtype=tl.int32, "
                         "is_pure=True, pack=1)\n");
    expect_report_o(c, &consent, 0, NULL, NULL);
    free(c);
    /* with consent, its %-registers are an allowlist: declared ones and thread / block / lane
     * positions; a counter (%pm0), a launch identity (%gridid) or a driver value is refused */
    static const char *const asm_cases[][2] = {
        {"mov.u64 $0, %gridid;", "refused"},
        {"{ .reg .b32 %t<2>; mov.b32 %t1, %tid.x; mov.b32 $0, %t1; }", NULL},
    };
    for (size_t k = 0; k < sizeof asm_cases / sizeof *asm_cases; k++) {
        char *line = kasprintf("    s = tl.inline_asm_elementwise('%s', '=r', [], dtype=tl.int32, is_pure=True, pack=1)\n",
                               asm_cases[k][0]);
        char *file = make_l("", line);
        free(line);
        if (asm_cases[k][1])
            expect_report_o(file, &consent, 1, (const char *const[]){"timer"},
                            (const char *const[]){"tl.inline_asm_elementwise"});
        else
            expect_report_o(file, &consent, 0, NULL, NULL);
        free(file);
    }
    /* the rest of tl.extra.cuda is not on the list either */
    expect_one("", "    n = tl.extra.cuda.num_threads()\n", "name", "tl.extra.cuda.num_threads");
}

Test(static_allowlist, jit_functions_have_no_attributes) {
    expect_one("", "    f = _k.fn\n", "name", "_k.fn");
    expect_one("", "    _k.cache.clear()\n", "name", "_k.cache.clear");
    /* set: the state rule says it */
    expect_one("", "    _k.src = ''\n", "state", "_k.src = ''");
}

/* Every rendered kernel template (the goldens of tests/fixtures/templates/: what the built-in
 * executor sends) and every candidate of tests/candidates/<problem>/ whose `# expect:` line is
 * not a gate-1 refusal passes the rules: the allowlist costs no honest candidate. */
static void passes_file_text(const char *what, const char *text, size_t len) {
    candidate *c = NULL;
    kerr e = {0};
    cr_assert_eq(candidate_parse(text, len, &c, &e), 0, "%s: %s", what, e.msg);
    static_report r = {0};
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    int rc = static_check(c, &o, &r, &e);
    char *rt = report_text(&r);
    cr_expect_eq(rc, 0, "%s refused:\n%s", what, rt);
    free(rt);
    static_report_free(&r);
    candidate_free(c);
}

static size_t list_dir(const char *rel, const char *suffix, char **names, size_t max) {
    char *dir = tu_fixture_path(rel);
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open %s", dir);
    size_t n = 0, sl = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l > sl && !strcmp(de->d_name + l - sl, suffix) && de->d_name[0] != '.') {
            cr_assert_lt(n, max);
            names[n++] = kstrdup(de->d_name);
        }
    }
    closedir(d);
    free(dir);
    qsort(names, n, sizeof *names, cmp_str);
    return n;
}

Test(static_files, rendered_templates_and_honest_candidates_pass) {
    char *names[64];
    size_t n = list_dir("tests/fixtures/templates", ".txt", names, 64), ncand = 0;
    for (size_t i = 0; i < n; i++) {
        char *rel = kasprintf("tests/fixtures/templates/%s", names[i]);
        size_t len;
        char *text = tu_read_fixture(rel, &len);
        /* "### label" lines separate the candidates of one executor answer */
        for (char *p = strstr(text, "### "); p; ncand++) {
            char *body = strchr(p, '\n');
            cr_assert(body, "%s", rel);
            body++;
            char *next = strstr(body, "\n### ");
            size_t bl = next ? (size_t)(next + 1 - body) : strlen(body);
            char *what = kasprintf("%s, %.*s", rel, (int)(body - 1 - p), p);
            passes_file_text(what, body, bl);
            free(what);
            p = next ? next + 1 : NULL;
        }
        free(text);
        free(rel);
        free(names[i]);
    }
    cr_assert_geq(ncand, 30, "only %zu rendered templates", ncand);
    char *dirs[64];
    size_t nd = 0, nhonest = 0;
    {
        char *root = tu_fixture_path("tests/candidates");
        DIR *d = opendir(root);
        cr_assert(d);
        struct dirent *de;
        while ((de = readdir(d)))
            if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && nd < 64) dirs[nd++] = kstrdup(de->d_name);
        closedir(d);
        free(root);
    }
    for (size_t i = 0; i < nd; i++) {
        char *rel = kasprintf("tests/candidates/%s", dirs[i]);
        char *files[64];
        size_t nf = list_dir(rel, ".py", files, 64);
        for (size_t f = 0; f < nf; f++) {
            char *frel = kasprintf("%s/%s", rel, files[f]);
            size_t len;
            char *text = tu_read_fixture(frel, &len);
            if (strncmp(text, "# expect: gate1", 15)) {
                passes_file_text(frel, text, len);
                nhonest++;
            }
            free(text);
            free(frel);
            free(files[f]);
        }
        free(rel);
        free(dirs[i]);
    }
    cr_assert_geq(nhonest, 20, "only %zu candidates", nhonest);
}

Test(static_allowlist, private_attributes) {
    /* of locals, parameters and call results: internals */
    expect_one("", "    c = in_ptr0._cdata\n", "name", "._cdata");
    expect_one("", "    s = in_ptr0.untyped_storage()._untyped\n", "name", "._untyped");
    expect_one("", "    p = torch.cuda.get_device_properties(0)._x\n", "name", "._x");
    /* public ones are the other rules' (methods: torch-compute / stream-sync lists) */
    expect_clean("", "    n = in_ptr0.shape[0] + in_ptr0.stride(0) + in_ptr0.data_ptr()\n    d = in_ptr0.device\n");
}

/* The allowlist module itself, at its edges. */
Test(static_names, lookup) {
    cr_expect_eq(static_names_lookup("numpy.sum"), SN_OUTSIDE);
    cr_expect_eq(static_names_lookup("tritonx.jit"), SN_OUTSIDE);
    cr_expect_eq(static_names_lookup("torch._inductor.runtimes"), SN_OUTSIDE);
    cr_expect_eq(static_names_lookup("triton"), SN_MODULE);
    cr_expect_eq(static_names_lookup("triton.language.extra.cuda"), SN_MODULE);
    cr_expect_eq(static_names_lookup("torch._inductor.runtime.triton_helpers.libdevice"), SN_MODULE);
    cr_expect_eq(static_names_lookup("triton.jit"), SN_MEMBER);
    cr_expect_eq(static_names_lookup("triton.language.PropagateNan.ALL.value"), SN_MEMBER);
    cr_expect_eq(static_names_lookup("triton.language.PropagateNan.ALL.value._x"), SN_REFUSED);
    cr_expect_eq(static_names_lookup("triton.language.PropagateNan._x.value"), SN_REFUSED);
    cr_expect_eq(static_names_lookup("torch._inductor.runtime.triton_helpers.libdevice.erf"), SN_MEMBER);
    cr_expect_eq(static_names_lookup("torch._inductor.runtime.triton_helpers.math.exp"), SN_MEMBER);
    cr_expect_eq(static_names_lookup("torch._inductor.runtime.triton_helpers.math.core"), SN_REFUSED);
    cr_expect_eq(static_names_lookup("math.pi"), SN_MEMBER);
    cr_expect_eq(static_names_lookup("math._x"), SN_REFUSED);
    cr_expect_eq(static_names_lookup("math."), SN_REFUSED);
    cr_expect_eq(static_names_lookup("triton.language.extra.cuda.smid"), SN_TIMER);
    cr_expect_eq(static_names_lookup("triton.language.extra.smid"), SN_REFUSED);
    cr_expect_eq(static_names_lookup("triton.runtime"), SN_REFUSED);
    /* a segment longer than any module name: judged without overflowing anything */
    char q[600];
    memcpy(q, "triton.language.", 16);
    memset(q + 16, 'q', 500);
    q[516] = '\0';
    cr_expect_eq(static_names_lookup(q), SN_REFUSED);
    /* the module-name key at its size: 15 + 1 + 240 bytes fill it exactly, one more is skipped */
    for (size_t sl = 239; sl <= 241; sl++) {
        memset(q + 16, 'q', sl);
        q[16 + sl] = '\0';
        cr_expect_eq(static_names_lookup(q), SN_REFUSED, "%zu", sl);
    }
    cr_expect_eq(static_names_lookup("math.e"), SN_MEMBER);
    cr_expect(static_names_builtin("len") && static_names_builtin("ValueError"));
    cr_expect(!static_names_builtin("type") && !static_names_builtin("getattr") && !static_names_builtin("le"));
}

Test(static_names, tokens) {
    cr_expect(static_names_ascii("ab", 2) && static_names_ascii("ab\xc3", 2) && !static_names_ascii("a\xc3", 2));
    cr_expect(!static_names_ascii("\xc3" "a", 2) && !static_names_ascii("\x80", 1) && static_names_ascii("\x7f", 1));
    cr_expect(static_names_string_escape("'\\'", 3) && !static_names_string_escape("'a'\\", 3));
    /* strict: any "__"; else only at a word's edge */
    cr_expect(static_names_string_dunder("__x", 3, 1) && static_names_string_dunder("a__b", 4, 1));
    cr_expect(!static_names_string_dunder("a__b", 4, 0) && !static_names_string_dunder("a___b", 5, 0));
    cr_expect(static_names_string_dunder("__x", 3, 0) && static_names_string_dunder("a__", 3, 0));
    cr_expect(static_names_string_dunder("a.__b", 5, 0) && !static_names_string_dunder("a_b", 3, 1));
    cr_expect(!static_names_string_dunder("a_", 2, 1) && !static_names_string_dunder("a__b_", 2, 1));
    cr_expect(!static_names_string_dunder("z__Z", 4, 0) && !static_names_string_dunder("9__0", 4, 0));
    cr_expect(static_names_string_dunder("a__b", 3, 0)); /* the word ends with the token */
    cr_expect(static_names_string_timer("'%smid'", 7) && !static_names_string_timer("'%sm'", 5));
    cr_expect(static_names_string_timer("'mov.u64 $0, %globaltimer;'", 27));
    cr_expect(static_names_string_timer("%smid", 5) && static_names_string_timer("x%smid", 6) &&
              !static_names_string_timer("x%smi", 5));
    cr_expect(!static_names_string_dunder("A__B", 4, 0) && !static_names_string_dunder("a__z", 4, 0));
    /* inline PTX's registers: declared (plain or parameterised), or positions; anything else is
     * named back */
    char bad[48] = "";
#define PTX_OK(t) static_names_ptx_registers(t, strlen(t), bad, sizeof bad)
    cr_expect(PTX_OK("mov.b32 $0, $1;") && PTX_OK("mov.u32 $0, %tid.x;") && PTX_OK("mov.u32 $0, %laneid;"));
    cr_expect(PTX_OK("{ .reg .f32 %t, %f<4>; add.f32 %f3, %t, %t; mov.b32 $0, %f3; }"));
    cr_expect(PTX_OK("{ .reg .pred p; setp.lt.f32 p, $1, 0f00000000; selp.b32 $0, 0, $1, p; }"));
    cr_expect(PTX_OK("mov.u32 $0, %ctaid.y; // 100%") && PTX_OK("%%"));
    cr_expect(!PTX_OK("mov.u32 $0, %pm0;") && !strcmp(bad, "%pm0"), "%s", bad);
    cr_expect(!PTX_OK("mov.u64 $0, %gridid;") && !strcmp(bad, "%gridid"), "%s", bad);
    cr_expect(!PTX_OK("mov.u32 $0, %envreg7;") && !PTX_OK("mov.u32 $0, %warpid;") && !PTX_OK("mov.u32 $0, %tidy;"));
    cr_expect(!PTX_OK("{ .reg .b32 %pm<8>; mov.b32 $0, %pm0; }"), "a declaration does not clear a special name");
    cr_expect(!PTX_OK("{ .reg .b32 %t; mov.b32 $0, %u; }") && !strcmp(bad, "%u"), "%s", bad);
    cr_expect(!PTX_OK("{ .reg .b32 %t<2>; mov.b32 $0, %tx; }"), "only digits extend a parameterised name");
    cr_expect(PTX_OK(".reg .b32 %t; mov.b32 $0, %t;"), "a declaration at the very start");
    cr_expect(!PTX_OK("{ .regx .b32 %t; mov.b32 $0, %t; }"), ".regx declares nothing");
    cr_expect(PTX_OK("{ .reg .b32 %f<2>; mov.b32 $0, %f0; }") && PTX_OK("{ .reg .b32 %f<10>; mov.b32 $0, %f9; }"));
    /* the count of a parameterised declaration is skipped, not read as a declared name */
    cr_expect(!PTX_OK("{ .reg .b32 %f<4>; mov.b32 $0, %4; }") && !strcmp(bad, "%4"), "%s", bad);
    cr_expect(PTX_OK("{ .reg .b32 %f<4>, %g; mov.b32 $0, %g; }"), "a name after a parameterised one is declared");
    cr_expect(!PTX_OK("%pm0") && !strcmp(bad, "%pm0"), "a register at the very start: %s", bad);
    cr_expect(!PTX_OK("mov.b32 $0, %aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;") && strlen(bad) == 41 &&
                  !strcmp(bad + 37, "aaaa"),
              "a long name is cut to 40 characters: %s", bad);
    cr_expect(!static_names_ptx_registers("mov %pm0", 8, NULL, 0), "no buffer for the name: still refused");
    cr_expect(!static_names_ptx_registers("mov %pm0", 8, NULL, 8), "no buffer, a capacity: not written");
    cr_expect(static_names_ptx_registers("mov %tid %pm0", 8, bad, sizeof bad), "only the n bytes given count");
#undef PTX_OK
    /* only the n bytes given count */
    cr_expect(!static_names_fstring_fields("f'{x}'", 4) && !static_names_fstring_fields("f'{{x}}'", 3));
    cr_expect(static_names_fstring_fields("f'x'{", 4));
    /* f-string fields */
    static const struct {
        const char *s;
        int ok;
    } f[] = {{"f'{x}'", 1},       {"f'{x.y}'", 1},   {"f'{ (x) }'", 1}, {"f'{x!r:>8}'", 1}, {"f'{x!s}'", 1}, {"f'{x!a}'", 1}, {"f'{x=}'", 1},
             {"f'{{x()}}'", 1},   {"'{x()}'", 1},    {"rb'{x()}'", 1},  {"f'{x()}'", 0},    {"f'{1}'", 0},
             {"f'{(x}'", 0},      {"f'{x)}'", 0},    {"f'{x.}'", 0},    {"f'{x:{y}}'", 0},  {"f'{x:(}'", 0},
             {"f'{x'", 0},        {"f'{}'", 0},      {"F'{x[0]}'", 0},  {"f'{x!z}'", 0},    {"f'{x!r:\\}'", 0},
             {"f'{(x y)}'", 0}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        cr_expect_eq(static_names_fstring_fields(f[i].s, strlen(f[i].s)), f[i].ok, "%s", f[i].s);
}

/* static_names_ptx_registers on a copy of t in a buffer of exactly strlen(t) bytes, no NUL after
 * it: ASan reports any read past the n bytes the contract gives. */
static int ptx_ok_exact(const char *t, char *bad, size_t cap) {
    size_t n = strlen(t);
    char *s = malloc(n);
    cr_assert(s);
    memcpy(s, t, n);
    int ok = static_names_ptx_registers(s, n, bad, cap);
    free(s);
    return ok;
}

Test(static_names, ptx_registers_read_only_n_bytes) {
    /* a parameterised declaration whose count runs to the end of the n bytes: the count is
     * skipped up to the end, and no further */
    char bad[48] = "";
    cr_expect(ptx_ok_exact(".reg .b32 %f<4", bad, sizeof bad));
    cr_expect(ptx_ok_exact("mov.b32 $0, %f1; .reg .b32 %f<2", bad, sizeof bad));
    cr_expect(ptx_ok_exact("{ .reg .b32 %f<2>; mov.b32 $0, %f1; .reg .b32 %g<12", bad, sizeof bad));
    cr_expect(!ptx_ok_exact("mov.b32 $0, %u; .reg .b32 %f<2", bad, sizeof bad) && !strcmp(bad, "%u"), "%s", bad);
    /* the other ways the n bytes can end: inside a modifier, after a lone '%', on a name */
    cr_expect(ptx_ok_exact(".reg .b32 %v; mov.b32 $0, %v; .reg .b", bad, sizeof bad));
    cr_expect(ptx_ok_exact("mov.b32 $0, $1; %", bad, sizeof bad));
    cr_expect(ptx_ok_exact(".reg .b32 %v; mov.b32 $0, %v", bad, sizeof bad));
    /* ".reg" followed by an identifier character as the last byte is no declaration: "%r" stays
     * undeclared */
    cr_expect(!ptx_ok_exact("mov.b32 $0, %r; .regr", bad, sizeof bad) && !strcmp(bad, "%r"), "%s", bad);
}

Test(static_names, ptx_registers_reserved_prefix_at_end_of_n) {
    /* a declared name that is a proper prefix of a reserved one (%t of total_smem, %c of
     * clock, %p of pm) ending the n bytes: the reserved-name check compares the scanned name,
     * not the reserved name's full length (ASan: a read past the exactly-sized buffer) */
    char bad[48] = "";
    cr_expect(ptx_ok_exact(".reg .b32 %t; mov.b32 $0, %t", bad, sizeof bad), "%s", bad);
    cr_expect(ptx_ok_exact(".reg .b32 %c; mov.b32 $0, %c", bad, sizeof bad), "%s", bad);
    cr_expect(ptx_ok_exact(".reg .b32 %total_sme; mov.b32 $0, %total_sme", bad, sizeof bad), "%s", bad);
    cr_expect(ptx_ok_exact(".reg .pred %p; mov.b32 $0, %p", bad, sizeof bad), "%s", bad);
    /* a reserved name ending the n bytes exactly, or extended, is still refused */
    cr_expect(!ptx_ok_exact(".reg .b32 %pm<8>; mov.b32 $0, %pm", bad, sizeof bad) && !strcmp(bad, "%pm"), "%s", bad);
    cr_expect(!ptx_ok_exact("mov.u32 $0, %total_smem", bad, sizeof bad) && !strcmp(bad, "%total_smem"), "%s", bad);
    cr_expect(!ptx_ok_exact("mov.u64 $0, %clock64", bad, sizeof bad) && !strcmp(bad, "%clock64"), "%s", bad);
}

Test(static_names, ptx_registers_reserved_not_read_beyond_n) {
    /* the text after the n bytes continues a declared name into a reserved one (%c + "lock"):
     * only the n bytes count, so %c is the declared register, not %clock */
    char bad[48] = "";
    const char *t = ".reg .b32 %c; mov.b32 $0, %clock;";
    size_t n = strlen(".reg .b32 %c; mov.b32 $0, %c");
    cr_expect_eq(static_names_ptx_registers(t, n, bad, sizeof bad), 1, "%s", bad);
    const char *u = ".reg .b32 %gri; mov.b32 $0, %gridid;";
    size_t m = strlen(".reg .b32 %gri; mov.b32 $0, %gri");
    cr_expect_eq(static_names_ptx_registers(u, m, bad, sizeof bad), 1, "%s", bad);
    /* and within n, the same text is refused */
    cr_expect_eq(static_names_ptx_registers(t, strlen(t), bad, sizeof bad), 0);
    cr_expect_str_eq(bad, "%clock");
}

/* ---------- gaps found by the red-team candidates (issue 11; tests/candidates/static) ---------- */

Test(static_gaps, attribute_stores_on_arguments_and_locals) {
    /* an argument tensor, an alias of a function: objects that outlive the call (a call counter
     * kept on the input tensor, static/tensor_attribute_counter.py) */
    expect_one("", "    in_ptr0.kopt_calls = 1\n", "state", "in_ptr0.kopt_calls = 1");
    expect_one("", "    in_ptr0.kopt_calls += 1\n", "state", "in_ptr0.kopt_calls += 1");
    expect_one("", "    n = 0\n    in_ptr0.kopt_n, n = n + 1, 1\n", "state", "in_ptr0.kopt_n, n = n + 1, 1");
    expect_one("", "    (in_ptr0.kopt_n) = 1\n", "state", NULL);
    expect_one("", "    in_ptr0.kopt_n: int = 1\n", "state", NULL);
    expect_one("", "    for in_ptr0.kopt_i in range(2):\n        pass\n", "state", NULL);
    expect_one("", "    q = [0 for in_ptr0.kopt_i in range(2)]\n", "state", NULL);
    expect_one("", "    del in_ptr0.kopt_n\n", "state", NULL);
    expect_one("", "    f = launch\n    f.calls = 1\n", "state", "f.calls = 1");
    expect_one("", "    in_ptr0.kopt_d[0] = 1\n", "state", NULL);
    expect_one("", "    in_ptr0.kopt_l.append(1)\n", "state", NULL);
    /* reading attributes, locals' own containers, keyword arguments and defaults are not stores */
    expect_clean("", "    n = in_ptr0.shape[0]\n    ok = in_ptr0.stride(0) == 1\n    d = dict(a=in_ptr0.shape, b=1)\n"
                     "    g = [s for s in in_ptr0.shape]\n    t = (in_ptr0.shape, 1)\n    h = lambda k=in_ptr0.shape, m=1: k\n"
                     "    if in_ptr0.is_contiguous(): n = 1\n    for s in in_ptr0.shape:\n        n = s\n"
                     "    lst = []\n    lst.append(in_ptr0.shape)\n    dd = {}\n    dd[0] = in_ptr0.device\n"
                     "    y = in_ptr0.shape if ok else lambda m=1: m\n");
    /* an annotation without a value stores nothing, also when the next statement on its line
     * (after ';') assigns */
    expect_clean("", "    in_ptr0.kopt_n: int; n = 1\n");
}

Test(static_gaps, pointer_names_need_their_index) {
    /* in_ptr0 / out_ptr1 / in_out_ptr0 are tensors outside the kernels; the bare words are not */
    expect_clean("", "    in_ptr = 3\n    n = in_ptr + 1\n    out_ptr = 2\n    m = out_ptr * 2\n"
                     "    in_out_ptr = 1\n    k = in_out_ptr - 1\n");
    expect_one("", "    n = in_ptr0 - 1\n", "torch-compute", NULL);
}

Test(static_gaps, inplace_tensor_methods) {
    /* PyTorch's in-place methods end in '_': they change a tensor (its data, its storage, its
     * flags: state on the argument) outside the kernels */
    expect_one("", "    in_ptr0.requires_grad_(True)\n", "torch-compute", ".requires_grad_");
    expect_one("", "    out_ptr0.set_(in_ptr0)\n", "torch-compute", ".set_");
    expect_one("", "    out_ptr0.resize_(0)\n", "torch-compute", ".resize_");
    expect_one("", "    in_ptr0.q_()\n", "torch-compute", ".q_"); /* the shortest: one letter and '_' */
    expect_clean("", "    def grid_(n):\n        return (n,)\n    g = grid_(1)\n");
    expect_clean("", "    g = in_ptr0.foo__()\n"); /* two underscores at the end: not PyTorch's in-place form */
}

Test(static_gaps, decorators_are_allowlisted) {
    /* a decorator defined in the file returns a wrapper that can cache across calls
     * (static/decorator_closure_cache.py) */
    expect_one("def _once(fn):\n    return fn\n\n\n@_once\n", "", "state", "@_once");
    expect_one("@(lambda fn: fn)\n", "", "state", NULL);
    expect_one("@print\n", "", "state", "@print");
    /* Triton's and Inductor's decorators are the allowed ones */
    expect_clean("@triton.autotune(configs=[triton.Config({'XBLOCK': 64}, num_warps=4)], key=['xnumel'])\n"
                 "@triton.heuristics({'EVEN': lambda args: args['xnumel'] % 64 == 0})\n@triton.jit\n"
                 "def _k2(x_ptr, xnumel, XBLOCK: tl.constexpr, EVEN: tl.constexpr):\n    pass\n\n\n",
                 "");
}

Test(static_gaps, jit_arguments_are_allowlisted) {
    /* triton.jit(repr=..., launch_metadata=...) takes callables Triton runs on the host */
    expect_one("@triton.jit(repr=lambda spec: 'k')\ndef _k2(x_ptr):\n    pass\n\n\n", "", "state",
               "@triton.jit(repr=lambda spec: 'k')");
    expect_one("@triton.jit(launch_metadata=None)\ndef _k2(x_ptr):\n    pass\n\n\n", "", "state", NULL);
    expect_one("@triton.jit(print)\ndef _k2(x_ptr):\n    pass\n\n\n", "", "state", NULL);
    expect_one("@triton.jit(do_not_specialize=[dict(noinline=1)])\ndef _k2(x_ptr):\n    pass\n\n\n", "", "state",
               NULL);
    expect_one("@triton.jit(debug={'a': 1})\ndef _k2(x_ptr):\n    pass\n\n\n", "", "state", NULL); /* not a list */
    expect_one("@triton.jit(debu=True)\ndef _k2(x_ptr):\n    pass\n\n\n", "", "state", NULL);     /* a prefix */
    expect_one("@triton.jit(noinlin=True)\ndef _k2(x_ptr):\n    pass\n\n\n", "", "state", NULL);
    /* the keywords that only steer compilation, with literal values */
    expect_clean("@triton.jit(do_not_specialize=['xnumel'], debug=False)\ndef _k2(x_ptr, xnumel):\n    pass\n\n\n",
                 "");
    expect_clean("@triton.jit(do_not_specialize_on_alignment=[0, 1], noinline=True)\ndef _k2(x_ptr):\n    pass\n\n\n",
                 "");
    expect_clean("@triton.jit()\ndef _k2(x_ptr):\n    pass\n\n\n", "");
}

Test(static_gaps, jit_functions_are_not_values) {
    /* an alias would reach the attributes the jit rule refuses (k.cache, k.fn) */
    expect_one("", "    k = _k\n", "name", "_k");
    expect_one("", "    print(_k)\n", "name", "_k");
    /* launching it, and jit helpers used inside kernels, are fine */
    expect_clean("@triton.jit\ndef _add(a, b):\n    return a + b\n\n\n@triton.jit\ndef _s(x_ptr, B: tl.constexpr):\n"
                 "    x = tl.load(x_ptr + tl.arange(0, B))\n    tl.store(x_ptr, tl.reduce(x, 0, _add))\n\n\n",
                 "");
}

Test(static_gaps, module_level_configs) {
    /* triton.Config keeps its kwargs in a dict: a module-level Config is mutable state unless it
     * is only named in @triton.autotune's configs (static/config_kwargs_counter.py) */
    expect_one("CFG = triton.Config({'n': 0})\n", "    CFG.kwargs['n'] = 1\n", "state", "CFG.kwargs");
    expect_one("CFG = triton.Config({'n': 0})\n", "    CFG.kwargs.update(n=1)\n", "state", "CFG.kwargs.update");
    expect_one("CFG = triton.Config({'n': 0})\n", "    c = CFG\n", "state", "CFG");
    expect_one("CFG = triton.Config({'n': 0})\nKW = CFG.kwargs\n", "", "state", "CFG.kwargs");
    expect_clean("CONFIGS = (triton.Config({'XBLOCK': 64}, num_warps=4),)\n\n\n"
                 "@triton.autotune(configs=list(CONFIGS), key=['xnumel'])\n@triton.jit\n"
                 "def _k2(x_ptr, xnumel, XBLOCK: tl.constexpr):\n    pass\n\n\n",
                 "");
}

Test(static_gaps, members_have_no_attributes_but_enumerations) {
    /* Inductor's jit helpers are JITFunctions: their public attributes are Triton's runtime */
    expect_one(HEUR, "    triton_helpers.welford.cache[0] = 1\n", "name", "triton_helpers.welford.cache");
    expect_one(HEUR, "    c = triton_helpers.maximum.cache\n", "name", "triton_helpers.maximum.cache");
    expect_one("", "    f = triton.jit.kopt\n", "name", "triton.jit.kopt");
    cr_expect_eq(static_names_lookup("torch._inductor.runtime.triton_helpers.welford.cache"), SN_REFUSED);
    cr_expect_eq(static_names_lookup("triton.language.float32.to_ir"), SN_REFUSED);
    cr_expect_eq(static_names_lookup("triton.language.PropagateNan.ALL"), SN_MEMBER);
    cr_expect_eq(static_names_lookup("torch._inductor.runtime.hints.ReductionHint.INNER"), SN_MEMBER);
    cr_expect_eq(static_names_lookup("torch._inductor.runtime.hints.TileHint.SQUARE"), SN_MEMBER);
}

#define MM_T                                                                                     \
    "@triton.jit\n"                                                                              \
    "def _mm2(a_ptr, c_ptr, B: tl.constexpr, T: tl.constexpr):\n"                                \
    "    r = tl.arange(0, B)\n"                                                                  \
    "    a = tl.load(a_ptr + r[:, None] * B + r[None, :])\n"                                     \
    "    tl.store(c_ptr + r[:, None] * B + r[None, :], tl.dot(a, a, allow_tf32=T))\n"            \
    "\n\n"

Test(static_gaps, tf32_by_expression_or_keyword) {
    /* allow_tf32=T with T=True given by the launch (static/tf32_constexpr_kwarg.py) */
    expect_one(MM_T, "    _mm2[(1,)](in_ptr0, out_ptr0, B=16, T=True)\n", "precision", "allow_tf32=T");
    expect_one(MM_T, "    _mm2[(1,)](in_ptr0, out_ptr0, B=16, T=False)\n", "precision", "allow_tf32=T");
    /* an expression is not False */
    expect_one(MM_PRE("tl.dot(a, b, allow_tf32=not False)"), "", "precision", NULL);
    expect_one(MM_PRE("tl.dot(a, b, allow_tf32=(1 == 1))"), "", "precision", NULL);
    /* input_precision: a string literal, not a name or pieces (static/tf32_built_string.py) */
    expect_one("P = 'tf' + '32'\n" MM_PRE("tl.dot(a, b, input_precision=P)"), "", "precision", NULL);
    expect_one(MM_PRE("tl.dot(a, b, input_precision='tf' '32')"), "", "precision", NULL);
    expect_clean(MM_PRE("tl.dot(a, b, input_precision='ieee')"), "");
    /* Triton reads the mode case-blind: "TF32" and "BF16x3" are reduced precision, "IEEE" is not */
    expect_one(MM_PRE("tl.dot(a, b, input_precision='TF32')"), "", "precision", "input_precision='TF32'");
    expect_one(MM_PRE("tl.dot(a, b, input_precision='bf16x3')"), "", "precision", "input_precision='bf16x3'");
    expect_clean(MM_PRE("tl.dot(a, b, input_precision='IEEE')"), "");
}

/* What Python runs while defining the kernels (session 34's red-team pass): the boundaries of
 * the annotation, encoding-declaration and rebinding rules, each with the honest spelling next
 * to the refused one. */
static char *with_kernel_header(const char *head, const char *params, const char *ret) {
    return kasprintf("%simport triton\nimport triton.language as tl\n\n\n@triton.jit\ndef _k(%s)%s:\n"
                     "    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)\n"
                     "    tl.store(out_ptr0 + offs, tl.load(in_ptr0 + offs, mask=offs < xnumel), mask=offs < xnumel)\n\n\n"
                     "def launch(in_ptr0, out_ptr0, xnumel, stream=None):\n"
                     "    _k[(triton.cdiv(xnumel, 1024),)](in_ptr0, out_ptr0, xnumel, XBLOCK=1024)\n",
                     head, params, ret);
}

Test(static_definition_time, annotations) {
    const char *P = "in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr";
    char *t = with_kernel_header("", P, "");
    expect_passes(t, NULL);
    free(t);
    t = with_kernel_header("", "in_ptr0, out_ptr0, xnumel, XBLOCK: triton.language.constexpr", "");
    expect_passes(t, NULL);
    free(t);
    /* keyword-only, with a default: still only tl.constexpr */
    t = with_kernel_header("", "in_ptr0, out_ptr0, xnumel, *, XBLOCK: tl.constexpr = 1024", "");
    expect_passes(t, NULL);
    free(t);
    t = with_kernel_header("", "in_ptr0: int, out_ptr0, xnumel, XBLOCK: tl.constexpr", "");
    expect_refused(t, "syntax", "int, out", NULL);
    free(t);
    t = with_kernel_header("", "in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr", " -> None");
    expect_refused(t, "syntax", "-> None", NULL);
    free(t);
    /* an annotation that is a call, even of an allowed function */
    t = with_kernel_header("", "in_ptr0, out_ptr0, xnumel: triton.cdiv(1, 1), XBLOCK: tl.constexpr", "");
    expect_refused(t, "syntax", "triton.cdiv(1, 1), X", NULL);
    free(t);
    /* a lambda default's ':' is not an annotation */
    t = with_kernel_header("", "in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr, F=lambda v: v", "");
    candidate *c = parse_ok(t);
    static_report r = {0};
    kerr e = {0};
    static_check(c, &L_OK, &r, &e);
    cr_expect_eq(static_report_count(&r, STATIC_SYNTAX), 0, "a lambda default read as an annotation");
    static_report_free(&r);
    candidate_free(c);
    free(t);
    (void)P;
}

Test(static_definition_time, encoding_declaration) {
    const char *P = "in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr";
    static const char *const ok[] = {"# -*- coding: utf-8 -*-\n", "#!/usr/bin/env python3\n# coding=UTF8\n",
                                     "# vim: set fileencoding=utf_8 :\n",
                                     "# one\n# two\n# coding: latin-1 (line 3: Python ignores it)\n"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char *t = with_kernel_header(ok[i], P, "");
        expect_passes(t, NULL);
        free(t);
    }
    static const char *const bad[] = {"# -*- coding: latin-1 -*-\n", "#!/usr/bin/env python3\n# coding: utf-7\n",
                                      "\f# vim: set fileencoding=utf-16 :\n", "# coding=utf-8-sig\n"};
    static const char *const at[] = {"# -*- coding: latin", "# coding: utf-7", "# vim", "# coding=utf-8-sig"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *t = with_kernel_header(bad[i], P, "");
        expect_refused(t, "syntax", at[i], NULL);
        free(t);
    }
}

Test(static_definition_time, rebound_imports) {
    const char *P = "in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr";
    /* the same module twice under one name is fine; another module or a value is not */
    char *t = with_kernel_header("import triton.language as tl\n", P, "");
    expect_passes(t, NULL);
    free(t);
    t = with_kernel_header("import math as tl\n", P, "");
    expect_refused(t, "name", "import triton.language as tl", NULL);
    free(t);
    t = with_kernel_header("X = 1\n", P, "");
    expect_passes(t, NULL);
    free(t);
}

/* The kernel-time rules' boundaries (each case kills a mutant the corpus files could not: they
 * are refused by a second rule too). */
static void expect_text(const char *text, const char *rule, const char *marker, const char *want_text) {
    candidate *c = parse_ok(text);
    static_report r = {0};
    kerr e = {0};
    static_check(c, &L_OK, &r, &e);
    char *rt = report_text(&r);
    int line, col, found = 0;
    locate(text, marker, &line, &col);
    for (size_t i = 0; i < r.n; i++)
        if (!strcmp(static_rule_name(r.v[i].rule), rule) && r.v[i].line == line && r.v[i].col == col) {
            found = 1;
            if (want_text) cr_expect_str_eq(r.v[i].text, want_text, "%s", rt);
        }
    cr_assert(found, "no %s finding at <<%s>>; report:\n%s\ntext:\n%s", rule, marker, rt, text);
    free(rt);
    static_report_free(&r);
    candidate_free(c);
}

Test(static_kernel_time, jit_defaults) {
    const char *P = "in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr";
    static const char *const ok[] = {", N: tl.constexpr = 4", ", N: tl.constexpr = -4", ", F: tl.constexpr = 1.5",
                                     ", S: tl.constexpr = \"ab\"", ", B: tl.constexpr = True", ", Z: tl.constexpr = None",
                                     ", D: tl.constexpr = tl.float32", ", A: tl.constexpr = 1, C: tl.constexpr = 2"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char *params = kasprintf("%s%s", P, ok[i]);
        char *t = with_kernel_header("", params, "");
        expect_passes(t, NULL);
        free(t);
        free(params);
    }
    /* a jit function, a module constant, a negated name, a call, a module member that is no
     * dtype: each refused at the default itself, with its whole text; then an annotation's text:
     * {head, the parameters after P, rule, marker, the finding's text} */
    static const char *const bad[][5] = {
        {"@triton.jit\ndef _noop(v):\n    return v\n\n\n", ", K: tl.constexpr = _noop", "name", "_noop)", "_noop"},
        {"M = 3\n", ", N: tl.constexpr = -M", "name", "-M)", "-M"},
        {"", ", N: tl.constexpr = triton.cdiv(4, 2)", "name", "triton.cdiv(4, 2)", "triton.cdiv(4, 2)"},
        {"", ", N: tl.constexpr = tl.arange", "name", "tl.arange)", "tl.arange"},
        {"", ", N: tl.constexpr = tl.float32.to", "name", "tl.float32.to)", "tl.float32.to"},
        {"", ", W: triton.cdiv(1, 1)", "syntax", "triton.cdiv(1, 1)", "triton.cdiv(1, 1)"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *params = kasprintf("%s%s", P, bad[i][1]);
        char *t = with_kernel_header(bad[i][0], params, "");
        expect_text(t, bad[i][2], bad[i][3], bad[i][4]);
        free(t);
        free(params);
    }
}

Test(static_kernel_time, value_attributes) {
    const char *P = "in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr";
    /* one attribute on a parameter, on a local and on a module constant; after a call */
    static const char *const body[][2] = {{"    v = in_ptr0.fn\n", "fn\n"},
                                          {"    y = offs\n    v = y.cache\n", "cache\n"},
                                          {"    v = M.bit_length\n", "bit_length\n"},
                                          {"    v = tl.load(in_ptr0).handle\n", "handle\n"}};
    for (size_t i = 0; i < sizeof body / sizeof *body; i++) {
        char *t = kasprintf("import triton\nimport triton.language as tl\n\nM = 3\n\n\n@triton.jit\ndef _k(%s):\n"
                            "    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)\n%s"
                            "    tl.store(out_ptr0 + offs, tl.load(in_ptr0 + offs, mask=offs < xnumel), mask=offs < xnumel)\n\n\n"
                            "def launch(in_ptr0, out_ptr0, xnumel, stream=None):\n"
                            "    _k[(triton.cdiv(xnumel, 1024),)](in_ptr0, out_ptr0, xnumel, XBLOCK=1024)\n",
                            P, body[i][0]);
        expect_refused(t, "name", body[i][1], NULL);
        free(t);
    }
    /* tensor attributes pass */
    char *t = kasprintf("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef _k(%s):\n"
                        "    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)\n"
                        "    x = tl.load(in_ptr0 + offs, mask=offs < xnumel).to(tl.float32)\n"
                        "    w = x.dtype.primitive_bitwidth + in_ptr0.dtype.element_ty.primitive_bitwidth\n"
                        "    tl.store(out_ptr0 + offs, x.reshape(XBLOCK) + w, mask=offs < xnumel)\n\n\n"
                        "def launch(in_ptr0, out_ptr0, xnumel, stream=None):\n"
                        "    _k[(triton.cdiv(xnumel, 1024),)](in_ptr0, out_ptr0, xnumel, XBLOCK=1024)\n",
                        P);
    expect_passes(t, NULL);
    free(t);
}

Test(static_kernel_time, precision_keywords_whole_value) {
    /* only the value alone counts: "ieee" + P and False or True are expressions */
    expect_one("P = ''\n" MM_PRE("tl.dot(a, b, input_precision=\"ieee\" + P)"), "", "precision", NULL);
    expect_one(MM_PRE("tl.dot(a, b, allow_tf32=False or True)"), "", "precision", NULL);
}

Test(static_definition_time, rebinding_first_import_or_def) {
    const char *P = "in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr";
    /* the rebinding statement first among the definitions, and the import first among imports */
    char *t = kasprintf("tl = 0\nimport triton.language as tl\nimport triton\n\n\n@triton.jit\ndef _k(%s):\n"
                        "    offs = tl.program_id(0) * XBLOCK + tl.arange(0, XBLOCK)\n"
                        "    tl.store(out_ptr0 + offs, tl.load(in_ptr0 + offs, mask=offs < xnumel), mask=offs < xnumel)\n\n\n"
                        "def launch(in_ptr0, out_ptr0, xnumel, stream=None):\n"
                        "    _k[(triton.cdiv(xnumel, 1024),)](in_ptr0, out_ptr0, xnumel, XBLOCK=1024)\n",
                        P);
    expect_text(t, "name", "import triton.language as tl", "tl");
    free(t);
    /* a 4-letter encoding other than utf8 */
    t = with_kernel_header("# coding: utf7\n", P, "");
    expect_refused(t, "syntax", "# coding", NULL);
    free(t);
}

/* Finding texts and boundaries the mutation run of static.c left untested (each case kills at
 * least one mutant that survived it: the text spans of the frame, private and kernel-attribute
 * findings, the annotation spans, a `def` at the file's first token, the keyword value followed
 * by another keyword, a coding comment after code). */
Test(static_mutants, finding_texts_and_boundaries) {
    /* a frame attribute with its dot; a bare prefix ("f_", "gi_") is no frame attribute */
    expect_one("", "    k = in_ptr0.gi_frame\n", "io", ".gi_frame");
    expect_clean("", "    k = in_ptr0.f_\n    j = in_ptr0.gi_\n");
    /* a one-character private attribute */
    expect_one("", "    k = in_ptr0._\n", "name", "._");
    /* a jit function's attribute inside a kernel: one finding, not a second as a value's */
    expect_one("@triton.jit\ndef _j(x_ptr, XB: tl.constexpr):\n    f = _k.fn\n\n\n", "", "name", "_k.fn");
    /* attributes of a call's result inside a kernel: each with its dot */
    static const char *const two_rules[] = {"name", "name"}, *const two_texts[] = {".foo", ".bar"};
    char *t = make_l("@triton.jit\ndef _j(x_ptr, XB: tl.constexpr):\n    y = tl.load(x_ptr).foo.bar\n\n\n", "");
    expect_report(t, 2, two_rules, two_texts);
    free(t);
    /* annotations: the annotation's own tokens, up to ',' / '=' / ')' */
    expect_one("def _g(a: int, b):\n    return a\n\n\n", "", "syntax", "int");
    expect_one("def _g(a: tl.tensor = 1, b=2):\n    return a\n\n\n", "", "syntax", "tl.tensor");
    expect_one("def _g(a: \"x\", b):\n    return a\n\n\n", "", "syntax", "\"x\"");
    expect_one("def _g(a) -> int:\n    return a\n\n\n", "", "syntax", "-> int");
    /* a def as the file's very first token */
    char *l = make_l("", "");
    t = kasprintf("def _g(a: int):\n    return a\n\n\n%s", l);
    free(l);
    static const char *const one_syntax[] = {"syntax"}, *const int_text[] = {"int"};
    expect_report(t, 1, one_syntax, int_text);
    free(t);
    /* allow_tf32=False and input_precision="ieee" followed by another keyword */
    expect_clean(MM_PRE("tl.dot(a, b, allow_tf32=False, out_dtype=tl.float32)"), "");
    expect_clean(MM_PRE("tl.dot(a, b, input_precision=\"ieee\", out_dtype=tl.float32)"), "");
    /* "coding:" in a comment after code on line 1 is no encoding declaration (PEP 263: the
     * comment is the whole line) */
    l = make_l("", "");
    t = kasprintf("import torch  # coding: latin-1\n%s", l);
    free(l);
    static_opts o = {.allow_precision_change = 0, .allow_launcher = 1, .model_dtype = "float32"};
    expect_passes(t, &o);
    free(t);
    /* an encoding declaration needs a name (PEP 263): "coding:" alone is none; one after an
     * empty one on the same line still counts */
    l = make_l("", "");
    t = kasprintf("# coding:\n%s", l);
    expect_passes(t, &o);
    free(t);
    t = kasprintf("# coding: ,latin-1\n%s", l); /* no name right after it: none */
    expect_passes(t, &o);
    free(t);
    t = kasprintf("# coding: # coding: latin-1\n%s", l);
    static const char *const syn[] = {"syntax"};
    expect_report(t, 1, syn, NULL);
    free(t);
    free(l);
    /* inline PTX not given as one string literal (precision allowed: the timer rule's own) */
    static const char *const timer[] = {"timer"};
    static const static_opts po = {.allow_precision_change = 1, .allow_launcher = 1, .model_dtype = "float32"};
    static const char *const asm_pre[] = {
        "@triton.jit\ndef _j(x_ptr, XB: tl.constexpr):\n    x = tl.load(x_ptr)\n"
        "    y = tl.inline_asm_elementwise(\"mov.b32 $0, \" + \"$1;\", \"=r,r\", [x], dtype=tl.int32, is_pure=True, pack=1)\n"
        "    tl.store(x_ptr, y)\n\n\n",
        "P = \"mov.b32 $0, $1;\"\n\n\n@triton.jit\ndef _j(x_ptr, XB: tl.constexpr):\n    x = tl.load(x_ptr)\n"
        "    y = tl.inline_asm_elementwise(P, \"=r,r\", [x], dtype=tl.int32, is_pure=True, pack=1)\n"
        "    tl.store(x_ptr, y)\n\n\n"};
    for (size_t i = 0; i < sizeof asm_pre / sizeof *asm_pre; i++) {
        t = make_l(asm_pre[i], "");
        expect_report_o(t, &po, 1, timer, NULL);
        free(t);
    }
}

/* Attribute stores (chain_is_store, chain_check) at their edges: a target list with a name before
 * the attribute; a ';' ending the statement before a later one's '='; a subscript store through
 * an attribute by augmented assignment. A module-level statement with two calls not allowed at
 * import time is one finding, not two. */
Test(static_mutants, attribute_stores_and_import_time_calls) {
    expect_one("", "    for i, in_ptr0.kopt_i in []:\n        pass\n", "state", NULL);
    expect_one("", "    in_ptr0.kopt_d[0] += 1\n", "state", NULL);
    expect_clean("", "    t = (in_ptr0.shape, 1); n = 2\n");
    expect_one("def _f():\n    return 1\n\n\nB = _f() + _f()\n", "", "state", "B = _f() + _f()");
    /* a subscript store into a call's result is no store through the call's arguments */
    expect_clean("def _h(v):\n    return [v]\n\n\n", "    _h(in_ptr0.shape)[0] = 1\n");
    /* triton.jit's arguments: a comment among them is no literal (it ends the check, refused) */
    expect_one("@triton.jit(  # steer\n    repr=lambda spec: 'k')\ndef _k2(x_ptr):\n    pass\n\n\n", "", "state", NULL);
    /* the file's very first tokens: a `for` target through an attribute, a module-level Config */
    static const char *const one_state[] = {"state"};
    char *l = make_l("", "");
    char *t = kasprintf("for triton.kopt_i in range(2):\n    pass\n%s", l);
    expect_report(t, 1, one_state, NULL);
    free(t);
    free(l);
    l = make_l("", "    c = CFG\n");
    t = kasprintf("CFG = triton.Config({'n': 0})\n%s", l);
    static const char *const cfg_text[] = {"CFG"};
    expect_report(t, 1, one_state, cfg_text);
    free(t);
    free(l);
}
