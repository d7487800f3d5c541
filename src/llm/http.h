/* http.h — the small libcurl wrapper behind the LLM clients: one JSON POST, one response.
 *
 * Contract:
 *   llm_http_post sends `body` to `url` with the given headers and waits at most `timeout_s`
 *   in total (`connect_timeout_s` for the connection). It returns 0 whenever an HTTP response
 *   arrived complete, whatever its status (the caller interprets 4xx/5xx), and fills *out.
 *   It returns KOPT_E_LLM when no complete response arrived; then out->fail says why
 *   (refused/unresolvable, timeout, cut short, other), so the caller can decide to retry, and
 *   e->msg reads "cannot reach <display>: <reason>" (or "... timed out ...", "... cut short").
 *   `display` is what error messages name (normally the base URL); it must not hold a secret.
 *   Header values are sent as given and never logged or copied into messages.
 *   Retry-After (seconds or an HTTP date) is parsed into out->retry_after_s (-1 when absent).
 *   Loopback hosts (localhost, 127.0.0.1, ::1) never go through a proxy.
 *   curl_global_init is done once per process (thread-safe); each call uses its own easy
 *   handle, so calls may run concurrently from several threads.
 *
 * Ownership: the request is borrowed. *out owns its body; release it with
 * llm_http_response_free (safe on a zeroed or already-freed response).
 */
#ifndef KOPT_LLM_HTTP_H
#define KOPT_LLM_HTTP_H

#include <stddef.h>

#include "util/err.h"

typedef enum {
    LLM_HTTP_OK = 0,        /* a complete HTTP response arrived */
    LLM_HTTP_CONNECT,       /* connection refused, host unresolvable, TLS handshake failed */
    LLM_HTTP_TIMEOUT,       /* no complete answer within the timeout */
    LLM_HTTP_TRUNCATED,     /* the connection closed before the whole body arrived */
    LLM_HTTP_OTHER,         /* any other transport failure (bad URL, out of memory, ...) */
} llm_http_fail;

typedef struct llm_http_request {
    const char *url;               /* full URL of the endpoint */
    const char *display;           /* what messages call the server (base URL); NULL: url */
    const char *const *headers;    /* "Name: value" strings, NULL-terminated; may be NULL */
    const char *body;              /* request body (JSON) */
    size_t body_len;
    double timeout_s;              /* total; <= 0 means 300 */
    double connect_timeout_s;      /* <= 0 means 10 */
} llm_http_request;

typedef struct llm_http_response {
    long status;           /* HTTP status; 0 when no response arrived */
    char *body;            /* NUL-terminated, never NULL after a call */
    size_t body_len;
    double retry_after_s;  /* from Retry-After; -1 when absent or unreadable */
    double elapsed_s;      /* wall time of the call */
    llm_http_fail fail;    /* LLM_HTTP_OK when status is meaningful */
} llm_http_response;

/* curl_global_init, once. Returns 0 or KOPT_E_LLM. Called by llm_http_post itself. */
int llm_http_init(kerr *e);

int llm_http_post(const llm_http_request *rq, llm_http_response *out, kerr *e);
void llm_http_response_free(llm_http_response *r);

/* Parse a Retry-After value: delta-seconds (decimals tolerated) or an HTTP date (then the
 * seconds from now, >= 0). Returns -1 when unreadable. Exposed for tests. */
double llm_http_parse_retry_after(const char *value);

#endif
