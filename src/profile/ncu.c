/* ncu.c — see ncu.h. The profiler is started with fork/execvp on an argument vector, never
 * through a shell, so paths (module, args, python, $KOPT_NCU) are only ever arguments. */
#include "profile/ncu.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/log.h"

#define NCU_DEFAULT_TIMEOUT_S 300.0

static const char *ncu_path(void) {
    const char *p = getenv("KOPT_NCU");
    return p && *p ? p : "ncu";
}

/* argv as one line for logs, each argument single-quoted when it holds more than [A-Za-z0-9_./:=^,-]
 * (display only: nothing parses it). malloc'd. */
static char *ncu_argv_text(char *const argv[]) {
    kbuf b = KBUF_INIT;
    for (size_t i = 0; argv[i]; i++) {
        const char *a = argv[i];
        if (i) kbuf_putc(&b, ' ');
        if (*a && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=^,-") ==
                      strlen(a)) {
            kbuf_puts(&b, a);
            continue;
        }
        kbuf_putc(&b, '\'');
        for (; *a; a++) {
            if (*a == '\'') kbuf_puts(&b, "'\\''");
            else kbuf_putc(&b, *a);
        }
        kbuf_putc(&b, '\'');
    }
    return kbuf_steal(&b);
}

/* Run argv (argv[0] searched in PATH, no shell) in a process group of its own, stdin and stderr
 * on /dev/null, stdout appended to *out (NULL: /dev/null). After timeout_s (<= 0: no limit) the
 * group is killed. Returns 0 with the wait status in *status, or KOPT_E_WORKER (could not run,
 * timed out: *timed_out set) with e filled; after a timeout the whole group is killed and the
 * child reaped. */
static int ncu_exec(char *const argv[], double timeout_s, kbuf *out, int *status, int *timed_out,
                    kerr *e) {
    *status = 0;
    *timed_out = 0;
    int pfd[2] = {-1, -1}, xfd[2] = {-1, -1};
    if ((out && pipe2(pfd, O_CLOEXEC)) || pipe2(xfd, O_CLOEXEC)) {
        int err = errno;
        for (int i = 0; i < 2; i++) {
            if (pfd[i] >= 0) close(pfd[i]);
            if (xfd[i] >= 0) close(xfd[i]);
        }
        return kerr_set(e, KOPT_E_WORKER, "cannot create a pipe for ncu: %s", strerror(err));
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int err = errno;
        for (int i = 0; i < 2; i++) {
            if (pfd[i] >= 0) close(pfd[i]);
            close(xfd[i]);
        }
        return kerr_set(e, KOPT_E_WORKER, "cannot fork to run ncu: %s", strerror(err));
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* above 2 first, so that the dup2s below always clear close-on-exec on 0, 1, 2 */
        int dn0 = open("/dev/null", O_RDWR | O_CLOEXEC);
        int dn = dn0 < 0 ? -1 : fcntl(dn0, F_DUPFD_CLOEXEC, 3);
        if (dn < 0) _exit(127);
        int o = out ? fcntl(pfd[1], F_DUPFD_CLOEXEC, 3) : dn;
        if (o < 0 || dup2(dn, 0) < 0 || dup2(o, 1) < 0 || dup2(dn, 2) < 0) _exit(127);
        execvp(argv[0], argv);
        int err = errno;
        ssize_t k = write(xfd[1], &err, sizeof err);
        (void)k;
        _exit(127);
    }
    setpgid(pid, pid);   /* also here: no window where kill(-pid) misses it */
    close(xfd[1]);
    if (out) close(pfd[1]);
    int err = 0;
    ssize_t k;
    while ((k = read(xfd[0], &err, sizeof err)) < 0 && errno == EINTR) {}
    close(xfd[0]);
    if (k == (ssize_t)sizeof err) {
        if (out) close(pfd[0]);
        while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
        return kerr_set(e, KOPT_E_WORKER, "cannot run ncu '%s': %s", argv[0], strerror(err));
    }
    double deadline = timeout_s > 0 ? clock_now() + timeout_s : INFINITY;
    int fd = out ? pfd[0] : -1;
    char chunk[65536];
    for (;;) {
        if (fd < 0) {   /* stdout closed: wait for the exit */
            pid_t r = waitpid(pid, status, WNOHANG);
            if (r == pid) return 0;
            if (r < 0 && errno != EINTR) break;
        }
        double left = deadline - clock_now();
        if (left <= 0) { *timed_out = 1; break; }
        int ms = isinf(left) ? (fd >= 0 ? -1 : 10) : (int)ceil(fmin(left, 1e6) * 1000.0);
        if (fd < 0 && ms > 10) ms = 10;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int pr = poll(&p, fd >= 0 ? 1 : 0, ms);
        if (pr < 0 && errno != EINTR) break;
        if (pr <= 0 || fd < 0) continue;
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n > 0) kbuf_append(out, chunk, (size_t)n);
        else if (n == 0 || (errno != EINTR && errno != EAGAIN)) { close(fd); fd = -1; }
    }
    /* timed out (or a system failure): kill the group, reap the child */
    if (fd >= 0) close(fd);
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
    if (*timed_out)
        return kerr_set(e, KOPT_E_WORKER, "ncu did not finish within %.0f s", timeout_s);
    return kerr_set(e, KOPT_E_WORKER, "waiting for ncu failed: %s", strerror(errno));
}

