/* table.h — a plain-text table (title, header, rows of cells) built once and rendered both as
 * a Markdown table and as an HTML <table>, so that summary.md and summary.html show the same
 * figures. Cells are plain text; the renderers escape them for their format. Unless the table
 * is marked `text`, a cell whose text starts with a digit, a sign or the en dash is
 * right-aligned in HTML (class "num"), and so is a Markdown column whose cells all do.
 *
 * Ownership: a bench_table owns copies of everything given to it (bench_table_free, NULL-safe).
 */
#ifndef KOPT_BENCH_TABLE_H
#define KOPT_BENCH_TABLE_H

#include <stddef.h>

#include "util/buf.h"

typedef struct bench_table {
    char *id;                   /* HTML id and anchor, e.g. "levels" */
    char *title;
    char *note;                 /* a sentence under the table, may be NULL */
    int text;                   /* 1: a table of text (settings): nothing right-aligned */
    size_t ncols, nrows;
    char **head;                /* ncols */
    char **cells;               /* nrows * ncols, row-major */
} bench_table;

void bench_table_init(bench_table *t, const char *id, const char *title, const char *const *head, size_t ncols);
/* Appends a row of ncols cells (NULL cells become empty). */
void bench_table_row(bench_table *t, const char *const *cells);
void bench_table_note(bench_table *t, const char *note);
void bench_table_free(bench_table *t);

/* "## title", the table, the note. */
void bench_table_md(const bench_table *t, kbuf *out);
/* <h2 id=...>title</h2>, <table>, <p class="note">. */
void bench_table_html(const bench_table *t, kbuf *out);

#endif
