/* cmd_bench.c — `kopt bench SUITE [-o DIR]`: `kopt optimize` over a folder of problems, one
 * lane per GPU, results in the store, summaries in DIR (src/bench/). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/collect.h"
#include "bench/identity.h"
#include "bench/lanes.h"
#include "bench/progress.h"
#include "bench/render.h"
#include "bench/runner.h"
#include "bench/stats.h"
#include "bench/suite.h"
#include "bench/sys.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

static const char USAGE[] =
    "usage: kopt bench SUITE [-o DIR] [options]\n"
    "\n"
    "Run 'kopt optimize' over every problem of SUITE (KernelBench layout: SUITE/level1/*.py,\n"
    "SUITE/level2/*.py, ... or a flat folder of *.py), one lane per GPU, each lane running one\n"
    "problem at a time as a child process with CUDA_VISIBLE_DEVICES set to its GPU. Results go to\n"
    "the store: a killed sweep resumes where it stopped, a finished problem is never run again.\n"
    "DIR gets results.json (docs/schema/bench.md), summary.md, summary.html and\n"
    "runs/<level>/<problem>/ (each child's outputs, optimize.json and optimize.log).\n"
    "\n"
    "options:\n"
    "  -o, --out DIR          output folder (default bench-out)\n"
    "  --budget T             each problem's budget (kopt optimize --budget): 90s, 2m, 1h; 1s to\n"
    "                         30 days (default 2m)\n"
    "  --gpus N|all           lanes: all visible GPUs (CUDA_VISIBLE_DEVICES, else nvidia-smi -L,\n"
    "                         else 1), or the first N of them (default all)\n"
    "  --shard I/N            only the problems whose FNV-1a hash of the relative path mod N is I\n"
    "                         (0 <= I < N; stable when problems are added): one Slurm array task each\n"
    "  --max-autotune         the children also compile torch.compile max-autotune and are\n"
    "                         compared against it (kopt optimize --max-autotune; the default)\n"
    "  --no-max-autotune      they do not (speedups over max-autotune are then not measured)\n"
    "  --store PATH           the SQLite store (default $KOPT_STORE or ~/.cache/kopt/store.sqlite);\n"
    "                         the children use it too\n"
    "  --report-only          run nothing: rebuild the outputs from the store's results for this\n"
    "                         --budget and --max-autotune (SUITE optional: it limits the report to\n"
    "                         the suite's problems); works on a merged store\n"
    "  --retry-failed         run failed and timed-out problems once more (else they are results)\n"
    "  --only LIST            only problems whose relative path contains one of the comma-separated\n"
    "                         parts of LIST\n"
    "  --dev                  only the problems listed in SUITE/DEV (one relative path per line,\n"
    "                         '#' comments); with --only, those of them that --only names\n"
    "  --timeout-factor F     a problem running longer than budget x F + 120 s is killed and\n"
    "                         recorded as timeout (default 1.5; the 120 s: $KOPT_BENCH_GRACE_S)\n"
    "  --json                 print results.json on stdout; one line per finished problem on stderr\n"
    "  --python P             python with torch and triton, for the children\n"
    "  --force-version        the children run with a torch/triton other than the supported ones\n"
    "  -v, --verbose          log each start and end (one line per finished problem)\n"
    "\n"
    "exit codes: 0 every selected problem ended (done, or failed/timeout recorded as a result),\n"
    "  2 bad command line, 3 SUITE missing / not a folder / no problems (or, with --report-only,\n"
    "  no results in the store), 6 CUDA_VISIBLE_DEVICES names no GPU, 11 store failure,\n"
    "  14 output not writable, 1 internal error, 130/143 stopped by SIGINT/SIGTERM (the running\n"
    "  problems are handed back and run again next time)\n";

typedef struct bench_cli {
    const char *suite, *out, *store_arg, *python, *only;
    double budget_s, timeout_factor, grace_s;
    int gpus;                   /* 0: all */
    unsigned shard_index, shard_count;
    int max_autotune, report_only, retry_failed, dev, json, force_version;
} bench_cli;

/* "I/N" with 0 <= I < N into c; -1 when malformed. */
static int bc_shard(const char *s, bench_cli *c) {
    const char *slash = strchr(s, '/');
    if (!slash) return -1;
    char *i = kstrndup(s, (size_t)(slash - s));
    long idx = -1, cnt = -1;
    kerr ignored = {0};
    if (cli_parse_long("I", i, 0, 1L << 30, &idx, &ignored) || cli_parse_long("N", slash + 1, 1, 1L << 30, &cnt, &ignored))
        idx = -1;
    free(i);
    if (idx < 0 || cnt < 1 || idx >= cnt) return -1;
    c->shard_index = (unsigned)idx;
    c->shard_count = (unsigned)cnt;
    return 0;
}

