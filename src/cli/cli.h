/* cli.h — the `kopt` subcommands. Each lives in its own cmd_<name>.c and has the signature
 * `int cmd_<name>(int argc, char **argv)` where argv[0] is the subcommand name. A subcommand
 * returns the process exit code (a kopt_code from util/err.h) and prints its own errors as
 * one line "kopt <name>: error: <message>" on stderr (cli_fail does that). Every subcommand
 * answers --help / -h with its usage on stdout and exit 0. */
#ifndef KOPT_CLI_H
#define KOPT_CLI_H

#include "util/err.h"

#define KOPT_VERSION "0.1.0"

int cmd_inspect(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_lint(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_llm(int argc, char **argv);
int cmd_store(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* The paths kopt uses (share folder, worker script, store) and the supported versions, for
 * `kopt --version` / `kopt version`. */
int cmd_version(int argc, char **argv);

/* Print "kopt <cmd>: error: <msg>" (and, in --json mode, a JSON error object on stdout) and
 * return e->code. */
int cli_fail(const char *cmd, const kerr *e, int json_mode);

/* Start the GPU worker for subcommand `cmd` (python: --python or NULL; the script from
 * $KOPT_WORKER when set, for tests) and check that it has torch (else KOPT_E_PYTHON), a
 * supported torch/triton (cli/args.h: CLI_TORCH_SUPPORTED, CLI_TRITON_SUPPORTED; else
 * KOPT_E_PYTHON, unless force_version or $KOPT_FORCE_VERSION, when one warning line is printed on
 * stderr instead) and a CUDA device (else KOPT_E_NOGPU). On failure *w is NULL and e says why,
 * with a hint. */
struct worker;
int cli_start_worker(const char *cmd, const char *python, const char *log_path, int max_restarts, int force_version,
                     struct worker **w, kerr *e);

/* 1 when the version check is waived: `flag` (--force-version) or KOPT_FORCE_VERSION set to
 * anything but "" or "0". */
int cli_force_version(int flag);

/* The progress line of long runs: one line on stderr, rewritten in place, only on a terminal
 * and only when neither --json nor --verbose asked for other output. cli_progress_init decides;
 * cli_progress_line is the callback the pipelines take (ctx: the cli_progress); cli_progress_end
 * clears the line. */
typedef struct cli_progress {
    int tty;
    long start; /* time(NULL) at init */
} cli_progress;
void cli_progress_init(cli_progress *p, int json_mode);
void cli_progress_line(const char *line, void *ctx);
void cli_progress_end(const cli_progress *p);

/* True if argv contains -h or --help. */
int cli_wants_help(int argc, char **argv);

#endif
