/* partition -> execution plan: match the caller's logical tensors to ports,
 * infer every shape through the op schemas, choose layouts for `any`
 * outputs, place intermediate tensors in the scratchpad. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compiled.h"
#include "compile/fused_lowering.h"
#include "compile/lower_fused.h"
#include "compile/lower_single_op.h"
#include "compile/ref_bind.h"
#include "ops/op_schema.h"
#include "partition/pattern_chain.h"
#include "partition/pattern_rows.h"
#include "compile/cp_cache.h"
#include "ir/dtype.h"
#include "runtime/clock.h"
#include "runtime/cpu.h"
#include "runtime/settings.h"

/* Small id -> logical tensor map (partitions hold few tensors). */
typedef struct {
    size_t *ids;
    pt_lt *lts;
    size_t n, cap;
} lt_map;

static pt_lt *map_find(lt_map *m, size_t id) {
    for (size_t i = 0; i < m->n; ++i)
        if (m->ids[i] == id) return &m->lts[i];
    return NULL;
}

static pt_status map_put(lt_map *m, const pt_lt *lt) {
    pt_lt *e = map_find(m, lt->id);
    if (e) {
        *e = *lt;
        return dnnl_success;
    }
    if (m->n == m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 16;
        size_t *ni = realloc(m->ids, nc * sizeof *ni);
        if (!ni) return dnnl_out_of_memory;
        m->ids = ni;
        pt_lt *nl = realloc(m->lts, nc * sizeof *nl);
        if (!nl) return dnnl_out_of_memory;
        m->lts = nl;
        m->cap = nc;
    }
    m->ids[m->n] = lt->id;
    m->lts[m->n++] = *lt;
    return dnnl_success;
}

static void map_free(lt_map *m) {
    free(m->ids);
    free(m->lts);
}

static const pt_lt *find_given(size_t n, const pt_lt *const *arr, size_t id) {
    for (size_t i = 0; i < n; ++i)
        if (arr[i] && arr[i]->id == id) return arr[i];
    return NULL;
}

static bool is_partition_output(const pt_partition_impl *p, size_t id) {
    for (size_t i = 0; i < p->nout; ++i)
        if (p->outputs[i].id == id) return true;
    return false;
}

/* Gives a fully known output a concrete layout: dense strides for any/undef
 * layouts or unknown strides. */
static void concretize_layout(pt_lt *lt, bool keep_strides) {
    if (lt->ndims < 0) return;
    bool strides_known = lt->layout_type == dnnl_graph_layout_type_strided;
    for (int d = 0; d < lt->ndims && strides_known; ++d)
        if (lt->layout.strides[d] < 0) strides_known = false;
    if (!keep_strides || !strides_known) pt_lt_make_dense(lt);
}

/* Checks the caller's input descriptions and runs shape inference through
 * the partition's ops.  With `strict`, every shape must end up known. */
