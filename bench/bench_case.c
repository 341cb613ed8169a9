#include "bench_case.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    dnnl_graph_op_kind_t kind;
} op_kind_name;

static const op_kind_name op_kind_names[] = {
    {"Abs", dnnl_graph_op_abs}, {"AbsBackward", dnnl_graph_op_abs_backward},
    {"Add", dnnl_graph_op_add}, {"AvgPool", dnnl_graph_op_avg_pool},
    {"AvgPoolBackward", dnnl_graph_op_avg_pool_backward},
    {"BatchNormForwardTraining", dnnl_graph_op_batch_norm_forward_training},
    {"BatchNormInference", dnnl_graph_op_batch_norm_inference},
    {"BatchNormTrainingBackward", dnnl_graph_op_batch_norm_backward},
    {"BiasAdd", dnnl_graph_op_bias_add},
    {"BiasAddBackward", dnnl_graph_op_bias_add_backward},
    {"BiasAddBackprop", dnnl_graph_op_bias_add_backward},
    {"Clamp", dnnl_graph_op_clamp}, {"ClampBackward", dnnl_graph_op_clamp_backward},
    {"Concat", dnnl_graph_op_concat}, {"ConvTranspose", dnnl_graph_op_conv_transpose},
    {"ConvTransposeBackwardData", dnnl_graph_op_conv_transpose_backward_data},
    {"ConvTransposeBackwardWeights", dnnl_graph_op_conv_transpose_backward_weights},
    {"Convolution", dnnl_graph_op_convolution},
    {"ConvolutionBackwardData", dnnl_graph_op_convolution_backward_data},
    {"ConvolutionBackwardWeights", dnnl_graph_op_convolution_backward_weights},
    {"Dequantize", dnnl_graph_op_dequantize}, {"Divide", dnnl_graph_op_divide},
    {"Dropout", dnnl_graph_op_dropout},
    {"DynamicDequantize", dnnl_graph_op_dynamic_dequantize},
    {"DynamicQuantize", dnnl_graph_op_dynamic_quantize},
    {"Elu", dnnl_graph_op_elu}, {"EluBackward", dnnl_graph_op_elu_backward},
    {"End", dnnl_graph_op_end}, {"Exp", dnnl_graph_op_exp},
    {"GELU", dnnl_graph_op_gelu}, {"GELUBackward", dnnl_graph_op_gelu_backward},
    {"GenIndex", dnnl_graph_op_gen_index},
    {"GreaterEqual", dnnl_graph_op_greater_equal},
    {"GroupNorm", dnnl_graph_op_group_norm},
    {"HardSigmoid", dnnl_graph_op_hard_sigmoid},
    {"HardSigmoidBackward", dnnl_graph_op_hard_sigmoid_backward},
    {"HardSwish", dnnl_graph_op_hard_swish},
    {"HardSwishBackward", dnnl_graph_op_hard_swish_backward},
    {"Interpolate", dnnl_graph_op_interpolate},
    {"InterpolateBackward", dnnl_graph_op_interpolate_backward},
    {"LayerNorm", dnnl_graph_op_layer_norm},
    {"LayerNormBackward", dnnl_graph_op_layer_norm_backward},
    {"LeakyReLU", dnnl_graph_op_leaky_relu}, {"Log", dnnl_graph_op_log},
    {"LogSoftmax", dnnl_graph_op_log_softmax},
    {"LogSoftmaxBackward", dnnl_graph_op_log_softmax_backward},
    {"MatMul", dnnl_graph_op_matmul}, {"MaxPool", dnnl_graph_op_max_pool},
    {"MaxPoolBackward", dnnl_graph_op_max_pool_backward},
    {"Maximum", dnnl_graph_op_maximum}, {"Minimum", dnnl_graph_op_minimum},
    {"Mish", dnnl_graph_op_mish}, {"MishBackward", dnnl_graph_op_mish_backward},
    {"Multiply", dnnl_graph_op_multiply}, {"PReLU", dnnl_graph_op_prelu},
    {"PReLUBackward", dnnl_graph_op_prelu_backward}, {"Pow", dnnl_graph_op_pow},
    {"Quantize", dnnl_graph_op_quantize}, {"RMSNorm", dnnl_graph_op_rms_norm},
    {"ReLU", dnnl_graph_op_relu}, {"ReLUBackward", dnnl_graph_op_relu_backward},
    {"Reciprocal", dnnl_graph_op_reciprocal}, {"ReduceL1", dnnl_graph_op_reduce_l1},
    {"ReduceL2", dnnl_graph_op_reduce_l2}, {"ReduceMax", dnnl_graph_op_reduce_max},
    {"ReduceMean", dnnl_graph_op_reduce_mean},
    {"ReduceMin", dnnl_graph_op_reduce_min},
    {"ReduceProd", dnnl_graph_op_reduce_prod},
    {"ReduceSum", dnnl_graph_op_reduce_sum}, {"Reorder", dnnl_graph_op_reorder},
    {"Round", dnnl_graph_op_round}, {"Select", dnnl_graph_op_select},
    {"Sigmoid", dnnl_graph_op_sigmoid},
    {"SigmoidBackward", dnnl_graph_op_sigmoid_backward},
    {"SoftMax", dnnl_graph_op_softmax},
    {"SoftMaxBackward", dnnl_graph_op_softmax_backward},
    {"SoftPlus", dnnl_graph_op_softplus},
    {"SoftPlusBackward", dnnl_graph_op_softplus_backward},
    {"Sqrt", dnnl_graph_op_sqrt}, {"SqrtBackward", dnnl_graph_op_sqrt_backward},
    {"Square", dnnl_graph_op_square},
    {"SquaredDifference", dnnl_graph_op_squared_difference},
    {"StaticReshape", dnnl_graph_op_static_reshape},
    {"StaticTranspose", dnnl_graph_op_static_transpose},
    {"Subtract", dnnl_graph_op_subtract}, {"Tanh", dnnl_graph_op_tanh},
    {"TanhBackward", dnnl_graph_op_tanh_backward},
    {"TypeCast", dnnl_graph_op_type_cast}, {"Wildcard", dnnl_graph_op_wildcard},
};

