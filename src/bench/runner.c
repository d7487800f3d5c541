/* runner.c — the lanes and the shared queue of `kopt bench` (contract in runner.h). */
#include "bench/runner.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "bench/child.h"
#include "bench/progress.h"
#include "bench/stats.h"
#include "bench/sys.h"
#include "util/buf.h"
#include "util/log.h"

#define BR_TICK_NS 50000000L      /* the loop's sleep: 50 ms */
#define BR_POLL_BUSY_S 5.0        /* re-claim problems running elsewhere */
#define BR_TERM_GRACE_S 3.0       /* SIGTERM -> SIGKILL on a stop */

static volatile sig_atomic_t g_stop;

static void br_on_signal(int sig) { g_stop = sig; }

typedef struct br_lane {
    pid_t pid;                  /* 0: idle */
    const bench_problem *p;
    int64_t row;
    double t0;
    int killed;                 /* timed out: SIGKILL sent, not yet reaped */
    bench_child_cmd cmd;
} br_lane;

typedef struct br_state {
    kstore *s;
    const bench_suite *suite;
    const bench_run_opts *o;
    bench_run_stats *st;
    br_lane *lanes;
    size_t nlanes;
    size_t *queue, qlen, qpos;  /* indices into suite->v */
    size_t *deferred, ndeferred;/* running elsewhere: polled again */
    double next_poll, last_progress;
    size_t ended;               /* problems with a result (this run or before) */
    double wall_sum;
    size_t wall_n;
    double *speedups;           /* over default, of this run's correct problems */
    size_t nsp;
} br_state;

typedef struct br_signals {
    struct sigaction old[4];
} br_signals;

static const int BR_SIGS[4] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

/* Stop on SIGINT/SIGTERM/SIGHUP, ignore SIGPIPE; the old dispositions go to sv. */
static void br_signals_install(br_signals *sv) {
    g_stop = 0;
    for (int i = 0; i < 4; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = BR_SIGS[i] == SIGPIPE ? SIG_IGN : br_on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(BR_SIGS[i], &sa, &sv->old[i]);
    }
}

/* Puts back the dispositions br_signals_install replaced. */
static void br_signals_restore(const br_signals *sv) {
    for (int i = 0; i < 4; i++) sigaction(BR_SIGS[i], &sv->old[i], NULL);
}

/* Reports the progress line (at most once a second unless forced). */
static void br_progress(br_state *S, int force) {
    if (!S->o->ui.progress) return;
    double now = bench_now();
    if (!force && now - S->last_progress < 1.0) return;
    S->last_progress = now;
    const char **running = kcalloc(S->nlanes, sizeof *running);
    for (size_t i = 0; i < S->nlanes; i++) running[i] = S->lanes[i].pid ? S->lanes[i].p->rel : NULL;
    bench_progress p = {.total = S->suite->n, .ended = S->ended, .nlanes = S->nlanes, .running = running,
                        .waiting = S->ndeferred, .mean_wall_s = S->wall_n ? S->wall_sum / (double)S->wall_n : NAN};
    p.geomean = bench_geomean(S->speedups, S->nsp, &p.geomean_n);
    kbuf line = KBUF_INIT;
    bench_progress_format(&p, &line);
    S->o->ui.progress(kbuf_str(&line), S->o->ui.ctx);
    kbuf_free(&line);
    free(running);
}

/* Starts problem p (its row claimed) on lane L. */
static int br_start(br_state *S, br_lane *L, const bench_problem *p, int64_t row, kerr *e) {
    const bench_run_opts *o = S->o;
    bench_child_opts co = {.out_dir = o->out_dir, .store_path = o->store_path, .python = o->python,
                           .budget_s = o->budget_s, .max_autotune = o->max_autotune};
    size_t li = (size_t)(L - S->lanes);
    int rc = bench_child_cmd_make(&co, p, o->lanes->ids[li], &L->cmd, e);
    if (!rc) {
        bench_child_spec cs = {.exe = "/proc/self/exe", .argv = L->cmd.argv, .envp = L->cmd.envp,
                               .stdout_path = L->cmd.stdout_path, .stderr_path = L->cmd.stderr_path};
        rc = bench_child_start(&cs, &L->pid, e);
        if (rc) bench_child_cmd_free(&L->cmd);
    }
    if (rc) {
        kerr re = {0};
        if (store_bench_release(S->s, row, o->liveness->self, &re)) log_warn("%s", re.msg);
        L->pid = 0;
        return rc;
    }
    L->p = p;
    L->row = row;
    L->t0 = bench_now();
    L->killed = 0;
    S->st->started++;
    log_info("started %s on lane %zu (CUDA_VISIBLE_DEVICES=%s), pid %d", p->rel, li, o->lanes->ids[li], (int)L->pid);
    return 0;
}

