#include "profile/inspect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "artifact/artifact.h"
#include "artifact/emit.h"
#include "artifact/region.h"
#include "gates/stats.h"
#include "gates/tensor.h"
#include "profile/roofline.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/log.h"

/* Timeouts of the worker's operations, in seconds: generous, since a compile with
 * max-autotune or a first Triton compilation can take minutes; a hang is still caught. */
enum { T_LOAD = 600, T_CEIL = 300, T_COMPILE = 1200, T_RUN = 300, T_PROFILE = 600, T_TIME = 1200 };

static void progress(const inspect_opts *o, const char *stage) {
    if (o->progress) o->progress(stage, o->progress_ctx);
    log_info("%s", stage);
}

json_t *inspect_time_summary(const json_t *samples) {
    size_t n;
    double *v = stats_from_json(samples, &n);
    json_t *o = json_pack("{s:f, s:f, s:f, s:I}", "median_ms", n ? stats_median(v, n) : 0.0,
                          "p10_ms", n ? stats_percentile(v, n, 10) : 0.0, "p90_ms",
                          n ? stats_percentile(v, n, 90) : 0.0, "n", (json_int_t)n);
    free(v);
    return o;
}

/* The fastest of the samples (0 when there are none): a rate the device demonstrably reached. */
static double best_ms(const json_t *samples) {
    size_t n;
    double *v = stats_from_json(samples, &n);
    double m = n ? stats_min(v, n) : 0.0;
    free(v);
    return m > 0 ? m : 0.0;
}

/* A TF32 setting the worker reported: 1, 0, or -1 when absent or not a boolean. */
static int tf32_flag(const json_t *flags, const char *key) {
    const json_t *f = json_object_get(flags, key);
    return json_is_boolean(f) ? json_is_true(f) : -1;
}

json_t *inspect_ceilings(const json_t *raw) {
    double copy_ms = best_ms(json_object_get(raw, "copy_ms"));
    double copy_bytes = json_number_value(json_object_get(raw, "copy_bytes"));
    const json_t *f32 = json_object_get(raw, "mm_fp32"), *b16 = json_object_get(raw, "mm_bf16");
    const json_t *t32 = json_object_get(raw, "mm_tf32");
    double f32_ms = best_ms(json_object_get(f32, "ms")), b16_ms = best_ms(json_object_get(b16, "ms"));
    double t32_ms = best_ms(json_object_get(t32, "ms"));
    double f32_flops = json_number_value(json_object_get(f32, "flops"));
    double b16_flops = json_number_value(json_object_get(b16, "flops"));
    double t32_flops = json_number_value(json_object_get(t32, "flops"));
    double read_ms = best_ms(json_object_get(raw, "read_ms"));
    double write_ms = best_ms(json_object_get(raw, "write_ms"));
    double read_b = json_number_value(json_object_get(raw, "read_bytes"));
    double write_b = json_number_value(json_object_get(raw, "write_bytes"));
    json_t *c = json_pack("{s:f, s:f, s:f, s:f, s:f, s:s}", "copy_gbps",
                          copy_ms > 0 ? copy_bytes / (copy_ms * 1e-3) / 1e9 : 0.0, "read_gbps",
                          read_ms > 0 ? read_b / (read_ms * 1e-3) / 1e9 : 0.0, "write_gbps",
                          write_ms > 0 ? write_b / (write_ms * 1e-3) / 1e9 : 0.0, "fp32_tflops",
                          f32_ms > 0 ? f32_flops / (f32_ms * 1e-3) / 1e12 : 0.0, "bf16_tflops",
                          b16_ms > 0 ? b16_flops / (b16_ms * 1e-3) / 1e12 : 0.0, "method",
                          "the fastest of event-timed runs (a rate the device reached): device-to-device copy "
                          "(bytes read + written), read-only and write-only streaming over a buffer of up to "
                          "4 GiB (the best of several Triton kernel shapes and torch's own), 8192^3 GEMMs on "
                          "random data (fp32 without TF32, fp32 with TF32, bf16)");
    if (t32_ms > 0 && t32_flops > 0) json_object_set_new(c, "tf32_tflops", json_real(t32_flops / (t32_ms * 1e-3) / 1e12));
    const json_t *flags = json_object_get(raw, "tf32");
    if (json_is_object(flags)) {
        json_t *f = json_object();
        if (tf32_flag(flags, "matmul") >= 0) json_object_set_new(f, "matmul", json_boolean(tf32_flag(flags, "matmul")));
        if (tf32_flag(flags, "cudnn") >= 0) json_object_set_new(f, "cudnn", json_boolean(tf32_flag(flags, "cudnn")));
        json_object_set_new(c, "tf32_allowed", f);
    }
    return c;
}

