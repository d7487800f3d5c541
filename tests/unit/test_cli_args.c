/* test_cli_args.c — cli/args: strict numbers, durations, input files and version matching. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "util/buf.h"
#include "util/fs.h"

/* REFUSED(call): the call returns KOPT_E_USAGE and its message names `flag` and the value. */
#define REFUSED(call, flag, val)                                                                   \
    do {                                                                                           \
        kerr e_ = {0};                                                                             \
        int rc_ = (call);                                                                          \
        cr_assert_eq(rc_, KOPT_E_USAGE, "%s accepted '%s'", flag, val);                           \
        cr_assert(strstr(e_.msg, flag) && strstr(e_.msg, "'" val "'"), "message: %s", e_.msg);    \
    } while (0)

Test(cli_args, whole_numbers) {
    kerr e = {0};
    int v = 7;
    long l = 0;
    cr_assert_eq(cli_parse_int("--rounds", "30", 2, 100, &v, &e), 0);
    cr_assert_eq(v, 30);
    cr_assert_eq(cli_parse_int("--rounds", "2", 2, 100, &v, &e), 0);
    cr_assert_eq(cli_parse_long("--x", "-5", -10, 10, &l, &e), 0);
    cr_assert_eq(l, -5);
    v = 7;
    REFUSED(cli_parse_int("--rounds", "abc", 2, 100, &v, &e_), "--rounds", "abc");
    REFUSED(cli_parse_int("--rounds", "-3", 2, 100, &v, &e_), "--rounds", "-3");
    REFUSED(cli_parse_int("--rounds", "1", 2, 100, &v, &e_), "--rounds", "1");
    REFUSED(cli_parse_int("--rounds", "101", 2, 100, &v, &e_), "--rounds", "101");
    REFUSED(cli_parse_int("--rounds", "12x", 2, 100, &v, &e_), "--rounds", "12x");
    REFUSED(cli_parse_int("--rounds", "1e3", 2, 10000, &v, &e_), "--rounds", "1e3");
    REFUSED(cli_parse_int("--rounds", " 5", 2, 100, &v, &e_), "--rounds", " 5");
    REFUSED(cli_parse_int("--rounds", "+5", 2, 100, &v, &e_), "--rounds", "+5");
    REFUSED(cli_parse_int("--rounds", "", 2, 100, &v, &e_), "--rounds", "");
    REFUSED(cli_parse_long("--n", "99999999999999999999", 0, 100, &l, &e_), "--n", "99999999999999999999");
    cr_assert_eq(v, 7, "a refused value must leave *out untouched");
}

Test(cli_args, real_numbers) {
    kerr e = {0};
    double d = -1;
    cr_assert_eq(cli_parse_double("--min-gain", "0.02", 0, 10, &d, &e), 0);
    cr_assert_float_eq(d, 0.02, 1e-15);
    cr_assert_eq(cli_parse_double("--abs-bound", "5e-3", 0, 1, &d, &e), 0);
    cr_assert_float_eq(d, 5e-3, 1e-15);
    cr_assert_eq(cli_parse_double("--x", ".5", 0, 1, &d, &e), 0);
    REFUSED(cli_parse_double("--min-gain", "foo", 0, 10, &d, &e_), "--min-gain", "foo");
    REFUSED(cli_parse_double("--min-gain", "nan", 0, 10, &d, &e_), "--min-gain", "nan");
    REFUSED(cli_parse_double("--min-gain", "inf", 0, 10, &d, &e_), "--min-gain", "inf");
    REFUSED(cli_parse_double("--min-gain", "-inf", -100, 10, &d, &e_), "--min-gain", "-inf");
    REFUSED(cli_parse_double("--min-gain", "0x10", 0, 100, &d, &e_), "--min-gain", "0x10");
    REFUSED(cli_parse_double("--min-gain", "-0.5", 0, 10, &d, &e_), "--min-gain", "-0.5");
    REFUSED(cli_parse_double("--min-gain", "1e999", 0, 1e300, &d, &e_), "--min-gain", "1e999");
    REFUSED(cli_parse_double("--min-gain", "0.1 ", 0, 10, &d, &e_), "--min-gain", "0.1 ");
}

