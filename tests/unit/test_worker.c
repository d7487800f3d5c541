/* test_worker.c — worker/worker: supervision of the Python worker, driven by
 * tests/fake_worker.py (FAKE_WORKER_MODE chooses its behaviour). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gates/tensor.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"
#include "worker/pycache.h"
#include "worker/worker.h"

static char *g_dir;       /* per-test temporary directory */
static char *g_script;    /* tests/fake_worker.py */
static char *g_counter;   /* FAKE_WORKER_COUNTER file */

static void tw_setup(void) {
    if (!getenv("KOPT_LOG")) log_set_level(LOG_QUIET);   /* restarts warn; keep output clean */
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-worker", &g_dir, &e), 0, "%s", e.msg);
    char *root = fs_kopt_root();
    g_script = fs_join(root, "tests/fake_worker.py");
    free(root);
    cr_assert(fs_exists(g_script), "%s missing (set KOPT_ROOT)", g_script);
    g_counter = fs_join(g_dir, "counter");
    char *pyc = fs_join(g_dir, "pycache");   /* workers' bytecode: never the tester's HOME */
    setenv("KOPT_PYCACHE", pyc, 1);
    free(pyc);
}
static void tw_teardown(void) {
    fs_rmtree(g_dir);
    free(g_dir);
    free(g_script);
    free(g_counter);
}

TestSuite(worker, .init = tw_setup, .fini = tw_teardown, .timeout = 60);

static double tw_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Options for the fake worker in `mode`, counting into g_counter. The strings live in
 * static storage until the next call. */
static worker_opts tw_opts(const char *mode) {
    static char mode_env[256], counter_env[1024];
    static const char *env[3];
    snprintf(mode_env, sizeof mode_env, "FAKE_WORKER_MODE=%s", mode);
    snprintf(counter_env, sizeof counter_env, "FAKE_WORKER_COUNTER=%s", g_counter);
    env[0] = mode_env;
    env[1] = counter_env;
    env[2] = NULL;
    worker_opts o = {0};
    o.script = g_script;
    o.env = env;
    o.ready_timeout_s = 10;
    return o;
}

static worker *tw_start(const char *mode) {
    worker_opts o = tw_opts(mode);
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), 0, "worker_start(%s): %s", mode, e.msg);
    cr_assert_not_null(w);
    return w;
}

/* Lines of the counter file starting with `prefix`. */
static int tw_count(const char *prefix) {
    FILE *f = fopen(g_counter, "r");
    if (!f) return 0;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, prefix, strlen(prefix))) n++;
    fclose(f);
    return n;
}

/* Children of this process: total and zombies, from /proc. */
static void tw_children(int *total, int *zombies) {
    *total = *zombies = 0;
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *de;
    pid_t me = getpid();
    while ((de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/%s/stat", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *rp = strrchr(buf, ')');
        char state;
        int ppid;
        if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2) continue;
        if (ppid != me) continue;
        (*total)++;
        if (state == 'Z') (*zombies)++;
    }
    closedir(d);
}

/* After worker_stop: nothing left, not even a zombie. */
static void tw_assert_no_children(void) {
    int st;
    errno = 0;
    cr_assert_eq(waitpid(-1, &st, WNOHANG), -1, "a child process is left");
    cr_assert_eq(errno, ECHILD);
    int total, zombies;
    tw_children(&total, &zombies);
    cr_assert_eq(total, 0);
}

/* While one worker runs: exactly one child, alive. */
static void tw_assert_one_live_child(const worker *w) {
    int total, zombies;
    tw_children(&total, &zombies);
    cr_assert_eq(zombies, 0, "zombie processes left behind");
    cr_assert_eq(total, 1, "%d children", total);
    cr_assert(worker_pid(w) > 0);
    cr_assert_eq(kill(worker_pid(w), 0), 0);
}

static json_t *tw_load_args(void) { return json_pack("{s:s, s:i}", "path", "/abs/p.py", "seed", 0); }

static void tw_load(worker *w) {
    json_t *res = NULL;
    kerr e = {0};
    cr_assert_eq(worker_call_setup(w, "load", tw_load_args(), 5, &res, &e), 0, "%s", e.msg);
    cr_assert(json_is_array(json_object_get(res, "inputs")));
    json_decref(res);
}

/* `run` on the eager target, kept in the worker; asserts success and that comparing the kept
 * outputs with themselves gives readable statistics of a clean match. */
static void tw_run_ok(worker *w) {
    json_t *args = json_pack("{s:{s:s}, s:s}", "target", "kind", "eager", "keep", "out");
    json_t *res = NULL;
    kerr e = {0};
    cr_assert_eq(worker_call(w, "run", args, 5, &res, &e), 0, "%s", e.msg);
    json_t *outs = json_object_get(res, "outputs");
    cr_assert_eq(json_array_size(outs), 1);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(outs, 0), "dtype")), "float32");
    json_decref(res);
    res = NULL;
    cr_assert_eq(worker_call(w, "compare", json_pack("{s:s, s:s, s:[[f, f]]}", "ref", "out", "got", "out", "tols", 1e-4, 1e-4), 5,
                             &res, &e), 0, "%s", e.msg);
    tensor_cmp c;
    cr_assert_eq(tensor_cmp_from_json(json_array_get(json_object_get(res, "outputs"), 0), 1e-4, 1e-4, &c, &e), 0, "%s", e.msg);
    cr_assert(c.pass && c.numel == 512 && c.max_abs_err == 0);
    json_decref(res);
}

static int tw_ping(worker *w, double timeout, kerr *e) {
    json_t *res = NULL;
    int rc = worker_call(w, "ping", NULL, timeout, &res, e);
    if (!rc) cr_assert(json_is_object(res) && json_object_size(res) == 0);
    json_decref(res);
    return rc;
}

/* ------------------------------------------------------------------ normal operation */

