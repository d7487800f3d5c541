/* sys.h — the operating-system side of `kopt bench`: a monotonic clock, running a command from
 * an argument vector (never a shell) and capturing its output, starting a child process in its
 * own process group that dies with kopt, killing a process group, and the disk size of a folder.
 *
 * Contract: fallible functions return 0 or a kopt_code with the kerr filled. Children get
 * PR_SET_PDEATHSIG=SIGKILL (so a `kill -9` of kopt bench takes them along), stdin from
 * /dev/null, default SIGINT/SIGTERM/SIGPIPE dispositions and an empty signal mask. Not
 * thread-safe (kopt bench is single-threaded: the parent is the queue).
 *
 * Ownership: argument vectors and paths are borrowed; *out strings are malloc'd for the caller.
 */
#ifndef KOPT_BENCH_SYS_H
#define KOPT_BENCH_SYS_H

#include <stdint.h>
#include <sys/types.h>

#include "util/err.h"

/* Seconds on a monotonic clock (for wall times and deadlines). */
double bench_now(void);

/* Runs argv[0] (searched in PATH) with argv, stdout captured into *out (NUL-terminated, at most
 * 1 MiB kept), stderr discarded; killed after timeout_s. 0 when it exited with status 0; else
 * KOPT_E_INTERNAL (cannot run, non-zero exit, signal, timeout) and *out NULL. */
int bench_capture(const char *const *argv, double timeout_s, char **out, kerr *e);

typedef struct bench_child_spec {
    const char *exe;            /* path executed (execve: no PATH search) */
    char *const *argv;          /* NULL-terminated */
    char *const *envp;          /* NULL-terminated: the child's whole environment */
    const char *stdout_path;    /* created/truncated */
    const char *stderr_path;    /* created/truncated */
} bench_child_spec;

/* Starts the child in a new process group (its pid is the group id). An exec failure shows
 * as exit status 127 of the child. KOPT_E_IO when an output file cannot be created,
 * KOPT_E_INTERNAL when fork fails. */
int bench_child_start(const bench_child_spec *c, pid_t *pid, kerr *e);

/* Sends sig to the process group of pid (and to pid itself, in case it has not yet made its
 * group). */
void bench_kill_group(pid_t pid, int sig);

/* Bytes that the files and folders under dir occupy on disk (st_blocks * 512; symbolic links
 * not followed); -1 when dir cannot be read at all. */
int64_t bench_disk_usage(const char *dir);

#endif
