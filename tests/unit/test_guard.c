/* test_guard.c — the shipped module's guard (src/verify/guard.h): the signature read from a
 * capture, its Python literal, the guarded replacement text, the _KOPT_VERIFIED header, and a
 * golden CPU module (tests/fixtures/guard/stitched_cpu.py) that tests/worker/test_guard_cpu.py
 * runs with torch: KOPT_WRITE_GOLDEN=1 rewrites it after a deliberate change. */
#include <criterion/criterion.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "gates/candidate.h"
#include "testutil.h"
#include "verify/guard.h"

static guard_sig sig_of(const char *json) {
    json_error_t je;
    json_t *j = json_loads(json, 0, &je);
    cr_assert(j, "bad test JSON: %s", je.text);
    guard_sig s;
    kerr e = {0};
    cr_assert_eq(guard_sig_from_json(j, &s, &e), 0, "%s", e.msg);
    json_decref(j);
    return s;
}

static int sig_err(const char *json, kerr *e) {
    json_t *j = json_loads(json, 0, NULL);
    guard_sig s;
    int rc = guard_sig_from_json(j, &s, e);
    cr_expect_eq(s.nargs, 0);
    cr_expect_null(s.args);
    json_decref(j);
    return rc;
}

Test(guard, signature_from_capture_and_its_literal) {
    guard_sig s = sig_of("[{\"shape\":[4,8],\"stride\":[8,1],\"dtype\":\"float32\",\"nbytes\":128,\"storage_bytes\":128,"
                         "\"device\":\"cuda\"},"
                         "{\"shape\":[7],\"stride\":[1],\"dtype\":\"bfloat16\",\"nbytes\":14,\"storage_bytes\":14},"
                         "{\"shape\":[],\"stride\":[],\"dtype\":\"int64\",\"device\":\"cuda\"},"
                         "{\"value\":32},{\"value\":0.5},{\"value\":1.0},{\"value\":true},{\"value\":null},"
                         "{\"value\":\"<function grid>\"},{\"value\":[1,2]}]");
    cr_assert_eq(s.nargs, 10);
    cr_expect_eq(s.args[0].kind, GUARD_TENSOR);
    cr_expect_eq(s.args[0].ndim, 2);
    cr_expect_eq(s.args[0].shape[0], 4);
    cr_expect_eq(s.args[0].stride[0], 8);
    cr_expect_str_eq(s.args[0].dtype, "float32");
    cr_expect_str_eq(s.args[0].device, "cuda");
    cr_expect_null(s.args[1].device, "a description without a device leaves it unchecked");
    cr_expect_eq(s.args[3].kind, GUARD_INT);
    cr_expect_eq(s.args[3].ival, 32);
    cr_expect_eq(s.args[4].kind, GUARD_FLOAT);
    cr_expect_eq(s.args[6].kind, GUARD_BOOL);
    cr_expect_eq(s.args[7].kind, GUARD_NONE);
    cr_expect_eq(s.args[8].kind, GUARD_ANY);
    cr_expect_eq(s.args[9].kind, GUARD_ANY);
    kbuf b = KBUF_INIT;
    guard_sig_python(&s, &b);
    cr_expect_str_eq(kbuf_str(&b), "(('t', (4, 8), (8, 1), 'float32', 'cuda'), ('t', (7,), (1,), 'bfloat16', None), "
                                   "('t', (), (), 'int64', 'cuda'), ('i', 32), ('f', 0.5), ('f', 1.0), ('b', True), "
                                   "('n',), ('*',), ('*',))");
    kbuf_free(&b);
    guard_sig_free(&s);
    guard_sig_free(&s);   /* idempotent */
    cr_expect_eq(s.nargs, 0);

    guard_sig one = sig_of("[{\"value\":3}]");
    guard_sig_python(&one, &b);
    cr_expect_str_eq(kbuf_str(&b), "(('i', 3),)", "a one-argument signature is a tuple");
    guard_sig_free(&one);
    kbuf_reset(&b);
    guard_sig none = sig_of("[]");
    guard_sig_python(&none, &b);
    cr_expect_str_eq(kbuf_str(&b), "()");
    guard_sig_free(&none);
    kbuf_reset(&b);
    /* the capture's 16-byte alignment, when it says: a sixth element the guard checks */
    guard_sig al = sig_of("[{\"shape\":[4],\"stride\":[1],\"dtype\":\"float32\",\"device\":\"cuda\",\"aligned16\":true},"
                          "{\"shape\":[4],\"stride\":[1],\"dtype\":\"float32\",\"aligned16\":false},"
                          "{\"shape\":[4],\"stride\":[1],\"dtype\":\"float32\"}]");
    cr_expect_eq(al.args[0].align16, 1);
    cr_expect_eq(al.args[1].align16, 0);
    cr_expect_eq(al.args[2].align16, -1, "no aligned16: not known");
    guard_sig_python(&al, &b);
    cr_expect_str_eq(kbuf_str(&b), "(('t', (4,), (1,), 'float32', 'cuda', True), ('t', (4,), (1,), 'float32', None, "
                                   "False), ('t', (4,), (1,), 'float32', None))");
    guard_sig_free(&al);
    kbuf_free(&b);
    kerr e = {0};
    cr_expect_eq(sig_err("[{\"shape\":[4],\"stride\":[1],\"dtype\":\"float32\",\"aligned16\":1}]", &e), KOPT_E_WORKER,
                 "a non-boolean aligned16 is malformed");
}

