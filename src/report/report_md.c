/* report_md.c — the Markdown report of `kopt optimize` (report.h has the contract). GitHub
 * flavoured: tables, code spans for identifiers, a blockquote banner for the outcome; the
 * chart is drawn in text inside a fenced code block. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "report/report_internal.h"
#include "util/fs.h"

#define MD_CHART_CELLS 40
#define MD_CHART_NAME 40

/* ---------------------------------------------------------------- pieces */

static void md_title(const json_t *doc, kbuf *out) {
    const char *problem = report_str(doc, "problem");
    const json_t *dev = json_object_get(doc, "device");
    const char *dname = report_str(dev, "name");
    kbuf_puts(out, "# kopt optimize: ");
    if (problem) report_md_code(out, report_basename(problem), 0);
    else kbuf_puts(out, "report");
    if (dname) {
        kbuf_puts(out, " on ");
        report_esc_md(out, dname);
    }
    kbuf_puts(out, "\n\n");
    if (problem) {
        kbuf_puts(out, "Problem ");
        report_md_code(out, problem, 0);
    }
    if (dname) {
        kbuf_puts(out, problem ? "; device **" : "Device **");
        report_esc_md(out, dname);
        kbuf_puts(out, "**");
    }
    const char *torch = report_str(dev, "torch"), *triton = report_str(dev, "triton");
    if (torch || triton) {
        kbuf_puts(out, problem || dname ? " (" : "(");
        if (torch) { kbuf_puts(out, "torch "); report_esc_md(out, torch); }
        if (torch && triton) kbuf_puts(out, ", ");
        if (triton) { kbuf_puts(out, "triton "); report_esc_md(out, triton); }
        kbuf_puts(out, ")");
    }
    if (problem || dname || torch || triton) kbuf_puts(out, ".\n\n");
}

static void md_banner(const json_t *doc, kbuf *out) {
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
        kbuf_puts(out, "> **Optimized.**");
        if (has_head) kbuf_printf(out, " Model %s.", head);
        if (ntriton) kbuf_printf(out, " %zu of %zu Triton kernel%s replaced.", nopt, ntriton, ntriton == 1 ? "" : "s");
        kbuf_puts(out, "\n\n");
        return;
    case REPORT_OUT_FAILED:
        kbuf_puts(out, "> **The run failed**");
        if (detail) { kbuf_puts(out, ": "); report_esc_md(out, detail); }
        kbuf_puts(out, "\n\n");
        return;
    case REPORT_OUT_KEPT:
        kbuf_puts(out, "> ## Baseline kept");
        kbuf_puts(out, "\n>\n> **");
        if (detail) {  /* a sentence: capitalised */
            char first[2] = {report_sentence_initial(detail), '\0'};
            report_esc_md(out, first);
            report_esc_md(out, detail + 1);
        } else {
            kbuf_puts(out, "No candidate improved the model");
        }
        kbuf_printf(out, "%s** The output is torch.compile's module, unchanged.\n",
                    detail && detail[strlen(detail) - 1] == '.' ? "" : ".");
        if (json_array_size(kernels)) kbuf_puts(out, ">\n> Why each kernel was kept:\n>\n");
        json_array_foreach(kernels, i, kj) {
            report_kernel k;
            report_kernel_read(kj, &k);
            const char *note = report_kernel_note(&k);
            kbuf_puts(out, "> - ");
            report_md_code(out, k.name, 0);
            kbuf_puts(out, ": ");
            if (note) report_esc_md(out, note);
            else kbuf_puts(out, "no reason recorded");
            kbuf_putc(out, '\n');
        }
        kbuf_putc(out, '\n');
        return;
    default:
        if (!detail) return;
        kbuf_puts(out, "> **Outcome:** ");
        report_esc_md(out, detail);
        kbuf_puts(out, "\n\n");
    }
}

