/* sandbox.c — see sandbox.h. Three processes: kopt (collects output, enforces the timeout),
 * the supervisor (namespaces, subreaper, kills what is left) and the command. */
#include "sandbox/sandbox.h"
#include "util/clock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SB_NOBODY 65534
#define SB_GRACE_S 2.0

/* What the supervisor tells kopt over the status pipe: first the setup, then the command's
 * wait status. */
typedef struct sb_setup {
    int ns, ns_errno, dropped, pidns;
} sb_setup;

static int sb_write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

static int sb_write_file(const char *path, const char *s) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = sb_write_all(fd, s, strlen(s));
    close(fd);
    return rc;
}

/* ---- the command (grandchild) -------------------------------------------------------------- */

static void sb_limit(int res, rlim_t soft, rlim_t hard) {
    struct rlimit rl = {soft, hard};
    setrlimit(res, &rl);
}

static void sb_close_from(int lo) {
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (int fd = lo; fd < max; fd++) close(fd);
}

/* Never returns. */
static void sb_exec(const sandbox_opts *o, char *const argv[], int in, int out, int err, int drop) {
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(126);
    sb_close_from(3);
    umask(077);
    if (chdir(o->workdir) != 0) {
        dprintf(2, "sandbox: cannot enter %s: %s\n", o->workdir, strerror(errno));
        _exit(126);
    }
    if (drop) {
        if (setgroups(0, NULL) != 0 || setgid(SB_NOBODY) != 0 || setuid(SB_NOBODY) != 0) {
            dprintf(2, "sandbox: cannot drop to uid %d: %s\n", SB_NOBODY, strerror(errno));
            _exit(126);
        }
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    rlim_t cpu = o->cpu_s ? o->cpu_s : 120;
    sb_limit(RLIMIT_CPU, cpu, cpu + 5);
    rlim_t as = o->mem_bytes ? o->mem_bytes : (8ULL << 30);
    sb_limit(RLIMIT_AS, as, as);
    rlim_t fs = o->file_bytes ? o->file_bytes : (256ULL << 20);
    sb_limit(RLIMIT_FSIZE, fs, fs);
    sb_limit(RLIMIT_NOFILE, 256, 256);
    sb_limit(RLIMIT_CORE, 0, 0);
    static char *const empty_env[] = {NULL};
    execve(argv[0], argv, o->env ? (char *const *)o->env : empty_env);
    dprintf(2, "sandbox: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

/* ---- the supervisor ------------------------------------------------------------------------ */

static volatile sig_atomic_t sb_stop;
static void sb_on_term(int sig) {
    (void)sig;
    sb_stop = 1;
}

/* Kill every child of this process (orphans reparent here: subreaper); returns how many. */
static int sb_kill_children(void) {
    DIR *d = opendir("/proc");
    if (!d) return 0;
    pid_t me = getpid();
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0) continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t k = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (k <= 0) continue;
        buf[k] = 0;
        const char *rp = strrchr(buf, ')'); /* "pid (comm) state ppid ..." */
        long ppid = 0;
        char state = 0;
        if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2) continue;
        if (ppid == me) {
            kill((pid_t)pid, SIGKILL);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Never returns. */
static void sb_supervise(const sandbox_opts *o, char *const argv[], int in, int out, int err, int st, pid_t kopt) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = sb_on_term;
    sigaction(SIGTERM, &sa, NULL); /* no SA_RESTART: waitpid returns EINTR */
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    setsid();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != kopt) _exit(125);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    sb_setup s = {0, 0, 0, 0};
    int root = geteuid() == 0;
    if (!o->no_ns) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        int flags = CLONE_NEWNET | (o->no_pidns ? 0 : CLONE_NEWPID) | (root ? 0 : CLONE_NEWUSER);
        if (unshare(flags) == 0) {
            s.ns = 1;
            s.pidns = !o->no_pidns;
            if (!root) {
                char map[64];
                sb_write_file("/proc/self/setgroups", "deny");
                snprintf(map, sizeof map, "%u %u 1", (unsigned)uid, (unsigned)uid);
                if (sb_write_file("/proc/self/uid_map", map) != 0) s.ns = 0;
                snprintf(map, sizeof map, "%u %u 1", (unsigned)gid, (unsigned)gid);
                if (sb_write_file("/proc/self/gid_map", map) != 0) s.ns = 0;
                if (!s.ns) s.ns_errno = errno;
            }
        } else {
            s.ns_errno = errno;
        }
    } else {
        s.ns_errno = 0;
    }
    if (root && !o->keep_uid && chown(o->workdir, SB_NOBODY, SB_NOBODY) == 0) s.dropped = 1;
    sb_write_all(st, &s, sizeof s);
    pid_t cmd = fork();
    if (cmd < 0) _exit(124);
    if (cmd == 0) {
        close(st);
        sb_exec(o, argv, in, out, err, s.dropped);
    }
    close(in);
    close(out);
    close(err);
    int ws = 0;
    for (;;) {
        pid_t w = waitpid(cmd, &ws, 0);
        if (w == cmd) break;
        if (w < 0 && errno == EINTR) {
            if (sb_stop) kill(cmd, SIGKILL);
            continue;
        }
        ws = 0;
        break;
    }
    /* whatever the command left behind: kill it, reap it, until nothing is left */
    for (int round = 0; round < 1000; round++) {
        int killed = sb_kill_children();
        int reaped = 0;
        while (waitpid(-1, NULL, WNOHANG) > 0) reaped++;
        if (!killed && !reaped && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD) break;
        if (!reaped) usleep(2000);
    }
    sb_write_all(st, &ws, sizeof ws);
    _exit(0);
}

