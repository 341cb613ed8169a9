#include "case_runner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_fill.h"
#include "bench_util.h"

/* Host scalars: integers (sequence lengths of the implicit causal masks,
 * dropout seed and offset) all get the same value, so a mask offset
 * computed as one scalar minus another is 0 and no row is fully masked;
 * float scalars (attention scales, dropout probability, mask fill) 0.125. */
#define HOST_SCALAR_INT 16
#define HOST_SCALAR_FLOAT 0.125f

typedef struct tensor_slot {
    size_t id;
    dnnl_graph_logical_tensor_t lt;
    dnnl_graph_tensor_t tensor;
    int produced;   /* an output of some partition */
} tensor_slot;

struct case_session {
    const graph_api *api;
    dnnl_stream_t stream;
    dnnl_graph_graph_t graph;
    dnnl_graph_op_t *ops;
    size_t n_ops;
    dnnl_graph_partition_t *partitions;
    dnnl_graph_compiled_partition_t *compiled;
    size_t n_partitions;
    /* per partition: its input and output tensors, in port order */
    const_dnnl_graph_tensor_t **inputs, **outputs;
    size_t *n_inputs, *n_outputs;
    tensor_slot *slots;
    size_t n_slots;
};

static void release(case_session *s);

static int set_failure(case_result *r, const char *stage, dnnl_status_t status,
        const char *message) {
    r->ok = 0;
    snprintf(r->stage, sizeof r->stage, "%s", stage);
    r->status = status;
    snprintf(r->message, sizeof r->message, "%s", message ? message : "");
    return 0;
}

