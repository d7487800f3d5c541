/* extract.c — fenced blocks and JSON objects in model output (see extract.h). */
#include "llm/extract.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"

#define JSON_MAX_STARTS 256

void llm_blocks_free(llm_blocks *b) {
    if (!b) return;
    for (size_t i = 0; i < b->n; i++) {
        free(b->v[i].lang);
        free(b->v[i].body);
    }
    free(b->v);
    b->v = NULL;
    b->n = 0;
}

/* Bounded substring search in [s, s+n) (the text may hold NULs). */
static const char *ex_find(const char *s, size_t n, const char *needle) {
    size_t m = strlen(needle);
    if (m == 0 || m > n) return NULL;
    for (size_t i = 0; i + m <= n; i++)
        if (s[i] == needle[0] && !memcmp(s + i, needle, m)) return s + i;
    return NULL;
}

/* If the line [p, end) is a fence, set *ch, *run and the info string; returns 1. */
static int ex_fence(const char *p, const char *end, char *ch, size_t *run, const char **info, size_t *info_len) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if (p >= end || (*p != '`' && *p != '~')) return 0;
    char c = *p;
    size_t n = 0;
    while (p + n < end && p[n] == c) n++;
    if (n < 3) return 0;
    const char *i = p + n, *ie = end;
    while (i < ie && (*i == ' ' || *i == '\t')) i++;
    while (ie > i && (ie[-1] == ' ' || ie[-1] == '\t' || ie[-1] == '\r')) ie--;
    if (c == '`' && memchr(i, '`', (size_t)(ie - i))) return 0;   /* ```inline``` is not a fence */
    *ch = c;
    *run = n;
    *info = i;
    *info_len = (size_t)(ie - i);
    return 1;
}

/* Does [p, end) close a fence of `ch` x `run`? */
static int ex_closes(const char *p, const char *end, char ch, size_t run) {
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    size_t n = 0;
    while (p + n < end && p[n] == ch) n++;
    if (n < run) return 0;
    for (const char *q = p + n; q < end; q++)
        if (*q != ' ' && *q != '\t' && *q != '\r') return 0;
    return 1;
}

int llm_extract_blocks(const char *text, size_t len, llm_blocks *out, kerr *e) {
    out->v = NULL;
    out->n = 0;
    if (!text) return 0;
    size_t cap = 0;
    int in = 0, open_line = 0, line = 0;
    char ch = 0;
    size_t run = 0;
    kbuf body = KBUF_INIT;
    char *lang = NULL;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        line++;
        if (!in) {
            const char *info;
            size_t il;
            if (ex_fence(p, le, &ch, &run, &info, &il)) {
                size_t w = 0;
                while (w < il && !isspace((unsigned char)info[w])) w++;
                lang = kstrndup(info, w);
                for (char *q = lang; *q; q++) *q = (char)tolower((unsigned char)*q);
                in = 1;
                open_line = line;
                kbuf_reset(&body);
                kbuf_puts(&body, "");
            }
        } else if (ex_closes(p, le, ch, run)) {
            if (out->n == cap) {
                cap = cap ? cap * 2 : 4;
                out->v = krealloc(out->v, cap * sizeof *out->v);
            }
            out->v[out->n].lang = lang;
            out->v[out->n].body = kstrndup(kbuf_str(&body), body.len);
            out->v[out->n].line = open_line;
            out->n++;
            lang = NULL;
            in = 0;
        } else {
            size_t n = (size_t)(le - p);
            if (n && p[n - 1] == '\r') n--;
            kbuf_append(&body, p, n);
            kbuf_putc(&body, '\n');
        }
        p = nl ? nl + 1 : end;
    }
    kbuf_free(&body);
    if (in) {
        int rc = kerr_set(e, KOPT_E_LLM,
                          "the answer ends inside a %c%c%c%s block opened on line %d: it was cut short "
                          "(too long?); answer again, more concisely, with the complete block closed",
                          ch, ch, ch, lang ? lang : "", open_line);
        free(lang);
        return rc;
    }
    return 0;
}

static int ex_is_python(const char *lang) {
    return !*lang || !strcmp(lang, "python") || !strcmp(lang, "py") || !strcmp(lang, "python3") ||
           !strcmp(lang, "triton");
}

