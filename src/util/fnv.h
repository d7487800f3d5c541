/* fnv.h — 64-bit FNV-1a, fed a byte at a time: the hash of kopt's shard assignment
 * (bench/suite.h) and of a SASS listing's instructions (gates/sass.h). Not cryptographic: a
 * stable fingerprint of text, equal wherever the same bytes are fed in the same order.
 * Ownership: plain values. */
#ifndef KOPT_FNV_H
#define KOPT_FNV_H

#include <stdint.h>

#define FNV1A64_INIT 0xcbf29ce484222325ull

static inline uint64_t fnv1a64_byte(uint64_t h, unsigned char c) { return (h ^ c) * 0x100000001b3ull; }

#endif
