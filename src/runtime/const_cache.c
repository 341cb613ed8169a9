/* The constant tensor cache (see const_cache.h): a small list under one
 * mutex; entries are few (one per constant weight of each compiled
 * partition), so a linear search is cheaper than a hash table would be to
 * keep right. */
#include "runtime/const_cache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "runtime/settings.h"

struct pt_const_entry {
    pt_const_key key;
    void *data;
    size_t bytes;
    int users;          /* executions holding it */
    bool filled, dead;  /* dead: evicted or forgotten while in use */
    uint64_t fingerprint; /* of the input it was filled from */
    uint64_t claimed;     /* fingerprint the current users share (valid while users > 0) */
    uint64_t last_use;
    pthread_mutex_t fill_lock;
    pt_const_entry *next;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pt_const_entry *g_head;
static size_t g_bytes;
static uint64_t g_clock;

static bool same_key(const pt_const_key *a, const pt_const_key *b) {
    return a->owner == b->owner && a->tag == b->tag && a->name == b->name && a->value == b->value;
}

static void entry_free(pt_const_entry *e) {
    pthread_mutex_destroy(&e->fill_lock);
    free(e->data);
    free(e);
}

/* Unlinks e (g_lock held); frees it unless an execution still holds it. */
static void unlink_entry(pt_const_entry **link) {
    pt_const_entry *e = *link;
    *link = e->next;
    g_bytes -= e->bytes;
    if (e->users == 0) entry_free(e);
    else e->dead = true;
}

/* Evicts least recently used idle entries until `need` more bytes fit. */
static bool make_room(size_t need, size_t cap) {
    while (g_bytes + need > cap) {
        pt_const_entry **victim = NULL;
        for (pt_const_entry **l = &g_head; *l; l = &(*l)->next)
            if ((*l)->users == 0 && (!victim || (*l)->last_use < (*victim)->last_use)) victim = l;
        if (!victim) return false;
        unlink_entry(victim);
    }
    return true;
}

uint64_t pt_const_fingerprint(const void *data, size_t bytes) {
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull ^ (uint64_t)bytes;
    enum { SAMPLES = 32 };
    for (int i = 0; i < SAMPLES && bytes; ++i) {
        size_t n = bytes < 8 ? bytes : 8;
        size_t at = bytes <= 8 ? 0 : (size_t)((unsigned long long)(bytes - 8) * (unsigned)i / (SAMPLES - 1));
        for (size_t b = 0; b < n; ++b) h = (h ^ p[at + b]) * 1099511628211ull;
    }
    return h;
}

pt_status pt_const_cache_acquire(const pt_const_key *key, uint64_t fingerprint, size_t bytes,
                                 pt_const_fill_fn fill, void *ctx, pt_const_entry **entry, const void **data) {
    *entry = NULL, *data = NULL;
    size_t cap_mb = pt_const_cache_capacity_mb(dnnl_cpu);
    size_t cap = cap_mb > SIZE_MAX / (1024 * 1024) ? SIZE_MAX : cap_mb * 1024 * 1024;
    if (cap == 0 || bytes == 0 || bytes > cap) return dnnl_success;
    pthread_mutex_lock(&g_lock);
    pt_const_entry *e = g_head;
    while (e && !same_key(&e->key, key)) e = e->next;
    if (!e) {
        if (!make_room(bytes, cap)) {
            pthread_mutex_unlock(&g_lock);
            return dnnl_success;
        }
        e = calloc(1, sizeof *e);
        void *mem = NULL;
        if (!e || posix_memalign(&mem, 64, bytes) != 0) {
            free(e);
            pthread_mutex_unlock(&g_lock);
            return dnnl_success; /* no room: the caller packs into its scratch */
        }
        e->key = *key;
        e->data = mem;
        e->bytes = bytes;
        pthread_mutex_init(&e->fill_lock, NULL);
        e->next = g_head;
        g_head = e;
        g_bytes += bytes;
    }
    /* Executions holding the entry read it while this one would pack other
     * values into it: this one packs into its own scratch instead. */
    if (e->users > 0 && e->claimed != fingerprint) {
        pthread_mutex_unlock(&g_lock);
        return dnnl_success;
    }
    if (e->users == 0) e->claimed = fingerprint;
    e->users++;
    e->last_use = ++g_clock;
    pthread_mutex_unlock(&g_lock);
    pthread_mutex_lock(&e->fill_lock);
    if (!e->filled || e->fingerprint != fingerprint) {
        if (e->filled) pt_verbose(2, "info,constant cache,input changed under the same name: packed again");
        fill(ctx, e->data);
        e->filled = true;
        e->fingerprint = fingerprint;
        pt_verbose(2, "info,constant cache,packed %zu bytes", bytes);
    }
    pthread_mutex_unlock(&e->fill_lock);
    *entry = e;
    *data = e->data;
    return dnnl_success;
}

void pt_const_cache_release(pt_const_entry *e) {
    if (!e) return;
    pthread_mutex_lock(&g_lock);
    bool drop = --e->users == 0 && e->dead;
    pthread_mutex_unlock(&g_lock);
    if (drop) entry_free(e);
}

void pt_const_cache_forget_owner(const void *owner) {
    pthread_mutex_lock(&g_lock);
    for (pt_const_entry **l = &g_head; *l;) {
        if ((*l)->key.owner == owner) unlink_entry(l);
        else l = &(*l)->next;
    }
    pthread_mutex_unlock(&g_lock);
}

size_t pt_const_cache_bytes(void) {
    pthread_mutex_lock(&g_lock);
    size_t b = g_bytes;
    pthread_mutex_unlock(&g_lock);
    return b;
}

size_t pt_const_cache_entries(void) {
    pthread_mutex_lock(&g_lock);
    size_t n = 0;
    for (pt_const_entry *e = g_head; e; e = e->next) ++n;
    pthread_mutex_unlock(&g_lock);
    return n;
}

void pt_const_cache_clear(void) {
    pthread_mutex_lock(&g_lock);
    while (g_head) unlink_entry(&g_head);
    pthread_mutex_unlock(&g_lock);
}