int llm_extract_code(const char *text, size_t len, char **code, kerr *e) {
    *code = NULL;
    llm_blocks b;
    int rc = llm_extract_blocks(text, len, &b, e);
    if (rc) {
        llm_blocks_free(&b);
        return rc;
    }
    int npy = 0;
    const llm_block *pick = NULL;
    for (size_t i = 0; i < b.n; i++) {
        if (!ex_is_python(b.v[i].lang)) continue;
        npy++;
        if (strstr(b.v[i].body, "@triton.jit")) pick = &b.v[i];
    }
    if (pick) {
        *code = kstrdup(pick->body);
    } else if (b.n == 0 && text && ex_find(text, len, "@triton.jit") && ex_find(text, len, "import triton")) {
        *code = kstrndup(text, len);   /* a bare file, no fences */
    } else if (npy > 0) {
        rc = kerr_set(e, KOPT_E_LLM, "the answer's python code block has no @triton.jit function: "
                      "answer with the complete candidate file (imports, @triton.jit kernels, KOPT_PLAN) "
                      "in one ```python block");
    } else if (b.n > 0) {
        rc = kerr_set(e, KOPT_E_LLM, "the answer has code blocks but none is Python (found ```%s): "
                      "answer with the complete candidate file in one ```python block", b.v[0].lang);
    } else {
        rc = kerr_set(e, KOPT_E_LLM, "the answer has no ```python code block: answer with the complete "
                      "candidate file in one ```python block");
    }
    llm_blocks_free(&b);
    return rc;
}

/* End (exclusive) of the balanced object starting at s[0] == '{', or 0 if it never closes. */
static size_t ex_balanced(const char *s, size_t n) {
    int depth = 0, str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (str) {
            if (c == '\\') i++;
            else if (c == '"') str = 0;
            continue;
        }
        if (c == '"') str = 1;
        else if (c == '{') depth++;
        else if (c == '}' && --depth == 0) return i + 1;
    }
    return 0;
}

/* A copy of s without trailing commas before '}' or ']' (outside strings). */
static char *ex_no_trailing_commas(const char *s, size_t n, size_t *out_len) {
    kbuf b = KBUF_INIT;
    int str = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (str) {
            kbuf_putc(&b, c);
            if (c == '\\' && i + 1 < n) kbuf_putc(&b, s[++i]);
            else if (c == '"') str = 0;
            continue;
        }
        if (c == '"') str = 1;
        if (c == ',') {
            size_t j = i + 1;
            while (j < n && isspace((unsigned char)s[j])) j++;
            if (j < n && (s[j] == '}' || s[j] == ']')) continue;
        }
        kbuf_putc(&b, c);
    }
    *out_len = b.len;
    return kbuf_steal(&b);
}

/* Parse [s, s+n) as an object (with the trailing-comma repair); NULL and why on failure. */
static json_t *ex_parse_obj(const char *s, size_t n, json_error_t *je) {
    json_t *j = json_loadb(s, n, 0, je);
    if (json_is_object(j)) return j;
    json_decref(j);
    size_t m;
    char *fixed = ex_no_trailing_commas(s, n, &m);
    json_error_t je2;
    j = json_loadb(fixed, m, 0, &je2);
    free(fixed);
    if (json_is_object(j)) return j;
    json_decref(j);
    return NULL;
}

static int ex_line_of(const char *text, const char *p) {
    int line = 1;
    for (const char *q = text; q < p; q++)
        if (*q == '\n') line++;
    return line;
}

int llm_extract_json(const char *text, size_t len, json_t **obj, kerr *e) {
    *obj = NULL;
    if (!text || len == 0) return kerr_set(e, KOPT_E_LLM, "the answer is empty: answer with one JSON object");
    /* 1. fenced json blocks (a truncated fence is reported only if nothing else parses) */
    llm_blocks b;
    kerr fe = {0};
    int frc = llm_extract_blocks(text, len, &b, &fe);
    for (size_t i = 0; i < b.n && !*obj; i++) {
        if (strcmp(b.v[i].lang, "json") && b.v[i].lang[0]) continue;
        json_error_t je;
        *obj = ex_parse_obj(b.v[i].body, strlen(b.v[i].body), &je);
    }
    llm_blocks_free(&b);
    if (*obj) return 0;
    /* 2. the first balanced object in the text */
    int tries = 0, unclosed_line = 0, bad_line = 0;
    char bad_why[200] = "";
    for (size_t i = 0; i < len && tries < JSON_MAX_STARTS; i++) {
        if (text[i] != '{') continue;
        tries++;
        size_t n = ex_balanced(text + i, len - i);
        if (!n) {
            if (!unclosed_line) unclosed_line = ex_line_of(text, text + i);
            continue;
        }
        json_error_t je;
        json_t *j = ex_parse_obj(text + i, n, &je);
        if (j) {
            *obj = j;
            return 0;
        }
        if (!bad_line) {
            bad_line = ex_line_of(text, text + i);
            snprintf(bad_why, sizeof bad_why, "%s", je.text);
            for (char *q = bad_why; *q; q++)
                if ((unsigned char)*q < 0x20) *q = ' ';
        }
    }
    if (bad_line)
        return kerr_set(e, KOPT_E_LLM, "the JSON object on line %d of the answer is not valid JSON (%s): "
                        "answer with one valid JSON object", bad_line, bad_why);
    if (unclosed_line || frc)
        return kerr_set(e, KOPT_E_LLM, "the JSON object starting on line %d of the answer is never closed: "
                        "the answer was cut short; answer again with one complete, shorter JSON object",
                        unclosed_line ? unclosed_line : 1);
    return kerr_set(e, KOPT_E_LLM, "the answer has no JSON object: answer with one JSON object");
}
