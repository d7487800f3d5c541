/* report_common.c — reading the optimize document, formatting numbers, escaping text: the
 * helpers of report_internal.h shared by the Markdown, HTML and SVG renderers. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_internal.h"

/* ------------------------------------------------------------------ reading */

double report_num(const json_t *o, const char *key) {
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) return NAN;
    double d = json_number_value(v);
    return isfinite(d) ? d : NAN;
}

const char *report_str(const json_t *o, const char *key) {
    const char *s = json_string_value(json_object_get(o, key));
    return s && *s ? s : NULL;
}

report_speedup report_speedup_read(const json_t *sp) {
    report_speedup r = {NAN, NAN, NAN};
    if (json_is_number(sp)) {
        double d = json_number_value(sp);
        if (isfinite(d)) r.est = d;
        return r;
    }
    r.est = report_num(sp, "estimate");
    r.lo = report_num(sp, "ci95_lo");
    r.hi = report_num(sp, "ci95_hi");
    return r;
}

void report_kernel_read(const json_t *k, report_kernel *out) {
    memset(out, 0, sizeof *out);
    out->name = report_str(k, "name");
    out->kind = report_str(k, "kernel_kind");
    if (!out->kind) out->kind = report_str(k, "kind");
    out->status = report_str(k, "status");
    out->why = report_str(k, "why");
    out->change = report_str(k, "change");
    out->cls = report_str(k, "class");
    const json_t *a = json_object_get(k, "aten_ops");
    out->aten_ops = json_is_array(a) && json_array_size(a) ? a : NULL;
    const json_t *r = json_object_get(k, "refused_by_gate");
    out->refused = json_is_object(r) ? r : NULL;
    out->time_ms = report_num(k, "time_ms");
    out->after_ms = report_num(k, "after_ms");
    out->share = report_num(k, "share");
    out->frac = report_num(k, "frac_of_ceiling");
    out->bytes = report_num(k, "bytes");
    out->tried = report_num(k, "tried");
    out->sp = report_speedup_read(json_object_get(k, "speedup"));
    const char *kind = report_str(k, "kind");
    out->is_vendor = (out->status && !strcmp(out->status, "vendor")) || (kind && !strcmp(kind, "vendor"));
    out->is_optimized = out->status && !strcmp(out->status, "optimized");
    out->in_region = out->status && !strcmp(out->status, "in_region");
}

int report_kernel_charted(const report_kernel *k) { return !k->is_vendor; }

double report_kernel_after(const report_kernel *k) {
    if (k->in_region) return NAN;
    if (isfinite(k->after_ms)) return k->after_ms;
    if (!k->is_optimized) return k->time_ms;
    return NAN;
}

double report_kernel_frac_after(const report_kernel *k) {
    if (!isfinite(k->frac) || !isfinite(k->time_ms) || !isfinite(k->after_ms) || k->after_ms <= 0) return NAN;
    return k->frac * k->time_ms / k->after_ms;
}

double report_floor_ms(double bytes, const json_t *ceilings) {
    double gbps = report_num(ceilings, "copy_gbps");
    if (!isfinite(bytes) || bytes <= 0 || !isfinite(gbps) || gbps <= 0) return NAN;
    return bytes / (gbps * 1e9) * 1e3;
}

const char *report_kernel_note(const report_kernel *k) {
    if (k->is_optimized) return k->change ? k->change : k->why;
    if (k->why) return k->why;
    if (k->change) return k->change;
    if (k->is_vendor) return "vendor library call, never a target";
    return NULL;
}

int report_outcome(const json_t *doc, const char **detail) {
    const char *o = report_str(doc, "outcome");
    if (detail) *detail = NULL;
    if (json_is_false(json_object_get(doc, "ok")) || (!o && json_object_get(doc, "error"))) {
        const json_t *err = json_object_get(doc, "error");
        if (detail) *detail = json_is_string(err) ? report_str(doc, "error") : report_str(err, "message");
        return REPORT_OUT_FAILED;
    }
    if (!o) return REPORT_OUT_OTHER;
    if (!strcmp(o, "optimized")) return REPORT_OUT_OPTIMIZED;
    if (!strncmp(o, "baseline kept", 13)) {
        const char *p = o + 13;
        while (*p == ':' || *p == ' ' || *p == '-') p++;
        if (detail) *detail = *p ? p : NULL;
        return REPORT_OUT_KEPT;
    }
    if (detail) *detail = o;
    return REPORT_OUT_OTHER;
}

