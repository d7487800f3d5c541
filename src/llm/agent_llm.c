/* agent_llm.c — LLM-backed planner, executor and summarizer (see agent_llm.h). */
#include "llm/agent_llm.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llm/extract.h"
#include "llm/prompt.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

#define AL_JSON_REPAIRS 2          /* planner/summarizer: unusable answers sent back */
#define AL_REASON_MAX 6000         /* gate reasons longer than this keep their head and tail */
#define AL_HISTORY_MAX 20

typedef struct al_turn {
    llm_role role;
    char *text;
} al_turn;

typedef struct al_impl {
    llm_client *client;          /* borrowed */
    char *system, *task, *contract;
    char *fb_static, *fb_correct, *fb_slow, *fb_malformed, *repair;
    int max_retries;
    /* the conversation (executor: per task; others: per act) */
    al_turn *turns;
    size_t nturns, cap;
    json_t *task_key;            /* {"kernel": name, "plan": plan} */
    char *direction;             /* of the task's plan, for labels and hints */
    int answers;                 /* answers received for the task */
    int pending;                 /* the last turn is a user turn awaiting an answer */
    char *last_failure;
    int seq;
    llm_usage usage;
    llm_call_observer observer;
    void *observer_ctx;
} al_impl;

static const agent_vtable AL_VT;

/* ------------------------------------------------------------------ conversation */

/* Append a turn (takes ownership of text); consecutive user turns are merged. */
static void al_push(al_impl *m, llm_role role, char *text) {
    if (role == LLM_USER && m->nturns && m->turns[m->nturns - 1].role == LLM_USER) {
        al_turn *t = &m->turns[m->nturns - 1];
        char *joined = kasprintf("%s\n\n%s", t->text, text);
        free(t->text);
        free(text);
        t->text = joined;
        return;
    }
    if (m->nturns == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 8;
        m->turns = krealloc(m->turns, m->cap * sizeof *m->turns);
    }
    m->turns[m->nturns].role = role;
    m->turns[m->nturns].text = text;
    m->nturns++;
}

static void al_reset(al_impl *m) {
    for (size_t i = 0; i < m->nturns; i++) free(m->turns[i].text);
    m->nturns = 0;
    json_decref(m->task_key);
    m->task_key = NULL;
    free(m->direction);
    m->direction = NULL;
    free(m->last_failure);
    m->last_failure = NULL;
    m->answers = 0;
    m->pending = 0;
}

/* One call with the whole conversation; accounts into the agent's totals and *act. */
static int al_chat(agent *a, llm_usage *act, llm_reply *r, kerr *e) {
    al_impl *m = a->impl;
    llm_message *msgs = kcalloc(m->nturns ? m->nturns : 1, sizeof *msgs);
    for (size_t i = 0; i < m->nturns; i++) {
        msgs[i].role = m->turns[i].role;
        msgs[i].content = m->turns[i].text;
    }
    if (log_level() >= LOG_DEBUG && m->nturns)
        log_debug("llm %s (%s): turn %zu:\n%s", agent_role_name(a->role), a->name, m->nturns,
                  m->turns[m->nturns - 1].text);
    int rc = llm_chat(m->client, msgs, m->nturns, m->system, r, e);
    free(msgs);
    llm_usage_add(&m->usage, r, rc != 0);
    llm_usage_add(act, r, rc != 0);
    if (m->observer) {
        const llm_config *cfg = llm_client_config(m->client);
        llm_call_info ci = {.role = a->role, .backend = llm_backend_name(cfg->backend), .model = cfg->model,
                            .tokens_in = r->tokens_in, .tokens_out = r->tokens_out, .latency_s = r->latency_s,
                            .cost_usd = llm_config_has_price(cfg) ? r->cost_usd : NAN, .requests = r->attempts,
                            .ok = rc == 0, .error = rc ? e->msg : NULL};
        m->observer(&ci, m->observer_ctx);
    }
    if (rc) kerr_wrap(e, "%s %s", agent_role_name(a->role), a->name);
    else
        log_info("llm %s: %ld tokens in, %ld out, %.1f s%s", agent_role_name(a->role), r->tokens_in,
                 r->tokens_out, r->latency_s, r->truncated ? " (hit the token limit)" : "");
    return rc;
}

