/* test_artifact.c — artifact_parse on the hand-made and captured fixtures (exact kernels,
 * kinds, roles, size hints, launches, argument texts, statements, buffers, inputs), on small
 * inline modules for the odd cases, and the malformed inputs that must fail with a line. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "artifact/artifact.h"
#include "testutil.h"

#define FIX "tests/fixtures/inductor/"

static artifact *parse_fixture(const char *name) {
    char rel[256];
    snprintf(rel, sizeof rel, FIX "%s", name);
    size_t len = 0;
    char *text = tu_read_fixture(rel, &len);
    artifact *a = NULL;
    kerr e = {0};
    int rc = artifact_parse(text, len, &a, &e);
    free(text);
    cr_assert_eq(rc, 0, "%s: %s", name, e.msg);
    return a;
}

static artifact *parse_str(const char *src) {
    artifact *a = NULL;
    kerr e = {0};
    int rc = artifact_parse(src, strlen(src), &a, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    return a;
}

static kerr parse_fail(const char *src) {
    artifact *a = NULL;
    kerr e = {0};
    int rc = artifact_parse(src, strlen(src), &a, &e);
    cr_assert_eq(rc, KOPT_E_PARSE, "expected KOPT_E_PARSE, got %d (%s)", rc, e.msg);
    cr_assert_null(a);
    return e;
}

static int starts_with(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }
static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

static char *span_text(const artifact *a, art_span s) { return kstrndup(a->text + s.off, s.len); }

static void expect_span(const artifact *a, art_span s, const char *want) {
    char *t = span_text(a, s);
    cr_assert_str_eq(t, want);
    free(t);
}

static char *join(const art_strlist *l, const char *sep) {
    kbuf b = KBUF_INIT;
    for (size_t i = 0; i < l->n; i++) kbuf_printf(&b, "%s%s", i ? sep : "", l->v[i]);
    return kbuf_steal(&b);
}

static void expect_list(const art_strlist *l, const char *want) {
    char *s = join(l, "|");
    cr_assert_str_eq(s, want);
    free(s);
}

/* "name:type:role,..." */
static void expect_signature(const art_kernel *k, const char *want) {
    kbuf b = KBUF_INIT;
    for (size_t i = 0; i < k->nparams; i++)
        kbuf_printf(&b, "%s%s:%s:%s", i ? "," : "", k->params[i].name, k->params[i].type,
                    art_role_name(k->params[i].role));
    cr_assert_str_eq(kbuf_str(&b), want, "kernel %s", k->name);
    kbuf_free(&b);
}

/* "dim=value,..." */
static void expect_hints(const art_kernel *k, const char *want) {
    kbuf b = KBUF_INIT;
    for (size_t i = 0; i < k->nhints; i++)
        kbuf_printf(&b, "%s%s=%lld", i ? "," : "", k->hints[i].dim, k->hints[i].value);
    cr_assert_str_eq(kbuf_str(&b), want, "kernel %s", k->name);
    kbuf_free(&b);
}

static void expect_numels(const art_launch *l, const char *want) {
    kbuf b = KBUF_INIT;
    for (size_t i = 0; i < l->nnumels; i++) kbuf_printf(&b, "%s%lld", i ? "," : "", l->numels[i]);
    cr_assert_str_eq(kbuf_str(&b), want, "launch %d", l->index);
    kbuf_free(&b);
}

/* Statement kinds, space separated. */
static void expect_stmt_kinds(const artifact *a, const char *want) {
    kbuf b = KBUF_INIT;
    for (size_t i = 0; i < a->nstmts; i++)
        kbuf_printf(&b, "%s%s", i ? " " : "", art_stmt_kind_name(a->stmts[i].kind));
    cr_assert_str_eq(kbuf_str(&b), want);
    kbuf_free(&b);
}

/* Invariants every parsed module must satisfy. */
static void check_invariants(const artifact *a, const char *name) {
    int prev_line = 0;
    for (size_t i = 0; i < a->nlaunches; i++) {
        const art_launch *l = &a->launches[i];
        cr_assert_eq(l->index, (int)i, "%s", name);
        cr_assert_lt(l->stmt, a->nstmts, "%s", name);
        const art_stmt *s = &a->stmts[l->stmt];
        cr_assert_eq(s->launch, (int)i, "%s: launch %zu", name, i);
        cr_assert(s->kind == (l->kind == ART_L_TRITON ? ART_ST_LAUNCH : ART_ST_VENDOR), "%s", name);
        cr_assert_geq(l->line, prev_line, "%s: launches out of order", name);
        prev_line = l->line;
        if (l->kind == ART_L_TRITON) cr_assert_geq(l->kernel, 0, "%s: launch %zu has no kernel", name, i);
        cr_assert_leq(l->span.off + l->span.len, a->len);
    }
    for (size_t i = 0; i < a->nstmts; i++) {
        const art_stmt *s = &a->stmts[i];
        cr_assert_leq(s->line_start, s->span.off, "%s", name);
        cr_assert_leq(s->span.off + s->span.len, s->line_end, "%s", name);
        cr_assert_leq(s->line_end, a->len);
        cr_assert(s->span.off >= a->entry.body.off &&
                  s->span.off + s->span.len <= a->entry.body.off + a->entry.body.len, "%s", name);
    }
    for (size_t k = 0; k < a->nkernels; k++) {
        const art_kernel *kn = &a->kernels[k];
        cr_assert_eq(artifact_find_kernel(a, kn->name), (int)k, "%s", name);
        cr_assert(kn->literal.off > kn->stmt.off && kn->literal.off + kn->literal.len < kn->stmt.off + kn->stmt.len);
        cr_assert_leq(kn->comment.off + kn->comment.len, kn->stmt.off);
    }
}

/* ---------- hand-made: def form, looped / persistent reductions, pointwise ---------- */