/* ---- kopt's side ----------------------------------------------------------------------------- */

static int sb_pipe(int p[2]) { return pipe2(p, O_CLOEXEC); }

/* The supervisor and its command started on fresh pipes: *sup, and kopt's ends in fds[0] (the
 * command's stdin), fds[1] (stdout), fds[2] (stderr), fds[3] (the supervisor's status). -1 with
 * e set when the sandbox could not be made. */
static int sb_launch(const sandbox_opts *o, char *const argv[], pid_t *sup, int fds[4], kerr *e) {
    if (!o || !o->workdir || !argv || !argv[0] || argv[0][0] != '/') {
        kerr_set(e, KOPT_E_INTERNAL, "sandbox: needs a work directory and an absolute command path");
        return -1;
    }
    struct stat sbuf;
    if (stat(o->workdir, &sbuf) != 0 || !S_ISDIR(sbuf.st_mode)) {
        kerr_set(e, KOPT_E_INTERNAL, "sandbox: work directory %s does not exist", o->workdir);
        return -1;
    }
    int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1}, pst[2] = {-1, -1};
    if (sb_pipe(pin) || sb_pipe(pout) || sb_pipe(perr) || sb_pipe(pst)) {
        int en = errno;
        int *all[] = {pin, pout, perr, pst};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 2; j++)
                if (all[i][j] >= 0) close(all[i][j]);
        kerr_set(e, KOPT_E_INTERNAL, "sandbox: pipe: %s", strerror(en));
        return -1;
    }
    /* the child's ends must survive the exec: they are dup2'd onto 0-2 (dup2 clears CLOEXEC) */
    sigset_t term, old;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, &old);
    pid_t kopt = getpid();
    *sup = fork();
    if (*sup == 0) {
        close(pin[1]);
        close(pout[0]);
        close(perr[0]);
        close(pst[0]);
        sb_supervise(o, argv, pin[0], pout[1], perr[1], pst[1], kopt);
    }
    int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(pin[0]);
    close(pout[1]);
    close(perr[1]);
    close(pst[1]);
    if (*sup < 0) {
        close(pin[1]);
        close(pout[0]);
        close(perr[0]);
        close(pst[0]);
        kerr_set(e, KOPT_E_INTERNAL, "sandbox: fork: %s", strerror(fork_errno));
        return -1;
    }
    fds[0] = pin[1], fds[1] = pout[0], fds[2] = perr[0], fds[3] = pst[0];
    return 0;
}

/* The supervisor's status bytes (setup, then the command's wait status) into r. */
static void sb_status(const sandbox_opts *o, const kbuf *stbuf, sandbox_result *r) {
    sb_setup s = {0, 0, 0, 0};
    if (stbuf->len >= sizeof s) {
        memcpy(&s, stbuf->data, sizeof s);
        r->ns = s.ns;
        r->pidns = s.ns && s.pidns;
        r->dropped_uid = s.dropped;
        if (!s.ns)
            snprintf(r->ns_why, sizeof r->ns_why, "%s",
                     o->no_ns ? "not asked for" : (s.ns_errno ? strerror(s.ns_errno) : "refused"));
    } else {
        snprintf(r->ns_why, sizeof r->ns_why, "the supervisor did not report");
    }
    if (stbuf->len >= sizeof s + sizeof(int)) {
        int cws;
        memcpy(&cws, stbuf->data + sizeof s, sizeof cws);
        if (WIFEXITED(cws)) r->exit_code = WEXITSTATUS(cws);
        if (WIFSIGNALED(cws)) r->term_signal = WTERMSIG(cws);
    } else {
        r->term_signal = SIGKILL;
    }
}

