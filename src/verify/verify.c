#include "verify/verify.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "artifact/region.h"
#include "gates/candidate.h"
#include "gates/decide.h"
#include "gates/gate1.h"
#include "gates/static.h"
#include "gates/stats.h"
#include "gates/tensor.h"
#include "profile/inspect.h"
#include "profile/roofline.h"
#include "store/store.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/log.h"
#include "verify/guard.h"
#include "verify/memcheck.h"
#include "verify/sass_gate.h"

/* Timeouts (s). A candidate that hangs is caught by these and refused. */
enum { T_LOAD = 600, T_COMPILE = 1200, T_RUN = 300, T_TIME = 600 };

typedef struct winner {
    char *kernel;
    char *text;       /* replacement statement (guarded: guard.h): what ships */
    char *judged;     /* what the gates ran instead, where it differs (gate 1's cubins:
                       * candidate_cubin_stitch_text, guarded), or NULL */
    char *path;       /* candidate file */
    double speedup;
    char sha[STORE_SHA_HEX];   /* sha256 of the candidate file that was verified */
    guard_sig sig;    /* the launch signature the gates ran it on */
} winner;

static void winner_free(winner *w) {
    free(w->kernel);
    free(w->text);
    free(w->judged);
    free(w->path);
    guard_sig_free(&w->sig);
}

/* One of torch.compile's modules of the graph, as `compile` answered (PROTOCOL.md): the module,
 * its captured call() arguments, its attrs file (NULL: none) and how the loader rebuilds the
 * arguments (arg_sources, owned ref). mod is NULL when that mode was not compiled. */
typedef struct compiled_mod {
    char *mod, *args, *attrs;
    json_t *sources;
} compiled_mod;

static void compiled_read(const json_t *g, compiled_mod *c) {
    const char *attrs = json_string_value(json_object_get(g, "attrs"));
    c->mod = kstrdup(json_string_value(json_object_get(g, "module")));
    c->args = kstrdup(json_string_value(json_object_get(g, "args")));
    c->attrs = attrs ? kstrdup(attrs) : NULL;
    c->sources = json_incref(json_object_get(g, "arg_sources"));
}

static void compiled_free(compiled_mod *c) {
    free(c->mod);
    free(c->args);
    free(c->attrs);
    json_decref(c->sources);
}

struct verify_session {
    worker *w;
    const verify_opts *o;
    artifact *a;
    char *text;
    size_t len;
    const compiled_mod *orig; /* the module the session started from: &def or &ma */
    char *prof_path;          /* instrumented baseline module */
    char *base_mod;           /* the module candidates are stitched into: Inductor's, or after
                               * verify_session_regionize, Inductor's with region launchers */
    artifact *a0;             /* Inductor's artifact and text while a regioned one is current */
    char *text0;
    size_t len0;
    int nregions;
    json_t **launch_specs;    /* per kernel: its first launch's spec for the worker (owned), or NULL */
    int nseeds;
    compiled_mod def, ma;     /* torch.compile default's and max-autotune's (ma.mod NULL: not compiled) */
    int start_ma;             /* 1 when the session started from max-autotune's module */
    json_t *baselines;        /* {eager_ms, default_ms, max_autotune_ms, start, ...} once timed */
    json_t *working_set;      /* compile's working_set (owned) */
    int mutates_inputs;       /* the eager model writes to its inputs (load) */
    double floor_ms;          /* the model's memory-traffic floor (0: unknown), gate 4's physics check */
    double io_bytes;          /* the graph's own input + output bytes behind floor_ms */
    double t_setup;           /* wall seconds of the setup */
    winner *wins;             /* accepted candidates (growable) */
    size_t nwins, capwins;
    size_t ncand;             /* candidates checked so far (names their work directories) */
    verify_verdict_kind cand_kind; /* the current candidate's verdict, set where its record's is */
    int cand_refused_at;           /* its refusing gate (1-4), when refused */
    int cand_host_slower;          /* gate 4 passed its GPU time and refused it as slower as called */
    json_t *doc;              /* borrowed: the session's document */
    const char *sass_python;  /* gate 1's machine-code check for the next candidates (borrowed;
                               * NULL: off): o->sass_python, or the caller's per candidate */
    machine_server srv;       /* its compile server, started at the first check (srv_tried) */
    int srv_tried;
    json_t *load_req;         /* the `load` the worker got (owned): the memcheck worker gets it too */
    memcheck *mc;             /* gate 2's memcheck worker, started at the first candidate to check */
    char *mc_off;             /* why memcheck stopped (it could not be started), or NULL */
    size_t mc_runs, mc_refused, mc_other;   /* its tally: candidates run, refused, reports elsewhere */
    char *judged_out;         /* the output module as the gates judge it (winners from their cubins),
                               * written by finish where it differs from the one that ships */
    guard_env genv;           /* the worker's Triton and GPU: recorded in each guarded module */
};
typedef struct verify_session vctx;

/* The limit of one candidate step (compile, isolation, a model run): a hang is refused. */
static double cand_timeout(const vctx *v) { return v->o->timeout_s > 0 ? v->o->timeout_s : 180; }

static void progress(const vctx *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const vctx *v, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (v->o->progress) v->o->progress(buf, v->o->progress_ctx);
    log_info("%s", buf);
}

static int seed_of(int k) { return 1000 + k; }

/* ---------------------------------------------------------------- worker helpers */

/* A module target on the arguments of args file `args` (the worker rebuilds them from the
 * model: its sidecar names each one's source). */
static json_t *module_target_args(const char *module, const char *args) {
    return json_pack("{s:s, s:s, s:s}", "kind", "module", "module", module, "args", args);
}

/* A module stitched into the session's start module: the start module's arguments. */
static json_t *module_target(const vctx *v, const char *module) { return module_target_args(module, v->orig->args); }

/* Whether the worker's last answer was an out-of-memory error (kopt's resource, not a verdict). */
static int last_was_oom(const vctx *v) {
    const char *code = json_string_value(json_object_get(worker_last_error(v->w), "code"));
    return code && !strcmp(code, "out_of_memory");
}

/* One `run` of a target whose outputs the worker keeps under `keep` (PROTOCOL.md); `t` is its
 * time limit (a candidate's runs get the candidate step's). phase: "main", "eager" (the user's
 * model run eagerly in its own dtypes: its intermediates are not kopt's) or "f64". is_cand: a
 * candidate's module, whose run does not raise what the worker poisons for every later run
 * (its call() allocates the compiler's outputs; its own scratch is poisoned by kopt's launcher). */
static int run_target_as(vctx *v, json_t *target, int seed, int float64, const char *keep, const char *phase,
                         int low_memory, int is_cand, double t, json_t **res, kerr *e) {
    /* poisoning the allocator serves modules that could leave outputs unwritten; the eager
     * reference needs none (and its float64 run would poison its own large block) */
    int poison = strcmp(json_string_value(json_object_get(target, "kind")), "eager") != 0;
    json_t *req = json_pack("{s:o, s:i, s:b, s:s, s:s, s:b, s:b, s:b, s:b}", "target", target, "seed", seed, "float64",
                            float64, "keep", keep, "phase", phase, "low_memory", low_memory, "check_inputs", 1, "poison",
                            poison, "candidate", is_cand);
    return worker_call(v->w, "run", req, t, res, e);
}

static int run_target(vctx *v, json_t *target, int seed, int float64, const char *keep, const char *phase, int low_memory,
                      double t, json_t **res, kerr *e) {
    return run_target_as(v, target, seed, float64, keep, phase, low_memory, 0, t, res, e);
}

/* A run of gate 3's adversarial sets: inputs drawn under `seed` and transformed (`transform`,
 * stolen), in the "f64" memory phase. */
static int run_target_t(vctx *v, json_t *target, int seed, json_t *transform, int float64, const char *keep, int low_memory,
                        double t, json_t **res, kerr *e) {
    int poison = strcmp(json_string_value(json_object_get(target, "kind")), "eager") != 0;
    json_t *req = json_pack("{s:o, s:i, s:o, s:b, s:s, s:s, s:b, s:b, s:b}", "target", target, "seed", seed, "transform", transform,
                            "float64", float64, "keep", keep, "phase", "f64", "low_memory", low_memory, "check_inputs", 1,
                            "poison", poison);
    return worker_call(v->w, "run", req, t, res, e);
}

/* Frees kept outputs in the worker, in memory phase `phase` (the one that kept them);
 * failures are only logged (the next `keep` replaces them). */
static void drop_in(vctx *v, const char *phase, const char *a, const char *b, const char *c) {
    json_t *names = json_array();
    if (a) json_array_append_new(names, json_string(a));
    if (b) json_array_append_new(names, json_string(b));
    if (c) json_array_append_new(names, json_string(c));
    kerr e = {0};
    if (worker_call(v->w, "drop", json_pack("{s:o, s:s}", "names", names, "phase", phase), T_RUN, NULL, &e))
        log_warn("drop: %s", e.msg);
}

static void drop_kept(vctx *v, const char *a, const char *b, const char *c) { drop_in(v, "main", a, b, c); }

/* `compare` of two kept output lists, each output under the tolerance of its dtype (`exact`:
 * 0, 0: the statistics then carry the raw differences). */
static int compare_kept(vctx *v, const char *ref, const char *got, const json_t *outputs, int exact, const char *phase,
                        json_t **res, kerr *e) {
    json_t *tols = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(outputs, i, o) {
        double a = 0, r = 0;
        if (!exact && json_object_get(o, "dtype")) tensor_default_tol(json_string_value(json_object_get(o, "dtype")), &a, &r);
        json_array_append_new(tols, json_pack("[f, f]", a, r));
    }
    json_t *req = json_pack("{s:s, s:s, s:o, s:s}", "ref", ref, "got", got, "tols", tols, "phase", phase);
    /* against float64: also gate 3's count of elements far off their own value */
    if (exact) json_object_set_new(req, "rel_err", json_pack("[f, f, f]", GATE3_REL_ERR, GATE3_EXACT_BASE, GATE3_EXACT_REL));
    return worker_call(v->w, "compare", req, T_RUN, res, e);
}

static const char *role_name(art_role r) {
    switch (r) {
    case ART_ROLE_IN: return "in";
    case ART_ROLE_OUT: return "out";
    case ART_ROLE_INOUT: return "inout";
    default: return "scalar";
    }
}

/* The first launch of kernel k, or NULL. */
static const art_launch *first_launch(const artifact *a, int k) {
    for (size_t i = 0; i < a->nlaunches; i++)
        if (a->launches[i].kind == ART_L_TRITON && a->launches[i].kernel == k) return &a->launches[i];
    return NULL;
}

/* The launch spec of kernel k's first launch (PROTOCOL.md: the worker captures its arguments
 * when it first needs them and keeps them in memory): module, args, launch index, roles. */
static int launch_args_for(vctx *v, int k, const json_t **spec, kerr *e) {
    if (v->launch_specs[k]) { *spec = v->launch_specs[k]; return 0; }
    const art_launch *l = first_launch(v->a, k);
    if (!l) return kerr_set(e, KOPT_E_CANDIDATE, "kernel %s is never launched by call()", v->a->kernels[k].name);
    json_t *roles = json_array();
    for (size_t j = 0, nprobe = art_launch_probe_count(l); j < nprobe; j++) {
        const art_param *p = j < l->args.n ? art_launch_param(v->a, l, j) : NULL;
        json_array_append_new(roles, json_string(p ? role_name(p->role) : "scalar"));
    }
    v->launch_specs[k] = json_pack("{s:s, s:s, s:i, s:o}", "module", v->prof_path, "args", v->orig->args, "launch", l->index,
                                   "roles", roles);
    *spec = v->launch_specs[k];
    return 0;
}

/* ---------------------------------------------------------------- gates */

/* What a gate says: passed, refused (g has the reason), kopt's own resource error (GPU out of
 * memory even with low_memory: not the candidate's fault, g says so), or a pipeline error. */
enum { G_ERROR = -1, G_REFUSED = 0, G_PASSED = 1, G_RESOURCE = 2 };

static json_t *gate_obj(int n) { return json_pack("{s:i}", "gate", n); }