/* Takes problems from the queue for idle lane L until one is claimed and started. */
static int br_fill(br_state *S, br_lane *L, kerr *e) {
    while (S->qpos < S->qlen && !g_stop) {
        const bench_problem *p = &S->suite->v[S->queue[S->qpos++]];
        const bench_run_opts *o = S->o;
        store_bench_claim_spec c = {.suite_key = o->suite_key, .problem_rel = p->rel, .problem_sha = p->sha,
                                    .level = p->level, .gpu = o->gpu, .budget_s = o->budget_s,
                                    .max_autotune = o->max_autotune, .owner = o->liveness->self,
                                    .gpu_index = (int)(L - S->lanes), .retry_failed = o->retry_failed,
                                    .alive = bench_owner_alive, .alive_ctx = o->liveness};
        int64_t row = 0;
        store_bench_claim_outcome out;
        int rc = store_bench_claim(S->s, &c, &row, &out, e);
        if (rc) return rc;
        switch (out) {
        case STORE_BENCH_CLAIMED:
        case STORE_BENCH_RETAKEN:
            if (out == STORE_BENCH_RETAKEN) log_info("%s: taking the problem again", p->rel);
            return br_start(S, L, p, row, e);
        case STORE_BENCH_SKIP_DONE:
            S->st->skipped_done++;
            S->ended++;
            break;
        case STORE_BENCH_SKIP_RESULT:
            S->st->skipped_result++;
            S->ended++;
            break;
        case STORE_BENCH_SKIP_BUSY:
            S->deferred[S->ndeferred++] = (size_t)(p - S->suite->v);
            break;
        }
    }
    return 0;
}

/* Records the end of lane L's child (wait status ws) and frees the lane. */
static int br_finish(br_state *S, br_lane *L, int ws, kerr *e) {
    const bench_run_opts *o = S->o;
    double wall = bench_now() - L->t0;
    bench_verdict v;
    bench_child_judge(&L->cmd, ws, L->killed, o->timeout_s, &v);
    int64_t disk = bench_disk_usage(L->cmd.out);
    char *doc = json_dumps(v.doc, JSON_COMPACT | JSON_ENCODE_ANY);
    store_bench_end f = {.row_id = L->row, .owner = o->liveness->self, .status = v.status, .exit_code = v.exit_code,
                         .wall_s = wall, .disk_bytes = disk, .doc_json = doc};
    int updated = 0;
    int rc = store_bench_finish(S->s, &f, &updated, e);
    free(doc);
    if (!rc) {
        bench_record r;
        bench_record_init(&r, L->p->rel, L->p->sha, L->p->level, o->budget_s);
        r.status = v.status == STORE_BENCH_DONE ? BENCH_DONE : v.status == STORE_BENCH_TIMEOUT ? BENCH_TIMEOUT : BENCH_FAILED;
        r.exit_code = v.exit_code;
        r.gpu_index = (int)(L - S->lanes);
        r.wall_s = wall;
        r.disk_bytes = disk >= 0 ? (double)disk : NAN;
        bench_record_read_doc(&r, v.doc);
        S->st->done += r.status == BENCH_DONE;
        S->st->failed += r.status == BENCH_FAILED;
        S->st->timeouts += r.status == BENCH_TIMEOUT;
        if (!updated) {
            S->st->lost++;
            log_warn("%s: another kopt bench took this problem over meanwhile; this run's result is not recorded",
                     L->p->rel);
        }
        S->ended++;
        S->wall_sum += wall;
        S->wall_n++;
        if (bench_correct(&r) && isfinite(r.vs_default.est)) S->speedups[S->nsp++] = r.vs_default.est;
        if (o->ui.finished) o->ui.finished(&r, S->ended, S->suite->n, o->ui.ctx);
        bench_record_clear(&r);
    }
    json_decref(v.doc);
    bench_child_cmd_free(&L->cmd);
    L->pid = 0;
    L->p = NULL;
    return rc;
}

/* Reaps the lanes whose child ended; kills those past their time. */
static int br_reap(br_state *S, kerr *e) {
    double now = bench_now();
    for (size_t i = 0; i < S->nlanes; i++) {
        br_lane *L = &S->lanes[i];
        if (!L->pid) continue;
        int ws = 0;
        pid_t r = waitpid(L->pid, &ws, WNOHANG);
        if (r == L->pid || (r < 0 && errno == ECHILD)) {
            int rc = br_finish(S, L, ws, e);
            if (rc) return rc;
            continue;
        }
        if (!L->killed && now - L->t0 > S->o->timeout_s) {
            log_info("%s: past its limit of %.0f s, killing it", L->p->rel, S->o->timeout_s);
            bench_kill_group(L->pid, SIGKILL);
            L->killed = 1;
        }
    }
    return 0;
}