Test(artifact, handmade_softmax_def_kernels) {
    artifact *a = parse_fixture("handmade_softmax_def.py");
    check_invariants(a, "handmade_softmax_def");
    cr_assert_eq(a->entry.form, ART_ENTRY_DEF);
    cr_assert_eq(a->entry.line, 193);
    expect_list(&a->entry.inputs, "arg0_1|arg1_1");
    cr_assert_eq(a->nkernels, 3);
    cr_assert_eq(a->warnings.n, 0, "%s", a->warnings.n ? a->warnings.v[0] : "");

    const art_kernel *k = &a->kernels[0];
    cr_assert_str_eq(k->name, "triton_red_fused__softmax_0");
    cr_assert_eq(k->kind, ART_K_REDUCTION);
    cr_assert_str_eq(k->heuristic, "reduction");
    cr_assert_str_eq(k->jit_name, "triton_red_fused__softmax_0");
    cr_assert_eq(k->line, 42);
    expect_signature(k, "in_ptr0:*fp32:in,out_ptr0:*fp32:out,out_ptr1:*fp32:out,xnumel:i32:scalar,"
                        "r0_numel:i32:scalar,XBLOCK:constexpr:constexpr,R0_BLOCK:constexpr:constexpr");
    expect_hints(k, "x=128,r0_=32768");
    cr_assert_str_eq(k->grid_type, "Grid1D");
    cr_assert_eq(k->mutated.n, 0);
    cr_assert_str_eq(k->kernel_path, "/tmp/torchinductor_root/ab/cabsoftmaxred0handmade.py");
    expect_list(&k->source_nodes, "softmax");
    expect_list(&k->aten_ops, "aten._softmax");
    cr_assert_eq(k->graph_fragment.n, 4);
    cr_assert(starts_with(k->graph_fragment.v[0], "%arg0_1 : Tensor \"f32[128, 32768]"), "%s", k->graph_fragment.v[0]);
    cr_assert_str_eq(k->graph_fragment.v[3], "return %amax,%sum_1");
    char *c = span_text(a, k->comment);
    cr_assert(starts_with(c, "# kernel path: ") && c[strlen(c) - 1] == '\n', "%s", c);
    cr_assert(ends_with(c, "#   return %amax,%sum_1\n"), "%s", c);
    free(c);
    char *st = span_text(a, k->stmt);
    cr_assert(starts_with(st, "triton_red_fused__softmax_0 = async_compile.triton('triton_red_fused__softmax_0', '''\n"));
    cr_assert(ends_with(st, "''', device_str='cuda')"));
    free(st);
    char *lit = span_text(a, k->literal);
    cr_assert(starts_with(lit, "'''\nimport triton\n"));
    cr_assert_eq(strlen(lit), k->source_len + 6);
    cr_assert(!strncmp(lit + 3, k->source, k->source_len));
    free(lit);
    cr_assert(ends_with(k->source, "    tl.store(out_ptr1 + (x0), tmp8, xmask)\n"));
    cr_assert_gt(k->decorator.len, 0);
    cr_assert(starts_with(k->source + k->decorator.off, "triton_heuristics.reduction("));

    k = &a->kernels[1];
    cr_assert_str_eq(k->name, "triton_poi_fused__softmax_1");
    cr_assert_eq(k->kind, ART_K_POINTWISE);
    expect_signature(k, "in_ptr0:*fp32:in,in_ptr1:*fp32:in,in_ptr2:*fp32:in,out_ptr0:*fp32:out,"
                        "xnumel:i32:scalar,XBLOCK:constexpr:constexpr");
    expect_hints(k, "x=4194304");

    k = &a->kernels[2];
    cr_assert_str_eq(k->name, "triton_per_fused_add_sum_2");
    cr_assert_eq(k->kind, ART_K_PERSISTENT);
    expect_signature(k, "in_out_ptr0:*fp32:inout,in_ptr0:*fp32:in,xnumel:i32:scalar,"
                        "r0_numel:i32:scalar,XBLOCK:constexpr:constexpr");
    expect_list(&k->mutated, "in_out_ptr0");
    expect_hints(k, "x=128,r0_=512");
    expect_list(&k->source_nodes, "sum_2|add");
    expect_list(&k->aten_ops, "aten.sum|aten.add");
    artifact_free(a);
}

Test(artifact, handmade_softmax_def_call_body) {
    artifact *a = parse_fixture("handmade_softmax_def.py");
    expect_stmt_kinds(a, "unpack args_clear assert assert device device alloc alloc stream launch "
                         "alloc stream launch del del alias stream launch del alias return");
    cr_assert_eq(a->stmts[0].depth, 0);
    cr_assert_eq(a->stmts[4].depth, 0);    /* with torch.cuda._DeviceGuard(0): */
    cr_assert_eq(a->stmts[5].depth, 1);    /* torch.cuda.set_device(0) */
    cr_assert_eq(a->stmts[a->nstmts - 1].depth, 0);
    expect_span(a, a->stmts[4].span, "with torch.cuda._DeviceGuard(0):");
    expect_list(&a->stmts[0].names, "arg0_1|arg1_1");

    const art_stmt *b0 = &a->stmts[6];
    cr_assert_str_eq(b0->target, "buf0");
    cr_assert_str_eq(b0->shape, "(128, 1)");
    cr_assert_str_eq(b0->stride, "(1, 128)");
    cr_assert_str_eq(b0->dtype, "torch.float32");
    cr_assert_eq(b0->line, 200);
    cr_assert_str_eq(a->stmts[10].shape, "(128, 32768)");

    const art_stmt *r1 = &a->stmts[15];   /* buf4 = buf1; del buf1  # reuse */
    cr_assert_str_eq(r1->target, "buf4");
    cr_assert_str_eq(r1->of, "buf1");
    cr_assert(r1->reuse);
    cr_assert(!r1->inline_part);
    expect_span(a, r1->span, "buf4 = buf1; del buf1");
    const art_stmt *r2 = &a->stmts[19];
    cr_assert_str_eq(r2->target, "buf5");
    cr_assert_str_eq(r2->of, "buf4");
    cr_assert(r2->reuse);
    expect_span(a, r2->span, "buf5 = reinterpret_tensor(buf4, (128, ), (1, ), 0); del buf4");
    expect_list(&a->stmts[13].names, "arg0_1");
    cr_assert_str_eq(a->stmts[8].target, "stream0");
    expect_span(a, a->stmts[20].span, "return (buf2, buf5, )");

    cr_assert_eq(a->nlaunches, 3);
    static const char *const callee[] = {"triton_red_fused__softmax_0", "triton_poi_fused__softmax_1",
                                         "triton_per_fused_add_sum_2"};
    static const char *const args[] = {"arg0_1|buf0|buf1|128|32768", "arg0_1|buf0|buf1|buf2|4194304",
                                       "buf4|arg1_1|128|512"};
    static const char *const numels[] = {"128,32768", "4194304", "128,512"};
    static const int lines[] = {204, 208, 214};
    for (size_t i = 0; i < 3; i++) {
        const art_launch *l = &a->launches[i];
        cr_assert_eq(l->kind, ART_L_TRITON);
        cr_assert_str_eq(l->callee, callee[i]);
        cr_assert_eq(l->kernel, (int)i);
        cr_assert_eq(l->line, lines[i]);
        cr_assert_str_eq(l->indent, "        ");
        expect_list(&l->args, args[i]);
        expect_list(&l->kwnames, "stream");
        expect_list(&l->kwvals, "stream0");
        expect_numels(l, numels[i]);
        cr_assert_eq(l->nextra, 0);
        cr_assert_null(l->out);
        cr_assert_null(l->target);
    }
    expect_list(&a->launches[0].source_nodes, "softmax");
    expect_list(&a->launches[2].source_nodes, "sum_2|add");
    expect_list(&a->launches[2].aten_ops, "aten.sum|aten.add");
    expect_span(a, a->launches[1].span,
                "triton_poi_fused__softmax_1.run(arg0_1, buf0, buf1, buf2, 4194304, stream=stream0)");
    const art_launch *l0 = &a->launches[0];
    cr_assert_str_eq(art_launch_param(a, l0, 0)->name, "in_ptr0");
    cr_assert_str_eq(art_launch_param(a, l0, 3)->name, "xnumel");
    cr_assert_str_eq(art_launch_param(a, l0, 4)->name, "r0_numel");
    cr_assert_null(art_launch_param(a, l0, 5));   /* XBLOCK / R0_BLOCK are not passed */
    cr_assert_eq(art_launch_param(a, &a->launches[2], 0)->role, ART_ROLE_INOUT);

    cr_assert_eq(artifact_count(a, ART_ST_ALLOC), 3);
    cr_assert_eq(artifact_count(a, ART_ST_UNKNOWN), 0);
    artifact_free(a);
}

