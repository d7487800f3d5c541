/* args.h — strict parsing of the values given on kopt's command line (and in its KOPT_*
 * variables). One module, so every subcommand refuses the same inputs with the same sentence.
 *
 * Contract of every cli_parse_*: `flag` names where the value came from ("--rounds",
 * "KOPT_BENCH_GRACE_S") and `s` is the text given. The whole text must be the value: no
 * leading or trailing blanks, no trailing units other than the ones a function names, no
 * nan/inf, no hex. The value must lie in [lo, hi] (both ends included). On success *out is set
 * and 0 returned; otherwise *out is untouched and KOPT_E_USAGE is returned with e holding one
 * sentence naming the flag, the bad value and what it takes, e.g.
 *   "--rounds takes a whole number from 2 to 100000, got '-3'". */
#ifndef KOPT_CLI_ARGS_H
#define KOPT_CLI_ARGS_H

#include "util/err.h"

/* A whole decimal number (optional leading '-' when lo < 0; no '+', no blanks). */
int cli_parse_long(const char *flag, const char *s, long lo, long hi, long *out, kerr *e);
int cli_parse_int(const char *flag, const char *s, int lo, int hi, int *out, kerr *e);

/* A finite decimal number ("0.02", "1e-3", "10"). */
int cli_parse_double(const char *flag, const char *s, double lo, double hi, double *out, kerr *e);

/* A duration in seconds: a finite number followed by nothing or "s" (seconds), "m" (minutes)
 * or "h" (hours): "90", "90s", "2m", "1.5h". The range applies to the value in seconds. */
int cli_parse_duration(const char *flag, const char *s, double lo_s, double hi_s, double *out, kerr *e);

/* An input file that kopt reads: 0 when `path` names a readable regular file (or a link to one);
 * else KOPT_E_NOFILE with a sentence "<what> <path> does not exist" / "is a directory" /
 * "is not a regular file" / "cannot be read: <reason>". `what` is e.g. "problem file". */
int cli_input_file(const char *what, const char *path, kerr *e);

/* The torch and triton versions kopt supports (Inductor's output module changes between
 * releases): "major.minor" of each; any patch level and local suffix ("2.11.0+cu128") match. */
#define CLI_TORCH_SUPPORTED "2.11"
#define CLI_TRITON_SUPPORTED "3.6"

/* 1 when `version` (e.g. "2.11.0+fake", "2.11.0a0+git12ab") has the major.minor `want`
 * ("2.11"); 0 otherwise, and for NULL or text that is not a version. */
int cli_version_matches(const char *version, const char *want);

#endif