static json_t *al_usage_json(const agent *a, const llm_usage *u) {
    const al_impl *m = a->impl;
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:f, s:o}", "model", a->name, "calls", (json_int_t)u->calls,
                     "requests", (json_int_t)u->requests, "tokens_in", (json_int_t)u->tokens_in, "tokens_out",
                     (json_int_t)u->tokens_out, "latency_s", u->latency_s, "cost_usd",
                     llm_config_has_price(llm_client_config(m->client)) ? json_real(u->cost_usd) : json_null());
}

/* ------------------------------------------------------------------ template variables */

static const char *al_str(const json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }

static char *al_signature_text(const json_t *kernel) {
    const json_t *sig = json_object_get(kernel, "signature");
    if (!json_is_array(sig) || !json_array_size(sig)) return NULL;
    kbuf b = KBUF_INIT;
    size_t i;
    json_t *p;
    json_array_foreach(sig, i, p) {
        const char *name = al_str(p, "name"), *role = al_str(p, "role"), *type = al_str(p, "type");
        kbuf_printf(&b, "%s%s (%s, %s)", i ? "; " : "", name ? name : "?", role ? role : "?", type ? type : "?");
    }
    return kbuf_steal(&b);
}

/* The `"params": [...]` line a form-P plan for the kernel must have. */
static char *al_plan_params(const json_t *kernel) {
    kvec names = {0};
    const json_t *rp = json_object_get(kernel, "runtime_params");
    const json_t *sig = json_object_get(kernel, "signature");
    size_t i;
    json_t *p;
    if (json_is_array(rp) && json_array_size(rp)) {
        json_array_foreach(rp, i, p) if (json_is_string(p)) kvec_push(&names, (void *)json_string_value(p));
    } else if (json_is_array(sig)) {
        json_array_foreach(sig, i, p) {
            const char *role = al_str(p, "role"), *name = al_str(p, "name");
            if (name && !(role && !strcmp(role, "constexpr"))) kvec_push(&names, (void *)name);
        }
    }
    kbuf b = KBUF_INIT;
    kbuf_puts(&b, "\"params\": [");
    if (!names.len) kbuf_puts(&b, "<the kernel's runtime parameters, in order>");
    for (size_t k = 0; k < names.len; k++) kbuf_printf(&b, "%s\"%s\"", k ? ", " : "", (const char *)names.items[k]);
    kbuf_puts(&b, "],");
    kvec_free(&names);
    return kbuf_steal(&b);
}

static char *al_number_text(const json_t *v) {
    if (json_is_number(v)) return kasprintf("%.3fx", json_number_value(v));
    if (json_is_object(v)) {
        const json_t *est = json_object_get(v, "estimate");
        const json_t *lo = json_object_get(v, "ci95_lo"), *hi = json_object_get(v, "ci95_hi");
        if (json_is_number(est) && json_is_number(lo) && json_is_number(hi))
            return kasprintf("%.3fx (95%% CI [%.3f, %.3f])", json_number_value(est), json_number_value(lo),
                             json_number_value(hi));
        if (json_is_number(est)) return kasprintf("%.3fx", json_number_value(est));
    }
    return NULL;
}

