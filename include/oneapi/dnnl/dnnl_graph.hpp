/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl_graph.hpp
 *
 * The C++ graph API: a header-only C++11 wrapper over the C API of
 * oneapi/dnnl/dnnl_graph.h with the class, enum and method names of oneDNN's
 * C++ graph API, so C++ code written for oneDNN's graph API compiles against
 * Partita's headers alone and links with -lpartita. Every failing C call
 * throws dnnl::error whose `status` member is the C call's dnnl_status_t.
 *
 * Provided (namespace dnnl::graph unless noted):
 *
 *   from oneapi/dnnl/dnnl.hpp (namespace dnnl): error, handle, engine,
 *     stream, status, fpmath_mode, accumulation_mode, version(),
 *     set_verbose(), set_default_fpmath_mode(), get_default_fpmath_mode()
 *   status        scoped enum of all dnnl_status_t values (graph ones too)
 *   allocator     allocator(), allocator(host_malloc, host_free);
 *                 make_engine_with_allocator(kind, index, allocator)
 *   logical_tensor
 *                 enums data_type, layout_type, property_type; types dim,
 *                 dims;
 *                 constructors (id, dtype, ndims, layout_type[, property]),
 *                 (id, dtype[, layout_type]) with unknown rank,
 *                 (id, dtype, dims, layout_type[, property]),
 *                 (id, dtype, dims, strides[, property]),
 *                 (id, dtype, dims, layout_id[, property]) (opaque),
 *                 from a dnnl_graph_logical_tensor_t;
 *                 get_id, get_data_type, get_dims, get_strides,
 *                 get_layout_type, get_layout_id, get_property_type,
 *                 get_mem_size, is_equal
 *   tensor        tensor(lt, engine, handle), tensor(lt, engine) (library-
 *                 allocated buffer), make_scalar_tensor(lt, &value);
 *                 get_data_handle, set_data_handle, get_engine,
 *                 get_logical_tensor
 *   op            enums kind (all 88 op kinds and LastSymbol) and attr (all
 *                 attributes); op(id, kind[, name]),
 *                 op(id, kind, inputs, outputs[, name]); add_input(s),
 *                 add_output(s); set_attr<T> for float, int64_t, bool,
 *                 std::string, std::vector<float>, std::vector<int64_t>
 *   partition     enum policy; partition(op, engine::kind); is_supported,
 *                 get_ops, get_ops_num, get_id, get_input_ports,
 *                 get_output_ports, get_engine_kind, compile(inputs,
 *                 outputs, engine)
 *   compiled_partition
 *                 query_logical_tensor, get_inplace_ports,
 *                 execute(stream, inputs, outputs[, scratchpad tensor])
 *   graph         graph(engine::kind[, fpmath_mode]); add_op (returns a
 *                 status instead of throwing when allow_exception is false),
 *                 finalize, is_finalized, get_partitions(policy),
 *                 set_fpmath_mode(mode[, apply_to_int]),
 *                 get_fpmath_mode(mode, apply_to_int)
 *   free functions
 *                 set/get_compiled_partition_cache_capacity,
 *                 set/get_constant_tensor_cache,
 *                 set/get_constant_tensor_cache_capacity,
 *                 set_dump_mode (with enum dump_mode)
 *
 * Partita additions (wrapping the additions at the end of dnnl_graph.h; not
 * in oneDNN): tensor(lt, engine, handle, id) and tensor::get_id();
 * struct execute_options {key} and compiled_partition::execute(stream,
 * inputs, outputs, options); compiled_partition::
 * get_scratchpad_logical_tensor(); partition::set_fpmath_mode,
 * partition::get_fpmath_mode, partition::infer_shape; op::get_id and
 * op::get_kind.
 *
 * Not provided: partition::get_kind (oneDNN's C API has no public function
 * for it), the SYCL and OpenCL interoperability namespaces, and oneDNN's
 * primitive API (dnnl::memory and friends).
 */

#ifndef ONEAPI_DNNL_DNNL_GRAPH_HPP
#define ONEAPI_DNNL_DNNL_GRAPH_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "oneapi/dnnl/dnnl_graph.h"

namespace dnnl {
namespace graph {

/// The exception thrown by this API (same type as dnnl::error).
typedef dnnl::error error;

/// All status values, the graph ones included (same numbers as
/// dnnl_status_t).
enum class status {
    success = dnnl_success,
    out_of_memory = dnnl_out_of_memory,
    invalid_arguments = dnnl_invalid_arguments,
    unimplemented = dnnl_unimplemented,
    last_impl_reached = dnnl_last_impl_reached,
    runtime_error = dnnl_runtime_error,
    not_required = dnnl_not_required,
    invalid_graph = dnnl_invalid_graph,
    invalid_graph_op = dnnl_invalid_graph_op,
    invalid_shape = dnnl_invalid_shape,
    invalid_data_type = dnnl_invalid_data_type,
};

namespace detail {

/// handle_traits for a graph C handle freed by `destroy`.
template <typename T, dnnl_status_t (*destroy)(T)>
struct destroy_traits {
    static dnnl_status_t destructor(T p) { return destroy(p); }
};

/// Shared owner of a graph C handle.
template <typename T, dnnl_status_t (*destroy)(T)>
using handle = dnnl::handle<T, destroy_traits<T, destroy>>;

/// enable_if shorthand for set_attr's overloads.
template <bool condition>
using enable_when = typename std::enable_if<condition, bool>::type;

} // namespace detail

typedef detail::handle<dnnl_graph_allocator_t, dnnl_graph_allocator_destroy>
        allocator_handle;
typedef detail::handle<dnnl_graph_graph_t, dnnl_graph_graph_destroy>
        graph_handle;
typedef detail::handle<dnnl_graph_op_t, dnnl_graph_op_destroy> op_handle;
typedef detail::handle<dnnl_graph_tensor_t, dnnl_graph_tensor_destroy>
        tensor_handle;
typedef detail::handle<dnnl_graph_partition_t, dnnl_graph_partition_destroy>
        partition_handle;
typedef detail::handle<dnnl_graph_compiled_partition_t,
        dnnl_graph_compiled_partition_destroy>
        compiled_partition_handle;

/* ------------------------------------------------------------------------ */
/* Allocator                                                                */
/* ------------------------------------------------------------------------ */

/// Host memory callbacks for the buffers the library allocates. The default
/// allocator uses the library's built-in aligned allocation.
class allocator : public allocator_handle {
public:
    using allocator_handle::handle;

