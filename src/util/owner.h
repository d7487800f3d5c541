/* owner.h — who holds a piece of shared state (a run in the store, a bench problem): an owner
 * string "host:pid" of the process that took it, and the rule deciding whether that owner is
 * still at work, so that a second process never adopts the live work of a first one and a dead
 * one's work is taken over.
 *
 * Liveness (owner_alive):
 *  - the owner is this very process: not alive (a pid reused after a kill -9 of an earlier
 *    kopt: the state is this process's to take, never its own live work);
 *  - same host: alive while the pid exists and, when /proc/<pid>/cmdline is readable, that
 *    process's arguments include `verb` ("optimize", "bench"): a recycled pid of some other
 *    program does not keep the work;
 *  - another host, or no parsable owner: alive while the state is younger than foreign_stale_s.
 * Ownership: owner_self's string is malloc'd for the caller; an owner_liveness owns `self`.
 */
#ifndef KOPT_OWNER_H
#define KOPT_OWNER_H

/* "host:pid" of this process. */
char *owner_self(void);

typedef struct owner_liveness {
    char *self;                 /* owner_self() */
    char host[256];             /* this host's name */
    double foreign_stale_s;     /* state of other hosts older than this is taken over */
    const char *verb;           /* the subcommand a live owner runs ("optimize", "bench"); borrowed */
} owner_liveness;

void owner_liveness_init(owner_liveness *l, const char *verb, double foreign_stale_s);
void owner_liveness_clear(owner_liveness *l);
/* 1 when `owner` is still at work on state `age_s` seconds old (see the top); ctx: an
 * owner_liveness. */
int owner_alive(const char *owner, double age_s, void *ctx);

#endif
