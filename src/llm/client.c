/* client.c — OpenAI-compatible and Anthropic chat clients (see client.h). */
#include "llm/client.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "llm/http.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/log.h"

#define OPENAI_DEFAULT_BASE "https://api.openai.com/v1"
#define ANTHROPIC_DEFAULT_BASE "https://api.anthropic.com"
#define ANTHROPIC_VERSION "2023-06-01"
#define ANTHROPIC_DEFAULT_MAX_TOKENS 8192
#define BACKOFF_CAP_S 60.0
#define RETRY_AFTER_CAP_S 300.0
#define ERR_EXCERPT 300

struct llm_client {
    llm_config cfg;          /* deep copy, base_url and api_key_env resolved */
    char *name;              /* "openai:<model>" */
    char *url;               /* endpoint */
    char *auth_header;       /* "Authorization: Bearer ..." / "x-api-key: ..." or NULL; secret */
    char *key;               /* secret, NULL when none */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int inflight;
    unsigned rng;
};

/* ------------------------------------------------------------------ configuration */

void llm_config_init(llm_config *c) {
    memset(c, 0, sizeof *c);
    c->timeout_s = 300;
    c->connect_timeout_s = 10;
    c->max_retries = 4;
    c->max_concurrency = 4;
    c->temperature = -1;
    c->backoff_s = 1.0;
}

void llm_config_free(llm_config *c) {
    if (!c) return;
    free(c->model);
    free(c->base_url);
    free(c->api_key_env);
    c->model = c->base_url = c->api_key_env = NULL;
}

const char *llm_backend_name(llm_backend b) {
    return b == LLM_BACKEND_OPENAI ? "openai" : b == LLM_BACKEND_ANTHROPIC ? "anthropic" : "none";
}

int llm_config_has_price(const llm_config *c) { return c->price_in_per_mtok > 0 || c->price_out_per_mtok > 0; }

static llm_backend cl_backend_from(const char *s, size_t n) {
    if (n == 6 && !strncmp(s, "openai", 6)) return LLM_BACKEND_OPENAI;
    if (n == 9 && !strncmp(s, "anthropic", 9)) return LLM_BACKEND_ANTHROPIC;
    return LLM_BACKEND_NONE;
}

static void cl_set(char **dst, const char *v) {
    free(*dst);
    *dst = v ? kstrdup(v) : NULL;
}

int llm_config_parse_spec(llm_config *c, const char *spec, kerr *e) {
    const char *colon = spec ? strchr(spec, ':') : NULL;
    if (!colon)
        return kerr_set(e, KOPT_E_USAGE, "--llm expects openai:<model> or anthropic:<model>, got '%s'",
                        spec ? spec : "");
    llm_backend b = cl_backend_from(spec, (size_t)(colon - spec));
    if (b == LLM_BACKEND_NONE)
        return kerr_set(e, KOPT_E_USAGE, "--llm: unknown backend '%.*s' (use openai or anthropic)",
                        (int)(colon - spec), spec);
    if (!colon[1]) return kerr_set(e, KOPT_E_USAGE, "--llm %s: the model name is missing", spec);
    c->backend = b;
    cl_set(&c->model, colon + 1);
    return 0;
}

static int cl_num(json_t *v, const char *key, const char *path, double *out, kerr *e) {
    if (!json_is_number(v))
        return kerr_set(e, KOPT_E_USAGE, "%s: \"%s\" must be a number", path, key);
    *out = json_number_value(v);
    return 0;
}

static int cl_str(json_t *v, const char *key, const char *path, char **out, kerr *e) {
    if (!json_is_string(v) || !*json_string_value(v))
        return kerr_set(e, KOPT_E_USAGE, "%s: \"%s\" must be a non-empty string", path, key);
    cl_set(out, json_string_value(v));
    return 0;
}