    /// An allocator calling host_malloc(size, alignment) and host_free(ptr).
    allocator(dnnl_graph_host_allocate_f host_malloc,
            dnnl_graph_host_deallocate_f host_free) {
        dnnl_graph_allocator_t c_alloc = nullptr;
        error::wrap_c_api(
                dnnl_graph_allocator_create(&c_alloc, host_malloc, host_free),
                "could not create an allocator");
        reset(c_alloc);
    }

    /// The library's built-in allocator.
    allocator() {
        dnnl_graph_allocator_t c_alloc = nullptr;
        error::wrap_c_api(
                dnnl_graph_allocator_create(&c_alloc, nullptr, nullptr),
                "could not create the default allocator");
        reset(c_alloc);
    }
};

/// Creates an engine that allocates through `alloc` (the allocator's
/// callbacks are copied; `alloc` may go away afterwards).
inline engine make_engine_with_allocator(
        engine::kind kind, size_t index, const allocator &alloc) {
    dnnl_engine_t c_engine = nullptr;
    error::wrap_c_api(dnnl_graph_make_engine_with_allocator(&c_engine,
                              dnnl::convert_to_c(kind), index, alloc.get()),
            "could not make an engine with the allocator");
    return engine(c_engine);
}

/* ------------------------------------------------------------------------ */
/* Logical tensor                                                           */
/* ------------------------------------------------------------------------ */

/// Description of a tensor (id, data type, shape, layout, property). A plain
/// value: copy and compare it freely.
class logical_tensor {
    friend class op;
    friend class tensor;
    friend class partition;
    friend class compiled_partition;

    dnnl_graph_logical_tensor_t data;

public:
    typedef dnnl_dim_t dim;
    typedef std::vector<dim> dims;

    enum class data_type {
        undef = dnnl_data_type_undef,
        f16 = dnnl_f16,
        bf16 = dnnl_bf16,
        f32 = dnnl_f32,
        s32 = dnnl_s32,
        s8 = dnnl_s8,
        u8 = dnnl_u8,
        f64 = dnnl_f64,
        boolean = dnnl_boolean,
        f8_e5m2 = dnnl_f8_e5m2,
        f8_e4m3 = dnnl_f8_e4m3,
        s4 = dnnl_s4,
        u4 = dnnl_u4,
        e8m0 = dnnl_e8m0,
        f4_e2m1 = dnnl_f4_e2m1,
        s64 = dnnl_s64,
    };

    enum class layout_type {
        undef = dnnl_graph_layout_type_undef,
        any = dnnl_graph_layout_type_any,
        strided = dnnl_graph_layout_type_strided,
        opaque = dnnl_graph_layout_type_opaque,
    };

    enum class property_type {
        undef = dnnl_graph_tensor_property_undef,
        variable = dnnl_graph_tensor_property_variable,
        constant = dnnl_graph_tensor_property_constant,
        host_scalar = dnnl_graph_tensor_property_host_scalar,
    };

    /// An empty logical tensor: id SIZE_MAX, unknown rank, undefined type
    /// and layout.
    logical_tensor() {
        std::memset(&data, 0, sizeof(data));
        data.id = std::numeric_limits<size_t>::max();
        data.ndims = DNNL_GRAPH_UNKNOWN_NDIMS;
        data.data_type = dnnl_data_type_undef;
        data.property = dnnl_graph_tensor_property_undef;
        data.layout_type = dnnl_graph_layout_type_undef;
    }

    /// Wraps a C logical tensor (copied).
    logical_tensor(const dnnl_graph_logical_tensor_t &c_data) : data(c_data) {}

    logical_tensor(const logical_tensor &other) = default;
    logical_tensor &operator=(const logical_tensor &other) = default;

    /// A tensor of rank `ndims` (or DNNL_GRAPH_UNKNOWN_NDIMS) whose dims are
    /// not known yet.
    logical_tensor(size_t tid, data_type dtype, int32_t ndims,
            layout_type ltype, property_type ptype = property_type::undef) {
        error::wrap_c_api(dnnl_graph_logical_tensor_init(&data, tid,
                                  convert_to_c(dtype), ndims,
                                  convert_to_c(ltype), convert_to_c(ptype)),
                "could not create a logical tensor");
    }

    /// A tensor of unknown rank.
    logical_tensor(size_t tid, data_type dtype,
            layout_type ltype = layout_type::undef)
        : logical_tensor(tid, dtype, DNNL_GRAPH_UNKNOWN_NDIMS, ltype) {}

    /// A tensor with the given dims (DNNL_GRAPH_UNKNOWN_DIM for unknown
    /// ones); a strided layout with known dims gets dense row-major strides.
    logical_tensor(size_t tid, data_type dtype, const dims &adims,
            layout_type ltype, property_type ptype = property_type::undef) {
        error::wrap_c_api(
                dnnl_graph_logical_tensor_init_with_dims(&data, tid,
                        convert_to_c(dtype), static_cast<int32_t>(adims.size()),
                        adims.empty() ? nullptr : adims.data(),
                        convert_to_c(ltype), convert_to_c(ptype)),
                "could not create a logical tensor with dims");
    }

    /// A strided tensor with the given dims and strides.
    logical_tensor(size_t tid, data_type dtype, const dims &adims,
            const dims &strides, property_type ptype = property_type::undef) {
        if (adims.size() != strides.size())
            throw error(dnnl_invalid_arguments,
                    "dims and strides of a logical tensor differ in length");
        error::wrap_c_api(
                dnnl_graph_logical_tensor_init_with_strides(&data, tid,
                        convert_to_c(dtype), static_cast<int32_t>(adims.size()),
                        adims.empty() ? nullptr : adims.data(),
                        strides.empty() ? nullptr : strides.data(),
                        convert_to_c(ptype)),
                "could not create a logical tensor with strides");
    }

    /// A tensor in the library-private (opaque) layout `lid`.
    logical_tensor(size_t tid, data_type dtype, const dims &adims, size_t lid,
            property_type ptype = property_type::undef) {
        error::wrap_c_api(
                dnnl_graph_logical_tensor_init_with_dims(&data, tid,
                        convert_to_c(dtype), static_cast<int32_t>(adims.size()),
                        adims.empty() ? nullptr : adims.data(),
                        dnnl_graph_layout_type_opaque, convert_to_c(ptype)),
                "could not create a logical tensor with a layout id");
        data.layout.layout_id = lid;
    }

