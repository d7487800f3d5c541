/* optimize.c — the `kopt optimize` pipeline (optimize.h): compile and capture (a verify
 * session), profile, whole-model baselines, the analyst's ranking, the search kernel by kernel
 * (search.c), re-stitching, an independent final measurement, and the document. */
#include "optimize/optimize.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agents/builtin.h"
#include "gates/machine.h"
#include "gates/stats.h"
#include "llm/agent_llm.h"
#include "optimize/optimize_int.h"
#include "profile/floor.h"
#include "profile/inspect.h"
#include "profile/roofline.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/log.h"

/* ---------------------------------------------------------------- budget, progress */

double opt_now(void) { return clock_now(); }

double opt_budget(const octx *c) { return c->o->budget_s > 0 ? c->o->budget_s : 120; }
int opt_max_cands(const octx *c) { return c->o->max_candidates > 0 ? c->o->max_candidates : 64; }
int opt_over_budget(const octx *c) {
    return opt_now() - c->t0 + c->check_s > opt_budget(c) || c->used >= opt_max_cands(c);
}

void opt_progress(octx *c, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char line[700];
    snprintf(line, sizeof line, "%s | %d cands | %.0fs left", buf, c->used, opt_budget(c) - (opt_now() - c->t0));
    if (c->o->progress) c->o->progress(line, c->o->progress_ctx);
    log_info("%s", line);
}



static void verify_progress(const char *stage, void *ctx) {
    octx *c = ctx;
    opt_progress(c, "%s", stage);
}


/* ---------------------------------------------------------------- pipeline */

/* Every LLM call goes to the store (tokens, latency, cost; never the key). */
static void llm_observe(const llm_call_info *call, void *ctx) {
    octx *c = ctx;
    if (!c->store) return;
    store_llm_call row = {.run_id = c->run_id, .role = agent_role_name(call->role), .backend = call->backend,
                          .model = call->model, .tokens_in = call->tokens_in, .tokens_out = call->tokens_out,
                          .latency_ms = call->latency_s * 1000, .cost_usd = call->cost_usd, .ok = call->ok,
                          .error = call->error};
    kerr e = {0};
    if (store_llm_call_add(c->store, &row, &e)) mem_warn(c, &e);
}

/* The max-autotune compile's share of the budget: it must leave the search most of it
 * (35%, at least 20 s; $KOPT_MA_TIMEOUT_S overrides, for tests and slow machines). */
static double ma_limit(const octx *c) {
    const char *env = getenv("KOPT_MA_TIMEOUT_S");
    char *end = NULL;
    double v = env && *env ? strtod(env, &end) : 0;
    if (env && *env && end && !*end && v > 0) return v;
    double lim = 0.35 * opt_budget(c);
    return lim < 20 ? 20 : lim;
}

/* Sets `why` on every kernel row outside a region: none of them was searched. */
static void mark_unsearched(krows *t, const char *why) {
    for (size_t j = 0; j < t->n; j++)
        if (t->v[j].status != KROW_IN_REGION) krow_set(&t->v[j].why, why);
}

/* The kernel row of an analyst row (a ranked kernel), from the profile's launch row and the
 * configurations its kernels settled on (the profile's "configs", tuned.h). */
static void add_kernel_row(krows *t, const json_t *r, const json_t *prow, const json_t *configs) {
    krow *k = krows_add(t, json_string_value(json_object_get(r, "kernel")));
    tuned_config_parse(json_object_get(configs, k->name), &k->tuned);   /* zeroed when none */
    krow_set(&k->kernel_kind, json_string_value(json_object_get(r, "kernel_kind")));
    krow_set(&k->cls, json_string_value(json_object_get(r, "class")));
    k->time_ms = json_number_value(json_object_get(r, "time_ms"));
    k->share = json_number_value(json_object_get(r, "share"));
    k->has_frac = json_is_number(json_object_get(r, "frac_of_ceiling"));
    k->frac_of_ceiling = json_number_value(json_object_get(r, "frac_of_ceiling"));
    k->has_bytes = 1;
    k->bytes = json_number_value(json_object_get(prow, "bytes_read")) + json_number_value(json_object_get(prow, "bytes_written"));
    krow_set(&k->why, json_string_value(json_object_get(r, "why")));
    const json_t *ops = json_object_get(prow, "aten_ops");
    k->has_aten_ops = json_is_array(ops);
    size_t i;
    const json_t *v;
    json_array_foreach(ops, i, v) art_strlist_push(&k->aten_ops, kstrdup(json_string_value(v) ? json_string_value(v) : "?"));
    if (json_object_get(prow, "ncu")) k->ncu = json_incref(json_object_get(prow, "ncu"));
}

