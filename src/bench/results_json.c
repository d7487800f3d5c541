/* results_json.c — results.json, schema kopt.bench/1 (docs/schema/bench.md; contract in
 * render.h). Not-measured figures are null. */
#include <math.h>

#include "bench/render.h"
#include "bench/stats.h"

static json_t *rj_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static json_t *rj_int(int64_t v) { return v >= 0 ? json_integer(v) : json_null(); }
/* A string, or null (also for text that is not UTF-8). */
static json_t *rj_str(const char *s) {
    json_t *j = s ? json_string(s) : NULL;
    return j ? j : json_null();
}
static json_t *rj_flag(int v) { return v < 0 ? json_null() : json_boolean(v); }

/* A speedup object, or null when there is no estimate. */
static json_t *rj_ci(bench_ci c) {
    if (!isfinite(c.est)) return json_null();
    return json_pack("{s:o, s:o, s:o}", "estimate", json_real(c.est), "ci95_lo", rj_num(c.lo), "ci95_hi", rj_num(c.hi));
}

/* An array of strings. */
static json_t *rj_strs(const char *const *v, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, rj_str(v[i]));
    return a;
}

/* One problem's entry of results.json. */
static json_t *rj_problem(const bench_record *r) {
    json_t *o = json_object();
    json_object_set_new(o, "problem", rj_str(r->rel));
    json_object_set_new(o, "level", json_integer(r->level));
    json_object_set_new(o, "level_name", rj_str(r->level_name));
    json_object_set_new(o, "sha256", rj_str(r->sha));
    json_object_set_new(o, "status", json_string(bench_status_name(r->status)));
    json_object_set_new(o, "correct", json_boolean(bench_correct(r)));
    json_object_set_new(o, "exit_code", r->exit_code >= 0 ? json_integer(r->exit_code) : json_null());
    json_object_set_new(o, "gpu", rj_str(r->gpu));
    json_object_set_new(o, "gpu_index", r->gpu_index >= 0 ? json_integer(r->gpu_index) : json_null());
    json_object_set_new(o, "owner", rj_str(r->owner));
    json_object_set_new(o, "started_at", rj_str(r->started_at));
    json_object_set_new(o, "ended_at", rj_str(r->ended_at));
    json_object_set_new(o, "wall_s", rj_num(r->wall_s));
    json_object_set_new(o, "within_budget", rj_flag(bench_record_within_budget(r)));
    json_object_set_new(o, "disk_bytes", rj_num(r->disk_bytes));
    json_object_set_new(o, "device", rj_str(r->device));
    json_object_set_new(o, "outcome", rj_str(r->outcome));
    json_object_set_new(o, "start", rj_str(bench_start_name(r->start)));
    json_object_set_new(o, "times_ms", json_pack("{s:o, s:o, s:o, s:o, s:o}", "eager", rj_num(r->eager_ms), "default",
                                                 rj_num(r->default_ms), "max_autotune", rj_num(r->max_autotune_ms),
                                                 "kopt", rj_num(r->kopt_ms), "floor", rj_num(r->floor_ms)));
    json_object_set_new(o, "speedup_vs_default", rj_ci(r->vs_default));
    json_object_set_new(o, "speedup_vs_max_autotune", rj_ci(r->vs_max_autotune));
    json_object_set_new(o, "as_called_vs_default", rj_ci(r->as_called_vs_default));
    json_object_set_new(o, "as_called_vs_max_autotune", rj_ci(r->as_called_vs_max_autotune));
    json_object_set_new(o, "floor_ratio", rj_num(bench_record_floor_ratio(r)));
    json_object_set_new(o, "spent_before_search", rj_flag(r->spent_before_search));
    json_object_set_new(o, "floor_check_ok", rj_flag(r->floor_ok));
    json_object_set_new(o, "floor_check_below", r->floor_below ? json_string(r->floor_below) : json_null());
    json_object_set_new(o, "floor_gap_reason", r->floor_gap ? json_string(r->floor_gap) : json_null());
    json_object_set_new(o, "gpu_time_s", json_pack("{s:o, s:o, s:o}", "setup", rj_num(r->setup_s), "search",
                                                   rj_num(r->search_s), "final", rj_num(r->final_s)));
    json_object_set_new(o, "candidates", rj_int(r->candidates));
    json_object_set_new(o, "gate_s", json_pack("{s:o, s:o, s:o, s:o}", "1", rj_num(r->gate_s[0]), "2", rj_num(r->gate_s[1]),
                                               "3", rj_num(r->gate_s[2]), "4", rj_num(r->gate_s[3])));
    json_object_set_new(o, "gated", rj_int(r->gated));
    json_object_set_new(o, "refused_by_gate",
                        r->refused[0] < 0 ? json_null()
                                          : json_pack("{s:I, s:I, s:I, s:I}", "1", (json_int_t)r->refused[0], "2",
                                                      (json_int_t)r->refused[1], "3", (json_int_t)r->refused[2], "4",
                                                      (json_int_t)r->refused[3]));
    json_object_set_new(o, "replaced", rj_str(r->replaced));
    json_object_set_new(o, "final_pick", rj_str(r->final_pick));
    json_object_set_new(o, "memory", json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "peak_gpu_bytes", rj_num(r->peak_gpu_bytes),
                                               "context_bytes", rj_num(r->context_bytes), "working_set_bytes",
                                               rj_num(r->working_set_bytes), "eager_peak_gpu_bytes",
                                               rj_num(r->eager_peak_gpu_bytes), "f64_peak_gpu_bytes",
                                               rj_num(r->f64_peak_gpu_bytes), "peak_to_working_set",
                                               rj_num(bench_record_peak_ratio(r))));
    json_t *mem = json_object_get(o, "memory");
    json_object_set_new(mem, "inputs_peak_gpu_bytes", rj_num(r->inputs_peak_gpu_bytes));
    json_object_set_new(mem, "largest_step", r->peak_step ? json_pack("{s:s, s:o}", "step", r->peak_step, "bytes",
                                                                      rj_num(r->peak_step_bytes))
                                                          : json_null());
    json_object_set_new(mem, "outside_allocator_growth", r->growth_step ? json_pack("{s:s, s:o}", "step", r->growth_step,
                                                                                    "bytes", rj_num(r->growth_bytes))
                                                                        : json_null());
    json_t *steps = json_null();   /* where the setup's time went: op -> seconds */
    if (r->setup_steps) {
        steps = json_object();
        for (size_t i = 0; i < r->nsetup_steps; i++)
            json_object_set_new(steps, r->setup_steps[i].op, json_real(r->setup_steps[i].s));
    }
    json_object_set_new(o, "setup_by_step", steps);
    json_object_set_new(o, "setup_outside_requests_s", rj_num(r->setup_outside_s));
    json_t *err = json_null();
    if (r->status == BENCH_FAILED || r->status == BENCH_TIMEOUT || r->error_kind || r->error_message)
        err = json_pack("{s:o, s:o}", "kind", rj_str(r->error_kind), "message", rj_str(r->error_message));
    json_object_set_new(o, "error", err);
    return o;
}

