/* worker.c — see worker.h for the contract. */
#include "worker/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/tknobs.h"
#include "worker/pycache.h"

extern char **environ;

#define WK_RING 16384            /* bytes of stderr kept for error messages */
#define WK_TAIL_LINES 5          /* stderr lines quoted in error messages */
#define WK_TAIL_CHARS 600        /* at most this many bytes of them */
#define WK_STOP_WAIT_S 5.0       /* worker_stop: time for a clean shutdown */
#define WK_FATAL_GRACE_S 1.0     /* fatal:true: time for the worker to exit by itself */
#define WK_EOF_GRACE_S 2.0       /* after EOF on stdout: time to collect the exit status */

typedef struct wk_setup {
    char *op;
    json_t *args;                /* owned; NULL when the request had no arguments */
    double timeout_s;
} wk_setup;

struct worker {
    /* configuration (owned copies) */
    char *python, *script, *log_path;
    double ready_timeout_s;
    int max_restarts;
    char **envp;                 /* the child's environment, NULL-terminated, owned */
    char **argv;                 /* [wrapper...,] python, script, NULL; owned */

    /* the running process; pid -1 and fds -1 when none */
    pid_t pid;
    int fd_in, fd_out, fd_err;
    int out_eof;
    int log_fd;                  /* -1 without log_path */
    int log_failed;              /* warned once about a failing log write */
    uint64_t log_bytes;          /* size of the log file (as found at open, plus our writes) */
    int log_full;                /* the cap was reached and the marker line written */
    int log_nl;                  /* the last byte written to the log was a newline */
    size_t max_line;             /* WORKER_MAX_LINE_BYTES or $KOPT_MAX_LINE_BYTES */
    size_t max_log;              /* WORKER_MAX_LOG_BYTES or $KOPT_MAX_LOG_BYTES */

    kbuf ob;                     /* bytes read from stdout */
    size_t ob_start;             /* first unconsumed byte of ob */
    size_t ob_scan;              /* bytes after ob_start known to contain no '\n' */

    char ring[WK_RING];          /* last bytes of stderr */
    uint64_t ring_total;         /* bytes ever put into the ring */

    json_t *info;                /* ready event */
    json_t *last_error;          /* error object of the last ok:false response */
    long long next_id;
    int restarts;
    kvec setups;                 /* wk_setup *, in order */
    kerr pending;                /* failure of a restart/replay, reported by the next call */
    worker_op_time op_times[WORKER_OP_TIMES_MAX]; /* wall time per op (worker.h) */
    size_t nop_times;
};

/* ------------------------------------------------------------------ small helpers */

/* Milliseconds to wait in poll() until `deadline` (INFINITY: forever), capped by cap_ms
 * (negative: no cap). */
static int wk_poll_ms(double deadline, int cap_ms) {
    if (isinf(deadline)) return cap_ms;
    double left = deadline - clock_now();
    if (left <= 0) return 0;
    double ms = ceil(left * 1000.0);
    if (ms > 1e9) ms = 1e9;
    int r = (int)ms;
    if (cap_ms >= 0 && r > cap_ms) r = cap_ms;
    return r;
}

static void wk_close(int *fd) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
}

static int wk_set_nonblock(int fd) {
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static const char *wk_signame(int sig) {
    switch (sig) {
    case SIGHUP: return "SIGHUP";
    case SIGINT: return "SIGINT";
    case SIGQUIT: return "SIGQUIT";
    case SIGILL: return "SIGILL";
    case SIGTRAP: return "SIGTRAP";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGKILL: return "SIGKILL";
    case SIGUSR1: return "SIGUSR1";
    case SIGSEGV: return "SIGSEGV";
    case SIGUSR2: return "SIGUSR2";
    case SIGPIPE: return "SIGPIPE";
    case SIGALRM: return "SIGALRM";
    case SIGTERM: return "SIGTERM";
    case SIGXCPU: return "SIGXCPU";
    case SIGXFSZ: return "SIGXFSZ";
    case SIGSYS: return "SIGSYS";
    default: return NULL;
    }
}

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0 if invalid. Rejects
 * overlong forms, surrogates and code points above U+10FFFF (as jansson does). */
static size_t wk_utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) { len = 2; cp = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; cp = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

/* Append s[0..n) to out as printable UTF-8: control characters become spaces (newlines
 * become " | " when join_lines), invalid bytes '?'. */
static void wk_put_clean(kbuf *out, const char *s, size_t n, int join_lines) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] == '\n' && join_lines) { kbuf_puts(out, " | "); i++; continue; }
        if (u[i] < 0x20 || u[i] == 0x7F) { kbuf_putc(out, ' '); i++; continue; }
        size_t l = wk_utf8_len(u + i, n - i);
        if (!l) { kbuf_putc(out, '?'); i++; continue; }
        kbuf_append(out, s + i, l);
        i += l;
    }
}

/* Set e from a message, truncated to fit e->msg without cutting a UTF-8 sequence. */
static int wk_fail(kerr *e, int code, const char *msg) {
    if (!e) return code;
    e->code = code;
    size_t n = strlen(msg), cap = sizeof e->msg - 1;
    if (n > cap) {
        n = cap;
        while (n > 0 && ((unsigned char)msg[n] & 0xC0) == 0x80) n--;
    }
    memcpy(e->msg, msg, n);
    e->msg[n] = '\0';
    return code;
}

/* The string value of j, or dflt when j is not a string. */
static const char *wk_str_or(const json_t *j, const char *dflt) {
    const char *s = json_string_value(j);
    return s ? s : dflt;
}

/* Prefix e->msg with context ("prefix: old message"), truncating safely. */
static void wk_prefix(kerr *e, const char *prefix) {
    if (!e) return;
    char *m = kasprintf("%s: %s", prefix, e->msg);
    wk_fail(e, e->code, m);
    free(m);
}

/* Append a suffix to e->msg, shortening the existing message if needed. */
static void wk_fail_suffix(kerr *e, const char *suffix) {
    if (!e) return;
    size_t cap = sizeof e->msg - 1, ls = strlen(suffix), lm = strlen(e->msg);
    if (ls > cap) return;
    if (lm + ls > cap) {
        lm = cap - ls;
        while (lm > 0 && ((unsigned char)e->msg[lm] & 0xC0) == 0x80) lm--;
    }
    memcpy(e->msg + lm, suffix, ls + 1);
}

