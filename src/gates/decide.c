#include "gates/decide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

static json_t *cmp_json(int arg, const tensor_cmp *c) {
    json_t *o = json_pack("{s:i, s:b, s:I, s:I, s:f, s:f}", "arg", arg, "pass", c->pass, "mismatches",
                          (json_int_t)c->n_mismatch, "nonfinite_mismatches", (json_int_t)c->n_nonfinite_mismatch,
                          "max_abs_err", c->max_abs_err, "max_rel_err", c->max_rel_err);
    if (c->shape_mismatch) json_object_set_new(o, "shape_mismatch", json_true());
    if (c->first_mismatch != (size_t)-1)
        json_object_set_new(o, "first_mismatch", json_integer((json_int_t)c->first_mismatch));
    return o;
}

int gate2_decide(const json_t *iso, int *passed, json_t **verdict, kerr *e) {
    *passed = 1;
    json_t *v = json_object(), *sets = json_array();
    json_object_set_new(v, "sets", sets);
    *verdict = v;
    const json_t *checked = json_object_get(iso, "checked");
    kbuf reason = KBUF_INIT;
    size_t si;
    json_t *set;
    json_array_foreach(json_object_get(iso, "sets"), si, set) {
        const char *name = json_string_value(json_object_get(set, "name"));
        const json_t *runs = json_object_get(set, "runs");
        const json_t *orig = json_object_get(runs, "orig"), *c0 = json_object_get(runs, "cand0");
        json_t *so = json_pack("{s:s, s:[], s:[]}", "name", name ? name : "?", "args", "self_consistency");
        json_array_append_new(sets, so);
        if (!orig || !c0 || json_array_size(orig) != json_array_size(c0) ||
            json_array_size(orig) != json_array_size(checked)) {
            kbuf_free(&reason);
            return kerr_set(e, KOPT_E_WORKER, "isolate result for set %s is incomplete", name ? name : "?");
        }
        for (size_t k = 0; k < json_array_size(orig); k++) {
            int arg = (int)json_integer_value(json_array_get(checked, k));
            tensor_cmp c;
            char *where = NULL;
            if (tensor_compare_files(json_array_get(orig, k), json_array_get(c0, k), -1, -1, &c, &where, e)) {
                kbuf_free(&reason);
                return e->code;
            }
            json_array_append_new(json_object_get(so, "args"), cmp_json(arg, &c));
            if (!c.pass && *passed) {
                *passed = 0;
                kbuf_printf(&reason, "input set %s, argument %d: %s", name, arg,
                            c.shape_mismatch ? "shape differs" : (where ? where : "mismatch"));
            }
            free(where);
        }
        /* Further runs of the candidate against its first run. */
        for (int r = 1;; r++) {
            char key[16];
            snprintf(key, sizeof key, "cand%d", r);
            const json_t *cr = json_object_get(runs, key);
            if (!cr) break;
            for (size_t k = 0; k < json_array_size(c0) && k < json_array_size(cr); k++) {
                int arg = (int)json_integer_value(json_array_get(checked, k));
                tensor_cmp c;
                char *where = NULL;
                if (tensor_compare_files(json_array_get(c0, k), json_array_get(cr, k), -1, -1, &c, &where, e)) {
                    kbuf_free(&reason);
                    return e->code;
                }
                json_t *cj = cmp_json(arg, &c);
                json_object_set_new(cj, "run", json_integer(r));
                json_array_append_new(json_object_get(so, "self_consistency"), cj);
                if (!c.pass && *passed) {
                    *passed = 0;
                    kbuf_printf(&reason,
                                "input set %s, argument %d: run %d of the candidate disagrees with its "
                                "first run (a race or a read of uninitialised memory): %s",
                                name, arg, r + 1, where ? where : "mismatch");
                }
                free(where);
            }
        }
    }
    json_object_set_new(v, "passed", json_boolean(*passed));
    if (!*passed) json_object_set_new(v, "reason", json_string(kbuf_str(&reason)));
    kbuf_free(&reason);
    return 0;
}

int gate3_strict(const ktensor *eager, const ktensor *opt, tensor_cmp *cmp, kerr *e) {
    double atol, rtol;
    tensor_default_tol(eager->dtype, &atol, &rtol);
    memset(cmp, 0, sizeof *cmp);
    kerr ce = {0};
    int rc = tensor_compare(eager, opt, atol, rtol, cmp, &ce);
    if (rc && !cmp->shape_mismatch) {
        *e = ce;
        return -1;
    }
    return cmp->pass;
}

double gate3_rho(const ktensor *ref64, const ktensor *base, const ktensor *opt, double *opt_err,
                 double *base_err) {
    *opt_err = tensor_max_abs_diff(ref64, opt);
    *base_err = tensor_max_abs_diff(ref64, base);
    if (isnan(*opt_err)) return INFINITY;
    if (*base_err == 0) return *opt_err == 0 ? 1.0 : INFINITY;
    return *opt_err / *base_err;
}

int gate3_accept_rho(double rho, double opt_err, const gate3_opts *o) {
    double rmax = o && o->rho_max > 0 ? o->rho_max : 10.0;
    double bound = o && o->abs_bound > 0 ? o->abs_bound : 1e-2;
    return isfinite(rho) && rho <= rmax && opt_err <= bound;
}

int gate4_decide(const double *base, const double *cand, size_t n, double min_gain, uint64_t seed,
                 gate4_result *r, kerr *e) {
    memset(r, 0, sizeof *r);
    if (n < 2) return kerr_set(e, KOPT_E_INTERNAL, "gate 4 needs at least 2 timing rounds, got %zu", n);
    if (stats_speedup_ci_paired(base, cand, n, 0.95, 4000, seed, &r->ci))
        return kerr_set(e, KOPT_E_WORKER, "gate 4: timing samples are unusable (empty, non-finite or zero)");
    r->base_ms = stats_median(base, n);
    r->cand_ms = stats_median(cand, n);
    r->passed = r->ci.lo > 1.0 + min_gain;
    return 0;
}
