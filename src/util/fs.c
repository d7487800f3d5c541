#include "util/fs.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"

int fs_read(const char *path, char **out, size_t *len, kerr *e) {
    if (fs_is_dir(path)) return kerr_set(e, KOPT_E_NOFILE, "cannot read %s: it is a directory", path);
    FILE *f = fopen(path, "rb");
    if (!f) return kerr_set(e, KOPT_E_NOFILE, "cannot open %s: %s", path, strerror(errno));
    kbuf b = KBUF_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) kbuf_append(&b, chunk, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        kbuf_free(&b);
        return kerr_set(e, KOPT_E_NOFILE, "error reading %s", path);
    }
    if (len) *len = b.len;
    *out = kbuf_steal(&b);
    return 0;
}

int fs_write(const char *path, const char *data, size_t len, kerr *e) {
    char *tmp = kasprintf("%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int r = kerr_set(e, KOPT_E_IO, "cannot write %s: %s", path, strerror(errno));
        free(tmp);
        return r;
    }
    size_t w = fwrite(data, 1, len, f);
    int bad = (w != len) | (fflush(f) != 0) | (fsync(fileno(f)) != 0);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        int r = kerr_set(e, KOPT_E_IO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return r;
    }
    free(tmp);
    return 0;
}

int fs_mkdirs(const char *path, kerr *e) {
    char *p = kstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            int r = kerr_set(e, KOPT_E_IO, "cannot create directory %s: %s", p, strerror(errno));
            free(p);
            return r;
        }
        *s = '/';
    }
    if (mkdir(p, 0755) != 0 && errno != EEXIST) {
        int r = kerr_set(e, KOPT_E_IO, "cannot create directory %s: %s", p, strerror(errno));
        free(p);
        return r;
    }
    free(p);
    if (!fs_is_dir(path)) return kerr_set(e, KOPT_E_IO, "%s exists and is not a directory", path);
    return 0;
}

int fs_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}
int fs_is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *fs_join(const char *a, const char *b) {
    size_t la = strlen(a);
    while (la > 1 && a[la - 1] == '/') la--;
    if (b[0] == '/') return kstrdup(b);
    return kasprintf("%.*s/%s", (int)la, a, b);
}

char *fs_realpath(const char *path) {
    char buf[PATH_MAX];
    if (!realpath(path, buf)) return NULL;
    return kstrdup(buf);
}

/* 1 when dir holds kopt's worker script: the mark of a share folder or of the source tree. */
static int fs_has_worker(const char *dir) {
    char *w = fs_join(dir, "worker/kopt_worker.py");
    int yes = fs_exists(w);
    free(w);
    return yes;
}

char *fs_kopt_root(void) {
    const char *env = getenv("KOPT_ROOT");
    if (env && *env) return kstrdup(env);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return kstrdup(".");
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0'; /* PREFIX/bin, or the source tree's build */
    char *share = kasprintf("%s/../share/kopt", exe), *up = kasprintf("%s/..", exe);
    const char *pick = fs_has_worker(share) ? share : up; /* installed, else the source tree */
    char *root = fs_realpath(pick);
    if (!root) root = kstrdup(pick);
    free(share);
    free(up);
    return root;
}

int fs_mkdtemp(const char *prefix, char **out, kerr *e) {
    const char *t = getenv("TMPDIR");
    char *tmpl = kasprintf("%s/%s-XXXXXX", (t && *t) ? t : "/tmp", prefix);
    if (!mkdtemp(tmpl)) {
        int r = kerr_set(e, KOPT_E_IO, "cannot create a temporary directory: %s", strerror(errno));
        free(tmpl);
        return r;
    }
    *out = tmpl;
    return 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(p);
    return 0;
}
void fs_rmtree(const char *path) {
    if (path && *path && strcmp(path, "/") != 0) nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static unsigned long long du_total;

static int du_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)p;
    (void)flag;
    (void)ftw;
    du_total += (unsigned long long)st->st_blocks * 512ULL;
    return 0;
}

unsigned long long fs_du(const char *path) {
    du_total = 0;
    if (path && *path) nftw(path, du_one, 16, FTW_PHYS);
    return du_total;
}
