/*
 * Partita - a C11 implementation of the oneDNN v3 Graph C API.
 *
 * oneapi/dnnl/dnnl_graph.h
 *
 * Graph API functions. Unless noted otherwise every function returns a
 * dnnl_status_t and writes its output parameters only on success.
 */

#ifndef ONEAPI_DNNL_DNNL_GRAPH_H
#define ONEAPI_DNNL_DNNL_GRAPH_H

#include "oneapi/dnnl/dnnl_common.h"
#include "oneapi/dnnl/dnnl_config.h"
#include "oneapi/dnnl/dnnl_graph_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Allocator and engine                                                     */
/* ------------------------------------------------------------------------ */

/* Creates an allocator holding two host callbacks. If either callback is
 * NULL, the library's built-in host allocation is used for both. */
dnnl_status_t DNNL_API dnnl_graph_allocator_create(
        dnnl_graph_allocator_t *allocator,
        dnnl_graph_host_allocate_f host_malloc,
        dnnl_graph_host_deallocate_f host_free);

/* Destroys an allocator. Unlike other destroy functions, NULL is rejected
 * with dnnl_invalid_arguments. */
dnnl_status_t DNNL_API dnnl_graph_allocator_destroy(
        dnnl_graph_allocator_t allocator);

/* Creates an engine like dnnl_engine_create and gives it a copy of the
 * allocator's callbacks; the allocator may be destroyed afterwards. */
dnnl_status_t DNNL_API dnnl_graph_make_engine_with_allocator(
        dnnl_engine_t *engine, dnnl_engine_kind_t kind, size_t index,
        const_dnnl_graph_allocator_t alloc);

/* ------------------------------------------------------------------------ */
/* Logical tensor                                                           */
/* ------------------------------------------------------------------------ */

/* Initializes a logical tensor whose dimensions are not known yet. */
dnnl_status_t DNNL_API dnnl_graph_logical_tensor_init(
        dnnl_graph_logical_tensor_t *logical_tensor, size_t tid,
        dnnl_data_type_t dtype, int32_t ndims, dnnl_graph_layout_type_t ltype,
        dnnl_graph_tensor_property_t ptype);

/* Initializes a logical tensor with the given dimensions; for a strided
 * layout with fully known dims, dense row-major strides are derived. */
dnnl_status_t DNNL_API dnnl_graph_logical_tensor_init_with_dims(
        dnnl_graph_logical_tensor_t *logical_tensor, size_t tid,
        dnnl_data_type_t dtype, int32_t ndims, const dnnl_dims_t dims,
        dnnl_graph_layout_type_t ltype, dnnl_graph_tensor_property_t ptype);

/* Initializes a strided logical tensor with the given dimensions and
 * strides. */
dnnl_status_t DNNL_API dnnl_graph_logical_tensor_init_with_strides(
        dnnl_graph_logical_tensor_t *logical_tensor, size_t tid,
        dnnl_data_type_t dtype, int32_t ndims, const dnnl_dims_t dims,
        const dnnl_dims_t strides, dnnl_graph_tensor_property_t ptype);

/* Reports the size in bytes of a buffer holding the logical tensor
 * (SIZE_MAX for an any/undef layout). */
dnnl_status_t DNNL_API dnnl_graph_logical_tensor_get_mem_size(
        const dnnl_graph_logical_tensor_t *logical_tensor, size_t *size);

/* Writes 1 to is_equal if both logical tensors describe the same tensor,
 * 0 otherwise. */
dnnl_status_t DNNL_API dnnl_graph_logical_tensor_is_equal(
        const dnnl_graph_logical_tensor_t *lt1,
        const dnnl_graph_logical_tensor_t *lt2, uint8_t *is_equal);

/* ------------------------------------------------------------------------ */
/* Tensor                                                                   */
/* ------------------------------------------------------------------------ */

/* Creates a tensor. handle is a borrowed user buffer, DNNL_MEMORY_ALLOCATE
 * (library-owned buffer) or DNNL_MEMORY_NONE (no buffer). */
