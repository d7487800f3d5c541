/* cmd_inspect.c — `kopt inspect problem.py`: argument parsing, worker lifetime, progress line,
 * and rendering of the inspect document (profile/inspect.h builds it) as text or JSON. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "profile/inspect.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

static const char USAGE[] =
    "usage: kopt inspect <problem.py> [options]\n"
    "\n"
    "Compile a KernelBench-format model with torch.compile (default settings, eval mode, no\n"
    "grad), capture and parse Inductor's output module, and profile it on the GPU: every\n"
    "sub-kernel in launch order with its median GPU time, share of the model, bytes moved and\n"
    "achieved bandwidth against the device's measured copy bandwidth; whole-model times for\n"
    "eager and torch.compile.\n"
    "\n"
    "options:\n"
    "  --json               print the JSON document (docs/schema/inspect.md) instead of tables\n"
    "  --max-autotune       also time torch.compile mode \"max-autotune-no-cudagraphs\"\n"
    "  -o, --out DIR        keep the captured modules, arguments and logs in DIR\n"
    "  --reps N             profiling repetitions, 1 to 100000 (default 20)\n"
    "  --rounds N           interleaved whole-model timing rounds, 2 to 100000 (default 20)\n"
    "  --no-roundtrip       skip running the emitted module against the captured one\n"
    "  --python PATH        python with torch and triton (default $KOPT_PYTHON or python3)\n"
    "  --force-version      run with a torch/triton other than the supported ones (kopt --version)\n"
    "  -v, --verbose        log each stage\n"
    "  -h, --help           this help\n"
    "\n"
    "exit codes: 0 ok, 1 internal error, 2 bad command line, 3 problem file missing or not a file,\n"
    "  4 malformed problem, 5 model raised, 6 no GPU, 7 worker failure, 8 no Triton kernels\n"
    "  (and no ATen fallback call kopt may replace),\n"
    "  9 no usable python (no torch, or an unsupported torch/triton), 10 parse error,\n"
    "  14 output not writable, 15 compile failed\n";

static double num(const json_t *o, const char *k) {
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0.0;
}
static const char *str(const json_t *o, const char *k) {
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void print_time_line(const char *label, const json_t *t, const json_t *speedup) {
    if (!t) return;
    printf("  %-24s %9.3f ms  [p10 %.3f, p90 %.3f, n=%d]", label, num(t, "median_ms"), num(t, "p10_ms"),
           num(t, "p90_ms"), (int)num(t, "n"));
    if (speedup)
        printf("  %.2fx vs eager (95%% CI %.2f-%.2f)", num(speedup, "estimate"), num(speedup, "ci95_lo"),
               num(speedup, "ci95_hi"));
    putchar('\n');
}

static void join_strings(kbuf *b, const json_t *arr, const char *sep) {
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (i) kbuf_puts(b, sep);
        kbuf_puts(b, json_is_string(v) ? json_string_value(v) : "?");
    }
}

static void print_kernel_details(const json_t *art) {
    const json_t *kernels = json_object_get(art, "kernels"), *k;
    size_t i;
    json_array_foreach(kernels, i, k) {
        kbuf b = KBUF_INIT;
        printf("  %s  [%s]", str(k, "name"), str(k, "kind"));
        const json_t *hints = json_object_get(k, "size_hints");
        if (json_is_object(hints)) {
            const char *key;
            json_t *v;
            printf("  size hints");
            json_object_foreach((json_t *)hints, key, v) printf(" %s=%lld", key, (long long)json_integer_value(v));
        }
        if (*str(k, "grid_type")) printf("  grid %s", str(k, "grid_type"));
        putchar('\n');
        const json_t *params = json_object_get(k, "signature"), *p;
        size_t j;
        printf("      signature:");
        json_array_foreach(params, j, p) printf("%s %s %s (%s)", j ? "," : "", str(p, "name"), str(p, "type"),
                                               str(p, "role"));
        putchar('\n');
        join_strings(&b, json_object_get(k, "mutated_arg_names"), ", ");
        printf("      in place: %s\n", b.len ? kbuf_str(&b) : "-");
        kbuf_reset(&b);
        join_strings(&b, json_object_get(k, "aten_ops"), ", ");
        printf("      fuses ATen: %s\n", b.len ? kbuf_str(&b) : "-");
        kbuf_free(&b);
    }
}

static void print_text(const json_t *doc) {
    const json_t *dev = json_object_get(doc, "device"), *ceil = json_object_get(doc, "ceilings");
    printf("kopt inspect  %s\n", str(doc, "problem"));
    printf("device        %s (torch %s, triton %s)\n", str(dev, "name"), str(dev, "torch"), str(dev, "triton"));
    if (ceil)
        printf("ceilings      copy %.0f GB/s, fp32 GEMM %.1f TFLOP/s, bf16 GEMM %.0f TFLOP/s (measured)\n",
               num(ceil, "copy_gbps"), num(ceil, "fp32_tflops"), num(ceil, "bf16_tflops"));
    const json_t *model = json_object_get(doc, "model"), *times = json_object_get(model, "times");
    if (times) {
        printf("\nwhole model, GPU time (CUDA events, L2 flushed, interleaved runs):\n");
        print_time_line("eager", json_object_get(times, "eager"), NULL);
        print_time_line("torch.compile default", json_object_get(times, "compiled_default"),
                        json_object_get(model, "speedup_default_vs_eager"));
        print_time_line("max-autotune-no-cudagraphs", json_object_get(times, "compiled_max_autotune"),
                        json_object_get(model, "speedup_max_autotune_vs_eager"));
    }
    const json_t *graphs = json_object_get(doc, "graphs"), *g;
    size_t gi;
    json_array_foreach(graphs, gi, g) {
        const json_t *rows = json_object_get(g, "launches"), *r;
        printf("\ngraph %d  (%s)\n", (int)num(g, "index"), str(g, "module"));
        printf("  %-3s %-44s %-20s %9s %7s %10s %8s %7s\n", "#", "sub-kernel (launch order)", "kind",
               "time ms", "share", "MB moved", "GB/s", "%ceil");
        size_t ri;
        json_array_foreach(rows, ri, r) {
            int tri = !strcmp(str(r, "kind"), "triton");
            char kind[32];
            snprintf(kind, sizeof kind, "%s", tri ? str(r, "kernel_kind") : "vendor");
            const char *name = str(r, "name");
            printf("  %-3d %-44.44s %-20s %9.4f %6.1f%% %10.2f %8.0f %6.0f%%%s\n", (int)num(r, "index"), name, kind,
                   num(r, "time_ms"), 100 * num(r, "share"),
                   (num(r, "bytes_read") + num(r, "bytes_written")) / 1e6, num(r, "gbps"),
                   100 * num(r, "frac_of_ceiling"),
                   tri                                                    ? ""
                   : json_is_true(json_object_get(r, "replaceable")) ? "  (ATen call kopt may replace)"
                                                                          : "  (kept: cuBLAS/cuDNN)");
            if (!tri && num(r, "flops") > 0) printf("      %.1f TFLOP/s\n", num(r, "tflops"));
        }
        const json_t *pr = json_object_get(g, "profile");
        if (pr)
            printf("  sum of launches %.4f ms; instrumented call() %.4f ms (median of %d reps)\n",
                   num(pr, "sum_launch_ms"), num(json_object_get(pr, "call"), "median_ms"), (int)num(pr, "reps"));
        const json_t *rt = json_object_get(g, "roundtrip");
        if (rt) {
            printf("  round trip: emitted text %s", json_is_true(json_object_get(rt, "text_identical")) ? "identical" : "DIFFERS");
            if (json_object_get(rt, "outputs_match"))
                printf("; outputs %s the captured module's (max |diff| %.3g)",
                       json_is_true(json_object_get(rt, "outputs_identical")) ? "bit-identical to"
                       : json_is_true(json_object_get(rt, "outputs_match")) ? "within tolerance of"
                                                                              : "DIFFER from",
                       num(rt, "max_abs_diff"));
            putchar('\n');
        }
        printf("\n  kernels:\n");
        print_kernel_details(json_object_get(g, "artifact"));
        json_array_foreach(rows, ri, r) {
            if (strcmp(str(r, "kind"), "vendor")) continue;
            printf("  %s  [%s]  line %d\n", str(r, "name"),
                   json_is_true(json_object_get(r, "replaceable"))
                       ? "ATen fallback call: kopt optimize searches Triton kernels in its place"
                       : "vendor call, kept as is",
                   (int)num(r, "line"));
        }
        const json_t *unk = json_object_get(json_object_get(g, "artifact"), "unknown_statements");
        if (json_array_size(unk)) {
            printf("  statements kept verbatim but not recognised: %zu (see --json)\n", json_array_size(unk));
        }
    }
    const json_t *s = json_object_get(doc, "summary");
    if (s) {
        printf("\nsummary: %d Triton launches (%.4f ms, %.1f%% of kernel time), %d vendor calls (%.4f ms)\n",
               (int)num(s, "triton_launches"), num(s, "triton_ms"), 100 * num(s, "triton_share"),
               (int)num(s, "vendor_calls"), num(s, "vendor_ms"));
        if (num(s, "compiled_model_ms") > 0)
            printf("         per-launch times add up to %.4f ms = %.1f%% of the compiled model's %.4f ms\n",
                   num(s, "sum_launch_ms"), 100 * num(s, "sum_over_model"), num(s, "compiled_model_ms"));
    }
}

int cmd_inspect(int argc, char **argv) {
    static const struct option longopts[] = {
        {"json", no_argument, 0, 'j'},        {"max-autotune", no_argument, 0, 'm'},
        {"out", required_argument, 0, 'o'},   {"reps", required_argument, 0, 'r'},
        {"rounds", required_argument, 0, 'R'}, {"no-roundtrip", no_argument, 0, 'N'},
        {"python", required_argument, 0, 'p'}, {"verbose", no_argument, 0, 'v'},
        {"help", no_argument, 0, 'h'},        {"force-version", no_argument, 0, 'F'},
        {0, 0, 0, 0}};
    int json_mode = 0, opt, force_version = 0;
    inspect_opts o = {.reps = 20, .rounds = 20, .check_roundtrip = 1};
    const char *out = NULL, *python = NULL;
    kerr e = {0};
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:vh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'j': json_mode = 1; break;
        case 'm': o.max_autotune = 1; break;
        case 'o': out = optarg; break;
        case 'r':
            if (cli_parse_int("--reps", optarg, 1, 100000, &o.reps, &e)) return cli_fail("inspect", &e, json_mode);
            break;
        case 'R':
            if (cli_parse_int("--rounds", optarg, 2, 100000, &o.rounds, &e)) return cli_fail("inspect", &e, json_mode);
            break;
        case 'F': force_version = 1; break;
        case 'N': o.check_roundtrip = 0; break;
        case 'p': python = optarg; break;
        case 'v': log_at_least(LOG_INFO); break;
        case 'h': fputs(USAGE, stdout); return 0;
        default: fputs(USAGE, stderr); return KOPT_E_USAGE;
        }
    }
    if (optind != argc - 1) {
        fputs(USAGE, stderr);
        return KOPT_E_USAGE;
    }
    o.problem = argv[optind];
    if (cli_input_file("problem file", o.problem, &e)) return cli_fail("inspect", &e, json_mode);
    char *workdir = NULL;
    int rc = out ? fs_mkdirs(out, &e) : fs_mkdtemp("kopt-inspect", &workdir, &e);
    if (rc) return cli_fail("inspect", &e, json_mode);
    if (out) workdir = fs_realpath(out);
    o.workdir = workdir;
    char *log_path = fs_join(workdir, "worker.log");
    cli_progress ps;
    cli_progress_init(&ps, json_mode);
    o.progress = cli_progress_line;
    o.progress_ctx = &ps;

    worker *w = NULL;
    json_t *doc = NULL;
    cli_progress_line("starting the worker", &ps);
    rc = cli_start_worker("inspect", python, log_path, 0, force_version, &w, &e);
    if (!rc) rc = inspect_run(w, &o, &doc, &e);
    cli_progress_end(&ps);
    worker_stop(w);
    if (rc) {
        if (json_mode && doc) {
            json_object_set_new(doc, "ok", json_false());
            json_object_set_new(doc, "error", json_pack("{s:s, s:i, s:s}", "kind", kopt_code_name(rc),
                                                        "exit_code", rc, "message", e.msg));
            char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
            if (s) { puts(s); free(s); }
            fprintf(stderr, "kopt inspect: error: %s\n", e.msg);
        } else {
            cli_fail("inspect", &e, json_mode);
        }
        if (fs_exists(log_path) && (out || rc == KOPT_E_WORKER || rc == KOPT_E_INTERNAL ||
                                    rc == KOPT_E_COMPILE || rc == KOPT_E_PARSE))
            fprintf(stderr, "kopt inspect: the worker's log is in %s\n", log_path);
    } else if (json_mode) {
        json_object_set_new(doc, "ok", json_true());
        char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
        if (s) { puts(s); free(s); }
    } else {
        print_text(doc);
    }
    json_decref(doc);
    /* A temporary work directory is kept only when its worker log can explain a failure. */
    int keep_log = rc == KOPT_E_WORKER || rc == KOPT_E_INTERNAL || rc == KOPT_E_COMPILE || rc == KOPT_E_PARSE;
    if (!out && !keep_log) fs_rmtree(workdir);
    free(workdir);
    free(log_path);
    return rc;
}
