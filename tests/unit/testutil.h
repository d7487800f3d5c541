/* testutil.h — helpers shared by the Criterion unit tests.
 *
 * tu_fixture_path / tu_read_fixture resolve a path relative to the repository root: $KOPT_ROOT
 * when set (the Makefile's `test` target sets it), else the parent of the directory holding the
 * test binary (build/unit-tests -> repo root), as fs_kopt_root() does. Both return malloc'd
 * memory owned by the caller (free()). tu_read_fixture fails the current test if the file
 * cannot be read. Functions are static inline so every test file can include this header.
 * tu_load_inductor parses tests/fixtures/inductor/NAME (the caller frees it with artifact_free);
 * tu_expect_gate1 asserts that every candidate of an executor answer ({"candidates": [{source}]})
 * parses and passes gate 1's C checks against kernel K. tu_parse_candidate parses a candidate
 * text, failing the test when it is refused (the caller frees it with candidate_free);
 * tu_parse_refusal asserts a text's refusal and returns its message (the caller frees it).
 * tu_golden compares an emitted candidate with its golden file (KOPT_WRITE_GOLDEN=1 rewrites it).
 * tu_family: a family's name (agents/family.h), NULL for KF_NONE (tests compare names).
 * tu_kf: a planner-context kernel object read into kernel facts (agents/kfacts.h), as the
 * built-in agents read it at their edge; the facts borrow `k`'s strings and live in a ring of
 * TU_KF_RING slots (the oldest freed on reuse, all at the test process's exit), so a test passes
 * tu_kf(k) where a family function takes a kfacts and keeps `k` alive while it uses the result;
 * tu_kp the same for a plan object read into a kplan (agents/kplan.h).
 * tu_alive_with: whether a live process (not a zombie, not a `sh -c` that names it) has `marker`
 * in its command line (the sandbox tests' escape checks).
 */
#ifndef KOPT_TESTUTIL_H
#define KOPT_TESTUTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string.h>

#include "agents/family.h"
#include "agents/kfacts.h"
#include "agents/kplan.h"
#include "artifact/artifact.h"
#include "gates/candidate.h"
#include "gates/gate1.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/fs.h"

static inline int tu_alive_with(const char *marker) {
    DIR *d = opendir("/proc");
    cr_assert_not_null(d);
    struct dirent *de;
    int found = 0;
    while ((de = readdir(d)) && !found) {
        char path[300], buf[4096];
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue; /* zombies have an empty cmdline */
        for (ssize_t i = 0; i < n; i++)
            if (!buf[i]) buf[i] = ' ';
        buf[n] = 0;
        if (strstr(buf, marker) && !strstr(buf, "sh -c")) found = 1;
    }
    closedir(d);
    return found;
}

static inline const char *tu_family(kfamily f) { return f == KF_NONE ? NULL : kfamily_name(f); }

enum { TU_KF_RING = 16 };
static kfacts tu_kf_ring[TU_KF_RING];
static size_t tu_kf_next;

__attribute__((destructor)) static void tu_kf_release(void) {
    for (size_t i = 0; i < TU_KF_RING; i++) kfacts_free(&tu_kf_ring[i]);
}

static inline const kfacts *tu_kf(const json_t *k) {
    kfacts *f = &tu_kf_ring[tu_kf_next++ % TU_KF_RING];
    kfacts_free(f);
    kfacts_read(k, f);
    return f;
}

static kplan tu_kp_ring[TU_KF_RING];
static size_t tu_kp_next;

__attribute__((destructor)) static void tu_kp_release(void) {
    for (size_t i = 0; i < TU_KF_RING; i++) kplan_free(&tu_kp_ring[i]);
}

/* A plan object read into a kplan, as the executor reads it at its edge (the same ring as
 * tu_kf's: `p` must stay alive while the result is used). */
static inline const kplan *tu_kp(const json_t *p) {
    kplan *f = &tu_kp_ring[tu_kp_next++ % TU_KF_RING];
    kplan_free(f);
    kplan_read(p, f);
    return f;
}

static inline char *tu_fixture_path(const char *rel) {
    char *root = fs_kopt_root();
    char *path = fs_join(root, rel);
    free(root);
    return path;
}

