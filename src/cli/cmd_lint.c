/* cmd_lint.c — `kopt lint <candidate.py> [--json] [--kernel NAME] [--allow-precision-change]
 * [--dtype DTYPE] [--show-launcher]`: gate 1's static rules (gates/static.h) on one candidate file, on the CPU,
 * without a worker, a model or a GPU, so a user or an LLM loop can check a candidate before
 * asking for `kopt verify`. The verdict is the one `kopt verify` would reach for the rules: the
 * same parser, the same rules, the same options.
 *
 * Output: one line per finding, `FILE:LINE: RULE: `TEXT`: WHY`, then one summary line (stdout);
 * with --json one object {"ok", "file", "form", "replaces", "kernel", "findings": [{"rule",
 * "line", "column", "message", "text"}]}. A file that does not parse is one finding of rule
 * `parse`. --kernel NAME (the kernel the candidate replaces) adds the checks that need only the
 * name: the file's `# kopt-candidate: replaces=` binding, when present, must name it, and a
 * form-I kernel must be named like it (rule `interface`); the full interface check needs the
 * compiled model (kopt verify). --show-launcher prints, after the verdict, the text kopt judges
 * and ships for the file: for form P the file with the launcher kopt wrote from its plan.
 * Exit codes: 0 passes, KOPT_E_USAGE, KOPT_E_NOFILE (missing file, a directory), KOPT_E_CANDIDATE
 * (refused: findings printed). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/cli.h"
#include "gates/candidate.h"
#include "gates/machine.h"
#include "gates/plan.h"
#include "gates/plan_eval.h"
#include "gates/static.h"
#include "util/buf.h"
#include "util/fs.h"

static const char USAGE[] =
    "usage: kopt lint <candidate.py> [--json] [--kernel NAME] [--allow-precision-change] [--dtype DTYPE]\n"
    "                 [--allow-launcher] [--show-launcher]\n"
    "                 [--value NAME=N]... [--shape PTR=D0xD1...]... [--type PTR=*T]... [--sms N]\n"
    "                 [--sass [--arch CC] [--python P] [--keep-cubins DIR]]\n"
    "\n"
    "Check a candidate kernel file (docs/CANDIDATES.md) against gate 1's static rules, on the CPU:\n"
    "no worker, no model, no GPU. The rules are an allowlist (docs/SECURITY.md): imports of triton,\n"
    "triton.language, its math and libdevice, math, torch (allocation and dtypes only) and Inductor's\n"
    "Triton helpers; names the file defines; allowed builtins; literals. getattr, dunder names,\n"
    "backslash escapes and \"__\" in strings, non-ASCII identifiers, clock and SM-id reads are refused.\n"
    "Each finding is printed as FILE:LINE: RULE: `TEXT`: WHY.\n"
    "\n"
    "options:\n"
    "  --json                    print one JSON object: {\"ok\", \"file\", \"form\", \"replaces\", \"kernel\",\n"
    "                            \"findings\": [{\"rule\", \"line\", \"column\", \"message\", \"text\"}]}\n"
    "  --kernel NAME             the kernel the candidate replaces: its replaces= binding and a form-I\n"
    "                            kernel's name must match it (the full interface needs kopt verify)\n"
    "  --allow-precision-change  accept reduced precision (fp16/bf16/fp8, TF32), as kopt verify does\n"
    "  --allow-launcher          accept a form-L file's own `def launch`, as kopt verify --allow-launcher\n"
    "                            does (default: refused, rule launcher; write form P)\n"
    "  --dtype DTYPE             the model's dtype: float32 (default), float16 or bfloat16; the precision\n"
    "                            rules apply to float32 models\n"
    "  --show-launcher           after the verdict, print the text kopt judges and ships for this file\n"
    "                            (form P: the file with the launcher kopt writes from KOPT_PLAN); with\n"
    "                            --json, as the field \"judged_text\"\n"
    "  --sass                    also read the precision from the machine code (form P): compile each\n"
    "                            launch of the plan with Triton in a sandbox process (no GPU needed),\n"
    "                            disassemble it (cuobjdump -sass) and refuse float16/bfloat16/fp8\n"
    "                            arithmetic or conversions and tensor-core MMA that the replaced\n"
    "                            kernel's pointer types do not allow (rule precision_sass), reads of\n"
    "                            the clock or global timer (timer_sass) and of special registers\n"
    "                            outside those the launch geometry fixes, e.g. the SM id (hw_reg_sass;\n"
    "                            no option accepts these two); a kernel that does not compile: rule\n"
    "                            compile.\n"
    "A form-P plan is evaluated for one launch when values are given (or --sass): its lets and checks,\n"
    "scratch sizes, grid sizes against CUDA's limits (x up to 2^31-1, y and z up to 65535) and\n"
    "expression arguments; a launch that would fail when it runs is refused (rule plan_eval):\n"
    "  --value NAME=N            an integer parameter's value (repeatable)\n"
    "  --shape PTR=D0xD1...      a pointer parameter's shape, contiguous (for shape/stride/numel)\n"
    "  --type PTR=*T             a pointer parameter's Triton type (default from --dtype: *fp32)\n"
    "  --sms N                   the SM count for sm_count() (default 132, an H200)\n"
    "  --arch CC                 compute capability x10 to compile for (default 90)\n"
    "  --python P                python with triton for the sandbox (default $KOPT_PYTHON, python3)\n"
    "  --keep-cubins DIR         keep what was checked, per launch i of the plan: DIR/launch<i>.cubin (the\n"
    "                            machine code disassembled), launch<i>.json (kopt's copy of the compile's\n"
    "                            metadata, checked against what was asked: name, warps, stages, target,\n"
    "                            one CTA, no scratch, no cooperative grid) and launch<i>.spec.json (the\n"
    "                            kernel's parameters, types, constexprs and specialisation); DIR must\n"
    "                            exist\n"
    "  -h, --help                this text\n"
    "\n"
    "exit codes: 0 the candidate passes, 2 bad command line, 3 candidate file missing or not a file,\n"
    "  12 refused (each finding printed with its rule and line); with --sass also 2 for a value it\n"
    "  needs and 9 for no usable python/triton/cuobjdump\n";

typedef struct lint_opts {
    const char *path, *kernel, *dtype, *python, *keep_dir;
    int json, allow_precision_change, allow_launcher, show_launcher, sass, arch;
    int valued;       /* values given (or --sass): a form-P plan is evaluated for one launch */
    plan_values vals; /* --value, --shape, --type, --sms */
} lint_opts;

