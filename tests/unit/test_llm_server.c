/* test_llm_server.c — llm/client and llm/agent_llm against tests/llm/scripted_server.py, a
 * scripted OpenAI/Anthropic endpoint started on loopback for each test and killed after it.
 * Every timeout here is <= 2 s so the suites stay fast. (No Criterion .timeout: it leaks in
 * Criterion's runner under LeakSanitizer; every wait here is bounded by curl's timeouts and the
 * server's own idle exit.) */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agents/agent.h"
#include "llm/agent_llm.h"
#include "llm/client.h"
#include "testutil.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

#define KEY_ENV "KOPT_TEST_LLM_KEY"
#define GOOD_KEY "sk-test-good-key-0123456789"

static char *g_dir;
static pid_t g_pid = -1;
static int g_port;
static int g_out = -1;          /* read end of the server's stdout */
static char *g_log;

static void ls_setup(void) {
    if (!getenv("KOPT_LOG")) log_set_level(LOG_QUIET);
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-llm", &g_dir, &e), 0, "%s", e.msg);
    g_log = fs_join(g_dir, "requests.jsonl");
    setenv(KEY_ENV, GOOD_KEY, 1);
    unsetenv("OPENAI_BASE_URL");
    unsetenv("ANTHROPIC_BASE_URL");
}

static void ls_stop(void) {
    if (g_pid > 0) {
        kill(g_pid, SIGTERM);
        int st;
        while (waitpid(g_pid, &st, 0) < 0 && errno == EINTR) {}
        g_pid = -1;
    }
    if (g_out >= 0) close(g_out);
    g_out = -1;
}

static void ls_teardown(void) {
    ls_stop();
    fs_rmtree(g_dir);
    free(g_dir);
    free(g_log);
}

TestSuite(llm_client, .init = ls_setup, .fini = ls_teardown);
TestSuite(llm_agent, .init = ls_setup, .fini = ls_teardown);

static double ls_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Start the server with this script (a JSON list of steps); sets g_port. */
static void ls_start(const char *steps) {
    char *script = fs_join(g_dir, "script.json");
    kerr e = {0};
    cr_assert_eq(fs_write(script, steps, strlen(steps), &e), 0, "%s", e.msg);
    char *server = tu_fixture_path("tests/llm/scripted_server.py");
    cr_assert(fs_exists(server), "%s missing (set KOPT_ROOT)", server);
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    char parent[32];
    snprintf(parent, sizeof parent, "%d", (int)getpid());
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(pfd[1], 1);
        close(pfd[0]);
        close(pfd[1]);
        execlp("python3", "python3", server, "--script", script, "--log", g_log, "--idle", "30", "--parent", parent,
               "--max-requests", "40", (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    g_pid = pid;
    g_out = pfd[0];
    free(server);
    free(script);
    char line[64];
    size_t n = 0;
    double deadline = ls_now() + 15;
    while (n < sizeof line - 1) {
        struct pollfd p = {.fd = g_out, .events = POLLIN};
        int left = (int)((deadline - ls_now()) * 1000);
        cr_assert(left > 0 && poll(&p, 1, left) == 1, "the scripted server did not start");
        ssize_t r = read(g_out, line + n, 1);
        cr_assert(r == 1, "the scripted server exited before printing its port");
        if (line[n] == '\n') break;
        n++;
    }
    line[n] = '\0';
    g_port = atoi(line);
    cr_assert(g_port > 0, "bad port line '%s'", line);
}

/* A port nothing listens on. */
static int ls_closed_port(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    getsockname(s, (struct sockaddr *)&a, &l);
    close(s);
    return ntohs(a.sin_port);
}

static llm_config ls_cfg(llm_backend b, int port) {
    llm_config c;
    llm_config_init(&c);
    c.backend = b;
    c.model = kstrdup("test-model");
    c.base_url = b == LLM_BACKEND_OPENAI ? kasprintf("http://127.0.0.1:%d/v1", port)
                                         : kasprintf("http://127.0.0.1:%d", port);
    c.api_key_env = kstrdup(KEY_ENV);
    c.timeout_s = 2;
    c.connect_timeout_s = 1;
    c.backoff_s = 0.01;
    c.max_retries = 2;
    return c;
}

static llm_client *ls_client_cfg(llm_config *c) {
    llm_client *cl = NULL;
    kerr e = {0};
    cr_assert_eq(llm_client_new(c, &cl, &e), 0, "%s", e.msg);
    llm_config_free(c);
    return cl;
}

static llm_client *ls_client(llm_backend b) {
    llm_config c = ls_cfg(b, g_port);
    return ls_client_cfg(&c);
}

/* The requests the server received, as a JSON array (new reference). */
static json_t *ls_requests(void) {
    json_t *arr = json_array();
    FILE *f = fopen(g_log, "r");
    if (!f) return arr;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        cr_assert_not_null(j, "bad log line: %s", je.text);
        json_array_append_new(arr, j);
    }
    free(line);
    fclose(f);
    return arr;
}

static const char *ls_msg(const json_t *req, int i) {   /* i < 0: from the end */
    const json_t *msgs = json_object_get(json_object_get(req, "body"), "messages");
    size_t n = json_array_size(msgs);
    size_t k = i < 0 ? n - (size_t)(-i) : (size_t)i;
    return json_string_value(json_object_get(json_array_get(msgs, k), "content"));
}

static int ls_chat(llm_client *c, llm_reply *r, kerr *e) {
    llm_message m[1] = {{LLM_USER, "Say hello."}};
    return llm_chat(c, m, 1, "You are terse.", r, e);
}

/* ================================================================== client */

Test(llm_client, openai_answer_and_accounting) {
    ls_start("[{\"reply\":\"Hello there\",\"tokens\":[12,3]}]");
    llm_config c = ls_cfg(LLM_BACKEND_OPENAI, g_port);
    c.price_in_per_mtok = 1.0;
    c.price_out_per_mtok = 2.0;
    llm_client *cl = ls_client_cfg(&c);
    cr_assert_str_eq(llm_client_name(cl), "openai:test-model");
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(ls_chat(cl, &r, &e), 0, "%s", e.msg);
    cr_assert_str_eq(r.text, "Hello there");
    cr_assert_eq(r.tokens_in, 12);
    cr_assert_eq(r.tokens_out, 3);
    cr_assert_eq(r.attempts, 1);
    cr_assert_str_eq(r.finish_reason, "stop");
    cr_assert_float_eq(r.cost_usd, 12e-6 + 6e-6, 1e-12);
    cr_assert(r.latency_s > 0 && r.latency_s < 2);
    llm_reply_free(&r);
    llm_client_free(cl);
    json_t *reqs = ls_requests();
    cr_assert_eq(json_array_size(reqs), 1);
    json_t *q = json_array_get(reqs, 0);
    cr_assert_str_eq(json_string_value(json_object_get(q, "path")), "/v1/chat/completions");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(q, "headers"), "authorization")), "[redacted]");
    json_t *body = json_object_get(q, "body");
    cr_assert_str_eq(json_string_value(json_object_get(body, "model")), "test-model");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(body, "messages"), 0), "role")),
                     "system");
    cr_assert_str_eq(ls_msg(q, 0), "You are terse.");
    cr_assert_str_eq(ls_msg(q, 1), "Say hello.");
    json_decref(reqs);
}