typedef struct {
    const char *name;
    dnnl_graph_op_attr_t attr;
} attr_name;

static const attr_name attr_names[] = {
    {"alpha", dnnl_graph_op_attr_alpha}, {"beta", dnnl_graph_op_attr_beta},
    {"epsilon", dnnl_graph_op_attr_epsilon}, {"max", dnnl_graph_op_attr_max},
    {"min", dnnl_graph_op_attr_min}, {"momentum", dnnl_graph_op_attr_momentum},
    {"scales", dnnl_graph_op_attr_scales}, {"axis", dnnl_graph_op_attr_axis},
    {"begin_norm_axis", dnnl_graph_op_attr_begin_norm_axis},
    {"groups", dnnl_graph_op_attr_groups}, {"axes", dnnl_graph_op_attr_axes},
    {"dilations", dnnl_graph_op_attr_dilations},
    {"dst_shape", dnnl_graph_op_attr_dst_shape},
    {"kernel", dnnl_graph_op_attr_kernel}, {"order", dnnl_graph_op_attr_order},
    {"output_padding", dnnl_graph_op_attr_output_padding},
    {"pads_begin", dnnl_graph_op_attr_pads_begin},
    {"pads_end", dnnl_graph_op_attr_pads_end}, {"shape", dnnl_graph_op_attr_shape},
    {"sizes", dnnl_graph_op_attr_sizes}, {"src_shape", dnnl_graph_op_attr_src_shape},
    {"strides", dnnl_graph_op_attr_strides},
    {"weights_shape", dnnl_graph_op_attr_weights_shape},
    {"zps", dnnl_graph_op_attr_zps}, {"group_shape", dnnl_graph_op_attr_group_shape},
    {"exclude_pad", dnnl_graph_op_attr_exclude_pad},
    {"keep_dims", dnnl_graph_op_attr_keep_dims},
    {"keep_stats", dnnl_graph_op_attr_keep_stats},
    {"per_channel_broadcast", dnnl_graph_op_attr_per_channel_broadcast},
    {"special_zero", dnnl_graph_op_attr_special_zero},
    {"transpose_a", dnnl_graph_op_attr_transpose_a},
    {"transpose_b", dnnl_graph_op_attr_transpose_b},
    {"use_affine", dnnl_graph_op_attr_use_affine},
    {"use_dst", dnnl_graph_op_attr_use_dst},
    {"auto_broadcast", dnnl_graph_op_attr_auto_broadcast},
    {"auto_pad", dnnl_graph_op_attr_auto_pad},
    {"coordinate_transformation_mode",
            dnnl_graph_op_attr_coordinate_transformation_mode},
    {"data_format", dnnl_graph_op_attr_data_format},
    {"mode", dnnl_graph_op_attr_mode}, {"qtype", dnnl_graph_op_attr_qtype},
    {"rounding_type", dnnl_graph_op_attr_rounding_type},
    {"weights_format", dnnl_graph_op_attr_weights_format},
    {"accumulation_mode", dnnl_graph_op_attr_accumulation_mode},
};