#define CALL(stage, expression) \
    do { \
        dnnl_status_t status_ = (expression); \
        if (status_ != dnnl_success) { \
            set_failure(result, stage, status_, #expression); \
            goto cleanup; \
        } \
    } while (0)

static dnnl_status_t make_logical_tensor(const graph_api *api,
        const bench_tensor *t, dnnl_graph_logical_tensor_t *lt) {
    dnnl_dims_t dims = {0}, strides = {0};
    for (int d = 0; d < t->ndims && d < BENCH_MAX_DIMS; ++d) {
        dims[d] = t->dims[d];
        strides[d] = t->strides[d];
    }
    if (t->ndims < 0) /* rank unknown: the library infers it at compile time */
        return api->logical_tensor_init(lt, t->id, t->data_type,
                DNNL_GRAPH_UNKNOWN_NDIMS, t->layout_type, t->property);
    int32_t ndims = t->ndims;
    if (t->layout_type == dnnl_graph_layout_type_strided && t->has_strides)
        return api->logical_tensor_init_with_strides(
                lt, t->id, t->data_type, ndims, dims, strides, t->property);
    return api->logical_tensor_init_with_dims(lt, t->id, t->data_type, ndims,
            dims, t->layout_type, t->property);
}

static dnnl_status_t add_ops(case_session *s, const bench_case *c) {
    const graph_api *api = s->api;
    s->ops = calloc(c->n_ops, sizeof *s->ops);
    if (!s->ops) return dnnl_out_of_memory;
    for (size_t i = 0; i < c->n_ops; ++i) {
        const bench_op *op = &c->ops[i];
        dnnl_status_t st = api->op_create(&s->ops[i], op->id, op->kind, op->name);
        if (st != dnnl_success) return st;
        s->n_ops = i + 1;
        for (size_t a = 0; a < op->n_attrs && st == dnnl_success; ++a) {
            const bench_attr *attr = &op->attrs[a];
            switch (attr->type) {
            case BENCH_ATTR_F32:
            case BENCH_ATTR_F32_LIST:
                st = api->op_set_attr_f32(s->ops[i], attr->name,
                        attr->f32_values, attr->count);
                break;
            case BENCH_ATTR_S64:
            case BENCH_ATTR_S64_LIST:
                st = api->op_set_attr_s64(s->ops[i], attr->name,
                        attr->s64_values, attr->count);
                break;
            case BENCH_ATTR_BOOL: {
                uint8_t v = (uint8_t)attr->s64_values[0];
                st = api->op_set_attr_bool(s->ops[i], attr->name, &v, 1);
                break;
            }
            case BENCH_ATTR_STRING:
                st = api->op_set_attr_str(s->ops[i], attr->name,
                        attr->string_value, strlen(attr->string_value));
                break;
            }
        }
        for (size_t k = 0; k < op->n_inputs && st == dnnl_success; ++k) {
            dnnl_graph_logical_tensor_t lt;
            st = make_logical_tensor(api, &op->inputs[k], &lt);
            if (st == dnnl_success) st = api->op_add_input(s->ops[i], &lt);
        }
        for (size_t k = 0; k < op->n_outputs && st == dnnl_success; ++k) {
            dnnl_graph_logical_tensor_t lt;
            st = make_logical_tensor(api, &op->outputs[k], &lt);
            if (st == dnnl_success) st = api->op_add_output(s->ops[i], &lt);
        }
        if (st == dnnl_success) st = api->add_op(s->graph, s->ops[i]);
        if (st != dnnl_success) return st;
    }
    return dnnl_success;
}

static tensor_slot *find_slot(case_session *s, size_t id) {
    for (size_t i = 0; i < s->n_slots; ++i)
        if (s->slots[i].id == id) return &s->slots[i];
    return NULL;
}

static tensor_slot *get_slot(case_session *s, size_t id, size_t capacity) {
    tensor_slot *slot = find_slot(s, id);
    if (slot || s->n_slots == capacity) return slot;
    slot = &s->slots[s->n_slots++];
    memset(slot, 0, sizeof *slot);
    slot->id = id;
    return slot;
}

/* How to fill graph input `id`: by the op that reads it. */
static fill_role role_of(const bench_case *c, size_t id, int *zero_point) {
    *zero_point = 0;
    for (size_t i = 0; i < c->n_ops; ++i) {
        const bench_op *op = &c->ops[i];
        if (op->kind == dnnl_graph_op_dequantize && op->n_inputs > 0
                && op->inputs[0].id == id) {
            for (size_t a = 0; a < op->n_attrs; ++a)
                if (op->attrs[a].name == dnnl_graph_op_attr_zps
                        && op->attrs[a].count > 0)
                    *zero_point = (int)op->attrs[a].s64_values[0];
            return FILL_QUANTIZED;
        }
        if (op->kind != dnnl_graph_op_dynamic_dequantize
                && op->kind != dnnl_graph_op_dynamic_quantize)
            continue;
        if (op->n_inputs > 1 && op->inputs[1].id == id) return FILL_SCALE;
        if (op->n_inputs > 2 && op->inputs[2].id == id) return FILL_ZERO_POINT;
    }
    return FILL_DATA;
}

static int is_integer_type(dnnl_data_type_t t) {
    return t == dnnl_s32 || t == dnnl_s64 || t == dnnl_s8 || t == dnnl_u8
            || t == dnnl_boolean;
}

static dnnl_status_t create_tensor(case_session *s, const bench_case *c,
        tensor_slot *slot, dnnl_engine_t engine) {
    const graph_api *api = s->api;
    if (slot->lt.property == dnnl_graph_tensor_property_host_scalar) {
        union { int64_t s64; int32_t s32; float f32; uint16_t h; uint8_t b; } v;
        memset(&v, 0, sizeof v);
        switch (slot->lt.data_type) {
        case dnnl_s64: v.s64 = HOST_SCALAR_INT; break;
        case dnnl_s32: v.s32 = HOST_SCALAR_INT; break;
        case dnnl_bf16: v.h = float_to_bf16(HOST_SCALAR_FLOAT); break;
        case dnnl_f16: v.h = float_to_f16(HOST_SCALAR_FLOAT); break;
        default:
            if (is_integer_type(slot->lt.data_type)) v.b = 1;
            else v.f32 = HOST_SCALAR_FLOAT;
            break;
        }
        return api->tensor_create_scalar(&slot->tensor, &slot->lt, &v);
    }
    /* Library-owned buffers on both sides: oneDNN's CPU engine is a SYCL
     * device here, and its own allocation is always valid for it. */
    dnnl_status_t st = api->tensor_create(
            &slot->tensor, &slot->lt, engine, DNNL_MEMORY_ALLOCATE);
    if (st != dnnl_success) return st;
    size_t bytes = 0;
    void *data = NULL;
    st = api->logical_tensor_get_mem_size(&slot->lt, &bytes);
    if (st == dnnl_success) st = api->tensor_get_data_handle(slot->tensor, &data);
    if (st != dnnl_success || !data) return st ? st : dnnl_runtime_error;
    if (slot->produced) {
        memset(data, 0, bytes);
        return dnnl_success;
    }
    double element_bytes = bench_dtype_bytes(slot->lt.data_type);
    size_t count = (size_t)((double)bytes / element_bytes);
    int zero_point = 0;
    fill_role role = role_of(c, slot->id, &zero_point);
    fill_buffer(data, count, slot->lt.data_type, slot->id, role, zero_point);
    return dnnl_success;
}

static double execute_all(case_session *s, dnnl_stream_t stream,
        dnnl_status_t *status) {
    double start = bench_now_s();
    for (size_t p = 0; p < s->n_partitions; ++p) {
        *status = s->api->compiled_partition_execute(s->compiled[p], stream,
                s->n_inputs[p], s->inputs[p], s->n_outputs[p], s->outputs[p]);
        if (*status != dnnl_success) return -1;
    }
    *status = s->api->stream_wait(stream);
    return bench_now_s() - start;
}

/* Copies a graph output as floats in logical (row-major) order, following
 * the strides the library reports for it. */
static int copy_output(case_session *s, tensor_slot *slot, case_output *out) {
    const dnnl_graph_logical_tensor_t *lt = &slot->lt;
    void *data = NULL;
    if (s->api->tensor_get_data_handle(slot->tensor, &data) != dnnl_success
            || !data)
        return -1;
    size_t count = 1;
    for (int d = 0; d < lt->ndims; ++d) count *= (size_t)lt->dims[d];
    out->id = slot->id;
    out->count = count;
    out->values = malloc((count ? count : 1) * sizeof *out->values);
    if (!out->values) return -1;
    int strided = lt->layout_type == dnnl_graph_layout_type_strided;
    for (size_t i = 0; i < count; ++i) {
        size_t offset = i;
        if (strided) {
            size_t rest = i;
            offset = 0;
            for (int d = lt->ndims - 1; d >= 0; --d) {
                size_t dim = (size_t)lt->dims[d];
                offset += (rest % dim) * (size_t)lt->layout.strides[d];
                rest /= dim;
            }
        }
        out->values[i] = load_as_float(data, offset, lt->data_type);
    }
    return 0;
}

case_session *case_prepare(const graph_api *api, dnnl_engine_t engine,
        dnnl_stream_t stream, const bench_case *c, case_result *result) {
    memset(result, 0, sizeof *result);
    case_session *s = calloc(1, sizeof *s);
    if (!s) {
        set_failure(result, "graph", dnnl_out_of_memory, "out of memory");
        return NULL;
    }
    s->api = api;
    s->stream = stream;
    size_t slot_capacity = 0;

    CALL("graph", api->graph_create_with_fpmath_mode(
                          &s->graph, dnnl_cpu, c->fpmath_mode));
    CALL("graph", api->graph_set_fpmath_mode(
                          s->graph, c->fpmath_mode, c->fpmath_apply_to_int));
    CALL("add_op", add_ops(s, c));
    CALL("finalize", api->graph_finalize(s->graph));
    CALL("partition", api->graph_filter(s->graph, dnnl_graph_partition_policy_fusion));
    CALL("partition", api->graph_get_partition_num(s->graph, &s->n_partitions));
    if (s->n_partitions == 0) {
        set_failure(result, "partition", dnnl_unimplemented, "no partitions");
        goto cleanup;
    }
    size_t n = s->n_partitions;
    s->partitions = calloc(n, sizeof *s->partitions);
    s->compiled = calloc(n, sizeof *s->compiled);
    s->inputs = calloc(n, sizeof *s->inputs);
    s->outputs = calloc(n, sizeof *s->outputs);
    s->n_inputs = calloc(n, sizeof *s->n_inputs);
    s->n_outputs = calloc(n, sizeof *s->n_outputs);
    if (!s->partitions || !s->compiled || !s->inputs || !s->outputs
            || !s->n_inputs || !s->n_outputs) {
        set_failure(result, "partition", dnnl_out_of_memory, "out of memory");
        goto cleanup;
    }
    CALL("partition", api->graph_get_partitions(s->graph, n, s->partitions));
    result->n_partitions = n;
    for (size_t p = 0; p < n; ++p) {
        size_t op_count = 0;
        uint8_t supported = 0;
        CALL("partition", api->partition_get_op_num(s->partitions[p], &op_count));
        CALL("partition", api->partition_is_supported(s->partitions[p], &supported));
        if (op_count > 1) ++result->n_fused;
        if (!supported) ++result->n_unsupported;
        size_t n_in = 0, n_out = 0;
        CALL("partition", api->partition_get_input_ports_num(s->partitions[p], &n_in));
        CALL("partition",
                api->partition_get_output_ports_num(s->partitions[p], &n_out));
        s->n_inputs[p] = n_in;
        s->n_outputs[p] = n_out;
        slot_capacity += n_in + n_out;
    }
    if (result->n_unsupported) {
        char message[128];
        snprintf(message, sizeof message, "%zu of %zu partitions unsupported",
                result->n_unsupported, n);
        set_failure(result, "partition", dnnl_unimplemented, message);
        goto cleanup;
    }

    s->slots = calloc(slot_capacity ? slot_capacity : 1, sizeof *s->slots);
    if (!s->slots) {
        set_failure(result, "compile", dnnl_out_of_memory, "out of memory");
        goto cleanup;
    }
    /* Compile in partition order (the libraries return them in a valid
     * execution order): an input made by an earlier partition is compiled
     * with the layout that partition reported for it. */
    for (size_t p = 0; p < n; ++p) {
        size_t n_in = s->n_inputs[p], n_out = s->n_outputs[p];
        dnnl_graph_logical_tensor_t *in_lts = calloc(n_in + 1, sizeof *in_lts);
        dnnl_graph_logical_tensor_t *out_lts = calloc(n_out + 1, sizeof *out_lts);
        const dnnl_graph_logical_tensor_t **in_ptrs
                = calloc(n_in + 1, sizeof *in_ptrs);
        const dnnl_graph_logical_tensor_t **out_ptrs
                = calloc(n_out + 1, sizeof *out_ptrs);
        s->inputs[p] = calloc(n_in + 1, sizeof **s->inputs);
        s->outputs[p] = calloc(n_out + 1, sizeof **s->outputs);
        dnnl_status_t st = (in_lts && out_lts && in_ptrs && out_ptrs
                                   && s->inputs[p] && s->outputs[p])
                ? dnnl_success
                : dnnl_out_of_memory;
        if (st == dnnl_success)
            st = api->partition_get_input_ports(s->partitions[p], n_in, in_lts);
        if (st == dnnl_success)
            st = api->partition_get_output_ports(s->partitions[p], n_out, out_lts);
        for (size_t k = 0; k < n_in && st == dnnl_success; ++k) {
            tensor_slot *slot = find_slot(s, in_lts[k].id);
            if (slot && slot->produced) in_lts[k] = slot->lt;
            in_ptrs[k] = &in_lts[k];
        }
        for (size_t k = 0; k < n_out; ++k) out_ptrs[k] = &out_lts[k];
        if (st == dnnl_success)
            st = api->compiled_partition_create(&s->compiled[p], s->partitions[p]);
        if (st == dnnl_success)
            st = api->partition_compile(s->partitions[p], s->compiled[p], n_in,
                    in_ptrs, n_out, out_ptrs, engine);
        for (size_t k = 0; k < n_in + n_out && st == dnnl_success; ++k) {
            int is_output = k >= n_in;
            size_t id = is_output ? out_lts[k - n_in].id : in_lts[k].id;
            tensor_slot *slot = get_slot(s, id, slot_capacity);
            if (!slot->produced && !slot->tensor) {
                st = api->compiled_partition_query_logical_tensor(
                        s->compiled[p], id, &slot->lt);
                if (st != dnnl_success) break;
                /* Keep the port's property (host_scalar above all) when
                 * the query leaves it out. */
                dnnl_graph_tensor_property_t port_property
                        = (is_output ? out_lts[k - n_in] : in_lts[k]).property;
                if (slot->lt.property == dnnl_graph_tensor_property_undef)
                    slot->lt.property = port_property;
                slot->produced = is_output;
            }
        }
        free(in_lts);
        free(out_lts);
        free(in_ptrs);
        free(out_ptrs);
        if (st != dnnl_success) {
            char message[64];
            snprintf(message, sizeof message, "partition %zu", p);
            set_failure(result, "compile", st, message);
            goto cleanup;
        }
    }

    /* Tensors: one per id, shared by every partition that uses it. */
    for (size_t i = 0; i < s->n_slots; ++i)
        CALL("tensor", create_tensor(s, c, &s->slots[i], engine));
    for (size_t p = 0; p < n; ++p) {
        dnnl_graph_logical_tensor_t *lts = calloc(
                s->n_inputs[p] + s->n_outputs[p] + 1, sizeof *lts);
        if (!lts) {
            set_failure(result, "tensor", dnnl_out_of_memory, "out of memory");
            goto cleanup;
        }
        dnnl_status_t st = api->partition_get_input_ports(
                s->partitions[p], s->n_inputs[p], lts);
        if (st == dnnl_success)
            st = api->partition_get_output_ports(
                    s->partitions[p], s->n_outputs[p], lts + s->n_inputs[p]);
        for (size_t k = 0; k < s->n_inputs[p] && st == dnnl_success; ++k)
            s->inputs[p][k] = find_slot(s, lts[k].id)->tensor;
        for (size_t k = 0; k < s->n_outputs[p] && st == dnnl_success; ++k)
            s->outputs[p][k] = find_slot(s, lts[s->n_inputs[p] + k].id)->tensor;
        free(lts);
        CALL("tensor", st);
    }

    result->ok = 1;
    return s;

cleanup:
    release(s);
    return NULL;
}

int case_execute(case_session *s, double *seconds, case_result *result) {
    dnnl_status_t status = dnnl_success;
    *seconds = execute_all(s, s->stream, &status);
    if (status != dnnl_success) {
        set_failure(result, "execute", status, "compiled_partition_execute");
        return 0;
    }
    return 1;
}

void case_finish(case_session *s, const bench_case *c, int keep_outputs,
        case_result *result) {
    if (keep_outputs && result->ok) {
        result->outputs = calloc(s->n_slots + 1, sizeof *result->outputs);
        for (size_t i = 0; result->outputs && i < s->n_slots; ++i) {
            tensor_slot *slot = &s->slots[i];
            if (!slot->produced || bench_case_is_consumed(c, slot->id)) continue;
            if (copy_output(s, slot, &result->outputs[result->n_outputs]) == 0)
                ++result->n_outputs;
        }
    }
    release(s);
}

/* Warm-up executions: the configured count, and more until BENCH_WARMUP_S
 * have passed, because on a virtual machine an idle second core takes
 * milliseconds to wake and the first executions of a process meet it
 * asleep (measured: the first 1024^3 f32 MatMul case of a run at 8-16 ms,
 * the same case later at 5 ms). *last is the last warm-up's time. */
void bench_warm_up(case_session *s, const run_options *options, double *last, case_result *result) {
    int warmup = options->warmup_runs > 0 ? options->warmup_runs : 1;
    double spent = 0;
    for (int w = 0; result->ok && (w < warmup || (spent < BENCH_WARMUP_S && w < 1000)); ++w) {
        result->ok = case_execute(s, last, result);
        spent += *last;
    }
}

int run_case(const graph_api *api, dnnl_engine_t engine, dnnl_stream_t stream,
        const bench_case *c, const run_options *options, case_result *result) {
    case_session *s = case_prepare(api, engine, stream, c, result);
    if (!s) return 0;
    double first = 0;
    bench_warm_up(s, options, &first, result);
    int runs = bench_runs_within_budget(options, first);
    double *times = calloc((size_t)runs, sizeof *times);
    if (!times) set_failure(result, "execute", dnnl_out_of_memory, "out of memory");
    for (int r = 0; r < runs && result->ok; ++r)
        result->ok = case_execute(s, &times[r], result);
    if (result->ok) {
        result->timed_runs = runs;
        result->median_s = bench_median(times, runs);
    }
    free(times);
    case_finish(s, c, options->keep_outputs, result);
    return result->ok;
}

int bench_runs_within_budget(const run_options *options, double seconds_per_run) {
    int runs = options->timed_runs > 0 ? options->timed_runs : 1;
    if (options->time_budget_s > 0 && seconds_per_run * runs > options->time_budget_s)
        runs = (int)(options->time_budget_s / seconds_per_run);
    return runs < 1 ? 1 : runs;
}

/* Frees everything a session holds, in the reverse order of creation. */
static void release(case_session *s) {
    const graph_api *api = s->api;

    for (size_t i = 0; i < s->n_slots; ++i)
        if (s->slots[i].tensor) api->tensor_destroy(s->slots[i].tensor);
    free(s->slots);
    for (size_t p = 0; p < s->n_partitions; ++p) {
        if (s->compiled && s->compiled[p])
            api->compiled_partition_destroy(s->compiled[p]);
        if (s->partitions && s->partitions[p])
            api->partition_destroy(s->partitions[p]);
        if (s->inputs) free((void *)s->inputs[p]);
        if (s->outputs) free((void *)s->outputs[p]);
    }
    free(s->compiled);
    free(s->partitions);
    free(s->inputs);
    free(s->outputs);
    free(s->n_inputs);
    free(s->n_outputs);
    for (size_t i = 0; i < s->n_ops; ++i) api->op_destroy(s->ops[i]);
    free(s->ops);
    if (s->graph) api->graph_destroy(s->graph);
    free(s);
}

void case_result_free(case_result *result) {
    for (size_t i = 0; i < result->n_outputs; ++i) free(result->outputs[i].values);
    free(result->outputs);
    result->outputs = NULL;
    result->n_outputs = 0;
}

double compare_outputs(const case_result *a, const case_result *b,
        size_t *nan_mismatches) {
    double worst = -1;
    *nan_mismatches = 0;
    for (size_t i = 0; i < a->n_outputs; ++i) {
        const case_output *x = &a->outputs[i];
        const case_output *y = NULL;
        for (size_t j = 0; j < b->n_outputs; ++j)
            if (b->outputs[j].id == x->id) y = &b->outputs[j];
        if (!y || y->count != x->count) continue;
        double scale = 0, largest = 0;
        for (size_t k = 0; k < x->count; ++k)
            if (isfinite(y->values[k]) && fabs(y->values[k]) > scale)
                scale = fabs(y->values[k]);
        if (scale == 0) scale = 1;
        for (size_t k = 0; k < x->count; ++k) {
            float p = x->values[k], q = y->values[k];
            if (isnan(p) || isnan(q)) {
                if (isnan(p) != isnan(q)) ++*nan_mismatches;
                continue;
            }
            if (isinf(p) || isinf(q)) {
                if (p != q) ++*nan_mismatches;
                continue;
            }
            double d = fabs((double)p - (double)q) / scale;
            if (d > largest) largest = d;
        }
        if (largest > worst) worst = largest;
    }
    return worst;
}