int sandbox_run(const sandbox_opts *o, char *const argv[], const char *in, size_t inlen, sandbox_result *r, kerr *e) {
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    double t0 = clock_now();
    pid_t sup;
    int fds[4];
    if (sb_launch(o, argv, &sup, fds, e)) return -1;
    int pin[2] = {-1, fds[0]}, pout[2] = {fds[1], -1}, perr[2] = {fds[2], -1}, pst[2] = {fds[3], -1};
    size_t out_cap = o->out_cap ? o->out_cap : (64u << 20);
    size_t err_cap = o->err_cap ? o->err_cap : (64u << 10);
    double timeout = o->timeout_s > 0 ? o->timeout_s : 60.0;
    fcntl(pin[1], F_SETFL, O_NONBLOCK);
    if (inlen == 0) {
        close(pin[1]);
        pin[1] = -1;
    }
    size_t sent = 0;
    kbuf stbuf = {0};
    int fds_open = 3; /* out, err, status */
    int fout = pout[0], ferr = perr[0], fst = pst[0];
    double deadline = t0 + timeout, kill_at = 0;
    int termed = 0;
    char chunk[65536];
    while (fds_open > 0) {
        struct pollfd pf[4];
        int np = 0, iout = -1, ierr = -1, ist = -1, iin = -1;
        if (fout >= 0) pf[iout = np++] = (struct pollfd){fout, POLLIN, 0};
        if (ferr >= 0) pf[ierr = np++] = (struct pollfd){ferr, POLLIN, 0};
        if (fst >= 0) pf[ist = np++] = (struct pollfd){fst, POLLIN, 0};
        if (pin[1] >= 0) pf[iin = np++] = (struct pollfd){pin[1], POLLOUT, 0};
        double now = clock_now();
        if (!termed && now >= deadline) {
            r->timed_out = 1;
            kill(sup, SIGTERM);
            termed = 1;
            kill_at = now + SB_GRACE_S;
        }
        if (termed && now >= kill_at) {
            kill(-sup, SIGKILL);
            kill(sup, SIGKILL);
            break;
        }
        double until = termed ? kill_at : deadline;
        int ms = (int)((until - now) * 1000) + 1;
        int k = poll(pf, (nfds_t)np, ms);
        if (k < 0 && errno != EINTR) break;
        if (k <= 0) continue;
        if (iin >= 0 && (pf[iin].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(pin[1], in + sent, inlen - sent);
            if (w > 0) sent += (size_t)w;
            if (w < 0 && errno != EAGAIN && errno != EINTR) sent = inlen;
            if (sent >= inlen) {
                close(pin[1]);
                pin[1] = -1;
            }
        }
        int *fdp[3] = {&fout, &ferr, &fst};
        int idx[3] = {iout, ierr, ist};
        for (int i = 0; i < 3; i++) {
            if (idx[i] < 0 || !(pf[idx[i]].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(*fdp[i], chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                close(*fdp[i]);
                *fdp[i] = -1;
                fds_open--;
                continue;
            }
            if (i == 0) {
                if (r->out.len + (size_t)n > out_cap) {
                    kbuf_append(&r->out, chunk, out_cap - r->out.len);
                    if (!r->out_overflow && !termed) {
                        r->out_overflow = 1;
                        kill(sup, SIGTERM);
                        termed = 1;
                        kill_at = clock_now() + SB_GRACE_S;
                    }
                } else {
                    kbuf_append(&r->out, chunk, (size_t)n);
                }
            } else if (i == 1) {
                size_t room = r->err.len < err_cap ? err_cap - r->err.len : 0;
                kbuf_append(&r->err, chunk, (size_t)n < room ? (size_t)n : room);
            } else {
                kbuf_append(&stbuf, chunk, (size_t)n);
            }
        }
    }
    if (pin[1] >= 0) close(pin[1]);
    if (fout >= 0) close(fout);
    if (ferr >= 0) close(ferr);
    if (fst >= 0) close(fst);
    int ws = 0;
    while (waitpid(sup, &ws, 0) < 0 && errno == EINTR) {}
    kill(-sup, SIGKILL); /* the supervisor's session, if anything of it is left */
    r->wall_s = clock_now() - t0;
    sb_status(o, &stbuf, r);
    kbuf_free(&stbuf);
    return 0;
}

void sandbox_result_free(sandbox_result *r) {
    if (!r) return;
    kbuf_free(&r->out);
    kbuf_free(&r->err);
}

const char *sandbox_describe(const sandbox_result *r) {
    static char line[320];
    snprintf(line, sizeof line, "%s%s%s, %s, rlimits (cpu, memory, file size, files), empty environment, timeout",
             r->ns ? (r->pidns ? "network and PID namespaces" : "network namespace") : "no namespaces (",
             r->ns ? "" : r->ns_why, r->ns ? "" : ")", r->dropped_uid ? "uid nobody" : "kopt's uid");
    return line;
}

const char *sandbox_session_describe(const sandbox_session *s) {
    sandbox_result r = {.ns = s->ns, .pidns = s->pidns, .dropped_uid = s->dropped_uid};
    snprintf(r.ns_why, sizeof r.ns_why, "%s", s->ns_why);
    return sandbox_describe(&r);
}

/* ---- a long-lived command: one line asked, one line answered -------------------------------- */

/* Reads what is there on fd into b (at most cap bytes kept in all); 0 at EOF or error. */
static int sb_drain(int fd, kbuf *b, size_t cap) {
    char chunk[4096];
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
    if (n <= 0) return 0;
    size_t room = b->len < cap ? cap - b->len : 0;
    kbuf_append(b, chunk, (size_t)n < room ? (size_t)n : room);
    return 1;
}

int sandbox_open(const sandbox_opts *o, char *const argv[], sandbox_session *s, kerr *e) {
    memset(s, 0, sizeof *s);
    s->in = s->out = s->err = s->st = -1;
    s->opts = *o;
    s->t0 = clock_now();
    int fds[4];
    if (sb_launch(o, argv, &s->sup, fds, e)) return -1;
    s->opts.env = NULL, s->opts.workdir = NULL; /* borrowed for the start only */
    s->in = fds[0], s->out = fds[1], s->err = fds[2], s->st = fds[3];
    for (int i = 0; i < 4; i++) fcntl(fds[i], F_SETFL, O_NONBLOCK);
    /* the setup comes first on the status pipe: namespaces, uid */
    double deadline = s->t0 + 10;
    while (s->status.len < sizeof(sb_setup) && clock_now() < deadline) {
        struct pollfd pf = {s->st, POLLIN, 0};
        if (poll(&pf, 1, 100) > 0 && !sb_drain(s->st, &s->status, 64)) break;
    }
    sandbox_result r = {0};
    sb_status(o, &s->status, &r);
    s->ns = r.ns, s->pidns = r.pidns, s->dropped_uid = r.dropped_uid;
    snprintf(s->ns_why, sizeof s->ns_why, "%s", r.ns_why);
    if (s->status.len < sizeof(sb_setup)) {
        sandbox_result dummy;
        sandbox_close(s, &dummy);
        sandbox_result_free(&dummy);
        kerr_set(e, KOPT_E_INTERNAL, "sandbox: the supervisor did not start");
        return -1;
    }
    return 0;
}

/* write(2) to a pipe whose reader may be gone: EPIPE, never a SIGPIPE that would end kopt. */
static ssize_t sb_write_nosig(int fd, const void *p, size_t n) {
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigprocmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EPIPE) {
        int en = errno;
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero); /* the pending SIGPIPE of this write, consumed */
        errno = en;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return w;
}

int sandbox_ask(sandbox_session *s, const char *line, size_t cap, double timeout_s, kbuf *answer, kerr *e) {
    if (s->dead) return kerr_set(e, KOPT_E_INTERNAL, "sandbox session: ended before (%s)", s->why);
    /* an answer before the question (a second line for the last one): the protocol is broken */
    struct pollfd early = {s->out, POLLIN, 0};
    if (line && (s->pending.len || (poll(&early, 1, 0) > 0 && (early.revents & POLLIN)))) {
        s->dead = 1;
        snprintf(s->why, sizeof s->why, "a line nobody asked for");
        return kerr_set(e, KOPT_E_INTERNAL, "sandbox session: a line nobody asked for");
    }
    kbuf req = KBUF_INIT;
    if (line) kbuf_printf(&req, "%s\n", line);
    size_t sent = 0;
    double deadline = clock_now() + (timeout_s > 0 ? timeout_s : 60);
    const char *why = NULL;
    char *nl = NULL;
    while (!why) {
        struct pollfd pf[3];
        int np = 0, iin = -1;
        pf[np++] = (struct pollfd){s->out, POLLIN, 0};
        pf[np++] = (struct pollfd){s->err, s->err >= 0 ? POLLIN : 0, 0};
        if (sent < req.len) pf[iin = np++] = (struct pollfd){s->in, POLLOUT, 0};
        double left = deadline - clock_now();
        if (left <= 0) {
            why = "no answer within the time limit";
            break;
        }
        int k = poll(pf, (nfds_t)np, (int)(left * 1000) + 1);
        if (k < 0 && errno != EINTR) why = "poll failed";
        if (k <= 0) continue;
        if (iin >= 0 && (pf[iin].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = sb_write_nosig(s->in, req.data + sent, req.len - sent);
            if (w > 0) sent += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != EINTR) why = "the command stopped reading";
        }
        if (s->err >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
            !sb_drain(s->err, &s->err_tail, 64 << 10)) {
            close(s->err);
            s->err = -1;
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            if (!sb_drain(s->out, &s->pending, cap + 2)) why = "the command ended";
            else if ((nl = memchr(s->pending.data, '\n', s->pending.len))) break;
            else if (s->pending.len > cap) why = "an answer longer than allowed";
        }
    }
    kbuf_free(&req);
    if (why) {
        s->dead = 1;
        snprintf(s->why, sizeof s->why, "%s", why);
        return kerr_set(e, KOPT_E_INTERNAL, "sandbox session: %s", why);
    }
    size_t n = (size_t)(nl - s->pending.data);
    if (n + 1 != s->pending.len) { /* one line per question: anything after it is not an answer */
        s->dead = 1;
        snprintf(s->why, sizeof s->why, "more than one line answered");
        return kerr_set(e, KOPT_E_INTERNAL, "sandbox session: more than one line answered");
    }
    answer->len = 0;
    kbuf_append(answer, s->pending.data, n);
    s->pending.len = 0;
    return 0;
}

void sandbox_close(sandbox_session *s, sandbox_result *r) {
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    if (s->in >= 0) close(s->in); /* end of questions: a server leaves */
    s->in = -1;
    double kill_at = clock_now() + SB_GRACE_S, hard_at = 0;
    int st_open = s->st >= 0;
    while (st_open && s->sup > 0) {
        double now = clock_now();
        if (!hard_at && now >= kill_at) {
            kill(s->sup, SIGTERM);
            hard_at = now + SB_GRACE_S;
        }
        if (hard_at && now >= hard_at) {
            kill(-s->sup, SIGKILL);
            kill(s->sup, SIGKILL);
            break;
        }
        struct pollfd pf[2] = {{s->st, POLLIN, 0}, {s->err, s->err >= 0 ? POLLIN : 0, 0}};
        if (poll(pf, 2, 50) <= 0) continue;
        if ((pf[1].revents & (POLLIN | POLLHUP | POLLERR)) && !sb_drain(s->err, &s->err_tail, 64 << 10)) {
            close(s->err);
            s->err = -1;
        }
        if ((pf[0].revents & (POLLIN | POLLHUP | POLLERR)) && !sb_drain(s->st, &s->status, 64)) st_open = 0;
    }
    int ws;
    if (s->sup > 0) {
        while (waitpid(s->sup, &ws, 0) < 0 && errno == EINTR) {}
        kill(-s->sup, SIGKILL);
    }
    int fds[4] = {s->in, s->out, s->err, s->st};
    for (int i = 0; i < 4; i++)
        if (fds[i] >= 0) close(fds[i]);
    r->wall_s = clock_now() - s->t0;
    sb_status(&s->opts, &s->status, r);
    kbuf_append(&r->err, s->err_tail.data ? s->err_tail.data : "", s->err_tail.len);
    kbuf_free(&s->pending);
    kbuf_free(&s->err_tail);
    kbuf_free(&s->status);
    memset(s, 0, sizeof *s);
    s->in = s->out = s->err = s->st = -1;
    s->dead = 1;
}
