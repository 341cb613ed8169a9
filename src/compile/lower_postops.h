/* Compiling an element-wise chain of ops into a fused program
 * (kernels/fused/postops.h says what programs compute). */
#ifndef PARTITA_COMPILE_LOWER_POSTOPS_H
#define PARTITA_COMPILE_LOWER_POSTOPS_H

#include <stdbool.h>
#include <stddef.h>

#include "ir/op.h"
#include "kernels/fused/postops.h"

typedef struct {
    const pt_op *const *ops; /* chain ops in execution order (may be 0 ops) */
    size_t nops;
    bool has_src;            /* a value enters from the caller's buffer */
    size_t src_id;           /* its logical tensor id (has_src) */
    dnnl_data_type_t src_dt; /* its declared type (has_src; the caller rounded to it) */
    int src_ndims;           /* its dims (has_src; src_dims NULL: the iteration dims): */
    const int64_t *src_dims; /* the iteration dims, or those without leading 1s */
    int ndims;               /* iteration space: the result's dims */
    const int64_t *dims;
    size_t result_id;        /* tensor the chain computes: an op output, the src,
                              * or (no ops, no src) an input port to load */
    bool round_result;       /* round the result to its declared type in apply() */
    bool round_floats;       /* also round to bf16/f16 declared types (see below) */
    const pt_lt *in;         /* partition input ports (compiled order) */
    size_t nin;
} pt_postops_desc;


/* Compiles the chain.  dnnl_unimplemented (with a verbose line) for ops,
 * shapes or operand forms it does not handle; dnnl_out_of_memory.  Released
 * with pt_postops_destroy. */
pt_status pt_postops_create(const pt_postops_desc *d, pt_postops **out);

#endif