static void refuse(vctx *v, json_t *rec, json_t *g, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void refuse(vctx *v, json_t *rec, json_t *g, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_object_set_new(g, "passed", json_false());
    json_object_set_new(g, "reason", json_string(buf));
    json_object_set_new(rec, "verdict", json_string("refused"));
    json_object_set(rec, "refused_at", json_object_get(g, "gate"));
    v->cand_kind = VERIFY_REFUSED;
    v->cand_refused_at = (int)json_integer_value(json_object_get(g, "gate"));
    json_object_set_new(rec, "reason", json_string(buf));
}

/* The candidate could not be judged because kopt itself ran out of GPU memory: an error of
 * kopt's, recorded as such (verdict "error"), never a refusal. */
static void resource_error(vctx *v, json_t *rec, json_t *g, const char *step) {
    char *why = kasprintf("kopt ran out of GPU memory in %s, also with its low-memory fallback (host staging): a "
                          "resource limit of kopt's own, not a verdict on the candidate", step);
    json_object_set_new(g, "passed", json_false());
    json_object_set_new(g, "reason", json_string(why));
    json_object_set_new(g, "resource_error", json_true());
    json_object_set_new(rec, "verdict", json_string("error"));
    json_object_set_new(rec, "reason", json_string(why));
    v->cand_kind = VERIFY_ERROR;
    free(why);
}

static void gate_fail(json_t *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gate_fail(json_t *g, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_object_set_new(g, "passed", json_false());
    json_object_set_new(g, "reason", json_string(buf));
}

/* Whether a `compare` result says the kept outputs it compared had changed since they were kept
 * (the worker's content sums: a kernel of the candidate that ran meanwhile wrote into them);
 * then g has the refusal, naming the set `what`. */
static int kept_changed(json_t *g, const json_t *cres, const char *what) {
    if (!json_is_true(json_object_get(cres, "reference_changed"))) return 0;
    const json_t *names = json_object_get(cres, "changed");
    gate_fail(g,
              "%s: outputs kept in the worker for the comparison (%s) changed after they were kept: a kernel of the "
              "re-stitched module wrote outside its own buffers, or after its run",
              what, json_string_value(json_array_get(names, 0)) ? json_string_value(json_array_get(names, 0)) : "?");
    return 1;
}

/* Reads output k of a `compare` result under the tolerance it was asked for. */
static int cmp_output(const json_t *cres, size_t k, const json_t *outputs, int exact, tensor_cmp *c, kerr *e) {
    double a = 0, r = 0;
    if (!exact) tensor_default_tol(json_string_value(json_object_get(json_array_get(outputs, k), "dtype")), &a, &r);
    return tensor_cmp_from_json(json_array_get(json_object_get(cres, "outputs"), k), a, r, c, e);
}

/* Judges outputs against the float64 reference (the ratio rule, gate3_accept_rho, then the
 * count of elements far off their own value, at most gate3_count_limit) from the
 * `compare` results of the candidate (c_opt) and the baseline (c_base) against "g3.ref64";
 * outputs with mask[k] set are skipped (they passed the strict check), non-tensors too. `what`
 * names the input set in reasons ("seed 1000", "seed 1000, inputs x1e3"). Records rho and the
 * errors in so_list[k]; returns G_PASSED, G_REFUSED (g has the reason) or G_ERROR. On an
 * adversarial set an output whose baseline is itself not finite against float64 is not judged
 * (recorded); on a seed it is refused (nothing establishes the candidate's correctness). */
static int judge_f64(const json_t *c_opt, const json_t *c_base, const json_t *outputs, const int *mask, const gate3_opts *go,
                     json_t *g, json_t *so_list, const char *what, int adversarial, kerr *e) {
    for (size_t k = 0; k < json_array_size(outputs); k++) {
        if ((mask && mask[k]) || !json_object_get(json_array_get(outputs, k), "dtype")) continue;
        tensor_cmp co, cb;
        if (cmp_output(c_opt, k, outputs, 1, &co, e) || cmp_output(c_base, k, outputs, 1, &cb, e)) return G_ERROR;
        double oe = NAN, be = NAN;
        double rho = co.shape_mismatch ? INFINITY : gate3_rho(&co, &cb, &oe, &be);
        if (adversarial && !isfinite(be) && !co.shape_mismatch) {
            /* the compiled model itself overflows (or NaNs) where float64 does not: on such
             * inputs no fp32 implementation can be held to the float64 reference */
            json_object_set_new(json_array_get(so_list, k), "not_judged",
                                json_string("the compiled baseline is not finite where float64 is, on these inputs"));
            continue;
        }
        /* the rounding of the dtype the compiled model returns (the baseline's output dtype) */
        double u = tensor_unit_roundoff(cb.got_dtype[0] ? cb.got_dtype : co.got_dtype);
        int ok = !co.shape_mismatch && gate3_accept_rho(oe, be, co.ref_abs_max, u, go);
        double bound = gate3_abs_bound(co.ref_abs_max, u, go);
        json_t *so = json_array_get(so_list, k);
        json_object_set_new(so, "rho", isfinite(rho) ? json_real(rho) : json_string("inf"));
        json_object_set_new(so, "opt_err_vs_f64", isfinite(oe) ? json_real(oe) : json_string("inf"));
        json_object_set_new(so, "base_err_vs_f64", isfinite(be) ? json_real(be) : json_string("inf"));
        json_object_set_new(so, "abs_bound", json_real(bound));
        json_object_set_new(so, "accepted_by_rho", json_boolean(ok));
        if (!co.shape_mismatch) {   /* the count of elements far off their own value */
            if (!co.has_rel_err || !cb.has_rel_err) {
                kerr_set(e, KOPT_E_WORKER, "gate 3: the worker's float64 comparison lacks the relative-error count");
                return G_ERROR;
            }
            size_t lim = gate3_count_limit(cb.n_rel_err, co.numel, go);
            json_object_set_new(so, "n_rel_err", json_integer((json_int_t)co.n_rel_err));
            json_object_set_new(so, "base_n_rel_err", json_integer((json_int_t)cb.n_rel_err));
            json_object_set_new(so, "rel_err_limit", json_integer((json_int_t)lim));
            if (ok && co.n_rel_err > lim) {
                gate_fail(g, "%s, output %zu: %zu of %zu elements differ from the float64 reference by more than 1/%g of "
                             "their value (the baseline: %zu; at most %zu allowed): small outputs flushed or coarsely rounded",
                          what, k, co.n_rel_err, co.numel, 1 / GATE3_REL_ERR, cb.n_rel_err, lim);
                return G_REFUSED;
            }
        }
        if (ok) continue;
        if (co.shape_mismatch)
            gate_fail(g, "%s, output %zu: shape differs from the model's", what, k);
        else if (be < GATE3_EXACT_BASE)
            gate_fail(g, "%s, output %zu: the baseline is exact against float64 and the re-stitched module is not "
                         "(error %.3g, allowed %.3g)",
                      what, k, oe, fmax(GATE3_EXACT_BASE, GATE3_EXACT_REL * co.ref_abs_max));
        else
            gate_fail(g, "%s, output %zu: differs from the float64 reference by %.3g (baseline %.3g): rho = %.3g exceeds "
                         "rho_max %.3g or the error exceeds the bound %.3g",
                      what, k, oe, be, rho, go->rho_max > 0 ? go->rho_max : 10, bound);
        return G_REFUSED;
    }
    return G_PASSED;
}

/* The float64 fallback of gate 3 for one seed whose strict check failed on some outputs
 * (strict_ok[k] == 0; half-precision outputs always go here): the float64 eager reference, the
 * baseline module, their comparisons with the candidate's kept outputs ("g3.out"), all in the
 * worker's "f64" memory phase. `optional` (every output passed the strict check): a model that
 * does not run in float64 passes the seed, recorded as g.f64_not_run. */
static int gate3_f64(vctx *v, int s, const char *module, const json_t *outputs, const int *strict_ok, const gate3_opts *go,
                     json_t *g, json_t *so_list, int low, int optional, kerr *e) {
    int seed = seed_of(s), rc = G_ERROR;
    json_t *r64 = NULL, *rb = NULL, *c_opt = NULL, *c_base = NULL;
    kerr ce = {0};
    (void)module;
    if (run_target(v, json_pack("{s:s}", "kind", "eager"), seed, 1, "g3.ref64", "f64", low, T_RUN, &r64, &ce)) {
        if (last_was_oom(v)) { rc = G_RESOURCE; goto out; }
        if (optional) {   /* every output passed the strict check: a model float64 cannot run keeps that */
            json_object_set_new(g, "f64_not_run", json_sprintf("seed %d: the model does not run in float64: %s", seed, ce.msg));
            rc = G_PASSED;
            goto out;
        }
        *e = ce;
        kerr_wrap(e, "gate 3: the float64 eager reference on seed %d", seed);
        goto out;
    }
    if (compare_kept(v, "g3.ref64", "g3.out", outputs, 1, "f64", &c_opt, e)) goto out;
    drop_in(v, "f64", "g3.out", NULL, NULL);
    if (run_target(v, module_target(v, v->orig->mod), seed, 0, "g3.base", "f64", low, T_RUN, &rb, &ce)) {
        if (last_was_oom(v)) { rc = G_RESOURCE; goto out; }
        *e = ce;
        kerr_wrap(e, "gate 3: the baseline module on seed %d", seed);
        goto out;
    }
    if (compare_kept(v, "g3.ref64", "g3.base", outputs, 1, "f64", &c_base, e)) goto out;
    char what[64];
    snprintf(what, sizeof what, "seed %d", seed);
    if (kept_changed(g, c_opt, what) || kept_changed(g, c_base, what)) {
        rc = G_REFUSED;
        goto out;
    }
    rc = judge_f64(c_opt, c_base, outputs, strict_ok, go, g, so_list, what, 0, e);
out:
    drop_in(v, "f64", "g3.ref64", "g3.base", "g3.out");
    json_decref(r64);
    json_decref(rb);
    json_decref(c_opt);
    json_decref(c_base);
    return rc;
}

/* Gate 3's adversarial input sets: the floating inputs of one draw scaled up and down by 1e3,
 * shifted by +1e3, made constant along their last dimension, made negative (all <= -1: a
 * max started at 0 instead of -inf is wrong there), and given NaN or +-inf at fixed sparse
 * positions (a reduction that drops a NaN the reference propagates is wrong there; where the
 * compiled baseline itself does not match float64's non-finite values, the output is not
 * judged). Fixed fp32 tolerances mean
 * nothing there (cancellation), so each set is judged by the float64 rule alone: a candidate
 * whose numerics only hold for N(0,1)-like inputs (a softmax without the max shift, a variance
 * as E[x^2]-E[x]^2) fails where Inductor's kernel does not. */
static const struct {
    const char *kind;
    double value;
    const char *label;
} ADVERSARIAL[] = {{"scale", 1e3, "inputs x1e3"}, {"scale", 1e-3, "inputs x1e-3"}, {"shift", 1e3, "inputs +1e3"},
                   {"const_rows", 0, "constant rows"}, {"negative", 1, "inputs -(|x|+1)"},
                   {"nan", 97, "NaN at every 97th input element"}, {"inf", 89, "+inf and -inf at every 89th input element"}};
#define N_ADVERSARIAL (sizeof ADVERSARIAL / sizeof *ADVERSARIAL)

/* One adversarial set a (see ADVERSARIAL) on the draw of `seed`: the candidate first (so that no
 * reference exists while its kernels run), then the float64 eager model and the baseline module
 * (a set they cannot run is skipped and recorded as such, whatever the candidate did); judged by
 * judge_f64. A G_* code. */
static int gate3_adversarial(vctx *v, size_t a, int seed, const char *module, const gate3_opts *go, json_t *g, json_t *sets,
                             int low, kerr *e) {
    int rc = G_ERROR;
    json_t *r64 = NULL, *rb = NULL, *ro = NULL, *c_opt = NULL, *c_base = NULL, *so_list = json_array();
    json_t *rec = json_pack("{s:i, s:s}", "seed", seed, "set", ADVERSARIAL[a].label);
    json_array_append_new(sets, rec);
    kerr ce = {0};
#define TRANSFORM json_pack("{s:s, s:f}", "kind", ADVERSARIAL[a].kind, "value", ADVERSARIAL[a].value)
    kerr cf = {0};
    int cand_failed = run_target_t(v, module_target(v, module), seed, TRANSFORM, 0, "g3.out", low, cand_timeout(v), &ro, &cf);
    if (cand_failed && last_was_oom(v)) { rc = G_RESOURCE; goto out; }
    if (run_target_t(v, json_pack("{s:s}", "kind", "eager"), seed, TRANSFORM, 1, "g3.ref64", low, T_RUN, &r64, &ce) ||
        run_target_t(v, module_target(v, v->orig->mod), seed, TRANSFORM, 0, "g3.base", low, T_RUN, &rb, &ce)) {
        if (last_was_oom(v)) { rc = G_RESOURCE; goto out; }
        json_object_set_new(rec, "skipped", json_sprintf("the model or its compiled module cannot run on these inputs: %s", ce.msg));
        rc = G_PASSED;
        goto out;
    }
    if (cand_failed) {
        gate_fail(g, "seed %d, %s: the re-stitched module failed where the compiled model runs: %s", seed,
                  ADVERSARIAL[a].label, cf.msg);
        rc = G_REFUSED;
        goto out;
    }
#undef TRANSFORM
    const json_t *outputs = json_object_get(r64, "outputs");
    if (json_array_size(json_object_get(ro, "outputs")) != json_array_size(outputs)) {
        gate_fail(g, "seed %d, %s: the re-stitched module returns %zu outputs, the model %zu", seed, ADVERSARIAL[a].label,
                  json_array_size(json_object_get(ro, "outputs")), json_array_size(outputs));
        rc = G_REFUSED;
        goto out;
    }
    if (compare_kept(v, "g3.ref64", "g3.out", outputs, 1, "f64", &c_opt, e) ||
        compare_kept(v, "g3.ref64", "g3.base", outputs, 1, "f64", &c_base, e))
        goto out;
    for (size_t k = 0; k < json_array_size(outputs); k++) json_array_append_new(so_list, json_object());
    char what[96];
    snprintf(what, sizeof what, "seed %d, %s", seed, ADVERSARIAL[a].label);
    if (kept_changed(g, c_opt, what) || kept_changed(g, c_base, what)) {
        rc = G_REFUSED;
        goto out;
    }
    rc = judge_f64(c_opt, c_base, outputs, NULL, go, g, so_list, what, 1, e);
    json_object_set(rec, "outputs", so_list);
out:
    drop_in(v, "f64", "g3.ref64", "g3.base", "g3.out");
    json_decref(r64);
    json_decref(rb);
    json_decref(ro);
    json_decref(c_opt);
    json_decref(c_base);
    json_decref(so_list);
    return rc;
}

/* Gate 3 for one seed (see gate3): the candidate first, in the worker's "main" memory phase, then
 * the eager reference in "eager" (the candidate's kept outputs, resident, count there), and the
 * comparison in "main". The order is the point: while the candidate's kernels run, the reference
 * they are judged against does not exist yet, so no kernel can copy it into its outputs (nor
 * write it: kept_changed checks the candidate's own kept outputs as well). */
static int gate3_seed(vctx *v, int s, const char *module, const gate3_opts *go, json_t *g, json_t *seeds, int low,
                      kerr *e) {
    int seed = seed_of(s), rc = G_ERROR;
    json_t *re = NULL, *ro = NULL, *cres = NULL, *so_list = json_array();
    int *strict_ok = NULL;
    kerr ce = {0};
    if (run_target_as(v, module_target(v, module), seed, 0, "g3.out", "main", low, 1, cand_timeout(v), &ro, &ce)) {
        if (last_was_oom(v)) { rc = G_RESOURCE; goto out; }
        gate_fail(g, "the re-stitched module failed on seed %d: %s", seed, ce.msg);
        rc = G_REFUSED;
        goto out;
    }
    if (json_array_size(json_object_get(ro, "inputs_changed")) > 0 && !v->mutates_inputs) {
        gate_fail(g, "seed %d: the re-stitched module wrote to call() argument %lld, which the model only reads", seed,
                  (long long)json_integer_value(json_array_get(json_object_get(ro, "inputs_changed"), 0)));
        rc = G_REFUSED;
        goto out;
    }
    if (run_target(v, json_pack("{s:s}", "kind", "eager"), seed, 0, "g3.ref", "eager", low, T_RUN, &re, &ce)) {
        if (last_was_oom(v)) { rc = G_RESOURCE; goto out; }
        *e = ce;
        kerr_wrap(e, "gate 3: the eager model on seed %d", seed);
        goto out;
    }
    const json_t *outputs = json_object_get(re, "outputs");
    size_t nout = json_array_size(outputs);
    if (json_array_size(json_object_get(ro, "outputs")) != nout) {
        gate_fail(g, "the re-stitched module returns %zu outputs, the model %zu", json_array_size(json_object_get(ro, "outputs")),
                  nout);
        rc = G_REFUSED;
        goto out;
    }
    if (compare_kept(v, "g3.ref", "g3.out", outputs, 0, "main", &cres, e)) goto out;
    char what[32];
    snprintf(what, sizeof what, "seed %d", seed);
    if (kept_changed(g, cres, what)) {
        rc = G_REFUSED;
        goto out;
    }
    strict_ok = kcalloc(nout ? nout : 1, sizeof *strict_ok);
    int all_strict = 1, all_pass = 1;
    for (size_t k = 0; k < nout; k++) {
        json_t *so = json_object();
        json_array_append_new(so_list, so);
        if (!json_object_get(json_array_get(outputs, k), "dtype")) { strict_ok[k] = 1; continue; }   /* not a tensor */
        tensor_cmp c;
        if (cmp_output(cres, k, outputs, 0, &c, e)) goto out;
        /* a half-precision output also goes to float64 when it passes: the dtype's tolerance
         * (1e-2 absolute) cannot see small outputs flushed to 0, the count rule can */
        int narrow = tensor_unit_roundoff(c.got_dtype) > ldexp(1.0, -12);
        strict_ok[k] = c.pass && !narrow;
        all_strict &= strict_ok[k];
        all_pass &= c.pass;
        json_t *fields = json_pack("{s:i, s:i, s:b, s:f, s:I}", "seed", seed, "output", (int)k, "strict", c.pass,
                                   "max_abs_err_vs_eager", c.max_abs_err, "mismatches", (json_int_t)c.n_mismatch);
        json_object_update(so, fields);
        json_decref(fields);
        json_array_append(seeds, so);
    }
    drop_kept(v, "g3.ref", NULL, NULL);
    /* optional: only half-precision outputs that passed the strict check go to float64 */
    rc = all_strict ? G_PASSED : gate3_f64(v, s, module, outputs, strict_ok, go, g, so_list, low, all_pass, e);
out:
    drop_kept(v, "g3.ref", "g3.out", NULL);
    free(strict_ok);
    json_decref(so_list);
    json_decref(re);
    json_decref(ro);
    json_decref(cres);
    return rc;
}

/* Gate 3 on a module: per seed, fresh inputs; the module's outputs against the eager model's
 * (strict), else the float64 error ratio; an out-of-memory is retried once with low_memory.
 * Fills g; returns a G_* code (e set on G_ERROR). */
static int gate3(vctx *v, const char *module, json_t *g, kerr *e) {
    gate3_opts go = {.rho_max = v->o->rho_max, .abs_bound = v->o->abs_bound};
    json_t *seeds = json_array();
    json_object_set_new(g, "seeds", seeds);
    json_object_set_new(g, "rho_max", json_real(go.rho_max > 0 ? go.rho_max : 10));
    json_object_set_new(g, "abs_bound", json_real(go.abs_bound > 0 ? go.abs_bound : 5e-3));
    for (int s = 0; s < v->nseeds; s++) {
        int r = gate3_seed(v, s, module, &go, g, seeds, 0, e);
        if (r == G_RESOURCE) {
            json_object_set_new(g, "low_memory", json_true());
            r = gate3_seed(v, s, module, &go, g, seeds, 1, e);
        }
        if (r != G_PASSED) return r;
    }
    json_t *adv = json_array();
    json_object_set_new(g, "adversarial", adv);
    for (size_t a = 0; a < N_ADVERSARIAL && !v->o->no_adversarial; a++) {
        int r = gate3_adversarial(v, a, seed_of(v->nseeds), module, &go, g, adv, 0, e);
        if (r == G_RESOURCE) {
            json_object_set_new(g, "low_memory", json_true());
            r = gate3_adversarial(v, a, seed_of(v->nseeds), module, &go, g, adv, 1, e);
        }
        if (r != G_PASSED) return r;
    }
    json_object_set_new(g, "passed", json_true());
    return G_PASSED;
}

/* One output's counts of a re-checked round (the worker's `rechecks`), read into *o. */
static void recheck_out_of(const json_t *j, gate4_recheck_out *o) {
    memset(o, 0, sizeof *o);
    const char *dt = json_string_value(json_object_get(j, "dtype"));
    double atol = 1, rtol = 1;
    if (dt) tensor_default_tol(dt, &atol, &rtol);
    o->integer = atol == 0 && rtol == 0; /* integer and bool dtypes: compared exactly */
    o->mismatch = json_object_get(j, "mismatch") != NULL || json_is_true(json_object_get(j, "shape_mismatch")) ||
                  !json_is_integer(json_object_get(j, "numel"));
    o->numel = json_integer_value(json_object_get(j, "numel"));
    o->n_mismatch = json_integer_value(json_object_get(j, "n_mismatch"));
    o->n_rel_err = json_integer_value(json_object_get(j, "n_rel_err"));
    o->n_nonfinite = json_integer_value(json_object_get(j, "n_nonfinite_mismatch"));
}

/* Gate 4's re-check of timed outputs on fresh contents (decide.h): G_REFUSED with g's reason
 * when a re-checked output of a candidate (variant >= 1; only variant `judge` when >= 0: the
 * others' rounds are neither judged nor recorded) does not agree with the baseline's, in a timed round
 * or an as-called (host) one; which rounds were re-checked goes into g either way
 * ("rechecked_rounds", "rechecked_host_rounds"; "added_" before each for a timing whose rounds
 * are added to ones g holds already; what was rotated: time_modules). An answer without the
 * rounds asked for (`want` re-checks in all, unless the baseline itself refused rotated inputs)
 * is the worker's fault: G_ERROR. */
static int recheck_verdict(const json_t *res, size_t want, int judge, json_t *g, kerr *e) {
    const json_t *rc = json_object_get(res, "rechecks"), *fi = json_object_get(res, "fresh_inputs");
    int unusable = json_object_get(fi, "unusable") != NULL;
    if (!json_is_object(fi) || !json_is_array(rc) || (!unusable && json_array_size(rc) != want)) {
        kerr_set(e, KOPT_E_WORKER, "gate 4: the worker's timing lacks the %zu re-checked rounds on fresh contents it was "
                 "asked for", want);
        return G_ERROR;
    }
    int added = json_object_get(g, "rechecked_rounds") != NULL;
    json_t *rounds = json_array(), *hrounds = json_array();
    json_object_set_new(g, added ? "added_rechecked_rounds" : "rechecked_rounds", rounds);
    json_object_set_new(g, added ? "added_rechecked_host_rounds" : "rechecked_host_rounds", hrounds);
    size_t i;
    const json_t *x;
    json_array_foreach(rc, i, x) {
        json_int_t round = json_integer_value(json_object_get(x, "round"));
        if (judge >= 0 && json_integer_value(json_object_get(x, "variant")) != judge) continue;
        int host = json_is_true(json_object_get(x, "host"));
        json_array_append_new(host ? hrounds : rounds, json_integer(round));
        const char *kind = host ? "as-called round" : "timed round";
        const json_t *outs = json_object_get(x, "outputs");
        size_t k;
        const json_t *o;
        json_array_foreach(outs, k, o) {
            gate4_recheck_out r;
            recheck_out_of(o, &r);
            if (gate4_recheck_agrees(&r)) continue;
            const char *why = json_string_value(json_object_get(o, "mismatch"));
            if (why || r.mismatch)
                gate_fail(g, "in %s %lld, on the inputs rotated for it, output %zu does not match the baseline's: %s",
                          kind, (long long)round, k, why ? why : "another shape or no counts");
            else
                gate_fail(g, "in %s %lld, on the inputs rotated for it, output %zu differs from the baseline's in %lld "
                             "of %lld elements: results that do not follow the inputs (kept from contents seen "
                             "before?)",
                          kind, (long long)round, k, r.integer ? r.n_mismatch : r.n_rel_err + r.n_nonfinite, r.numel);
            return G_REFUSED;
        }
    }
    return G_PASSED;
}

/* How time_modules treats the loaded inputs. */
typedef enum {
    FRESH_OFF,     /* every run reads the loaded inputs as loaded */
    FRESH_ROTATE,  /* rotated before every run but the first (no run reads its predecessor's contents) */
    FRESH_RECHECK  /* so, and gate4_recheck_want(rounds) timed rounds and gate4_host_checked_want(host_rounds)
                      as-called rounds re-checked against variant 0 */
} fresh_mode;

/* Gate 4's timing of variant modules (interleaved rounds); *res the worker's result. `fresh`
 * (fresh_mode): whether the worker rotates the loaded inputs before every run, and whether it
 * re-checks rounds against variant 0 (recheck_verdict; `judge` as there). A G_* code: a timing
 * failure of a candidate is a refusal, an OOM kopt's resource error. */
static int time_modules(vctx *v, const char *const *mods, size_t n, int rounds, int host_rounds, fresh_mode fresh,
                        int judge, json_t *g, json_t **res, kerr *e) {
    json_t *vars = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(vars, module_target(v, mods[i]));
    kerr ce = {0};
    json_t *req = json_pack("{s:o, s:i, s:i, s:b, s:i}", "variants", vars, "rounds", rounds, "warmup", 5, "flush_l2", 1,
                            "host_rounds", host_rounds);
    if (fresh != FRESH_OFF) json_object_set_new(req, "fresh_inputs", json_true());
    if (fresh == FRESH_RECHECK) {
        json_object_set_new(req, "recheck_rounds", json_integer(GATE4_RECHECK_ROUNDS));
        if (host_rounds > 0) json_object_set_new(req, "host_recheck_rounds", json_integer(GATE4_HOST_CHECKED_ROUNDS));
        json_object_set_new(req, "recheck_rel", json_pack("[f, f, f]", GATE4_RECHECK_REL, 0.0, GATE4_RECHECK_REL));
    }
    if (worker_call(v->w, "time", req, T_TIME, res, &ce)) {
        if (last_was_oom(v)) return G_RESOURCE;
        gate_fail(g, "timing failed: %s", ce.msg);
        return G_REFUSED;
    }
    if (json_array_size(json_object_get(*res, "loaded_inputs_changed")) > 0 && !v->mutates_inputs) {
        gate_fail(g, "a timed module wrote to the model's inputs (restored); the model only reads them");
        return G_REFUSED;
    }
    /* rounds the worker timed again because its host fell behind the stall (kopt/timing.py), summed
     * over the timings g records: a busy host, for the record */
    json_int_t again = json_integer_value(json_object_get(*res, "rounds_timed_again"));
    if (again > 0)
        json_object_set_new(g, "rounds_timed_again",
                            json_integer(again + json_integer_value(json_object_get(g, "rounds_timed_again"))));
    const json_t *fi = json_object_get(*res, "fresh_inputs");   /* what was rotated, for the record */
    if (fresh != FRESH_OFF && json_is_object(fi)) json_object_set(g, "fresh_inputs", (json_t *)fi);
    size_t want = (size_t)(gate4_recheck_want(rounds) + gate4_host_checked_want(host_rounds)) * (n - 1);
    return fresh == FRESH_RECHECK ? recheck_verdict(*res, want, judge, g, e) : G_PASSED;
}

/* The speedup of samples `cand` over `base` with its paired CI, as JSON and in *r. */
static int speedup_of(const json_t *base, const json_t *cand, double min_gain, uint64_t seed, gate4_result *r, kerr *e) {
    size_t n, nc;
    double *b = stats_from_json(base, &n), *c = stats_from_json(cand, &nc);
    if (nc < n) n = nc;
    int rc = gate4_decide(b, c, n, min_gain, seed, r, e);
    free(b);
    free(c);
    return rc;
}

/* How the host-inclusive samples were taken, beside their interval h. */
static void host_method(json_t *h) {
    json_object_set_new(h, "method", json_string("wall time of a call to the end of its GPU work, device idle before it, "
                                                 "no stall, L2 flushed; interleaved"));
}

static json_t *ci_json(const stats_ci *ci) {
    return json_pack("{s:f, s:f, s:f}", "estimate", ci->estimate, "ci95_lo", ci->lo, "ci95_hi", ci->hi);
}

static json_t *speedup_json(const gate4_result *r) { return ci_json(&r->ci); }

/* The host-inclusive speedup of samples `cand` over `base` (JSON arrays of the time op's
 * host_samples) as {estimate, ci95_lo, ci95_hi, rounds} (caller owns), with gate4_host_decide's
 * interval in *ci and verdict in *slower; NULL (e set) when the samples are unusable. */
static json_t *host_speedup_of(const json_t *base, const json_t *cand, uint64_t seed, stats_ci *ci, int *slower,
                               kerr *e) {
    size_t n, nc;
    double *b = stats_from_json(base, &n), *c = stats_from_json(cand, &nc);
    if (nc < n) n = nc;
    int rc = gate4_host_decide(b, c, n, seed, ci, slower, e);
    free(b);
    free(c);
    if (rc) return NULL;
    json_t *h = ci_json(ci);
    json_object_set_new(h, "rounds", json_integer((json_int_t)n));
    return h;
}

static double l2_bytes(const vctx *v) { return json_number_value(json_object_get(worker_info(v->w), "l2_bytes")); }

/* Gate 4's host check on the time op's host_samples (baseline, candidate): g gets
 * "host_speedup"; G_REFUSED (g's reason) when the candidate is slower as the model is called or
 * the samples are unusable, else G_PASSED (also when the worker sent none: "host_check" says so). */
static int host_check(const json_t *hs, json_t *g) {
    if (json_array_size(hs) < 2) {
        json_object_set_new(g, "host_check", json_string("not measured: the worker sent no host-inclusive samples"));
        return G_PASSED;
    }
    stats_ci ci;
    int slower = 0;
    kerr he = {0};
    json_t *h = host_speedup_of(json_array_get(hs, 0), json_array_get(hs, 1), 13, &ci, &slower, &he);
    if (!h) {
        gate_fail(g, "%s", he.msg);
        return G_REFUSED;
    }
    host_method(h);
    json_object_set_new(g, "host_speedup", h);
    if (!slower) return G_PASSED;
    gate_fail(g, "slower as the model is called: with host dispatch included (no stalled stream) the speedup is %.3fx, "
                 "95%% CI [%.3f, %.3f] below 1: the host work its launches add eats the GPU gain",
              ci.estimate, ci.lo, ci.hi);
    return G_REFUSED;
}

/* The host samples hs of the n modules mods (gate 4's baseline and candidate, or the final
 * measurement's modules) with GATE4_HOST_RECHECK_ROUNDS more rounds timed after them, pooled
 * module by module in *pooled (caller owns; see GATE4_HOST_RECHECK_ROUNDS); their rounds are
 * re-checked as the first ones were (variant `judge`'s, as recheck_verdict). A G_* code (G_REFUSED
 * with g's reason when the timing failed or an output was stale). */
static int host_rounds_more(vctx *v, const char *const *mods, size_t n, const json_t *hs, int judge, json_t *g,
                            json_t **pooled, kerr *e) {
    json_t *res = NULL;
    int rc = time_modules(v, mods, n, 1, GATE4_HOST_RECHECK_ROUNDS, FRESH_RECHECK, judge, g, &res, e);
    if (rc == G_PASSED) {
        const json_t *hs2 = json_object_get(res, "host_samples");
        *pooled = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *a = json_deep_copy(json_array_get(hs, i));
            json_array_extend(a, json_array_get(hs2, i));
            json_array_append_new(*pooled, a);
        }
    }
    json_decref(res);
    return rc;
}

/* Gate 4: the candidate module against the session's start module; a G_* code. `reverify`:
 * this is the second measurement of an implausible speedup (no third). */
static int gate4_run(vctx *v, const char *module, json_t *g, double *speedup, int reverify, kerr *e) {
    const char *mods[2] = {v->orig->mod, module};
    json_t *res = NULL;
    int rounds = v->o->rounds > 1 ? v->o->rounds : 40;
    int rc = time_modules(v, mods, 2, rounds, GATE4_HOST_ROUNDS, FRESH_RECHECK, -1, g, &res, e);
    if (rc != G_PASSED) { json_decref(res); return rc; }
    const json_t *smp = json_object_get(res, "samples");
    gate4_result r;
    kerr se = {0};
    if (speedup_of(json_array_get(smp, 0), json_array_get(smp, 1), v->o->min_gain >= 0 ? v->o->min_gain : 0.02, 7, &r, &se)) {
        /* unusable samples (a zero or non-finite time) say nothing about this candidate's speed:
         * a refusal of this candidate, never the end of the run */
        gate_fail(g, "timing gave unusable samples: %s", se.msg);
        json_decref(res);
        return G_REFUSED;
    }
    /* when the GPU time passed but the first host rounds say slower, the host check is decided
     * once, on those rounds pooled with more (host_recheck keeps the first interval) */
    const json_t *hs = json_object_get(res, "host_samples");
    json_t *pooled = NULL, *first = NULL;
    int more_rc = G_PASSED;
    if (r.passed && json_array_size(hs) >= 2) {
        stats_ci ci1;
        int slower1 = 0;
        kerr he = {0};
        first = host_speedup_of(json_array_get(hs, 0), json_array_get(hs, 1), 13, &ci1, &slower1, &he);
        if (first && slower1) {
            more_rc = host_rounds_more(v, mods, 2, hs, -1, g, &pooled, e);
        } else {
            json_decref(first);
            first = NULL;
        }
    }
    if (more_rc == G_RESOURCE || more_rc == G_ERROR) {
        json_decref(first);
        json_decref(res);
        return more_rc;
    }
    int host_rc = more_rc == G_REFUSED ? G_REFUSED : host_check(pooled ? pooled : hs, g);
    if (first) {
        host_method(first);
        json_object_set_new(g, "host_recheck",
                            json_pack("{s:o, s:i, s:s}", "first", first, "added_rounds", GATE4_HOST_RECHECK_ROUNDS, "why",
                                      "the first host-inclusive rounds said slower while the GPU time passed: decided "
                                      "again on all rounds together"));
    }
    json_decref(pooled);
    /* where host time goes: each module's time to enqueue its call (a report, not a verdict) */
    if (json_array_size(json_object_get(res, "enqueue_ms")) == 2) json_object_set(g, "enqueue_ms", json_object_get(res, "enqueue_ms"));
    json_decref(res);
    json_object_set_new(g, "baseline_ms", json_real(r.base_ms));
    json_object_set_new(g, "candidate_ms", json_real(r.cand_ms));
    if (gate4_below_floor(r.cand_ms, v->floor_ms, v->io_bytes, l2_bytes(v))) {
        gate_fail(g, "does less work than the model requires: %.4g ms is below the memory-traffic floor %.4g ms (its "
                     "inputs read once and outputs written once at this GPU's measured rates; refused below %.0f%% of it)",
                  r.cand_ms, v->floor_ms, 100 * GATE4_FLOOR_MARGIN);
        json_object_set_new(g, "floor_ms", json_real(v->floor_ms));
        return G_REFUSED;
    }
    if (r.passed && host_rc != G_PASSED) {
        json_object_set_new(g, "speedup", speedup_json(&r));
        v->cand_host_slower = host_rc == G_REFUSED;
        return host_rc;
    }
    if (r.passed && r.ci.estimate > GATE4_REVERIFY && !reverify) {
        /* an implausible speedup counts only if a second, independent measurement agrees */
        json_t *g2 = json_object();
        double sp2 = 0;
        int r2 = gate4_run(v, module, g2, &sp2, 1, e);
        json_object_set_new(g, "reverified", g2);
        if (r2 != G_PASSED) {
            if (r2 == G_REFUSED)
                gate_fail(g, "a speedup of %.1fx was not confirmed by a second measurement: %s", r.ci.estimate,
                          json_string_value(json_object_get(g2, "reason")));
            return r2;
        }
    }
    json_object_set_new(g, "speedup", speedup_json(&r));
    json_object_set_new(g, "rounds", json_integer((json_int_t)rounds));
    json_object_set_new(g, "min_gain", json_real(v->o->min_gain));
    json_object_set_new(g, "method", json_string("median GPU time of the graph module, candidate and baseline "
                                                 "interleaved per round, L2 flushed, stream stalled, outputs poisoned "
                                                 "between runs; 95% paired bootstrap interval of the ratio of medians"));
    json_object_set_new(g, "passed", json_boolean(r.passed));
    if (!r.passed)
        json_object_set_new(g, "reason", json_sprintf("not faster: speedup %.3fx, 95%% CI [%.3f, %.3f] does not lie "
                                                      "above %.3f",
                                                      r.ci.estimate, r.ci.lo, r.ci.hi, 1 + v->o->min_gain));
    *speedup = r.ci.estimate;
    return r.passed ? G_PASSED : G_REFUSED;
}

static int gate4(vctx *v, const char *module, json_t *g, double *speedup, kerr *e) {
    return gate4_run(v, module, g, speedup, 0, e);
}

/* ---------------------------------------------------------------- one candidate */

/* The module with reps[0..n) stitched into `out`; with ents (one per rep, guarded texts), the
 * header recording each one's verified sha256 and signature (guard.h) on top. */
static int emit_module(const vctx *v, const art_replacement *reps, const guard_entry *ents, size_t n, kbuf *out, kerr *e) {
    art_emit_opts eo = {.replace = reps, .nreplace = n};
    kbuf b = KBUF_INIT;
    int rc = artifact_emit(v->a, &eo, &b, e);
    if (!rc && ents && n) {
        kbuf h = KBUF_INIT;
        guard_header(ents, n, &v->genv, &h);
        guard_insert_header(b.data ? b.data : "", b.len, kbuf_str(&h), out);
        kbuf_free(&h);
    } else if (!rc) {
        kbuf_append(out, kbuf_str(&b), b.len);
    }
    kbuf_free(&b);
    return rc;
}

static int write_module(const vctx *v, const art_replacement *reps, const guard_entry *ents, size_t n, const char *path,
                        kerr *e) {
    kbuf b = KBUF_INIT;
    int rc = emit_module(v, reps, ents, n, &b, e);
    if (!rc) rc = fs_write(path, kbuf_str(&b), b.len, e);
    kbuf_free(&b);
    return rc;
}

/* The guard entries of reps[0..n) from the session's winners (matched by text). Caller frees. */
static guard_entry *winner_entries(const vctx *v, const art_replacement *reps, size_t n) {
    guard_entry *ents = kcalloc(n ? n : 1, sizeof *ents);
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < v->nwins; i++)
            if (v->wins[i].text == reps[j].text)
                ents[j] = (guard_entry){.kernel = reps[j].kernel, .sha256 = v->wins[i].sha, .sig = &v->wins[i].sig};
    return ents;
}