typedef struct {
    const char *name;
    dnnl_data_type_t data_type;
    double bytes;
} dtype_info;

static const dtype_info dtype_infos[] = {
    {"undef", dnnl_data_type_undef, 0}, {"f16", dnnl_f16, 2},
    {"bf16", dnnl_bf16, 2}, {"f32", dnnl_f32, 4}, {"s32", dnnl_s32, 4},
    {"s8", dnnl_s8, 1}, {"u8", dnnl_u8, 1}, {"f64", dnnl_f64, 8},
    {"boolean", dnnl_boolean, 1}, {"f8_e5m2", dnnl_f8_e5m2, 1},
    {"f8_e4m3", dnnl_f8_e4m3, 1}, {"s4", dnnl_s4, 0.5}, {"u4", dnnl_u4, 0.5},
    {"s64", dnnl_s64, 8},
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

double bench_dtype_bytes(dnnl_data_type_t data_type) {
    for (size_t i = 0; i < COUNT_OF(dtype_infos); ++i)
        if (dtype_infos[i].data_type == data_type) return dtype_infos[i].bytes;
    return 4;
}

const char *bench_dtype_name(dnnl_data_type_t data_type) {
    for (size_t i = 0; i < COUNT_OF(dtype_infos); ++i)
        if (dtype_infos[i].data_type == data_type) return dtype_infos[i].name;
    return "?";
}

/* The value type an attribute takes follows from its id range (see
 * dnnl_graph_op_attr_t). */
static bench_attr_type attr_type_of(dnnl_graph_op_attr_t name) {
    if (name < dnnl_graph_op_attr_scales) return BENCH_ATTR_F32;
    if (name < dnnl_graph_op_attr_axis) return BENCH_ATTR_F32_LIST;
    if (name < dnnl_graph_op_attr_axes) return BENCH_ATTR_S64;
    if (name < dnnl_graph_op_attr_exclude_pad) return BENCH_ATTR_S64_LIST;
    if (name < dnnl_graph_op_attr_auto_broadcast) return BENCH_ATTR_BOOL;
    return BENCH_ATTR_STRING;
}

static void *xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    return p;
}

static void *grow(void *array, size_t *count, size_t element_size) {
    void *p = realloc(array, (*count + 1) * element_size);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(2);
    }
    memset((char *)p + *count * element_size, 0, element_size);
    ++*count;
    return p;
}

bench_op *bench_case_add_op(bench_case *c, size_t id, dnnl_graph_op_kind_t kind,
        const char *name) {
    c->ops = grow(c->ops, &c->n_ops, sizeof *c->ops);
    bench_op *op = &c->ops[c->n_ops - 1];
    op->id = id;
    op->kind = kind;
    snprintf(op->name, sizeof op->name, "%s", name);
    return op;
}