Test(llm_client, anthropic_answer_and_headers) {
    ls_start("[{\"reply\":\"Bonjour\",\"tokens\":[20,4],\"finish\":\"end_turn\"}]");
    llm_client *cl = ls_client(LLM_BACKEND_ANTHROPIC);
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(ls_chat(cl, &r, &e), 0, "%s", e.msg);
    cr_assert_str_eq(r.text, "Bonjour");
    cr_assert_eq(r.tokens_in, 20);
    cr_assert_eq(r.tokens_out, 4);
    cr_assert_eq(r.truncated, 0);
    llm_reply_free(&r);
    llm_client_free(cl);
    json_t *reqs = ls_requests();
    json_t *q = json_array_get(reqs, 0);
    cr_assert_str_eq(json_string_value(json_object_get(q, "path")), "/v1/messages");
    json_t *h = json_object_get(q, "headers");
    cr_assert_str_eq(json_string_value(json_object_get(h, "anthropic-version")), "2023-06-01");
    cr_assert_str_eq(json_string_value(json_object_get(h, "x-api-key")), "[redacted]");
    cr_assert_null(json_object_get(h, "authorization"));
    json_t *body = json_object_get(q, "body");
    cr_assert_str_eq(json_string_value(json_object_get(body, "system")), "You are terse.");
    cr_assert_eq(json_integer_value(json_object_get(body, "max_tokens")), 8192);
    cr_assert_eq(json_array_size(json_object_get(body, "messages")), 1, "the system prompt is not a message");
    json_decref(reqs);
}

Test(llm_client, retry_429_honours_retry_after) {
    ls_start("[{\"status\":429,\"headers\":{\"Retry-After\":\"1\"}},{\"reply\":\"ok\"}]");
    llm_client *cl = ls_client(LLM_BACKEND_OPENAI);
    llm_reply r;
    kerr e = {0};
    double t0 = ls_now();
    cr_assert_eq(ls_chat(cl, &r, &e), 0, "%s", e.msg);
    double dt = ls_now() - t0;
    cr_assert_str_eq(r.text, "ok");
    cr_assert_eq(r.attempts, 2);
    cr_assert(dt >= 0.95, "Retry-After: 1 not honoured (%.3f s; backoff alone is 0.01 s)", dt);
    cr_assert(r.latency_s >= 0.95);
    llm_reply_free(&r);
    llm_client_free(cl);
    json_t *reqs = ls_requests();
    cr_assert_eq(json_array_size(reqs), 2);
    json_decref(reqs);
}

Test(llm_client, retry_500_then_success) {
    ls_start("[{\"status\":500},{\"status\":503},{\"reply\":\"fine\",\"tokens\":[1,1]}]");
    llm_client *cl = ls_client(LLM_BACKEND_ANTHROPIC);
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(ls_chat(cl, &r, &e), 0, "%s", e.msg);
    cr_assert_str_eq(r.text, "fine");
    cr_assert_eq(r.attempts, 3);
    llm_reply_free(&r);
    llm_client_free(cl);
}

