/* memory.c — the summarizer's memory: every attempt of `kopt optimize` goes to the SQLite store
 * (store/store.h), so an interrupted run resumes (candidates already judged are not run
 * again), a kernel already optimized for the same source, shapes and GPU is not searched again
 * (its stored winner goes straight to the gates), and verdicts are shared across runs.
 * A store failure never stops a search: it is logged once and the run goes on without memory. */
#include <stdlib.h>
#include <string.h>

#include "optimize/optimize_int.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"
#include "util/owner.h"

void mem_warn(octx *c, const kerr *e) {
    log_warn("store: %s; continuing without it", e->msg);
    c->store = NULL;
}

void mem_attempt(octx *c, const char *direction, const opt_cand *cand, store_verdict outcome, int gate,
                 const char *reason, double kernel_ms, double orig_ms, double speedup, const char *experience,
                 const char *tags) {
    if (!c->store || !c->kernel_id || !cand->source) return;
    kerr e = {0};
    char *plan = cand->config ? json_dumps(cand->config, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    store_attempt a = {.run_id = c->run_id, .kernel_id = c->kernel_id, .plan_json = plan, .direction = direction,
                       .label = cand->label, .candidate_text = cand->source,
                       .agent = c->ag[AGENT_EXECUTOR]->name};
    int64_t id = 0;
    int rc = store_attempt_add(c->store, &a, &id, &e);
    free(plan);
    if (rc) { mem_warn(c, &e); return; }
    store_result r = {.outcome = outcome, .refused_gate = gate, .reason = reason, .speedup = speedup,
                      .kernel_ms = kernel_ms, .base_ms = orig_ms};
    if (store_attempt_result(c->store, id, &r, &e)) { mem_warn(c, &e); return; }
    store_experience x = {.run_id = c->run_id, .kernel_id = c->kernel_id, .attempt_id = id, .text = experience,
                          .tags_json = tags};
    if (experience && store_experience_add(c->store, &x, NULL, &e)) mem_warn(c, &e);
}

int mem_seen(octx *c, const char *text, store_seen *seen) {
    if (!c->store || !c->kernel_id || !text) return 0;
    char sha[STORE_SHA_HEX];
    store_sha256_hex(text, strlen(text), sha);
    kerr e = {0};
    if (store_attempt_seen(c->store, c->kernel_id, sha, seen, &e)) { mem_warn(c, &e); return 0; }
    return seen->seen;
}

int mem_kernel(octx *c, int k, const json_t *args, char **stored, char **label, char **direction) {
    *stored = *label = *direction = NULL;
    c->kernel_id = 0;
    if (!c->store) return 0;
    const art_kernel *K = &c->a->kernels[k];
    char *shapes = json_dumps(args ? args : json_null(), JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    char key[STORE_SHA_HEX], ssha[STORE_SHA_HEX];
    kerr e = {0};
    store_sha256_hex(K->source, strlen(K->source), ssha);
    store_kernel sk = {.name = K->name, .kind = art_kernel_kind_name(K->kind), .source_sha = ssha, .shapes_json = shapes,
                       .gpu = c->gpu, .source = K->source};
    int rc = store_kernel_key(K->source, shapes, c->gpu, key, &e);
    sk.kernel_key = key;
    if (!rc) rc = store_kernel_upsert(c->store, &sk, &c->kernel_id, &e);
    free(shapes);
    if (rc) { mem_warn(c, &e); return 0; }
    store_best best = {0};
    if (store_best_for_kernel(c->store, key, &best, &e)) { mem_warn(c, &e); return 0; }
    int found = best.found;
    if (found) {
        *stored = kstrdup(best.candidate_text);
        *label = kasprintf("%s (stored winner, %.3fx)", best.label ? best.label : "candidate", best.speedup);
        *direction = kstrdup(best.direction ? best.direction : "?");
    }
    store_best_clear(&best);
    return found;
}

void mem_run_begin(octx *c, const char *problem, const json_t *device) {
    if (!c->store) return;
    char *text = NULL;
    size_t len = 0;
    kerr e = {0};
    if (fs_read(problem, &text, &len, &e)) { mem_warn(c, &e); return; }
    char sha[STORE_SHA_HEX];
    store_sha256_hex(text, len, sha);
    free(text);
    /* another kopt still at work on this problem keeps its run; a dead one's is resumed (runs of
     * other hosts count as dead after an hour) */
    owner_liveness live;
    owner_liveness_init(&live, "optimize", 3600);
    int rc = store_run_find_unfinished(c->store, sha, c->gpu, owner_alive, &live, &c->run_id, &e);
    owner_liveness_clear(&live);
    if (rc) { mem_warn(c, &e); return; }
    if (c->run_id && store_run_take(c->store, c->run_id, &e)) { mem_warn(c, &e); return; }
    if (c->run_id) {
        log_info("store: resuming the interrupted run %lld", (long long)c->run_id);
        json_object_set_new(c->doc, "resumed_run", json_integer(c->run_id));
    } else {
        store_run r = {.problem_path = problem, .problem_sha = sha, .gpu = c->gpu,
                       .torch_version = json_string_value(json_object_get(device, "torch"))};
        if (store_run_begin(c->store, &r, &c->run_id, &e)) { mem_warn(c, &e); return; }
    }
    json_object_set_new(c->doc, "store", json_pack("{s:s, s:I}", "path", store_path(c->store), "run_id", (json_int_t)c->run_id));
}

void mem_run_end(octx *c, const json_t *summary) {
    if (!c->store) return;
    kerr e = {0};
    char *s = json_dumps(summary, JSON_COMPACT | JSON_ENCODE_ANY);
    if (store_run_end(c->store, c->run_id, "done", s, &e)) mem_warn(c, &e);
    free(s);
}