/* KOPT_E_USAGE naming the flag, the value and what it takes. */
static int bc_usage_err(kerr *e, const char *flag, const char *val, const char *want) {
    return kerr_set(e, KOPT_E_USAGE, "%s takes %s, got '%s'", flag, want, val);
}

/* Parses argv strictly; 0, KOPT_E_USAGE with e filled, or -1 after --help was printed. */
static int bc_parse(int argc, char **argv, bench_cli *c, kerr *e) {
    static const struct option longopts[] = {
        {"out", required_argument, 0, 'o'},          {"budget", required_argument, 0, 'b'},
        {"gpus", required_argument, 0, 'g'},         {"shard", required_argument, 0, 's'},
        {"max-autotune", no_argument, 0, 'm'},       {"no-max-autotune", no_argument, 0, 'M'},
        {"store", required_argument, 0, 'S'},        {"report-only", no_argument, 0, 'R'},
        {"retry-failed", no_argument, 0, 'F'},       {"only", required_argument, 0, 'O'},
        {"dev", no_argument, 0, 'D'},                {"timeout-factor", required_argument, 0, 't'},
        {"json", no_argument, 0, 'j'},               {"python", required_argument, 0, 'p'},
        {"verbose", no_argument, 0, 'v'},            {"help", no_argument, 0, 'h'},
        {"force-version", no_argument, 0, 'V'},
        {0, 0, 0, 0}};
    *c = (bench_cli){.out = "bench-out", .budget_s = 120, .timeout_factor = 1.5, .grace_s = 120, .max_autotune = 1};
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, ":o:vh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o': c->out = optarg; break;
        case 'b':
            if (cli_parse_duration("--budget", optarg, 1, 30 * 86400, &c->budget_s, e)) return KOPT_E_USAGE;
            break;
        case 'g':
            if (!strcmp(optarg, "all")) c->gpus = 0;
            else if (cli_parse_int("--gpus", optarg, 1, 4096, &c->gpus, e))
                return bc_usage_err(e, "--gpus", optarg, "a number of GPUs from 1 to 4096 or 'all'");
            break;
        case 's':
            if (bc_shard(optarg, c)) return bc_usage_err(e, "--shard", optarg, "I/N with 0 <= I < N, e.g. 0/8");
            break;
        case 'm': c->max_autotune = 1; break;
        case 'M': c->max_autotune = 0; break;
        case 'S': c->store_arg = optarg; break;
        case 'R': c->report_only = 1; break;
        case 'F': c->retry_failed = 1; break;
        case 'O': c->only = optarg; break;
        case 'D': c->dev = 1; break;
        case 't':
            if (cli_parse_double("--timeout-factor", optarg, 1e-3, 1000, &c->timeout_factor, e)) return KOPT_E_USAGE;
            break;
        case 'V': c->force_version = 1; break;
        case 'j': c->json = 1; break;
        case 'p': c->python = optarg; break;
        case 'v': log_at_least(LOG_INFO); break;
        case 'h': fputs(USAGE, stdout); return -1;
        case ':': return kerr_set(e, KOPT_E_USAGE, "%s needs a value; see 'kopt bench --help'", argv[optind - 1]);
        default: return kerr_set(e, KOPT_E_USAGE, "unknown option '%s'; see 'kopt bench --help'", argv[optind - 1]);
        }
    }
    if (argc - optind > 1) return kerr_set(e, KOPT_E_USAGE, "expected one SUITE folder, got %d arguments", argc - optind);
    c->suite = optind < argc ? argv[optind] : NULL;
    if (!c->suite && !c->report_only) return kerr_set(e, KOPT_E_USAGE, "expected a SUITE folder; see 'kopt bench --help'");
    if (!*c->out) return kerr_set(e, KOPT_E_USAGE, "-o needs a folder");
    const char *g = getenv("KOPT_BENCH_GRACE_S");
    if (g && *g && cli_parse_duration("KOPT_BENCH_GRACE_S", g, 0, 30 * 86400, &c->grace_s, e)) return KOPT_E_USAGE;
    return 0;
}