Test(guard, malformed_or_hostile_descriptions_are_refused) {
    kerr e = {0};
    cr_expect_eq(sig_err("{\"shape\":[1]}", &e), KOPT_E_WORKER, "args not an array");
    /* a dtype or device that would break out of the literal */
    cr_expect_eq(sig_err("[{\"shape\":[1],\"stride\":[1],\"dtype\":\"float32'); import os; ('\"}]", &e), KOPT_E_WORKER);
    cr_expect(strstr(e.msg, "argument 0: bad dtype"), "%s", e.msg);
    cr_expect_eq(sig_err("[{\"value\":1},{\"shape\":[1],\"stride\":[1],\"dtype\":\"float32\",\"device\":\"Cuda\"}]", &e),
                 KOPT_E_WORKER);
    cr_expect(strstr(e.msg, "argument 1: bad device"), "%s", e.msg);
    cr_expect_eq(sig_err("[{\"shape\":[2,3],\"stride\":[1],\"dtype\":\"float32\"}]", &e), KOPT_E_WORKER);
    cr_expect_eq(sig_err("[{\"shape\":[2.5],\"stride\":[1],\"dtype\":\"float32\"}]", &e), KOPT_E_WORKER);
    cr_expect_eq(sig_err("[{\"shape\":[2],\"dtype\":\"float32\"}]", &e), KOPT_E_WORKER);
    cr_expect_eq(sig_err("[{\"nbytes\":4}]", &e), KOPT_E_WORKER);
    cr_expect_eq(sig_err("[3]", &e), KOPT_E_WORKER);
}

Test(guard, float_literals_read_back_exactly) {
    guard_sig s = sig_of("[{\"value\":0.1},{\"value\":1e300},{\"value\":-2.0}]");
    kbuf b = KBUF_INIT;
    guard_sig_python(&s, &b);
    cr_expect_str_eq(kbuf_str(&b), "(('f', 0.10000000000000001), ('f', 1.0000000000000001e+300), ('f', -2.0))");
    s.args[0].fval = 1.0 / 0.0;
    s.args[1].fval = -1.0 / 0.0;
    s.args[2].fval = 0.0 / 0.0;
    kbuf_reset(&b);
    guard_sig_python(&s, &b);
    cr_expect_str_eq(kbuf_str(&b), "(('f', float('inf')), ('f', float('-inf')), ('f', float('nan')))");
    kbuf_free(&b);
    guard_sig_free(&s);
}