/* Stops every running child (SIGTERM, SIGKILL after a grace) and releases its row. */
static void br_stop_all(br_state *S) {
    size_t busy = 0;
    for (size_t i = 0; i < S->nlanes; i++)
        if (S->lanes[i].pid) {
            bench_kill_group(S->lanes[i].pid, SIGTERM);
            busy++;
        }
    double deadline = bench_now() + BR_TERM_GRACE_S;
    while (busy) {
        int killing = bench_now() > deadline;
        busy = 0;
        for (size_t i = 0; i < S->nlanes; i++) {
            br_lane *L = &S->lanes[i];
            if (!L->pid) continue;
            if (killing) bench_kill_group(L->pid, SIGKILL);
            int ws;
            pid_t r = waitpid(L->pid, &ws, killing ? 0 : WNOHANG);
            if (r == L->pid || (r < 0 && errno != EINTR)) {
                kerr e = {0};
                if (store_bench_release(S->s, L->row, S->o->liveness->self, &e))
                    log_warn("%s: %s", L->p->rel, e.msg);
                S->st->released++;
                bench_child_cmd_free(&L->cmd);
                L->pid = 0;
            } else {
                busy++;
            }
        }
        if (busy && !killing) {
            struct timespec ts = {0, BR_TICK_NS};
            nanosleep(&ts, NULL);
        }
    }
}

/* Whether no lane runs a child. */
static int br_idle(const br_state *S) {
    for (size_t i = 0; i < S->nlanes; i++)
        if (S->lanes[i].pid) return 0;
    return 1;
}

/* The loop: fill idle lanes, reap, poll deferred problems, until all ended or a stop. */
static int br_loop(br_state *S, kerr *e) {
    for (;;) {
        if (g_stop) return 0;
        if (S->qpos == S->qlen && S->ndeferred && bench_now() >= S->next_poll) {
            memcpy(S->queue, S->deferred, S->ndeferred * sizeof *S->queue);
            S->qlen = S->ndeferred;
            S->qpos = 0;
            S->ndeferred = 0;
            S->next_poll = bench_now() + BR_POLL_BUSY_S;
        }
        int started = 0;
        for (size_t i = 0; i < S->nlanes && !g_stop; i++) {
            if (S->lanes[i].pid) continue;
            size_t before = S->st->started;
            int rc = br_fill(S, &S->lanes[i], e);
            if (rc) return rc;
            started |= S->st->started != before;
        }
        if (started) br_progress(S, 1);
        if (br_idle(S) && S->qpos == S->qlen && !S->ndeferred) return 0;
        struct timespec ts = {0, BR_TICK_NS};
        nanosleep(&ts, NULL);
        size_t ended = S->ended;
        int rc = br_reap(S, e);
        if (rc) return rc;
        br_progress(S, S->ended != ended);
    }
}

int bench_run(kstore *s, const bench_suite *suite, const bench_run_opts *o, bench_run_stats *st, kerr *e) {
    memset(st, 0, sizeof *st);
    if (!o->lanes || !o->lanes->n) return kerr_set(e, KOPT_E_INTERNAL, "bench_run: no lane");
    br_state S = {.s = s, .suite = suite, .o = o, .st = st, .nlanes = o->lanes->n};
    size_t n = suite->n ? suite->n : 1;
    S.lanes = kcalloc(S.nlanes, sizeof *S.lanes);
    S.queue = kcalloc(n, sizeof *S.queue);
    S.deferred = kcalloc(n, sizeof *S.deferred);
    S.speedups = kcalloc(n, sizeof *S.speedups);
    for (size_t i = 0; i < suite->n; i++) S.queue[i] = i;
    S.qlen = suite->n;
    S.next_poll = bench_now() + BR_POLL_BUSY_S;
    br_signals sv;
    br_signals_install(&sv);
    int rc = br_loop(&S, e);
    if (g_stop || rc) br_stop_all(&S);
    st->interrupted = g_stop;
    br_signals_restore(&sv);
    if (!rc && g_stop) log_warn("stopped by signal %d: %zu running problem(s) handed back", (int)g_stop, st->released);
    free(S.lanes);
    free(S.queue);
    free(S.deferred);
    free(S.speedups);
    return rc;
}
