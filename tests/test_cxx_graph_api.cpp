// Partita - the C++ graph API (oneapi/dnnl/dnnl_graph.hpp) end to end.
//
// Written the way oneDNN graph C++ users write it: engine and stream, logical
// tensors, ops with attributes, a graph, partitions under both policies,
// compilation, execution with user and library buffers, and the free
// functions. Every class and method of the header is called at least once;
// results are checked against plain loops, and failing calls must throw
// dnnl::error carrying the C status.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "oneapi/dnnl/dnnl_graph.hpp"

using namespace dnnl::graph;
using data_type = logical_tensor::data_type;
using layout_type = logical_tensor::layout_type;
using property_type = logical_tensor::property_type;
using dims = logical_tensor::dims;

static int failures = 0;

#define CHECK(cond) \
    do { \
        if (!(cond)) { \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, \
                    __LINE__, #cond); \
            ++failures; \
        } \
    } while (0)

// Runs `stmt`, which must throw dnnl::error with status `st`.
#define CHECK_THROWS(stmt, st) \
    do { \
        bool thrown_ = false; \
        try { \
            stmt; \
        } catch (const dnnl::error &e_) { \
            thrown_ = true; \
            if (e_.status != (st)) { \
                std::fprintf(stderr, \
                        "%s:%d: %s threw status %d (%s), expected %d\n", \
                        __FILE__, __LINE__, #stmt, (int)e_.status, \
                        e_.what(), (int)(st)); \
                ++failures; \
            } \
        } \
        if (!thrown_) { \
            std::fprintf(stderr, "%s:%d: %s did not throw\n", __FILE__, \
                    __LINE__, #stmt); \
            ++failures; \
        } \
    } while (0)

static bool near(float a, float b) {
    return std::fabs(a - b) <= 1e-4f * (1.0f + std::fabs(b));
}

// dst[m][n] = max(0, sum_k src[m][k] * wei[k][n]) (wei given as [n][k] when
// transposed).
static std::vector<float> matmul_relu_ref(const std::vector<float> &src,
        const std::vector<float> &wei, int M, int K, int N, bool transpose_b,
        bool relu) {
    std::vector<float> dst(M * N);
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            double acc = 0;
            for (int k = 0; k < K; ++k)
                acc += (double)src[m * K + k]
                        * (transpose_b ? wei[n * K + k] : wei[k * N + n]);
            dst[m * N + n] = relu && acc < 0 ? 0.0f : (float)acc;
        }
    return dst;
}

static std::vector<float> ramp(size_t n, float scale, float shift) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i)
        v[i] = scale * (float)((int)(i * 7 % 11) - 5) + shift;
    return v;
}

static void test_common() {
    const dnnl::version_t *v = dnnl::version();
    CHECK(v != nullptr && v->major == 3 && v->minor == 14);
    CHECK(dnnl::set_verbose(0) == dnnl::status::success);
    CHECK(dnnl::set_verbose(7) == dnnl::status::invalid_arguments);

    CHECK(dnnl::engine::get_count(dnnl::engine::kind::cpu) == 1);
    CHECK(dnnl::engine::get_count(dnnl::engine::kind::gpu) == 0);
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    CHECK(static_cast<bool>(eng));
    CHECK(eng.get_kind() == dnnl::engine::kind::cpu);
    CHECK(dnnl::engine::convert_to_c(dnnl::engine::kind::cpu) == dnnl_cpu);
    CHECK_THROWS(dnnl::engine(dnnl::engine::kind::gpu, 0),
            dnnl_invalid_arguments);
    CHECK_THROWS(dnnl::engine(dnnl::engine::kind::cpu, 1),
            dnnl_invalid_arguments);

    dnnl::stream strm(eng);
    CHECK(strm.get_engine().get_kind() == dnnl::engine::kind::cpu);
    CHECK(strm.get_engine().get() == eng.get());
    strm.wait();
    dnnl::stream strm2(eng, dnnl::stream::flags::in_order);
    CHECK(strm2 != strm);
    dnnl::stream strm3 = strm2;
    CHECK(strm3 == strm2);

    // An empty handle refuses to be used.
    dnnl::engine empty;
    CHECK(!empty);
    CHECK_THROWS(empty.get(), dnnl_invalid_arguments);
    CHECK_THROWS(dnnl::stream on_empty(empty), dnnl_invalid_arguments);

    const dnnl::fpmath_mode saved = dnnl::get_default_fpmath_mode();
    dnnl::set_default_fpmath_mode(dnnl::fpmath_mode::bf16);
    CHECK(dnnl::get_default_fpmath_mode() == dnnl::fpmath_mode::bf16);
    {
        // A graph made now inherits the default.
        graph g(dnnl::engine::kind::cpu);
        dnnl::fpmath_mode mode = dnnl::fpmath_mode::strict;
        bool apply = true;
        g.get_fpmath_mode(mode, apply);
        CHECK(mode == dnnl::fpmath_mode::bf16 && !apply);
    }
    dnnl::set_default_fpmath_mode(saved);
    CHECK_THROWS(dnnl::set_default_fpmath_mode(
                         static_cast<dnnl::fpmath_mode>(42)),
            dnnl_invalid_arguments);
    CHECK(dnnl::convert_to_c(dnnl::accumulation_mode::relaxed)
            == dnnl_accumulation_mode_relaxed);
}