static inline char *tu_read_fixture(const char *rel, size_t *len) {
    char *path = tu_fixture_path(rel);
    char *text = NULL;
    size_t n = 0;
    kerr e = {0};
    int rc = fs_read(path, &text, &n, &e);
    cr_assert_eq(rc, 0, "cannot read fixture %s: %s (set KOPT_ROOT to the repository root)", path,
                 e.msg);
    free(path);
    if (len) *len = n;
    return text;
}

/* Compares a generated candidate with its golden file `rel` (KOPT_WRITE_GOLDEN=1 writes it instead). */
static inline void tu_golden(const char *rel, const char *src) {
    kerr e = {0};
    if (getenv("KOPT_WRITE_GOLDEN")) {
        char *path = tu_fixture_path(rel);
        cr_assert_eq(fs_write(path, src, strlen(src), &e), 0, "%s", e.msg);
        free(path);
        return;
    }
    size_t n = 0;
    char *want = tu_read_fixture(rel, &n);
    cr_expect(n == strlen(src) && !memcmp(want, src, n), "%s differs from the emitted candidate", rel);
    free(want);
}

static inline candidate *tu_parse_candidate(const char *text) {
    candidate *c = NULL;
    kerr e = {0};
    int rc = candidate_parse(text, strlen(text), &c, &e);
    cr_assert_eq(rc, 0, "candidate_parse failed: %s\n--- text:\n%s", e.msg, text);
    cr_assert(c);
    return c;
}

/* s with the first `from` replaced by `to` (malloc'd; fails the test when `from` is absent).
 * Not inlined: gcc 12 at -O2, inlining it after tu_read_fixture, takes the match for a dangling
 * pointer to tu_read_fixture's local (-Wdangling-pointer, a false positive). */
static __attribute__((noinline, unused)) char *tu_replace_once(const char *s, const char *from, const char *to) {
    const char *p = strstr(s, from);
    cr_assert(p, "<<%s>> not found", from);
    return kasprintf("%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
}

/* s with every occurrence of `from` replaced by `to` (malloc'd; s unchanged when there is none). */
static inline char *tu_replace_all(const char *s, const char *from, const char *to) {
    kbuf b = KBUF_INIT;
    const char *at;
    while ((at = strstr(s, from))) {
        kbuf_printf(&b, "%.*s%s", (int)(at - s), s, to);
        s = at + strlen(from);
    }
    kbuf_puts(&b, s);
    char *r = kstrdup(kbuf_str(&b));
    kbuf_free(&b);
    return r;
}

/* The message of a refused candidate text (caller frees), asserting the refusal. */
static inline char *tu_parse_refusal(const char *text) {
    candidate *c = (candidate *)1;
    kerr e = {0};
    int rc = candidate_parse(text, strlen(text), &c, &e);
    cr_assert_eq(rc, KOPT_E_CANDIDATE, "expected a refusal (rc %d) of:\n%s", rc, text);
    cr_assert_null(c);
    return kstrdup(e.msg);
}

/* The Inductor module `text` with its first `from` replaced by `to`, parsed (asserts both). */
static inline artifact *tu_parse_edited(const char *text, const char *from, const char *to) {
    char *ed = tu_replace_once(text, from, to);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(ed, strlen(ed), &a, &e), 0, "%s", e.msg);
    free(ed);
    return a;
}

static inline artifact *tu_load_inductor(const char *name) {
    char *rel = kasprintf("tests/fixtures/inductor/%s", name);
    size_t len = 0;
    char *text = tu_read_fixture(rel, &len);
    artifact *a = NULL;
    kerr e = {0};
    cr_assert_eq(artifact_parse(text, len, &a, &e), 0, "%s: %s", name, e.msg);
    free(text);
    free(rel);
    return a;
}

static inline void tu_expect_gate1(const json_t *out, const art_kernel *K) {
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(out, "candidates"), i, c) {
        const char *src = json_string_value(json_object_get(c, "source"));
        candidate *cd = NULL;
        kerr e = {0};
        cr_assert_eq(candidate_parse(src, strlen(src), &cd, &e), 0, "%s\n%s", e.msg, src);
        static_opts so = {0};
        kbuf st = KBUF_INIT;
        char *why = NULL;
        cr_assert_eq(gate1_check(cd, K, &so, &st, &why, NULL), 1, "gate 1 refused: %s\n%s", why, src);
        free(why);
        kbuf_free(&st);
        candidate_free(cd);
    }
}

#endif