static char *al_history_text(const json_t *hist) {
    if (!json_is_array(hist) || !json_array_size(hist)) return kstrdup("(no earlier attempts)");
    kbuf b = KBUF_INIT;
    size_t n = json_array_size(hist), first = n > AL_HISTORY_MAX ? n - AL_HISTORY_MAX : 0;
    if (first) kbuf_printf(&b, "(%zu older attempts not shown)\n", first);
    for (size_t i = first; i < n; i++) {
        const json_t *h = json_array_get(hist, i);
        const json_t *plan = json_object_get(h, "plan");
        const char *dir = al_str(plan, "direction");
        if (!dir) dir = al_str(h, "direction");
        const json_t *pj = json_object_get(plan, "params");
        if (!pj) pj = json_object_get(h, "config");
        char *params = pj ? json_dumps(pj, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
        const char *outcome = al_str(h, "outcome");
        kbuf_printf(&b, "%zu. %s %s: %s", i - first + 1, dir ? dir : "attempt", params ? params : "{}",
                    outcome ? outcome : "unknown outcome");
        free(params);
        const json_t *gate = json_object_get(h, "gate");
        if (json_is_integer(gate) && outcome && agent_outcome_parse(outcome) != AGENT_OUT_ACCEPTED)
            kbuf_printf(&b, " at gate %lld", (long long)json_integer_value(gate));
        const json_t *kms = json_object_get(h, "kernel_ms");
        if (json_is_number(kms)) kbuf_printf(&b, ", kernel %.4g ms", json_number_value(kms));
        char *sp = al_number_text(json_object_get(h, "speedup"));
        if (sp) kbuf_printf(&b, ", speedup %s", sp);
        free(sp);
        const char *reason = al_str(h, "reason");
        if (reason && *reason) kbuf_printf(&b, " — %.400s", reason);
        const char *exp = al_str(h, "experience");
        if (exp && *exp) kbuf_printf(&b, " (lesson: %.300s)", exp);
        kbuf_putc(&b, '\n');
    }
    return kbuf_steal(&b);
}

static void al_set_str(json_t *o, const char *k, char *owned) {
    json_object_set_new(o, k, json_string(owned ? owned : "(not given)"));
    free(owned);
}

/* The context plus derived values (new reference). */
static json_t *al_vars(const agent *a, const json_t *ctx) {
    al_impl *m = a->impl;
    json_t *v = json_is_object(ctx) ? json_deep_copy(ctx) : json_object();
    const json_t *kernel = json_object_get(ctx, "kernel");
    json_object_set_new(v, "role", json_string(agent_role_name(a->role)));
    json_object_set_new(v, "contract", json_string(m->contract));
    al_set_str(v, "signature", al_signature_text(kernel));
    al_set_str(v, "plan_params", al_plan_params(kernel));
    const char *src = al_str(kernel, "source");
    if (!src) src = al_str(kernel, "jit_source");
    json_object_set_new(v, "kernel_source", json_string(src ? src : "(source not given)"));
    al_set_str(v, "history", al_history_text(json_object_get(ctx, "history")));
    if (!json_object_get(ctx, "vendor_calls"))
        json_object_set_new(v, "vendor_calls", json_string("fixed: never targets"));
    json_int_t left = json_integer_value(json_object_get(json_object_get(ctx, "budget"), "candidates_left"));
    json_object_set_new(v, "max_plans", json_integer(left > 0 ? (left < 8 ? left : 8) : 3));
    return v;
}

/* ------------------------------------------------------------------ planner / summarizer */

/* Check and normalise an answer; NULL and *why (malloc'd) when unusable. */
static json_t *al_check_plans(const json_t *obj, const json_t *ctx, char **why) {
    const json_t *plans = json_object_get(obj, "plans");
    if (!json_is_array(plans)) {
        *why = kstrdup("the JSON object has no \"plans\" array");
        return NULL;
    }
    if (json_array_size(plans) == 0)   /* an explicit empty list: nothing more worth trying */
        return json_pack("{s:[], s:s}", "plans", "why", "the planner proposes nothing more for this kernel");
    json_int_t left = json_integer_value(json_object_get(json_object_get(ctx, "budget"), "candidates_left"));
    json_t *out = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(plans, i, p) {
        const char *dir = al_str(p, "direction");
        if (!dir || !*dir) continue;
        const json_t *params = json_object_get(p, "params");
        const char *why_s = al_str(p, "rationale");
        json_array_append_new(out, json_pack("{s:s, s:o, s:s}", "direction", dir, "params",
                                             json_is_object(params) ? json_deep_copy(params) : json_object(),
                                             "rationale", why_s ? why_s : ""));
        if (left > 0 && (json_int_t)json_array_size(out) >= left) break;
    }
    if (!json_array_size(out)) {
        json_decref(out);
        *why = kstrdup("no plan in \"plans\" has a non-empty \"direction\" string");
        return NULL;
    }
    return json_pack("{s:o}", "plans", out);
}

static json_t *al_check_summary(const json_t *obj, char **why) {
    const char *exp = al_str(obj, "experience");
    if (!exp || !*exp) {
        *why = kstrdup("the JSON object has no non-empty \"experience\" string");
        return NULL;
    }
    json_t *tags = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(obj, "tags"), i, t) if (json_is_string(t)) json_array_append(tags, t);
    return json_pack("{s:s, s:o}", "experience", exp, "tags", tags);
}