int llm_config_load_file(llm_config *c, const char *path, kerr *e) {
    if (!fs_exists(path)) return kerr_set(e, KOPT_E_NOFILE, "LLM config %s does not exist", path);
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root)
        return kerr_set(e, KOPT_E_USAGE, "LLM config %s: line %d: %s", path, je.line, je.text);
    int rc = 0;
    if (!json_is_object(root)) {
        rc = kerr_set(e, KOPT_E_USAGE, "LLM config %s: expected a JSON object", path);
        goto out;
    }
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        double d = 0;
        if (!strcmp(key, "api_key") || !strcmp(key, "key") || !strcmp(key, "apiKey")) {
            rc = kerr_set(e, KOPT_E_USAGE,
                          "LLM config %s holds an API key: keys come from the environment only "
                          "(remove it and name the variable with \"api_key_env\")", path);
        } else if (!strcmp(key, "backend")) {
            const char *s = json_string_value(v);
            llm_backend b = s ? cl_backend_from(s, strlen(s)) : LLM_BACKEND_NONE;
            if (b == LLM_BACKEND_NONE)
                rc = kerr_set(e, KOPT_E_USAGE, "LLM config %s: \"backend\" must be \"openai\" or \"anthropic\"", path);
            else
                c->backend = b;
        } else if (!strcmp(key, "model")) {
            rc = cl_str(v, key, path, &c->model, e);
        } else if (!strcmp(key, "base_url")) {
            rc = cl_str(v, key, path, &c->base_url, e);
        } else if (!strcmp(key, "api_key_env")) {
            rc = cl_str(v, key, path, &c->api_key_env, e);
        } else if (!strcmp(key, "timeout_s")) {
            if (!(rc = cl_num(v, key, path, &d, e))) c->timeout_s = d;
        } else if (!strcmp(key, "connect_timeout_s")) {
            if (!(rc = cl_num(v, key, path, &d, e))) c->connect_timeout_s = d;
        } else if (!strcmp(key, "max_retries")) {
            if (!(rc = cl_num(v, key, path, &d, e))) c->max_retries = (int)d;
        } else if (!strcmp(key, "max_concurrency")) {
            if (!(rc = cl_num(v, key, path, &d, e))) c->max_concurrency = (int)d;
        } else if (!strcmp(key, "max_tokens")) {
            if (!(rc = cl_num(v, key, path, &d, e))) c->max_tokens = (int)d;
        } else if (!strcmp(key, "temperature")) {
            if (!(rc = cl_num(v, key, path, &d, e))) c->temperature = d;
        } else if (!strcmp(key, "backoff_s")) {
            if (!(rc = cl_num(v, key, path, &d, e))) c->backoff_s = d;
        } else if (!strcmp(key, "price")) {
            if (!json_is_object(v)) {
                rc = kerr_set(e, KOPT_E_USAGE, "LLM config %s: \"price\" must be an object", path);
            } else {
                json_t *pi = json_object_get(v, "in_per_mtok"), *po = json_object_get(v, "out_per_mtok");
                if (pi && !(rc = cl_num(pi, "price.in_per_mtok", path, &d, e))) c->price_in_per_mtok = d;
                if (!rc && po && !(rc = cl_num(po, "price.out_per_mtok", path, &d, e))) c->price_out_per_mtok = d;
            }
        } else {
            log_warn("LLM config %s: unknown key \"%s\" ignored", path, key);
        }
        if (rc) break;
    }
    if (!rc && (c->timeout_s <= 0 || c->connect_timeout_s <= 0 || c->max_retries < 0 ||
                c->max_concurrency < 1 || c->max_tokens < 0 || c->backoff_s < 0))
        rc = kerr_set(e, KOPT_E_USAGE, "LLM config %s: timeouts must be > 0, max_retries >= 0, "
                      "max_concurrency >= 1, max_tokens >= 0", path);
out:
    json_decref(root);
    return rc;
}

static char *cl_default_config_path(void) {
    const char *xdg = getenv("XDG_CONFIG_HOME");
    if (xdg && *xdg) return kasprintf("%s/kopt/llm.json", xdg);
    const char *home = getenv("HOME");
    if (home && *home) return kasprintf("%s/.config/kopt/llm.json", home);
    return NULL;
}

/* base_url when unset: the environment, else the official endpoint; trailing '/' removed. */
static char *cl_resolve_base(const llm_config *c) {
    const char *b = c->base_url;
    if (!b || !*b) {
        const char *env = getenv(c->backend == LLM_BACKEND_ANTHROPIC ? "ANTHROPIC_BASE_URL" : "OPENAI_BASE_URL");
        b = env && *env ? env : c->backend == LLM_BACKEND_ANTHROPIC ? ANTHROPIC_DEFAULT_BASE : OPENAI_DEFAULT_BASE;
    }
    char *s = kstrdup(b);
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '/') s[--n] = '\0';
    return s;
}

