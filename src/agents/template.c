/* template.c — rendering of the executor's kernel templates (contract in template.h). */
#include "agents/template.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fs.h"

#define TPL_MAX_PARAMS 48
#define TPL_MAX_DEPTH 8

typedef struct tpl_decl {
    char name[64];
    tpl_type type;
    int digits;           /* TPL_FLOAT: significant digits (17, or 9 for "float9") */
    const tpl_arg *arg;   /* the value supplied for it */
} tpl_decl;

typedef struct tpl {
    const char *name;
    tpl_decl decl[TPL_MAX_PARAMS];
    size_t ndecl;
    int line;
    kerr *e;
} tpl;

static int tpl_fail(tpl *t, const char *fmt, const char *a) {
    return kerr_set(t->e, KOPT_E_INTERNAL, "template %s, line %d: %s%s", t->name, t->line, fmt, a ? a : "");
}

static int is_ident(const char *s) {
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (const char *p = s + 1; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
    return 1;
}

static tpl_decl *find_decl(tpl *t, const char *name, size_t n) {
    for (size_t i = 0; i < t->ndecl; i++)
        if (strlen(t->decl[i].name) == n && !strncmp(t->decl[i].name, name, n)) return &t->decl[i];
    return NULL;
}

/* `#@ param NAME TYPE ...`: declares a parameter. */
static int header_param(tpl *t, const char *p, const char *end) {
    char name[64], type[16];
    char line[256];
    size_t n = (size_t)(end - p) < sizeof line - 1 ? (size_t)(end - p) : sizeof line - 1;
    memcpy(line, p, n);
    line[n] = '\0';
    if (sscanf(line, "%63s %15s", name, type) != 2 || !is_ident(name)) return tpl_fail(t, "bad parameter line", NULL);
    if (t->ndecl == TPL_MAX_PARAMS) return tpl_fail(t, "too many parameters", NULL);
    if (find_decl(t, name, strlen(name))) return tpl_fail(t, "parameter declared twice: ", name);
    tpl_decl *d = &t->decl[t->ndecl++];
    snprintf(d->name, sizeof d->name, "%s", name);
    if (!strcmp(type, "ident")) d->type = TPL_IDENT;
    else if (!strcmp(type, "int")) d->type = TPL_INT;
    else if (!strcmp(type, "float")) { d->type = TPL_FLOAT; d->digits = 17; }
    else if (!strcmp(type, "float9")) { d->type = TPL_FLOAT; d->digits = 9; }
    else if (!strcmp(type, "bool")) d->type = TPL_BOOL;
    else if (!strcmp(type, "idents")) d->type = TPL_IDENTS;
    else return tpl_fail(t, "unknown parameter type: ", type);
    return 0;
}

/* Binds the caller's values to the declarations, checking names and types. */
static int bind(tpl *t, const tpl_arg *args, size_t nargs) {
    for (size_t i = 0; i < nargs; i++) {
        tpl_decl *d = find_decl(t, args[i].name, strlen(args[i].name));
        if (!d) return tpl_fail(t, "a value for an undeclared parameter: ", args[i].name);
        if (d->arg) return tpl_fail(t, "two values for parameter ", args[i].name);
        if (d->type != args[i].type) return tpl_fail(t, "a value of the wrong type for parameter ", args[i].name);
        if (d->type == TPL_IDENT && !is_ident(args[i].ident)) return tpl_fail(t, "not an identifier, for parameter ", args[i].name);
        if (d->type == TPL_IDENTS) {
            if (!args[i].nidents || !args[i].idents) return tpl_fail(t, "an empty list, for parameter ", args[i].name);
            for (size_t j = 0; j < args[i].nidents; j++)
                if (!is_ident(args[i].idents[j]))
                    return tpl_fail(t, "not an identifier in the list, for parameter ", args[i].name);
        }
        d->arg = &args[i];
    }
    for (size_t i = 0; i < t->ndecl; i++)
        if (!t->decl[i].arg) return tpl_fail(t, "no value for parameter ", t->decl[i].name);
    return 0;
}

/* A directive line ({{if X}}, {{else}}, {{end}}, {{include P}}): its kind ('i', 'e', 'n',
 * 'p') and, for if and include, the name; 0 when the line is not one. */
static int directive(const char *p, const char *end, const char **nm, size_t *nlen) {
    while (p < end && *p == ' ') p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\r')) end--;
    if (end - p < 4 || strncmp(p, "{{", 2) || strncmp(end - 2, "}}", 2)) return 0;
    const char *in = p + 2, *ie = end - 2;
    if (ie - in == 4 && !strncmp(in, "else", 4)) return 'e';
    if (ie - in == 3 && !strncmp(in, "end", 3)) return 'n';
    if (ie - in > 3 && !strncmp(in, "if ", 3)) {
        *nm = in + 3;
        *nlen = (size_t)(ie - in - 3);
        return 'i';
    }
    if (ie - in > 8 && !strncmp(in, "include ", 8)) {
        *nm = in + 8;
        *nlen = (size_t)(ie - in - 8);
        return 'p';
    }
    return 0;
}

/* One body line with its {{NAME}} substitutions. */
static int emit_line(tpl *t, const char *p, const char *end, kbuf *out) {
    while (p < end) {
        const char *o = strstr(p, "{{");
        if (!o || o >= end) { kbuf_append(out, p, (size_t)(end - p)); break; }
        kbuf_append(out, p, (size_t)(o - p));
        const char *c = strstr(o, "}}");
        if (!c || c >= end) return tpl_fail(t, "unclosed {{", NULL);
        /* NAME or NAME:quoted (idents only) */
        const char *colon = memchr(o + 2, ':', (size_t)(c - o - 2));
        int quoted = 0;
        if (colon) {
            if ((size_t)(c - colon - 1) != 6 || strncmp(colon + 1, "quoted", 6))
                return tpl_fail(t, "unknown modifier after ':'", NULL);
            quoted = 1;
        }
        tpl_decl *d = find_decl(t, o + 2, (size_t)((colon ? colon : c) - o - 2));
        if (d && quoted && d->type != TPL_IDENTS) return tpl_fail(t, ":quoted needs an idents parameter: ", d->name);
        if (!d) {
            char buf[64];
            snprintf(buf, sizeof buf, "%.*s", (int)(c - o - 2 < 60 ? c - o - 2 : 60), o + 2);
            return tpl_fail(t, "unknown placeholder: ", buf);
        }
        switch (d->type) {
        case TPL_IDENT: kbuf_puts(out, d->arg->ident); break;
        case TPL_INT: kbuf_printf(out, "%lld", d->arg->i); break;
        case TPL_FLOAT: kbuf_printf(out, "%.*g", d->digits, d->arg->f); break;
        case TPL_BOOL: kbuf_puts(out, d->arg->b ? "True" : "False"); break;
        case TPL_IDENTS:
            for (size_t j = 0; j < d->arg->nidents; j++)
                kbuf_printf(out, quoted ? "%s\"%s\"" : "%s%s", j ? ", " : "", d->arg->idents[j]);
            break;
        }
        p = c + 2;
    }
    return 0;
}

/* The {{if}}/{{else}}/{{end}} nesting of one text (a template's body, or a part's): keep[d],
 * whether lines at depth d are kept. */
typedef struct tpl_conds {
    int keep[TPL_MAX_DEPTH + 1], seen_else[TPL_MAX_DEPTH + 1], depth;
} tpl_conds;

/* Applies directive dk ('i', 'e' or 'n'; nm/nlen: the if's parameter) to *c; 0 or the error. */
static int conds_step(tpl *t, tpl_conds *c, int dk, const char *nm, size_t nlen) {
    if (dk == 'i') {
        tpl_decl *d = find_decl(t, nm, nlen);
        if (!d || d->type != TPL_BOOL) return tpl_fail(t, "{{if}} needs a bool parameter", NULL);
        if (c->depth == TPL_MAX_DEPTH) return tpl_fail(t, "conditions nested too deep", NULL);
        c->depth++;
        c->keep[c->depth] = c->keep[c->depth - 1] && d->arg->b;
        c->seen_else[c->depth] = 0;
    } else if (dk == 'e') {
        if (!c->depth || c->seen_else[c->depth]) return tpl_fail(t, "{{else}} without its {{if}}", NULL);
        c->seen_else[c->depth] = 1;
        /* the other branch: kept when the enclosing level is and the if's was not */
        c->keep[c->depth] = c->keep[c->depth - 1] && !c->keep[c->depth];
    } else {
        if (!c->depth) return tpl_fail(t, "{{end}} without its {{if}}", NULL);
        c->depth--;
    }
    return 0;
}

/* {{include NAME}}: templates/kernels/NAME.part (its '#@' header dropped), each line with the
 * template's substitutions; a part's own {{if}}/{{else}}/{{end}} (balanced within it, on the
 * template's bool parameters) apply, an include inside a part is refused. */
static int include_part(tpl *t, const char *nm, size_t nlen, kbuf *out) {
    char name[64];
    if (nlen >= sizeof name) return tpl_fail(t, "include name too long", NULL);
    memcpy(name, nm, nlen);
    name[nlen] = '\0';
    if (!is_ident(name)) return tpl_fail(t, "include of a name that is not an identifier: ", name);
    char *root = fs_kopt_root();
    char *rel = kasprintf("templates/kernels/%s.part", name);
    char *path = fs_join(root, rel);
    char *text = NULL;
    size_t len = 0;
    int rc = fs_read(path, &text, &len, t->e);
    free(path);
    free(rel);
    free(root);
    if (rc) return kerr_wrap(t->e, "template %s, line %d: include %s", t->name, t->line, name);
    const char *p = text, *end = text + len;
    tpl_conds c = {.keep = {1}, .depth = 0};
    while (!rc && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *dn = NULL;
        size_t dl = 0;
        int dk = strncmp(p, "#@ ", 3) ? directive(p, le, &dn, &dl) : 0;
        if (!strncmp(p, "#@ ", 3)) {
            /* the part's header */
        } else if (dk == 'p') {
            rc = tpl_fail(t, "an include inside the included part ", name);
        } else if (dk) {
            rc = conds_step(t, &c, dk, dn, dl);
        } else if (c.keep[c.depth]) {
            rc = emit_line(t, p, le, out);
            if (!rc && nl) kbuf_putc(out, '\n');
        }
        p = nl ? nl + 1 : end;
    }
    if (!rc && c.depth) rc = tpl_fail(t, "an {{if}} without its {{end}} in the included part ", name);
    free(text);
    return rc;
}

int template_render_text(const char *name, const char *text, size_t len, const tpl_arg *args, size_t nargs, kbuf *out,
                         kerr *e) {
    tpl t = {.name = name, .e = e};
    const char *p = text, *end = text + len;
    /* header */
    int named = 0;
    while (p < end && !strncmp(p, "#@ ", 3)) {
        t.line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        if (!strncmp(p, "#@ template ", 12)) {
            size_t n = (size_t)(le - p - 12);
            if (n != strlen(name) || strncmp(p + 12, name, n)) return tpl_fail(&t, "the header names another template", NULL);
            named = 1;
        } else if (!strncmp(p, "#@ param ", 9)) {
            if (header_param(&t, p + 9, le)) return e->code;
        }
        p = nl ? nl + 1 : end;
    }
    if (!named) return tpl_fail(&t, "no '#@ template NAME' header", NULL);
    if (bind(&t, args, nargs)) return e->code;
    /* body */
    tpl_conds c = {.keep = {1}, .depth = 0};
    while (p < end) {
        t.line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        const char *nm = NULL;
        size_t nlen = 0;
        int dk = directive(p, le, &nm, &nlen);
        if (dk == 'p') {
            if (c.keep[c.depth] && include_part(&t, nm, nlen, out)) return e->code;
        } else if (dk) {
            if (conds_step(&t, &c, dk, nm, nlen)) return e->code;
        } else if (c.keep[c.depth]) {
            if (emit_line(&t, p, le, out)) return e->code;
            if (nl) kbuf_putc(out, '\n');
        }
        p = nl ? nl + 1 : end;
    }
    if (c.depth) return tpl_fail(&t, "an {{if}} without its {{end}}", NULL);
    return 0;
}

int template_render(const char *name, const tpl_arg *args, size_t nargs, kbuf *out, kerr *e) {
    if (!is_ident(name))
        return kerr_set(e, KOPT_E_INTERNAL, "template name %s is not an identifier", name ? name : "(null)");
    char *root = fs_kopt_root();
    char *rel = kasprintf("templates/kernels/%s.py.tmpl", name);
    char *path = fs_join(root, rel);
    char *text = NULL;
    size_t len = 0;
    int rc = fs_read(path, &text, &len, e);
    if (rc) kerr_wrap(e, "the kernel template %s (hint: KOPT_ROOT must name kopt's share folder)", name);
    else rc = template_render_text(name, text, len, args, nargs, out, e);
    free(text);
    free(path);
    free(rel);
    free(root);
    return rc;
}
