/* kmeta.h — the metadata of a kernel compiled in kopt's sandbox (issue 11: a candidate kernel is
 * untrusted machine code, and what the sandbox hands back is not believed). Triton writes, beside
 * each cubin, a JSON object that its loader (CompiledKernel) reads to launch the kernel: the
 * name, the warps, the shared memory, whether the launch needs global or profiling scratch,
 * clusters, a cooperative grid or programmatic dependent launch. The sandbox's copy comes from a
 * process a candidate's file ran in, so it is checked against what kopt asked and only kopt's own
 * copy of the fields a loader needs is kept.
 *
 *   kmeta_check  parses the sandbox's JSON text and checks it: the kernel name, warps and (when
 *                asked) stages kopt asked for, the target (cuda, the arch asked, 32-thread warps),
 *                one CTA, no global or profiling scratch, no cooperative grid, no PDL, no tensor
 *                descriptors, no tensor memory, shared memory within what an sm_90 block may
 *                use (232,448 bytes). KOPT_E_CANDIDATE with the field that differs.
 *   kmeta_json   kopt's copy (a new string): exactly the fields Triton 3.6's loader reads, from
 *                the checked values and kopt's constants.
 *
 * Ownership: kmeta holds no pointers; kmeta_json's result is the caller's (free).
 */
#ifndef KOPT_KMETA_H
#define KOPT_KMETA_H

#include <stddef.h>

#include "util/err.h"

#define KMETA_SHARED_MAX 232448LL  /* bytes of shared memory one block may use on sm_90 */
#define KMETA_TEXT_MAX (64u << 10) /* the largest metadata file read back */

typedef struct kmeta {
    char name[128];
    int num_warps, num_stages, arch;
    long long shared;
} kmeta;

/* want_stages 0: any. */
int kmeta_check(const char *text, size_t len, const char *want_name, int want_warps, int want_stages, int want_arch,
                kmeta *out, kerr *e);
char *kmeta_json(const kmeta *m);

#endif
