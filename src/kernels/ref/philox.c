/* Philox generator of the Dropout op; see philox.h. */
#include "kernels/ref/philox.h"

uint32_t pt_philox_word(uint64_t i, uint64_t key, uint64_t ctr) {
    uint64_t x = i & ~(uint64_t)3;
    uint32_t c[4] = {(uint32_t)ctr, (uint32_t)(ctr >> 32), (uint32_t)x, (uint32_t)(x >> 32)};
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int round = 0; round < 10; ++round) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t h0 = (uint32_t)(p0 >> 32), l0 = (uint32_t)p0;
        uint32_t h1 = (uint32_t)(p1 >> 32), l1 = (uint32_t)p1;
        uint32_t n0 = h1 ^ c[1] ^ k0, n2 = h0 ^ c[3] ^ k1;
        c[0] = n0, c[1] = l1, c[2] = n2, c[3] = l0;
        if (round < 9) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    return c[i & 3];
}

uint32_t pt_dropout_word(uint64_t idx, int64_t seed, int64_t offset) {
    if (offset != 0) return pt_philox_word(idx, (uint64_t)seed, (uint64_t)offset);
    /* Legacy path: four consecutive indices share one word. */
    uint64_t u = (uint64_t)((uint32_t)idx & ~3u), w = (uint64_t)(uint32_t)seed;
    return pt_philox_word(((u + 3) << 32) + (u + 2), (w << 32) + w, ((u + 1) << 32) + u);
}

pt_dropout_consts pt_dropout_prepare(float p) {
    pt_dropout_consts c;
    c.inv_q = p != 1.f ? 1.f / (1.f - p) : 0.f;
    const float pc = p < 0.f ? 0.f : (p > 1.f ? 1.f : p);
    c.threshold = 4294967295.0 * (double)pc;
    return c;
}