static pt_status propagate(const pt_partition_impl *p, size_t nin, const pt_lt *const *inputs,
                           size_t nout, const pt_lt *const *outputs, bool strict, lt_map *map) {
    char buf[160];
    for (size_t i = 0; i < p->nin; ++i) {
        const pt_lt *port = &p->inputs[i];
        const pt_lt *given = find_given(nin, inputs, port->id);
        if (!given)
            return pt_err(dnnl_invalid_arguments, "partition %zu: no logical tensor given for input port %zu",
                          p->id, port->id);
        PT_CHECK(pt_lt_check(given, "compile"));
        if (given->data_type != port->data_type)
            return pt_err(dnnl_invalid_arguments,
                          "partition %zu: input %zu has data type %d, port expects %d", p->id,
                          port->id, (int)given->data_type, (int)port->data_type);
        if (!pt_lt_shape_known(given)) {
            pt_lt_describe(given, buf, sizeof buf);
            return pt_err(dnnl_invalid_shape, "partition %zu: input %zu shape not known (%s)", p->id,
                          port->id, buf);
        }
        if (port->ndims >= 0 && given->ndims != port->ndims)
            return pt_err(dnnl_invalid_shape, "partition %zu: input %zu has rank %d, port has rank %d",
                          p->id, port->id, given->ndims, port->ndims);
        /* `any` is allowed on constant inputs only (seed 004 option 2: the
         * compiled partition chooses, query_logical_tensor reports it). */
        if (strict && given->layout_type != dnnl_graph_layout_type_strided &&
            given->layout_type != dnnl_graph_layout_type_opaque &&
            !(given->layout_type == dnnl_graph_layout_type_any &&
              given->property == dnnl_graph_tensor_property_constant))
            return pt_err(dnnl_invalid_arguments,
                          "partition %zu: input %zu must have a strided or opaque layout (any only if constant)",
                          p->id, port->id);
        size_t given_bytes;
        if (given->layout_type == dnnl_graph_layout_type_opaque && given->layout.layout_id != 0)
            PT_CHECK(pt_lt_span_bytes(given, &given_bytes)); /* refuses ids nobody registered */
        pt_lt lt = *given;
        if (lt.layout_type != dnnl_graph_layout_type_strided) pt_lt_make_dense(&lt);
        for (int d = 0; d < lt.ndims; ++d)
            if (lt.layout.strides[d] < 0 && lt.dims[d] != 1)
                return pt_err(dnnl_invalid_arguments, "partition %zu: input %zu has a negative or unknown stride",
                              p->id, port->id);
        size_t bytes;
        PT_CHECK(pt_lt_span_bytes(&lt, &bytes));
        PT_CHECK(map_put(map, &lt));
    }
    for (size_t o = 0; o < p->nops; ++o) {
        const pt_op *op = p->ops[o];
        if (op->kind == dnnl_graph_op_end) continue;
        pt_lt in[PT_EXEC_MAX_PORTS], out[PT_EXEC_MAX_PORTS];
        if (op->nin > PT_EXEC_MAX_PORTS || op->nout > PT_EXEC_MAX_PORTS)
            return pt_err(dnnl_unimplemented, "op %s#%zu has too many ports", pt_op_kind_name(op->kind), op->id);
        for (size_t k = 0; k < op->nin; ++k) {
            const pt_lt *lt = map_find(map, op->in[k].id);
            if (!lt) return pt_err(dnnl_invalid_graph, "op #%zu input %zu has no producer", op->id, op->in[k].id);
            in[k] = *lt;
        }
        for (size_t k = 0; k < op->nout; ++k) {
            out[k] = op->out[k];
            if (is_partition_output(p, out[k].id)) {
                const pt_lt *given = find_given(nout, outputs, out[k].id);
                if (given) {
                    if (given->data_type != out[k].data_type)
                        return pt_err(dnnl_invalid_arguments,
                                      "partition %zu: output %zu has data type %d, port expects %d",
                                      p->id, out[k].id, (int)given->data_type, (int)out[k].data_type);
                    out[k] = *given;
                }
            } else {
                /* Intermediate tensors are Partita's own: dense, shape re-inferred. */
                out[k].layout_type = dnnl_graph_layout_type_any;
            }
        }
        pt_status st = pt_schema_infer(op, in, out);
        if (st != dnnl_success) return st;
        for (size_t k = 0; k < op->nout; ++k) {
            if (strict && !pt_lt_shape_known(&out[k])) {
                pt_lt_describe(&out[k], buf, sizeof buf);
                return pt_err(dnnl_invalid_shape, "op %s#%zu: output %zu shape cannot be inferred (%s)",
                              pt_op_kind_name(op->kind), op->id, out[k].id, buf);
            }
            if (pt_lt_shape_known(&out[k])) {
                concretize_layout(&out[k], out[k].layout_type == dnnl_graph_layout_type_strided);
                /* Inferred and given outputs alike: a byte span that fits,
                 * and no two elements at one address. */
                size_t bytes;
                PT_CHECK(pt_lt_span_bytes(&out[k], &bytes));
                if (pt_lt_overlaps(&out[k]))
                    return pt_err(dnnl_invalid_arguments, "op %s#%zu: output %zu has overlapping strides",
                                  pt_op_kind_name(op->kind), op->id, out[k].id);
            }
            PT_CHECK(map_put(map, &out[k]));
        }
    }
    return dnnl_success;
}