dnnl_status_t DNNL_API dnnl_graph_tensor_create(dnnl_graph_tensor_t *tensor,
        const dnnl_graph_logical_tensor_t *logical_tensor, dnnl_engine_t engine,
        void *handle);

/* Creates a host-scalar tensor without an engine; the value is copied out
 * of *handle at creation. */
dnnl_status_t DNNL_API dnnl_graph_tensor_create_scalar(
        dnnl_graph_tensor_t *tensor,
        const dnnl_graph_logical_tensor_t *logical_tensor, void *handle);

/* Destroys a tensor, freeing a library-owned buffer. NULL is accepted. */
dnnl_status_t DNNL_API dnnl_graph_tensor_destroy(dnnl_graph_tensor_t tensor);

/* Reports the tensor's current data pointer (NULL for host scalars). */
dnnl_status_t DNNL_API dnnl_graph_tensor_get_data_handle(
        const_dnnl_graph_tensor_t tensor, void **handle);

/* Replaces the tensor's data pointer with a borrowed one. */
dnnl_status_t DNNL_API dnnl_graph_tensor_set_data_handle(
        dnnl_graph_tensor_t tensor, void *handle);

/* Reports the engine the tensor was created with (no new reference). */
dnnl_status_t DNNL_API dnnl_graph_tensor_get_engine(
        const_dnnl_graph_tensor_t tensor, dnnl_engine_t *engine);

/* Copies out the tensor's logical tensor. */
dnnl_status_t DNNL_API dnnl_graph_tensor_get_logical_tensor(
        const_dnnl_graph_tensor_t tensor,
        dnnl_graph_logical_tensor_t *logical_tensor);

/* ------------------------------------------------------------------------ */
/* Op                                                                       */
/* ------------------------------------------------------------------------ */

/* Creates an op with a caller-chosen id, a kind and a name (copied; an
 * empty name is replaced by a default one). The caller owns the op. */
dnnl_status_t DNNL_API dnnl_graph_op_create(dnnl_graph_op_t *op, size_t id,
        dnnl_graph_op_kind_t kind, const char *verbose_name);

/* Destroys an op. NULL is accepted. */
dnnl_status_t DNNL_API dnnl_graph_op_destroy(dnnl_graph_op_t op);

/* Appends a copy of a logical tensor as the op's next input. */
dnnl_status_t DNNL_API dnnl_graph_op_add_input(
        dnnl_graph_op_t op, const dnnl_graph_logical_tensor_t *input);

/* Appends a copy of a logical tensor as the op's next output. */
dnnl_status_t DNNL_API dnnl_graph_op_add_output(
        dnnl_graph_op_t op, const dnnl_graph_logical_tensor_t *output);

/* Sets a float attribute (a single value for single-f32 names, otherwise a
 * vector of value_len values). */
dnnl_status_t DNNL_API dnnl_graph_op_set_attr_f32(dnnl_graph_op_t op,
        dnnl_graph_op_attr_t name, const float *value, size_t value_len);

/* Sets a boolean attribute; value_len must be 1. */
dnnl_status_t DNNL_API dnnl_graph_op_set_attr_bool(dnnl_graph_op_t op,
        dnnl_graph_op_attr_t name, const uint8_t *value, size_t value_len);

/* Sets an integer attribute (a single value for single-s64 names,
 * otherwise a vector of value_len values). */
dnnl_status_t DNNL_API dnnl_graph_op_set_attr_s64(dnnl_graph_op_t op,
        dnnl_graph_op_attr_t name, const int64_t *value, size_t value_len);

/* Sets a string attribute from a NUL-terminated string; value_len must be
 * nonzero. */
dnnl_status_t DNNL_API dnnl_graph_op_set_attr_str(dnnl_graph_op_t op,
        dnnl_graph_op_attr_t name, const char *value, size_t value_len);

/* Reports the op's id. */
dnnl_status_t DNNL_API dnnl_graph_op_get_id(
        const_dnnl_graph_op_t op, size_t *id);

/* Reports the op's kind. */
dnnl_status_t DNNL_API dnnl_graph_op_get_kind(
        const_dnnl_graph_op_t op, dnnl_graph_op_kind_t *kind);