Test(guard, wrap_keeps_inductors_kernel_and_guards_the_name) {
    const char *orig = "K = async_compile.triton('K', '''src''', device_str='cuda')";
    kbuf b = KBUF_INIT;
    kerr e = {0};
    cr_assert_eq(guard_wrap("K", orig, strlen(orig), "K = _KoptLaunch(_kopt_K__launch)", &b, &e), 0);
    const char *s = kbuf_str(&b);
    const char *o = strstr(s, orig), *ao = strstr(s, "\n_kopt_orig_K = K\n"), *st = strstr(s, "K = _KoptLaunch(");
    const char *ac = strstr(s, "\n_kopt_cand_K = K\n"), *sh = strstr(s, "if '_KoptGuard' not in globals():\n");
    const char *g = strstr(s, "\nK = _KoptGuard('K', '_kopt_cand_K', '_kopt_orig_K', _KOPT_VERIFIED['K']['signature'], "
                              "globals())");
    cr_assert(o && ao && st && ac && sh && g, "%s", s);
    cr_expect(o < ao && ao < st && st < ac && ac < sh && sh < g, "in order: Inductor's, alias, candidate, alias, guard");
    cr_expect(!strncmp(s, "# kopt: Inductor's K, kept", 26));
    cr_expect_neq(s[b.len - 1], '\n', "no trailing newline: the statement's line end stays in the module");
    cr_expect_eq(guard_wrap("not a name", orig, strlen(orig), "x", &b, &e), KOPT_E_CANDIDATE);
    cr_expect_eq(guard_wrap("class", orig, strlen(orig), "x", &b, &e), KOPT_E_CANDIDATE);
    cr_expect_eq(b.len, strlen(s), "a refused wrap leaves out unchanged");
    kbuf_free(&b);
    s = guard_shim();
    cr_expect(strstr(s, "_kopt_fallbacks += 1"));
    cr_expect(strstr(s, "import torch as _kopt_torch"));
}

Test(guard, header_records_sha_and_signature) {
    guard_sig s1 = sig_of("[{\"shape\":[2],\"stride\":[1],\"dtype\":\"float32\",\"device\":\"cuda\"},{\"value\":2}]");
    guard_sig s2 = sig_of("[{\"value\":7}]");
    const char *h1 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const char *h2 = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";
    guard_entry ents[2] = {{.kernel = "k_a", .sha256 = h1, .sig = &s1}, {.kernel = "k_b", .sha256 = h2, .sig = &s2}};
    kbuf b = KBUF_INIT;
    guard_env env = {.triton = "3.6.0", .cap_major = 9, .cap_minor = 0};
    guard_header(ents, 0, &env, &b);
    cr_expect_eq(b.len, 0);
    guard_header(ents, 2, &env, &b);
    const char *s = kbuf_str(&b);
    cr_expect(strstr(s, "# kopt-verified: k_a sha256=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"));
    cr_expect(strstr(s, "# kopt-verified: k_b sha256=ffff"));
    cr_expect(strstr(s, "_KOPT_VERIFIED = {\n    'k_a': {'sha256': '0123456789abcdef0123456789abcdef0123456789abcdef"
                        "0123456789abcdef', 'signature': (('t', (2,), (1,), 'float32', 'cuda'), ('i', 2))},\n"
                        "    'k_b': {'sha256': 'ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff', "
                        "'signature': (('i', 7),)},\n}\n_KOPT_VERIFIED_ON = {'triton': '3.6.0', 'capability': (9, 0)}\n"),
              "%s", s);
    kbuf_reset(&b);
    guard_header(ents, 1, NULL, &b);
    cr_expect(strstr(kbuf_str(&b), "_KOPT_VERIFIED_ON = {'triton': None, 'capability': None}\n"), "unknown: not checked");
    kbuf_free(&b);
    guard_sig_free(&s1);
    guard_sig_free(&s2);
}

