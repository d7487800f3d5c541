/* agent_llm.h — LLM-backed planner, executor and summarizer behind the agent interface
 * (agents/agent.h). The profiler and analyst are measurement-driven and stay built-in.
 *
 * Prompts: versioned files in prompts_dir (NULL: <kopt root>/prompts/v1): system.md,
 * planner.md, executor.md, summarizer.md, contract.md, feedback_static.md,
 * feedback_correctness.md, feedback_slow.md, feedback_malformed.md, repair_json.md, all read
 * at creation (a missing file is an error then, not mid-run). {{placeholders}} are filled from
 * the role's context (agent.h) plus derived values: {{contract}}, {{signature}} (one line per
 * parameter), {{plan_params}} (the line `"params": ["in_ptr0", ...],` a form-P plan must have), {{history}}
 * (a readable list of earlier attempts), {{max_plans}}, {{role}}.
 *
 * Planner / summarizer: one call; the answer's JSON object is extracted and checked (plans need
 * a "direction"; the experience must be a non-empty string). An unusable answer is sent back
 * ("your answer could not be used: <why>") up to 2 times, then act fails with KOPT_E_LLM.
 * The planner keeps at most budget.candidates_left plans (when given).
 *
 * Executor: keeps a conversation per task (kernel name + plan). act on a new task starts it;
 * the answer's ```python block becomes {"candidates":[{"label","source"}]}, the label being
 * "llm-<direction>-<n>". agent_feedback(fb) then appends a user turn with the exact gate
 * failure (compiler error / correctness figures verbatim; gate 4 gets "correct but not faster:
 * <reason>; try <direction-specific hint>") and the next act on the same task returns the
 * retry. An answer that cannot be used (no code block, truncated fence) is a failed attempt:
 * act returns 0 with {"candidates":[], "error":"<why>", "retry":true|false} and queues the
 * reason as the next user turn itself, so the caller just calls act again. After
 * max_retries retries (default 4) a further act fails with KOPT_E_LLM. Endpoint failures
 * (unreachable, bad key, unknown model) are act failures with KOPT_E_LLM; the conversation is
 * kept, so act may be called again.
 *
 * Every answer carries "_llm": {"model","calls","requests","tokens_in","tokens_out",
 * "latency_s","cost_usd" (null when no price is configured)} for that act; the running totals
 * per agent are read with agent_llm_usage; agent_llm_set_observer reports each call as it
 * happens (for store_llm_call_add).
 *
 * Ownership: the client is borrowed and must outlive the agent; it may be shared by several
 * agents and threads (one agent is used by one thread at a time). The agent is released with
 * agent_free.
 */
#ifndef KOPT_AGENT_LLM_H
#define KOPT_AGENT_LLM_H

#include "agents/agent.h"
#include "llm/client.h"
#include "util/err.h"

/* NULL on failure (e filled): profiler/analyst (KOPT_E_USAGE), missing prompts (KOPT_E_NOFILE). */
agent *agent_llm_create(agent_role role, llm_client *client, const char *prompts_dir, kerr *e);

/* 1 when a is an LLM agent. */
int agent_is_llm(const agent *a);

/* Running totals of this agent's calls; 0, or KOPT_E_INTERNAL (out zeroed) if a is not an LLM
 * agent. */
int agent_llm_usage(const agent *a, llm_usage *out);

/* One model call, as the store records it (store_llm_call). Strings are borrowed for the
 * duration of the callback; error is NULL when ok and never holds a key. */
typedef struct llm_call_info {
    agent_role role;
    const char *backend;      /* "openai" | "anthropic" */
    const char *model;
    long tokens_in, tokens_out;
    double latency_s;         /* the whole call, retries included */
    double cost_usd;          /* NAN when no price is configured */
    int requests;             /* HTTP requests made */
    int ok;
    const char *error;
} llm_call_info;

typedef void (*llm_call_observer)(const llm_call_info *call, void *ctx);

/* Called after every model call of this agent (e.g. to write store_llm_call rows). */
void agent_llm_set_observer(agent *a, llm_call_observer cb, void *ctx);

/* Retries per executor task (K, default 4; 0 = no retry). Ignored by other roles. */
void agent_llm_set_max_retries(agent *a, int k);

#endif
