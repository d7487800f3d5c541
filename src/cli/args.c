/* args.c — strict parsing of command-line values (args.h). */
#include "cli/args.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "from 2 to 100000", "from 1", "up to 5": the range in words, for the error sentence. */
static void args_range_long(char *buf, size_t n, long lo, long hi) {
    if (lo > LONG_MIN && hi < LONG_MAX) snprintf(buf, n, "from %ld to %ld", lo, hi);
    else if (lo > LONG_MIN) snprintf(buf, n, ">= %ld", lo);
    else snprintf(buf, n, "<= %ld", hi);
}

/* A bound as people write it: whole numbers in full (2592000, not 2.592e+06). */
static void args_bound(char *buf, size_t n, double v) {
    if (v == floor(v) && fabs(v) < 1e15) snprintf(buf, n, "%.0f", v);
    else snprintf(buf, n, "%g", v);
}

static void args_range_double(char *buf, size_t n, double lo, double hi) {
    char a[40], b[40];
    args_bound(a, sizeof a, lo);
    args_bound(b, sizeof b, hi);
    if (isfinite(lo) && isfinite(hi)) snprintf(buf, n, "from %s to %s", a, b);
    else if (isfinite(lo)) snprintf(buf, n, ">= %s", a);
    else snprintf(buf, n, "<= %s", b);
}

/* Refuses what strtol/strtod would quietly accept: blanks and a '+' before the number. */
static int args_clean_start(const char *s) { return s && *s && *s != '+' && *s != ' ' && *s != '\t' && *s != '\n'; }

int cli_parse_long(const char *flag, const char *s, long lo, long hi, long *out, kerr *e) {
    char range[96];
    args_range_long(range, sizeof range, lo, hi);
    if (!args_clean_start(s) || (*s == '-' && lo >= 0))
        return kerr_set(e, KOPT_E_USAGE, "%s takes a whole number %s, got '%s'", flag, range, s ? s : "");
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < lo || v > hi)
        return kerr_set(e, KOPT_E_USAGE, "%s takes a whole number %s, got '%s'", flag, range, s);
    *out = v;
    return 0;
}

int cli_parse_int(const char *flag, const char *s, int lo, int hi, int *out, kerr *e) {
    long v = 0;
    int rc = cli_parse_long(flag, s, lo, hi, &v, e);
    if (!rc) *out = (int)v;
    return rc;
}

/* strtod on the whole text, refusing nan, inf and hexadecimal: 0 and *v, or -1. */
static int args_number(const char *s, double *v, const char **rest) {
    if (!args_clean_start(s)) return -1;
    const char *p = *s == '-' ? s + 1 : s;
    if (!((*p >= '0' && *p <= '9') || *p == '.')) return -1; /* nan, inf, infinity */
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) return -1;
    char *end = NULL;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(x)) return -1;
    *v = x;
    *rest = end;
    return 0;
}

int cli_parse_double(const char *flag, const char *s, double lo, double hi, double *out, kerr *e) {
    char range[96];
    args_range_double(range, sizeof range, lo, hi);
    double v = 0;
    const char *rest = NULL;
    if (args_number(s, &v, &rest) || *rest || v < lo || v > hi)
        return kerr_set(e, KOPT_E_USAGE, "%s takes a number %s, got '%s'", flag, range, s ? s : "");
    *out = v;
    return 0;
}

int cli_parse_duration(const char *flag, const char *s, double lo_s, double hi_s, double *out, kerr *e) {
    char range[96];
    args_range_double(range, sizeof range, lo_s, hi_s);
    double v = 0, unit = 0;
    const char *rest = NULL;
    if (!args_number(s, &v, &rest)) {
        if (!*rest || !strcmp(rest, "s")) unit = 1;
        else if (!strcmp(rest, "m")) unit = 60;
        else if (!strcmp(rest, "h")) unit = 3600;
    }
    if (unit == 0 || !isfinite(v * unit) || v * unit < lo_s || v * unit > hi_s)
        return kerr_set(e, KOPT_E_USAGE, "%s takes a duration like 90s, 2m or 1.5h (seconds %s), got '%s'", flag, range,
                        s ? s : "");
    *out = v * unit;
    return 0;
}

int cli_input_file(const char *what, const char *path, kerr *e) {
    struct stat st;
    if (!path || !*path) return kerr_set(e, KOPT_E_NOFILE, "%s: an empty path was given", what);
    if (stat(path, &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return kerr_set(e, KOPT_E_NOFILE, "%s %s does not exist", what, path);
        return kerr_set(e, KOPT_E_NOFILE, "%s %s cannot be read: %s", what, path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) return kerr_set(e, KOPT_E_NOFILE, "%s %s is a directory, not a file", what, path);
    if (!S_ISREG(st.st_mode)) return kerr_set(e, KOPT_E_NOFILE, "%s %s is not a regular file", what, path);
    if (access(path, R_OK) != 0)
        return kerr_set(e, KOPT_E_NOFILE, "%s %s cannot be read: %s", what, path, strerror(errno));
    return 0;
}

int cli_version_matches(const char *version, const char *want) {
    if (!version || !want) return 0;
    size_t n = strlen(want);
    if (strncmp(version, want, n) != 0) return 0;
    char next = version[n];
    /* "2.11" must not match "2.110"; what follows the minor number is a patch, a pre-release
     * tag or a local suffix */
    return next == '\0' || next == '.' || next == '+' || next == 'a' || next == 'b' || next == 'r' || next == 'd';
}
