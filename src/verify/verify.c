#include "verify/verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "artifact/region.h"
#include "gates/candidate.h"
#include "gates/decide.h"
#include "gates/gate1.h"
#include "gates/static.h"
#include "gates/tensor.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

/* Timeouts (s). A candidate that hangs is caught by these and refused. */
enum { T_LOAD = 600, T_COMPILE = 1200, T_RUN = 300, T_TIME = 600 };

typedef struct winner {
    char *kernel;
    char *text;       /* replacement statement */
    char *path;       /* candidate file */
    double speedup;
} winner;

struct verify_session {
    worker *w;
    const verify_opts *o;
    artifact *a;
    char *text;
    size_t len;
    char *orig_mod, *orig_args, *orig_attrs;
    json_t *sources;          /* arg_sources of the graph (owned ref) */
    char *prof_path;          /* instrumented baseline module */
    char *base_mod;           /* the module candidates are stitched into: Inductor's, or after
                               * verify_session_regionize, Inductor's with region launchers */
    artifact *a0;             /* Inductor's artifact and text while a regioned one is current */
    char *text0;
    size_t len0;
    int nregions;
    char **launch_args;       /* per kernel: captured launch arguments file, or NULL */
    json_t **eager, **base, **ref64;  /* per seed: `run` results (owned refs), lazily */
    int nseeds;
    winner *wins;             /* accepted candidates (growable) */
    size_t nwins, capwins;
    size_t ncand;             /* candidates checked so far (names their work directories) */
    json_t *doc;              /* borrowed: the session's document */
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

static json_t *module_target(const vctx *v, const char *module) {
    json_t *t = json_pack("{s:s, s:s, s:s}", "kind", "module", "module", module, "args", v->orig_args);
    if (v->sources) json_object_set(t, "sources", v->sources);
    return t;
}

/* One `run` of a target; `t` is its time limit (a candidate's runs get the candidate step's). */
static int run_target(vctx *v, json_t *target, int seed, int float64, const char *prefix, double t, json_t **res,
                      kerr *e) {
    char *p = kasprintf("%s/%s", v->o->workdir, prefix);
    json_t *req = json_pack("{s:o, s:s, s:i, s:b}", "target", target, "out_prefix", p, "seed", seed, "float64", float64);
    free(p);
    return worker_call(v->w, "run", req, t, res, e);
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

/* Captured arguments of kernel k's first launch (once per kernel). */
static int launch_args_for(vctx *v, int k, const char **path, kerr *e) {
    if (v->launch_args[k]) { *path = v->launch_args[k]; return 0; }
    const art_launch *l = first_launch(v->a, k);
    if (!l) return kerr_set(e, KOPT_E_CANDIDATE, "kernel %s is never launched by call()", v->a->kernels[k].name);
    char *out = kasprintf("%s/launch%d.args.pt", v->o->workdir, l->index);
    json_t *res = NULL;
    int rc = worker_call(v->w, "capture_launch",
                         json_pack("{s:s, s:s, s:i, s:s}", "module", v->prof_path, "args", v->orig_args,
                                   "launch", l->index, "out", out),
                         T_RUN, &res, e);
    json_decref(res);
    if (rc) { free(out); return kerr_wrap(e, "capturing the arguments of launch %d", l->index); }
    v->launch_args[k] = out;
    *path = out;
    return 0;
}

/* ---------------------------------------------------------------- gates */

static json_t *gate_obj(int n) { return json_pack("{s:i}", "gate", n); }

static void refuse(json_t *rec, json_t *g, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(json_t *rec, json_t *g, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_object_set_new(g, "passed", json_false());
    json_object_set_new(g, "reason", json_string(buf));
    json_object_set_new(rec, "verdict", json_string("refused"));
    json_object_set(rec, "refused_at", json_object_get(g, "gate"));
    json_object_set_new(rec, "reason", json_string(buf));
}

static int load_outputs(const json_t *res, size_t k, ktensor *t, kerr *e) {
    return tensor_load(json_array_get(json_object_get(res, "outputs"), k), t, e);
}

/* Gate 3 for output k of seed s: strict against eager, else the float64 ratio decides.
 * Returns 1 accepted, 0 refused (g gets the reason), < 0 on a pipeline error. */
static int gate3_output(vctx *v, int s, size_t k, const json_t *opt, const gate3_opts *go, json_t *g, json_t *seeds,
                        kerr *e) {
    int seed = seed_of(s), rc = -1;
    ktensor te = {0}, to = {0}, tr = {0}, tb = {0};
    if (load_outputs(v->eager[s], k, &te, e) || load_outputs(opt, k, &to, e)) goto out;
    tensor_cmp cmp;
    int strict = gate3_strict(&te, &to, &cmp, e);
    json_t *so = json_pack("{s:i, s:i, s:b, s:f, s:I}", "seed", seed, "output", (int)k, "strict", strict == 1,
                           "max_abs_err_vs_eager", cmp.max_abs_err, "mismatches", (json_int_t)cmp.n_mismatch);
    json_array_append_new(seeds, so);
    if (strict != 0) { rc = strict; goto out; }
    /* the float64 reference decides */
    if (!v->ref64[s]) {
        char pfx[64];
        snprintf(pfx, sizeof pfx, "g3.ref64.s%d.", seed);
        if (run_target(v, json_pack("{s:s}", "kind", "eager"), seed, 1, pfx, T_RUN, &v->ref64[s], e)) goto out;
    }
    if (load_outputs(v->ref64[s], k, &tr, e) || load_outputs(v->base[s], k, &tb, e)) goto out;
    double oe = NAN, be = NAN;
    double rho = cmp.shape_mismatch ? INFINITY : gate3_rho(&tr, &tb, &to, &oe, &be);
    int ok = !cmp.shape_mismatch && gate3_accept_rho(rho, oe, go);
    json_object_set_new(so, "rho", isfinite(rho) ? json_real(rho) : json_string("inf"));
    json_object_set_new(so, "opt_err_vs_f64", json_real(oe));
    json_object_set_new(so, "base_err_vs_f64", json_real(be));
    json_object_set_new(so, "accepted_by_rho", json_boolean(ok));
    rc = ok;
    if (ok) goto out;
    json_object_set_new(g, "passed", json_false());
    if (cmp.shape_mismatch)
        json_object_set_new(g, "reason", json_sprintf("seed %d, output %zu: shape differs from the eager model's", seed, k));
    else
        json_object_set_new(g, "reason",
                            json_sprintf("seed %d, output %zu: differs from the eager model (max abs err %.3g) and the "
                                         "float64 error ratio rho = %.3g (opt err %.3g, baseline err %.3g) exceeds "
                                         "rho_max %.3g or the absolute bound %.3g",
                                         seed, k, cmp.max_abs_err, rho, oe, be, go->rho_max > 0 ? go->rho_max : 10,
                                         go->abs_bound > 0 ? go->abs_bound : 1e-2));
out:
    tensor_free(&te);
    tensor_free(&to);
    tensor_free(&tr);
    tensor_free(&tb);
    return rc;
}

/* Gate 3 on a module; fills g; returns 1 passed, 0 refused, <0 pipeline error (e set). */
static int gate3(vctx *v, const char *module, const char *tag, json_t *g, kerr *e) {
    gate3_opts go = {.rho_max = v->o->rho_max, .abs_bound = v->o->abs_bound};
    json_t *seeds = json_array();
    json_object_set_new(g, "seeds", seeds);
    json_object_set_new(g, "rho_max", json_real(go.rho_max > 0 ? go.rho_max : 10));
    json_object_set_new(g, "abs_bound", json_real(go.abs_bound > 0 ? go.abs_bound : 1e-2));
    for (int s = 0; s < v->nseeds; s++) {
        int seed = seed_of(s);
        char pfx[128];
        if (!v->eager[s]) {
            snprintf(pfx, sizeof pfx, "g3.eager.s%d.", seed);
            if (run_target(v, json_pack("{s:s}", "kind", "eager"), seed, 0, pfx, T_RUN, &v->eager[s], e)) return -1;
        }
        if (!v->base[s]) {
            snprintf(pfx, sizeof pfx, "g3.base.s%d.", seed);
            if (run_target(v, module_target(v, v->orig_mod), seed, 0, pfx, T_RUN, &v->base[s], e)) return -1;
        }
        json_t *opt = NULL;
        snprintf(pfx, sizeof pfx, "g3.%s.s%d.", tag, seed);
        kerr ce = {0};
        if (run_target(v, module_target(v, module), seed, 0, pfx, cand_timeout(v), &opt, &ce)) {
            json_object_set_new(g, "passed", json_false());
            json_object_set_new(g, "reason", json_sprintf("the re-stitched module failed on seed %d: %s", seed, ce.msg));
            return 0;
        }
        size_t nout = json_array_size(json_object_get(v->eager[s], "outputs"));
        if (json_array_size(json_object_get(opt, "outputs")) != nout) {
            json_object_set_new(g, "passed", json_false());
            json_object_set_new(g, "reason", json_sprintf("the re-stitched module returns %zu outputs, the model %zu",
                                                          json_array_size(json_object_get(opt, "outputs")), nout));
            json_decref(opt);
            return 0;
        }
        for (size_t k = 0; k < nout; k++) {
            if (!json_object_get(json_array_get(json_object_get(v->eager[s], "outputs"), k), "path")) continue;
            int r = gate3_output(v, s, k, opt, &go, g, seeds, e);
            if (r <= 0) { json_decref(opt); return r; }
        }
        json_decref(opt);
    }
    json_object_set_new(g, "passed", json_true());
    return 1;
}

/* Gate 4; returns 1 passed, 0 refused, <0 on a pipeline error. */
static int gate4(vctx *v, const char *module, json_t *g, double *speedup, kerr *e) {
    json_t *vars = json_pack("[{s:s,s:s,s:s},{s:s,s:s,s:s}]", "kind", "module", "module", v->orig_mod, "args",
                             v->orig_args, "kind", "module", "module", module, "args", v->orig_args);
    json_t *res = NULL;
    kerr ce = {0};
    int rounds = v->o->rounds > 1 ? v->o->rounds : 40;
    if (worker_call(v->w, "time", json_pack("{s:o, s:i, s:i, s:b}", "variants", vars, "rounds", rounds, "warmup", 5,
                                            "flush_l2", 1),
                    T_TIME, &res, &ce)) {
        json_object_set_new(g, "passed", json_false());
        json_object_set_new(g, "reason", json_sprintf("timing failed: %s", ce.msg));
        return 0;
    }
    const json_t *smp = json_object_get(res, "samples");
    size_t n, nc;
    double *b = stats_from_json(json_array_get(smp, 0), &n), *c = stats_from_json(json_array_get(smp, 1), &nc);
    if (nc < n) n = nc;
    gate4_result r;
    int rc = gate4_decide(b, c, n, v->o->min_gain >= 0 ? v->o->min_gain : 0.02, 7, &r, e);
    free(b);
    free(c);
    json_decref(res);
    if (rc) return -1;
    json_object_set_new(g, "baseline_ms", json_real(r.base_ms));
    json_object_set_new(g, "candidate_ms", json_real(r.cand_ms));
    json_object_set_new(g, "speedup", json_pack("{s:f, s:f, s:f}", "estimate", r.ci.estimate, "ci95_lo", r.ci.lo,
                                                "ci95_hi", r.ci.hi));
    json_object_set_new(g, "rounds", json_integer((json_int_t)n));
    json_object_set_new(g, "min_gain", json_real(v->o->min_gain));
    json_object_set_new(g, "method", json_string("median GPU time of the graph module, candidate and baseline "
                                                 "interleaved per round, L2 flushed, stream stalled; 95% paired "
                                                 "bootstrap interval of the ratio of medians"));
    json_object_set_new(g, "passed", json_boolean(r.passed));
    if (!r.passed)
        json_object_set_new(g, "reason", json_sprintf("not faster: speedup %.3fx, 95%% CI [%.3f, %.3f] does not lie "
                                                      "above %.3f",
                                                      r.ci.estimate, r.ci.lo, r.ci.hi, 1 + v->o->min_gain));
    *speedup = r.ci.estimate;
    return r.passed;
}

/* ---------------------------------------------------------------- one candidate */

static int write_module(const vctx *v, const art_replacement *reps, size_t n, const char *path, kerr *e) {
    art_emit_opts eo = {.replace = reps, .nreplace = n};
    kbuf b = KBUF_INIT;
    int rc = artifact_emit(v->a, &eo, &b, e);
    if (!rc) rc = fs_write(path, kbuf_str(&b), b.len, e);
    kbuf_free(&b);
    return rc;
}

static int region_kernel_for(vctx *v, const char *binding, int *k, char **why, kerr *e);

/* Gates 1-4 for candidate i. Fills rec; on acceptance sets *win. Returns non-zero only when the
 * pipeline itself cannot go on (e set). */
static int verify_one(vctx *v, size_t i, const verify_cand *vc, json_t *rec, winner *win, kerr *e) {
    json_t *gates = json_array();
    json_object_set_new(rec, "candidate", json_string(vc->path));
    json_object_set_new(rec, "gates", gates);
    json_t *g1 = gate_obj(1);
    json_array_append_new(gates, g1);

    char *src = NULL;
    size_t slen = 0;
    kerr ce = {0};
    if (fs_read(vc->path, &src, &slen, &ce)) { refuse(rec, g1, "%s", ce.msg); return 0; }
    candidate *c = NULL;
    if (candidate_parse(src, slen, &c, &ce)) {
        free(src);
        refuse(rec, g1, "the candidate does not parse: %s", ce.msg);
        return 0;
    }
    free(src);
    const char *kbind = vc->kernel ? vc->kernel : candidate_replaces(c);
    if (!kbind) {
        candidate_free(c);
        refuse(rec, g1, "no kernel named: pass --replace KERNEL=%s or add '# kopt-candidate: replaces=KERNEL'", vc->path);
        return 0;
    }
    json_object_set_new(rec, "kernel", json_string(kbind));
    json_object_set_new(rec, "form", json_string(candidate_form_name(candidate_form(c))));
    int k = artifact_find_kernel(v->a, kbind);
    if (k < 0 && strchr(kbind, '+')) {
        char *rwhy = NULL;
        int rrc = region_kernel_for(v, kbind, &k, &rwhy, e);
        if (rrc) { candidate_free(c); return rrc; }
        if (rwhy) {
            refuse(rec, g1, "region %s: %s", kbind, rwhy);
            free(rwhy);
            candidate_free(c);
            return 0;
        }
    }
    if (k < 0) {
        refuse(rec, g1, "the compiled model has no Triton kernel named %s", kbind);
        candidate_free(c);
        return 0;
    }
    if (!first_launch(v->a, k)) {
        refuse(rec, g1, "call() no longer launches %s: a region candidate checked before it replaced its launch "
               "(kopt verify checks single-kernel candidates before region ones)", kbind);
        candidate_free(c);
        return 0;
    }
    const char *kname = v->a->kernels[k].name;   /* owned by the artifact, outlives c */
    static_opts so = {.allow_precision_change = v->o->allow_precision_change, .model_dtype = NULL};
    kbuf stitch = KBUF_INIT;
    char *why = NULL;
    json_t *srep = NULL;
    int ok1 = gate1_check(c, &v->a->kernels[k], &so, &stitch, &why, &srep);
    candidate_free(c);
    if (srep) json_object_set_new(g1, "static", srep);
    if (!ok1) {
        refuse(rec, g1, "%s", why);
        free(why);
        kbuf_free(&stitch);
        return 0;
    }
    int rc = 0;
    char *cdir = kasprintf("%s/cand%zu", v->o->workdir, i);
    char *cmod = kasprintf("%s/graph0.py", cdir);
    art_replacement rep = {.kernel = kname, .text = kbuf_str(&stitch)};
    if ((rc = fs_mkdirs(cdir, e)) || (rc = write_module(v, &rep, 1, cmod, e))) goto out;
    json_object_set_new(rec, "module", json_string(cmod));
    const char *largs = NULL;
    if ((rc = launch_args_for(v, k, &largs, e))) goto out;
    progress(v, "candidate %zu (%s): gate 1, compiling", i + 1, kname);
    json_t *res = NULL;
    if (worker_call(v->w, "compile_candidate", json_pack("{s:s, s:s, s:s}", "module", cmod, "kernel", kname,
                                                           "launch_args", largs),
                    cand_timeout(v), &res, &ce)) {
        refuse(rec, g1, "compiling the candidate failed: %s", ce.msg);
        goto out;
    }
    if (!json_is_true(json_object_get(res, "compiled"))) {
        refuse(rec, g1, "the candidate does not compile: %s", json_string_value(json_object_get(res, "error")));
        json_decref(res);
        goto out;
    }
    json_decref(res);
    json_object_set_new(g1, "passed", json_true());

    /* Gate 2 */
    progress(v, "candidate %zu (%s): gate 2, isolation", i + 1, kname);
    json_t *g2 = gate_obj(2);
    json_array_append_new(gates, g2);
    const art_launch *l = first_launch(v->a, k);
    json_t *roles = json_array(), *seeds = json_array();
    for (size_t j = 0, nprobe = art_launch_probe_count(l); j < nprobe; j++) {
        const art_param *p = j < l->args.n ? art_launch_param(v->a, l, j) : NULL;
        json_array_append_new(roles, json_string(p ? role_name(p->role) : "scalar"));
    }
    for (int s = 0; s < (v->o->seeds > 0 ? v->o->seeds : 3); s++) json_array_append_new(seeds, json_integer(seed_of(s)));
    char *idir = kasprintf("%s/iso", cdir);
    int wrc = worker_call(v->w, "isolate",
                          json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:i}", "orig", v->base_mod, "cand", cmod,
                                    "kernel", kname, "launch_args", largs, "roles", roles, "seeds", seeds, "out_dir",
                                    idir, "repeat", 2),
                          cand_timeout(v), &res, &ce);
    free(idir);
    if (wrc) {
        refuse(rec, g2, "the isolation run failed: %s", ce.msg);
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
        refuse(rec, g2, "%s", json_string_value(json_object_get(g2, "reason")));
        goto out;
    }

    /* Gate 3 */
    progress(v, "candidate %zu (%s): gate 3, model level", i + 1, kname);
    json_t *g3 = gate_obj(3);
    json_array_append_new(gates, g3);
    char tag[32];
    snprintf(tag, sizeof tag, "cand%zu", i);
    int r3 = gate3(v, cmod, tag, g3, e);
    if (r3 < 0) { rc = e->code; goto out; }
    if (!r3) {
        refuse(rec, g3, "%s", json_string_value(json_object_get(g3, "reason")));
        goto out;
    }

    /* Gate 4 */
    progress(v, "candidate %zu (%s): gate 4, timing", i + 1, kname);
    json_t *g4 = gate_obj(4);
    json_array_append_new(gates, g4);
    double sp = 0;
    int r4 = gate4(v, cmod, g4, &sp, e);
    if (r4 < 0) { rc = e->code; goto out; }
    if (!r4) {
        refuse(rec, g4, "%s", json_string_value(json_object_get(g4, "reason")));
        goto out;
    }
    json_object_set_new(rec, "verdict", json_string("accepted"));
    json_object_set(rec, "speedup", json_object_get(g4, "speedup"));
    win->kernel = kstrdup(kname);
    win->text = kbuf_steal(&stitch);
    win->path = kstrdup(vc->path);
    win->speedup = sp;
out:
    kbuf_free(&stitch);
    free(cdir);
    free(cmod);
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

static int write_outputs(vctx *v, const char *module_text, size_t module_len, json_t *doc, kerr *e) {
    const char *out = v->o->out_dir;
    int rc = fs_mkdirs(out, e);
    char *p = NULL;
    if (rc) return rc;
    p = fs_join(out, "optimized_module.py");
    rc = fs_write(p, module_text, module_len, e);
    free(p);
    if (rc) return rc;
    p = fs_join(out, "kopt_args.pt");
    rc = copy_file(v->orig_args, p, e);
    free(p);
    if (rc) return rc;
    json_t *meta = json_pack("{s:s, s:s, s:O, s:O?}", "module", "optimized_module.py", "args", "kopt_args.pt",
                             "arg_sources", v->sources ? v->sources : json_null(), "replaced",
                             json_object_get(doc, "replaced"));
    if (v->orig_attrs) {
        p = fs_join(out, "kopt_attrs.pt");
        rc = copy_file(v->orig_attrs, p, e);
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

/* ---------------------------------------------------------------- pipeline */

static void vctx_free(vctx *v) {
    artifact_free(v->a);
    free(v->text);
    artifact_free(v->a0);
    free(v->text0);
    free(v->base_mod);
    free(v->orig_mod);
    free(v->orig_args);
    free(v->orig_attrs);
    json_decref(v->sources);
    free(v->prof_path);
    for (int s = 0; s < v->nseeds; s++) {
        if (v->eager) json_decref(v->eager[s]);
        if (v->base) json_decref(v->base[s]);
        if (v->ref64) json_decref(v->ref64[s]);
    }
    free(v->eager);
    free(v->base);
    free(v->ref64);
}

/* Per-kernel capture cache and instrumented module for the current artifact v->a. */
static void drop_launch_args(vctx *v) {
    if (v->launch_args && v->a)
        for (size_t k = 0; k < v->a->nkernels; k++) free(v->launch_args[k]);
    free(v->launch_args);
    v->launch_args = NULL;
}

static int adopt(vctx *v, kerr *e) {
    v->launch_args = kcalloc(v->a->nkernels ? v->a->nkernels : 1, sizeof *v->launch_args);
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
    v->base_mod = kstrdup(v->orig_mod);
    /* winners of kernels this artifact does not have (the regions) go */
    size_t j = 0;
    for (size_t i = 0; i < v->nwins; i++) {
        if (artifact_find_kernel(v->a, v->wins[i].kernel) >= 0) { v->wins[j++] = v->wins[i]; continue; }
        free(v->wins[i].kernel);
        free(v->wins[i].text);
        free(v->wins[i].path);
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

static int setup(vctx *v, json_t *doc, kerr *e) {
    const verify_opts *o = v->o;
    char *abs = fs_realpath(o->problem);
    json_object_set_new(doc, "problem", json_string(abs ? abs : o->problem));
    const json_t *info = worker_info(v->w);
    json_object_set_new(doc, "device", json_pack("{s:O?, s:O?, s:O?}", "name", json_object_get(info, "device"), "torch",
                                                 json_object_get(info, "torch"), "triton", json_object_get(info, "triton")));
    progress(v, "loading the problem");
    json_t *res = NULL;
    int rc = worker_call_setup(v->w, "load", json_pack("{s:s, s:i}", "path", abs ? abs : o->problem, "seed", 0), T_LOAD,
                               &res, e);
    free(abs);
    json_decref(res);
    if (rc) return rc;
    progress(v, "compiling with torch.compile (default)");
    char *cdir = fs_join(o->workdir, "compile-default");
    if ((rc = fs_mkdirs(cdir, e))) { free(cdir); return rc; }
    rc = worker_call(v->w, "compile", json_pack("{s:s, s:s}", "mode", "default", "out_dir", cdir), T_COMPILE, &res, e);
    free(cdir);
    if (rc) return kerr_wrap(e, "torch.compile");
    const json_t *graphs = json_object_get(res, "graphs");
    if (json_array_size(graphs) == 0) {
        json_decref(res);
        return kerr_set(e, KOPT_E_NOTRITON, "torch.compile produced no graph for this model: nothing to replace");
    }
    if (json_array_size(graphs) > 1) {
        json_decref(res);
        return kerr_set(e, KOPT_E_USAGE, "the model compiles to %zu graphs (graph breaks); kopt verify handles "
                                         "single-graph models only for now", json_array_size(graphs));
    }
    const json_t *g = json_array_get(graphs, 0);
    v->orig_mod = kstrdup(json_string_value(json_object_get(g, "module")));
    v->orig_args = kstrdup(json_string_value(json_object_get(g, "args")));
    if (json_string_value(json_object_get(g, "attrs"))) v->orig_attrs = kstrdup(json_string_value(json_object_get(g, "attrs")));
    v->sources = json_incref(json_object_get(g, "arg_sources"));
    json_decref(res);
    if ((rc = fs_read(v->orig_mod, &v->text, &v->len, e))) return rc;
    if ((rc = artifact_parse(v->text, v->len, &v->a, e))) return kerr_wrap(e, "parsing Inductor's output module");
    v->base_mod = kstrdup(v->orig_mod);
    if ((rc = adopt(v, e))) return rc;
    json_t *kern = json_array();
    for (size_t k = 0; k < v->a->nkernels; k++) json_array_append_new(kern, json_string(v->a->kernels[k].name));
    json_object_set_new(doc, "kernels", kern);
    return rc;
}

int verify_session_open(worker *w, const verify_opts *o, json_t *doc, verify_session **out, kerr *e) {
    vctx *v = kcalloc(1, sizeof *v);
    v->w = w;
    v->o = o;
    v->doc = doc;
    v->nseeds = o->seeds > 0 ? o->seeds : 3;
    v->eager = kcalloc((size_t)v->nseeds, sizeof *v->eager);
    v->base = kcalloc((size_t)v->nseeds, sizeof *v->base);
    v->ref64 = kcalloc((size_t)v->nseeds, sizeof *v->ref64);
    if (!json_object_get(doc, "candidates")) json_object_set_new(doc, "candidates", json_array());
    *out = v;
    return setup(v, doc, e);
}

int verify_session_check(verify_session *v, const char *kernel, const char *path, json_t **rec_out, int *accepted,
                         double *speedup, kerr *e) {
    verify_cand vc = {.kernel = kernel, .path = path};
    json_t *rec = json_object();
    json_array_append_new(json_object_get(v->doc, "candidates"), rec);
    if (rec_out) *rec_out = rec;
    winner w = {0};
    int rc = verify_one(v, v->ncand++, &vc, rec, &w, e);
    log_info("candidate %s: %s", path, json_string_value(json_object_get(rec, "verdict")));
    if (accepted) *accepted = w.kernel != NULL;
    if (speedup) *speedup = w.speedup;
    if (w.kernel) {
        if (v->nwins == v->capwins) {
            v->capwins = v->capwins ? 2 * v->capwins : 8;
            v->wins = krealloc(v->wins, v->capwins * sizeof *v->wins);
        }
        v->wins[v->nwins++] = w;
    }
    return rc;
}

int verify_session_finish(verify_session *v, kerr *e) {
    const verify_opts *o = v->o;
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
        int ok = !(rc = write_module(v, reps, nrep, cmod, e));
        int r3 = ok ? gate3(v, cmod, "combined", g3, e) : -1;
        int r4 = r3 == 1 ? gate4(v, cmod, g4, &sp, e) : 0;
        free(cmod);
        if (r3 < 0 || r4 < 0) { free(reps); kbuf_free(&final); return e->code; }
        if (r3 == 1 && r4 == 1) {
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
        art_emit_opts eo = {.replace = reps, .nreplace = nrep};
        if ((rc = artifact_emit(v->a, &eo, &final, e))) { free(reps); kbuf_free(&final); return rc; }
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
    for (size_t i = 0; i < v->nwins; i++) { free(v->wins[i].kernel); free(v->wins[i].text); free(v->wins[i].path); }
    free(v->wins);
    drop_launch_args(v);
    vctx_free(v);
    free(v);
}

const artifact *verify_session_artifact(const verify_session *v) { return v->a; }
const char *verify_session_module(const verify_session *v) { return v->orig_mod; }
const char *verify_session_base_module(const verify_session *v) { return v->base_mod; }
int verify_session_measure(verify_session *v, const char *module, json_t *g, double *speedup, kerr *e) {
    return gate4(v, module, g, speedup, e);
}
const char *verify_session_args(const verify_session *v) { return v->orig_args; }
const char *verify_session_profile_module(const verify_session *v) { return v->prof_path; }
int verify_session_launch_args(verify_session *v, int kernel, const char **path, kerr *e) {
    return launch_args_for(v, kernel, path, e);
}
int verify_session_write_module(verify_session *v, const char *kernel, const char *text, const char *path, kerr *e) {
    art_replacement rep = {.kernel = kernel, .text = text};
    return write_module(v, &rep, 1, path, e);
}

/* Whether a candidate is bound to a region (K1+K2+...): by --replace, or by its file's
 * `replaces=` binding (a file that does not read or parse counts as single-kernel; gate 1 says
 * why it is refused). */
static int cand_is_region(const verify_cand *vc) {
    if (vc->kernel) return strchr(vc->kernel, '+') != NULL;
    char *src = NULL;
    size_t n = 0;
    kerr e = {0};
    candidate *c = NULL;
    int region = !fs_read(vc->path, &src, &n, &e) && !candidate_parse(src, n, &c, &e) && candidate_replaces(c) &&
                 strchr(candidate_replaces(c), '+');
    candidate_free(c);
    free(src);
    return region;
}

int verify_run(worker *w, const verify_opts *o, json_t **doc_out, kerr *e) {
    json_t *doc = json_pack("{s:s}", "schema", "kopt.verify/1");
    *doc_out = doc;
    verify_session *v = NULL;
    int rc = verify_session_open(w, o, doc, &v, e);
    /* single-kernel candidates first: a region candidate replaces its kernels' launches */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; !rc && i < o->ncands; i++)
            if (cand_is_region(&o->cands[i]) == pass)
                rc = verify_session_check(v, o->cands[i].kernel, o->cands[i].path, NULL, NULL, NULL, e);
    if (!rc) rc = verify_session_finish(v, e);
    verify_session_close(v);
    return rc;
}

/* ---------------------------------------------------------------- text report */

void verify_report_text(const json_t *doc, kbuf *out) {
    kbuf_printf(out, "kopt verify  %s\n", json_string_value(json_object_get(doc, "problem")));
    const json_t *dev = json_object_get(doc, "device");
    kbuf_printf(out, "device       %s (torch %s, triton %s)\n\n", json_string_value(json_object_get(dev, "name")),
                json_string_value(json_object_get(dev, "torch")), json_string_value(json_object_get(dev, "triton")));
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "candidates"), i, c) {
        const char *verdict = json_string_value(json_object_get(c, "verdict"));
        kbuf_printf(out, "%s\n  kernel %s, form %s\n", json_string_value(json_object_get(c, "candidate")),
                    json_string_value(json_object_get(c, "kernel")) ? json_string_value(json_object_get(c, "kernel")) : "?",
                    json_string_value(json_object_get(c, "form")) ? json_string_value(json_object_get(c, "form")) : "?");
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
            if (!pass && json_object_get(g, "reason"))
                kbuf_printf(out, "\n          %s", json_string_value(json_object_get(g, "reason")));
            kbuf_putc(out, '\n');
        }
        kbuf_printf(out, "  => %s\n\n", verdict ? verdict : "?");
    }
    const json_t *comb = json_object_get(doc, "combined");
    if (comb) kbuf_printf(out, "combination of the winners: %s\n", json_is_true(json_object_get(comb, "accepted")) ? "accepted" : "refused, the single best kept");
    kbuf_printf(out, "outcome: %s\n", json_string_value(json_object_get(doc, "outcome")) ? json_string_value(json_object_get(doc, "outcome")) : "pipeline failed");
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)json_object_get(doc, "replaced"), key, val)
        kbuf_printf(out, "  %s <- %s\n", key, json_string_value(val));
}