static void test_logical_tensor() {
    // (id, dtype, dims, layout_type): dense strides are derived.
    logical_tensor a(7, data_type::f32, dims {4, 1, 3}, layout_type::strided);
    CHECK(a.get_id() == 7);
    CHECK(a.get_data_type() == data_type::f32);
    CHECK(a.get_layout_type() == layout_type::strided);
    CHECK(a.get_property_type() == property_type::undef);
    CHECK(a.get_dims() == (dims {4, 1, 3}));
    CHECK(a.get_strides() == (dims {3, 3, 1}));
    CHECK(a.get_mem_size() == 4 * 3 * sizeof(float));
    CHECK_THROWS(a.get_layout_id(), dnnl_invalid_arguments);

    // (id, dtype, dims, strides, property).
    logical_tensor b(8, data_type::bf16, dims {2, 3}, dims {1, 2},
            property_type::constant);
    CHECK(b.get_layout_type() == layout_type::strided);
    CHECK(b.get_strides() == (dims {1, 2}));
    CHECK(b.get_property_type() == property_type::constant);
    CHECK(b.get_mem_size() == 6 * 2);
    CHECK_THROWS(logical_tensor(9, data_type::f32, dims {2, 3}, dims {1}),
            dnnl_invalid_arguments);

    // (id, dtype, ndims, layout_type) and (id, dtype[, layout_type]).
    logical_tensor c(9, data_type::s8, 2, layout_type::any);
    CHECK(c.get_dims()
            == (dims {DNNL_GRAPH_UNKNOWN_DIM, DNNL_GRAPH_UNKNOWN_DIM}));
    CHECK(c.get_mem_size() == std::numeric_limits<size_t>::max());
    CHECK_THROWS(c.get_strides(), dnnl_invalid_arguments);
    logical_tensor d(10, data_type::u8);
    CHECK(d.get_layout_type() == layout_type::undef);
    CHECK_THROWS(d.get_dims(), dnnl_invalid_arguments);
    logical_tensor e(11, data_type::f16, layout_type::any);
    CHECK(e.get_layout_type() == layout_type::any);

    // Opaque layout id.
    logical_tensor f(12, data_type::f32, dims {2, 2}, size_t(5));
    CHECK(f.get_layout_type() == layout_type::opaque);
    CHECK(f.get_layout_id() == 5);

    // Too many dims fail in the C call.
    CHECK_THROWS(logical_tensor(13, data_type::f32, dims(13, 1),
                         layout_type::strided),
            dnnl_invalid_arguments);
    // Host scalar rules.
    logical_tensor s(14, data_type::f32, dims {}, layout_type::strided,
            property_type::host_scalar);
    CHECK(s.get_dims().empty());
    CHECK(s.get_mem_size() == sizeof(float));
    CHECK_THROWS(logical_tensor(15, data_type::u8, 0, layout_type::strided,
                         property_type::host_scalar),
            dnnl_invalid_arguments);

    // is_equal, copies, C interop.
    logical_tensor a2 = a;
    CHECK(a.is_equal(a2));
    CHECK(!a.is_equal(b));
    dnnl_graph_logical_tensor_t raw;
    dnnl_graph_logical_tensor_init(&raw, 7, dnnl_f32, 3, dnnl_graph_layout_type_any,
            dnnl_graph_tensor_property_undef);
    logical_tensor from_c(raw);
    CHECK(from_c.get_id() == 7 && from_c.get_layout_type() == layout_type::any);
    logical_tensor empty;
    CHECK(empty.get_id() == std::numeric_limits<size_t>::max());
    CHECK(empty.get_data_type() == data_type::undef);
}