static int al_act_json(agent *a, const json_t *ctx, json_t **out, kerr *e) {
    al_impl *m = a->impl;
    al_reset(m);
    json_t *vars = al_vars(a, ctx);
    al_push(m, LLM_USER, llm_prompt_render(m->task, vars));
    json_decref(vars);
    llm_usage act = {0};
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        llm_reply r;
        rc = al_chat(a, &act, &r, e);
        if (rc) break;
        kerr xe = {0};
        json_t *obj = NULL, *ans = NULL;
        char *why = NULL;
        if (llm_extract_json(r.text, strlen(r.text), &obj, &xe)) {
            why = kstrdup(xe.msg);
        } else {
            ans = a->role == AGENT_PLANNER ? al_check_plans(obj, ctx, &why) : al_check_summary(obj, &why);
            json_decref(obj);
        }
        al_push(m, LLM_ASSISTANT, r.text);
        r.text = NULL;
        llm_reply_free(&r);
        if (ans) {
            json_object_set_new(ans, "_llm", al_usage_json(a, &act));
            *out = ans;
            break;
        }
        if (attempt >= AL_JSON_REPAIRS) {
            rc = kerr_set(e, KOPT_E_LLM, "%s %s: the answer could not be used after %d tries: %s",
                          agent_role_name(a->role), a->name, attempt + 1, why);
            free(why);
            break;
        }
        log_info("llm %s: unusable answer (%s); asking again", agent_role_name(a->role), why);
        json_t *fv = json_pack("{s:s}", "reason", why);
        al_push(m, LLM_USER, llm_prompt_render(m->repair, fv));
        json_decref(fv);
        free(why);
    }
    al_reset(m);
    return rc;
}

/* ------------------------------------------------------------------ executor */

static char *al_label_part(const char *dir) {
    kbuf b = KBUF_INIT;
    for (const char *p = dir ? dir : "plan"; *p && b.len < 32; p++) {
        char c = (char)tolower((unsigned char)*p);
        kbuf_putc(&b, isalnum((unsigned char)c) ? c : '_');
    }
    if (!b.len) kbuf_puts(&b, "plan");
    return kbuf_steal(&b);
}

static int al_act_executor(agent *a, const json_t *ctx, json_t **out, kerr *e) {
    al_impl *m = a->impl;
    const json_t *plan = json_object_get(ctx, "plan");
    const char *kname = al_str(json_object_get(ctx, "kernel"), "name");
    json_t *key = json_pack("{s:s, s:O}", "kernel", kname ? kname : "", "plan", plan ? plan : json_null());
    int same = m->task_key && json_equal(key, m->task_key);
    if (!(m->pending && same)) {
        al_reset(m);
        m->task_key = key;
        m->direction = al_label_part(al_str(plan, "direction"));
        json_t *vars = al_vars(a, ctx);
        al_push(m, LLM_USER, llm_prompt_render(m->task, vars));
        json_decref(vars);
    } else {
        json_decref(key);
        if (m->answers > m->max_retries) {
            int rc = kerr_set(e, KOPT_E_LLM, "executor %s: no accepted candidate after %d retr%s (last failure: %s)",
                              a->name, m->max_retries, m->max_retries == 1 ? "y" : "ies",
                              m->last_failure ? m->last_failure : "unknown");
            al_reset(m);
            return rc;
        }
    }
    llm_usage act = {0};
    llm_reply r;
    int rc = al_chat(a, &act, &r, e);
    if (rc) return rc;   /* conversation kept: the same turn is sent again on the next act */
    m->answers++;
    m->pending = 0;
    char *code = NULL;
    kerr xe = {0};
    int xrc = llm_extract_code(r.text, strlen(r.text), &code, &xe);
    if (xrc && r.truncated)
        kerr_wrap(&xe, "the answer hit the output token limit");
    al_push(m, LLM_ASSISTANT, r.text);
    r.text = NULL;
    llm_reply_free(&r);
    json_t *ans;
    if (!xrc) {
        char *label = kasprintf("llm-%s-%d", m->direction, ++m->seq);
        ans = json_pack("{s:[{s:s, s:s}]}", "candidates", "label", label, "source", code);
        free(label);
        free(code);
    } else {
        log_info("llm executor: unusable answer (%s)", xe.msg);
        free(m->last_failure);
        m->last_failure = kstrdup(xe.msg);
        json_t *fv = json_pack("{s:s}", "reason", xe.msg);
        al_push(m, LLM_USER, llm_prompt_render(m->fb_malformed, fv));
        json_decref(fv);
        m->pending = 1;
        ans = json_pack("{s:[], s:s, s:b}", "candidates", "error", xe.msg, "retry", m->answers <= m->max_retries);
    }
    json_object_set_new(ans, "_llm", al_usage_json(a, &act));
    *out = ans;
    return 0;
}

