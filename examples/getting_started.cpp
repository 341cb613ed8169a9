// Getting started in C++: one fused MatMul + bias + ReLU with dnnl::graph.
//
// The C++ twin of getting_started.c, written with oneDNN's C++ graph classes
// (dnnl_graph.hpp): logical_tensor, op, graph, partition, compiled_partition,
// tensor, engine and stream.  dst = ReLU(src · wei + bias), the bias being
// MatMul's third input.  The two ops form one partition; the output is
// declared with unknown rank and "any" layout, and its shape is queried from
// the compiled partition.  Every failed call throws dnnl::error (status and
// message), caught in main.  The example prints the partitions, the queried
// output shape and the largest error against a plain loop (relative to
// Σ|src·wei|, f32 tolerance 1e-5); it exits with 1 on a wrong result.
//
// Build: c++ -std=c++11 getting_started.cpp $(pkg-config --cflags --libs partita)

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "oneapi/dnnl/dnnl_graph.hpp"

using namespace dnnl::graph;
using data_type = logical_tensor::data_type;
using layout_type = logical_tensor::layout_type;
using dims = logical_tensor::dims;

static const int64_t M = 32, K = 64, N = 48;

// Op ids, and their names for printing.
enum { OP_MATMUL, OP_RELU };
static const char *const op_name[] = {"MatMul", "ReLU"};

static std::vector<float> random_values(size_t n, uint32_t seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = (float)((seed >> 8) & 0xffff) / 32768.f - 1.f;
    }
    return v;
}

static int run() {
    // 1. The graph: logical tensors (id, type, shape, layout) and two ops.
    logical_tensor src {0, data_type::f32, dims {M, K}, layout_type::strided};
    logical_tensor wei {1, data_type::f32, dims {K, N}, layout_type::strided};
    logical_tensor bias {2, data_type::f32, dims {N}, layout_type::strided};
    logical_tensor mm {3, data_type::f32, dims {M, N}, layout_type::strided};
    // The partition's output: rank and shape left for the library to infer.
    logical_tensor dst {4, data_type::f32, layout_type::any};

    op matmul(OP_MATMUL, op::kind::MatMul, {src, wei, bias}, {mm}, "fc");
    op relu(OP_RELU, op::kind::ReLU, {mm}, {dst}, "relu");

    graph g(dnnl::engine::kind::cpu);
    g.add_op(matmul);
    g.add_op(relu);
    g.finalize();

    // 2. Partitions under the fusion policy.
    std::vector<partition> parts = g.get_partitions(partition::policy::fusion);
    std::printf("%zu partition(s)\n", parts.size());
    for (size_t p = 0; p < parts.size(); ++p) {
        std::printf("  partition %zu: %zu ops:", p, parts[p].get_ops_num());
        for (size_t id : parts[p].get_ops())
            std::printf(" %s (id %zu)", id < 2 ? op_name[id] : "?", id);
        std::printf("\n");
    }
    if (parts.size() != 1 || parts[0].get_ops_num() != 2
            || !parts[0].is_supported()) {
        std::printf("FAILED: MatMul + bias + ReLU should form one supported "
                    "partition\n");
        return 1;
    }

    // 3. Compile, then ask the compiled partition for the output's shape.
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    compiled_partition cp = parts[0].compile({src, wei, bias}, {dst}, eng);
    logical_tensor dst_q = cp.query_logical_tensor(dst.get_id());
    const dims out_dims = dst_q.get_dims();
    std::printf("  output: %zu-D [%lld, %lld], %zu bytes\n", out_dims.size(),
            out_dims.size() > 0 ? (long long)out_dims[0] : -1LL,
            out_dims.size() > 1 ? (long long)out_dims[1] : -1LL,
            dst_q.get_mem_size());
    if (out_dims != dims {M, N}) {
        std::printf("FAILED: the queried output should be [%lld, %lld]\n",
                (long long)M, (long long)N);
        return 1;
    }

    // 4. Buffers wrapped in tensors; execute and wait.
    std::vector<float> src_b = random_values((size_t)(M * K), 1);
    std::vector<float> wei_b = random_values((size_t)(K * N), 2);
    std::vector<float> bias_b = random_values((size_t)N, 3);
    std::vector<float> dst_b(dst_q.get_mem_size() / sizeof(float));
    tensor t_src(src, eng, src_b.data());
    tensor t_wei(wei, eng, wei_b.data());
    tensor t_bias(bias, eng, bias_b.data());
    tensor t_dst(dst_q, eng, dst_b.data());
    cp.execute(strm, {t_src, t_wei, t_bias}, {t_dst});
    strm.wait();

    // 5. Check against a plain loop.
    double worst = 0;
    for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
            double acc = bias_b[n], mag = std::fabs(bias_b[n]);
            for (int64_t k = 0; k < K; ++k) {
                const double p = (double)src_b[m * K + k] * wei_b[k * N + n];
                acc += p;
                mag += std::fabs(p);
            }
            const double want = acc > 0 ? acc : 0;
            double err = std::fabs(want - dst_b[m * N + n]) / (mag + 1e-30);
            if (std::isnan(err)) err = INFINITY;
            if (err > worst) worst = err;
        }
    const bool ok = worst <= 1e-5;
    std::printf("max relative error %.3g (tolerance 1e-5): %s\n", worst,
            ok ? "all results right" : "FAILED");
    return ok ? 0 : 1;
}

int main() {
    try {
        return run();
    } catch (const dnnl::error &e) {
        std::fprintf(stderr, "dnnl::error: status %d: %s\n", (int)e.status,
                e.what());
        return 1;
    }
}
