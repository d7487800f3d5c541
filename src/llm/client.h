/* client.h — chat clients for OpenAI-compatible servers (/chat/completions) and Anthropic's
 * messages API (/v1/messages), with retries, a concurrency limit, accounting and key hygiene.
 *
 * Configuration (llm_config_resolve), later sources overriding earlier ones field by field:
 *   1. defaults: timeout 300 s, connect timeout 10 s, 4 retries, 4 concurrent calls,
 *      backoff base 1 s (cap 60 s), prices 0 (cost unknown);
 *   2. environment: OPENAI_BASE_URL (default https://api.openai.com/v1) or ANTHROPIC_BASE_URL
 *      (default https://api.anthropic.com); the key variable OPENAI_API_KEY / ANTHROPIC_API_KEY;
 *   3. a config file: --llm-config FILE, else $XDG_CONFIG_HOME/kopt/llm.json or
 *      ~/.config/kopt/llm.json when it exists:
 *        {"backend":"openai|anthropic", "model":"...", "base_url":"...", "api_key_env":"VAR",
 *         "timeout_s":N, "connect_timeout_s":N, "max_retries":N, "max_concurrency":N,
 *         "max_tokens":N, "temperature":x, "backoff_s":x,
 *         "price":{"in_per_mtok":x, "out_per_mtok":x}}
 *      A key in the file ("api_key") is refused: keys come from the environment only.
 *   4. the --llm spec "openai:<model>" / "anthropic:<model>". When its backend differs from the
 *      file's, the file's base_url, api_key_env and price are dropped (they belong to another
 *      server).
 * The API key is read from the environment variable named by api_key_env when the client is
 * created. A missing key is an error for the official endpoints; local OpenAI-compatible
 * servers (any other base URL) are called without one.
 *
 * Calls: llm_chat sends the system prompt and the turns, and returns the text and accounting.
 * Retries (up to max_retries, so max_retries + 1 requests) on 429, 5xx, connection failures,
 * timeouts and cut-short answers, with exponential backoff (backoff_s * 2^k, capped at 60 s,
 * with +-50% jitter) or exactly the server's Retry-After (capped at 300 s) when it sends one.
 * At most max_concurrency requests of one client are in flight at once, across threads (a
 * counting semaphore; retries wait outside it). llm_chat is thread-safe.
 * Errors are KOPT_E_LLM with a clear sentence: "the API key was refused (set OPENAI_API_KEY)",
 * "unknown model X", "cannot reach <base url>: ...". The key never appears in an error, a log
 * line or any returned text: every server text that reaches a message goes through llm_redact.
 *
 * Ownership: configs own their strings (llm_config_free); the client copies the config.
 * llm_reply owns its strings (llm_reply_free). Messages passed to llm_chat are borrowed.
 */
#ifndef KOPT_LLM_CLIENT_H
#define KOPT_LLM_CLIENT_H

#include <stddef.h>

#include "util/err.h"

typedef enum { LLM_BACKEND_NONE = 0, LLM_BACKEND_OPENAI, LLM_BACKEND_ANTHROPIC } llm_backend;

typedef struct llm_config {
    llm_backend backend;
    char *model;
    char *base_url;           /* NULL: from the environment or the official default */
    char *api_key_env;        /* NULL: OPENAI_API_KEY / ANTHROPIC_API_KEY */
    double timeout_s;         /* total per request */
    double connect_timeout_s;
    int max_retries;
    int max_concurrency;
    int max_tokens;           /* answer limit; 0: server default (Anthropic requires one: 8192) */
    double temperature;       /* < 0: not sent */
    double backoff_s;         /* base of the exponential backoff */
    double price_in_per_mtok; /* USD per million input tokens; 0 = unknown */
    double price_out_per_mtok;
} llm_config;

void llm_config_init(llm_config *c);                  /* defaults, no backend */
void llm_config_free(llm_config *c);
/* "openai:<model>" | "anthropic:<model>" (model may contain ':' and '/'). */
int llm_config_parse_spec(llm_config *c, const char *spec, kerr *e);
/* Merge a JSON config file into c (fields present in the file override). */
int llm_config_load_file(llm_config *c, const char *path, kerr *e);
/* The whole resolution above. spec and config_path may be NULL (not both missing a backend). */
int llm_config_resolve(const char *spec, const char *config_path, llm_config *out, kerr *e);

const char *llm_backend_name(llm_backend b);          /* "openai" | "anthropic" | "none" */
/* 1 when a price is configured (cost_usd then means something; else report it as unknown). */
int llm_config_has_price(const llm_config *c);

typedef struct llm_client llm_client;

int llm_client_new(const llm_config *cfg, llm_client **out, kerr *e);
void llm_client_free(llm_client *c);                  /* NULL-safe; no call may be in flight */
const char *llm_client_name(const llm_client *c);     /* "openai:<model>", owned by the client */
const char *llm_client_base_url(const llm_client *c);
const llm_config *llm_client_config(const llm_client *c);

typedef enum { LLM_USER = 0, LLM_ASSISTANT } llm_role;

typedef struct llm_message {
    llm_role role;
    const char *content;
} llm_message;

typedef struct llm_reply {
    char *text;              /* the answer's text (malloc'd, never NULL on success) */
    char *finish_reason;     /* "stop", "length", "end_turn", "max_tokens", ... or "" */
    int truncated;           /* the answer hit the token limit */
    long tokens_in, tokens_out;   /* from the usage fields (0 when the server sends none) */
    double latency_s;        /* wall time of the whole call, retries and waits included */
    double cost_usd;         /* tokens x configured prices */
    int attempts;            /* HTTP requests made (1 + retries) */
} llm_reply;

void llm_reply_free(llm_reply *r);                    /* safe on a zeroed reply */

/* One chat completion. system may be NULL. n >= 1; the last message should be from the user.
 * On failure *out is zeroed except attempts and latency_s. */
int llm_chat(llm_client *c, const llm_message *msgs, size_t n, const char *system, llm_reply *out,
             kerr *e);

/* `kopt llm check`: one request asking for a 1-token answer, no retries; proves endpoint, key
 * and model. *out as for llm_chat (may be NULL). */
int llm_check(llm_client *c, llm_reply *out, kerr *e);

/* Redaction: a malloc'd copy of text with every occurrence of secret (when at least 4 bytes
 * long) and everything that looks like an API key (sk-..., sk-ant-..., "Bearer <token>",
 * x-api-key values) replaced by "[REDACTED]". text NULL -> "". */
char *llm_redact(const char *text, const char *secret);

/* Accounting totals, used by the agents (agent_llm_usage) and written to the store. */
typedef struct llm_usage {
    long calls;              /* llm_chat calls */
    long failed_calls;       /* of which ended in an error */
    long requests;           /* HTTP requests (retries included) */
    long tokens_in, tokens_out;
    double latency_s;
    double cost_usd;
} llm_usage;

void llm_usage_add(llm_usage *u, const llm_reply *r, int failed);

#endif