int worker_code_to_kopt(const char *code) {
    static const struct { const char *code; int kopt; } map[] = {
        {"file_not_found", KOPT_E_NOFILE},
        {"syntax_error", KOPT_E_PROBLEM},
        {"import_error", KOPT_E_PROBLEM},
        {"no_model", KOPT_E_PROBLEM},
        {"no_get_inputs", KOPT_E_PROBLEM},
        {"no_get_init_inputs", KOPT_E_PROBLEM},
        {"bad_inputs", KOPT_E_PROBLEM},
        {"init_raises", KOPT_E_MODEL},
        {"model_raises", KOPT_E_MODEL},
        {"no_cuda", KOPT_E_NOGPU},
        {"not_loaded", KOPT_E_INTERNAL},
        {"compile_failed", KOPT_E_COMPILE},
        {"module_failed", KOPT_E_WORKER},
        {"cuda_error", KOPT_E_WORKER},
        {"out_of_memory", KOPT_E_WORKER},
        {"state_changed", KOPT_E_WORKER},
        {"bad_request", KOPT_E_INTERNAL},
        {"internal", KOPT_E_INTERNAL},
    };
    if (!code) return KOPT_E_INTERNAL;
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(code, map[i].code)) return map[i].kopt;
    return KOPT_E_INTERNAL;
}

/* A byte count from the environment variable `name` (a positive decimal number), else dflt. */
static size_t wk_env_bytes(const char *name, size_t dflt) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x == 0 || x > SIZE_MAX / 2 || v[0] == '-') {
        log_warn("ignoring %s=%s: not a positive number of bytes", name, v);
        return dflt;
    }
    return (size_t)x;
}

/* "64 MiB" for whole mebibytes, else "N bytes". */
static void wk_put_size(kbuf *m, size_t n) {
    if (n % (1u << 20) == 0) kbuf_printf(m, "%zu MiB", n >> 20);
    else kbuf_printf(m, "%zu bytes", n);
}

/* ------------------------------------------------------------------ stderr */

/* Append p[0..n) to the log file (no cap here); gives up for good after a failed write. */
static void wk_log_write(worker *w, const char *p, size_t n) {
    size_t off = 0;
    while (off < n && !w->log_failed) {
        ssize_t k = write(w->log_fd, p + off, n - off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            log_warn("cannot write the worker log %s: %s", w->log_path,
                     k < 0 ? strerror(errno) : "nothing written");
            w->log_failed = 1;
            break;
        }
        off += (size_t)k;
        w->log_bytes += (uint64_t)k;
        w->log_nl = p[off - 1] == '\n';
    }
}

/* Stderr bytes: into the log while it is under its cap (then the marker line, once), and into
 * the ring always. */
static void wk_err_ingest(worker *w, const char *p, size_t n) {
    if (w->log_fd >= 0 && !w->log_full && !w->log_failed && n > 0) {
        uint64_t room = w->log_bytes < w->max_log ? w->max_log - w->log_bytes : 0;
        size_t k = (uint64_t)n < room ? n : (size_t)room;
        wk_log_write(w, p, k);
        if (k < n && !w->log_failed) {
            char *mark = kasprintf("%s[kopt: worker log truncated at %zu bytes; further output "
                                   "dropped]\n", w->log_bytes > 0 && !w->log_nl ? "\n" : "",
                                   w->max_log);
            wk_log_write(w, mark, strlen(mark));
            free(mark);
            w->log_full = 1;
            log_warn("the worker log %s reached %zu bytes; further worker output is not logged",
                     w->log_path, w->max_log);
        }
    }
    if (n >= WK_RING) {   /* keep only the last WK_RING bytes */
        p += n - WK_RING;
        w->ring_total += n - WK_RING;
        n = WK_RING;
    }
    size_t pos = (size_t)(w->ring_total % WK_RING);
    size_t first = WK_RING - pos < n ? WK_RING - pos : n;
    memcpy(w->ring + pos, p, first);
    memcpy(w->ring, p + first, n - first);
    w->ring_total += n;
}

/* Read whatever stderr holds now (non-blocking). Closes the fd on EOF or error. */
static void wk_drain_err(worker *w) {
    char chunk[65536];
    while (w->fd_err >= 0) {
        ssize_t k = read(w->fd_err, chunk, sizeof chunk);
        if (k > 0) { wk_err_ingest(w, chunk, (size_t)k); continue; }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        wk_close(&w->fd_err);
    }
}

char *worker_stderr_tail(const worker *w, int max_lines) {
    kbuf out = KBUF_INIT;
    if (!w || w->ring_total == 0 || max_lines <= 0) return kbuf_steal(&out);
    size_t n = w->ring_total < WK_RING ? (size_t)w->ring_total : WK_RING;
    char *lin = kmalloc(n);
    size_t pos = (size_t)(w->ring_total % WK_RING);
    if (w->ring_total <= WK_RING) memcpy(lin, w->ring, n);
    else {
        memcpy(lin, w->ring + pos, WK_RING - pos);
        memcpy(lin + (WK_RING - pos), w->ring, pos);
    }
    /* drop trailing whitespace, then walk back over max_lines non-blank lines */
    size_t end = n;
    while (end > 0 && (lin[end - 1] == '\n' || lin[end - 1] == '\r' || lin[end - 1] == ' ' ||
                       lin[end - 1] == '\t'))
        end--;
    size_t start = end, i = end;
    int lines = 0;
    while (i > 0) {
        size_t ls = i;                     /* the line is lin[ls, i) */
        while (ls > 0 && lin[ls - 1] != '\n') ls--;
        int blank = 1;
        for (size_t j = ls; j < i; j++)
            if (lin[j] != ' ' && lin[j] != '\t' && lin[j] != '\r') blank = 0;
        if (!blank) {
            if (lines == max_lines) break;
            lines++;
            start = ls;
        }
        if (ls == 0) break;
        i = ls - 1;                        /* skip the '\n' before the line */
    }
    while (start < end && (lin[start] == '\n' || lin[start] == '\r')) start++;
    if (end - start > WK_TAIL_CHARS) {
        start = end - WK_TAIL_CHARS;
        while (start < end && ((unsigned char)lin[start] & 0xC0) == 0x80) start++;
    }
    /* collapse runs of newlines so blank lines do not show up as empty " |  | " */
    kbuf tmp = KBUF_INIT;
    for (size_t k = start; k < end; k++) {
        if (lin[k] == '\r') continue;
        if (lin[k] == '\n' && tmp.len > 0 && tmp.data[tmp.len - 1] == '\n') continue;
        kbuf_putc(&tmp, lin[k]);
    }
    wk_put_clean(&out, kbuf_str(&tmp), tmp.len, 1);
    kbuf_free(&tmp);
    free(lin);
    return kbuf_steal(&out);
}

