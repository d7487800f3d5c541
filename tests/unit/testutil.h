/* testutil.h — helpers shared by the Criterion unit tests.
 *
 * tu_fixture_path / tu_read_fixture resolve a path relative to the repository root: $KOPT_ROOT
 * when set (the Makefile's `test` target sets it), else the parent of the directory holding the
 * test binary (build/unit-tests -> repo root), as fs_kopt_root() does. Both return malloc'd
 * memory owned by the caller (free()). tu_read_fixture fails the current test if the file
 * cannot be read. Functions are static inline so every test file can include this header.
 */
#ifndef KOPT_TESTUTIL_H
#define KOPT_TESTUTIL_H

#include <criterion/criterion.h>
#include <stdlib.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/fs.h"

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

#endif