/* The suite and its selection (--dev, --only, --shard). */
static int bc_select(const bench_cli *c, bench_suite *s, kerr *e) {
    int rc = bench_suite_discover(c->suite, s, e);
    if (!rc && c->dev) rc = bench_suite_dev(s, e);
    if (!rc && c->only) rc = bench_suite_only(s, c->only, e);
    if (!rc && (c->dev || c->only) && s->n == 0)
        rc = kerr_set(e, KOPT_E_NOFILE, "no problem of %s matches %s", c->suite,
                      c->dev && c->only ? "SUITE/DEV and --only" : c->dev ? "SUITE/DEV" : "--only");
    if (!rc && c->shard_count) {
        size_t before = s->n;
        bench_suite_shard(s, c->shard_index, c->shard_count);
        if (!s->n) log_warn("shard %u/%u holds none of the %zu selected problems", c->shard_index, c->shard_count, before);
    }
    if (rc) bench_suite_free(s);
    return rc;
}

/* The store: --store, else $KOPT_STORE, else ~/.cache/kopt/store.sqlite. */
static char *bc_store_path(const char *arg) {
    const char *env = getenv("KOPT_STORE"), *home = getenv("HOME");
    if (arg) return kstrdup(arg);
    if (env && *env) return kstrdup(env);
    return kasprintf("%s/.cache/kopt/store.sqlite", home && *home ? home : ".");
}

/* Now as ISO-8601 UTC, seconds. */
static void bc_iso_now(char buf[32]) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The selection in words, for the report. */
static char *bc_selection(const bench_cli *c) {
    if (c->dev && c->only) return kasprintf("dev (SUITE/DEV), only: %s", c->only);
    return c->dev ? kstrdup("dev (SUITE/DEV)") : c->only ? kasprintf("only: %s", c->only) : kstrdup("all");
}

/* ---- the UI of the run ---------------------------------------------------------------------- */

/* The runner's progress line, through cli_progress (a terminal only). */
static void bc_ui_progress(const char *line, void *ctx) { cli_progress_line(line, ctx); }

/* One plain line per finished problem on stderr, when there is no progress line. */
static void bc_ui_finished(const bench_record *r, size_t ended, size_t total, void *ctx) {
    const cli_progress *pg = ctx;
    if (pg->tty) return;
    kbuf b = KBUF_INIT;
    bench_progress_finished(r, ended, total, &b);
    fprintf(stderr, "kopt bench: %s\n", kbuf_str(&b));
    kbuf_free(&b);
}

/* "1.234x (12)" or "-". */
static const char *bc_gm(double v, size_t n, char *buf, size_t len) {
    if (isfinite(v)) snprintf(buf, len, "%.3fx (%zu)", v, n);
    else snprintf(buf, len, "-");
    return buf;
}

/* The short text summary on stdout. */
static void bc_print_summary(const bench_report *r, const char *out_dir) {
    char a[48], b[48], f[48];
    const bench_group *all = &r->sum->all;
    printf("kopt bench  %s: %zu problems, %zu correct, %zu failed, %zu timeout, %zu not run\n",
           r->suite ? r->suite : "(store)", all->n, all->correct, all->failed, all->timeouts, all->not_run + all->running);
    printf("  %-10s %8s %8s %20s %24s %10s\n", "level", "problems", "correct", "geomean vs default", "geomean vs max-autotune",
           "fast_1.0");
    for (size_t i = 0; i <= r->sum->nlevels; i++) {
        const bench_group *g = i < r->sum->nlevels ? &r->sum->levels[i] : all;
        if (isfinite(g->fast_p[0][1])) snprintf(f, sizeof f, "%.1f%%", 100 * g->fast_p[0][1]);
        else snprintf(f, sizeof f, "-");
        printf("  %-10s %8zu %8zu %20s %24s %10s\n", g->name, g->n, g->correct,
               bc_gm(g->geomean[0], g->geomean_n[0], a, sizeof a), bc_gm(g->geomean[1], g->geomean_n[1], b, sizeof b), f);
    }
    printf("written to %s/summary.html (summary.md, results.json)\n", out_dir);
}

/* ---- the two modes ------------------------------------------------------------------------- */

typedef struct bc_ctx {
    bench_cli cli;
    char *store_path;
    kstore *store;
    bench_suite suite;
    int have_suite;
    char **gpus, **keys;
    size_t ngpus;
    bench_lanes lanes;
} bc_ctx;

/* Releases everything the command holds. */
static void bc_ctx_free(bc_ctx *x) {
    for (size_t i = 0; i < x->ngpus; i++) {
        free(x->gpus[i]);
        free(x->keys[i]);
    }
    free(x->gpus);
    free(x->keys);
    bench_lanes_free(&x->lanes);
    bench_suite_free(&x->suite);
    store_close(x->store);
    free(x->store_path);
}

