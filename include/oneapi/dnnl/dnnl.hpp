/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl.hpp
 *
 * The part of oneDNN's C++ API that the graph C++ API
 * (oneapi/dnnl/dnnl_graph.hpp) stands on, as a header-only C++11 wrapper of
 * the common C API (oneapi/dnnl/dnnl_common.h):
 *
 *   dnnl::error            std::exception carrying the dnnl_status_t of a
 *                          failed C call (member `status`, what() = message);
 *                          error::wrap_c_api(status, message) throws it
 *   dnnl::handle<T>        shared, reference-counted owner of a C handle
 *                          (dnnl::handle_traits<T>::destructor frees it);
 *                          weak handles borrow without freeing
 *   dnnl::engine           engine::kind {any, cpu, gpu}, engine(kind, index),
 *                          engine::get_count(kind), get_kind()
 *   dnnl::stream           stream::flags, stream(engine, flags), get_engine(),
 *                          wait()
 *   dnnl::status, dnnl::fpmath_mode, dnnl::accumulation_mode (scoped enums
 *   with the C values), dnnl::convert_to_c(...), dnnl::version_t,
 *   dnnl::version(), dnnl::set_verbose(), dnnl::set_default_fpmath_mode(),
 *   dnnl::get_default_fpmath_mode()
 *
 * oneDNN's primitive API (dnnl::memory, dnnl::primitive and the primitives,
 * attributes, post-ops) is not part of Partita and is not declared here.
 */

#ifndef ONEAPI_DNNL_DNNL_HPP
#define ONEAPI_DNNL_DNNL_HPP

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <type_traits>

#include "oneapi/dnnl/dnnl_common.h"

namespace dnnl {

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/// The exception every wrapper throws when a C call fails. `status` is the
/// dnnl_status_t the C function returned; `message` says which operation
/// failed (a string literal, never freed).
struct error : public std::exception {
    dnnl_status_t status;
    const char *message;

    error(dnnl_status_t astatus, const char *amessage)
        : status(astatus), message(amessage) {}

    const char *what() const noexcept override { return message; }

    /// Throws error(status, message) unless status is dnnl_success.
    static void wrap_c_api(dnnl_status_t status, const char *message) {
        if (status != dnnl_success) throw error(status, message);
    }
};

/// Status values as a scoped enum (same numbers as dnnl_status_t).
enum class status {
    success = dnnl_success,
    out_of_memory = dnnl_out_of_memory,
    invalid_arguments = dnnl_invalid_arguments,
    unimplemented = dnnl_unimplemented,
    last_impl_reached = dnnl_last_impl_reached,
    runtime_error = dnnl_runtime_error,
    not_required = dnnl_not_required,
};

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

/// Tells dnnl::handle how to free a C handle type: a specialization has a
/// static `destructor(T)` returning dnnl_status_t.
template <typename T>
struct handle_traits {};

template <>
struct handle_traits<dnnl_engine_t> {
    static dnnl_status_t destructor(dnnl_engine_t p) {
        return dnnl_engine_destroy(p);
    }
};

template <>
struct handle_traits<dnnl_stream_t> {
    static dnnl_status_t destructor(dnnl_stream_t p) {
        return dnnl_stream_destroy(p);
    }
};

/// Owner of a C handle. Copies share the handle; the last copy of an owning
/// (non-weak) handle frees it through traits::destructor. A weak handle
/// refers to a C object owned elsewhere and never frees it. An empty handle
/// (default-constructed) holds nothing; get() on it throws dnnl::error.
template <typename T, typename traits = handle_traits<T>>
struct handle {
private:
    typedef typename std::remove_pointer<T>::type object_type;

    struct deleter {
        bool weak;
        void operator()(T p) const {
            if (!weak && p) traits::destructor(p);
        }
    };

    std::shared_ptr<object_type> data_;

protected:
    bool operator==(const T other) const { return other == data_.get(); }
    bool operator!=(const T other) const { return other != data_.get(); }

public:
    handle() = default;
    handle(const handle &) = default;
    handle &operator=(const handle &) = default;
    handle(handle &&) = default;
    handle &operator=(handle &&) = default;

    /// Takes a C handle; with weak == true it is only borrowed.
    explicit handle(T t, bool weak = false) { reset(t, weak); }

    /// Replaces the held C handle (dropping this copy's share of the old one).
    void reset(T t, bool weak = false) {
        deleter d;
        d.weak = weak;
        data_.reset(t, d);
    }

    /// The C handle. Throws dnnl::error (dnnl_invalid_arguments) when empty
    /// unless allow_empty is true.
    T get(bool allow_empty = false) const {
        T result = data_.get();
        if (!allow_empty && result == nullptr)
            throw error(dnnl_invalid_arguments, "object is not initialized");
        return result;
    }

    explicit operator T() const { return get(true); }

    /// True when a C handle is held.
    explicit operator bool() const { return get(true) != nullptr; }

    bool operator==(const handle &other) const {
        return other.data_.get() == data_.get();
    }
    bool operator!=(const handle &other) const { return !(*this == other); }
};

/* ------------------------------------------------------------------------ */
/* Engine and stream                                                        */
/* ------------------------------------------------------------------------ */

/// A computation device. Partita provides the CPU engine (index 0).
struct engine : public handle<dnnl_engine_t> {
    friend struct stream;

    enum class kind {
        any = dnnl_any_engine,
        cpu = dnnl_cpu,
        gpu = dnnl_gpu,
    };

    /// An empty engine.
    engine() = default;