Test(worker, normal_calls) {
    worker *w = tw_start("ok");
    const json_t *info = worker_info(w);
    cr_assert_not_null(info);
    cr_assert_eq(json_integer_value(json_object_get(info, "protocol")), 1);
    cr_assert(json_is_true(json_object_get(info, "cuda")));
    cr_assert_eq(json_integer_value(json_object_get(info, "pid")), worker_pid(w));
    tw_assert_one_live_child(w);

    kerr e = {0};
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);

    /* a request that needs a problem, before load */
    json_t *res = NULL;
    cr_assert_eq(worker_call(w, "time", json_pack("{s:[]}", "variants"), 5, &res, &e),
                 KOPT_E_INTERNAL);
    cr_assert(strstr(e.msg, "needs a loaded problem"), "%s", e.msg);
    cr_assert_str_eq(json_string_value(json_object_get(worker_last_error(w), "code")),
                     "not_loaded");
    cr_assert_null(res);

    tw_load(w);
    cr_assert_null(worker_last_error(w));

    char *outdir = fs_join(g_dir, "compiled");
    cr_assert_eq(worker_call(w, "compile", json_pack("{s:s}", "out_dir", outdir), 5, &res, &e),
                 0, "%s", e.msg);
    json_t *g0 = json_array_get(json_object_get(res, "graphs"), 0);
    cr_assert(fs_exists(json_string_value(json_object_get(g0, "module"))));
    json_decref(res);
    free(outdir);

    tw_run_ok(w);

    json_t *targs = json_pack("{s:[{s:s},{s:s}], s:i}", "variants", "kind", "eager", "kind",
                              "compiled", "rounds", 10);
    cr_assert_eq(worker_call(w, "time", targs, 5, &res, &e), 0, "%s", e.msg);
    json_t *samples = json_object_get(res, "samples");
    cr_assert_eq(json_array_size(samples), 2);
    cr_assert_eq(json_array_size(json_array_get(samples, 0)), 10);
    json_decref(res);

    cr_assert_eq(worker_call(w, "profile", json_pack("{s:s, s:s, s:i}", "module", "/m.py",
                                                    "args", "/m.args.pt", "reps", 4),
                             5, &res, &e), 0, "%s", e.msg);
    cr_assert_eq(json_array_size(json_object_get(res, "times")), 4);
    json_decref(res);

    cr_assert_eq(worker_call(w, "ceilings", NULL, 5, &res, &e), 0, "%s", e.msg);
    cr_assert(json_is_integer(json_object_get(res, "copy_bytes")));
    json_decref(res);

    /* result may be NULL when the caller does not want it */
    cr_assert_eq(worker_call(w, "ping", json_object(), 5, NULL, &e), 0, "%s", e.msg);

    cr_assert_eq(worker_restarts(w), 0);
    cr_assert_eq(tw_count("start"), 1);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, no_cuda_is_reported_not_fatal) {
    worker *w = tw_start("no_cuda");
    cr_assert(json_is_false(json_object_get(worker_info(w), "cuda")));
    kerr e = {0};
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, long_lines_both_ways) {
    worker *w = tw_start("big_on=ping");
    /* a 3 MB request and a 4 MiB response */
    char *pad = kmalloc(3000001);
    memset(pad, 'y', 3000000);
    pad[3000000] = '\0';
    json_t *res = NULL;
    kerr e = {0};
    cr_assert_eq(worker_call(w, "ping", json_pack("{s:s}", "pad", pad), 10, &res, &e), 0, "%s",
                 e.msg);
    cr_assert_eq(json_string_length(json_object_get(res, "blob")), 4u << 20);
    json_decref(res);
    free(pad);
    cr_assert_eq(worker_call(w, "ping", NULL, 10, &res, &e), 0, "%s", e.msg);
    json_decref(res);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, noisy_stderr_does_not_deadlock) {
    worker_opts o = tw_opts("noisy");
    char *log = fs_join(g_dir, "worker.log");
    o.log_path = log;
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), 0, "%s", e.msg);
    double t0 = tw_now();
    tw_load(w);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    tw_run_ok(w);
    cr_assert(tw_now() - t0 < 10);
    struct stat st;
    cr_assert_eq(stat(log, &st), 0);
    cr_assert(st.st_size >= 3 * (1 << 20), "log has %lld bytes", (long long)st.st_size);
    char *tail = worker_stderr_tail(w, 2);
    cr_assert(strstr(tail, "junk from a noisy library"), "%s", tail);
    cr_assert(strlen(tail) <= 700);
    free(tail);
    worker_stop(w);
    free(log);
    tw_assert_no_children();
}

Test(worker, unknown_op_and_bad_args) {
    worker *w = tw_start("ok");
    kerr e = {0};
    json_t *res = NULL;
    cr_assert_eq(worker_call(w, "frobnicate", NULL, 5, &res, &e), KOPT_E_INTERNAL);
    cr_assert(strstr(e.msg, "frobnicate"), "%s", e.msg);
    cr_assert_str_eq(json_string_value(json_object_get(worker_last_error(w), "code")),
                     "bad_request");
    /* arguments that are not an object: rejected, stolen (ASan checks the leak) */
    cr_assert_eq(worker_call(w, "ping", json_pack("[i]", 1), 5, &res, &e), KOPT_E_INTERNAL);
    cr_assert_eq(worker_restarts(w), 0);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    worker_stop(w);
    worker_stop(NULL);
    tw_assert_no_children();
}

/* ------------------------------------------------------------------ error codes */

