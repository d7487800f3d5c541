/* krow.h — the kernel table of `kopt optimize` as typed rows: one row per Triton kernel the
 * analyst ranked and per region searched, and one per library call (vendor rows). The search
 * (search.c), the region phase (regions.c) and the final marking (optimize.c) read and write
 * these structs; the optimize document's "kernels" and "vendor_calls" arrays are written from
 * them once, at the end (krows_to_json: JSON only at the edge, docs/schema/optimize.md).
 *
 * Ownership: a krows table owns its rows and everything in them (strings, lists, the two JSON
 * blobs that come from and go to the edges as they are: the winner's gate-4 speedup object and
 * the profile's ncu counters); krows_free releases it all. Pointers returned by krows_add /
 * krows_find stay valid until the next krows_add on the same table.
 */
#ifndef KOPT_KROW_H
#define KOPT_KROW_H

#include <jansson.h>
#include <stddef.h>

#include "artifact/artifact.h"
#include "optimize/tuned.h"

typedef enum {
    KROW_KEPT = 0,  /* Inductor's kernel stays (not searched, or nothing passed) */
    KROW_OPTIMIZED, /* a candidate replaced it in the output module */
    KROW_IN_REGION, /* a region that replaced it together with other launches won */
} krow_status;

typedef struct krow {
    char *name;
    char *kernel_kind;      /* "pointwise", "reduction", ..., "region"; NULL: not known */
    char *cls;              /* the analyst's class ("memory-bound", ...) or "region" */
    double time_ms, share;  /* profiled time and share of the model's */
    double frac_of_ceiling; /* valid when has_frac */
    double bytes;           /* valid when has_bytes */
    int has_frac, has_bytes;
    krow_status status;
    char *why;                                /* why it is kept / how it ended; NULL: none */
    char *search_end;                         /* how its search ended; NULL: it did not end early */
    char *change;                             /* the best accepted candidate's label; NULL: none */
    json_t *speedup;                          /* that candidate's gate-4 speedup object (owned); NULL */
    double kernel_ms_before, kernel_ms_after; /* the screen's medians for it; 0: none */
    double after_ms;                          /* its time after the search (profiled x screen ratio); 0 */
    int searched;                             /* the search ran: tried and refused are reported */
    int tried, refused[5];                    /* candidates evaluated; refusals by gate 1..4 */
    int host_slower;                          /* of refused[4]: faster on the GPU, slower as called */
    art_strlist members;                      /* regions: the launches they replace */
    art_strlist aten_ops;
    int has_aten_ops;   /* aten_ops reported (possibly empty) */
    json_t *ncu;        /* the profile's Nsight Compute counters (owned); NULL */
    tuned_config tuned; /* the configuration Inductor's autotuner settled on, where the search
                         * started (tuned.num_warps 0: the worker's profile reported none) */
} krow;

typedef struct vrow {
    char *name; /* the callee: "extern_kernels.mm", "torch.ops.aten.x.default" */
    double time_ms, share;
    art_strlist replaced_by; /* regions that replaced calls of it (vendor regions) */
} vrow;

typedef struct krows {
    krow *v;
    size_t n, cap;
    vrow *lib;
    size_t nlib, libcap;
} krows;

/* A new row named `name` (copied), zeroed, status KROW_KEPT. */
krow *krows_add(krows *t, const char *name);
/* The row named `name`, or NULL. */
krow *krows_find(const krows *t, const char *name);
/* A new library-call row. */
vrow *krows_add_vendor(krows *t, const char *name, double time_ms, double share);
vrow *krows_find_vendor(const krows *t, const char *name);
/* Replaces s's string with a copy of v (NULL clears it). */
void krow_set(char **s, const char *v);
/* Replaces s's string with a formatted one. */
void krow_setf(char **s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *krow_status_name(krow_status s);
/* The document's "kernels" and "vendor_calls" arrays (new references). */
json_t *krows_to_json(const krows *t);
json_t *krows_vendor_json(const krows *t);
void krows_free(krows *t);

#endif
