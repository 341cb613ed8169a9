/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl_graph_types.h
 *
 * Types of the graph API: logical tensors, layout and property kinds,
 * partition policies, dump modes, op kinds, op attributes, object handles
 * and host allocator callbacks.
 */

#ifndef ONEAPI_DNNL_DNNL_GRAPH_TYPES_H
#define ONEAPI_DNNL_DNNL_GRAPH_TYPES_H

#include <limits.h>
#include <stddef.h>

#include "oneapi/dnnl/dnnl_common_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Logical tensor                                                           */
/* ------------------------------------------------------------------------ */

/* Number of dimensions not known yet. */
#define DNNL_GRAPH_UNKNOWN_NDIMS -1

/* Dimension or stride not known yet. */
#define DNNL_GRAPH_UNKNOWN_DIM INT64_MIN

/* How the memory layout of a logical tensor is described. */
typedef enum {
    /* No layout information. */
    dnnl_graph_layout_type_undef = 0,
    /* The library chooses the layout at compile time. */
    dnnl_graph_layout_type_any = 1,
    /* The layout is given by layout.strides. */
    dnnl_graph_layout_type_strided = 2,
    /* Library-private layout identified by layout.layout_id. */
    dnnl_graph_layout_type_opaque = 3,
} dnnl_graph_layout_type_t;

/* How the content of a logical tensor behaves across executions. */
typedef enum {
    /* Default; behaves like variable. */
    dnnl_graph_tensor_property_undef = 0,
    /* Content may change between executions. */
    dnnl_graph_tensor_property_variable = 1,
    /* Content never changes between executions; may be cached. */
    dnnl_graph_tensor_property_constant = 2,
    /* 0-D scalar in host memory (s32, f32 or s64). */
    dnnl_graph_tensor_property_host_scalar = 3,
} dnnl_graph_tensor_property_t;

/* Description of a tensor: id, shape, element type, property and layout.
 * A plain value type that users create, copy and compare freely. */
typedef struct {
    /* Unique tensor id; equal ids connect producers to consumers. */
    size_t id;
    /* Rank; DNNL_GRAPH_UNKNOWN_NDIMS (-1) if unknown, 0 for a scalar. */
    int ndims;
    /* Sizes; DNNL_GRAPH_UNKNOWN_DIM for an unknown dimension. */
    dnnl_dims_t dims;
    /* Element data type. */
    dnnl_data_type_t data_type;
    /* Tensor property. */
    dnnl_graph_tensor_property_t property;
    /* Selects which member of layout is valid. */
    dnnl_graph_layout_type_t layout_type;
    /* Layout description. */
    union {
        /* Strides, valid for dnnl_graph_layout_type_strided. */
        dnnl_dims_t strides;
        /* Opaque layout id, valid for dnnl_graph_layout_type_opaque. */
        size_t layout_id;
    } layout;
} dnnl_graph_logical_tensor_t;

/* ------------------------------------------------------------------------ */
/* Partition                                                                */
/* ------------------------------------------------------------------------ */

/* Partitioning policy used by dnnl_graph_graph_filter. */
typedef enum {
    /* Fuse ops into larger partitions where patterns match. */
    dnnl_graph_partition_policy_fusion = 1,
    /* No fusion: every op becomes its own partition. */
    dnnl_graph_partition_policy_debug = 2,
} dnnl_graph_partition_policy_t;

/* Opaque partition object. */
struct dnnl_graph_partition;

/* Partition handle. */
typedef struct dnnl_graph_partition *dnnl_graph_partition_t;

/* Constant partition handle. */
typedef const struct dnnl_graph_partition *const_dnnl_graph_partition_t;

/* ------------------------------------------------------------------------ */
/* Graph                                                                    */
/* ------------------------------------------------------------------------ */

/* Opaque graph object. */
struct dnnl_graph_graph;

/* Graph handle. */
typedef struct dnnl_graph_graph *dnnl_graph_graph_t;

/* Constant graph handle. */
typedef const struct dnnl_graph_graph *const_dnnl_graph_graph_t;

/* Graph dumping modes; values may be OR-ed together. */
typedef enum {
    /* No dumping. */
    dnnl_graph_dump_mode_none = 0x0U,
    /* Dump each partition's subgraph when it is compiled. */
    dnnl_graph_dump_mode_subgraph = 0x1U,
    /* Dump the whole user graph at partitioning time. */
    dnnl_graph_dump_mode_graph = 0x2U,
} dnnl_graph_dump_mode_t;

/* ------------------------------------------------------------------------ */
/* Op                                                                       */
/* ------------------------------------------------------------------------ */

