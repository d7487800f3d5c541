/* test_sandbox.c — the disposable process of src/sandbox/sandbox.h, driven with ordinary shell
 * commands: input and output, the environment, exit codes and signals, the timeout, the output
 * cap, the file-size limit, the process that escapes with setsid(), the network namespace and
 * the uid. Each test works in a fresh directory under /tmp. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox.h"
#include "testutil.h"

static char workdir[64];

static void make_workdir(void) {
    snprintf(workdir, sizeof workdir, "/tmp/kopt-sbtest-XXXXXX");
    cr_assert_not_null(mkdtemp(workdir));
}

static void remove_workdir(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(sandbox, .init = make_workdir, .fini = remove_workdir, .timeout = 60);

static const char *const ENV_MIN[] = {"PATH=/usr/bin:/bin", NULL};

/* A FIFO in the work directory, opened for reading before the sandbox starts, that a sandboxed
 * job opens for writing: its first line says the job started, its hang-up (every writer gone)
 * that nothing holding it is left. Evidence that does not depend on seeing the job in /proc. */
static int fifo_open(const char *name) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", workdir, name);
    cr_assert_eq(mkfifo(path, 0666), 0);
    cr_assert_eq(chmod(path, 0666), 0, "the job may run as nobody");
    int fd = open(path, O_RDONLY | O_NONBLOCK);
    cr_assert_geq(fd, 0);
    return fd;
}

/* Waits up to secs for any of `ev` on fd; the events seen (0 when none came). */
static short fifo_wait(int fd, short ev, double secs) {
    for (int i = 0; i < (int)(secs * 50); i++) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 20) > 0 && (pf.revents & ev)) return pf.revents;
    }
    return 0;
}

/* The job's first line, once it is there (up to secs), else "". */
static const char *fifo_line(int fd, double secs) {
    static char line[64];
    line[0] = 0;
    if (!fifo_wait(fd, POLLIN, secs)) return line;
    ssize_t n = read(fd, line, sizeof line - 1);
    line[n > 0 ? n : 0] = 0;
    return line;
}

/* Run `sh -c script` with the default limits (plus a timeout) and no input. */
static void run_sh(const char *script, double timeout, sandbox_opts *o, sandbox_result *r) {
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    sandbox_opts d = {.workdir = workdir, .timeout_s = timeout, .env = ENV_MIN};
    if (!o) o = &d;
    kerr e = {0};
    cr_assert_eq(sandbox_run(o, argv, NULL, 0, r, &e), 0, "%s", e.msg);
}

Test(sandbox, stdin_reaches_the_command_and_stdout_comes_back) {
    size_t n = 1 << 20; /* more than a pipe holds: writing and reading must interleave */
    char *in = malloc(n);
    for (size_t i = 0; i < n; i++) in[i] = (char)('a' + i % 26);
    char *argv[] = {"/bin/sh", "-c", "exec cat", NULL}; /* through sh: `make valgrind` does not trace sh */
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .env = ENV_MIN};
    sandbox_result r;
    kerr e = {0};
    cr_assert_eq(sandbox_run(&o, argv, in, n, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.exit_code, 0);
    cr_assert_eq(r.out.len, n);
    cr_assert(memcmp(r.out.data, in, n) == 0);
    cr_assert(!r.timed_out && !r.out_overflow);
    free(in);
    sandbox_result_free(&r);
}

Test(sandbox, the_environment_is_exactly_the_given_one) {
    setenv("KOPT_SBTEST_SECRET", "sk-do-not-leak", 1);
    char *argv[] = {"/usr/bin/env", NULL};
    const char *const env[] = {"ONLY=this", NULL};
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .env = env};
    sandbox_result r;
    kerr e = {0};
    cr_assert_eq(sandbox_run(&o, argv, NULL, 0, &r, &e), 0, "%s", e.msg);
    cr_assert_str_eq(kbuf_str(&r.out), "ONLY=this\n");
    sandbox_result_free(&r);
    unsetenv("KOPT_SBTEST_SECRET");
}