Test(llm_client, retries_exhausted) {
    ls_start("[{\"status\":500},{\"status\":502},{\"status\":500},{\"reply\":\"too late\"}]");
    llm_client *cl = ls_client(LLM_BACKEND_OPENAI);   /* max_retries 2 */
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM);
    cr_assert(strstr(e.msg, "HTTP 500 after 3 attempts"), "%s", e.msg);
    cr_assert_eq(r.attempts, 3);
    cr_assert_null(r.text);
    llm_client_free(cl);
    json_t *reqs = ls_requests();
    cr_assert_eq(json_array_size(reqs), 3);
    json_decref(reqs);
}

Test(llm_client, stall_past_timeout_fails_in_time) {
    ls_start("[{\"stall_s\":6}]");
    llm_config c = ls_cfg(LLM_BACKEND_OPENAI, g_port);
    c.timeout_s = 1;
    c.max_retries = 0;
    llm_client *cl = ls_client_cfg(&c);
    llm_reply r;
    kerr e = {0};
    double t0 = ls_now();
    cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM);
    double dt = ls_now() - t0;
    cr_assert(dt >= 0.9 && dt < 3.5, "error after %.2f s, expected ~1 s", dt);
    cr_assert(strstr(e.msg, "timeout"), "%s", e.msg);
    cr_assert(strstr(e.msg, "127.0.0.1"), "%s", e.msg);
    llm_client_free(cl);
}

Test(llm_client, stall_then_retry_succeeds) {
    ls_start("[{\"stall_s\":4},{\"reply\":\"after the stall\"}]");
    llm_config c = ls_cfg(LLM_BACKEND_ANTHROPIC, g_port);
    c.timeout_s = 1;
    c.max_retries = 1;
    llm_client *cl = ls_client_cfg(&c);
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(ls_chat(cl, &r, &e), 0, "%s", e.msg);
    cr_assert_str_eq(r.text, "after the stall");
    cr_assert_eq(r.attempts, 2);
    llm_reply_free(&r);
    llm_client_free(cl);
}

Test(llm_client, truncated_body) {
    ls_start("[{\"truncate\":true},{\"truncate\":true},{\"reply\":\"whole\"}]");
    llm_config c = ls_cfg(LLM_BACKEND_OPENAI, g_port);
    c.max_retries = 0;
    llm_client *cl = ls_client_cfg(&c);
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM);
    cr_assert(strstr(e.msg, "cut short"), "%s", e.msg);
    llm_client_free(cl);
    /* with retries, a cut-short answer is retried */
    c = ls_cfg(LLM_BACKEND_OPENAI, g_port);
    cl = ls_client_cfg(&c);
    cr_assert_eq(ls_chat(cl, &r, &e), 0, "%s", e.msg);
    cr_assert_str_eq(r.text, "whole");
    cr_assert_eq(r.attempts, 2);
    llm_reply_free(&r);
    llm_client_free(cl);
}

Test(llm_client, wrong_key_is_clear_and_never_shown) {
    const char *wrong = "sk-WRONG-secret-value-987654321";
    setenv(KEY_ENV, wrong, 1);
    ls_start("[{\"require_key\":\"" GOOD_KEY "\"},{\"require_key\":\"" GOOD_KEY "\"}]");
    for (int b = LLM_BACKEND_OPENAI; b <= LLM_BACKEND_ANTHROPIC; b++) {
        llm_client *cl = ls_client((llm_backend)b);
        llm_reply r;
        kerr e = {0};
        cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM);
        cr_assert(strstr(e.msg, "the API key was refused (set " KEY_ENV ")"), "%s", e.msg);
        cr_assert_null(strstr(e.msg, wrong), "the key leaked: %s", e.msg);
        cr_assert_null(strstr(e.msg, "987654321"), "part of the key leaked: %s", e.msg);
        cr_assert(strstr(e.msg, "Incorrect API key provided"), "the server's message is kept: %s", e.msg);
        cr_assert_eq(r.attempts, 1, "a refused key is not retried");
        llm_client_free(cl);
    }
}

Test(llm_client, right_key_accepted) {
    ls_start("[{\"require_key\":\"" GOOD_KEY "\",\"reply\":\"in\"}]");
    llm_client *cl = ls_client(LLM_BACKEND_OPENAI);
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(ls_chat(cl, &r, &e), 0, "%s", e.msg);
    cr_assert_str_eq(r.text, "in");
    llm_reply_free(&r);
    llm_client_free(cl);
}

Test(llm_client, unknown_model_both_apis) {
    ls_start("[{\"model_unknown\":true},{\"model_unknown\":true}]");
    for (int b = LLM_BACKEND_OPENAI; b <= LLM_BACKEND_ANTHROPIC; b++) {
        llm_client *cl = ls_client((llm_backend)b);
        llm_reply r;
        kerr e = {0};
        cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM);
        cr_assert(strstr(e.msg, "unknown model test-model"), "%s", e.msg);
        cr_assert_eq(r.attempts, 1);
        llm_client_free(cl);
    }
}

Test(llm_client, unreachable_endpoint) {
    int port = ls_closed_port();
    llm_config c = ls_cfg(LLM_BACKEND_OPENAI, port);
    llm_client *cl = ls_client_cfg(&c);   /* max_retries 2, backoff 10 ms */
    llm_reply r;
    kerr e = {0};
    double t0 = ls_now();
    cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM);
    cr_assert(ls_now() - t0 < 2, "a refused connection must fail fast");
    char want[128];
    snprintf(want, sizeof want, "cannot reach http://127.0.0.1:%d/v1", port);
    cr_assert(strstr(e.msg, want), "%s", e.msg);
    cr_assert_eq(r.attempts, 3, "connection failures are retried");
    cr_assert_eq(llm_check(cl, &r, &e), KOPT_E_LLM);
    cr_assert(strstr(e.msg, "openai:test-model"), "%s", e.msg);
    cr_assert_eq(r.attempts, 1, "llm check does not retry");
    llm_client_free(cl);
}

