/* suite.c — discovery, order and selection of a suite's problems (contract in suite.h). */
#include "bench/suite.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/buf.h"
#include "util/fs.h"
#include "util/fnv.h"

int bench_rel_cmp(const char *a, const char *b) {
    int c = strverscmp(a, b);
    return c ? c : strcmp(a, b);
}

uint64_t bench_fnv1a64(const char *s) {
    uint64_t h = FNV1A64_INIT;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) h = fnv1a64_byte(h, *p);
    return h;
}

int bench_shard_has(const char *rel, unsigned index, unsigned count) {
    return count > 0 && bench_fnv1a64(rel) % count == index;
}

/* Frees a problem's strings. */
static void bs_problem_free(bench_problem *p) {
    free(p->rel);
    free(p->path);
    free(p->name);
    free(p->level_name);
}

void bench_suite_free(bench_suite *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) bs_problem_free(&s->v[i]);
    free(s->v);
    free(s->root);
    memset(s, 0, sizeof *s);
}

/* "level" followed by digits only: *level is the number. */
static int bs_level_dir(const char *name, int *level) {
    if (strncmp(name, "level", 5) != 0 || !name[5] || strlen(name) > 14) return 0;
    for (const char *p = name + 5; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    *level = atoi(name + 5);
    return 1;
}

/* A regular *.py file that is not hidden and not __init__.py. */
static int bs_is_problem_file(const char *dir, const char *name) {
    size_t n = strlen(name);
    if (name[0] == '.' || n <= 3 || strcmp(name + n - 3, ".py") != 0 || !strcmp(name, "__init__.py"))
        return 0;
    char *p = fs_join(dir, name);
    struct stat st;
    int ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return ok;
}

/* Appends a problem (hashing the file). */
static int bs_add(bench_suite *s, size_t *cap, const char *subdir, const char *file, int level,
                  kerr *e) {
    char *rel = subdir ? kasprintf("%s/%s", subdir, file) : kstrdup(file);
    char *path = fs_join(s->root, rel);
    char *text = NULL;
    size_t len = 0;
    int rc = fs_read(path, &text, &len, e);
    if (rc) {
        free(rel);
        free(path);
        return rc;
    }
    if (s->n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        s->v = krealloc(s->v, *cap * sizeof *s->v);
    }
    bench_problem *p = &s->v[s->n++];
    memset(p, 0, sizeof *p);
    p->rel = rel;
    p->path = path;
    p->name = kstrndup(file, strlen(file) - 3);
    p->level = level;
    p->level_name = subdir ? kstrdup(subdir) : kstrdup("flat");
    store_sha256_hex(text, len, p->sha);
    free(text);
    return 0;
}

/* The *.py files directly in SUITE/subdir (subdir NULL: SUITE itself). */
static int bs_scan(bench_suite *s, size_t *cap, const char *subdir, int level, kerr *e) {
    char *dir = subdir ? fs_join(s->root, subdir) : kstrdup(s->root);
    DIR *d = opendir(dir);
    if (!d) {
        int rc = kerr_set(e, KOPT_E_NOFILE, "cannot read the suite folder %s: %s", dir, strerror(errno));
        free(dir);
        return rc;
    }
    int rc = 0;
    struct dirent *de;
    while (!rc && (de = readdir(d)) != NULL) {
        int lv;
        if (!subdir && bs_level_dir(de->d_name, &lv)) {
            char *sub = fs_join(dir, de->d_name);
            int isdir = fs_is_dir(sub);
            free(sub);
            if (isdir) rc = bs_scan(s, cap, de->d_name, lv, e);
        } else if (bs_is_problem_file(dir, de->d_name)) {
            rc = bs_add(s, cap, subdir, de->d_name, level, e);
        }
    }
    closedir(d);
    free(dir);
    return rc;
}

/* Suite order (qsort). */
static int bs_problem_cmp(const void *a, const void *b) {
    return bench_rel_cmp(((const bench_problem *)a)->rel, ((const bench_problem *)b)->rel);
}

int bench_suite_discover(const char *dir, bench_suite *out, kerr *e) {
    memset(out, 0, sizeof *out);
    if (!dir || !*dir || !fs_exists(dir))
        return kerr_set(e, KOPT_E_NOFILE, "suite folder %s does not exist", dir ? dir : "(none)");
    if (!fs_is_dir(dir))
        return kerr_set(e, KOPT_E_NOFILE, "suite %s is not a folder; hint: give a folder holding "
                        "level1/*.py, level2/*.py, ... or *.py problem files", dir);
    out->root = fs_realpath(dir);
    if (!out->root) return kerr_set(e, KOPT_E_NOFILE, "cannot resolve the suite folder %s", dir);
    size_t cap = 0;
    int rc = bs_scan(out, &cap, NULL, 0, e);
    if (!rc && out->n == 0)
        rc = kerr_set(e, KOPT_E_NOFILE, "suite %s holds no problem (no levelN/*.py and no *.py "
                      "files)", dir);
    if (rc) {
        bench_suite_free(out);
        return rc;
    }
    qsort(out->v, out->n, sizeof *out->v, bs_problem_cmp);
    return 0;
}

/* Keeps the problems with keep[i] set, in order; frees the others. */
static void bs_keep(bench_suite *s, const unsigned char *keep) {
    size_t j = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (keep[i])
            s->v[j++] = s->v[i];
        else
            bs_problem_free(&s->v[i]);
    }
    s->n = j;
}