bench_tensor *bench_op_add_input(bench_op *op, const bench_tensor *t) {
    op->inputs = grow(op->inputs, &op->n_inputs, sizeof *op->inputs);
    op->inputs[op->n_inputs - 1] = *t;
    return &op->inputs[op->n_inputs - 1];
}

bench_tensor *bench_op_add_output(bench_op *op, const bench_tensor *t) {
    op->outputs = grow(op->outputs, &op->n_outputs, sizeof *op->outputs);
    op->outputs[op->n_outputs - 1] = *t;
    return &op->outputs[op->n_outputs - 1];
}

static bench_attr *new_attr(bench_op *op, dnnl_graph_op_attr_t name,
        bench_attr_type type, size_t count) {
    op->attrs = grow(op->attrs, &op->n_attrs, sizeof *op->attrs);
    bench_attr *a = &op->attrs[op->n_attrs - 1];
    a->name = name;
    a->type = type;
    a->count = count;
    return a;
}

void bench_op_set_s64(bench_op *op, dnnl_graph_op_attr_t name,
        const int64_t *values, size_t count, int is_list) {
    bench_attr *a = new_attr(
            op, name, is_list ? BENCH_ATTR_S64_LIST : BENCH_ATTR_S64, count);
    a->s64_values = xcalloc(count, sizeof *a->s64_values);
    memcpy(a->s64_values, values, count * sizeof *values);
}

void bench_op_set_f32(bench_op *op, dnnl_graph_op_attr_t name,
        const float *values, size_t count, int is_list) {
    bench_attr *a = new_attr(
            op, name, is_list ? BENCH_ATTR_F32_LIST : BENCH_ATTR_F32, count);
    a->f32_values = xcalloc(count, sizeof *a->f32_values);
    memcpy(a->f32_values, values, count * sizeof *values);
}

void bench_op_set_bool(bench_op *op, dnnl_graph_op_attr_t name, int value) {
    bench_attr *a = new_attr(op, name, BENCH_ATTR_BOOL, 1);
    a->s64_values = xcalloc(1, sizeof *a->s64_values);
    a->s64_values[0] = value != 0;
}

void bench_op_set_string(bench_op *op, dnnl_graph_op_attr_t name,
        const char *value) {
    bench_attr *a = new_attr(op, name, BENCH_ATTR_STRING, 1);
    a->string_value = xcalloc(strlen(value) + 1, 1);
    memcpy(a->string_value, value, strlen(value));
}

bench_tensor bench_tensor_dense(size_t id, dnnl_data_type_t data_type,
        int ndims, const int64_t *dims, dnnl_graph_tensor_property_t property) {
    bench_tensor t;
    memset(&t, 0, sizeof t);
    t.id = id;
    t.ndims = ndims;
    t.data_type = data_type;
    t.layout_type = dnnl_graph_layout_type_strided;
    t.property = property;
    t.has_strides = 1;
    int64_t stride = 1;
    for (int d = ndims - 1; d >= 0; --d) {
        t.dims[d] = dims[d];
        t.strides[d] = stride;
        stride *= dims[d];
    }
    return t;
}

int64_t bench_tensor_elements(const bench_tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->ndims; ++d) n *= t->dims[d] > 0 ? t->dims[d] : 1;
    return n;
}

void bench_case_free(bench_case *c) {
    for (size_t i = 0; i < c->n_ops; ++i) {
        bench_op *op = &c->ops[i];
        for (size_t a = 0; a < op->n_attrs; ++a) {
            free(op->attrs[a].f32_values);
            free(op->attrs[a].s64_values);
            free(op->attrs[a].string_value);
        }
        free(op->attrs);
        free(op->inputs);
        free(op->outputs);
    }
    free(c->ops);
    memset(c, 0, sizeof *c);
}

const bench_tensor *bench_case_find_tensor(const bench_case *c, size_t id) {
    for (size_t i = 0; i < c->n_ops; ++i) {
        const bench_op *op = &c->ops[i];
        for (size_t k = 0; k < op->n_inputs; ++k)
            if (op->inputs[k].id == id) return &op->inputs[k];
        for (size_t k = 0; k < op->n_outputs; ++k)
            if (op->outputs[k].id == id) return &op->outputs[k];
    }
    return NULL;
}

