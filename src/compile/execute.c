/* Executes a plan: bind the caller's tensors to slots, provide the
 * scratchpad, run each step's kernel. */
#include <omp.h>
#include <string.h>

#include "compile/compiled.h"
#include "runtime/clock.h"
#include "ops/op_schema.h"

static const struct dnnl_graph_tensor *find_tensor(size_t n, const_dnnl_graph_tensor_t *arr, size_t id) {
    for (size_t i = 0; i < n; ++i)
        if (arr[i] && arr[i]->lt.id == id) return arr[i];
    return NULL;
}

/* A bound tensor must describe the compiled tensor: same data type and dims. */
static pt_status check_bound(const struct dnnl_graph_tensor *t, const pt_lt *want, const char *what) {
    if (t->lt.data_type != want->data_type)
        return pt_err(dnnl_invalid_arguments, "execute: %s tensor %zu has data type %d, compiled %d", what,
                      want->id, (int)t->lt.data_type, (int)want->data_type);
    if (t->lt.ndims != want->ndims)
        return pt_err(dnnl_invalid_arguments, "execute: %s tensor %zu has rank %d, compiled %d", what,
                      want->id, t->lt.ndims, want->ndims);
    for (int d = 0; d < want->ndims; ++d)
        if (t->lt.dims[d] != want->dims[d] && t->lt.dims[d] != DNNL_GRAPH_UNKNOWN_DIM)
            return pt_err(dnnl_invalid_arguments,
                          "execute: %s tensor %zu dim %d is %lld, compiled %lld", what, want->id, d,
                          (long long)t->lt.dims[d], (long long)want->dims[d]);
    if (t->lt.layout_type == dnnl_graph_layout_type_strided && want->ndims > 0) {
        for (int d = 0; d < want->ndims; ++d)
            if (want->dims[d] != 1 && t->lt.layout.strides[d] != DNNL_GRAPH_UNKNOWN_DIM &&
                t->lt.layout.strides[d] != want->layout.strides[d])
                return pt_err(dnnl_invalid_arguments,
                              "execute: %s tensor %zu stride %d is %lld, compiled %lld", what, want->id,
                              d, (long long)t->lt.layout.strides[d], (long long)want->layout.strides[d]);
    }
    if (!t->data && pt_lt_mem_size(want) != 0)
        return pt_err(dnnl_invalid_arguments, "execute: %s tensor %zu has no data buffer", what, want->id);
    return dnnl_success;
}

/* True when every tensor of both lists holds no element (a 0 dim): there is
 * nothing to read or write, and kernels would still walk the other dims. */
static bool all_empty(const pt_lt *a, size_t na, const pt_lt *b, size_t nb) {
    if (na + nb == 0) return false;
    for (size_t i = 0; i < na; ++i)
        if (pt_lt_nelems(&a[i]) != 0) return false;
    for (size_t i = 0; i < nb; ++i)
        if (pt_lt_nelems(&b[i]) != 0) return false;
    return true;
}

static size_t slot_index(const pt_compiled *c, size_t id) {
    for (size_t i = 0; i < c->nslots; ++i)
        if (c->slots[i].id == id) return i;
    return 0; /* every port has a slot (built at compile time) */
}

static pt_status execute_plan(const pt_compiled *c, dnnl_stream_t stream, size_t nin,
                              const_dnnl_graph_tensor_t *inputs, size_t nout,
                              const_dnnl_graph_tensor_t *outputs, const_dnnl_graph_tensor_t scratchpad,
                              const size_t *key);

/* With verbose level 1, one line per execution: the partition's
 * description and the time. */
pt_status pt_execute(const pt_compiled *c, dnnl_stream_t stream, size_t nin,
                     const_dnnl_graph_tensor_t *inputs, size_t nout,
                     const_dnnl_graph_tensor_t *outputs, const_dnnl_graph_tensor_t scratchpad,
                     const size_t *key) {
    if (pt_verbose_level() < 1 || !c->verbose)
        return execute_plan(c, stream, nin, inputs, nout, outputs, scratchpad, key);
    double t0 = pt_now_ms();
    pt_status st = execute_plan(c, stream, nin, inputs, nout, outputs, scratchpad, key);
    if (st == dnnl_success) pt_verbose(1, "exec,%s,%.3f", c->verbose, pt_now_ms() - t0);
    return st;
}