roof_ceilings inspect_roof_ceilings(const json_t *ceilings) {
    const json_t *flags = json_object_get(ceilings, "tf32_allowed");
    roof_ceilings c = {
        .copy_bytes_per_s = json_number_value(json_object_get(ceilings, "copy_gbps")) * 1e9,
        .read_bytes_per_s = json_number_value(json_object_get(ceilings, "read_gbps")) * 1e9,
        .write_bytes_per_s = json_number_value(json_object_get(ceilings, "write_gbps")) * 1e9,
        .fp32_flops_per_s = json_number_value(json_object_get(ceilings, "fp32_tflops")) * 1e12,
        .tf32_flops_per_s = json_number_value(json_object_get(ceilings, "tf32_tflops")) * 1e12,
        .bf16_flops_per_s = json_number_value(json_object_get(ceilings, "bf16_tflops")) * 1e12,
        .tf32_matmul = tf32_flag(flags, "matmul"),
        .tf32_cudnn = tf32_flag(flags, "cudnn"),
    };
    return c;
}

static const char *const MATH_NAMES[] = {"fp32", "tf32", "bf16"};

static roof_role to_roof(art_role r) {
    switch (r) {
    case ART_ROLE_IN: return ROLE_IN;
    case ART_ROLE_OUT: return ROLE_OUT;
    case ART_ROLE_INOUT: return ROLE_INOUT;
    default: return ROLE_SCALAR;
    }
}

/* "extern_kernels.mm" -> "mm"; "torch.ops.aten.cumsum.default" -> "cumsum". */
static char *vendor_op(const char *callee) {
    const char *p = callee;
    if (!strncmp(p, "extern_kernels.", 15)) return kstrdup(p + 15);
    const char *ops = strstr(p, "ops.");
    if (ops) {
        p = ops + 4;
        const char *dot = strchr(p, '.');       /* namespace */
        if (dot) p = dot + 1;
        const char *end = strchr(p, '.');
        return end ? kstrndup(p, (size_t)(end - p)) : kstrdup(p);
    }
    const char *dot = strrchr(p, '.');
    return kstrdup(dot ? dot + 1 : p);
}

static json_t *strlist_json(const art_strlist *l) {
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++) json_array_append_new(a, json_string(l->v[i]));
    return a;
}

/* The buffer a name stands for: plain aliases (`buf1 = buf0`, Inductor's reuse lines) followed
 * back to the name first bound to the storage (a bounded walk). Borrowed from the artifact. */
static const char *io_root(const artifact *a, const char *name) {
    for (int hop = 0; hop < 16; hop++) {
        const char *of = NULL;
        for (size_t s = 0; s < a->nstmts && !of; s++) {
            const art_stmt *st = &a->stmts[s];
            if (st->kind == ART_ST_ALIAS && st->of && st->target && !strcmp(st->target, name)) of = st->of;
        }
        if (!of || !strcmp(of, name)) break;
        name = of;
    }
    return name;
}

/* Whether the buffer `root` leaves call(): it, or a plain alias of it, is in the return. */
static int io_returned(const artifact *a, const art_stmt *ret, const char *root) {
    if (!ret) return 0;
    size_t from = ret->span.off, to = ret->span.off + ret->span.len;
    if (art_word_in(a->text, from, to, root)) return 1;
    for (size_t s = 0; s < a->nstmts; s++) {
        const art_stmt *st = &a->stmts[s];
        if (st->kind == ART_ST_ALIAS && st->of && st->target && art_word_in(a->text, from, to, st->target) &&
            !strcmp(io_root(a, st->target), root))
            return 1;
    }
    return 0;
}