Test(sandbox, exit_codes_and_signals) {
    sandbox_result r;
    run_sh("echo out; echo err >&2; exit 3", 20, NULL, &r);
    cr_assert_eq(r.exit_code, 3);
    cr_assert_eq(r.term_signal, 0);
    cr_assert_str_eq(kbuf_str(&r.out), "out\n");
    cr_assert_str_eq(kbuf_str(&r.err), "err\n");
    sandbox_result_free(&r);
    /* in a PID namespace the command is its init, which ignores signals sent from inside: the
     * signal path is tested without namespaces */
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .env = ENV_MIN, .no_ns = 1};
    run_sh("kill -9 $$", 20, &o, &r);
    cr_assert_eq(r.term_signal, SIGKILL);
    cr_assert_eq(r.exit_code, -1);
    sandbox_result_free(&r);
}

Test(sandbox, a_missing_command_is_exit_127_not_a_sandbox_failure) {
    char *argv[] = {"/nonexistent/kopt-python", NULL};
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .env = ENV_MIN};
    sandbox_result r;
    kerr e = {0};
    cr_assert_eq(sandbox_run(&o, argv, NULL, 0, &r, &e), 0);
    cr_assert_eq(r.exit_code, 127);
    cr_assert(strstr(kbuf_str(&r.err), "cannot run"));
    sandbox_result_free(&r);
    char *rel[] = {"python3", NULL};
    cr_assert_eq(sandbox_run(&o, rel, NULL, 0, &r, &e), -1, "a relative command path is refused");
    sandbox_result_free(&r);
}

Test(sandbox, the_timeout_kills_the_command) {
    sandbox_result r;
    run_sh("sleep 30", 0.5, NULL, &r);
    cr_assert(r.timed_out);
    cr_assert(r.wall_s < 5.0, "took %.1f s", r.wall_s);
    cr_assert_neq(r.exit_code, 0);
    sandbox_result_free(&r);
}

Test(sandbox, too_much_output_kills_the_command) {
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .out_cap = 1000, .err_cap = 10, .env = ENV_MIN};
    sandbox_result r;
    run_sh("echo 0123456789abcdef >&2; while :; do echo yyyyyyyyyyyyyyyy; done", 20, &o, &r);
    cr_assert(r.out_overflow);
    cr_assert_eq(r.out.len, 1000);
    cr_assert_eq(r.err.len, 10, "stderr is kept up to its cap");
    cr_assert(r.wall_s < 5.0);
    sandbox_result_free(&r);
}

Test(sandbox, files_cannot_grow_past_the_limit) {
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .file_bytes = 1 << 20, .env = ENV_MIN};
    sandbox_result r;
    run_sh("head -c 3000000 /dev/zero > big; echo written", 20, &o, &r);
    char path[128];
    snprintf(path, sizeof path, "%s/big", workdir);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert(st.st_size <= (1 << 20), "big is %lld bytes", (long long)st.st_size);
    sandbox_result_free(&r);
}

static void escape_is_killed(int no_ns) {
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .env = ENV_MIN, .no_ns = no_ns};
    sandbox_result r;
    const char *marker = no_ns ? "61.2345" : "61.2346";
    char script[200];
    int fd = fifo_open("alive");
    snprintf(script, sizeof script, "setsid sh -c 'echo up; exec sleep %s' </dev/null >alive 2>&1 & sleep 0.2; exit 0",
             marker);
    run_sh(script, 20, &o, &r);
    cr_assert_eq(r.exit_code, 0);
    cr_assert_str_eq(fifo_line(fd, 5), "up\n", "the escaping job started");
    cr_assert(fifo_wait(fd, POLLHUP, 5), "a setsid child outlived the sandbox (%s)", no_ns ? "no namespaces" : "namespaces");
    cr_assert(!tu_alive_with(marker), "a setsid child outlived the sandbox (%s)", no_ns ? "no namespaces" : "namespaces");
    close(fd);
    sandbox_result_free(&r);
}

