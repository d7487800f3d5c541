/* report_html.c — the HTML report of `kopt optimize`: one self-contained page, inline CSS and
 * the inline SVG chart of svg.c, no script, no external resource (report.h has the
 * contract). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "report/report_internal.h"
#include "util/fs.h"

static const char html_css[] =
    "body{margin:0;background:#f7fafc;color:#1a202c;font:15px/1.5 system-ui,-apple-system,'Segoe UI',Helvetica,"
    "Arial,sans-serif}\n"
    "main{max-width:1100px;margin:0 auto;padding:24px 32px 48px;background:#fff}\n"
    "h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin:1.6em 0 .5em;border-bottom:1px solid #e2e8f0}\n"
    "h3{font-size:1.05em;margin:1.2em 0 .3em}\n"
    "code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#edf2f7;padding:0 3px;"
    "border-radius:3px;word-break:break-all}\n"
    ".sub{color:#4a5568;margin:0 0 1em}\n"
    ".banner{padding:12px 16px;border-radius:6px;margin:16px 0;border-left:6px solid}\n"
    ".banner.optimized{background:#f0fff4;border-color:#2f855a}\n"
    ".banner.kept{background:#fffaf0;border-color:#c05621;font-size:1.05em}\n"
    ".banner.kept strong.big{display:block;font-size:1.4em;color:#9c4221}\n"
    ".banner.failed{background:#fff5f5;border-color:#c53030}\n"
    ".banner.other{background:#ebf8ff;border-color:#2b6cb0}\n"
    "table{border-collapse:collapse;margin:.5em 0;font-size:14px}\n"
    "th,td{border:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top}\n"
    "th{background:#edf2f7}td.num,th.num{text-align:right;white-space:nowrap}\n"
    "table.facts th{width:22em}\n"
    ".st{padding:1px 6px;border-radius:8px;font-size:12px;white-space:nowrap}\n"
    ".st-optimized{background:#c6f6d5;color:#22543d}.st-kept{background:#feebc8;color:#7b341e}\n"
    ".st-vendor{background:#e2e8f0;color:#2d3748}\n"
    "figure{margin:1em 0;overflow-x:auto}figure svg{max-width:100%;height:auto}\n"
    "figcaption{color:#4a5568;font-size:13px}\n"
    ".note{color:#4a5568;font-size:13px}\n"
    "footer{margin-top:2em;color:#718096;font-size:12px}\n";

/* <code>s</code>, or an em dash. */
static void h_code(kbuf *out, const char *s) {
    if (!s) {
        kbuf_puts(out, REPORT_DASH);
        return;
    }
    kbuf_puts(out, "<code>");
    report_esc_xml(out, s);
    kbuf_puts(out, "</code>");
}

static void h_text_or_dash(kbuf *out, const char *s) {
    if (s) report_esc_xml(out, s);
    else kbuf_puts(out, REPORT_DASH);
}

static void h_head(const json_t *doc, kbuf *out) {
    const char *problem = report_str(doc, "problem");
    const json_t *dev = json_object_get(doc, "device");
    const char *dname = report_str(dev, "name"), *torch = report_str(dev, "torch"), *triton = report_str(dev, "triton");
    kbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>kopt optimize");
    if (problem) { kbuf_puts(out, ": "); report_esc_xml(out, report_basename(problem)); }
    if (dname) { kbuf_puts(out, " on "); report_esc_xml(out, dname); }
    kbuf_printf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n", html_css);

    kbuf_puts(out, "<h1>kopt optimize: ");
    if (problem) h_code(out, report_basename(problem));
    else kbuf_puts(out, "report");
    if (dname) { kbuf_puts(out, " on "); report_esc_xml(out, dname); }
    kbuf_puts(out, "</h1>\n");
    if (problem || dname || torch || triton) {
        kbuf_puts(out, "<p class=\"sub\">");
        const char *sep = "";
        if (problem) { kbuf_puts(out, "Problem "); h_code(out, problem); sep = " &middot; "; }
        if (dname) { kbuf_printf(out, "%sDevice <strong>", sep); report_esc_xml(out, dname); kbuf_puts(out, "</strong>"); sep = " &middot; "; }
        if (torch) { kbuf_printf(out, "%storch ", sep); report_esc_xml(out, torch); sep = " &middot; "; }
        if (triton) { kbuf_printf(out, "%striton ", sep); report_esc_xml(out, triton); }
        kbuf_puts(out, "</p>\n");
    }
}

