/* cmd_verify.c — `kopt verify problem.py --replace KERNEL=candidate.py ... -o out/`. */
#include <dirent.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "gates/machine.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"
#include "verify/memcheck.h"
#include "verify/verify.h"

static const char USAGE[] =
    "usage: kopt verify <problem.py> (--replace KERNEL=FILE | --candidate FILE | --candidates DIR)... -o OUT\n"
    "\n"
    "Check replacement kernels for a compiled model through four gates and re-stitch the ones\n"
    "that pass: (1) static rules, launch interface and compile; (2) the kernel in isolation on\n"
    "its captured arguments and fresh random seeds, outputs NaN-poisoned; (3) the whole model\n"
    "against the eager model (float64 error ratio as fallback); (4) interleaved timing against\n"
    "the compiler's module with a 95%% bootstrap interval. The candidate contract is in\n"
    "docs/CANDIDATES.md. OUT receives optimized_module.py, kopt_loader.py and report.{json,txt};\n"
    "when nothing passes, it holds the compiler's module unchanged.\n"
    "\n"
    "options:\n"
    "  --replace K=FILE           candidate FILE replaces Triton kernel K\n"
    "  --candidate FILE           candidate naming its kernel ('# kopt-candidate: replaces=K')\n"
    "  --candidates DIR           every *.py in DIR, as --candidate\n"
    "  -o, --out DIR              output directory (required)\n"
    "  --seeds N                  fresh random seeds for gates 2 and 3, 1 to 1000 (default 3)\n"
    "  --rho-max X                gate 3 float64 error-ratio limit, > 0 (default 10)\n"
    "  --abs-bound X              gate 3: floor of the absolute error bound against float64,\n"
    "                             max(X, 1e-3 * |output|max, 4u * |output|max) with u the unit\n"
    "                             roundoff of the output's dtype, >= 0 (default 5e-3)\n"
    "  --min-gain X               gate 4: the CI's lower end must exceed 1+X, 0 <= X <= 10 (default 0.02)\n"
    "  --rounds N                 gate 4 interleaved timing rounds, 2 to 100000 (default 40)\n"
    "  --allow-precision-change   accept lower-precision arithmetic (reported as such)\n"
    "  --allow-launcher           accept form-L candidates' own `def launch` (host Python that runs where\n"
    "                             kopt judges: trusted code only; default: refused at gate 1, use form P)\n"
    "  --sass-check               require gate 1's machine-code check (an error when it cannot run):\n"
    "                             a form-P candidate's precision read from its machine code, each\n"
    "                             launch compiled for the captured launch in a sandbox process,\n"
    "                             disassembled (cuobjdump) and refused for float16/bfloat16/fp8 or\n"
    "                             tensor-core instructions the replaced kernel's types do not allow.\n"
    "                             Default: on when the python's triton and a cuobjdump are found,\n"
    "                             else off, and the report says why (report.json machine_check)\n"
    "  --no-sass-check            skip the machine-code check (the static rules still apply)\n"
    "  --jit-judge                gates 2-4 run a form-P candidate's kernels through Triton's JIT in the\n"
    "                             worker (its file imported there). Default: where the machine-code check\n"
    "                             ran, they run the very cubins it compiled in the sandbox and checked,\n"
    "                             and no line of the candidate's file is imported where inputs,\n"
    "                             references and timings live (report: candidates[].judged_code)\n"
    "  --memcheck                 gate 2 also runs each candidate that passed its numbers once under\n"
    "                             compute-sanitizer's memcheck (PyTorch's caching allocator off) and\n"
    "                             refuses out-of-bounds or misaligned accesses in its kernels; needs\n"
    "                             compute-sanitizer (PATH, /usr/local/cuda/bin, $KOPT_COMPUTE_SANITIZER).\n"
    "                             Default: off (a second worker, slow to start)\n"
    "  --timeout T                limit of each candidate step: 180, 90s, 5m; a candidate that hangs is\n"
    "                             refused (default 180 s)\n"
    "  --json                     print the report as JSON\n"
    "  --python PATH              python with torch and triton (default $KOPT_PYTHON or python3)\n"
    "  --force-version            run with a torch/triton other than the supported ones (kopt --version)\n"
    "  -v, --verbose              log each stage\n"
    "  -h, --help                 this help\n"
    "\n"
    "exit codes: 0 at least one candidate accepted, 12 all refused (baseline written), 1 internal\n"
    "  error, 2 bad command line, 3 problem or candidate file missing or not a file, 4 malformed\n"
    "  problem, 5 model raised, 6 no GPU, 7 worker failure, 8 no Triton kernels, 9 no usable python\n"
    "  (no torch, or an unsupported torch/triton), 10 parse error, 14 output not writable,\n"
    "  15 compile failed\n";

