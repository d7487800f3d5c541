/* test_llm_extract.c — llm/: extraction of code and JSON from model output (with a fuzz pass),
 * prompt files and rendering, key redaction, configuration. No server involved. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/client.h"
#include "llm/extract.h"
#include "llm/prompt.h"
#include "testutil.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

static void quiet(void) {
    if (!getenv("KOPT_LOG")) log_set_level(LOG_QUIET);
}

TestSuite(llm_extract, .init = quiet);
TestSuite(llm_prompt, .init = quiet);
TestSuite(llm_redact, .init = quiet);
TestSuite(llm_config, .init = quiet);

/* ------------------------------------------------------------------ fences */

static llm_blocks blocks_of(const char *s, int *rc, kerr *e) {
    llm_blocks b;
    *rc = llm_extract_blocks(s, strlen(s), &b, e);
    return b;
}

Test(llm_extract, backtick_and_tilde_fences) {
    const char *t = "Here:\n```python\nx = 1\n```\nand\n~~~\ny = {2}\n~~~\n  ````Py extra\nz\n```\n````\n";
    kerr e = {0};
    int rc;
    llm_blocks b = blocks_of(t, &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_eq(b.n, 3);
    cr_assert_str_eq(b.v[0].lang, "python");
    cr_assert_str_eq(b.v[0].body, "x = 1\n");
    cr_assert_eq(b.v[0].line, 2);
    cr_assert_str_eq(b.v[1].lang, "");
    cr_assert_str_eq(b.v[1].body, "y = {2}\n");
    cr_assert_str_eq(b.v[2].lang, "py");
    cr_assert_str_eq(b.v[2].body, "z\n```\n", "a shorter fence inside a longer one is content");
    llm_blocks_free(&b);
}

Test(llm_extract, crlf_and_inline_triple_backticks) {
    const char *t = "use ```x``` inline\r\n```python\r\na = 1\r\n```\r\n";
    kerr e = {0};
    int rc;
    llm_blocks b = blocks_of(t, &rc, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    cr_assert_eq(b.n, 1);
    cr_assert_str_eq(b.v[0].body, "a = 1\n");
    llm_blocks_free(&b);
}

Test(llm_extract, unterminated_fence_is_truncation) {
    const char *t = "ok\n```python\nimport triton\n```\nmore:\n```python\n@triton.jit\ndef k(x";
    kerr e = {0};
    int rc;
    llm_blocks b = blocks_of(t, &rc, &e);
    cr_assert_eq(rc, KOPT_E_LLM);
    cr_assert(strstr(e.msg, "cut short"), "%s", e.msg);
    cr_assert(strstr(e.msg, "line 6"), "%s", e.msg);
    cr_assert_eq(b.n, 1, "complete blocks before the open one are kept");
    llm_blocks_free(&b);
    char *code = NULL;
    kerr e2 = {0};
    cr_assert_eq(llm_extract_code(t, strlen(t), &code, &e2), KOPT_E_LLM);
    cr_assert_null(code);
    cr_assert(strstr(e2.msg, "cut short"), "%s", e2.msg);
}

/* ------------------------------------------------------------------ code */

Test(llm_extract, code_picks_last_triton_block) {
    const char *t = "Original:\n```python\n@triton.jit\ndef old(): pass\n```\nShell:\n```bash\nls\n```\n"
                    "New:\n```python\nimport triton\n@triton.jit\ndef new(): pass\ndef launch(a, stream=None): pass\n```\n"
                    "Notes:\n```\nnot code\n```\n";
    char *code = NULL;
    kerr e = {0};
    cr_assert_eq(llm_extract_code(t, strlen(t), &code, &e), 0, "%s", e.msg);
    cr_assert(strstr(code, "def new()"), "%s", code);
    cr_assert(strstr(code, "def launch("));
    free(code);
}

Test(llm_extract, code_failures_have_reasons) {
    struct {
        const char *text, *why;
    } cases[] = {
        {"I would use a larger block size.", "no ```python code block"},
        {"```python\ndef launch(): pass\n```\n", "no @triton.jit"},
        {"```cuda\n__global__ void k() {}\n```\n", "none is Python"},
        {"", "no ```python code block"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *code = NULL;
        kerr e = {0};
        cr_assert_eq(llm_extract_code(cases[i].text, strlen(cases[i].text), &code, &e), KOPT_E_LLM, "case %zu", i);
        cr_assert_null(code);
        cr_assert(strstr(e.msg, cases[i].why), "case %zu: %s", i, e.msg);
    }
}

Test(llm_extract, bare_file_without_fences) {
    const char *t = "import triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x): pass\n";
    char *code = NULL;
    kerr e = {0};
    cr_assert_eq(llm_extract_code(t, strlen(t), &code, &e), 0, "%s", e.msg);
    cr_assert_str_eq(code, t);
    free(code);
}

/* ------------------------------------------------------------------ JSON */

static json_t *json_of(const char *t, kerr *e) {
    json_t *j = NULL;
    int rc = llm_extract_json(t, strlen(t), &j, e);
    cr_assert((rc == 0) == (j != NULL));
    return j;
}

Test(llm_extract, json_in_prose) {
    kerr e = {0};
    json_t *j = json_of("Sure! Here is my plan {not json} and then:\n"
                        "{\"plans\": [{\"direction\": \"one_pass\", \"rationale\": \"a } in a string {\"}]}\n"
                        "Hope it helps {", &e);
    cr_assert_not_null(j, "%s", e.msg);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(j, "plans"), 0), "direction")),
                     "one_pass");
    json_decref(j);
}

