/* Process-wide LRU cache of compiled partitions (docs/api.md, "Objects and lifetimes"). */
#ifndef PARTITA_COMPILE_CP_CACHE_H
#define PARTITA_COMPILE_CP_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "partition/partition.h"

struct pt_compiled;

/* Serialised identity of one compilation: the partition's ops, the given
 * logical tensors, engine kind, math mode and thread count. */
typedef struct {
    uint8_t *bytes;
    size_t len, cap;
    uint64_t hash;
} pt_cp_key;

pt_status pt_cp_key_build(pt_cp_key *key, const pt_partition_impl *p, size_t nin,
                          const pt_lt *const *inputs, size_t nout, const pt_lt *const *outputs,
                          dnnl_engine_kind_t ekind, dnnl_fpmath_mode_t mode, int apply_to_int);
void pt_cp_key_free(pt_cp_key *key);

/* New reference to a cached plan, or NULL. */
struct pt_compiled *pt_cp_cache_lookup(const pt_cp_key *key);
/* Stores `c` under `key` (takes ownership of the key's bytes; retains `c`).
 * With capacity 0 nothing is stored and the key is freed. */
void pt_cp_cache_insert(pt_cp_key *key, struct pt_compiled *c);
int pt_cp_cache_capacity(void);
pt_status pt_cp_cache_set_capacity(int capacity);

#endif