/* Reads the records back, renders and writes the outputs, prints them. */
static int bc_report(bc_ctx *x, bench_report *rep, kerr *e) {
    bench_records recs = {0};
    int rc = bench_collect(x->store, (const char *const *)x->keys, x->ngpus, x->have_suite ? &x->suite : NULL,
                           x->cli.budget_s, &recs, e);
    if (rc) return rc;
    size_t measured = 0;   /* records with a result of this configuration (not "not run") */
    for (size_t i = 0; i < recs.n; i++) measured += recs.v[i].status != BENCH_NOT_RUN;
    if (x->cli.report_only && !measured) {
        char *held = NULL;
        kerr ce = {0};
        if (store_bench_configs(x->store, &held, &ce)) log_warn("%s", ce.msg);
        char hint[512] = "it holds none at all";
        if (held && *held)
            snprintf(hint, sizeof hint, "it holds results for %s: pass that --budget and --max-autotune/--no-max-autotune",
                     held);
        free(held);
        if (!recs.n) {
            bench_records_free(&recs);
            return kerr_set(e, KOPT_E_NOFILE, "the store %s holds no bench results for budget %gs with max-autotune %s%s; hint: %s",
                            x->store_path, x->cli.budget_s, x->cli.max_autotune ? "on" : "off",
                            x->have_suite ? " for this suite" : "", hint);
        }
        /* the suite's problems are listed, every one "not run": say why it may look so */
        log_warn("no problem of the selection has a result for budget %gs with max-autotune %s; %s", x->cli.budget_s,
                 x->cli.max_autotune ? "on" : "off", hint);
    }
    bench_summary sum;
    bench_summary_build(recs.v, recs.n, &sum);
    rep->recs = recs.v;
    rep->n = recs.n;
    /* rep is the caller's, read only until the end of this function; cleared below */
    rep->sum = &sum; /* cppcheck-suppress autoVariables */
    rep->gpus = (const char *const *)x->gpus;
    rep->keys = (const char *const *)x->keys;
    rep->ngpus = rep->nkeys = x->ngpus;
    char *json = NULL;
    rc = bench_write_outputs(rep, x->cli.out, &json, e);
    if (!rc && x->cli.json) puts(json);
    else if (!rc) bc_print_summary(rep, x->cli.out);
    free(json);
    bench_summary_free(&sum);
    bench_records_free(&recs);
    rep->sum = NULL;
    rep->recs = NULL;
    return rc;
}

/* Opens the store (must_exist: refuse a missing file); store_path becomes absolute. */
static int bc_open_store(bc_ctx *x, int must_exist, kerr *e) {
    x->store_path = bc_store_path(x->cli.store_arg);
    if (must_exist && !fs_exists(x->store_path))
        return kerr_set(e, KOPT_E_STORE, "store %s does not exist; hint: give the store of the run (--store)", x->store_path);
    int rc = store_open(x->store_path, &x->store, e);
    if (rc) return rc;
    char *abs = fs_realpath(x->store_path);
    if (abs) {
        free(x->store_path);
        x->store_path = abs;
    }
    return 0;
}

/* --report-only: the keys of the budget/flag on every recorded GPU, the rows, the outputs. */
static int bc_report_only(bc_ctx *x, kerr *e) {
    int rc = 0;
    if (x->cli.suite) {
        rc = bc_select(&x->cli, &x->suite, e);
        if (rc) return rc;
        x->have_suite = 1;
    }
    if ((rc = bc_open_store(x, 1, e))) return rc;
    if ((rc = store_bench_gpus(x->store, x->cli.budget_s, x->cli.max_autotune, &x->gpus, &x->ngpus, e))) return rc;
    x->keys = kcalloc(x->ngpus ? x->ngpus : 1, sizeof *x->keys);
    for (size_t i = 0; i < x->ngpus; i++) {
        x->keys[i] = kmalloc(STORE_SHA_HEX);
        bench_suite_key(x->cli.budget_s, x->cli.max_autotune, x->gpus[i], x->keys[i]);
    }
    char now[32];
    bc_iso_now(now);
    char *sel = bc_selection(&x->cli);
    bench_report rep = {.suite = x->have_suite ? x->suite.root : NULL, .budget_s = x->cli.budget_s,
                        .max_autotune = x->cli.max_autotune, .timeout_factor = NAN, .grace_s = NAN, .timeout_s = NAN,
                        .shard_index = x->cli.shard_index, .shard_count = x->cli.shard_count, .selection = sel,
                        .store_path = x->store_path, .report_only = 1, .ended_at = now, .wall_s = NAN};
    rc = bc_report(x, &rep, e);
    free(sel);
    return rc;
}