static void md_summary(const json_t *doc, kbuf *out) {
    report_fact facts[REPORT_MAX_FACTS];
    size_t n = report_facts(doc, facts);
    if (!n) return;
    kbuf_puts(out, "## Summary\n\n");
    for (size_t i = 0; i < n; i++) {
        kbuf_puts(out, "- **");
        report_esc_md(out, facts[i].label);
        kbuf_puts(out, ":** ");
        report_esc_md(out, facts[i].value);
        kbuf_putc(out, '\n');
    }
    kbuf_putc(out, '\n');
}

static void md_kernel_row(const report_kernel *k, kbuf *out) {
    char a[REPORT_NUM], b[REPORT_NUM];
    kbuf_puts(out, "| ");
    report_md_code(out, k->name, 1);
    kbuf_puts(out, " | ");
    if (k->kind) report_esc_md(out, k->kind);
    else kbuf_puts(out, REPORT_DASH);
    kbuf_printf(out, " | %s | %s | ", report_fmt_pct(k->share, a), report_fmt_ms(k->time_ms, b));
    kbuf_printf(out, "%s | ", report_fmt_ms(k->is_vendor ? NAN : report_kernel_after(k), a));
    kbuf_printf(out, "%s | ", report_fmt_speedup(&k->sp, 0, a));
    kbuf_puts(out, report_fmt_pct(k->frac, a));
    double fa = report_kernel_frac_after(k);
    if (k->is_optimized && isfinite(fa)) kbuf_printf(out, " " REPORT_ARROW " %s", report_fmt_pct(fa, b));
    kbuf_puts(out, " | ");
    if (k->status) report_esc_md(out, k->status);
    else kbuf_puts(out, REPORT_DASH);
    kbuf_puts(out, " | ");
    const char *note = report_kernel_note(k);
    if (note) report_esc_md(out, note);
    kbuf_puts(out, " |\n");
}

static void md_kernels(const json_t *doc, kbuf *out) {
    const json_t *kernels = json_object_get(doc, "kernels");
    size_t i;
    json_t *kj;
    if (json_array_size(kernels)) {
        kbuf_puts(out, "## Kernels\n\n"
                       "| Kernel | Kind | Share | Before (ms) | After (ms) | Speedup (95% CI) | % of ceiling | Status | "
                       "Change / why kept |\n"
                       "|---|---|--:|--:|--:|--:|--:|---|---|\n");
        json_array_foreach(kernels, i, kj) {
            report_kernel k;
            report_kernel_read(kj, &k);
            md_kernel_row(&k, out);
        }
        kbuf_puts(out, "\nShare: of the summed GPU time of all launches. % of ceiling: the time the kernel's bytes "
                       "would take at the measured copy bandwidth, over its time.\n\n");
    }
    /* vendor calls not already listed as kernel rows */
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
        if (!header) {
            kbuf_puts(out, "### Vendor library calls (never replaced)\n\n| Call | Time (ms) | Share |\n|---|--:|--:|\n");
            header = 1;
        }
        char a[REPORT_NUM], b[REPORT_NUM];
        kbuf_puts(out, "| ");
        report_md_code(out, name, 1);
        kbuf_printf(out, " | %s | %s |\n", report_fmt_ms(report_num(kj, "time_ms"), a), report_fmt_pct(report_num(kj, "share"), b));
    }
    if (header) kbuf_putc(out, '\n');
}

/* One bar of the text chart: `cells` of glyph, padded to MD_CHART_CELLS, then the label. */
static void md_chart_bar(kbuf *out, size_t indent, const char *what, const char *glyph, double v, double maxv,
                         const char *label) {
    for (size_t i = 0; i < indent; i++) kbuf_putc(out, ' ');
    kbuf_printf(out, "  %-6s ", what);
    size_t cells = maxv > 0 ? (size_t)lround(v / maxv * MD_CHART_CELLS) : 0;
    if (v > 0 && cells == 0) cells = 1;
    if (cells > MD_CHART_CELLS) cells = MD_CHART_CELLS;
    for (size_t i = 0; i < cells; i++) kbuf_puts(out, glyph);
    for (size_t i = cells; i < MD_CHART_CELLS; i++) kbuf_putc(out, ' ');
    kbuf_printf(out, " %s\n", label);
}

