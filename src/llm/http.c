/* http.c — libcurl wrapper (see http.h). */
#include "llm/http.h"

#include <ctype.h>
#define CURL_DISABLE_TYPECHECK 1   /* plain function calls: they go through the table below */
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/buf.h"
#include "util/clock.h"

#define HTTP_MAX_BODY ((size_t)64 << 20)   /* a chat answer is never this large */

/* libcurl is loaded at run time (dlopen), only when an LLM backend is used: kopt's other
 * commands run on machines without libcurl (the GPU machine need not have it), and a missing
 * libcurl becomes one clear error instead of a loader failure at start. */
static struct {
    void *lib;
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    void (*easy_cleanup)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    time_t (*getdate)(const char *, const time_t *);
} g_curl;
#define curl_global_init g_curl.global_init
#define curl_easy_init g_curl.easy_init
#undef curl_easy_setopt
#define curl_easy_setopt g_curl.easy_setopt
#define curl_easy_perform g_curl.easy_perform
#undef curl_easy_getinfo
#define curl_easy_getinfo g_curl.easy_getinfo
#define curl_easy_cleanup g_curl.easy_cleanup
#define curl_easy_strerror g_curl.easy_strerror
#define curl_slist_append g_curl.slist_append
#define curl_slist_free_all g_curl.slist_free_all
#define curl_getdate g_curl.getdate

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static CURLcode g_init_rc = CURLE_OK;
static char g_load_error[256];

static void *sym(const char *name) {
    void *p = dlsym(g_curl.lib, name);
    if (!p && !g_load_error[0]) snprintf(g_load_error, sizeof g_load_error, "libcurl lacks %s", name);
    return p;
}

static void http_global_init(void) {
    g_curl.lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!g_curl.lib) g_curl.lib = dlopen("libcurl.so", RTLD_NOW | RTLD_LOCAL);
    if (!g_curl.lib) {
        snprintf(g_load_error, sizeof g_load_error, "%s", dlerror());
        return;
    }
    *(void **)&g_curl.global_init = sym("curl_global_init");
    *(void **)&g_curl.easy_init = sym("curl_easy_init");
    *(void **)&g_curl.easy_setopt = sym("curl_easy_setopt");
    *(void **)&g_curl.easy_perform = sym("curl_easy_perform");
    *(void **)&g_curl.easy_getinfo = sym("curl_easy_getinfo");
    *(void **)&g_curl.easy_cleanup = sym("curl_easy_cleanup");
    *(void **)&g_curl.easy_strerror = sym("curl_easy_strerror");
    *(void **)&g_curl.slist_append = sym("curl_slist_append");
    *(void **)&g_curl.slist_free_all = sym("curl_slist_free_all");
    *(void **)&g_curl.getdate = sym("curl_getdate");
    if (g_load_error[0]) return;
    g_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int llm_http_init(kerr *e) {
    pthread_once(&g_once, http_global_init);
    if (g_load_error[0])
        return kerr_set(e, KOPT_E_LLM, "LLM backends need libcurl, which cannot be loaded (%s); hint: install libcurl4",
                        g_load_error);
    if (g_init_rc != CURLE_OK)
        return kerr_set(e, KOPT_E_LLM, "cannot initialise libcurl: %s", curl_easy_strerror(g_init_rc));
    return 0;
}

double llm_http_parse_retry_after(const char *value) {
    if (!value) return -1;
    while (*value == ' ' || *value == '\t') value++;
    if (!*value) return -1;
    if (isdigit((unsigned char)*value)) {
        char *end = NULL;
        double s = strtod(value, &end);
        while (end && (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) end++;
        if (end && *end == '\0' && s >= 0 && s < 1e9) return s;
        return -1;
    }
    time_t t = curl_getdate(value, NULL);
    if (t == (time_t)-1) return -1;
    double d = difftime(t, time(NULL));
    return d > 0 ? d : 0;
}

typedef struct http_sink {
    kbuf body;
    int too_big;
    double retry_after_s;
} http_sink;

static size_t http_on_body(char *ptr, size_t size, size_t nmemb, void *ud) {
    http_sink *s = ud;
    size_t n = size * nmemb;
    if (s->body.len + n > HTTP_MAX_BODY) {
        s->too_big = 1;
        return 0;   /* aborts the transfer */
    }
    kbuf_append(&s->body, ptr, n);
    return n;
}

static size_t http_on_header(char *ptr, size_t size, size_t nmemb, void *ud) {
    http_sink *s = ud;
    size_t n = size * nmemb;
    /* A new status line starts a new header block (interim 100 responses): forget old values. */
    if (n >= 5 && !strncmp(ptr, "HTTP/", 5)) {
        s->retry_after_s = -1;
        return n;
    }
    static const char key[] = "retry-after:";
    size_t kl = sizeof key - 1;
    if (n > kl && !strncasecmp(ptr, key, kl)) {
        char val[128];
        size_t m = n - kl;
        if (m >= sizeof val) m = sizeof val - 1;
        memcpy(val, ptr + kl, m);
        val[m] = '\0';
        while (m && (val[m - 1] == '\r' || val[m - 1] == '\n' || val[m - 1] == ' ')) val[--m] = '\0';
        s->retry_after_s = llm_http_parse_retry_after(val);
    }
    return n;
}

/* Loopback hosts bypass any proxy; the user's no_proxy list is kept. malloc'd. */
static char *http_noproxy(void) {
    const char *env = getenv("no_proxy");
    if (!env || !*env) env = getenv("NO_PROXY");
    if (env && !strcmp(env, "*")) return kstrdup("*");
    if (env && *env) return kasprintf("localhost,127.0.0.1,::1,%s", env);
    return kstrdup("localhost,127.0.0.1,::1");
}

static llm_http_fail http_classify(CURLcode rc) {
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
        return LLM_HTTP_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return LLM_HTTP_TIMEOUT;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
        return LLM_HTTP_TRUNCATED;
    default:
        return LLM_HTTP_OTHER;
    }
}

