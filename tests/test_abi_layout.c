/*
 * Partita - ABI layout checks for the public C headers.
 *
 * Everything here is checked at compile time with _Static_assert; if this
 * file compiles, the struct layouts, enum sizes and enum values match the
 * oneDNN v3 Graph C ABI. Offsets and sizes are the LP64 (x86-64 / AArch64
 * Linux) numbers. The runtime part only reports the result.
 */

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "oneapi/dnnl/dnnl_graph.h"

#define SA(cond) _Static_assert(cond, #cond)

/* ---- constants -------------------------------------------------------- */
SA(DNNL_MAX_NDIMS == 12);
SA(DNNL_GRAPH_UNKNOWN_NDIMS == -1);
SA(DNNL_GRAPH_UNKNOWN_DIM == INT64_MIN);
SA(DNNL_VERSION_MAJOR == 3);
SA(DNNL_VERSION_MINOR == 14);
SA(DNNL_VERSION_PATCH == 0);
SA(DNNL_RUNTIME_NONE == 0u && DNNL_RUNTIME_SEQ == 1u
        && DNNL_RUNTIME_OMP == 2u && DNNL_RUNTIME_TBB == 4u
        && DNNL_RUNTIME_THREADPOOL == 8u && DNNL_RUNTIME_OCL == 256u
        && DNNL_RUNTIME_SYCL == 512u && DNNL_RUNTIME_DPCPP == 512u
        && DNNL_RUNTIME_ZE == 1024u);
SA(DNNL_VENDOR_NONE == 0u && DNNL_VENDOR_INTEL == 1u
        && DNNL_VENDOR_NVIDIA == 2u && DNNL_VENDOR_AMD == 4u
        && DNNL_VENDOR_GENERIC == 8u);
SA(DNNL_GPU_RUNTIME == DNNL_RUNTIME_NONE);
SA(DNNL_EXPERIMENTAL_GROUPED_MEMORY == 0);
#ifndef ONEDNN_BUILD_GRAPH
#error "ONEDNN_BUILD_GRAPH must be defined"
#endif

/* ---- scalar / array typedefs ------------------------------------------ */
SA(sizeof(dnnl_dim_t) == 8);
SA(sizeof(dnnl_dims_t) == 96);
SA(_Alignof(dnnl_dims_t) == 8);

/* ---- dnnl_graph_logical_tensor_t -------------------------------------- */
SA(sizeof(dnnl_graph_logical_tensor_t) == 224);
SA(_Alignof(dnnl_graph_logical_tensor_t) == 8);
SA(offsetof(dnnl_graph_logical_tensor_t, id) == 0);
SA(offsetof(dnnl_graph_logical_tensor_t, ndims) == 8);
SA(offsetof(dnnl_graph_logical_tensor_t, dims) == 16);
SA(offsetof(dnnl_graph_logical_tensor_t, data_type) == 112);
SA(offsetof(dnnl_graph_logical_tensor_t, property) == 116);
SA(offsetof(dnnl_graph_logical_tensor_t, layout_type) == 120);
SA(offsetof(dnnl_graph_logical_tensor_t, layout) == 128);
SA(offsetof(dnnl_graph_logical_tensor_t, layout.strides) == 128);
SA(offsetof(dnnl_graph_logical_tensor_t, layout.layout_id) == 128);
SA(sizeof(((dnnl_graph_logical_tensor_t *)0)->layout) == 96);
SA(sizeof(((dnnl_graph_logical_tensor_t *)0)->id) == sizeof(size_t));
SA(sizeof(((dnnl_graph_logical_tensor_t *)0)->ndims) == sizeof(int));
SA(sizeof(((dnnl_graph_logical_tensor_t *)0)->layout.layout_id)
        == sizeof(size_t));

/* ---- dnnl_graph_inplace_pair_t ---------------------------------------- */
SA(sizeof(dnnl_graph_inplace_pair_t) == 16);
SA(_Alignof(dnnl_graph_inplace_pair_t) == 8);
SA(offsetof(dnnl_graph_inplace_pair_t, input_id) == 0);
SA(offsetof(dnnl_graph_inplace_pair_t, output_id) == 8);

/* ---- dnnl_version_t ---------------------------------------------------- */
SA(sizeof(dnnl_version_t) == 32);
SA(_Alignof(dnnl_version_t) == 8);
SA(offsetof(dnnl_version_t, major) == 0);
SA(offsetof(dnnl_version_t, minor) == 4);
SA(offsetof(dnnl_version_t, patch) == 8);
SA(offsetof(dnnl_version_t, hash) == 16);
SA(offsetof(dnnl_version_t, cpu_runtime) == 24);
SA(offsetof(dnnl_version_t, gpu_runtime) == 28);