static void test_op_attrs() {
    // One op per attribute type; set_attr returns the op for chaining.
    logical_tensor x(0, data_type::f32, dims {2, 3}, layout_type::strided);
    logical_tensor y(1, data_type::f32, dims {2, 3}, layout_type::strided);
    op elu(0, op::kind::Elu, {x}, {y}, "elu");
    elu.set_attr<float>(op::attr::alpha, 0.5f);
    CHECK(elu.get_id() == 0);
    CHECK(elu.get_kind() == op::kind::Elu);

    op softmax(1, op::kind::SoftMax, "softmax");
    softmax.add_input(x);
    softmax.add_output(y);
    softmax.set_attr<int64_t>(op::attr::axis, -1)
            .set_attr<std::string>(op::attr::mode, "none");

    op transpose(2, op::kind::StaticTranspose);
    transpose.add_inputs({x});
    transpose.add_outputs({logical_tensor(2, data_type::f32, dims {3, 2},
            layout_type::strided)});
    transpose.set_attr<std::vector<int64_t>>(op::attr::order, {1, 0});

    op quant(3, op::kind::Quantize, "quant");
    quant.set_attr<std::vector<float>>(op::attr::scales, {0.5f})
            .set_attr<std::vector<int64_t>>(op::attr::zps, {0})
            .set_attr<std::string>(op::attr::qtype, "per_tensor")
            .set_attr<int64_t>(op::attr::axis, 1);

    op mm(4, op::kind::MatMul);
    mm.set_attr<bool>(op::attr::transpose_a, false)
            .set_attr<bool>(op::attr::transpose_b, true);

    graph g(dnnl::engine::kind::cpu);
    CHECK(g.add_op(elu) == status::success);
    CHECK(g.add_op(softmax) == status::success);
    CHECK(g.add_op(transpose) == status::success);

    // An op with a missing input fails the schema check when added.
    op bad(5, op::kind::MatMul, {x}, {y}, "bad");
    CHECK(g.add_op(bad, false) == status::invalid_graph_op);
    CHECK_THROWS(g.add_op(bad), dnnl_invalid_graph_op);
    // A string value the attribute does not accept.
    op softmax2(6, op::kind::SoftMax, {x}, {y});
    softmax2.set_attr<int64_t>(op::attr::axis, 1)
            .set_attr<std::string>(op::attr::mode, "bogus");
    CHECK(g.add_op(softmax2, false) == status::invalid_graph_op);

    // Empty op handle.
    op none;
    CHECK(!none);
    CHECK_THROWS(none.add_input(x), dnnl_invalid_arguments);
    CHECK(op::convert_to_c(op::kind::LastSymbol) == dnnl_graph_op_last_symbol);
    CHECK(op::convert_to_c(op::kind::Dropout) == dnnl_graph_op_dropout);
    CHECK(op::convert_to_c(op::kind::BatchNormTrainingBackward)
            == dnnl_graph_op_batch_norm_backward);
    CHECK(op::convert_to_c(op::attr::accumulation_mode)
            == dnnl_graph_op_attr_accumulation_mode);
    CHECK(op::convert_to_c(op::attr::end) == dnnl_graph_op_attr_end);
}

