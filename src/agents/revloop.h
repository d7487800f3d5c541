/* revloop.h — the last pass of Inductor's looped reduction kernel run over its chunks in
 * reverse order: a launch-configuration knob of the built-in planner and executor.
 *
 * Inductor's looped kernels (a layer norm, a softmax, a normalize over rows too long for one
 * program's registers) read each row once per pass: a statistics pass, then a last pass that
 * reads the row again and writes the result. The last pass's reads are served by L2 only where
 * the row is still there; walking it forward, its first chunk is the one read longest ago. Walked
 * backward, it starts with the chunk the statistics pass has just read, so a row that no longer
 * fits in L2 whole still finds its last chunks there (with forward order every chunk is as old as
 * a whole pass, and past L2's capacity none is left).
 *
 * The transform is offered only where the order cannot matter: the last `for r0_offset in
 * tl.range(0, r0_numel, R0_BLOCK):` loop of a kernel that has at least two, at the function's top
 * level and its last statement, whose body is straight-line assignments and tl.store calls,
 * where no name is read before the body assigns it (nothing carried from one chunk to the next),
 * where every store's address depends on the chunk, and where nothing has side effects beyond
 * its stores (no atomics, barriers, prints, asserts, inline assembly). Each chunk then computes
 * and stores the same values whichever order the chunks run in: the output is bit-identical.
 * The loop header becomes `for kopt_rev in tl.range(0, r0_numel, R0_BLOCK):` followed by
 * `r0_offset = ((r0_numel - 1) // R0_BLOCK) * R0_BLOCK - kopt_rev`; nothing else changes.
 *
 * Contract: revloop_applies says whether the transform applies to `src` (a kernel's Triton
 * source, as kfacts' jit_source): 1, or 0 with the rule that refused it in why (when why is not
 * NULL). revloop_apply returns the transformed source or NULL (refused, why filled).
 * Ownership: `src` is borrowed; revloop_apply's result is the caller's (free()).
 */
#ifndef KOPT_REVLOOP_H
#define KOPT_REVLOOP_H

#include <stddef.h>

int revloop_applies(const char *src, char *why, size_t whylen);
char *revloop_apply(const char *src, char *why, size_t whylen);

#endif