double inspect_io_bytes(const artifact *a, const json_t *rows, double *bytes_written) {
    const art_stmt *ret = NULL;
    for (size_t s = 0; s < a->nstmts; s++) if (a->stmts[s].kind == ART_ST_RETURN) ret = &a->stmts[s];
    art_strlist seen = {0};
    double bytes = 0, written = 0;
    for (size_t i = 0; i < a->nlaunches; i++) {
        const art_launch *l = &a->launches[i];
        const json_t *args = json_object_get(json_array_get(rows, i), "args");
        for (size_t j = 0; j < json_array_size(args); j++) {
            const char *name = art_launch_probe_item(l, j);
            double nb = json_number_value(json_object_get(json_array_get(args, j), "nbytes"));
            if (!name || nb <= 0) continue;
            const char *root = io_root(a, name);
            int input = 0, out = 0, dup = 0;
            for (size_t k = 0; k < a->entry.inputs.n; k++) input |= !strcmp(a->entry.inputs.v[k], root);
            out = io_returned(a, ret, root);
            for (size_t k = 0; k < seen.n && !dup; k++) dup = !strcmp(seen.v[k], root);
            if (dup || !(input || out)) continue;
            art_strlist_push(&seen, kstrdup(root));
            bytes += input ? nb : 0;
            written += out ? nb : 0;
        }
    }
    art_strlist_free(&seen);
    if (bytes_written) *bytes_written = written;
    return bytes + written;
}

json_t *inspect_launch_table(const artifact *a, const json_t *profile, const json_t *ceilings,
                             double *sum_ms) {
    roof_ceilings c = inspect_roof_ceilings(ceilings);
    const json_t *times = json_object_get(profile, "times");
    const json_t *plaunch = json_object_get(profile, "launches");
    size_t reps = json_array_size(times);
    double *col = kcalloc(reps ? reps : 1, sizeof *col);
    json_t *out = json_array();
    *sum_ms = 0;
    for (size_t i = 0; i < a->nlaunches; i++) {
        const art_launch *l = &a->launches[i];
        for (size_t r = 0; r < reps; r++)
            col[r] = json_number_value(json_array_get(json_array_get(times, r), i));
        double med = reps ? stats_median(col, reps) : 0.0;
        *sum_ms += med;
        const json_t *args = json_object_get(json_array_get(plaunch, i), "args");
        roof_traffic t;
        json_t *row = json_object();
        json_object_set_new(row, "index", json_integer((json_int_t)i));
        json_object_set_new(row, "line", json_integer(l->line));
        json_object_set_new(row, "name", json_string(l->callee));
        roof_math math = ROOF_MATH_FP32;
        if (l->kind == ART_L_TRITON) {
            json_object_set_new(row, "kind", json_string("triton"));
            const art_kernel *k = l->kernel >= 0 ? &a->kernels[l->kernel] : NULL;
            json_object_set_new(row, "kernel_kind",
                                json_string(k ? art_kernel_kind_name(k->kind) : "unknown"));
            roof_role *roles = kcalloc(l->args.n ? l->args.n : 1, sizeof *roles);
            for (size_t j = 0; j < l->args.n; j++) {
                const art_param *p = art_launch_param(a, l, j);
                roles[j] = p ? to_roof(p->role) : ROLE_SCALAR;
                /* an in_out_ptr the body only loads from (a reused buffer) is read, not written */
                if (roles[j] == ROLE_INOUT && k && !art_kernel_param_stored(k, p->name)) roles[j] = ROLE_IN;
            }
            roof_triton_traffic(roles, l->args.n, args, &t);
            free(roles);
            /* Inductor's GEMM templates (max-autotune) compute arg_A @ arg_B: their flops at the
             * matrix rate are their floor, as a library call's */
            if (k && k->kind == ART_K_TEMPLATE) {
                const json_t *ma = NULL, *mb = NULL;
                for (size_t j = 0; j < l->args.n; j++) {
                    const art_param *p = art_launch_param(a, l, j);
                    if (p && !strcmp(p->name, "arg_A")) ma = json_array_get(args, j);
                    if (p && !strcmp(p->name, "arg_B")) mb = json_array_get(args, j);
                }
                t.flops = roof_gemm_flops(ma, mb);
                if (t.flops > 0) {
                    math = roof_vendor_math("mm", json_string_value(json_object_get(ma, "dtype")), &c);
                    json_object_set_new(row, "math", json_string(MATH_NAMES[math]));
                }
            }
            json_object_set_new(row, "aten_ops", strlist_json(k ? &k->aten_ops : &l->aten_ops));
        } else {
            char *op = vendor_op(l->callee);
            json_object_set_new(row, "kind", json_string("vendor"));
            json_object_set_new(row, "op", json_string(op));
            /* an ATen fallback a Triton candidate may replace (artifact/region.h, vendor regions) */
            json_object_set_new(row, "replaceable", json_boolean(region_vendor_op(l->callee) >= 0));
            roof_vendor_traffic(op, args, art_launch_probe_out(l), &t);
            json_object_set_new(row, "aten_ops", strlist_json(&l->aten_ops));
            const json_t *a0 = json_array_get(args, 0);
            math = roof_vendor_math(op, json_string_value(json_object_get(a0, "dtype")), &c);
            free(op);
            if (t.flops > 0) json_object_set_new(row, "math", json_string(MATH_NAMES[math]));
        }
        json_object_set_new(row, "time_ms", json_real(med));
        if (reps) {
            json_object_set_new(row, "time_p10_ms", json_real(stats_percentile(col, reps, 10)));
            json_object_set_new(row, "time_p90_ms", json_real(stats_percentile(col, reps, 90)));
        }
        json_object_set_new(row, "bytes_read", json_real(t.bytes_read));
        json_object_set_new(row, "bytes_written", json_real(t.bytes_written));
        json_object_set_new(row, "flops", json_real(t.flops));
        json_object_set_new(row, "gbps", json_real(roof_bandwidth(&t, med) / 1e9));
        json_object_set_new(row, "tflops", json_real(med > 0 ? t.flops / (med * 1e-3) / 1e12 : 0));
        json_object_set_new(row, "frac_of_ceiling", json_real(roof_fraction_of_peak(&t, med, &c, math)));
        double rate = roof_math_rate(&c, math);
        json_object_set_new(row, "bound",
                            json_string(t.flops > 0 && rate > 0 &&
                                                t.flops / rate > roof_memory_floor_s(t.bytes_read, t.bytes_written, &c)
                                            ? "compute" : "memory"));
        json_object_set(row, "args", args ? (json_t *)args : json_null());
        json_array_append_new(out, row);
    }
    for (size_t i = 0; i < json_array_size(out); i++) {
        json_t *row = json_array_get(out, i);
        double tm = json_real_value(json_object_get(row, "time_ms"));
        json_object_set_new(row, "share", json_real(*sum_ms > 0 ? tm / *sum_ms : 0));
    }
    free(col);
    return out;
}