static void h_banner(const json_t *doc, kbuf *out) {
    const char *detail = NULL;
    int oc = report_outcome(doc, &detail);
    char head[256];
    int has_head = report_headline(doc, head, sizeof head);
    const json_t *kernels = json_object_get(doc, "kernels");
    size_t i, ntriton = 0, nopt = 0;
    json_t *kj;
    json_array_foreach(kernels, i, kj) {
        report_kernel k;
        report_kernel_read(kj, &k);
        ntriton += !k.is_vendor;
        nopt += k.is_optimized;
    }
    switch (oc) {
    case REPORT_OUT_OPTIMIZED:
        kbuf_puts(out, "<div class=\"banner optimized\"><strong>Optimized.</strong>");
        if (has_head) { kbuf_puts(out, " Model "); report_esc_xml(out, head); kbuf_putc(out, '.'); }
        if (ntriton) kbuf_printf(out, " %zu of %zu Triton kernel%s replaced.", nopt, ntriton, ntriton == 1 ? "" : "s");
        kbuf_puts(out, "</div>\n");
        return;
    case REPORT_OUT_FAILED:
        kbuf_puts(out, "<div class=\"banner failed\"><strong>The run failed</strong>");
        if (detail) { kbuf_puts(out, ": "); report_esc_xml(out, detail); }
        kbuf_puts(out, "</div>\n");
        return;
    case REPORT_OUT_KEPT:
        kbuf_puts(out, "<div class=\"banner kept\"><strong class=\"big\">Baseline kept</strong><p><strong>");
        if (detail) {  /* a sentence: capitalised */
            char first[2] = {report_sentence_initial(detail), '\0'};
            report_esc_xml(out, first);
            report_esc_xml(out, detail + 1);
        } else {
            kbuf_puts(out, "No candidate improved the model");
        }
        kbuf_printf(out, "%s</strong> The output is torch.compile's module, unchanged.</p>\n",
                    detail && detail[strlen(detail) - 1] == '.' ? "" : ".");
        if (json_array_size(kernels)) {
            kbuf_puts(out, "<p>Why each kernel was kept:</p>\n<ul>\n");
            json_array_foreach(kernels, i, kj) {
                report_kernel k;
                report_kernel_read(kj, &k);
                const char *note = report_kernel_note(&k);
                kbuf_puts(out, "<li>");
                h_code(out, k.name);
                kbuf_puts(out, ": ");
                report_esc_xml(out, note ? note : "no reason recorded");
                kbuf_puts(out, "</li>\n");
            }
            kbuf_puts(out, "</ul>\n");
        }
        kbuf_puts(out, "</div>\n");
        return;
    default:
        if (!detail) return;
        kbuf_puts(out, "<div class=\"banner other\"><strong>Outcome:</strong> ");
        report_esc_xml(out, detail);
        kbuf_puts(out, "</div>\n");
    }
}

static void h_summary(const json_t *doc, kbuf *out) {
    report_fact facts[REPORT_MAX_FACTS];
    size_t n = report_facts(doc, facts);
    if (!n) return;
    kbuf_puts(out, "<section id=\"summary\">\n<h2>Summary</h2>\n<table class=\"facts\">\n");
    for (size_t i = 0; i < n; i++) {
        kbuf_puts(out, "<tr><th>");
        report_esc_xml(out, facts[i].label);
        kbuf_puts(out, "</th><td>");
        report_esc_xml(out, facts[i].value);
        kbuf_puts(out, "</td></tr>\n");
    }
    kbuf_puts(out, "</table>\n</section>\n");
}

static void h_status(kbuf *out, const char *status) {
    if (!status) {
        kbuf_puts(out, REPORT_DASH);
        return;
    }
    const char *cls = !strcmp(status, "optimized") ? "st-optimized" : !strcmp(status, "vendor") ? "st-vendor" : "st-kept";
    kbuf_printf(out, "<span class=\"st %s\">", cls);
    report_esc_xml(out, status);
    kbuf_puts(out, "</span>");
}

