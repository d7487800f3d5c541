/* summary_html.c — summary.html: one self-contained page, inline CSS and inline SVG, no
 * JavaScript, no external resource (contract in render.h). */
#include "bench/fmt.h"
#include "bench/summary.h"

static const char CSS[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;color:#1a202c;"
    "margin:24px auto;max-width:1280px;padding:0 16px;line-height:1.45}"
    "h1{font-size:1.45em}h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #e2e8f0}"
    "table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #e2e8f0;padding:3px 7px;"
    "vertical-align:top}th{background:#f7fafc;text-align:left}td.num{text-align:right;"
    "font-variant-numeric:tabular-nums;white-space:nowrap}tbody tr:nth-child(even){background:#fafbfc}"
    ".scroll{overflow-x:auto}.note{color:#4a5568;font-size:13px}"
    ".banner{background:#fff5f5;border:1px solid #feb2b2;padding:8px 12px;border-radius:4px}"
    ".chart{overflow-x:auto}nav a{margin-right:12px}ul.defs{font-size:13px;color:#2d3748}";

void bench_summary_html(const bench_report *r, kbuf *out) {
    bench_tables t = {0};
    bench_tables_build(r, &t);
    kbuf title = KBUF_INIT;
    bench_summary_title(r, &title);
    kbuf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                   "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>");
    bench_esc_xml(out, kbuf_str(&title));
    kbuf_printf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", CSS);
    bench_esc_xml(out, kbuf_str(&title));
    kbuf_puts(out, "</h1>\n<nav><a href=\"#levels\">levels</a><a href=\"#fast-p\">fast_p</a><a href=\"#headroom\">headroom</a>"
                   "<a href=\"#resources\">time, memory, disk</a><a href=\"#chart\">chart</a>"
                   "<a href=\"#problems\">problems</a><a href=\"#definitions\">definitions</a></nav>\n");
    if (r->interrupted)
        kbuf_printf(out, "<p class=\"banner\"><strong>Interrupted</strong> (signal %d): the problems that were "
                         "running are not done; run the same command again to finish the sweep.</p>\n",
                    r->interrupted);
    for (int i = 0; i < BENCH_T_PROBLEMS; i++) bench_table_html(&t.t[i], out);
    kbuf_puts(out, "<h2 id=\"chart\">Model times per problem</h2>\n<div class=\"chart\">\n");
    bench_chart_svg(r->recs, r->n, out);
    kbuf_puts(out, "</div>\n");
    bench_table_html(&t.t[BENCH_T_PROBLEMS], out);
    for (int i = 0; BENCH_T_AFTER_PROBLEMS[i] >= 0; i++)
        if (t.t[BENCH_T_AFTER_PROBLEMS[i]].nrows) bench_table_html(&t.t[BENCH_T_AFTER_PROBLEMS[i]], out);
    kbuf_puts(out, "<h2 id=\"definitions\">Definitions</h2>\n<ul class=\"defs\">\n");
    for (int i = 0; BENCH_DEFINITIONS[i]; i++) {
        kbuf_puts(out, "<li>");
        bench_esc_xml(out, BENCH_DEFINITIONS[i]);
        kbuf_puts(out, "</li>\n");
    }
    kbuf_puts(out, "</ul>\n</body>\n</html>\n");
    kbuf_free(&title);
    bench_tables_free(&t);
}