/* The document's "kernels" and "vendor_calls" from the kernel table (in place: their keys
 * keep their position in the document). */
static void write_rows(octx *c) {
    json_object_set_new(c->doc, "kernels", krows_to_json(&c->rows));
    json_object_set_new(c->doc, "vendor_calls", krows_vendor_json(&c->rows));
}

/* The final measurement's figures (verify_session_final's g) into the model's entry. */
static void take_final(json_t *model, const json_t *g) {
    static const char *const keys[] = {"baseline_ms", "optimized_ms", "speedup", "speedup_vs_default",
                                       "speedup_vs_max_autotune", "as_called_vs_default", "as_called_vs_max_autotune",
                                       "as_called_recheck", "rechecked_rounds", "rechecked_host_rounds",
                                       "added_rechecked_rounds", "added_rechecked_host_rounds", "rounds_timed_again"};
    for (size_t q = 0; q < sizeof keys / sizeof *keys; q++)
        if (json_object_get(g, keys[q])) json_object_set(model, keys[q], json_object_get(g, keys[q]));
}

/* The upper end of a speedup's 95% interval (or +inf when absent). */
static double ci_hi(const json_t *model, const char *key) {
    const json_t *s = json_object_get(json_object_get(model, key), "ci95_hi");
    return json_is_number(s) ? json_number_value(s) : INFINITY;
}

/* The final measurement's keys for the output's speedup over compiler module `pick` (0 default's,
 * 1 max-autotune's): in GPU time, and as the model is called (host dispatch included). */
static const char *gpu_key(int pick) { return pick ? "speedup_vs_max_autotune" : "speedup_vs_default"; }
static const char *called_key(int pick) { return pick ? "as_called_vs_max_autotune" : "as_called_vs_default"; }

static double estimate_of(const json_t *model, const char *key) {
    const json_t *s = json_object_get(json_object_get(model, key), "estimate");
    return json_is_number(s) ? json_number_value(s) : INFINITY;
}

/* Whether compiler module `pick` is faster than the output beyond noise: the output's speedup
 * over it has its whole 95% interval below 1, in GPU time or as the model is called (gate 4
 * refuses a candidate on either, so the output may not be behind on either). */
static int compiled_beats_output(const json_t *model, int pick) {
    return ci_hi(model, gpu_key(pick)) < 1.0 || ci_hi(model, called_key(pick)) < 1.0;
}

/* Which compiler module the final measurement found faster than the output beyond noise
 * (compiled_beats_output): 0 default's, 1 max-autotune's, -1 neither. out_is: what the output
 * is, 0 default's module, 1 max-autotune's, 2 re-stitched. Both faster: the one the output is
 * slowest against (the smaller of its two speedup estimates over each). */
static int final_repick(const json_t *model, int out_is) {
    int def = out_is != 0 && compiled_beats_output(model, 0);
    int ma = out_is != 1 && compiled_beats_output(model, 1);
    if (def && ma) {
        double d = fmin(estimate_of(model, gpu_key(0)), estimate_of(model, called_key(0)));
        double m = fmin(estimate_of(model, gpu_key(1)), estimate_of(model, called_key(1)));
        return m < d ? 1 : 0;
    }
    return def ? 0 : ma ? 1 : -1;
}

/* Why the final measurement's figures (final_repick) made compiler module `pick` the output
 * instead of `out_is`'s (as final_repick's); a new string. */
static char *repick_why(const json_t *model, int pick, int out_is) {
    int in_gpu_time = ci_hi(model, gpu_key(pick)) < 1.0;
    const json_t *sp = json_object_get(model, in_gpu_time ? gpu_key(pick) : called_key(pick));
    return kasprintf("the final measurement found torch.compile's %s module faster than %s%s (%.3fx, 95%% CI %.3f-%.3f): "
                     "it is the output",
                     pick ? "max-autotune" : "default",
                     out_is == 2 ? "the re-stitched one" : out_is ? "max-autotune's" : "default's",
                     in_gpu_time ? "" : " as the model is called (host dispatch included)",
                     json_number_value(json_object_get(sp, "estimate")), json_number_value(json_object_get(sp, "ci95_lo")),
                     json_number_value(json_object_get(sp, "ci95_hi")));
}

