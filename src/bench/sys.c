/* sys.c — processes, clock and disk usage for `kopt bench` (contract in sys.h). */
#include "bench/sys.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"

#define CAPTURE_MAX (1u << 20)

double bench_now(void) { return clock_now(); }

/* In a freshly forked child: die with the parent, default signals, nothing blocked. */
static void bsys_child_setup(pid_t parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Puts the fds onto 0, 1, 2 (lifted above 2 first so the dup2s cannot clobber each other). */
static void bsys_child_fds(int in, int out, int err) {
    int a = fcntl(in, F_DUPFD_CLOEXEC, 3), b = fcntl(out, F_DUPFD_CLOEXEC, 3), c = fcntl(err, F_DUPFD_CLOEXEC, 3);
    if (a < 0 || b < 0 || c < 0 || dup2(a, 0) < 0 || dup2(b, 1) < 0 || dup2(c, 2) < 0) _exit(127);
}

/* waitpid, retried on EINTR. */
static void bsys_reap(pid_t pid, int *status) {
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
}

int bench_capture(const char *const *argv, double timeout_s, char **out, kerr *e) {
    *out = NULL;
    if (strchr(argv[0], '/') && access(argv[0], X_OK) != 0)   /* no fork for a missing program */
        return kerr_set(e, KOPT_E_INTERNAL, "cannot run %s: %s", argv[0], strerror(errno));
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return kerr_set(e, KOPT_E_INTERNAL, "cannot create a pipe: %s", strerror(errno));
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) {
        close(p[0]);
        close(p[1]);
        return kerr_set(e, KOPT_E_INTERNAL, "cannot open /dev/null: %s", strerror(errno));
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        bsys_child_setup(parent);
        bsys_child_fds(devnull, p[1], devnull);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(p[1]);
    close(devnull);
    if (pid < 0) {
        close(p[0]);
        return kerr_set(e, KOPT_E_INTERNAL, "cannot fork: %s", strerror(errno));
    }
    kbuf b = KBUF_INIT;
    double deadline = bench_now() + timeout_s;
    int timed_out = 0;
    for (;;) {
        double left = deadline - bench_now();
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int r = poll(&pf, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        char chunk[4096];
        ssize_t n = read(p[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (b.len < CAPTURE_MAX) kbuf_append(&b, chunk, (size_t)n);
    }
    close(p[0]);
    if (timed_out) kill(pid, SIGKILL);
    int st = 0;
    bsys_reap(pid, &st);
    if (timed_out || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        kbuf_free(&b);
        return kerr_set(e, KOPT_E_INTERNAL, "%s %s", argv[0],
                        timed_out ? "did not finish in time" : WIFEXITED(st) ? "failed" : "was killed");
    }
    *out = kbuf_steal(&b);
    return 0;
}

int bench_child_start(const bench_child_spec *c, pid_t *pid, kerr *e) {
    *pid = -1;
    int fo = open(c->stdout_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int fe = fo < 0 ? -1 : open(c->stderr_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int fi = fe < 0 ? -1 : open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fi < 0) {
        int rc = kerr_set(e, KOPT_E_IO, "cannot create %s: %s", fo < 0 ? c->stdout_path : c->stderr_path,
                          strerror(errno));
        if (fo >= 0) close(fo);
        if (fe >= 0) close(fe);
        return rc;
    }
    pid_t parent = getpid();
    fflush(NULL);
    pid_t p = fork();
    if (p == 0) {
        setpgid(0, 0);
        bsys_child_setup(parent);
        bsys_child_fds(fi, fo, fe);
        execve(c->exe, c->argv, c->envp);
        dprintf(2, "kopt bench: cannot run %s: %s\n", c->exe, strerror(errno));
        _exit(127);
    }
    close(fo);
    close(fe);
    close(fi);
    if (p < 0) return kerr_set(e, KOPT_E_INTERNAL, "cannot fork a child: %s", strerror(errno));
    setpgid(p, p);   /* also here: no window in which killing the group misses it */
    *pid = p;
    return 0;
}

void bench_kill_group(pid_t pid, int sig) {
    if (pid <= 0) return;
    kill(-pid, sig);
    kill(pid, sig);
}

/* Adds the blocks of everything under path (an lstat'ed folder) to *sum. */
static void bsys_du(const char *path, int depth, int64_t *sum) {
    DIR *d = depth < 64 ? opendir(path) : NULL;
    if (!d) return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char *p = fs_join(path, de->d_name);
        struct stat st;
        if (lstat(p, &st) == 0) {
            *sum += (int64_t)st.st_blocks * 512;
            if (S_ISDIR(st.st_mode)) bsys_du(p, depth + 1, sum);
        }
        free(p);
    }
    closedir(d);
}

int64_t bench_disk_usage(const char *dir) {
    struct stat st;
    if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) return -1;
    int64_t sum = (int64_t)st.st_blocks * 512;
    bsys_du(dir, 0, &sum);
    return sum;
}