/* Call the worker; on failure wrap the message with the stage. */
static int call(worker *w, const char *op, json_t *args, double t, json_t **res, kerr *e,
                const char *stage) {
    int rc = worker_call(w, op, args, t, res, e);
    if (rc) kerr_wrap(e, "%s", stage);
    return rc;
}

/* The worker's comparison of the outputs kept as "rt.a" and "rt.b" (`ra`: the run that kept
 * "rt.a", for the dtypes); fills a JSON verdict: within the dtype's default tolerance (fp32:
 * atol = rtol = 1e-4), and bit-identical (within it with a zero difference: NaN/Inf placement is
 * part of the comparison). A shape mismatch is a difference. */
static int compare_outputs(worker *w, const json_t *ra, json_t *verdict, kerr *e) {
    const json_t *oa = json_object_get(ra, "outputs");
    json_t *tols = json_array(), *res = NULL;
    size_t i;
    json_t *o;
    json_array_foreach(oa, i, o) {
        double at = 0, rt = 0;
        tensor_default_tol(json_string_value(json_object_get(o, "dtype")), &at, &rt);
        json_array_append_new(tols, json_pack("[f, f]", at, rt));
    }
    int rc = worker_call(w, "compare", json_pack("{s:s, s:s, s:o}", "ref", "rt.a", "got", "rt.b", "tols", tols), T_RUN, &res, e);
    if (rc) return kerr_wrap(e, "comparing the round trip's outputs");
    int identical = !json_is_true(json_object_get(res, "count_mismatch")), within = identical;
    double maxabs = 0;
    for (i = 0; within && i < json_array_size(oa); i++) {
        const json_t *d = json_array_get(oa, i);
        if (!json_object_get(d, "dtype")) continue;       /* non-tensor output */
        double at = 0, rt = 0;
        tensor_default_tol(json_string_value(json_object_get(d, "dtype")), &at, &rt);
        tensor_cmp c;
        if ((rc = tensor_cmp_from_json(json_array_get(json_object_get(res, "outputs"), i), at, rt, &c, e))) break;
        identical &= c.pass && c.max_abs_err == 0;
        within &= c.pass;
        if (c.max_abs_err > maxabs) maxabs = c.max_abs_err;
    }
    json_decref(res);
    if (rc) return rc;
    json_object_set_new(verdict, "outputs_identical", json_boolean(identical));
    json_object_set_new(verdict, "outputs_match", json_boolean(within));
    json_object_set_new(verdict, "max_abs_diff", json_real(maxabs));
    worker_call(w, "drop", json_pack("{s:[s,s]}", "names", "rt.a", "rt.b"), T_RUN, NULL, e);
    return 0;
}