    /// The dims. Throws dnnl::error for a tensor of unknown rank.
    dims get_dims() const {
        if (data.ndims < 0)
            throw error(dnnl_invalid_arguments,
                    "cannot return dims when ndims < 0");
        return dims(data.dims, data.dims + data.ndims);
    }

    size_t get_id() const { return data.id; }

    data_type get_data_type() const {
        return static_cast<data_type>(data.data_type);
    }

    property_type get_property_type() const {
        return static_cast<property_type>(data.property);
    }

    layout_type get_layout_type() const {
        return static_cast<layout_type>(data.layout_type);
    }

    /// The opaque layout id. Throws dnnl::error unless the layout is opaque.
    size_t get_layout_id() const {
        if (get_layout_type() != layout_type::opaque)
            throw error(dnnl_invalid_arguments,
                    "layout id is only available for an opaque layout");
        return data.layout.layout_id;
    }

    /// The strides. Throws dnnl::error unless the layout is strided and the
    /// rank is known.
    dims get_strides() const {
        if (get_layout_type() != layout_type::strided)
            throw error(dnnl_invalid_arguments,
                    "strides are only available for a strided layout");
        if (data.ndims < 0)
            throw error(dnnl_invalid_arguments,
                    "cannot return strides when ndims < 0");
        return dims(data.layout.strides, data.layout.strides + data.ndims);
    }

    /// Bytes a buffer for this tensor needs (SIZE_MAX for an any/undef
    /// layout).
    size_t get_mem_size() const {
        size_t size = 0;
        error::wrap_c_api(dnnl_graph_logical_tensor_get_mem_size(&data, &size),
                "could not get the memory size of a logical tensor");
        return size;
    }

    /// True when both describe the same tensor (id, type, shape, layout,
    /// property).
    bool is_equal(const logical_tensor &lt) const {
        uint8_t equal = 0;
        error::wrap_c_api(
                dnnl_graph_logical_tensor_is_equal(&data, &lt.data, &equal),
                "could not compare logical tensors");
        return equal != 0;
    }

    static dnnl_data_type_t convert_to_c(data_type dtype) {
        return static_cast<dnnl_data_type_t>(dtype);
    }

    static dnnl_graph_layout_type_t convert_to_c(layout_type ltype) {
        return static_cast<dnnl_graph_layout_type_t>(ltype);
    }

    static dnnl_graph_tensor_property_t convert_to_c(property_type ptype) {
        return static_cast<dnnl_graph_tensor_property_t>(ptype);
    }
};

/* ------------------------------------------------------------------------ */
/* Tensor                                                                   */
/* ------------------------------------------------------------------------ */

/// A logical tensor bound to an engine and a buffer.
class tensor : public tensor_handle {
public:
    using tensor_handle::handle;

    /// An empty tensor.
    tensor() = default;

    /// A tensor on `aengine` using the caller's buffer `ahandle` (borrowed;
    /// DNNL_MEMORY_ALLOCATE makes the library allocate and own one,
    /// DNNL_MEMORY_NONE / nullptr leaves it without a buffer).
    tensor(const logical_tensor &lt, const engine &aengine, void *ahandle) {
        dnnl_graph_tensor_t c_tensor = nullptr;
        error::wrap_c_api(dnnl_graph_tensor_create(
                                  &c_tensor, &lt.data, aengine.get(), ahandle),
                "could not create a tensor");
        reset(c_tensor);
    }

    /// A tensor on `aengine` with a buffer allocated (and owned) by the
    /// library.
    tensor(const logical_tensor &lt, const engine &aengine)
        : tensor(lt, aengine, DNNL_MEMORY_ALLOCATE) {}

    /// Partita addition: a tensor with a caller-chosen id, which keys the
    /// constant weight cache.
    tensor(const logical_tensor &lt, const engine &aengine, void *ahandle,
            size_t id) {
        dnnl_graph_tensor_t c_tensor = nullptr;
        error::wrap_c_api(dnnl_graph_tensor_create_with_id(&c_tensor, &lt.data,
                                  aengine.get(), ahandle, id),
                "could not create a tensor with an id");
        reset(c_tensor);
    }

    /// A host-scalar tensor (property host_scalar, rank 0); the value is
    /// copied from *scalar_handle.
    static tensor make_scalar_tensor(
            const logical_tensor &lt, void *scalar_handle) {
        dnnl_graph_tensor_t c_tensor = nullptr;
        error::wrap_c_api(dnnl_graph_tensor_create_scalar(
                                  &c_tensor, &lt.data, scalar_handle),
                "could not create a scalar tensor");
        return tensor(c_tensor);
    }

    /// The buffer (nullptr for host scalars and buffer-less tensors).
    void *get_data_handle() const {
        void *ptr = nullptr;
        error::wrap_c_api(dnnl_graph_tensor_get_data_handle(get(), &ptr),
                "could not get the data handle of a tensor");
        return ptr;
    }

    /// Points the tensor at another caller-owned buffer.
    void set_data_handle(void *ahandle) {
        error::wrap_c_api(dnnl_graph_tensor_set_data_handle(get(), ahandle),
                "could not set the data handle of a tensor");
    }

    /// The tensor's engine (borrowed from the tensor).
    engine get_engine() const {
        dnnl_engine_t c_engine = nullptr;
        error::wrap_c_api(dnnl_graph_tensor_get_engine(get(), &c_engine),
                "could not get the engine of a tensor");
        return engine(c_engine, true);
    }

    logical_tensor get_logical_tensor() const {
        dnnl_graph_logical_tensor_t c_lt;
        error::wrap_c_api(dnnl_graph_tensor_get_logical_tensor(get(), &c_lt),
                "could not get the logical tensor of a tensor");
        return logical_tensor(c_lt);
    }

    /// Partita addition: the tensor's id (its logical tensor's id unless one
    /// was given at creation).
    size_t get_id() const {
        size_t id = 0;
        error::wrap_c_api(dnnl_graph_tensor_get_id(get(), &id),
                "could not get the id of a tensor");
        return id;
    }
};

/* ------------------------------------------------------------------------ */
/* Compiled partition                                                       */
/* ------------------------------------------------------------------------ */

/// Partita addition: per-call execution options. `key` names the set of
/// constant weights bound in the call (part of the constant cache lookup).
struct execute_options {
    size_t key;
};

/// A partition compiled for an engine, ready to execute.
class compiled_partition : public compiled_partition_handle {
public:
    /// An empty compiled partition.
    compiled_partition() = default;

