/* cmd_optimize.c — `kopt optimize problem.py -o out/ [--budget 2m]`. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/agent.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "llm/agent_llm.h"
#include "llm/client.h"
#include "store/store.h"
#include "optimize/optimize.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/log.h"
#include "verify/memcheck.h"

static const char USAGE[] =
    "usage: kopt optimize <problem.py> -o OUT [options]\n"
    "\n"
    "Compile the model with torch.compile, profile every launch, search for faster replacements\n"
    "of its Triton kernels (built-in, measurement-driven agents: no LLM needed), pass every\n"
    "candidate through the four gates of 'kopt verify', and re-stitch the winners. OUT gets\n"
    "optimized_module.py, kopt_loader.py and report.{md,html,json}. When nothing passes, OUT\n"
    "holds the compiler's module and the report says why, kernel by kernel.\n"
    "\n"
    "options:\n"
    "  -o, --out DIR            output directory (required)\n"
    "  --budget T               wall-clock budget of the whole run (compile, capture, profile, baselines,\n"
    "                           search, final measurement): 90s, 2m, 1h; 1s to 30 days (default 2m)\n"
    "  --max-candidates N       candidates generated at most, 1 to 1000000 (default 64)\n"
    "  --max-autotune           also compile with torch.compile mode max-autotune-no-cudagraphs and start\n"
    "                           the search from the faster of the two modules\n"
    "  --rounds N               timing rounds for gate 4 and the final measurement, 2 to 100000 (default 30)\n"
    "  --min-gain X             gate 4: the CI's lower end must exceed 1+X, 0 <= X <= 10 (default 0.02)\n"
    "  --store PATH             the SQLite memory (default $KOPT_STORE or ~/.cache/kopt/store.sqlite):\n"
    "                           an interrupted run resumes; kernels optimized before are not searched again\n"
    "  --no-store               no memory across runs\n"
    "  --llm BACKEND:MODEL      an LLM plays --roles (openai:<model> for any OpenAI-compatible server,\n"
    "                           anthropic:<model>); endpoint and key from the environment (docs/LLM.md)\n"
    "  --llm-config FILE        LLM settings file (default ~/.config/kopt/llm.json if present)\n"
    "  --roles LIST             roles the LLM plays: planner,executor,summarizer (default planner,executor)\n"
    "  --ncu                    add Nsight Compute counters to the profile when ncu is usable\n"
    "                           (DRAM/SM throughput, occupancy, registers); else event timing only\n"
    "  --memcheck               gate 2 also runs each candidate that passed its numbers once under\n"
    "                           compute-sanitizer's memcheck (as kopt verify --memcheck); worth it with an\n"
    "                           LLM executor; the second worker's start counts against the budget\n"
    "  --keep-work              keep OUT/work (the modules of every candidate, the worker's scratch);\n"
    "                           by default it is removed when the run succeeds\n"
    "  --json                   print the optimize document (docs/schema/optimize.md)\n"
    "  --python PATH            python with torch and triton (default $KOPT_PYTHON or python3)\n"
    "  --force-version          run with a torch/triton other than the supported ones (kopt --version)\n"
    "  -v, --verbose            log each stage\n"
    "  -h, --help               this help\n"
    "\n"
    "exit codes: 0 done (also when no candidate passed: the compiler's module is kept), 1 internal\n"
    "  error, 2 bad command line, 3 problem file missing or not a file, 4 malformed problem, 5 model\n"
    "  raised, 6 no GPU, 7 worker failure, 8 the model compiled to no graph, 9 no usable python (no\n"
    "  torch, or an unsupported torch/triton), 10 parse error, 11 store failure (--store), 13 LLM\n"
    "  endpoint failed, 14 output not writable, 15 compile failed\n";

static double num(const json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

static void print_speedup(const char *what, const json_t *sp) {
    if (!sp) return;
    printf("  speedup over %-22s %.3fx (95%% CI %.3f-%.3f)\n", what, num(sp, "estimate"), num(sp, "ci95_lo"), num(sp, "ci95_hi"));
}

static void print_summary(const json_t *doc, const char *out) {
    const json_t *m = json_object_get(doc, "model"), *b = json_object_get(doc, "budget");
    printf("kopt optimize  %s\n", json_string_value(json_object_get(doc, "problem")));
    printf("model: eager %.4f ms; torch.compile %.4f ms", num(m, "eager_ms"), num(m, "compiled_ms"));
    if (json_object_get(m, "max_autotune_ms")) printf("; max-autotune %.4f ms", num(m, "max_autotune_ms"));
    printf("; floor %.4f ms\n", num(m, "floor_ms"));
    printf("started from torch.compile %s's module; optimized %.4f ms\n",
           json_string_value(json_object_get(m, "start")) ? json_string_value(json_object_get(m, "start")) : "default",
           num(m, "optimized_ms"));
    print_speedup("torch.compile default", json_object_get(m, "speedup_vs_default"));
    print_speedup("max-autotune", json_object_get(m, "speedup_vs_max_autotune"));
    putchar('\n');
    printf("  %-48s %-20s %9s %7s %6s  %s\n", "kernel", "kind", "time ms", "share", "%ceil", "status");
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(doc, "kernels"), i, k) {
        const char *st = json_string_value(json_object_get(k, "status"));
        printf("  %-48.48s %-20s %9.4f %6.1f%% %5.0f%%  %s", json_string_value(json_object_get(k, "name")),
               json_string_value(json_object_get(k, "kernel_kind")) ? json_string_value(json_object_get(k, "kernel_kind")) : "?",
               num(k, "time_ms"), 100 * num(k, "share"), 100 * num(k, "frac_of_ceiling"), st ? st : "?");
        if (st && !strcmp(st, "optimized"))
            printf(": %s", json_string_value(json_object_get(k, "change")) ? json_string_value(json_object_get(k, "change")) : "");
        else if (json_object_get(k, "why"))
            printf(": %s", json_string_value(json_object_get(k, "why")));
        putchar('\n');
    }
    json_array_foreach(json_object_get(doc, "vendor_calls"), i, k)
        printf("  %-48.48s %-20s %9.4f %6.1f%%         vendor call, kept\n", json_string_value(json_object_get(k, "name")), "vendor",
               num(k, "time_ms"), 100 * num(k, "share"));
    printf("\n%s; %d candidates; %.0f s of the %.0f s budget (setup %.0f s, search %.0f s, final %.0f s)\n",
           json_string_value(json_object_get(doc, "outcome")), (int)json_integer_value(json_object_get(b, "used_candidates")),
           num(b, "used_wall_s"), num(b, "wall_s"), num(b, "setup_s"), num(b, "search_s"), num(b, "final_s"));
    if (json_string_value(json_object_get(b, "note"))) printf("%s\n", json_string_value(json_object_get(b, "note")));
    printf("written to %s\n", out);
}

int cmd_optimize(int argc, char **argv) {
    static const struct option longopts[] = {
        {"out", required_argument, 0, 'o'},        {"budget", required_argument, 0, 'b'},
        {"max-candidates", required_argument, 0, 'n'}, {"max-autotune", no_argument, 0, 'm'},
        {"rounds", required_argument, 0, 'r'},     {"min-gain", required_argument, 0, 'g'},
        {"json", no_argument, 0, 'j'},             {"python", required_argument, 0, 'p'},
        {"verbose", no_argument, 0, 'v'},          {"help", no_argument, 0, 'h'},
        {"store", required_argument, 0, 'S'},      {"no-store", no_argument, 0, 'N'},
        {"llm", required_argument, 0, 'L'},        {"llm-config", required_argument, 0, 'C'},
        {"roles", required_argument, 0, 'R'},      {"ncu", no_argument, 0, 'U'},
        {"keep-work", no_argument, 0, 'K'},       {"force-version", no_argument, 0, 'F'},
        {"memcheck", no_argument, 0, 'M'},        {0, 0, 0, 0}};
    const char *store_arg = NULL, *llm_spec = NULL, *llm_conf = NULL, *roles = "planner,executor";
    int no_store = 0, keep_work = 0, force_version = 0, want_memcheck = 0;
    optimize_opts o = {.budget_s = 120, .max_candidates = 64, .rounds = 30, .min_gain = 0.02};
    o.t_start = clock_now(); /* the budget counts from here */
    const char *python = NULL;
    int json_mode = 0, opt;
    kerr e = {0};
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:vh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'o': o.out_dir = optarg; break;
        case 'b':
            if (cli_parse_duration("--budget", optarg, 1, 30 * 86400, &o.budget_s, &e))
                return cli_fail("optimize", &e, json_mode);
            break;
        case 'n':
            if (cli_parse_int("--max-candidates", optarg, 1, 1000000, &o.max_candidates, &e))
                return cli_fail("optimize", &e, json_mode);
            break;
        case 'm': o.max_autotune = 1; break;
        case 'r':
            if (cli_parse_int("--rounds", optarg, 2, 100000, &o.rounds, &e)) return cli_fail("optimize", &e, json_mode);
            break;
        case 'g':
            if (cli_parse_double("--min-gain", optarg, 0, 10, &o.min_gain, &e)) return cli_fail("optimize", &e, json_mode);
            break;
        case 'F': force_version = 1; break;
        case 'j': json_mode = 1; break;
        case 'p': python = optarg; break;
        case 'v': log_at_least(LOG_INFO); break;
        case 'S': store_arg = optarg; break;
        case 'N': no_store = 1; break;
        case 'L': llm_spec = optarg; break;
        case 'C': llm_conf = optarg; break;
        case 'R': roles = optarg; break;
        case 'U': o.use_ncu = 1; break;
        case 'K': keep_work = 1; break;
        case 'M': want_memcheck = 1; break;
        case 'h': fputs(USAGE, stdout); return 0;
        default: fputs(USAGE, stderr); return KOPT_E_USAGE;
        }
    }
    o.python = python;
    if (optind != argc - 1 || !o.out_dir) {
        kerr_set(&e, KOPT_E_USAGE, optind != argc - 1 ? "expected one problem file; see 'kopt optimize --help'" : "-o OUT is required");
        return cli_fail("optimize", &e, json_mode);
    }
    o.problem = argv[optind];
    if (cli_input_file("problem file", o.problem, &e)) return cli_fail("optimize", &e, json_mode);
    /* LLM agents for the chosen roles; the rest stay built in. */
    llm_client *llm = NULL;
    if (llm_spec) {
        llm_config cfg;
        if (llm_config_resolve(llm_spec, llm_conf, &cfg, &e) || llm_client_new(&cfg, &llm, &e)) {
            llm_config_free(&cfg);
            return cli_fail("optimize", &e, json_mode);
        }
        llm_config_free(&cfg);
        char *list = kstrdup(roles), *save = NULL;
        for (char *r = strtok_r(list, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
            int role = agent_role_from_name(r);
            if (role < 0 || role == AGENT_PROFILER || role == AGENT_ANALYST) {
                kerr_set(&e, KOPT_E_USAGE, "--roles: '%s' cannot be played by an LLM (planner, executor, summarizer)", r);
                break;
            }
            agent *a = agent_llm_create((agent_role)role, llm, NULL, &e);
            if (!a) break;
            o.agents[role] = a;
        }
        free(list);
        if (e.code) {
            for (int r = 0; r < AGENT_NROLES; r++) agent_free(o.agents[r]);
            llm_client_free(llm);
            return cli_fail("optimize", &e, json_mode);
        }
    }
    /* The memory. */
    kstore *store = NULL;
    if (!no_store) {
        const char *env = getenv("KOPT_STORE"), *home = getenv("HOME");
        char *path = store_arg ? kstrdup(store_arg) : (env && *env) ? kstrdup(env)
                                                  : kasprintf("%s/.cache/kopt/store.sqlite", home && *home ? home : ".");
        kerr se = {0};
        if (store_open(path, &store, &se)) {
            if (store_arg) {   /* asked for explicitly: a failure is an error */
                free(path);
                for (int r = 0; r < AGENT_NROLES; r++) agent_free(o.agents[r]);
                llm_client_free(llm);
                return cli_fail("optimize", &se, json_mode);
            }
            log_warn("cannot open the store %s (%s); running without memory", path, se.msg);
        }
        free(path);
    }
    o.store = store;
    if (fs_mkdirs(o.out_dir, &e)) return cli_fail("optimize", &e, json_mode);
    char *wd = fs_join(o.out_dir, "work");
    if (fs_mkdirs(wd, &e)) { free(wd); return cli_fail("optimize", &e, json_mode); }
    char *workdir = fs_realpath(wd);
    free(wd);
    o.workdir = workdir;
    cli_progress pg;
    cli_progress_init(&pg, json_mode);
    o.progress = cli_progress_line;
    o.progress_ctx = &pg;
    char *log_path = fs_join(o.out_dir, "worker.log");
    /* Inductor's and Triton's caches: private to this run (a restarted worker reuses them),
     * outside OUT (they are not the run's output; their size is reported separately), removed
     * at the end; a user's own TORCHINDUCTOR_CACHE_DIR is respected. */
    char *cache_dir = NULL;
    int own_triton = 0;
    if (!getenv("TORCHINDUCTOR_CACHE_DIR") && !fs_mkdtemp("kopt-cache", &cache_dir, &e)) {
        setenv("TORCHINDUCTOR_CACHE_DIR", cache_dir, 1);
        char *tc = fs_join(cache_dir, "triton");
        if (!getenv("TRITON_CACHE_DIR")) { setenv("TRITON_CACHE_DIR", tc, 1); own_triton = 1; }
        free(tc);
    }
    e.code = 0;
    worker *w = NULL;
    json_t *doc = NULL;
    char *sanitizer = NULL;
    int rc = want_memcheck ? memcheck_locate(&sanitizer, &e) : 0;
    o.memcheck = sanitizer;
    if (!rc) rc = cli_start_worker("optimize", python, log_path, 16, force_version, &w, &e);
    if (!rc) rc = optimize_run(w, &o, &doc, &e);
    cli_progress_end(&pg);
    worker_stop(w);
    if (cache_dir) {
        fs_rmtree(cache_dir);
        unsetenv("TORCHINDUCTOR_CACHE_DIR");
        if (own_triton) unsetenv("TRITON_CACHE_DIR");
        free(cache_dir);
    }
    if (!rc && !keep_work) fs_rmtree(workdir);
    if (!rc) {
        json_object_set_new(doc, "ok", json_true());
        char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
        char *p = fs_join(o.out_dir, "report.json");
        kerr we = {0};
        if (fs_write(p, s, strlen(s), &we)) rc = cli_fail("optimize", &we, json_mode);
        free(p);
        rc = rc ? rc : optimize_write_reports(doc, o.out_dir, &e);
        if (rc) cli_fail("optimize", &e, json_mode);
        else if (json_mode) puts(s);
        else print_summary(doc, o.out_dir);
        free(s);
    } else {
        cli_fail("optimize", &e, json_mode);
        if (fs_exists(log_path)) fprintf(stderr, "kopt optimize: the worker's log is in %s\n", log_path);
    }
    json_decref(doc);
    free(workdir);
    free(log_path);
    free(sanitizer);
    for (int r = 0; r < AGENT_NROLES; r++) agent_free(o.agents[r]);   /* agents before their client */
    llm_client_free(llm);
    store_close(store);
    return rc;
}