/* ------------------------------------------------------------------------ */
/* Partition                                                                */
/* ------------------------------------------------------------------------ */

/* Creates a partition holding a single op for the given engine kind. */
dnnl_status_t DNNL_API dnnl_graph_partition_create_with_op(
        dnnl_graph_partition_t *partition, const_dnnl_graph_op_t op,
        dnnl_engine_kind_t ekind);

/* Destroys a partition. NULL is accepted. */
dnnl_status_t DNNL_API dnnl_graph_partition_destroy(
        dnnl_graph_partition_t partition);

/* Reports the number of ops in a partition. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_op_num(
        const_dnnl_graph_partition_t partition, size_t *num);

/* Writes the ids of the partition's ops into ids[0..num); num must equal
 * the op count. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_ops(
        dnnl_graph_partition_t partition, size_t num, size_t *ids);

/* Reports the partition's library-assigned id. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_id(
        const_dnnl_graph_partition_t partition, size_t *id);

/* Compiles a partition for an engine into a compiled partition previously
 * created from it. Inputs and outputs are matched to ports by id. */
dnnl_status_t DNNL_API dnnl_graph_partition_compile(
        dnnl_graph_partition_t partition,
        dnnl_graph_compiled_partition_t compiled_partition, size_t in_num,
        const dnnl_graph_logical_tensor_t **inputs, size_t out_num,
        const dnnl_graph_logical_tensor_t **outputs, dnnl_engine_t engine);

/* Reports the number of input ports of a partition. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_input_ports_num(
        const_dnnl_graph_partition_t partition, size_t *num);

/* Copies the input port logical tensors into inputs[0..num); num must equal
 * the port count. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_input_ports(
        const_dnnl_graph_partition_t partition, size_t num,
        dnnl_graph_logical_tensor_t *inputs);

/* Reports the number of output ports of a partition. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_output_ports_num(
        const_dnnl_graph_partition_t partition, size_t *num);

/* Copies the output port logical tensors into outputs[0..num); num must
 * equal the port count. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_output_ports(
        const_dnnl_graph_partition_t partition, size_t num,
        dnnl_graph_logical_tensor_t *outputs);

/* Writes 1 if the library can compile and run the partition, else 0. */
dnnl_status_t DNNL_API dnnl_graph_partition_is_supported(
        const_dnnl_graph_partition_t partition, uint8_t *is_supported);

/* Reports the engine kind of a partition. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_engine_kind(
        const_dnnl_graph_partition_t partition, dnnl_engine_kind_t *kind);

/* ------------------------------------------------------------------------ */
/* Compiled partition                                                       */
/* ------------------------------------------------------------------------ */

/* Creates an empty compiled partition bound to a partition; it becomes
 * usable after dnnl_graph_partition_compile. */
dnnl_status_t DNNL_API dnnl_graph_compiled_partition_create(
        dnnl_graph_compiled_partition_t *compiled_partition,
        dnnl_graph_partition_t partition);

/* Executes a compiled partition on a stream (same as execute_v2 with no
 * user scratchpad). */
dnnl_status_t DNNL_API dnnl_graph_compiled_partition_execute(
        const_dnnl_graph_compiled_partition_t compiled_partition,
        dnnl_stream_t stream, size_t num_inputs,
        const_dnnl_graph_tensor_t *inputs, size_t num_outputs,
        const_dnnl_graph_tensor_t *outputs);

/* Executes a compiled partition on a stream with an optional user-provided
 * scratchpad tensor (NULL: the library allocates temporary memory). */
dnnl_status_t DNNL_API dnnl_graph_compiled_partition_execute_v2(
        const_dnnl_graph_compiled_partition_t compiled_partition,
        dnnl_stream_t stream, size_t num_inputs,
        const_dnnl_graph_tensor_t *inputs, size_t num_outputs,
        const_dnnl_graph_tensor_t *outputs,
        const_dnnl_graph_tensor_t scratchpad);

