/* Name tables and op groupings; see op_kinds.h. */
#include "op_kinds.h"

#include <string.h>

#include "ir/op.h"

#define U PC_K_UNARY
#define BA PC_K_BINARY_ARITH
#define BD PC_K_BINARY_DRV
#define ED PC_K_ELTWISE_DRV
#define Q PC_K_QUANT
#define RD PC_K_REORDER_DRV
#define RED PC_K_REDUCTION
#define POOL PC_K_POOL
#define NORM PC_K_NORM
#define BWD PC_K_BWD

static const struct {
    int kind;
    const char *name;
    unsigned flags;
} kinds[] = {
    {dnnl_graph_op_abs, "Abs", U | ED},
    {dnnl_graph_op_abs_backward, "AbsBackward", ED | BWD},
    {dnnl_graph_op_add, "Add", BA | BD},
    {dnnl_graph_op_avg_pool, "AvgPool", POOL},
    {dnnl_graph_op_avg_pool_backward, "AvgPoolBackward", POOL},
    {dnnl_graph_op_batch_norm_backward, "BatchNormTrainingBackward", NORM},
    {dnnl_graph_op_batch_norm_forward_training, "BatchNormForwardTraining", NORM},
    {dnnl_graph_op_batch_norm_inference, "BatchNormInference", NORM},
    {dnnl_graph_op_bias_add, "BiasAdd", BA | BD},
    {dnnl_graph_op_bias_add_backward, "BiasAddBackward", 0},
    {dnnl_graph_op_clamp, "Clamp", U | ED},
    {dnnl_graph_op_clamp_backward, "ClampBackward", ED | BWD},
    {dnnl_graph_op_concat, "Concat", 0},
    {dnnl_graph_op_convolution, "Convolution", 0},
    {dnnl_graph_op_convolution_backward_data, "ConvolutionBackwardData", 0},
    {dnnl_graph_op_convolution_backward_weights, "ConvolutionBackwardWeights", 0},
    {dnnl_graph_op_conv_transpose, "ConvTranspose", 0},
    {dnnl_graph_op_conv_transpose_backward_data, "ConvTransposeBackwardData", 0},
    {dnnl_graph_op_conv_transpose_backward_weights, "ConvTransposeBackwardWeights", 0},
    {dnnl_graph_op_dequantize, "Dequantize", Q | RD},
    {dnnl_graph_op_divide, "Divide", BA | BD},
    {dnnl_graph_op_dynamic_dequantize, "DynamicDequantize", Q | RD},
    {dnnl_graph_op_dynamic_quantize, "DynamicQuantize", Q | RD},
    {dnnl_graph_op_elu, "Elu", U | ED},
    {dnnl_graph_op_elu_backward, "EluBackward", ED | BWD},
    {dnnl_graph_op_end, "End", 0},
    {dnnl_graph_op_exp, "Exp", U | ED},
    {dnnl_graph_op_gelu, "GELU", U | ED},
    {dnnl_graph_op_gelu_backward, "GELUBackward", ED | BWD},
    {dnnl_graph_op_hard_swish, "HardSwish", U | ED},
    {dnnl_graph_op_hard_swish_backward, "HardSwishBackward", ED | BWD},
    {dnnl_graph_op_interpolate, "Interpolate", 0},
    {dnnl_graph_op_interpolate_backward, "InterpolateBackward", 0},
    {dnnl_graph_op_layer_norm, "LayerNorm", NORM},
    {dnnl_graph_op_layer_norm_backward, "LayerNormBackward", NORM},
    {dnnl_graph_op_leaky_relu, "LeakyReLU", U | ED},
    {dnnl_graph_op_log, "Log", U | ED},
    {dnnl_graph_op_log_softmax, "LogSoftmax", 0},
    {dnnl_graph_op_log_softmax_backward, "LogSoftmaxBackward", 0},
    {dnnl_graph_op_matmul, "MatMul", 0},
    {dnnl_graph_op_maximum, "Maximum", BA | BD},
    {dnnl_graph_op_max_pool, "MaxPool", POOL},
    {dnnl_graph_op_max_pool_backward, "MaxPoolBackward", POOL},
    {dnnl_graph_op_minimum, "Minimum", BA | BD},
    {dnnl_graph_op_mish, "Mish", U | ED},
    {dnnl_graph_op_mish_backward, "MishBackward", ED | BWD},
    {dnnl_graph_op_multiply, "Multiply", BA | BD},
    {dnnl_graph_op_prelu, "PReLU", 0},
    {dnnl_graph_op_prelu_backward, "PReLUBackward", 0},
    {dnnl_graph_op_quantize, "Quantize", Q | RD},
    {dnnl_graph_op_reciprocal, "Reciprocal", ED},
    {dnnl_graph_op_reduce_l1, "ReduceL1", RED},
    {dnnl_graph_op_reduce_l2, "ReduceL2", RED},
    {dnnl_graph_op_reduce_max, "ReduceMax", RED},
    {dnnl_graph_op_reduce_mean, "ReduceMean", RED},
    {dnnl_graph_op_reduce_min, "ReduceMin", RED},
    {dnnl_graph_op_reduce_prod, "ReduceProd", RED},
    {dnnl_graph_op_reduce_sum, "ReduceSum", RED},
    {dnnl_graph_op_relu, "ReLU", U | ED},
    {dnnl_graph_op_relu_backward, "ReLUBackward", ED | BWD},
    {dnnl_graph_op_reorder, "Reorder", RD},
    {dnnl_graph_op_round, "Round", U | ED},
    {dnnl_graph_op_sigmoid, "Sigmoid", U | ED},
    {dnnl_graph_op_sigmoid_backward, "SigmoidBackward", ED | BWD},
    {dnnl_graph_op_softmax, "SoftMax", 0},
    {dnnl_graph_op_softmax_backward, "SoftMaxBackward", 0},
    {dnnl_graph_op_softplus, "SoftPlus", U | ED},
    {dnnl_graph_op_softplus_backward, "SoftPlusBackward", ED | BWD},
    {dnnl_graph_op_sqrt, "Sqrt", U | ED},
    {dnnl_graph_op_sqrt_backward, "SqrtBackward", ED | BWD},
    {dnnl_graph_op_square, "Square", U | ED},
    {dnnl_graph_op_squared_difference, "SquaredDifference", ED},
    {dnnl_graph_op_static_reshape, "StaticReshape", 0},
    {dnnl_graph_op_static_transpose, "StaticTranspose", 0},
    {dnnl_graph_op_subtract, "Subtract", BA | BD},
    {dnnl_graph_op_tanh, "Tanh", U | ED},
    {dnnl_graph_op_tanh_backward, "TanhBackward", ED | BWD},
    {dnnl_graph_op_type_cast, "TypeCast", RD},
    {dnnl_graph_op_wildcard, "Wildcard", 0},
    {dnnl_graph_op_hard_sigmoid, "HardSigmoid", U | ED},
    {dnnl_graph_op_hard_sigmoid_backward, "HardSigmoidBackward", ED | BWD},
    {dnnl_graph_op_select, "Select", BD},
    {dnnl_graph_op_pow, "Pow", ED},
    {dnnl_graph_op_group_norm, "GroupNorm", NORM},
    {dnnl_graph_op_gen_index, "GenIndex", 0},
    {dnnl_graph_op_greater_equal, "GreaterEqual", BD},
    {dnnl_graph_op_rms_norm, "RMSNorm", NORM},
    {dnnl_graph_op_dropout, "Dropout", ED},
};


