/* test_ncu.c — profile/ncu: the CSV parser on recorded output shapes, and running the
 * profiler (tests/fake_ncu.sh) without a shell: hostile paths reach it as plain arguments. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profile/ncu.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

static const char CSV[] =
    "==PROF== Connected to process 77\n"
    "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\",\"Grid Size\","
    "\"Device\",\"CC\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\",\"gpu__time_duration.sum\","
    "\"launch__registers_per_thread\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
    "\"sm__warps_active.avg.pct_of_peak_sustained_active\"\n"
    "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"%\",\"nsecond\",\"register/thread\",\"%\",\"%\"\n"
    "\"0\",\"77\",\"python3\",\"h\",\"triton_red_fused_x_0\",\"1\",\"7\",\"(512, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\","
    "\"40.5\",\"150000\",\"32\",\"10.0\",\"50.0\"\n"
    "\"1\",\"77\",\"python3\",\"h\",\"triton_red_fused_x_0\",\"1\",\"7\",\"(512, 1, 1)\",\"(4096, 1, 1)\",\"0\",\"9.0\","
    "\"82.25\",\"133000\",\"40\",\"12.5\",\"61.0\"\n"
    "\"2\",\"77\",\"python3\",\"h\",\"triton_poi_fused_y_1(float*, float*, int)\",\"1\",\"7\",\"(128, 1, 1)\",\"(64, 1, 1)\","
    "\"0\",\"9.0\",\"90\",\"9000\",\"16\",\"5\",\"70\"\n";

Test(ncu, parses_raw_csv_keeping_the_last_launch_per_kernel) {
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(ncu_parse_csv(CSV, &out, &e), 0, "%s", e.msg);
    cr_assert_eq(json_object_size(out), 2);
    const json_t *r = json_object_get(out, "triton_red_fused_x_0");
    cr_expect_float_eq(json_number_value(json_object_get(r, "dram_pct")), 82.25, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(r, "registers")), 40, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(r, "occupancy_pct")), 61.0, 1e-9);
    cr_expect_float_eq(json_number_value(json_object_get(r, "time_ns")), 133000, 1e-9);
    /* a demangled signature is cut off the name */
    cr_expect_not_null(json_object_get(out, "triton_poi_fused_y_1"));
    json_decref(out);
}

Test(ncu, output_without_kernels_is_an_error) {
    json_t *out = NULL;
    kerr e = {0};
    cr_expect_neq(ncu_parse_csv("==ERROR== ERR_NVGPUCTRPERM - no permission\n", &out, &e), 0);
    cr_expect_neq(ncu_parse_csv("", &out, &e), 0);
}

/* ---------- running ncu: an argument vector, no shell ---------- */

static char *g_tmp;

static void tn_setup(void) {
    if (!getenv("KOPT_LOG")) log_set_level(LOG_QUIET);
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-ncu", &g_tmp, &e), 0, "%s", e.msg);
    char *root = fs_kopt_root();
    char *fake = fs_join(root, "tests/fake_ncu.sh");
    free(root);
    cr_assert(fs_exists(fake), "%s missing (set KOPT_ROOT)", fake);
    setenv("KOPT_NCU", fake, 1);
    free(fake);
    char *argv_file = fs_join(g_tmp, "argv");
    setenv("FAKE_NCU_ARGV", argv_file, 1);
    free(argv_file);
}
static void tn_teardown(void) {
    unsetenv("KOPT_NCU");
    unsetenv("FAKE_NCU_ARGV");
    unsetenv("FAKE_NCU_SLEEP");
    fs_rmtree(g_tmp);
    free(g_tmp);
}

/* The arguments the fake ncu received (NUL-separated in its argv file); *n of them. */
static char **tn_argv(size_t *n) {
    char *path = fs_join(g_tmp, "argv");
    char *text = NULL;
    size_t len = 0;
    kerr e = {0};
    cr_assert_eq(fs_read(path, &text, &len, &e), 0, "%s", e.msg);
    free(path);
    char **v = calloc(len + 1, sizeof *v);
    *n = 0;
    for (size_t i = 0; i < len; i += strlen(text + i) + 1) v[(*n)++] = strdup(text + i);
    free(text);
    return v;
}

static void tn_free_argv(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}