int bench_case_is_consumed(const bench_case *c, size_t id) {
    for (size_t i = 0; i < c->n_ops; ++i) {
        if (c->ops[i].kind == dnnl_graph_op_end) continue;
        for (size_t k = 0; k < c->ops[i].n_inputs; ++k)
            if (c->ops[i].inputs[k].id == id) return 1;
    }
    return 0;
}

double bench_case_total_bytes(const bench_case *c) {
    double total = 0;
    for (size_t i = 0; i < c->n_ops; ++i) {
        const bench_op *op = &c->ops[i];
        for (size_t side = 0; side < 2; ++side) {
            const bench_tensor *list = side ? op->outputs : op->inputs;
            size_t n = side ? op->n_outputs : op->n_inputs;
            for (size_t k = 0; k < n; ++k)
                /* Count each id once: at its first occurrence. */
                if (bench_case_find_tensor(c, list[k].id) == &list[k])
                    total += (double)bench_tensor_elements(&list[k])
                            * bench_dtype_bytes(list[k].data_type);
        }
    }
    return total;
}

/* ---- JSON ------------------------------------------------------------- */

static int fail(char *error, size_t error_size, const char *what,
        const char *detail) {
    snprintf(error, error_size, "%s%s%s", what, detail ? ": " : "",
            detail ? detail : "");
    return -1;
}

static int read_int_array(const cJSON *array, int64_t *out, int max_count) {
    int n = cJSON_GetArraySize(array);
    if (n > max_count) return -1;
    for (int i = 0; i < n; ++i) {
        const cJSON *item = cJSON_GetArrayItem(array, i);
        if (!cJSON_IsNumber(item)) return -1;
        /* valuedouble loses the low bits of DNNL_GRAPH_UNKNOWN_DIM, so test
         * for it by magnitude. */
        out[i] = item->valuedouble <= -9.2e18 ? INT64_MIN
                                              : (int64_t)item->valuedouble;
    }
    return n;
}