/* Destroys a compiled partition. NULL is accepted. */
dnnl_status_t DNNL_API dnnl_graph_compiled_partition_destroy(
        dnnl_graph_compiled_partition_t compiled_partition);

/* Copies out the compiled input or output logical tensor with id tid,
 * with concrete dims and layout. */
dnnl_status_t DNNL_API dnnl_graph_compiled_partition_query_logical_tensor(
        const_dnnl_graph_compiled_partition_t compiled_partition, size_t tid,
        dnnl_graph_logical_tensor_t *lt);

/* Reports input/output pairs that may share a buffer. The array is owned
 * by the compiled partition. */
dnnl_status_t DNNL_API dnnl_graph_compiled_partition_get_inplace_ports(
        const_dnnl_graph_compiled_partition_t compiled_partition,
        size_t *num_inplace_pairs,
        const dnnl_graph_inplace_pair_t **inplace_pairs);

/* Describes the scratchpad buffer needed for execution as a 1-D u8
 * logical tensor. */
dnnl_status_t DNNL_API dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(
        const_dnnl_graph_compiled_partition_t compiled_partition,
        dnnl_graph_logical_tensor_t *lt);

/* ------------------------------------------------------------------------ */
/* Graph                                                                    */
/* ------------------------------------------------------------------------ */

/* Creates an empty graph for an engine kind using the process default
 * math mode. */
dnnl_status_t DNNL_API dnnl_graph_graph_create(
        dnnl_graph_graph_t *graph, dnnl_engine_kind_t engine_kind);

/* Creates an empty graph for an engine kind with an explicit math mode. */
dnnl_status_t DNNL_API dnnl_graph_graph_create_with_fpmath_mode(
        dnnl_graph_graph_t *graph, dnnl_engine_kind_t engine_kind,
        dnnl_fpmath_mode_t mode);

/* Destroys a graph. NULL is accepted. */
dnnl_status_t DNNL_API dnnl_graph_graph_destroy(dnnl_graph_graph_t graph);

/* Sets the graph's math mode; apply_to_int nonzero also relaxes integer
 * ops. Not allowed after finalization. */
dnnl_status_t DNNL_API dnnl_graph_graph_set_fpmath_mode(
        dnnl_graph_graph_t graph, dnnl_fpmath_mode_t mode, int apply_to_int);

/* Reports the graph's math mode; either output may be NULL. */
dnnl_status_t DNNL_API dnnl_graph_graph_get_fpmath_mode(
        dnnl_graph_graph_t graph, dnnl_fpmath_mode_t *mode, int *apply_to_int);

/* Adds a copy of an op to a graph after validating it against its kind's
 * schema. */
dnnl_status_t DNNL_API dnnl_graph_add_op(
        dnnl_graph_graph_t graph, dnnl_graph_op_t op);

/* Ends graph construction and connects ops through logical tensor ids. */
dnnl_status_t DNNL_API dnnl_graph_graph_finalize(dnnl_graph_graph_t graph);

/* Writes 1 if the graph is finalized, else 0. */
dnnl_status_t DNNL_API dnnl_graph_graph_is_finalized(
        dnnl_graph_graph_t graph, uint8_t *finalized);

/* Partitions a finalized graph with the given policy. */
dnnl_status_t DNNL_API dnnl_graph_graph_filter(
        dnnl_graph_graph_t graph, dnnl_graph_partition_policy_t policy);

/* Reports the number of partitions from the last filter call. */
dnnl_status_t DNNL_API dnnl_graph_graph_get_partition_num(
        const_dnnl_graph_graph_t graph, size_t *num);

/* Writes num new partition handles, in topological order, into the
 * caller-provided array; the caller destroys each one. */
dnnl_status_t DNNL_API dnnl_graph_graph_get_partitions(dnnl_graph_graph_t graph,
        size_t num, dnnl_graph_partition_t *partitions);

/* ------------------------------------------------------------------------ */
/* Compiled partition cache                                                 */
/* ------------------------------------------------------------------------ */

/* Reports the capacity (in entries) of the compiled partition cache. */
dnnl_status_t DNNL_API dnnl_graph_get_compiled_partition_cache_capacity(
        int *capacity);