Test(llm_client, malformed_and_exhausted_answers) {
    ls_start("[{\"status\":200,\"raw\":\"{not json at all\"},{\"status\":200,\"body\":{\"choices\":[]}}]");
    llm_client *cl = ls_client(LLM_BACKEND_OPENAI);
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM);
    cr_assert(strstr(e.msg, "malformed answer"), "%s", e.msg);
    cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM);
    cr_assert(strstr(e.msg, "no choices[0].message"), "%s", e.msg);
    cr_assert_eq(ls_chat(cl, &r, &e), KOPT_E_LLM, "script exhausted: 418");
    cr_assert(strstr(e.msg, "HTTP 418"), "%s", e.msg);
    cr_assert_eq(r.attempts, 1, "a 4xx is not retried");
    llm_client_free(cl);
}

Test(llm_client, check_sends_one_token_request) {
    ls_start("[{\"reply\":\"OK\",\"tokens\":[9,1],\"finish\":\"length\"}]");
    llm_client *cl = ls_client(LLM_BACKEND_OPENAI);
    llm_reply r;
    kerr e = {0};
    cr_assert_eq(llm_check(cl, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.tokens_in, 9);
    cr_assert_eq(r.truncated, 1);
    llm_reply_free(&r);
    llm_client_free(cl);
    json_t *reqs = ls_requests();
    json_t *body = json_object_get(json_array_get(reqs, 0), "body");
    cr_assert_eq(json_integer_value(json_object_get(body, "max_tokens")), 1);
    json_decref(reqs);
}

Test(llm_client, missing_key_for_official_endpoint) {
    unsetenv(KEY_ENV);
    llm_config c;
    llm_config_init(&c);
    c.backend = LLM_BACKEND_ANTHROPIC;
    c.model = kstrdup("claude-x");
    c.api_key_env = kstrdup(KEY_ENV);
    llm_client *cl = NULL;
    kerr e = {0};
    cr_assert_eq(llm_client_new(&c, &cl, &e), KOPT_E_LLM);
    cr_assert_null(cl);
    cr_assert(strstr(e.msg, "set " KEY_ENV), "%s", e.msg);
    /* a local server needs none */
    free(c.base_url);
    c.base_url = kstrdup("http://127.0.0.1:1");
    cr_assert_eq(llm_client_new(&c, &cl, &e), 0, "%s", e.msg);
    llm_client_free(cl);
    llm_config_free(&c);
}

typedef struct ls_job {
    llm_client *cl;
    int rc;
} ls_job;

static void *ls_thread(void *arg) {
    ls_job *j = arg;
    llm_reply r;
    kerr e = {0};
    j->rc = ls_chat(j->cl, &r, &e);
    llm_reply_free(&r);
    return NULL;
}

Test(llm_client, concurrency_limit) {
    ls_start("[{\"reply\":\"a\",\"delay_s\":0.6},{\"reply\":\"b\",\"delay_s\":0.6},"
             "{\"reply\":\"c\",\"delay_s\":0.6},{\"reply\":\"d\",\"delay_s\":0.6}]");
    llm_config c = ls_cfg(LLM_BACKEND_OPENAI, g_port);
    c.max_concurrency = 2;
    llm_client *cl = ls_client_cfg(&c);
    pthread_t th[4];
    ls_job jobs[4];
    double t0 = ls_now();
    for (int i = 0; i < 4; i++) {
        jobs[i] = (ls_job){cl, -1};
        pthread_create(&th[i], NULL, ls_thread, &jobs[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    double dt = ls_now() - t0;
    for (int i = 0; i < 4; i++) cr_assert_eq(jobs[i].rc, 0);
    cr_assert(dt >= 1.15, "4 calls of 0.6 s, 2 at a time, took %.2f s", dt);
    llm_client_free(cl);
}

/* ================================================================== agents */

static const char *GOOD_CODE_ANSWER =
    "Here is the one-pass kernel.\\n\\n```python\\nimport triton\\nimport triton.language as tl\\n\\n"
    "@triton.jit\\ndef _k(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\\n    pass\\n\\n"
    "def launch(in_ptr0, out_ptr0, xnumel, stream=None):\\n    _k[(1,)](in_ptr0, out_ptr0, xnumel, XBLOCK=1024)\\n```\\n";

static json_t *ls_kernel(void) {
    return json_pack("{s:s, s:s, s:s, s:[s,s], s:{s:i}, s:[{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s},{s:s,s:s,s:s}],"
                     " s:s}",
                     "name", "triton_per_fused_softmax_0", "kind", "persistent_reduction", "source",
                     "@triton.jit\ndef triton_per_fused_softmax_0(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n"
                     "    ORIGINAL_BODY_MARKER\n",
                     "aten_ops", "aten._softmax", "aten.exp", "size_hints", "x", 4096, "signature", "name", "in_ptr0",
                     "type", "*fp32", "role", "in", "name", "out_ptr0", "type", "*fp32", "role", "out", "name", "xnumel",
                     "type", "i32", "role", "scalar", "name", "XBLOCK", "type", "constexpr", "role", "constexpr",
                     "grid_type", "Grid1D");
}

static json_t *ls_exec_ctx(const char *direction) {
    return json_pack("{s:o, s:{s:s, s:{s:i}, s:s}}", "kernel", ls_kernel(), "plan", "direction", direction, "params",
                     "R0_BLOCK", 4096, "rationale", "read the row once");
}

typedef struct ls_seen {
    int calls, ok;
    long tokens_in;
    double cost;
    char error[1024];
    char backend[32];
} ls_seen;

static void ls_observe(const llm_call_info *ci, void *ctx) {
    ls_seen *s = ctx;
    s->calls++;
    s->ok += ci->ok;
    s->tokens_in += ci->tokens_in;
    s->cost = ci->cost_usd;
    snprintf(s->error, sizeof s->error, "%s", ci->error ? ci->error : "");
    snprintf(s->backend, sizeof s->backend, "%s", ci->backend);
}

/* The client is borrowed by the agent: keep it to free after the agent. */
static llm_client *g_cl;
static agent *ls_agent_keep(agent_role role, llm_backend b) {
    g_cl = ls_client(b);
    char *dir = tu_fixture_path("prompts/v1");
    kerr e = {0};
    agent *a = agent_llm_create(role, g_cl, dir, &e);
    free(dir);
    cr_assert_not_null(a, "%s", e.msg);
    return a;
}

static void ls_agent_free(agent *a) {
    agent_free(a);
    llm_client_free(g_cl);
    g_cl = NULL;
}

Test(llm_agent, builtin_roles_refused) {
    llm_config c = ls_cfg(LLM_BACKEND_OPENAI, 1);
    llm_client *cl = ls_client_cfg(&c);
    kerr e = {0};
    cr_assert_null(agent_llm_create(AGENT_PROFILER, cl, NULL, &e));
    cr_assert_eq(e.code, KOPT_E_USAGE);
    cr_assert(strstr(e.msg, "profiler"), "%s", e.msg);
    cr_assert_null(agent_llm_create(AGENT_ANALYST, cl, NULL, &e));
    cr_assert_null(agent_llm_create(AGENT_PLANNER, cl, "/nonexistent/prompts", &e));
    cr_assert_eq(e.code, KOPT_E_NOFILE);
    llm_client_free(cl);
}

Test(llm_agent, planner_plans_from_prose_and_accounting) {
    ls_start("[{\"reply\":\"Looking at the numbers, the kernel reads the row twice.\\n```json\\n"
             "{\\\"plans\\\":[{\\\"direction\\\":\\\"one_pass\\\",\\\"params\\\":{\\\"R0_BLOCK\\\":4096},"
             "\\\"rationale\\\":\\\"one read\\\"},{\\\"direction\\\":\\\"launch_config\\\"},"
             "{\\\"direction\\\":\\\"split\\\"},{\\\"params\\\":{}}]}\\n```\\nGood luck!\",\"tokens\":[1500,120]}]");
    agent *a = ls_agent_keep(AGENT_PLANNER, LLM_BACKEND_OPENAI);
    ls_seen seen = {0};
    agent_llm_set_observer(a, ls_observe, &seen);
    cr_assert(agent_is_llm(a));
    cr_assert_str_eq(a->name, "openai:test-model");
    json_t *ctx = json_pack("{s:o, s:{s:s, s:f, s:f, s:f}, s:[{s:{s:s, s:{s:i}}, s:s, s:i, s:s}], s:s, s:{s:i}}",
                            "kernel", ls_kernel(), "analysis", "class", "memory-bound", "share", 0.42,
                            "frac_of_ceiling", 0.31, "time_ms", 0.12, "history", "plan", "direction", "launch_config",
                            "params", "XBLOCK", 8, "outcome", "refused", "gate", 2, "reason",
                            "HISTORY_REASON_MARKER mismatch at [3, 17]", "vendor_calls", "fixed: never targets",
                            "budget", "candidates_left", 2);
    json_array_append_new(json_object_get(ctx, "history"),
                          json_pack("{s:{s:i}, s:f, s:s}", "config", "XBLOCK", 64, "kernel_ms", 0.0123, "outcome", "screened"));
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    json_t *plans = json_object_get(out, "plans");
    cr_assert_eq(json_array_size(plans), 2, "trimmed to the budget");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(plans, 0), "direction")), "one_pass");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(json_array_get(plans, 0), "params"), "R0_BLOCK")),
                 4096);
    cr_assert(json_is_object(json_object_get(json_array_get(plans, 1), "params")), "params defaulted");
    cr_assert_eq(seen.calls, 1);
    cr_assert_eq(seen.ok, 1);
    cr_assert_eq(seen.tokens_in, 1500);
    cr_assert(isnan(seen.cost), "no price configured: cost unknown");
    json_t *acct = json_object_get(out, "_llm");
    cr_assert(json_is_null(json_object_get(acct, "cost_usd")));
    cr_assert_eq(json_integer_value(json_object_get(acct, "tokens_in")), 1500);
    cr_assert_eq(json_integer_value(json_object_get(acct, "tokens_out")), 120);
    llm_usage u;
    cr_assert_eq(agent_llm_usage(a, &u), 0);
    cr_assert_eq(u.calls, 1);
    cr_assert_eq(u.tokens_in, 1500);
    cr_assert_eq(u.tokens_out, 120);
    cr_assert(u.latency_s > 0);
    json_decref(out);
    json_decref(ctx);
    ls_agent_free(a);
    json_t *reqs = ls_requests();
    const char *prompt = ls_msg(json_array_get(reqs, 0), -1);
    const char *sys = ls_msg(json_array_get(reqs, 0), 0);
    cr_assert(strstr(sys, "planner of kernelopt"), "%s", sys);
    cr_assert(strstr(prompt, "triton_per_fused_softmax_0"), "kernel name");
    cr_assert(strstr(prompt, "ORIGINAL_BODY_MARKER"), "kernel source");
    cr_assert(strstr(prompt, "aten._softmax, aten.exp"), "ATen ops");
    cr_assert(strstr(prompt, "memory-bound"), "bottleneck class");
    cr_assert(strstr(prompt, "HISTORY_REASON_MARKER"), "history");
    cr_assert(strstr(prompt, "refused at gate 2"), "history outcome");
    cr_assert(strstr(prompt, "2. attempt {\"XBLOCK\":64}: screened, kernel 0.0123 ms"), "history row:\n%s", prompt);
    cr_assert(strstr(prompt, "fixed: never targets"), "vendor calls");
    cr_assert(strstr(prompt, "torch.matmul"), "contract summary");
    cr_assert(strstr(prompt, "up to 2 distinct plans"), "budget");
    cr_assert_null(strstr(prompt, "{{"), "unfilled placeholder in:\n%s", prompt);
    json_decref(reqs);
    int agent_llm_usage_rc = agent_llm_usage(NULL, &u);
    cr_assert_neq(agent_llm_usage_rc, 0);
}

