/* Fused kernel of the chain rows that have no MatMul / Convolution anchor
 * (docs/fusion.md; numerics in docs/numerics.md): pooling, normalization,
 * Interpolate, reduction, SoftMax, Reorder, Concat and Dropout partitions
 * and pure element-wise chains (fp_binary_post_ops, fp_eltwise_binary,
 * sum_fusion, typecast_quantize_fusion, ...).
 *
 * A partition is read as
 *   element-wise prologue -> at most one anchor op -> element-wise epilogue
 *   -> optional Dropout
 * where "element-wise" is what kernels/fused/postops.h compiles (a Reorder
 * counts as a TypeCast: it changes only the layout, and the output is
 * written with its own strides anyway), the anchor is the op matched as
 * PT_CHAIN_ANCHOR when the programs cannot run it (its reference kernel,
 * bound at lowering, runs it; a Concat is placed by the kernel itself), and
 * the prologue is the ops the anchor's inputs depend on.
 *   - No anchor: one program over the output's iteration space, applied run
 *     by run and stored in the output's type; no intermediate exists.
 *   - With an anchor: each anchor input computed by the prologue is written
 *     once into an f32 buffer (the anchor needs all of it); the anchor's
 *     reference kernel writes its output into one f32 buffer (or straight
 *     into the partition output when nothing follows it; secondary outputs
 *     such as SoftMax stats or LayerNorm mean / variance go straight to
 *     their ports); the epilogue program then runs over that buffer in
 *     place and stores into the output.  Concat needs no buffer: each
 *     input's runs go through its prologue program and then straight
 *     through the epilogue at their place in the output.
 *   - Dropout at the end is applied per element after the program with the
 *     reference's Philox words (kernels/ref/philox.h).
 * Numerics follow the benchmark reference, which the op-by-op path
 * of chain partitions also follows (compile.c widen_intermediates):
 * intermediates stay f32 (bf16/f16 intermediates are not rounded), integer
 * and f8 intermediates are rounded to their types, outputs are converted to
 * their declared types.  Anything else makes the lowering
 * (compile/lower_chain.c) return dnnl_unimplemented, and the partition runs
 * op by op. */
#ifndef PARTITA_KERNELS_FUSED_CHAIN_POST_OPS_H
#define PARTITA_KERNELS_FUSED_CHAIN_POST_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/fused/postops.h"
#include "kernels/kernel.h"

#define CH_MAXD DNNL_MAX_NDIMS
#define CH_MAXP 64           /* ports of one op (compile.c's limit too) */
#define CH_RUN 512           /* elements per program run */
#define CH_PAR_ELEMS 16384   /* below this a pass runs on one thread */

/* An iteration space walked in runs along its last dim. */
typedef struct {
    int ndims;
    int64_t dims[CH_MAXD];
    int64_t inner, outer, chunks; /* last dim, product of the others, runs per row */
} pt_ch_space;

/* An anchor input: a partition port handed to the kernel as it is, or the
 * result of a prologue program written into f32 memory. */
typedef struct {
    pt_postops *prog; /* NULL: port `port`, or the buffer of input `share` */
    int port;
    int share;        /* >= 0: the same tensor as anchor input `share` */
    pt_ch_space sp;
    size_t bound_off;
    size_t buf_off;   /* its dense f32 buffer */
    int64_t cat_off;  /* Concat: its first index along the axis */
    pt_lt lt;         /* the anchor's view of it (f32, dense) */
} pt_ch_input;

/* An anchor output other than the one the epilogue reads. */
typedef struct {
    int port;       /* partition output, or -1: a scratch buffer */
    size_t buf_off;
    pt_lt lt;       /* scratch: dense, declared type */
} pt_ch_aux;

/* The kernel's state, filled by compile/lower_chain.c. */
typedef struct {
    /* anchor (has_anchor false: a pure element-wise chain) */
    bool has_anchor;
    bool concat;                /* the anchor is a Concat, run by the kernel itself */
    pt_bound_kernel kernel;     /* otherwise its reference kernel, bound at lowering */
    dnnl_data_type_t anchor_dt; /* the anchor's output type */
    size_t kscratch_off;        /* the bound kernel's scratch */
    int cat_axis;
    pt_ch_input *ain;
    size_t nain;
    pt_ch_aux *aux; /* anchor outputs 1.. */
    size_t naux;
    bool direct; /* the anchor writes the partition output itself */
    size_t abuf_off;
    pt_lt abuf_lt; /* the anchor output as an f32 dense view */
    bool round_anchor;
    /* the epilogue (the whole chain when there is no anchor) */
    pt_postops *epi;
    size_t epi_bound_off;
    pt_ch_space sp; /* the main output's dims */
    int main_out;
    /* Dropout tail */
    bool dropout;
    int drop_port[3]; /* seed, offset, probability */
    int mask_out;     /* -1: no mask port */
    /* scratch */
    size_t nin, nout;
    int nthr;
    size_t shared_bytes, thread_bytes;
} pt_ch_state;

/* The iteration space of dims[0..ndims). */
void pt_ch_space_init(pt_ch_space *sp, int ndims, const int64_t *dims);

/* Plans the scratch of state `s` (heap, filled by the lowering; taken over
 * and released with the kernel) and fills `fused`.  On failure `s` is
 * released. */
pt_status pt_chain_post_ops_finish(pt_ch_state *s, pt_fused *fused);
void pt_ch_state_free(pt_ch_state *s);

#endif
