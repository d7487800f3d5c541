/* test_plan.c — form P (gates/plan): the launch plan's expressions, its checks against the
 * file's kernels, form P's file allowlist, and the launcher kopt writes, which then goes through
 * gate 1, the interface check and stitching as an ordinary launcher. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "gates/candidate.h"
#include "gates/plan.h"
#include "gates/static.h"
#include "testutil.h"
#include "util/buf.h"

#define LSM "triton_red_fused__log_softmax_prepare_softmax_online_sub_0"

/* A form-P log-softmax: one kernel, one launch; PLAN_AT is replaced by the plan or extra text. */
static const char KERNEL[] =
    "# kopt-candidate: replaces=" LSM "\n"        /* 1 */
    "import triton\n"                              /* 2 */
    "import triton.language as tl\n"               /* 3 */
    "\n"                                           /* 4 */
    "BLOCK_DEFAULT = 1024\n"                       /* 5 */
    "\n"                                           /* 6 */
    "@triton.jit\n"                                /* 7 */
    "def _lsm(in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK: tl.constexpr, EVEN: tl.constexpr = True):\n"
    "    row = tl.program_id(0)\n"                 /* 9 */
    "    cols = tl.arange(0, R0_BLOCK)\n"
    "    x = tl.load(in_ptr0 + row * r0_numel + cols, mask=cols < r0_numel, other=float('-inf'))\n"
    "    y = x - tl.max(x, 0)\n"
    "    y = y - tl.log(tl.sum(tl.exp(y), 0))\n"
    "    tl.store(out_ptr2 + row * r0_numel + cols, y, mask=cols < r0_numel)\n"   /* 14 */
    "\n";

static const char PLAN[] =
    "KOPT_PLAN = {\n"
    "    \"params\": [\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"],\n"
    "    \"launches\": [{\"kernel\": \"_lsm\", \"grid\": [\"xnumel\"],\n"
    "                  \"args\": [\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"],\n"
    "                  \"constexprs\": {\"R0_BLOCK\": \"next_pow2(r0_numel)\"}, \"num_warps\": 8}],\n"
    "}\n";

static char *with(const char *kernel, const char *plan) { return kasprintf("%s%s", kernel, plan); }



/* One edit of a plan (from -> to) and a part of the refusal it must get. */
typedef struct plan_edit {
    const char *from, *to, *why;
} plan_edit;

/* Each edit of `plan`, after KERNEL, is refused with its reason. */
static void expect_edits_refused(const char *plan, const plan_edit *cases, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char *p = tu_replace_once(plan, cases[i].from, cases[i].to);
        char *t = with(KERNEL, p);
        char *m = tu_parse_refusal(t);
        cr_expect(strstr(m, cases[i].why), "case %zu: message '%s' lacks '%s'", i, m, cases[i].why);
        free(m);
        free(t);
        free(p);
    }
}

static void expect_refused(const char *text, const char *needle) {
    char *m = tu_parse_refusal(text);
    cr_expect(strstr(m, needle), "message '%s' lacks '%s'", m, needle);
    free(m);
}

Test(plan, lowered_text_is_the_file_then_kopts_launcher) {
    char *t = with(KERNEL, PLAN);
    candidate *c = tu_parse_candidate(t);
    cr_expect_eq(candidate_form(c), CAND_FORM_L);
    cr_expect(c->from_plan);
    cr_expect_str_eq(candidate_form_label(c), "P");
    cr_expect_str_eq(candidate_replaces(c), LSM);
    /* the file as written up to the plan, the plan's six lines blank, then the launcher */
    cr_assert(!strncmp(c->text, KERNEL, strlen(KERNEL)));
    const char *rest = c->text + strlen(KERNEL);
    cr_expect(!strncmp(rest, "\n\n\n\n\n\n", 6), "plan lines kept as blank lines: %.20s", rest);
    cr_expect(strstr(rest, "# kopt: the launcher kopt wrote from KOPT_PLAN (form P)\n"
                           "import torch as _kopt_plan_torch\n"
                           "import triton as _kopt_plan_triton\n\n\n"
                           "def _kopt_plan_np2(n):\n"
                           "    return 1 << (n - 1).bit_length() if n > 0 else 0\n\n\n"
                           "def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None, _kopt_plan_go=None):\n"
                           "    _lsm[(xnumel, )](in_ptr0, out_ptr2, xnumel, r0_numel, "
                           "R0_BLOCK=_kopt_plan_np2(r0_numel), num_warps=8)\n"),
              "EVEN is left to its default: no direct launch, only Triton's: %s", rest);
    cr_expect(!strstr(c->text, "KOPT_PLAN ="), "the plan itself is not in the judged text");
    /* launch's parameters are the plan's */
    cr_assert_eq(candidate_nparams(c), 4);
    cr_expect_str_eq(candidate_param(c, 3)->name, "r0_numel");
    cr_expect(c->launch_stream);
    candidate_free(c);
    free(t);
}

/* Every parameter given: the launcher can hand the shim's binder each parameter in declared order
 * (constexprs among them, by name) for a direct launch of the compiled kernel. */