void llm_http_response_free(llm_http_response *r) {
    if (!r) return;
    free(r->body);
    r->body = NULL;
    r->body_len = 0;
}

int llm_http_post(const llm_http_request *rq, llm_http_response *out, kerr *e) {
    memset(out, 0, sizeof *out);
    out->retry_after_s = -1;
    out->fail = LLM_HTTP_OTHER;
    const char *display = rq->display ? rq->display : rq->url;
    int rc = llm_http_init(e);
    if (rc) {
        out->body = kstrdup("");
        return rc;
    }
    double timeout = rq->timeout_s > 0 ? rq->timeout_s : 300;
    double ctimeout = rq->connect_timeout_s > 0 ? rq->connect_timeout_s : 10;
    if (ctimeout > timeout) ctimeout = timeout;

    CURL *h = curl_easy_init();
    if (!h) {
        out->body = kstrdup("");
        return kerr_set(e, KOPT_E_LLM, "cannot reach %s: libcurl could not create a handle", display);
    }
    http_sink sink = {.body = KBUF_INIT, .too_big = 0, .retry_after_s = -1};
    struct curl_slist *hl = NULL;
    for (size_t i = 0; rq->headers && rq->headers[i]; i++) hl = curl_slist_append(hl, rq->headers[i]);
    hl = curl_slist_append(hl, "Expect:");   /* no 100-continue round trip */
    char *noproxy = http_noproxy();
    char errbuf[CURL_ERROR_SIZE];
    errbuf[0] = '\0';

    curl_easy_setopt(h, CURLOPT_URL, rq->url);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(rq->body ? rq->body_len : 0));
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, http_on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, http_on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &sink);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000.0));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(ctimeout * 1000.0));
    curl_easy_setopt(h, CURLOPT_NOPROXY, noproxy);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);   /* never resend headers (keys) elsewhere */
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");   /* whatever libcurl can decode */
    curl_easy_setopt(h, CURLOPT_USERAGENT, "kernelopt/1");

    double t0 = clock_now();
    CURLcode cr = curl_easy_perform(h);
    out->elapsed_s = clock_now() - t0;

    if (cr == CURLE_OK) {
        long status = 0;
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
        out->status = status;
        out->fail = LLM_HTTP_OK;
        out->retry_after_s = sink.retry_after_s;
        rc = 0;
    } else {
        out->fail = sink.too_big ? LLM_HTTP_OTHER : http_classify(cr);
        const char *why = errbuf[0] ? errbuf : curl_easy_strerror(cr);
        switch (out->fail) {
        case LLM_HTTP_CONNECT:
            rc = kerr_set(e, KOPT_E_LLM, "cannot reach %s: %s", display, why);
            break;
        case LLM_HTTP_TIMEOUT:
            rc = kerr_set(e, KOPT_E_LLM, "cannot reach %s: no complete answer within %.3g s (timeout)",
                          display, timeout);
            break;
        case LLM_HTTP_TRUNCATED:
            rc = kerr_set(e, KOPT_E_LLM, "the answer from %s was cut short: %s", display, why);
            break;
        default:
            if (sink.too_big)
                rc = kerr_set(e, KOPT_E_LLM, "the answer from %s exceeds %zu MiB", display,
                              HTTP_MAX_BODY >> 20);
            else
                rc = kerr_set(e, KOPT_E_LLM, "cannot reach %s: %s", display, why);
        }
    }
    out->body_len = sink.body.len;
    out->body = kbuf_steal(&sink.body);
    curl_slist_free_all(hl);
    curl_easy_cleanup(h);
    free(noproxy);
    return rc;
}