    /// Takes ownership of a C compiled partition.
    compiled_partition(dnnl_graph_compiled_partition_t c_compiled_partition) {
        reset(c_compiled_partition, false);
    }

    /// The compiled input or output logical tensor with id `tid` (concrete
    /// dims and layout).
    logical_tensor query_logical_tensor(size_t tid) const {
        dnnl_graph_logical_tensor_t c_lt;
        error::wrap_c_api(dnnl_graph_compiled_partition_query_logical_tensor(
                                  get(), tid, &c_lt),
                "could not query a logical tensor of a compiled partition");
        return logical_tensor(c_lt);
    }

    /// (input id, output id) pairs that may share one buffer.
    std::vector<std::pair<size_t, size_t>> get_inplace_ports() const {
        size_t num = 0;
        const dnnl_graph_inplace_pair_t *pairs = nullptr;
        error::wrap_c_api(dnnl_graph_compiled_partition_get_inplace_ports(
                                  get(), &num, &pairs),
                "could not get the in-place ports of a compiled partition");
        std::vector<std::pair<size_t, size_t>> result;
        result.reserve(num);
        for (size_t i = 0; i < num; ++i)
            result.push_back(std::make_pair(
                    pairs[i].input_id, pairs[i].output_id));
        return result;
    }

    /// Partita naming of dnnl_graph_compiled_partition_get_scratchpad_
    /// logical_tensor: a 1-D u8 tensor of the scratchpad bytes execution
    /// needs.
    logical_tensor get_scratchpad_logical_tensor() const {
        dnnl_graph_logical_tensor_t c_lt;
        error::wrap_c_api(
                dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(
                        get(), &c_lt),
                "could not get the scratchpad of a compiled partition");
        return logical_tensor(c_lt);
    }

    /// Executes on `astream`; tensors are matched to ports by their logical
    /// tensors' ids.
    void execute(stream &astream, const std::vector<tensor> &inputs,
            const std::vector<tensor> &outputs) const {
        std::vector<const_dnnl_graph_tensor_t> c_in = to_c(inputs);
        std::vector<const_dnnl_graph_tensor_t> c_out = to_c(outputs);
        error::wrap_c_api(dnnl_graph_compiled_partition_execute(get(),
                                  astream.get(), c_in.size(), data_or_null(c_in),
                                  c_out.size(), data_or_null(c_out)),
                "could not execute a compiled partition");
    }

    /// Executes with a caller-provided scratchpad tensor.
    void execute(stream &astream, const std::vector<tensor> &inputs,
            const std::vector<tensor> &outputs,
            const tensor &scratchpad) const {
        std::vector<const_dnnl_graph_tensor_t> c_in = to_c(inputs);
        std::vector<const_dnnl_graph_tensor_t> c_out = to_c(outputs);
        error::wrap_c_api(
                dnnl_graph_compiled_partition_execute_v2(get(), astream.get(),
                        c_in.size(), data_or_null(c_in), c_out.size(),
                        data_or_null(c_out), scratchpad.get(true)),
                "could not execute a compiled partition with a scratchpad");
    }

    /// Partita addition: executes with options (the constant weight key).
    void execute(stream &astream, const std::vector<tensor> &inputs,
            const std::vector<tensor> &outputs,
            const execute_options &options) const {
        std::vector<const_dnnl_graph_tensor_t> c_in = to_c(inputs);
        std::vector<const_dnnl_graph_tensor_t> c_out = to_c(outputs);
        dnnl_graph_execute_options_t c_options;
        c_options.key = options.key;
        error::wrap_c_api(
                dnnl_graph_compiled_partition_execute_with_options(get(),
                        astream.get(), c_in.size(), data_or_null(c_in),
                        c_out.size(), data_or_null(c_out), &c_options),
                "could not execute a compiled partition with options");
    }

private:
    static std::vector<const_dnnl_graph_tensor_t> to_c(
            const std::vector<tensor> &tensors) {
        std::vector<const_dnnl_graph_tensor_t> c_tensors;
        c_tensors.reserve(tensors.size());
        for (size_t i = 0; i < tensors.size(); ++i)
            c_tensors.push_back(tensors[i].get());
        return c_tensors;
    }

