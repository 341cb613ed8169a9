#include "compile/cp_cache.h"

#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compiled.h"

static pt_status put(pt_cp_key *k, const void *data, size_t n) {
    if (k->len + n > k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 1024;
        while (nc < k->len + n) nc *= 2;
        uint8_t *nb = realloc(k->bytes, nc);
        if (!nb) return dnnl_out_of_memory;
        k->bytes = nb;
        k->cap = nc;
    }
    memcpy(k->bytes + k->len, data, n);
    k->len += n;
    return dnnl_success;
}

static pt_status put_lt(pt_cp_key *k, const pt_lt *lt) {
    int64_t v[4] = {(int64_t)lt->id, lt->data_type, lt->ndims, lt->property};
    PT_CHECK(put(k, v, sizeof v));
    int nd = lt->ndims > 0 ? lt->ndims : 0;
    PT_CHECK(put(k, lt->dims, (size_t)nd * sizeof(int64_t)));
    int64_t lty = lt->layout_type;
    PT_CHECK(put(k, &lty, sizeof lty));
    if (lt->layout_type == dnnl_graph_layout_type_strided)
        PT_CHECK(put(k, lt->layout.strides, (size_t)nd * sizeof(int64_t)));
    else if (lt->layout_type == dnnl_graph_layout_type_opaque)
        PT_CHECK(put(k, &lt->layout.layout_id, sizeof(size_t)));
    return dnnl_success;
}

static pt_status put_op(pt_cp_key *k, const pt_op *op) {
    int64_t h[4] = {(int64_t)op->id, op->kind, (int64_t)op->nin, (int64_t)op->nout};
    PT_CHECK(put(k, h, sizeof h));
    for (size_t i = 0; i < op->nin; ++i) PT_CHECK(put_lt(k, &op->in[i]));
    for (size_t i = 0; i < op->nout; ++i) PT_CHECK(put_lt(k, &op->out[i]));
    for (size_t i = 0; i < op->nattr; ++i) {
        const pt_attr *a = &op->attrs[i];
        int64_t ah[3] = {a->name, a->kind, (int64_t)a->n};
        PT_CHECK(put(k, ah, sizeof ah));
        if (a->f) PT_CHECK(put(k, a->f, a->n * sizeof(float)));
        if (a->i) PT_CHECK(put(k, a->i, a->n * sizeof(int64_t)));
        if (a->s) PT_CHECK(put(k, a->s, strlen(a->s) + 1));
    }
    return dnnl_success;
}

pt_status pt_cp_key_build(pt_cp_key *key, const pt_partition_impl *p, size_t nin,
                          const pt_lt *const *inputs, size_t nout, const pt_lt *const *outputs,
                          dnnl_engine_kind_t ekind, dnnl_fpmath_mode_t mode, int apply_to_int) {
    memset(key, 0, sizeof *key);
    int64_t h[5] = {ekind, mode, apply_to_int != 0, omp_get_max_threads(), (int64_t)p->nops};
    pt_status st = put(key, h, sizeof h);
    for (size_t i = 0; i < p->nops && st == dnnl_success; ++i) st = put_op(key, p->ops[i]);
    for (size_t i = 0; i < nin && st == dnnl_success; ++i) st = put_lt(key, inputs[i]);
    int64_t sep = -1;
    if (st == dnnl_success) st = put(key, &sep, sizeof sep);
    for (size_t i = 0; i < nout && st == dnnl_success; ++i) st = put_lt(key, outputs[i]);
    if (st != dnnl_success) {
        pt_cp_key_free(key);
        return st;
    }
    uint64_t x = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < key->len; ++i) x = (x ^ key->bytes[i]) * 1099511628211ull;
    key->hash = x;
    return dnnl_success;
}

void pt_cp_key_free(pt_cp_key *key) {
    free(key->bytes);
    memset(key, 0, sizeof *key);
}

/* Entries in most-recently-used-first order. */
typedef struct entry {
    pt_cp_key key;
    pt_compiled *c;
    struct entry *next;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *head = NULL;
static int count = 0;
static int capacity = -1; /* -1: not yet read from the environment */

static int capacity_locked(void) {
    if (capacity < 0) {
        capacity = 1024;
        const char *v = getenv("ONEDNN_GRAPH_COMPILED_PARTITION_CACHE_CAPACITY");
        if (!v) v = getenv("DNNL_GRAPH_COMPILED_PARTITION_CACHE_CAPACITY");
        if (v && *v) {
            long l = strtol(v, NULL, 10);
            if (l >= 0) capacity = (int)(l > 1 << 30 ? 1 << 30 : l);
        }
    }
    return capacity;
}

static void evict_to(int cap) {
    entry **pp = &head;
    int i = 0;
    while (*pp) {
        if (i >= cap) {
            entry *e = *pp;
            *pp = e->next;
            pt_compiled_release(e->c);
            pt_cp_key_free(&e->key);
            free(e);
            --count;
        } else {
            pp = &(*pp)->next;
            ++i;
        }
    }
}

pt_compiled *pt_cp_cache_lookup(const pt_cp_key *key) {
    pthread_mutex_lock(&lock);
    entry **pp = &head;
    pt_compiled *found = NULL;
    while (*pp) {
        entry *e = *pp;
        if (e->key.hash == key->hash && e->key.len == key->len &&
            memcmp(e->key.bytes, key->bytes, key->len) == 0) {
            *pp = e->next; /* move to front */
            e->next = head;
            head = e;
            pt_compiled_retain(e->c);
            found = e->c;
            break;
        }
        pp = &e->next;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

void pt_cp_cache_insert(pt_cp_key *key, pt_compiled *c) {
    pthread_mutex_lock(&lock);
    int cap = capacity_locked();
    entry *e = cap > 0 ? calloc(1, sizeof *e) : NULL;
    if (e) {
        e->key = *key;
        memset(key, 0, sizeof *key);
        pt_compiled_retain(c);
        e->c = c;
        e->next = head;
        head = e;
        ++count;
        evict_to(cap);
    }
    pthread_mutex_unlock(&lock);
    pt_cp_key_free(key);
}

int pt_cp_cache_capacity(void) {
    pthread_mutex_lock(&lock);
    int c = capacity_locked();
    pthread_mutex_unlock(&lock);
    return c;
}

pt_status pt_cp_cache_set_capacity(int cap) {
    if (cap < 0) return pt_err(dnnl_invalid_arguments, "compiled partition cache capacity %d < 0", cap);
    pthread_mutex_lock(&lock);
    capacity = cap;
    evict_to(cap);
    pthread_mutex_unlock(&lock);
    return dnnl_success;
}
