/* template.h — the executor's kernel templates are files (templates/kernels/NAME.py.tmpl), not
 * C string literals; this module renders them with typed parameters.
 *
 * A template file starts with a header of `#@ ` lines, which are not part of the output:
 *   #@ template NAME                     must equal the file's name
 *   #@ family WORDS...                   what it computes (documentation)
 *   #@ strategy WORDS...                 how (documentation)
 *   #@ param NAME TYPE  description      one per parameter; TYPE is ident, int, float (17
 *                                        significant digits: every double round-trips), float9
 *                                        (9: every float32 round-trips), bool or idents (a
 *                                        list of identifiers: a kernel's parameters)
 * The body is Python text in which
 *   {{NAME}}                             is replaced by the value of parameter NAME: an ident
 *                                        (a Python identifier, checked), an int (%lld), a
 *                                        float (%.17g or %.9g), a bool (Python's True/False),
 *                                        idents as `a, b, c`;
 *   {{NAME:quoted}}                      idents as `"a", "b", "c"` (a launch plan's lists);
 *   a line holding only {{include PART}} is replaced by templates/kernels/PART.part (its own
 *                                        '#@' header dropped; the template's substitutions
 *                                        apply, and its own {{if}}/{{else}}/{{end}} on the
 *                                        template's bool parameters, balanced within it; no
 *                                        include inside): one kernel body shared by several
 *                                        templates;
 *   a line holding only {{if NAME}}, {{else}} or {{end}} (spaces around allowed)
 *                                        keeps the lines up to {{else}}/{{end}} when the bool
 *                                        parameter NAME is true, the others when false;
 *                                        these nest.
 * Rendering refuses (KOPT_E_INTERNAL, the message naming the template and the line) a missing
 * or undeclared parameter, a value of the wrong type, an identifier that is not one, a
 * condition on a parameter that is not a bool, an unknown {{...}}, unbalanced conditions. Nothing of the
 * caller's can reach the output but the typed values.
 *
 * Ownership: args are borrowed; the output is appended to the caller's kbuf.
 */
#ifndef KOPT_TEMPLATE_H
#define KOPT_TEMPLATE_H

#include <stddef.h>

#include "util/buf.h"
#include "util/err.h"

typedef enum { TPL_IDENT, TPL_INT, TPL_FLOAT, TPL_BOOL, TPL_IDENTS } tpl_type;

typedef struct tpl_arg {
    const char *name;
    tpl_type type;
    const char *ident;         /* TPL_IDENT */
    long long i;               /* TPL_INT */
    double f;                  /* TPL_FLOAT */
    int b;                     /* TPL_BOOL */
    const char *const *idents; /* TPL_IDENTS: nidents identifiers, at least one */
    size_t nidents;
} tpl_arg;

/* Renders the template text (its header included) named `name` with args, appending to out. */
int template_render_text(const char *name, const char *text, size_t len, const tpl_arg *args, size_t nargs, kbuf *out,
                         kerr *e);

/* Reads templates/kernels/<name>.py.tmpl under kopt's root (fs_kopt_root) and renders it.
 * KOPT_E_NOFILE when the file is missing (hint: KOPT_ROOT). */
int template_render(const char *name, const tpl_arg *args, size_t nargs, kbuf *out, kerr *e);

#endif