    static const_dnnl_graph_tensor_t *data_or_null(
            std::vector<const_dnnl_graph_tensor_t> &v) {
        return v.empty() ? nullptr : v.data();
    }
};

/* ------------------------------------------------------------------------ */
/* Op                                                                       */
/* ------------------------------------------------------------------------ */

/// An operation with its input and output logical tensors and attributes.
class op : public op_handle {
public:
    enum class kind {
        Abs = dnnl_graph_op_abs,
        AbsBackward = dnnl_graph_op_abs_backward,
        Add = dnnl_graph_op_add,
        AvgPool = dnnl_graph_op_avg_pool,
        AvgPoolBackward = dnnl_graph_op_avg_pool_backward,
        BatchNormTrainingBackward = dnnl_graph_op_batch_norm_backward,
        BatchNormForwardTraining = dnnl_graph_op_batch_norm_forward_training,
        BatchNormInference = dnnl_graph_op_batch_norm_inference,
        BiasAdd = dnnl_graph_op_bias_add,
        BiasAddBackward = dnnl_graph_op_bias_add_backward,
        Clamp = dnnl_graph_op_clamp,
        ClampBackward = dnnl_graph_op_clamp_backward,
        Concat = dnnl_graph_op_concat,
        Convolution = dnnl_graph_op_convolution,
        ConvolutionBackwardData = dnnl_graph_op_convolution_backward_data,
        ConvolutionBackwardWeights = dnnl_graph_op_convolution_backward_weights,
        ConvTranspose = dnnl_graph_op_conv_transpose,
        ConvTransposeBackwardData = dnnl_graph_op_conv_transpose_backward_data,
        ConvTransposeBackwardWeights
        = dnnl_graph_op_conv_transpose_backward_weights,
        Dequantize = dnnl_graph_op_dequantize,
        Divide = dnnl_graph_op_divide,
        DynamicDequantize = dnnl_graph_op_dynamic_dequantize,
        DynamicQuantize = dnnl_graph_op_dynamic_quantize,
        Elu = dnnl_graph_op_elu,
        EluBackward = dnnl_graph_op_elu_backward,
        End = dnnl_graph_op_end,
        Exp = dnnl_graph_op_exp,
        GELU = dnnl_graph_op_gelu,
        GELUBackward = dnnl_graph_op_gelu_backward,
        HardSwish = dnnl_graph_op_hard_swish,
        HardSwishBackward = dnnl_graph_op_hard_swish_backward,
        Interpolate = dnnl_graph_op_interpolate,
        InterpolateBackward = dnnl_graph_op_interpolate_backward,
        LayerNorm = dnnl_graph_op_layer_norm,
        LayerNormBackward = dnnl_graph_op_layer_norm_backward,
        LeakyReLU = dnnl_graph_op_leaky_relu,
        Log = dnnl_graph_op_log,
        LogSoftmax = dnnl_graph_op_log_softmax,
        LogSoftmaxBackward = dnnl_graph_op_log_softmax_backward,
        MatMul = dnnl_graph_op_matmul,
        Maximum = dnnl_graph_op_maximum,
        MaxPool = dnnl_graph_op_max_pool,
        MaxPoolBackward = dnnl_graph_op_max_pool_backward,
        Minimum = dnnl_graph_op_minimum,
        Mish = dnnl_graph_op_mish,
        MishBackward = dnnl_graph_op_mish_backward,
        Multiply = dnnl_graph_op_multiply,
        PReLU = dnnl_graph_op_prelu,
        PReLUBackward = dnnl_graph_op_prelu_backward,
        Quantize = dnnl_graph_op_quantize,
        Reciprocal = dnnl_graph_op_reciprocal,
        ReduceL1 = dnnl_graph_op_reduce_l1,
        ReduceL2 = dnnl_graph_op_reduce_l2,
        ReduceMax = dnnl_graph_op_reduce_max,
        ReduceMean = dnnl_graph_op_reduce_mean,
        ReduceMin = dnnl_graph_op_reduce_min,
        ReduceProd = dnnl_graph_op_reduce_prod,
        ReduceSum = dnnl_graph_op_reduce_sum,
        ReLU = dnnl_graph_op_relu,
        ReLUBackward = dnnl_graph_op_relu_backward,
        Reorder = dnnl_graph_op_reorder,
        Round = dnnl_graph_op_round,
        Sigmoid = dnnl_graph_op_sigmoid,
        SigmoidBackward = dnnl_graph_op_sigmoid_backward,
        SoftMax = dnnl_graph_op_softmax,
        SoftMaxBackward = dnnl_graph_op_softmax_backward,
        SoftPlus = dnnl_graph_op_softplus,
        SoftPlusBackward = dnnl_graph_op_softplus_backward,
        Sqrt = dnnl_graph_op_sqrt,
        SqrtBackward = dnnl_graph_op_sqrt_backward,
        Square = dnnl_graph_op_square,
        SquaredDifference = dnnl_graph_op_squared_difference,
        StaticReshape = dnnl_graph_op_static_reshape,
        StaticTranspose = dnnl_graph_op_static_transpose,
        Subtract = dnnl_graph_op_subtract,
        Tanh = dnnl_graph_op_tanh,
        TanhBackward = dnnl_graph_op_tanh_backward,
        TypeCast = dnnl_graph_op_type_cast,
        Wildcard = dnnl_graph_op_wildcard,
        HardSigmoid = dnnl_graph_op_hard_sigmoid,
        HardSigmoidBackward = dnnl_graph_op_hard_sigmoid_backward,
        Select = dnnl_graph_op_select,
        Pow = dnnl_graph_op_pow,
        GroupNorm = dnnl_graph_op_group_norm,
        GenIndex = dnnl_graph_op_gen_index,
        GreaterEqual = dnnl_graph_op_greater_equal,
        RMSNorm = dnnl_graph_op_rms_norm,
        Dropout = dnnl_graph_op_dropout,
        LastSymbol = dnnl_graph_op_last_symbol,
    };

    enum class attr {
        undef = dnnl_graph_op_attr_undef,

        // float
        alpha = dnnl_graph_op_attr_alpha,
        beta = dnnl_graph_op_attr_beta,
        epsilon = dnnl_graph_op_attr_epsilon,
        max = dnnl_graph_op_attr_max,
        min = dnnl_graph_op_attr_min,
        momentum = dnnl_graph_op_attr_momentum,

        // float vector
        scales = dnnl_graph_op_attr_scales,

        // int64_t
        axis = dnnl_graph_op_attr_axis,
        begin_norm_axis = dnnl_graph_op_attr_begin_norm_axis,
        groups = dnnl_graph_op_attr_groups,

        // int64_t vector
        axes = dnnl_graph_op_attr_axes,
        dilations = dnnl_graph_op_attr_dilations,
        dst_shape = dnnl_graph_op_attr_dst_shape,
        kernel = dnnl_graph_op_attr_kernel,
        order = dnnl_graph_op_attr_order,
        output_padding = dnnl_graph_op_attr_output_padding,
        pads_begin = dnnl_graph_op_attr_pads_begin,
        pads_end = dnnl_graph_op_attr_pads_end,
        shape = dnnl_graph_op_attr_shape,
        sizes = dnnl_graph_op_attr_sizes,
        src_shape = dnnl_graph_op_attr_src_shape,
        strides = dnnl_graph_op_attr_strides,
        weights_shape = dnnl_graph_op_attr_weights_shape,
        zps = dnnl_graph_op_attr_zps,
        group_shape = dnnl_graph_op_attr_group_shape,

        // bool
        exclude_pad = dnnl_graph_op_attr_exclude_pad,
        keep_dims = dnnl_graph_op_attr_keep_dims,
        keep_stats = dnnl_graph_op_attr_keep_stats,
        per_channel_broadcast = dnnl_graph_op_attr_per_channel_broadcast,
        special_zero = dnnl_graph_op_attr_special_zero,
        transpose_a = dnnl_graph_op_attr_transpose_a,
        transpose_b = dnnl_graph_op_attr_transpose_b,
        use_affine = dnnl_graph_op_attr_use_affine,
        use_dst = dnnl_graph_op_attr_use_dst,