/* Outputs torch.compile's module `pick` (0 default's, 1 max-autotune's) instead of what the
 * search chose, for the reason `why` (taken: owned by the caller's *why afterwards), and
 * measures it again (a fresh, independent final: the figures reported are not the ones that
 * picked it). */
static int adopt_compiled(octx *c, json_t *model, int pick, char *why, char **out_why, kerr *e) {
    *out_why = why;
    log_warn("%s", why);
    const char *mod = NULL;
    int rc = verify_session_output_compiled(c->vs, pick, &mod, e);
    if (rc) return rc;
    opt_progress(c, "final measurement again: torch.compile's %s module", pick ? "max-autotune" : "default");
    json_t *g = json_object();
    int refused = 0;   /* a compiler module is only timed, never refused */
    rc = verify_session_final(c->vs, mod, g, &refused, e);
    if (!rc) take_final(model, g);
    json_decref(g);
    json_object_set_new(model, "final_pick", json_pack("{s:s, s:s}", "module", pick ? "max-autotune" : "default", "why", why));
    return rc;
}

/* Copies the worker's per-op time table into dst (WORKER_OP_TIMES_MAX rows); returns its rows. */
static size_t ops_snapshot(const worker *w, worker_op_time *dst) {
    const worker_op_time *v = NULL;
    size_t n = worker_op_times(w, &v);
    if (n) memcpy(dst, v, n * sizeof *v);
    return n;
}

/* {op: {"seconds", "calls"}}: each row of cur less the row of the same op in base (the requests
 * made between the two snapshots), ops without a call between them left out; *total_s (may be
 * NULL) gets the seconds summed. A new reference. */
static json_t *ops_json(const worker_op_time *cur, size_t ncur, const worker_op_time *base, size_t nbase, double *total_s) {
    json_t *o = json_object();
    double sum = 0;
    for (size_t i = 0; i < ncur; i++) {
        double s = cur[i].seconds;
        long long n = cur[i].calls;
        for (size_t j = 0; j < nbase; j++)
            if (!strcmp(base[j].name, cur[i].name)) { s -= base[j].seconds; n -= base[j].calls; break; }
        if (n <= 0) continue;
        if (s < 0) s = 0;
        sum += s;
        json_object_set_new(o, cur[i].name, json_pack("{s:f, s:I}", "seconds", s, "calls", (json_int_t)n));
    }
    if (total_s) *total_s = sum;
    return o;
}

/* Where the run's wall time went, per worker op (the whole run, and the setup before the
 * search), into the resources object r. */
static void add_op_seconds(octx *c, json_t *r) {
    worker_op_time now[WORKER_OP_TIMES_MAX];
    size_t n = ops_snapshot(c->w, now);
    json_object_set_new(r, "seconds_by_step", ops_json(now, n, c->ops_start, c->nops_start, NULL));
    if (c->t_search > 0) {
        double in_requests = 0;
        json_object_set_new(r, "setup_by_step",
                            ops_json(c->ops_search, c->nops_search, c->ops_start, c->nops_start, &in_requests));
        double outside = c->t_search - c->t0 - in_requests;
        json_object_set_new(r, "setup_outside_requests_s", json_real(outside > 0 ? outside : 0));
    }
    json_object_set_new(r, "seconds_method",
                        json_string("wall time of kopt's requests to its worker, per op, as kopt sees it (from sending "
                                    "the request to the response or the failure, a restart of the worker included; "
                                    "failed requests count): seconds_by_step over the run up to this report, "
                                    "setup_by_step over the requests made before the search began (budget.setup_s); "
                                    "setup_outside_requests_s is the rest of the setup: starting the worker and "
                                    "kopt's own work between requests"));
}