/* fast_p for the four p values, keyed "0", "1.0", "1.5", "2.0". */
static json_t *rj_fast(const double f[BENCH_NP]) {
    json_t *o = json_object();
    static const char *const keys[BENCH_NP] = {"0", "1.0", "1.5", "2.0"};
    for (int j = 0; j < BENCH_NP; j++) json_object_set_new(o, keys[j], rj_num(f[j]));
    return o;
}

/* One level's (or the overall) aggregates. */
static json_t *rj_group(const bench_group *g) {
    json_t *o = json_object();
    json_object_set_new(o, "level", g->level >= 0 ? json_integer(g->level) : json_null());
    json_object_set_new(o, "name", json_string(g->name));
    json_object_set_new(o, "problems", json_integer((json_int_t)g->n));
    json_object_set_new(o, "correct", json_integer((json_int_t)g->correct));
    json_object_set_new(o, "failed", json_integer((json_int_t)g->failed));
    json_object_set_new(o, "timeout", json_integer((json_int_t)g->timeouts));
    json_object_set_new(o, "running", json_integer((json_int_t)g->running));
    json_object_set_new(o, "not_run", json_integer((json_int_t)g->not_run));
    static const char *const GEOMEAN_KEY[BENCH_NBASE] = {"geomean_vs_default", "geomean_vs_max_autotune",
                                                         "geomean_as_called_vs_default",
                                                         "geomean_as_called_vs_max_autotune"};
    for (int k = 0; k < BENCH_NBASE; k++)
        json_object_set_new(o, GEOMEAN_KEY[k], json_pack("{s:o, s:I}", "value", rj_num(g->geomean[k]), "n",
                                                         (json_int_t)g->geomean_n[k]));
    json_object_set_new(o, "fast_p",
                        json_pack("{s:o, s:o, s:o, s:o}", "default", rj_fast(g->fast_p[BENCH_VS_DEFAULT]), "max_autotune",
                                  rj_fast(g->fast_p[BENCH_VS_MAX_AUTOTUNE]), "as_called_default",
                                  rj_fast(g->fast_p[BENCH_AS_CALLED_VS_DEFAULT]), "as_called_max_autotune",
                                  rj_fast(g->fast_p[BENCH_AS_CALLED_VS_MAX_AUTOTUNE])));
    json_object_set_new(o, "gpu_time_s", json_pack("{s:o, s:o, s:o}", "setup", rj_num(g->setup_s), "search",
                                                   rj_num(g->search_s), "final", rj_num(g->final_s)));
    json_object_set_new(o, "headroom", json_pack("{s:I, s:o, s:o, s:I, s:o}", "problems", (json_int_t)g->room_n,
                                                 "default_over_floor", rj_num(g->room_default), "kopt_over_floor",
                                                 rj_num(g->room_kopt), "max_autotune_problems",
                                                 (json_int_t)g->room_ma_n, "max_autotune_over_floor",
                                                 rj_num(g->room_ma)));
    json_object_set_new(o, "candidates", rj_int(g->candidates));
    json_object_set_new(o, "peak_gpu_bytes_max", rj_num(g->peak_gpu_max));
    json_object_set_new(o, "peak_to_working_set_max", rj_num(g->peak_ratio_max));
    json_object_set_new(o, "disk_bytes", json_pack("{s:o, s:o}", "mean", rj_num(g->disk_mean), "max", rj_num(g->disk_max)));
    json_object_set_new(o, "wall_s", json_pack("{s:o, s:o}", "mean", rj_num(g->wall_mean), "max", rj_num(g->wall_max)));
    json_object_set_new(o, "within_budget", json_pack("{s:I, s:I}", "count", (json_int_t)g->within_budget, "of",
                                                      (json_int_t)g->wall_n));
    return o;
}