int llm_config_resolve(const char *spec, const char *config_path, llm_config *out, kerr *e) {
    llm_config_init(out);
    int rc = 0;
    char *path = config_path ? kstrdup(config_path) : cl_default_config_path();
    if (path && (config_path || fs_exists(path))) {
        rc = llm_config_load_file(out, path, e);
        if (!rc) log_debug("llm: configuration from %s", path);
    }
    free(path);
    if (rc) goto fail;
    if (spec) {
        llm_config s;
        llm_config_init(&s);
        rc = llm_config_parse_spec(&s, spec, e);
        if (!rc) {
            if (out->backend != LLM_BACKEND_NONE && out->backend != s.backend) {
                cl_set(&out->base_url, NULL);
                cl_set(&out->api_key_env, NULL);
                out->price_in_per_mtok = out->price_out_per_mtok = 0;
            }
            out->backend = s.backend;
            cl_set(&out->model, s.model);
        }
        llm_config_free(&s);
        if (rc) goto fail;
    }
    if (out->backend == LLM_BACKEND_NONE) {
        rc = kerr_set(e, KOPT_E_USAGE, "no LLM configured: pass --llm openai:<model> or anthropic:<model> "
                      "(or a config file with \"backend\" and \"model\")");
        goto fail;
    }
    if (!out->model || !*out->model) {
        rc = kerr_set(e, KOPT_E_USAGE, "no model given for the %s backend", llm_backend_name(out->backend));
        goto fail;
    }
    char *base = cl_resolve_base(out);
    free(out->base_url);
    out->base_url = base;
    if (!out->api_key_env)
        out->api_key_env = kstrdup(out->backend == LLM_BACKEND_ANTHROPIC ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
    return 0;
fail:
    llm_config_free(out);
    return rc;
}

/* ------------------------------------------------------------------ redaction */

static int cl_tokch(char ch) { return isalnum((unsigned char)ch) || ch == '-' || ch == '_'; }
static int cl_bearerch(char ch) { return cl_tokch(ch) || ch == '.' || ch == '~' || ch == '+' || ch == '/' || ch == '='; }

char *llm_redact(const char *text, const char *secret) {
    if (!text) return kstrdup("");
    static const char mark[] = "[REDACTED]";
    size_t sl = secret ? strlen(secret) : 0;
    kbuf b = KBUF_INIT;
    const char *p = text;
    while (*p) {
        if (sl >= 4 && !strncmp(p, secret, sl)) {
            kbuf_puts(&b, mark);
            p += sl;
            continue;
        }
        /* sk-... keys (OpenAI, Anthropic "sk-ant-...", most proxies) */
        if (p[0] == 's' && p[1] == 'k' && p[2] == '-' && (p == text || !cl_tokch(p[-1]))) {
            size_t n = 3;
            while (cl_tokch(p[n])) n++;
            if (n >= 3 + 6) {
                kbuf_puts(&b, mark);
                p += n;
                continue;
            }
        }
        /* "Bearer <token>" */
        if (!strncasecmp(p, "bearer ", 7)) {
            size_t n = 7;
            while (p[n] == ' ') n++;
            size_t t = n;
            while (cl_bearerch(p[t])) t++;
            if (t - n >= 4) {
                kbuf_append(&b, p, n);
                kbuf_puts(&b, mark);
                p += t;
                continue;
            }
        }
        /* x-api-key: <value>, "x-api-key": "<value>", api_key=<value> */
        if (!strncasecmp(p, "x-api-key", 9) || !strncasecmp(p, "api_key", 7) || !strncasecmp(p, "api-key", 7)) {
            size_t n = p[0] == 'x' || p[0] == 'X' ? 9 : 7;
            size_t s = n;
            int assign = 0;
            while (p[s] == '"' || p[s] == '\'' || p[s] == ' ' || p[s] == ':' || p[s] == '=') {
                if (p[s] == ':' || p[s] == '=') assign = 1;
                s++;
            }
            size_t t = s;
            while (cl_bearerch(p[t])) t++;
            if (assign && t - s >= 6) {
                kbuf_append(&b, p, s);
                kbuf_puts(&b, mark);
                p += t;
                continue;
            }
        }
        kbuf_putc(&b, *p++);
    }
    return kbuf_steal(&b);
}

/* ------------------------------------------------------------------ client */

static void cl_sleep(double s) {
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {}
}

static int cl_is_official(const llm_client *c) {
    return strstr(c->cfg.base_url, "://api.openai.com") || strstr(c->cfg.base_url, "://api.anthropic.com");
}

int llm_client_new(const llm_config *cfg, llm_client **out, kerr *e) {
    *out = NULL;
    if (cfg->backend != LLM_BACKEND_OPENAI && cfg->backend != LLM_BACKEND_ANTHROPIC)
        return kerr_set(e, KOPT_E_USAGE, "no LLM backend configured");
    if (!cfg->model || !*cfg->model) return kerr_set(e, KOPT_E_USAGE, "no LLM model configured");
    int rc = llm_http_init(e);
    if (rc) return rc;
    llm_client *c = kcalloc(1, sizeof *c);
    c->cfg = *cfg;
    c->cfg.model = kstrdup(cfg->model);
    c->cfg.base_url = cl_resolve_base(cfg);
    c->cfg.api_key_env = kstrdup(cfg->api_key_env && *cfg->api_key_env ? cfg->api_key_env
                                 : cfg->backend == LLM_BACKEND_ANTHROPIC ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
    if (c->cfg.max_concurrency < 1) c->cfg.max_concurrency = 1;
    if (c->cfg.max_retries < 0) c->cfg.max_retries = 0;
    if (c->cfg.timeout_s <= 0) c->cfg.timeout_s = 300;
    if (c->cfg.connect_timeout_s <= 0) c->cfg.connect_timeout_s = 10;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->rng = (unsigned)time(NULL) ^ (unsigned)getpid() ^ (unsigned)(uintptr_t)c;
    c->name = kasprintf("%s:%s", llm_backend_name(cfg->backend), c->cfg.model);

    if (strncmp(c->cfg.base_url, "http://", 7) && strncmp(c->cfg.base_url, "https://", 8)) {
        rc = kerr_set(e, KOPT_E_LLM, "LLM base URL '%s' must start with http:// or https://", c->cfg.base_url);
        goto fail;
    }
    if (cfg->backend == LLM_BACKEND_OPENAI) {
        c->url = kasprintf("%s/chat/completions", c->cfg.base_url);
    } else {
        size_t n = strlen(c->cfg.base_url);
        int has_v1 = n >= 3 && !strcmp(c->cfg.base_url + n - 3, "/v1");
        c->url = kasprintf("%s%s/messages", c->cfg.base_url, has_v1 ? "" : "/v1");
    }
    const char *key = getenv(c->cfg.api_key_env);
    if (key && *key) {
        for (const char *p = key; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) {
                rc = kerr_set(e, KOPT_E_LLM, "%s holds control characters: not a usable API key", c->cfg.api_key_env);
                goto fail;
            }
        c->key = kstrdup(key);
        c->auth_header = cfg->backend == LLM_BACKEND_OPENAI ? kasprintf("Authorization: Bearer %s", key)
                                                            : kasprintf("x-api-key: %s", key);
    } else if (cl_is_official(c)) {
        rc = kerr_set(e, KOPT_E_LLM, "no API key for %s: set %s in the environment", c->cfg.base_url,
                      c->cfg.api_key_env);
        goto fail;
    }
    *out = c;
    return 0;
fail:
    llm_client_free(c);
    return rc;
}

static void cl_wipe(char *s) {
    if (s) explicit_bzero(s, strlen(s));
    free(s);
}

void llm_client_free(llm_client *c) {
    if (!c) return;
    cl_wipe(c->key);
    cl_wipe(c->auth_header);
    free(c->name);
    free(c->url);
    llm_config_free(&c->cfg);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

const char *llm_client_name(const llm_client *c) { return c->name; }
const char *llm_client_base_url(const llm_client *c) { return c->cfg.base_url; }
const llm_config *llm_client_config(const llm_client *c) { return &c->cfg; }

void llm_reply_free(llm_reply *r) {
    if (!r) return;
    free(r->text);
    free(r->finish_reason);
    r->text = r->finish_reason = NULL;
}

void llm_usage_add(llm_usage *u, const llm_reply *r, int failed) {
    u->calls++;
    if (failed) u->failed_calls++;
    u->requests += r->attempts;
    u->tokens_in += r->tokens_in;
    u->tokens_out += r->tokens_out;
    u->latency_s += r->latency_s;
    u->cost_usd += r->cost_usd;
}

static void cl_acquire(llm_client *c) {
    pthread_mutex_lock(&c->mu);
    while (c->inflight >= c->cfg.max_concurrency) pthread_cond_wait(&c->cv, &c->mu);
    c->inflight++;
    pthread_mutex_unlock(&c->mu);
}

static void cl_release(llm_client *c) {
    pthread_mutex_lock(&c->mu);
    c->inflight--;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
}

static double cl_jitter(llm_client *c) {
    pthread_mutex_lock(&c->mu);
    unsigned r = (unsigned)rand_r(&c->rng);
    pthread_mutex_unlock(&c->mu);
    return 0.5 + (double)(r % 10000u) / 10000.0;   /* [0.5, 1.5) */
}

/* The request body (JSON text, malloc'd). */
static char *cl_body(const llm_client *c, const llm_message *msgs, size_t n, const char *system,
                     int max_tokens) {
    json_t *root = json_object(), *arr = json_array();
    json_object_set_new(root, "model", json_string(c->cfg.model));
    if (c->cfg.backend == LLM_BACKEND_OPENAI) {
        if (system && *system) json_array_append_new(arr, json_pack("{s:s,s:s}", "role", "system", "content", system));
    } else if (system && *system) {
        json_object_set_new(root, "system", json_string(system));
    }
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:s,s:s}", "role", msgs[i].role == LLM_ASSISTANT ? "assistant" : "user",
                                             "content", msgs[i].content ? msgs[i].content : ""));
    json_object_set_new(root, "messages", arr);
    if (c->cfg.backend == LLM_BACKEND_ANTHROPIC) {
        json_object_set_new(root, "max_tokens", json_integer(max_tokens > 0 ? max_tokens : ANTHROPIC_DEFAULT_MAX_TOKENS));
    } else if (max_tokens > 0) {
        /* OpenAI's own API wants max_completion_tokens (reasoning models refuse max_tokens);
         * OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama) all read max_tokens. */
        json_object_set_new(root, strstr(c->cfg.base_url, "://api.openai.com") ? "max_completion_tokens" : "max_tokens",
                            json_integer(max_tokens));
    }
    if (c->cfg.temperature >= 0) json_object_set_new(root, "temperature", json_real(c->cfg.temperature));
    char *s = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    return s;
}

