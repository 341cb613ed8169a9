/* Name tables and op groupings; see op_kinds.h. */
#include "op_kinds.h"

#include <string.h>

#include "ir/op.h"
#include "ops/op_schema.h"

/* The op groups, each a list of JSON kind names separated by single spaces.
 * The names themselves come from the library's table (pt_op_kind_name). */
static const struct {
    unsigned flag;
    const char *kinds;
} groups[] = {
    {PC_K_UNARY, "Abs Clamp Elu Exp GELU HardSigmoid HardSwish LeakyReLU Log Mish ReLU Round Sigmoid SoftPlus "
                 "Sqrt Square Tanh"},
    {PC_K_BINARY_ARITH, "Add BiasAdd Divide Maximum Minimum Multiply Subtract"},
    {PC_K_BINARY_DRV, "Add BiasAdd Divide Maximum Minimum Multiply Subtract Select GreaterEqual"},
    {PC_K_ELTWISE_DRV, "Abs Clamp Elu Exp GELU HardSigmoid HardSwish LeakyReLU Log Mish ReLU Round Sigmoid SoftPlus "
                       "Sqrt Square Tanh AbsBackward ClampBackward EluBackward GELUBackward HardSigmoidBackward "
                       "HardSwishBackward MishBackward ReLUBackward SigmoidBackward SoftPlusBackward SqrtBackward "
                       "TanhBackward Reciprocal SquaredDifference Pow Dropout"},
    {PC_K_QUANT, "Quantize Dequantize DynamicQuantize DynamicDequantize"},
    {PC_K_REORDER_DRV, "Quantize Dequantize DynamicQuantize DynamicDequantize Reorder TypeCast"},
    {PC_K_REDUCTION, "ReduceL1 ReduceL2 ReduceMax ReduceMean ReduceMin ReduceProd ReduceSum"},
    {PC_K_POOL, "AvgPool AvgPoolBackward MaxPool MaxPoolBackward"},
    {PC_K_NORM, "BatchNormTrainingBackward BatchNormForwardTraining BatchNormInference LayerNorm "
                "LayerNormBackward GroupNorm RMSNorm"},
    {PC_K_BWD, "AbsBackward ClampBackward EluBackward GELUBackward HardSigmoidBackward HardSwishBackward "
               "MishBackward ReLUBackward SigmoidBackward SoftPlusBackward SqrtBackward TanhBackward"},
    {PC_K_WEIGHTED, "MatMul Convolution ConvTranspose ConvolutionBackwardData ConvolutionBackwardWeights "
                    "ConvTransposeBackwardData ConvTransposeBackwardWeights"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Only the canonical spelling: the loader maps the legacy one itself. */
int pc_kind_from_name(const char *name) {
    int kind = pt_op_kind_from_name(name);
    return kind >= 0 && strcmp(pt_op_kind_name(kind), name) == 0 ? kind : -1;
}

const char *pc_kind_name(int kind) { return pt_op_kind_name(kind); }

static bool list_has(const char *list, const char *word) {
    size_t n = strlen(word);
    for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
    return false;
}

unsigned pc_kind_flags(int kind) {
    const char *name = pt_op_kind_name(kind);
    unsigned flags = 0;
    if (strcmp(name, "Unknown") == 0) return 0;
    for (size_t g = 0; g < COUNT(groups); ++g)
        if (list_has(groups[g].kinds, name)) flags |= groups[g].flag;
    return flags;
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