#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int pc_kind_from_name(const char *name) {
    if (!name) return -1;
    for (size_t i = 0; i < COUNT(kinds); ++i)
        if (strcmp(kinds[i].name, name) == 0) return kinds[i].kind;
    return -1;
}

const char *pc_kind_name(int kind) {
    for (size_t i = 0; i < COUNT(kinds); ++i)
        if (kinds[i].kind == kind) return kinds[i].name;
    return "Unknown";
}

unsigned pc_kind_flags(int kind) {
    for (size_t i = 0; i < COUNT(kinds); ++i)
        if (kinds[i].kind == kind) return kinds[i].flags;
    return 0;
}

/* Attribute names come from the library's one table (src/ir/op.c). */
int pc_attr_from_name(const char *name) {
    return name ? pt_attr_from_name(name) : dnnl_graph_op_attr_undef;
}

const char *pc_attr_name(int attr) {
    return pt_attr_from_name(pt_attr_name(attr)) == attr ? pt_attr_name(attr) : "unknown";
}

pc_attr_type pc_attr_type_of(int attr) {
    if (attr >= dnnl_graph_op_attr_alpha && attr < dnnl_graph_op_attr_scales) return PC_AT_F32;
    if (attr >= dnnl_graph_op_attr_scales && attr < dnnl_graph_op_attr_axis) return PC_AT_F32S;
    if (attr >= dnnl_graph_op_attr_axis && attr < dnnl_graph_op_attr_axes) return PC_AT_S64;
    if (attr >= dnnl_graph_op_attr_axes && attr < dnnl_graph_op_attr_exclude_pad) return PC_AT_S64S;
    if (attr >= dnnl_graph_op_attr_exclude_pad && attr < dnnl_graph_op_attr_auto_broadcast) return PC_AT_BOOL;
    if (attr >= dnnl_graph_op_attr_auto_broadcast && attr < dnnl_graph_op_attr_end) return PC_AT_STR;
    return PC_AT_NONE;
}

static const char *const type_strs[] = {"", "bool", "s64", "s64[]", "f32", "f32[]", "string"};

const char *pc_attr_type_str(pc_attr_type t) {
    return (unsigned)t < COUNT(type_strs) ? type_strs[t] : "";
}

pc_attr_type pc_attr_type_from_str(const char *s) {
    if (!s) return PC_AT_NONE;
    for (size_t i = 1; i < COUNT(type_strs); ++i)
        if (strcmp(type_strs[i], s) == 0) return (pc_attr_type)i;
    return PC_AT_NONE;
}