pt_status pt_partition_infer_shapes(const pt_partition_impl *p, size_t nin, const pt_lt *const *inputs,
                                    size_t nout, pt_lt *const *outputs) {
    lt_map map = {0};
    pt_status st = propagate(p, nin, inputs, nout, (const pt_lt *const *)outputs, false, &map);
    for (size_t i = 0; i < nout && st == dnnl_success; ++i) {
        if (!outputs[i]) {
            st = pt_err(dnnl_invalid_arguments, "infer_shape: output %zu is NULL", i);
            break;
        }
        const pt_lt *lt = map_find(&map, outputs[i]->id);
        if (!lt || !is_partition_output(p, outputs[i]->id)) {
            st = pt_err(dnnl_invalid_arguments, "infer_shape: %zu is not an output port of partition %zu",
                        outputs[i]->id, p->id);
            break;
        }
        if (!pt_lt_shape_known(lt)) {
            st = pt_err(dnnl_invalid_shape, "infer_shape: shape of output %zu cannot be derived", lt->id);
            break;
        }
        if (pt_lt_shape_known(outputs[i])) continue; /* already fully known: left as it is */
        outputs[i]->ndims = lt->ndims;
        memcpy(outputs[i]->dims, lt->dims, sizeof lt->dims);
        if (outputs[i]->layout_type == dnnl_graph_layout_type_strided) {
            bool unknown = false;
            for (int d = 0; d < lt->ndims; ++d) unknown = unknown || outputs[i]->layout.strides[d] < 0;
            if (unknown) pt_dense_strides(lt->ndims, lt->dims, outputs[i]->layout.strides);
        }
    }
    map_free(&map);
    return st;
}

void pt_compiled_retain(pt_compiled *c) {
    if (c) __atomic_add_fetch(&c->refcount, 1, __ATOMIC_ACQ_REL);
}

