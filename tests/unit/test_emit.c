/* test_emit.c — artifact_emit: byte-identical round trip for every fixture; the exact
 * instrumentation text; that instrumenting only adds lines; kernel replacement; errors. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "testutil.h"

#define FIX "tests/fixtures/inductor/"

static artifact *parse_text(const char *text, size_t len) {
    artifact *a = NULL;
    kerr e = {0};
    int rc = artifact_parse(text, len, &a, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    return a;
}

static artifact *parse_fixture(const char *name, char **text, size_t *len) {
    char rel[256];
    snprintf(rel, sizeof rel, FIX "%s", name);
    *text = tu_read_fixture(rel, len);
    return parse_text(*text, *len);
}

static char *emit(const artifact *a, const art_emit_opts *o) {
    kbuf out = KBUF_INIT;
    kerr e = {0};
    int rc = artifact_emit(a, o, &out, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    return kbuf_steal(&out);
}

/* The text with every line that contains `_kopt_prof.` removed. */
static char *strip_probes(const char *s) {
    kbuf b = KBUF_INIT;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) + 1 : strlen(s);
        const char *hit = strstr(s, "_kopt_prof.");
        if (!hit || hit >= s + n) kbuf_append(&b, s, n);
        s += n;
    }
    return kbuf_steal(&b);
}

static size_t count(const char *s, const char *needle) {
    size_t n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

typedef void (*fixture_fn)(const char *name, const char *text, size_t len, artifact *a);

static size_t each_fixture(fixture_fn f) {
    char *dir = tu_fixture_path(FIX);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    struct dirent *de;
    size_t n = 0;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 4 || strcmp(de->d_name + l - 3, ".py")) continue;
        char *text = NULL;
        size_t len = 0;
        artifact *a = parse_fixture(de->d_name, &text, &len);
        f(de->d_name, text, len, a);
        artifact_free(a);
        free(text);
        n++;
    }
    closedir(d);
    free(dir);
    return n;
}

static void roundtrip_one(const char *name, const char *text, size_t len, artifact *a) {
    char *out = emit(a, NULL);
    cr_assert_eq(strlen(out), len, "%s: %zu bytes out of %zu", name, strlen(out), len);
    cr_assert(memcmp(out, text, len) == 0, "%s: round trip differs", name);
    free(out);
    art_emit_opts none = {0};
    out = emit(a, &none);
    cr_assert(strlen(out) == len && memcmp(out, text, len) == 0, "%s", name);
    free(out);
}

Test(emit, roundtrip_every_fixture_byte_identical) {
    cr_assert_geq(each_fixture(roundtrip_one), 3);
}

static void instrument_one(const char *name, const char *text, size_t len, artifact *a) {
    art_emit_opts o = {.instrument = 1};
    char *out = emit(a, &o);
    /* one pre and one post line per launch, and nothing else changed */
    cr_assert_eq(count(out, "_kopt_prof.pre("), a->nlaunches, "%s", name);
    cr_assert_eq(count(out, "_kopt_prof.post("), a->nlaunches, "%s", name);
    char *back = strip_probes(out);
    cr_assert(strlen(back) == len && memcmp(back, text, len) == 0, "%s: instrumenting changed other text", name);
    free(back);
    /* the instrumented module parses, with the same launches; the probes are unknown statements */
    artifact *b = parse_text(out, strlen(out));
    cr_assert_eq(b->nlaunches, a->nlaunches, "%s", name);
    for (size_t i = 0; i < a->nlaunches; i++) {
        cr_assert_str_eq(b->launches[i].callee, a->launches[i].callee, "%s", name);
        cr_assert_eq(b->launches[i].args.n, a->launches[i].args.n, "%s", name);
    }
    cr_assert_eq(artifact_count(b, ART_ST_UNKNOWN), artifact_count(a, ART_ST_UNKNOWN) + 2 * a->nlaunches, "%s", name);
    /* pre(i) comes right before launch i's line, post(i) right after it */
    for (size_t i = 0; i < b->nlaunches; i++) {
        const art_stmt *s = &b->stmts[b->launches[i].stmt];
        const art_stmt *pre = &b->stmts[b->launches[i].stmt - 1];
        const art_stmt *post = &b->stmts[b->launches[i].stmt + 1];
        char want[64];
        if (b->launches[i].kind == ART_L_TRITON) {
            char *probe = art_launch_probe_args(b, &b->launches[i]);
            snprintf(want, sizeof want, "_kopt_prof.pre(%zu, lambda: ", i);
            cr_assert(!memcmp(out + pre->span.off, want, strlen(want)), "%s", name);
            /* the pre-probe carries the same argument tuple as the post-probe */
            cr_assert(pre->span.len == strlen(want) + strlen(probe) + 1 &&
                          !memcmp(out + pre->span.off + strlen(want), probe, strlen(probe)), "%s", name);
            free(probe);
        } else {
            snprintf(want, sizeof want, "_kopt_prof.pre(%zu)", i);
            cr_assert(pre->span.len == strlen(want) && !memcmp(out + pre->span.off, want, pre->span.len), "%s", name);
        }
        cr_assert_eq(pre->line + 1, s->line, "%s", name);
        cr_assert_eq(pre->depth, s->depth, "%s", name);
        snprintf(want, sizeof want, "_kopt_prof.post(%zu, lambda: (", i);
        cr_assert(!memcmp(out + post->span.off, want, strlen(want)), "%s", name);
        cr_assert_eq(post->depth, s->depth, "%s", name);
    }
    artifact_free(b);
    free(out);
}