/* reps[0..n) as the gates judge them: each winner's judged text where it has one (caller frees
 * the array; the texts stay the winners'). *any set when one differs. */
static art_replacement *judged_reps(const vctx *v, const art_replacement *reps, size_t n, int *any) {
    art_replacement *out = kcalloc(n ? n : 1, sizeof *out);
    *any = 0;
    for (size_t j = 0; j < n; j++) {
        out[j] = reps[j];
        for (size_t i = 0; i < v->nwins; i++)
            if (v->wins[i].text == reps[j].text && v->wins[i].judged) {
                out[j].text = v->wins[i].judged;
                *any = 1;
            }
    }
    return out;
}

/* The launch signature the gates run kernel k's candidates on: the worker captures the launch
 * (the same capture gates 1, 2 and the screen reuse) and describes each argument. */
static int capture_signature(vctx *v, const json_t *largs, guard_sig *sig, kerr *e) {
    json_t *res = NULL;
    int rc = worker_call(v->w, "capture_launch", json_deep_copy(largs), cand_timeout(v), &res, e);
    if (!rc) rc = guard_sig_from_json(json_object_get(res, "args"), sig, e);
    json_decref(res);
    return rc;
}

static int region_kernel_for(vctx *v, const char *binding, int *k, char **why, kerr *e);

