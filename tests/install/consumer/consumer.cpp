// Partita install check, C++ consumer: oneDNN-style graph C++ code built
// against an installed Partita (pkg-config or CMake's find_package). It
// runs MatMul(3x4, 4x2) -> ReLU through oneapi/dnnl/dnnl_graph.hpp and
// checks the numbers. Prints one line and exits 0 on success.
#include <cstdio>
#include <vector>

#include "oneapi/dnnl/dnnl_graph.hpp"

using namespace dnnl::graph;
using data_type = logical_tensor::data_type;
using layout_type = logical_tensor::layout_type;

int main() {
    try {
        const dnnl::engine::kind ekind = dnnl::engine::kind::cpu;
        dnnl::engine eng(ekind, 0);
        dnnl::stream strm(eng);

        logical_tensor a(0, data_type::f32, {3, 4}, layout_type::strided);
        logical_tensor b(1, data_type::f32, {4, 2}, layout_type::strided);
        logical_tensor c(2, data_type::f32, {3, 2}, layout_type::strided);
        logical_tensor d(3, data_type::f32, {3, 2}, layout_type::strided);

        op matmul(0, op::kind::MatMul, {a, b}, {c}, "matmul");
        matmul.set_attr<bool>(op::attr::transpose_b, false);
        op relu(1, op::kind::ReLU, {c}, {d}, "relu");

        graph g(ekind);
        g.add_op(matmul);
        g.add_op(relu);
        g.finalize();
        std::vector<partition> parts = g.get_partitions();
        if (parts.size() != 1 || !parts[0].is_supported()) {
            std::fprintf(stderr, "expected one supported partition, got %zu\n",
                    parts.size());
            return 1;
        }
        compiled_partition cp = parts[0].compile({a, b}, {d}, eng);

        std::vector<float> av(12), bv(8), dv(6, -1.0f);
        for (int i = 0; i < 12; ++i)
            av[i] = (float)(i % 5) - 2.0f;
        for (int i = 0; i < 8; ++i)
            bv[i] = (float)(i % 3) - 1.0f;
        tensor at(a, eng, av.data());
        tensor bt(b, eng, bv.data());
        tensor dt(cp.query_logical_tensor(3), eng, dv.data());
        cp.execute(strm, {at, bt}, {dt});
        strm.wait();

        for (int m = 0; m < 3; ++m)
            for (int n = 0; n < 2; ++n) {
                float acc = 0.0f;
                for (int k = 0; k < 4; ++k)
                    acc += av[m * 4 + k] * bv[k * 2 + n];
                const float want = acc > 0.0f ? acc : 0.0f;
                if (dv[m * 2 + n] != want) {
                    std::fprintf(stderr, "d[%d][%d] = %g, expected %g\n", m, n,
                            dv[m * 2 + n], want);
                    return 1;
                }
            }

        // A failing call throws dnnl::error with the C status.
        try {
            dnnl::engine gpu(dnnl::engine::kind::gpu, 0);
            std::fprintf(stderr, "creating a GPU engine did not throw\n");
            return 1;
        } catch (const dnnl::error &e) {
            if (e.status != dnnl_invalid_arguments) {
                std::fprintf(stderr, "wrong status %d\n", (int)e.status);
                return 1;
            }
        }
        std::printf("partita C++ consumer: MatMul+ReLU 3x4x2 ok (library "
                    "%d.%d.%d)\n",
                dnnl::version()->major, dnnl::version()->minor,
                dnnl::version()->patch);
    } catch (const dnnl::error &e) {
        std::fprintf(stderr, "dnnl::error: status %d: %s\n", (int)e.status,
                e.what());
        return 1;
    }
    return 0;
}