/* Append "; stderr: <tail>" to a message when the worker wrote anything. */
static void wk_put_tail(const worker *w, kbuf *m) {
    char *t = worker_stderr_tail(w, WK_TAIL_LINES);
    if (*t) kbuf_printf(m, "; stderr: %s", t);
    free(t);
}

/* ------------------------------------------------------------------ stdout lines */

/* Bytes of stdout read but not yet consumed as lines. */
static size_t wk_out_pending(const worker *w) { return w->ob.len - w->ob_start; }

/* Read what stdout holds now into ob (non-blocking); sets out_eof on EOF. Stops reading once
 * more than max_line unconsumed bytes are held: the caller then finds complete lines to take or
 * a line over the cap, so ob stays under max_line + one chunk. */
static void wk_read_out(worker *w) {
    if (w->fd_out < 0) return;
    if (w->ob_start > 0) {   /* compact: drop consumed lines */
        size_t rest = w->ob.len - w->ob_start;
        memmove(w->ob.data, w->ob.data + w->ob_start, rest);
        w->ob.len = rest;
        w->ob.data[rest] = '\0';
        w->ob_start = 0;
    }
    char chunk[65536];
    while (wk_out_pending(w) <= w->max_line) {
        ssize_t k = read(w->fd_out, chunk, sizeof chunk);
        if (k > 0) { kbuf_append(&w->ob, chunk, (size_t)k); continue; }
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        w->out_eof = 1;
        wk_close(&w->fd_out);
        return;
    }
}

/* Next complete line of ob (without its '\n', NUL-terminated in place), or NULL. */
static char *wk_next_line(worker *w, size_t *len) {
    if (w->ob.len <= w->ob_start) return NULL;
    char *base = w->ob.data + w->ob_start;
    size_t avail = w->ob.len - w->ob_start;
    char *nl = memchr(base + w->ob_scan, '\n', avail - w->ob_scan);
    if (!nl) { w->ob_scan = avail; return NULL; }
    *nl = '\0';
    *len = (size_t)(nl - base);
    w->ob_start += *len + 1;
    w->ob_scan = 0;
    return base;
}

/* ------------------------------------------------------------------ process control */

/* Wait (without reaping) until the worker has exited or the deadline passes, draining its
 * pipes meanwhile. Returns 1 and fills *si when it has exited. */
static int wk_wait_exit(worker *w, double deadline, siginfo_t *si) {
    for (;;) {
        memset(si, 0, sizeof *si);
        int r = waitid(P_PID, (id_t)w->pid, si, WEXITED | WNOHANG | WNOWAIT);
        if (r == 0 && si->si_pid == w->pid) { wk_drain_err(w); return 1; }
        if (r < 0 && errno != EINTR) return 0;
        int ms = wk_poll_ms(deadline, 10);
        if (ms == 0) return 0;
        struct pollfd p[2] = {{.fd = w->fd_out, .events = POLLIN},
                              {.fd = w->fd_err, .events = POLLIN}};
        if (poll(p, 2, ms) > 0) {
            if (p[0].revents) {
                wk_read_out(w);
                /* nobody reads these lines any more: drop them rather than stop draining */
                if (wk_out_pending(w) > w->max_line) {
                    kbuf_reset(&w->ob);
                    w->ob_start = w->ob_scan = 0;
                }
            }
            if (p[1].revents) wk_drain_err(w);
        }
    }
}

/* Kill the process group, reap the worker, close the pipes. Safe when no worker runs. */
static void wk_kill(worker *w) {
    if (w->pid > 0) {
        /* the (possibly zombie) leader keeps the group id reserved until it is reaped */
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
        int st;
        while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR) {}
        log_debug("worker %d killed and reaped", (int)w->pid);
    }
    w->pid = -1;
    wk_close(&w->fd_in);
    wk_close(&w->fd_out);
    wk_close(&w->fd_err);
    kbuf_free(&w->ob);   /* it may have grown to max_line */
    w->ob_start = w->ob_scan = 0;
    w->out_eof = 0;
}

/* Describe how the worker went away after EOF on its stdout: waits a little for the exit
 * status and for stderr. *signaled is set when it died from a signal. */
static void wk_describe_exit(worker *w, kbuf *m, int *signaled, int *exited) {
    siginfo_t si;
    *signaled = *exited = 0;
    if (wk_wait_exit(w, clock_now() + WK_EOF_GRACE_S, &si)) {
        if (si.si_code == CLD_EXITED) {
            *exited = 1;
            kbuf_printf(m, "worker exited with status %d", si.si_status);
        } else {
            const char *name = wk_signame(si.si_status);
            *signaled = 1;
            if (name) kbuf_printf(m, "worker killed by %s", name);
            else kbuf_printf(m, "worker killed by signal %d", si.si_status);
            if (si.si_code == CLD_DUMPED) kbuf_puts(m, " (core dumped)");
        }
    } else {
        kbuf_puts(m, "worker closed its stdout");
    }
}

/* Wait for one message. id < 0: the ready event; else the response with that id. Sends
 * wbuf[0..wlen) meanwhile. Returns 0 with *msg (new ref) or a code with e set; on a non-zero
 * return the worker is unusable (the caller kills it). */
