/* test_report.c — the Markdown/HTML/SVG reports of `kopt optimize` (src/report). */
#include <criterion/criterion.h>
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/report_internal.h"
#include "testutil.h"

/* Three kernels: one optimized, one kept near its ceiling, one vendor call. */
static const char DOC3[] =
    "{\"schema\":\"kopt.optimize/1\",\"ok\":true,\"problem\":\"/abs/problems/softmax_add.py\","
    " \"device\":{\"name\":\"NVIDIA H200\",\"torch\":\"2.11.0+cu130\",\"triton\":\"3.6.0\"},"
    " \"ceilings\":{\"copy_gbps\":4293,\"fp32_tflops\":51.3,\"bf16_tflops\":802,\"method\":\"device-to-device copy of 1 GiB\"},"
    " \"budget\":{\"wall_s\":600,\"candidates\":64,\"used_wall_s\":83.2,\"used_candidates\":37,\"gpu_s\":71.0},"
    " \"model\":{\"baseline_ms\":0.181,\"optimized_ms\":0.150,\"eager_ms\":0.158,\"max_autotune_ms\":0.175,"
    "   \"speedup\":{\"estimate\":1.21,\"ci95_lo\":1.19,\"ci95_hi\":1.23},\"floor_ms\":0.062,"
    "   \"method\":\"CUDA events around each call, L2 flushed before every run, interleaved runs, medians, paired bootstrap CI\"},"
    " \"kernels\":["
    "  {\"name\":\"triton_red_fused__softmax_0\",\"kind\":\"reduction\",\"kernel_kind\":\"reduction\","
    "   \"aten_ops\":[\"aten._softmax\"],\"time_ms\":0.060,\"share\":0.32,\"frac_of_ceiling\":0.52,\"bytes\":134217728,"
    "   \"class\":\"memory-bound\",\"status\":\"optimized\",\"after_ms\":0.045,"
    "   \"speedup\":{\"estimate\":1.3,\"ci95_lo\":1.25,\"ci95_hi\":1.35},"
    "   \"change\":\"one-pass row kernel, R0_BLOCK=16384, num_warps=16\",\"tried\":12,"
    "   \"refused_by_gate\":{\"1\":0,\"2\":3,\"3\":0,\"4\":8}},"
    "  {\"name\":\"triton_poi_fused_add_1\",\"kind\":\"pointwise\",\"kernel_kind\":\"pointwise\",\"time_ms\":0.120,"
    "   \"share\":0.45,\"frac_of_ceiling\":0.94,\"bytes\":484000000,\"class\":\"memory-bound\",\"status\":\"kept\","
    "   \"why\":\"near ceiling (94%)\",\"tried\":6,\"refused_by_gate\":{\"2\":1,\"4\":5}},"
    "  {\"name\":\"extern_kernels.mm\",\"kind\":\"vendor\",\"time_ms\":0.05,\"share\":0.23,\"frac_of_ceiling\":0.8,"
    "   \"class\":\"compute-bound\",\"status\":\"vendor\"}],"
    " \"vendor_calls\":[{\"name\":\"extern_kernels.mm\",\"time_ms\":0.05,\"share\":0.23},"
    "                 {\"name\":\"extern_kernels.bmm\",\"time_ms\":1.35,\"share\":0.5}],"
    " \"outcome\":\"optimized\","
    " \"attempts\":["
    "  {\"kernel\":\"triton_red_fused__softmax_0\",\"label\":\"onepass-16k\",\"direction\":\"one_pass\","
    "   \"outcome\":\"accepted\",\"gate\":4,\"speedup\":1.3},"
    "  {\"kernel\":\"triton_poi_fused_add_1\",\"label\":\"vec4\",\"direction\":\"launch_config\","
    "   \"outcome\":\"refused\",\"gate\":4,\"reason\":\"no gain: 0.998x\",\"speedup\":0.998}],"
    " \"llm\":{\"calls\":0,\"tokens_in\":0,\"tokens_out\":0,\"cost_usd\":0}}";