Test(sandbox, a_setsid_child_dies_with_the_command) { escape_is_killed(0); }

Test(sandbox, a_setsid_child_dies_without_namespaces_too) { escape_is_killed(1); }

Test(sandbox, the_network_namespace_has_only_loopback) {
    sandbox_result r;
    run_sh("cat /proc/self/net/dev", 20, NULL, &r);
    if (!r.ns) {
        cr_log_warn("no namespaces here (%s): network isolation not tested", r.ns_why);
        sandbox_result_free(&r);
        return;
    }
    int ifaces = 0;
    const char *s = kbuf_str(&r.out);
    for (const char *p = strchr(s, ':'); p; p = strchr(p + 1, ':')) ifaces++;
    cr_assert_eq(ifaces, 1, "interfaces seen: %s", s);
    cr_assert(strstr(s, "lo:"));
    cr_assert(strstr(sandbox_describe(&r), "namespaces"));
    sandbox_result_free(&r);
}

Test(sandbox, without_namespaces_says_so) {
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .env = ENV_MIN, .no_ns = 1};
    sandbox_result r;
    run_sh("true", 20, &o, &r);
    cr_assert_eq(r.ns, 0);
    cr_assert_str_eq(r.ns_why, "not asked for");
    cr_assert(strstr(sandbox_describe(&r), "no namespaces (not asked for)"));
    sandbox_result_free(&r);
}

Test(sandbox, root_runs_the_command_as_nobody_in_a_writable_workdir) {
    sandbox_result r;
    run_sh("id -u; echo x > f && cat f; echo y > /etc/kopt-sbtest 2>/dev/null || echo refused", 20, NULL, &r);
    if (geteuid() != 0) {
        cr_assert_eq(r.dropped_uid, 0);
        sandbox_result_free(&r);
        return;
    }
    cr_assert(r.dropped_uid);
    cr_assert_str_eq(kbuf_str(&r.out), "65534\nx\nrefused\n");
    cr_assert(access("/etc/kopt-sbtest", F_OK) != 0);
    sandbox_result_free(&r);
}

Test(sandbox, without_a_pid_namespace_on_request) {
    sandbox_opts o = {.workdir = workdir, .timeout_s = 20, .env = ENV_MIN, .no_pidns = 1};
    sandbox_result r;
    run_sh("echo $$", 20, &o, &r);
    cr_assert_eq(r.pidns, 0);
    if (r.ns) {
        cr_assert_neq(atoi(kbuf_str(&r.out)), 1, "not PID 1 of a namespace");
        cr_assert(strstr(sandbox_describe(&r), "network namespace,"), "%s", sandbox_describe(&r));
    }
    sandbox_result_free(&r);
    run_sh("echo $$", 20, NULL, &r);
    if (r.ns) {
        cr_assert_eq(r.pidns, 1);
        cr_assert_eq(atoi(kbuf_str(&r.out)), 1, "the command is PID 1 of its namespace");
    }
    sandbox_result_free(&r);
}

/* ---- sessions: a long-lived command asked one line at a time ----------------------------- */

static void open_sh(const char *script, sandbox_session *s) {
    char *argv[] = {"/bin/sh", "-c", (char *)script, NULL};
    sandbox_opts o = {.workdir = workdir, .env = ENV_MIN};
    kerr e = {0};
    cr_assert_eq(sandbox_open(&o, argv, s, &e), 0, "%s", e.msg);
}