/* Gate 2's memcheck (memcheck.h): the candidate's isolation once more, on one seed, in the
 * worker under compute-sanitizer. Records g2.memcheck and the session's tally (doc.memcheck);
 * returns 1 (g2.reason set) when an error is located in the candidate's kernels, else 0 (also
 * when the sanitized worker cannot be started, or fails on this candidate without a report:
 * recorded, not held against it). */
static int gate2_memcheck(vctx *v, size_t i, const char *cmod, const char *kname, const json_t *largs, json_t *g2) {
    json_t *m = json_object();
    json_object_set_new(g2, "memcheck", m);
    if (!v->mc && !v->mc_off) {
        progress(v, "starting a worker under compute-sanitizer (memcheck)");
        kerr me = {0};
        if (memcheck_open(v->o->memcheck, v->o->memcheck_python, v->o->workdir, v->load_req, T_LOAD, &v->mc, &me)) {
            v->mc_off = kstrdup(me.msg);
            json_object_set_new(v->doc, "memcheck", json_pack("{s:b, s:s}", "ran", 0, "why", me.msg));
        }
    }
    if (!v->mc) {
        json_object_set_new(m, "ran", json_false());
        json_object_set_new(m, "why", json_string(v->mc_off ? v->mc_off : "off"));
        return 0;
    }
    progress(v, "candidate %zu (%s): gate 2, compute-sanitizer memcheck", i + 1, kname);
    json_t *seeds = json_pack("[i]", seed_of(0));
    memcheck_result r;
    kerr ce = {0};
    int wrc = memcheck_run(v->mc, "isolate",
                           json_pack("{s:s, s:s, s:s, s:O, s:O, s:o, s:o, s:i}", "orig", v->base_mod, "cand", cmod,
                                     "kernel", kname, "launch_args", largs, "roles", json_object_get(largs, "roles"),
                                     "seeds", seeds, "tol", tensor_tol_table(), "repeat", 1),
                           4 * cand_timeout(v), &r, &ce);
    v->mc_runs++;
    v->mc_refused += r.cand_errors > 0;
    v->mc_other += r.other_errors;
    json_object_set_new(v->doc, "memcheck", json_pack("{s:b, s:I, s:I, s:I}", "ran", 1, "candidates", (json_int_t)v->mc_runs,
                                                      "refused", (json_int_t)v->mc_refused, "other_errors",
                                                      (json_int_t)v->mc_other));
    json_object_set_new(m, "ran", json_boolean(!wrc || r.cand_errors || r.other_errors));
    json_object_set_new(m, "candidate_errors", json_integer((json_int_t)r.cand_errors));
    json_object_set_new(m, "other_errors", json_integer((json_int_t)r.other_errors));
    if (r.first_other[0]) json_object_set_new(m, "first_other", json_string(r.first_other));
    if (wrc && !r.cand_errors) json_object_set_new(m, "why", json_string(ce.msg));
    if (!r.cand_errors) return 0;
    json_object_set_new(m, "first", json_string(r.first));
    gate_fail(g2, "compute-sanitizer memcheck: %zu memory error%s in the candidate's kernels; first: %s", r.cand_errors,
              r.cand_errors == 1 ? "" : "s", r.first);
    return 1;
}

/* Each gate record of `gates` gets "seconds", the wall time from its start (started[gate], 0 when
 * it did not start) to the next gate's start, or to `end` for the last one. */
static void gate_seconds(json_t *gates, const double started[5], double end) {
    size_t j;
    json_t *g;
    json_array_foreach(gates, j, g) {
        json_int_t n = json_integer_value(json_object_get(g, "gate"));
        if (n < 1 || n > 4 || started[n] <= 0) continue;
        double stop = n < 4 && started[n + 1] > 0 ? started[n + 1] : end;
        json_object_set_new(g, "seconds", json_real(stop - started[n]));
    }
}

/* Gate n's record, appended to `gates`; its start noted in started[n] (gate_seconds). */
static json_t *gate_open(json_t *gates, int n, double started[5]) {
    started[n] = clock_now();
    json_t *g = gate_obj(n);
    json_array_append_new(gates, g);
    return g;
}