Test(plan, a_fully_given_launch_also_launches_directly) {
    char *p = tu_replace_once(PLAN, "\"constexprs\": {\"R0_BLOCK\": \"next_pow2(r0_numel)\"}",
                              "\"constexprs\": {\"EVEN\": False, \"R0_BLOCK\": 1024}, \"num_stages\": 2");
    char *t = with(KERNEL, p);
    candidate *c = tu_parse_candidate(t);
    cr_expect(strstr(c->text, "def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None, _kopt_plan_go=None):\n"
                              "    if _kopt_plan_go is not None:\n"
                              "        _kopt_plan_go(0, (xnumel, 1, 1), (in_ptr0, out_ptr2, xnumel, r0_numel, 1024, False, ), "
                              "(None, None, None, None, 'R0_BLOCK', 'EVEN', ), 8, 2, stream)\n"
                              "    else:\n"
                              "        _lsm[(xnumel, )](in_ptr0, out_ptr2, xnumel, r0_numel, EVEN=False, R0_BLOCK=1024, "
                              "num_warps=8, num_stages=2)\n"),
              "%s", c->text);
    cr_expect_eq(candidate_nparams(c), 4, "_kopt_plan_go and stream are not the kernel's parameters");
    candidate_free(c);
    free(t);
    /* a check reads only what the guard pins: skipped on the verified signature (gate 1 ran it) */
    char *pc = tu_replace_once(p, "\"launches\"", "\"checks\": [\"r0_numel <= 16384\"],\n    \"launches\"");
    t = with(KERNEL, pc);
    c = tu_parse_candidate(t);
    cr_expect(strstr(c->text, "    if _kopt_plan_go is None and not (r0_numel <= 16384):\n        raise ValueError("), "%s",
              c->text);
    free(pc);
    candidate_free(c);
    free(t);
    /* a runtime parameter left to its default: Triton's own launch only (the binder would need
     * the default's value) */
    char *k2 = tu_replace_once(KERNEL, "EVEN: tl.constexpr = True):", "EVEN: tl.constexpr = True, scale=1.0):");
    t = with(k2, p);
    c = tu_parse_candidate(t);
    cr_expect(strstr(c->text, "_kopt_plan_go(") == NULL && strstr(c->text, "    _lsm[(xnumel, )](") != NULL,
              "a runtime default: no direct launch: %s", c->text);
    free(k2);
    cr_expect(c->launch_stream);
    cr_assert_eq(c->nplan_kernels, 1);
    cr_expect_str_eq(c->plan_kernels[0], "_lsm");
    candidate_free(c);
    free(t);
    free(p);
}

Test(plan, lowered_candidate_passes_gate1_interface_and_stitching) {
    char *t = with(KERNEL, PLAN);
    candidate *c = tu_parse_candidate(t);
    artifact *a = tu_load_inductor("03_log_softmax_g0.py");
    const art_kernel *k = NULL;
    for (size_t i = 0; i < a->nkernels; i++)
        if (!strcmp(a->kernels[i].name, LSM)) k = &a->kernels[i];
    cr_assert(k);
    kerr e = {0};
    static_report r = {0};
    cr_expect_eq(static_check(c, NULL, &r, &e), 0, "%s", e.msg);
    static_report_free(&r);
    cr_expect_eq(candidate_check_interface(c, k, &e), 0, "%s", e.msg);
    kbuf st = KBUF_INIT;
    cr_assert_eq(candidate_stitch_text(c, LSM, &st, &e), 0, "%s", e.msg);
    cr_expect(strstr(kbuf_str(&st), "_kopt_" LSM "___lsm[(xnumel, )]"), "the kernel renamed: %s", kbuf_str(&st));
    cr_expect(strstr(kbuf_str(&st), LSM " = _KoptLaunch(_kopt_" LSM "__launch, (_kopt_" LSM "___lsm, ))"),
              "the shim knows the plan's kernels: %s", kbuf_str(&st));
    kbuf_free(&st);
    /* a plan whose parameters are not the kernel's fails the interface check */
    char *p2 = tu_replace_once(PLAN, "\"out_ptr2\", \"xnumel\", \"r0_numel\"],\n    \"launches\"",
                    "\"out_ptr0\", \"xnumel\", \"r0_numel\"],\n    \"launches\"");
    char *p3 = tu_replace_once(p2, "\"args\": [\"in_ptr0\", \"out_ptr2\"", "\"args\": [\"in_ptr0\", \"out_ptr0\"");
    char *t2 = with(KERNEL, p3);
    candidate *c2 = tu_parse_candidate(t2);
    cr_expect_eq(candidate_check_interface(c2, k, &e), KOPT_E_CANDIDATE);
    cr_expect(strstr(e.msg, "launch parameter 2 is out_ptr0, the kernel has out_ptr2"), "%s", e.msg);
    candidate_free(c2);
    free(t2);
    free(p3);
    free(p2);
    artifact_free(a);
    candidate_free(c);
    free(t);
}

/* Lines of everything but the plan stay where they were: a finding in a kernel written after
 * the plan names the file's own line. */
Test(plan, findings_keep_the_files_line_numbers) {
    char *body = tu_replace_once(KERNEL, "    row = tl.program_id(0)\n", "    row = tl.program_id(0) + open('x')\n");
    /* the plan first (lines 5-10 after the header lines), the kernel after it */
    char *t = tu_replace_once(body, "BLOCK_DEFAULT = 1024\n", PLAN);
    candidate *c = tu_parse_candidate(t);
    static_report r = {0};
    kerr e = {0};
    int bad = static_check(c, NULL, &r, &e);
    cr_assert_eq(bad, KOPT_E_CANDIDATE, "open() inside a jit function is refused");
    cr_expect_eq(r.v[0].line, 14, "the finding's line is the file's (got %d)", r.v[0].line);
    static_report_free(&r);
    candidate_free(c);
    free(t);
    free(body);
}