/* One finding, rule names as in static.h plus "parse" and "interface". */
typedef struct lint_finding {
    const char *rule;
    int line, col;
    char *text, *message;
} lint_finding;

typedef struct lint_list {
    lint_finding *v;
    size_t n, cap;
} lint_list;

static void lint_add(lint_list *l, const char *rule, int line, int col, const char *text, const char *msg) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = krealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = (lint_finding){rule, line, col, kstrdup(text), kstrdup(msg)};
}

static void lint_list_free(lint_list *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].text);
        free(l->v[i].message);
    }
    free(l->v);
}

static int usage_error(const char *msg, const char *arg, int json) {
    kerr e = {0};
    kerr_set(&e, KOPT_E_USAGE, "%s%s%s; see 'kopt lint --help'", msg, arg ? " " : "", arg ? arg : "");
    return cli_fail("lint", &e, json);
}

/* A whole number (at most 2^62), or -1. */
static long long whole(const char *s) {
    char *end;
    if (!*s || *s == '-' || *s == '+') return -1;
    long long v = strtoll(s, &end, 10);
    return *end || v < 0 || v > (1LL << 62) ? -1 : v;
}

/* NAME=VALUE of --value/--shape/--type, and --sms/--arch/--python. */
static int read_value(lint_opts *o, const char *flag, char *v) {
    plan_values *pv = &o->vals;
    if (!strcmp(flag, "--python")) {
        o->python = v;
        return 0;
    }
    if (!strcmp(flag, "--keep-cubins")) {
        struct stat st;
        if (stat(v, &st) != 0 || !S_ISDIR(st.st_mode)) return usage_error(flag, "takes an existing directory", o->json);
        o->keep_dir = v;
        return 0;
    }
    if (!strcmp(flag, "--sms") || !strcmp(flag, "--arch")) {
        long long n = whole(v);
        if (n <= 0 || n > 100000) return usage_error(flag, "takes a positive whole number", o->json);
        if (!strcmp(flag, "--sms")) pv->sms = n;
        else o->arch = (int)n;
        return 0;
    }
    char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1]) return usage_error(flag, "takes NAME=VALUE", o->json);
    *eq = 0;
    const char *name = v, *val = eq + 1;
    if (!strcmp(flag, "--value")) {
        long long n = whole(val);
        if (n < 0) return usage_error("--value takes NAME=N (a whole number), got", val, o->json);
        if (pv->nints >= PLAN_MAX_VALUES / 2) return usage_error("too many --value", NULL, o->json);
        pv->int_names[pv->nints] = name;
        pv->ints[pv->nints++] = n;
        return 0;
    }
    int i = -1;
    for (size_t k = 0; k < pv->nptrs; k++)
        if (!strcmp(pv->ptr_names[k], name)) i = (int)k;
    if (i < 0) {
        if (pv->nptrs >= PLAN_MAX_VALUES) return usage_error("too many pointers", NULL, o->json);
        i = (int)pv->nptrs++;
        pv->ptr_names[i] = name;
    }
    if (!strcmp(flag, "--type")) {
        if (!plan_dtype_of_triton(val) && strcmp(val, "*fp8e4nv") && strcmp(val, "*fp8e5"))
            return usage_error(
                "--type takes PTR=*fp32|*fp16|*bf16|*fp64|*i8|*i16|*i32|*i64|*u8|*i1|*fp8e4nv|*fp8e5, got", val,
                o->json);
        pv->ptr_types[i] = val;
        return 0;
    }
    size_t nd = 0;
    for (const char *p = val; *p;) { /* --shape D0xD1x... */
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p || d < 0 || nd >= PLAN_MAX_DIMS || (*end && *end != 'x'))
            return usage_error("--shape takes PTR=D0xD1... (at most 8 whole numbers), got", val, o->json);
        pv->shapes[i][nd++] = d;
        p = *end ? end + 1 : end;
    }
    pv->ndims[i] = nd;
    return 0;
}

