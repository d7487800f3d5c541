/* fs.h — small file-system helpers. All return 0 or a kopt_code with kerr filled. */
#ifndef KOPT_FS_H
#define KOPT_FS_H

#include <stddef.h>
#include "util/err.h"

/* Read a whole file; *out is malloc'd (NUL-terminated) and owned by the caller. A missing,
 * unreadable or directory path is KOPT_E_NOFILE. */
int fs_read(const char *path, char **out, size_t *len, kerr *e);
/* Write atomically: to path.tmp, fsync, rename over path. */
int fs_write(const char *path, const char *data, size_t len, kerr *e);
/* mkdir -p. */
int fs_mkdirs(const char *path, kerr *e);
int fs_exists(const char *path);
int fs_is_dir(const char *path);
/* malloc'd "a/b"; handles trailing slashes. */
char *fs_join(const char *a, const char *b);
/* malloc'd absolute, canonical path, or NULL if it does not exist. */
char *fs_realpath(const char *path);
/* Directory holding kopt's own files (worker/, templates/, prompts/): $KOPT_ROOT if set; else,
 * for the running executable in DIR, DIR/../share/kopt when it holds worker/kopt_worker.py
 * (`make install`: PREFIX/bin/kopt -> PREFIX/share/kopt); else DIR/.. (the source tree:
 * build/kopt -> its root). Canonical when it exists. malloc'd. */
char *fs_kopt_root(void);
/* Make a fresh temporary directory under $TMPDIR (or /tmp); malloc'd path. */
int fs_mkdtemp(const char *prefix, char **out, kerr *e);
/* rm -rf (best effort, used for temporary directories only). */
void fs_rmtree(const char *path);
/* Disk space used under path (files' allocated blocks, links not followed; a file alone counts
 * itself); 0 when it does not exist. Not thread-safe (nftw's callback sums into a static). */
unsigned long long fs_du(const char *path);

#endif