static int write_text(const char *dir, const char *name, const kbuf *b, char **path, kerr *e) {
    *path = fs_join(dir, name);
    return fs_write(*path, kbuf_str(b), b->len, e);
}

/* Parse, round-trip and profile one graph; appends its object to doc_graphs. */
static int do_graph(worker *w, const inspect_opts *o, const json_t *g, const json_t *ceilings,
                    json_t *doc_graphs, int *n_work, kerr *e) {
    const char *mod = json_string_value(json_object_get(g, "module"));
    const char *args = json_string_value(json_object_get(g, "args"));
    int idx = (int)json_integer_value(json_object_get(g, "index"));
    if (!mod || !args) return kerr_set(e, KOPT_E_WORKER, "compile result lacks module/args paths");
    char *text = NULL;
    size_t len = 0;
    int rc = fs_read(mod, &text, &len, e);
    if (rc) return rc;
    artifact *a = NULL;
    rc = artifact_parse(text, len, &a, e);
    if (rc) {
        kerr_wrap(e, "parsing Inductor's output module %s", mod);
        free(text);
        return rc;
    }
    json_t *go = json_pack("{s:i, s:s, s:s}", "index", idx, "module", mod, "args", args);
    json_object_set_new(go, "artifact", artifact_to_json(a));
    json_array_append_new(doc_graphs, go);
    for (size_t i = 0; i < a->nlaunches; i++) /* Triton launches and library calls kopt may replace */
        *n_work += a->launches[i].kind == ART_L_TRITON || region_vendor_op(a->launches[i].callee) >= 0;

    kbuf rt = KBUF_INIT, inst = KBUF_INIT;
    char *rt_path = NULL, *inst_path = NULL, *name = NULL;
    json_t *ra = NULL, *rb = NULL, *prof = NULL;
    art_emit_opts eo = {0};
    if ((rc = artifact_emit(a, &eo, &rt, e))) goto done;
    json_t *rtv = json_object();
    json_object_set_new(go, "roundtrip", rtv);
    json_object_set_new(rtv, "text_identical", json_boolean(rt.len == len && !memcmp(rt.data, text, len)));
    name = kasprintf("graph%d.roundtrip.py", idx);
    if ((rc = write_text(o->workdir, name, &rt, &rt_path, e))) goto done;
    json_object_set_new(rtv, "module", json_string(rt_path));
    if (o->check_roundtrip && a->nlaunches > 0) {
        progress(o, "round trip: running the original and the emitted module");
        rc = call(w, "run", json_pack("{s:{s:s,s:s,s:s}, s:s}", "target", "kind", "module", "module", mod,
                                      "args", args, "keep", "rt.a"), T_RUN, &ra, e, "running the captured module");
        if (!rc)
            rc = call(w, "run", json_pack("{s:{s:s,s:s,s:s}, s:s}", "target", "kind", "module", "module",
                                          rt_path, "args", args, "keep", "rt.b"),
                      T_RUN, &rb, e, "running the round-tripped module");
        if (!rc) rc = compare_outputs(w, ra, rtv, e);
        if (rc) goto done;
    }

    eo.instrument = 1;
    if ((rc = artifact_emit(a, &eo, &inst, e))) goto done;
    free(name);
    name = kasprintf("graph%d.profile.py", idx);
    if ((rc = write_text(o->workdir, name, &inst, &inst_path, e))) goto done;
    if (a->nlaunches > 0) {
        progress(o, "profiling every launch");
        rc = call(w, "profile", json_pack("{s:s, s:s, s:i, s:i}", "module", inst_path, "args", args,
                                          "reps", o->reps, "warmup", 3),
                  T_PROFILE, &prof, e, "profiling the instrumented module");
        if (rc) goto done;
        if (json_array_size(json_object_get(prof, "launches")) != a->nlaunches) {
            rc = kerr_set(e, KOPT_E_WORKER, "profile returned %zu launches, the module has %zu",
                          json_array_size(json_object_get(prof, "launches")), a->nlaunches);
            goto done;
        }
        double sum = 0;
        json_t *rows = inspect_launch_table(a, prof, ceilings, &sum);
        json_object_set_new(go, "launches", rows);
        json_t *tot = inspect_time_summary(json_object_get(prof, "total"));
        json_object_set_new(go, "profile", json_pack("{s:f, s:o, s:i}", "sum_launch_ms", sum, "call",
                                                     tot, "reps", o->reps));
    } else {
        json_object_set_new(go, "launches", json_array());
    }
done:
    free(name);
    free(rt_path);
    free(inst_path);
    kbuf_free(&rt);
    kbuf_free(&inst);
    json_decref(ra);
    json_decref(rb);
    json_decref(prof);
    artifact_free(a);
    free(text);
    return rc;
}

