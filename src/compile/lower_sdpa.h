/* Lowering of the attention partitions (SDPA forward, SDPA / GQA training
 * backward) into the fused kernels' plans (kernels/fused/sdpa_plan.h,
 * sdpa_bwd_plan.h), and the partition-reading helpers both lowerings share.
 *
 * A lowering starts from the roles the matcher gave the ops
 * (partition/pattern_sdpa.h, pattern_sdpa_bwd.h): it takes the anchors (the
 * MatMuls, SoftMax, Exp, ...) by role, follows the data flow between them
 * inside the partition, and marks every op it has read; an op left unread
 * means a form the kernel does not know, and the partition runs op by op. */
#ifndef PARTITA_COMPILE_LOWER_SDPA_H
#define PARTITA_COMPILE_LOWER_SDPA_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/op.h"
#include "compile/lower_ctx.h"
#include "kernels/kernel.h"

/* pt_lower_fn of PT_FUSED_SDPA_FWD and PT_FUSED_SDPA_BWD. */
pt_status pt_lower_sdpa_fwd(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                            const pt_lt *out, size_t nout, pt_fused *fused,
                            const pt_lower_ctx *lc);
pt_status pt_lower_sdpa_bwd(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                            const pt_lt *out, size_t nout, pt_fused *fused,
                            const pt_lower_ctx *lc);

/* ---- shared by lower_sdpa.c and lower_sdpa_bwd.c ---- */

/* The partition being lowered; used[i] marks ops already read. */
typedef struct {
    const pt_op *const *ops;
    const int *roles;
    size_t nops;
    const pt_lt *in;
    size_t nin;
    const pt_lt *out;
    size_t nout;
    bool *used;
} pt_sdpa_part;

/* A strided tensor as seen by an op, located in a port. */
typedef struct {
    int ndims;
    int64_t dims[DNNL_MAX_NDIMS];
    int64_t strides[DNNL_MAX_NDIMS];
    bool is_out;
    int port;
    dnnl_data_type_t dt;
} pt_sdpa_tensor;

/* The op with `role` (the first one), or -1. */
int pt_sdpa_role_op(const pt_sdpa_part *x, int role);
/* The op producing tensor `id`, or -1 (a partition input). */
int pt_sdpa_producer(const pt_sdpa_part *x, size_t id);
/* Consumers of `id` inside the partition, one entry per (op, input) pair;
 * returns their count (list holds the first `cap`). */
int pt_sdpa_consumers(const pt_sdpa_part *x, size_t id, int *list, int cap);
/* A strided port with known dims as a tensor (strides 0 on dims of 1). */
bool pt_sdpa_port_tensor(const pt_lt *lt, bool is_out, int port, pt_sdpa_tensor *t);

/* Every dim of t is 1 (a one-element tensor). */
static inline bool pt_sdpa_one_element(const pt_sdpa_tensor *t) {
    for (int d = 0; d < t->ndims; ++d)
        if (t->dims[d] != 1) return false;
    return true;
}

/* Strides of `t` broadcast (numpy, right-aligned) into the iteration space
 * [batch (nb dims bdims)..., rows, cols]: bs[i], *rs, *cs receive the strides
 * of the dims t has (left as they are where t broadcasts).  False when a dim
 * of t neither matches nor is 1. */
bool pt_sdpa_bcast_strides(const pt_sdpa_tensor *t, int nb, const int64_t *bdims, int64_t rows, int64_t cols,
                           int64_t *bs, int64_t *rs, int64_t *cs);

#endif