static int wk_wait_msg(worker *w, long long id, const char *op, double timeout_s,
                       const char *wbuf, size_t wlen, json_t **msg, kerr *e) {
    double t0 = clock_now();
    double deadline = timeout_s > 0 ? t0 + timeout_s : INFINITY;
    size_t woff = 0;
    kbuf m = KBUF_INIT;
    int code = KOPT_E_WORKER;
    *msg = NULL;
    for (;;) {
        size_t len;
        char *line;
        while ((line = wk_next_line(w, &len))) {
            if (len > w->max_line) goto too_long;
            json_error_t je;
            json_t *j = json_loadb(line, len, 0, &je);
            if (!j || !json_is_object(j)) {
                json_decref(j);
                kbuf_puts(&m, "worker sent a line that is not a JSON object");
                kbuf_puts(&m, id < 0 ? " before it was ready" : "");
                if (op) kbuf_printf(&m, " while handling '%s'", op);
                kbuf_puts(&m, ": '");
                wk_put_clean(&m, line, len < 120 ? len : 120, 0);
                kbuf_puts(&m, len > 120 ? "...'" : "'");
                goto fail;
            }
            const char *ev = json_string_value(json_object_get(j, "event"));
            if (ev) {
                if (id < 0 && !strcmp(ev, "ready")) { *msg = j; kbuf_free(&m); return 0; }
                if (!strcmp(ev, "log")) {
                    const char *lm = json_string_value(json_object_get(j, "message"));
                    log_debug("worker %d: %s", (int)w->pid, lm ? lm : "(log event)");
                } else {
                    log_debug("worker %d: ignoring event '%s'", (int)w->pid, ev);
                }
                json_decref(j);
                continue;
            }
            if (id < 0) {
                json_decref(j);
                kbuf_puts(&m, "worker's first message was not the ready event: '");
                wk_put_clean(&m, line, len < 120 ? len : 120, 0);
                kbuf_puts(&m, len > 120 ? "...'" : "'");
                goto fail;
            }
            json_t *jid = json_object_get(j, "id");
            if (!json_is_integer(jid) || json_integer_value(jid) != id) {
                if (json_is_integer(jid))
                    kbuf_printf(&m, "worker answered id %lld while id %lld ('%s') was pending",
                                (long long)json_integer_value(jid), id, op);
                else
                    kbuf_printf(&m, "worker sent a message without an integer id while '%s' "
                                    "was pending", op);
                json_decref(j);
                goto fail;
            }
            *msg = j;
            kbuf_free(&m);
            return 0;
        }
        if (wk_out_pending(w) > w->max_line) goto too_long;   /* no newline in sight */
        if (w->out_eof) {
            int sig, ex;
            wk_describe_exit(w, &m, &sig, &ex);
            if (id < 0) {
                kbuf_puts(&m, " before it was ready");
                if (ex) code = KOPT_E_PYTHON;
            } else {
                kbuf_printf(&m, " while handling '%s'", op);
            }
            wk_put_tail(w, &m);
            if (code == KOPT_E_PYTHON)
                kbuf_printf(&m, "; hint: check that '%s' is a working python3 (--python or "
                                "KOPT_PYTHON)", w->python);
            goto fail;
        }
        int ms = wk_poll_ms(deadline, -1);
        if (ms == 0) {
            wk_drain_err(w);
            if (id < 0)
                kbuf_printf(&m, "worker sent no ready event within %.1f s", timeout_s);
            else
                kbuf_printf(&m, "worker did not answer '%s' within %.1f s", op, timeout_s);
            wk_put_tail(w, &m);
            goto fail;
        }
        struct pollfd p[3] = {{.fd = w->fd_out, .events = POLLIN},
                              {.fd = w->fd_err, .events = POLLIN},
                              {.fd = woff < wlen ? w->fd_in : -1, .events = POLLOUT}};
        int r = poll(p, 3, ms);
        if (r < 0) {
            if (errno == EINTR) continue;
            kbuf_printf(&m, "poll on the worker's pipes failed: %s", strerror(errno));
            code = KOPT_E_INTERNAL;
            goto fail;
        }
        if (p[1].revents) wk_drain_err(w);
        if (p[2].revents) {
            while (woff < wlen) {
                ssize_t k = write(w->fd_in, wbuf + woff, wlen - woff);
                if (k > 0) { woff += (size_t)k; continue; }
                if (k < 0 && errno == EINTR) continue;
                if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
                /* EPIPE: the worker closed stdin (it is going away); its EOF follows */
                log_debug("writing to worker %d failed: %s", (int)w->pid, strerror(errno));
                woff = wlen;
                wk_close(&w->fd_in);
            }
        }
        if (p[0].revents) wk_read_out(w);
    }
too_long:
    kbuf_puts(&m, "the worker sent a line longer than ");
    wk_put_size(&m, w->max_line);
    kbuf_puts(&m, id < 0 ? " before it was ready" : "");
    if (op) kbuf_printf(&m, " while handling '%s'", op);
fail:
    wk_fail(e, code, kbuf_str(&m));
    kbuf_free(&m);
    return code;
}