        // string
        auto_broadcast = dnnl_graph_op_attr_auto_broadcast,
        auto_pad = dnnl_graph_op_attr_auto_pad,
        coordinate_transformation_mode
        = dnnl_graph_op_attr_coordinate_transformation_mode,
        data_format = dnnl_graph_op_attr_data_format,
        mode = dnnl_graph_op_attr_mode,
        qtype = dnnl_graph_op_attr_qtype,
        rounding_type = dnnl_graph_op_attr_rounding_type,
        weights_format = dnnl_graph_op_attr_weights_format,
        accumulation_mode = dnnl_graph_op_attr_accumulation_mode,

        end = dnnl_graph_op_attr_end,
    };

    /// An empty op.
    op() = default;

    /// An op without inputs and outputs yet. An empty name gets a default
    /// one from the library.
    op(size_t id, kind akind, const std::string &verbose_name = "") {
        dnnl_graph_op_t c_op = nullptr;
        error::wrap_c_api(dnnl_graph_op_create(&c_op, id, convert_to_c(akind),
                                  verbose_name.c_str()),
                "could not create an op");
        reset(c_op);
    }

    /// An op with its inputs and outputs.
    op(size_t id, kind akind, const std::vector<logical_tensor> &inputs,
            const std::vector<logical_tensor> &outputs,
            const std::string &verbose_name = "")
        : op(id, akind, verbose_name) {
        add_inputs(inputs);
        add_outputs(outputs);
    }

    void add_input(const logical_tensor &t) {
        error::wrap_c_api(dnnl_graph_op_add_input(get(), &t.data),
                "could not add an input to an op");
    }

    void add_inputs(const std::vector<logical_tensor> &ts) {
        for (size_t i = 0; i < ts.size(); ++i)
            add_input(ts[i]);
    }

    void add_output(const logical_tensor &t) {
        error::wrap_c_api(dnnl_graph_op_add_output(get(), &t.data),
                "could not add an output to an op");
    }

    void add_outputs(const std::vector<logical_tensor> &ts) {
        for (size_t i = 0; i < ts.size(); ++i)
            add_output(ts[i]);
    }

    /// Sets a single integer attribute (axis, begin_norm_axis, groups).
    template <typename Type,
            detail::enable_when<std::is_same<Type, int64_t>::value> = true>
    op &set_attr(attr name, const Type &value) {
        error::wrap_c_api(dnnl_graph_op_set_attr_s64(
                                  get(), convert_to_c(name), &value, 1),
                "could not set an int64_t attribute of an op");
        return *this;
    }

    /// Sets a single float attribute (alpha, beta, epsilon, ...).
    template <typename Type,
            detail::enable_when<std::is_same<Type, float>::value> = true>
    op &set_attr(attr name, const Type &value) {
        error::wrap_c_api(dnnl_graph_op_set_attr_f32(
                                  get(), convert_to_c(name), &value, 1),
                "could not set a float attribute of an op");
        return *this;
    }

    /// Sets a boolean attribute (transpose_a, keep_dims, ...).
    template <typename Type,
            detail::enable_when<std::is_same<Type, bool>::value> = true>
    op &set_attr(attr name, const Type &value) {
        const uint8_t c_value = value ? 1 : 0;
        error::wrap_c_api(dnnl_graph_op_set_attr_bool(
                                  get(), convert_to_c(name), &c_value, 1),
                "could not set a bool attribute of an op");
        return *this;
    }

    /// Sets a string attribute (auto_broadcast, data_format, mode, ...).
    template <typename Type,
            detail::enable_when<std::is_same<Type, std::string>::value> = true>
    op &set_attr(attr name, const Type &value) {
        error::wrap_c_api(
                dnnl_graph_op_set_attr_str(get(), convert_to_c(name),
                        value.c_str(), value.size()),
                "could not set a string attribute of an op");
        return *this;
    }

    /// Sets an integer-vector attribute (strides, pads_begin, order, ...).
    template <typename Type,
            detail::enable_when<std::is_same<Type,
                    std::vector<int64_t>>::value> = true>
    op &set_attr(attr name, const Type &value) {
        error::wrap_c_api(
                dnnl_graph_op_set_attr_s64(get(), convert_to_c(name),
                        value.empty() ? nullptr : value.data(), value.size()),
                "could not set an int64_t vector attribute of an op");
        return *this;
    }

    /// Sets a float-vector attribute (scales).
    template <typename Type,
            detail::enable_when<std::is_same<Type,
                    std::vector<float>>::value> = true>
    op &set_attr(attr name, const Type &value) {
        error::wrap_c_api(
                dnnl_graph_op_set_attr_f32(get(), convert_to_c(name),
                        value.empty() ? nullptr : value.data(), value.size()),
                "could not set a float vector attribute of an op");
        return *this;
    }

    /// Partita addition: the op's id.
    size_t get_id() const {
        size_t id = 0;
        error::wrap_c_api(dnnl_graph_op_get_id(get(), &id),
                "could not get the id of an op");
        return id;
    }

    /// Partita addition: the op's kind.
    kind get_kind() const {
        dnnl_graph_op_kind_t c_kind = dnnl_graph_op_last_symbol;
        error::wrap_c_api(dnnl_graph_op_get_kind(get(), &c_kind),
                "could not get the kind of an op");
        return static_cast<kind>(c_kind);
    }

    static dnnl_graph_op_kind_t convert_to_c(kind akind) {
        return static_cast<dnnl_graph_op_kind_t>(akind);
    }

    static dnnl_graph_op_attr_t convert_to_c(attr aattr) {
        return static_cast<dnnl_graph_op_attr_t>(aattr);
    }
};

/* ------------------------------------------------------------------------ */
/* Partition                                                                */
/* ------------------------------------------------------------------------ */

/// A group of ops the library compiles and runs as one unit.
class partition : public partition_handle {
public:
    enum class policy {
        fusion = dnnl_graph_partition_policy_fusion,
        debug = dnnl_graph_partition_policy_debug,
    };

    /// An empty partition.
    partition() = default;

    /// Takes ownership of a C partition.
    partition(dnnl_graph_partition_t c_partition) {
        reset(c_partition, false);
    }