long report_gate_counts(const json_t *doc, long counts[REPORT_NGATES + 1], long *accepted) {
    for (int g = 0; g <= REPORT_NGATES; g++) counts[g] = 0;
    long total = 0;
    int from_kernels = 0;
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(doc, "kernels"), i, k) {
        const json_t *r = json_object_get(k, "refused_by_gate");
        if (!json_is_object(r)) continue;
        from_kernels = 1;
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)r, key, v) {
            double n = json_is_number(v) ? json_number_value(v) : 0;
            if (!isfinite(n) || n <= 0 || n > 1e12) continue;  /* nonsense counts are ignored */
            char *end = NULL;
            long g = strtol(key, &end, 10);
            int slot = (end && *end == '\0' && g >= 1 && g <= REPORT_NGATES) ? (int)g : 0;
            counts[slot] += (long)n;
            total += (long)n;
        }
    }
    const json_t *att = json_object_get(doc, "attempts");
    long acc = json_is_array(att) ? 0 : -1;
    json_t *a;
    json_array_foreach(att, i, a) {
        const char *o = report_str(a, "outcome");
        if (o && !strcmp(o, "accepted")) acc++;
        if (from_kernels || !o || strcmp(o, "refused")) continue;
        double g = report_num(a, "gate");
        int slot = (isfinite(g) && g >= 1 && g <= REPORT_NGATES && g == floor(g)) ? (int)g : 0;
        counts[slot]++;
        total++;
    }
    if (accepted) *accepted = acc;
    return total;
}

const char *report_gate_what(int gate) {
    switch (gate) {
    case 1: return "static rules, interface, compiles";
    case 2: return "kernel in isolation matches the original";
    case 3: return "model outputs match eager on fresh seeds";
    case 4: return "measurably faster (interleaved timing)";
    default: return "other";
    }
}

/* ------------------------------------------------------------------ numbers */

const char *report_fmt_ms(double ms, char buf[REPORT_NUM]) {
    if (!isfinite(ms)) return REPORT_DASH;
    if (fabs(ms) >= 1000) {
        snprintf(buf, REPORT_NUM, "%.0f", ms);
        return buf;
    }
    snprintf(buf, REPORT_NUM, "%#.4g", ms);
    size_t n = strlen(buf);
    if (n && buf[n - 1] == '.') buf[n - 1] = '\0';
    return buf;
}

const char *report_fmt_pct(double frac, char buf[REPORT_NUM]) {
    if (!isfinite(frac)) return REPORT_DASH;
    snprintf(buf, REPORT_NUM, "%.1f%%", frac * 100.0);
    return buf;
}

const char *report_fmt_x(double x, char buf[REPORT_NUM]) {
    if (!isfinite(x)) return REPORT_DASH;
    snprintf(buf, REPORT_NUM, "%.3fx", x);
    return buf;
}

const char *report_fmt_speedup(const report_speedup *s, int with_label, char buf[REPORT_NUM]) {
    if (!isfinite(s->est)) return REPORT_DASH;
    if (isfinite(s->lo) && isfinite(s->hi))
        snprintf(buf, REPORT_NUM, "%.3fx (%s%.3f-%.3f)", s->est, with_label ? "95% CI " : "", s->lo, s->hi);
    else
        snprintf(buf, REPORT_NUM, "%.3fx", s->est);
    return buf;
}

/* ------------------------------------------------------------------ summary */

static report_fact *fact_add(report_fact *f, size_t *n, const char *label) {
    report_fact *r = &f[(*n)++];
    r->label = label;
    r->value[0] = '\0';
    return r;
}

/* Append printf text to a fact's fixed value buffer (truncating, never overflowing). */
static void fact_cat(report_fact *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fact_cat(report_fact *f, const char *fmt, ...) {
    size_t len = strlen(f->value);
    if (len + 1 >= sizeof f->value) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->value + len, sizeof f->value - len, fmt, ap);
    va_end(ap);
}

char report_sentence_initial(const char *s) {
    if (!s || !*s) return '\0';
    for (const char *p = s; *p && *p != ' '; p++)
        if (*p == '.' || *p == '_' || *p == '(') return *s;   /* an identifier keeps its case */
    return (char)toupper((unsigned char)*s);
}