/* A long reason keeps its head and its tail (compiler errors end with the useful line). */
static char *al_bound(const char *s) {
    size_t n = strlen(s);
    if (n <= AL_REASON_MAX) return kstrdup(s);
    size_t h = AL_REASON_MAX / 2;
    return kasprintf("%.*s\n[... %zu characters cut ...]\n%s", (int)h, s, n - 2 * h, s + n - h);
}

static const char *al_hint(const char *dir) {
    if (dir && !strcmp(dir, "launch_config"))
        return "a clearly different configuration (block size x2 or /2, num_warps 4/8/16, num_stages 1-4, "
               "one row per program vs several), or a structural change such as reading the data once "
               "(one_pass) or splitting a long reduction (split) if configurations look exhausted";
    if (dir && !strcmp(dir, "one_pass"))
        return "keeping the single pass but with a block that holds a whole row in registers when it fits, "
               "fewer warps for short rows, and loads that are contiguous and unmasked where possible";
    if (dir && !strcmp(dir, "split"))
        return "a different split factor (enough programs to fill every SM, but few partial results), "
               "a cheaper combine step, or launching the combine with one program per output";
    if (dir && !strcmp(dir, "persistent"))
        return "a grid of exactly the number of SMs (or 2x), larger tiles per iteration, and fewer "
               "per-iteration index computations";
    return "the change that removes the most memory traffic or launch overhead: fewer passes over the "
           "data, wider contiguous loads, fewer kernels, a better block size and num_warps for these sizes";
}

static int al_feedback(agent *a, const json_t *fb, kerr *e) {
    al_impl *m = a->impl;
    if (a->role != AGENT_EXECUTOR || !m->nturns || !m->task_key) return 0;   /* nothing to retry */
    if (agent_outcome_parse(al_str(fb, "outcome")) == AGENT_OUT_ACCEPTED || json_is_true(json_object_get(fb, "accepted"))) {
        al_reset(m);
        return 0;
    }
    int gate = (int)json_integer_value(json_object_get(fb, "gate"));
    const char *reason = al_str(fb, "reason");
    char *bounded = al_bound(reason && *reason ? reason : "(no reason given)");
    const json_t *figures = json_object_get(fb, "figures");
    char *speed = al_number_text(json_object_get(fb, "speedup"));
    if (!speed) speed = al_number_text(json_object_get(figures, "speedup"));
    const char *cand = al_str(fb, "candidate");
    json_t *vars = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s}", "candidate", cand ? cand : "(last)", "gate", gate,
                             "gate_name", gate == 2 ? "isolation test against the original kernel"
                                          : gate == 3 ? "whole-model check" : "static checks",
                             "reason", bounded, "speedup", speed ? speed : "(not measured)", "hint",
                             al_hint(m->direction));
    json_object_set_new(vars, "figures", json_is_object(figures) && json_object_size(figures)
                                             ? json_deep_copy(figures) : json_string("(none)"));
    const char *tmpl = gate == 4 ? m->fb_slow : (gate == 2 || gate == 3) ? m->fb_correct : m->fb_static;
    al_push(m, LLM_USER, llm_prompt_render(tmpl, vars));
    json_decref(vars);
    free(m->last_failure);
    m->last_failure = kasprintf("gate %d: %.300s", gate, bounded);
    free(bounded);
    free(speed);
    m->pending = 1;
    (void)e;
    return 0;
}

