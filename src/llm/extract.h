/* extract.h — robust parsing of model output: fenced code blocks and JSON objects in prose.
 *
 * Every function accepts any bytes (NUL included, given the length) and never crashes; on
 * failure it returns KOPT_E_LLM and e->msg holds one sentence written to be sent back to the
 * model as feedback ("the answer ends inside a ```python block opened on line 12: it was cut
 * short; ...").
 *
 * Fences (llm_extract_blocks): a line whose first non-blank characters are 3+ backticks or 3+
 * tildes opens a block (indentation tolerated); the rest of the line is the info string, whose
 * first word, lower-cased, is the block's language ("" when none). The block ends at a line
 * holding only the same character repeated at least as many times. A block still open at the
 * end of the text means the answer was truncated: that is a failure (the complete blocks before
 * it are still returned in *out).
 *
 * Code (llm_extract_code): the candidate file in an executor's answer: the last complete block
 * tagged python/py/python3 or untagged that contains "@triton.jit" (earlier ones are usually
 * drafts or the original kernel). Without any fence, a whole answer that is plainly a Python
 * file (contains "import triton" and "@triton.jit") is accepted.
 *
 * JSON (llm_extract_json): the first ```json (or untagged) fenced block that parses as an
 * object, else the first balanced {...} in the text that parses (braces inside strings are
 * skipped; trailing commas are forgiven). At most 256 opening braces are tried.
 *
 * Ownership: *out / *code / *obj are new (malloc'd / a new jansson reference) and owned by
 * the caller; left NULL/empty on failure except as noted for blocks.
 */
#ifndef KOPT_LLM_EXTRACT_H
#define KOPT_LLM_EXTRACT_H

#include <jansson.h>
#include <stddef.h>

#include "util/err.h"

typedef struct llm_block {
    char *lang;   /* lower-cased first word of the info string, "" when none */
    char *body;   /* the lines between the fences, each ending with '\n' */
    int line;     /* 1-based line of the opening fence */
} llm_block;

typedef struct llm_blocks {
    llm_block *v;
    size_t n;
} llm_blocks;

int llm_extract_blocks(const char *text, size_t len, llm_blocks *out, kerr *e);
void llm_blocks_free(llm_blocks *b);

int llm_extract_code(const char *text, size_t len, char **code, kerr *e);
int llm_extract_json(const char *text, size_t len, json_t **obj, kerr *e);

#endif