    /// Wraps a C engine; with weak == true it is only borrowed.
    explicit engine(dnnl_engine_t c_engine, bool weak = false)
        : handle<dnnl_engine_t>(c_engine, weak) {}

    /// Creates the engine for device `index` of kind `akind`.
    engine(kind akind, size_t index) {
        dnnl_engine_t c_engine = nullptr;
        error::wrap_c_api(
                dnnl_engine_create(&c_engine, convert_to_c(akind), index),
                "could not create an engine");
        reset(c_engine);
    }

    /// Number of devices of kind `akind`.
    static size_t get_count(kind akind) {
        return dnnl_engine_get_count(convert_to_c(akind));
    }

    kind get_kind() const {
        dnnl_engine_kind_t c_kind = dnnl_any_engine;
        error::wrap_c_api(dnnl_engine_get_kind(get(), &c_kind),
                "could not get the kind of an engine");
        return static_cast<kind>(c_kind);
    }

    static dnnl_engine_kind_t convert_to_c(kind akind) {
        return static_cast<dnnl_engine_kind_t>(akind);
    }
};

/// Converts an engine kind to its C value.
inline dnnl_engine_kind_t convert_to_c(engine::kind akind) {
    return static_cast<dnnl_engine_kind_t>(akind);
}

/// An execution stream on an engine.
struct stream : public handle<dnnl_stream_t> {
    enum class flags : unsigned {
        in_order = dnnl_stream_in_order,
        out_of_order = dnnl_stream_out_of_order,
        default_flags = dnnl_stream_default_flags,
    };

    /// An empty stream.
    stream() = default;

    /// Wraps a C stream; with weak == true it is only borrowed.
    explicit stream(dnnl_stream_t c_stream, bool weak = false)
        : handle<dnnl_stream_t>(c_stream, weak) {}

    /// Creates a stream on `aengine`.
    explicit stream(const engine &aengine, flags aflags = flags::default_flags) {
        dnnl_stream_t c_stream = nullptr;
        error::wrap_c_api(dnnl_stream_create(&c_stream, aengine.get(),
                                  static_cast<unsigned>(aflags)),
                "could not create a stream");
        reset(c_stream);
    }

    /// The stream's engine (shares nothing with the stream's ownership: the
    /// engine object stays alive as long as the stream's own engine does).
    engine get_engine() const {
        dnnl_engine_t c_engine = nullptr;
        error::wrap_c_api(dnnl_stream_get_engine(get(), &c_engine),
                "could not get the engine of a stream");
        return engine(c_engine, true);
    }

    /// Blocks until all work submitted to the stream is done.
    stream &wait() {
        error::wrap_c_api(dnnl_stream_wait(get()), "could not wait on a stream");
        return *this;
    }
};

inline stream::flags operator|(stream::flags a, stream::flags b) {
    return static_cast<stream::flags>(
            static_cast<unsigned>(a) | static_cast<unsigned>(b));
}

inline stream::flags operator&(stream::flags a, stream::flags b) {
    return static_cast<stream::flags>(
            static_cast<unsigned>(a) & static_cast<unsigned>(b));
}

/* ------------------------------------------------------------------------ */
/* Math and accumulation modes, library-wide settings                       */
/* ------------------------------------------------------------------------ */

/// Floating-point math mode (dnnl_fpmath_mode_t).
enum class fpmath_mode {
    strict = dnnl_fpmath_mode_strict,
    bf16 = dnnl_fpmath_mode_bf16,
    f16 = dnnl_fpmath_mode_f16,
    any = dnnl_fpmath_mode_any,
    tf32 = dnnl_fpmath_mode_tf32,
};

inline dnnl_fpmath_mode_t convert_to_c(fpmath_mode mode) {
    return static_cast<dnnl_fpmath_mode_t>(mode);
}

/// Accumulation mode (dnnl_accumulation_mode_t). In the graph API it is set
/// on an op as the string attribute accumulation_mode.
enum class accumulation_mode {
    strict = dnnl_accumulation_mode_strict,
    relaxed = dnnl_accumulation_mode_relaxed,
    any = dnnl_accumulation_mode_any,
    s32 = dnnl_accumulation_mode_s32,
    f32 = dnnl_accumulation_mode_f32,
    f16 = dnnl_accumulation_mode_f16,
};

inline dnnl_accumulation_mode_t convert_to_c(accumulation_mode mode) {
    return static_cast<dnnl_accumulation_mode_t>(mode);
}

/// Library version (major, minor, patch, hash, runtimes).
typedef dnnl_version_t version_t;

inline const version_t *version() {
    return dnnl_version();
}

/// Verbose printing: 0 off, 1 execution, 2 also creation and compilation.
inline status set_verbose(int level) {
    return static_cast<status>(dnnl_set_verbose(level));
}

/// Sets the process-wide default math mode for objects created afterwards.
inline void set_default_fpmath_mode(fpmath_mode mode) {
    error::wrap_c_api(dnnl_set_default_fpmath_mode(convert_to_c(mode)),
            "could not set the default fpmath mode");
}

/// The process-wide default math mode.
inline fpmath_mode get_default_fpmath_mode() {
    dnnl_fpmath_mode_t mode = dnnl_fpmath_mode_strict;
    error::wrap_c_api(dnnl_get_default_fpmath_mode(&mode),
            "could not get the default fpmath mode");
    return static_cast<fpmath_mode>(mode);
}

} // namespace dnnl

#endif /* ONEAPI_DNNL_DNNL_HPP */
