/* Philox-4x32-10 random words of the Dropout op (docs/ops.md, docs/fusion.md),
 * shared by the reference Dropout kernel and the fused SDPA kernel so both
 * drop exactly the same elements. */
#ifndef PARTITA_KERNELS_REF_PHILOX_H
#define PARTITA_KERNELS_REF_PHILOX_H

#include <stdbool.h>
#include <stdint.h>

/* Philox-4x32-10 with counter [lo(ctr), hi(ctr), lo(x), hi(x)], x = i & ~3,
 * and key [lo(key), hi(key)]; returns word i & 3 of the result. */
uint32_t pt_philox_word(uint64_t i, uint64_t key, uint64_t ctr);

/* The random word of Dropout element `idx` (row-major linear index): the
 * Philox word for offset != 0, oneDNN's legacy derivation for offset == 0. */
uint32_t pt_dropout_word(uint64_t idx, int64_t seed, int64_t offset);

/* Per-probability constants of Dropout: the keep threshold on the random
 * word and the scale applied to kept elements. */
typedef struct {
    double threshold; /* keep when (double)word > threshold */
    float inv_q;      /* 1 / (1 - p), 0 when p == 1 */
} pt_dropout_consts;

pt_dropout_consts pt_dropout_prepare(float p);

static inline bool pt_dropout_keep(const pt_dropout_consts *c, uint64_t idx, int64_t seed, int64_t offset) {
    return (double)pt_dropout_word(idx, seed, offset) > c->threshold;
}

#endif
