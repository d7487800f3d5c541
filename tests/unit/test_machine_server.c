/* test_machine_server.c — gate 1's compile server (src/gates/machine.h): the same machine code
 * as a compile in a sandbox process of its own, a candidate's background process killed before
 * the next compile, a server that dies replaced by one-shot compiles, a clock read that got past
 * the static rules refused in the machine code. Needs a python with
 * Triton (KOPT_TRITON_PYTHON; its cuobjdump through KOPT_CUOBJDUMP or beside it): skipped
 * without one, as CI has none. The compile times of both ways are logged, not asserted (the
 * figures are docs/BENCHMARKS.md's). */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gates/candidate.h"
#include "gates/machine.h"
#include "gates/plan.h"
#include "testutil.h"
#include "util/buf.h"
#include "util/fs.h"

static const char *triton_python(void) {
    const char *p = getenv("KOPT_TRITON_PYTHON");
    return p && p[0] == '/' ? p : NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The candidate's machine code: 0 with r filled, or the error code. `sent`, when given, is the
 * text the compile gets instead of the parsed one: what a hole in the static rules would let
 * through (the sandbox is the second line of defence, tested as such). */
static int check_as(const char *text, const char *sent, const machine_opts *o, machine_report *r, kerr *e) {
    candidate *c = NULL;
    launch_plan *p = NULL;
    int rc = candidate_parse_raw(text, strlen(text), &c, e);
    if (!rc) rc = plan_of(c, &p, e);
    if (!rc && sent) {
        free(c->text);
        c->text = kstrdup(sent);
        c->len = strlen(sent);
    }
    plan_values v = {.sms = 132};
    v.nints = 2;
    v.int_names[0] = "xnumel", v.ints[0] = 4096;
    v.int_names[1] = "r0_numel", v.ints[1] = 8192;
    if (!rc) rc = machine_check(c, p, &v, 0, o, r, e);
    plan_free(p);
    candidate_free(c);
    return rc;
}

/* A compile server for o, or the test skipped where the sandbox has no PID namespace. */
static void open_server(const machine_opts *o, machine_server *srv) {
    kerr e = {0};
    int rc = machine_server_open(o, srv, &e);
    if (rc && strstr(e.msg, "PID namespace")) cr_skip_test("%s", e.msg);
    cr_assert_eq(rc, 0, "%s", e.msg);
}

static int check(const char *text, const machine_opts *o, machine_report *r, kerr *e) {
    return check_as(text, NULL, o, r, e);
}

Test(machine_server, the_same_machine_code_as_a_process_of_its_own, .timeout = 300) {
    const char *py = triton_python();
    if (!py) cr_skip_test("no KOPT_TRITON_PYTHON: the compile server is not tested here");
    size_t len = 0;
    char *text = tu_read_fixture("tests/candidates/03_log_softmax/good_plan_online.py", &len);
    machine_server srv;
    machine_opts o = {.python = py, .arch = 90, .timeout_s = 120};
    kerr e = {0};
    open_server(&o, &srv);
    cr_log_info("compile server started in %.2f s", srv.start_s);
    machine_report one = {0}, served = {0};
    double t_one = 0, t_served = 0, c_one = 0, c_served = 0;
    enum { N = 5 };
    for (int i = 0; i < N; i++) {
        machine_report_free(&one), machine_report_free(&served);
        memset(&one, 0, sizeof one), memset(&served, 0, sizeof served);
        double t0 = now_s();
        cr_assert_eq(check(text, &o, &one, &e), 0, "%s", e.msg);
        double t1 = now_s();
        machine_opts so = o;
        so.server = &srv;
        cr_assert_eq(check(text, &so, &served, &e), 0, "%s", e.msg);
        t_one += t1 - t0, t_served += now_s() - t1;
        c_one += one.compile_s, c_served += served.compile_s;
        cr_assert(srv.open, "the server still runs");
    }
    cr_log_info("machine check, mean of %d: %.3f s in a process of its own, %.3f s by the server (of which the "
                "compile %.3f s, %.3f s)",
                N, t_one / N, t_served / N, c_one / N, c_served / N);
    cr_assert_eq(one.n, served.n);
    for (size_t i = 0; i < one.n; i++) {
        cr_assert_str_eq(one.launches[i].kernel, served.launches[i].kernel);
        cr_assert_eq(one.launches[i].ninsn, served.launches[i].ninsn, "the same kernel, instruction for instruction");
        cr_assert_eq(one.launches[i].classes, served.launches[i].classes);
    }
    cr_assert(strstr(served.protections, "compile server") && strstr(served.protections, "PID namespace"), "%s",
              served.protections);
    machine_report_free(&one), machine_report_free(&served);
    machine_server_close(&srv);
    cr_assert_not(srv.open);
    free(text);
}

/* A candidate file that, when imported for its compile, starts a process that would outlive it:
 * killed before the server answers; one that tries to kill the server: it cannot (PID 1); a
 * server that dies: the compile runs in a process of its own and the server is closed. */
Test(machine_server, a_candidates_leftovers_do_not_reach_the_next, .timeout = 300) {
    const char *py = triton_python();
    if (!py) cr_skip_test("no KOPT_TRITON_PYTHON: the compile server is not tested here");
    size_t len = 0;
    char *good = tu_read_fixture("tests/candidates/03_log_softmax/good_plan_online.py", &len);
    kbuf bad = KBUF_INIT;
    kbuf_printf(&bad, "%s\nimport os\nos.system('setsid sleep 61.2351 </dev/null >/dev/null 2>&1 &')\n", good);
    machine_server srv;
    machine_opts o = {.python = py, .arch = 90, .timeout_s = 120};
    kerr e = {0};
    open_server(&o, &srv);
    machine_opts so = o;
    so.server = &srv;
    machine_report r = {0};
    cr_assert_eq(check_as(good, kbuf_str(&bad), &so, &r, &e), 0, "%s", e.msg);
    cr_assert(srv.open);
    cr_assert(!tu_alive_with("61.2351"), "the candidate's background process outlived its compile");
    machine_report_free(&r);
    /* the server is PID 1 of its namespace: a compile's SIGKILL to it is not delivered */
    kbuf killer = KBUF_INIT;
    kbuf_printf(&killer, "%s\nimport os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n", good);
    memset(&r, 0, sizeof r);
    cr_assert_eq(check_as(good, kbuf_str(&killer), &so, &r, &e), 0, "%s", e.msg);
    cr_assert(srv.open && strstr(r.protections, "compile server"), "the server survived: %s", r.protections);
    machine_report_free(&r);
    /* a server that dies anyway (killed from outside): the compile runs in a process of its own */
    kill(-srv.s.sup, SIGKILL);
    memset(&r, 0, sizeof r);
    cr_assert_eq(check(good, &so, &r, &e), 0, "compiled again in a process of its own: %s", e.msg);
    cr_assert_not(srv.open, "a server that died is closed");
    cr_assert(r.n == 1 && !strstr(r.protections, "compile server"), "%s", r.protections);
    machine_report_free(&r);
    machine_server_close(&srv);
    kbuf_free(&bad), kbuf_free(&killer);
    free(good);
}

/* For the gates (kernel_prefix, keep_dir): the file is compiled with its names as the stitched
 * module has them, so each kept launch is the kernel _kopt_K__<name> (spec and kopt's metadata
 * agree), and its machine code is the unprefixed compile's, instruction for instruction. */
Test(machine_server, kept_for_the_gates_under_the_stitched_names, .timeout = 300) {
    const char *py = triton_python();
    if (!py) cr_skip_test("no KOPT_TRITON_PYTHON: the sandboxed compile is not tested here");
    size_t len = 0;
    char *text = tu_read_fixture("tests/candidates/03_log_softmax/good_plan_online.py", &len);
    char *keep = NULL;
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-keep-", &keep, &e), 0, "%s", e.msg);
    machine_opts o = {.python = py, .arch = 90, .timeout_s = 120};
    machine_report plain = {0}, named = {0};
    cr_assert_eq(check(text, &o, &plain, &e), 0, "%s", e.msg);
    o.kernel_prefix = "triton_red_fused__log_softmax_0";
    o.keep_dir = keep;
    cr_assert_eq(check(text, &o, &named, &e), 0, "%s", e.msg);
    cr_assert_eq(plain.n, named.n);
    cr_assert_gt(named.n, 0);
    for (size_t i = 0; i < named.n; i++) {
        cr_expect_str_eq(plain.launches[i].kernel, named.launches[i].kernel, "the report names the file's kernel");
        cr_expect_eq(plain.launches[i].ninsn, named.launches[i].ninsn, "the same machine code");
        char *want = kasprintf("\"_kopt_triton_red_fused__log_softmax_0__%s\"", named.launches[i].kernel);
        char *f = kasprintf("launch%zu.spec.json", i), *p = fs_join(keep, f);
        char *spec = NULL, *meta = NULL;
        size_t n = 0;
        cr_assert_eq(fs_read(p, &spec, &n, &e), 0, "%s", e.msg);
        free(p), free(f);
        f = kasprintf("launch%zu.json", i), p = fs_join(keep, f);
        cr_assert_eq(fs_read(p, &meta, &n, &e), 0, "%s", e.msg);
        cr_expect(strstr(spec, want) != NULL, "spec names %s: %s", want, spec);
        cr_expect(strstr(meta, want) != NULL, "metadata names %s: %s", want, meta);
        free(p), free(f), free(want), free(spec), free(meta);
    }
    machine_report_free(&plain), machine_report_free(&named);
    fs_rmtree(keep);
    free(keep);
    free(text);
}

/* The machine code is the second line of defence for the timer rule too: a kernel reading the
 * global timer through inline PTX, sent to the compile as a hole in the static rules would let it
 * through, is refused as `timer` in its SASS (with every precision class allowed it still is),
 * and the same file without the read passes. */
Test(machine_server, a_clock_read_past_the_static_rules_is_refused_in_the_machine_code, .timeout = 300) {
    const char *py = triton_python();
    if (!py) cr_skip_test("no KOPT_TRITON_PYTHON: the sandboxed compile is not tested here");
    size_t len = 0;
    char *good = tu_read_fixture("tests/candidates/03_log_softmax/good_plan_online.py", &len);
    const char *at = "    log_sum = tl.log(row_sum)\n";
    kbuf copy = KBUF_INIT; /* cut in a copy: GCC -O2 takes a pointer into the fixture's text for a dangling one */
    kbuf_puts(&copy, good);
    const char *whole = kbuf_str(&copy), *cut = strstr(whole, at);
    cr_assert_not_null(cut, "the fixture's line to change");
    kbuf bad = KBUF_INIT;
    kbuf_append(&bad, whole, (size_t)(cut - whole));
    kbuf_printf(&bad, "    t0 = tl.inline_asm_elementwise(\"mov.u64 $0, %%globaltimer;\", \"=l\", [], dtype=tl.int64, "
                      "is_pure=False, pack=1)\n"
                      "    log_sum = tl.log(row_sum) + (t0 < 0).to(tl.float32)\n%s",
                cut + strlen(at));
    machine_opts o = {.python = py, .arch = 90, .timeout_s = 120};
    kerr e = {0};
    machine_report r = {0};
    cr_assert_eq(check_as(good, kbuf_str(&bad), &o, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.n, 1);
    cr_assert_eq(r.launches[0].violation, SASS_TIMER, "violation %d, classes %#x", r.launches[0].violation,
                 r.launches[0].classes);
    cr_assert(strstr(r.launches[0].insn, "SR_GLOBALTIMER"), "%s", r.launches[0].insn);
    machine_report_free(&r);
    memset(&r, 0, sizeof r);
    cr_assert_eq(check(good, &o, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.launches[0].violation, -1, "the control passes: classes %#x", r.launches[0].classes);
    cr_assert_eq(r.launches[0].classes & SASS_NEVER_ALLOWED, 0);
    machine_report_free(&r);
    kbuf_free(&bad), kbuf_free(&copy);
    free(good);
}