/* ---- Partita additions ------------------------------------------------- */
SA(sizeof(dnnl_graph_execute_options_t) == 8);
SA(_Alignof(dnnl_graph_execute_options_t) == 8);
SA(offsetof(dnnl_graph_execute_options_t, key) == 0);

/* ---- enum sizes -------------------------------------------------------- */
SA(sizeof(dnnl_status_t) == 4);
SA(sizeof(dnnl_data_type_t) == 4);
SA(sizeof(dnnl_fpmath_mode_t) == 4);
SA(sizeof(dnnl_accumulation_mode_t) == 4);
SA(sizeof(dnnl_engine_kind_t) == 4);
SA(sizeof(dnnl_stream_flags_t) == 4);
SA(sizeof(dnnl_graph_layout_type_t) == 4);
SA(sizeof(dnnl_graph_tensor_property_t) == 4);
SA(sizeof(dnnl_graph_partition_policy_t) == 4);
SA(sizeof(dnnl_graph_dump_mode_t) == 4);
SA(sizeof(dnnl_graph_op_kind_t) == 4);
SA(sizeof(dnnl_graph_op_attr_t) == 4);

/* ---- handles ----------------------------------------------------------- */
SA(sizeof(dnnl_engine_t) == sizeof(void *));
SA(sizeof(const_dnnl_stream_t) == sizeof(void *));
SA(sizeof(const_dnnl_graph_tensor_t) == sizeof(void *));

/* ---- dnnl_status_t (all) ----------------------------------------------- */
SA(dnnl_success == 0);
SA(dnnl_out_of_memory == 1);
SA(dnnl_invalid_arguments == 2);
SA(dnnl_unimplemented == 3);
SA(dnnl_last_impl_reached == 4);
SA(dnnl_runtime_error == 5);
SA(dnnl_not_required == 6);
SA(dnnl_invalid_graph == 7);
SA(dnnl_invalid_graph_op == 8);
SA(dnnl_invalid_shape == 9);
SA(dnnl_invalid_data_type == 10);

/* ---- dnnl_data_type_t (all) -------------------------------------------- */
SA(dnnl_data_type_undef == 0);
SA(dnnl_f16 == 1);
SA(dnnl_bf16 == 2);
SA(dnnl_f32 == 3);
SA(dnnl_s32 == 4);
SA(dnnl_s8 == 5);
SA(dnnl_u8 == 6);
SA(dnnl_f64 == 7);
SA(dnnl_boolean == 8);
SA(dnnl_f8_e5m2 == 9);
SA(dnnl_f8_e4m3 == 10);
SA(dnnl_s4 == 11);
SA(dnnl_u4 == 12);
SA(dnnl_e8m0 == 13);
SA(dnnl_f4_e2m1 == 14);
SA(dnnl_f4_e3m0 == 15);
SA(dnnl_s64 == 16);
SA(dnnl_data_type_max == 0x7fff);

/* ---- fpmath / accumulation / engine kind / stream flags --------------- */
SA(dnnl_fpmath_mode_strict == 0);
SA(dnnl_fpmath_mode_bf16 == 1);
SA(dnnl_fpmath_mode_f16 == 2);
SA(dnnl_fpmath_mode_any == 3);
SA(dnnl_fpmath_mode_tf32 == 4);
SA(dnnl_accumulation_mode_strict == 0);
SA(dnnl_accumulation_mode_relaxed == 1);
SA(dnnl_accumulation_mode_any == 2);
SA(dnnl_accumulation_mode_s32 == 3);
SA(dnnl_accumulation_mode_f32 == 4);
SA(dnnl_accumulation_mode_f16 == 5);
SA(dnnl_any_engine == 0);
SA(dnnl_cpu == 1);
SA(dnnl_gpu == 2);
SA(dnnl_stream_in_order == 0x1);
SA(dnnl_stream_out_of_order == 0x2);
SA(dnnl_stream_default_flags == 0x1);
SA(dnnl_stream_flags_max == 0x7fff);

/* ---- layout types / properties / policies / dump modes ---------------- */
SA(dnnl_graph_layout_type_undef == 0);
SA(dnnl_graph_layout_type_any == 1);
SA(dnnl_graph_layout_type_strided == 2);
SA(dnnl_graph_layout_type_opaque == 3);
SA(dnnl_graph_tensor_property_undef == 0);
SA(dnnl_graph_tensor_property_variable == 1);
SA(dnnl_graph_tensor_property_constant == 2);
SA(dnnl_graph_tensor_property_host_scalar == 3);
SA(dnnl_graph_partition_policy_fusion == 1);
SA(dnnl_graph_partition_policy_debug == 2);
SA(dnnl_graph_dump_mode_none == 0x0);
SA(dnnl_graph_dump_mode_subgraph == 0x1);
SA(dnnl_graph_dump_mode_graph == 0x2);