int ncu_available(void) {
    char *argv[] = {(char *)ncu_path(), "--version", NULL};
    int status, timed_out;
    kerr e = {0};
    if (ncu_exec(argv, 60, NULL, &status, &timed_out, &e)) {
        log_debug("ncu is not available: %s", e.msg);
        return 0;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Split one CSV line (ncu quotes every field) into fields; returns the count. */
static size_t csv_fields(const char *line, char **f, size_t max) {
    size_t n = 0;
    const char *p = line;
    while (*p && *p != '\n' && n < max) {
        kbuf b = KBUF_INIT;
        if (*p == '"') {
            p++;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"' && p[1] == '"') p++;
                kbuf_putc(&b, *p++);
            }
            if (*p == '"') p++;
        } else {
            while (*p && *p != ',' && *p != '\n') kbuf_putc(&b, *p++);
        }
        f[n++] = kbuf_steal(&b);
        if (*p == ',') p++;
        else break;
    }
    return n;
}

static int col(char **h, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++) if (!strcmp(h[i], name)) return (int)i;
    return -1;
}

enum { MAXF = 256 };

int ncu_parse_csv(const char *text, json_t **out, kerr *e) {
    json_t *res = json_object();
    char *h[MAXF] = {0}, *f[MAXF] = {0};
    size_t nh = 0;
    int kname = -1;
    const char *line = text;
    static const struct { const char *metric, *key; } M[] = {
        {"gpu__time_duration.sum", "time_ns"},
        {"dram__throughput.avg.pct_of_peak_sustained_elapsed", "dram_pct"},
        {"sm__throughput.avg.pct_of_peak_sustained_elapsed", "sm_pct"},
        {"sm__warps_active.avg.pct_of_peak_sustained_active", "occupancy_pct"},
        {"launch__registers_per_thread", "registers"},
    };
    int mc[5] = {-1, -1, -1, -1, -1};
    while (line && *line) {
        const char *next = strchr(line, '\n');
        if (kname < 0) {
            if (!strncmp(line, "\"ID\"", 4)) {   /* the header row */
                nh = csv_fields(line, h, MAXF);
                kname = col(h, nh, "Kernel Name");
                for (int m = 0; m < 5; m++) mc[m] = col(h, nh, M[m].metric);
            }
        } else if (line[0] == '"') {
            size_t nf = csv_fields(line, f, MAXF);
            char *endp = NULL;
            if (nf == nh && (strtol(f[0], &endp, 10), endp && *endp == '\0' && endp != f[0])) {   /* skip the units row */
                json_t *row = json_object();
                for (int m = 0; m < 5; m++) {
                    if (mc[m] < 0) continue;
                    char *num = f[mc[m]];
                    for (char *q = num; *q; q++) if (*q == ',') *q = '\0';   /* "1,234" is not used, but be safe */
                    char *end = NULL;
                    double v = strtod(num, &end);
                    if (end != num) json_object_set_new(row, M[m].key, json_real(v));
                }
                /* the kernel's name may carry its signature: keep the identifier */
                char *nm = f[kname];
                size_t k = strcspn(nm, "( <");
                nm[k] = '\0';
                json_object_set_new(res, nm, row);   /* the last launch of a name wins */
            }
            for (size_t i = 0; i < nf; i++) free(f[i]);
        }
        line = next ? next + 1 : NULL;
    }
    for (size_t i = 0; i < nh; i++) free(h[i]);
    if (kname < 0 || json_object_size(res) == 0) {
        json_decref(res);
        return kerr_set(e, KOPT_E_WORKER, "no kernel found in ncu's output");
    }
    *out = res;
    return 0;
}

int ncu_profile(const char *python, const char *module, const char *args, double timeout_s, json_t **out, kerr *e) {
    char *root = fs_kopt_root();
    char *runner = fs_join(root, "worker/ncu_run.py");
    free(root);
    const char *py = python && *python ? python : (getenv("KOPT_PYTHON") && *getenv("KOPT_PYTHON") ? getenv("KOPT_PYTHON") : "python3");
    char *argv[] = {(char *)ncu_path(), "--clock-control", "none", "--csv", "--page", "raw", "--metrics",
                    NCU_METRICS, "-k", "regex:^triton_", (char *)py, runner, (char *)module, (char *)args, NULL};
    char *text = ncu_argv_text(argv);
    log_info("ncu: %s", text);
    free(text);
    kbuf b = KBUF_INIT;
    int status, timed_out;
    int rc = ncu_exec(argv, timeout_s > 0 ? timeout_s : NCU_DEFAULT_TIMEOUT_S, &b, &status, &timed_out, e);
    free(runner);
    if (rc) {
        kbuf_free(&b);
        return rc;
    }
    rc = ncu_parse_csv(kbuf_str(&b), out, e);
    if (rc) {
        if (WIFEXITED(status))
            kerr_set(e, KOPT_E_WORKER, "ncu gave no usable metrics (exit status %d)", WEXITSTATUS(status));
        else
            kerr_set(e, KOPT_E_WORKER, "ncu gave no usable metrics (killed by signal %d)",
                     WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    }
    kbuf_free(&b);
    return rc;
}
