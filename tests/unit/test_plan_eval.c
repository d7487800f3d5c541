/* test_plan_eval.c — a form-P plan evaluated for one launch (gates/plan_eval.h): Python's integer
 * semantics at their edges (floor division and modulo of negatives, cdiv, next_pow2, min/max,
 * overflow, division by zero), names that are missing, shapes and strides, lets and checks, and
 * each launch's Triton specialisation (pointer, scratch and integer types, the value 1, the
 * constexprs) -- what the machine-code check compiles. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gates/candidate.h"
#include "gates/plan.h"
#include "gates/plan_eval.h"

static const char *const INTS[] = {"a", "b", "n"};
static const char *const PTRS[] = {"in_ptr0"};
static const plan_names NAMES = {INTS, 3, PTRS, 1};

static long long ev(const char *s, const plan_values *v, int *rc) {
    plan_expr *x = NULL;
    kerr e = {0};
    cr_assert_eq(plan_expr_parse(s, &NAMES, &x, &e), 0, "%s: %s", s, e.msg);
    long long out = 0;
    *rc = plan_expr_eval(x, v, &out, &e);
    plan_expr_free(x);
    return out;
}

static plan_values vals(long long a, long long b, long long n) {
    plan_values v = {0};
    v.nints = 3;
    v.int_names[0] = "a", v.int_names[1] = "b", v.int_names[2] = "n";
    v.ints[0] = a, v.ints[1] = b, v.ints[2] = n;
    return v;
}

Test(plan_eval, python_integer_semantics) {
    plan_values v = vals(-7, 2, 1000);
    int rc;
    cr_assert_eq(ev("a // b", &v, &rc), -4);
    cr_assert_eq(ev("a % b", &v, &rc), 1, "Python's modulo takes the divisor's sign");
    cr_assert_eq(ev("7 % (-2)", &v, &rc), -1);
    cr_assert_eq(ev("cdiv(n, 128)", &v, &rc), 8);
    cr_assert_eq(ev("cdiv(1024, 128)", &v, &rc), 8, "an exact cdiv");
    cr_assert_eq(ev("next_pow2(n)", &v, &rc), 1024);
    cr_assert_eq(ev("next_pow2(1024)", &v, &rc), 1024);
    cr_assert_eq(ev("next_pow2(1025)", &v, &rc), 2048);
    cr_assert_eq(ev("next_pow2(0)", &v, &rc), 0, "triton.next_power_of_2(0) is 0 (Triton 3.6)");
    cr_assert_eq(ev("next_pow2(1)", &v, &rc), 1);
    cr_assert_eq(ev("next_pow2(a)", &v, &rc), 0, "and of a negative number (a = -7)");
    cr_assert_eq(ev("min(a, b) + max(a, b)", &v, &rc), -5);
    cr_assert_eq(ev("-a * 3 - 1", &v, &rc), 20);
    cr_assert_eq(rc, 0);
}

Test(plan_eval, errors_name_what_is_missing) {
    plan_values v = vals(1, 0, 4);
    int rc;
    ev("a // b", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "division by zero");
    ev("cdiv(a, b)", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE);
    ev("a % b", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE);
    plan_values big = vals(3037000500LL, 0, 4611686018427387905LL);
    ev("a * a", &big, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "overflow");
    ev("next_pow2(n)", &big, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "next_pow2 past 2^62 overflows");
    v.nints = 2; /* n unknown */
    ev("n + 1", &v, &rc);
    cr_assert_eq(rc, KOPT_E_USAGE);
    ev("numel(in_ptr0)", &v, &rc);
    cr_assert_eq(rc, KOPT_E_USAGE, "a shape not given");
    ev("sm_count()", &v, &rc);
    cr_assert_eq(rc, KOPT_E_USAGE, "no SM count");
}

Test(plan_eval, shapes_strides_and_numel) {
    plan_values v = vals(0, 0, 0);
    v.nptrs = 1;
    v.ptr_names[0] = "in_ptr0";
    v.ndims[0] = 3;
    v.shapes[0][0] = 4, v.shapes[0][1] = 5, v.shapes[0][2] = 6;
    v.sms = 132;
    int rc;
    cr_assert_eq(ev("shape(in_ptr0, 1)", &v, &rc), 5);
    cr_assert_eq(ev("shape(in_ptr0, -1)", &v, &rc), 6);
    cr_assert_eq(ev("stride(in_ptr0, 0)", &v, &rc), 30, "contiguous strides");
    cr_assert_eq(ev("stride(in_ptr0, -1)", &v, &rc), 1);
    cr_assert_eq(ev("numel(in_ptr0)", &v, &rc), 120);
    cr_assert_eq(ev("sm_count() * 2", &v, &rc), 264);
    cr_assert_eq(rc, 0);
    ev("shape(in_ptr0, 3)", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "a dimension out of range");
}