Test(artifact, handmade_softmax_def_top_level) {
    artifact *a = parse_fixture("handmade_softmax_def.py");
    cr_assert_eq(a->nasync_other, 1);
    expect_span(a, a->async_other[0].span, "async_compile.wait(globals())");
    cr_assert_eq(a->async_other[0].line, 190);
    char *g = span_text(a, a->get_args);
    cr_assert(starts_with(g, "def get_args():\n"));
    cr_assert(strstr(g, "    return [arg0_1, arg1_1]\n"));
    free(g);
    char *bm = span_text(a, a->benchmark);
    cr_assert(starts_with(bm, "def benchmark_compiled_module(args, times=10, repeat=10):"));
    free(bm);
    cr_assert_eq(a->ninputs, 2);
    cr_assert_str_eq(a->inputs[0].name, "arg0_1");
    cr_assert_str_eq(a->inputs[0].shape, "(128, 32768)");
    cr_assert_str_eq(a->inputs[0].stride, "(32768, 1)");
    cr_assert_str_eq(a->inputs[0].device, "cuda:0");
    cr_assert_str_eq(a->inputs[0].dtype, "torch.float32");
    cr_assert_null(a->inputs[0].value);
    cr_assert_str_eq(a->inputs[1].shape, "(128, 512)");
    char *body = span_text(a, a->entry.body);
    cr_assert(starts_with(body, "    arg0_1, arg1_1 = args\n"));
    cr_assert(ends_with(body, "    return (buf2, buf5, )\n"));
    free(body);
    expect_span(a, a->entry.header, "def call(args):");
    cr_assert_eq(a->nlines, 235);
    artifact_free(a);
}

/* ---------- hand-made: Runner form, vendor calls ---------- */

Test(artifact, handmade_mlp_runner) {
    artifact *a = parse_fixture("handmade_mlp_runner.py");
    check_invariants(a, "handmade_mlp_runner");
    cr_assert_eq(a->entry.form, ART_ENTRY_RUNNER);
    cr_assert_eq(a->entry.line, 134);
    cr_assert(a->entry.runner_instance);
    cr_assert(a->entry.call_bound);
    expect_span(a, a->entry.header, "def call(self, args):");
    cr_assert_eq(a->entry.inputs.n, 8);
    cr_assert_eq(a->warnings.n, 0);
    cr_assert_eq(a->nkernels, 2);
    for (size_t i = 0; i < 2; i++) {
        const art_kernel *k = &a->kernels[i];
        cr_assert_eq(k->kind, ART_K_POINTWISE);
        expect_signature(k, "in_out_ptr0:*fp32:inout,in_ptr0:*fp32:in,xnumel:i32:scalar,"
                            "XBLOCK:constexpr:constexpr");
        expect_list(&k->mutated, "in_out_ptr0");
    }
    expect_hints(&a->kernels[0], "x=262144");
    expect_hints(&a->kernels[1], "x=524288");
    expect_list(&a->kernels[1].aten_ops, "aten.convolution|aten.relu");

    expect_stmt_kinds(a, "unpack args_clear assert assert assert assert assert assert assert assert "
                         "device device alloc vendor del del alias stream launch del alloc vendor del "
                         "del del vendor assert del del alias stream launch del return");
    cr_assert_eq(a->nlaunches, 5);
    static const char *const kinds = "VTVVT";
    static const char *const callee[] = {"extern_kernels.mm", "triton_poi_fused_addmm_relu_0",
                                         "extern_kernels.addmm", "extern_kernels.convolution",
                                         "triton_poi_fused_convolution_relu_1"};
    static const int lines[] = {149, 155, 159, 164, 171};
    for (size_t i = 0; i < 5; i++) {
        const art_launch *l = &a->launches[i];
        cr_assert_eq(l->kind, kinds[i] == 'T' ? ART_L_TRITON : ART_L_VENDOR, "launch %zu", i);
        cr_assert_str_eq(l->callee, callee[i]);
        cr_assert_eq(l->line, lines[i]);
        cr_assert_str_eq(l->indent, "            ");
    }
    const art_launch *mm = &a->launches[0];
    cr_assert_eq(mm->kernel, -1);
    expect_list(&mm->args, "arg1_1|reinterpret_tensor(arg0_1, (1024, 4096), (1, 1024), 0)");
    expect_list(&mm->kwnames, "out");
    cr_assert_str_eq(mm->out, "buf0");
    cr_assert_null(mm->target);
    expect_list(&mm->source_nodes, "linear");
    expect_list(&mm->aten_ops, "aten.t|aten.mm");
    const art_launch *addmm = &a->launches[2];
    expect_list(&addmm->args, "arg4_1|buf1|reinterpret_tensor(arg3_1, (4096, 1024), (1, 4096), 0)");
    expect_list(&addmm->kwnames, "alpha|beta|out");
    expect_list(&addmm->kwvals, "1|1|buf2");
    cr_assert_str_eq(addmm->out, "buf2");
    const art_launch *conv = &a->launches[3];
    expect_list(&conv->args, "arg5_1|arg6_1");
    expect_list(&conv->kwnames, "stride|padding|dilation|transposed|output_padding|groups|bias");
    expect_list(&conv->kwvals, "(1, 1)|(1, 1)|(1, 1)|False|(0, 0)|1|None");
    cr_assert_str_eq(conv->target, "buf3");
    cr_assert_null(conv->out);
    expect_span(a, conv->span, "buf3 = extern_kernels.convolution(arg5_1, arg6_1, stride=(1, 1), "
                               "padding=(1, 1), dilation=(1, 1), transposed=False, output_padding=(0, 0), "
                               "groups=1, bias=None)");
    cr_assert_str_eq(a->stmts[conv->stmt].target, "buf3");
    expect_numels(&a->launches[1], "262144");
    expect_list(&a->launches[4].args, "buf4|arg7_1|524288");
    cr_assert_eq(a->launches[4].kernel, 1);
    /* reuse aliases */
    const art_stmt *al = &a->stmts[16];
    cr_assert_str_eq(al->target, "buf1");
    cr_assert_str_eq(al->of, "buf0");
    cr_assert(al->reuse);
    cr_assert_eq(a->ninputs, 8);
    cr_assert_str_eq(a->inputs[5].shape, "(8, 3, 64, 64)");
    artifact_free(a);
}

/* ---------- hand-made: template, dynamic shapes, multi-line launch, unknowns ---------- */

