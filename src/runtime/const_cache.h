/* The constant tensor cache: data derived from constant inputs (packed
 * weight panels) kept across executions, keyed by who derived it and from
 * what.  Capacity is the CPU engine's constant tensor cache capacity
 * (dnnl_graph_set_constant_tensor_cache[_capacity], ONEDNN_GRAPH_CONSTANT_
 * TENSOR_CACHE*); capacity 0 disables it.  Least recently used entries are
 * evicted by bytes; an entry in use by an execution stays alive until that
 * execution releases it.  Thread-safe. */
#ifndef PARTITA_RUNTIME_CONST_CACHE_H
#define PARTITA_RUNTIME_CONST_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/status.h"

typedef struct pt_const_entry pt_const_entry;

typedef struct {
    const void *owner; /* the compiled kernel state that derives the data */
    const void *src;   /* the constant input's buffer */
    uint64_t tag;      /* which derived form (e.g. which operand) */
} pt_const_key;

/* Fills `dst` (bytes, 64-byte aligned) from the constant input. */
typedef void (*pt_const_fill_fn)(void *ctx, void *dst);

/* Returns the entry for `key`, creating and filling it when absent (the
 * fill runs once, under the entry's own lock, so concurrent executions wait
 * for it instead of packing twice).  *data is valid until
 * pt_const_cache_release(*entry).  When the cache is disabled or the entry
 * cannot fit, returns dnnl_success with *entry NULL and *data NULL: the
 * caller derives the data itself for this execution. */
pt_status pt_const_cache_acquire(const pt_const_key *key, size_t bytes, pt_const_fill_fn fill, void *ctx,
                                 pt_const_entry **entry, const void **data);
void pt_const_cache_release(pt_const_entry *entry);

/* Drops every entry derived by `owner` (its kernel state is being freed). */
void pt_const_cache_forget_owner(const void *owner);

/* Empties the cache (capacity changes do, per the API). */
void pt_const_cache_clear(void);

/* Bytes held and entries (tests, verbose). */
size_t pt_const_cache_bytes(void);
size_t pt_const_cache_entries(void);

#endif