/* Names the worker inherits from kopt's environment (worker.h): exact names, then prefixes. */
static const char *const WK_ENV_NAMES[] = {
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "TMP", "TEMP",
    "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "CC", "CXX", "VIRTUAL_ENV", "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", NULL};
static const char *const WK_ENV_PREFIXES[] = {"LC_",    "PYTHON", "CUDA_", "NVIDIA_", "TORCH", "PYTORCH_", "TRITON_",
                                              "CUBLAS", "CUDNN_", "NCCL_", "OMP_",    "MKL_",  "KOPT_",   "FAKE_",
                                              NULL};

/* Whether `name` (len bytes) is one of the comma-separated names of `list`. */
static int wk_in_list(const char *list, const char *name, size_t len) {
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && !strncmp(p, name, len)) return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int worker_env_allowed(const char *entry, const char *extra_names) {
    const char *eq = entry ? strchr(entry, '=') : NULL;
    if (!eq || eq == entry) return 0;
    size_t len = (size_t)(eq - entry);
    for (const char *const *n = WK_ENV_NAMES; *n; n++)
        if (strlen(*n) == len && !strncmp(*n, entry, len)) return 1;
    for (const char *const *p = WK_ENV_PREFIXES; *p; p++)
        if (len >= strlen(*p) && !strncmp(*p, entry, strlen(*p))) return 1;
    return wk_in_list(extra_names, entry, len);
}

/* The bytes of entry's "NAME=" (entry is "NAME=..." with a non-empty NAME, checked by callers). */
static size_t wk_name_len(const char *entry) { return (size_t)(strchr(entry, '=') - entry) + 1; }

/* The index of the entry of v with the same NAME as `entry` ("NAME=" or "NAME=VALUE"), or
 * v->len. */
static size_t wk_env_find(const kvec *v, const char *entry) {
    size_t i, n = wk_name_len(entry);
    for (i = 0; i < v->len; i++)
        if (!strncmp(v->items[i], entry, n)) break;
    return i;
}

/* Whether the NULL-terminated NAME=VALUE list extra sets the NAME of `entry` ("NAME="). */
static int wk_extra_sets(const char *const *extra, const char *entry) {
    for (const char *const *x = extra; x && *x; x++)
        if (!strncmp(*x, entry, wk_name_len(entry))) return 1;
    return 0;
}

/* Bytecode under kopt's own directory (pycache.h) unless the entries already name one: adds
 * PYTHONPYCACHEPREFIX and drops PYTHONDONTWRITEBYTECODE, unless extra (opts.env) set it. */
static void wk_env_pycache(kvec *v, const char *const *extra) {
    if (wk_env_find(v, "PYTHONPYCACHEPREFIX=") < v->len) return;   /* opts.env named one */
    char why[256];
    char *dir = pycache_dir(why, sizeof why);
    if (!dir) {
        if (why[0]) log_debug("worker: no bytecode directory: %s", why);
        return;
    }
    size_t i = wk_env_find(v, "PYTHONDONTWRITEBYTECODE=");
    if (i < v->len && !wk_extra_sets(extra, "PYTHONDONTWRITEBYTECODE=")) {
        free(v->items[i]);
        v->items[i] = v->items[v->len - 1];
        v->len--;
    }
    kvec_push(v, kasprintf("PYTHONPYCACHEPREFIX=%s", dir));
    free(dir);
}

/* Build the child's environment: the allowed part of kopt's (worker_env_allowed) less Triton's
 * code-generation knobs set away from their defaults (tknobs.h), overridden by extra, plus
 * PYTHONUNBUFFERED=1 and kopt's bytecode directory (wk_env_pycache). */
static int wk_build_env(worker *w, const char *const *extra, kerr *e) {
    kvec v = {0};
    const char *pass = getenv("KOPT_WORKER_ENV");
    static int warned; /* once per kopt process: restarts and a second worker say nothing new */
    for (char **p = environ; p && *p; p++) {
        if (!worker_env_allowed(*p, pass)) continue;
        if (tknob_changed(*p)) { /* kopt judges Triton's default compile, as the sandbox does */
            if (!warned)
                log_warn("the worker runs without %.*s: a Triton knob that changes the code Triton generates "
                         "(kopt verifies Triton's default compile; a module kopt writes runs Inductor's kernels "
                         "where one is set)",
                         (int)(strchr(*p, '=') - *p), *p);
            continue;
        }
        kvec_push(&v, kstrdup(*p));
    }
    warned = 1;
    for (const char *const *x = extra; x && *x; x++) {
        const char *eq = strchr(*x, '=');
        if (!eq || eq == *x) {
            kvec_free_all(&v, free);
            return kerr_set(e, KOPT_E_INTERNAL, "worker environment entry '%s' is not NAME=VALUE",
                            *x);
        }
        size_t i = wk_env_find(&v, *x);
        if (i < v.len) { free(v.items[i]); v.items[i] = kstrdup(*x); }
        else kvec_push(&v, kstrdup(*x));
    }
    if (wk_env_find(&v, "PYTHONUNBUFFERED=") == v.len) kvec_push(&v, kstrdup("PYTHONUNBUFFERED=1"));
    wk_env_pycache(&v, extra);
    kvec_push(&v, NULL);
    w->envp = (char **)v.items;   /* the array is owned from now on; freed in wk_free */
    return 0;
}

/* Move fd onto target in the child, leaving target without FD_CLOEXEC. */
static void wk_child_fd(int fd, int target) {
    if (dup2(fd, target) < 0) _exit(127);
    int fl = fcntl(target, F_GETFD);
    if (fl >= 0) fcntl(target, F_SETFD, fl & ~FD_CLOEXEC);
}

/* Fork/exec the worker and wait for its ready event. On failure nothing is left running. */
static int wk_spawn(worker *w, kerr *e) {
    int in[2] = {-1, -1}, out[2] = {-1, -1}, er[2] = {-1, -1}, ex[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(er, O_CLOEXEC) ||
        pipe2(ex, O_CLOEXEC)) {
        int r = kerr_set(e, KOPT_E_INTERNAL, "cannot create pipes for the worker: %s",
                         strerror(errno));
        int *all[] = {in, out, er, ex};
        for (int i = 0; i < 4; i++) { wk_close(&all[i][0]); wk_close(&all[i][1]); }
        return r;
    }
    char **argv = w->argv;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int r = kerr_set(e, KOPT_E_INTERNAL, "cannot fork the worker: %s", strerror(errno));
        int *all[] = {in, out, er, ex};
        for (int i = 0; i < 4; i++) { wk_close(&all[i][0]); wk_close(&all[i][1]); }
        return r;
    }
    if (pid == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        signal(SIGPIPE, SIG_DFL);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        /* lift the child ends above 2 first so that the dup2s cannot clobber each other */
        int a = fcntl(in[0], F_DUPFD_CLOEXEC, 3), b = fcntl(out[1], F_DUPFD_CLOEXEC, 3),
            c = fcntl(er[1], F_DUPFD_CLOEXEC, 3);
        if (a < 0 || b < 0 || c < 0) _exit(127);
        wk_child_fd(a, 0);
        wk_child_fd(b, 1);
        wk_child_fd(c, 2);
        execvpe(argv[0], argv, w->envp);
        int err = errno;
        ssize_t k = write(ex[1], &err, sizeof err);
        (void)k;
        _exit(127);
    }
    setpgid(pid, pid);   /* also in the parent: no window where kill(-pid) misses it */
    wk_close(&in[0]);
    wk_close(&out[1]);
    wk_close(&er[1]);
    wk_close(&ex[1]);
    int err = 0;
    ssize_t k;
    while ((k = read(ex[0], &err, sizeof err)) < 0 && errno == EINTR) {}
    wk_close(&ex[0]);
    if (k == (ssize_t)sizeof err) {
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
        wk_close(&in[1]);
        wk_close(&out[0]);
        wk_close(&er[0]);
        return kerr_set(e, KOPT_E_PYTHON,
                        "cannot run python '%s': %s; hint: set --python or KOPT_PYTHON to a "
                        "python3 with torch and triton", w->python, strerror(err));
    }
    w->pid = pid;
    w->fd_in = in[1];
    w->fd_out = out[0];
    w->fd_err = er[0];
    w->out_eof = 0;
    w->ring_total = 0;
    kbuf_reset(&w->ob);
    w->ob_start = w->ob_scan = 0;
    if (wk_set_nonblock(w->fd_in) || wk_set_nonblock(w->fd_out) || wk_set_nonblock(w->fd_err)) {
        int r = kerr_set(e, KOPT_E_INTERNAL, "cannot configure the worker's pipes: %s",
                         strerror(errno));
        wk_kill(w);
        return r;
    }
    json_t *ready;
    int rc = wk_wait_msg(w, -1, NULL, w->ready_timeout_s, NULL, 0, &ready, e);
    if (rc) { wk_kill(w); return rc; }
    json_t *proto = json_object_get(ready, "protocol");
    if (!json_is_integer(proto) || json_integer_value(proto) != 1) {
        char *s = json_dumps(proto ? proto : json_null(), JSON_ENCODE_ANY);
        rc = kerr_set(e, KOPT_E_WORKER,
                      "worker speaks protocol %s, kopt speaks protocol 1; hint: the worker "
                      "script %s does not belong to this kopt", s ? s : "?", w->script);
        free(s);
        json_decref(ready);
        wk_kill(w);
        return rc;
    }
    json_decref(w->info);
    w->info = ready;
    log_debug("worker %d ready (python %s, torch %s, device %s)", (int)pid,
              wk_str_or(json_object_get(ready, "python"), "?"),
              wk_str_or(json_object_get(ready, "torch"), "none"),
              wk_str_or(json_object_get(ready, "device"), "none"));
    return 0;
}