Test(sandbox, a_session_answers_line_by_line) {
    sandbox_session s;
    open_sh("echo hello; while read l; do echo \"got $l\"; done", &s);
    kbuf a = KBUF_INIT;
    kerr e = {0};
    usleep(100000); /* the greeting waits in the pipe: still read as the answer to no question */
    cr_assert_eq(sandbox_ask(&s, NULL, 100, 10, &a, &e), 0, "%s", e.msg);
    cr_assert_str_eq(kbuf_str(&a), "hello", "a greeting read without asking");
    cr_assert_eq(sandbox_ask(&s, "one", 100, 10, &a, &e), 0, "%s", e.msg);
    cr_assert_str_eq(kbuf_str(&a), "got one");
    cr_assert_eq(sandbox_ask(&s, "two", 100, 10, &a, &e), 0, "%s", e.msg);
    cr_assert_str_eq(kbuf_str(&a), "got two");
    sandbox_result r;
    sandbox_close(&s, &r);
    cr_assert_eq(r.exit_code, 0, "the server leaves when its input ends");
    cr_assert(r.wall_s < 2, "closed without waiting for the grace period (%.2f s)", r.wall_s);
    kbuf_free(&a);
    sandbox_result_free(&r);
}

Test(sandbox, a_session_that_does_not_answer_in_time_ends) {
    sandbox_session s;
    open_sh("read l; sleep 30", &s);
    kbuf a = KBUF_INIT;
    kerr e = {0};
    cr_assert_neq(sandbox_ask(&s, "x", 100, 0.3, &a, &e), 0);
    cr_assert(strstr(e.msg, "time limit"), "%s", e.msg);
    cr_assert(s.dead);
    cr_assert_neq(sandbox_ask(&s, "y", 100, 1, &a, &e), 0, "a dead session answers nothing more");
    sandbox_result r;
    sandbox_close(&s, &r);
    cr_assert_neq(r.exit_code, 0);
    cr_assert(r.wall_s < 10, "killed after the grace periods (%.1f s)", r.wall_s);
    kbuf_free(&a);
    sandbox_result_free(&r);
}

Test(sandbox, a_session_answer_is_one_line_within_the_cap) {
    static const char *const scripts[] = {"while read l; do echo a; echo b; done",
                                          "read l; head -c 500 /dev/zero | tr '\\0' x; echo", "read l; exit 0"};
    static const char *const why[] = {"line", "longer than allowed", "ended"};
    for (size_t i = 0; i < 3; i++) {
        sandbox_session s;
        open_sh(scripts[i], &s);
        kbuf a = KBUF_INIT;
        kerr e = {0};
        /* two lines for one question: seen in the same read, or at the next question at the latest */
        int rc = sandbox_ask(&s, "q", 100, 5, &a, &e);
        if (i == 0 && rc == 0) {
            usleep(200000);
            rc = sandbox_ask(&s, "q2", 100, 5, &a, &e);
        }
        cr_assert_neq(rc, 0, "%s answered", scripts[i]);
        cr_assert(strstr(e.msg, why[i]), "%s: %s", scripts[i], e.msg);
        sandbox_result r;
        sandbox_close(&s, &r);
        kbuf_free(&a);
        sandbox_result_free(&r);
    }
}

Test(sandbox, a_session_leaves_nothing_behind) {
    sandbox_session s;
    int fd = fifo_open("alive");
    open_sh("setsid sh -c 'echo up; exec sleep 61.2347' </dev/null >alive 2>&1 & while read l; do echo ok; done", &s);
    kbuf a = KBUF_INIT;
    kerr e = {0};
    cr_assert_eq(sandbox_ask(&s, "x", 100, 10, &a, &e), 0, "%s", e.msg);
    /* the job's own word that it runs (CI once did not see it in /proc within 10 s; why is not
     * known: the FIFO does not depend on /proc) */
    cr_assert_str_eq(fifo_line(fd, 20), "up\n", "the background process started");
    cr_assert_not(fifo_wait(fd, POLLHUP, 0.2), "the background process runs while the session does");
    for (int i = 0; i < 100 && !tu_alive_with("61.2347"); i++) usleep(20000);
    if (!tu_alive_with("61.2347")) cr_log_warn("the background process runs but /proc does not show it here");
    sandbox_result r;
    sandbox_close(&s, &r);
    cr_assert(fifo_wait(fd, POLLHUP, 5), "a setsid child outlived the session");
    cr_assert(!tu_alive_with("61.2347"), "a setsid child outlived the session");
    close(fd);
    kbuf_free(&a);
    sandbox_result_free(&r);
}