Test(cli_args, durations) {
    kerr e = {0};
    double s = 0;
    cr_assert_eq(cli_parse_duration("--budget", "90", 1, 1e6, &s, &e), 0);
    cr_assert_float_eq(s, 90, 0);
    cr_assert_eq(cli_parse_duration("--budget", "90s", 1, 1e6, &s, &e), 0);
    cr_assert_float_eq(s, 90, 0);
    cr_assert_eq(cli_parse_duration("--budget", "2m", 1, 1e6, &s, &e), 0);
    cr_assert_float_eq(s, 120, 0);
    cr_assert_eq(cli_parse_duration("--budget", "1.5h", 1, 1e6, &s, &e), 0);
    cr_assert_float_eq(s, 5400, 0);
    REFUSED(cli_parse_duration("--budget", "nan", 1, 1e6, &s, &e_), "--budget", "nan");
    REFUSED(cli_parse_duration("--budget", "inf", 1, 1e6, &s, &e_), "--budget", "inf");
    REFUSED(cli_parse_duration("--budget", "soon", 1, 1e6, &s, &e_), "--budget", "soon");
    REFUSED(cli_parse_duration("--budget", "2x", 1, 1e6, &s, &e_), "--budget", "2x");
    REFUSED(cli_parse_duration("--budget", "2ms", 1, 1e6, &s, &e_), "--budget", "2ms");
    REFUSED(cli_parse_duration("--budget", "0", 1, 1e6, &s, &e_), "--budget", "0");
    REFUSED(cli_parse_duration("--budget", "-2m", 1, 1e6, &s, &e_), "--budget", "-2m");
    REFUSED(cli_parse_duration("--budget", "100h", 1, 1e5, &s, &e_), "--budget", "100h");
    REFUSED(cli_parse_duration("--budget", "m", 1, 1e5, &s, &e_), "--budget", "m");
}

Test(cli_args, input_files) {
    char *dir = NULL;
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-args", &dir, &e), 0);
    char *file = fs_join(dir, "p.py");
    cr_assert_eq(fs_write(file, "x = 1\n", 6, &e), 0);
    cr_assert_eq(cli_input_file("problem file", file, &e), 0);
    kerr d = {0};
    cr_assert_eq(cli_input_file("problem file", dir, &d), KOPT_E_NOFILE);
    cr_assert(strstr(d.msg, "is a directory"), "%s", d.msg);
    char *missing = fs_join(dir, "none.py");
    kerr m = {0};
    cr_assert_eq(cli_input_file("problem file", missing, &m), KOPT_E_NOFILE);
    cr_assert(strstr(m.msg, "does not exist"), "%s", m.msg);
    kerr r = {0};
    cr_assert_eq(fs_read(dir, &(char *){NULL}, NULL, &r), KOPT_E_NOFILE);
    cr_assert(strstr(r.msg, "is a directory"), "%s", r.msg);
    free(missing);
    free(file);
    fs_rmtree(dir);
    free(dir);
}

Test(cli_args, versions) {
    cr_assert(cli_version_matches("2.11.0", "2.11"));
    cr_assert(cli_version_matches("2.11.0+fake", "2.11"));
    cr_assert(cli_version_matches("2.11.1+cu128", "2.11"));
    cr_assert(cli_version_matches("2.11.0a0+git1234", "2.11"));
    cr_assert(cli_version_matches("2.11", "2.11"));
    cr_assert(cli_version_matches("3.6.0", "3.6"));
    cr_assert(!cli_version_matches("2.1.0", "2.11"));
    cr_assert(!cli_version_matches("2.110.0", "2.11"));
    cr_assert(!cli_version_matches("2.10.0", "2.11"));
    cr_assert(!cli_version_matches("12.11.0", "2.11"));
    cr_assert(!cli_version_matches("3.60", "3.6"));
    cr_assert(!cli_version_matches(NULL, "2.11"));
    cr_assert(!cli_version_matches("", "2.11"));
}