json_t *bench_results_json(const bench_report *r) {
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("kopt.bench/1"));
    json_object_set_new(doc, "ok", json_true());
    json_object_set_new(doc, "suite", rj_str(r->suite));
    json_t *shard = r->shard_count ? json_pack("{s:i, s:i}", "index", (int)r->shard_index, "count", (int)r->shard_count)
                                   : json_null();
    json_t *cfg = json_pack("{s:o, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b}", "budget_s", json_real(r->budget_s),
                            "max_autotune", r->max_autotune, "timeout_factor", rj_num(r->timeout_factor), "grace_s",
                            rj_num(r->grace_s), "timeout_s", rj_num(r->timeout_s), "lanes",
                            r->lanes ? rj_strs(r->lanes, r->nlanes) : json_null(), "lanes_source",
                            rj_str(r->lanes_source), "shard", shard, "selection", rj_str(r->selection),
                            "report_only", r->report_only, "retry_failed", r->retry_failed);
    json_object_set_new(cfg, "store", rj_str(r->store_path));
    json_object_set_new(doc, "config", cfg);
    json_object_set_new(doc, "gpus", rj_strs(r->gpus, r->ngpus));
    json_object_set_new(doc, "suite_keys", rj_strs(r->keys, r->nkeys));
    json_object_set_new(doc, "started_at", rj_str(r->started_at));
    json_object_set_new(doc, "ended_at", rj_str(r->ended_at));
    json_object_set_new(doc, "wall_s", rj_num(r->wall_s));
    json_object_set_new(doc, "interrupted", json_boolean(r->interrupted != 0));
    const bench_group *a = &r->sum->all;
    json_object_set_new(doc, "counts", json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "problems", (json_int_t)a->n,
                                                 "done", (json_int_t)(a->n - a->failed - a->timeouts - a->running - a->not_run),
                                                 "failed", (json_int_t)a->failed, "timeout", (json_int_t)a->timeouts,
                                                 "running", (json_int_t)a->running, "not_run", (json_int_t)a->not_run));
    json_t *levels = json_array();
    for (size_t i = 0; i < r->sum->nlevels; i++) json_array_append_new(levels, rj_group(&r->sum->levels[i]));
    json_object_set_new(doc, "levels", levels);
    json_object_set_new(doc, "overall", rj_group(a));
    json_t *probs = json_array();
    for (size_t i = 0; i < r->n; i++) json_array_append_new(probs, rj_problem(&r->recs[i]));
    json_object_set_new(doc, "problems", probs);
    return doc;
}
