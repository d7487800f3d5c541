/* cmd_parse.c — `kopt parse <module.py> [--json] [--emit FILE] [--instrument] [--bench N]`:
 * parse an Inductor output module without a GPU and show what kopt sees in it (kernels,
 * launches, vendor calls, buffers, statements it does not recognise), optionally write the
 * emitted module back (round trip or instrumented), or time the parser (`make bench`).
 * Exit codes: 0, KOPT_E_USAGE, KOPT_E_NOFILE (missing file), KOPT_E_PARSE (unparsable),
 * KOPT_E_IO (--emit cannot be written). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "cli/args.h"
#include "cli/cli.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"

static const char USAGE[] =
    "usage: kopt parse <module.py> [--json] [--emit FILE] [--instrument] [--bench N]\n"
    "\n"
    "Parse a Python output module written by PyTorch Inductor (no GPU needed) and print what\n"
    "kopt finds in it: Triton kernels (kind, signature roles, size hints, fused ATen ops),\n"
    "launches in execution order, vendor-library calls, buffers, and any statement of call()\n"
    "it does not recognise.\n"
    "\n"
    "options:\n"
    "  --json          print the whole model as one JSON document\n"
    "  --emit FILE     write the module back to FILE ('-' for stdout): byte-identical to the\n"
    "                  input unless --instrument is given\n"
    "  --instrument    with --emit: wrap every launch in _kopt_prof.pre(i) / _kopt_prof.post(i, ...)\n"
    "  --bench N       parse the file N times and print the median parse time in ms (1 to 100000)\n"
    "  -h, --help      this text\n"
    "\n"
    "exit codes: 0 ok, 2 bad command line, 3 module file missing or not a file, 10 the module\n"
    "  could not be parsed, 14 --emit FILE could not be written\n";

typedef struct parse_opts {
    const char *path, *emit;
    int json, instrument;
    long bench;
} parse_opts;

static int usage_error(const char *msg, const char *arg, int json) {
    kerr e = {0};
    kerr_set(&e, KOPT_E_USAGE, "%s%s%s; see 'kopt parse --help'", msg, arg ? " " : "", arg ? arg : "");
    return cli_fail("parse", &e, json);
}

static int read_opts(int argc, char **argv, parse_opts *o) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) o->json = 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) continue;
        if (!strcmp(a, "--instrument")) { o->instrument = 1; continue; }
        if (!strcmp(a, "--emit") || !strcmp(a, "--bench")) {
            if (i + 1 >= argc) return usage_error("missing the value of", a, o->json);
            if (!strcmp(a, "--emit")) { o->emit = argv[++i]; continue; }
            kerr e = {0};
            if (cli_parse_long("--bench", argv[++i], 1, 100000, &o->bench, &e)) return cli_fail("parse", &e, o->json);
            continue;
        }
        if (a[0] == '-' && a[1]) return usage_error("unknown option", a, o->json);
        if (o->path) return usage_error("more than one module given:", a, o->json);
        o->path = a;
    }
    if (!o->path) return usage_error("missing the module path", NULL, o->json);
    if (o->instrument && !o->emit) return usage_error("--instrument needs --emit FILE", NULL, o->json);
    return 0;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int run_bench(const parse_opts *o, const char *text, size_t len) {
    double *ms = kcalloc((size_t)o->bench, sizeof *ms);
    size_t nk = 0, nl = 0;
    for (long i = 0; i < o->bench; i++) {
        kerr e = {0};
        artifact *a = NULL;
        double t0 = 1e3 * clock_now();
        int rc = artifact_parse(text, len, &a, &e);
        ms[i] = 1e3 * clock_now() - t0;
        if (rc) {
            free(ms);
            kerr_wrap(&e, "%s", o->path);
            return cli_fail("parse", &e, o->json);
        }
        nk = a->nkernels;
        nl = a->nlaunches;
        artifact_free(a);
    }
    qsort(ms, (size_t)o->bench, sizeof *ms, cmp_double);
    size_t n = (size_t)o->bench;
    double med = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    if (o->json) {
        json_t *j = json_pack("{s:b,s:{s:s,s:I,s:I,s:f,s:f,s:f,s:I,s:I}}", "ok", 1, "bench", "module",
                              o->path, "runs", (json_int_t)n, "bytes", (json_int_t)len, "median_ms",
                              med, "min_ms", ms[0], "max_ms", ms[n - 1], "kernels", (json_int_t)nk,
                              "launches", (json_int_t)nl);
        char *s = json_dumps(j, JSON_INDENT(2));
        puts(s);
        free(s);
        json_decref(j);
    } else {
        printf("parse: median %.3f ms over %zu runs (min %.3f, max %.3f) for %zu bytes, "
               "%zu kernels, %zu launches\n", med, n, ms[0], ms[n - 1], len, nk, nl);
    }
    free(ms);
    return 0;
}

static void print_list(const char *label, const art_strlist *l) {
    if (!l->n) return;
    printf("      %s: ", label);
    for (size_t i = 0; i < l->n; i++) printf("%s%s", i ? ", " : "", l->v[i]);
    putchar('\n');
}

static void print_kernels(const artifact *a) {
    printf("kernels (%zu):\n", a->nkernels);
    for (size_t i = 0; i < a->nkernels; i++) {
        const art_kernel *k = &a->kernels[i];
        printf("  [%zu] %s  %s  line %d", i, k->name, art_kernel_kind_name(k->kind), k->line);
        if (k->grid_type) printf("  grid %s", k->grid_type);
        if (k->nhints) {
            printf("  size hints");
            for (size_t h = 0; h < k->nhints; h++) printf(" %s=%lld", k->hints[h].dim, k->hints[h].value);
        }
        putchar('\n');
        if (k->nparams) {
            printf("      signature: ");
            for (size_t p = 0; p < k->nparams; p++)
                printf("%s%s %s (%s)", p ? ", " : "", k->params[p].name, k->params[p].type,
                       art_role_name(k->params[p].role));
            putchar('\n');
        }
        print_list("in place", &k->mutated);
        print_list("ATen", &k->aten_ops);
        print_list("source nodes", &k->source_nodes);
    }
}

static void print_launches(const artifact *a) {
    printf("launches (%zu, in order):\n", a->nlaunches);
    for (size_t i = 0; i < a->nlaunches; i++) {
        const art_launch *l = &a->launches[i];
        printf("  #%-3zu line %-5d %-6s %s(", i, l->line, l->kind == ART_L_TRITON ? "triton" : "vendor", l->callee);
        size_t n = 0;
        for (size_t j = 0; j < l->args.n; j++, n++) printf("%s%s", n ? ", " : "", l->args.v[j]);
        for (size_t j = 0; j < l->kwnames.n; j++, n++)
            printf("%s%s=%s", n ? ", " : "", l->kwnames.v[j], l->kwvals.v[j]);
        putchar(')');
        if (l->target) printf(" -> %s", l->target);
        if (l->nnumels) {
            printf("  numels");
            for (size_t j = 0; j < l->nnumels; j++) printf(" %lld", l->numels[j]);
        }
        if (l->nextra) printf("  +%zu launcher args", l->nextra);
        putchar('\n');
    }
}

static void print_summary(const artifact *a, const char *path) {
    printf("module: %s (%zu bytes, %d lines)\n", path, a->len, a->nlines);
    printf("entry: %s at line %d", a->entry.form == ART_ENTRY_DEF ? "def call(args)" : "Runner.call(self, args)",
           a->entry.line);
    if (a->entry.inputs.n) {
        printf(", inputs: ");
        for (size_t i = 0; i < a->entry.inputs.n; i++) printf("%s%s", i ? ", " : "", a->entry.inputs.v[i]);
    }
    putchar('\n');
    print_kernels(a);
    print_launches(a);
    size_t nv = 0;
    for (size_t i = 0; i < a->nlaunches; i++) nv += a->launches[i].kind == ART_L_VENDOR;
    printf("vendor calls: %zu\n", nv);
    printf("buffers (%zu):\n", artifact_count(a, ART_ST_ALLOC));
    for (size_t i = 0; i < a->nstmts; i++) {
        const art_stmt *s = &a->stmts[i];
        if (s->kind == ART_ST_ALLOC)
            printf("  %-8s %s %s %s  line %d\n", s->target, s->shape ? s->shape : "?",
                   s->stride ? s->stride : "-", s->dtype ? s->dtype : "?", s->line);
    }
    printf("unknown statements (%zu)%s\n", artifact_count(a, ART_ST_UNKNOWN),
           artifact_count(a, ART_ST_UNKNOWN) ? ", kept verbatim:" : "");
    for (size_t i = 0; i < a->nstmts; i++) {
        const art_stmt *s = &a->stmts[i];
        if (s->kind == ART_ST_UNKNOWN)
            printf("  line %d: %.*s\n", s->line, (int)s->span.len, a->text + s->span.off);
    }
    if (a->nasync_other) printf("other async_compile statements: %zu\n", a->nasync_other);
    for (size_t i = 0; i < a->warnings.n; i++) printf("warning: %s\n", a->warnings.v[i]);
}

static int write_emit(const parse_opts *o, const artifact *a, kerr *e) {
    art_emit_opts eo = {0};
    eo.instrument = o->instrument;
    kbuf out = KBUF_INIT;
    int rc = artifact_emit(a, &eo, &out, e);
    if (!rc) {
        if (!strcmp(o->emit, "-")) {
            if (fwrite(kbuf_str(&out), 1, out.len, stdout) != out.len)
                rc = kerr_set(e, KOPT_E_IO, "cannot write the emitted module to stdout");
        } else {
            rc = fs_write(o->emit, kbuf_str(&out), out.len, e);
        }
    }
    kbuf_free(&out);
    return rc;
}

int cmd_parse(int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        fputs(USAGE, stdout);
        return 0;
    }
    parse_opts o = {0};
    int rc = read_opts(argc, argv, &o);
    if (rc) return rc;
    kerr e = {0};
    char *text = NULL;
    size_t len = 0;
    if ((rc = cli_input_file("module file", o.path, &e)) || (rc = fs_read(o.path, &text, &len, &e)))
        return cli_fail("parse", &e, o.json);
    if (o.bench) {
        rc = run_bench(&o, text, len);
        free(text);
        return rc;
    }
    artifact *a = NULL;
    rc = artifact_parse(text, len, &a, &e);
    free(text);
    if (rc) {
        kerr_wrap(&e, "%s", o.path);
        return cli_fail("parse", &e, o.json);
    }
    if (o.emit && (rc = write_emit(&o, a, &e))) {
        artifact_free(a);
        return cli_fail("parse", &e, o.json);
    }
    int to_stdout = o.emit && !strcmp(o.emit, "-");
    if (to_stdout) {
        /* the module went to stdout: nothing else may follow it there */
    } else if (o.json) {
        json_t *j = json_pack("{s:b,s:s,s:I,s:o}", "ok", 1, "module", o.path, "bytes", (json_int_t)a->len,
                              "artifact", artifact_to_json(a));
        if (o.emit) json_object_set_new(j, "emitted", json_string(o.emit));
        char *s = json_dumps(j, JSON_INDENT(2));
        if (s) puts(s);
        free(s);
        json_decref(j);
    } else {
        print_summary(a, o.path);
        if (o.emit) printf("emitted%s: %s\n", o.instrument ? " (instrumented)" : "", o.emit);
    }
    artifact_free(a);
    return 0;
}