Test(emit, instrument_every_fixture_only_adds_probe_lines) {
    cr_assert_geq(each_fixture(instrument_one), 3);
}

Test(emit, instrument_exact_text_runner) {
    char *text = NULL;
    size_t len = 0;
    artifact *a = parse_fixture("handmade_mlp_runner.py", &text, &len);
    art_emit_opts o = {.instrument = 1};
    char *out = emit(a, &o);
    const char *want =
        "            # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.t, aten.mm]\n"
        "            _kopt_prof.pre(0)\n"
        "            extern_kernels.mm(arg1_1, reinterpret_tensor(arg0_1, (1024, 4096), (1, 1024), 0), out=buf0)\n"
        "            _kopt_prof.post(0, lambda: (arg1_1, reinterpret_tensor(arg0_1, (1024, 4096), (1, 1024), 0), buf0,))\n"
        "            del arg0_1\n";
    cr_assert_not_null(strstr(out, want), "mm block not found in:\n%s", out);
    want = "            stream0 = get_raw_stream(0)\n"
           "            _kopt_prof.pre(1, lambda: (buf1, arg2_1, 262144,))\n"
           "            triton_poi_fused_addmm_relu_0.run(buf1, arg2_1, 262144, stream=stream0)\n"
           "            _kopt_prof.post(1, lambda: (buf1, arg2_1, 262144,))\n"
           "            del arg2_1\n";
    cr_assert_not_null(strstr(out, want));
    want = "            _kopt_prof.post(2, lambda: (arg4_1, buf1, reinterpret_tensor(arg3_1, (4096, 1024), (1, 4096), 0), 1, 1, buf2,))\n";
    cr_assert_not_null(strstr(out, want));
    want = "            _kopt_prof.pre(3)\n"
           "            buf3 = extern_kernels.convolution(arg5_1, arg6_1, stride=(1, 1), padding=(1, 1), "
           "dilation=(1, 1), transposed=False, output_padding=(0, 0), groups=1, bias=None)\n"
           "            _kopt_prof.post(3, lambda: (arg5_1, arg6_1, (1, 1), (1, 1), (1, 1), False, (0, 0), 1, None, buf3,))\n"
           "            assert_size_stride(buf3, (8, 16, 64, 64), (65536, 4096, 64, 1))\n";
    cr_assert_not_null(strstr(out, want));
    cr_assert_not_null(strstr(out, "            _kopt_prof.post(4, lambda: (buf4, arg7_1, 524288,))\n"
                                   "            del arg7_1\n        return (buf2, buf4, )\n"));
    char *back = strip_probes(out);
    cr_assert(strlen(back) == len && !memcmp(back, text, len));
    free(back);
    free(out);
    artifact_free(a);
    free(text);
}