/* The worker's ready event -> the environment recorded; what could break the literal is refused. */
Test(guard, env_from_ready_event) {
    guard_env g;
    kerr e = {0};
    json_t *r = json_loads("{\"triton\":\"3.6.0+git1a2b_c-d\",\"capability\":[9,0]}", 0, NULL);
    cr_assert_eq(guard_env_from_json(r, &g, &e), 0, "%s", e.msg);
    cr_expect_str_eq(g.triton, "3.6.0+git1a2b_c-d");
    cr_expect(g.cap_major == 9 && g.cap_minor == 0);
    json_decref(r);
    r = json_loads("{\"triton\":null,\"capability\":null}", 0, NULL);
    cr_assert_eq(guard_env_from_json(r, &g, &e), 0);
    cr_expect(g.triton[0] == 0 && g.cap_major == -1 && g.cap_minor == -1, "null: unknown");
    json_decref(r);
    cr_assert_eq(guard_env_from_json(NULL, &g, &e), 0, "no ready event: unknown");
    cr_expect(g.triton[0] == 0 && g.cap_major == -1);
    const char *bad[] = {"{\"triton\":\"3.6'+__import__('os')\"}", "{\"triton\":\"\"}", "{\"triton\":3.6}",
                         "{\"triton\":\"3.6.0 \"}",
                         "{\"triton\":\"0123456789012345678901234567890123456789012345678\"}",
                         "{\"capability\":[9]}", "{\"capability\":[9,\"0\"]}", "{\"capability\":[100,0]}",
                         "{\"capability\":[9,-1]}", "{\"capability\":\"9.0\"}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r = json_loads(bad[i], 0, NULL);
        cr_assert(r, "%s", bad[i]);
        cr_expect_eq(guard_env_from_json(r, &g, &e), KOPT_E_WORKER, "refused: %s", bad[i]);
        json_decref(r);
    }
    r = json_loads("{\"triton\":\"01234567890123456789012345678901234567890123456\"}", 0, NULL);
    cr_expect_eq(guard_env_from_json(r, &g, &e), 0, "47 characters fit");
    json_decref(r);
}

Test(guard, header_goes_after_future_imports) {
    kbuf b = KBUF_INIT;
    const char *m = "# AOT ID\nimport torch\n";
    guard_insert_header(m, strlen(m), "H\n", &b);
    cr_expect_str_eq(kbuf_str(&b), "H\n# AOT ID\nimport torch\n");
    kbuf_reset(&b);
    m = "# c\nfrom __future__ import annotations\nfrom __future__ import division\nimport torch\n";
    guard_insert_header(m, strlen(m), "H\n", &b);
    cr_expect_str_eq(kbuf_str(&b), "# c\nfrom __future__ import annotations\nfrom __future__ import division\nH\nimport torch\n");
    kbuf_reset(&b);
    m = "from __future__ import annotations";
    guard_insert_header(m, strlen(m), "H\n", &b);
    cr_expect_str_eq(kbuf_str(&b), "from __future__ import annotations\nH\n");
    kbuf_free(&b);
}

/* The guarded text emitted into a real Inductor module: its kernel statement is kept under
 * the private alias, call() is untouched. */
