/* log.h — leveled logging to stderr. Level from --verbose/--quiet (cli) or $KOPT_LOG.
 * Never log secrets: callers pass redacted strings (see llm/ for keys). */
#ifndef KOPT_LOG_H
#define KOPT_LOG_H

enum { LOG_QUIET = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };
void log_set_level(int level); /* a negative level: read $KOPT_LOG again at the next use */
void log_at_least(int level);  /* --verbose: raise to `level`, keep a higher one ($KOPT_LOG=3) */
int log_level(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
