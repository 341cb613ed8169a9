// Partita - a oneDNN-graph-style C++ program against dnnl_graph.hpp.
//
// The structure follows what oneDNN graph C++ users typically write: a
// Convolution -> BiasAdd -> ReLU -> Convolution -> BiasAdd -> ReLU network
// whose intermediate tensors are declared with layout_type::any, partitions
// whose internal outputs are switched to `any` layout, buffers sized by
// get_mem_size() of the queried logical tensors, and a loop executing the
// compiled partitions in order with tensors looked up by id. The result is
// compared with a direct NCHW convolution.

#include <cmath>
#include <cstdio>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "oneapi/dnnl/dnnl_graph.hpp"

using namespace dnnl::graph;
using data_type = logical_tensor::data_type;
using layout_type = logical_tensor::layout_type;
using property_type = logical_tensor::property_type;
using dim = logical_tensor::dim;
using dims = logical_tensor::dims;

// Outputs of one partition that are inputs of another are internal: let the
// library pick their layout.
static void set_any_layout(const std::vector<partition> &partitions,
        std::unordered_set<size_t> &id_to_set_any_layout) {
    std::unordered_map<size_t, size_t> output_to_partition;
    for (size_t i = 0; i < partitions.size(); ++i)
        for (const logical_tensor &out : partitions[i].get_output_ports())
            output_to_partition[out.get_id()] = i;
    for (size_t i = 0; i < partitions.size(); ++i)
        for (const logical_tensor &in : partitions[i].get_input_ports())
            if (output_to_partition.count(in.get_id()))
                id_to_set_any_layout.insert(in.get_id());
}

// out[n][oc][h][w] = relu(bias[oc] + sum src[n][ic][h+kh-1][w+kw-1] *
// wei[oc][ic][kh][kw]) with 3x3 kernels, stride 1, padding 1.
static std::vector<float> conv_relu_ref(const std::vector<float> &src,
        const std::vector<float> &wei, const std::vector<float> &bias,
        int N, int IC, int OC, int H, int W) {
    std::vector<float> out((size_t)N * OC * H * W);
    for (int n = 0; n < N; ++n)
        for (int oc = 0; oc < OC; ++oc)
            for (int h = 0; h < H; ++h)
                for (int w = 0; w < W; ++w) {
                    double acc = bias[oc];
                    for (int ic = 0; ic < IC; ++ic)
                        for (int kh = 0; kh < 3; ++kh)
                            for (int kw = 0; kw < 3; ++kw) {
                                const int ih = h + kh - 1, iw = w + kw - 1;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                    continue;
                                acc += (double)src[((n * IC + ic) * H + ih) * W
                                               + iw]
                                        * wei[((oc * IC + ic) * 3 + kh) * 3
                                                + kw];
                            }
                    out[((n * OC + oc) * H + h) * W + w]
                            = acc > 0 ? (float)acc : 0.0f;
                }
    return out;
}

static std::vector<float> fill(size_t n, int seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = (float)((int)((i * 13 + (size_t)seed * 7) % 17) - 8) / 16.0f;
    return v;
}

