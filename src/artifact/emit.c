/* emit.c — see emit.h. Edits are collected as (offset, bytes removed, text inserted), sorted
 * by offset (ties keep their order of creation), checked for overlap, then applied in one
 * copy of the original text. */
#include "artifact/emit.h"

#include <stdlib.h>
#include <string.h>

typedef struct edit {
    size_t off, del;
    char *ins;          /* owned */
    size_t seq;
} edit;

typedef struct edits {
    edit *v;
    size_t n, cap;
} edits;

static void add_edit(edits *es, size_t off, size_t del, char *ins) {
    if (es->n == es->cap) {
        es->cap = es->cap ? es->cap * 2 : 16;
        es->v = krealloc(es->v, es->cap * sizeof *es->v);
    }
    es->v[es->n] = (edit){off, del, ins, es->n};
    es->n++;
}

static void free_edits(edits *es) {
    for (size_t i = 0; i < es->n; i++) free(es->v[i].ins);
    free(es->v);
}

static int cmp_edit(const void *x, const void *y) {
    const edit *a = x, *b = y;
    if (a->off != b->off) return a->off < b->off ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

const char *art_launch_probe_item(const art_launch *l, size_t i) {
    if (i < l->args.n) return l->args.v[i];
    i -= l->args.n;
    for (size_t k = 0; k < l->kwnames.n; k++) {
        if (!strcmp(l->kwnames.v[k], "stream")) continue;
        if (i-- == 0) return l->kwvals.v[k];
    }
    return i == 0 ? l->target : NULL;
}

char *art_launch_probe_args(const artifact *a, const art_launch *l) {
    kbuf b = KBUF_INIT;
    size_t n = art_launch_probe_count(l);
    kbuf_putc(&b, '(');
    for (size_t i = 0; i < n; i++) kbuf_printf(&b, "%s%s", i ? ", " : "", art_launch_probe_item(l, i));
    kbuf_puts(&b, n ? ",)" : ")");
    (void)a;
    return kbuf_steal(&b);
}

size_t art_launch_probe_count(const art_launch *l) {
    size_t n = l->args.n + (l->target != NULL);
    for (size_t i = 0; i < l->kwnames.n; i++) n += strcmp(l->kwnames.v[i], "stream") != 0;
    return n;
}

int art_launch_probe_out(const art_launch *l) {
    int n = (int)l->args.n, out = -1;
    for (size_t i = 0; i < l->kwnames.n; i++) {
        if (!strcmp(l->kwnames.v[i], "stream")) continue;
        if (!strcmp(l->kwnames.v[i], "out")) out = n;
        n++;
    }
    return l->target ? n : out;
}

/* The newline style of the line ending at `end` ("\r\n" or "\n"). */
static const char *eol_at(const artifact *a, size_t end) {
    return end >= 2 && a->text[end - 1] == '\n' && a->text[end - 2] == '\r' ? "\r\n" : "\n";
}

static void instrument(const artifact *a, edits *es) {
    for (size_t i = 0; i < a->nlaunches; i++) {
        const art_launch *l = &a->launches[i];
        const art_stmt *s = &a->stmts[l->stmt];
        char *probe = art_launch_probe_args(a, l);
        /* A Triton launch's pre-probe also carries its arguments (read before the kernel runs,
         * so in-place arguments still hold their inputs: the isolation harness captures them
         * there). Vendor calls get none: their assigned name does not exist yet. */
        char *pre = l->kind == ART_L_TRITON ? kasprintf("_kopt_prof.pre(%d, lambda: %s)", l->index, probe)
                                            : kasprintf("_kopt_prof.pre(%d)", l->index);
        if (s->inline_part) {
            add_edit(es, s->span.off, 0, kasprintf("%s; ", pre));
            add_edit(es, s->span.off + s->span.len, 0,
                     kasprintf("; _kopt_prof.post(%d, lambda: %s)", l->index, probe));
        } else {
            const char *nl = eol_at(a, s->line_end);
            add_edit(es, s->line_start, 0, kasprintf("%s%s%s", l->indent, pre, nl));
            int bare_end = s->line_end == a->len && (a->len == 0 || a->text[a->len - 1] != '\n');
            add_edit(es, s->line_end, 0,
                     kasprintf("%s%s_kopt_prof.post(%d, lambda: %s)%s", bare_end ? "\n" : "",
                               l->indent, l->index, probe, bare_end ? "" : nl));
        }
        free(probe);
        free(pre);
    }
}

static int replacements(const artifact *a, const art_emit_opts *o, edits *es, kerr *e) {
    for (size_t i = 0; i < o->nreplace; i++) {
        const art_replacement *r = &o->replace[i];
        int k = r->kernel ? artifact_find_kernel(a, r->kernel) : -1;
        if (k < 0)
            return kerr_set(e, KOPT_E_CANDIDATE, "replacement for kernel '%s': no such kernel in the module",
                            r->kernel ? r->kernel : "(null)");
        for (size_t j = 0; j < i; j++)
            if (o->replace[j].kernel && !strcmp(o->replace[j].kernel, r->kernel))
                return kerr_set(e, KOPT_E_CANDIDATE, "kernel '%s' is replaced twice", r->kernel);
        const art_span *sp = &a->kernels[k].stmt;
        add_edit(es, sp->off, sp->len, kstrdup(r->text ? r->text : ""));
    }
    return 0;
}

int artifact_emit(const artifact *a, const art_emit_opts *o, kbuf *out, kerr *e) {
    edits es = {0};
    int rc = 0;
    if (o && o->nreplace) rc = replacements(a, o, &es, e);
    if (!rc && o && o->instrument) instrument(a, &es);
    if (rc) { free_edits(&es); return rc; }
    if (es.n) qsort(es.v, es.n, sizeof *es.v, cmp_edit);
    size_t pos = 0;
    for (size_t i = 0; i < es.n; i++) {
        if (es.v[i].off < pos || es.v[i].off + es.v[i].del > a->len) {
            size_t at = es.v[i].off;
            free_edits(&es);
            return kerr_set(e, KOPT_E_INTERNAL, "emit: overlapping edits at byte %zu", at);
        }
        pos = es.v[i].off + es.v[i].del;
    }
    pos = 0;
    for (size_t i = 0; i < es.n; i++) {
        kbuf_append(out, a->text + pos, es.v[i].off - pos);
        kbuf_puts(out, es.v[i].ins);
        pos = es.v[i].off + es.v[i].del;
    }
    kbuf_append(out, a->text + pos, a->len - pos);
    free_edits(&es);
    return 0;
}