// MatMul(src, wei^T) -> ReLU, M=4 K=8 N=5, under `policy`; the graph records
// the output of MatMul with unknown shape.
static void test_matmul_relu(partition::policy policy) {
    const int M = 4, K = 8, N = 5;
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);

    logical_tensor src(0, data_type::f32, dims {M, K}, layout_type::strided);
    logical_tensor wei(1, data_type::f32, dims {N, K}, layout_type::strided,
            property_type::constant);
    logical_tensor mm_out(2, data_type::f32, 2, layout_type::any);
    logical_tensor dst(3, data_type::f32, 2, layout_type::any);

    op mm(10, op::kind::MatMul, {src, wei}, {mm_out}, "matmul");
    mm.set_attr<bool>(op::attr::transpose_b, true);
    op relu(11, op::kind::ReLU, {mm_out}, {dst}, "relu");

    graph g(dnnl::engine::kind::cpu);
    g.add_op(mm);
    g.add_op(relu);
    CHECK(!g.is_finalized());
    g.finalize();
    CHECK(g.is_finalized());
    g.finalize(); // a second finalize is a no-op
    CHECK_THROWS(g.add_op(op(12, op::kind::ReLU, {dst},
                         {logical_tensor(4, data_type::f32, 2,
                                 layout_type::any)})),
            dnnl_invalid_graph);
    CHECK_THROWS(g.set_fpmath_mode(dnnl::fpmath_mode::bf16),
            dnnl_invalid_graph);

    std::vector<partition> parts = g.get_partitions(policy);
    if (policy == partition::policy::fusion)
        CHECK(parts.size() == 1);
    else
        CHECK(parts.size() == 2);
    if (parts.empty()) return;

    size_t total_ops = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
        CHECK(parts[i].is_supported());
        CHECK(parts[i].get_engine_kind() == dnnl::engine::kind::cpu);
        CHECK(parts[i].get_ops_num() == parts[i].get_ops().size());
        total_ops += parts[i].get_ops_num();
    }
    CHECK(total_ops == 2);
    CHECK(parts.size() < 2 || parts[0].get_id() != parts[1].get_id());

    const std::vector<float> src_data = ramp(M * K, 0.25f, 0.1f);
    const std::vector<float> wei_data = ramp(N * K, -0.125f, 0.05f);
    std::vector<float> dst_data(M * N, -1.0f);
    const std::vector<float> want
            = matmul_relu_ref(src_data, wei_data, M, K, N, true, true);

    if (policy == partition::policy::fusion) {
        partition &p = parts[0];
        const std::vector<size_t> ids = p.get_ops();
        CHECK(ids.size() == 2 && ids[0] + ids[1] == 21);
        std::vector<logical_tensor> ins = p.get_input_ports();
        std::vector<logical_tensor> outs = p.get_output_ports();
        CHECK(ins.size() == 2 && outs.size() == 1);
        CHECK(ins.size() == 2 && ins[0].get_id() + ins[1].get_id() == 1);
        CHECK(outs.size() == 1 && outs[0].get_id() == 3);

        compiled_partition cp = p.compile({src, wei}, {dst}, eng);
        logical_tensor dst_q = cp.query_logical_tensor(3);
        CHECK(dst_q.get_dims() == (dims {M, N}));
        CHECK(dst_q.get_layout_type() == layout_type::strided);
        CHECK(dst_q.get_mem_size() == M * N * sizeof(float));
        CHECK(cp.query_logical_tensor(0).is_equal(src));
        const std::vector<std::pair<size_t, size_t>> inplace
                = cp.get_inplace_ports();
        for (size_t i = 0; i < inplace.size(); ++i)
            CHECK(inplace[i].second == 3);

        tensor src_t(src, eng, const_cast<float *>(src_data.data()));
        tensor wei_t(wei, eng, const_cast<float *>(wei_data.data()));
        tensor dst_t(dst_q, eng, dst_data.data());
        cp.execute(strm, {src_t, wei_t}, {dst_t});
        strm.wait();
        bool ok = true;
        for (int i = 0; i < M * N; ++i)
            ok = ok && near(dst_data[i], want[i]);
        CHECK(ok);

        // Again into a library-allocated buffer, with a scratchpad tensor
        // and with execute options (tensor ids as the weight key).
        tensor lib_t(dst_q, eng);
        CHECK(lib_t.get_data_handle() != nullptr);
        const logical_tensor sp_lt = cp.get_scratchpad_logical_tensor();
        CHECK(sp_lt.get_data_type() == data_type::u8);
        CHECK(sp_lt.get_dims().size() == 1);
        tensor sp_t(sp_lt, eng);
        cp.execute(strm, {src_t, wei_t}, {lib_t}, sp_t);
        cp.execute(strm, {src_t, wei_t}, {lib_t}, tensor());
        execute_options opts;
        opts.key = 77;
        tensor wei_id_t(wei, eng, const_cast<float *>(wei_data.data()), 77);
        CHECK(wei_id_t.get_id() == 77);
        CHECK(wei_t.get_id() == 1);
        cp.execute(strm, {src_t, wei_id_t}, {lib_t}, opts);
        strm.wait();
        const float *lib = static_cast<const float *>(lib_t.get_data_handle());
        ok = true;
        for (int i = 0; i < M * N; ++i)
            ok = ok && near(lib[i], want[i]);
        CHECK(ok);

        // Missing output tensor: the C status comes through.
        CHECK_THROWS(cp.execute(strm, {src_t, wei_t}, {}),
                dnnl_invalid_arguments);
        // Compiling with a wrong input shape fails.
        logical_tensor bad_src(0, data_type::f32, dims {M, K + 1},
                layout_type::strided);
        bool threw = false;
        try {
            p.compile({bad_src, wei}, {dst}, eng);
        } catch (const dnnl::error &e) {
            threw = true;
            CHECK(e.status != dnnl_success);
        }
        CHECK(threw);
    } else {
        // Op by op: MatMul into a library buffer, then ReLU from it.
        const partition &p0 = parts[0];
        const partition &p1 = parts[1];
        CHECK(p0.get_ops().size() == 1 && p0.get_ops()[0] == 10);
        CHECK(p1.get_ops().size() == 1 && p1.get_ops()[0] == 11);
        compiled_partition cp0 = p0.compile({src, wei}, {mm_out}, eng);
        logical_tensor mid = cp0.query_logical_tensor(2);
        CHECK(mid.get_dims() == (dims {M, N}));
        compiled_partition cp1 = p1.compile({mid}, {dst}, eng);
        logical_tensor out = cp1.query_logical_tensor(3);
        tensor src_t(src, eng, const_cast<float *>(src_data.data()));
        tensor wei_t(wei, eng, const_cast<float *>(wei_data.data()));
        tensor mid_t(mid, eng);
        tensor dst_t(out, eng, dst_data.data());
        cp0.execute(strm, {src_t, wei_t}, {mid_t});
        cp1.execute(strm, {mid_t}, {dst_t});
        strm.wait();
        bool ok = true;
        for (int i = 0; i < M * N; ++i)
            ok = ok && near(dst_data[i], want[i]);
        CHECK(ok);
    }
}