Test(plan, scratch_grid_and_values_are_written_as_typed) {
    const char *p =
        "KOPT_PLAN = {\"params\": [\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"],\n"
        " \"scratch\": [{\"name\": \"part\", \"shape\": [\"cdiv(r0_numel, 512)\", \"xnumel\"], \"dtype\": \"float32\"},\n"
        "             {\"name\": \"flags\", \"shape\": [64], \"dtype\": \"int32\", \"zero\": True}],\n"
        " \"launches\": [{\"kernel\": \"_lsm\", \"grid\": [\"xnumel // 2 + xnumel % 2\", \"max(1, min(r0_numel, 4))\", 1],\n"
        "   \"args\": [\"in_ptr0\", \"part\", \"-xnumel * 3 - 1\", 7],\n"
        "   \"constexprs\": {\"R0_BLOCK\": 1024, \"EVEN\": False}, \"num_warps\": 4, \"num_stages\": 2},\n"
        "  {\"kernel\": \"_lsm\", \"grid\": [\"xnumel\"], \"args\": [\"flags\", \"out_ptr2\", \"xnumel\", \"r0_numel\"],\n"
        "   \"constexprs\": {\"R0_BLOCK\": 2.5}, \"num_warps\": 1}]}\n";
    char *t = with(KERNEL, p);
    candidate *c = tu_parse_candidate(t);
    const char *L = strstr(c->text, "def launch(");
    cr_assert(L);
    cr_expect(strstr(L, "    part = _kopt_plan_torch.full((((r0_numel + 512 - 1) // 512), xnumel, ), float('nan'), "
                        "dtype=_kopt_plan_torch.float32, device=in_ptr0.device)\n"), "%s", L);
    cr_expect(strstr(L, "    flags = _kopt_plan_torch.zeros((64, ), dtype=_kopt_plan_torch.int32, device=in_ptr0.device)\n"),
              "%s", L);
    candidate_free(c);
    free(t);
    /* scratch that is not zero-filled is poisoned for each launch, by dtype */
    static const char *const poison[][2] = {{"int32", "-2147483648"}, {"int64", "-9223372036854775808"},
                                            {"uint8", "255"}, {"bool", "True"}, {"bfloat16", "float('nan')"}};
    for (size_t i = 0; i < sizeof poison / sizeof poison[0]; i++) {
        char *dt = kasprintf("\"dtype\": \"%s\", \"zero\": False", poison[i][0]);
        char *p2 = tu_replace_once(p, "\"dtype\": \"int32\", \"zero\": True", dt);
        t = with(KERNEL, p2);
        c = tu_parse_candidate(t);
        char *want = kasprintf("    flags = _kopt_plan_torch.full((64, ), %s, dtype=_kopt_plan_torch.%s, device=in_ptr0.device)\n",
                               poison[i][1], poison[i][0]);
        cr_expect(strstr(c->text, want), "%s: %s", poison[i][0], c->text);
        free(want);
        candidate_free(c);
        free(t);
        free(p2);
        free(dt);
    }
    t = with(KERNEL, p);
    c = tu_parse_candidate(t);
    L = strstr(c->text, "def launch(");
    cr_assert(L);
    cr_expect(strstr(L, "    _lsm[(((xnumel // 2) + (xnumel % 2)), max(1, min(r0_numel, 4)), 1, )](in_ptr0, part, "
                        "(((-xnumel) * 3) - 1), 7, R0_BLOCK=1024, EVEN=False, num_warps=4, num_stages=2)\n"), "%s", L);
    cr_expect(strstr(L, "    _lsm[(xnumel, )](flags, out_ptr2, xnumel, r0_numel, R0_BLOCK=2.5, num_warps=1)\n"), "%s", L);
    candidate_free(c);
    free(t);
}

