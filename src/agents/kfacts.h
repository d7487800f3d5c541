/* kfacts.h — a target kernel's facts as the built-in agents use them: the planner / executor
 * context's "kernel" object (written by opt_kernel_ctx, optimize/search.c; agent.h lists its
 * keys) read once, at the agent edge, into a typed struct. The JSON object stays the wire form
 * (an LLM agent reads it as it is); inside the built-in planner, executor and the families a
 * kernel is a kfacts: an enum for its kind, arrays for its signature, numels, shapes, ATen ops,
 * FX graph fragment and region members, integers for its tuned configuration.
 *
 * Contract: kfacts_read fills *out from `kernel` (0), or leaves it empty and returns -1 when
 * `kernel` is not an object. It is lenient by design, as the families' rules are over what is
 * known: a key absent or of the wrong type is absent here (NULL string, empty array, kind
 * ART_K_OTHER, numel 0, no shape, tuned.present 0); entries of the wrong type are skipped.
 * kfacts_free releases what kfacts_read allocated (NULL-safe, idempotent on a zeroed struct).
 *
 * Ownership: every string (and the members' strings) is borrowed from `kernel`, which must
 * outlive the kfacts; the arrays are the kfacts' own. kfacts_free never reads a borrowed string.
 */
#ifndef KOPT_KFACTS_H
#define KOPT_KFACTS_H

#include <jansson.h>
#include <stddef.h>

#include "artifact/artifact.h"

enum { KF_MAX_DIMS = 8 };

/* A list of borrowed strings, none NULL (the array owned). */
typedef struct kf_strs {
    const char **v;
    size_t n;
} kf_strs;

typedef struct kf_param {
    const char *name; /* "in_ptr0", "xnumel", "XBLOCK" */
    const char *type; /* "*fp32", "i32", "constexpr"; "" when not given */
    art_role role;    /* ART_ROLE_IN when not given or unknown */
} kf_param;

typedef struct kf_numel {
    const char *name; /* a scalar parameter with an integer value at the first launch */
    long long v;
} kf_numel;

typedef struct kf_shape {
    const char *param;        /* a pointer parameter */
    int ndims;                /* 1..KF_MAX_DIMS */
    long long d[KF_MAX_DIMS]; /* the shape call() gives its buffer */
} kf_shape;

/* One kernel a region launches. */
typedef struct kf_member {
    const char *name;
    kf_strs aten_ops, fragment;
    const char *source; /* NULL when the region's kernel was not found */
} kf_member;

/* The configuration Inductor's autotuner chose (optimize/tuned.h's tuned_config as the context
 * carries it); 0 for an absent block size. */
typedef struct kf_tuned {
    int present;
    int xblock, r0_block, yblock, num_warps, num_stages;
    int found_by_coordesc;
} kf_tuned;

typedef struct kfacts {
    const char *name;
    art_kernel_kind kind;
    const char *heuristic, *grid_type; /* NULL when absent */
    int persistent;
    kf_param *params; /* the signature, in order */
    size_t nparams;
    kf_strs runtime, constexprs; /* parameter names, in order */
    kf_numel *numels;
    size_t nnumels;
    kf_shape *shapes;
    size_t nshapes;
    int masked_x, masked_r0, masked_y; /* the kernel masks that dimension */
    kf_strs aten_ops, fragment;        /* fragment: Inductor's FX graph fragment lines */
    kf_member *members;                /* a region's kernels, in order */
    size_t nmembers;
    const char *vendor_call;         /* a vendor region's ATen call; NULL otherwise */
    const char *jit_source, *source; /* NULL when absent */
    kf_tuned tuned;
    long long sms; /* the GPU's SM count (the worker's "sm_count"); 0 when unknown */
} kfacts;

int kfacts_read(const json_t *kernel, kfacts *out);
void kfacts_free(kfacts *k);

/* Queries (results borrowed): kfacts_numel, the integer value of scalar parameter `name` (0 when
 * not known); kfacts_shape, the shape of pointer parameter `name` or NULL; kfacts_param_type,
 * the declared type of parameter `name` ("" when unknown); kfacts_runtime, runtime parameter i
 * (NULL past the end); kf_strs_has, 1 when `s` is one of the strings; kf_strs_find, the first
 * string containing `needle`, or NULL. */
long long kfacts_numel(const kfacts *k, const char *name);
const kf_shape *kfacts_shape(const kfacts *k, const char *name);
const char *kfacts_param_type(const kfacts *k, const char *name);
const char *kfacts_runtime(const kfacts *k, size_t i);
int kf_strs_has(const kf_strs *l, const char *s);
const char *kf_strs_find(const kf_strs *l, const char *needle);

#endif