int report_headline(const json_t *doc, char *buf, size_t n) {
    const json_t *m = json_object_get(doc, "model");
    double base = report_num(m, "baseline_ms"), opt = report_num(m, "optimized_ms");
    report_speedup sp = report_speedup_read(json_object_get(m, "speedup"));
    char a[REPORT_NUM], b[REPORT_NUM], c[REPORT_NUM];
    if (isfinite(base) && isfinite(opt)) {
        if (isfinite(sp.est) && isfinite(sp.lo) && isfinite(sp.hi))
            snprintf(buf, n, "%s ms " REPORT_ARROW " %s ms, %s faster (95%% CI %.3f-%.3f)", report_fmt_ms(base, a),
                     report_fmt_ms(opt, b), report_fmt_x(sp.est, c), sp.lo, sp.hi);
        else if (isfinite(sp.est))
            snprintf(buf, n, "%s ms " REPORT_ARROW " %s ms, %s faster", report_fmt_ms(base, a), report_fmt_ms(opt, b),
                     report_fmt_x(sp.est, c));
        else
            snprintf(buf, n, "%s ms " REPORT_ARROW " %s ms", report_fmt_ms(base, a), report_fmt_ms(opt, b));
        return 1;
    }
    if (isfinite(base)) {
        snprintf(buf, n, "baseline %s ms", report_fmt_ms(base, a));
        return 1;
    }
    if (n) buf[0] = '\0';
    return 0;
}

size_t report_facts(const json_t *doc, report_fact facts[REPORT_MAX_FACTS]) {
    size_t n = 0;
    char a[REPORT_NUM], b[REPORT_NUM], b2[REPORT_NUM];
    const json_t *m = json_object_get(doc, "model");
    double base = report_num(m, "baseline_ms"), opt = report_num(m, "optimized_ms");
    double ref = isfinite(opt) ? opt : base;
    if (isfinite(base) || isfinite(opt)) {
        report_fact *f = fact_add(facts, &n, "Model time (compiled baseline " REPORT_ARROW " optimized)");
        fact_cat(f, "%s ms " REPORT_ARROW " %s ms", report_fmt_ms(base, a), report_fmt_ms(opt, b));
    }
    report_speedup sp = report_speedup_read(json_object_get(m, "speedup"));
    if (isfinite(sp.est)) {
        report_fact *f = fact_add(facts, &n, "Speedup over the compiled baseline");
        fact_cat(f, "%s", report_fmt_speedup(&sp, 1, a));
    }
    static const struct { const char *key, *label; } refs[] = {
        {"eager_ms", "Eager PyTorch"},
        {"max_autotune_ms", "torch.compile max-autotune"},
    };
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        double t = report_num(m, refs[i].key);
        if (!isfinite(t)) continue;
        report_fact *f = fact_add(facts, &n, refs[i].label);
        fact_cat(f, "%s ms", report_fmt_ms(t, a));
        if (isfinite(ref) && ref > 0 && t > 0) {
            if (t >= ref) fact_cat(f, " (kopt's result is %s faster)", report_fmt_x(t / ref, b));
            else fact_cat(f, " (kopt's result is %s slower)", report_fmt_x(ref / t, b));
        }
    }
    double floor_ms = report_num(m, "floor_ms");
    if (isfinite(floor_ms)) {
        report_fact *f = fact_add(facts, &n, "Memory-traffic floor");
        fact_cat(f, "%s ms", report_fmt_ms(floor_ms, a));
        if (isfinite(ref) && floor_ms > 0) fact_cat(f, " (the result takes %.2f times the floor)", ref / floor_ms);
        const char *gap = report_str(json_object_get(m, "floor_gap"), "reason");
        if (gap && *gap) fact_cat(f, "; why it stays above %.1fx: %s", report_num(json_object_get(m, "floor_gap"), "above"), gap);
    }
    const json_t *fc = json_object_get(m, "floor_check");
    if (json_is_object(fc)) {
        const json_t *below = json_object_get(fc, "below");
        size_t nb = json_array_size(below);
        double checked = report_num(fc, "checked");
        report_fact *f = fact_add(facts, &n, "Floor check");
        if (!nb) {
            fact_cat(f, "ok: none of the %.0f measured times is below its floor", isfinite(checked) ? checked : 0.0);
        } else {
            fact_cat(f, "%zu of %.0f measured times below their floor, so the floor is wrong there:", nb,
                     isfinite(checked) ? checked : (double)nb);
            size_t i;
            const json_t *under;
            json_array_foreach(below, i, under) {
                fact_cat(f, "%s %s (%s ms < %s ms)", i ? "," : "", report_str(under, "what"),
                         report_fmt_ms(report_num(under, "time_ms"), a), report_fmt_ms(report_num(under, "floor_ms"), b2));
            }
            fact_cat(f, " (report.json: model.floor_check)");
        }
    }
    const json_t *bud = json_object_get(doc, "budget");
    double used = report_num(bud, "used_candidates"), cmax = report_num(bud, "candidates");
    double gpu = report_num(bud, "gpu_s"), wall = report_num(bud, "used_wall_s"), wmax = report_num(bud, "wall_s");
    const json_t *att = json_object_get(doc, "attempts");
    if (!isfinite(used) && json_is_array(att)) used = (double)json_array_size(att);
    if (isfinite(used) || isfinite(gpu) || isfinite(wall)) {
        report_fact *f = fact_add(facts, &n, "Search");
        const char *sep = "";
        if (isfinite(used)) {
            fact_cat(f, "%.0f candidate%s tried", used, used == 1 ? "" : "s");
            if (isfinite(cmax)) fact_cat(f, " (budget %.0f)", cmax);
            sep = ", ";
        }
        if (isfinite(gpu)) { fact_cat(f, "%s%.1f s of GPU time", sep, gpu); sep = ", "; }
        if (isfinite(wall)) {
            fact_cat(f, "%s%.1f s wall", sep, wall);
            if (isfinite(wmax)) fact_cat(f, " (budget %.0f s)", wmax);
        }
    }
    const json_t *llm = json_object_get(doc, "llm");
    if (json_is_object(llm)) {
        double calls = report_num(llm, "calls"), tin = report_num(llm, "tokens_in"), tout = report_num(llm, "tokens_out");
        double cost = report_num(llm, "cost_usd");
        report_fact *f = fact_add(facts, &n, "LLM use");
        fact_cat(f, "%.0f call%s", isfinite(calls) ? calls : 0, calls == 1 ? "" : "s");
        if (isfinite(tin)) fact_cat(f, ", %.0f tokens in", tin);
        if (isfinite(tout)) fact_cat(f, ", %.0f tokens out", tout);
        if (isfinite(cost)) fact_cat(f, ", $%.4f", cost);
    }
    return n;
}