static int read_opts(int argc, char **argv, lint_opts *o) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--json")) o->json = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) continue;
        if (!strcmp(a, "--allow-precision-change")) {
            o->allow_precision_change = 1;
            continue;
        }
        if (!strcmp(a, "--allow-launcher")) {
            o->allow_launcher = 1;
            continue;
        }
        if (!strcmp(a, "--show-launcher")) {
            o->show_launcher = 1;
            continue;
        }
        if (!strcmp(a, "--sass")) {
            o->sass = 1;
            continue;
        }
        if (!strcmp(a, "--value") || !strcmp(a, "--shape") || !strcmp(a, "--type") || !strcmp(a, "--sms") ||
            !strcmp(a, "--arch") || !strcmp(a, "--python") || !strcmp(a, "--keep-cubins")) {
            if (i + 1 >= argc) return usage_error("missing the value of", a, o->json);
            int rc = read_value(o, a, argv[++i]);
            if (rc) return rc;
            continue;
        }
        if (!strcmp(a, "--kernel") || !strcmp(a, "--dtype")) {
            if (i + 1 >= argc) return usage_error("missing the value of", a, o->json);
            const char *v = argv[++i];
            if (!strcmp(a, "--kernel")) {
                if (o->kernel) return usage_error("--kernel given twice:", v, o->json);
                if (!*v) return usage_error("--kernel takes a kernel name, got ''", NULL, o->json);
                o->kernel = v;
            } else {
                if (strcmp(v, "float32") && strcmp(v, "float16") && strcmp(v, "bfloat16")) {
                    kerr e = {0};
                    kerr_set(&e, KOPT_E_USAGE, "--dtype takes float32, float16 or bfloat16, got '%s'", v);
                    return cli_fail("lint", &e, o->json);
                }
                o->dtype = v;
            }
            continue;
        }
        if (a[0] == '-' && a[1]) return usage_error("unknown option", a, o->json);
        if (o->path) return usage_error("more than one candidate given:", a, o->json);
        o->path = a;
    }
    if (!o->path) return usage_error("missing the candidate path", NULL, o->json);
    if (o->keep_dir && !o->sass) return usage_error("--keep-cubins keeps what --sass compiles:", "add --sass", o->json);
    o->valued = o->sass || o->vals.nints || o->vals.nptrs || o->vals.sms;
    if (!o->vals.sms) o->vals.sms = 132; /* an H200 */
    return 0;
}

