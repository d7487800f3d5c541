/* store_int.h — internals shared by the source files of src/store. Not part of the store's API.
 *
 * Statements are prepared per call (store_prep) and finalized by the caller (sqlite3_finalize,
 * NULL-safe). store_op_begin/store_op_end wrap a public write: its own BEGIN IMMEDIATE ...
 * COMMIT when no transaction is open, a SAVEPOINT inside the caller's transaction otherwise.
 */
#ifndef KOPT_STORE_INT_H
#define KOPT_STORE_INT_H

#include <jansson.h>
#include <sqlite3.h>
#include <stdint.h>

#include "store/store.h"

/* "KOPT": the application_id in the SQLite header of a kopt store (1263489108). */
#define STORE_APP_ID 0x4B4F5054

struct kstore {
    sqlite3 *db;
    char *path;
    int op_savepoint;   /* the running write op used a SAVEPOINT (caller's transaction) */
};

/* KOPT_E_STORE with "store <path>: <what>: <sqlite message>" and a hint for known causes. */
int store_db_err(kstore *s, kerr *e, const char *what);
/* KOPT_E_INTERNAL for caller misuse. */
int store_misuse(kerr *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

int store_prep(kstore *s, const char *sql, sqlite3_stmt **st, kerr *e);
/* A statement without parameters or rows; `what` (NULL: the SQL) names it in errors. */
int store_exec(kstore *s, const char *sql, const char *what, kerr *e);

int store_op_begin(kstore *s, kerr *e);
/* Ends the operation: commits (or releases) when rc == 0, rolls back otherwise; returns rc, or
 * the commit's error. */
int store_op_end(kstore *s, int rc, kerr *e);

/* Binding: NULL text -> NULL; non-finite double -> NULL; id 0 -> NULL. Return SQLite codes. */
int store_bind_text(sqlite3_stmt *st, int i, const char *v);
int store_bind_double(sqlite3_stmt *st, int i, double v);
int store_bind_id(sqlite3_stmt *st, int i, int64_t v);

/* Reading: NULL -> NULL / NAN; malloc'd copies for store_col_dup. */
const char *store_col_text(sqlite3_stmt *st, int i);
char *store_col_dup(sqlite3_stmt *st, int i);
double store_col_double(sqlite3_stmt *st, int i);
/* JSON views of a column: NULL -> json null; JSON text -> its value; other text -> string. */
json_t *store_col_json(sqlite3_stmt *st, int i);
json_t *store_col_jtext(sqlite3_stmt *st, int i);     /* text or null */
json_t *store_col_jreal(sqlite3_stmt *st, int i);     /* real or null */
json_t *store_col_jint(sqlite3_stmt *st, int i);      /* integer or null */

/* 0 when v is NULL or valid JSON, else KOPT_E_INTERNAL naming the field. */
int store_check_json(const char *field, const char *v, kerr *e);

#endif