Test(llm_agent, planner_repairs_malformed_json) {
    ls_start("[{\"reply\":\"Sure! {\\\"plans\\\": [{\\\"direction\\\": \\\"one_pass\\\"\",\"finish\":\"length\"},"
             "{\"reply\":\"{\\\"plans\\\":[{\\\"direction\\\":\\\"split\\\"}]}\"}]");
    agent *a = ls_agent_keep(AGENT_PLANNER, LLM_BACKEND_ANTHROPIC);
    json_t *ctx = json_pack("{s:o}", "kernel", ls_kernel());
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(out, "plans"), 0), "direction")),
                     "split");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(out, "_llm"), "calls")), 2);
    json_decref(out);
    json_decref(ctx);
    ls_agent_free(a);
    json_t *reqs = ls_requests();
    cr_assert_eq(json_array_size(reqs), 2);
    json_t *q = json_array_get(reqs, 1);
    cr_assert_eq(json_array_size(json_object_get(json_object_get(q, "body"), "messages")), 3);
    cr_assert(strstr(ls_msg(q, -1), "never closed"), "%s", ls_msg(q, -1));
    cr_assert(strstr(ls_msg(q, -2), "Sure!"), "the bad answer is in the conversation");
    json_decref(reqs);
}

Test(llm_agent, planner_gives_up_after_repairs) {
    ls_start("[{\"reply\":\"no idea\"},{\"reply\":\"{\\\"plans\\\": [{\\\"rationale\\\": \\\"r\\\"}]}\"},"
             "{\"reply\":\"{\\\"x\\\":1}\"}]");
    agent *a = ls_agent_keep(AGENT_PLANNER, LLM_BACKEND_OPENAI);
    json_t *ctx = json_pack("{s:o}", "kernel", ls_kernel());
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), KOPT_E_LLM);
    cr_assert_null(out);
    cr_assert(strstr(e.msg, "after 3 tries"), "%s", e.msg);
    cr_assert(strstr(e.msg, "\"plans\""), "%s", e.msg);
    llm_usage u;
    agent_llm_usage(a, &u);
    cr_assert_eq(u.calls, 3);
    json_decref(ctx);
    ls_agent_free(a);
}