static void h_kernels(const json_t *doc, kbuf *out) {
    const json_t *kernels = json_object_get(doc, "kernels");
    size_t i;
    json_t *kj;
    char a[REPORT_NUM], b[REPORT_NUM];
    int open = 0;
    if (json_array_size(kernels)) {
        open = 1;
        kbuf_puts(out, "<section id=\"kernels\">\n<h2>Kernels</h2>\n<table class=\"kernels\">\n<thead><tr><th>Kernel</th>"
                       "<th>Kind</th><th class=\"num\">Share</th><th class=\"num\">Before (ms)</th>"
                       "<th class=\"num\">After (ms)</th><th class=\"num\">Speedup (95% CI)</th>"
                       "<th class=\"num\">% of ceiling</th><th>Status</th><th>Change / why kept</th></tr></thead>\n"
                       "<tbody>\n");
        json_array_foreach(kernels, i, kj) {
            report_kernel k;
            report_kernel_read(kj, &k);
            kbuf_puts(out, "<tr><td>");
            h_code(out, k.name);
            kbuf_puts(out, "</td><td>");
            h_text_or_dash(out, k.kind);
            kbuf_printf(out, "</td><td class=\"num\">%s</td>", report_fmt_pct(k.share, a));
            kbuf_printf(out, "<td class=\"num\">%s</td>", report_fmt_ms(k.time_ms, a));
            kbuf_printf(out, "<td class=\"num\">%s</td>", report_fmt_ms(k.is_vendor ? NAN : report_kernel_after(&k), a));
            kbuf_printf(out, "<td class=\"num\">%s</td>", report_fmt_speedup(&k.sp, 0, a));
            kbuf_printf(out, "<td class=\"num\">%s", report_fmt_pct(k.frac, a));
            double fa = report_kernel_frac_after(&k);
            if (k.is_optimized && isfinite(fa)) kbuf_printf(out, " " REPORT_ARROW " %s", report_fmt_pct(fa, b));
            kbuf_puts(out, "</td><td>");
            h_status(out, k.status);
            kbuf_puts(out, "</td><td>");
            const char *note = report_kernel_note(&k);
            if (note) report_esc_xml(out, note);
            kbuf_puts(out, "</td></tr>\n");
        }
        kbuf_puts(out, "</tbody>\n</table>\n<p class=\"note\">Share: of the summed GPU time of all launches. "
                       "% of ceiling: the time the kernel's bytes would take at the measured copy bandwidth, over its "
                       "time.</p>\n");
    }
    int header = 0;
    json_array_foreach(json_object_get(doc, "vendor_calls"), i, kj) {
        const char *name = report_str(kj, "name");
        size_t j;
        json_t *other;
        int dup = 0;
        json_array_foreach(kernels, j, other) {
            const char *on = report_str(other, "name");
            if (name && on && !strcmp(name, on)) dup = 1;
        }
        if (dup) continue;
        if (!open) {
            kbuf_puts(out, "<section id=\"kernels\">\n");
            open = 1;
        }
        if (!header) {
            kbuf_puts(out, "<h3>Vendor library calls (never replaced)</h3>\n<table class=\"vendor\">\n<thead><tr>"
                           "<th>Call</th><th class=\"num\">Time (ms)</th><th class=\"num\">Share</th></tr></thead>\n"
                           "<tbody>\n");
            header = 1;
        }
        kbuf_puts(out, "<tr><td>");
        h_code(out, name);
        kbuf_printf(out, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                    report_fmt_ms(report_num(kj, "time_ms"), a), report_fmt_pct(report_num(kj, "share"), b));
    }
    if (header) kbuf_puts(out, "</tbody>\n</table>\n");
    if (open) kbuf_puts(out, "</section>\n");
}

static void h_chart(const json_t *doc, kbuf *out) {
    kbuf_puts(out, "<section id=\"chart\">\n<h2>Time per kernel</h2>\n<figure>\n");
    report_svg_bars(json_object_get(doc, "kernels"), json_object_get(doc, "ceilings"), out);
    kbuf_puts(out, "<figcaption>GPU time of each Triton kernel before (torch.compile) and after (kopt); the dashed "
                   "line is the kernel's memory-traffic floor, its bytes at the measured copy bandwidth.</figcaption>\n"
                   "</figure>\n</section>\n");
}

static void h_refused_list(kbuf *out, const json_t *refused) {
    const char *key;
    json_t *v;
    const char *sep = "";
    json_object_foreach((json_t *)refused, key, v) {
        double n = json_is_number(v) ? json_number_value(v) : 0;
        if (!isfinite(n) || n <= 0) continue;
        kbuf_printf(out, "%sgate ", sep);
        report_esc_xml(out, key);
        kbuf_printf(out, ": %.0f", n);
        sep = ", ";
    }
    if (!*sep) kbuf_puts(out, "none");
}