static const char DOC_KEPT[] =
    "{\"schema\":\"kopt.optimize/1\",\"ok\":true,\"problem\":\"/abs/p.py\","
    " \"device\":{\"name\":\"NVIDIA H200\"},"
    " \"model\":{\"baseline_ms\":0.2,\"optimized_ms\":0.2},"
    " \"kernels\":["
    "  {\"name\":\"triton_poi_fused_0\",\"status\":\"kept\",\"why\":\"near ceiling (97%)\",\"time_ms\":0.1},"
    "  {\"name\":\"triton_red_fused_1\",\"status\":\"kept\",\"why\":\"no candidate passed gate 2\",\"time_ms\":0.1}],"
    " \"outcome\":\"baseline kept: no candidate passed all four gates\"}";

static json_t *load(const char *text) {
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    cr_assert_not_null(doc, "bad test JSON: %s (line %d col %d)", err.text, err.line, err.column);
    return doc;
}

static char *render_md(const json_t *doc) {
    kbuf b = KBUF_INIT;
    report_markdown(doc, &b);
    return kbuf_steal(&b);
}

static char *render_html(const json_t *doc) {
    kbuf b = KBUF_INIT;
    report_html(doc, &b);
    return kbuf_steal(&b);
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0, len = strlen(needle);
    for (const char *p = strstr(hay, needle); p; p = strstr(p + len, needle)) n++;
    return n;
}