Test(llm_extract, json_fenced_preferred_and_trailing_commas) {
    kerr e = {0};
    json_t *j = json_of("I considered {\"a\": 1}.\n```json\n{\"plans\": [{\"direction\": \"split\",},],}\n```\n", &e);
    cr_assert_not_null(j, "%s", e.msg);
    cr_assert_not_null(json_object_get(j, "plans"), "the fenced block wins over earlier prose");
    json_decref(j);
}

Test(llm_extract, json_failures_have_reasons) {
    struct {
        const char *text, *why;
    } cases[] = {
        {"no json here", "no JSON object"},
        {"{\"plans\": [{\"direction\": \"one_pass\"", "never closed"},
        {"```json\n{\"plans\": [\n", "never closed"},
        {"{\"plans\": [1 2]}", "not valid JSON"},
        {"[1, 2, 3]", "no JSON object"},
        {"", "empty"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        kerr e = {0};
        json_t *j = json_of(cases[i].text, &e);
        cr_assert_null(j, "case %zu", i);
        cr_assert_eq(e.code, KOPT_E_LLM);
        cr_assert(strstr(e.msg, cases[i].why), "case %zu: %s", i, e.msg);
    }
}

/* Random inputs over an alphabet rich in fences, braces, quotes and escapes, plus raw bytes:
 * nothing may crash or leak (ASan/UBSan/valgrind watch), and results must be consistent. */
Test(llm_extract, fuzz_never_crashes) {
    static const char alpha[] = "`~{}[]\"\\\n\r :,abcpython@triton.jit0123";
    unsigned seed = 12345;
    char buf[600];
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = (size_t)(rand_r(&seed) % 512);
        int raw = iter % 5 == 0;
        for (size_t i = 0; i < n; i++)
            buf[i] = raw ? (char)(rand_r(&seed) & 0xff) : alpha[(size_t)rand_r(&seed) % (sizeof alpha - 1)];
        if (iter % 7 == 0 && n > 10) memcpy(buf, "```python\n", 10);
        buf[n] = '\0';
        llm_blocks b;
        kerr e = {0};
        int rc = llm_extract_blocks(buf, n, &b, &e);
        cr_assert(rc == 0 || rc == KOPT_E_LLM);
        for (size_t k = 0; k < b.n; k++) cr_assert_not_null(b.v[k].body);
        llm_blocks_free(&b);
        char *code = NULL;
        kerr e2 = {0};
        rc = llm_extract_code(buf, n, &code, &e2);
        cr_assert((rc == 0) == (code != NULL));
        cr_assert(rc == 0 || e2.msg[0]);
        free(code);
        json_t *j = NULL;
        kerr e3 = {0};
        rc = llm_extract_json(buf, n, &j, &e3);
        cr_assert((rc == 0) == (j != NULL));
        cr_assert(rc == 0 ? json_is_object(j) : e3.msg[0] != 0);
        json_decref(j);
    }
}

/* ------------------------------------------------------------------ prompts */

Test(llm_prompt, render_paths_lists_and_missing) {
    json_t *v = json_pack("{s:{s:s, s:[s,s], s:{s:i}}, s:f, s:[{s:i}], s:b}", "kernel", "name", "triton_red_0",
                          "aten_ops", "aten.sum", "aten.mul", "size_hints", "x", 1024, "share", 0.25, "hist", "a", 1,
                          "flag", 1);
    char *s = llm_prompt_render("K={{kernel.name}} ops={{ kernel.aten_ops }} x={{kernel.size_hints.x}} "
                                "hints={{kernel.size_hints}} "
                                "share={{share}} h0={{hist.0.a}} f={{flag}} none={{nope.x}} "
                                "keep={{ not a name }} {{", v);
    cr_assert_str_eq(s, "K=triton_red_0 ops=aten.sum, aten.mul x=1024 hints=x: 1024 share=0.25 h0=1 f=true none=(not given) "
                        "keep={{ not a name }} {{");
    free(s);
    json_decref(v);
}