/* let, checks and tensor sizes: a region-style launcher with no integer parameter */
Test(plan, lets_checks_and_sizes_from_the_tensors) {
    const char *p =
        "KOPT_PLAN = {\"params\": [\"in_ptr0\", \"out_ptr2\"],\n"
        " \"let\": {\"n\": \"shape(in_ptr0, -1)\", \"rows\": \"numel(in_ptr0) // n\", \"nseg\": \"cdiv(n, 2048)\"},\n"
        " \"checks\": [\"nseg <= sm_count()\", \"rows * n == numel(out_ptr2)\"],\n"
        " \"scratch\": [{\"name\": \"part\", \"shape\": [\"2 * rows * nseg\"], \"dtype\": \"float32\"}],\n"
        " \"launches\": [{\"kernel\": \"_lsm\", \"grid\": [\"rows * nseg\"], \"args\": [\"in_ptr0\", \"part\", \"rows\", \"n\"],\n"
        "   \"constexprs\": {\"R0_BLOCK\": 2048}, \"num_warps\": 4}]}\n";
    char *t = with(KERNEL, p);
    candidate *c = tu_parse_candidate(t);
    const char *L = strstr(c->text, "def launch(in_ptr0, out_ptr2, stream=None, _kopt_plan_go=None):\n");
    cr_assert(L, "%s", c->text);
    cr_expect(strstr(L, "    _kopt_plan_sms = _kopt_plan_torch.cuda.get_device_properties(in_ptr0.device)"
                        ".multi_processor_count\n"
                        "    n = in_ptr0.shape[-1]\n"
                        "    rows = (in_ptr0.numel() // n)\n"
                        "    nseg = ((n + 2048 - 1) // 2048)\n"
                        "    if not (nseg <= _kopt_plan_sms):\n"
                        "        raise ValueError('kopt plan: a check does not hold: nseg <= sm_count()')\n"
                        "    if _kopt_plan_go is None and not ((rows * n) == out_ptr2.numel()):\n"
                        "        raise ValueError('kopt plan: a check does not hold: rows * n == numel(out_ptr2)')\n"
                        "    if _kopt_plan_go is None:\n"
                        "        _kopt_plan_args = 0 + in_ptr0.numel() * in_ptr0.element_size() + out_ptr2.numel() * "
                        "out_ptr2.element_size()\n"
                        "        _kopt_plan_scratch = 0 + 4 * (((2 * rows) * nseg))\n"
                        "        if _kopt_plan_scratch > 4 * _kopt_plan_args + 67108864:\n"
                        "            raise ValueError('kopt plan: the scratch buffers ask for more than 4x the bytes of the "
                        "launch arguments + 64 MiB')\n"
                        "    part = _kopt_plan_torch.full((((2 * rows) * nseg), ), float('nan'), dtype=_kopt_plan_torch.float32, "
                        "device=in_ptr0.device)\n"
                        "    _lsm[((rows * nseg), )](in_ptr0, part, rows, n, R0_BLOCK=2048, num_warps=4)\n"), "%s", L);
    static_report r = {0};
    kerr e = {0};
    cr_expect_eq(static_check(c, NULL, &r, &e), 0, "kopt's launcher passes gate 1: %s", e.msg);
    static_report_free(&r);
    candidate_free(c);
    free(t);
    /* sm_count() read through lets: the check on such a let and the scratch bound of a buffer
     * sized by one run on every call; a check that reads none is skipped on the verified path */
    const char *q =
        "KOPT_PLAN = {\"params\": [\"in_ptr0\", \"out_ptr2\"],\n"
        " \"let\": {\"n\": \"shape(in_ptr0, -1)\", \"sms\": \"sm_count()\", \"nprog\": \"min(sms, n)\"},\n"
        " \"checks\": [\"n >= 1\", \"nprog * 2048 >= n\"],\n"
        " \"scratch\": [{\"name\": \"part\", \"shape\": [\"2 * nprog\"], \"dtype\": \"float32\"}],\n"
        " \"launches\": [{\"kernel\": \"_lsm\", \"grid\": [\"nprog\"], \"args\": [\"in_ptr0\", \"part\", \"nprog\", \"n\"],\n"
        "   \"constexprs\": {\"R0_BLOCK\": 2048}, \"num_warps\": 4}]}\n";
    t = with(KERNEL, q);
    c = tu_parse_candidate(t);
    L = strstr(c->text, "def launch(in_ptr0, out_ptr2, stream=None, _kopt_plan_go=None):\n");
    cr_assert(L, "%s", c->text);
    cr_expect(strstr(L, "    if _kopt_plan_go is None and not (n >= 1):\n") != NULL, "%s", L);
    cr_expect(strstr(L, "    if not ((nprog * 2048) >= n):\n") != NULL, "a check on a let of sm_count(): %s", L);
    cr_expect(strstr(L, "    _kopt_plan_args = 0 + ") != NULL && strstr(L, "    if _kopt_plan_go is None:\n") == NULL,
              "a buffer sized by sm_count(): its bound on every call: %s", L);
    candidate_free(c);
    free(t);
    /* a let may only use earlier lets; names are not reused; a check needs its comparison */
    static const plan_edit cases[] = {
        {"\"n\": \"shape(in_ptr0, -1)\", \"rows\": \"numel(in_ptr0) // n\"",
         "\"rows\": \"numel(in_ptr0) // n\", \"n\": \"shape(in_ptr0, -1)\"", "unknown name 'n'"},
        {"\"nseg\": \"cdiv(n, 2048)\"", "\"nseg\": \"cdiv(n, 2048)\", \"in_ptr0\": 1", "already a parameter"},
        {"\"nseg\": \"cdiv(n, 2048)\"", "\"nseg\": \"cdiv(n, 2048)\", \"_lsm\": 1", "already a parameter, let or kernel"},
        {"\"nseg <= sm_count()\"", "\"nseg\"", "expected a comparison"},
        {"\"nseg <= sm_count()\"", "\"nseg <= sm_count() <= 3\"", "unexpected text"},
        {"\"nseg <= sm_count()\"", "\"nseg = 1\"", "expected a comparison"},
        {"\"nseg <= sm_count()\"", "3", "a check must be a string"},
        {"\"name\": \"part\"", "\"name\": \"nseg\"", "has the name of a parameter, let"},
        /* names the launcher's own code uses */
        {"\"nseg\": \"cdiv(n, 2048)\"", "\"nseg\": \"cdiv(n, 2048)\", \"max\": 1", "a \"let\" name must be a usable identifier"},
        {"\"name\": \"part\"", "\"name\": \"float\"", "needs a \"name\" that is a usable identifier"},
        {"\"name\": \"part\"", "\"name\": \"ValueError\"", "needs a \"name\" that is a usable identifier"},
    };
    expect_edits_refused(p, cases, sizeof cases / sizeof cases[0]);
}