/* Sets the capacity (in entries) of the compiled partition cache; 0
 * empties and disables it. */
dnnl_status_t DNNL_API dnnl_graph_set_compiled_partition_cache_capacity(
        int capacity);

/* ------------------------------------------------------------------------ */
/* Constant tensor cache                                                    */
/* ------------------------------------------------------------------------ */

/* Deprecated: 0 disables the constant tensor cache, positive makes it
 * unlimited. */
dnnl_status_t DNNL_API dnnl_graph_set_constant_tensor_cache(int flag);

/* Deprecated: writes 1 if the constant tensor cache is enabled, else 0. */
dnnl_status_t DNNL_API dnnl_graph_get_constant_tensor_cache(int *flag);

/* Sets the constant tensor cache capacity, in megabytes, for an engine
 * kind. */
dnnl_status_t DNNL_API dnnl_graph_set_constant_tensor_cache_capacity(
        dnnl_engine_kind_t eng_kind, size_t size);

/* Reports the constant tensor cache capacity, in megabytes, for an engine
 * kind. */
dnnl_status_t DNNL_API dnnl_graph_get_constant_tensor_cache_capacity(
        dnnl_engine_kind_t eng_kind, size_t *size);

/* ------------------------------------------------------------------------ */
/* Dump mode                                                                */
/* ------------------------------------------------------------------------ */

/* Replaces the active graph dump mask (a combination of
 * dnnl_graph_dump_mode_t values). */
dnnl_status_t DNNL_API dnnl_graph_set_dump_mode(dnnl_graph_dump_mode_t modes);

/* ======================================================================== */
/* Partita additions (not in oneDNN)                                        */
/*                                                                          */
/* Not part of oneDNN's headers or ABI: programs built only against        */
/* oneDNN's headers never reference these.                                  */
/* ======================================================================== */

/* Executes like dnnl_graph_compiled_partition_execute; options->key names
 * the set of constant weights bound in this call and is part of the
 * constant weight cache lookup. */
dnnl_status_t DNNL_API dnnl_graph_compiled_partition_execute_with_options(
        const_dnnl_graph_compiled_partition_t compiled_partition,
        dnnl_stream_t stream, size_t num_inputs,
        const_dnnl_graph_tensor_t *inputs, size_t num_outputs,
        const_dnnl_graph_tensor_t *outputs,
        const dnnl_graph_execute_options_t *options);

/* Creates a tensor like dnnl_graph_tensor_create and records a
 * caller-chosen tensor id. */
dnnl_status_t DNNL_API dnnl_graph_tensor_create_with_id(
        dnnl_graph_tensor_t *tensor,
        const dnnl_graph_logical_tensor_t *logical_tensor, dnnl_engine_t engine,
        void *handle, size_t id);

/* Reports the tensor id (the logical tensor's id if none was given
 * explicitly). */
dnnl_status_t DNNL_API dnnl_graph_tensor_get_id(
        const_dnnl_graph_tensor_t tensor, size_t *id);

/* Sets a partition-level math mode that overrides the inherited graph
 * mode for subsequent compilations. */
dnnl_status_t DNNL_API dnnl_graph_partition_set_fpmath_mode(
        dnnl_graph_partition_t partition, dnnl_fpmath_mode_t mode,
        int apply_to_int);

/* Reports the math mode in effect for a partition. */
dnnl_status_t DNNL_API dnnl_graph_partition_get_fpmath_mode(
        const_dnnl_graph_partition_t partition, dnnl_fpmath_mode_t *mode,
        int *apply_to_int);

/* Infers output dims from input logical tensors (matched to ports by id)
 * without compiling. */
dnnl_status_t DNNL_API dnnl_graph_partition_infer_shape(
        const_dnnl_graph_partition_t partition, size_t num_inputs,
        const dnnl_graph_logical_tensor_t **inputs, size_t num_outputs,
        dnnl_graph_logical_tensor_t **outputs);

#ifdef __cplusplus
}
#endif

#endif /* ONEAPI_DNNL_DNNL_GRAPH_H */
