/* table.c — plain-text tables rendered as Markdown and HTML (contract in table.h). */
#include "bench/table.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fmt.h"

void bench_table_init(bench_table *t, const char *id, const char *title, const char *const *head, size_t ncols) {
    memset(t, 0, sizeof *t);
    t->id = kstrdup(id ? id : "");
    t->title = kstrdup(title ? title : "");
    t->ncols = ncols;
    t->head = kcalloc(ncols ? ncols : 1, sizeof *t->head);
    for (size_t i = 0; i < ncols; i++) t->head[i] = kstrdup(head[i] ? head[i] : "");
}

void bench_table_row(bench_table *t, const char *const *cells) {
    t->cells = krealloc(t->cells, (t->nrows + 1) * (t->ncols ? t->ncols : 1) * sizeof *t->cells);
    for (size_t i = 0; i < t->ncols; i++) t->cells[t->nrows * t->ncols + i] = kstrdup(cells[i] ? cells[i] : "");
    t->nrows++;
}

void bench_table_note(bench_table *t, const char *note) {
    free(t->note);
    t->note = note ? kstrdup(note) : NULL;
}

void bench_table_free(bench_table *t) {
    if (!t) return;
    for (size_t i = 0; i < t->ncols; i++) free(t->head[i]);
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->head);
    free(t->cells);
    free(t->id);
    free(t->title);
    free(t->note);
    memset(t, 0, sizeof *t);
}

/* A cell that reads as a number (or the dash of a missing one). */
static int bt_numeric(const char *s);

/* A column right-aligned in Markdown: not the first, some cell numeric, every non-empty one. */
static int bt_numeric_col(const bench_table *t, size_t c) {
    if (c == 0 || t->text) return 0;
    int any = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        const char *cell = t->cells[r * t->ncols + c];
        if (cell[0] && !bt_numeric(cell)) return 0;
        any |= cell[0] != '\0';
    }
    return any;
}

void bench_table_md(const bench_table *t, kbuf *out) {
    kbuf_puts(out, "\n## ");
    kbuf_puts(out, t->title);
    kbuf_puts(out, "\n\n|");
    for (size_t c = 0; c < t->ncols; c++) {
        kbuf_putc(out, ' ');
        bench_esc_md(out, t->head[c]);
        kbuf_puts(out, " |");
    }
    kbuf_puts(out, "\n|");
    for (size_t c = 0; c < t->ncols; c++) kbuf_puts(out, bt_numeric_col(t, c) ? "---:|" : "---|");
    kbuf_putc(out, '\n');
    for (size_t r = 0; r < t->nrows; r++) {
        kbuf_putc(out, '|');
        for (size_t c = 0; c < t->ncols; c++) {
            kbuf_putc(out, ' ');
            bench_esc_md(out, t->cells[r * t->ncols + c]);
            kbuf_puts(out, " |");
        }
        kbuf_putc(out, '\n');
    }
    if (t->note) {
        kbuf_puts(out, "\n");
        kbuf_puts(out, t->note);
        kbuf_puts(out, "\n");
    }
}

/* A cell that reads as a number (or the dash of a missing one). */
static int bt_numeric(const char *s) {
    return isdigit((unsigned char)s[0]) || ((s[0] == '-' || s[0] == '+') && isdigit((unsigned char)s[1])) ||
           !strcmp(s, BENCH_DASH);
}

void bench_table_html(const bench_table *t, kbuf *out) {
    kbuf_puts(out, "<h2 id=\"");
    bench_esc_xml(out, t->id);
    kbuf_puts(out, "\">");
    bench_esc_xml(out, t->title);
    kbuf_puts(out, "</h2>\n<div class=\"scroll\"><table>\n<thead><tr>");
    for (size_t c = 0; c < t->ncols; c++) {
        kbuf_puts(out, "<th>");
        bench_esc_xml(out, t->head[c]);
        kbuf_puts(out, "</th>");
    }
    kbuf_puts(out, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < t->nrows; r++) {
        kbuf_puts(out, "<tr>");
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            kbuf_puts(out, c > 0 && !t->text && bt_numeric(cell) ? "<td class=\"num\">" : "<td>");
            bench_esc_xml(out, cell);
            kbuf_puts(out, "</td>");
        }
        kbuf_puts(out, "</tr>\n");
    }
    kbuf_puts(out, "</tbody></table></div>\n");
    if (t->note) {
        kbuf_puts(out, "<p class=\"note\">");
        bench_esc_xml(out, t->note);
        kbuf_puts(out, "</p>\n");
    }
}