Test(guard, emitted_into_an_inductor_module) {
    size_t n = 0;
    char *text = tu_read_fixture("tests/fixtures/inductor/14_gemm_bias_relu_g0.py", &n);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, n, &a, &e), 0, "%s", e.msg);
    cr_assert(a->nkernels > 0);
    const art_kernel *k = &a->kernels[0];
    kbuf w = KBUF_INIT, out = KBUF_INIT, h = KBUF_INIT, mod = KBUF_INIT;
    cr_assert_eq(guard_wrap(k->name, a->text + k->stmt.off, k->stmt.len, "pass", &w, &e), 0);
    art_replacement rep = {.kernel = k->name, .text = kbuf_str(&w)};
    art_emit_opts eo = {.replace = &rep, .nreplace = 1};
    cr_assert_eq(artifact_emit(a, &eo, &out, &e), 0, "%s", e.msg);
    guard_sig s = sig_of("[{\"value\":1}]");
    guard_entry ent = {.kernel = k->name, .sha256 = "ab", .sig = &s};
    guard_header(&ent, 1, NULL, &h);
    guard_insert_header(kbuf_str(&out), out.len, kbuf_str(&h), &mod);
    const char *m = kbuf_str(&mod);
    cr_expect(!strncmp(m, "# kopt: what ships is what was verified", 39));
    char *kept = kasprintf("%.*s\n_kopt_orig_%s = %s\n", (int)k->stmt.len, a->text + k->stmt.off, k->name, k->name);
    cr_expect(strstr(m, kept), "Inductor's statement is kept verbatim, then aliased");
    char *guard = kasprintf("\n%s = _KoptGuard('%s'", k->name, k->name);
    cr_expect(strstr(m, guard));
    /* call() and everything after the kernel's statement is Inductor's text */
    const char *tail = a->text + k->stmt.off + k->stmt.len;
    cr_expect(strstr(m, tail), "the text after the replaced statement is unchanged");
    free(kept);
    free(guard);
    guard_sig_free(&s);
    kbuf_free(&w);
    kbuf_free(&out);
    kbuf_free(&h);
    kbuf_free(&mod);
    artifact_free(a);
    free(text);
}

/* ---------------------------------------------------------------- the golden CPU module */

#define GK "triton_poi_fused_mul_add_0"

/* A stand-in for Inductor's runtime (no triton, no GPU): async_compile.triton execs the kernel
 * source (plain torch code on the CPU) and returns an object with .run; the candidate's
 * `triton` is a module whose jit counts launches. tests/worker/test_guard_cpu.py runs it. */
static const char *const PRELUDE =
    "# kopt test module (generated by tests/unit/test_guard.c; KOPT_WRITE_GOLDEN=1 rewrites it):\n"
    "# a stitched module whose kernels are plain Python callables standing in for Triton launchers.\n"
    "import sys\n"
    "import types\n"
    "import torch\n"
    "\n"
    "\n"
    "class _FakeTritonKernel:\n"
    "    def __init__(self, fn):\n"
    "        self.fn = fn\n"
    "        self.calls = 0\n"
    "\n"
    "    def run(self, *args, stream=None):\n"
    "        self.calls += 1\n"
    "        self.fn(*args)\n"
    "\n"
    "\n"
    "class _FakeAsyncCompile:\n"
    "    def triton(self, name, source, device_str='cuda'):\n"
    "        scope = {'torch': torch}\n"
    "        exec(source, scope)\n"
    "        return _FakeTritonKernel(scope[name])\n"
    "\n"
    "    def wait(self, scope):\n"
    "        pass\n"
    "\n"
    "\n"
    "async_compile = _FakeAsyncCompile()\n"
    "\n"
    "\n"
    "class _FakeJit:\n"
    "    launches = 0\n"
    "\n"
    "    def __init__(self, fn):\n"
    "        self.fn = fn\n"
    "\n"
    "    def __getitem__(self, grid):\n"
    "        def launch(*args, num_warps=4, num_stages=1, **constexprs):\n"
    "            _FakeJit.launches += 1\n"
    "            self.fn(*args, **constexprs)\n"
    "        return launch\n"
    "\n"
    "    # Triton's JITFunction.warmup: the compiled kernel, whose [grid] runner takes every\n"
    "    # parameter in declared order (constexprs included) and a stream\n"
    "    warmups = 0\n"
    "    direct = 0\n"
    "\n"
    "    def warmup(self, *args, grid=None, num_warps=4, num_stages=1, **constexprs):\n"
    "        _FakeJit.warmups += 1\n"
    "        fn = self.fn\n"
    "\n"
    "        class _Compiled:\n"
    "            def __getitem__(self, g):\n"
    "                def runner(*ordered, stream=None):\n"
    "                    _FakeJit.direct += 1\n"
    "                    fn(*ordered)\n"
    "                return runner\n"
    "        return _Compiled()\n"
    "\n"
    "\n"
    "if 'triton' not in sys.modules:\n"
    "    _tl = types.ModuleType('triton.language')\n"
    "    _tl.constexpr = int\n"
    "    _triton = types.ModuleType('triton')\n"
    "    _triton.jit = _FakeJit\n"
    "    _triton.__version__ = '3.6.0+fake'\n"
    "    _triton.language = _tl\n"
    "    sys.modules['triton'] = _triton\n"
    "    sys.modules['triton.language'] = _tl\n"
    "\n"
    "\n";