Test(llm_agent, planner_empty_list_is_an_answer) {
    ls_start("[{\"reply\":\"Nothing left worth trying: {\\\"plans\\\": []}\"}]");
    agent *a = ls_agent_keep(AGENT_PLANNER, LLM_BACKEND_OPENAI);
    json_t *ctx = json_pack("{s:o}", "kernel", ls_kernel());
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    cr_assert_eq(json_array_size(json_object_get(out, "plans")), 0);
    cr_assert_not_null(json_object_get(out, "why"));
    llm_usage u;
    agent_llm_usage(a, &u);
    cr_assert_eq(u.calls, 1);   /* no repair turn */
    json_decref(out);
    json_decref(ctx);
    ls_agent_free(a);
}

Test(llm_agent, executor_candidate) {
    char steps[2048];
    snprintf(steps, sizeof steps, "[{\"reply\":\"%s\",\"tokens\":[3000,400]}]", GOOD_CODE_ANSWER);
    ls_start(steps);
    agent *a = ls_agent_keep(AGENT_EXECUTOR, LLM_BACKEND_ANTHROPIC);
    json_t *ctx = ls_exec_ctx("one_pass");
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    json_t *c0 = json_array_get(json_object_get(out, "candidates"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(c0, "label")), "llm-one_pass-1");
    const char *src = json_string_value(json_object_get(c0, "source"));
    cr_assert(src && strstr(src, "def launch(in_ptr0, out_ptr0, xnumel, stream=None):"), "%s", src);
    cr_assert_null(strstr(src, "```"));
    json_decref(out);
    json_decref(ctx);
    ls_agent_free(a);
    json_t *reqs = ls_requests();
    const char *prompt = ls_msg(json_array_get(reqs, 0), -1);
    cr_assert(strstr(prompt, "\"params\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\"],"), "the plan's parameters:\n%s", prompt);
    cr_assert(strstr(prompt, "KOPT_PLAN = {"), "the form-P contract:\n%s", prompt);
    cr_assert(strstr(prompt, "read the row once"), "plan");
    cr_assert(strstr(prompt, "torch.matmul"), "contract summary");
    json_decref(reqs);
}