/* The server's error message (redacted, bounded), from any of the usual error shapes. */
static char *cl_error_text(const llm_client *c, const char *body, size_t len, char code[64]) {
    code[0] = '\0';
    json_t *root = json_loadb(body, len, 0, NULL);
    const char *msg = NULL;
    if (json_is_object(root)) {
        json_t *err = json_object_get(root, "error");
        if (json_is_object(err)) {
            msg = json_string_value(json_object_get(err, "message"));
            const char *cd = json_string_value(json_object_get(err, "code"));
            if (!cd) cd = json_string_value(json_object_get(err, "type"));
            if (cd) snprintf(code, 64, "%s", cd);
        } else if (json_is_string(err)) {
            msg = json_string_value(err);
        }
        if (!msg) msg = json_string_value(json_object_get(root, "message"));
        if (!msg) msg = json_string_value(json_object_get(root, "detail"));
        if (!code[0]) {
            const char *cd = json_string_value(json_object_get(root, "code"));
            if (!cd) cd = json_string_value(json_object_get(root, "type"));
            if (cd) snprintf(code, 64, "%s", cd);
        }
    }
    char *raw = kstrndup(msg ? msg : body, msg ? strlen(msg) : len);
    json_decref(root);
    for (char *p = raw; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    char *red = llm_redact(raw, c->key);
    cl_wipe(raw);
    if (strlen(red) > ERR_EXCERPT) strcpy(red + ERR_EXCERPT - 3, "...");
    return red;
}

/* Parse a 2xx body into *out. */
static int cl_parse_ok(const llm_client *c, const char *body, size_t len, llm_reply *out, kerr *e) {
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);
    if (!json_is_object(root)) {
        json_decref(root);
        return kerr_set(e, KOPT_E_LLM, "malformed answer from %s: not a JSON object (%s)", c->cfg.base_url,
                        root ? "wrong type" : je.text);
    }
    int rc = 0;
    kbuf text = KBUF_INIT;
    const char *finish = NULL;
    json_t *usage = json_object_get(root, "usage");
    if (c->cfg.backend == LLM_BACKEND_OPENAI) {
        json_t *ch = json_array_get(json_object_get(root, "choices"), 0);
        json_t *msg = json_object_get(ch, "message");
        if (!json_is_object(msg)) {
            char code[64];
            char *why = cl_error_text(c, body, len, code);
            rc = kerr_set(e, KOPT_E_LLM, "malformed answer from %s: no choices[0].message (%s)", c->cfg.base_url, why);
            free(why);
            goto out;
        }
        json_t *content = json_object_get(msg, "content");
        if (json_is_string(content)) {
            kbuf_puts(&text, json_string_value(content));
        } else if (json_is_array(content)) {
            size_t i;
            json_t *part;
            json_array_foreach(content, i, part) {
                const char *t = json_string_value(json_object_get(part, "text"));
                if (t) kbuf_puts(&text, t);
            }
        } else if (json_is_string(json_object_get(msg, "refusal"))) {
            char *why = llm_redact(json_string_value(json_object_get(msg, "refusal")), c->key);
            rc = kerr_set(e, KOPT_E_LLM, "the model refused to answer: %.300s", why);
            free(why);
            goto out;
        }
        finish = json_string_value(json_object_get(ch, "finish_reason"));
        out->tokens_in = (long)json_integer_value(json_object_get(usage, "prompt_tokens"));
        out->tokens_out = (long)json_integer_value(json_object_get(usage, "completion_tokens"));
        out->truncated = finish && !strcmp(finish, "length");
    } else {
        json_t *content = json_object_get(root, "content");
        if (!json_is_array(content)) {
            char code[64];
            char *why = cl_error_text(c, body, len, code);
            rc = kerr_set(e, KOPT_E_LLM, "malformed answer from %s: no content array (%s)", c->cfg.base_url, why);
            free(why);
            goto out;
        }
        size_t i;
        json_t *part;
        json_array_foreach(content, i, part) {
            const char *ty = json_string_value(json_object_get(part, "type"));
            const char *t = json_string_value(json_object_get(part, "text"));
            if (t && (!ty || !strcmp(ty, "text"))) kbuf_puts(&text, t);
        }
        finish = json_string_value(json_object_get(root, "stop_reason"));
        out->tokens_in = (long)(json_integer_value(json_object_get(usage, "input_tokens")) +
                                json_integer_value(json_object_get(usage, "cache_creation_input_tokens")) +
                                json_integer_value(json_object_get(usage, "cache_read_input_tokens")));
        out->tokens_out = (long)json_integer_value(json_object_get(usage, "output_tokens"));
        out->truncated = finish && !strcmp(finish, "max_tokens");
    }
    out->text = kbuf_steal(&text);
    out->finish_reason = kstrdup(finish ? finish : "");
    out->cost_usd = (double)out->tokens_in * c->cfg.price_in_per_mtok / 1e6 +
                    (double)out->tokens_out * c->cfg.price_out_per_mtok / 1e6;
out:
    kbuf_free(&text);
    json_decref(root);
    return rc;
}