void pt_compiled_release(pt_compiled *c) {
    if (!c || __atomic_sub_fetch(&c->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
    for (size_t i = 0; i < c->nsteps; ++i) {
        pt_bound_kernel_release(&c->steps[i].kernel);
        pt_op_free(c->steps[i].op);
        free(c->steps[i].in_slot);
        free(c->steps[i].out_slot);
    }
    free(c->steps);
    free(c->slots);
    free(c->inputs);
    free(c->outputs);
    free(c->inplace);
    free(c->verbose);
    if (c->has_fused && c->fused.release) c->fused.release(&c->fused);
    free(c);
}

static int slot_of(const pt_compiled *c, size_t id) {
    for (size_t i = 0; i < c->nslots; ++i)
        if (c->slots[i].id == id) return (int)i;
    return -1;
}

static pt_status add_slot(pt_compiled *c, size_t *cap, const pt_slot *s) {
    if (c->nslots == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        pt_slot *ns = realloc(c->slots, nc * sizeof *ns);
        if (!ns) return dnnl_out_of_memory;
        c->slots = ns;
        *cap = nc;
    }
    c->slots[c->nslots++] = *s;
    return dnnl_success;
}

/* Ops whose output may overwrite their first input (docs/ops.md). */
static bool inplace_capable(int kind) {
    return pt_op_is_unary_eltwise(kind) || pt_op_is_binary_eltwise(kind) ||
           kind == dnnl_graph_op_bias_add;
}

/* Post-op chain partitions keep their bf16/f16 intermediates in f32, as a
 * fused kernel does (docs/numerics.md): only the partition's outputs are
 * rounded to their declared types.  Attention and MLP rows are excluded:
 * their declared intermediate types are rounding points. */
static void widen_intermediates(const pt_partition_impl *p, const pt_compiled *c, lt_map *map) {
    for (size_t o = 0; o < p->nops; ++o) {
        const pt_op *op = p->ops[o];
        for (size_t k = 0; k < op->nout; ++k) {
            pt_lt *lt = map_find(map, op->out[k].id);
            if (!lt || slot_of(c, lt->id) >= 0) continue; /* a port keeps its type */
            if (lt->data_type == dnnl_bf16 || lt->data_type == dnnl_f16) lt->data_type = dnnl_f32;
        }
    }
}

/* A partition that runs op by op still runs its MatMuls on the GEMM engine;
 * the kernel scratch region grows to the largest step's need.  *gemm names
 * the microkernel of the last such step (NULL when none). */
/* How each input and output port was given, for the lowerings
 * (lower_ctx.h): 0 plain, SIZE_MAX a constant input given as `any`, else a
 * registered opaque layout id.  Both arrays NULL when every port is plain. */
static pt_status given_layouts(const pt_partition_impl *p, size_t nin, const pt_lt *const *inputs, size_t nout,
                               const pt_lt *const *outputs, size_t **in_layout, size_t **out_layout) {
    bool any_special = false;
    *in_layout = calloc(p->nin ? p->nin : 1, sizeof **in_layout);
    *out_layout = calloc(p->nout ? p->nout : 1, sizeof **out_layout);
    if (!*in_layout || !*out_layout) return dnnl_out_of_memory;
    for (size_t i = 0; i < p->nin; ++i) {
        const pt_lt *g = find_given(nin, inputs, p->inputs[i].id);
        if (!g) continue;
        if (g->layout_type == dnnl_graph_layout_type_any && g->property == dnnl_graph_tensor_property_constant)
            (*in_layout)[i] = SIZE_MAX, any_special = true;
        else if (g->layout_type == dnnl_graph_layout_type_opaque && g->layout.layout_id != 0)
            (*in_layout)[i] = g->layout.layout_id, any_special = true;
    }
    for (size_t i = 0; i < p->nout; ++i) {
        const pt_lt *g = find_given(nout, outputs, p->outputs[i].id);
        if (g && g->layout_type == dnnl_graph_layout_type_opaque && g->layout.layout_id != 0)
            (*out_layout)[i] = g->layout.layout_id, any_special = true;
    }
    if (!any_special) {
        free(*in_layout), free(*out_layout);
        *in_layout = *out_layout = NULL;
    }
    return dnnl_success;
}

/* The compiled ports take the opaque layout the fused kernel reads or
 * writes; a port given in a registered opaque layout that no kernel takes
 * is refused (its bytes are not the plain tensor the steps would read). */
static pt_status apply_packed_layouts(const pt_partition_impl *p, pt_compiled *c, const size_t *in_layout,
                                      const size_t *out_layout) {
    const pt_fused *f = c->has_fused ? &c->fused : NULL;
    for (size_t i = 0; in_layout && i < c->nin; ++i) {
        const size_t taken = pt_fused_packed_layout(f, false, i);
        if (taken) {
            c->inputs[i].layout_type = dnnl_graph_layout_type_opaque;
            c->inputs[i].layout.layout_id = taken;
        } else if (in_layout[i] != 0 && in_layout[i] != SIZE_MAX) {
            return pt_err(dnnl_invalid_arguments,
                          "partition %zu: input %zu is given in opaque layout %zu, which its kernel does not read",
                          p->id, c->inputs[i].id, in_layout[i]);
        }
    }
    for (size_t i = 0; out_layout && i < c->nout; ++i) {
        const size_t taken = pt_fused_packed_layout(f, true, i);
        if (taken) {
            c->outputs[i].layout_type = dnnl_graph_layout_type_opaque;
            c->outputs[i].layout.layout_id = taken;
        } else if (out_layout[i] != 0) {
            return pt_err(dnnl_invalid_arguments,
                          "partition %zu: output %zu is asked for in opaque layout %zu, which its kernel does not write",
                          p->id, c->outputs[i].id, out_layout[i]);
        }
    }
    return dnnl_success;
}

static pt_status bind_matmul_steps(pt_compiled *c, const pt_lower_ctx *partition_lc, const char **gemm) {
    size_t need = 0;
    *gemm = NULL;
    /* A step's ports are its op's, not the partition's: no given layouts. */
    pt_lower_ctx step_lc = *partition_lc;
    step_lc.in_layout = step_lc.out_layout = NULL;
    const pt_lower_ctx *lc = &step_lc;
    for (size_t i = 0; i < c->nsteps; ++i) {
        pt_step *st = &c->steps[i];
        pt_bound_kernel k;
        if (st->op->kind == dnnl_graph_op_matmul && pt_bind_matmul_engine(st->op, lc, &k) == dnnl_success) {
            pt_bound_kernel_release(&st->kernel);
            st->kernel = k;
            *gemm = ((const pt_fused *)k.params)->kernel_name;
        }
        if (st->kernel.scratch_bytes > need) need = st->kernel.scratch_bytes;
    }
    size_t total = c->kernel_scratch_offset + (need + PT_ALIGNMENT - 1) / PT_ALIGNMENT * PT_ALIGNMENT;
    if (total > c->scratch_size) c->scratch_size = total;
    return dnnl_success;
}

/* ---- verbose description ------------------------------------------------- */

typedef struct {
    char *buf;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) {
    if (!t->buf || t->len + 1 >= t->cap) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    t->len = t->len + (size_t)n < t->cap ? t->len + (size_t)n : t->cap - 1;
}

static void put_lt(text *t, const char *what, size_t i, const pt_lt *lt) {
    put(t, "%s%s%zu_%s:%zu:", i ? " " : "", what, i, pt_dt_name(lt->data_type), lt->id);
    for (int d = 0; d < lt->ndims; ++d) put(t, "%s%lld", d ? "x" : "", (long long)lt->dims[d]);
    if (lt->ndims == 0) put(t, "scalar");
    put(t, ":");
    if (lt->layout_type == dnnl_graph_layout_type_opaque) {
        put(t, "opaque%zu", lt->layout.layout_id);
        return;
    }
    for (int d = 0; d < lt->ndims; ++d) put(t, "%lld%s", (long long)lt->layout.strides[d], d + 1 < lt->ndims ? "s" : "");
}

static const char *family_name(pt_fused_family f) {
    static const char *names[PT_FUSED_COUNT] = {"op_by_op", "sdpa_fwd", "sdpa_bwd", "gated_mlp", "compute_post_ops",
                                                "chain_post_ops"};
    return (int)f >= 0 && f < PT_FUSED_COUNT ? names[f] : "?";
}

/* Verbose family of a single-op partition's fused kernel. */
static const char *lone_family_name(int kind, const pt_compiled *c) {
    if (kind == dnnl_graph_op_reorder && c->fused.npacked > 0) return "packed_reorder";
    if (kind == dnnl_graph_op_convolution_backward_weights || kind == dnnl_graph_op_conv_transpose_backward_weights)
        return "conv_bwd_weights";
    if (kind == dnnl_graph_op_matmul || kind == dnnl_graph_op_convolution_backward_data ||
        kind == dnnl_graph_op_conv_transpose_backward_data)
        return "compute_post_ops";
    return "single_op";
}

/* The static part of the partition's verbose lines (heap; NULL on OOM):
 * engine, partition id, pattern row, ops, ports (type:id:dims:strides),
 * math mode, kernel and ISA. */
static char *describe(const pt_partition_impl *p, const pt_compiled *c, const char *step_gemm) {
    text t = {.cap = 4096};
    t.buf = malloc(t.cap);
    if (!t.buf) return NULL;
    t.buf[0] = 0;
    put(&t, "cpu,partition %zu,%s,", p->id, p->row ? p->row->name : "single_op");
    for (size_t i = 0; i < c->nsteps; ++i)
        put(&t, "%s%s#%zu", i ? ";" : "", pt_op_kind_name(c->steps[i].op->kind), c->steps[i].op->id);
    put(&t, ",");
    for (size_t i = 0; i < c->nin; ++i) put_lt(&t, "in", i, &c->inputs[i]);
    put(&t, " ");
    for (size_t i = 0; i < c->nout; ++i) put_lt(&t, "out", i, &c->outputs[i]);
    put(&t, ",fpm:%s%s", pt_fpmath_name(c->fpmath), c->apply_to_int ? ":apply_to_int" : "");
    if (c->has_fused) {
        const int lone = c->nsteps == 1 ? (int)c->steps[0].op->kind : -1;
        const char *fam = p->row ? family_name(p->row->fused) : lone_family_name(lone, c);
        put(&t, ",kernel:%s%s%s", fam, c->fused.kernel_name ? "/" : "", c->fused.kernel_name ? c->fused.kernel_name : "");
    } else {
        put(&t, ",kernel:reference%s%s", step_gemm ? "+gemm/" : "", step_gemm ? step_gemm : "");
    }
    put(&t, ",isa:%s", pt_isa_name(pt_isa()));
    return t.buf;
}

static pt_status build_plan(const pt_partition_impl *p, lt_map *map, pt_compiled *c) {
    size_t cap = 0;
    c->inputs = calloc(p->nin ? p->nin : 1, sizeof(pt_lt));
    c->outputs = calloc(p->nout ? p->nout : 1, sizeof(pt_lt));
    c->steps = calloc(p->nops ? p->nops : 1, sizeof(pt_step));
    if (!c->inputs || !c->outputs || !c->steps) return dnnl_out_of_memory;
    c->nin = p->nin;
    c->nout = p->nout;
    for (size_t i = 0; i < p->nin; ++i) {
        c->inputs[i] = *map_find(map, p->inputs[i].id);
        if (slot_of(c, c->inputs[i].id) >= 0) continue;
        pt_slot s = {.id = c->inputs[i].id, .kind = PT_SLOT_INPUT, .port = i, .lt = c->inputs[i]};
        PT_CHECK(add_slot(c, &cap, &s));
    }
    for (size_t i = 0; i < p->nout; ++i) {
        c->outputs[i] = *map_find(map, p->outputs[i].id);
        if (slot_of(c, c->outputs[i].id) >= 0) continue;
        pt_slot s = {.id = c->outputs[i].id, .kind = PT_SLOT_OUTPUT, .port = i, .lt = c->outputs[i]};
        PT_CHECK(add_slot(c, &cap, &s));
    }
    if (p->row && p->row->chain) widen_intermediates(p, c, map);
    for (size_t o = 0; o < p->nops; ++o) {
        const pt_op *src = p->ops[o];
        if (src->kind == dnnl_graph_op_end) continue;
        pt_step *st = &c->steps[c->nsteps];
        st->op = pt_op_clone(src);
        st->in_slot = malloc((src->nin ? src->nin : 1) * sizeof(int));
        st->out_slot = malloc((src->nout ? src->nout : 1) * sizeof(int));
        ++c->nsteps;
        if (!st->op || !st->in_slot || !st->out_slot) return dnnl_out_of_memory;
        for (size_t k = 0; k < src->nin; ++k) {
            st->op->in[k] = *map_find(map, src->in[k].id);
            st->in_slot[k] = slot_of(c, src->in[k].id);
        }
        for (size_t k = 0; k < src->nout; ++k) {
            pt_lt lt = *map_find(map, src->out[k].id);
            st->op->out[k] = lt;
            int s = slot_of(c, lt.id);
            if (s < 0) {
                /* Intermediate: its own 64-byte aligned scratchpad region. */
                size_t bytes = pt_lt_mem_size(&lt);
                pt_slot sl = {.id = lt.id, .kind = PT_SLOT_SCRATCH, .offset = c->scratch_size, .lt = lt};
                c->scratch_size += (bytes + PT_ALIGNMENT - 1) / PT_ALIGNMENT * PT_ALIGNMENT;
                PT_CHECK(add_slot(c, &cap, &sl));
                s = (int)c->nslots - 1;
            }
            st->out_slot[k] = s;
        }
        /* Decoded once here; execute only runs. */
        PT_CHECK(pt_ref_bind(st->op, &st->kernel));
    }
    if (c->nslots > PT_EXEC_MAX_SLOTS)
        return pt_err(dnnl_unimplemented, "compile: partition %zu has %zu tensors, at most %d supported", p->id,
                      c->nslots, PT_EXEC_MAX_SLOTS);
    /* Steps run one after another: one region, as large as the largest
     * kernel scratch, serves them all. */
    size_t kernel_scratch = 0;
    for (size_t i = 0; i < c->nsteps; ++i)
        if (c->steps[i].kernel.scratch_bytes > kernel_scratch) kernel_scratch = c->steps[i].kernel.scratch_bytes;
    c->kernel_scratch_offset = c->scratch_size;
    c->scratch_size += (kernel_scratch + PT_ALIGNMENT - 1) / PT_ALIGNMENT * PT_ALIGNMENT;
    /* In-place hint for single-op partitions whose kernel allows aliasing. */
    if (p->nops == 1 && c->nin >= 1 && c->nout == 1 && inplace_capable(p->ops[0]->kind)) {
        const pt_lt *a = &c->inputs[0], *b = &c->outputs[0];
        bool same = a->data_type == b->data_type && a->ndims == b->ndims;
        for (int d = 0; same && d < a->ndims; ++d)
            same = a->dims[d] == b->dims[d] && a->layout.strides[d] == b->layout.strides[d];
        if (same) {
            c->inplace = malloc(sizeof *c->inplace);
            if (!c->inplace) return dnnl_out_of_memory;
            c->inplace[0].input_id = a->id;
            c->inplace[0].output_id = b->id;
            c->ninplace = 1;
        }
    }
    return dnnl_success;
}

pt_status pt_compile(const struct dnnl_graph_partition *part, size_t nin, const pt_lt *const *inputs,
                     size_t nout, const pt_lt *const *outputs, dnnl_engine_t engine, pt_compiled **out) {
    const pt_partition_impl *p = part->impl;
    if (!p->supported)
        return pt_err(dnnl_invalid_arguments, "compile: partition %zu is not supported", p->id);
    if (engine->kind != p->ekind)
        return pt_err(dnnl_invalid_arguments, "compile: engine kind %d differs from partition kind %d",
                      (int)engine->kind, (int)p->ekind);
    for (size_t i = 0; i < nin; ++i)
        if (!inputs[i]) return pt_err(dnnl_invalid_arguments, "compile: input %zu is NULL", i);
    for (size_t i = 0; i < nout; ++i)
        if (!outputs[i]) return pt_err(dnnl_invalid_arguments, "compile: output %zu is NULL", i);
    dnnl_fpmath_mode_t mode;
    int apply;
    pt_partition_fpmath(part, &mode, &apply);

    const double t0 = pt_now_ms();
    pt_cp_key key;
    pt_status st = pt_cp_key_build(&key, p, nin, inputs, nout, outputs, engine->kind, mode, apply);
    if (st != dnnl_success) return st;
    pt_compiled *c = pt_cp_cache_lookup(&key);
    if (c) {
        pt_verbose(2, "info,compile,partition %zu,compiled-partition cache hit", p->id);
        pt_cp_key_free(&key);
        *out = c;
        return dnnl_success;
    }
    lt_map map = {0};
    st = propagate(p, nin, inputs, nout, outputs, true, &map);
    c = NULL;
    if (st == dnnl_success) {
        c = calloc(1, sizeof *c);
        if (!c) st = dnnl_out_of_memory;
    }
    if (st == dnnl_success) {
        c->refcount = 1;
        c->ekind = engine->kind;
        c->fpmath = mode;
        c->apply_to_int = apply;
        st = build_plan(p, &map, c);
    }
    pt_lower_fn lower = p->row ? pt_fused_lowering(p->row->fused) : NULL;
    /* Single-op partitions whose kind has a fast kernel (lower_single_op.h;
     * a lone MatMul takes the compute lowering, like every MatMul partition). */
    if (!p->row && c && c->nsteps == 1) lower = pt_single_op_lowering(c->steps[0].op->kind);
    size_t *in_layout = NULL, *out_layout = NULL;
    if (st == dnnl_success) st = given_layouts(p, nin, inputs, nout, outputs, &in_layout, &out_layout);
    pt_lower_ctx lc = {.fpmath = mode, .apply_to_int = apply, .in_layout = in_layout, .out_layout = out_layout};
    bool packed_reorder = st == dnnl_success && !p->row && c->nsteps == 1 && pt_packed_reorder_wanted(c->steps[0].op, &lc);
    if (packed_reorder) {
        /* Both sides of the Reorder are the op's own ports. */
        pt_fused f = {0};
        st = pt_lower_packed_reorder((const pt_op *const *)&c->steps[0].op, 1, c->inputs, c->nin, c->outputs,
                                     c->nout, &f, &lc);
        if (st == dnnl_success) c->fused = f, c->has_fused = true;
        lower = NULL;
    }
    if (st == dnnl_success && lower) {
        const pt_op **ops = malloc((c->nsteps ? c->nsteps : 1) * sizeof *ops);
        int *roles = malloc((c->nsteps ? c->nsteps : 1) * sizeof *roles);
        if (!ops || !roles) st = dnnl_out_of_memory;
        for (size_t i = 0; ops && i < c->nsteps; ++i) ops[i] = c->steps[i].op;
        /* Steps skip End ops: keep each step's role beside it. */
        for (size_t o = 0, i = 0; roles && o < p->nops; ++o)
            if (p->ops[o]->kind != dnnl_graph_op_end) roles[i++] = !p->row ? PT_CHAIN_ANCHOR : p->roles[o];
        pt_fused f = {0};
        /* Execute hands a fused kernel its ports in a bounded array; a
         * partition with more ports (none of the patterns has) runs op by op. */
        bool fits = c->nin + c->nout <= 2 * PT_EXEC_MAX_PORTS;
        pt_status lowered = dnnl_unimplemented;
        if (ops && roles && fits)
            lowered = lower(ops, roles, c->nsteps, c->inputs, c->nin, c->outputs, c->nout, &f, &lc);
        /* Out of memory fails the compile: falling back to op by op would
         * put a slower plan into the compiled-partition cache for good. */
        if (lowered == dnnl_out_of_memory) st = lowered;
        if (lowered == dnnl_success) {
            c->fused = f;
            c->has_fused = true;
            if (f.has_inplace && f.inplace_in < c->nin && f.inplace_out < c->nout && !c->inplace) {
                c->inplace = malloc(sizeof *c->inplace);
                if (c->inplace) {
                    c->inplace[0].input_id = c->inputs[f.inplace_in].id;
                    c->inplace[0].output_id = c->outputs[f.inplace_out].id;
                    c->ninplace = 1;
                } else {
                    st = dnnl_out_of_memory;
                }
            }
        }
        free(ops);
        free(roles);
    }
    if (st == dnnl_success) st = apply_packed_layouts(p, c, in_layout, out_layout);
    free(in_layout);
    free(out_layout);
    lc.in_layout = lc.out_layout = NULL;
    const char *step_gemm = NULL;
    if (st == dnnl_success && !c->has_fused) st = bind_matmul_steps(c, &lc, &step_gemm);
    if (st == dnnl_success) {
        c->outputs_empty = c->nout > 0;
        for (size_t i = 0; i < c->nout; ++i)
            if (pt_lt_nelems(&c->outputs[i]) != 0) c->outputs_empty = false;
    }
    if (st == dnnl_success && !(c->verbose = describe(p, c, step_gemm))) st = dnnl_out_of_memory;
    map_free(&map);
    if (st != dnnl_success) {
        pt_compiled_release(c);
        pt_cp_key_free(&key);
        return st;
    }
    pt_cp_cache_insert(&key, c); /* takes the key; adds its own reference */
    if (c->verbose) pt_verbose(1, "compile,%s,%.3f", c->verbose, (pt_now_ms() - t0));
    pt_verbose(2, "info,compile,partition %zu,%zu ops,%s,scratchpad %zu bytes", p->id, p->nops,
               p->row ? p->row->name : "single_op", pt_compiled_scratch_bytes(c));
    *out = c;
    return dnnl_success;
}