static void *counting_malloc(size_t size, size_t alignment);
static void counting_free(void *p);
static int live_buffers = 0;
static int allocations = 0;

static void *counting_malloc(size_t size, size_t alignment) {
    void *p = nullptr;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return nullptr;
    ++live_buffers;
    ++allocations;
    return p;
}

static void counting_free(void *p) {
    --live_buffers;
    std::free(p);
}

static void test_tensor_and_allocator() {
    {
        allocator alloc(counting_malloc, counting_free);
        dnnl::engine eng = make_engine_with_allocator(
                dnnl::engine::kind::cpu, 0, alloc);
        CHECK(eng.get_kind() == dnnl::engine::kind::cpu);
        logical_tensor lt(3, data_type::f32, dims {4, 4}, layout_type::strided);
        {
            tensor t(lt, eng);
            CHECK(t.get_data_handle() != nullptr);
            CHECK(live_buffers == 1 && allocations == 1);
        }
        CHECK(live_buffers == 0);

        allocator builtin;
        dnnl::engine eng2 = make_engine_with_allocator(
                dnnl::engine::kind::cpu, 0, builtin);
        CHECK_THROWS(make_engine_with_allocator(
                             dnnl::engine::kind::gpu, 0, builtin),
                dnnl_invalid_arguments);

        float buf[16] = {0};
        float other[16] = {0};
        tensor t(lt, eng2, buf);
        CHECK(t.get_data_handle() == buf);
        t.set_data_handle(other);
        CHECK(t.get_data_handle() == other);
        CHECK(t.get_engine().get() == eng2.get());
        CHECK(t.get_logical_tensor().is_equal(lt));
        CHECK(t.get_id() == 3);
        tensor nobuf(lt, eng2, nullptr);
        CHECK(nobuf.get_data_handle() == nullptr);

        logical_tensor s_lt(20, data_type::f32, 0, layout_type::strided,
                property_type::host_scalar);
        float value = 2.5f;
        tensor s = tensor::make_scalar_tensor(s_lt, &value);
        CHECK(s.get_logical_tensor().get_property_type()
                == property_type::host_scalar);
        CHECK_THROWS(tensor::make_scalar_tensor(lt, &value),
                dnnl_invalid_arguments);

        tensor empty;
        CHECK_THROWS(empty.get_data_handle(), dnnl_invalid_arguments);
    }
}