Test(plan, expressions) {
    const char *ints[] = {"xnumel", "ks0"}, *ptrs[] = {"in_ptr0"};
    plan_names names = {ints, 2, ptrs, 1};
    struct { const char *src, *py; } ok[] = {
        {"7", "7"},
        {"9007199254740992", "9007199254740992"}, /* 2^53, the largest literal */
        {" xnumel ", "xnumel"},
        {"xnumel*ks0+1", "((xnumel * ks0) + 1)"},
        {"xnumel - ks0 - 1", "((xnumel - ks0) - 1)"},   /* left-associative */
        {"(xnumel + 1) // 2", "((xnumel + 1) // 2)"},
        {"--xnumel", "(-(-xnumel))"},
        {"cdiv(xnumel, next_pow2(ks0))", "((xnumel + _kopt_plan_np2(ks0) - 1) // _kopt_plan_np2(ks0))"},
        {"max ( 1 , xnumel % 3 )", "max(1, (xnumel % 3))"},
        {"shape(in_ptr0, -1) * stride( in_ptr0 , 0 )", "(in_ptr0.shape[-1] * in_ptr0.stride(0))"},
        {"numel(in_ptr0) // sm_count()", "(in_ptr0.numel() // _kopt_plan_sms)"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        plan_expr *x = NULL;
        kerr e = {0};
        cr_assert_eq(plan_expr_parse(ok[i].src, &names, &x, &e), 0, "%s: %s", ok[i].src, e.msg);
        kbuf b = KBUF_INIT;
        plan_expr_emit(x, &b);
        cr_expect_str_eq(kbuf_str(&b), ok[i].py, "%s", ok[i].src);
        kbuf_free(&b);
        plan_expr_free(x);
    }
    struct { const char *src, *why; } bad[] = {
        {"", "unexpected end"},
        {"xnumel +", "unexpected end"},
        {"r0_numel", "unknown name 'r0_numel'"},
        {"__import__", "unknown name '__import__'"},
        {"xnumel / 2", "unexpected text"},
        {"1.5", "not an integer"},
        {"xnumel ** 2", "unexpected character"},
        {"cdiv(xnumel)", "expected ','"},
        {"next_pow2(xnumel, 2)", "expected ')'"},
        {"min", "unknown name 'min'"},
        {"(xnumel", "expected ')'"},
        {"xnumel)", "unexpected text"},
        {"99999999999999999999", "integer too large"},
        {"9007199254740993", "integer too large"},
        {"xnumel.real", "unexpected text"},
        {"in_ptr0", "unknown name 'in_ptr0'"},
        {"shape(xnumel, 0)", "take a pointer parameter"},
        {"numel(out_ptr9)", "take a pointer parameter"},
        {"shape(in_ptr0)", "expected ', DIM'"},
        {"shape(in_ptr0, xnumel)", "a dimension must be an integer literal"},
        {"stride(in_ptr0, 99)", "dimension out of range"},
        {"shape(in_ptr0, -64)", "dimension out of range"},
        {"sm_count(1)", "takes no argument"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        plan_expr *x = (plan_expr *)1;
        kerr e = {0};
        cr_expect_eq(plan_expr_parse(bad[i].src, &names, &x, &e), KOPT_E_CANDIDATE, "'%s' accepted", bad[i].src);
        cr_expect_null(x);
        cr_expect(strstr(e.msg, bad[i].why), "'%s': message '%s' lacks '%s'", bad[i].src, e.msg, bad[i].why);
    }
    /* bounded: nesting and length */
    kbuf deep = KBUF_INIT;
    for (int i = 0; i < PLAN_MAX_EXPR_DEPTH + 1; i++) kbuf_puts(&deep, "(");
    kbuf_puts(&deep, "1");
    for (int i = 0; i < PLAN_MAX_EXPR_DEPTH + 1; i++) kbuf_puts(&deep, ")");
    plan_expr *x = NULL;
    kerr e = {0};
    cr_expect_eq(plan_expr_parse(kbuf_str(&deep), &names, &x, &e), KOPT_E_CANDIDATE);
    cr_expect(strstr(e.msg, "nested too deeply"), "%s", e.msg);
    kbuf_free(&deep);
    kbuf lng = KBUF_INIT;
    for (int i = 0; i < PLAN_MAX_EXPR_CHARS; i++) kbuf_puts(&lng, "1");
    kbuf_puts(&lng, "+1");
    cr_expect_eq(plan_expr_parse(kbuf_str(&lng), &names, &x, &e), KOPT_E_CANDIDATE);
    cr_expect(strstr(e.msg, "longer than"), "%s", e.msg);
    kbuf_free(&lng);
}

/* The dtype names both ways, for every plan dtype (the SASS gate and lint type scratch buffers
 * and outputs with them). */
Test(plan, dtype_names_map_both_ways) {
    static const char *const pairs[][2] = {{"*fp32", "float32"}, {"*fp16", "float16"}, {"*bf16", "bfloat16"},
                                           {"*fp64", "float64"}, {"*i8", "int8"},       {"*i16", "int16"},
                                           {"*i32", "int32"},    {"*i64", "int64"},     {"*u8", "uint8"},
                                           {"*i1", "bool"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        cr_expect_str_eq(plan_triton_of_dtype(pairs[i][1]), pairs[i][0]);
        cr_expect_str_eq(plan_dtype_of_triton(pairs[i][0]), pairs[i][1]);
    }
    cr_expect_null(plan_triton_of_dtype("complex64"));
    cr_expect_null(plan_triton_of_dtype(NULL));
    cr_expect_null(plan_dtype_of_triton("fp32"), "a pointer type only");
}

/* "checks" holds at most PLAN_MAX_CHECKS comparisons: that many pass, one more is refused. */
/* A plan with `limit` entries of one key (opened by `open`, closed by `close`, entry i written
 * by `entry`) emits its last one (`last` in the lowered text); one more is refused with `why`. */
static void expect_bounded(const char *open, const char *close, void (*entry)(kbuf *, int), int limit, const char *last,
                           const char *why) {
    for (int extra = 0; extra < 2; extra++) {
        kbuf b = KBUF_INIT;
        kbuf_puts(&b, open);
        for (int i = 0; i < limit + extra; i++) {
            if (i) kbuf_puts(&b, ", ");
            entry(&b, i);
        }
        kbuf_printf(&b, "%s,\n    \"launches\"", close);
        char *p = tu_replace_once(PLAN, "\"launches\"", kbuf_str(&b));
        char *t = with(KERNEL, p);
        if (!extra) {
            candidate *c = tu_parse_candidate(t);
            cr_expect(strstr(c->text, last), "the last entry is emitted ('%s')", last);
            candidate_free(c);
        } else {
            expect_refused(t, why);
        }
        free(t);
        free(p);
        kbuf_free(&b);
    }
}

static void check_entry(kbuf *b, int i) { kbuf_printf(b, "\"r0_numel >= %d\"", i); }
static void let_entry(kbuf *b, int i) { kbuf_printf(b, "\"v%d\": \"r0_numel + %d\"", i, i); }

Test(plan, checks_are_bounded_at_their_limit) {
    expect_bounded("\"checks\": [", "]", check_entry, PLAN_MAX_CHECKS, "not (r0_numel >= 15)",
                   "\"checks\" must be a list of at most 16 comparisons");
}

Test(plan, lets_are_bounded_at_their_limit) {
    expect_bounded("\"let\": {", "}", let_entry, PLAN_MAX_LETS, "r0_numel + 15",
                   "\"let\" must be a dict of at most 16 names to integer expressions");
    /* a list of one is no dict, however short */
    char *p = tu_replace_once(PLAN, "\"launches\"", "\"let\": [\"n\"],\n    \"launches\"");
    char *t = with(KERNEL, p);
    expect_refused(t, "\"let\" must be a dict of at most 16 names to integer expressions");
    free(t);
    free(p);
}

/* An argument that names neither a parameter nor a scratch buffer, in a plan that has scratch
 * buffers: refused by name (the scratch names are searched, no further). */
Test(plan, an_unknown_argument_beside_scratch_buffers_is_refused) {
    char *p = tu_replace_once(PLAN, "    \"launches\": [",
                              "    \"scratch\": [{\"name\": \"s\", \"shape\": [4], \"dtype\": \"float32\"}],\n"
                              "    \"launches\": [");
    char *q = tu_replace_once(p, "\"args\": [\"in_ptr0\"", "\"args\": [\"os\"");
    char *t = with(KERNEL, q);
    expect_refused(t, "unknown name 'os'");
    free(t);
    free(q);
    free(p);
}

/* Each edit of the plan is refused with its reason. */
Test(plan, plans_that_do_not_fit_are_refused) {
    static const plan_edit cases[] = {
        {"\"num_warps\": 8", "\"num_warps\": 3", "\"num_warps\": 1, 2, 4, 8, 16 or 32"},
        {"\"num_warps\": 8", "\"num_warps\": 64", "\"num_warps\""},
        {"\"num_warps\": 8", "\"num_warps\": 8, \"num_stages\": 9", "\"num_stages\" must be an int from 1 to 8"},
        {"\"num_warps\": 8", "\"num_warps\": 8, \"num_stages\": 0", "\"num_stages\" must be an int from 1 to 8"},
        {"\"constexprs\": {\"R0_BLOCK\": \"next_pow2(r0_numel)\"}", "\"constexprs\": [1]", "\"constexprs\" must be a dict"},
        {", \"num_warps\": 8", "", "\"num_warps\""},
        {"\"num_warps\": 8", "\"num_warps\": 8, \"num_ctas\": 2", "unknown key 'num_ctas'"},
        {"\"params\"", "\"parameters\"", "unknown key 'parameters'"},
        {"\"kernel\": \"_lsm\"", "\"kernel\": \"print\"", "no top-level @triton.jit function of that name"},
        {"\"kernel\": \"_lsm\"", "\"kernel\": \"_lsm\", \"kernel\": \"_lsm\"", "repeats the key 'kernel'"},
        {"\"grid\": [\"xnumel\"]", "\"grid\": []", "\"grid\" of 1 to 3 sizes"},
        {"\"grid\": [\"xnumel\"]", "\"grid\": [1, 1, 1, 1]", "\"grid\" of 1 to 3 sizes"},
        {"\"grid\": [\"xnumel\"]", "\"grid\": [\"in_ptr0\"]", "unknown name 'in_ptr0'"},
        {"\"grid\": [\"xnumel\"]", "\"grid\": [2.0]", "must be an int or an expression string"},
        {"\"args\": [\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"]", "\"args\": [\"in_ptr0\", \"out_ptr2\", \"xnumel\"]",
         "gives 3 arguments; it takes 4 to 4"},
        {"\"args\": [\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"]",
         "\"args\": [\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\", 1]", "gives 5 arguments"},
        {"\"args\": [\"in_ptr0\"", "\"args\": [\"os\"", "unknown name 'os'"},
        {"\"R0_BLOCK\": \"next_pow2(r0_numel)\"", "\"R0_BLOCK\": 1, \"SECRET\": 2", "'SECRET' is not a tl.constexpr parameter"},
        {"\"constexprs\": {\"R0_BLOCK\": \"next_pow2(r0_numel)\"}, ", "", "does not give its constexpr 'R0_BLOCK'"},
        {"\"R0_BLOCK\": \"next_pow2(r0_numel)\"", "\"R0_BLOCK\": \"in_ptr0\"", "unknown name 'in_ptr0'"},
        {"\"R0_BLOCK\": \"next_pow2(r0_numel)\"", "\"num_warps\": 2", "a constexpr name must be"},
        {"\"R0_BLOCK\": \"next_pow2(r0_numel)\"", "\"R0_BLOCK\": 1e999", "a constexpr value"},
        {"[\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"],\n    \"launches\"",
         "[\"in_ptr0\", \"in_ptr0\", \"xnumel\", \"r0_numel\"],\n    \"launches\"", "parameter 'in_ptr0' repeated"},
        {"[\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"],\n    \"launches\"",
         "[\"in_ptr0\", \"stream\", \"xnumel\", \"r0_numel\"],\n    \"launches\"", "not a usable parameter name"},
        {"[\"in_ptr0\", \"out_ptr2\", \"xnumel\", \"r0_numel\"],\n    \"launches\"",
         "[\"in_ptr0\", \"_kopt_x\", \"xnumel\", \"r0_numel\"],\n    \"launches\"", "not a usable parameter name"},
        {"    \"launches\": [", "    \"scratch\": [{\"name\": \"in_ptr0\", \"shape\": [1], \"dtype\": \"float32\"}],\n    \"launches\": [",
         "has the name of a parameter, let, kernel"},
        {"    \"launches\": [", "    \"scratch\": [{\"name\": \"s\", \"shape\": [1], \"dtype\": \"complex64\"}],\n    \"launches\": [",
         "needs a \"dtype\""},
        {"    \"launches\": [", "    \"scratch\": [{\"name\": \"s\", \"shape\": [], \"dtype\": \"float32\"}],\n    \"launches\": [",
         "needs a \"shape\""},
        {"    \"launches\": [", "    \"scratch\": [{\"name\": \"s\", \"shape\": [\"nope\"], \"dtype\": \"float32\"}],\n    \"launches\": [",
         "a scratch size: unknown name 'nope'"},
        {"    \"launches\": [", "    \"scratch\": [{\"name\": \"s\", \"shape\": [1], \"dtype\": \"float32\", \"zero\": 1}],\n    \"launches\": [",
         "\"zero\" must be True or False"},
        {"    \"launches\": [", "    \"scratch\": [{\"name\": \"s\", \"shape\": [1], \"dtype\": \"float32\", \"device\": \"cpu\"}],\n    \"launches\": [",
         "unknown key 'device'"},
        {"    \"launches\": [{", "    \"launches\": [], \"x\": [{", "unknown key 'x'"},
        {"KOPT_PLAN = {", "KOPT_PLAN = dict(a=1) or {", "the plan must be a dict"},
    };
    expect_edits_refused(PLAN, cases, sizeof cases / sizeof cases[0]);
    /* no launches at all, and a plan that is not a dict */
    char *t = with(KERNEL, "KOPT_PLAN = {\"params\": [\"in_ptr0\"], \"launches\": []}\n");
    expect_refused(t, "\"launches\" must be a list of 1 to 16 launches");
    free(t);
    t = with(KERNEL, "KOPT_PLAN = [1]\n");
    expect_refused(t, "the plan must be a dict");
    free(t);
    t = with(KERNEL, "KOPT_PLAN = {\"params\": [\"xnumel\"], \"scratch\": [{\"name\": \"s\", \"shape\": [1], "
                     "\"dtype\": \"float32\"}], \"launches\": [{\"kernel\": \"_lsm\"}]}\n");
    expect_refused(t, "needs a \"grid\"");
    free(t);
}