Test(artifact, handmade_edge_def) {
    artifact *a = parse_fixture("handmade_edge_def.py");
    check_invariants(a, "handmade_edge_def");
    cr_assert_eq(a->warnings.n, 0, "%s", a->warnings.n ? a->warnings.v[0] : "");
    cr_assert_eq(a->nkernels, 2);
    const art_kernel *t = &a->kernels[0];
    cr_assert_str_eq(t->name, "triton_tem_fused_mm_0");
    cr_assert_eq(t->kind, ART_K_TEMPLATE);
    expect_signature(t, "arg_A:*fp32:in,arg_B:*fp32:in,out_ptr0:*fp32:out");
    cr_assert_str_eq(t->grid_type, "FixedGrid");
    cr_assert_eq(t->nhints, 0);
    char *lit = span_text(a, t->literal);
    cr_assert(starts_with(lit, "\"\"\"\nimport triton"));
    free(lit);
    const art_kernel *p = &a->kernels[1];
    cr_assert_eq(p->kind, ART_K_POINTWISE);
    expect_signature(p, "in_ptr0:*fp32:in,in_ptr1:*fp32:in,out_ptr0:*fp32:out,ks0:i64:scalar,"
                        "xnumel:i32:scalar,XBLOCK:constexpr:constexpr");
    cr_assert(strstr(p->source, "\"never fires\\n\""), "raw literal must keep its backslash");
    cr_assert_null(p->kernel_path == NULL ? NULL : strstr(p->kernel_path, "\n"));
    expect_list(&p->graph_fragment,
                "%mul : Tensor \"f32[s0, 256][256, 1]cuda:0\"[num_users=1] = call_function[target=torch.ops.aten.mul.Tensor](args = (%arg3_1, 2.0), kwargs = {})|"
                "%add : Tensor \"f32[s0, 256][256, 1]cuda:0\"[num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%mul, %mm), kwargs = {})");

    cr_assert_eq(a->nasync_other, 2);
    char *cpp = span_text(a, a->async_other[0].span);
    cr_assert(starts_with(cpp, "cpp_fused_sum_2 = async_compile.cpp_pybinding("));
    free(cpp);
    cr_assert_eq(a->async_other[0].line, 128);

    expect_stmt_kinds(a, "unpack args_clear alias assert assert assert device device alloc stream launch "
                         "del del unknown alloc scalar stream launch del del vendor del alloc unknown return");
    cr_assert_eq(a->nlaunches, 3);
    const art_launch *l0 = &a->launches[0];
    expect_list(&l0->args, "arg1_1|arg2_1|buf0|32|1|1");
    cr_assert_eq(l0->nextra, 3);
    cr_assert_eq(l0->nnumels, 0);
    const art_launch *l1 = &a->launches[1];
    cr_assert_eq(l1->line, 167);
    expect_list(&l1->args, "arg3_1|buf0|buf1|s0|triton_poi_fused_add_mul_1_xnumel");
    expect_list(&l1->kwnames, "stream");
    cr_assert_eq(l1->nnumels, 0);   /* the numel is symbolic */
    cr_assert_eq(l1->nextra, 0);
    cr_assert_str_eq(art_launch_param(a, l1, 3)->name, "ks0");
    cr_assert_eq(art_launch_param(a, l1, 3)->role, ART_ROLE_SCALAR);
    char *sp = span_text(a, l1->span);
    cr_assert(starts_with(sp, "triton_poi_fused_add_mul_1.run(\n            arg3_1,  # the dynamic input\n"), "%s", sp);
    cr_assert(sp[strlen(sp) - 1] == ')');
    free(sp);
    const art_stmt *ls = &a->stmts[l1->stmt];
    cr_assert_eq(ls->line, 167);
    cr_assert(starts_with(a->text + ls->line_end - 10, "        )\n"));
    const art_launch *l2 = &a->launches[2];
    cr_assert_eq(l2->kind, ART_L_VENDOR);
    cr_assert_str_eq(l2->callee, "torch.ops.aten.cumsum.default");
    cr_assert_str_eq(l2->target, "buf2");
    expect_list(&l2->args, "buf1|1");
    expect_list(&l2->aten_ops, "aten.cumsum");

    /* unknown statements are listed with their lines, never dropped */
    size_t nu = 0;
    for (size_t i = 0; i < a->nstmts; i++) {
        const art_stmt *s = &a->stmts[i];
        if (s->kind != ART_ST_UNKNOWN) continue;
        if (nu == 0) {
            cr_assert_eq(s->line, 162);
            expect_span(a, s->span, "run_intermediate_hooks('mm', buf0)");
        } else {
            cr_assert_eq(s->line, 180);
            expect_span(a, s->span, "cpp_fused_sum_2(buf2, buf3)");
        }
        nu++;
    }
    cr_assert_eq(nu, 2);
    /* `del arg3_1; del buf0` are two inline statements */
    const art_stmt *d1 = &a->stmts[18], *d2 = &a->stmts[19];
    cr_assert(d1->inline_part && d2->inline_part);
    expect_list(&d1->names, "arg3_1");
    expect_list(&d2->names, "buf0");
    cr_assert_eq(d1->line_start, d2->line_start);
    const art_stmt *sc = &a->stmts[15];
    cr_assert_str_eq(sc->target, "triton_poi_fused_add_mul_1_xnumel");
    const art_stmt *s0 = &a->stmts[2];
    cr_assert_str_eq(s0->target, "s0");
    cr_assert_str_eq(s0->of, "arg0_1");
    cr_assert_str_eq(a->stmts[22].shape, "(1, )");
    cr_assert_eq(a->ninputs, 4);
    cr_assert_str_eq(a->inputs[0].name, "arg0_1");
    cr_assert_str_eq(a->inputs[0].value, "64");
    cr_assert_null(a->inputs[0].shape);
    cr_assert_str_eq(a->inputs[3].shape, "(64, 256)");
    artifact_free(a);
}

/* ---------- captured fixtures (torch 2.11 on the H200) ---------- */

typedef struct real_case {
    const char *file;
    size_t nkernels, nlaunches, nvendor, nalloc, nstmts;
    const char *kinds;        /* kernel kinds, comma separated */
    const char *callees;      /* launch callees, comma separated */
} real_case;