static const char *const ORIG_STMT =
    GK " = async_compile.triton('" GK "', '''\n"
    "def " GK "(in_ptr0, out_ptr0, xnumel):\n"
    "    out_ptr0.copy_(in_ptr0 * 2.0 + 1.0)\n"
    "''', device_str='cuda')";

/* The candidates' kernel: correct only on the verified signature (it hard-codes 32 elements and
 * assumes contiguity). */
#define CAND_KERNEL                                                                                  \
    "# kopt-candidate: replaces=" GK "\n"                                                            \
    "import triton\n"                                                                                \
    "import triton.language as tl\n"                                                                 \
    "\n"                                                                                             \
    "\n"                                                                                             \
    "@triton.jit\n"                                                                                  \
    "def _mul_add(in_ptr0, out_ptr0, xnumel, N: tl.constexpr):\n"                                    \
    "    out_ptr0.view(-1)[:N].copy_(in_ptr0.view(-1)[:N] * 2.0 + 1.0)\n"                           \
    "\n"                                                                                             \
    "\n"

/* Launched by its own launcher (form L). */
static const char *const CANDIDATE =
    CAND_KERNEL
    "def launch(in_ptr0, out_ptr0, xnumel, stream=None):\n"
    "    _mul_add[(1,)](in_ptr0, out_ptr0, xnumel, N=32, num_warps=1)\n";

static const char *const TAIL =
    "\n"
    "async_compile.wait(globals())\n"
    "\n"
    "\n"
    "def call(args):\n"
    "    arg0_1, = args\n"
    "    args.clear()\n"
    "    buf0 = torch.empty_like(arg0_1)\n"
    "    " GK ".run(arg0_1, buf0, arg0_1.numel(), stream=0)\n"
    "    return (buf0,)\n";

/* The same as a form-P plan (kopt writes the launcher): on a signature whose alignment the capture
 * pinned, the guard's run_verified launches the "compiled" kernel directly. */
static const char *const CANDIDATE_P =
    CAND_KERNEL
    "KOPT_PLAN = {\"params\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\"],\n"
    "             \"launches\": [{\"kernel\": \"_mul_add\", \"grid\": [1], \"args\": [\"in_ptr0\", \"out_ptr0\", \"xnumel\"],\n"
    "                           \"constexprs\": {\"N\": 32}, \"num_warps\": 1}]}\n";

/* cubins: NULL for the module that ships; else the judged module, its kernels loaded from the
 * cubins kept in that directory (candidate_cubin_stitch_text). */
