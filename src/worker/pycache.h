/* pycache.h — where kopt's worker processes keep Python bytecode (issue 10: setup time).
 *
 * Every problem gets a fresh worker process, which imports torch, Dynamo and Inductor. Where
 * the Python install ships no .pyc files and the environment forbids writing them beside the
 * sources (PYTHONDONTWRITEBYTECODE=1, a read-only site-packages: containers do both), every
 * worker compiles those ~1,400 modules from source again: on the H200 machine importing torch
 * with Dynamo and Inductor took 12-14 s that way and 4.6 s from cached bytecode, about 8 s of
 * each problem's setup (docs/BENCHMARKS.md, thirty-second session).
 *
 * So a worker writes and reads its bytecode under a directory of kopt's own
 * (PYTHONPYCACHEPREFIX, Python >= 3.8: a parallel tree, nothing is written beside the sources),
 * and PYTHONDONTWRITEBYTECODE is dropped from the worker's environment only (it is about the
 * install tree, which stays untouched). The directory:
 *   - KOPT_PYCACHE=0 (or empty): none; the worker's environment is left as kopt's is;
 *   - PYTHONPYCACHEPREFIX already set by the user: none (their choice stands as it is);
 *   - KOPT_PYCACHE=/absolute/dir: that one;
 *   - else $HOME/.cache/kopt/pycache (beside the store).
 * It is created if missing and used only if it is a directory owned by kopt's uid that no
 * group or other user can write (bytecode there is code the worker runs). The candidates'
 * compile sandbox gets neither the setting nor the directory (its environment is its own;
 * as root it runs as nobody, which cannot write there).
 */
#ifndef KOPT_PYCACHE_H
#define KOPT_PYCACHE_H

#include <stddef.h>

/* The bytecode directory for kopt's workers (rules above), created if needed; malloc'd, owned by
 * the caller. NULL when there is none; then, where a directory was wanted but refused,
 * why[0..cap) says why (else why is ""). */
char *pycache_dir(char *why, size_t cap);

#endif