/* ------------------------------------------------------------------ text */

void report_esc_xml(kbuf *out, const char *s) {
    if (!s) return;
    const char *run = s;
    for (const char *p = s; *p; p++) {
        const char *rep = NULL;
        unsigned char c = (unsigned char)*p;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) rep = "\xef\xbf\xbd";
        }
        if (!rep) continue;
        kbuf_append(out, run, (size_t)(p - run));
        kbuf_puts(out, rep);
        run = p + 1;
    }
    kbuf_puts(out, run);
}

static int md_word(unsigned char c) { return isalnum(c) || c >= 0x80; }

void report_esc_md(kbuf *out, const char *s) {
    if (!s) return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c < 0x20 || c == 0x7f) {
            kbuf_putc(out, ' ');
            continue;
        }
        int esc = strchr("\\`*[]<>|&~", c) != NULL;
        if (c == '_') esc = p == (const unsigned char *)s || !md_word(p[-1]) || !md_word(p[1]);
        if (esc) kbuf_putc(out, '\\');
        kbuf_putc(out, (char)c);
    }
}

void report_md_code(kbuf *out, const char *s, int in_table) {
    if (!s || !*s) {
        kbuf_puts(out, REPORT_DASH);
        return;
    }
    size_t run = 0, longest = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest) longest = run;
    }
    size_t len = strlen(s);
    int pad = s[0] == '`' || s[len - 1] == '`' || s[0] == ' ' || s[len - 1] == ' ';
    for (size_t i = 0; i <= longest; i++) kbuf_putc(out, '`');
    if (pad) kbuf_putc(out, ' ');
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f) kbuf_putc(out, ' ');
        else if (c == '|' && in_table) kbuf_puts(out, "\\|");
        else kbuf_putc(out, (char)c);
    }
    if (pad) kbuf_putc(out, ' ');
    for (size_t i = 0; i <= longest; i++) kbuf_putc(out, '`');
}

/* Byte offset of the character boundary after `chars` characters of s (or strlen). */
static size_t utf8_offset(const char *s, size_t chars) {
    size_t i = 0, n = 0;
    while (s[i]) {
        if (((unsigned char)s[i] & 0xC0) != 0x80) {
            if (n == chars) return i;
            n++;
        }
        i++;
    }
    return i;
}

size_t report_utf8_len(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void put_clean(kbuf *out, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        kbuf_putc(out, (c < 0x20 || c == 0x7f) ? ' ' : (char)c);
    }
}

void report_trunc(kbuf *out, const char *s, size_t maxch) {
    if (!s) return;
    size_t n = report_utf8_len(s);
    if (n <= maxch || maxch < 5) {
        put_clean(out, s, strlen(s));
        return;
    }
    size_t tail = (maxch - 1) / 3, head = maxch - 1 - tail;
    size_t hb = utf8_offset(s, head), tb = utf8_offset(s, n - tail);
    put_clean(out, s, hb);
    kbuf_puts(out, "\xe2\x80\xa6");  /* ellipsis */
    put_clean(out, s + tb, strlen(s + tb));
}

const char *report_basename(const char *s) {
    if (!s) return NULL;
    const char *slash = strrchr(s, '/');
    return slash && slash[1] ? slash + 1 : s;
}