/* The line a candidate_parse message names ("line 12: ..."), or 0. */
static int message_line(const char *msg) {
    if (strncmp(msg, "line ", 5)) return 0;
    return atoi(msg + 5);
}

/* The checks --kernel NAME allows without the compiled model. */
static void lint_binding(const candidate *c, const char *kernel, lint_list *l) {
    const char *rep = candidate_replaces(c);
    if (rep && strcmp(rep, kernel)) {
        char *m = kasprintf("the file's binding names %s, --kernel names %s", rep, kernel);
        lint_add(l, "interface", c->replaces_line, 1, rep, m);
        free(m);
    }
    if (candidate_form(c) == CAND_FORM_I && strcmp(candidate_main_name(c), kernel)) {
        const cand_def *d = &c->defs[c->main_def];
        char *m = kasprintf("a form-I kernel must be named like the kernel it replaces (%s)", kernel);
        lint_add(l, "interface", d->line, 1, candidate_main_name(c), m);
        free(m);
    }
}

static int cmp_finding(const void *pa, const void *pb) {
    const lint_finding *a = pa, *b = pb;
    if (a->line != b->line) return a->line < b->line ? -1 : 1;
    return (a->col > b->col) - (a->col < b->col);
}

/* Plan p (of a form-P file) evaluated for the values given (--value/--shape/--sms): its lets and
 * checks, scratch sizes, grid sizes against CUDA's limits and expression arguments; a fault is a
 * finding (rule plan_eval). Returns 0, or KOPT_E_USAGE for a value it needs. */
static int lint_eval(const lint_opts *o, const launch_plan *p, lint_list *l, kerr *e) {
    plan_values v = o->vals;
    kerr pe = {0};
    int bad = plan_eval_lets(p, &v, &pe);
    if (!bad) bad = plan_eval_launches(p, &v, &pe);
    if (bad == KOPT_E_CANDIDATE) {
        lint_add(l, "plan_eval", message_line(pe.msg) ? message_line(pe.msg) : p->line, 1, "", pe.msg);
        return 0;
    }
    if (bad) *e = pe;
    return bad;
}

/* --sass: the machine-code check of a form-P file (gates/machine.h), its raw parse and plan
 * given (NULL for another form); findings into l. Returns 0, or an error for cli_fail (a missing
 * value, no python/triton/cuobjdump, the sandbox). */
