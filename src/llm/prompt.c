/* prompt.c — prompt files and placeholder rendering (see prompt.h). */
#include "llm/prompt.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/fs.h"

int llm_prompt_load(const char *dir, const char *name, char **out, kerr *e) {
    *out = NULL;
    char *file = kasprintf("%s.md", name);
    char *path = fs_join(dir, file);
    free(file);
    if (!fs_exists(path)) {
        int rc = kerr_set(e, KOPT_E_NOFILE, "prompt file %s is missing", path);
        free(path);
        return rc;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = fs_read(path, &text, &len, e);
    free(path);
    if (rc) return rc;
    const char *p = text;
    for (;;) {
        while (*p && isspace((unsigned char)*p)) p++;
        if (strncmp(p, "<!--", 4)) break;
        const char *end = strstr(p + 4, "-->");
        if (!end) break;
        p = end + 3;
    }
    *out = kstrdup(p);
    free(text);
    return 0;
}

static int pr_scalar(const json_t *v) { return !json_is_object(v) && !json_is_array(v); }

char *llm_prompt_value(const json_t *v) {
    if (!v) return kstrdup("(not given)");
    switch (json_typeof(v)) {
    case JSON_STRING: return kstrndup(json_string_value(v), json_string_length(v));
    case JSON_INTEGER: return kasprintf("%lld", (long long)json_integer_value(v));
    case JSON_REAL: return kasprintf("%.6g", json_real_value(v));
    case JSON_TRUE: return kstrdup("true");
    case JSON_FALSE: return kstrdup("false");
    case JSON_NULL: return kstrdup("null");
    case JSON_ARRAY: {
        if (json_array_size(v) == 0) return kstrdup("(none)");
        int flat = 1;
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) if (!pr_scalar(x)) flat = 0;
        if (flat) {
            kbuf b = KBUF_INIT;
            json_array_foreach(v, i, x) {
                char *s = llm_prompt_value(x);
                if (i) kbuf_puts(&b, ", ");
                kbuf_puts(&b, s);
                free(s);
            }
            return kbuf_steal(&b);
        }
        break;
    }
    case JSON_OBJECT: {
        if (json_object_size(v) == 0) return kstrdup("(none)");
        int flat = 1;
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x) if (!pr_scalar(x)) flat = 0;
        if (flat) {
            kbuf b = KBUF_INIT;
            json_object_foreach((json_t *)v, k, x) {
                char *s = llm_prompt_value(x);
                kbuf_printf(&b, "%s%s: %s", b.len ? ", " : "", k, s);
                free(s);
            }
            return kbuf_steal(&b);
        }
        break;
    }
    }
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    return s ? s : kstrdup("(unprintable)");
}

/* The value at a dotted path, or NULL. */
static const json_t *pr_lookup(const json_t *vars, const char *path, size_t n) {
    const json_t *cur = vars;
    size_t i = 0;
    while (cur && i < n) {
        size_t j = i;
        while (j < n && path[j] != '.') j++;
        char key[128];
        size_t kl = j - i;
        if (kl == 0 || kl >= sizeof key) return NULL;
        memcpy(key, path + i, kl);
        key[kl] = '\0';
        if (json_is_object(cur)) {
            cur = json_object_get(cur, key);
        } else if (json_is_array(cur)) {
            char *end = NULL;
            long idx = strtol(key, &end, 10);
            cur = (end && !*end && idx >= 0) ? json_array_get(cur, (size_t)idx) : NULL;
        } else {
            return NULL;
        }
        i = j + 1;
    }
    return cur;
}

static int pr_namech(char c) { return isalnum((unsigned char)c) || c == '_' || c == '.'; }

char *llm_prompt_render(const char *tmpl, const json_t *vars) {
    kbuf b = KBUF_INIT;
    const char *p = tmpl ? tmpl : "";
    while (*p) {
        const char *open = strstr(p, "{{");
        if (!open) {
            kbuf_puts(&b, p);
            break;
        }
        kbuf_append(&b, p, (size_t)(open - p));
        const char *s = open + 2;
        while (*s == ' ') s++;
        const char *ns = s;
        while (pr_namech(*s)) s++;
        const char *ne = s;
        while (*s == ' ') s++;
        if (ne > ns && s[0] == '}' && s[1] == '}') {
            const json_t *v = pr_lookup(vars, ns, (size_t)(ne - ns));
            char *val = llm_prompt_value(v);
            kbuf_puts(&b, val);
            free(val);
            p = s + 2;
        } else {
            kbuf_puts(&b, "{{");
            p = open + 2;
        }
    }
    return kbuf_steal(&b);
}