Test(worker, error_codes_map_to_exit_codes) {
    static const struct { const char *code; int kopt; } table[] = {
        {"file_not_found", 3}, {"syntax_error", 4}, {"import_error", 4}, {"no_model", 4},
        {"no_get_inputs", 4}, {"no_get_init_inputs", 4}, {"bad_inputs", 4},
        {"init_raises", 5}, {"model_raises", 5}, {"no_cuda", 6}, {"not_loaded", 1},
        {"compile_failed", 15}, {"module_failed", 7}, {"cuda_error", 7},
        {"out_of_memory", 7}, {"bad_request", 1}, {"internal", 1},
    };
    for (size_t i = 0; i < sizeof table / sizeof *table; i++)
        cr_assert_eq(worker_code_to_kopt(table[i].code), table[i].kopt, "%s", table[i].code);
    cr_assert_eq(worker_code_to_kopt("something_new"), KOPT_E_INTERNAL);
    cr_assert_eq(worker_code_to_kopt(NULL), KOPT_E_INTERNAL);

    /* end to end through the fake worker, for every code */
    for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
        char mode[64];
        snprintf(mode, sizeof mode, "error=%s", table[i].code);
        worker *w = tw_start(mode);
        kerr e = {0};
        json_t *res = NULL;
        int rc = worker_call_setup(w, "load", tw_load_args(), 5, &res, &e);
        cr_assert_eq(rc, table[i].kopt, "%s -> %d", table[i].code, rc);
        cr_assert_eq(e.code, table[i].kopt);
        char want[128];
        snprintf(want, sizeof want, "fake %s for /abs/p.py", table[i].code);
        cr_assert_str_eq(e.msg, want);
        const json_t *err = worker_last_error(w);
        cr_assert_str_eq(json_string_value(json_object_get(err, "code")), table[i].code);
        cr_assert(strstr(json_string_value(json_object_get(err, "detail")), "Traceback"));
        cr_assert_null(res);
        cr_assert_eq(worker_restarts(w), 0);   /* non-fatal: the worker stays up */
        cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
        worker_stop(w);
    }
    tw_assert_no_children();
}

/* ------------------------------------------------------------------ failures */

Test(worker, timeout_kills_restarts_and_replays) {
    worker *w = tw_start("hang_on=time");
    tw_load(w);
    int pid0 = worker_pid(w);
    kerr e = {0};
    json_t *res = NULL;
    double t0 = tw_now();
    int rc = worker_call(w, "time", json_pack("{s:[{s:s}]}", "variants", "kind", "eager"), 0.5,
                         &res, &e);
    double dt = tw_now() - t0;
    cr_assert_eq(rc, KOPT_E_WORKER);
    cr_assert_null(res);
    cr_assert(dt >= 0.45 && dt < 2.5, "took %.2f s", dt);
    cr_assert(strstr(e.msg, "did not answer 'time' within 0.5 s"), "%s", e.msg);
    cr_assert(strstr(e.msg, "the worker was restarted"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_neq(worker_pid(w), pid0);
    cr_assert_eq(kill(pid0, 0), -1, "the hung worker is still alive");
    tw_assert_one_live_child(w);
    cr_assert_eq(tw_count("start"), 2);
    cr_assert_eq(tw_count("load"), 2);    /* the load was replayed */
    tw_run_ok(w);                          /* works only if the problem is loaded */
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, failed_setup_is_not_replayed) {
    worker *w = tw_start("hang_on=load");
    kerr e = {0};
    json_t *res = NULL;
    cr_assert_eq(worker_call_setup(w, "load", tw_load_args(), 0.3, &res, &e), KOPT_E_WORKER);
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_eq(tw_count("start"), 2);
    cr_assert_eq(tw_count("load"), 1);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, crash_names_the_signal) {
    worker *w = tw_start("crash_on=run");
    tw_load(w);
    char *prefix = fs_join(g_dir, "out");
    json_t *args = json_pack("{s:{s:s}, s:s}", "target", "kind", "eager", "out_prefix", prefix);
    kerr e = {0};
    json_t *res = NULL;
    cr_assert_eq(worker_call(w, "run", args, 5, &res, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "worker killed by SIGSEGV while handling 'run'"), "%s", e.msg);
    cr_assert(strstr(e.msg, "about to crash on run"), "stderr tail missing: %s", e.msg);
    cr_assert(strstr(e.msg, "restarted"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_eq(tw_count("load"), 2);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    tw_assert_one_live_child(w);
    worker_stop(w);
    free(prefix);
    tw_assert_no_children();
}

Test(worker, exit_reports_status) {
    worker *w = tw_start("exit_on=ping");
    kerr e = {0};
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "worker exited with status 3 while handling 'ping'"), "%s", e.msg);
    cr_assert(strstr(e.msg, "exiting on ping"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, killed_between_calls_does_not_kill_kopt) {
    /* the worker dies while idle: the next request hits a closed pipe (SIGPIPE ignored) */
    worker *w = tw_start("ok");
    tw_load(w);
    int pid0 = worker_pid(w);
    cr_assert_eq(kill(pid0, SIGKILL), 0);
    usleep(100 * 1000);
    kerr e = {0};
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "SIGKILL"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    tw_run_ok(w);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, garbage_line) {
    worker *w = tw_start("garbage_on=ping");
    tw_load(w);
    kerr e = {0};
    double t0 = tw_now();
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(tw_now() - t0 < 2.5);
    cr_assert(strstr(e.msg, "not a JSON object") && strstr(e.msg, "this is not json {"), "%s",
              e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_eq(tw_count("load"), 2);
    tw_run_ok(w);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, wrong_id) {
    worker *w = tw_start("wrong_id_on=ping");
    kerr e = {0};
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "answered id") && strstr(e.msg, "'ping'"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    json_t *res = NULL;
    cr_assert_eq(worker_call(w, "ceilings", NULL, 5, &res, &e), 0, "%s", e.msg);
    json_decref(res);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, fatal_error_restarts) {
    worker *w = tw_start("fatal_on=run");
    tw_load(w);
    int pid0 = worker_pid(w);
    char *prefix = fs_join(g_dir, "out");
    json_t *args = json_pack("{s:{s:s}, s:s}", "target", "kind", "eager", "out_prefix", prefix);
    kerr e = {0};
    json_t *res = NULL;
    cr_assert_eq(worker_call(w, "run", args, 5, &res, &e), KOPT_E_WORKER);
    cr_assert_str_eq(e.msg, "CUDA error: an illegal memory access was encountered");
    const json_t *err = worker_last_error(w);
    cr_assert_str_eq(json_string_value(json_object_get(err, "code")), "cuda_error");
    cr_assert(json_is_true(json_object_get(err, "fatal")));
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_neq(worker_pid(w), pid0);
    cr_assert_eq(tw_count("start"), 2);
    cr_assert_eq(tw_count("load"), 2);
    tw_assert_one_live_child(w);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    worker_stop(w);
    free(prefix);
    tw_assert_no_children();
}

Test(worker, replay_failure_reported_by_next_call) {
    worker *w = tw_start("crash_on=ping,load_fails_after_restart");
    tw_load(w);
    kerr e = {0};
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "SIGSEGV"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_eq(tw_count("load"), 2);
    /* the next call reports the failed replay, without being sent */
    json_t *res = NULL;
    cr_assert_eq(worker_call(w, "ceilings", NULL, 5, &res, &e), KOPT_E_NOFILE);
    cr_assert(strstr(e.msg, "replaying 'load' after a worker restart") &&
              strstr(e.msg, "vanished"), "%s", e.msg);
    cr_assert_null(res);
    /* then calls reach the worker again, which has no problem loaded */
    char *prefix = fs_join(g_dir, "out");
    json_t *args = json_pack("{s:{s:s}, s:s}", "target", "kind", "eager", "out_prefix", prefix);
    cr_assert_eq(worker_call(w, "run", args, 5, &res, &e), KOPT_E_INTERNAL);
    cr_assert(strstr(e.msg, "needs a loaded problem"), "%s", e.msg);
    free(prefix);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, max_restarts_exhausted) {
    worker_opts o = tw_opts("crash_on=ping");
    o.max_restarts = 1;
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), 0, "%s", e.msg);
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "the worker was restarted"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "SIGSEGV") && strstr(e.msg, "not restarted: max_restarts (1)"),
              "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_eq(worker_pid(w), -1);
    cr_assert_null(worker_info(w));
    tw_assert_no_children();            /* the dead worker was reaped at once */
    double t0 = tw_now();
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(tw_now() - t0 < 0.1);
    cr_assert(strstr(e.msg, "not running"), "%s", e.msg);
    cr_assert_eq(tw_count("start"), 2);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, negative_max_restarts_never_restarts) {
    worker_opts o = tw_opts("exit_on=ping");
    o.max_restarts = -1;
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), 0, "%s", e.msg);
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "max_restarts (0)"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 0);
    cr_assert_eq(tw_count("start"), 1);
    worker_stop(w);
    tw_assert_no_children();
}