    /// A partition holding the single op `aop`, for engines of kind `ekind`.
    partition(const op &aop, engine::kind ekind) {
        dnnl_graph_partition_t c_partition = nullptr;
        error::wrap_c_api(dnnl_graph_partition_create_with_op(&c_partition,
                                  aop.get(), dnnl::convert_to_c(ekind)),
                "could not create a partition with an op");
        reset(c_partition);
    }

    size_t get_ops_num() const {
        size_t num = 0;
        error::wrap_c_api(dnnl_graph_partition_get_op_num(get(), &num),
                "could not get the number of ops of a partition");
        return num;
    }

    /// Ids of the partition's ops.
    std::vector<size_t> get_ops() const {
        const size_t num = get_ops_num();
        std::vector<size_t> ids(num);
        if (num == 0) return ids;
        error::wrap_c_api(dnnl_graph_partition_get_ops(get(), num, ids.data()),
                "could not get the ops of a partition");
        return ids;
    }

    size_t get_id() const {
        size_t id = 0;
        error::wrap_c_api(dnnl_graph_partition_get_id(get(), &id),
                "could not get the id of a partition");
        return id;
    }

    /// True when the library can compile and run the partition.
    bool is_supported() const {
        uint8_t supported = 0;
        error::wrap_c_api(dnnl_graph_partition_is_supported(get(), &supported),
                "could not check whether a partition is supported");
        return supported != 0;
    }

    std::vector<logical_tensor> get_input_ports() const {
        size_t num = 0;
        error::wrap_c_api(dnnl_graph_partition_get_input_ports_num(get(), &num),
                "could not get the number of inputs of a partition");
        std::vector<dnnl_graph_logical_tensor_t> c_ports(num);
        if (num > 0)
            error::wrap_c_api(dnnl_graph_partition_get_input_ports(
                                      get(), num, c_ports.data()),
                    "could not get the inputs of a partition");
        return std::vector<logical_tensor>(c_ports.begin(), c_ports.end());
    }

    std::vector<logical_tensor> get_output_ports() const {
        size_t num = 0;
        error::wrap_c_api(
                dnnl_graph_partition_get_output_ports_num(get(), &num),
                "could not get the number of outputs of a partition");
        std::vector<dnnl_graph_logical_tensor_t> c_ports(num);
        if (num > 0)
            error::wrap_c_api(dnnl_graph_partition_get_output_ports(
                                      get(), num, c_ports.data()),
                    "could not get the outputs of a partition");
        return std::vector<logical_tensor>(c_ports.begin(), c_ports.end());
    }

    engine::kind get_engine_kind() const {
        dnnl_engine_kind_t c_kind = dnnl_any_engine;
        error::wrap_c_api(dnnl_graph_partition_get_engine_kind(get(), &c_kind),
                "could not get the engine kind of a partition");
        return static_cast<engine::kind>(c_kind);
    }

    /// Compiles the partition for `aengine` with concrete input and output
    /// logical tensors (matched to the ports by id). Throws dnnl::error
    /// (dnnl_invalid_arguments) for an unsupported partition.
    compiled_partition compile(const std::vector<logical_tensor> &inputs,
            const std::vector<logical_tensor> &outputs,
            const engine &aengine) const {
        if (!is_supported())
            throw error(dnnl_invalid_arguments,
                    "could not compile an unsupported partition");
        dnnl_graph_compiled_partition_t c_cp = nullptr;
        error::wrap_c_api(dnnl_graph_compiled_partition_create(&c_cp, get()),
                "could not create a compiled partition");
        compiled_partition result(c_cp);
        std::vector<const dnnl_graph_logical_tensor_t *> c_in, c_out;
        c_in.reserve(inputs.size());
        c_out.reserve(outputs.size());
        for (size_t i = 0; i < inputs.size(); ++i)
            c_in.push_back(&inputs[i].data);
        for (size_t i = 0; i < outputs.size(); ++i)
            c_out.push_back(&outputs[i].data);
        error::wrap_c_api(
                dnnl_graph_partition_compile(get(), c_cp, c_in.size(),
                        c_in.empty() ? nullptr : c_in.data(), c_out.size(),
                        c_out.empty() ? nullptr : c_out.data(), aengine.get()),
                "could not compile a partition");
        return result;
    }

    /// Partita addition: a partition-level math mode, used by later
    /// compilations instead of the one inherited from the graph.
    void set_fpmath_mode(fpmath_mode mode, bool apply_to_int = false) {
        error::wrap_c_api(dnnl_graph_partition_set_fpmath_mode(get(),
                                  dnnl::convert_to_c(mode), apply_to_int),
                "could not set the fpmath mode of a partition");
    }

    /// Partita addition: the math mode in effect for the partition.
    void get_fpmath_mode(fpmath_mode &mode, bool &apply_to_int) const {
        dnnl_fpmath_mode_t c_mode = dnnl_fpmath_mode_strict;
        int c_apply = 0;
        error::wrap_c_api(
                dnnl_graph_partition_get_fpmath_mode(get(), &c_mode, &c_apply),
                "could not get the fpmath mode of a partition");
        mode = static_cast<fpmath_mode>(c_mode);
        apply_to_int = c_apply != 0;
    }

    /// Partita addition: fills the dims of `outputs` from `inputs` (matched
    /// to the ports by id) without compiling.
    void infer_shape(const std::vector<logical_tensor> &inputs,
            std::vector<logical_tensor> &outputs) const {
        std::vector<const dnnl_graph_logical_tensor_t *> c_in;
        std::vector<dnnl_graph_logical_tensor_t *> c_out;
        c_in.reserve(inputs.size());
        c_out.reserve(outputs.size());
        for (size_t i = 0; i < inputs.size(); ++i)
            c_in.push_back(&inputs[i].data);
        for (size_t i = 0; i < outputs.size(); ++i)
            c_out.push_back(&outputs[i].data);
        error::wrap_c_api(
                dnnl_graph_partition_infer_shape(get(), c_in.size(),
                        c_in.empty() ? nullptr : c_in.data(), c_out.size(),
                        c_out.empty() ? nullptr : c_out.data()),
                "could not infer the shapes of a partition");
    }
};

/* ------------------------------------------------------------------------ */
/* Graph                                                                    */
/* ------------------------------------------------------------------------ */

/// A graph of ops for one engine kind, to be partitioned.
class graph : public graph_handle {
public:
    /// An empty graph using the process default math mode.
    graph(engine::kind engine_kind) {
        dnnl_graph_graph_t c_graph = nullptr;
        error::wrap_c_api(dnnl_graph_graph_create(
                                  &c_graph, dnnl::convert_to_c(engine_kind)),
                "could not create a graph");
        reset(c_graph);
    }