static int cl_retryable_status(long s) { return s == 429 || s == 408 || s == 409 || (s >= 500 && s <= 599); }

static int cl_status_error(const llm_client *c, long status, const char *body, size_t len, int attempts, kerr *e) {
    char code[64];
    char *msg = cl_error_text(c, body, len, code);
    int rc;
    if (status == 401 || status == 403) {
        if (c->key)
            rc = kerr_set(e, KOPT_E_LLM, "the API key was refused (set %s): HTTP %ld from %s: %s",
                          c->cfg.api_key_env, status, c->cfg.base_url, msg);
        else
            rc = kerr_set(e, KOPT_E_LLM, "%s wants an API key (set %s): HTTP %ld: %s", c->cfg.base_url,
                          c->cfg.api_key_env, status, msg);
    } else if (status == 404 || !strcmp(code, "model_not_found") || !strcmp(code, "not_found_error")) {
        rc = kerr_set(e, KOPT_E_LLM, "unknown model %s at %s (HTTP %ld: %s; check the model name and the base URL)",
                      c->cfg.model, c->cfg.base_url, status, msg);
    } else if (cl_retryable_status(status)) {
        rc = kerr_set(e, KOPT_E_LLM, "%s answered HTTP %ld after %d attempt%s: %s", c->cfg.base_url, status,
                      attempts, attempts == 1 ? "" : "s", msg);
    } else {
        rc = kerr_set(e, KOPT_E_LLM, "%s refused the request (HTTP %ld): %s", c->cfg.base_url, status, msg);
    }
    free(msg);
    return rc;
}

