#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int g_level = -1;

void log_set_level(int level) { g_level = level; }
void log_at_least(int level) {
    if (log_level() < level) g_level = level;
}
int log_level(void) {
    if (g_level < 0) {
        const char *e = getenv("KOPT_LOG");
        g_level = e ? atoi(e) : LOG_WARN;
    }
    return g_level;
}
void log_msg(int level, const char *fmt, ...) {
    if (level > log_level()) return;
    static const char *tag[] = {"", "warning", "info", "debug"};
    fprintf(stderr, "kopt: %s: ", tag[level < 4 ? level : 3]);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