void bench_suite_shard(bench_suite *s, unsigned index, unsigned count) {
    unsigned char *keep = kcalloc(s->n ? s->n : 1, 1);
    for (size_t i = 0; i < s->n; i++) keep[i] = (unsigned char)bench_shard_has(s->v[i].rel, index, count);
    bs_keep(s, keep);
    free(keep);
}

int bench_suite_only(bench_suite *s, const char *list, kerr *e) {
    char *copy = kstrdup(list ? list : ""), *save = NULL;
    unsigned char *keep = kcalloc(s->n ? s->n : 1, 1);
    int items = 0;
    for (char *it = strtok_r(copy, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*it)) it++;
        size_t n = strlen(it);
        while (n && isspace((unsigned char)it[n - 1])) it[--n] = '\0';
        if (!n) continue;
        items++;
        for (size_t i = 0; i < s->n; i++)
            if (strstr(s->v[i].rel, it)) keep[i] = 1;
    }
    int rc = 0;
    if (!items)
        rc = kerr_set(e, KOPT_E_USAGE, "--only needs a comma-separated list of parts of problem paths, "
                      "got '%s'", list ? list : "");
    else
        bs_keep(s, keep);
    free(keep);
    free(copy);
    return rc;
}

const bench_problem *bench_suite_find(const bench_suite *s, const char *rel) {
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].rel, rel)) return &s->v[i];
    return NULL;
}

int bench_suite_dev(bench_suite *s, kerr *e) {
    char *path = fs_join(s->root, "DEV"), *text = NULL;
    int rc = fs_read(path, &text, NULL, e);
    if (rc) {
        rc = kerr_set(e, KOPT_E_NOFILE, "--dev: the suite has no readable DEV list (%s); hint: write one "
                      "relative problem path per line", path);
        free(path);
        return rc;
    }
    unsigned char *keep = kcalloc(s->n ? s->n : 1, 1);
    char *save = NULL;
    for (char *ln = strtok_r(text, "\n", &save); ln && !rc; ln = strtok_r(NULL, "\n", &save)) {
        char *hash = strchr(ln, '#');
        if (hash) *hash = '\0';
        while (isspace((unsigned char)*ln)) ln++;
        size_t n = strlen(ln);
        while (n && isspace((unsigned char)ln[n - 1])) ln[--n] = '\0';
        if (!n) continue;
        const bench_problem *p = bench_suite_find(s, ln);
        if (!p)
            rc = kerr_set(e, KOPT_E_NOFILE, "%s: '%s' is not a problem of the suite", path, ln);
        else
            keep[p - s->v] = 1;
    }
    if (!rc) bs_keep(s, keep);
    free(keep);
    free(text);
    free(path);
    return rc;
}