int main() {
    const dim N = 2, IC = 3, OC0 = 4, OC1 = 5, H = 6, W = 5;
    const dnnl::engine::kind ekind = dnnl::engine::kind::cpu;

    size_t id = 0;
    // Conv 0 + bias + relu.
    logical_tensor conv0_src {id++, data_type::f32, dims {N, IC, H, W},
            layout_type::strided};
    logical_tensor conv0_wei {id++, data_type::f32, dims {OC0, IC, 3, 3},
            layout_type::strided, property_type::constant};
    logical_tensor conv0_dst {id++, data_type::f32, 4, layout_type::any};
    logical_tensor conv0_bias {id++, data_type::f32, dims {OC0},
            layout_type::strided, property_type::constant};
    logical_tensor bias0_dst {id++, data_type::f32, 4, layout_type::any};
    logical_tensor relu0_dst {id++, data_type::f32, 4, layout_type::any};
    // Conv 1 + bias + relu.
    logical_tensor conv1_wei {id++, data_type::f32, dims {OC1, OC0, 3, 3},
            layout_type::strided, property_type::constant};
    logical_tensor conv1_dst {id++, data_type::f32, 4, layout_type::any};
    logical_tensor conv1_bias {id++, data_type::f32, dims {OC1},
            layout_type::strided, property_type::constant};
    logical_tensor bias1_dst {id++, data_type::f32, 4, layout_type::any};
    logical_tensor relu1_dst {id++, data_type::f32, dims {N, OC1, H, W},
            layout_type::strided};

    auto conv = [](size_t op_id, const logical_tensor &src,
                        const logical_tensor &wei, const logical_tensor &dst,
                        const char *name) {
        op c(op_id, op::kind::Convolution, {src, wei}, {dst}, name);
        c.set_attr<dims>(op::attr::strides, {1, 1});
        c.set_attr<dims>(op::attr::pads_begin, {1, 1});
        c.set_attr<dims>(op::attr::pads_end, {1, 1});
        c.set_attr<dims>(op::attr::dilations, {1, 1});
        c.set_attr<int64_t>(op::attr::groups, 1);
        c.set_attr<std::string>(op::attr::data_format, "NCX");
        c.set_attr<std::string>(op::attr::weights_format, "OIX");
        return c;
    };
    op conv0 = conv(0, conv0_src, conv0_wei, conv0_dst, "conv0");
    op bias0(1, op::kind::BiasAdd, {conv0_dst, conv0_bias}, {bias0_dst},
            "bias0");
    bias0.set_attr<std::string>(op::attr::data_format, "NCX");
    op relu0(2, op::kind::ReLU, {bias0_dst}, {relu0_dst}, "relu0");
    op conv1 = conv(3, relu0_dst, conv1_wei, conv1_dst, "conv1");
    op bias1(4, op::kind::BiasAdd, {conv1_dst, conv1_bias}, {bias1_dst},
            "bias1");
    bias1.set_attr<std::string>(op::attr::data_format, "NCX");
    op relu1(5, op::kind::ReLU, {bias1_dst}, {relu1_dst}, "relu1");

    try {
        graph g(ekind);
        for (const op *o : {&conv0, &bias0, &relu0, &conv1, &bias1, &relu1})
            g.add_op(*o);
        g.finalize();
        std::vector<partition> partitions = g.get_partitions();
        if (partitions.empty()) {
            std::fprintf(stderr, "no partitions\n");
            return 1;
        }
        std::unordered_set<size_t> id_to_set_any_layout;
        set_any_layout(partitions, id_to_set_any_layout);

        allocator alloc {};
        dnnl::engine eng = make_engine_with_allocator(ekind, 0, alloc);
        dnnl::stream strm {eng};

        // User data.
        std::unordered_map<size_t, std::vector<float>> user_data;
        user_data[conv0_src.get_id()] = fill((size_t)(N * IC * H * W), 1);
        user_data[conv0_wei.get_id()] = fill((size_t)(OC0 * IC * 9), 2);
        user_data[conv0_bias.get_id()] = fill((size_t)OC0, 3);
        user_data[conv1_wei.get_id()] = fill((size_t)(OC1 * OC0 * 9), 4);
        user_data[conv1_bias.get_id()] = fill((size_t)OC1, 5);
        std::vector<float> result((size_t)(N * OC1 * H * W), -7.0f);

        std::unordered_map<size_t, logical_tensor> id_to_queried;
        std::unordered_map<size_t, tensor> id_to_tensor;
        std::vector<std::shared_ptr<std::vector<char>>> scratch_buffers;

        for (const partition &p : partitions) {
            if (!p.is_supported()) {
                std::fprintf(stderr, "unsupported partition %zu\n",
                        p.get_id());
                return 1;
            }
            std::vector<logical_tensor> inputs = p.get_input_ports();
            std::vector<logical_tensor> outputs = p.get_output_ports();
            for (logical_tensor &in : inputs) {
                auto it = id_to_queried.find(in.get_id());
                if (it != id_to_queried.end()) in = it->second;
            }
            for (logical_tensor &out : outputs)
                if (id_to_set_any_layout.count(out.get_id()))
                    out = logical_tensor {out.get_id(), out.get_data_type(),
                            DNNL_GRAPH_UNKNOWN_NDIMS, layout_type::any};
            compiled_partition cp = p.compile(inputs, outputs, eng);

            std::vector<tensor> in_ts, out_ts;
            for (const logical_tensor &in : inputs) {
                auto it = id_to_tensor.find(in.get_id());
                if (it != id_to_tensor.end()) {
                    in_ts.push_back(it->second);
                } else {
                    in_ts.push_back(tensor {in, eng,
                            user_data.at(in.get_id()).data()});
                }
            }
            for (const logical_tensor &out : outputs) {
                logical_tensor q = cp.query_logical_tensor(out.get_id());
                id_to_queried[q.get_id()] = q;
                if (q.get_id() == relu1_dst.get_id()) {
                    if (q.get_mem_size() != result.size() * sizeof(float)) {
                        std::fprintf(stderr, "unexpected output size\n");
                        return 1;
                    }
                    out_ts.push_back(tensor {q, eng, result.data()});
                } else {
                    auto buf = std::make_shared<std::vector<char>>(
                            q.get_mem_size());
                    scratch_buffers.push_back(buf);
                    tensor t {q, eng, buf->data()};
                    id_to_tensor[q.get_id()] = t;
                    out_ts.push_back(t);
                }
            }
            cp.execute(strm, in_ts, out_ts);
        }
        strm.wait();

        const std::vector<float> mid = conv_relu_ref(
                user_data[conv0_src.get_id()], user_data[conv0_wei.get_id()],
                user_data[conv0_bias.get_id()], (int)N, (int)IC, (int)OC0,
                (int)H, (int)W);
        const std::vector<float> want = conv_relu_ref(mid,
                user_data[conv1_wei.get_id()], user_data[conv1_bias.get_id()],
                (int)N, (int)OC0, (int)OC1, (int)H, (int)W);
        int bad = 0;
        for (size_t i = 0; i < want.size(); ++i)
            if (std::fabs(result[i] - want[i])
                    > 1e-4f * (1.0f + std::fabs(want[i]))) {
                if (bad < 5)
                    std::fprintf(stderr, "result[%zu] = %g, expected %g\n", i,
                            result[i], want[i]);
                ++bad;
            }
        if (bad) {
            std::fprintf(stderr, "%d wrong values\n", bad);
            return 1;
        }
        std::printf("test_cxx_example_style: %zu partition(s), conv net ok\n",
                partitions.size());
    } catch (const dnnl::error &e) {
        std::fprintf(stderr, "dnnl::error: status %d: %s\n", (int)e.status,
                e.what());
        return 1;
    }
    return 0;
}