Test(worker, restart_that_fails_is_reported) {
    /* every restart dies before ready: both allowed restarts are used, the failing call says
     * so, the next call reports why, and the calls after that fail at once */
    worker_opts o = tw_opts("crash_on=ping,exit_at_restart");
    o.max_restarts = 2;
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), 0, "%s", e.msg);
    tw_load(w);
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "SIGSEGV") && strstr(e.msg, "restarting the worker failed"), "%s",
              e.msg);
    cr_assert_eq(worker_restarts(w), 2);
    cr_assert_eq(tw_count("start"), 3);
    cr_assert_eq(worker_pid(w), -1);
    tw_assert_no_children();
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_PYTHON);
    cr_assert(strstr(e.msg, "could not be restarted (2 restarts used)") &&
              strstr(e.msg, "exited with status 1 before it was ready"), "%s", e.msg);
    cr_assert_eq(tw_ping(w, 5, &e), KOPT_E_WORKER);
    cr_assert(strstr(e.msg, "not running"), "%s", e.msg);
    cr_assert_eq(tw_count("start"), 3);
    worker_stop(w);
    tw_assert_no_children();
}

/* ------------------------------------------------------------------ start-up failures */

Test(worker, no_ready_times_out) {
    worker_opts o = tw_opts("no_ready");
    o.ready_timeout_s = 0.5;
    worker *w = (worker *)0x1;
    kerr e = {0};
    double t0 = tw_now();
    cr_assert_eq(worker_start(&o, &w, &e), KOPT_E_WORKER);
    double dt = tw_now() - t0;
    cr_assert(dt >= 0.45 && dt < 2.0, "took %.2f s", dt);
    cr_assert_null(w);
    cr_assert(strstr(e.msg, "no ready event within 0.5 s"), "%s", e.msg);
    tw_assert_no_children();
}

Test(worker, exit_before_ready_is_a_python_problem) {
    worker_opts o = tw_opts("exit_at_start");
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), KOPT_E_PYTHON);
    cr_assert(strstr(e.msg, "exited with status 1 before it was ready"), "%s", e.msg);
    cr_assert(strstr(e.msg, "ImportError: fake worker cannot start"), "%s", e.msg);
    cr_assert(strstr(e.msg, "KOPT_PYTHON"), "%s", e.msg);
    cr_assert_null(w);
    tw_assert_no_children();
}

Test(worker, missing_python) {
    worker_opts o = tw_opts("ok");
    o.python = "/nonexistent/python3";
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), KOPT_E_PYTHON);
    cr_assert(strstr(e.msg, "/nonexistent/python3") && strstr(e.msg, "KOPT_PYTHON") &&
              strstr(e.msg, "--python"), "%s", e.msg);
    cr_assert_null(w);
    tw_assert_no_children();

    /* through $KOPT_PYTHON too */
    o.python = NULL;
    setenv("KOPT_PYTHON", "no-such-python-kopt", 1);
    cr_assert_eq(worker_start(&o, &w, &e), KOPT_E_PYTHON);
    cr_assert(strstr(e.msg, "no-such-python-kopt"), "%s", e.msg);
    unsetenv("KOPT_PYTHON");
    tw_assert_no_children();
}

