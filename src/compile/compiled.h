/* Compiled partitions: an execution plan for concrete shapes and layouts. */
#ifndef PARTITA_COMPILE_COMPILED_H
#define PARTITA_COMPILE_COMPILED_H

#include <stdbool.h>
#include <stddef.h>

#include "kernels/kernel.h"
#include "partition/partition.h"
#include "runtime/engine.h"
#include "runtime/tensor.h"

/* Execute keeps its per-call tables on the stack (it allocates nothing but
 * a scratchpad the caller did not pass): compile rejects plans beyond these
 * bounds.  An op has at most PT_EXEC_MAX_PORTS inputs and as many outputs
 * (shape inference has the same limit); a fused kernel's ports share the
 * same 2 * PT_EXEC_MAX_PORTS views. */
#define PT_EXEC_MAX_SLOTS 1024
#define PT_EXEC_MAX_PORTS 64

typedef enum { PT_SLOT_INPUT, PT_SLOT_OUTPUT, PT_SLOT_SCRATCH } pt_slot_kind;

/* One distinct tensor of the plan. */
typedef struct {
    size_t id;
    pt_slot_kind kind;
    size_t port;   /* index into inputs / outputs for INPUT / OUTPUT */
    size_t offset; /* byte offset in the scratchpad for SCRATCH */
    pt_lt lt;      /* concrete, strided */
} pt_slot;

typedef struct {
    pt_op *op; /* copy with concrete logical tensors */
    pt_bound_kernel kernel; /* reference kernel with its decoded parameters */
    int *in_slot;
    int *out_slot;
} pt_step;

typedef struct pt_compiled {
    int refcount;
    dnnl_engine_kind_t ekind;
    dnnl_fpmath_mode_t fpmath;
    int apply_to_int;
    pt_lt *inputs; /* compiled port descriptions, same order as the partition's ports */
    size_t nin;
    pt_lt *outputs;
    size_t nout;
    pt_step *steps;
    size_t nsteps;
    pt_slot *slots;
    size_t nslots;
    size_t scratch_size;
    size_t kernel_scratch_offset; /* where the steps' kernel scratch starts */
    dnnl_graph_inplace_pair_t *inplace;
    size_t ninplace;
    bool has_fused; /* the partition runs through `fused` instead of `steps` */
    pt_fused fused;
    bool outputs_empty; /* every output has zero elements: executing writes nothing and runs nothing */
    char *verbose;  /* "cpu,<partition>,<row>,<ops>,<ports>,fpm:..,kernel:..,isa:.." for verbose lines */
} pt_compiled;

struct dnnl_graph_compiled_partition {
    struct dnnl_graph_partition *part; /* own handle on the partition */
    pt_compiled *c;                    /* NULL until compiled */
};

/* Scratchpad bytes an execution needs (none where the outputs are empty,
 * however the kernels sized their staging buffers). */
static inline size_t pt_compiled_scratch_bytes(const pt_compiled *c) {
    return c->outputs_empty ? 0 : c->has_fused ? c->fused.scratch_bytes : c->scratch_size;
}

/* The size the scratchpad logical tensor reports: the kernels' need plus
 * room to start it on a 64-byte boundary, whatever the caller's buffer
 * alignment (AMX tile rows and vector panels split cache lines otherwise). */
static inline size_t pt_compiled_scratchpad_bytes(const pt_compiled *c) {
    const size_t need = pt_compiled_scratch_bytes(c);
    return need ? need + PT_ALIGNMENT - 1 : 0;
}

void pt_compiled_retain(pt_compiled *c);
void pt_compiled_release(pt_compiled *c);

/* Builds the plan (through the compiled-partition cache). */
pt_status pt_compile(const struct dnnl_graph_partition *part, size_t nin, const pt_lt *const *inputs,
                     size_t nout, const pt_lt *const *outputs, dnnl_engine_t engine,
                     pt_compiled **out);
/* Shape inference only (dnnl_graph_partition_infer_shape). */
pt_status pt_partition_infer_shapes(const pt_partition_impl *p, size_t nin,
                                    const pt_lt *const *inputs, size_t nout, pt_lt *const *outputs);
/* `key` (NULL: none) is the execute_with_options key naming the constant
 * inputs of this execution for the constant tensor cache. */
pt_status pt_execute(const pt_compiled *c, dnnl_stream_t stream, size_t nin,
                     const_dnnl_graph_tensor_t *inputs, size_t nout,
                     const_dnnl_graph_tensor_t *outputs, const_dnnl_graph_tensor_t scratchpad,
                     const size_t *key);

#endif