static int is_void(const char *name, size_t n) {
    static const char *v[] = {"meta", "br", "hr", "img", "link", "input", "col", "area", "base", "wbr", "source"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (strlen(v[i]) == n && !strncmp(v[i], name, n)) return 1;
    return 0;
}

/* A tiny well-formedness check: every element opened is closed, in order (void elements and
 * self-closing SVG elements excepted); '<' never appears outside a tag. Returns NULL when
 * balanced, else a static description of the first problem. */
static const char *check_tags(const char *s) {
    static char msg[256];
    struct { const char *name; size_t n; } stack[128];
    size_t depth = 0;
    for (const char *p = s; (p = strchr(p, '<')); ) {
        if (!strncmp(p, "<!--", 4)) {
            const char *e = strstr(p, "-->");
            if (!e) return "unterminated comment";
            p = e + 3;
            continue;
        }
        const char *gt = strchr(p, '>');
        if (!gt) return "unterminated tag";
        if (p[1] == '!') { p = gt + 1; continue; }
        int closing = p[1] == '/';
        const char *name = p + 1 + closing;
        size_t n = 0;
        while (name[n] && (isalnum((unsigned char)name[n]) || name[n] == '-')) n++;
        if (!n) {
            snprintf(msg, sizeof msg, "stray '<' at ...%.30s", p);
            return msg;
        }
        const char *lt = strchr(p + 1, '<');
        if (lt && lt < gt) return "'<' inside a tag";
        if (closing) {
            if (!depth) return "closing tag without an open element";
            depth--;
            if (stack[depth].n != n || strncmp(stack[depth].name, name, n)) {
                snprintf(msg, sizeof msg, "</%.*s> closes <%.*s>", (int)n, name, (int)stack[depth].n, stack[depth].name);
                return msg;
            }
        } else if (gt[-1] != '/' && !is_void(name, n)) {
            if (depth == 128) return "too deep";
            stack[depth].name = name;
            stack[depth].n = n;
            depth++;
        }
        p = gt + 1;
    }
    if (depth) {
        snprintf(msg, sizeof msg, "<%.*s> never closed", (int)stack[depth - 1].n, stack[depth - 1].name);
        return msg;
    }
    return NULL;
}

/* The width attribute of the i-th <rect class="cls" ...> (0-based), or -1. */
static double rect_width(const char *svg, const char *cls, size_t i) {
    char needle[64];
    snprintf(needle, sizeof needle, "<rect class=\"%s\"", cls);
    const char *p = strstr(svg, needle);
    for (size_t k = 0; p && k < i; k++) p = strstr(p + 1, needle);
    if (!p) return -1;
    const char *w = strstr(p, " width=\"");
    return w ? strtod(w + 8, NULL) : -1;
}

/* ------------------------------------------------------------------ formatting */

Test(report, number_formats) {
    char b[REPORT_NUM];
    cr_expect_str_eq(report_fmt_ms(0.06, b), "0.06000");
    cr_expect_str_eq(report_fmt_ms(0.181, b), "0.1810");
    cr_expect_str_eq(report_fmt_ms(1.35, b), "1.350");
    cr_expect_str_eq(report_fmt_ms(123.456, b), "123.5");
    cr_expect_str_eq(report_fmt_ms(999.96, b), "1000");
    cr_expect_str_eq(report_fmt_ms(12345.6, b), "12346");
    cr_expect_str_eq(report_fmt_ms(NAN, b), REPORT_DASH);
    cr_expect_str_eq(report_fmt_pct(0.32, b), "32.0%");
    cr_expect_str_eq(report_fmt_pct(0.9449, b), "94.5%");
    cr_expect_str_eq(report_fmt_x(1.21, b), "1.210x");
    report_speedup s = {1.21, 1.19, 1.23};
    cr_expect_str_eq(report_fmt_speedup(&s, 1, b), "1.210x (95% CI 1.190-1.230)");
    s.lo = NAN;
    cr_expect_str_eq(report_fmt_speedup(&s, 1, b), "1.210x");
}

Test(report, escaping) {
    kbuf b = KBUF_INIT;
    report_esc_xml(&b, "a<b&c>\"d'\x01");
    cr_expect_str_eq(kbuf_str(&b), "a&lt;b&amp;c&gt;&quot;d&#39;\xef\xbf\xbd");
    kbuf_reset(&b);
    report_esc_md(&b, "R0_BLOCK _x* a|b <i> &amp;\nnext");
    cr_expect_str_eq(kbuf_str(&b), "R0_BLOCK \\_x\\* a\\|b \\<i\\> \\&amp; next");
    kbuf_reset(&b);
    report_md_code(&b, "a`b|c", 1);
    cr_expect_str_eq(kbuf_str(&b), "``a`b\\|c``");
    kbuf_reset(&b);
    report_trunc(&b, "triton_red_fused__log_softmax_mean_mul_neg_sum_7", 20);
    cr_expect_eq(report_utf8_len(kbuf_str(&b)), 20);
    cr_expect(strstr(kbuf_str(&b), "\xe2\x80\xa6") != NULL);
    cr_expect(strstr(kbuf_str(&b), "triton_red_fu") == kbuf_str(&b));
    kbuf_free(&b);
}

/* ------------------------------------------------------------------ Markdown */

Test(report_md, table_rows_and_summary) {
    json_t *doc = load(DOC3);
    char *md = render_md(doc);
    cr_expect(strstr(md, "# kopt optimize: `softmax_add.py` on NVIDIA H200\n") != NULL, "%s", md);
    cr_expect(strstr(md, "| `triton_red_fused__softmax_0` | reduction | 32.0% | 0.06000 | 0.04500 | "
                         "1.300x (1.250-1.350) | 52.0% " REPORT_ARROW " 69.3% | optimized | "
                         "one-pass row kernel, R0_BLOCK=16384, num_warps=16 |\n") != NULL, "%s", md);
    cr_expect(strstr(md, "| `triton_poi_fused_add_1` | pointwise | 45.0% | 0.1200 | 0.1200 | " REPORT_DASH
                         " | 94.0% | kept | near ceiling (94%) |\n") != NULL, "%s", md);
    cr_expect(strstr(md, "| `extern_kernels.mm` | vendor | 23.0% | 0.05000 | " REPORT_DASH " | " REPORT_DASH
                         " | 80.0% | vendor | vendor library call, never a target |\n") != NULL, "%s", md);
    /* the vendor call already in the kernel table is not repeated; the other one is listed */
    cr_expect_eq(count(md, "`extern_kernels.mm`"), 1);
    cr_expect(strstr(md, "| `extern_kernels.bmm` | 1.350 | 50.0% |\n") != NULL, "%s", md);
    /* summary */
    cr_expect(strstr(md, "> **Optimized.** Model 0.1810 ms " REPORT_ARROW " 0.1500 ms, 1.210x faster (95% CI 1.190-1.230). "
                         "1 of 2 Triton kernels replaced.") != NULL, "%s", md);
    cr_expect(strstr(md, "0.1810 ms " REPORT_ARROW " 0.1500 ms\n") != NULL);
    cr_expect(strstr(md, "**Speedup over the compiled baseline:** 1.210x (95% CI 1.190-1.230)\n") != NULL, "%s", md);
    cr_expect(strstr(md, "**Eager PyTorch:** 0.1580 ms (kopt's result is 1.053x faster)\n") != NULL, "%s", md);
    cr_expect(strstr(md, "**torch.compile max-autotune:** 0.1750 ms") != NULL);
    cr_expect(strstr(md, "**Memory-traffic floor:** 0.06200 ms (the result takes 2.42 times the floor)") != NULL, "%s", md);
    cr_expect(strstr(md, "**Search:** 37 candidates tried (budget 64), 71.0 s of GPU time, 83.2 s wall (budget 600 s)\n")
                  != NULL, "%s", md);
    cr_expect(strstr(md, "**LLM use:** 0 calls, 0 tokens in, 0 tokens out, $0.0000") != NULL, "%s", md);
    /* chart, optimized section, refusals (summed over both kernels), method */
    cr_expect(strstr(md, "```text\n") != NULL);
    cr_expect(strstr(md, "### `triton_red_fused__softmax_0`\n") != NULL);
    cr_expect(strstr(md, "- **Change:** one-pass row kernel, R0_BLOCK=16384, num_warps=16\n") != NULL);
    cr_expect(strstr(md, "- **Candidates:** 12 tried; refused at gate 2: 3, gate 4: 8\n") != NULL, "%s", md);
    cr_expect(strstr(md, "- **Accepted:** `onepass-16k` (1.300x)\n") != NULL, "%s", md);
    cr_expect(strstr(md, "| 2 | kernel in isolation matches the original | 4 |\n") != NULL, "%s", md);
    cr_expect(strstr(md, "| 4 | measurably faster (interleaved timing) | 13 |\n") != NULL, "%s", md);
    cr_expect(strstr(md, "| all | | 17 |\n") != NULL, "%s", md);
    cr_expect(strstr(md, "Accepted candidates: 1.") != NULL);
    cr_expect(strstr(md, "**Timing.** CUDA events around each call, L2 flushed before every run, interleaved runs, "
                         "medians, paired bootstrap CI\n") != NULL, "%s", md);
    cr_expect(strstr(md, "**Ceilings.** device-to-device copy of 1 GiB") != NULL);
    cr_expect(strstr(md, "(null)") == NULL);
    cr_expect(strstr(md, "Baseline kept") == NULL);
    free(md);
    json_decref(doc);
}

Test(report_md, text_chart_has_a_bar_pair_per_triton_kernel) {
    json_t *doc = load(DOC3);
    char *md = render_md(doc);
    const char *chart = strstr(md, "```text\n");
    cr_assert_not_null(chart);
    const char *end = strstr(chart + 8, "```");
    cr_assert_not_null(end);
    char *c = strndup(chart, (size_t)(end - chart));
    cr_expect_eq(count(c, "before "), 2);
    cr_expect_eq(count(c, "after "), 2);
    cr_expect_eq(count(c, "floor "), 2);
    cr_expect(strstr(c, "extern_kernels") == NULL);
    /* the longest bar (the 0.12 ms kernel, 40 cells) and the 0.06 ms one at half of it */
    char full[41 * 3 + 1] = "", half[20 * 3 + 2] = "";
    for (int i = 0; i < 40; i++) strcat(full, "\xe2\x96\x92");
    for (int i = 0; i < 20; i++) strcat(half, "\xe2\x96\x92");
    strcat(half, " ");
    cr_expect(strstr(c, full) != NULL);
    cr_expect(strstr(c, half) != NULL);
    free(c);
    free(md);
    json_decref(doc);
}

Test(report_md, baseline_kept_is_prominent_with_reasons) {
    json_t *doc = load(DOC_KEPT);
    char *md = render_md(doc);
    const char *banner = strstr(md, "> ## Baseline kept\n");
    cr_assert_not_null(banner, "%s", md);
    cr_expect(banner < strstr(md, "## Summary"), "the banner comes before the summary");
    cr_expect(strstr(md, "> **No candidate passed all four gates.** The output is torch.compile's module") != NULL, "%s", md);
    cr_expect(strstr(md, "> - `triton_poi_fused_0`: near ceiling (97%)\n") != NULL, "%s", md);
    cr_expect(strstr(md, "> - `triton_red_fused_1`: no candidate passed gate 2\n") != NULL, "%s", md);
    cr_expect(strstr(md, "## Optimized kernels") == NULL);
    cr_expect(strstr(md, "(null)") == NULL);
    free(md);
    json_decref(doc);
}

/* ------------------------------------------------------------------ HTML */

Test(report_html, well_formed_self_contained) {
    json_t *doc = load(DOC3);
    char *h = render_html(doc);
    const char *bad = check_tags(h);
    cr_expect_null(bad, "%s", bad ? bad : "");
    cr_expect(strncmp(h, "<!DOCTYPE html>\n<html lang=\"en\">", 31) == 0);
    cr_expect_eq(count(h, "<svg"), 1);
    cr_expect_eq(count(h, "</svg>"), 1);
    cr_expect(strstr(h, "<svg") < strstr(h, "</svg>"));
    cr_expect_eq(count(h, "<tr>"), count(h, "</tr>"));
    cr_expect_eq(count(h, "<table"), count(h, "</table>"));
    cr_expect_eq(count(h, "<section"), count(h, "</section>"));
    cr_expect_eq(count(h, "<style>"), 1);
    /* no script, no external resource */
    cr_expect(strstr(h, "<script") == NULL);
    cr_expect(strstr(h, "src=") == NULL);
    cr_expect(strstr(h, "href=") == NULL);
    cr_expect(strstr(h, "<link") == NULL);
    cr_expect(strstr(h, "url(") == NULL);
    cr_expect_eq(count(h, "http"), 1);  /* the SVG namespace only */
    cr_expect(strstr(h, "<td class=\"num\">0.06000</td><td class=\"num\">0.04500</td>") != NULL);
    cr_expect(strstr(h, "<div class=\"banner optimized\">") != NULL);
    cr_expect(strstr(h, "(null)") == NULL);
    free(h);
    json_decref(doc);
}

Test(report_html, baseline_kept_banner) {
    json_t *doc = load(DOC_KEPT);
    char *h = render_html(doc);
    cr_expect_null(check_tags(h));
    const char *banner = strstr(h, "<div class=\"banner kept\"><strong class=\"big\">Baseline kept</strong>");
    cr_assert_not_null(banner, "%s", h);
    cr_expect(banner < strstr(h, "<section id=\"summary\">"));
    cr_expect(strstr(h, "<li><code>triton_poi_fused_0</code>: near ceiling (97%)</li>") != NULL, "%s", h);
    cr_expect(strstr(h, "<li><code>triton_red_fused_1</code>: no candidate passed gate 2</li>") != NULL);
    free(h);
    json_decref(doc);
}

/* ------------------------------------------------------------------ SVG */

Test(report_svg, one_bar_pair_per_triton_kernel_proportional) {
    json_t *doc = load(DOC3);
    kbuf b = KBUF_INIT;
    report_svg_bars(json_object_get(doc, "kernels"), json_object_get(doc, "ceilings"), &b);
    const char *s = kbuf_str(&b);
    cr_expect_null(check_tags(s));
    cr_expect(strncmp(s, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0);
    cr_expect_eq(count(s, "<rect class=\"before\""), 2);
    cr_expect_eq(count(s, "<rect class=\"after\""), 2);
    cr_expect_eq(count(s, "<line class=\"floor\""), 2);
    cr_expect(strstr(s, "extern_kernels") == NULL);
    /* largest value 0.12 ms -> axis to 0.125 ms (steps of 0.025) -> 3360 px per ms */
    double wa = rect_width(s, "before", 0), wb = rect_width(s, "before", 1), wa2 = rect_width(s, "after", 0);
    cr_expect_float_eq(wa, 0.060 / 0.125 * REPORT_SVG_BAR_W, 0.006);
    cr_expect_float_eq(wb, 0.120 / 0.125 * REPORT_SVG_BAR_W, 0.006);
    cr_expect_float_eq(wa2, 0.045 / 0.125 * REPORT_SVG_BAR_W, 0.006);
    cr_expect_float_eq(wa / wb, 0.5, 1e-4);
    cr_expect(strstr(s, "width=\"201.60\"") != NULL);
    cr_expect(strstr(s, "width=\"403.20\"") != NULL);
    /* floor of the first kernel: 134217728 B at 4293 GB/s = 0.031264 ms */
    double fx = REPORT_SVG_BAR_X + 134217728.0 / 4293e9 * 1e3 / 0.125 * REPORT_SVG_BAR_W;
    char want[64];
    snprintf(want, sizeof want, "<line class=\"floor\" x1=\"%.2f\"", fx);
    cr_expect(strstr(s, want) != NULL, "want %s in %s", want, s);
    cr_expect(strstr(s, ">0.06000 ms<") != NULL);
    cr_expect(strstr(s, ">0.04500 ms, 1.300x<") != NULL);
    cr_expect(strstr(s, ">0.1200 ms (kept)<") != NULL);
    cr_expect(strstr(s, "memory-traffic floor") != NULL);
    kbuf_free(&b);
    json_decref(doc);
}

Test(report_svg, no_floor_without_ceilings_and_empty_chart) {
    json_t *doc = load(DOC3);
    kbuf b = KBUF_INIT;
    report_svg_bars(json_object_get(doc, "kernels"), NULL, &b);
    cr_expect_eq(count(kbuf_str(&b), "class=\"floor\""), 0);
    cr_expect(strstr(kbuf_str(&b), "memory-traffic floor") == NULL);
    kbuf_reset(&b);
    report_svg_bars(NULL, NULL, &b);
    cr_expect_null(check_tags(kbuf_str(&b)));
    cr_expect_eq(count(kbuf_str(&b), "<svg"), 1);
    cr_expect_eq(count(kbuf_str(&b), "<rect"), 0);
    kbuf_free(&b);
    json_decref(doc);
}

/* ------------------------------------------------------------------ escaping */

Test(report, hostile_text_is_escaped_everywhere) {
    json_t *doc = load(DOC3);
    json_t *k0 = json_array_get(json_object_get(doc, "kernels"), 0);
    json_object_set_new(k0, "name", json_string("triton_<&>\"_x'"));
    json_object_set_new(k0, "change", json_string("<script>alert(1)</script> & \"quoted\" | pipe"));
    json_object_set_new(doc, "problem", json_string("/abs/<b>&co.py"));
    json_t *k1 = json_array_get(json_object_get(doc, "kernels"), 1);
    json_object_set_new(k1, "why", json_string("a </td></tr> b"));

    char *h = render_html(doc);
    const char *bad = check_tags(h);
    cr_expect_null(bad, "%s", bad ? bad : "");
    cr_expect(strstr(h, "triton_<&>") == NULL);
    cr_expect(strstr(h, "<script") == NULL);
    cr_expect(strstr(h, "<b>") == NULL);
    cr_expect(strstr(h, "triton_&lt;&amp;&gt;&quot;_x&#39;") != NULL);
    cr_expect(strstr(h, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;") != NULL);
    cr_expect(strstr(h, "a &lt;/td&gt;&lt;/tr&gt; b") != NULL);
    cr_expect_eq(count(h, "<tr>"), count(h, "</tr>"));
    free(h);

    kbuf b = KBUF_INIT;
    report_svg_bars(json_object_get(doc, "kernels"), json_object_get(doc, "ceilings"), &b);
    cr_expect_null(check_tags(kbuf_str(&b)));
    cr_expect(strstr(kbuf_str(&b), "triton_&lt;&amp;&gt;&quot;_x&#39;") != NULL);
    kbuf_free(&b);

    char *md = render_md(doc);
    /* names stay verbatim inside code spans; free text is backslash-escaped; '|' never splits a row */
    cr_expect(strstr(md, "| `triton_<&>\"_x'` | reduction |") != NULL, "%s", md);
    cr_expect(strstr(md, "\\<script\\>alert(1)\\</script\\> \\& \"quoted\" \\| pipe |\n") != NULL, "%s", md);
    cr_expect(strstr(md, "<script>") == NULL);
    free(md);
    json_decref(doc);
}

/* ------------------------------------------------------------------ missing fields */

static void expect_clean(const json_t *doc) {
    char *md = render_md(doc);
    char *h = render_html(doc);
    const char *outs[] = {md, h};
    for (int i = 0; i < 2; i++) {
        cr_expect(strstr(outs[i], "(null)") == NULL, "%s", outs[i]);
        cr_expect(strstr(outs[i], "nan") == NULL, "%s", outs[i]);
        cr_expect(strstr(outs[i], "inf ") == NULL, "%s", outs[i]);
    }
    const char *bad = check_tags(h);
    cr_expect_null(bad, "%s", bad ? bad : "");
    cr_expect_eq(count(h, "<svg"), 1);
    cr_expect_eq(count(h, "<tr>"), count(h, "</tr>"));
    free(md);
    free(h);
}

Test(report, missing_optional_fields) {
    /* the bare minimum, an empty object, NULL, a non-object, wrong types everywhere */
    json_t *min = load("{\"schema\":\"kopt.optimize/1\",\"kernels\":[{\"name\":\"triton_poi_0\"},{}]}");
    expect_clean(min);
    char *md = render_md(min);
    cr_expect(strstr(md, "| `triton_poi_0` | " REPORT_DASH " | " REPORT_DASH " | " REPORT_DASH " | " REPORT_DASH) != NULL, "%s", md);
    free(md);
    json_t *empty = json_object();
    expect_clean(empty);
    expect_clean(NULL);
    json_t *num = json_integer(3);
    expect_clean(num);
    json_t *wrong = load("{\"ok\":\"yes\",\"problem\":7,\"device\":[],\"model\":{\"baseline_ms\":\"fast\",\"speedup\":[1]},"
                         "\"kernels\":{\"a\":1},\"attempts\":[1,null,{\"gate\":\"x\",\"speedup\":{}}],"
                         "\"budget\":5,\"llm\":{\"calls\":\"many\"},\"outcome\":3,\"vendor_calls\":[null]}");
    expect_clean(wrong);
    json_t *partial = load(DOC3);
    json_t *m = json_object_get(partial, "model");
    json_object_del(m, "max_autotune_ms");
    json_object_del(m, "eager_ms");
    json_object_del(m, "speedup");
    json_object_del(partial, "llm");
    json_object_del(partial, "ceilings");
    json_t *k0 = json_array_get(json_object_get(partial, "kernels"), 0);
    json_object_del(k0, "speedup");
    json_object_del(k0, "after_ms");
    json_object_del(k0, "refused_by_gate");
    expect_clean(partial);
    md = render_md(partial);
    cr_expect(strstr(md, "max-autotune") == NULL);
    cr_expect(strstr(md, "Eager") == NULL);
    cr_expect(strstr(md, "LLM") == NULL);
    free(md);
    json_t *failed = load("{\"schema\":\"kopt.optimize/1\",\"ok\":false,"
                          "\"error\":{\"kind\":\"no-gpu\",\"exit_code\":6,\"message\":\"no CUDA device\"}}");
    expect_clean(failed);
    md = render_md(failed);
    cr_expect(strstr(md, "> **The run failed**: no CUDA device") != NULL, "%s", md);
    free(md);
    json_decref(min);
    json_decref(empty);
    json_decref(num);
    json_decref(wrong);
    json_decref(partial);
    json_decref(failed);
}

/* ------------------------------------------------------------------ files */

Test(report_files, write_both_to_a_temp_dir) {
    json_t *doc = load(DOC3);
    kerr e = {0};
    char *dir = NULL;
    cr_assert_eq(fs_mkdtemp("kopt-report-test", &dir, &e), 0, "%s", e.msg);
    char *mdp = fs_join(dir, "report.md"), *hp = fs_join(dir, "report.html");
    cr_assert_eq(report_write_markdown(doc, mdp, &e), 0, "%s", e.msg);
    cr_assert_eq(report_write_html(doc, hp, &e), 0, "%s", e.msg);
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(fs_read(mdp, &text, &len, &e), 0, "%s", e.msg);
    char *want = render_md(doc);
    cr_expect_str_eq(text, want);
    free(want);
    free(text);
    cr_assert_eq(fs_read(hp, &text, &len, &e), 0, "%s", e.msg);
    want = render_html(doc);
    cr_expect_str_eq(text, want);
    cr_expect_null(check_tags(text));
    free(want);
    free(text);

    char *nodir = fs_join(dir, "missing/sub/report.html");
    cr_expect_eq(report_write_html(doc, nodir, &e), KOPT_E_IO);
    cr_expect(strstr(e.msg, "missing/sub/report.html") != NULL, "%s", e.msg);
    cr_expect_eq(report_write_markdown(NULL, mdp, &e), KOPT_E_INTERNAL);
    cr_expect_eq(report_write_html(doc, NULL, &e), KOPT_E_INTERNAL);
    free(nodir);
    fs_rmtree(dir);
    free(mdp);
    free(hp);
    free(dir);
    json_decref(doc);
}

/* A region won: its member kernels have no "after" of their own (the region's row has it). */
static const char DOC_REGION[] =
    "{\"schema\":\"kopt.optimize/1\",\"problem\":\"/abs/p.py\",\"device\":{\"name\":\"NVIDIA H200\"},"
    " \"ceilings\":{\"copy_gbps\":4270},"
    " \"model\":{\"baseline_ms\":0.18,\"optimized_ms\":0.09,\"speedup\":{\"estimate\":1.99,\"ci95_lo\":1.98,\"ci95_hi\":2.0}},"
    " \"kernels\":["
    "  {\"name\":\"triton_red_fused_0\",\"kernel_kind\":\"reduction\",\"time_ms\":0.06,\"share\":0.33,\"bytes\":134217728,"
    "   \"status\":\"in_region\",\"why\":\"replaced with the other kernels of _kopt_region_0\"},"
    "  {\"name\":\"triton_poi_fused_1\",\"kernel_kind\":\"pointwise\",\"time_ms\":0.12,\"share\":0.67,\"bytes\":268435456,"
    "   \"status\":\"in_region\",\"why\":\"replaced with the other kernels of _kopt_region_0\"},"
    "  {\"name\":\"_kopt_region_0\",\"kernel_kind\":\"region\",\"time_ms\":0.18,\"share\":1.0,\"status\":\"optimized\","
    "   \"after_ms\":0.09,\"speedup\":{\"estimate\":1.99,\"ci95_lo\":1.98,\"ci95_hi\":2.0},\"change\":\"region_softmax\"}],"
    " \"outcome\":\"optimized\"}";

Test(report_md, region_members_have_no_after_bar) {
    json_t *doc = load(DOC_REGION);
    char *md = render_md(doc);
    const char *chart = strstr(md, "```text\n");
    cr_assert_not_null(chart);
    char *c = strndup(chart, (size_t)(strstr(chart + 8, "```") - chart));
    cr_expect_eq(count(c, "before "), 3);
    cr_expect_eq(count(c, "after "), 1, "only the region has an after bar:\n%s", c);
    cr_expect(strstr(c, "(kept)") == NULL, "%s", c);
    free(c);
    cr_expect(strstr(md, "| in_region |") != NULL, "%s", md);
    free(md);
    json_decref(doc);
}
