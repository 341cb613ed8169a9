/* Op-kind families used by the planner and the pattern matcher. */
#include "ops/op_schema.h"

bool pt_op_is_unary_eltwise(int kind) {
    switch (kind) {
    case dnnl_graph_op_abs: case dnnl_graph_op_clamp: case dnnl_graph_op_elu:
    case dnnl_graph_op_exp: case dnnl_graph_op_gelu: case dnnl_graph_op_hard_sigmoid:
    case dnnl_graph_op_hard_swish: case dnnl_graph_op_leaky_relu: case dnnl_graph_op_log:
    case dnnl_graph_op_mish: case dnnl_graph_op_pow: case dnnl_graph_op_reciprocal:
    case dnnl_graph_op_relu: case dnnl_graph_op_round: case dnnl_graph_op_sigmoid:
    case dnnl_graph_op_softplus: case dnnl_graph_op_sqrt: case dnnl_graph_op_square:
    case dnnl_graph_op_tanh:
        return true;
    default:
        return false;
    }
}

bool pt_op_is_binary_eltwise(int kind) {
    switch (kind) {
    case dnnl_graph_op_add: case dnnl_graph_op_subtract: case dnnl_graph_op_multiply:
    case dnnl_graph_op_divide: case dnnl_graph_op_maximum: case dnnl_graph_op_minimum:
    case dnnl_graph_op_squared_difference: case dnnl_graph_op_greater_equal:
        return true;
    default:
        return false;
    }
}