/* A path fragment that runs `touch <g_tmp>/pwned-<tag>` in every way a shell could be fooled. */
static char *tn_hostile(const char *tag) {
    return kasprintf("%s/o ut'; touch %s/pwned-%s-1; '\"$(touch %s/pwned-%s-2)\"`touch %s/pwned-%s-3`;"
                     " touch %s/pwned-%s-4 #", g_tmp, g_tmp, tag, g_tmp, tag, g_tmp, tag, g_tmp, tag);
}

static void tn_assert_nothing_ran(const char *tag) {
    for (int i = 1; i <= 4; i++) {
        char *p = kasprintf("%s/pwned-%s-%d", g_tmp, tag, i);
        cr_assert(!fs_exists(p), "a shell ran a command from a path: %s exists", p);
        free(p);
    }
}

Test(ncu, hostile_paths_are_arguments_not_commands, .init = tn_setup, .fini = tn_teardown,
     .timeout = 30) {
    char *dir = tn_hostile("mod");
    char *module = kasprintf("%s/graph0.py", dir);
    char *args = kasprintf("%s/graph0.args.pt", dir);
    char *python = tn_hostile("py");
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(ncu_profile(python, module, args, 20, &out, &e), 0, "%s", e.msg);
    tn_assert_nothing_ran("mod");
    tn_assert_nothing_ran("py");
    /* ncu still ran, with exactly these arguments */
    const json_t *r = json_object_get(out, "triton_poi_fused_add_addmm_relu_0");
    cr_assert_not_null(r);
    cr_assert_float_eq(json_number_value(json_object_get(r, "dram_pct")), 88.40, 1e-9);
    json_decref(out);
    char *root = fs_kopt_root();
    char *runner = fs_join(root, "worker/ncu_run.py");
    free(root);
    const char *want[] = {"--clock-control", "none", "--csv", "--page", "raw", "--metrics",
                          NCU_METRICS, "-k", "regex:^triton_", python, runner, module, args};
    size_t n = 0;
    char **got = tn_argv(&n);
    cr_assert_eq(n, sizeof want / sizeof *want, "%zu arguments", n);
    for (size_t i = 0; i < n; i++) cr_assert_str_eq(got[i], want[i], "argument %zu", i);
    tn_free_argv(got, n);
    free(runner);
    free(dir);
    free(module);
    free(args);
    free(python);
}

Test(ncu, available_runs_no_shell, .init = tn_setup, .fini = tn_teardown, .timeout = 30) {
    cr_assert_eq(ncu_available(), 1);
    size_t n = 0;
    char **got = tn_argv(&n);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(got[0], "--version");
    tn_free_argv(got, n);
    /* $KOPT_NCU names one executable; shell syntax in it is not run */
    char *bad = kasprintf("%s; touch %s/pwned-env-1; true", getenv("KOPT_NCU"), g_tmp);
    setenv("KOPT_NCU", bad, 1);
    cr_assert_eq(ncu_available(), 0);
    char *p = kasprintf("%s/pwned-env-1", g_tmp);
    cr_assert(!fs_exists(p), "a shell ran a command from KOPT_NCU");
    free(p);
    free(bad);
    setenv("KOPT_NCU", "/nonexistent/ncu", 1);
    cr_assert_eq(ncu_available(), 0);
}

Test(ncu, profile_failures_are_errors, .init = tn_setup, .fini = tn_teardown, .timeout = 30) {
    json_t *out = NULL;
    kerr e = {0};
    /* a profiler that hangs is killed at the timeout */
    setenv("FAKE_NCU_SLEEP", "30", 1);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(ncu_profile("python3", "/m.py", "/m.args.pt", 1, &out, &e), KOPT_E_WORKER);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    cr_assert_lt(dt, 10.0, "took %.1f s", dt);
    cr_assert_null(out);
    unsetenv("FAKE_NCU_SLEEP");
    /* no ncu at all */
    setenv("KOPT_NCU", "/nonexistent/ncu", 1);
    cr_assert_eq(ncu_profile("python3", "/m.py", "/m.args.pt", 10, &out, &e), KOPT_E_WORKER);
    cr_assert_null(out);
    cr_assert(strstr(e.msg, "ncu"), "%s", e.msg);
}