static void h_optimized(const json_t *doc, kbuf *out) {
    size_t i;
    json_t *kj;
    int any = 0;
    char a[REPORT_NUM], b[REPORT_NUM];
    json_array_foreach(json_object_get(doc, "kernels"), i, kj) {
        report_kernel k;
        report_kernel_read(kj, &k);
        if (!k.is_optimized) continue;
        if (!any) kbuf_puts(out, "<section id=\"optimized\">\n<h2>Optimized kernels</h2>\n");
        any = 1;
        kbuf_puts(out, "<h3>");
        h_code(out, k.name);
        kbuf_puts(out, "</h3>\n<table class=\"facts\">\n");
        if (k.kind || k.cls || k.aten_ops) {
            kbuf_puts(out, "<tr><th>Kind</th><td>");
            if (k.kind) report_esc_xml(out, k.kind);
            if (k.kind && k.cls) kbuf_puts(out, ", ");
            if (k.cls) report_esc_xml(out, k.cls);
            if (k.aten_ops) {
                kbuf_puts(out, (k.kind || k.cls) ? "; ATen: " : "ATen: ");
                size_t j;
                json_t *op;
                json_array_foreach(k.aten_ops, j, op) {
                    if (j) kbuf_puts(out, ", ");
                    h_code(out, json_string_value(op));
                }
            }
            kbuf_puts(out, "</td></tr>\n");
        }
        kbuf_printf(out, "<tr><th>Time</th><td>%s ms " REPORT_ARROW " %s ms", report_fmt_ms(k.time_ms, a),
                    report_fmt_ms(k.after_ms, b));
        if (isfinite(k.sp.est)) kbuf_printf(out, ", speedup %s", report_fmt_speedup(&k.sp, 1, a));
        kbuf_puts(out, "</td></tr>\n");
        double fa = report_kernel_frac_after(&k);
        if (isfinite(k.frac))
            kbuf_printf(out, "<tr><th>Of the ceiling</th><td>%s%s%s</td></tr>\n", report_fmt_pct(k.frac, a),
                        isfinite(fa) ? " " REPORT_ARROW " " : "", isfinite(fa) ? report_fmt_pct(fa, b) : "");
        kbuf_puts(out, "<tr><th>Change</th><td>");
        report_esc_xml(out, k.change ? k.change : "not recorded");
        kbuf_puts(out, "</td></tr>\n");
        if (isfinite(k.tried) || k.refused) {
            kbuf_puts(out, "<tr><th>Candidates</th><td>");
            if (isfinite(k.tried)) kbuf_printf(out, "%.0f tried", k.tried);
            if (k.refused) {
                kbuf_puts(out, isfinite(k.tried) ? "; refused at " : "refused at ");
                h_refused_list(out, k.refused);
            }
            kbuf_puts(out, "</td></tr>\n");
        }
        size_t j;
        json_t *at;
        int nacc = 0;
        json_array_foreach(json_object_get(doc, "attempts"), j, at) {
            const char *kn = report_str(at, "kernel"), *o = report_str(at, "outcome");
            if (!kn || !k.name || strcmp(kn, k.name) || !o || strcmp(o, "accepted")) continue;
            kbuf_puts(out, nacc++ ? ", " : "<tr><th>Accepted</th><td>");
            h_code(out, report_str(at, "label") ? report_str(at, "label") : "unlabelled");
            report_speedup s = report_speedup_read(json_object_get(at, "speedup"));
            if (isfinite(s.est)) kbuf_printf(out, " (%s)", report_fmt_x(s.est, a));
        }
        if (nacc) kbuf_puts(out, "</td></tr>\n");
        kbuf_puts(out, "</table>\n");
    }
    if (any) kbuf_puts(out, "</section>\n");
}

static void h_refusals(const json_t *doc, kbuf *out) {
    long counts[REPORT_NGATES + 1], accepted;
    long total = report_gate_counts(doc, counts, &accepted);
    if (!total && accepted < 0) return;
    kbuf_puts(out, "<section id=\"refusals\">\n<h2>Refusals by gate</h2>\n<table class=\"gates\">\n<thead><tr>"
                   "<th class=\"num\">Gate</th><th>Checks</th><th class=\"num\">Refused</th></tr></thead>\n<tbody>\n");
    for (int g = 1; g <= REPORT_NGATES; g++)
        kbuf_printf(out, "<tr><td class=\"num\">%d</td><td>%s</td><td class=\"num\">%ld</td></tr>\n", g,
                    report_gate_what(g), counts[g]);
    if (counts[0])
        kbuf_printf(out, "<tr><td class=\"num\">?</td><td>%s</td><td class=\"num\">%ld</td></tr>\n", report_gate_what(0),
                    counts[0]);
    kbuf_printf(out, "<tr><th class=\"num\">all</th><th></th><th class=\"num\">%ld</th></tr>\n</tbody>\n</table>\n", total);
    if (accepted >= 0) kbuf_printf(out, "<p>Accepted candidates: %ld.</p>\n", accepted);
    kbuf_puts(out, "</section>\n");
}