static int parse_tensor(const cJSON *json, bench_tensor *t, char *error,
        size_t error_size) {
    memset(t, 0, sizeof *t);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(json, "id");
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(json, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(json, "shape");
    const cJSON *stride = cJSON_GetObjectItemCaseSensitive(json, "stride");
    const cJSON *layout = cJSON_GetObjectItemCaseSensitive(json, "layout_type");
    const cJSON *property
            = cJSON_GetObjectItemCaseSensitive(json, "property_type");
    if (!cJSON_IsNumber(id) || !cJSON_IsString(dtype) || !cJSON_IsArray(shape))
        return fail(error, error_size, "tensor without id, dtype or shape", NULL);
    t->id = (size_t)id->valuedouble;
    t->data_type = dnnl_data_type_undef;
    int known = 0;
    for (size_t i = 0; i < COUNT_OF(dtype_infos); ++i)
        if (!strcmp(dtype_infos[i].name, dtype->valuestring)) {
            t->data_type = dtype_infos[i].data_type;
            known = 1;
        }
    if (!known) return fail(error, error_size, "unknown dtype", dtype->valuestring);
    t->ndims = read_int_array(shape, t->dims, BENCH_MAX_DIMS);
    if (t->ndims < 0) return fail(error, error_size, "bad shape", NULL);
    if (t->ndims == 1 && t->dims[0] == INT64_MIN) t->ndims = -1;
    if (cJSON_IsArray(stride)) {
        int n = read_int_array(stride, t->strides, BENCH_MAX_DIMS);
        t->has_strides = n == t->ndims && t->ndims >= 0
                && !(n == 1 && t->strides[0] == INT64_MIN);
        if (n == t->ndims)
            for (int d = 0; d < n; ++d)
                if (t->strides[d] == INT64_MIN) t->has_strides = 0;
    }
    t->layout_type = dnnl_graph_layout_type_strided;
    if (cJSON_IsString(layout)) {
        if (!strcmp(layout->valuestring, "any"))
            t->layout_type = dnnl_graph_layout_type_any;
        else if (!strcmp(layout->valuestring, "undef"))
            t->layout_type = dnnl_graph_layout_type_undef;
    }
    t->property = dnnl_graph_tensor_property_undef;
    if (cJSON_IsString(property)) {
        const char *p = property->valuestring;
        if (!strcmp(p, "variable")) t->property = dnnl_graph_tensor_property_variable;
        else if (!strcmp(p, "constant"))
            t->property = dnnl_graph_tensor_property_constant;
        else if (!strcmp(p, "host_scalar"))
            t->property = dnnl_graph_tensor_property_host_scalar;
    }
    return 0;
}

static int parse_attr(bench_op *op, const char *name, const cJSON *json,
        char *error, size_t error_size) {
    /* Names oneDNN's dump writes for its own bookkeeping. */
    static const char *internal_names[]
            = {"partition_id", "backend", "op_depth", "matched"};
    for (size_t i = 0; i < COUNT_OF(internal_names); ++i)
        if (!strcmp(name, internal_names[i])) return 0;
    const attr_name *entry = NULL;
    for (size_t i = 0; i < COUNT_OF(attr_names); ++i)
        if (!strcmp(attr_names[i].name, name)) entry = &attr_names[i];
    if (!entry) {
        fprintf(stderr, "bench: op %zu: attribute %s not known, skipped\n",
                op->id, name);
        return 0;
    }
    const cJSON *value = cJSON_GetObjectItemCaseSensitive(json, "value");
    if (!value) return 0; /* `{}`: an attribute without value */
    bench_attr_type type = attr_type_of(entry->attr);
    switch (type) {
    case BENCH_ATTR_STRING:
        if (!cJSON_IsString(value))
            return fail(error, error_size, "string attribute expected", name);
        bench_op_set_string(op, entry->attr, value->valuestring);
        return 0;
    case BENCH_ATTR_BOOL:
        bench_op_set_bool(op, entry->attr,
                cJSON_IsTrue(value)
                        || (cJSON_IsNumber(value) && value->valuedouble != 0));
        return 0;
    case BENCH_ATTR_F32:
    case BENCH_ATTR_S64: {
        if (!cJSON_IsNumber(value))
            return fail(error, error_size, "number attribute expected", name);
        if (type == BENCH_ATTR_F32) {
            float f = (float)value->valuedouble;
            bench_op_set_f32(op, entry->attr, &f, 1, 0);
        } else {
            int64_t v = (int64_t)value->valuedouble;
            bench_op_set_s64(op, entry->attr, &v, 1, 0);
        }
        return 0;
    }
    case BENCH_ATTR_F32_LIST:
    case BENCH_ATTR_S64_LIST: {
        if (!cJSON_IsArray(value))
            return fail(error, error_size, "list attribute expected", name);
        size_t n = (size_t)cJSON_GetArraySize(value);
        float *fv = xcalloc(n, sizeof *fv);
        int64_t *sv = xcalloc(n, sizeof *sv);
        for (size_t i = 0; i < n; ++i) {
            const cJSON *item = cJSON_GetArrayItem(value, (int)i);
            double d = cJSON_IsNumber(item) ? item->valuedouble : 0;
            fv[i] = (float)d;
            sv[i] = (int64_t)d;
        }
        if (type == BENCH_ATTR_F32_LIST) bench_op_set_f32(op, entry->attr, fv, n, 1);
        else bench_op_set_s64(op, entry->attr, sv, n, 1);
        free(fv);
        free(sv);
        return 0;
    }
    }
    return 0;
}

static char *read_file(const char *path, char *error, size_t error_size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(error, error_size, path, strerror(errno));
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *text = xcalloc((size_t)size + 1, 1);
    if (fread(text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(text);
        fail(error, error_size, path, "short read");
        return NULL;
    }
    fclose(f);
    return text;
}

int bench_case_load_json(bench_case *c, const char *path, char *error,
        size_t error_size) {
    memset(c, 0, sizeof *c);
    const char *base = strrchr(path, '/');
    snprintf(c->name, sizeof c->name, "%s", base ? base + 1 : path);
    char *text = read_file(path, error, error_size);
    if (!text) return -1;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root) return fail(error, error_size, path, "not valid JSON");
    int rc = 0;
    c->fpmath_mode = dnnl_fpmath_mode_strict;
    const cJSON *mode = cJSON_GetObjectItemCaseSensitive(root, "fpmath_mode");
    if (cJSON_IsString(mode)) {
        const char *m = mode->valuestring;
        if (!strcmp(m, "bf16")) c->fpmath_mode = dnnl_fpmath_mode_bf16;
        else if (!strcmp(m, "f16")) c->fpmath_mode = dnnl_fpmath_mode_f16;
        else if (!strcmp(m, "tf32")) c->fpmath_mode = dnnl_fpmath_mode_tf32;
        else if (!strcmp(m, "any")) c->fpmath_mode = dnnl_fpmath_mode_any;
    }
    const cJSON *to_int
            = cJSON_GetObjectItemCaseSensitive(root, "fpmath_mode_apply_to_int");
    c->fpmath_apply_to_int = cJSON_IsString(to_int)
            && !strcmp(to_int->valuestring, "true");
    const cJSON *graph = cJSON_GetObjectItemCaseSensitive(root, "graph");
    if (!cJSON_IsArray(graph) || cJSON_GetArraySize(graph) == 0) {
        rc = fail(error, error_size, path, "no graph array");
        goto done;
    }
    const cJSON *op_json;
    cJSON_ArrayForEach(op_json, graph) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(op_json, "id");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(op_json, "kind");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(op_json, "name");
        if (!cJSON_IsNumber(id) || !cJSON_IsString(kind)) {
            rc = fail(error, error_size, path, "op without id or kind");
            goto done;
        }
        const op_kind_name *entry = NULL;
        for (size_t i = 0; i < COUNT_OF(op_kind_names); ++i)
            if (!strcmp(op_kind_names[i].name, kind->valuestring))
                entry = &op_kind_names[i];
        if (!entry) {
            rc = fail(error, error_size, "unknown op kind", kind->valuestring);
            goto done;
        }
        bench_op *op = bench_case_add_op(c, (size_t)id->valuedouble, entry->kind,
                cJSON_IsString(name) ? name->valuestring : kind->valuestring);
        const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(op_json, "attrs");
        const cJSON *attr;
        cJSON_ArrayForEach(attr, attrs) {
            if ((rc = parse_attr(op, attr->string, attr, error, error_size)))
                goto done;
        }
        for (int side = 0; side < 2; ++side) {
            const cJSON *list = cJSON_GetObjectItemCaseSensitive(
                    op_json, side ? "outputs" : "inputs");
            const cJSON *tensor_json;
            cJSON_ArrayForEach(tensor_json, list) {
                bench_tensor t;
                if ((rc = parse_tensor(tensor_json, &t, error, error_size)))
                    goto done;
                if (side) bench_op_add_output(op, &t);
                else bench_op_add_input(op, &t);
            }
        }
    }
done:
    cJSON_Delete(root);
    if (rc) bench_case_free(c);
    return rc;
}