// A partition made from one op, shape inference and partition math modes.
static void test_single_op_partition() {
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    dnnl::stream strm(eng);
    logical_tensor x(0, data_type::f32, dims {3, 4}, layout_type::strided);
    logical_tensor y(1, data_type::f32, 2, layout_type::strided);
    op relu(0, op::kind::ReLU, {x}, {y}, "relu");
    partition p(relu, dnnl::engine::kind::cpu);
    CHECK(p.is_supported());
    CHECK(p.get_ops_num() == 1);
    CHECK(p.get_engine_kind() == dnnl::engine::kind::cpu);

    std::vector<logical_tensor> outs {y};
    p.infer_shape({x}, outs);
    CHECK(outs[0].get_dims() == (dims {3, 4}));

    p.set_fpmath_mode(dnnl::fpmath_mode::tf32, true);
    dnnl::fpmath_mode mode = dnnl::fpmath_mode::strict;
    bool apply = false;
    p.get_fpmath_mode(mode, apply);
    CHECK(mode == dnnl::fpmath_mode::tf32 && apply);

    compiled_partition cp = p.compile({x}, {outs[0]}, eng);
    std::vector<float> in(12), out(12, 9.0f);
    for (int i = 0; i < 12; ++i)
        in[i] = (float)(i - 6);
    tensor in_t(x, eng, in.data());
    tensor out_t(cp.query_logical_tensor(1), eng, out.data());
    cp.execute(strm, {in_t}, {out_t});
    strm.wait();
    bool ok = true;
    for (int i = 0; i < 12; ++i)
        ok = ok && out[i] == (in[i] > 0 ? in[i] : 0.0f);
    CHECK(ok);

    // An unsupported partition (a Wildcard) refuses to compile.
    op wc(1, op::kind::Wildcard, {x}, {y});
    partition pw(wc, dnnl::engine::kind::cpu);
    CHECK(!pw.is_supported());
    CHECK_THROWS(pw.compile({x}, {y}, eng), dnnl_invalid_arguments);

    partition empty;
    CHECK_THROWS(empty.get_id(), dnnl_invalid_arguments);
}

static void test_graph_modes() {
    graph g(dnnl::engine::kind::cpu, dnnl::fpmath_mode::bf16);
    dnnl::fpmath_mode mode = dnnl::fpmath_mode::strict;
    bool apply = true;
    g.get_fpmath_mode(mode, apply);
    CHECK(mode == dnnl::fpmath_mode::bf16 && !apply);
    g.set_fpmath_mode(dnnl::fpmath_mode::f16, true);
    g.get_fpmath_mode(mode, apply);
    CHECK(mode == dnnl::fpmath_mode::f16 && apply);

    // An empty graph partitions into nothing.
    graph empty(dnnl::engine::kind::cpu);
    empty.finalize();
    CHECK(empty.get_partitions().empty());
    // Partitioning before finalize fails with the graph status.
    graph unfinished(dnnl::engine::kind::cpu);
    CHECK_THROWS(unfinished.get_partitions(), dnnl_invalid_graph);
}

static void test_free_functions() {
    const int cap = get_compiled_partition_cache_capacity();
    set_compiled_partition_cache_capacity(17);
    CHECK(get_compiled_partition_cache_capacity() == 17);
    CHECK_THROWS(set_compiled_partition_cache_capacity(-1),
            dnnl_invalid_arguments);
    set_compiled_partition_cache_capacity(cap);
    CHECK(get_compiled_partition_cache_capacity() == cap);

    const size_t ccap
            = get_constant_tensor_cache_capacity(dnnl::engine::kind::cpu);
    set_constant_tensor_cache_capacity(dnnl::engine::kind::cpu, 64);
    CHECK(get_constant_tensor_cache_capacity(dnnl::engine::kind::cpu) == 64);
    CHECK(get_constant_tensor_cache() == 1);
    set_constant_tensor_cache(0);
    CHECK(get_constant_tensor_cache() == 0);
    CHECK_THROWS(set_constant_tensor_cache(-1), dnnl_invalid_arguments);
    set_constant_tensor_cache_capacity(dnnl::engine::kind::cpu, ccap);

    set_dump_mode(dump_mode::none);
    CHECK((dump_mode::graph | dump_mode::subgraph) != dump_mode::none);
    CHECK(((dump_mode::graph | dump_mode::subgraph) & dump_mode::graph)
            == dump_mode::graph);
    CHECK_THROWS(set_dump_mode(static_cast<dump_mode>(8)),
            dnnl_invalid_arguments);
}

int main() {
    try {
        test_common();
        test_logical_tensor();
        test_op_attrs();
        test_matmul_relu(partition::policy::fusion);
        test_matmul_relu(partition::policy::debug);
        test_tensor_and_allocator();
        test_single_op_partition();
        test_graph_modes();
        test_free_functions();
    } catch (const dnnl::error &e) {
        std::fprintf(stderr, "unexpected dnnl::error: status %d: %s\n",
                (int)e.status, e.what());
        return 1;
    }
    if (failures) {
        std::fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    std::printf("test_cxx_graph_api: all checks passed\n");
    return 0;
}