static void h_attempts(const json_t *doc, kbuf *out) {
    const json_t *att = json_object_get(doc, "attempts");
    if (!json_array_size(att)) return;
    kbuf_printf(out, "<section id=\"attempts\">\n<h2>Attempts</h2>\n<details>\n<summary>%zu candidate%s, in the order "
                     "tried</summary>\n<table class=\"attempts\">\n<thead><tr><th class=\"num\">#</th><th>Kernel</th>"
                     "<th>Candidate</th><th>Direction</th><th>Outcome</th><th class=\"num\">Gate</th>"
                     "<th class=\"num\">Speedup</th><th>Reason</th></tr></thead>\n<tbody>\n",
                json_array_size(att), json_array_size(att) == 1 ? "" : "s");
    size_t i;
    json_t *a;
    json_array_foreach(att, i, a) {
        char nb[REPORT_NUM];
        kbuf_printf(out, "<tr><td class=\"num\">%zu</td><td>", i + 1);
        h_code(out, report_str(a, "kernel"));
        const char *f[] = {report_str(a, "label"), report_str(a, "direction"), report_str(a, "outcome")};
        for (int j = 0; j < 3; j++) {
            kbuf_puts(out, "</td><td>");
            h_text_or_dash(out, f[j]);
        }
        double g = report_num(a, "gate");
        if (isfinite(g) && g >= 1) kbuf_printf(out, "</td><td class=\"num\">%.0f", g);  /* 0: accepted */
        else kbuf_puts(out, "</td><td class=\"num\">" REPORT_DASH);
        report_speedup s = report_speedup_read(json_object_get(a, "speedup"));
        kbuf_printf(out, "</td><td class=\"num\">%s</td><td>", report_fmt_x(s.est, nb));
        h_text_or_dash(out, report_str(a, "reason"));
        kbuf_puts(out, "</td></tr>\n");
    }
    kbuf_puts(out, "</tbody>\n</table>\n</details>\n</section>\n");
}

static void h_method(const json_t *doc, kbuf *out) {
    const char *m = report_str(json_object_get(doc, "model"), "method");
    const char *top = report_str(doc, "method");
    const char *c = report_str(json_object_get(doc, "ceilings"), "method");
    kbuf_puts(out, "<section id=\"method\">\n<h2>Method</h2>\n");
    if (top) { kbuf_puts(out, "<p>"); report_esc_xml(out, top); kbuf_puts(out, "</p>\n"); }
    if (m) { kbuf_puts(out, "<p><strong>Timing.</strong> "); report_esc_xml(out, m); kbuf_puts(out, "</p>\n"); }
    if (c) { kbuf_puts(out, "<p><strong>Ceilings.</strong> "); report_esc_xml(out, c); kbuf_puts(out, "</p>\n"); }
    if (!top && !m && !c) kbuf_puts(out, "<p>The document records no description of the measurements.</p>\n");
    kbuf_puts(out, "</section>\n");
}

void report_html(const json_t *doc, kbuf *out) {
    h_head(doc, out);
    h_banner(doc, out);
    h_summary(doc, out);
    h_kernels(doc, out);
    h_chart(doc, out);
    h_optimized(doc, out);
    h_refusals(doc, out);
    h_attempts(doc, out);
    h_method(doc, out);
    const char *schema = report_str(doc, "schema");
    kbuf_puts(out, "<footer>Generated by kopt from the ");
    report_esc_xml(out, schema ? schema : "optimize");
    kbuf_puts(out, " document.</footer>\n</main>\n</body>\n</html>\n");
}

int report_write_html(const json_t *doc, const char *path, kerr *e) {
    if (!doc || !path) return kerr_set(e, KOPT_E_INTERNAL, "report_write_html: no document or no path");
    kbuf b = KBUF_INIT;
    report_html(doc, &b);
    int rc = fs_write(path, kbuf_str(&b), b.len, e);
    kbuf_free(&b);
    return rc;
}