static cJSON *tensor_to_json(const bench_tensor *t) {
    static const char *properties[] = {"undef", "variable", "constant", "host_scalar"};
    cJSON *json = cJSON_CreateObject();
    cJSON_AddNumberToObject(json, "id", (double)t->id);
    cJSON_AddStringToObject(json, "dtype", bench_dtype_name(t->data_type));
    cJSON *shape = cJSON_AddArrayToObject(json, "shape");
    cJSON *stride = cJSON_AddArrayToObject(json, "stride");
    for (int d = 0; d < t->ndims; ++d) {
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->dims[d]));
        cJSON_AddItemToArray(stride, cJSON_CreateNumber((double)t->strides[d]));
    }
    cJSON_AddStringToObject(json, "layout_type",
            t->layout_type == dnnl_graph_layout_type_any ? "any" : "strided");
    cJSON_AddStringToObject(json, "property_type",
            properties[t->property <= 3 ? t->property : 0]);
    return json;
}

int bench_case_write_json(const bench_case *c, const char *path) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "version", "3.13.0");
    cJSON_AddStringToObject(root, "engine_kind", "cpu");
    cJSON_AddStringToObject(root, "fpmath_mode", "strict");
    cJSON *graph = cJSON_AddArrayToObject(root, "graph");
    for (size_t i = 0; i < c->n_ops; ++i) {
        const bench_op *op = &c->ops[i];
        cJSON *op_json = cJSON_CreateObject();
        cJSON_AddNumberToObject(op_json, "id", (double)op->id);
        cJSON_AddStringToObject(op_json, "name", op->name);
        const char *kind_name = "?";
        for (size_t k = 0; k < COUNT_OF(op_kind_names); ++k)
            if (op_kind_names[k].kind == op->kind) {
                kind_name = op_kind_names[k].name;
                break;
            }
        cJSON_AddStringToObject(op_json, "kind", kind_name);
        cJSON *attrs = cJSON_AddObjectToObject(op_json, "attrs");
        for (size_t a = 0; a < op->n_attrs; ++a) {
            const bench_attr *attr = &op->attrs[a];
            const char *attr_label = "?";
            for (size_t k = 0; k < COUNT_OF(attr_names); ++k)
                if (attr_names[k].attr == attr->name) attr_label = attr_names[k].name;
            cJSON *entry = cJSON_AddObjectToObject(attrs, attr_label);
            cJSON *list = NULL;
            switch (attr->type) {
            case BENCH_ATTR_F32:
                cJSON_AddStringToObject(entry, "type", "f32");
                cJSON_AddNumberToObject(entry, "value", attr->f32_values[0]);
                break;
            case BENCH_ATTR_S64:
                cJSON_AddStringToObject(entry, "type", "s64");
                cJSON_AddNumberToObject(entry, "value", (double)attr->s64_values[0]);
                break;
            case BENCH_ATTR_BOOL:
                cJSON_AddStringToObject(entry, "type", "bool");
                cJSON_AddNumberToObject(entry, "value", (double)attr->s64_values[0]);
                break;
            case BENCH_ATTR_STRING:
                cJSON_AddStringToObject(entry, "type", "string");
                cJSON_AddStringToObject(entry, "value", attr->string_value);
                break;
            case BENCH_ATTR_F32_LIST:
                cJSON_AddStringToObject(entry, "type", "f32[]");
                list = cJSON_AddArrayToObject(entry, "value");
                for (size_t v = 0; v < attr->count; ++v)
                    cJSON_AddItemToArray(list, cJSON_CreateNumber(attr->f32_values[v]));
                break;
            case BENCH_ATTR_S64_LIST:
                cJSON_AddStringToObject(entry, "type", "s64[]");
                list = cJSON_AddArrayToObject(entry, "value");
                for (size_t v = 0; v < attr->count; ++v)
                    cJSON_AddItemToArray(
                            list, cJSON_CreateNumber((double)attr->s64_values[v]));
                break;
            }
        }
        cJSON *inputs = cJSON_AddArrayToObject(op_json, "inputs");
        for (size_t k = 0; k < op->n_inputs; ++k)
            cJSON_AddItemToArray(inputs, tensor_to_json(&op->inputs[k]));
        cJSON *outputs = cJSON_AddArrayToObject(op_json, "outputs");
        for (size_t k = 0; k < op->n_outputs; ++k)
            cJSON_AddItemToArray(outputs, tensor_to_json(&op->outputs[k]));
        cJSON_AddItemToArray(graph, op_json);
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    FILE *f = text ? fopen(path, "w") : NULL;
    int rc = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF ? 0 : -1;
    if (f && fclose(f)) rc = -1;
    free(text);
    return rc;
}