static pt_status execute_plan(const pt_compiled *c, dnnl_stream_t stream, size_t nin,
                     const_dnnl_graph_tensor_t *inputs, size_t nout,
                     const_dnnl_graph_tensor_t *outputs, const_dnnl_graph_tensor_t scratchpad,
                     const size_t *key) {
    if (stream->engine->kind != c->ekind)
        return pt_err(dnnl_invalid_arguments, "execute: stream engine kind differs from the compile engine");
    /* On the stack, so execute allocates nothing; compile bounds nslots by
     * PT_EXEC_MAX_SLOTS and every op's ports by PT_EXEC_MAX_PORTS (compiled.h). */
    void *data[c->nslots ? c->nslots : 1];
    size_t ids[c->nslots ? c->nslots : 1]; /* explicit tensor ids, SIZE_MAX: none */
    memset(data, 0, sizeof data);
    for (size_t s = 0; s < c->nslots; ++s) ids[s] = SIZE_MAX;
    pt_tview views[2 * PT_EXEC_MAX_PORTS];
    pt_status st = dnnl_success;
    for (size_t s = 0; s < c->nslots && st == dnnl_success; ++s) {
        const pt_slot *sl = &c->slots[s];
        if (sl->kind == PT_SLOT_SCRATCH) continue;
        bool in = sl->kind == PT_SLOT_INPUT;
        const struct dnnl_graph_tensor *t =
            in ? find_tensor(nin, inputs, sl->id) : find_tensor(nout, outputs, sl->id);
        if (!t) {
            st = pt_err(dnnl_invalid_arguments, "execute: no %s tensor bound for logical tensor %zu",
                        in ? "input" : "output", sl->id);
            break;
        }
        st = check_bound(t, &sl->lt, in ? "input" : "output");
        data[s] = t->data;
        if (t->id_given) ids[s] = t->id;
    }
    /* Empty outputs: nothing to write (the arguments were checked above). */
    if (st == dnnl_success && c->outputs_empty) return dnnl_success;
    size_t need = pt_compiled_scratch_bytes(c);
    uint8_t *scratch = NULL;
    bool own_scratch = false;
    if (st == dnnl_success && need) {
        if (scratchpad) {
            /* The reported size leaves room to start on a 64-byte boundary. */
            size_t have = pt_lt_mem_size(&scratchpad->lt), want = pt_compiled_scratchpad_bytes(c);
            if (!scratchpad->data || have == SIZE_MAX || have < want)
                st = pt_err(dnnl_invalid_arguments, "execute: scratchpad of %zu bytes, %zu needed",
                            have == SIZE_MAX ? 0 : have, want);
            else
                scratch = (uint8_t *)scratchpad->data +
                          (PT_ALIGNMENT - (uintptr_t)scratchpad->data % PT_ALIGNMENT) % PT_ALIGNMENT;
        } else {
            scratch = pt_stream_scratch_take(stream, need);
            own_scratch = true;
            if (!scratch) st = dnnl_out_of_memory;
        }
    }
    for (size_t s = 0; s < c->nslots && st == dnnl_success; ++s)
        if (c->slots[s].kind == PT_SLOT_SCRATCH) data[s] = scratch + c->slots[s].offset;

    if (st == dnnl_success && c->has_fused) {
        /* Ports in compiled order; a repeated id binds the same buffer. */
        pt_tview *fin = views;
        size_t in_ids[PT_EXEC_MAX_PORTS * 2];
        for (size_t i = 0; i < c->nin + c->nout; ++i) {
            const pt_lt *lt = i < c->nin ? &c->inputs[i] : &c->outputs[i - c->nin];
            fin[i].lt = *lt;
            fin[i].data = data[slot_index(c, lt->id)];
            if (i < c->nin) in_ids[i] = ids[slot_index(c, lt->id)];
        }
        pt_exec_ctx fctx = {.fpmath = c->fpmath, .apply_to_int = c->apply_to_int, .nthreads = omp_get_max_threads(),
                            .has_key = key != NULL, .key = key ? *key : 0, .in_ids = in_ids};
        st = c->fused.run(&c->fused, fin, c->nin, fin + c->nin, c->nout, scratch, &fctx);
        if (own_scratch) pt_stream_scratch_give(stream, scratch);
        return st;
    }

    size_t step_ids[PT_EXEC_MAX_PORTS];
    pt_exec_ctx ctx = {.fpmath = c->fpmath, .apply_to_int = c->apply_to_int, .nthreads = omp_get_max_threads(),
                       .has_key = key != NULL, .key = key ? *key : 0, .in_ids = step_ids};
    pt_tview *vin = views, *vout = views + PT_EXEC_MAX_PORTS;
    for (size_t i = 0; i < c->nsteps && st == dnnl_success; ++i) {
        const pt_step *step = &c->steps[i];
        const pt_op *op = step->op;
        for (size_t k = 0; k < op->nin; ++k) {
            vin[k].lt = op->in[k];
            vin[k].data = data[step->in_slot[k]];
            step_ids[k] = ids[step->in_slot[k]];
        }
        for (size_t k = 0; k < op->nout; ++k) {
            vout[k].lt = op->out[k];
            vout[k].data = data[step->out_slot[k]];
        }
        if (all_empty(op->in, op->nin, op->out, op->nout)) continue;
        ctx.scratch = step->kernel.scratch_bytes ? scratch + c->kernel_scratch_offset : NULL;
        ctx.scratch_bytes = step->kernel.scratch_bytes;
        st = step->kernel.run(step->kernel.params, vin, op->nin, vout, op->nout, &ctx);
        if (st != dnnl_success)
            pt_err(st, "execute: kernel for op %s#%zu failed", pt_op_kind_name(op->kind), op->id);
    }
    if (own_scratch) pt_stream_scratch_give(stream, scratch);
    return st;
}