/* Kind of an op. Values count up from 0 in declaration order. */
typedef enum {
    dnnl_graph_op_abs,
    dnnl_graph_op_abs_backward,
    dnnl_graph_op_add,
    dnnl_graph_op_avg_pool,
    dnnl_graph_op_avg_pool_backward,
    dnnl_graph_op_batch_norm_backward,
    dnnl_graph_op_batch_norm_forward_training,
    dnnl_graph_op_batch_norm_inference,
    dnnl_graph_op_bias_add,
    dnnl_graph_op_bias_add_backward,
    dnnl_graph_op_clamp,
    dnnl_graph_op_clamp_backward,
    dnnl_graph_op_concat,
    dnnl_graph_op_convolution,
    dnnl_graph_op_convolution_backward_data,
    dnnl_graph_op_convolution_backward_weights,
    dnnl_graph_op_conv_transpose,
    dnnl_graph_op_conv_transpose_backward_data,
    dnnl_graph_op_conv_transpose_backward_weights,
    dnnl_graph_op_dequantize,
    dnnl_graph_op_divide,
    dnnl_graph_op_dynamic_dequantize,
    dnnl_graph_op_dynamic_quantize,
    dnnl_graph_op_elu,
    dnnl_graph_op_elu_backward,
    dnnl_graph_op_end,
    dnnl_graph_op_exp,
    dnnl_graph_op_gelu,
    dnnl_graph_op_gelu_backward,
    dnnl_graph_op_hard_swish,
    dnnl_graph_op_hard_swish_backward,
    dnnl_graph_op_interpolate,
    dnnl_graph_op_interpolate_backward,
    dnnl_graph_op_layer_norm,
    dnnl_graph_op_layer_norm_backward,
    dnnl_graph_op_leaky_relu,
    dnnl_graph_op_log,
    dnnl_graph_op_log_softmax,
    dnnl_graph_op_log_softmax_backward,
    dnnl_graph_op_matmul,
    dnnl_graph_op_maximum,
    dnnl_graph_op_max_pool,
    dnnl_graph_op_max_pool_backward,
    dnnl_graph_op_minimum,
    dnnl_graph_op_mish,
    dnnl_graph_op_mish_backward,
    dnnl_graph_op_multiply,
    dnnl_graph_op_prelu,
    dnnl_graph_op_prelu_backward,
    dnnl_graph_op_quantize,
    dnnl_graph_op_reciprocal,
    dnnl_graph_op_reduce_l1,
    dnnl_graph_op_reduce_l2,
    dnnl_graph_op_reduce_max,
    dnnl_graph_op_reduce_mean,
    dnnl_graph_op_reduce_min,
    dnnl_graph_op_reduce_prod,
    dnnl_graph_op_reduce_sum,
    dnnl_graph_op_relu,
    dnnl_graph_op_relu_backward,
    dnnl_graph_op_reorder,
    dnnl_graph_op_round,
    dnnl_graph_op_sigmoid,
    dnnl_graph_op_sigmoid_backward,
    dnnl_graph_op_softmax,
    dnnl_graph_op_softmax_backward,
    dnnl_graph_op_softplus,
    dnnl_graph_op_softplus_backward,
    dnnl_graph_op_sqrt,
    dnnl_graph_op_sqrt_backward,
    dnnl_graph_op_square,
    dnnl_graph_op_squared_difference,
    dnnl_graph_op_static_reshape,
    dnnl_graph_op_static_transpose,
    dnnl_graph_op_subtract,
    dnnl_graph_op_tanh,
    dnnl_graph_op_tanh_backward,
    dnnl_graph_op_type_cast,
    dnnl_graph_op_wildcard,
    dnnl_graph_op_hard_sigmoid,
    dnnl_graph_op_hard_sigmoid_backward,
    dnnl_graph_op_select,
    dnnl_graph_op_pow,
    dnnl_graph_op_group_norm,
    dnnl_graph_op_gen_index,
    dnnl_graph_op_greater_equal,
    dnnl_graph_op_rms_norm,
    dnnl_graph_op_dropout,
    /* Sentinel; not a real op kind. */
    dnnl_graph_op_last_symbol,
} dnnl_graph_op_kind_t;

/* Op attribute names, grouped by value type. Within a group only the first
 * value is explicit; the others count up from it. */