static void md_chart(const json_t *doc, kbuf *out) {
    const json_t *kernels = json_object_get(doc, "kernels"), *ceil_ = json_object_get(doc, "ceilings");
    size_t i, width = 0, rows = 0;
    double maxv = 0;
    json_t *kj;
    kbuf name = KBUF_INIT;
    json_array_foreach(kernels, i, kj) {
        report_kernel k;
        report_kernel_read(kj, &k);
        if (!report_kernel_charted(&k)) continue;
        rows++;
        kbuf_reset(&name);
        report_trunc(&name, k.name ? k.name : "?", MD_CHART_NAME);
        size_t w = report_utf8_len(kbuf_str(&name));
        if (w > width) width = w;
        double v[3] = {k.time_ms, report_kernel_after(&k), report_floor_ms(k.bytes, ceil_)};
        for (int j = 0; j < 3; j++)
            if (isfinite(v[j]) && v[j] > maxv) maxv = v[j];
    }
    if (!rows) {
        kbuf_free(&name);
        return;
    }
    kbuf_puts(out, "## Time per kernel\n\n```text\n");
    json_array_foreach(kernels, i, kj) {
        report_kernel k;
        report_kernel_read(kj, &k);
        if (!report_kernel_charted(&k)) continue;
        kbuf_reset(&name);
        report_trunc(&name, k.name ? k.name : "?", MD_CHART_NAME);
        for (char *p = name.data; p && *p; p++)
            if (*p == '`' || *p == '~') *p = '\'';
        kbuf_puts(out, kbuf_str(&name));
        size_t indent = width - report_utf8_len(kbuf_str(&name));  /* the first bar follows the name */
        char a[REPORT_NUM], lb[2 * REPORT_NUM], xb[REPORT_NUM];
        if (!isfinite(k.time_ms)) {
            md_chart_bar(out, indent, "", "", 0, maxv, "not timed");
            continue;
        }
        snprintf(lb, sizeof lb, "%s ms", report_fmt_ms(k.time_ms, a));
        md_chart_bar(out, indent, "before", "\xe2\x96\x92", k.time_ms, maxv, lb);
        double after = report_kernel_after(&k);
        if (isfinite(after)) {
            if (k.is_optimized && isfinite(k.sp.est))
                snprintf(lb, sizeof lb, "%s ms, %s", report_fmt_ms(after, a), report_fmt_x(k.sp.est, xb));
            else
                snprintf(lb, sizeof lb, "%s ms%s", report_fmt_ms(after, a), k.is_optimized ? "" : " (kept)");
            md_chart_bar(out, width, "after", "\xe2\x96\x88", after, maxv, lb);
        }
        double fl = report_floor_ms(k.bytes, ceil_);
        if (isfinite(fl)) {
            snprintf(lb, sizeof lb, "%s ms", report_fmt_ms(fl, a));
            md_chart_bar(out, width, "floor", "\xc2\xb7", fl, maxv, lb);
        }
    }
    kbuf_free(&name);
    kbuf_puts(out, "```\n\nbefore: torch.compile's kernel; after: kopt's output; floor: the kernel's bytes at the "
                   "measured copy bandwidth (the HTML report draws this chart as SVG).\n\n");
}

static void md_refused_list(const json_t *refused, kbuf *out) {
    const char *key;
    json_t *v;
    const char *sep = "";
    json_object_foreach((json_t *)refused, key, v) {
        double n = json_is_number(v) ? json_number_value(v) : 0;
        if (!isfinite(n) || n <= 0) continue;
        kbuf_printf(out, "%sgate ", sep);
        report_esc_md(out, key);
        kbuf_printf(out, ": %.0f", n);
        sep = ", ";
    }
    if (!*sep) kbuf_puts(out, "none");
}