/* The worker's memory report and the disk the run used, into doc["resources"]. */
static void add_resources(octx *c, json_t *doc) {
    json_t *r = json_object(), *res = NULL;
    json_object_set_new(doc, "resources", r);
    const json_t *ws = verify_session_working_set(c->vs);
    if (ws) json_object_set_new(r, "working_set_bytes", json_real(json_number_value(json_object_get(ws, "total_bytes"))));
    if (ws) json_object_set(r, "working_set", (json_t *)ws);
    kerr e = {0};
    if (!worker_call(c->w, "resources", json_object(), 60, &res, &e)) {
        const json_t *pk = json_object_get(res, "peak_reserved");
        double ctx = json_number_value(json_object_get(res, "context_bytes"));
        json_object_set_new(r, "context_bytes", json_real(ctx));
        json_object_set_new(r, "peak_gpu_bytes", json_real(json_number_value(json_object_get(pk, "main")) + ctx));
        json_object_set_new(r, "eager_peak_gpu_bytes", json_real(json_number_value(json_object_get(pk, "eager")) + ctx));
        json_object_set_new(r, "f64_peak_gpu_bytes", json_real(json_number_value(json_object_get(pk, "f64")) + ctx));
        json_object_set_new(r, "ceilings_peak_gpu_bytes", json_real(json_number_value(json_object_get(pk, "ceilings")) + ctx));
        json_object_set_new(r, "inputs_peak_gpu_bytes", json_real(json_number_value(json_object_get(pk, "inputs")) + ctx));
        json_object_set_new(r, "compile_cache_bytes", json_real(json_number_value(json_object_get(res, "compile_cache_bytes"))));
        if (json_object_get(res, "peak_reserved_by_op")) json_object_set(r, "peak_by_step", json_object_get(res, "peak_reserved_by_op"));
        if (json_object_get(res, "peak_allocated_by_op"))
            json_object_set(r, "allocated_by_step", json_object_get(res, "peak_allocated_by_op"));
        if (json_object_get(res, "outside_allocator_by_op"))
            json_object_set(r, "outside_allocator_by_step", json_object_get(res, "outside_allocator_by_op"));
        if (json_is_array(json_object_get(res, "stack_released"))) /* local memory the worker gave back */
            json_object_set(r, "stack_released", json_object_get(res, "stack_released"));
        json_object_set_new(r, "method", json_string("peak: torch.cuda.max_memory_reserved per phase (the eager model's "
                                                     "runs -- its forward at load, its timing, gate 3's reference -- are a "
                                                     "phase of their own: the user's model, whose intermediates are not "
                                                     "kopt's; so are the float64 reference of gate 3, the ceilings and the user's "
                                                     "get_inputs() drawing each seed's inputs, whose transients are its own; "
                                                     "the drawn inputs, held afterwards, count in main) plus "
                                                     "the memory the process holds outside PyTorch's allocator (CUDA "
                                                     "context, libraries); working set: inputs, parameters, buffers and what "
                                                     "one compiled run allocates (outputs and intermediates)"));
        json_decref(res);
    } else {
        log_warn("resources: %s", e.msg);
    }
    add_op_seconds(c, r);   /* after the "resources" request: it is counted too */
    json_object_set_new(r, "disk_bytes", json_real((double)fs_du(c->o->out_dir)));
}