Test(emit, instrument_multiline_launch_and_vendor_target) {
    char *text = NULL;
    size_t len = 0;
    artifact *a = parse_fixture("handmade_edge_def.py", &text, &len);
    art_emit_opts o = {.instrument = 1};
    char *out = emit(a, &o);
    const char *want =
        "        stream0 = get_raw_stream(0)\n"
        "        _kopt_prof.pre(1, lambda: (arg3_1, buf0, buf1, s0, triton_poi_fused_add_mul_1_xnumel,))\n"
        "        triton_poi_fused_add_mul_1.run(\n"
        "            arg3_1,  # the dynamic input\n"
        "            buf0,\n"
        "            buf1,\n"
        "            s0,\n"
        "            triton_poi_fused_add_mul_1_xnumel,\n"
        "            stream=stream0,\n"
        "        )\n"
        "        _kopt_prof.post(1, lambda: (arg3_1, buf0, buf1, s0, triton_poi_fused_add_mul_1_xnumel,))\n"
        "        del arg3_1; del buf0\n";
    cr_assert_not_null(strstr(out, want), "%s", out);
    cr_assert_not_null(strstr(out, "        _kopt_prof.pre(0, lambda: (arg1_1, arg2_1, buf0, 32, 1, 1,))\n        triton_tem_fused_mm_0.run(arg1_1, arg2_1, buf0, 32, 1, 1, stream=stream0)\n"
                                   "        _kopt_prof.post(0, lambda: (arg1_1, arg2_1, buf0, 32, 1, 1,))\n"));
    cr_assert_not_null(strstr(out, "        _kopt_prof.pre(2)\n        buf2 = torch.ops.aten.cumsum.default(buf1, 1)\n"
                                   "        _kopt_prof.post(2, lambda: (buf1, 1, buf2,))\n"));
    /* unknown statements are not instrumented */
    cr_assert_not_null(strstr(out, "        del arg2_1\n        run_intermediate_hooks('mm', buf0)\n        buf1 ="));
    free(out);
    artifact_free(a);
    free(text);
}

Test(emit, probe_args) {
    const char *src = "def call(args):\n"
                      "    k.run(stream=stream0)\n"
                      "    buf1 = extern_kernels.bmm(a, b)\n"
                      "    extern_kernels.mm(a, b, out=c)\n";
    artifact *a = parse_text(src, strlen(src));
    cr_assert_eq(a->nlaunches, 3);
    char *p = art_launch_probe_args(a, &a->launches[0]);
    cr_assert_str_eq(p, "()");
    free(p);
    p = art_launch_probe_args(a, &a->launches[1]);
    cr_assert_str_eq(p, "(a, b, buf1,)");
    free(p);
    p = art_launch_probe_args(a, &a->launches[2]);
    cr_assert_str_eq(p, "(a, b, c,)");
    free(p);
    /* the probe's size and where a vendor call's output sits in it */
    cr_expect_eq(art_launch_probe_count(&a->launches[0]), 0);
    cr_expect_eq(art_launch_probe_out(&a->launches[0]), -1);
    cr_expect_eq(art_launch_probe_count(&a->launches[1]), 3);
    cr_expect_eq(art_launch_probe_out(&a->launches[1]), 2);   /* the assigned name */
    cr_expect_eq(art_launch_probe_count(&a->launches[2]), 3);
    cr_expect_eq(art_launch_probe_out(&a->launches[2]), 2);   /* out= */
    artifact_free(a);
}

Test(emit, instrument_inline_launch_crlf_and_no_final_newline) {
    const char *src = "def call(args):\r\n"
                      "    x = 1; triton_poi_k.run(a, 8, stream=s0)\r\n"
                      "    extern_kernels.mm(a, b, out=c)";
    artifact *a = parse_text(src, strlen(src));
    cr_assert_eq(a->nlaunches, 2);
    art_emit_opts o = {.instrument = 1};
    char *out = emit(a, &o);
    cr_assert_str_eq(out, "def call(args):\r\n"
                          "    x = 1; _kopt_prof.pre(0, lambda: (a, 8,)); triton_poi_k.run(a, 8, stream=s0); "
                          "_kopt_prof.post(0, lambda: (a, 8,))\r\n"
                          "    _kopt_prof.pre(1)\n"
                          "    extern_kernels.mm(a, b, out=c)\n"
                          "    _kopt_prof.post(1, lambda: (a, b, c,))");
    artifact *b = parse_text(out, strlen(out));
    cr_assert_eq(b->nlaunches, 2);
    artifact_free(b);
    free(out);
    artifact_free(a);
    /* CRLF lines get CRLF probe lines */
    const char *crlf = "def call(args):\r\n    extern_kernels.mm(a, b, out=c)\r\n    return (c, )\r\n";
    a = parse_text(crlf, strlen(crlf));
    out = emit(a, &o);
    cr_assert_str_eq(out, "def call(args):\r\n    _kopt_prof.pre(0)\r\n    extern_kernels.mm(a, b, out=c)\r\n"
                          "    _kopt_prof.post(0, lambda: (a, b, c,))\r\n    return (c, )\r\n");
    free(out);
    artifact_free(a);
}

