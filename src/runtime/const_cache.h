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

/* How an execution names the constant input an entry was derived from
 * (seed 004): the key given to execute_with_options, else the id given to
 * tensor_create_with_id, else the input's buffer address. */
typedef enum { PT_CONST_BY_KEY, PT_CONST_BY_TENSOR_ID, PT_CONST_BY_ADDRESS } pt_const_name;

typedef struct {
    const void *owner;  /* the compiled kernel state that derives the data */
    uint64_t tag;       /* which derived form (e.g. which operand) */
    pt_const_name name; /* what `value` is */
    uint64_t value;
} pt_const_key;

/* A cheap fingerprint of a constant input's bytes: its size and 32 words
 * sampled across it.  Re-checked on every hit, so a buffer reused for other
 * weights (or a key reused for other weights) is noticed unless the change
 * avoids every sampled word; see docs/api.md. */
uint64_t pt_const_fingerprint(const void *data, size_t bytes);

/* Fills `dst` (bytes, 64-byte aligned) from the constant input. */
typedef void (*pt_const_fill_fn)(void *ctx, void *dst);

/* Returns the entry for `key`, creating and filling it when absent or when
 * its fingerprint differs from `fingerprint` (the fill runs under the
 * entry's own lock, so concurrent executions wait for it instead of packing
 * twice).  *data is valid until
 * pt_const_cache_release(*entry).  When the cache is disabled or the entry
 * cannot fit, returns dnnl_success with *entry NULL and *data NULL: the
 * caller derives the data itself for this execution.  The same happens
 * when other executions hold the entry with another fingerprint (constant
 * inputs that differ between concurrent executions): they keep reading
 * their values while this one packs its own. */
pt_status pt_const_cache_acquire(const pt_const_key *key, uint64_t fingerprint, size_t bytes,
                                 pt_const_fill_fn fill, void *ctx, pt_const_entry **entry, const void **data);
void pt_const_cache_release(pt_const_entry *entry);

/* Drops every entry derived by `owner` (its kernel state is being freed). */
void pt_const_cache_forget_owner(const void *owner);

/* Empties the cache (capacity changes do, per the API). */
void pt_const_cache_clear(void);

/* Bytes held and entries (tests, verbose). */
size_t pt_const_cache_bytes(void);
size_t pt_const_cache_entries(void);

#endif