/* ------------------------------------------------------------------ requests */

/* Send one request and wait for its response (the whole response object in *resp). A non-zero
 * return with *sent set means the worker broke (already killed here); with *sent clear, the
 * request could not be encoded and the worker was not touched. args is borrowed. */
static int wk_request(worker *w, const char *op, const json_t *args, double timeout_s,
                      json_t **resp, int *sent, kerr *e) {
    *sent = 0;
    long long id = w->next_id++;
    json_t *req = json_object();
    if (args) json_object_update(req, (json_t *)args);
    json_object_set_new(req, "id", json_integer(id));
    json_object_set_new(req, "op", json_string(op));
    char *s = json_dumps(req, JSON_COMPACT);
    json_decref(req);
    if (!s) return kerr_set(e, KOPT_E_INTERNAL, "cannot encode the '%s' request", op);
    kbuf line = KBUF_INIT;
    kbuf_puts(&line, s);
    kbuf_putc(&line, '\n');
    free(s);
    *sent = 1;
    double t0 = clock_now();
    int rc = wk_wait_msg(w, id, op, timeout_s, line.data, line.len, resp, e);
    kbuf_free(&line);
    /* where a run's time goes, request by request (kopt -vv) */
    const char *tag = args ? json_string_value(json_object_get(args, "keep")) : NULL;
    log_debug("worker %d: '%s'%s%s answered in %.3f s%s", (int)w->pid, op, tag ? " keep=" : "", tag ? tag : "",
              clock_now() - t0, rc ? " (failed)" : "");
    if (rc) { wk_kill(w); return rc; }
    json_t *ok = json_object_get(*resp, "ok");
    if (!json_is_boolean(ok)) {
        json_decref(*resp);
        *resp = NULL;
        wk_kill(w);
        return kerr_set(e, KOPT_E_WORKER, "worker's response to '%s' has no boolean 'ok'", op);
    }
    return 0;
}

/* Turn an ok:false response into a kopt error; returns the code and whether it was fatal. */
static int wk_remote_error(worker *w, const json_t *resp, const char *op, int *fatal, kerr *e) {
    json_t *err = json_object_get(resp, "error");
    const char *code = json_string_value(json_object_get(err, "code"));
    const char *msg = json_string_value(json_object_get(err, "message"));
    *fatal = json_is_true(json_object_get(err, "fatal"));
    json_decref(w->last_error);
    w->last_error = json_is_object(err) ? json_incref(err) : NULL;
    int rc = worker_code_to_kopt(code);
    if (msg && *msg) return wk_fail(e, rc, msg);
    char *m = kasprintf("worker reported %s on '%s'", code ? code : "an error", op);
    wk_fail(e, rc, m);
    free(m);
    return rc;
}

/* Replay the setup requests on a fresh worker. Non-zero: *broke says whether the worker died
 * (it is then already killed) or is up with a failed replay. */
static int wk_replay(worker *w, int *broke, kerr *e) {
    *broke = 0;
    for (size_t i = 0; i < w->setups.len; i++) {
        wk_setup *s = w->setups.items[i];
        json_t *resp;
        int sent;
        log_info("replaying '%s' on the restarted worker", s->op);
        int rc = wk_request(w, s->op, s->args, s->timeout_s, &resp, &sent, e);
        if (rc) {
            if (sent) *broke = 1;
            char *pfx = kasprintf("replaying '%s' after a worker restart", s->op);
            wk_prefix(e, pfx);
            free(pfx);
            return rc;
        }
        if (json_is_true(json_object_get(resp, "ok"))) { json_decref(resp); continue; }
        int fatal;
        rc = wk_remote_error(w, resp, s->op, &fatal, e);
        json_decref(resp);
        char *pfx = kasprintf("replaying '%s' after a worker restart", s->op);
        wk_prefix(e, pfx);
        free(pfx);
        if (fatal) { *broke = 1; wk_kill(w); }
        return rc;
    }
    return 0;
}