Test(worker, missing_script) {
    worker_opts o = tw_opts("ok");
    char *p = fs_join(g_dir, "nope.py");
    o.script = p;
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), KOPT_E_INTERNAL);
    cr_assert(strstr(e.msg, "nope.py") && strstr(e.msg, "KOPT_ROOT"), "%s", e.msg);
    cr_assert_null(w);
    free(p);
    tw_assert_no_children();
}

/* ------------------------------------------------------------------ resource limits
 * Driven by tests/fixtures/audit/flood_worker.py: a worker that floods stdout or stderr. */

/* Start the flood worker (log_path may be NULL). */
static worker *tw_start_flood(const char *log_path) {
    char *root = fs_kopt_root();
    char *script = fs_join(root, "tests/fixtures/audit/flood_worker.py");
    free(root);
    cr_assert(fs_exists(script), "%s missing (set KOPT_ROOT)", script);
    worker_opts o = {0};
    o.script = script;
    o.log_path = log_path;
    o.ready_timeout_s = 10;
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), 0, "%s", e.msg);
    free(script);
    return w;
}

/* A line over the cap (the default, 64 MiB) ends the call at once, as garbage does: the worker
 * is killed and restarted, instead of kopt buffering the line until it runs out of memory. */
Test(worker, line_longer_than_the_cap_is_a_protocol_violation) {
    unsetenv("KOPT_MAX_LINE_BYTES");
    worker *w = tw_start_flood(NULL);
    int pid0 = worker_pid(w);
    kerr e = {0};
    json_t *res = NULL;
    double t0 = tw_now();
    /* 80 MiB without a newline, then the worker hangs: only the cap ends this before 20 s */
    cr_assert_eq(worker_call(w, "flood_line", json_pack("{s:I}", "bytes", (json_int_t)80 << 20),
                             20, &res, &e), KOPT_E_WORKER, "%s", e.msg);
    cr_assert(tw_now() - t0 < 10, "took %.1f s: %s", tw_now() - t0, e.msg);
    cr_assert_null(res);
    cr_assert(strstr(e.msg, "the worker sent a line longer than 64 MiB") &&
              strstr(e.msg, "'flood_line'") && strstr(e.msg, "the worker was restarted"),
              "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 1);
    cr_assert_neq(worker_pid(w), pid0);
    tw_assert_one_live_child(w);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    worker_stop(w);
    tw_assert_no_children();
}

/* KOPT_MAX_LINE_BYTES (tests only) lowers the cap: a complete line over it fails as well, a
 * line under it still passes. */
Test(worker, line_cap_from_the_environment) {
    setenv("KOPT_MAX_LINE_BYTES", "1048576", 1);
    worker *w = tw_start_flood(NULL);
    unsetenv("KOPT_MAX_LINE_BYTES");   /* read when the worker started */
    kerr e = {0};
    json_t *res = NULL;
    cr_assert_eq(worker_call(w, "blob", json_pack("{s:i}", "bytes", 900 * 1024), 10, &res, &e),
                 0, "%s", e.msg);
    cr_assert_eq(json_string_length(json_object_get(res, "blob")), 900u * 1024);
    json_decref(res);
    res = NULL;
    /* 2 MiB and a newline: complete, but too long */
    cr_assert_eq(worker_call(w, "flood_line", json_pack("{s:i, s:b, s:b}", "bytes", 2 << 20,
                                                        "newline", 1, "hang", 0),
                             10, &res, &e), KOPT_E_WORKER, "%s", e.msg);
    cr_assert(strstr(e.msg, "the worker sent a line longer than 1 MiB") &&
              strstr(e.msg, "the worker was restarted"), "%s", e.msg);
    /* a valid response over the cap is refused too */
    cr_assert_eq(worker_call(w, "blob", json_pack("{s:i}", "bytes", 3 << 20), 10, &res, &e),
                 KOPT_E_WORKER, "%s", e.msg);
    cr_assert(strstr(e.msg, "longer than 1 MiB"), "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 2);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    worker_stop(w);
    tw_assert_no_children();
}

static char *tw_slurp(const char *path, size_t *len) {
    char *text = NULL;
    kerr e = {0};
    cr_assert_eq(fs_read(path, &text, len, &e), 0, "%s", e.msg);
    return text;
}

static size_t tw_occurrences(const char *hay, size_t n, const char *needle) {
    size_t k = 0, m = strlen(needle);
    for (const char *p = hay; (p = memmem(p, n - (size_t)(p - hay), needle, m)); p += m) k++;
    return k;
}

/* The worker log stops at its cap (KOPT_MAX_LOG_BYTES here) with one marker line; the worker
 * keeps running, its stderr is still drained and its tail still reaches error messages. */
Test(worker, log_is_capped_with_one_marker_line) {
    char *log = fs_join(g_dir, "worker.log");
    FILE *f = fopen(log, "w");
    cr_assert_not_null(f);
    fputs("earlier output\n", f);   /* the cap bounds the file, earlier runs included */
    fclose(f);
    setenv("KOPT_MAX_LOG_BYTES", "1048576", 1);
    worker *w = tw_start_flood(log);
    unsetenv("KOPT_MAX_LOG_BYTES");
    kerr e = {0};
    json_t *res = NULL;
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(worker_call(w, "flood_stderr", json_pack("{s:i}", "bytes", 5 << 20), 20,
                                 &res, &e), 0, "%s", e.msg);
        json_decref(res);
        res = NULL;
        char *tail = worker_stderr_tail(w, 1);
        cr_assert(strstr(tail, "flood_worker: last words"), "%s", tail);
        free(tail);
    }
    const char *marker = "[kopt: worker log truncated at 1048576 bytes; further output dropped]\n";
    size_t len = 0;
    char *text = tw_slurp(log, &len);
    cr_assert_leq(len, 1048576 + 1 + strlen(marker), "log has %zu bytes", len);
    cr_assert_geq(len, 1048576 + strlen(marker), "log has %zu bytes", len);
    cr_assert(!strncmp(text, "earlier output\n", 15));
    cr_assert(!strcmp(text + len - strlen(marker), marker), "log ends with <<%s>>",
              text + (len > 200 ? len - 200 : 0));
    cr_assert_eq(tw_occurrences(text, len, "[kopt: worker log truncated"), 1);
    free(text);
    /* the worker was never blocked: it still answers */
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    cr_assert_eq(worker_restarts(w), 0);
    worker_stop(w);
    tw_assert_no_children();
    free(log);
}

/* The default cap is 64 MiB. */
Test(worker, log_default_cap) {
    unsetenv("KOPT_MAX_LOG_BYTES");
    char *log = fs_join(g_dir, "worker.log");
    worker *w = tw_start_flood(log);
    kerr e = {0};
    json_t *res = NULL;
    cr_assert_eq(worker_call(w, "flood_stderr", json_pack("{s:I}", "bytes", (json_int_t)70 << 20),
                             30, &res, &e), 0, "%s", e.msg);
    json_decref(res);
    worker_stop(w);
    const char *marker = "[kopt: worker log truncated at 67108864 bytes; further output dropped]\n";
    struct stat st;
    cr_assert_eq(stat(log, &st), 0);
    cr_assert_leq((size_t)st.st_size, ((size_t)64 << 20) + 1 + strlen(marker), "log has %lld bytes",
                  (long long)st.st_size);
    FILE *f = fopen(log, "r");
    cr_assert_not_null(f);
    char end[256] = {0};
    cr_assert_eq(fseek(f, -(long)strlen(marker), SEEK_END), 0);
    cr_assert_eq(fread(end, 1, strlen(marker), f), strlen(marker));
    fclose(f);
    cr_assert_str_eq(end, marker);
    free(log);
    tw_assert_no_children();
}

/* The worker inherits an allowlist of kopt's environment: what Python, torch, Triton and CUDA
 * read, never an LLM key (candidate code runs there). */
Test(worker, environment_allowlist) {
    cr_assert(worker_env_allowed("PATH=/usr/bin", NULL));
    cr_assert(worker_env_allowed("CUDA_VISIBLE_DEVICES=1", NULL));
    cr_assert(worker_env_allowed("TORCHINDUCTOR_CACHE_DIR=/x", NULL));
    cr_assert(worker_env_allowed("TRITON_CACHE_DIR=/x", NULL));
    cr_assert(worker_env_allowed("LC_ALL=C", NULL));
    cr_assert(worker_env_allowed("KOPT_PYTHON=python3", NULL));
    cr_assert_not(worker_env_allowed("OPENAI_API_KEY=sk-x", NULL));
    cr_assert_not(worker_env_allowed("ANTHROPIC_API_KEY=x", NULL));
    cr_assert_not(worker_env_allowed("https_proxy=http://p", NULL));
    cr_assert_not(worker_env_allowed("PATHOLOGICAL=1", NULL), "exact names are not prefixes");
    cr_assert_not(worker_env_allowed("LC=1", NULL), "a prefix needs its whole text");
    cr_assert_not(worker_env_allowed("=x", NULL));
    cr_assert_not(worker_env_allowed("NOEQUALS", NULL));
    cr_assert(worker_env_allowed("MY_MODEL_DIR=/d", "OTHER,MY_MODEL_DIR"), "named in KOPT_WORKER_ENV");
    cr_assert_not(worker_env_allowed("MY_MODEL=/d", "OTHER,MY_MODEL_DIR"), "whole names only");
    cr_assert_not(worker_env_allowed("MY_MODEL_DIR=/d", ""));
}

Test(worker, environment_reaches_the_worker_filtered) {
    setenv("OPENAI_API_KEY", "sk-never-in-the-worker", 1);
    setenv("KOPT_TEST_PASSED_NAME_X", "1", 1);
    setenv("MY_SETTING_FOR_THE_MODEL", "1", 1);
    setenv("KOPT_WORKER_ENV", "MY_SETTING_FOR_THE_MODEL", 1);
    setenv("UNLISTED_SETTING", "1", 1);
    worker *w = tw_start("ok");
    json_t *res = NULL;
    kerr e = {0};
    cr_assert_eq(worker_call(w, "env", json_object(), 5, &res, &e), 0, "%s", e.msg);
    char *names = json_dumps(json_object_get(res, "names"), JSON_COMPACT);
    cr_assert(strstr(names, "\"PATH\""), "%s", names);
    cr_assert(strstr(names, "\"KOPT_TEST_PASSED_NAME_X\""), "%s", names);
    cr_assert(strstr(names, "\"MY_SETTING_FOR_THE_MODEL\""), "%s", names);
    cr_assert(strstr(names, "\"FAKE_WORKER_MODE\""), "the fake's settings (FAKE_*) pass: %s", names);
    cr_assert_null(strstr(names, "OPENAI_API_KEY"), "%s", names);
    cr_assert_null(strstr(names, "UNLISTED_SETTING"), "%s", names);
    free(names);
    json_decref(res);
    worker_stop(w);
    unsetenv("OPENAI_API_KEY");
    unsetenv("KOPT_TEST_PASSED_NAME_X");
    unsetenv("MY_SETTING_FOR_THE_MODEL");
    unsetenv("KOPT_WORKER_ENV");
    unsetenv("UNLISTED_SETTING");
}

/* ------------------------------------------------------------------ bytecode directory */

/* pycache_dir's rules (pycache.h): off, the user's own prefix, an explicit or the default
 * directory (created), and a directory others can write refused. */
Test(worker, pycache_dir_rules) {
    unsetenv("PYTHONPYCACHEPREFIX");
    char why[256];
    setenv("KOPT_PYCACHE", "0", 1);
    cr_assert_null(pycache_dir(why, sizeof why));
    cr_assert_str_eq(why, "", "turned off is no refusal");
    setenv("KOPT_PYCACHE", "", 1);
    cr_assert_null(pycache_dir(why, sizeof why));
    setenv("KOPT_PYCACHE", "relative/dir", 1);
    cr_assert_null(pycache_dir(why, sizeof why));
    cr_assert(strstr(why, "not an absolute path"), "%s", why);

    char *mine = fs_join(g_dir, "a/b/pyc");
    setenv("KOPT_PYCACHE", mine, 1);
    setenv("PYTHONPYCACHEPREFIX", "/elsewhere", 1);
    cr_assert_null(pycache_dir(why, sizeof why), "the user's own prefix stands");
    unsetenv("PYTHONPYCACHEPREFIX");
    char *d = pycache_dir(why, sizeof why);
    cr_assert_not_null(d, "%s", why);
    cr_assert_str_eq(d, mine);
    cr_assert(fs_is_dir(mine), "created");
    free(d);
    cr_assert_eq(chmod(mine, 0777), 0);
    cr_assert_null(pycache_dir(why, sizeof why), "others could plant bytecode there");
    cr_assert(strstr(why, "writable by other users"), "%s", why);
    char *file = fs_join(g_dir, "a/file");
    kerr e = {0};
    cr_assert_eq(fs_write(file, "x", 1, &e), 0);
    setenv("KOPT_PYCACHE", file, 1);
    cr_assert_null(pycache_dir(why, sizeof why));
    cr_assert(why[0], "a file is refused with a reason");

    unsetenv("KOPT_PYCACHE");
    setenv("HOME", g_dir, 1);
    d = pycache_dir(why, sizeof why);
    char *dflt = fs_join(g_dir, ".cache/kopt/pycache");
    cr_assert_not_null(d, "%s", why);
    cr_assert_str_eq(d, dflt);
    free(d);
    free(dflt);
    free(file);
    free(mine);
}

/* The worker's Python writes bytecode under kopt's directory even where kopt's environment
 * forbids writing it (beside the sources), and keeps that environment as is when turned off. */
/* Starts a fake worker with env (the whole opts.env) and reads its Python's bytecode setting:
 * *prefix (malloc'd, NULL when none) and whether it may not write bytecode. */
static void tw_bytecode(const char *const *env, char **prefix, int *dont_write) {
    worker_opts o = {.script = g_script, .env = env, .ready_timeout_s = 10};
    worker *w = NULL;
    json_t *res = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), 0, "%s", e.msg);
    cr_assert_eq(worker_call(w, "env", json_object(), 5, &res, &e), 0, "%s", e.msg);
    const char *p = json_string_value(json_object_get(res, "pycache_prefix"));
    *prefix = p ? kstrdup(p) : NULL;
    *dont_write = json_is_true(json_object_get(res, "dont_write_bytecode"));
    json_decref(res);
    worker_stop(w);
}