Test(llm_prompt, substituted_text_is_not_rescanned) {
    json_t *v = json_pack("{s:s, s:s}", "src", "a = {{b}}", "b", "SHOULD-NOT-APPEAR");
    char *s = llm_prompt_render("[{{src}}]", v);
    cr_assert_str_eq(s, "[a = {{b}}]");
    free(s);
    json_decref(v);
}

Test(llm_prompt, v1_files_load_without_comments) {
    char *dir = tu_fixture_path("prompts/v1");
    const char *names[] = {"system", "planner", "executor", "summarizer", "contract", "feedback_static",
                           "feedback_correctness", "feedback_slow", "feedback_malformed", "repair_json"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *t = NULL;
        kerr e = {0};
        cr_assert_eq(llm_prompt_load(dir, names[i], &t, &e), 0, "%s", e.msg);
        cr_assert(strlen(t) > 20, "%s", names[i]);
        cr_assert_null(strstr(t, "<!--"), "%s keeps its header comment", names[i]);
        free(t);
    }
    char *t = NULL;
    kerr e = {0};
    cr_assert_eq(llm_prompt_load(dir, "no_such_prompt", &t, &e), KOPT_E_NOFILE);
    cr_assert(strstr(e.msg, "no_such_prompt.md"), "%s", e.msg);
    free(dir);
}

/* ------------------------------------------------------------------ redaction */

Test(llm_redact, secret_and_key_shapes) {
    const char *secret = "my-very-secret-token-42";
    char *s = llm_redact("Incorrect API key provided: my-very-secret-token-42. Retry.", secret);
    cr_assert_str_eq(s, "Incorrect API key provided: [REDACTED]. Retry.");
    free(s);
    s = llm_redact("key sk-proj-AbC123xyz_- and sk-ant-api03-QQQQQQQQ, not sk-1", NULL);
    cr_assert_str_eq(s, "key [REDACTED] and [REDACTED], not sk-1");
    free(s);
    s = llm_redact("Authorization: Bearer abc.def-123 sent", NULL);
    cr_assert_str_eq(s, "Authorization: Bearer [REDACTED] sent");
    free(s);
    s = llm_redact("{\"x-api-key\": \"zzzzzzzzzz\", \"api_key\":\"yyyyyy\"}", NULL);
    cr_assert_str_eq(s, "{\"x-api-key\": \"[REDACTED]\", \"api_key\":\"[REDACTED]\"}");
    free(s);
    s = llm_redact("set your OPENAI_API_KEY environment variable", NULL);
    cr_assert_str_eq(s, "set your OPENAI_API_KEY environment variable", "no assignment, nothing to hide");
    free(s);
    s = llm_redact("short abc stays", "abc");
    cr_assert_str_eq(s, "short abc stays", "secrets under 4 bytes would redact ordinary words");
    free(s);
    s = llm_redact(NULL, secret);
    cr_assert_str_eq(s, "");
    free(s);
}

/* ------------------------------------------------------------------ configuration */

static char *write_tmp(const char *dir, const char *name, const char *text) {
    char *p = fs_join(dir, name);
    kerr e = {0};
    cr_assert_eq(fs_write(p, text, strlen(text), &e), 0, "%s", e.msg);
    return p;
}

Test(llm_config, spec_parsing) {
    llm_config c;
    llm_config_init(&c);
    kerr e = {0};
    cr_assert_eq(llm_config_parse_spec(&c, "openai:Qwen/Qwen2.5-Coder:32b", &e), 0, "%s", e.msg);
    cr_assert_eq(c.backend, LLM_BACKEND_OPENAI);
    cr_assert_str_eq(c.model, "Qwen/Qwen2.5-Coder:32b");
    cr_assert_eq(llm_config_parse_spec(&c, "gemini:x", &e), KOPT_E_USAGE);
    cr_assert_eq(llm_config_parse_spec(&c, "anthropic:", &e), KOPT_E_USAGE);
    cr_assert_eq(llm_config_parse_spec(&c, "nocolon", &e), KOPT_E_USAGE);
    llm_config_free(&c);
}