/* Form P's file holds kernels, constants, imports of triton/math and the plan: nothing else. */
Test(plan, the_file_outside_the_plan_is_an_allowlist) {
    struct { const char *add, *why; } cases[] = {
        {"import os\n", "imports os"},
        {"import torch\n", "imports torch"},
        {"from torch._inductor.runtime import compile_tasks\n", "imports torch._inductor.runtime"},
        {"import torch._inductor.runtime.triton_helpers\n", "imports torch._inductor.runtime.triton_helpers"},
        {"from torch._inductor import config\n", "imports torch._inductor"},
        {"triton_helpers.set_driver_to_gpu()\n", "not a definition"},
        {"def helper(x):\n    return x\n", "a function that is not a plain @triton.jit kernel"},
        {"class C:\n    pass\n", "a class"},
        {"X = open('f')\n", "not a constant"},
        {"X = 1 + 2\n", "not a constant"},
        {"X = Y = 1\n", "not a constant"},
        {"X, Y = 1, 2\n", "not a constant"},
        {"X = tl.constexpr(len('a'))\n", "not a constant"},
        {"X = 1; Y = open('f')\n", "not a constant"},
        {"print(1)\n", "not a definition"},
        {"if True:\n    X = 1\n", "not a constant"},
        {"if True:\n    pass\n", "not a definition"},
        {"X = float('nan')\n", "not a constant"},
        {"launch = 1\n", "the name launch is kopt's"},
        {"_kopt_plan_torch = 1\n", "the name _kopt_plan_torch is kopt's"},
        {"@triton.autotune(configs=[], key=[])\n@triton.jit\ndef _k2(x):\n    pass\n", "a decorator other than @triton.jit"},
        {"def launch(in_ptr0, out_ptr2, xnumel, r0_numel):\n    pass\n", "KOPT_PLAN and a `def launch`"},
        {"@triton_heuristics.pointwise(size_hints={'x': 1})\n@triton.jit\ndef _h(in_ptr0):\n    pass\n",
         "KOPT_PLAN and a @triton_heuristics kernel (line 16)"},
        {"KOPT_PLAN = {}\n", "a second KOPT_PLAN"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *k = kasprintf("%s%s\n", KERNEL, cases[i].add);
        char *t = with(k, PLAN);
        char *m = tu_parse_refusal(t);
        cr_expect(strstr(m, cases[i].why), "case %zu: message '%s' lacks '%s'", i, m, cases[i].why);
        free(m);
        free(t);
        free(k);
    }
    /* the same as the file's very first statement (the scan starts at its first token) */
    static const char *const first[][2] = {
        {"print(1)\n", "not a definition"},
        {"X = open('f')\n", "not a constant"},
        {"@triton_heuristics.pointwise(size_hints={'x': 1})\n@triton.jit\ndef _h(in_ptr0):\n    pass\n",
         "KOPT_PLAN and a @triton_heuristics kernel"},
        {"def launch(in_ptr0, out_ptr2, xnumel, r0_numel):\n    pass\n", "KOPT_PLAN and a `def launch`"}};
    for (size_t i = 0; i < sizeof first / sizeof first[0]; i++) {
        char *k = kasprintf("%s%s", first[i][0], KERNEL);
        char *t = with(k, PLAN);
        char *m = tu_parse_refusal(t);
        cr_expect(strstr(m, first[i][1]) && strstr(m, "line 1"), "first statement %zu: message '%s'", i, m);
        free(m);
        free(t);
        free(k);
    }
    /* the plan as the file's first definition, a launcher after the kernel */
    char *pk = kasprintf("%s%s\ndef launch(in_ptr0, out_ptr2, xnumel, r0_numel):\n    pass\n", PLAN, KERNEL);
    char *pm = tu_parse_refusal(pk);
    cr_expect(strstr(pm, "KOPT_PLAN and a `def launch`"), "the plan first: message '%s'", pm);
    free(pm);
    free(pk);
    /* what it may hold: constants of each literal kind, annotated or wrapped, and a docstring */
    char *k = kasprintf("\"\"\"A docstring.\"\"\"\n%sA = 1.5\nB: tl.constexpr = 4\nC = tl.constexpr(8)\nD = 'x'\n"
                        "E = None\nF = -3\nimport math\nfrom triton.language.extra import libdevice\n"
                        "from torch._inductor.runtime import triton_helpers, triton_heuristics\n"
                        "from torch._inductor.runtime.triton_helpers import libdevice as ld, math as tl_math\n"
                        "from torch._inductor.runtime.hints import ReductionHint\n", KERNEL);
    char *t = with(k, PLAN);
    candidate *c = tu_parse_candidate(t);
    cr_expect(c->from_plan);
    candidate_free(c);
    free(t);
    free(k);
}

/* A launcher the candidate wrote itself (form L) is refused by default (rule launcher: its host
 * Python would run where kopt judges), with NULL options too; --allow-launcher accepts it; the
 * launcher kopt writes for a plan and an Inductor-style file (form I) are not concerned. */
Test(plan, a_candidates_own_launcher_is_refused_unless_allowed) {
    char *t = with(KERNEL, "def launch(in_ptr0, out_ptr2, xnumel, r0_numel, stream=None):\n"
                           "    _lsm[(xnumel,)](in_ptr0, out_ptr2, xnumel, r0_numel, R0_BLOCK=1024)\n");
    candidate *c = tu_parse_candidate(t);
    cr_assert_eq(candidate_form(c), CAND_FORM_L);
    cr_assert(!c->from_plan);
    static_opts dflt = {0}, allow = {.allow_launcher = 1};
    const static_opts *refusing[] = {NULL, &dflt};
    for (size_t i = 0; i < 2; i++) {
        static_report r = {0};
        kerr e = {0};
        cr_expect_eq(static_check(c, refusing[i], &r, &e), KOPT_E_CANDIDATE, "options %zu", i);
        cr_assert_eq(r.n, 1);
        cr_expect_str_eq(static_rule_name(r.v[0].rule), "launcher");
        cr_expect_eq(r.v[0].line, 16, "at the def launch line (%d)", r.v[0].line);
        cr_expect(strstr(r.v[0].why, "KOPT_PLAN"), "%s", r.v[0].why);
        static_report_free(&r);
    }
    static_report r = {0};
    kerr e = {0};
    cr_expect_eq(static_check(c, &allow, &r, &e), 0, "%s", e.msg);
    static_report_free(&r);
    cr_expect_eq(static_rule_from_name("launcher"), STATIC_LAUNCHER);
    candidate_free(c);
    free(t);
    /* form P's lowering is form L too, written by kopt: not concerned */
    t = with(KERNEL, PLAN);
    c = tu_parse_candidate(t);
    cr_expect_eq(static_check(c, &dflt, &r, &e), 0, "%s", e.msg);
    static_report_free(&r);
    candidate_free(c);
    free(t);
}

/* The message naming the launcher that clashes with the plan gives its line, also when it is the
 * file's first definition. */
Test(plan, a_launcher_first_in_the_file_is_named_with_its_line) {
    char *t = kasprintf("import triton\ndef launch(in_ptr0):\n    pass\n%s", strstr(KERNEL, "@triton.jit"));
    char *full = with(t, PLAN);
    char *m = tu_parse_refusal(full);
    cr_expect(strstr(m, "KOPT_PLAN and a `def launch` (line 2)"), "%s", m);
    free(m);
    free(full);
    free(t);
}

/* A second KOPT_PLAN is refused also when the first is the file's first definition. */
Test(plan, a_second_plan_after_a_first_definition_is_refused) {
    char *t = kasprintf("# kopt-candidate: replaces=" LSM "\n%s%s%s", PLAN, strstr(KERNEL, "import triton\n"), PLAN);
    char *m = tu_parse_refusal(t);
    cr_expect(strstr(m, "a second KOPT_PLAN (the first is at line 2)"), "%s", m);
    free(m);
    free(t);
}

/* A launch of a kernel none of whose runtime parameters is required (only constexprs, or
 * defaults) may give no arguments: "args" takes 0 to the runtime parameters' count. */
Test(plan, a_kernel_with_no_required_parameter_takes_no_arguments) {
    char *k = kasprintf("%s@triton.jit\ndef _nop(N: tl.constexpr):\n    pass\n\n"
                        "@triton.jit\ndef _dflt(scale=1.0):\n    pass\n\n", KERNEL);
    char *p = tu_replace_once(PLAN, "\"num_warps\": 8}]",
                              "\"num_warps\": 8},\n    {\"kernel\": \"_nop\", \"grid\": [1], \"args\": [], "
                              "\"constexprs\": {\"N\": 1}, \"num_warps\": 1},\n    {\"kernel\": \"_dflt\", \"grid\": [1], \"args\": [], \"num_warps\": 1}]");
    char *t = with(k, p);
    candidate *c = tu_parse_candidate(t);
    cr_expect(strstr(c->text, "_nop[(1, )](N=1") && strstr(c->text, "_dflt[(1, )]("), "%s", c->text);
    candidate_free(c);
    free(t);
    /* too many for either: the range in the message starts at 0 */
    char *q = tu_replace_once(p, "\"args\": [], \"constexprs\"", "\"args\": [1], \"constexprs\"");
    t = with(k, q);
    expect_refused(t, "launch of '_nop' gives 1 arguments; it takes 0 to 0");
    free(t);
    free(q);
    q = tu_replace_once(p, "\"args\": [], \"num_warps\": 1}]", "\"args\": [1, 2], \"num_warps\": 1}]");
    t = with(k, q);
    expect_refused(t, "launch of '_dflt' gives 2 arguments; it takes 0 to 1");
    free(t);
    free(q);
    free(p);
    free(k);
}

/* The edges that pass: num_stages 8, dimension 63, a forbidden import first in the file refused. */
Test(plan, edges_that_pass_and_a_first_import) {
    char *p = tu_replace_once(PLAN, "\"num_warps\": 8", "\"num_warps\": 8, \"num_stages\": 8");
    char *t = with(KERNEL, p);
    candidate *c = tu_parse_candidate(t);
    cr_expect(strstr(c->text, "num_warps=8, num_stages=8)"), "%s", c->text);
    candidate_free(c);
    free(t);
    free(p);
    const char *ints[] = {"xnumel"}, *ptrs[] = {"in_ptr0"};
    plan_names names = {ints, 1, ptrs, 1};
    plan_expr *x = NULL;
    kerr e = {0};
    cr_expect_eq(plan_expr_parse("stride(in_ptr0, 63)", &names, &x, &e), 0, "%s", e.msg);
    plan_expr_free(x);
    /* a one-line kernel (its body on the def's line) between the kernel and the plan */
    char *one = kasprintf("%s@triton.jit\ndef _nop(x): pass\n%s", KERNEL, PLAN);
    c = tu_parse_candidate(one);
    cr_expect(c->from_plan && c->njit == 2, "a one-line kernel parses: %zu kernels", c->njit);
    candidate_free(c);
    free(one);
    char *first = kasprintf("import os\n%s%s", KERNEL, PLAN);
    char *m = tu_parse_refusal(first);
    cr_expect(strstr(m, "line 1: imports os"), "%s", m);
    free(m);
    free(first);
}
