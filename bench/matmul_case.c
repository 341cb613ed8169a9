#include "matmul_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *matmul_kind_name(matmul_kind kind) {
    switch (kind) {
    case MATMUL_F32: return "f32";
    case MATMUL_BF16: return "bf16";
    case MATMUL_INT8: return "int8";
    case MATMUL_INT4: return "int4";
    default: return "?";
    }
}

double matmul_weight_bytes(matmul_kind kind, int64_t k, int64_t n) {
    double elements = (double)k * (double)n;
    switch (kind) {
    case MATMUL_F32: return 4 * elements;
    case MATMUL_BF16: return 2 * elements;
    case MATMUL_INT8: return elements;
    case MATMUL_INT4: /* packed nibbles plus one f32 scale per group */
        return 0.5 * elements + 4 * elements / MATMUL_INT4_GROUP;
    default: return elements;
    }
}

static void add_matmul(bench_case *c, const bench_tensor *src,
        const bench_tensor *weights, const bench_tensor *dst) {
    bench_op *op = bench_case_add_op(c, 0, dnnl_graph_op_matmul, "matmul");
    bench_op_set_bool(op, dnnl_graph_op_attr_transpose_a, 0);
    bench_op_set_bool(op, dnnl_graph_op_attr_transpose_b, 0);
    bench_op_add_input(op, src);
    bench_op_add_input(op, weights);
    bench_op_add_output(op, dst);
}

void build_matmul_case(bench_case *c, matmul_kind kind, int64_t m, int64_t k,
        int64_t n) {
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "matmul_%s_%lldx%lldx%lld",
            matmul_kind_name(kind), (long long)m, (long long)k, (long long)n);
    c->fpmath_mode = dnnl_fpmath_mode_strict;
    const dnnl_graph_tensor_property_t variable = dnnl_graph_tensor_property_variable;
    int64_t src_dims[2] = {m, k}, weight_dims[2] = {k, n}, dst_dims[2] = {m, n};
    dnnl_data_type_t float_type = kind == MATMUL_BF16 ? dnnl_bf16 : dnnl_f32;
    bench_tensor dst = bench_tensor_dense(100, float_type, 2, dst_dims, variable);
    if (kind == MATMUL_F32 || kind == MATMUL_BF16) {
        bench_tensor src = bench_tensor_dense(0, float_type, 2, src_dims, variable);
        bench_tensor weights
                = bench_tensor_dense(1, float_type, 2, weight_dims, variable);
        add_matmul(c, &src, &weights, &dst);
        return;
    }
    if (kind == MATMUL_INT8) {
        bench_tensor src_q = bench_tensor_dense(0, dnnl_u8, 2, src_dims, variable);
        bench_tensor weights_q
                = bench_tensor_dense(1, dnnl_s8, 2, weight_dims, variable);
        bench_tensor src = bench_tensor_dense(10, dnnl_f32, 2, src_dims, variable);
        bench_tensor weights
                = bench_tensor_dense(11, dnnl_f32, 2, weight_dims, variable);
        bench_op *dq_src = bench_case_add_op(c, 1, dnnl_graph_op_dequantize, "dq_src");
        const float src_scale = 0.05f;
        const int64_t src_zero_point = 3, axis_src = 0;
        bench_op_set_string(dq_src, dnnl_graph_op_attr_qtype, "per_tensor");
        bench_op_set_f32(dq_src, dnnl_graph_op_attr_scales, &src_scale, 1, 1);
        bench_op_set_s64(dq_src, dnnl_graph_op_attr_zps, &src_zero_point, 1, 1);
        bench_op_set_s64(dq_src, dnnl_graph_op_attr_axis, &axis_src, 1, 0);
        bench_op_add_input(dq_src, &src_q);
        bench_op_add_output(dq_src, &src);
        /* Symmetric weights: one positive scale per output channel (axis 1
         * of [K, N]) and zero points 0, as weight quantizers produce. */
        float *scales = calloc((size_t)n, sizeof *scales);
        int64_t *zero_points = calloc((size_t)n, sizeof *zero_points);
        if (!scales || !zero_points) {
            fprintf(stderr, "bench: out of memory\n");
            exit(2);
        }
        for (int64_t j = 0; j < n; ++j) scales[j] = 0.01f + 0.001f * (float)(j % 7);
        const int64_t axis_weights = 1;
        bench_op *dq_weights = bench_case_add_op(
                c, 2, dnnl_graph_op_dequantize, "dq_weights");
        bench_op_set_string(dq_weights, dnnl_graph_op_attr_qtype, "per_channel");
        bench_op_set_f32(dq_weights, dnnl_graph_op_attr_scales, scales, (size_t)n, 1);
        bench_op_set_s64(dq_weights, dnnl_graph_op_attr_zps, zero_points, (size_t)n, 1);
        bench_op_set_s64(dq_weights, dnnl_graph_op_attr_axis, &axis_weights, 1, 0);
        bench_op_add_input(dq_weights, &weights_q);
        bench_op_add_output(dq_weights, &weights);
        free(scales);
        free(zero_points);
        add_matmul(c, &src, &weights, &dst);
        return;
    }
    /* int4 weights, grouped scales along K. */
    int64_t scale_dims[2] = {k / MATMUL_INT4_GROUP, n};
    bench_tensor src = bench_tensor_dense(0, dnnl_f32, 2, src_dims, variable);
    bench_tensor weights_q = bench_tensor_dense(1, dnnl_s4, 2, weight_dims, variable);
    bench_tensor scales = bench_tensor_dense(2, dnnl_f32, 2, scale_dims, variable);
    bench_tensor weights = bench_tensor_dense(11, dnnl_f32, 2, weight_dims, variable);
    bench_op *dq = bench_case_add_op(c, 1, dnnl_graph_op_dynamic_dequantize, "dq_weights");
    const int64_t group_shape[2] = {MATMUL_INT4_GROUP, 1};
    bench_op_set_string(dq, dnnl_graph_op_attr_qtype, "per_group");
    bench_op_set_s64(dq, dnnl_graph_op_attr_group_shape, group_shape, 2, 1);
    bench_op_add_input(dq, &weights_q);
    bench_op_add_input(dq, &scales);
    bench_op_add_output(dq, &weights);
    add_matmul(c, &src, &weights, &dst);
}