/* After the worker broke (or reported fatal): kill it and start a fresh one, replaying the
 * setup requests. Returns 1 when a worker runs again (a failed replay is left in w->pending),
 * -1 when every allowed attempt failed (the failure is left in w->pending), 0 when
 * max_restarts was already reached. */
static int wk_recover(worker *w, double grace_s) {
    if (w->pid > 0 && grace_s > 0) {
        siginfo_t si;
        wk_wait_exit(w, clock_now() + grace_s, &si);
    }
    wk_kill(w);
    if (w->restarts >= w->max_restarts) return 0;
    kerr last = {0};
    while (w->restarts < w->max_restarts) {
        w->restarts++;
        log_warn("restarting the worker (restart %d of at most %d)", w->restarts,
                 w->max_restarts);
        kerr se = {0};
        if (wk_spawn(w, &se)) { last = se; continue; }
        int broke;
        if (!wk_replay(w, &broke, &se)) return 1;
        if (!broke) { w->pending = se; return 1; }
        last = se;
    }
    w->pending = last;
    char *pfx = kasprintf("the worker could not be restarted (%d restarts used)", w->restarts);
    wk_prefix(&w->pending, pfx);
    free(pfx);
    return -1;
}

static void wk_setup_free(void *p) {
    wk_setup *s = p;
    if (!s) return;
    free(s->op);
    json_decref(s->args);
    free(s);
}

static void wk_remember(worker *w, const char *op, json_t *args, double timeout_s) {
    for (size_t i = 0; i < w->setups.len; i++) {
        wk_setup *s = w->setups.items[i];
        if (strcmp(s->op, op)) continue;
        wk_setup_free(s);
        memmove(&w->setups.items[i], &w->setups.items[i + 1],
                (w->setups.len - i - 1) * sizeof *w->setups.items);
        w->setups.len--;
        break;
    }
    wk_setup *s = kcalloc(1, sizeof *s);
    s->op = kstrdup(op);
    s->args = args ? json_deep_copy(args) : NULL;
    s->timeout_s = timeout_s;
    kvec_push(&w->setups, s);
}

/* Adds one call of `op` taking `secs` to the per-op table: its own row, or "other" when the
 * name is too long or the table has no row left for a new name (worker.h). */
static void wk_op_time_add(worker *w, const char *op, double secs) {
    static const char other[] = "other";
    const char *name = strlen(op) < WORKER_OP_NAME_MAX ? op : other;
    worker_op_time *row = NULL;
    for (size_t i = 0; i < w->nop_times && !row; i++)
        if (!strcmp(w->op_times[i].name, name)) row = &w->op_times[i];
    if (!row && w->nop_times >= WORKER_OP_TIMES_MAX - 1 && strcmp(name, other)) {
        name = other;   /* no row left for a new name: the last free one is "other"'s */
        for (size_t i = 0; i < w->nop_times && !row; i++)
            if (!strcmp(w->op_times[i].name, other)) row = &w->op_times[i];
    }
    if (!row) {
        if (w->nop_times >= WORKER_OP_TIMES_MAX) return;   /* unreachable: "other" has a row */
        row = &w->op_times[w->nop_times++];
        snprintf(row->name, sizeof row->name, "%s", name);
    }
    row->seconds += secs > 0 ? secs : 0;
    row->calls++;
}

/* The call itself: send, wait, map failures, restart (worker.h); wk_call times it. */
static int wk_call_body(worker *w, const char *op, json_t *args, double timeout_s, int setup,
                        json_t **result, kerr *e) {
    if (result) *result = NULL;
    if (!w || !op || !*op) {
        json_decref(args);
        return kerr_set(e, KOPT_E_INTERNAL, "worker_call without a worker or an op");
    }
    json_decref(w->last_error);
    w->last_error = NULL;
    if (args && !json_is_object(args)) {
        json_decref(args);
        return kerr_set(e, KOPT_E_INTERNAL, "arguments of '%s' are not a JSON object", op);
    }
    if (w->pending.code) {
        json_decref(args);
        if (e) *e = w->pending;
        memset(&w->pending, 0, sizeof w->pending);
        return e ? e->code : KOPT_E_WORKER;
    }
    if (w->pid <= 0) {
        json_decref(args);
        return kerr_set(e, KOPT_E_WORKER,
                        "the worker is not running and cannot be restarted (max_restarts %d "
                        "reached)", w->max_restarts);
    }
    json_t *resp = NULL;
    int sent;
    int rc = wk_request(w, op, args, timeout_s, &resp, &sent, e);
    if (rc && !sent) { json_decref(args); return rc; }
    if (rc) {
        json_decref(args);
        int restarted = wk_recover(w, 0);
        json_decref(w->last_error);   /* a failed replay's error is not this call's */
        w->last_error = NULL;
        if (restarted > 0) wk_fail_suffix(e, "; the worker was restarted");
        else if (restarted < 0) wk_fail_suffix(e, "; restarting the worker failed");
        else {
            char sfx[96];
            snprintf(sfx, sizeof sfx, "; the worker was not restarted: max_restarts (%d) reached",
                     w->max_restarts);
            wk_fail_suffix(e, sfx);
        }
        return rc;
    }
    if (json_is_true(json_object_get(resp, "ok"))) {
        json_t *res = json_object_get(resp, "result");
        if (result) *result = res ? json_incref(res) : json_object();
        json_decref(resp);
        if (setup) wk_remember(w, op, args, timeout_s);
        json_decref(args);
        return 0;
    }
    int fatal;
    rc = wk_remote_error(w, resp, op, &fatal, e);
    json_decref(resp);
    json_decref(args);
    if (fatal) {
        log_warn("the worker reported a fatal error on '%s'; restarting it", op);
        json_t *keep = json_incref(w->last_error);   /* survives the replay */
        int restarted = wk_recover(w, WK_FATAL_GRACE_S);
        if (restarted == 0)
            log_warn("the worker was not restarted: max_restarts (%d) reached",
                     w->max_restarts);
        else if (restarted < 0)
            log_warn("%s", w->pending.msg);
        json_decref(w->last_error);
        w->last_error = keep;
    }
    return rc;
}