static int add_dir(kvec *paths, const char *dir, kerr *e) {
    if (fs_exists(dir) && !fs_is_dir(dir))
        return kerr_set(e, KOPT_E_NOFILE, "--candidates takes a directory; %s is a file (use --candidate FILE)", dir);
    DIR *d = opendir(dir);
    if (!d) return kerr_set(e, KOPT_E_NOFILE, "cannot open candidate directory %s", dir);
    kvec names = {0};
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n > 3 && !strcmp(de->d_name + n - 3, ".py")) kvec_push(&names, fs_join(dir, de->d_name));
    }
    closedir(d);
    /* sorted, so runs are reproducible */
    for (size_t i = 1; i < names.len; i++)
        for (size_t j = i; j > 0 && strcmp(names.items[j - 1], names.items[j]) > 0; j--) {
            void *t = names.items[j]; names.items[j] = names.items[j - 1]; names.items[j - 1] = t;
        }
    for (size_t i = 0; i < names.len; i++) kvec_push(paths, names.items[i]);
    kvec_free(&names);
    return 0;
}

int cmd_verify(int argc, char **argv) {
    static const struct option longopts[] = {
        {"replace", required_argument, 0, 'r'},   {"candidate", required_argument, 0, 'c'},
        {"candidates", required_argument, 0, 'C'}, {"out", required_argument, 0, 'o'},
        {"seeds", required_argument, 0, 's'},     {"rho-max", required_argument, 0, 'R'},
        {"abs-bound", required_argument, 0, 'A'}, {"min-gain", required_argument, 0, 'g'},
        {"rounds", required_argument, 0, 'n'},    {"allow-precision-change", no_argument, 0, 'P'},
        {"json", no_argument, 0, 'j'},            {"python", required_argument, 0, 'p'},
        {"verbose", no_argument, 0, 'v'},         {"help", no_argument, 0, 'h'},
        {"timeout", required_argument, 0, 'T'},   {"force-version", no_argument, 0, 'F'},
        {"allow-launcher", no_argument, 0, 'L'},  {"sass-check", no_argument, 0, 'S'},
        {"no-sass-check", no_argument, 0, 'N'},   {"memcheck", no_argument, 0, 'M'},
        {"jit-judge", no_argument, 0, 'J'},       {0, 0, 0, 0}};
    verify_opts o = {.seeds = 3, .rho_max = 10, .abs_bound = 5e-3, .min_gain = 0.02, .rounds = 40, .measure_floor = 1};
    kvec kernels = {0}, paths = {0};   /* parallel: kernel name (or NULL), path; both owned */
    const char *python = NULL;
    int sass_check = 0;   /* 1 required, -1 off, 0 auto: on when the tools are found */
    char *sass_python = NULL, *sass_note = NULL, *sanitizer = NULL;
    int json_mode = 0, opt, rc = 0, force_version = 0, want_memcheck = 0;
    kerr e = {0};
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:vh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'r': {
            const char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || !eq[1]) {
                kerr_set(&e, KOPT_E_USAGE, "--replace takes KERNEL=FILE, got '%s'", optarg);
                rc = KOPT_E_USAGE;
                break;
            }
            kvec_push(&kernels, kstrndup(optarg, (size_t)(eq - optarg)));
            kvec_push(&paths, kstrdup(eq + 1));
            break;
        }
        case 'c': kvec_push(&kernels, NULL); kvec_push(&paths, kstrdup(optarg)); break;
        case 'C': {
            size_t before = paths.len;
            if (add_dir(&paths, optarg, &e)) { rc = e.code; break; }
            while (kernels.len < paths.len) kvec_push(&kernels, NULL);
            (void)before;
            break;
        }
        case 'o': o.out_dir = optarg; break;
        case 's': rc = cli_parse_int("--seeds", optarg, 1, 1000, &o.seeds, &e); break;
        case 'R': rc = cli_parse_double("--rho-max", optarg, 1e-12, 1e12, &o.rho_max, &e); break;
        case 'A': rc = cli_parse_double("--abs-bound", optarg, 0, 1e12, &o.abs_bound, &e); break;
        case 'g': rc = cli_parse_double("--min-gain", optarg, 0, 10, &o.min_gain, &e); break;
        case 'n': rc = cli_parse_int("--rounds", optarg, 2, 100000, &o.rounds, &e); break;
        case 'P': o.allow_precision_change = 1; break;
        case 'L': o.allow_launcher = 1; break;
        case 'S': sass_check = 1; break;
        case 'N': sass_check = -1; break;
        case 'J': o.jit_judge = 1; break;
        case 'M': want_memcheck = 1; break;
        case 'T': rc = cli_parse_duration("--timeout", optarg, 0.1, 7 * 86400, &o.timeout_s, &e); break;
        case 'F': force_version = 1; break;
        case 'j': json_mode = 1; break;
        case 'p': python = optarg; break;
        case 'v': log_at_least(LOG_INFO); break;
        case 'h': fputs(USAGE, stdout); kvec_free_all(&kernels, free); kvec_free_all(&paths, free); return 0;
        default: rc = KOPT_E_USAGE; kerr_set(&e, KOPT_E_USAGE, "unknown option; see 'kopt verify --help'");
        }
        if (rc) break;
    }
    if (!rc && optind != argc - 1) rc = kerr_set(&e, KOPT_E_USAGE, "expected one problem file; see 'kopt verify --help'");
    if (!rc && !o.out_dir) rc = kerr_set(&e, KOPT_E_USAGE, "-o OUT is required");
    if (!rc && paths.len == 0) rc = kerr_set(&e, KOPT_E_USAGE, "no candidate given (--replace, --candidate or --candidates)");
    if (!rc) {
        o.problem = argv[optind];
        rc = cli_input_file("problem file", o.problem, &e);
    }
    for (size_t i = 0; !rc && i < paths.len; i++) rc = cli_input_file("candidate file", paths.items[i], &e);
    if (!rc && sass_check == 1) { /* the worker's python: its triton compiles in the sandbox */
        rc = machine_python(python, &sass_python, &e);
        o.sass_python = sass_python;
    } else if (!rc && sass_check == 0) { /* auto: on when the worker's python has triton and a cuobjdump is found */
        kerr pe = {0};
        if (machine_tools(python, &sass_python, &pe))
            sass_note = kasprintf("not found: %s (--sass-check makes the check required)", pe.msg);
        o.sass_python = sass_python;
    } else if (!rc) {
        sass_note = kstrdup("--no-sass-check");
    }
    o.sass_mode = sass_check == 1 ? "required" : sass_check == 0 ? "auto" : "off";
    o.sass_note = sass_note;
    if (!rc && want_memcheck) rc = memcheck_locate(&sanitizer, &e);
    o.memcheck = sanitizer;
    o.memcheck_python = python;
    if (rc) {
        free(sanitizer);
        free(sass_python);
        free(sass_note);
        int code = cli_fail("verify", &e, json_mode);
        kvec_free_all(&kernels, free);
        kvec_free_all(&paths, free);
        return code;
    }
    verify_cand *cands = kcalloc(paths.len, sizeof *cands);
    for (size_t i = 0; i < paths.len; i++) { cands[i].kernel = kernels.items[i]; cands[i].path = paths.items[i]; }
    o.cands = cands;
    o.ncands = paths.len;
    char *workdir = NULL;
    rc = fs_mkdirs(o.out_dir, &e);
    if (!rc) {
        char *wd = fs_join(o.out_dir, "work");
        rc = fs_mkdirs(wd, &e);
        workdir = fs_realpath(wd);
        free(wd);
    }
    cli_progress pg;
    cli_progress_init(&pg, json_mode);
    o.workdir = workdir;
    o.progress = cli_progress_line;
    o.progress_ctx = &pg;
    worker *w = NULL;
    json_t *doc = NULL;
    char *log_path = workdir ? fs_join(workdir, "worker.log") : NULL;
    if (!rc) rc = cli_start_worker("verify", python, log_path, 8, force_version, &w, &e);
    if (!rc) rc = verify_run(w, &o, &doc, &e);
    cli_progress_end(&pg);
    worker_stop(w);
    if (doc && (rc == 0 || rc == KOPT_E_CANDIDATE)) {
        if (json_mode) {
            json_object_set_new(doc, "ok", json_true());
            char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
            puts(s);
            free(s);
        } else {
            kbuf t = KBUF_INIT;
            verify_report_text(doc, &t);
            fputs(kbuf_str(&t), stdout);
            printf("written to %s (optimized_module.py, kopt_loader.py, report.json, report.txt)\n", o.out_dir);
            kbuf_free(&t);
        }
        if (rc) fprintf(stderr, "kopt verify: %s\n", e.msg);
    } else if (rc) {
        cli_fail("verify", &e, json_mode);
        if (log_path && fs_exists(log_path)) fprintf(stderr, "kopt verify: the worker's log is in %s\n", log_path);
    }
    json_decref(doc);
    free(cands);
    free(workdir);
    free(sass_python);
    free(sass_note);
    free(sanitizer);
    free(log_path);
    kvec_free_all(&kernels, free);
    kvec_free_all(&paths, free);
    return rc;
}