/* dst[key] = src[key] (a new reference), or null when src lacks it. */
static void copy_key(json_t *dst, const json_t *src, const char *key) {
    json_t *v = json_object_get(src, key);
    json_object_set(dst, key, v ? v : json_null());
}

static json_t *variant(const char *kind, const char *mode) {
    return mode ? json_pack("{s:s, s:s}", "kind", kind, "mode", mode) : json_pack("{s:s}", "kind", kind);
}

static void summarize(json_t *doc) {
    double triton = 0, vendor = 0, sum = 0;
    int nt = 0, nv = 0;
    json_t *graphs = json_object_get(doc, "graphs"), *g;
    size_t gi;
    json_array_foreach(graphs, gi, g) {
        json_t *rows = json_object_get(g, "launches"), *r;
        size_t ri;
        json_array_foreach(rows, ri, r) {
            double t = json_real_value(json_object_get(r, "time_ms"));
            if (!strcmp(json_string_value(json_object_get(r, "kind")), "triton")) { triton += t; nt++; }
            else { vendor += t; nv++; }
            sum += t;
        }
    }
    json_t *s = json_pack("{s:i, s:i, s:i, s:f, s:f, s:f, s:f}", "graphs", (int)json_array_size(graphs),
                          "triton_launches", nt, "vendor_calls", nv, "triton_ms", triton, "vendor_ms",
                          vendor, "sum_launch_ms", sum, "triton_share", sum > 0 ? triton / sum : 0.0);
    const json_t *comp = json_object_get(json_object_get(json_object_get(doc, "model"), "times"), "compiled_default");
    double model = json_real_value(json_object_get(comp, "median_ms"));
    if (model > 0) {
        json_object_set_new(s, "compiled_model_ms", json_real(model));
        json_object_set_new(s, "sum_over_model", json_real(sum / model));
    }
    json_object_set_new(doc, "summary", s);
}

