/* prompt.h — versioned prompt files and {{placeholder}} rendering for the LLM agents.
 *
 * Prompt files live in prompts/<version>/<name>.md (prompts/v1/system.md, planner.md, ...).
 * Leading HTML comments (<!-- ... -->, used for the file's own notes) are dropped on load.
 *
 * Rendering: each {{name}} or {{a.b.c}} (letters, digits, '_' and '.', blanks around the name
 * allowed) is replaced by the value at that path of `vars` (a JSON object; a numeric path
 * element indexes an array), rendered by llm_prompt_value. A path that leads nowhere renders as
 * "(not given)". Anything else between braces is left as written, and substituted text is never
 * scanned again (kernel sources may contain braces).
 *
 * Values: strings as they are; integers in decimal; reals with up to 6 significant digits;
 * booleans and null as words; an array of scalars as "a, b, c", an object of scalars as
 * "k: v, k2: v2" (both "(none)" when empty); other arrays and objects as indented JSON.
 *
 * Ownership: all returned strings are malloc'd and owned by the caller; inputs are borrowed.
 */
#ifndef KOPT_LLM_PROMPT_H
#define KOPT_LLM_PROMPT_H

#include <jansson.h>

#include "util/err.h"

/* dir/name (name without ".md"); KOPT_E_NOFILE when missing. */
int llm_prompt_load(const char *dir, const char *name, char **out, kerr *e);
char *llm_prompt_render(const char *tmpl, const json_t *vars);
char *llm_prompt_value(const json_t *v);

#endif