static void md_optimized(const json_t *doc, kbuf *out) {
    const json_t *kernels = json_object_get(doc, "kernels");
    size_t i;
    json_t *kj;
    int any = 0;
    json_array_foreach(kernels, i, kj) {
        report_kernel k;
        report_kernel_read(kj, &k);
        if (!k.is_optimized) continue;
        if (!any) kbuf_puts(out, "## Optimized kernels\n\n");
        any = 1;
        char a[REPORT_NUM], b[REPORT_NUM];
        kbuf_puts(out, "### ");
        report_md_code(out, k.name, 0);
        kbuf_puts(out, "\n\n");
        if (k.kind || k.cls || k.aten_ops) {
            kbuf_puts(out, "- **Kind:** ");
            if (k.kind) report_esc_md(out, k.kind);
            if (k.kind && k.cls) kbuf_puts(out, ", ");
            if (k.cls) report_esc_md(out, k.cls);
            if (k.aten_ops) {
                kbuf_puts(out, (k.kind || k.cls) ? "; ATen: " : "ATen: ");
                size_t j;
                json_t *op;
                json_array_foreach(k.aten_ops, j, op) {
                    if (j) kbuf_puts(out, ", ");
                    report_md_code(out, json_string_value(op), 0);
                }
            }
            kbuf_putc(out, '\n');
        }
        kbuf_printf(out, "- **Time:** %s ms " REPORT_ARROW " %s ms", report_fmt_ms(k.time_ms, a),
                    report_fmt_ms(k.after_ms, b));
        if (isfinite(k.sp.est)) kbuf_printf(out, ", speedup %s", report_fmt_speedup(&k.sp, 1, a));
        kbuf_putc(out, '\n');
        double fa = report_kernel_frac_after(&k);
        if (isfinite(k.frac))
            kbuf_printf(out, "- **Of the ceiling:** %s%s%s\n", report_fmt_pct(k.frac, a), isfinite(fa) ? " " REPORT_ARROW " " : "",
                        isfinite(fa) ? report_fmt_pct(fa, b) : "");
        kbuf_puts(out, "- **Change:** ");
        if (k.change) report_esc_md(out, k.change);
        else kbuf_puts(out, "not recorded");
        kbuf_putc(out, '\n');
        if (isfinite(k.tried) || k.refused) {
            kbuf_puts(out, "- **Candidates:** ");
            if (isfinite(k.tried)) kbuf_printf(out, "%.0f tried", k.tried);
            if (k.refused) {
                kbuf_puts(out, isfinite(k.tried) ? "; refused at " : "refused at ");
                md_refused_list(k.refused, out);
            }
            kbuf_putc(out, '\n');
        }
        size_t j;
        json_t *at;
        int nacc = 0;
        json_array_foreach(json_object_get(doc, "attempts"), j, at) {
            const char *kn = report_str(at, "kernel"), *o = report_str(at, "outcome");
            if (!kn || !k.name || strcmp(kn, k.name) || !o || strcmp(o, "accepted")) continue;
            kbuf_puts(out, nacc++ ? ", " : "- **Accepted:** ");
            report_md_code(out, report_str(at, "label") ? report_str(at, "label") : "unlabelled", 0);
            report_speedup s = report_speedup_read(json_object_get(at, "speedup"));
            if (isfinite(s.est)) kbuf_printf(out, " (%s)", report_fmt_x(s.est, a));
        }
        if (nacc) kbuf_putc(out, '\n');
        kbuf_putc(out, '\n');
    }
}