static const real_case REAL[] = {
    {"01_gelu_residual_g0.py", 1, 1, 0, 1, 10, "pointwise", "triton_poi_fused_add_gelu_mul_0"},
    {"02_softmax_wide_g0.py", 5, 5, 0, 4, 25,
     "reduction,persistent_reduction,reduction,persistent_reduction,pointwise",
     "triton_red_fused_prepare_softmax_online_0,triton_per_fused_prepare_softmax_online_1,"
     "triton_red_fused_prepare_softmax_online_2,triton_per_fused_prepare_softmax_online_3,"
     "triton_poi_fused__softmax_exp_sub_4"},
    {"02_softmax_wide__max_autotune_no_cudagraphs_g0.py", 5, 5, 0, 4, 25,
     "reduction,persistent_reduction,reduction,persistent_reduction,pointwise",
     "triton_red_fused_prepare_softmax_online_0,triton_per_fused_prepare_softmax_online_1,"
     "triton_red_fused_prepare_softmax_online_2,triton_per_fused_prepare_softmax_online_3,"
     "triton_poi_fused__softmax_exp_sub_4"},
    {"03_log_softmax_g0.py", 1, 1, 0, 1, 10, "reduction",
     "triton_red_fused__log_softmax_prepare_softmax_online_sub_0"},
    {"04_layernorm_g0.py", 1, 1, 0, 1, 14, "reduction", "triton_red_fused_native_layer_norm_0"},
    {"05_rmsnorm_g0.py", 1, 1, 0, 1, 10, "persistent_reduction", "triton_per_fused_add_div_mean_pow_sqrt_0"},
    {"06_groupnorm_g0.py", 3, 3, 0, 6, 28, "reduction,persistent_reduction,pointwise",
     "triton_red_fused_native_group_norm_0,triton_per_fused_native_group_norm_1,"
     "triton_poi_fused_native_group_norm_2"},
    {"07_sum_inner_g0.py", 1, 1, 0, 1, 10, "reduction", "triton_red_fused_sum_0"},
    {"08_mean_outer_g0.py", 2, 2, 0, 2, 15, "reduction,persistent_reduction",
     "triton_red_fused_mean_0,triton_per_fused_mean_1"},
    {"09_max_middle_g0.py", 1, 1, 0, 1, 10, "reduction", "triton_red_fused_max_0"},
    {"10_argmax_inner_g0.py", 1, 1, 0, 1, 10, "reduction", "triton_red_fused_argmax_0"},
    {"11_cumsum_g0.py", 1, 1, 0, 1, 10, "reduction", "triton_red_fused_cumsum_0"},
    {"12_avgpool2d_g0.py", 1, 1, 0, 1, 10, "pointwise", "triton_poi_fused_avg_pool2d_0"},
    {"13_maxpool2d_g0.py", 1, 1, 0, 1, 10, "pointwise", "triton_poi_fused_max_pool2d_with_indices_0"},
    {"14_gemm_bias_relu_g0.py", 1, 2, 1, 1, 18, "pointwise",
     "extern_kernels.mm,triton_poi_fused_add_addmm_relu_0"},
    {"14_gemm_bias_relu__max_autotune_no_cudagraphs_g0.py", 1, 2, 1, 1, 18, "pointwise",
     "extern_kernels.mm,triton_poi_fused_add_addmm_relu_0"},
    {"15_conv_bn_relu_g0.py", 3, 4, 1, 3, 33, "pointwise,pointwise,pointwise",
     "triton_poi_fused_convolution_0,triton_poi_fused_convolution_1,extern_kernels.convolution,"
     "triton_poi_fused__native_batch_norm_legit_no_training_convolution_relu_2"},
    {"16_mlp_block_g0.py", 5, 11, 5, 5, 67,
     "persistent_reduction,pointwise,persistent_reduction,pointwise,persistent_reduction",
     "triton_per_fused_native_layer_norm_0,extern_kernels.mm,triton_poi_fused_addmm_gelu_1,"
     "extern_kernels.mm,triton_per_fused_add_addmm_native_layer_norm_2,extern_kernels.mm,"
     "triton_poi_fused_addmm_gelu_1,extern_kernels.mm,triton_poi_fused_add_addmm_3,"
     "extern_kernels.addmm,triton_per_fused__softmax_exp_prepare_softmax_online_sub_4"},
    {"only_matmul_g0.py", 0, 1, 1, 1, 11, "", "extern_kernels.mm"},
};

Test(artifact, captured_fixtures_exact_counts) {
    for (size_t c = 0; c < sizeof REAL / sizeof *REAL; c++) {
        const real_case *rc = &REAL[c];
        artifact *a = parse_fixture(rc->file);
        check_invariants(a, rc->file);
        cr_assert_eq(a->entry.form, ART_ENTRY_RUNNER, "%s", rc->file);
        cr_assert(a->entry.runner_instance && a->entry.call_bound, "%s", rc->file);
        cr_assert_eq(a->nkernels, rc->nkernels, "%s: %zu kernels", rc->file, a->nkernels);
        cr_assert_eq(a->nlaunches, rc->nlaunches, "%s: %zu launches", rc->file, a->nlaunches);
        size_t nv = 0;
        for (size_t i = 0; i < a->nlaunches; i++) nv += a->launches[i].kind == ART_L_VENDOR;
        cr_assert_eq(nv, rc->nvendor, "%s", rc->file);
        cr_assert_eq(artifact_count(a, ART_ST_ALLOC), rc->nalloc, "%s", rc->file);
        cr_assert_eq(artifact_count(a, ART_ST_UNKNOWN), 0, "%s", rc->file);
        cr_assert_eq(a->nstmts, rc->nstmts, "%s: %zu statements", rc->file, a->nstmts);
        cr_assert_eq(a->warnings.n, 0, "%s: %s", rc->file, a->warnings.n ? a->warnings.v[0] : "");
        cr_assert_eq(a->nasync_other, 1, "%s", rc->file);   /* async_compile.wait(globals()) */
        kbuf k = KBUF_INIT, l = KBUF_INIT;
        for (size_t i = 0; i < a->nkernels; i++)
            kbuf_printf(&k, "%s%s", i ? "," : "", art_kernel_kind_name(a->kernels[i].kind));
        for (size_t i = 0; i < a->nlaunches; i++) kbuf_printf(&l, "%s%s", i ? "," : "", a->launches[i].callee);
        cr_assert_str_eq(kbuf_str(&k), rc->kinds, "%s", rc->file);
        cr_assert_str_eq(kbuf_str(&l), rc->callees, "%s", rc->file);
        kbuf_free(&k);
        kbuf_free(&l);
        for (size_t i = 0; i < a->nkernels; i++) {
            cr_assert_gt(a->kernels[i].nparams, 0, "%s", rc->file);
            cr_assert_not_null(a->kernels[i].heuristic, "%s", rc->file);
            cr_assert_str_eq(a->kernels[i].grid_type, strcmp(rc->file, "15_conv_bn_relu_g0.py") ? "Grid1D" : "Grid2D");
            cr_assert_not_null(a->kernels[i].kernel_path, "%s", rc->file);
            cr_assert_gt(a->kernels[i].aten_ops.n, 0, "%s", rc->file);
        }
        cr_assert_eq(a->ninputs, a->entry.inputs.n, "%s", rc->file);
        artifact_free(a);
    }
}

Test(artifact, captured_mlp_block_details) {
    artifact *a = parse_fixture("16_mlp_block_g0.py");
    expect_signature(&a->kernels[1], "in_out_ptr0:*fp32:inout,in_ptr0:*fp32:in,xnumel:i32:scalar,"
                                     "XBLOCK:constexpr:constexpr");
    expect_hints(&a->kernels[0], "x=4096,r0_=1024");
    expect_list(&a->kernels[4].aten_ops, "prims.prepare_softmax_online|aten.sub|aten.exp|aten._softmax");
    /* the gelu kernel is launched twice */
    cr_assert_eq(a->launches[2].kernel, 1);
    cr_assert_eq(a->launches[6].kernel, 1);
    expect_list(&a->launches[6].args, "buf12|arg10_1|16777216");
    expect_list(&a->launches[1].args, "buf3|reinterpret_tensor(arg3_1, (1024, 4096), (1, 1024), 0)");
    cr_assert_str_eq(a->launches[1].out, "buf4");
    expect_list(&a->launches[9].kwvals, "1|1|buf15");
    expect_numels(&a->launches[10], "4096,1000");
    expect_list(&a->launches[10].args, "buf18|4096|1000");
    cr_assert_eq(a->launches[10].line, 463);
    size_t reuse = 0;
    for (size_t i = 0; i < a->nstmts; i++) reuse += a->stmts[i].kind == ART_ST_ALIAS && a->stmts[i].reuse;
    cr_assert_eq(reuse, 6);
    cr_assert_eq(a->entry.inputs.n, 15);
    artifact_free(a);
}