static int lint_sass(const lint_opts *o, const candidate *lowered, const candidate *raw, const launch_plan *p,
                     lint_list *l, machine_report *mr, kerr *e) {
    if (!lowered->from_plan) {
        char *m = kasprintf("--sass reads a form-P plan; this file is form %s", candidate_form_label(lowered));
        lint_add(l, "precision_sass", 1, 1, "", m);
        free(m);
        return 0;
    }
    int rc = 0;
    plan_values v = o->vals;
    const char *dt = plan_triton_of_dtype(o->dtype) ? plan_triton_of_dtype(o->dtype) : "*fp32";
    const char *types[PLAN_MAX_VALUES];
    size_t nt = 0;
    for (size_t i = 0; i < p->nparams && !rc; i++) {
        if (!strstr(p->params[i], "ptr")) continue;
        int k = -1;
        for (size_t j = 0; j < v.nptrs; j++)
            if (!strcmp(v.ptr_names[j], p->params[i])) k = (int)j;
        if (k < 0) {
            if (v.nptrs >= PLAN_MAX_VALUES) break;
            k = (int)v.nptrs++;
            v.ptr_names[k] = p->params[i];
        }
        if (!v.ptr_types[k]) v.ptr_types[k] = dt;
        types[nt++] = v.ptr_types[k];
    }
    unsigned allowed = sass_allowed_for_types(types, nt);
    char *python = NULL;
    rc = machine_python(o->python, &python, e);
    if (!rc) {
        machine_opts mo = {.python = python, .arch = o->arch ? o->arch : 90, .timeout_s = 120, .keep_dir = o->keep_dir};
        rc = machine_check(raw, p, &v, sass_allowed(allowed, o->allow_precision_change), &mo, mr, e);
    }
    if (rc == KOPT_E_CANDIDATE) {
        lint_add(l, "compile", message_line(e->msg), 1, "", e->msg);
        rc = 0;
    }
    for (size_t i = 0; !rc && i < mr->n; i++) {
        const machine_launch *L = &mr->launches[i];
        if (L->violation < 0) continue;
        int never = (SASS_BIT(L->violation) & SASS_NEVER_ALLOWED) != 0;
        char *m = never ? kasprintf("kernel %s's machine code %s (%s, its SASS line %d); no option accepts it",
                                    L->kernel, sass_class_why((sass_class)L->violation),
                                    sass_class_name((sass_class)L->violation), L->line)
                        : kasprintf("kernel %s's machine code uses %s (its SASS line %d) where the replaced kernel's "
                                    "types allow %s; --allow-precision-change accepts it",
                                    L->kernel, sass_class_name((sass_class)L->violation), L->line,
                                    allowed ? "only their own conversions" : "none");
        lint_add(l,
                 !never                       ? "precision_sass"
                 : L->violation == SASS_TIMER ? "timer_sass"
                                              : "hw_reg_sass",
                 i < p->nlaunches ? p->launches[i].line : 0, 1, L->insn, m);
        free(m);
    }
    free(python);
    return rc;
}

static void print_json(const lint_opts *o, const candidate *c, const lint_list *l, const machine_report *mr) {
    json_t *arr = json_array();
    for (size_t i = 0; i < l->n; i++) {
        const lint_finding *f = &l->v[i];
        json_array_append_new(arr, json_pack("{s:s, s:i, s:i, s:s, s:s}", "rule", f->rule, "line", f->line, "column",
                                             f->col, "message", f->message, "text", f->text));
    }
    const char *rep = c ? candidate_replaces(c) : NULL;
    json_t *j = json_pack("{s:b, s:s, s:o, s:o, s:o, s:o}", "ok", l->n == 0, "file", o->path, "form",
                          c ? json_string(candidate_form_label(c)) : json_null(), "replaces",
                          rep ? json_string(rep) : json_null(), "kernel",
                          o->kernel ? json_string(o->kernel) : json_null(), "findings", arr);
    if (o->show_launcher) json_object_set_new(j, "judged_text", c ? json_string(c->text) : json_null());
    if (o->sass && mr && mr->n) json_object_set_new(j, "sass", machine_report_json(mr));
    char *s = json_dumps(j, JSON_INDENT(2));
    if (s) puts(s);
    free(s);
    json_decref(j);
}