Test(worker, pycache_reaches_the_worker) {
    static const char *const plain[] = {"FAKE_WORKER_MODE=ok", NULL};
    static const char *const caller_says[] = {"FAKE_WORKER_MODE=ok", "PYTHONDONTWRITEBYTECODE=1", NULL};
    unsetenv("PYTHONPYCACHEPREFIX");
    setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    char *mine = fs_join(g_dir, "pyc"), *prefix = NULL;
    int dont = -1;
    setenv("KOPT_PYCACHE", mine, 1);
    tw_bytecode(plain, &prefix, &dont);
    cr_assert_not_null(prefix);
    cr_assert_str_eq(prefix, mine);
    cr_assert_not(dont, "bytecode is written (under the prefix)");
    free(prefix);

    setenv("KOPT_PYCACHE", "0", 1);
    tw_bytecode(plain, &prefix, &dont);
    cr_assert_null(prefix, "%s", prefix);
    cr_assert(dont, "KOPT_PYCACHE=0 keeps PYTHONDONTWRITEBYTECODE");

    /* the caller's own environment entries (opts.env) win over the bytecode directory */
    setenv("KOPT_PYCACHE", mine, 1);
    tw_bytecode(caller_says, &prefix, &dont);
    cr_assert_not_null(prefix);
    cr_assert_str_eq(prefix, mine, "bytecode is read from there");
    cr_assert(dont, "and not written: opts.env said so");
    free(prefix);
    unsetenv("PYTHONDONTWRITEBYTECODE");
    free(mine);
}

