/* The K or V input of the fused SDPA forward kernel in the panels its
 * microkernel reads, as a user-visible opaque layout (seed 004, option 2).
 *
 * One item per K / V head (every index of the tensor's dims other than the
 * two the product reads): the whole head packed as one GEMM B operand,
 * exactly pt_gemm_pack_b_all's whole-K strips (gemm.h) of a plain weight in
 * the GEMM packed-B layout `item_layout`.  For K the panels' rows (N) are
 * the keys and their K is the head size, for V the rows are the value
 * columns and K the keys.  Items follow one another in row-major order of
 * the other dims, each item_bytes long (a multiple of 64).  The layout
 * depends on the microkernel, the head's geometry, the plain type and the
 * math mode's rounding; not on Q or the kernel's blocks. */
#ifndef PARTITA_KERNELS_FUSED_SDPA_PACKED_LAYOUT_H
#define PARTITA_KERNELS_FUSED_SDPA_PACKED_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/logical_tensor.h"
#include "kernels/gemm/gemm.h"

typedef struct pt_sdpa_packed_layout {
    char tag[8];        /* "ptsdpaB" */
    size_t item_layout; /* GEMM packed-B layout id of one head */
    int ndims;
    int64_t dims[DNNL_MAX_NDIMS]; /* the plain tensor's dims */
    int n_dim, k_dim;             /* its dims along the panels' rows and along K; -1 for an extent of 1 */
    int64_t items;                /* heads */
    size_t item_bytes;
} pt_sdpa_packed_layout;

/* Describes and registers the layout of a plain tensor with dims
 * dims[0..ndims) whose dim n_dim holds the N rows and dim k_dim the K of
 * each head's panels (-1 where that extent is 1), packed by microkernel
 * `uk` from type `dt` with rounding `round` (an F32 kind's math mode).
 * Returns the opaque layout id, 0 when it cannot be one (the GEMM engine
 * does not describe such panels, or a registry is full). */
size_t pt_sdpa_packed_register(const pt_gemm_ukernel *uk, dnnl_data_type_t dt, dnnl_fpmath_mode_t round, int ndims,
                               const int64_t *dims, int n_dim, int k_dim, pt_sdpa_packed_layout *out);

/* The description behind `id`; false when `id` is not an SDPA layout. */
bool pt_sdpa_packed_find(size_t id, pt_sdpa_packed_layout *l);

/* Plans and runs a Reorder between a plain tensor (`plain`: same dims, any
 * strides) and layout `l`.  Init: dnnl_invalid_arguments for another shape
 * or type, or a microkernel this CPU cannot run. */
typedef struct pt_sdpa_packed_reorder {
    pt_sdpa_packed_layout l;
    pt_gemm_plan item; /* one head, with the plain tensor's strides over N and K */
    int64_t plain_strides[DNNL_MAX_NDIMS];
    size_t plain_elem_bytes;
} pt_sdpa_packed_reorder;

pt_status pt_sdpa_packed_reorder_init(size_t id, const pt_lt *plain, pt_sdpa_packed_reorder *r);
void pt_sdpa_packed_reorder_run(const pt_sdpa_packed_reorder *r, bool to_packed, const void *src, void *dst);

#endif