int optimize_run(worker *w, const optimize_opts *o, json_t **doc_out, kerr *e) {
    octx c = {.w = w, .o = o, .t0 = o->t_start > 0 ? o->t_start : opt_now()};
    json_t *doc = json_pack("{s:s}", "schema", "kopt.optimize/1");
    *doc_out = doc;
    c.doc = doc;
    c.attempts = json_array();
    c.experiences = json_array();
    c.nops_start = ops_snapshot(w, c.ops_start);
    json_object_set_new(doc, "attempts", c.attempts);
    json_object_set_new(doc, "experiences", c.experiences);
    for (int r = 0; r < AGENT_NROLES; r++) {
        c.ag[r] = o->agents[r];
        if (!c.ag[r] && r != AGENT_PROFILER) { c.ag[r] = builtin_new((agent_role)r); c.owned[r] = 1; }
    }
    json_t *agents = json_object();
    for (int r = 1; r < AGENT_NROLES; r++) json_object_set_new(agents, agent_role_name((agent_role)r), json_string(c.ag[r]->name));
    json_object_set_new(agents, "profiler", json_string("builtin"));
    json_object_set_new(doc, "agents", agents);
    /* gate 1's machine-code check for an LLM executor's candidates (the built-in executor's are
     * kopt's own templates): on where the worker's python has triton and a cuobjdump is found */
    if (agent_is_llm(c.ag[AGENT_EXECUTOR])) {
        kerr pe = {0};
        if (machine_tools(o->python, &c.sass_python, &pe)) {
            json_object_set_new(doc, "machine_check", json_pack("{s:s, s:b, s:s+}", "mode", "llm candidates", "ran", 0, "why",
                                                                "not found: ", pe.msg));
            log_warn("the LLM's candidates are not machine-code checked: %s", pe.msg);
        } else {
            json_object_set_new(doc, "machine_check", json_pack("{s:s, s:b}", "mode", "llm candidates", "ran", 1));
        }
    }

    verify_opts vo = {.problem = o->problem, .out_dir = o->out_dir, .workdir = o->workdir, .seeds = o->seeds > 0 ? o->seeds : 3,
                      .rho_max = 10, .abs_bound = 1e-2, .min_gain = o->min_gain > 0 ? o->min_gain : 0.02,
                      .rounds = o->rounds > 1 ? o->rounds : 30, .timeout_s = o->timeout_s > 0 ? o->timeout_s : 120,
                      .max_autotune = o->max_autotune, .ma_timeout_s = ma_limit(&c),
                      .progress = verify_progress, .progress_ctx = &c, .no_reports = 1,
                      .memcheck = o->memcheck, .memcheck_python = o->python};
    json_t *vdoc = json_pack("{s:s}", "schema", "kopt.verify/1");
    json_object_set_new(doc, "verify", vdoc);
    json_t *model = json_object();
    json_object_set_new(doc, "model", model);
    json_object_set_new(doc, "kernels", json_array());        /* written from c.rows at the end */
    json_object_set_new(doc, "vendor_calls", json_array());
    json_t *profile = NULL, *an = NULL;
    char *repicked = NULL;   /* why a compiler module replaced the output at the end, or NULL */
    opt_progress(&c, "compiling and capturing");
    int rc = verify_session_open(w, &vo, vdoc, &c.vs, e);
    if (rc) goto done;
    c.a = verify_session_artifact(c.vs);
    json_object_set(doc, "problem", json_object_get(vdoc, "problem"));
    json_object_set(doc, "device", json_object_get(vdoc, "device"));
    json_object_set(model, "start", json_object_get(vdoc, "start"));
    if (json_object_get(vdoc, "max_autotune_error"))
        json_object_set(model, "max_autotune_error", json_object_get(vdoc, "max_autotune_error"));
    c.store = o->store;
    c.gpu = json_string_value(json_object_get(json_object_get(vdoc, "device"), "name"));
    if (!c.gpu) c.gpu = "unknown";
    mem_run_begin(&c, json_string_value(json_object_get(doc, "problem")), json_object_get(vdoc, "device"));
    for (int r = 0; r < AGENT_NROLES; r++)
        if (c.ag[r] && agent_is_llm(c.ag[r])) agent_llm_set_observer(c.ag[r], llm_observe, &c);

    /* profiler */
    opt_progress(&c, "profiling every launch");
    builtin_profiler_env pe = {.w = w, .profile_module = verify_session_profile_module(c.vs), .module = verify_session_module(c.vs),
                               .args = verify_session_args(c.vs), .reps = 20, .use_ncu = o->use_ncu, .python = o->python};
    agent *prof = builtin_profiler_new(&pe);
    json_t *pctx = json_pack("{s:I}", "artifact", (json_int_t)(uintptr_t)c.a);
    rc = agent_act(prof, pctx, &profile, e);
    json_decref(pctx);
    agent_free(prof);
    if (rc) goto done;
    json_object_set(doc, "ceilings", json_object_get(profile, "ceilings"));
    json_object_set(doc, "profile_source", json_object_get(profile, "source"));
    size_t ntriton = 0;
    for (size_t i = 0; i < c.a->nlaunches; i++) ntriton += c.a->launches[i].kind == ART_L_TRITON;

    /* whole-model baselines: eager and the compiled modules, interleaved */
    const json_t *bl = verify_session_baselines(c.vs, e);
    if (!bl) { rc = e->code; goto done; }
    double comp_ms = json_number_value(json_object_get(bl, "default_ms"));
    json_object_set(model, "eager_ms", json_object_get(bl, "eager_ms"));
    json_object_set_new(model, "compiled_ms", json_real(comp_ms));
    if (json_object_get(bl, "max_autotune_ms")) json_object_set(model, "max_autotune_ms", json_object_get(bl, "max_autotune_ms"));
    double start_ms = verify_session_started_from_max_autotune(c.vs) ? json_number_value(json_object_get(bl, "max_autotune_ms")) : comp_ms;
    size_t i;
    json_t *r;
    /* the model's floor (profile/floor.h): the graph's own I/O at the memory rates (raised where
     * a kernel of the module proved them low: floor_rate_from) and the library calls' floors,
     * each at most the call's measured time */
    const json_t *launches = json_object_get(profile, "launches");
    double written = 0, io = inspect_io_bytes(c.a, launches, &written);
    roof_ceilings measured = inspect_roof_ceilings(json_object_get(profile, "ceilings"));
    double l2 = json_number_value(json_object_get(worker_info(w), "l2_bytes"));
    floor_model fm;
    floor_model_compute(launches, io - written, written, &measured, l2, &fm);
    json_object_set_new(model, "kernels_floor_ms", json_real(fm.kernels_floor_ms));
    if (fm.rate_from >= 0) {
        const json_t *by = json_array_get(launches, (size_t)fm.rate_from);
        json_object_set_new(model, "floor_rate_from",
                            json_pack("{s:O, s:f, s:f, s:f, s:f}", "kernel", json_object_get(by, "name"), "gbps",
                                      fm.rate_from_gbps, "read_gbps", fm.rates.read_bytes_per_s / 1e9, "write_gbps",
                                      fm.rates.write_bytes_per_s / 1e9, "copy_gbps", fm.rates.copy_bytes_per_s / 1e9));
    }
    json_object_set_new(model, "io_floor_ms", json_real(fm.io_floor_ms));
    json_object_set_new(model, "vendor_floor_ms", json_real(fm.vendor_floor_ms));
    json_object_set_new(model, "io_bytes", json_real(io));
    json_object_set_new(model, "io_bytes_written", json_real(written));
    json_object_set_new(model, "floor_ms", json_real(fm.floor_ms));
    if (io > 0 && fm.io_floor_ms > 0) verify_session_set_floor(c.vs, fm.floor_ms, io, start_ms);   /* gate 4 */
    json_object_set_new(model, "floor_method",
                        json_string("the larger of: the graph's own inputs read once and outputs written once, "
                                    "max(read / read rate, written / write rate, total / best rate), at the rates "
                                    "measured on this GPU (raised where a kernel of the module moving at least 4x the "
                                    "L2 reached more: floor_rate_from); and the library calls' and Inductor's GEMM templates' floors (flops at the "
                                    "measured matrix rate of their arithmetic: fp32, TF32 where torch allows it, "
                                    "bf16), each at most the call's measured time"));
    /* a floor that a measured module, kernel or library call beats is wrong: say so */
    floor_module_time mods[3] = {{"torch.compile default", comp_ms},
                                 {"max-autotune", json_number_value(json_object_get(bl, "max_autotune_ms"))}};
    json_t *fc = floor_check(launches, &fm, &measured, l2, mods, 2);
    if (!json_is_true(json_object_get(fc, "ok")))
        log_warn("floor check: %s", json_string_value(json_object_get(fc, "why")));
    json_object_set_new(model, "floor_check", fc);

    /* analyst */
    json_t *actx = json_pack("{s:O, s:f, s:f, s:o}", "launches", json_object_get(profile, "launches"), "model_ms", start_ms,
                             "model_floor_ms", fm.floor_ms, "count_wrong", floor_check_kernels_below(fc));
    rc = agent_act(c.ag[AGENT_ANALYST], actx, &an, e);
    json_decref(actx);
    if (rc) goto done;
    json_array_foreach(json_object_get(an, "all"), i, r) {
        agent_class cls = agent_class_parse(json_string_value(json_object_get(r, "class")));
        const json_t *row = json_array_get(json_object_get(profile, "launches"), (size_t)json_integer_value(json_object_get(r, "index")));
        if (cls == AGENT_CLASS_VENDOR) {
            krows_add_vendor(&c.rows, json_string_value(json_object_get(r, "kernel")),
                             json_number_value(json_object_get(r, "time_ms")), json_number_value(json_object_get(r, "share")));
            continue;
        }
        add_kernel_row(&c.rows, r, row, json_object_get(profile, "configs"));
    }
    /* a module without a Triton kernel (library calls, aten fallbacks): nothing to search, the
     * compiler's start module is the result (a kept baseline, exit 0), still measured and
     * reported like any other */
    const char *no_search = ntriton == 0 && !opt_has_vendor_region(c.a)
                                ? "torch.compile generated no Triton kernel: the compiled module is kept"
                                : NULL;

    /* the search, if the setup left time for it */
    c.t_search = opt_now();
    c.nops_search = ops_snapshot(w, c.ops_search);
    double setup_s = c.t_search - c.t0;
    json_t *budget = json_pack("{s:f, s:i, s:f}", "wall_s", opt_budget(&c), "candidates", opt_max_cands(&c), "setup_s", setup_s);
    json_object_set_new(doc, "budget", budget);
    if (no_search) {
        json_object_set_new(budget, "spent_before_search", json_false());
        json_object_set_new(budget, "note", json_string(no_search));
    } else if (setup_s >= opt_budget(&c)) {
        double suggest = 60 * ceil((setup_s + 60) / 60);
        char *why = kasprintf("budget spent before search: the setup (compile, capture, profile, baselines) took %.0f s of "
                              "the %.0f s budget; try --budget %.0fm",
                              setup_s, opt_budget(&c), suggest / 60);
        log_warn("%s", why);
        json_object_set_new(budget, "spent_before_search", json_true());
        json_object_set_new(budget, "note", json_string(why));
        json_object_set_new(budget, "suggested_s", json_real(suggest));
        mark_unsearched(&c.rows, "budget spent before search");
        free(why);
    } else {
        json_object_set_new(budget, "spent_before_search", json_false());
        const json_t *ranked = json_object_get(an, "ranked");
        /* regions first: runs of launches a region template replaces together */
        rc = opt_regions(&c, profile, (int)json_array_size(ranked), e);
        if (rc) goto done;
        json_array_foreach(ranked, i, r) {
            krow *kr = krows_find(&c.rows, json_string_value(json_object_get(r, "kernel")));
            if (opt_over_budget(&c)) {
                if (kr && kr->status != KROW_IN_REGION) krow_set(&kr->why, "budget exhausted before this kernel was searched");
                continue;
            }
            if (!kr || kr->status == KROW_IN_REGION) continue;
            krow_set(&kr->why, NULL);
            /* the launch's argument descriptions identify the kernel in the store */
            const json_t *prow = json_array_get(json_object_get(profile, "launches"), (size_t)json_integer_value(json_object_get(r, "index")));
            json_object_set(r, "args", json_object_get(prow, "args"));
            rc = opt_search_kernel(&c, r, kr, (int)(json_array_size(ranked) - i), e);
            if (rc) break;
        }
        if (rc) goto done;
    }

    /* choose, combine, write */
    c.t_final = opt_now();
    opt_progress(&c, "re-stitching the winners");
    kerr fe = {0};
    int frc = verify_session_finish(c.vs, &fe);
    if (frc && frc != KOPT_E_CANDIDATE) { *e = fe; rc = frc; goto done; }
    const json_t *replaced = json_object_get(vdoc, "replaced");
    json_object_set(doc, "outcome", json_object_get(vdoc, "outcome"));
    if (no_search) json_object_set_new(doc, "outcome", json_sprintf("baseline kept: %s", no_search));
    const char *final_mod = NULL;
    int finally_measured = 0;
    char *opt = fs_join(o->out_dir, "optimized_module.py");
    if (json_object_size(replaced) > 0) final_mod = opt;
    else if (o->max_autotune && json_object_get(bl, "max_autotune_ms")) final_mod = verify_session_module(c.vs);
    if (final_mod) {
        /* an independent final measurement: the output module against the compiled baselines */
        opt_progress(&c, "final measurement: optimized vs torch.compile default%s", json_object_get(bl, "max_autotune_ms") ? " and max-autotune" : "");
        json_t *g = json_object();
        /* measured as the gates judged it: from gate 1's cubins, where a winner has them */
        const char *judged = final_mod == opt ? verify_session_judged_output(c.vs) : NULL;
        int refused = 0;
        rc = verify_session_final(c.vs, judged ? judged : final_mod, g, &refused, e);
        if (!rc && !refused) take_final(model, g);
        if (!rc && final_mod == opt) json_object_set_new(model, "final_from_cubins", json_boolean(judged != NULL));
        int from_ma = verify_session_started_from_max_autotune(c.vs);
        const char *reason = json_string_value(json_object_get(g, "reason"));
        char *refusal = refused ? kasprintf("the final measurement refused the re-stitched module (%s): torch.compile's %s "
                                            "module is the output",
                                            reason ? reason : "no reason recorded", from_ma ? "max-autotune" : "default")
                                : NULL;
        json_decref(g);
        if (rc) { free(opt); goto done; }
        finally_measured = 1;
        /* never behind the compiler beyond noise: a compiler module the final measurement
         * found faster than the output (in GPU time or as called) becomes the output; so does
         * the module the search started from when the output failed its re-check there */
        int out_is = final_mod == opt ? 2 : from_ma;
        int pick = refusal ? from_ma : json_object_get(bl, "max_autotune_ms") ? final_repick(model, out_is) : -1;
        if (pick >= 0) {
            rc = adopt_compiled(&c, model, pick, refusal ? refusal : repick_why(model, pick, out_is), &repicked, e);
            if (rc) { free(opt); goto done; }
            replaced = json_object_get(vdoc, "replaced");   /* now empty: the old object is gone */
            json_object_set_new(doc, "outcome", json_sprintf("baseline kept: %s", repicked));
        }
    } else {
        json_t *one = json_pack("{s:f, s:f, s:f}", "estimate", 1.0, "ci95_lo", 1.0, "ci95_hi", 1.0);
        json_object_set_new(model, "baseline_ms", json_real(start_ms));
        json_object_set_new(model, "optimized_ms", json_real(start_ms));
        json_object_set(model, "speedup", one);
        json_object_set(model, "as_called_vs_default", one);
        json_object_set_new(model, "speedup_vs_default", one);
    }
    free(opt);
    if (finally_measured) {
        /* the output module is a module doing the model's work too */
        mods[2] = (floor_module_time){"kopt's module", json_number_value(json_object_get(model, "optimized_ms"))};
        json_object_set_new(model, "floor_check", floor_check(launches, &fm, &measured, l2, mods, 3));
    }
    json_object_set_new(model, "method", json_string("GPU time of the graph's module (baselines: Inductor's default and "
                                                     "max-autotune modules; optimized: re-stitched), interleaved rounds, L2 "
                                                     "flushed, stream stalled, outputs poisoned between runs; median and 95% "
                                                     "paired bootstrap interval. Eager/compiled/max-autotune medians of the "
                                                     "table come from the setup's interleaved run."));
    /* mark the optimized kernels by what verify chose */
    for (size_t j = 0; j < c.rows.n; j++) {
        krow *k = &c.rows.v[j];
        if (json_object_get(replaced, k->name)) {
            k->status = KROW_OPTIMIZED;
            /* the kernel's time after: its profiled time scaled by the kernel-level screen's
             * ratio (candidate median / original median, same interleaved measurement) */
            if (k->kernel_ms_before > 0 && k->kernel_ms_after > 0) k->after_ms = k->time_ms * k->kernel_ms_after / k->kernel_ms_before;
        } else if (k->status == KROW_OPTIMIZED) {
            k->status = KROW_KEPT;
            krow_set(&k->why, repicked ? repicked : "its winner was dropped when the combination of winners failed");
        }
    }
    json_t *gap = opt_floor_gap(model, &c.rows);
    if (gap) json_object_set_new(model, "floor_gap", gap);
    double used = opt_now() - c.t0;
    json_object_set_new(budget, "used_wall_s", json_real(used));
    json_object_set_new(budget, "used_candidates", json_integer(c.used));
    json_object_set_new(budget, "search_s", json_real(c.t_final - c.t_search));
    json_object_set_new(budget, "final_s", json_real(opt_now() - c.t_final));
    json_object_set_new(budget, "gpu_s", json_real(used));
    if (c.resource_errors) json_object_set_new(budget, "resource_errors", json_integer(c.resource_errors));
    if (c.compile_threads > 0) {
        json_object_set_new(budget, "screen_compile_s", json_real(c.screen_compile_s));
        json_object_set_new(budget, "compile_threads", json_integer(c.compile_threads));
    }
    if (c.reused) json_object_set_new(doc, "reused_verdicts", json_integer(c.reused));
    add_resources(&c, doc);
    mem_run_end(&c, json_object_get(doc, "model"));
    if (c.store) {
        json_t *usage = NULL;
        kerr se = {0};
        if (!store_llm_usage(c.store, c.run_id, &usage, &se)) json_object_set_new(doc, "llm", usage);
    }
    rc = frc;
    if (rc == KOPT_E_CANDIDATE) rc = 0;   /* the baseline kept is a result, not a failure */
done:
    write_rows(&c);   /* also when the run stopped early: the rows reached so far */
    krows_free(&c.rows);
    json_decref(an);
    json_decref(profile);
    free(repicked);
    for (int q = 0; q < AGENT_NROLES; q++) if (c.owned[q]) agent_free(c.ag[q]);
    verify_session_close(c.vs);
    free(c.sass_python);
    return rc;
}
