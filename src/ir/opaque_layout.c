/* Registry of opaque layouts (see ir/logical_tensor.h).  Entries are never
 * removed: a layout id handed to the user stays valid for the process, as
 * a logical tensor holding it may outlive every compiled partition. */
#include <pthread.h>
#include <string.h>

#include "ir/logical_tensor.h"

#define PT_OPAQUE_MAX 1024

typedef struct {
    size_t bytes;
    size_t desc_len;
    unsigned char desc[PT_OPAQUE_DESC_MAX];
} opaque_entry;

static opaque_entry g_entries[PT_OPAQUE_MAX];
static size_t g_count;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

size_t pt_opaque_layout_register(size_t bytes, const void *desc, size_t desc_len) {
    if (!desc || desc_len == 0 || desc_len > PT_OPAQUE_DESC_MAX) return 0;
    size_t id = 0;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_count && !id; ++i)
        if (g_entries[i].bytes == bytes && g_entries[i].desc_len == desc_len &&
            memcmp(g_entries[i].desc, desc, desc_len) == 0)
            id = i + 1;
    if (!id && g_count < PT_OPAQUE_MAX) {
        opaque_entry *e = &g_entries[g_count];
        e->bytes = bytes;
        e->desc_len = desc_len;
        memcpy(e->desc, desc, desc_len);
        id = ++g_count;
    }
    pthread_mutex_unlock(&g_lock);
    return id;
}

bool pt_opaque_layout_find(size_t id, size_t *bytes, void *desc, size_t desc_cap, size_t *desc_len) {
    bool found = false;
    pthread_mutex_lock(&g_lock);
    if (id >= 1 && id <= g_count) {
        const opaque_entry *e = &g_entries[id - 1];
        if (bytes) *bytes = e->bytes;
        if (desc_len) *desc_len = e->desc_len;
        if (desc) memcpy(desc, e->desc, e->desc_len < desc_cap ? e->desc_len : desc_cap);
        found = true;
    }
    pthread_mutex_unlock(&g_lock);
    return found;
}