/* Gates 1-4 for candidate i (verify_one), each opened by gate_open. */
static int verify_gates(vctx *v, size_t i, const verify_cand *vc, json_t *rec, winner *win, double started[5],
                        kerr *e) {
    json_t *gates = json_array();
    json_object_set_new(rec, "candidate", json_string(vc->path));
    json_object_set_new(rec, "gates", gates);
    json_t *g1 = gate_open(gates, 1, started);

    char *src = NULL;
    size_t slen = 0;
    kerr ce = {0};
    if (fs_read(vc->path, &src, &slen, &ce)) { refuse(v, rec, g1, "%s", ce.msg); return 0; }
    char sha[STORE_SHA_HEX];
    store_sha256_hex(src, slen, sha);
    json_object_set_new(rec, "sha256", json_string(sha));
    candidate *c = NULL;
    if (candidate_parse(src, slen, &c, &ce)) {
        free(src);
        refuse(v, rec, g1, "the candidate does not parse: %s", ce.msg);
        return 0;
    }
    free(src);
    const char *kbind = vc->kernel ? vc->kernel : candidate_replaces(c);
    if (!kbind) {
        candidate_free(c);
        refuse(v, rec, g1, "no kernel named: pass --replace KERNEL=%s or add '# kopt-candidate: replaces=KERNEL'", vc->path);
        return 0;
    }
    json_object_set_new(rec, "kernel", json_string(kbind));
    json_object_set_new(rec, "form", json_string(candidate_form_label(c)));
    int k = artifact_find_kernel(v->a, kbind);
    if (k < 0 && region_is_binding(kbind)) {
        char *rwhy = NULL;
        int rrc = region_kernel_for(v, kbind, &k, &rwhy, e);
        if (rrc) { candidate_free(c); return rrc; }
        if (rwhy) {
            refuse(v, rec, g1, "region %s: %s", kbind, rwhy);
            free(rwhy);
            candidate_free(c);
            return 0;
        }
    }
    if (k < 0) {
        refuse(v, rec, g1, "the compiled model has no Triton kernel named %s", kbind);
        candidate_free(c);
        return 0;
    }
    if (!first_launch(v->a, k)) {
        refuse(v, rec, g1, "call() no longer launches %s: a region candidate checked before it replaced its launch "
               "(kopt verify checks single-kernel candidates before region ones)", kbind);
        candidate_free(c);
        return 0;
    }
    const char *kname = v->a->kernels[k].name;   /* owned by the artifact, outlives c */
    static_opts so = {.allow_precision_change = v->o->allow_precision_change, .allow_launcher = v->o->allow_launcher,
                      .model_dtype = NULL};
    kbuf stitch = KBUF_INIT;
    char *why = NULL;
    json_t *srep = NULL;
    int ok1 = gate1_check(c, &v->a->kernels[k], &so, &stitch, &why, &srep);
    if (srep) json_object_set_new(g1, "static", srep);
    if (!ok1) {
        candidate_free(c);
        refuse(v, rec, g1, "%s", why);
        free(why);
        kbuf_free(&stitch);
        return 0;
    }
    int rc = 0;
    char *cdir = kasprintf("%s/cand%zu", v->o->workdir, i);
    char *cmod = kasprintf("%s/graph0.py", cdir);
    char *cubins = kasprintf("%s/cubins", cdir);
    int kept = 0, sm90 = v->genv.cap_major == 9 && v->genv.cap_minor == 0; /* the sandbox compiles for sm_90 */
    kbuf judged = KBUF_INIT, guarded = KBUF_INIT;
    guard_sig sig = {0};
    const json_t *largs = NULL;
    json_t *res = NULL;
    if ((rc = launch_args_for(v, k, &largs, e))) goto out;
    /* what ships is what was verified: the module every later gate runs guards the launch on
     * the captured signature, Inductor's kernel kept for any other (guard.h) */
    if (capture_signature(v, largs, &sig, &ce)) {
        if (last_was_oom(v)) { resource_error(v, rec, g1, "gate 1 (capturing the kernel's arguments)"); goto out; }
        refuse(v, rec, g1, "capturing the launch's arguments failed: %s", ce.msg);
        goto out;
    }
    if (v->sass_python) {   /* the machine code of the launch the gates captured */
        progress(v, "candidate %zu (%s): gate 1, machine code", i + 1, kname);
        char *swhy = NULL;
        if (!v->srv_tried) { /* one compile server for the session's candidates, where it can be safe */
            v->srv_tried = 1;
            kerr se = {0};
            machine_opts mo = {.python = v->sass_python, .arch = 90, .timeout_s = 120};
            if (machine_server_open(&mo, &v->srv, &se))
                log_info("gate 1's compiles: one sandbox process each (no compile server: %s)", se.msg);
            else
                log_info("gate 1's compiles: a compile server (started in %.1f s)", v->srv.start_s);
        }
        /* the gates then run the cubins it keeps, where this GPU runs code compiled for sm_90 */
        int keep = !v->o->jit_judge && c->from_plan && sm90;
        if (keep && ((rc = fs_mkdirs(cubins, e)))) goto out;
        if ((rc = sass_gate_check(vc->path, sha, &sig, v->sass_python, &v->srv, v->o->allow_precision_change, kname,
                                  keep ? cubins : NULL, &kept, g1, &swhy, e)))
            goto out;
        if (swhy) {
            refuse(v, rec, g1, "%s", swhy);
            free(swhy);
            goto out;
        }
    }
    const art_kernel *K = &v->a->kernels[k];
    if ((rc = guard_wrap(kname, v->a->text + K->stmt.off, K->stmt.len, kbuf_str(&stitch), &guarded, e))) goto out;
    /* what the worker imports for gates 2-4: with gate 1's cubins kept, kopt's launcher over them
     * and nothing of the candidate's file; else the text that ships */
    if (kept) {
        kbuf cs = KBUF_INIT;
        kbuf_puts(&cs, candidate_launch_shim());
        /* provenance, as a comment: printable ASCII, any other byte written \xNN */
        kbuf_puts(&cs, "# kopt-judged-from: ");
        for (const unsigned char *q = (const unsigned char *)vc->path; *q; q++)
            if (*q >= 32 && *q < 127 && *q != '\\') kbuf_putc(&cs, (char)*q);
            else kbuf_printf(&cs, "\\x%02x", *q);
        kbuf_printf(&cs, " sha256=%s\n", sha);
        rc = candidate_cubin_stitch_text(c, kname, cubins, &cs, e);
        if (!rc) rc = guard_wrap(kname, v->a->text + K->stmt.off, K->stmt.len, kbuf_str(&cs), &judged, e);
        kbuf_free(&cs);
        if (rc) goto out;
    }
    const char *how = "cubin: gate 1's sandboxed compile, loaded without the candidate's Python";
    if (!kept) /* why not, in the order the conditions were tried */
        how = !c->from_plan        ? "triton jit in the worker (not a plan-form candidate)"
              : v->o->jit_judge    ? "triton jit in the worker (--jit-judge)"
              : v->sass_python && !sm90 ? "triton jit in the worker (the machine-code check compiles for sm_90, not this GPU)"
                                        : "triton jit in the worker (the machine-code check did not run)";
    json_object_set_new(rec, "judged_code", json_string(how));
    art_replacement rep = {.kernel = kname, .text = kept ? kbuf_str(&judged) : kbuf_str(&guarded)};
    guard_entry ent = {.kernel = kname, .sha256 = sha, .sig = &sig};
    if ((rc = fs_mkdirs(cdir, e)) || (rc = write_module(v, &rep, &ent, 1, cmod, e))) goto out;
    json_object_set_new(rec, "module", json_string(cmod));
    progress(v, "candidate %zu (%s): gate 1, compiling", i + 1, kname);
    if (worker_call(v->w, "compile_candidate", json_pack("{s:s, s:s, s:O}", "module", cmod, "kernel", kname,
                                                           "launch_args", largs),
                    cand_timeout(v), &res, &ce)) {
        if (last_was_oom(v)) { resource_error(v, rec, g1, "gate 1 (capturing the kernel's arguments)"); goto out; }
        refuse(v, rec, g1, "compiling the candidate failed: %s", ce.msg);
        goto out;
    }
    if (!json_is_true(json_object_get(res, "compiled"))) {
        refuse(v, rec, g1, "the candidate does not compile: %s", json_string_value(json_object_get(res, "error")));
        json_decref(res);
        goto out;
    }
    json_decref(res);
    json_object_set_new(g1, "passed", json_true());

    /* Gate 2 */
    progress(v, "candidate %zu (%s): gate 2, isolation", i + 1, kname);
    json_t *g2 = gate_open(gates, 2, started);
    json_t *seeds = json_array();
    for (int s = 0; s < (v->o->seeds > 0 ? v->o->seeds : 3); s++) json_array_append_new(seeds, json_integer(seed_of(s)));
    int wrc = 1;
    for (int low = 0; low < 2 && wrc; low++) {
        wrc = worker_call(v->w, "isolate",
                          json_pack("{s:s, s:s, s:s, s:O, s:O, s:O, s:o, s:i, s:b}", "orig", v->base_mod, "cand", cmod,
                                    "kernel", kname, "launch_args", largs, "roles", json_object_get(largs, "roles"), "seeds",
                                    seeds, "tol", tensor_tol_table(), "repeat", 2, "low_memory", low),
                          cand_timeout(v), &res, &ce);
        if (wrc && !last_was_oom(v)) break;
        if (wrc) json_object_set_new(g2, "low_memory", json_true());
    }
    json_decref(seeds);
    if (wrc) {
        if (last_was_oom(v)) resource_error(v, rec, g2, "gate 2 (isolation)");
        else refuse(v, rec, g2, "the isolation run failed: %s", ce.msg);
        goto out;
    }
    int passed = 0;
    json_t *verdict = NULL;
    rc = gate2_decide(res, &passed, &verdict, e);
    json_decref(res);
    if (rc) { json_decref(verdict); goto out; }
    json_object_update(g2, verdict);
    json_decref(verdict);
    if (!passed) {
        refuse(v, rec, g2, "%s", json_string_value(json_object_get(g2, "reason")));
        goto out;
    }
    if (v->o->memcheck && gate2_memcheck(v, i, cmod, kname, largs, g2)) {
        refuse(v, rec, g2, "%s", json_string_value(json_object_get(g2, "reason")));
        goto out;
    }

    /* Gate 3 */
    progress(v, "candidate %zu (%s): gate 3, model level", i + 1, kname);
    json_t *g3 = gate_open(gates, 3, started);
    int r3 = gate3(v, cmod, g3, e);
    if (r3 == G_ERROR) { rc = e->code; goto out; }
    if (r3 == G_RESOURCE) { resource_error(v, rec, g3, "gate 3 (model level)"); goto out; }
    if (r3 == G_REFUSED) {
        refuse(v, rec, g3, "%s", json_string_value(json_object_get(g3, "reason")));
        goto out;
    }

    /* Gate 4 */
    progress(v, "candidate %zu (%s): gate 4, timing", i + 1, kname);
    json_t *g4 = gate_open(gates, 4, started);
    double sp = 0;
    int r4 = gate4(v, cmod, g4, &sp, e);
    if (r4 == G_ERROR) { rc = e->code; goto out; }
    if (r4 == G_RESOURCE) { resource_error(v, rec, g4, "gate 4 (timing)"); goto out; }
    if (r4 == G_REFUSED) {
        refuse(v, rec, g4, "%s", json_string_value(json_object_get(g4, "reason")));
        goto out;
    }
    json_object_set_new(rec, "verdict", json_string("accepted"));
    json_object_set(rec, "speedup", json_object_get(g4, "speedup"));
    v->cand_kind = VERIFY_ACCEPTED;
    win->kernel = kstrdup(kname);
    win->text = kbuf_steal(&guarded);
    win->judged = kept ? kbuf_steal(&judged) : NULL;
    win->path = kstrdup(vc->path);
    win->speedup = sp;
    memcpy(win->sha, sha, sizeof win->sha);
    win->sig = sig;
    memset(&sig, 0, sizeof sig);
out:
    guard_sig_free(&sig);
    kbuf_free(&guarded);
    kbuf_free(&judged);
    kbuf_free(&stitch);
    candidate_free(c);
    free(cdir);
    free(cmod);
    free(cubins);
    return rc;
}

/* Gates 1-4 for candidate i. Fills rec (each gate with the seconds it took); on acceptance sets
 * *win. Returns non-zero only when the pipeline itself cannot go on (e set). */
static int verify_one(vctx *v, size_t i, const verify_cand *vc, json_t *rec, winner *win, kerr *e) {
    double started[5] = {0};
    int rc = verify_gates(v, i, vc, rec, win, started, e);
    gate_seconds(json_object_get(rec, "gates"), started, clock_now());
    return rc;
}

/* ---------------------------------------------------------------- outputs */

static int copy_file(const char *from, const char *to, kerr *e) {
    char *data = NULL;
    size_t n = 0;
    int rc = fs_read(from, &data, &n, e);
    if (!rc) rc = fs_write(to, data, n, e);
    free(data);
    return rc;
}

/* The output folder for `module_text`, a module of the session's graph whose call() takes the
 * captured arguments of compiled module `m` (its args, attrs and arg_sources). */
static int write_outputs_as(vctx *v, const char *module_text, size_t module_len, const compiled_mod *m, json_t *doc,
                            kerr *e) {
    const char *out = v->o->out_dir;
    int rc = fs_mkdirs(out, e);
    char *p = NULL;
    if (rc) return rc;
    p = fs_join(out, "optimized_module.py");
    rc = fs_write(p, module_text, module_len, e);
    free(p);
    if (rc) return rc;
    p = fs_join(out, "kopt_args.pt");
    rc = copy_file(m->args, p, e);
    free(p);
    if (rc) return rc;
    json_t *meta = json_pack("{s:s, s:s, s:O, s:O?}", "module", "optimized_module.py", "args", "kopt_args.pt",
                             "arg_sources", m->sources ? m->sources : json_null(), "replaced",
                             json_object_get(doc, "replaced"));
    if (!m->attrs) { /* a module written earlier may have left one */
        p = fs_join(out, "kopt_attrs.pt");
        unlink(p);
        free(p);
    } else {
        p = fs_join(out, "kopt_attrs.pt");
        rc = copy_file(m->attrs, p, e);
        free(p);
        if (rc) { json_decref(meta); return rc; }
        json_object_set_new(meta, "attrs", json_string("kopt_attrs.pt"));
    }
    json_object_set(meta, "problem", json_object_get(doc, "problem"));
    json_object_set(meta, "device", json_object_get(doc, "device"));
    char *s = json_dumps(meta, JSON_INDENT(2));
    json_decref(meta);
    p = fs_join(out, "kopt_meta.json");
    rc = fs_write(p, s, strlen(s), e);
    free(p);
    free(s);
    if (rc) return rc;
    char *root = fs_kopt_root();
    char *tpl = fs_join(root, "templates/kopt_loader.py");
    p = fs_join(out, "kopt_loader.py");
    rc = copy_file(tpl, p, e);
    free(p);
    free(tpl);
    free(root);
    if (rc || v->o->no_reports) return rc;   /* the caller (optimize) writes its own reports */
    s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
    p = fs_join(out, "report.json");
    rc = fs_write(p, s, strlen(s), e);
    free(p);
    free(s);
    if (rc) return rc;
    kbuf t = KBUF_INIT;
    verify_report_text(doc, &t);
    p = fs_join(out, "report.txt");
    rc = fs_write(p, kbuf_str(&t), t.len, e);
    free(p);
    kbuf_free(&t);
    return rc;
}