static void golden_module(const char *cand, const char *sigjson, const char *rel, const char *cubins) {
    candidate *c = NULL;
    kerr e = {0};
    cr_assert_eq(candidate_parse(cand, strlen(cand), &c, &e), 0, "%s", e.msg);
    kbuf st = KBUF_INIT, w = KBUF_INIT, h = KBUF_INIT, body = KBUF_INIT, mod = KBUF_INIT;
    kbuf_puts(&st, candidate_launch_shim());
    if (cubins) cr_assert_eq(candidate_cubin_stitch_text(c, GK, cubins, &st, &e), 0, "%s", e.msg);
    else cr_assert_eq(candidate_stitch_text(c, GK, &st, &e), 0, "%s", e.msg);
    candidate_free(c);
    cr_assert_eq(guard_wrap(GK, ORIG_STMT, strlen(ORIG_STMT), kbuf_str(&st), &w, &e), 0);
    guard_sig s = sig_of(sigjson);
    char sha[] = "5e2a0d3e0c6b3a1f9d6c4b2a1908f7e6d5c4b3a29180f7e6d5c4b3a29180f7e6";
    guard_entry ent = {.kernel = GK, .sha256 = sha, .sig = &s};
    guard_env env = {.triton = "3.6.0+fake", .cap_major = -1, .cap_minor = -1};   /* a CPU "GPU" */
    guard_header(&ent, 1, &env, &h);
    kbuf_puts(&body, PRELUDE);
    kbuf_append(&body, w.data, w.len);
    kbuf_puts(&body, TAIL);
    guard_insert_header(kbuf_str(&body), body.len, kbuf_str(&h), &mod);

    if (getenv("KOPT_WRITE_GOLDEN")) {
        char *path = tu_fixture_path(rel);
        cr_assert_eq(fs_write(path, kbuf_str(&mod), mod.len, &e), 0, "%s", e.msg);
        free(path);
    } else {
        size_t n = 0;
        char *want = tu_read_fixture(rel, &n);
        cr_expect(n == mod.len && !memcmp(want, kbuf_str(&mod), n), "%s differs from the emitted text", rel);
        free(want);
    }
    guard_sig_free(&s);
    kbuf_free(&st);
    kbuf_free(&w);
    kbuf_free(&h);
    kbuf_free(&body);
    kbuf_free(&mod);
}

Test(guard, golden_cpu_module) {
    golden_module(CANDIDATE,
                  "[{\"shape\":[4,8],\"stride\":[8,1],\"dtype\":\"float32\",\"device\":\"cpu\"},"
                  "{\"shape\":[4,8],\"stride\":[8,1],\"dtype\":\"float32\",\"device\":\"cpu\"},{\"value\":32}]",
                  "tests/fixtures/guard/stitched_cpu.py", NULL);
}

Test(guard, golden_cpu_plan_module) {
    golden_module(CANDIDATE_P,
                  "[{\"shape\":[4,8],\"stride\":[8,1],\"dtype\":\"float32\",\"device\":\"cpu\",\"aligned16\":true},"
                  "{\"shape\":[4,8],\"stride\":[8,1],\"dtype\":\"float32\",\"device\":\"cpu\",\"aligned16\":true},"
                  "{\"value\":32}]",
                  "tests/fixtures/guard/stitched_plan_cpu.py", NULL);
}

/* The module the gates judge for the same candidate: nothing of its file (no jit function, no
 * candidate text), its kernel a CubinFunction over the kept launch 0; tests/worker/
 * test_guard_cpu.py runs it with a stand-in for Triton's loader. The directory's quote and
 * non-ASCII byte come out escaped in a bytes literal. */
Test(guard, golden_cpu_judged_module) {
    golden_module(CANDIDATE_P,
                  "[{\"shape\":[4,8],\"stride\":[8,1],\"dtype\":\"float32\",\"device\":\"cpu\",\"aligned16\":true},"
                  "{\"shape\":[4,8],\"stride\":[8,1],\"dtype\":\"float32\",\"device\":\"cpu\",\"aligned16\":true},"
                  "{\"value\":32}]",
                  "tests/fixtures/guard/judged_plan_cpu.py", "kept-cubins/it's-\xc3\xa9");
}

/* Refused: a candidate that is not a lowered plan has no kept launches to bind. */
Test(guard, cubin_stitch_needs_a_plan) {
    candidate *c = NULL;
    kerr e = {0};
    cr_assert_eq(candidate_parse(CANDIDATE, strlen(CANDIDATE), &c, &e), 0, "%s", e.msg);
    kbuf st = KBUF_INIT;
    cr_expect_eq(candidate_cubin_stitch_text(c, GK, "/tmp/x", &st, &e), KOPT_E_CANDIDATE);
    cr_expect_eq(st.len, 0, "nothing appended on refusal");
    candidate_free(c);
    kbuf_free(&st);
}