static void md_refusals(const json_t *doc, kbuf *out) {
    long counts[REPORT_NGATES + 1], accepted;
    long total = report_gate_counts(doc, counts, &accepted);
    if (!total && accepted < 0) return;
    kbuf_puts(out, "## Refusals by gate\n\n| Gate | Checks | Refused |\n|--:|---|--:|\n");
    for (int g = 1; g <= REPORT_NGATES; g++) kbuf_printf(out, "| %d | %s | %ld |\n", g, report_gate_what(g), counts[g]);
    if (counts[0]) kbuf_printf(out, "| ? | %s | %ld |\n", report_gate_what(0), counts[0]);
    kbuf_printf(out, "| all | | %ld |\n\n", total);
    if (accepted >= 0) kbuf_printf(out, "Accepted candidates: %ld.\n\n", accepted);
}

static void md_attempts(const json_t *doc, kbuf *out) {
    const json_t *att = json_object_get(doc, "attempts");
    if (!json_array_size(att)) return;
    kbuf_puts(out, "## Attempts\n\n| # | Kernel | Candidate | Direction | Outcome | Gate | Speedup | Reason |\n"
                   "|--:|---|---|---|---|--:|--:|---|\n");
    size_t i;
    json_t *a;
    json_array_foreach(att, i, a) {
        char nb[REPORT_NUM];
        kbuf_printf(out, "| %zu | ", i + 1);
        report_md_code(out, report_str(a, "kernel"), 1);
        kbuf_puts(out, " | ");
        const char *f[] = {report_str(a, "label"), report_str(a, "direction"), report_str(a, "outcome")};
        for (int j = 0; j < 3; j++) {
            if (f[j]) report_esc_md(out, f[j]);
            else kbuf_puts(out, REPORT_DASH);
            kbuf_puts(out, " | ");
        }
        double g = report_num(a, "gate");
        if (isfinite(g) && g >= 1) kbuf_printf(out, "%.0f", g);  /* 0: accepted, no refusing gate */
        else kbuf_puts(out, REPORT_DASH);
        report_speedup s = report_speedup_read(json_object_get(a, "speedup"));
        kbuf_printf(out, " | %s | ", report_fmt_x(s.est, nb));
        if (report_str(a, "reason")) report_esc_md(out, report_str(a, "reason"));
        else kbuf_puts(out, REPORT_DASH);
        kbuf_puts(out, " |\n");
    }
    kbuf_putc(out, '\n');
}

static void md_method(const json_t *doc, kbuf *out) {
    const char *m = report_str(json_object_get(doc, "model"), "method");
    const char *top = report_str(doc, "method");
    const char *c = report_str(json_object_get(doc, "ceilings"), "method");
    kbuf_puts(out, "## Method\n\n");
    if (top) { report_esc_md(out, top); kbuf_puts(out, "\n\n"); }
    if (m) { kbuf_puts(out, "**Timing.** "); report_esc_md(out, m); kbuf_puts(out, "\n\n"); }
    if (c) { kbuf_puts(out, "**Ceilings.** "); report_esc_md(out, c); kbuf_puts(out, "\n\n"); }
    if (!top && !m && !c) kbuf_puts(out, "The document records no description of the measurements.\n\n");
}

/* ---------------------------------------------------------------- entry points */

void report_markdown(const json_t *doc, kbuf *out) {
    md_title(doc, out);
    md_banner(doc, out);
    md_summary(doc, out);
    md_kernels(doc, out);
    md_chart(doc, out);
    md_optimized(doc, out);
    md_refusals(doc, out);
    md_attempts(doc, out);
    md_method(doc, out);
}

int report_write_markdown(const json_t *doc, const char *path, kerr *e) {
    if (!doc || !path) return kerr_set(e, KOPT_E_INTERNAL, "report_write_markdown: no document or no path");
    kbuf b = KBUF_INIT;
    report_markdown(doc, &b);
    int rc = fs_write(path, kbuf_str(&b), b.len, e);
    kbuf_free(&b);
    return rc;
}