Test(artifact, captured_conv_bn_relu_details) {
    artifact *a = parse_fixture("15_conv_bn_relu_g0.py");
    expect_hints(&a->kernels[0], "y=1024,x=16384");
    expect_signature(&a->kernels[0], "in_ptr0:*fp32:in,out_ptr0:*fp32:out,ynumel:i32:scalar,"
                                     "xnumel:i32:scalar,YBLOCK:constexpr:constexpr,XBLOCK:constexpr:constexpr");
    expect_numels(&a->launches[1], "2048,9");
    const art_launch *conv = &a->launches[2];
    cr_assert_str_eq(conv->target, "buf2");
    expect_list(&conv->args, "buf0|buf1");
    cr_assert_eq(conv->kwnames.n, 7);
    cr_assert_str_eq(a->stmts[0].kind == ART_ST_UNPACK ? "ok" : "no", "ok");
    artifact_free(a);
}

Test(artifact, captured_mean_outer_inout) {
    artifact *a = parse_fixture("08_mean_outer_g0.py");
    expect_list(&a->kernels[1].mutated, "in_out_ptr0");
    cr_assert_eq(a->kernels[1].params[0].role, ART_ROLE_INOUT);
    expect_list(&a->launches[1].args, "buf2|buf0|8192|16");
    artifact_free(a);
}

/* Any fixture added later parses, satisfies the invariants and lists no warning. */
Test(artifact, every_fixture_parses) {
    char *dir = tu_fixture_path(FIX);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    struct dirent *de;
    size_t n = 0;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 4 || strcmp(de->d_name + l - 3, ".py")) continue;
        artifact *a = parse_fixture(de->d_name);
        check_invariants(a, de->d_name);
        cr_assert_eq(a->warnings.n, 0, "%s: %s", de->d_name, a->warnings.n ? a->warnings.v[0] : "");
        cr_assert_gt(a->nlaunches, 0, "%s", de->d_name);
        artifact_free(a);
        n++;
    }
    closedir(d);
    free(dir);
    cr_assert_geq(n, 3);
}

/* ---------- small inline modules ---------- */

#define KSRC(name, deco)                                                                      \
    name " = async_compile.triton('" name "', '''\n"                                           \
    "import triton\n"                                                                          \
    "@triton_heuristics." deco "\n"                                                            \
    "@triton.jit\n"                                                                            \
    "def " name "(in_ptr0, out_ptr0, xnumel, XBLOCK : tl.constexpr):\n"                         \
    "    pass\n"                                                                               \
    "''', device_str='cuda')\n"

#define POINTWISE_DECO                                                                        \
    "pointwise(size_hints={'x': 1024}, triton_meta={'signature': {'in_ptr0': '*fp32', "       \
    "'out_ptr0': '*fp32', 'xnumel': 'i32', 'XBLOCK': 'constexpr'}}, "                           \
    "inductor_meta={'grid_type': 'Grid1D', 'mutated_arg_names': []})"

Test(artifact, unknown_statements_are_listed) {
    const char *src = KSRC("triton_poi_k_0", POINTWISE_DECO)
        "def call(args):\n"
        "    a, = args\n"
        "    print('hello')\n"
        "    x.y = 3\n"
        "    if a:\n"
        "        triton_poi_k_0.run(a, a, 1024, stream=s)\n"
        "    a += 1\n"
        "    return ()\n";
    artifact *a = parse_str(src);
    expect_stmt_kinds(a, "unpack unknown unknown unknown launch unknown return");
    cr_assert_eq(a->stmts[1].line, 10);
    expect_span(a, a->stmts[1].span, "print('hello')");
    expect_span(a, a->stmts[2].span, "x.y = 3");
    expect_span(a, a->stmts[3].span, "if a:");
    cr_assert_eq(a->stmts[4].depth, 1);
    expect_span(a, a->stmts[5].span, "a += 1");
    cr_assert_eq(a->stmts[5].line, 14);
    json_t *j = artifact_to_json(a);
    json_t *u = json_object_get(j, "unknown_statements");
    cr_assert_eq(json_array_size(u), 4);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(u, 0), "text")), "print('hello')");
    cr_assert_eq(json_integer_value(json_object_get(json_array_get(u, 3), "line")), 14);
    json_decref(j);
    artifact_free(a);
}

Test(artifact, nested_with_blocks_are_walked) {
    const char *src = KSRC("triton_poi_k_0", POINTWISE_DECO)
        "def call(args):\n"
        "    with torch.cuda._DeviceGuard(0):\n"
        "        with torch.profiler.record_function('x'):\n"
        "            triton_poi_k_0.run(a, b, 1024, stream=stream0)\n"
        "        extern_kernels.bmm(a, b, out=c)\n"
        "    return (c, )\n";
    artifact *a = parse_str(src);
    expect_stmt_kinds(a, "device block launch vendor return");
    cr_assert_eq(a->stmts[2].depth, 2);
    cr_assert_eq(a->stmts[3].depth, 1);
    cr_assert_eq(a->nlaunches, 2);
    cr_assert_str_eq(a->launches[0].indent, "            ");
    cr_assert_str_eq(a->launches[1].callee, "extern_kernels.bmm");
    cr_assert_str_eq(a->launches[1].out, "c");
    artifact_free(a);
}

Test(artifact, old_forms_and_unknown_kernels) {
    const char *src =
        "triton_poi_k_0 = async_compile.triton('triton_', '''\n"
        "@triton_heuristics.pointwise([1024, 32], {'signature': {0: '*fp32', 1: 'i32'}})\n"
        "@triton.jit\n"
        "def triton_(in_ptr0, xnumel, XBLOCK : tl.constexpr):\n"
        "    pass\n"
        "''')\n"
        "def call(args):\n"
        "    triton_poi_k_0[grid(1024)](buf0, 1024, XBLOCK=128, num_warps=4)\n"
        "    triton_poi_other_1.run(buf0, buf1, 64, 8, stream=s)\n"
        "    buf2 = aten.mm(a, b)\n"
        "    buf3 = empty((8, 198, 768), device='cuda', dtype=torch.float32)\n"
        "    buf4 = buf2[1]\n";
    artifact *a = parse_str(src);
    const art_kernel *k = &a->kernels[0];
    cr_assert_str_eq(k->name, "triton_poi_k_0");
    cr_assert_str_eq(k->jit_name, "triton_");
    expect_hints(k, "0=1024,1=32");   /* old list form */
    cr_assert_eq(k->nparams, 0);      /* signature passed positionally: not read */
    expect_stmt_kinds(a, "launch launch vendor alloc alias");
    cr_assert_eq(a->launches[0].kernel, 0);
    expect_list(&a->launches[0].kwnames, "XBLOCK|num_warps");
    cr_assert_eq(a->launches[1].kernel, -1);
    expect_numels(&a->launches[1], "64,8");   /* trailing integers when the kernel is unknown */
    cr_assert_str_eq(a->launches[2].callee, "aten.mm");
    cr_assert_str_eq(a->launches[2].target, "buf2");
    cr_assert_str_eq(a->stmts[3].shape, "(8, 198, 768)");
    cr_assert_null(a->stmts[3].stride);
    cr_assert_str_eq(a->stmts[3].dtype, "torch.float32");
    cr_assert_str_eq(a->stmts[4].of, "buf2");
    cr_assert_eq(a->warnings.n, 1);
    cr_assert(strstr(a->warnings.v[0], "line 9: launch of unknown kernel triton_poi_other_1"), "%s", a->warnings.v[0]);
    artifact_free(a);
}

