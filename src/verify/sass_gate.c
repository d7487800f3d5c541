/* sass_gate.c — see sass_gate.h. */
#include "verify/sass_gate.h"

#include <stdlib.h>
#include <string.h>

#include "gates/candidate.h"
#include "gates/machine.h"
#include "gates/sass.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/fs.h"

/* Triton's pointer type for a torch dtype name (plan.c's table, and the fp8 types), or NULL. */
static const char *ptr_type(const char *dtype) {
    const char *t = plan_triton_of_dtype(dtype);
    if (t || !dtype) return t;
    return !strcmp(dtype, "float8_e4m3fn") ? "*fp8e4nv" : !strcmp(dtype, "float8_e5m2") ? "*fp8e5" : NULL;
}

int sass_gate_values(const launch_plan *p, const guard_sig *sig, plan_values *v, unsigned *allowed, kerr *e) {
    memset(v, 0, sizeof *v);
    v->sms = 132; /* H100/H200; sm_count() only bounds grids and checks */
    if (p->nparams != sig->nargs)
        return kerr_set(e, KOPT_E_CANDIDATE, "the plan has %zu parameters, the launch %zu arguments", p->nparams,
                        sig->nargs);
    const char *types[PLAN_MAX_VALUES];
    size_t nt = 0;
    for (size_t i = 0; i < p->nparams; i++) {
        const guard_arg *a = &sig->args[i];
        if (a->kind == GUARD_TENSOR) {
            const char *t = ptr_type(a->dtype);
            if (!t)
                return kerr_set(e, KOPT_E_CANDIDATE, "argument %s: no Triton type for dtype %s", p->params[i],
                                a->dtype);
            if (v->nptrs >= PLAN_MAX_VALUES || a->ndim > PLAN_MAX_DIMS)
                return kerr_set(e, KOPT_E_CANDIDATE, "argument %s: too many tensors or dimensions", p->params[i]);
            size_t k = v->nptrs++;
            v->ptr_names[k] = p->params[i];
            v->ptr_types[k] = t;
            v->ndims[k] = a->ndim;
            for (size_t d = 0; d < a->ndim; d++) {
                v->shapes[k][d] = a->shape[d];
                v->strides[k][d] = a->stride ? a->stride[d] : 0;
            }
            v->has_strides[k] = a->stride != NULL;
            v->ptr_misaligned[k] = a->align16 == 0; /* the capture saw it misaligned: no "D" */
            if (nt < PLAN_MAX_VALUES) types[nt++] = t;
        } else if (a->kind == GUARD_INT || a->kind == GUARD_BOOL) {
            if (v->nints >= PLAN_MAX_VALUES / 2) return kerr_set(e, KOPT_E_CANDIDATE, "too many integer arguments");
            v->int_names[v->nints] = p->params[i];
            v->ints[v->nints++] = a->ival;
        }
    }
    *allowed = sass_allowed_for_types(types, nt);
    return 0;
}

int sass_gate_check(const char *path, const char *sha, const guard_sig *sig, const char *python, machine_server *server,
                    int allow_precision_change, const char *kernel, const char *keep_dir, int *kept, json_t *g1,
                    char **why, kerr *e) {
    *why = NULL;
    if (kept) *kept = 0;
    char *text = NULL;
    size_t len = 0;
    int rc = fs_read(path, &text, &len, e);
    if (rc) return rc;
    char now[STORE_SHA_HEX];
    store_sha256_hex(text, len, now);
    if (strcmp(now, sha)) { /* what is compiled here must be the file gate 1 judged */
        free(text);
        *why = kstrdup("machine-code check: the candidate file changed while it was being judged");
        return 0;
    }
    candidate *c = NULL;
    launch_plan *p = NULL;
    kerr ce = {0};
    if (candidate_parse_raw(text, len, &c, &ce) || c->plan_def < 0) { /* not form P (or judged before) */
        free(text);
        candidate_free(c);
        json_object_set_new(g1, "sass", json_pack("{s:s}", "skipped", "not form P"));
        return 0;
    }
    free(text);
    plan_values v;
    unsigned allowed = 0;
    machine_report mr = {0};
    if ((rc = plan_of(c, &p, &ce)) || (rc = sass_gate_values(p, sig, &v, &allowed, &ce))) {
        *why = kasprintf("machine-code check: %s", ce.msg);
        rc = 0;
        goto done;
    }
    machine_opts mo = {.python = python,
                       .arch = 90,
                       .timeout_s = 120,
                       .server = server, /* kopt's own script */
                       .kernel_prefix = keep_dir ? kernel : NULL,
                       .keep_dir = keep_dir};
    rc = machine_check(c, p, &v, sass_allowed(allowed, allow_precision_change), &mo, &mr, &ce);
    if (rc == KOPT_E_CANDIDATE || rc == KOPT_E_USAGE) { /* the candidate's fault: it does not compile */
        *why = kasprintf("machine-code check: %s", ce.msg);
        rc = 0;
        goto done;
    }
    if (rc) {
        kerr_set(e, rc, "gate 1's machine-code check could not run: %s", ce.msg);
        goto done;
    }
    for (size_t i = 0; i < mr.n; i++) {
        const machine_launch *L = &mr.launches[i];
        if (L->violation < 0 || *why) continue;
        if (SASS_BIT(L->violation) & SASS_NEVER_ALLOWED)
            *why = kasprintf("machine code: kernel %s %s (%s: `%s`, SASS line %d); no option accepts it", L->kernel,
                             sass_class_why((sass_class)L->violation), sass_class_name((sass_class)L->violation),
                             L->insn, L->line);
        else
            *why = kasprintf("machine code: kernel %s uses %s (`%s`, SASS line %d), which the replaced kernel's "
                             "types do not allow (--allow-precision-change accepts it)",
                             L->kernel, sass_class_name((sass_class)L->violation), L->insn, L->line);
    }
    json_object_set_new(g1, "sass", machine_report_json(&mr));
    if (kept && keep_dir && !*why) *kept = 1;
done:
    machine_report_free(&mr);
    plan_free(p);
    candidate_free(c);
    return rc;
}