    /// An empty graph with an explicit math mode.
    graph(engine::kind engine_kind, fpmath_mode mode) {
        dnnl_graph_graph_t c_graph = nullptr;
        error::wrap_c_api(dnnl_graph_graph_create_with_fpmath_mode(&c_graph,
                                  dnnl::convert_to_c(engine_kind),
                                  dnnl::convert_to_c(mode)),
                "could not create a graph with an fpmath mode");
        reset(c_graph);
    }

    /// Sets the math mode the graph's partitions inherit (before finalize).
    void set_fpmath_mode(fpmath_mode mode, bool apply_to_int = false) {
        error::wrap_c_api(dnnl_graph_graph_set_fpmath_mode(get(),
                                  dnnl::convert_to_c(mode), apply_to_int),
                "could not set the fpmath mode of a graph");
    }

    /// The graph's math mode (before finalize).
    void get_fpmath_mode(fpmath_mode &mode, bool &apply_to_int) const {
        dnnl_fpmath_mode_t c_mode = dnnl_fpmath_mode_strict;
        int c_apply = 0;
        error::wrap_c_api(
                dnnl_graph_graph_get_fpmath_mode(get(), &c_mode, &c_apply),
                "could not get the fpmath mode of a graph");
        mode = static_cast<fpmath_mode>(c_mode);
        apply_to_int = c_apply != 0;
    }

    /// Adds a copy of `aop`. A failure throws dnnl::error, or with
    /// allow_exception == false is returned as a status.
    status add_op(const op &aop, bool allow_exception = true) {
        const dnnl_status_t st = dnnl_graph_add_op(get(), aop.get());
        if (allow_exception)
            error::wrap_c_api(st, "could not add an op to a graph");
        return static_cast<status>(st);
    }

    /// Ends construction: connects ops through equal logical tensor ids.
    void finalize() {
        error::wrap_c_api(dnnl_graph_graph_finalize(get()),
                "could not finalize a graph");
    }

    bool is_finalized() const {
        uint8_t finalized = 0;
        error::wrap_c_api(dnnl_graph_graph_is_finalized(get(), &finalized),
                "could not check whether a graph is finalized");
        return finalized != 0;
    }

    /// Partitions the finalized graph; the partitions come in topological
    /// order.
    std::vector<partition> get_partitions(
            partition::policy policy = partition::policy::fusion) {
        error::wrap_c_api(
                dnnl_graph_graph_filter(get(),
                        static_cast<dnnl_graph_partition_policy_t>(policy)),
                "could not partition a graph");
        size_t num = 0;
        error::wrap_c_api(dnnl_graph_graph_get_partition_num(get(), &num),
                "could not get the number of partitions of a graph");
        std::vector<partition> result;
        if (num == 0) return result;
        std::vector<dnnl_graph_partition_t> c_partitions(num, nullptr);
        error::wrap_c_api(dnnl_graph_graph_get_partitions(
                                  get(), num, c_partitions.data()),
                "could not get the partitions of a graph");
        result.reserve(num);
        for (size_t i = 0; i < num; ++i)
            result.push_back(partition(c_partitions[i]));
        return result;
    }
};

/* ------------------------------------------------------------------------ */
/* Caches and dumping                                                       */
/* ------------------------------------------------------------------------ */

/// Capacity (entries) of the process-wide compiled partition cache.
inline int get_compiled_partition_cache_capacity() {
    int capacity = 0;
    error::wrap_c_api(dnnl_graph_get_compiled_partition_cache_capacity(&capacity),
            "could not get the compiled partition cache capacity");
    return capacity;
}

/// Sets the compiled partition cache capacity (0 empties and disables it).
inline void set_compiled_partition_cache_capacity(int capacity) {
    error::wrap_c_api(dnnl_graph_set_compiled_partition_cache_capacity(capacity),
            "could not set the compiled partition cache capacity");
}

/// Deprecated switch of the constant tensor cache: 0 off, positive on
/// (unlimited).
inline void set_constant_tensor_cache(int flag) {
    error::wrap_c_api(dnnl_graph_set_constant_tensor_cache(flag),
            "could not set the constant tensor cache");
}

/// Deprecated: 1 when the constant tensor cache is on, else 0.
inline int get_constant_tensor_cache() {
    int flag = 0;
    error::wrap_c_api(dnnl_graph_get_constant_tensor_cache(&flag),
            "could not get the constant tensor cache");
    return flag;
}

/// Sets the constant tensor cache capacity, in megabytes, for `kind`.
inline void set_constant_tensor_cache_capacity(engine::kind kind, size_t size) {
    error::wrap_c_api(dnnl_graph_set_constant_tensor_cache_capacity(
                              dnnl::convert_to_c(kind), size),
            "could not set the constant tensor cache capacity");
}

/// The constant tensor cache capacity, in megabytes, for `kind`.
inline size_t get_constant_tensor_cache_capacity(engine::kind kind) {
    size_t size = 0;
    error::wrap_c_api(dnnl_graph_get_constant_tensor_cache_capacity(
                              dnnl::convert_to_c(kind), &size),
            "could not get the constant tensor cache capacity");
    return size;
}

/// What set_dump_mode writes as JSON files (a bit mask).
enum class dump_mode : unsigned {
    none = dnnl_graph_dump_mode_none,
    subgraph = dnnl_graph_dump_mode_subgraph,
    graph = dnnl_graph_dump_mode_graph,
};

inline dump_mode operator|(dump_mode a, dump_mode b) {
    return static_cast<dump_mode>(
            static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

inline dump_mode operator&(dump_mode a, dump_mode b) {
    return static_cast<dump_mode>(
            static_cast<unsigned>(a) & static_cast<unsigned>(b));
}

/// Replaces the active graph dump mask.
inline void set_dump_mode(dump_mode modes) {
    error::wrap_c_api(dnnl_graph_set_dump_mode(
                              static_cast<dnnl_graph_dump_mode_t>(modes)),
            "could not set the graph dump mode");
}

} // namespace graph
} // namespace dnnl

#endif /* ONEAPI_DNNL_DNNL_GRAPH_HPP */