static int cl_call(llm_client *c, const llm_message *msgs, size_t n, const char *system, int max_tokens,
                   int max_retries, llm_reply *out, kerr *e) {
    memset(out, 0, sizeof *out);
    if (!msgs || n == 0) return kerr_set(e, KOPT_E_INTERNAL, "llm_chat: no messages");
    double t0 = clock_now();
    char *body = cl_body(c, msgs, n, system, max_tokens);
    const char *hdr[5];
    size_t nh = 0;
    hdr[nh++] = "Content-Type: application/json";
    if (c->cfg.backend == LLM_BACKEND_ANTHROPIC) hdr[nh++] = "anthropic-version: " ANTHROPIC_VERSION;
    if (c->auth_header) hdr[nh++] = c->auth_header;
    hdr[nh] = NULL;
    llm_http_request rq = {.url = c->url, .display = c->cfg.base_url, .headers = hdr, .body = body,
                           .body_len = strlen(body), .timeout_s = c->cfg.timeout_s,
                           .connect_timeout_s = c->cfg.connect_timeout_s};
    int rc = 0;
    for (int attempt = 0;; attempt++) {
        llm_http_response rs;
        kerr he = {0};
        log_debug("llm: POST %s (%zu messages, %zu bytes, attempt %d)", c->url, n, rq.body_len, attempt + 1);
        cl_acquire(c);
        int hrc = llm_http_post(&rq, &rs, &he);
        cl_release(c);
        out->attempts = attempt + 1;
        int retry = 0;
        double wait = -1;
        if (hrc) {
            retry = rs.fail != LLM_HTTP_OTHER;
            if (!retry || attempt >= max_retries) {
                rc = kerr_set(e, he.code, "%s", he.msg);
                if (attempt > 0) kerr_wrap(e, "after %d attempts", attempt + 1);
            }
        } else if (rs.status >= 200 && rs.status < 300) {
            rc = cl_parse_ok(c, rs.body, rs.body_len, out, e);
        } else {
            retry = cl_retryable_status(rs.status);
            wait = rs.retry_after_s;
            if (!retry || attempt >= max_retries) rc = cl_status_error(c, rs.status, rs.body, rs.body_len, attempt + 1, e);
        }
        llm_http_response_free(&rs);
        if (!retry || attempt >= max_retries) break;
        double delay;
        if (wait >= 0) {
            delay = wait < RETRY_AFTER_CAP_S ? wait : RETRY_AFTER_CAP_S;
        } else {
            delay = c->cfg.backoff_s * pow(2.0, attempt);
            if (delay > BACKOFF_CAP_S) delay = BACKOFF_CAP_S;
            delay *= cl_jitter(c);
        }
        if (hrc)
            log_info("llm: %s; retrying in %.1f s (%d/%d)", he.msg, delay, attempt + 1, max_retries);
        else
            log_info("llm: HTTP %ld from %s; retrying in %.1f s (%d/%d)", rs.status, c->cfg.base_url, delay,
                     attempt + 1, max_retries);
        cl_sleep(delay);
    }
    free(body);
    out->latency_s = clock_now() - t0;
    if (rc) {
        int attempts = out->attempts;
        double lat = out->latency_s;
        llm_reply_free(out);
        memset(out, 0, sizeof *out);
        out->attempts = attempts;
        out->latency_s = lat;
    }
    return rc;
}

int llm_chat(llm_client *c, const llm_message *msgs, size_t n, const char *system, llm_reply *out, kerr *e) {
    return cl_call(c, msgs, n, system, c->cfg.max_tokens, c->cfg.max_retries, out, e);
}

int llm_check(llm_client *c, llm_reply *out, kerr *e) {
    llm_reply tmp;
    llm_message m = {LLM_USER, "Reply with the single word OK."};
    int rc = cl_call(c, &m, 1, NULL, 1, 0, out ? out : &tmp, e);
    if (!out) llm_reply_free(&tmp);
    if (rc) kerr_wrap(e, "%s", c->name);
    return rc;
}