Test(artifact, integer_signature_keys) {
    const char *src = KSRC("triton_poi_k_0", "pointwise(size_hints={'x': 64}, triton_meta={'signature': "
                                             "{0: '*fp32', 1: '*fp32', 2: 'i32'}}, inductor_meta={})")
                      "def call(args):\n    triton_poi_k_0.run(a, b, 64)\n";
    artifact *a = parse_str(src);
    expect_signature(&a->kernels[0], "0:*fp32:in,1:*fp32:in,2:i32:scalar");
    cr_assert_null(a->kernels[0].grid_type);
    expect_numels(&a->launches[0], "");   /* "2" does not end in numel */
    artifact_free(a);
}

Test(artifact, kernel_without_decorator_warns) {
    const char *src =
        "triton_red_user_0 = async_compile.triton('triton_red_user_0', '''\n"
        "@triton.jit\n"
        "def triton_red_user_0(x):\n"
        "    pass\n"
        "''', device_str='cuda')\n"
        "k = async_compile.triton(name, src)\n"
        "def call(args):\n    triton_red_user_0.run(a, 8)\n";
    artifact *a = parse_str(src);
    cr_assert_eq(a->nkernels, 1);
    cr_assert_eq(a->kernels[0].kind, ART_K_REDUCTION);   /* from the name */
    cr_assert_null(a->kernels[0].heuristic);
    cr_assert_eq(a->nasync_other, 1);                    /* the unreadable one, kept verbatim */
    cr_assert_eq(a->warnings.n, 2);
    cr_assert(strstr(a->warnings.v[0], "no @triton_heuristics decorator"), "%s", a->warnings.v[0]);
    cr_assert(strstr(a->warnings.v[1], "line 6: unreadable async_compile.triton"), "%s", a->warnings.v[1]);
    expect_numels(&a->launches[0], "8");
    artifact_free(a);
}

Test(artifact, decorator_on_demand) {
    artifact *a = parse_fixture("handmade_softmax_def.py");
    pyval *d = NULL;
    kerr e = {0};
    cr_assert_eq(art_kernel_decorator(&a->kernels[2], &d, &e), 0, "%s", e.msg);
    cr_assert_eq(d->kind, PYV_CALL);
    const pyval *tm = pyval_kwarg(d, "triton_meta");
    cr_assert_eq(pyval_dict_get(tm, "device")->kind, PYV_CALL);
    cr_assert_eq(pyval_kwarg(pyval_dict_get(tm, "device"), "multi_processor_count")->i, 132);
    const pyval *im = pyval_kwarg(d, "inductor_meta");
    cr_assert_eq(pyval_dict_get(im, "num_load")->i, 2);
    pyval_free(d);
    artifact_free(a);
}

Test(artifact, several_entry_points_use_the_last) {
    const char *src = "def call(args):\n    a = 1\n\ndef call(args):\n    b = 2\n    return ()\n";
    artifact *a = parse_str(src);
    cr_assert_eq(a->entry.line, 4);
    cr_assert_eq(a->nstmts, 2);
    cr_assert_eq(a->warnings.n, 1);
    cr_assert(strstr(a->warnings.v[0], "line 4: several call() entry points"), "%s", a->warnings.v[0]);
    artifact_free(a);
}

Test(artifact, runner_without_binding_warns) {
    const char *src = "class Runner:\n    def __init__(self):\n        pass\n"
                      "    def call(self, args):\n        return ()\n";
    artifact *a = parse_str(src);
    cr_assert_eq(a->entry.form, ART_ENTRY_RUNNER);
    cr_assert_eq(a->entry.line, 4);
    cr_assert_eq(a->warnings.n, 1);
    cr_assert(strstr(a->warnings.v[0], "runner = Runner"), "%s", a->warnings.v[0]);
    artifact_free(a);
}

Test(artifact, crlf_module) {
    const char *src = "def call(args):\r\n    a, b = args\r\n    extern_kernels.mm(a, b, out=c)\r\n    return (c, )\r\n";
    artifact *a = parse_str(src);
    expect_stmt_kinds(a, "unpack vendor return");
    cr_assert_eq(a->launches[0].line, 3);
    const art_stmt *s = &a->stmts[1];
    cr_assert_eq(s->line_end - s->line_start, strlen("    extern_kernels.mm(a, b, out=c)\r\n"));
    artifact_free(a);
}

Test(artifact, find_kernel_and_names) {
    artifact *a = parse_fixture("handmade_softmax_def.py");
    cr_assert_eq(artifact_find_kernel(a, "triton_per_fused_add_sum_2"), 2);
    cr_assert_eq(artifact_find_kernel(a, "nope"), -1);
    cr_assert_str_eq(art_kernel_kind_name(ART_K_PERSISTENT), "persistent_reduction");
    cr_assert_str_eq(art_role_name(ART_ROLE_CONSTEXPR), "constexpr");
    cr_assert_str_eq(art_stmt_kind_name(ART_ST_VENDOR), "vendor");
    cr_assert_str_eq(art_stmt_kind_name((art_stmt_kind)99), "?");
    artifact_free(a);
}

Test(artifact, json_document) {
    artifact *a = parse_fixture("handmade_mlp_runner.py");
    json_t *j = artifact_to_json(a);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "entry"), "form")), "runner");
    json_t *counts = json_object_get(j, "counts");
    cr_assert_eq(json_integer_value(json_object_get(counts, "kernels")), 2);
    cr_assert_eq(json_integer_value(json_object_get(counts, "launches")), 5);
    cr_assert_eq(json_integer_value(json_object_get(counts, "vendor_calls")), 3);
    cr_assert_eq(json_integer_value(json_object_get(counts, "buffers")), 2);
    cr_assert_eq(json_integer_value(json_object_get(counts, "statements")), 34);
    json_t *l1 = json_array_get(json_object_get(j, "launches"), 1);
    json_t *arg0 = json_array_get(json_object_get(l1, "args"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(arg0, "text")), "buf1");
    cr_assert_str_eq(json_string_value(json_object_get(arg0, "param")), "in_out_ptr0");
    cr_assert_str_eq(json_string_value(json_object_get(arg0, "role")), "inout");
    json_t *l3 = json_array_get(json_object_get(j, "launches"), 3);
    cr_assert_str_eq(json_string_value(json_object_get(l3, "target")), "buf3");
    cr_assert(json_is_null(json_object_get(l3, "kernel")));
    json_t *k0 = json_array_get(json_object_get(j, "kernels"), 0);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(k0, "size_hints"), "x")), 262144);
    cr_assert_eq(json_array_size(json_object_get(k0, "launches")), 1);
    json_t *buf = json_array_get(json_object_get(j, "buffers"), 1);
    cr_assert_str_eq(json_string_value(json_object_get(buf, "name")), "buf2");
    cr_assert_str_eq(json_string_value(json_object_get(buf, "shape")), "(64, 1024)");
    cr_assert_eq(json_array_size(json_object_get(j, "unknown_statements")), 0);
    cr_assert_eq(json_array_size(json_object_get(j, "inputs")), 8);
    json_decref(j);
    artifact_free(a);
}