static void print_text(const lint_opts *o, const candidate *c, const lint_list *l, const machine_report *mr) {
    for (size_t i = 0; i < l->n; i++) {
        const lint_finding *f = &l->v[i];
        if (f->text[0]) printf("%s:%d: %s: `%s`: %s\n", o->path, f->line, f->rule, f->text, f->message);
        else printf("%s:%d: %s: %s\n", o->path, f->line, f->rule, f->message);
    }
    for (size_t i = 0; o->sass && mr && i < mr->n; i++) {
        printf("sass: %s: %zu instructions, reduced-precision classes:", mr->launches[i].kernel, mr->launches[i].ninsn);
        if (!mr->launches[i].classes) printf(" none");
        for (int k = 0; k < SASS_NCLASSES; k++)
            if (mr->launches[i].classes & SASS_BIT(k)) printf(" %s", sass_class_name((sass_class)k));
        printf("\n");
    }
    if (o->sass && mr && mr->n) printf("sass: compiled in a sandbox: %s (%.1f s)\n", mr->protections, mr->compile_s);
    const char *what =
        o->sass && mr && mr->n ? "gate 1's static rules and machine-code check" : "gate 1's static rules";
    if (l->n) printf("%s: refused by %s: %zu finding%s\n", o->path, what, l->n, l->n == 1 ? "" : "s");
    else printf("%s: passes %s (form %s)\n", o->path, what, candidate_form_label(c));
    if (o->show_launcher && c) printf("---- the text kopt judges and ships for %s:\n%s\n", o->path, c->text);
}

int cmd_lint(int argc, char **argv) {
    if (cli_wants_help(argc, argv)) {
        fputs(USAGE, stdout);
        return 0;
    }
    lint_opts o = {0};
    int rc = read_opts(argc, argv, &o);
    if (rc) return rc;
    kerr e = {0};
    char *text = NULL;
    size_t len = 0;
    if ((rc = cli_input_file("candidate file", o.path, &e)) || (rc = fs_read(o.path, &text, &len, &e)))
        return cli_fail("lint", &e, o.json);
    lint_list l = {0};
    machine_report mr = {0};
    candidate *c = NULL;
    if (candidate_parse(text, len, &c, &e)) {
        lint_add(&l, "parse", message_line(e.msg), 1, "", e.msg);
        c = NULL;
    } else {
        static_opts so = {.allow_precision_change = o.allow_precision_change,
                          .allow_launcher = o.allow_launcher,
                          .model_dtype = o.dtype};
        static_report r = {0};
        kerr se = {0};
        static_check(c, &so, &r, &se);
        for (size_t i = 0; i < r.n; i++)
            lint_add(&l, static_rule_name(r.v[i].rule), r.v[i].line, r.v[i].col, r.v[i].text, r.v[i].why);
        static_report_free(&r);
        if (o.kernel) lint_binding(c, o.kernel, &l);
        /* with values, a form-P file's plan (read once) is evaluated, then compiled for --sass */
        candidate *raw = NULL;
        launch_plan *p = NULL;
        if (o.valued && !l.n && c->from_plan && !(rc = candidate_parse_raw(text, len, &raw, &e)) &&
            !(rc = plan_of(raw, &p, &e)))
            rc = lint_eval(&o, p, &l, &e);
        if (!rc && o.sass && !l.n) rc = lint_sass(&o, c, raw, p, &l, &mr, &e);
        plan_free(p);
        candidate_free(raw);
        if (rc) {
            free(text);
            lint_list_free(&l);
            candidate_free(c);
            machine_report_free(&mr);
            return cli_fail("lint", &e, o.json);
        }
    }
    free(text);
    if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_finding);
    if (o.json) print_json(&o, c, &l, &mr);
    else print_text(&o, c, &l, &mr);
    machine_report_free(&mr);
    rc = l.n ? KOPT_E_CANDIDATE : 0;
    lint_list_free(&l);
    candidate_free(c);
    return rc;
}