typedef enum {
    /* Undefined attribute. */
    dnnl_graph_op_attr_undef = 0,

    /* Single f32 values (dnnl_graph_op_set_attr_f32). */
    dnnl_graph_op_attr_alpha = 0x1,
    dnnl_graph_op_attr_beta,
    dnnl_graph_op_attr_epsilon,
    dnnl_graph_op_attr_max,
    dnnl_graph_op_attr_min,
    dnnl_graph_op_attr_momentum,

    /* f32 vectors (dnnl_graph_op_set_attr_f32). */
    dnnl_graph_op_attr_scales = 0x20,

    /* Single s64 values (dnnl_graph_op_set_attr_s64). */
    dnnl_graph_op_attr_axis = 0x30,
    dnnl_graph_op_attr_begin_norm_axis,
    dnnl_graph_op_attr_groups,

    /* s64 vectors (dnnl_graph_op_set_attr_s64). */
    dnnl_graph_op_attr_axes = 0x40,
    dnnl_graph_op_attr_dilations,
    dnnl_graph_op_attr_dst_shape,
    dnnl_graph_op_attr_kernel,
    dnnl_graph_op_attr_order,
    dnnl_graph_op_attr_output_padding,
    dnnl_graph_op_attr_pads_begin,
    dnnl_graph_op_attr_pads_end,
    dnnl_graph_op_attr_shape,
    dnnl_graph_op_attr_sizes,
    dnnl_graph_op_attr_src_shape,
    dnnl_graph_op_attr_strides,
    dnnl_graph_op_attr_weights_shape,
    dnnl_graph_op_attr_zps,
    dnnl_graph_op_attr_group_shape,

    /* Booleans (dnnl_graph_op_set_attr_bool). */
    dnnl_graph_op_attr_exclude_pad = 0x60,
    dnnl_graph_op_attr_keep_dims,
    dnnl_graph_op_attr_keep_stats,
    dnnl_graph_op_attr_per_channel_broadcast,
    dnnl_graph_op_attr_special_zero,
    dnnl_graph_op_attr_transpose_a,
    dnnl_graph_op_attr_transpose_b,
    dnnl_graph_op_attr_use_affine,
    dnnl_graph_op_attr_use_dst,

    /* Strings (dnnl_graph_op_set_attr_str). */
    dnnl_graph_op_attr_auto_broadcast = 0x80,
    dnnl_graph_op_attr_auto_pad,
    dnnl_graph_op_attr_coordinate_transformation_mode,
    dnnl_graph_op_attr_data_format,
    dnnl_graph_op_attr_mode,
    dnnl_graph_op_attr_qtype,
    dnnl_graph_op_attr_rounding_type,
    dnnl_graph_op_attr_weights_format,
    dnnl_graph_op_attr_accumulation_mode,

    /* End of the public attribute range. */
    dnnl_graph_op_attr_end = 0xFF,
} dnnl_graph_op_attr_t;

/* Opaque op object. */
struct dnnl_graph_op;

/* Op handle. */
typedef struct dnnl_graph_op *dnnl_graph_op_t;

/* Constant op handle. */
typedef const struct dnnl_graph_op *const_dnnl_graph_op_t;

/* ------------------------------------------------------------------------ */
/* Allocator                                                                */
/* ------------------------------------------------------------------------ */

/* Host allocation callback: returns at least size bytes aligned to
 * alignment, or NULL on failure. */
typedef void *(*dnnl_graph_host_allocate_f)(size_t size, size_t alignment);

/* Host deallocation callback: releases a buffer obtained from the matching
 * allocation callback. */
typedef void (*dnnl_graph_host_deallocate_f)(void *);

/* Opaque allocator object. */
struct dnnl_graph_allocator;

/* Allocator handle. */
typedef struct dnnl_graph_allocator *dnnl_graph_allocator_t;

/* Constant allocator handle. */
typedef const struct dnnl_graph_allocator *const_dnnl_graph_allocator_t;

/* ------------------------------------------------------------------------ */
/* Compiled partition                                                       */
/* ------------------------------------------------------------------------ */

/* An input/output pair of a compiled partition that may share one buffer. */
typedef struct {
    /* Id of the input logical tensor. */
    size_t input_id;
    /* Id of the output logical tensor. */
    size_t output_id;
} dnnl_graph_inplace_pair_t;

/* Opaque compiled partition object. */
struct dnnl_graph_compiled_partition;

/* Compiled partition handle. */
typedef struct dnnl_graph_compiled_partition *dnnl_graph_compiled_partition_t;

/* Constant compiled partition handle. */
typedef const struct dnnl_graph_compiled_partition
        *const_dnnl_graph_compiled_partition_t;

/* ------------------------------------------------------------------------ */
/* Tensor                                                                   */
/* ------------------------------------------------------------------------ */

/* Opaque tensor object. */
struct dnnl_graph_tensor;

/* Tensor handle. */
typedef struct dnnl_graph_tensor *dnnl_graph_tensor_t;

/* Constant tensor handle. */
typedef const struct dnnl_graph_tensor *const_dnnl_graph_tensor_t;

/* ======================================================================== */
/* Partita additions (not in oneDNN)                                        */
/*                                                                          */
/* Not part of oneDNN's headers or ABI: programs built only against        */
/* oneDNN's headers never reference these.                                  */
/* ======================================================================== */

/* Options for dnnl_graph_compiled_partition_execute_with_options. */
typedef struct {
    /* Names the set of constant weights bound in this execution; included
     * in constant weight cache lookups. */
    size_t key;
} dnnl_graph_execute_options_t;

#ifdef __cplusplus
}
#endif

#endif /* ONEAPI_DNNL_DNNL_GRAPH_TYPES_H */