/* ---- dnnl_graph_op_kind_t (sample) ------------------------------------- */
SA(dnnl_graph_op_abs == 0);
SA(dnnl_graph_op_abs_backward == 1);
SA(dnnl_graph_op_add == 2);
SA(dnnl_graph_op_batch_norm_backward == 5);
SA(dnnl_graph_op_concat == 12);
SA(dnnl_graph_op_convolution == 13);
SA(dnnl_graph_op_conv_transpose == 16);
SA(dnnl_graph_op_dequantize == 19);
SA(dnnl_graph_op_dynamic_quantize == 22);
SA(dnnl_graph_op_end == 25);
SA(dnnl_graph_op_gelu == 27);
SA(dnnl_graph_op_interpolate == 31);
SA(dnnl_graph_op_layer_norm == 33);
SA(dnnl_graph_op_matmul == 39);
SA(dnnl_graph_op_max_pool == 41);
SA(dnnl_graph_op_multiply == 46);
SA(dnnl_graph_op_quantize == 49);
SA(dnnl_graph_op_reduce_l1 == 51);
SA(dnnl_graph_op_reduce_sum == 57);
SA(dnnl_graph_op_relu == 58);
SA(dnnl_graph_op_reorder == 60);
SA(dnnl_graph_op_softmax == 64);
SA(dnnl_graph_op_squared_difference == 71);
SA(dnnl_graph_op_static_reshape == 72);
SA(dnnl_graph_op_static_transpose == 73);
SA(dnnl_graph_op_subtract == 74);
SA(dnnl_graph_op_type_cast == 77);
SA(dnnl_graph_op_wildcard == 78);
SA(dnnl_graph_op_hard_sigmoid == 79);
SA(dnnl_graph_op_hard_sigmoid_backward == 80);
SA(dnnl_graph_op_select == 81);
SA(dnnl_graph_op_pow == 82);
SA(dnnl_graph_op_group_norm == 83);
SA(dnnl_graph_op_gen_index == 84);
SA(dnnl_graph_op_greater_equal == 85);
SA(dnnl_graph_op_rms_norm == 86);
SA(dnnl_graph_op_dropout == 87);
SA(dnnl_graph_op_last_symbol == 88);

/* ---- dnnl_graph_op_attr_t (sample, every group boundary) -------------- */
SA(dnnl_graph_op_attr_undef == 0x00);
SA(dnnl_graph_op_attr_alpha == 0x01);
SA(dnnl_graph_op_attr_beta == 0x02);
SA(dnnl_graph_op_attr_epsilon == 0x03);
SA(dnnl_graph_op_attr_max == 0x04);
SA(dnnl_graph_op_attr_min == 0x05);
SA(dnnl_graph_op_attr_momentum == 0x06);
SA(dnnl_graph_op_attr_scales == 0x20);
SA(dnnl_graph_op_attr_axis == 0x30);
SA(dnnl_graph_op_attr_begin_norm_axis == 0x31);
SA(dnnl_graph_op_attr_groups == 0x32);
SA(dnnl_graph_op_attr_axes == 0x40);
SA(dnnl_graph_op_attr_dilations == 0x41);
SA(dnnl_graph_op_attr_kernel == 0x43);
SA(dnnl_graph_op_attr_pads_begin == 0x46);
SA(dnnl_graph_op_attr_pads_end == 0x47);
SA(dnnl_graph_op_attr_strides == 0x4B);
SA(dnnl_graph_op_attr_zps == 0x4D);
SA(dnnl_graph_op_attr_group_shape == 0x4E);
SA(dnnl_graph_op_attr_exclude_pad == 0x60);
SA(dnnl_graph_op_attr_transpose_a == 0x65);
SA(dnnl_graph_op_attr_transpose_b == 0x66);
SA(dnnl_graph_op_attr_use_dst == 0x68);
SA(dnnl_graph_op_attr_auto_broadcast == 0x80);
SA(dnnl_graph_op_attr_auto_pad == 0x81);
SA(dnnl_graph_op_attr_data_format == 0x83);
SA(dnnl_graph_op_attr_mode == 0x84);
SA(dnnl_graph_op_attr_qtype == 0x85);
SA(dnnl_graph_op_attr_rounding_type == 0x86);
SA(dnnl_graph_op_attr_weights_format == 0x87);
SA(dnnl_graph_op_attr_accumulation_mode == 0x88);
SA(dnnl_graph_op_attr_end == 0xFF);

/* No library symbols are referenced, so this program links and runs without
 * the library. Function signatures are checked by tests/test_abi_cxx.cpp. */

int main(void) {
    printf("1 passed, 0 failed\n");
    return 0;
}