int inspect_run(worker *w, const inspect_opts *o, json_t **doc_out, kerr *e) {
    json_t *doc = json_object(), *res = NULL;
    *doc_out = doc;
    char *abs = fs_realpath(o->problem);
    json_object_set_new(doc, "schema", json_string("kopt.inspect/1"));
    json_object_set_new(doc, "problem", json_string(abs ? abs : o->problem));
    const json_t *info = worker_info(w);
    json_object_set_new(doc, "device", json_pack("{s:O?, s:O?, s:O?, s:O?, s:O?, s:O?}", "name",
                                                 json_object_get(info, "device"), "capability",
                                                 json_object_get(info, "capability"), "sm_count",
                                                 json_object_get(info, "sm_count"), "l2_bytes",
                                                 json_object_get(info, "l2_bytes"), "torch",
                                                 json_object_get(info, "torch"), "triton",
                                                 json_object_get(info, "triton")));
    int rc;
    progress(o, "loading the problem");
    rc = worker_call_setup(w, "load", json_pack("{s:s, s:i}", "path", abs ? abs : o->problem, "seed", 0),
                           T_LOAD, &res, e);
    free(abs);
    if (rc) return rc;
    json_t *model = json_object();
    json_object_set_new(doc, "model", model);
    copy_key(model, res, "inputs");
    copy_key(model, res, "outputs");
    copy_key(model, res, "n_params");
    json_decref(res);
    res = NULL;

    progress(o, "measuring the device's ceilings");
    if ((rc = call(w, "ceilings", json_object(), T_CEIL, &res, e, "measuring ceilings"))) return rc;
    json_t *ceil = inspect_ceilings(res);
    json_object_set_new(doc, "ceilings", ceil);
    json_decref(res);
    res = NULL;

    progress(o, "compiling with torch.compile (default)");
    char *cdir = fs_join(o->workdir, "compile-default");
    if ((rc = fs_mkdirs(cdir, e))) { free(cdir); return rc; }
    rc = call(w, "compile", json_pack("{s:s, s:s}", "mode", "default", "out_dir", cdir), T_COMPILE, &res, e,
              "torch.compile");
    free(cdir);
    if (rc) return rc;
    copy_key(model, res, "compile_s");
    const json_t *graphs = json_object_get(res, "graphs");
    json_t *doc_graphs = json_array();
    json_object_set_new(doc, "graphs", doc_graphs);
    if (json_array_size(graphs) == 0) {
        json_decref(res);
        return kerr_set(e, KOPT_E_NOTRITON,
                        "torch.compile produced no graph for this model: it runs eagerly (for "
                        "example an LSTM falls back to cuDNN), so there is no Triton kernel to inspect");
    }
    int n_work = 0;
    for (size_t i = 0; i < json_array_size(graphs) && !rc; i++)
        rc = do_graph(w, o, json_array_get(graphs, i), ceil, doc_graphs, &n_work, e);
    json_decref(res);
    res = NULL;
    if (rc) return rc;
    if (n_work == 0)
        return kerr_set(e, KOPT_E_NOTRITON,
                        "torch.compile generated no Triton kernel for this model, only vendor-library "
                        "calls (cuBLAS/cuDNN), which kernelopt keeps as they are: nothing to inspect");

    progress(o, "timing the whole model (interleaved)");
    json_t *vars = json_array();
    json_array_append_new(vars, variant("eager", NULL));
    json_array_append_new(vars, variant("compiled", "default"));
    if (o->max_autotune) json_array_append_new(vars, variant("compiled", "max-autotune-no-cudagraphs"));
    rc = call(w, "time", json_pack("{s:o, s:i, s:i, s:b}", "variants", vars, "rounds", o->rounds, "warmup", 3,
                                   "flush_l2", 1),
              T_TIME, &res, e, "timing the model");
    if (rc) return rc;
    const json_t *samples = json_object_get(res, "samples");
    static const char *names[] = {"eager", "compiled_default", "compiled_max_autotune"};
    json_t *times = json_object();
    for (size_t i = 0; i < json_array_size(samples) && i < 3; i++)
        json_object_set_new(times, names[i], inspect_time_summary(json_array_get(samples, i)));
    json_object_set_new(times, "method",
                        json_string("GPU time per run: CUDA events around the call, L2 flushed and the "
                                    "stream stalled before each run; variants interleaved per round; "
                                    "median, 10th and 90th percentiles"));
    json_object_set_new(model, "times", times);
    /* Speedups of compiled variants over eager, paired by round. */
    size_t nb, nc;
    double *base = stats_from_json(json_array_get(samples, 0), &nb);
    for (size_t i = 1; i < json_array_size(samples) && i < 3; i++) {
        double *cand = stats_from_json(json_array_get(samples, i), &nc);
        stats_ci ci;
        if (nb == nc && nb > 1 && !stats_speedup_ci_paired(base, cand, nb, 0.95, 2000, 42, &ci)) {
            char *key = kasprintf("speedup_%s_vs_eager", names[i] + 9);
            json_object_set_new(model, key, json_pack("{s:f, s:f, s:f}", "estimate", ci.estimate, "ci95_lo",
                                                      ci.lo, "ci95_hi", ci.hi));
            free(key);
        }
        free(cand);
    }
    free(base);
    json_decref(res);
    summarize(doc);
    return 0;
}