Test(llm_agent, executor_broken_answer_then_retry) {
    char steps[2048];
    snprintf(steps, sizeof steps,
             "[{\"reply\":\"I would increase the block size; that should help.\"},{\"reply\":\"%s\"}]",
             GOOD_CODE_ANSWER);
    ls_start(steps);
    agent *a = ls_agent_keep(AGENT_EXECUTOR, LLM_BACKEND_OPENAI);
    json_t *ctx = ls_exec_ctx("launch_config");
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    cr_assert_eq(json_array_size(json_object_get(out, "candidates")), 0);
    cr_assert(strstr(json_string_value(json_object_get(out, "error")), "no ```python code block"));
    cr_assert(json_is_true(json_object_get(out, "retry")));
    json_decref(out);
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    cr_assert_eq(json_array_size(json_object_get(out, "candidates")), 1);
    json_decref(out);
    json_decref(ctx);
    ls_agent_free(a);
    json_t *reqs = ls_requests();
    cr_assert_eq(json_array_size(reqs), 2);
    json_t *q = json_array_get(reqs, 1);
    cr_assert_eq(json_array_size(json_object_get(json_object_get(q, "body"), "messages")), 4,
                 "system, task, bad answer, feedback");
    cr_assert(strstr(ls_msg(q, -2), "increase the block size"));
    cr_assert(strstr(ls_msg(q, -1), "could not be used: the answer has no ```python code block"), "%s",
              ls_msg(q, -1));
    json_decref(reqs);
}

Test(llm_agent, executor_gate_feedback_is_sent_verbatim) {
    char steps[4096];
    snprintf(steps, sizeof steps, "[{\"reply\":\"%s\"},{\"reply\":\"%s\"},{\"reply\":\"%s\"}]", GOOD_CODE_ANSWER,
             GOOD_CODE_ANSWER, GOOD_CODE_ANSWER);
    ls_start(steps);
    agent *a = ls_agent_keep(AGENT_EXECUTOR, LLM_BACKEND_OPENAI);
    json_t *ctx = ls_exec_ctx("one_pass");
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    json_decref(out);
    json_t *fb = json_pack("{s:s, s:i, s:s}", "candidate", "llm-one_pass-1", "gate", 1, "reason",
                           "CompilationError: at 7:12: NameError('tl.fooo is not defined')");
    cr_assert_eq(agent_feedback(a, fb, &e), 0, "%s", e.msg);
    json_decref(fb);
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "label")),
                     "llm-one_pass-2");
    json_decref(out);
    fb = json_pack("{s:s, s:i, s:s, s:{s:{s:f, s:f, s:f}}}", "candidate", "llm-one_pass-2", "gate", 4, "reason",
                   "not faster: speedup 0.980x", "figures", "speedup", "estimate", 0.98, "ci95_lo", 0.97, "ci95_hi",
                   0.99);
    cr_assert_eq(agent_feedback(a, fb, &e), 0, "%s", e.msg);
    json_decref(fb);
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    json_decref(out);
    json_decref(ctx);
    ls_agent_free(a);
    json_t *reqs = ls_requests();
    cr_assert_eq(json_array_size(reqs), 3);
    const char *fb1 = ls_msg(json_array_get(reqs, 1), -1);
    cr_assert(strstr(fb1, "CompilationError: at 7:12: NameError('tl.fooo is not defined')"), "%s", fb1);
    cr_assert(strstr(fb1, "gate 1"), "%s", fb1);
    const char *fb2 = ls_msg(json_array_get(reqs, 2), -1);
    cr_assert(strstr(fb2, "correct but not faster: not faster: speedup 0.980x"), "%s", fb2);
    cr_assert(strstr(fb2, "0.980x (95% CI [0.970, 0.990])"), "%s", fb2);
    cr_assert(strstr(fb2, "Try keeping the single pass"), "direction-specific hint: %s", fb2);
    cr_assert_eq(json_array_size(json_object_get(json_object_get(json_array_get(reqs, 2), "body"), "messages")), 6);
    json_decref(reqs);
}

