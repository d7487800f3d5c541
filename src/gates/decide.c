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

/* One worker statistics object, checked to be under the reference dtype's default tolerance. */
static int read_cmp(const json_t *st, tensor_cmp *c, kerr *e) {
    const char *dt = json_string_value(json_object_get(st, "dtype"));
    double atol, rtol;
    tensor_default_tol(dt, &atol, &rtol);
    return tensor_cmp_from_json(st, atol, rtol, c, e);
}

int gate2_reorder_only(const tensor_cmp *c) {
    if (c->pass || c->shape_mismatch || c->n_nonfinite_mismatch > 0 || !isfinite(c->ref_abs_max) || c->ref_abs_max <= 0)
        return 0;
    if (strcmp(c->dtype, c->got_dtype) || (strcmp(c->dtype, "float32") && strcmp(c->dtype, "float64"))) return 0;
    return c->max_abs_err <= GATE2_REORDER_REL * c->ref_abs_max && c->norm_ratio <= GATE2_REORDER_REL;
}

int gate2_decide(const json_t *iso, int *passed, json_t **verdict, kerr *e) {
    *passed = 1;
    json_t *v = json_object(), *sets = json_array();
    json_object_set_new(v, "sets", sets);
    *verdict = v;
    kbuf reason = KBUF_INIT;
    size_t si;
    json_t *set;
    if (!json_is_array(json_object_get(iso, "sets")) || json_array_size(json_object_get(iso, "sets")) == 0)
        return kerr_set(e, KOPT_E_WORKER, "isolate result has no input sets");
    json_array_foreach(json_object_get(iso, "sets"), si, set) {
        const char *name = json_string_value(json_object_get(set, "name"));
        const json_t *args = json_object_get(set, "args"), *changed = json_object_get(set, "inputs_changed");
        json_t *so = json_pack("{s:s, s:[], s:[]}", "name", name ? name : "?", "args", "self_consistency");
        json_array_append_new(sets, so);
        if (!name || !json_is_array(args) || !json_is_array(changed) ||
            json_array_size(args) != json_array_size(json_object_get(iso, "checked"))) {
            kbuf_free(&reason);
            return kerr_set(e, KOPT_E_WORKER, "isolate result for set %s is incomplete", name ? name : "?");
        }
        const json_t *ref_changed = json_object_get(set, "reference_changed");
        if (ref_changed && !json_is_boolean(ref_changed)) {
            kbuf_free(&reason);
            return kerr_set(e, KOPT_E_WORKER, "isolate result for set %s: reference_changed is not a boolean", name);
        }
        if (json_is_true(ref_changed) && *passed) {
            *passed = 0;
            kbuf_printf(&reason,
                        "input set %s: the original kernel's outputs, kept as the reference, changed while the "
                        "candidate ran (it wrote outside its own arguments)",
                        name);
        }
        if (json_array_size(changed) > 0 && *passed) {
            *passed = 0;
            kbuf_printf(&reason, "input set %s: the candidate wrote to its read-only input argument %lld", name,
                        (long long)json_integer_value(json_array_get(changed, 0)));
        }
        const json_t *outside = json_object_get(set, "outside_writes");
        if (outside && (!json_is_array(outside) || (json_array_size(outside) && !json_is_integer(json_array_get(outside, 0))))) {
            kbuf_free(&reason);
            return kerr_set(e, KOPT_E_WORKER, "isolate result for set %s: outside_writes is not a list of arguments", name);
        }
        const json_t *scratch = json_object_get(set, "scratch_outside_writes");
        if (scratch && !json_is_boolean(scratch)) {
            kbuf_free(&reason);
            return kerr_set(e, KOPT_E_WORKER, "isolate result for set %s: scratch_outside_writes is not a boolean",
                            name);
        }
        if (json_is_true(scratch) && *passed) {
            *passed = 0;
            kbuf_printf(&reason,
                        "input set %s: the candidate wrote outside a scratch buffer of its plan (into the bytes just "
                        "before or after it)",
                        name);
        }
        if (json_array_size(outside) > 0 && *passed) {
            *passed = 0;
            kbuf_printf(&reason,
                        "input set %s: the candidate wrote outside its output argument %lld (into the bytes "
                        "just before or after it: an unmasked store, or data kept past the end)",
                        name, (long long)json_integer_value(json_array_get(outside, 0)));
        }
        size_t k;
        json_t *ar;
        json_array_foreach(args, k, ar) {
            int arg = (int)json_integer_value(json_object_get(ar, "arg"));
            const json_t *runs = json_object_get(ar, "runs");
            if (!json_is_array(runs) || json_array_size(runs) == 0) {
                kbuf_free(&reason);
                return kerr_set(e, KOPT_E_WORKER, "isolate result for set %s, argument %d has no runs", name, arg);
            }
            int first_ok = 1;
            for (size_t r = 0; r < json_array_size(runs); r++) {
                tensor_cmp c;
                if (read_cmp(json_array_get(runs, r), &c, e)) {
                    kbuf_free(&reason);
                    return kerr_wrap(e, "isolate, set %s, argument %d, run %zu", name, arg, r + 1);
                }
                json_t *cj = cmp_json(arg, &c);
                /* an fp32 result off Inductor's only by summation order: float64 decides (gate 3) */
                int reorder = gate2_reorder_only(&c);
                if (reorder) {
                    json_object_set_new(cj, "deferred_to_float64", json_true());
                    if (!json_object_get(v, "deferred"))
                        json_object_set_new(v, "deferred",
                                            json_sprintf("input set %s, argument %d differs from Inductor's output within %g of "
                                                         "its scale (summation order): gate 3 judges it against float64",
                                                         name, arg, GATE2_REORDER_REL));
                }
                if (r == 0) {
                    json_array_append_new(json_object_get(so, "args"), cj);
                    first_ok = c.pass || reorder;
                } else {
                    json_object_set_new(cj, "run", json_integer((json_int_t)r));
                    json_array_append_new(json_object_get(so, "self_consistency"), cj);
                }
                if (c.pass || reorder || !*passed) continue;
                *passed = 0;
                char *where = tensor_cmp_str(&c);
                if (r == 0 || !first_ok)
                    kbuf_printf(&reason, "input set %s, argument %d: %s", name, arg, where);
                else
                    kbuf_printf(&reason,
                                "input set %s, argument %d: run %zu of the candidate disagrees with its first run "
                                "(a race or a read of uninitialised memory): %s",
                                name, arg, r + 1, where);
                free(where);
            }
        }
    }
    json_object_set_new(v, "passed", json_boolean(*passed));
    if (!*passed) json_object_set_new(v, "reason", json_string(kbuf_str(&reason)));
    kbuf_free(&reason);
    return 0;
}