static int write_outputs(vctx *v, const char *module_text, size_t module_len, json_t *doc, kerr *e) {
    return write_outputs_as(v, module_text, module_len, v->orig, doc, e);
}

/* ---------------------------------------------------------------- pipeline */

static void vctx_free(vctx *v) {
    machine_server_close(&v->srv);
    memcheck_close(v->mc);
    free(v->mc_off);
    json_decref(v->load_req);
    artifact_free(v->a);
    free(v->text);
    artifact_free(v->a0);
    free(v->text0);
    free(v->base_mod);
    free(v->judged_out);
    free(v->prof_path);
    compiled_free(&v->def);
    compiled_free(&v->ma);
    json_decref(v->baselines);
    json_decref(v->working_set);
}

/* Per-kernel launch specs and instrumented module for the current artifact v->a. */
static void drop_launch_args(vctx *v) {
    if (v->launch_specs && v->a)
        for (size_t k = 0; k < v->a->nkernels; k++) json_decref(v->launch_specs[k]);
    free(v->launch_specs);
    v->launch_specs = NULL;
}

static int adopt(vctx *v, kerr *e) {
    v->launch_specs = kcalloc(v->a->nkernels ? v->a->nkernels : 1, sizeof *v->launch_specs);
    art_emit_opts eo = {.instrument = 1};
    kbuf b = KBUF_INIT;
    int rc = artifact_emit(v->a, &eo, &b, e);
    if (!rc) {
        free(v->prof_path);
        v->prof_path = v->nregions ? kasprintf("%s/graph0.region%d.profile.py", v->o->workdir, v->nregions)
                                   : fs_join(v->o->workdir, "graph0.profile.py");
        rc = fs_write(v->prof_path, kbuf_str(&b), b.len, e);
    }
    kbuf_free(&b);
    return rc;
}

int verify_session_regionize(verify_session *v, int first, int last, const char **name, kerr *e) {
    char *nm = kasprintf(REGION_PREFIX "%d", v->nregions);
    kbuf b = KBUF_INIT;
    artifact *na = NULL;
    int rc = region_build(v->a, first, last, nm, &b, e);
    if (!rc && (rc = artifact_parse(kbuf_str(&b), b.len, &na, e))) rc = kerr_wrap(e, "parsing the regioned module");
    char *path = kasprintf("%s/graph0.region%d.py", v->o->workdir, v->nregions + 1);
    if (!rc) rc = fs_write(path, kbuf_str(&b), b.len, e);
    if (rc) { free(nm); free(path); kbuf_free(&b); artifact_free(na); return rc; }
    drop_launch_args(v);
    if (!v->a0) { v->a0 = v->a; v->text0 = v->text; v->len0 = v->len; }
    else { artifact_free(v->a); free(v->text); }
    v->len = b.len;
    v->text = kbuf_steal(&b);
    v->a = na;
    free(v->base_mod);
    v->base_mod = path;
    v->nregions++;
    rc = adopt(v, e);
    int k = artifact_find_kernel(v->a, nm);
    *name = k >= 0 ? v->a->kernels[k].name : NULL;
    free(nm);
    if (!rc && k < 0) rc = kerr_set(e, KOPT_E_INTERNAL, "the regioned module has no region kernel");
    return rc;
}

int verify_session_unregion(verify_session *v, kerr *e) {
    if (!v->a0) return 0;
    drop_launch_args(v);
    artifact_free(v->a);
    free(v->text);
    v->a = v->a0;
    v->text = v->text0;
    v->len = v->len0;
    v->a0 = NULL;
    v->text0 = NULL;
    free(v->base_mod);
    v->base_mod = kstrdup(v->orig->mod);
    /* winners of kernels this artifact does not have (the regions) go */
    size_t j = 0;
    for (size_t i = 0; i < v->nwins; i++) {
        if (artifact_find_kernel(v->a, v->wins[i].kernel) >= 0) { v->wins[j++] = v->wins[i]; continue; }
        winner_free(&v->wins[i]);
    }
    v->nwins = j;
    v->nregions++;   /* a fresh name for the profile module */
    return adopt(v, e);
}

/* The region kernel of the current artifact bound by "K1+K2+...", else -1. */
static int region_for_binding(const artifact *a, const char *binding) {
    for (size_t k = 0; k < a->nkernels; k++)
        if (region_binding_is(&a->kernels[k], binding)) return (int)k;
    return -1;
}

/* A candidate bound to "K1+K2+...": its region kernel, made now if the session has none. */
static int region_kernel_for(vctx *v, const char *binding, int *k, char **why, kerr *e) {
    *k = region_for_binding(v->a, binding);
    if (*k >= 0) return 0;
    char *copy = kstrdup(binding), *save = NULL;
    const char *names[64];
    size_t n = 0;
    for (char *t = strtok_r(copy, "+", &save); t && n < 64; t = strtok_r(NULL, "+", &save)) names[n++] = t;
    int first = -1, last = -1;
    kerr re = {0};
    int rc = 0;
    if (region_find_launches(v->a, names, n, &first, &last, &re)) {
        *why = kstrdup(re.msg);
    } else {
        const char *name = NULL;
        if ((rc = verify_session_regionize(v, first, last, &name, &re)) == KOPT_E_CANDIDATE) { *why = kstrdup(re.msg); rc = 0; }
        else if (rc) *e = re;
        else *k = artifact_find_kernel(v->a, name);
    }
    free(copy);
    return rc;
}

/* One torch.compile mode through the worker's `compile`: the single graph's module, args file,
 * constants file (may be NULL) and argument sources; *res keeps the whole answer (owned).
 * KOPT_E_NOTRITON for no graph, KOPT_E_USAGE for several, KOPT_E_WORKER for an answer that
 * lacks the paths. */
static int compile_mode(vctx *v, const char *mode, const char *dirname, double timeout, json_t **res, const json_t **graph,
                        kerr *e) {
    char *cdir = fs_join(v->o->workdir, dirname);
    int rc = fs_mkdirs(cdir, e);
    if (!rc) rc = worker_call(v->w, "compile", json_pack("{s:s, s:s}", "mode", mode, "out_dir", cdir), timeout, res, e);
    free(cdir);
    if (rc) return kerr_wrap(e, "torch.compile (%s)", mode);
    const json_t *graphs = json_object_get(*res, "graphs");
    if (!json_is_array(graphs)) return kerr_set(e, KOPT_E_WORKER, "the worker's compile answer has no graph list");
    if (json_array_size(graphs) == 0)
        return kerr_set(e, KOPT_E_NOTRITON, "torch.compile produced no graph for this model: nothing to replace");
    if (json_array_size(graphs) > 1)
        return kerr_set(e, KOPT_E_USAGE, "the model compiles to %zu graphs (graph breaks); kopt handles single-graph "
                                         "models only for now", json_array_size(graphs));
    *graph = json_array_get(graphs, 0);
    if (!json_string_value(json_object_get(*graph, "module")) || !json_string_value(json_object_get(*graph, "args")) ||
        !json_is_array(json_object_get(*graph, "arg_sources")))
        return kerr_set(e, KOPT_E_WORKER, "the worker's compile answer lacks the module, args or arg_sources of its graph");
    return 0;
}

/* Times the eager model and the compiled modules (default, and max-autotune's when compiled),
 * interleaved, into v->baselines (medians); the faster module is the one to start from. */
static int time_baselines(vctx *v, kerr *e) {
    if (v->baselines) return 0;
    /* the compiled modules interleaved; the eager model on its own, in the "eager" memory phase
     * (it is only reported, and its intermediates, which torch.compile fuses away, would
     * otherwise share the cache with the modules' and set the run's memory peak) */
    json_t *vars = json_pack("[o]", module_target_args(v->def.mod, v->def.args));
    if (v->ma.mod) json_array_append_new(vars, module_target_args(v->ma.mod, v->ma.args));
    size_t nvars = json_array_size(vars);
    json_t *res = NULL, *eres = NULL;
    progress(v, "timing the model: eager, torch.compile default%s", v->ma.mod ? ", max-autotune" : "");
    if (worker_call(v->w, "time", json_pack("{s:o, s:i, s:i, s:b}", "variants", vars, "rounds", 20, "warmup", 3, "flush_l2", 1),
                    T_TIME, &res, e) ||
        worker_call(v->w, "time", json_pack("{s:[{s:s}], s:i, s:i, s:b, s:s}", "variants", "kind", "eager", "rounds", 10,
                                            "warmup", 2, "flush_l2", 1, "phase", "eager"),
                    T_TIME, &eres, e)) {
        json_decref(res);
        return kerr_wrap(e, "timing the model's baselines");
    }
    const json_t *smp = json_object_get(res, "samples");
    if (json_array_size(smp) != nvars || json_array_size(json_object_get(eres, "samples")) != 1) {
        json_decref(res);
        json_decref(eres);
        return kerr_set(e, KOPT_E_WORKER, "the worker's time answer does not have one sample list per variant");
    }
    v->baselines = json_pack("{s:f, s:f}", "eager_ms", stats_median_json(json_array_get(json_object_get(eres, "samples"), 0)),
                             "default_ms", stats_median_json(json_array_get(smp, 0)));
    if (v->ma.mod) json_object_set_new(v->baselines, "max_autotune_ms", json_real(stats_median_json(json_array_get(smp, 1))));
    json_decref(res);
    json_decref(eres);
    return 0;
}

/* The model's memory-traffic floor for gate 4's physics check (kopt verify; kopt optimize hands
 * its own profile's floor over): the device's ceilings, one profile of the start module (its
 * launches' argument sizes), the graph's own I/O at the measured rates. */
static int measure_floor(vctx *v, json_t *doc, kerr *e) {
    json_t *raw = NULL, *prof = NULL;
    int rc = worker_call(v->w, "ceilings", json_pack("{s:s}", "phase", "ceilings"), T_RUN, &raw, e);
    if (!rc) rc = worker_call(v->w, "profile", json_pack("{s:s, s:s, s:i, s:i}", "module", v->prof_path, "args", v->orig->args,
                                                         "reps", 3, "warmup", 1),
                              T_RUN, &prof, e);
    if (rc) { json_decref(raw); return kerr_wrap(e, "measuring the model's memory floor"); }
    json_t *ceil = inspect_ceilings(raw);
    double sum = 0, written = 0;
    json_t *rows = inspect_launch_table(v->a, prof, ceil, &sum);
    double io = inspect_io_bytes(v->a, rows, &written);
    roof_ceilings rcl = inspect_roof_ceilings(ceil);
    double floor_ms = roof_memory_floor_s(io - written, written, &rcl) * 1e3;
    double call_ms = stats_median_json(json_object_get(prof, "total"));
    json_t *fl = json_pack("{s:f, s:f, s:f, s:o}", "floor_ms", floor_ms, "io_bytes", io, "baseline_call_ms", call_ms, "ceilings", ceil);
    json_object_set_new(doc, "floor", fl);
    verify_session_set_floor(v, floor_ms, io, call_ms);
    if (v->floor_ms <= 0) json_object_set_new(fl, "not_used", json_string("the compiled baseline itself runs below it: the floor "
                                                                          "overestimates this model's traffic"));
    json_decref(rows);
    json_decref(raw);
    json_decref(prof);
    return 0;
}

double verify_memory_cap(double ws_bytes) {
    if (!(ws_bytes > 0) || !isfinite(ws_bytes)) return 0;
    return fmin(VERIFY_MEM_CAP_MAX * ws_bytes, fmax(VERIFY_MEM_CAP_WS * ws_bytes, ws_bytes + VERIFY_MEM_CAP_EXTRA));
}

/* Sends the memory cap for the model's working set to the worker (replayed when it restarts);
 * a worker that does not know `limits` only costs the degrading, so failures are logged. */
static void send_memory_cap(vctx *v, json_t *doc) {
    double ws = json_number_value(json_object_get(v->working_set, "total_bytes"));
    double cap = verify_memory_cap(ws);
    if (cap <= 0) return;
    json_t *res = NULL;
    kerr e = {0};
    json_int_t bytes = (json_int_t)floor(cap);
    if (worker_call_setup(v->w, "limits", json_pack("{s:I}", "memory_cap_bytes", bytes), T_RUN, &res, &e)) {
        log_warn("memory cap not set: %s", e.msg);
        return;
    }
    json_object_set_new(doc, "memory_cap", json_pack("{s:I, s:f, s:f, s:O?}", "bytes", bytes, "working_set_bytes", ws,
                                                     "per_working_set", cap / ws, "alloc_cap_bytes",
                                                     json_object_get(res, "alloc_cap_bytes")));
    json_decref(res);
}

