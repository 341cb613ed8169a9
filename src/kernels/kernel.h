/* The contract between the execution plan and every kernel (reference or
 * optimized): decoded parameters, concrete tensor views for its inputs and
 * outputs, and an execution context with planned scratch. */
#ifndef PARTITA_KERNELS_KERNEL_H
#define PARTITA_KERNELS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ir/logical_tensor.h"
#include "ir/status.h"

/* Index of the calling thread inside a parallel region (0 without OpenMP). */
static inline int pt_thread_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* A concrete tensor: known dims, strided layout (strides in elements, also for
 * 4-bit types), data pointer.  Host-scalar tensors have ndims == 0 and point to
 * the scalar value. */
typedef struct {
    pt_lt lt;
    void *data;
} pt_tview;

typedef struct pt_exec_ctx {
    dnnl_fpmath_mode_t fpmath; /* mode in effect for the partition */
    int apply_to_int;
    int nthreads;              /* OpenMP threads a kernel may use */
    void *scratch;             /* scratch_bytes planned at compile time for this kernel */
    size_t scratch_bytes;
    /* How this execution names its constant inputs for the constant tensor
     * cache (seed 004, runtime/const_cache.h): the key of
     * execute_with_options when has_key, and per input (the kernel's `in`
     * order) the id given to tensor_create_with_id, SIZE_MAX when none;
     * in_ids may be NULL. */
    bool has_key;
    size_t key;
    const size_t *in_ids;
} pt_exec_ctx;

/* Runs one op.  `params` is the kernel's own decoded parameter struct (made
 * once at compile time by the op's decoder, see compile/ref_bind.h).  `in`
 * holds the op's present inputs in port order (nin may be smaller than the
 * schema maximum when trailing optional inputs are absent); same for `out`.
 * Shapes have already been inferred and checked at compile time, but kernels
 * must still reject what they cannot compute with dnnl_unimplemented /
 * dnnl_invalid_arguments (never crash).  Output buffers may alias inputs only
 * where the op allows in-place. */
typedef pt_status (*pt_kernel_fn)(const void *params, const pt_tview *in, size_t nin, const pt_tview *out,
                                  size_t nout, const pt_exec_ctx *ctx);

/* A kernel bound to its decoded parameters: what a compiled step (or a fused
 * kernel that runs a reference kernel inside) keeps. */
typedef struct pt_bound_kernel {
    pt_kernel_fn run;
    void *params;                 /* passed to run */
    void (*release)(void *params); /* frees params; NULL when nothing to free */
    size_t scratch_bytes;         /* ctx->scratch the kernel needs */
} pt_bound_kernel;

/* A fused kernel prepared for one compiled partition: it runs the whole
 * partition at once.  `in`/`out` are the partition's ports in the compiled
 * order; `scratch` holds scratch_bytes (shared by all threads: the kernel
 * splits it per thread itself). */
#define PT_FUSED_MAX_PACKED 4

typedef struct pt_fused {
    pt_status (*run)(const struct pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out,
                     size_t nout, void *scratch, const pt_exec_ctx *ctx);
    void (*release)(struct pt_fused *f); /* frees `state`; may be NULL */
    void *state;
    size_t scratch_bytes;
    /* An in-place pair the kernel supports (the in-place port query of the API): output
     * port `inplace_out` may be given the buffer of input port `inplace_in`.
     * Only meaningful when has_inplace. */
    bool has_inplace;
    size_t inplace_in, inplace_out;
    /* For verbose lines: the microkernel the fused kernel runs on, NULL
     * when it has none in particular (static storage). */
    const char *kernel_name;
    /* Ports the kernel reads or writes in a registered opaque layout (seed
     * 004 option 2: packed weights), with that layout's id.  Set by the
     * lowering (pt_fused_add_packed); the compiled partition reports the
     * layouts for those ports. */
    int npacked;
    struct {
        bool is_out;
        size_t port, layout;
    } packed[PT_FUSED_MAX_PACKED];
} pt_fused;

static inline void pt_fused_add_packed(pt_fused *f, bool is_out, size_t port, size_t layout) {
    if (f->npacked < PT_FUSED_MAX_PACKED) {
        f->packed[f->npacked].is_out = is_out;
        f->packed[f->npacked].port = port;
        f->packed[f->npacked].layout = layout;
        ++f->npacked;
    }
}

/* The opaque layout the kernel uses for a port, 0 for none. */
static inline size_t pt_fused_packed_layout(const pt_fused *f, bool is_out, size_t port) {
    for (int i = 0; f && i < f->npacked; ++i)
        if (f->packed[i].is_out == is_out && f->packed[i].port == port) return f->packed[i].layout;
    return 0;
}

/* Reference kernel for an op kind (NULL for End / Wildcard, which never run). */
pt_kernel_fn pt_ref_kernel(int kind);

#endif