/* ------------------------------------------------------------------ time per op */

/* The row of `op` in the worker's per-op time table, or NULL. */
static const worker_op_time *tw_op_row(const worker *w, const char *op) {
    const worker_op_time *v = NULL;
    size_t n = worker_op_times(w, &v);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, op)) return &v[i];
    return NULL;
}

Test(worker, op_times_add_up_per_op) {
    /* every compile sleeps 0.25 s in the fake: two compiles are at least 0.5 s in two calls */
    static const char *const env[] = {"FAKE_WORKER_MODE=ok", "FAKE_COMPILE_SLEEP=0.25", NULL};
    worker_opts o = {.script = g_script, .env = env, .ready_timeout_s = 10};
    worker *w = NULL;
    kerr e = {0};
    cr_assert_eq(worker_start(&o, &w, &e), 0, "%s", e.msg);
    const worker_op_time *v = (const worker_op_time *)1;
    cr_assert_eq(worker_op_times(w, &v), 0, "the ready wait is not an op's call");
    cr_assert_null(v);
    tw_load(w);
    char *outdir = fs_join(g_dir, "compiled");
    for (int i = 0; i < 2; i++)
        cr_assert_eq(worker_call(w, "compile", json_pack("{s:s}", "out_dir", outdir), 5, NULL, &e), 0, "%s", e.msg);
    free(outdir);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    size_t n = worker_op_times(w, &v);
    cr_assert_eq(n, 3);
    cr_assert_str_eq(v[0].name, "load");   /* in the order first called */
    cr_assert_str_eq(v[1].name, "compile");
    cr_assert_str_eq(v[2].name, "ping");
    cr_assert_eq(v[0].calls, 1);
    cr_assert_eq(v[1].calls, 2);
    cr_assert_eq(v[2].calls, 1);
    cr_assert(v[1].seconds >= 0.5 && v[1].seconds < 5, "compile: %.3f s", v[1].seconds);
    cr_assert(v[0].seconds > 0 && v[0].seconds < 0.25, "load: %.3f s", v[0].seconds);
    cr_assert(v[2].seconds > 0 && v[2].seconds < 0.25, "ping: %.3f s", v[2].seconds);
    worker_stop(w);
    cr_assert_eq(worker_op_times(NULL, &v), 0);
    cr_assert_null(v);
}