static int setup(vctx *v, json_t *doc, kerr *e) {
    const verify_opts *o = v->o;
    double t0 = clock_now();
    char *abs = fs_realpath(o->problem);
    json_object_set_new(doc, "problem", json_string(abs ? abs : o->problem));
    if (o->sass_mode)
        json_object_set_new(doc, "machine_check", json_pack("{s:s, s:b, s:s*}", "mode", o->sass_mode, "ran",
                                                            o->sass_python != NULL, "why", o->sass_note));
    const json_t *info = worker_info(v->w);
    json_object_set_new(doc, "device", json_pack("{s:O?, s:O?, s:O?}", "name", json_object_get(info, "device"), "torch",
                                                 json_object_get(info, "torch"), "triton", json_object_get(info, "triton")));
    progress(v, "loading the problem");
    json_t *res = NULL;
    v->load_req = json_pack("{s:s, s:i}", "path", abs ? abs : o->problem, "seed", 0);
    int rc = worker_call_setup(v->w, "load", json_deep_copy(v->load_req), T_LOAD, &res, e);
    free(abs);
    if (rc) return rc;
    v->mutates_inputs = json_is_true(json_object_get(res, "mutates_inputs"));
    json_decref(res);
    progress(v, "compiling with torch.compile (default)");
    const json_t *g = NULL;
    rc = compile_mode(v, "default", "compile-default", T_COMPILE, &res, &g, e);
    if (rc) { json_decref(res); return rc; }
    compiled_read(g, &v->def);
    v->working_set = json_incref(json_object_get(res, "working_set"));
    send_memory_cap(v, doc);
    json_t *def_res = res;
    json_t *ma_res = NULL;
    if (o->max_autotune) {
        double limit = o->ma_timeout_s > 0 ? o->ma_timeout_s : T_COMPILE;
        progress(v, "compiling with torch.compile (max-autotune-no-cudagraphs, at most %.0f s)", limit);
        kerr me = {0};
        const json_t *mg = NULL;
        int mrc = compile_mode(v, "max-autotune-no-cudagraphs", "compile-max-autotune", limit, &ma_res, &mg, &me);
        if (mrc) {
            log_warn("max-autotune not used: %s", me.msg);
            json_object_set_new(doc, "max_autotune_error", json_string(me.msg));
            json_decref(ma_res);
            ma_res = NULL;
        } else {
            compiled_read(mg, &v->ma);
            if ((rc = time_baselines(v, e))) { json_decref(def_res); json_decref(ma_res); return rc; }
            double dms = json_number_value(json_object_get(v->baselines, "default_ms"));
            double mms = json_number_value(json_object_get(v->baselines, "max_autotune_ms"));
            if (mms > 0 && mms < dms) v->start_ma = 1;
        }
    }
    json_object_set_new(doc, "start", json_string(v->start_ma ? "max-autotune" : "default"));
    v->orig = v->start_ma ? &v->ma : &v->def;
    json_decref(def_res);
    json_decref(ma_res);
    if ((rc = fs_read(v->orig->mod, &v->text, &v->len, e))) return rc;
    if ((rc = artifact_parse(v->text, v->len, &v->a, e))) return kerr_wrap(e, "parsing Inductor's output module");
    v->base_mod = kstrdup(v->orig->mod);
    if ((rc = adopt(v, e))) return rc;
    json_t *kern = json_array();
    for (size_t k = 0; k < v->a->nkernels; k++) json_array_append_new(kern, json_string(v->a->kernels[k].name));
    json_object_set_new(doc, "kernels", kern);
    if (o->measure_floor && (rc = measure_floor(v, doc, e))) return rc;
    v->t_setup = clock_now() - t0;
    return rc;
}

int verify_session_open(worker *w, const verify_opts *o, json_t *doc, verify_session **out, kerr *e) {
    vctx *v = kcalloc(1, sizeof *v);
    v->w = w;
    v->o = o;
    v->doc = doc;
    v->nseeds = o->seeds > 0 ? o->seeds : 3;
    v->sass_python = o->sass_python;
    if (!json_object_get(doc, "candidates")) json_object_set_new(doc, "candidates", json_array());
    *out = v;
    int rc = guard_env_from_json(worker_info(w), &v->genv, e);
    return rc ? rc : setup(v, doc, e);
}

void verify_session_set_machine_check(verify_session *v, const char *python) { v->sass_python = python; }

int verify_session_check(verify_session *v, const char *kernel, const char *path, json_t **rec_out, verify_verdict *out,
                         kerr *e) {
    verify_cand vc = {.kernel = kernel, .path = path};
    json_t *rec = json_object();
    json_array_append_new(json_object_get(v->doc, "candidates"), rec);
    if (rec_out) *rec_out = rec;
    winner w = {0};
    v->cand_kind = VERIFY_REFUSED; /* until a gate says otherwise; a stopped pipeline refuses nothing else */
    v->cand_refused_at = 0;
    v->cand_host_slower = 0;
    int rc = verify_one(v, v->ncand++, &vc, rec, &w, e);
    const char *verdict = json_string_value(json_object_get(rec, "verdict"));
    log_info("candidate %s: %s", path, verdict ? verdict : "none (the pipeline stopped)");
    assert(!w.kernel == (v->cand_kind != VERIFY_ACCEPTED) || rc);
    if (out) {
        out->kind = v->cand_kind;
        out->refused_at = out->kind == VERIFY_REFUSED ? v->cand_refused_at : 0;
        out->host_slower = out->refused_at == 4 && v->cand_host_slower;
        out->speedup = w.kernel ? w.speedup : 0;
        out->reason = w.kernel ? NULL : json_string_value(json_object_get(rec, "reason"));
    }
    if (w.kernel) {
        if (v->nwins == v->capwins) {
            v->capwins = v->capwins ? 2 * v->capwins : 8;
            v->wins = krealloc(v->wins, v->capwins * sizeof *v->wins);
        }
        v->wins[v->nwins++] = w;
    }
    return rc;
}

/* 1 when winners x and y cannot both ship: one replaces a region of the current artifact whose
 * members include the other's kernel (the region's launch takes the member's place, so the
 * member's candidate would never run). */
static int region_absorbs(const artifact *a, const winner *region, const winner *other) {
    int k = artifact_find_kernel(a, region->kernel);
    if (k < 0 || a->kernels[k].kind != ART_K_REGION) return 0;
    const art_strlist *m = &a->kernels[k].members;
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->v[i], other->kernel)) return 1;
    return 0;
}

static int wins_conflict(const artifact *a, const winner *x, const winner *y) {
    return region_absorbs(a, x, y) || region_absorbs(a, y, x);
}

/* Drops the winners that cannot ship beside a faster one (wins_conflict), fastest first; says
 * which in the document's "superseded" ({kernel: candidate file}). */
static void drop_conflicting_wins(verify_session *v) {
    size_t nw = v->nwins, nkeep = 0;
    if (nw < 2) return;
    winner *kept = kcalloc(nw, sizeof *kept);
    char *taken = kcalloc(nw, 1);
    json_t *sup = NULL;
    for (size_t round = 0; round < nw; round++) {
        size_t best = nw;   /* the fastest winner not yet placed */
        for (size_t i = 0; i < nw; i++)
            if (!taken[i] && (best == nw || v->wins[i].speedup > v->wins[best].speedup)) best = i;
        taken[best] = 1;
        int clash = 0;
        for (size_t j = 0; j < nkeep && !clash; j++) clash = wins_conflict(v->a, &kept[j], &v->wins[best]);
        if (!clash) { kept[nkeep++] = v->wins[best]; continue; }
        if (!sup) json_object_set_new(v->doc, "superseded", sup = json_object());
        json_object_set_new(sup, v->wins[best].kernel, json_string(v->wins[best].path));
        log_info("candidate %s for %s: superseded by a faster accepted region over it", v->wins[best].path,
                 v->wins[best].kernel);
        winner_free(&v->wins[best]);
    }
    memcpy(v->wins, kept, nkeep * sizeof *kept);
    v->nwins = nkeep;
    free(kept);
    free(taken);
}

int verify_session_finish(verify_session *v, kerr *e) {
    const verify_opts *o = v->o;
    free(v->judged_out);
    v->judged_out = NULL;
    drop_conflicting_wins(v);
    json_t *doc = v->doc;
    winner *wins = v->wins;
    size_t nw = v->nwins;
    int rc = 0;
    /* Best accepted candidate per kernel. */
    art_replacement *reps = kcalloc(nw ? nw : 1, sizeof *reps);
    size_t nrep = 0, best_single = (size_t)-1;
    for (size_t i = 0; i < nw; i++) {
        if (best_single == (size_t)-1 || wins[i].speedup > wins[best_single].speedup) best_single = i;
        size_t j;
        for (j = 0; j < nrep; j++) if (!strcmp(reps[j].kernel, wins[i].kernel)) break;
        if (j == nrep) { reps[nrep].kernel = wins[i].kernel; reps[nrep].text = wins[i].text; nrep++; continue; }
        for (size_t m = 0; m < nw; m++)   /* replace if this one is faster */
            if (wins[m].text == reps[j].text && wins[i].speedup > wins[m].speedup) reps[j].text = wins[i].text;
    }
    json_t *replaced = json_object();
    json_object_set_new(doc, "replaced", replaced);
    kbuf final = KBUF_INIT;
    if (nrep > 1) {
        progress(v, "combining %zu kernels' winners: gates 3 and 4 again", nrep);
        char *cmod = fs_join(o->workdir, "combined.py");
        json_t *comb = json_object(), *g3 = gate_obj(3), *g4 = gate_obj(4);
        json_object_set_new(doc, "combined", comb);
        json_object_set_new(comb, "gate3", g3);
        json_object_set_new(comb, "gate4", g4);
        double sp = 0;
        guard_entry *ents = winner_entries(v, reps, nrep);
        int any = 0;
        art_replacement *jr = judged_reps(v, reps, nrep, &any);   /* the gates run gate 1's cubins */
        int ok = !(rc = write_module(v, jr, ents, nrep, cmod, e));
        free(jr);
        free(ents);
        int r3 = ok ? gate3(v, cmod, g3, e) : G_ERROR;
        int r4 = r3 == G_PASSED ? gate4(v, cmod, g4, &sp, e) : G_REFUSED;
        free(cmod);
        if (r3 == G_ERROR || r4 == G_ERROR) { free(reps); kbuf_free(&final); return e->code; }
        if (r3 == G_PASSED && r4 == G_PASSED) {
            json_object_set_new(comb, "accepted", json_true());
            json_object_set(doc, "speedup", json_object_get(g4, "speedup"));
        } else {
            json_object_set_new(comb, "accepted", json_false());
            reps[0].kernel = wins[best_single].kernel;
            reps[0].text = wins[best_single].text;
            nrep = 1;
        }
    }
    if (nrep > 0) {
        guard_entry *ents = winner_entries(v, reps, nrep);
        rc = emit_module(v, reps, ents, nrep, &final, e);
        int any = 0;
        art_replacement *jr = judged_reps(v, reps, nrep, &any);
        if (!rc && any) { /* the same module as the gates judge it, for a later measurement */
            free(v->judged_out);
            v->judged_out = fs_join(o->workdir, "judged_output.py");
            rc = write_module(v, jr, ents, nrep, v->judged_out, e);
        }
        free(jr);
        free(ents);
        if (rc) { free(reps); kbuf_free(&final); return rc; }
        for (size_t j = 0; j < nrep; j++)
            for (size_t i = 0; i < nw; i++)
                if (wins[i].text == reps[j].text) {
                    json_object_set_new(replaced, reps[j].kernel, json_string(wins[i].path));
                    if (nrep == 1) json_object_set_new(doc, "speedup_estimate", json_real(wins[i].speedup));
                }
    } else if (v->a0) {
        kbuf_append(&final, v->text0, v->len0);   /* the compiler's module, not the regioned one */
    } else {
        kbuf_append(&final, v->text, v->len);
    }
    free(reps);
    json_object_set_new(doc, "outcome", json_string(nrep ? "optimized" : "baseline kept: no candidate passed all four gates"));
    rc = write_outputs(v, kbuf_str(&final), final.len, doc, e);
    kbuf_free(&final);
    if (!rc && nrep == 0)
        rc = kerr_set(e, KOPT_E_CANDIDATE, "no candidate passed all four gates; %s holds the compiler's module unchanged", o->out_dir);
    return rc;
}

void verify_session_close(verify_session *v) {
    if (!v) return;
    for (size_t i = 0; i < v->nwins; i++) winner_free(&v->wins[i]);
    free(v->wins);
    drop_launch_args(v);
    vctx_free(v);
    free(v);
}

const artifact *verify_session_artifact(const verify_session *v) { return v->a; }
const char *verify_session_module(const verify_session *v) { return v->orig ? v->orig->mod : NULL; }

int verify_session_output_compiled(verify_session *v, int use_ma, const char **module, kerr *e) {
    const compiled_mod *m = use_ma ? &v->ma : &v->def;
    if (!m->mod) return kerr_set(e, KOPT_E_INTERNAL, "max-autotune's module was not compiled");
    char *text = NULL;
    size_t n = 0;
    int rc = fs_read(m->mod, &text, &n, e);
    if (rc) return rc;
    json_object_set_new(v->doc, "replaced", json_object());
    rc = write_outputs_as(v, text, n, m, v->doc, e);
    free(text);
    if (!rc) *module = m->mod;
    return rc;
}
const char *verify_session_base_module(const verify_session *v) { return v->base_mod; }
const char *verify_session_judged_output(const verify_session *v) { return v->judged_out; }
int verify_session_measure(verify_session *v, const char *module, json_t *g, double *speedup, kerr *e) {
    int r = gate4(v, module, g, speedup, e);
    return r == G_ERROR ? -1 : r == G_PASSED;
}

/* g[key] = the host-inclusive speedup of samples `cand` over `base` with its interval (the
 * worker's host_samples); nothing when they are missing or unusable (the figure is a report,
 * not a verdict). */
static void as_called(json_t *g, const char *key, const json_t *base, const json_t *cand, uint64_t seed) {
    if (!json_is_array(base) || !json_is_array(cand)) return;
    stats_ci ci;
    int slower = 0;
    kerr e = {0};
    json_t *h = host_speedup_of(base, cand, seed, &ci, &slower, &e);
    if (h) json_object_set_new(g, key, h);
}

/* Whether g's figures put the output behind a compiler module as the model is called (the
 * as-called interval `called` wholly below 1) but not in GPU time (the `gpu` interval reaching 1). */
static int called_behind(const json_t *g, const char *gpu, const char *called) {
    const json_t *gh = json_object_get(json_object_get(g, gpu), "ci95_hi");
    const json_t *ch = json_object_get(json_object_get(g, called), "ci95_hi");
    return json_is_number(gh) && json_is_number(ch) && json_number_value(ch) < 1.0 && json_number_value(gh) >= 1.0;
}

/* The final measurement's timing ended in rc (not G_PASSED): 0 with *refused set where the
 * output itself failed (`ours`: a module of kopt's making; the caller keeps a compiler module,
 * g["reason"] says why), else kopt's own error. */
static int final_failed(int rc, int ours, const json_t *g, int *refused, kerr *e) {
    if (rc == G_REFUSED && ours) {
        *refused = 1;
        return 0;
    }
    return rc == G_RESOURCE ? kerr_set(e, KOPT_E_WORKER, "the final measurement ran out of GPU memory")
           : rc == G_ERROR  ? kerr_wrap(e, "the final measurement")
                            : kerr_set(e, KOPT_E_WORKER, "the final measurement failed: %s",
                                       json_string_value(json_object_get(g, "reason")));
}

