/* sandbox.h — run one untrusted command in a disposable, limited process (issue 11, item 3):
 * the compile step of a candidate's kernels runs here, never in the worker that judges.
 *
 * What sandbox_run sets up, in this order, and reports in sandbox_result:
 *   - a supervisor process (its own session, killed when kopt dies: PR_SET_PDEATHSIG) that is
 *     the "subreaper" of everything below it: when the command ends (or on a timeout) it kills
 *     every descendant left, including ones that called setsid() to escape a process group;
 *   - new network and PID namespaces (the PID one unless no_pidns) where the kernel allows them (unshare(2), with a user
 *     namespace of kopt's own uid when kopt is not root; the network then has only a loopback
 *     device that is down, and the command is PID 1 of its namespace, so everything in it dies
 *     with it); where refused, result.ns is 0 and result.ns_why says why, the rest applies;
 *   - when kopt runs as root, the command runs as nobody (65534), so that it can write only
 *     where anyone may (the work directory is handed to nobody);
 *   - no_new_privs; rlimits on CPU seconds, address space, file size, open files; core dumps
 *     off; umask 077; the work directory as the current directory;
 *   - the environment is exactly opts->env (nothing of kopt's own: no API keys);
 *   - stdin is `in`, stdout and stderr are captured up to out_cap / err_cap bytes (more stdout
 *     kills the command: result.out_overflow; stderr beyond the cap is dropped), every other
 *     file descriptor is closed;
 *   - a wall-clock timeout (result.timed_out), after which everything is killed.
 * There is no mount namespace and no seccomp filter: reads are not confined (docs/SECURITY.md).
 *
 * Ownership: the caller owns opts and the strings in it; sandbox_run fills a caller-provided
 * sandbox_result whose buffers the caller releases with sandbox_result_free.
 */
#ifndef KOPT_SANDBOX_H
#define KOPT_SANDBOX_H

#include <stddef.h>

#include "util/buf.h"
#include "util/err.h"

typedef struct sandbox_opts {
    const char *workdir;           /* existing directory: cwd, and the one place to write */
    double timeout_s;              /* wall clock; <= 0: 60 s */
    unsigned long long mem_bytes;  /* RLIMIT_AS; 0: 8 GiB */
    unsigned long long file_bytes; /* RLIMIT_FSIZE; 0: 256 MiB */
    unsigned long cpu_s;           /* RLIMIT_CPU; 0: 120 s */
    size_t out_cap;                /* stdout bytes; 0: 64 MiB */
    size_t err_cap;                /* stderr bytes kept; 0: 64 KiB */
    const char *const *env;        /* NULL-terminated "NAME=value" list: the whole environment */
    int no_ns;                     /* do not try namespaces (tests of the fallback) */
    int keep_uid;                  /* stay root when kopt is root (a python nobody cannot read) */
    int no_pidns;                  /* no PID namespace (cuobjdump crashes in one without its /proc) */
} sandbox_opts;

typedef struct sandbox_result {
    int exit_code;    /* the command's exit status, or -1 */
    int term_signal;  /* the signal that ended it, or 0 */
    int timed_out;    /* killed at the timeout */
    int out_overflow; /* killed for writing more than out_cap to stdout */
    int ns;           /* ran in a new network namespace (and PID namespace unless no_pidns) */
    int pidns;        /* ... and in a new PID namespace */
    char ns_why[160]; /* why not, when ns is 0 */
    int dropped_uid;  /* ran as nobody (kopt is root) */
    double wall_s;
    kbuf out, err;
} sandbox_result;

/* Run argv (argv[0] an absolute path) as described above. Returns 0 when the command ran
 * (whatever its outcome: see r), -1 with e set when the sandbox itself could not be made. */
int sandbox_run(const sandbox_opts *opts, char *const argv[], const char *in, size_t inlen, sandbox_result *r, kerr *e);
void sandbox_result_free(sandbox_result *r);

/* A long-lived command in the same sandbox (the same supervisor, namespaces, uid, limits,
 * environment; the timeout of opts is not used: each question has its own): a server that
 * answers one line per line asked -- the compile server of gates/machine.h. sandbox_open starts
 * it (0, or -1 with e set) and reports the protections it got (ns, pidns, dropped_uid: the
 * caller decides whether they are enough for its use); sandbox_ask writes `line` and a newline
 * (line NULL: nothing, e.g. to read a greeting) and reads one line of at most cap bytes back
 * (without its newline) into *answer within timeout_s; a timeout, the command's end, a longer
 * answer or more than one line ends the session for good (dead, why; KOPT_E_INTERNAL). sandbox_close closes the command's stdin, gives
 * it 2 s to leave, then kills the supervisor's whole session, and fills r (exit status, the last
 * 64 KiB of stderr, the protections); the session is then empty.
 * Ownership: the session owns its descriptors and buffers until sandbox_close; opts and the
 * strings in them are read by sandbox_open only. */
typedef struct sandbox_session {
    sandbox_opts opts;
    int sup;              /* the supervisor's pid */
    int in, out, err, st; /* kopt's ends of the pipes, non-blocking */
    double t0;
    kbuf pending, err_tail, status;
    int ns, pidns, dropped_uid;
    char ns_why[160];
    int dead;
    char why[96];
} sandbox_session;
int sandbox_open(const sandbox_opts *opts, char *const argv[], sandbox_session *s, kerr *e);
int sandbox_ask(sandbox_session *s, const char *line, size_t cap, double timeout_s, kbuf *answer, kerr *e);
void sandbox_close(sandbox_session *s, sandbox_result *r);

/* One line naming the protections a run had, e.g. "network and PID namespaces, uid nobody,
 * rlimits (...), empty environment, timeout" (static storage, valid until the next call);
 * sandbox_session_describe the same for an open session. */
const char *sandbox_describe(const sandbox_result *r);
const char *sandbox_session_describe(const sandbox_session *s);

#endif