Test(worker, op_times_count_failed_calls) {
    worker *w = tw_start("hang_on=time");
    tw_load(w);
    kerr e = {0};
    /* a timeout: the call's time runs to the kill and the restart (the replayed load included) */
    double t0 = tw_now();
    cr_assert_eq(worker_call(w, "time", json_pack("{s:[{s:s}]}", "variants", "kind", "eager"), 0.4, NULL, &e),
                 KOPT_E_WORKER);
    double dt = tw_now() - t0;
    const worker_op_time *t = tw_op_row(w, "time");
    cr_assert_not_null(t);
    cr_assert_eq(t->calls, 1);
    cr_assert(t->seconds >= 0.4 && t->seconds <= dt, "time: %.3f s of %.3f s", t->seconds, dt);
    cr_assert_eq(tw_op_row(w, "load")->calls, 1, "the replay is the failing call's time, not a load");
    /* an ok:false answer */
    cr_assert_eq(worker_call(w, "frobnicate", NULL, 5, NULL, &e), KOPT_E_INTERNAL);
    cr_assert_eq(tw_op_row(w, "frobnicate")->calls, 1);
    /* arguments that are not an object: refused before being sent, counted */
    cr_assert_eq(worker_call(w, "ping", json_array(), 5, NULL, &e), KOPT_E_INTERNAL);
    cr_assert_eq(tw_op_row(w, "ping")->calls, 1);
    cr_assert_eq(worker_call(w, "", NULL, 5, NULL, &e), KOPT_E_INTERNAL);
    const worker_op_time *v = NULL;
    cr_assert_eq(worker_op_times(w, &v), 4, "an empty op has no row");
    worker_stop(w);
}

Test(worker, op_times_fold_into_other_past_the_cap) {
    worker *w = tw_start("ok");
    kerr e = {0};
    char op[64];
    for (int i = 0; i < WORKER_OP_TIMES_MAX + 6; i++) {   /* unknown ops: quick ok:false answers */
        snprintf(op, sizeof op, "op%02d", i);
        cr_assert_eq(worker_call(w, op, NULL, 5, NULL, &e), KOPT_E_INTERNAL, "%s", op);
    }
    const worker_op_time *v = NULL;
    size_t n = worker_op_times(w, &v);
    cr_assert_eq(n, WORKER_OP_TIMES_MAX);
    for (int i = 0; i < WORKER_OP_TIMES_MAX - 1; i++) {
        snprintf(op, sizeof op, "op%02d", i);
        cr_assert_str_eq(v[i].name, op);
        cr_assert_eq(v[i].calls, 1);
    }
    const worker_op_time *other = &v[WORKER_OP_TIMES_MAX - 1];
    cr_assert_str_eq(other->name, "other");
    cr_assert_eq(other->calls, 7, "%lld", other->calls);   /* op63 .. op69 */
    cr_assert(other->seconds > 0);
    /* a name with a row keeps it; a new one and one too long for a row go to "other" */
    cr_assert_eq(worker_call(w, "op05", NULL, 5, NULL, &e), KOPT_E_INTERNAL);
    cr_assert_eq(worker_call(w, "newname", NULL, 5, NULL, &e), KOPT_E_INTERNAL);
    cr_assert_eq(tw_ping(w, 5, &e), 0, "%s", e.msg);
    n = worker_op_times(w, &v);
    cr_assert_eq(n, WORKER_OP_TIMES_MAX);
    cr_assert_eq(tw_op_row(w, "op05")->calls, 2);
    cr_assert_null(tw_op_row(w, "newname"));
    cr_assert_null(tw_op_row(w, "ping"));
    cr_assert_eq(tw_op_row(w, "other")->calls, 9);
    worker_stop(w);
}

Test(worker, op_times_long_name_is_other) {
    worker *w = tw_start("ok");
    kerr e = {0};
    char op[WORKER_OP_NAME_MAX + 1];
    memset(op, 'x', sizeof op - 1);
    op[sizeof op - 1] = '\0';   /* WORKER_OP_NAME_MAX bytes: one too many for a row */
    cr_assert_eq(worker_call(w, op, NULL, 5, NULL, &e), KOPT_E_INTERNAL);
    op[WORKER_OP_NAME_MAX - 1] = '\0';   /* the longest name that has a row of its own */
    cr_assert_eq(worker_call(w, op, NULL, 5, NULL, &e), KOPT_E_INTERNAL);
    const worker_op_time *v = NULL;
    cr_assert_eq(worker_op_times(w, &v), 2);
    cr_assert_str_eq(v[0].name, "other");
    cr_assert_str_eq(v[1].name, op);
    cr_assert_eq(v[0].calls, 1);
    cr_assert_eq(v[1].calls, 1);
    worker_stop(w);
}