/* A speedup of 1 by identity (the output module is that baseline's own module): not measured. */
static void identity_result(gate4_result *r, double ms) {
    memset(r, 0, sizeof *r);
    r->base_ms = r->cand_ms = ms;
    r->ci.estimate = r->ci.lo = r->ci.hi = 1.0;
}

int verify_session_final(verify_session *v, const char *module, json_t *g, int *refused, kerr *e) {
    /* the variants timed: default's module (index di), `module` (ci) unless it is one of the
     * compiler's own (then its figure against itself is 1 by identity, not a module timed
     * against itself), and max-autotune's (mi) when compiled. A module of kopt's making is
     * re-checked as in gate 4 (a kernel honest only while the gates watched would be stale
     * here), against the module the search started from, as there: that one is variant 0 */
    int is_ma = v->ma.mod && !strcmp(module, v->ma.mod);
    int is_def = !is_ma && !strcmp(module, v->def.mod);
    int ours = !is_def && !is_ma, ma_first = ours && v->start_ma && v->ma.mod;
    const char *mods[3];
    size_t n = 0, di = 0, ci = 0, mi = 0;
    if (ma_first) mods[mi = n++] = v->ma.mod;
    mods[di = n++] = v->def.mod;
    if (!is_def) mods[ci = n++] = module;
    if (v->ma.mod && !is_ma && !ma_first) mods[mi = n++] = v->ma.mod;
    if (is_ma) mi = ci;
    if (n < 2) return kerr_set(e, KOPT_E_INTERNAL, "the final measurement needs a module other than default's to time");
    json_t *res = NULL;
    int rounds = v->o->rounds > 1 ? v->o->rounds : 40;
    *refused = 0;
    int rc = time_modules(v, mods, n, rounds, GATE4_HOST_ROUNDS, ours ? FRESH_RECHECK : FRESH_ROTATE, ours ? (int)ci : -1,
                          g, &res, e);
    if (rc != G_PASSED) {
        json_decref(res);
        return final_failed(rc, ours, g, refused, e);
    }
    const json_t *smp = json_object_get(res, "samples");
    gate4_result rd, rm;
    int has_ma = v->ma.mod != NULL;
    if ((!is_def && speedup_of(json_array_get(smp, di), json_array_get(smp, ci), 0, 7, &rd, e)) ||
        (has_ma && !is_ma && speedup_of(json_array_get(smp, mi), json_array_get(smp, ci), 0, 11, &rm, e))) {
        json_decref(res);
        return kerr_wrap(e, "the final measurement");
    }
    if (is_def) identity_result(&rd, stats_median_json(json_array_get(smp, di)));
    if (is_ma) identity_result(&rm, rd.cand_ms);
    json_object_set_new(g, "default_ms", json_real(rd.base_ms));
    json_object_set_new(g, "optimized_ms", json_real(rd.cand_ms));
    json_object_set_new(g, "speedup_vs_default", speedup_json(&rd));
    if (has_ma) {
        json_object_set_new(g, "max_autotune_ms", json_real(rm.base_ms));
        json_object_set_new(g, "speedup_vs_max_autotune", speedup_json(&rm));
    }
    /* the same comparisons timed as the model is called (host dispatch included) */
    const json_t *hs = json_object_get(res, "host_samples");
    if (is_def) json_object_set_new(g, "as_called_vs_default", speedup_json(&rd));   /* 1 by identity, above */
    else as_called(g, "as_called_vs_default", json_array_get(hs, di), json_array_get(hs, ci), 17);
    if (is_ma) json_object_set_new(g, "as_called_vs_max_autotune", speedup_json(&rm));   /* 1 by identity */
    else if (has_ma) as_called(g, "as_called_vs_max_autotune", json_array_get(hs, mi), json_array_get(hs, ci), 19);
    /* as in gate 4: when these first host rounds put the output behind a compiler module as the
     * model is called while its GPU time does not, the as-called figures are taken once more from
     * those rounds pooled with GATE4_HOST_RECHECK_ROUNDS more (one burst of host noise does not
     * decide the output; "as_called_recheck" keeps the first figures) */
    if (ours && (called_behind(g, "speedup_vs_default", "as_called_vs_default") ||
                 called_behind(g, "speedup_vs_max_autotune", "as_called_vs_max_autotune"))) {
        json_t *first = json_pack("{s:O*, s:O*}", "as_called_vs_default", json_object_get(g, "as_called_vs_default"),
                                  "as_called_vs_max_autotune", json_object_get(g, "as_called_vs_max_autotune"));
        json_t *pooled = NULL;
        rc = host_rounds_more(v, mods, n, hs, (int)ci, g, &pooled, e);
        if (rc != G_PASSED) {   /* the output failed in the added rounds, or kopt did: as above */
            json_decref(first);
            json_decref(res);
            return final_failed(rc, ours, g, refused, e);
        }
        as_called(g, "as_called_vs_default", json_array_get(pooled, di), json_array_get(pooled, ci), 23);
        if (has_ma) as_called(g, "as_called_vs_max_autotune", json_array_get(pooled, mi), json_array_get(pooled, ci), 29);
        json_decref(pooled);
        json_object_set_new(g, "as_called_recheck",
                            json_pack("{s:o, s:i, s:s}", "first", first, "added_rounds", GATE4_HOST_RECHECK_ROUNDS, "why",
                                      "the first host-inclusive rounds put the output behind a compiler module while its "
                                      "GPU time did not: decided again on all rounds together"));
    }
    const gate4_result *start = v->start_ma ? &rm : &rd;
    json_object_set_new(g, "baseline_ms", json_real(start->base_ms));
    json_object_set_new(g, "speedup", speedup_json(start));
    json_object_set_new(g, "rounds", json_integer((json_int_t)rounds));
    json_decref(res);
    return 0;
}

const json_t *verify_session_baselines(verify_session *v, kerr *e) {
    if (time_baselines(v, e)) return NULL;
    json_object_set_new(v->baselines, "start", json_string(v->start_ma ? "max-autotune" : "default"));
    return v->baselines;
}

const json_t *verify_session_working_set(const verify_session *v) { return v->working_set; }
void verify_session_set_floor(verify_session *v, double floor_ms, double io_bytes, double baseline_ms) {
    /* a floor the compiled baseline itself beats counts traffic the model does not make (an
     * input read only in part): it cannot judge candidates */
    int sound = floor_ms > 0 && baseline_ms >= GATE4_FLOOR_MARGIN * floor_ms;
    v->floor_ms = sound ? floor_ms : 0;
    v->io_bytes = io_bytes;
}
double verify_session_setup_s(const verify_session *v) { return v->t_setup; }
int verify_session_started_from_max_autotune(const verify_session *v) { return v->start_ma; }
const char *verify_session_args(const verify_session *v) { return v->orig ? v->orig->args : NULL; }
const char *verify_session_profile_module(const verify_session *v) { return v->prof_path; }
int verify_session_launch_args(verify_session *v, int kernel, const json_t **spec, kerr *e) {
    return launch_args_for(v, kernel, spec, e);
}
int verify_session_write_module(verify_session *v, const char *kernel, const char *text, const char *path, kerr *e) {
    art_replacement rep = {.kernel = kernel, .text = text};
    return write_module(v, &rep, NULL, 1, path, e);
}

/* Whether a candidate is bound to a region (K1+K2+...): by --replace, or by its file's
 * `replaces=` binding (a file that does not read or parse counts as single-kernel; gate 1 says
 * why it is refused). */
static int cand_is_region(const verify_cand *vc) {
    if (vc->kernel) return region_is_binding(vc->kernel);
    char *src = NULL;
    size_t n = 0;
    kerr e = {0};
    candidate *c = NULL;
    int region = !fs_read(vc->path, &src, &n, &e) && !candidate_parse(src, n, &c, &e) && region_is_binding(candidate_replaces(c));
    candidate_free(c);
    free(src);
    return region;
}

/* OUT/report.json as it stands ("partial": true), after each verdict: a crash of kopt (or of
 * its machine) later in the run loses none of the verdicts already reached. Best effort. */
static void write_partial(const verify_opts *o, json_t *doc) {
    kerr e = {0};
    if (fs_mkdirs(o->out_dir, &e)) return;
    json_object_set_new(doc, "partial", json_true());
    char *s = json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
    char *p = fs_join(o->out_dir, "report.json");
    if (s && fs_write(p, s, strlen(s), &e)) log_warn("%s", e.msg);
    json_object_del(doc, "partial");
    free(s);
    free(p);
}

int verify_run(worker *w, const verify_opts *o, json_t **doc_out, kerr *e) {
    json_t *doc = json_pack("{s:s}", "schema", "kopt.verify/1");
    *doc_out = doc;
    verify_session *v = NULL;
    int rc = verify_session_open(w, o, doc, &v, e);
    /* single-kernel candidates first: a region candidate replaces its kernels' launches */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; !rc && i < o->ncands; i++)
            if (cand_is_region(&o->cands[i]) == pass) {
                rc = verify_session_check(v, o->cands[i].kernel, o->cands[i].path, NULL, NULL, e);
                if (!o->no_reports) write_partial(o, doc);
            }
    if (!rc) rc = verify_session_finish(v, e);
    verify_session_close(v);
    return rc;
}

/* ---------------------------------------------------------------- text report */

void verify_report_text(const json_t *doc, kbuf *out) {
    kbuf_printf(out, "kopt verify  %s\n", json_string_value(json_object_get(doc, "problem")));
    const json_t *dev = json_object_get(doc, "device");
    kbuf_printf(out, "device       %s (torch %s, triton %s)\n", json_string_value(json_object_get(dev, "name")),
                json_string_value(json_object_get(dev, "torch")), json_string_value(json_object_get(dev, "triton")));
    const json_t *mc = json_object_get(doc, "machine_check");
    if (mc && json_is_true(json_object_get(mc, "ran")))
        kbuf_printf(out, "machine code checked at gate 1 (%s)\n", json_string_value(json_object_get(mc, "mode")));
    else if (mc)
        kbuf_printf(out, "machine code NOT checked at gate 1: %s\n", json_string_value(json_object_get(mc, "why")));
    const json_t *mk = json_object_get(doc, "memcheck");
    if (mk && json_is_true(json_object_get(mk, "ran")))
        kbuf_printf(out, "compute-sanitizer memcheck at gate 2: %lld candidates run, %lld refused\n",
                    (long long)json_integer_value(json_object_get(mk, "candidates")),
                    (long long)json_integer_value(json_object_get(mk, "refused")));
    else if (mk)
        kbuf_printf(out, "compute-sanitizer memcheck NOT run: %s\n", json_string_value(json_object_get(mk, "why")));
    kbuf_puts(out, "\n");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "candidates"), i, c) {
        const char *verdict = json_string_value(json_object_get(c, "verdict"));
        kbuf_printf(out, "%s\n  kernel %s, form %s\n", json_string_value(json_object_get(c, "candidate")),
                    json_string_value(json_object_get(c, "kernel")) ? json_string_value(json_object_get(c, "kernel")) : "?",
                    json_string_value(json_object_get(c, "form")) ? json_string_value(json_object_get(c, "form")) : "?");
        if (json_string_value(json_object_get(c, "judged_code")))
            kbuf_printf(out, "  gates 2-4 ran: %s\n", json_string_value(json_object_get(c, "judged_code")));
        size_t gi;
        json_t *g;
        json_array_foreach(json_object_get(c, "gates"), gi, g) {
            int n = (int)json_integer_value(json_object_get(g, "gate"));
            int pass = json_is_true(json_object_get(g, "passed"));
            kbuf_printf(out, "  gate %d  %s", n, pass ? "passed" : "REFUSED");
            if (n == 4 && json_object_get(g, "speedup")) {
                const json_t *s = json_object_get(g, "speedup");
                kbuf_printf(out, "  speedup %.3fx (95%% CI %.3f-%.3f; baseline %.4f ms, candidate %.4f ms)",
                            json_number_value(json_object_get(s, "estimate")), json_number_value(json_object_get(s, "ci95_lo")),
                            json_number_value(json_object_get(s, "ci95_hi")), json_number_value(json_object_get(g, "baseline_ms")),
                            json_number_value(json_object_get(g, "candidate_ms")));
            }
            const json_t *gm = n == 2 ? json_object_get(g, "memcheck") : NULL;
            if (pass && json_is_true(json_object_get(gm, "ran")))
                kbuf_printf(out, "  memcheck clean (%lld reports outside its kernels)",
                            (long long)json_integer_value(json_object_get(gm, "other_errors")));
            if (n == 3 && pass) {
                size_t si;
                json_t *sd;
                int strict = 1;
                double rho = 0;
                json_array_foreach(json_object_get(g, "seeds"), si, sd) {
                    if (!json_is_true(json_object_get(sd, "strict"))) strict = 0;
                    if (json_is_number(json_object_get(sd, "rho")) && json_number_value(json_object_get(sd, "rho")) > rho)
                        rho = json_number_value(json_object_get(sd, "rho"));
                }
                if (strict) kbuf_puts(out, "  allclose to the eager model on every seed");
                else kbuf_printf(out, "  accepted by the float64 error ratio, max rho %.3g", rho);
            }
            if (json_is_number(json_object_get(g, "seconds")))
                kbuf_printf(out, "  [%.2f s]", json_number_value(json_object_get(g, "seconds")));
            if (!pass && json_object_get(g, "reason"))
                kbuf_printf(out, "\n          %s", json_string_value(json_object_get(g, "reason")));
            kbuf_putc(out, '\n');
        }
        kbuf_printf(out, "  => %s\n\n", verdict ? verdict : "?");
    }
    const char *sk;
    const json_t *sv;
    json_object_foreach((json_t *)json_object_get(doc, "superseded"), sk, sv)
        kbuf_printf(out, "superseded: %s <- %s (accepted, but it cannot ship beside a faster accepted region over "
                         "the same kernels)\n", sk, json_string_value(sv));
    const json_t *comb = json_object_get(doc, "combined");
    if (comb) kbuf_printf(out, "combination of the winners: %s\n", json_is_true(json_object_get(comb, "accepted")) ? "accepted" : "refused, the single best kept");
    kbuf_printf(out, "outcome: %s\n", json_string_value(json_object_get(doc, "outcome")) ? json_string_value(json_object_get(doc, "outcome")) : "pipeline failed");
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)json_object_get(doc, "replaced"), key, val)
        kbuf_printf(out, "  %s <- %s\n", key, json_string_value(val));
}