/* A call (wk_call_body) with its wall time added to the op's row of the per-op table. */
static int wk_call(worker *w, const char *op, json_t *args, double timeout_s, int setup,
                   json_t **result, kerr *e) {
    double t0 = clock_now();
    int rc = wk_call_body(w, op, args, timeout_s, setup, result, e);
    if (w && op && *op) wk_op_time_add(w, op, clock_now() - t0);
    return rc;
}

int worker_call(worker *w, const char *op, json_t *args, double timeout_s, json_t **result,
                kerr *e) {
    return wk_call(w, op, args, timeout_s, 0, result, e);
}

int worker_call_setup(worker *w, const char *op, json_t *args, double timeout_s,
                      json_t **result, kerr *e) {
    return wk_call(w, op, args, timeout_s, 1, result, e);
}

/* ------------------------------------------------------------------ lifetime */

static void wk_free(worker *w) {
    free(w->python);
    free(w->script);
    free(w->log_path);
    if (w->envp)
        for (char **p = w->envp; *p; p++) free(*p);
    free(w->envp);
    if (w->argv)
        for (char **p = w->argv; *p; p++) free(*p);
    free(w->argv);
    wk_close(&w->log_fd);
    kbuf_free(&w->ob);
    json_decref(w->info);
    json_decref(w->last_error);
    kvec_free_all(&w->setups, wk_setup_free);
    free(w);
}

int worker_start(const worker_opts *o, worker **out, kerr *e) {
    static const worker_opts none = {0};
    if (!o) o = &none;
    *out = NULL;
    signal(SIGPIPE, SIG_IGN);
    worker *w = kcalloc(1, sizeof *w);
    w->pid = -1;
    w->fd_in = w->fd_out = w->fd_err = w->log_fd = -1;
    w->next_id = 1;
    const char *py = o->python;
    if (!py || !*py) py = getenv("KOPT_PYTHON");
    if (!py || !*py) py = "python3";
    w->python = kstrdup(py);
    if (o->script && *o->script) w->script = kstrdup(o->script);
    else {
        char *root = fs_kopt_root();
        w->script = fs_join(root, "worker/kopt_worker.py");
        free(root);
    }
    size_t nw = 0;
    while (o->wrapper && o->wrapper[nw]) nw++;
    w->argv = kcalloc(nw + 3, sizeof *w->argv);
    for (size_t i = 0; i < nw; i++) w->argv[i] = kstrdup(o->wrapper[i]);
    w->argv[nw] = kstrdup(w->python);
    w->argv[nw + 1] = kstrdup(w->script);
    w->ready_timeout_s = o->ready_timeout_s > 0 ? o->ready_timeout_s : 120.0;
    w->max_restarts = o->max_restarts == 0 ? 3 : (o->max_restarts < 0 ? 0 : o->max_restarts);
    w->max_line = wk_env_bytes("KOPT_MAX_LINE_BYTES", WORKER_MAX_LINE_BYTES);
    w->max_log = wk_env_bytes("KOPT_MAX_LOG_BYTES", WORKER_MAX_LOG_BYTES);
    int rc;
    if (!fs_exists(w->script)) {
        rc = kerr_set(e, KOPT_E_INTERNAL, "the worker script %s does not exist; hint: set "
                      "KOPT_ROOT to the kernelopt directory", w->script);
        wk_free(w);
        return rc;
    }
    if ((rc = wk_build_env(w, o->env, e))) { wk_free(w); return rc; }
    if (o->log_path && *o->log_path) {
        w->log_path = kstrdup(o->log_path);
        w->log_fd = open(o->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (w->log_fd < 0) {
            rc = kerr_set(e, KOPT_E_IO, "cannot open the worker log %s: %s", o->log_path,
                          strerror(errno));
            wk_free(w);
            return rc;
        }
        struct stat st;   /* the cap bounds the file, earlier runs' output included */
        if (fstat(w->log_fd, &st) == 0 && st.st_size > 0) {
            w->log_bytes = (uint64_t)st.st_size;
            w->log_nl = 1;   /* unknown; do not add a newline before the marker */
        }
    }
    if ((rc = wk_spawn(w, e))) { wk_free(w); return rc; }
    *out = w;
    return 0;
}

const json_t *worker_info(const worker *w) { return w && w->pid > 0 ? w->info : NULL; }
int worker_restarts(const worker *w) { return w ? w->restarts : 0; }
size_t worker_op_times(const worker *w, const worker_op_time **out) {
    *out = w && w->nop_times ? w->op_times : NULL;
    return w ? w->nop_times : 0;
}
int worker_pid(const worker *w) { return w && w->pid > 0 ? (int)w->pid : -1; }
const json_t *worker_last_error(const worker *w) { return w ? w->last_error : NULL; }

void worker_stop(worker *w) {
    if (!w) return;
    if (w->pid > 0) {
        double deadline = clock_now() + WK_STOP_WAIT_S;
        json_t *resp = NULL;
        kerr e = {0};
        long long id = w->next_id++;
        char *line = kasprintf("{\"id\":%lld,\"op\":\"shutdown\"}\n", id);
        if (wk_wait_msg(w, id, "shutdown", WK_STOP_WAIT_S, line, strlen(line), &resp, &e))
            log_debug("worker %d did not acknowledge shutdown: %s", (int)w->pid, e.msg);
        free(line);
        json_decref(resp);
        wk_close(&w->fd_in);
        siginfo_t si;
        if (w->pid > 0 && !wk_wait_exit(w, deadline, &si))
            log_warn("worker %d did not exit within %.0f s of shutdown; killing it",
                     (int)w->pid, WK_STOP_WAIT_S);
        wk_kill(w);
    }
    wk_free(w);
}
