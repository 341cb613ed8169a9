/* How a fused kernel names a constant input in the constant tensor cache
 * (runtime/const_cache.h; seed 004): the execute key when the caller gave
 * one, else the id the caller gave the input's tensor, else its address.
 * Shared by every kernel that caches data derived from constant weights. */
#ifndef PARTITA_KERNELS_FUSED_CONST_WEIGHTS_H
#define PARTITA_KERNELS_FUSED_CONST_WEIGHTS_H

#include <stdint.h>

#include "kernels/kernel.h"
#include "runtime/const_cache.h"

static inline pt_const_key pt_const_key_for(const void *owner, uint64_t tag, const pt_exec_ctx *ctx, int port,
                                            const void *data) {
    pt_const_key key = {.owner = owner, .tag = tag, .name = PT_CONST_BY_ADDRESS, .value = (uintptr_t)data};
    const size_t id = ctx && ctx->in_ids && port >= 0 ? ctx->in_ids[port] : SIZE_MAX;
    if (ctx && ctx->has_key) key.name = PT_CONST_BY_KEY, key.value = ctx->key;
    else if (id != SIZE_MAX) key.name = PT_CONST_BY_TENSOR_ID, key.value = id;
    return key;
}

#endif