Test(llm_agent, executor_correctness_feedback_and_retry_limit) {
    char steps[4096];
    snprintf(steps, sizeof steps, "[{\"reply\":\"%s\"},{\"reply\":\"%s\"},{\"reply\":\"%s\"}]", GOOD_CODE_ANSWER,
             GOOD_CODE_ANSWER, GOOD_CODE_ANSWER);
    ls_start(steps);
    agent *a = ls_agent_keep(AGENT_EXECUTOR, LLM_BACKEND_ANTHROPIC);
    agent_llm_set_max_retries(a, 1);
    json_t *ctx = ls_exec_ctx("split");
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    json_decref(out);
    json_t *fb = json_pack("{s:s, s:i, s:s, s:{s:f, s:i}}", "candidate", "llm-split-1", "gate", 2, "reason",
                           "set seed1, out_ptr0: 12 mismatches, max abs err 0.5 at [0, 3]", "figures", "max_abs_err",
                           0.5, "mismatches", 12);
    agent_feedback(a, fb, &e);
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "retry 1 of 1: %s", e.msg);
    json_decref(out);
    agent_feedback(a, fb, &e);
    json_decref(fb);
    cr_assert_eq(agent_act(a, ctx, &out, &e), KOPT_E_LLM, "no retry left");
    cr_assert(strstr(e.msg, "after 1 retry"), "%s", e.msg);
    cr_assert(strstr(e.msg, "12 mismatches"), "%s", e.msg);
    json_decref(ctx);
    ls_agent_free(a);
    json_t *reqs = ls_requests();
    cr_assert_eq(json_array_size(reqs), 2, "the give-up makes no request");
    const char *fb1 = ls_msg(json_array_get(reqs, 1), -1);
    cr_assert(strstr(fb1, "12 mismatches, max abs err 0.5"), "%s", fb1);
    cr_assert(strstr(fb1, "max_abs_err: 0.5, mismatches: 12"), "figures: %s", fb1);
    json_decref(reqs);
}

Test(llm_agent, executor_truncated_answer_and_new_task) {
    char steps[4096];
    snprintf(steps, sizeof steps,
             "[{\"reply\":\"```python\\nimport triton\\n@triton.jit\\ndef k(x\",\"finish\":\"length\"},"
             "{\"reply\":\"%s\"}]", GOOD_CODE_ANSWER);
    ls_start(steps);
    agent *a = ls_agent_keep(AGENT_EXECUTOR, LLM_BACKEND_OPENAI);
    json_t *ctx = ls_exec_ctx("one_pass");
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    const char *err = json_string_value(json_object_get(out, "error"));
    cr_assert(err && strstr(err, "token limit") && strstr(err, "cut short"), "%s", err);
    json_decref(out);
    json_decref(ctx);
    /* a different plan starts a fresh conversation, even with feedback pending */
    ctx = ls_exec_ctx("persistent");
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(out, "candidates"), 0), "label")),
                     "llm-persistent-1");
    json_decref(out);
    json_decref(ctx);
    ls_agent_free(a);
    json_t *reqs = ls_requests();
    cr_assert_eq(json_array_size(json_object_get(json_object_get(json_array_get(reqs, 1), "body"), "messages")), 2);
    json_decref(reqs);
}

Test(llm_agent, endpoint_errors_propagate) {
    ls_start("[{\"model_unknown\":true}]");
    agent *a = ls_agent_keep(AGENT_EXECUTOR, LLM_BACKEND_OPENAI);
    ls_seen seen = {0};
    agent_llm_set_observer(a, ls_observe, &seen);
    json_t *ctx = ls_exec_ctx("one_pass");
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), KOPT_E_LLM);
    cr_assert_null(out);
    cr_assert(strstr(e.msg, "unknown model test-model"), "%s", e.msg);
    cr_assert(strstr(e.msg, "executor openai:test-model"), "the agent names itself: %s", e.msg);
    cr_assert_eq(seen.calls, 1);
    cr_assert_eq(seen.ok, 0);
    cr_assert(strstr(seen.error, "unknown model"), "%s", seen.error);
    cr_assert_str_eq(seen.backend, "openai");
    llm_usage u;
    agent_llm_usage(a, &u);
    cr_assert_eq(u.calls, 1);
    cr_assert_eq(u.failed_calls, 1);
    json_decref(ctx);
    ls_agent_free(a);
}

Test(llm_agent, summarizer_experience) {
    ls_start("[{\"reply\":\"{\\\"experience\\\":\\\"One pass beats two on wide rows.\\\",\\\"tags\\\":[\\\"one_pass\\\",7]}\"}]");
    agent *a = ls_agent_keep(AGENT_SUMMARIZER, LLM_BACKEND_OPENAI);
    json_t *ctx = json_pack("{s:{s:s, s:s, s:s, s:s, s:f}}", "attempt", "kernel", "triton_per_fused_softmax_0",
                            "direction", "one_pass", "label", "llm-one_pass-1", "outcome", "accepted", "speedup", 1.31);
    json_t *out = NULL;
    kerr e = {0};
    cr_assert_eq(agent_act(a, ctx, &out, &e), 0, "%s", e.msg);
    cr_assert_str_eq(json_string_value(json_object_get(out, "experience")), "One pass beats two on wide rows.");
    cr_assert_eq(json_array_size(json_object_get(out, "tags")), 1, "non-string tags dropped");
    json_decref(out);
    json_decref(ctx);
    ls_agent_free(a);
    json_t *reqs = ls_requests();
    cr_assert(strstr(ls_msg(json_array_get(reqs, 0), -1), "llm-one_pass-1"));
    json_decref(reqs);
}