/* The sweep: suite, lanes, GPU name and key, store, the runner, then the outputs. */
static int bc_run(bc_ctx *x, kerr *e) {
    const bench_cli *c = &x->cli;
    int rc = bc_select(c, &x->suite, e);
    if (rc) return rc;
    x->have_suite = 1;
    if ((rc = bench_lanes_detect(c->gpus, &x->lanes, e))) return rc;
    x->ngpus = 1;
    x->gpus = kcalloc(1, sizeof *x->gpus);
    x->keys = kcalloc(1, sizeof *x->keys);
    x->gpus[0] = bench_gpu_name(x->lanes.ids[0]);
    x->keys[0] = kmalloc(STORE_SHA_HEX);
    bench_suite_key(c->budget_s, c->max_autotune, x->gpus[0], x->keys[0]);
    if ((rc = bc_open_store(x, 0, e))) return rc;
    char *runs = fs_join(c->out, "runs");
    rc = fs_mkdirs(runs, e);
    char *out_abs = rc ? NULL : fs_realpath(c->out);
    free(runs);
    if (rc) return rc;
    double timeout_s = c->budget_s * c->timeout_factor + c->grace_s;
    bench_liveness live;
    bench_liveness_init(&live, 2 * timeout_s);
    cli_progress pg;
    cli_progress_init(&pg, c->json);
    log_info("%zu problems on %zu lane(s) (%s), GPU %s, time limit %.0f s each", x->suite.n, x->lanes.n,
             x->lanes.source, x->gpus[0], timeout_s);
    char started[32], ended[32];
    bc_iso_now(started);
    double t0 = bench_now();
    bench_run_opts ro = {.out_dir = out_abs, .store_path = x->store_path, .python = c->python, .budget_s = c->budget_s,
                         .max_autotune = c->max_autotune, .timeout_s = timeout_s, .retry_failed = c->retry_failed,
                         .suite_key = x->keys[0], .gpu = x->gpus[0], .lanes = &x->lanes, .liveness = &live,
                         .ui = {.progress = bc_ui_progress, .finished = bc_ui_finished, .ctx = &pg}};
    bench_run_stats st;
    rc = bench_run(x->store, &x->suite, &ro, &st, e);
    cli_progress_end(&pg);
    bc_iso_now(ended);
    if (!rc) {
        log_info("%zu started (%zu done, %zu failed, %zu timeout); %zu already done, %zu kept as results",
                 st.started, st.done, st.failed, st.timeouts, st.skipped_done, st.skipped_result);
        char *sel = bc_selection(c);
        bench_report rep = {.suite = x->suite.root, .budget_s = c->budget_s, .max_autotune = c->max_autotune,
                            .timeout_factor = c->timeout_factor, .grace_s = c->grace_s, .timeout_s = timeout_s,
                            .lanes = (const char *const *)x->lanes.ids, .nlanes = x->lanes.n,
                            .lanes_source = x->lanes.source, .shard_index = c->shard_index,
                            .shard_count = c->shard_count, .selection = sel, .store_path = x->store_path,
                            .retry_failed = c->retry_failed, .started_at = started, .ended_at = ended,
                            .wall_s = bench_now() - t0, .interrupted = st.interrupted};
        rc = bc_report(x, &rep, e);
        free(sel);
        if (!rc && st.interrupted) {
            fprintf(stderr, "kopt bench: stopped by signal %d; %zu running problem(s) handed back: run the same command "
                            "again to finish\n", st.interrupted, st.released);
            rc = 128 + st.interrupted;
        }
    }
    bench_liveness_clear(&live);
    free(out_abs);
    return rc;
}

int cmd_bench(int argc, char **argv) {
    bc_ctx x;
    memset(&x, 0, sizeof x);
    kerr e = {0};
    int rc = bc_parse(argc, argv, &x.cli, &e);
    if (rc < 0) return 0;
    if (rc) {
        return cli_fail("bench", &e, 0);
    }
    /* the children are `kopt optimize` processes: they inherit the waiver */
    if (x.cli.force_version) setenv("KOPT_FORCE_VERSION", "1", 1);
    rc = x.cli.report_only ? bc_report_only(&x, &e) : bc_run(&x, &e);
    if (rc && rc < 128) cli_fail("bench", &e, x.cli.json);
    bc_ctx_free(&x);
    return rc;
}