static const char FILE_P[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def _k(in_ptr0, out_ptr0, part, xnumel, big, one, scale, flag, BLOCK: tl.constexpr, EVEN: tl.constexpr = True):\n"
    "    pass\n"
    "\n"
    "KOPT_PLAN = {\n"
    "    \"params\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\"],\n"
    "    \"let\": {\"NB\": \"cdiv(xnumel, 1024)\"},\n"
    "    \"checks\": [\"xnumel >= 1\"],\n"
    "    \"scratch\": [{\"name\": \"partials\", \"shape\": [\"NB\"], \"dtype\": \"bfloat16\", \"zero\": False}],\n"
    "    \"launches\": [{\"kernel\": \"_k\", \"grid\": [\"NB\"],\n"
    "                  \"args\": [\"in_ptr0\", \"out_ptr0\", \"partials\", \"xnumel\", \"xnumel * 1048576\", 1, 0.5, True],\n"
    "                  \"constexprs\": {\"BLOCK\": \"min(1024, next_pow2(xnumel))\"}, \"num_warps\": 4, \"num_stages\": 2}],\n"
    "}\n";

/* The checked plan of the form-P file `text` (its raw parse in *c; both the caller's). */
static launch_plan *plan_from(const char *text, candidate **c) {
    launch_plan *p = NULL;
    kerr e = {0};
    cr_assert_eq(candidate_parse_raw(text, strlen(text), c, &e), 0, "%s", e.msg);
    cr_assert_eq(plan_of(*c, &p, &e), 0, "%s", e.msg);
    return p;
}

static const char *sig_of(const plan_spec *s, const char *name) {
    for (size_t i = 0; i < s->nsig; i++)
        if (!strcmp(s->sig_names[i], name)) return s->sig_types[i];
    return NULL;
}

static int div16_of(const plan_spec *s, const char *name) {
    for (size_t i = 0; i < s->nsig; i++)
        if (!strcmp(s->sig_names[i], name)) return s->sig_div16[i];
    return -1;
}

static const char *cx_of(const plan_spec *s, const char *name) {
    for (size_t i = 0; i < s->ncx; i++)
        if (!strcmp(s->cx_names[i], name)) return s->cx_values[i];
    return NULL;
}

Test(plan_eval, a_launch_specialised_as_triton_would) {
    candidate *c = NULL;
    launch_plan *p = NULL;
    kerr e = {0};
    cr_assert_eq(candidate_parse_raw(FILE_P, strlen(FILE_P), &c, &e), 0, "%s", e.msg);
    cr_assert_geq(c->plan_def, 0, "the raw parse keeps the plan");
    cr_assert_eq(plan_of(c, &p, &e), 0, "%s", e.msg);
    plan_values v = {0};
    v.nints = 1;
    v.int_names[0] = "xnumel";
    v.ints[0] = 5000;
    v.nptrs = 1;
    v.ptr_names[0] = "in_ptr0";
    v.ptr_types[0] = "*bf16";
    cr_assert_eq(plan_eval_lets(p, &v, &e), 0, "%s", e.msg);
    cr_assert_eq(v.nints, 2, "the let is a name now");
    cr_assert_str_eq(v.int_names[1], "NB");
    cr_assert_eq(v.ints[1], 5);
    plan_spec s;
    cr_assert_eq(plan_specialize(c, p, 0, &v, &s, &e), 0, "%s", e.msg);
    cr_assert_str_eq(s.kernel, "_k");
    cr_assert_str_eq(sig_of(&s, "in_ptr0"), "*bf16", "a given pointer type");
    cr_assert_str_eq(sig_of(&s, "out_ptr0"), "*fp32", "the default pointer type");
    cr_assert_str_eq(sig_of(&s, "part"), "*bf16", "a scratch buffer's dtype");
    cr_assert_str_eq(sig_of(&s, "xnumel"), "i32");
    cr_assert_str_eq(sig_of(&s, "big"), "i64", "past 2^31: i64");
    cr_assert_str_eq(sig_of(&s, "one"), "constexpr", "Triton specialises the value 1");
    cr_assert_str_eq(cx_of(&s, "one"), "1");
    cr_assert_str_eq(sig_of(&s, "scale"), "fp32");
    cr_assert_str_eq(sig_of(&s, "flag"), "i1");
    cr_assert_str_eq(sig_of(&s, "BLOCK"), "constexpr");
    cr_assert_str_eq(cx_of(&s, "BLOCK"), "1024");
    cr_assert_null(sig_of(&s, "EVEN"), "a defaulted constexpr not given is left to Triton");
    cr_assert_eq(s.num_warps, 4);
    cr_assert_eq(s.num_stages, 2);
    /* Triton's divisibility specialisation, as its JIT makes it for these values */
    cr_assert_eq(div16_of(&s, "in_ptr0"), 1, "a pointer not known misaligned: aligned, as torch allocates");
    cr_assert_eq(div16_of(&s, "part"), 1, "kopt's scratch: aligned");
    cr_assert_eq(div16_of(&s, "xnumel"), 0, "5000 is not a multiple of 16");
    cr_assert_eq(div16_of(&s, "big"), 1, "5000 * 2^20 is");
    cr_assert_eq(div16_of(&s, "scale"), 0, "floats are not specialised");
    cr_assert_eq(div16_of(&s, "flag"), 0);
    cr_assert_eq(div16_of(&s, "one"), 0, "a constexpr has no attribute");
    plan_spec_free(&s);
    v.ptr_misaligned[0] = 1;
    v.ints[0] = 4096;
    v.nints = 1; /* the let again, from the new value */
    cr_assert_eq(plan_eval_lets(p, &v, &e), 0, "%s", e.msg);
    cr_assert_eq(plan_specialize(c, p, 0, &v, &s, &e), 0, "%s", e.msg);
    cr_assert_eq(div16_of(&s, "in_ptr0"), 0, "a pointer the capture saw misaligned");
    cr_assert_eq(div16_of(&s, "xnumel"), 1, "4096 is a multiple of 16");
    plan_spec_free(&s);
    /* a check that fails for the values is named */
    plan_values w = {0};
    w.nints = 1;
    w.int_names[0] = "xnumel";
    w.ints[0] = 0;
    cr_assert_eq(plan_eval_lets(p, &w, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "xnumel >= 1"), "%s", e.msg);
    plan_free(p);
    candidate_free(c);
}

#include "gates/sass.h"
#include "verify/sass_gate.h"

/* kopt verify --sass-check: the plan's values come from the captured launch, by position */
Test(plan_eval, values_from_a_captured_launch) {
    candidate *c = NULL;
    launch_plan *p = plan_from(FILE_P, &c);
    kerr e = {0};
    int64_t shape[2] = {64, 80}, stride[2] = {1, 64}; /* a transposed view */
    guard_arg args[3] = {
        {.kind = GUARD_TENSOR, .ndim = 2, .shape = shape, .stride = stride, .dtype = "bfloat16", .align16 = 0},
        {.kind = GUARD_TENSOR, .ndim = 2, .shape = shape, .stride = stride, .dtype = "float32", .align16 = -1},
        {.kind = GUARD_INT, .ival = 5120}};
    guard_sig sig = {args, 3};
    plan_values v;
    unsigned allowed = 0;
    cr_assert_eq(sass_gate_values(p, &sig, &v, &allowed, &e), 0, "%s", e.msg);
    cr_assert_eq(allowed, SASS_BIT(SASS_CVT_BF16), "a bfloat16 tensor allows its conversions");
    cr_assert_eq(v.nptrs, 2);
    cr_assert_str_eq(v.ptr_types[0], "*bf16");
    cr_assert_eq(v.ptr_misaligned[0], 1, "the capture saw it misaligned");
    cr_assert_eq(v.ptr_misaligned[1], 0, "the capture did not say: taken as aligned");
    cr_assert_eq(v.nints, 1);
    cr_assert_eq(v.ints[0], 5120);
    plan_expr *x = NULL;
    const char *const ints[] = {"xnumel"};
    const char *const ptrs[] = {"in_ptr0", "out_ptr0"};
    plan_names nm = {ints, 1, ptrs, 2};
    cr_assert_eq(plan_expr_parse("stride(in_ptr0, 1) + shape(out_ptr0, 0)", &nm, &x, &e), 0, "%s", e.msg);
    long long r = 0;
    cr_assert_eq(plan_expr_eval(x, &v, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r, 64 + 64, "the captured strides, not contiguous ones");
    plan_expr_free(x);
    guard_sig short_sig = {args, 2};
    cr_assert_eq(sass_gate_values(p, &short_sig, &v, &allowed, &e), KOPT_E_CANDIDATE, "a plan that does not fit the launch");
    guard_arg odd = {.kind = GUARD_TENSOR, .ndim = 1, .shape = shape, .stride = stride, .dtype = "complex64"};
    guard_arg args2[3] = {odd, args[1], args[2]};
    guard_sig odd_sig = {args2, 3};
    cr_assert_eq(sass_gate_values(p, &odd_sig, &v, &allowed, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "complex64"), "%s", e.msg);
    plan_free(p);
    candidate_free(c);
}

/* what --sass-check compiles is the file gate 1 judged: a different sha256 is a refusal, before
 * any python runs */
Test(plan_eval, a_file_changed_since_gate_1_is_refused) {
    char path[] = "/tmp/kopt-sassgate-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, FILE_P, strlen(FILE_P)), (ssize_t)strlen(FILE_P));
    close(fd);
    guard_sig sig = {0};
    json_t *g1 = json_object();
    char *why = NULL;
    kerr e = {0};
    const char *judged = "0000000000000000000000000000000000000000000000000000000000000000";
    cr_assert_eq(sass_gate_check(path, judged, &sig, "/nonexistent/python3", NULL, 0, NULL, NULL, NULL, g1, &why, &e), 0, "%s", e.msg);
    cr_assert_not_null(why);
    cr_assert(strstr(why, "changed while it was being judged"), "%s", why);
    free(why);
    json_decref(g1);
    unlink(path);
}

/* Faults that no values avoid, found when the plan is read. */
static int fault(const char *s) {
    plan_expr *x = NULL;
    kerr e = {0};
    cr_assert_eq(plan_expr_parse(s, &NAMES, &x, &e), 0, "%s: %s", s, e.msg);
    int rc = plan_expr_const_fault(x, &e);
    if (rc) cr_assert_eq(rc, KOPT_E_CANDIDATE, "%s: %s", s, e.msg);
    plan_expr_free(x);
    return rc;
}

Test(plan_eval, faults_without_values) {
    cr_assert(fault("a // 0"));
    cr_assert(fault("a % (2 - 2)"), "a divisor that folds to zero");
    cr_assert(fault("cdiv(n, 0) + 1"), "deep in the expression");
    cr_assert(fault("a + 9007199254740992 * 9007199254740992"), "literals that overflow");
    cr_assert(fault("a // (1 // 2)"), "1 // 2 is 0");
    cr_assert_not(fault("a // 1"));
    cr_assert_not(fault("a // (b - b)"), "names: it depends on the values");
    cr_assert_not(fault("a // min(b, 0)"));
    cr_assert_not(fault("(a * 0) // 3"));
    cr_assert_not(fault("-7 // 2 + 7 % -2"));
    cr_assert_not(fault("a // (0 - 1)"), "a negative divisor is no fault");
}

/* A KOPT_PLAN with `grid` and `extra` spliced in, read (rc from plan_of). */
static int plan_with(const char *grid, const char *scratch, const char *arg, launch_plan **p, candidate **c, kerr *e) {
    char *t = kasprintf("import triton\n"
                        "import triton.language as tl\n"
                        "\n"
                        "@triton.jit\n"
                        "def _k(in_ptr0, out_ptr0, part, n, BLOCK: tl.constexpr):\n"
                        "    pass\n"
                        "\n"
                        "KOPT_PLAN = {\n"
                        "    \"params\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\"],\n"
                        "    \"scratch\": [{\"name\": \"part\", \"shape\": [%s], \"dtype\": \"float32\", \"zero\": True}],\n"
                        "    \"launches\": [{\"kernel\": \"_k\", \"grid\": [%s],\n"
                        "                  \"args\": [\"in_ptr0\", \"out_ptr0\", \"part\", %s],\n"
                        "                  \"constexprs\": {\"BLOCK\": 1024}, \"num_warps\": 4}],\n"
                        "}\n",
                        scratch, grid, arg);
    *p = NULL;
    int rc = candidate_parse_raw(t, strlen(t), c, e);
    if (!rc) rc = plan_of(*c, p, e);
    free(t);
    return rc;
}

/* The values' faults: plan_eval_launches for xnumel = n. */
static int launches_at(const char *grid, const char *scratch, const char *arg, long long n, kerr *e) {
    launch_plan *p = NULL;
    candidate *c = NULL;
    int rc = plan_with(grid, scratch, arg, &p, &c, e);
    cr_assert_eq(rc, 0, "%s", e->msg);
    plan_values v = {0};
    v.nints = 1;
    v.int_names[0] = "xnumel";
    v.ints[0] = n;
    rc = plan_eval_lets(p, &v, e);
    if (!rc) rc = plan_eval_launches(p, &v, e);
    plan_free(p);
    candidate_free(c);
    return rc;
}

/* A plan refused when it is read, with `why` in the message. */
static void refused_when_read(const char *grid, const char *scratch, const char *arg, const char *why) {
    launch_plan *p = NULL;
    candidate *c = NULL;
    kerr e = {0};
    cr_assert_eq(plan_with(grid, scratch, arg, &p, &c, &e), KOPT_E_CANDIDATE, "grid %s", grid);
    cr_assert(strstr(e.msg, why), "%s", e.msg);
    cr_assert_null(p);
    candidate_free(c);
}

Test(plan_eval, launches_that_would_fail_when_run) {
    kerr e = {0};
    /* faults that hold for every value are refused when the plan is read, with its line */
    refused_when_read("\"cdiv(xnumel, 0)\"", "1", "\"xnumel\"", "line 11: KOPT_PLAN: a grid size: a division by zero");
    refused_when_read("\"xnumel\", 65536", "1", "\"xnumel\"", "outside 0..65535, CUDA's limit for dimension y");
    refused_when_read("\"xnumel\", 1, \"0 - 1\"", "1", "\"xnumel\"", "dimension z");
    refused_when_read("2147483648", "1", "\"xnumel\"", "outside 0..2147483647, CUDA's limit for dimension x");
    refused_when_read("1", "\"xnumel % 0\"", "\"xnumel\"", "a scratch size: a division by zero");
    refused_when_read("1", "1", "\"xnumel // (3 - 3)\"", "an argument");
    launch_plan *p = NULL;
    candidate *c = NULL;
    /* the limits themselves are launchable */
    cr_assert_eq(plan_with("2147483647, 65535, 65535", "0", "\"xnumel\"", &p, &c, &e), 0, "%s", e.msg);
    plan_free(p);
    candidate_free(c);

    /* faults for some values only: found when the plan is evaluated for them */
    cr_assert_eq(launches_at("\"cdiv(xnumel, 128)\"", "\"xnumel\"", "\"xnumel\"", 1 << 20, &e), 0, "%s", e.msg);
    cr_assert_eq(launches_at("\"cdiv(xnumel, 128)\"", "\"xnumel\"", "\"xnumel\"", 0, &e), 0, "a grid of 0 launches nothing");
    cr_assert_eq(launches_at("\"128 - xnumel\"", "1", "\"xnumel\"", 129, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "line 11: launch 0 (_k): grid size 0 is -1 for these values, outside 0..2147483647"),
              "%s", e.msg);
    cr_assert_eq(launches_at("\"xnumel\"", "1", "\"xnumel\"", 2147483648LL, &e), KOPT_E_CANDIDATE);
    cr_assert_eq(launches_at("\"xnumel\"", "1", "\"xnumel\"", 2147483647LL, &e), 0, "%s", e.msg);
    cr_assert_eq(launches_at("1, \"xnumel\"", "1", "\"xnumel\"", 65535, &e), 0, "%s", e.msg);
    cr_assert_eq(launches_at("1, \"xnumel\"", "1", "\"xnumel\"", 65536, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "grid size 1 is 65536"), "%s", e.msg);
    cr_assert_eq(launches_at("1, 1, \"xnumel\"", "1", "\"xnumel\"", 65536, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "grid size 2 is 65536"), "%s", e.msg);
    cr_assert_eq(launches_at("1", "\"xnumel - 8\"", "\"xnumel\"", 7, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "scratch part: size 0 is -1 for these values"), "%s", e.msg);
    cr_assert_eq(launches_at("1", "\"xnumel - 8\"", "\"xnumel\"", 8, &e), 0, "an empty scratch is fine");
    cr_assert_eq(launches_at("1", "1", "\"1024 // (xnumel - 5)\"", 5, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "line 11: launch 0 (_k): a division by zero"), "%s", e.msg);
    cr_assert_eq(launches_at("1", "\"64 // (xnumel - 5)\"", "\"xnumel\"", 5, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "scratch part, size 0: a division by zero"), "%s", e.msg);
    cr_assert_eq(launches_at("1", "1", "\"xnumel\"", 5, &e), 0, "%s", e.msg);
}

/* A value that must evaluate without error. */
static long long val(const char *s, const plan_values *v) {
    int rc = -1;
    long long x = ev(s, v, &rc);
    cr_assert_eq(rc, 0, "%s: rc %d", s, rc);
    return x;
}

/* Each operator at its edges, every overflow refused, each error with its code. */
Test(plan_eval, every_operator_at_its_edges) {
    plan_values v = vals(LLONG_MAX, 1, 3);
    int rc;
    ev("a + b", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "LLONG_MAX + 1 overflows");
    cr_assert_eq(val("a + 0", &v), LLONG_MAX);
    ev("-a - 2", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "-LLONG_MAX - 2 overflows");
    cr_assert_eq(val("-a - 1", &v), LLONG_MIN);
    ev("cdiv(a, 2)", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "cdiv's a + b - 1 overflows");
    cr_assert_eq(val("cdiv(a, 1)", &v), LLONG_MAX);
    plan_values m = vals(LLONG_MIN, -1, 3);
    ev("-a", &m, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "-LLONG_MIN overflows");
    ev("a // b", &m, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "LLONG_MIN // -1 overflows");
    ev("a % b", &m, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE);
    cr_assert_eq(val("a // 1", &m), LLONG_MIN);
    cr_assert_eq(val("a // (0 - 2)", &m), LLONG_MIN / -2);
    cr_assert_eq(val("(a + 1) // b", &m), LLONG_MAX, "-(LLONG_MIN + 1) fits");
    cr_assert_eq(val("-(a + 1)", &m), LLONG_MAX);
    cr_assert_eq(val("min(n, 3) + max(n, 3)", &v), 6, "min and max of equals");
    cr_assert_eq(val("min(n, 4) * 10 + max(n, 4)", &v), 34);
    /* shapes, strides and numel past 64 bits; stride and the SM count at their smallest */
    v.nptrs = 1;
    v.ptr_names[0] = "in_ptr0";
    v.ndims[0] = 3;
    v.shapes[0][0] = 2, v.shapes[0][1] = 1LL << 40, v.shapes[0][2] = 1LL << 30;
    ev("stride(in_ptr0, 0)", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "a contiguous stride of 2^70 overflows");
    ev("numel(in_ptr0)", &v, &rc);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "a numel of 2^71 overflows");
    cr_assert_eq(val("stride(in_ptr0, 1)", &v), 1LL << 30);
    cr_assert_eq(val("shape(in_ptr0, 1)", &v), 1LL << 40);
    v.shapes[0][1] = 3;
    cr_assert_eq(val("numel(in_ptr0)", &v), 6LL << 30);
    cr_assert_eq(val("stride(in_ptr0, 0)", &v), 3LL << 30);
    v.ndims[0] = 0;
    ev("shape(in_ptr0, 0)", &v, &rc);
    cr_assert_eq(rc, KOPT_E_USAGE, "a shape not given");
    ev("stride(in_ptr0, 0)", &v, &rc);
    cr_assert_eq(rc, KOPT_E_USAGE);
    v.sms = 1;
    cr_assert_eq(val("sm_count()", &v), 1, "one SM is an SM count");
    v.sms = 0;
    ev("sm_count()", &v, &rc);
    cr_assert_eq(rc, KOPT_E_USAGE);
}

/* A plan of one let, one check `CHECK` and a launch, read from text. */
static launch_plan *plan_checking(const char *let, const char *check, candidate **c) {
    char *t = kasprintf("import triton\n"
                        "import triton.language as tl\n"
                        "\n"
                        "@triton.jit\n"
                        "def _k(in_ptr0, n):\n"
                        "    pass\n"
                        "\n"
                        "KOPT_PLAN = {\n"
                        "    \"params\": [\"in_ptr0\", \"xnumel\", \"other\"],\n"
                        "    \"let\": {\"L\": \"%s\"},\n"
                        "    \"checks\": [\"%s\"],\n"
                        "    \"launches\": [{\"kernel\": \"_k\", \"grid\": [1], \"args\": [\"in_ptr0\", \"L\"], \"num_warps\": 4}],\n"
                        "}\n",
                        let, check);
    launch_plan *p = plan_from(t, c);
    free(t);
    return p;
}

/* rc of the plan's lets and checks for xnumel = x, other = y; the message in e. */
static int checked(const char *let, const char *check, long long x, long long y, kerr *e) {
    candidate *c = NULL;
    launch_plan *p = plan_checking(let, check, &c);
    plan_values v = {0};
    v.nints = 2;
    v.int_names[0] = "xnumel", v.int_names[1] = "other";
    v.ints[0] = x, v.ints[1] = y;
    int rc = plan_eval_lets(p, &v, e);
    plan_free(p);
    candidate_free(c);
    return rc;
}

Test(plan_eval, checks_at_their_edges) {
    static const struct {
        const char *check;
        long long x, y;
        int holds;
    } T[] = {
        {"xnumel == other", 5, 5, 1}, {"xnumel == other", 5, 6, 0}, {"xnumel != other", 5, 6, 1},
        {"xnumel != other", 5, 5, 0}, {"xnumel <= other", 5, 5, 1}, {"xnumel <= other", 6, 5, 0},
        {"xnumel >= other", 5, 5, 1}, {"xnumel >= other", 5, 6, 0}, {"xnumel < other", 5, 5, 0},
        {"xnumel < other", 4, 5, 1},  {"xnumel > other", 5, 5, 0},  {"xnumel > other", 6, 5, 1},
    };
    for (size_t i = 0; i < sizeof T / sizeof *T; i++) {
        kerr e = {0};
        int rc = checked("xnumel", T[i].check, T[i].x, T[i].y, &e);
        cr_expect_eq(rc, T[i].holds ? 0 : KOPT_E_CANDIDATE, "%s for %lld, %lld: rc %d (%s)", T[i].check, T[i].x, T[i].y,
                     rc, e.msg);
    }
    /* the let and the check that fail are named */
    kerr e = {0};
    cr_assert_eq(checked("xnumel // (other - 3)", "L >= 0", 8, 3, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "let L: a division by zero"), "%s", e.msg);
    cr_assert_eq(checked("xnumel", "L // (other - 3) >= 0", 8, 3, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "check L // (other - 3) >= 0: a division by zero"), "%s", e.msg);
    /* a let beyond the values' room is a usage error, not a write past the table */
    candidate *c = NULL;
    launch_plan *p = plan_checking("xnumel", "L >= 0", &c);
    plan_values v = {0};
    for (size_t i = 0; i < PLAN_MAX_VALUES; i++) {
        v.int_names[i] = i ? "filler" : "xnumel";
        v.ints[i] = 1;
    }
    v.nints = PLAN_MAX_VALUES;
    cr_assert_eq(plan_eval_lets(p, &v, &e), KOPT_E_USAGE);
    cr_assert(strstr(e.msg, "too many values"), "%s", e.msg);
    v.nints = PLAN_MAX_VALUES - 1;
    cr_assert_eq(plan_eval_lets(p, &v, &e), 0, "%s", e.msg);
    cr_assert_eq(v.nints, PLAN_MAX_VALUES);
    plan_free(p);
    candidate_free(c);
}

static const char FILE_Q[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def _q(FIRST: tl.constexpr, in_ptr0, n, m, lo, hi, SCALE: tl.constexpr, ON: tl.constexpr):\n"
    "    pass\n"
    "\n"
    "KOPT_PLAN = {\n"
    "    \"params\": [\"in_ptr0\", \"xnumel\"],\n"
    "    \"launches\": [{\"kernel\": \"_q\", \"grid\": [1],\n"
    "                  \"args\": [\"in_ptr0\", \"xnumel\", \"xnumel + 2147483646\", \"0 - 2147483648\", \"-2147483649\"],\n"
    "                  \"constexprs\": {\"FIRST\": 3, \"SCALE\": 0.25, \"ON\": False}, \"num_warps\": 2}],\n"
    "}\n";

/* The specialisation at Triton's edges: i32 up to INT_MAX and down to INT_MIN, an integer
 * parameter of value 1 made a constexpr, float and bool constexprs, a constexpr as the first
 * parameter; the errors of a launch that is not there, a kernel the file does not define and a
 * value that is missing. */
Test(plan_eval, specialisation_at_its_edges) {
    candidate *c = NULL;
    launch_plan *p = plan_from(FILE_Q, &c);
    kerr e = {0};
    plan_values v = {0};
    v.nints = 1;
    v.int_names[0] = "xnumel";
    v.ints[0] = 1;
    plan_spec s;
    cr_assert_eq(plan_specialize(c, p, 0, &v, &s, &e), 0, "%s", e.msg);
    cr_assert_str_eq(sig_of(&s, "n"), "constexpr", "an integer parameter of value 1 is a constexpr");
    cr_assert_str_eq(cx_of(&s, "n"), "1");
    cr_assert_str_eq(sig_of(&s, "m"), "i32", "1 + 2147483646 = INT_MAX: i32");
    cr_assert_str_eq(sig_of(&s, "lo"), "i32", "INT_MIN: i32");
    cr_assert_str_eq(sig_of(&s, "hi"), "i64", "INT_MIN - 1: i64");
    cr_assert_str_eq(sig_of(&s, "FIRST"), "constexpr", "a constexpr as the first parameter");
    cr_assert_str_eq(cx_of(&s, "FIRST"), "3");
    cr_assert_str_eq(cx_of(&s, "SCALE"), "0.25");
    cr_assert_str_eq(cx_of(&s, "ON"), "false");
    cr_assert_str_eq(sig_of(&s, "ON"), "constexpr");
    cr_assert_eq(s.nargs, 8, "every parameter, declared order");
    cr_assert_str_eq(s.arg_names[0], "FIRST");
    cr_assert_str_eq(s.arg_names[7], "ON");
    cr_assert_eq(s.num_warps, 2);
    cr_assert_eq(s.num_stages, 0);
    plan_spec_free(&s);
    v.ints[0] = 2;
    cr_assert_eq(plan_specialize(c, p, 0, &v, &s, &e), 0, "%s", e.msg);
    cr_assert_str_eq(sig_of(&s, "n"), "i32");
    cr_assert_str_eq(sig_of(&s, "m"), "i64", "2 + 2147483646 = INT_MAX + 1: i64");
    cr_assert_str_eq(sig_of(&s, "FIRST"), "constexpr", "the first constexpr given, with no value-1 one before it");
    plan_spec_free(&s);
    /* the plan against a file whose _q takes one more runtime argument than the plan gives */
    static const char FILE_Q2[] = "import triton\nimport triton.language as tl\n\n@triton.jit\n"
                                  "def _q(FIRST: tl.constexpr, in_ptr0, n, m, lo, hi, extra, SCALE: tl.constexpr, "
                                  "ON: tl.constexpr):\n    pass\n\nKOPT_PLAN = {}\n";
    candidate *wide = NULL;
    cr_assert_eq(candidate_parse_raw(FILE_Q2, strlen(FILE_Q2), &wide, &e), 0, "%s", e.msg);
    cr_assert_eq(plan_specialize(wide, p, 0, &v, &s, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "too few arguments"), "%s", e.msg);
    candidate_free(wide);
    cr_assert_eq(plan_specialize(c, p, 1, &v, &s, &e), KOPT_E_INTERNAL, "no launch 1");
    v.nints = 0;
    cr_assert_eq(plan_specialize(c, p, 0, &v, &s, &e), KOPT_E_USAGE, "xnumel missing");
    cr_assert(strstr(e.msg, "--value xnumel=N"), "%s", e.msg);
    /* the plan against another file, which has no such kernel */
    candidate *other = NULL;
    cr_assert_eq(candidate_parse_raw(FILE_P, strlen(FILE_P), &other, &e), 0, "%s", e.msg);
    v.nints = 1;
    cr_assert_eq(plan_specialize(other, p, 0, &v, &s, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "not a jit function"), "%s", e.msg);
    candidate_free(other);
    plan_free(p);
    candidate_free(c);
}

/* plan_eval_launches on a plan without scratch (nothing to fault), and on one whose first
 * argument, or a constexpr, divides by zero for the values given. */
Test(plan_eval, launch_faults_in_every_argument) {
    candidate *c = NULL;
    launch_plan *p = plan_checking("xnumel", "L >= 0", &c);
    plan_values v = {0};
    v.nints = 2;
    v.int_names[0] = "xnumel", v.int_names[1] = "other";
    v.ints[0] = 5, v.ints[1] = 0;
    kerr e = {0};
    cr_assert_eq(plan_eval_lets(p, &v, &e), 0, "%s", e.msg);
    cr_assert_eq(plan_eval_launches(p, &v, &e), 0, "no scratch, a grid of 1: %s", e.msg);
    plan_free(p);
    candidate_free(c);
    static const char *const ARGS[] = {
        "\"args\": [\"1024 // (xnumel - 5)\", \"in_ptr0\"], \"constexprs\": {\"B\": 4}",
        "\"args\": [\"xnumel\", \"in_ptr0\"], \"constexprs\": {\"B\": \"64 % (xnumel - 5)\"}",
    };
    for (size_t i = 0; i < 2; i++) {
        char *t = kasprintf("import triton\nimport triton.language as tl\n\n@triton.jit\n"
                            "def _r(n, in_ptr0, B: tl.constexpr):\n    pass\n\n"
                            "KOPT_PLAN = {\"params\": [\"in_ptr0\", \"xnumel\"], \"launches\": [{\"kernel\": \"_r\", "
                            "\"grid\": [1], %s, \"num_warps\": 1}]}\n",
                            ARGS[i]);
        p = plan_from(t, &c);
        v.nints = 1;
        cr_assert_eq(plan_eval_launches(p, &v, &e), KOPT_E_CANDIDATE, "case %zu", i);
        cr_assert(strstr(e.msg, "launch 0 (_r): a division by zero"), "%s", e.msg);
        v.ints[0] = 6;
        cr_assert_eq(plan_eval_launches(p, &v, &e), 0, "%s", e.msg);
        v.ints[0] = 5;
        plan_free(p);
        candidate_free(c);
        free(t);
    }
}
