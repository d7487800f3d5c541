/* pycache.c — the worker's bytecode directory (pycache.h). */
#include "worker/pycache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/err.h"
#include "util/fs.h"

/* Whether `dir` is a directory owned by us that nobody else can write; why says otherwise. */
static int pc_private(const char *dir, char *why, size_t cap) {
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(why, cap, "%s: %s", dir, strerror(errno));
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(why, cap, "%s is not a directory", dir);
        return 0;
    }
    if (st.st_uid != geteuid()) {
        snprintf(why, cap, "%s belongs to uid %u, not kopt's", dir, (unsigned)st.st_uid);
        return 0;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        snprintf(why, cap, "%s is writable by other users", dir);
        return 0;
    }
    return 1;
}

char *pycache_dir(char *why, size_t cap) {
    if (cap) why[0] = 0;
    const char *k = getenv("KOPT_PYCACHE");
    if (k && (!*k || !strcmp(k, "0"))) return NULL;
    const char *user = getenv("PYTHONPYCACHEPREFIX");
    if (user && *user) return NULL;
    char *dir = NULL;
    if (k) {
        if (k[0] != '/') {
            snprintf(why, cap, "KOPT_PYCACHE=%s is not an absolute path", k);
            return NULL;
        }
        dir = kstrdup(k);
    } else {
        const char *home = getenv("HOME");
        if (!home || home[0] != '/') {
            snprintf(why, cap, "no absolute HOME for ~/.cache/kopt/pycache");
            return NULL;
        }
        dir = kasprintf("%s/.cache/kopt/pycache", home);
    }
    kerr e = {0};
    if (fs_mkdirs(dir, &e)) {
        snprintf(why, cap, "%s", e.msg);
        free(dir);
        return NULL;
    }
    if (!pc_private(dir, why, cap)) {
        free(dir);
        return NULL;
    }
    return dir;
}