double gate3_rho(const tensor_cmp *opt_vs_ref64, const tensor_cmp *base_vs_ref64, double *opt_err, double *base_err) {
    *opt_err = tensor_cmp_max_diff(opt_vs_ref64);
    *base_err = tensor_cmp_max_diff(base_vs_ref64);
    if (isnan(*opt_err) || isinf(*opt_err)) return INFINITY;
    if (*base_err == 0) return *opt_err == 0 ? 1.0 : INFINITY;
    return *opt_err / *base_err;
}

double gate3_abs_bound(double ref_abs_max, double roundoff, const gate3_opts *o) {
    double floor_ = o && o->abs_bound > 0 ? o->abs_bound : 5e-3;
    double rel = fmax(1e-3, GATE3_ULPS * roundoff);   /* fmax ignores a NaN roundoff */
    double scaled = isfinite(ref_abs_max) ? rel * ref_abs_max : 0;
    return scaled > floor_ ? scaled : floor_;
}

int gate3_accept_rho(double opt_err, double base_err, double ref_abs_max, double roundoff, const gate3_opts *o) {
    if (!(opt_err >= 0) || !isfinite(opt_err)) return 0;
    if (base_err < GATE3_EXACT_BASE) {
        double tol = GATE3_EXACT_REL * (isfinite(ref_abs_max) ? ref_abs_max : 0);
        return opt_err <= (tol > GATE3_EXACT_BASE ? tol : GATE3_EXACT_BASE);
    }
    double rmax = o && o->rho_max > 0 ? o->rho_max : 10.0;
    /* where the compiled baseline is itself further from float64 than the bound (an input fp32
     * cannot compute well: constant rows through a group norm, whose rstd ~ 1/sqrt(eps) magnifies
     * the mean's rounding), opt may be as far as the baseline, no further */
    double bound = fmax(gate3_abs_bound(ref_abs_max, roundoff, o), base_err);
    return opt_err / base_err <= rmax && opt_err <= bound;
}

size_t gate3_count_limit(size_t base_count, size_t numel, const gate3_opts *o) {
    double rmax = o && o->rho_max > 0 ? o->rho_max : 10.0;
    double lim = rmax * (double)base_count + GATE3_COUNT_SLACK + GATE3_COUNT_FRAC * (double)numel;
    return lim >= (double)SIZE_MAX ? SIZE_MAX : (size_t)lim;
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

int gate4_below_floor(double cand_ms, double floor_ms, double io_bytes, double l2_bytes) {
    if (!(floor_ms > 0) || !(cand_ms >= 0) || !(io_bytes >= GATE4_FLOOR_MIN_L2 * l2_bytes) || !(l2_bytes > 0)) return 0;
    return cand_ms < GATE4_FLOOR_MARGIN * floor_ms;
}

int gate4_host_decide(const double *base, const double *cand, size_t n, uint64_t seed, stats_ci *ci, int *slower,
                      kerr *e) {
    memset(ci, 0, sizeof *ci);
    *slower = 0;
    if (n < 2) return kerr_set(e, KOPT_E_INTERNAL, "gate 4's host check needs at least 2 rounds, got %zu", n);
    if (stats_speedup_ci_paired(base, cand, n, 0.95, 4000, seed, ci))
        return kerr_set(e, KOPT_E_WORKER, "gate 4: host-inclusive timing samples are unusable (empty, non-finite or zero)");
    *slower = ci->hi < 1.0;
    return 0;
}

int gate4_recheck_agrees(const gate4_recheck_out *o) {
    if (o->mismatch || o->numel < 0) return 0;
    long long off = o->integer ? o->n_mismatch : o->n_rel_err + o->n_nonfinite;
    return (double)off <= GATE4_RECHECK_FRACTION * (double)o->numel;
}

/* `rounds` clamped to [0, cap]: how many of them a timing re-checks. */
static int rounds_checked(int rounds, int cap) {
    if (rounds < 0) return 0;
    return rounds < cap ? rounds : cap;
}

int gate4_recheck_want(int rounds) { return rounds_checked(rounds, GATE4_RECHECK_ROUNDS); }

int gate4_host_checked_want(int host_rounds) { return rounds_checked(host_rounds, GATE4_HOST_CHECKED_ROUNDS); }