Test(llm_config, file_env_and_spec_precedence) {
    char *dir = NULL;
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-llmcfg", &dir, &e), 0, "%s", e.msg);
    char *path = write_tmp(dir, "llm.json",
                           "{\"backend\":\"openai\",\"model\":\"m1\",\"base_url\":\"http://localhost:8000/v1/\","
                           "\"timeout_s\":30,\"max_retries\":2,\"max_concurrency\":8,"
                           "\"price\":{\"in_per_mtok\":1.5,\"out_per_mtok\":6}}");
    setenv("OPENAI_BASE_URL", "http://env-host/v1", 1);
    setenv("ANTHROPIC_BASE_URL", "http://anthropic-env", 1);
    llm_config c;
    cr_assert_eq(llm_config_resolve(NULL, path, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(c.backend, LLM_BACKEND_OPENAI);
    cr_assert_str_eq(c.model, "m1");
    cr_assert_str_eq(c.base_url, "http://localhost:8000/v1", "file over env, trailing slash removed");
    cr_assert_str_eq(c.api_key_env, "OPENAI_API_KEY");
    cr_assert_float_eq(c.timeout_s, 30, 1e-9);
    cr_assert_eq(c.max_retries, 2);
    cr_assert_eq(c.max_concurrency, 8);
    cr_assert_float_eq(c.price_out_per_mtok, 6, 1e-9);
    llm_config_free(&c);
    /* same backend from the spec: the model changes, the server settings stay */
    cr_assert_eq(llm_config_resolve("openai:m2", path, &c, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.model, "m2");
    cr_assert_str_eq(c.base_url, "http://localhost:8000/v1");
    llm_config_free(&c);
    /* another backend: the file's server settings do not apply */
    cr_assert_eq(llm_config_resolve("anthropic:claude-x", path, &c, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.base_url, "http://anthropic-env");
    cr_assert_str_eq(c.api_key_env, "ANTHROPIC_API_KEY");
    cr_assert_float_eq(c.price_in_per_mtok, 0, 1e-9);
    cr_assert_eq(c.max_retries, 2, "generic settings stay");
    llm_config_free(&c);
    unsetenv("OPENAI_BASE_URL");
    unsetenv("ANTHROPIC_BASE_URL");
    free(path);
    fs_rmtree(dir);
    free(dir);
}

Test(llm_config, defaults_and_default_file) {
    char *dir = NULL;
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-llmcfg", &dir, &e), 0, "%s", e.msg);
    setenv("XDG_CONFIG_HOME", dir, 1);
    unsetenv("OPENAI_BASE_URL");
    llm_config c;
    cr_assert_eq(llm_config_resolve(NULL, NULL, &c, &e), KOPT_E_USAGE, "no spec, no file");
    cr_assert(strstr(e.msg, "--llm"), "%s", e.msg);
    cr_assert_eq(llm_config_resolve("openai:gpt-x", NULL, &c, &e), 0, "%s", e.msg);
    cr_assert_str_eq(c.base_url, "https://api.openai.com/v1");
    cr_assert_eq(c.max_retries, 4);
    cr_assert_eq(c.max_concurrency, 4);
    llm_config_free(&c);
    char *sub = fs_join(dir, "kopt");
    cr_assert_eq(fs_mkdirs(sub, &e), 0);
    char *path = write_tmp(sub, "llm.json", "{\"backend\":\"anthropic\",\"model\":\"claude-y\",\"api_key_env\":\"MY_KEY\"}");
    cr_assert_eq(llm_config_resolve(NULL, NULL, &c, &e), 0, "%s", e.msg);
    cr_assert_eq(c.backend, LLM_BACKEND_ANTHROPIC);
    cr_assert_str_eq(c.model, "claude-y");
    cr_assert_str_eq(c.api_key_env, "MY_KEY");
    llm_config_free(&c);
    unsetenv("XDG_CONFIG_HOME");
    free(path);
    free(sub);
    fs_rmtree(dir);
    free(dir);
}

Test(llm_config, key_in_file_refused_and_bad_files) {
    char *dir = NULL;
    kerr e = {0};
    cr_assert_eq(fs_mkdtemp("kopt-test-llmcfg", &dir, &e), 0, "%s", e.msg);
    char *p1 = write_tmp(dir, "k.json", "{\"backend\":\"openai\",\"model\":\"m\",\"api_key\":\"sk-should-never-be-here\"}");
    llm_config c;
    cr_assert_eq(llm_config_resolve(NULL, p1, &c, &e), KOPT_E_USAGE);
    cr_assert(strstr(e.msg, "environment only"), "%s", e.msg);
    cr_assert_null(strstr(e.msg, "sk-should-never-be-here"));
    char *p2 = write_tmp(dir, "bad.json", "{\"backend\":\"openai\",");
    cr_assert_eq(llm_config_resolve(NULL, p2, &c, &e), KOPT_E_USAGE);
    char *p3 = write_tmp(dir, "neg.json", "{\"backend\":\"openai\",\"model\":\"m\",\"max_concurrency\":0}");
    cr_assert_eq(llm_config_resolve(NULL, p3, &c, &e), KOPT_E_USAGE);
    char *p4 = fs_join(dir, "missing.json");
    cr_assert_eq(llm_config_resolve("openai:m", p4, &c, &e), KOPT_E_NOFILE);
    free(p1);
    free(p2);
    free(p3);
    free(p4);
    fs_rmtree(dir);
    free(dir);
}