/* ------------------------------------------------------------------ vtable */

static int al_act(agent *a, const json_t *ctx, json_t **out, kerr *e) {
    *out = NULL;
    if (a->role == AGENT_EXECUTOR) return al_act_executor(a, ctx, out, e);
    return al_act_json(a, ctx, out, e);
}

static void al_destroy(agent *a) {
    al_impl *m = a->impl;
    if (!m) return;
    al_reset(m);
    free(m->turns);
    free(m->system);
    free(m->task);
    free(m->contract);
    free(m->fb_static);
    free(m->fb_correct);
    free(m->fb_slow);
    free(m->fb_malformed);
    free(m->repair);
    free(m);
    a->impl = NULL;
}

static const agent_vtable AL_VT = {al_act, al_feedback, al_destroy};

int agent_is_llm(const agent *a) { return a && a->vt == &AL_VT; }

int agent_llm_usage(const agent *a, llm_usage *out) {
    memset(out, 0, sizeof *out);
    if (!agent_is_llm(a)) return KOPT_E_INTERNAL;
    *out = ((const al_impl *)a->impl)->usage;
    return 0;
}

void agent_llm_set_observer(agent *a, llm_call_observer cb, void *ctx) {
    if (!agent_is_llm(a)) return;
    al_impl *m = a->impl;
    m->observer = cb;
    m->observer_ctx = ctx;
}

void agent_llm_set_max_retries(agent *a, int k) {
    if (agent_is_llm(a)) ((al_impl *)a->impl)->max_retries = k < 0 ? 0 : k;
}

agent *agent_llm_create(agent_role role, llm_client *client, const char *prompts_dir, kerr *e) {
    if (role != AGENT_PLANNER && role != AGENT_EXECUTOR && role != AGENT_SUMMARIZER) {
        kerr_set(e, KOPT_E_USAGE, "the %s role is measurement-driven and has no LLM version "
                 "(LLM roles: planner, executor, summarizer)", agent_role_name(role));
        return NULL;
    }
    if (!client) {
        kerr_set(e, KOPT_E_USAGE, "an LLM %s needs a configured client (--llm)", agent_role_name(role));
        return NULL;
    }
    char *dir = NULL;
    if (prompts_dir) {
        dir = kstrdup(prompts_dir);
    } else {
        char *root = fs_kopt_root();
        dir = fs_join(root, "prompts/v1");
        free(root);
    }
    al_impl *m = kcalloc(1, sizeof *m);
    m->client = client;
    m->max_retries = 4;
    agent *a = kcalloc(1, sizeof *a);
    a->role = role;
    a->name = kstrdup(llm_client_name(client));
    a->vt = &AL_VT;
    a->impl = m;
    char *system_tmpl = NULL;
    int rc = llm_prompt_load(dir, "system", &system_tmpl, e);
    if (!rc) rc = llm_prompt_load(dir, agent_role_name(role), &m->task, e);
    if (!rc) rc = llm_prompt_load(dir, "contract", &m->contract, e);
    if (!rc) rc = llm_prompt_load(dir, "repair_json", &m->repair, e);
    if (!rc && role == AGENT_EXECUTOR) {
        rc = llm_prompt_load(dir, "feedback_static", &m->fb_static, e);
        if (!rc) rc = llm_prompt_load(dir, "feedback_correctness", &m->fb_correct, e);
        if (!rc) rc = llm_prompt_load(dir, "feedback_slow", &m->fb_slow, e);
        if (!rc) rc = llm_prompt_load(dir, "feedback_malformed", &m->fb_malformed, e);
    }
    free(dir);
    if (rc) {
        free(system_tmpl);
        agent_free(a);
        return NULL;
    }
    json_t *sv = json_pack("{s:s}", "role", agent_role_name(role));
    m->system = llm_prompt_render(system_tmpl, sv);
    json_decref(sv);
    free(system_tmpl);
    return a;
}