Test(emit, replace_kernel_statement) {
    char *text = NULL;
    size_t len = 0;
    artifact *a = parse_fixture("handmade_softmax_def.py", &text, &len);
    const char *neu = "triton_poi_fused__softmax_1 = async_compile.triton('triton_poi_fused__softmax_1', '''\n"
                      "@triton_heuristics.pointwise(size_hints={'x': 4194304}, triton_meta={'signature': "
                      "{'in_ptr0': '*fp32', 'in_ptr1': '*fp32', 'in_ptr2': '*fp32', 'out_ptr0': '*fp32', "
                      "'xnumel': 'i32', 'XBLOCK': 'constexpr'}}, inductor_meta={'grid_type': 'Grid1D'})\n"
                      "@triton.jit\ndef triton_poi_fused__softmax_1(in_ptr0, in_ptr1, in_ptr2, out_ptr0, xnumel, XBLOCK: tl.constexpr):\n"
                      "    pass  # NEW\n''', device_str='cuda')";
    art_replacement r = {"triton_poi_fused__softmax_1", neu};
    art_emit_opts o = {.replace = &r, .nreplace = 1};
    char *out = emit(a, &o);
    const art_span *sp = &a->kernels[1].stmt;
    kbuf want = KBUF_INIT;
    kbuf_append(&want, text, sp->off);
    kbuf_puts(&want, neu);
    kbuf_append(&want, text + sp->off + sp->len, len - sp->off - sp->len);
    cr_assert_str_eq(out, kbuf_str(&want));
    kbuf_free(&want);
    artifact *b = parse_text(out, strlen(out));
    cr_assert_eq(b->nkernels, 3);
    cr_assert(strstr(b->kernels[1].source, "pass  # NEW"));
    cr_assert_str_eq(b->kernels[0].source, a->kernels[0].source);
    cr_assert_str_eq(b->kernels[2].source, a->kernels[2].source);
    cr_assert_eq(b->nlaunches, 3);
    cr_assert_eq(b->launches[1].kernel, 1);
    artifact_free(b);
    free(out);

    /* replacement and instrumentation together */
    o.instrument = 1;
    out = emit(a, &o);
    cr_assert(strstr(out, "pass  # NEW"));
    cr_assert_eq(count(out, "_kopt_prof.pre("), 3);
    b = parse_text(out, strlen(out));
    cr_assert_eq(b->nlaunches, 3);
    artifact_free(b);
    free(out);
    artifact_free(a);
    free(text);
}

Test(emit, replacement_errors_leave_output_untouched) {
    char *text = NULL;
    size_t len = 0;
    artifact *a = parse_fixture("handmade_softmax_def.py", &text, &len);
    kbuf out = KBUF_INIT;
    kbuf_puts(&out, "keep");
    kerr e = {0};
    art_replacement r[2] = {{"nope_kernel", "x = 1"}, {NULL, NULL}};
    art_emit_opts o = {.replace = r, .nreplace = 1};
    cr_assert_eq(artifact_emit(a, &o, &out, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "nope_kernel"), "%s", e.msg);
    cr_assert_str_eq(kbuf_str(&out), "keep");
    r[0] = (art_replacement){"triton_per_fused_add_sum_2", "a = 1"};
    r[1] = (art_replacement){"triton_per_fused_add_sum_2", "b = 2"};
    o.nreplace = 2;
    e = (kerr){0};
    cr_assert_eq(artifact_emit(a, &o, &out, &e), KOPT_E_CANDIDATE);
    cr_assert(strstr(e.msg, "replaced twice"), "%s", e.msg);
    cr_assert_str_eq(kbuf_str(&out), "keep");
    /* emitting appends */
    cr_assert_eq(artifact_emit(a, NULL, &out, &e), 0);
    cr_assert_eq(out.len, 4 + len);
    cr_assert(!memcmp(out.data + 4, text, len));
    kbuf_free(&out);
    artifact_free(a);
    free(text);
}