/* ---------- malformed modules: KOPT_E_PARSE naming the line ---------- */

Test(artifact, error_unterminated_triple_quote) {
    kerr e = parse_fail("import torch\n\nk = async_compile.triton('k', '''\nimport triton\n\ndef call(args):\n    pass\n");
    cr_assert(strstr(e.msg, "line 3:") && strstr(e.msg, "unterminated triple-quoted"), "%s", e.msg);
}

Test(artifact, error_unbalanced_brackets) {
    kerr e = parse_fail("def call(args):\n    buf0 = empty_strided_cuda((16, 1024), (1024, 1), torch.float32\n    return (buf0, )\n");
    cr_assert(strstr(e.msg, "line 2:") && strstr(e.msg, "unbalanced"), "%s", e.msg);
    e = parse_fail("def call(args):\n    f(a))\n");
    cr_assert(strstr(e.msg, "line 2:") && strstr(e.msg, "unbalanced"), "%s", e.msg);
}

Test(artifact, error_missing_call) {
    kerr e = parse_fail("import torch\n\ndef get_args():\n    return []\n\ndef calls(args):\n    pass\n");
    cr_assert(strstr(e.msg, "no call() entry point") && strstr(e.msg, "lines 1-7"), "%s", e.msg);
    e = parse_fail("");
    cr_assert(strstr(e.msg, "no call() entry point"), "%s", e.msg);
    e = parse_fail("class Runner:\n    def calls(self, args):\n        pass\n");
    cr_assert(strstr(e.msg, "no call() entry point"), "%s", e.msg);
}

Test(artifact, error_call_without_body) {
    kerr e = parse_fail("x = 1\ndef call(args): pass\n");
    cr_assert(strstr(e.msg, "line 2:") && strstr(e.msg, "no indented body"), "%s", e.msg);
}

Test(artifact, error_bad_indentation) {
    kerr e = parse_fail("def call(args):\n        a = 1\n    b = 2\n");
    cr_assert(strstr(e.msg, "line 3:"), "%s", e.msg);
}

/* ---------- pathological nesting: KOPT_E_PARSE naming the line, never a stack overflow ---------- */

static double ta_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* head + prefix * n + mid + suffix * n + tail */
static char *ta_module(const char *head, const char *prefix, size_t n, const char *mid,
                       const char *suffix, const char *tail) {
    kbuf b = KBUF_INIT;
    kbuf_puts(&b, head);
    for (size_t i = 0; i < n; i++) kbuf_puts(&b, prefix);
    kbuf_puts(&b, mid);
    for (size_t i = 0; i < n; i++) kbuf_puts(&b, suffix);
    kbuf_puts(&b, tail);
    return kbuf_steal(&b);
}

static const struct { const char *prefix, *mid, *suffix; size_t n; } DEEP[] = {
    {"-", "1", "", 100000},
    {"-", "x", "", 100000},
    {"+", "x", "", 100000},
    {"(", "1", ")", 100000},
    {"[", "1", "]", 100000},
    {"{", "1", "}", 100000},
    {"f(", "1", ")", 50000},
    {"", "a", ".b", 50000},
    {"", "f", "()", 50000},
    {"", "x", "[0]", 33000},
    {"(-", "1", ")", 150},
    {"", "-a", ".b", 199},
};

Test(artifact, error_deep_nesting_in_call_body) {
    for (size_t i = 0; i < sizeof DEEP / sizeof *DEEP; i++) {
        /* as an assignment's value (line 2) and as an expression statement (line 3) */
        for (int stmt = 0; stmt < 2; stmt++) {
            char *src = ta_module(stmt ? "def call(args):\n    a, = args\n    " : "def call(args):\n    x = ",
                                  DEEP[i].prefix, DEEP[i].n, DEEP[i].mid, DEEP[i].suffix,
                                  "\n    return ()\n");
            double t0 = ta_now();
            artifact *a = NULL;
            kerr e = {0};
            int rc = artifact_parse(src, strlen(src), &a, &e);
            cr_assert_eq(rc, KOPT_E_PARSE, "case %zu/%d: rc %d (%s)", i, stmt, rc, e.msg);
            cr_assert_null(a);
            cr_assert(strstr(e.msg, stmt ? "line 3:" : "line 2:") &&
                      strstr(e.msg, "nesting deeper than 200"), "case %zu/%d: %s", i, stmt, e.msg);
            cr_assert_lt(ta_now() - t0, 1.0, "case %zu/%d", i, stmt);
            free(src);
        }
    }
}

Test(artifact, error_deep_nesting_outside_call) {
    char *src = ta_module("import torch\n\nk = ", "", 50000, "a", ".b",
                          "\n\ndef call(args):\n    return ()\n");
    kerr e = parse_fail(src);
    cr_assert(strstr(e.msg, "line 3:") && strstr(e.msg, "nesting deeper than 200"), "%s", e.msg);
    free(src);
}

Test(artifact, long_iterative_forms_parse) {
    static const struct { const char *prefix, *mid, *suffix; size_t n; } ok[] = {
        {"not ", "x", "", 25000},
        {"~", "x", "", 100000},
        {"", "1", " - 1", 30000},
        {"", "a", ".b - a", 20000},
        {"-", "1", "", 190},
        {"", "a", ".b", 190},
        {"[", "1", "]", 190},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        char *src = ta_module("def call(args):\n    x = ", ok[i].prefix, ok[i].n, ok[i].mid,
                              ok[i].suffix, "\n    return ()\n");
        double t0 = ta_now();
        artifact *a = parse_str(src);
        cr_assert_lt(ta_now() - t0, 1.0, "case %zu", i);
        cr_assert_eq(a->nstmts, 2, "case %zu", i);
        json_t *j = artifact_to_json(a);
        json_decref(j);
        artifact_free(a);
        free(src);
    }
}

Test(artifact, deep_nesting_in_a_decorator_does_not_crash) {
    /* the decorator lives in the kernel's source string: its values are parsed apart, and a
     * value too deep to read is an unreadable decorator, not a crash */
    char *src = ta_module("k = async_compile.triton('k', '''\nimport triton\n"
                          "@triton_heuristics.pointwise(size_hints={'x': ",
                          "-", 100000, "1024", "",
                          "}, triton_meta={'signature': {'in_ptr0': '*fp32'}}, inductor_meta={})\n"
                          "@triton.jit\ndef k(in_ptr0, XBLOCK : tl.constexpr):\n    pass\n"
                          "''', device_str='cuda')\n\ndef call(args):\n    return ()\n");
    double t0 = ta_now();
    artifact *a = parse_str(src);
    cr_assert_eq(a->nkernels, 1);
    pyval *v = NULL;
    kerr e = {0};
    cr_assert_eq(art_kernel_decorator(&a->kernels[0], &v, &e), KOPT_E_PARSE);
    cr_assert_null(v);
    cr_assert(strstr(e.msg, "line 3:") && strstr(e.msg, "nesting deeper than 200"), "%s", e.msg);
    json_t *j = artifact_to_json(a);
    json_decref(j);
    cr_assert_lt(ta_now() - t0, 1.0);
    artifact_free(a);
    free(src);
}
