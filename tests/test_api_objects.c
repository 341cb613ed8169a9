/* Public-API tests of the object functions: engines, streams, settings and
 * version, allocators, logical tensors, tensors (with the tensor-id
 * additions), ops and the process-wide caches and dump mode (docs/api.md).
 * Every success path and every error status the API documents is exercised. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oneapi/dnnl/dnnl_graph.h"
#include "test_util.h"

#define OK(expr) CHECK_EQ_INT((expr), dnnl_success)
#define FAILS(expr, status) CHECK_EQ_INT((expr), (status))
#define UNK DNNL_GRAPH_UNKNOWN_DIM

/* ---- a counting host allocator ---------------------------------------- */

static int n_alloc, n_free;
static size_t last_size, last_align;
static void *last_alloc_ptr, *last_freed_ptr;

static void *count_alloc(size_t size, size_t alignment) {
    size_t a = alignment >= sizeof(void *) ? alignment : 64;
    size_t rounded = (size + a - 1) / a * a;
    void *p = aligned_alloc(a, rounded ? rounded : a);
    ++n_alloc;
    last_size = size;
    last_align = alignment;
    last_alloc_ptr = p;
    return p;
}

static void count_free(void *p) {
    ++n_free;
    last_freed_ptr = p;
    free(p);
}

static void reset_counts(void) {
    n_alloc = n_free = 0;
    last_size = last_align = 0;
    last_alloc_ptr = last_freed_ptr = NULL;
}

/* ---- common API -------------------------------------------------------- */

static void test_engine(void) {
    CHECK_EQ_INT(dnnl_engine_get_count(dnnl_cpu), 1);
    CHECK_EQ_INT(dnnl_engine_get_count(dnnl_gpu), 0);
    CHECK_EQ_INT(dnnl_engine_get_count(dnnl_any_engine), 0);
    CHECK_EQ_INT(dnnl_engine_get_count((dnnl_engine_kind_t)42), 0);

    dnnl_engine_t eng = NULL;
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    CHECK(eng != NULL);
    dnnl_engine_kind_t kind = dnnl_any_engine;
    OK(dnnl_engine_get_kind(eng, &kind));
    CHECK_EQ_INT(kind, dnnl_cpu);
    FAILS(dnnl_engine_get_kind(NULL, &kind), dnnl_invalid_arguments);
    FAILS(dnnl_engine_get_kind(eng, NULL), dnnl_invalid_arguments);

    dnnl_engine_t bad = NULL;
    FAILS(dnnl_engine_create(NULL, dnnl_cpu, 0), dnnl_invalid_arguments);
    FAILS(dnnl_engine_create(&bad, dnnl_gpu, 0), dnnl_invalid_arguments);
    FAILS(dnnl_engine_create(&bad, dnnl_any_engine, 0), dnnl_invalid_arguments);
    FAILS(dnnl_engine_create(&bad, dnnl_cpu, 1), dnnl_invalid_arguments); /* index == count */
    FAILS(dnnl_engine_create(&bad, dnnl_cpu, 7), dnnl_invalid_arguments);
    CHECK(bad == NULL); /* outputs are written only on success */

    OK(dnnl_engine_destroy(eng));
    OK(dnnl_engine_destroy(NULL));
}

static void test_stream(void) {
    dnnl_engine_t eng = NULL;
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));

    dnnl_stream_t s = NULL;
    OK(dnnl_stream_create(&s, eng, dnnl_stream_default_flags));
    CHECK(s != NULL);
    dnnl_engine_t got = NULL;
    OK(dnnl_stream_get_engine(s, &got));
    CHECK(got == eng);
    FAILS(dnnl_stream_get_engine(NULL, &got), dnnl_invalid_arguments);
    FAILS(dnnl_stream_get_engine(s, NULL), dnnl_invalid_arguments);
    OK(dnnl_stream_wait(s));
    FAILS(dnnl_stream_wait(NULL), dnnl_invalid_arguments);
    OK(dnnl_stream_destroy(s));

    dnnl_stream_t s2 = NULL;
    OK(dnnl_stream_create(&s2, eng, dnnl_stream_in_order));
    OK(dnnl_stream_destroy(s2));
    s2 = NULL;
    OK(dnnl_stream_create(&s2, eng, dnnl_stream_out_of_order));
    OK(dnnl_stream_destroy(s2));

    dnnl_stream_t bad = NULL;
    FAILS(dnnl_stream_create(NULL, eng, dnnl_stream_default_flags), dnnl_invalid_arguments);
    FAILS(dnnl_stream_create(&bad, NULL, dnnl_stream_default_flags), dnnl_invalid_arguments);
    /* dnnl_stream_profiling (0x4) exists only with DNNL_EXPERIMENTAL_PROFILING. */
    FAILS(dnnl_stream_create(&bad, eng, 0x4u), dnnl_unimplemented);
    FAILS(dnnl_stream_create(&bad, eng, dnnl_stream_in_order | 0x4u), dnnl_unimplemented);
    CHECK(bad == NULL);
    OK(dnnl_stream_destroy(NULL));

    /* The stream keeps its engine usable after the caller drops its handle. */
    dnnl_stream_t s3 = NULL;
    OK(dnnl_stream_create(&s3, eng, dnnl_stream_default_flags));
    OK(dnnl_engine_destroy(eng));
    got = NULL;
    OK(dnnl_stream_get_engine(s3, &got));
    dnnl_engine_kind_t kind = dnnl_any_engine;
    OK(dnnl_engine_get_kind(got, &kind));
    CHECK_EQ_INT(kind, dnnl_cpu);
    OK(dnnl_stream_destroy(s3));
}

static void test_default_fpmath(void) {
    dnnl_fpmath_mode_t m = dnnl_fpmath_mode_any;
    FAILS(dnnl_get_default_fpmath_mode(NULL), dnnl_invalid_arguments);
    OK(dnnl_get_default_fpmath_mode(&m));
    if (!getenv("ONEDNN_DEFAULT_FPMATH_MODE") && !getenv("DNNL_DEFAULT_FPMATH_MODE"))
        CHECK_EQ_INT(m, dnnl_fpmath_mode_strict);
    const dnnl_fpmath_mode_t initial = m;

    const dnnl_fpmath_mode_t all[] = {dnnl_fpmath_mode_bf16, dnnl_fpmath_mode_f16,
                                      dnnl_fpmath_mode_any, dnnl_fpmath_mode_tf32,
                                      dnnl_fpmath_mode_strict};
    for (int i = 0; i < 5; ++i) {
        OK(dnnl_set_default_fpmath_mode(all[i]));
        OK(dnnl_get_default_fpmath_mode(&m));
        CHECK_EQ_INT(m, all[i]);
    }
    FAILS(dnnl_set_default_fpmath_mode((dnnl_fpmath_mode_t)5), dnnl_invalid_arguments);
    FAILS(dnnl_set_default_fpmath_mode((dnnl_fpmath_mode_t)-1), dnnl_invalid_arguments);
    OK(dnnl_get_default_fpmath_mode(&m));
    CHECK_EQ_INT(m, dnnl_fpmath_mode_strict); /* a rejected value changes nothing */
    OK(dnnl_set_default_fpmath_mode(initial));
}

static void test_verbose_and_version(void) {
    OK(dnnl_set_verbose(1));
    OK(dnnl_set_verbose(2));
    OK(dnnl_set_verbose(0));
    FAILS(dnnl_set_verbose(3), dnnl_invalid_arguments);
    FAILS(dnnl_set_verbose(-1), dnnl_invalid_arguments);

    const dnnl_version_t *v = dnnl_version();
    CHECK(v != NULL);
    if (v) {
        CHECK_EQ_INT(v->major, 3);
        CHECK_EQ_INT(v->minor, 14);
        CHECK_EQ_INT(v->patch, 0);
        CHECK_EQ_INT(v->major, DNNL_VERSION_MAJOR);
        CHECK_EQ_INT(v->minor, DNNL_VERSION_MINOR);
        CHECK_EQ_INT(v->patch, DNNL_VERSION_PATCH);
        CHECK(v->hash != NULL && v->hash[0] != '\0');
        CHECK_EQ_INT(v->cpu_runtime, DNNL_CPU_RUNTIME);
        CHECK_EQ_INT(v->gpu_runtime, DNNL_GPU_RUNTIME);
        CHECK_EQ_INT(v->gpu_runtime, DNNL_RUNTIME_NONE);
        CHECK(dnnl_version() == v); /* one static struct */
    }
}

/* ---- allocator ------------------------------------------------------- */

static void test_allocator(void) {
    dnnl_graph_allocator_t a = NULL;
    FAILS(dnnl_graph_allocator_create(NULL, count_alloc, count_free), dnnl_invalid_arguments);
    OK(dnnl_graph_allocator_create(&a, count_alloc, count_free));
    CHECK(a != NULL);
    FAILS(dnnl_graph_allocator_destroy(NULL), dnnl_invalid_arguments);

    dnnl_engine_t bad = NULL;
    FAILS(dnnl_graph_make_engine_with_allocator(NULL, dnnl_cpu, 0, a), dnnl_invalid_arguments);
    FAILS(dnnl_graph_make_engine_with_allocator(&bad, dnnl_gpu, 0, a), dnnl_invalid_arguments);
    FAILS(dnnl_graph_make_engine_with_allocator(&bad, dnnl_cpu, 1, a), dnnl_invalid_arguments);
    FAILS(dnnl_graph_make_engine_with_allocator(&bad, dnnl_cpu, 0, NULL), dnnl_invalid_arguments);
    CHECK(bad == NULL);

    dnnl_engine_t eng = NULL;
    OK(dnnl_graph_make_engine_with_allocator(&eng, dnnl_cpu, 0, a));
    /* The engine holds a copy of the callbacks: the allocator may go now. */
    OK(dnnl_graph_allocator_destroy(a));
    dnnl_engine_kind_t kind = dnnl_any_engine;
    OK(dnnl_engine_get_kind(eng, &kind));
    CHECK_EQ_INT(kind, dnnl_cpu);

    /* A library-allocated tensor goes through the user's callbacks. */
    const dnnl_dims_t dims = {5, 7};
    dnnl_graph_logical_tensor_t lt;
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 1, dnnl_f32, 2, dims, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    reset_counts();
    dnnl_graph_tensor_t t = NULL;
    OK(dnnl_graph_tensor_create(&t, &lt, eng, DNNL_MEMORY_ALLOCATE));
    CHECK_EQ_INT(n_alloc, 1);
    CHECK(last_size >= 5 * 7 * sizeof(float));
    CHECK_EQ_INT(last_align, 64);
    void *h = NULL;
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h != NULL && h == last_alloc_ptr);
    CHECK_EQ_INT(n_free, 0);
    OK(dnnl_graph_tensor_destroy(t));
    CHECK_EQ_INT(n_free, 1);
    CHECK(last_freed_ptr == h);

    /* Replacing a library-owned buffer frees it through the engine. */
    reset_counts();
    float user[35];
    OK(dnnl_graph_tensor_create(&t, &lt, eng, DNNL_MEMORY_ALLOCATE));
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    OK(dnnl_graph_tensor_set_data_handle(t, user));
    CHECK_EQ_INT(n_free, 1);
    CHECK(last_freed_ptr == h);
    OK(dnnl_graph_tensor_destroy(t)); /* the borrowed buffer is not freed */
    CHECK_EQ_INT(n_free, 1);

    /* A user buffer and no buffer never touch the allocator. */
    reset_counts();
    OK(dnnl_graph_tensor_create(&t, &lt, eng, user));
    OK(dnnl_graph_tensor_destroy(t));
    OK(dnnl_graph_tensor_create(&t, &lt, eng, DNNL_MEMORY_NONE));
    OK(dnnl_graph_tensor_destroy(t));
    CHECK_EQ_INT(n_alloc, 0);
    CHECK_EQ_INT(n_free, 0);
    OK(dnnl_engine_destroy(eng));

    /* Only one callback given, or none: the built-in allocator serves both. */
    for (int i = 0; i < 2; ++i) {
        dnnl_graph_allocator_t half = NULL;
        OK(dnnl_graph_allocator_create(&half, i == 0 ? count_alloc : NULL, NULL));
        OK(dnnl_graph_make_engine_with_allocator(&eng, dnnl_cpu, 0, half));
        OK(dnnl_graph_allocator_destroy(half));
        reset_counts();
        OK(dnnl_graph_tensor_create(&t, &lt, eng, DNNL_MEMORY_ALLOCATE));
        OK(dnnl_graph_tensor_get_data_handle(t, &h));
        CHECK(h != NULL && ((uintptr_t)h % 64) == 0);
        OK(dnnl_graph_tensor_destroy(t));
        OK(dnnl_engine_destroy(eng));
        CHECK_EQ_INT(n_alloc, 0);
        CHECK_EQ_INT(n_free, 0);
    }
}

/* ---- logical tensor -------------------------------------------------- */

static bool all_zero_bytes(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; ++i)
        if (b[i]) return false;
    return true;
}

/* The scalar fields of a logical tensor. */
static void check_lt_header(const dnnl_graph_logical_tensor_t *lt, size_t id, int ndims, dnnl_data_type_t dt,
                            dnnl_graph_layout_type_t layout, dnnl_graph_tensor_property_t prop) {
    CHECK_EQ_INT(lt->id, id);
    CHECK_EQ_INT(lt->ndims, ndims);
    CHECK_EQ_INT(lt->data_type, dt);
    CHECK_EQ_INT(lt->layout_type, layout);
    CHECK_EQ_INT(lt->property, prop);
}

/* Rank 0: no dims, no strides. */
static void check_rank0(const dnnl_graph_logical_tensor_t *lt) {
    CHECK_EQ_INT(lt->ndims, 0);
    CHECK_EQ_INT(lt->dims[0], 0);
    CHECK_EQ_INT(lt->layout.strides[0], 0);
}

static void test_lt_init(void) {
    dnnl_graph_logical_tensor_t lt;
    memset(&lt, 0x5a, sizeof lt);
    OK(dnnl_graph_logical_tensor_init(&lt, 11, dnnl_bf16, 3, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_constant));
    check_lt_header(&lt, 11, 3, dnnl_bf16, dnnl_graph_layout_type_strided,
                    dnnl_graph_tensor_property_constant);
    int unknown = 0;
    for (int d = 0; d < DNNL_MAX_NDIMS; ++d)
        unknown += lt.dims[d] == UNK && lt.layout.strides[d] == UNK;
    CHECK_EQ_INT(unknown, DNNL_MAX_NDIMS);

    /* ndims 0: zeroed dims/strides (the struct starts zeroed). */
    memset(&lt, 0x5a, sizeof lt);
    OK(dnnl_graph_logical_tensor_init(&lt, 12, dnnl_f32, 0, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_undef));
    check_rank0(&lt);
    CHECK(all_zero_bytes(lt.dims, sizeof lt.dims));
    CHECK(all_zero_bytes(&lt.layout, sizeof lt.layout));

    /* Unknown rank is accepted by init. */
    OK(dnnl_graph_logical_tensor_init(&lt, 13, dnnl_f32, DNNL_GRAPH_UNKNOWN_NDIMS,
                                      dnnl_graph_layout_type_any, dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(lt.ndims, -1);
    CHECK_EQ_INT(lt.layout_type, dnnl_graph_layout_type_any);
    CHECK_EQ_INT(lt.dims[0], UNK);
    OK(dnnl_graph_logical_tensor_init(&lt, 14, dnnl_f32, 12, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(lt.ndims, 12);

    /* Errors. */
    dnnl_graph_logical_tensor_t keep;
    memset(&keep, 0x33, sizeof keep);
    lt = keep;
    FAILS(dnnl_graph_logical_tensor_init(NULL, 1, dnnl_f32, 2, dnnl_graph_layout_type_strided,
                                         dnnl_graph_tensor_property_undef),
          dnnl_invalid_arguments);
    static const struct {
        dnnl_data_type_t dt;
        int nd;
        dnnl_graph_tensor_property_t prop;
    } bad[] = {{dnnl_f32, 13, dnnl_graph_tensor_property_undef},
               {dnnl_f32, 1, dnnl_graph_tensor_property_host_scalar},
               {dnnl_f32, -1, dnnl_graph_tensor_property_host_scalar},
               {dnnl_f16, 0, dnnl_graph_tensor_property_host_scalar},
               {dnnl_u8, 0, dnnl_graph_tensor_property_host_scalar}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        FAILS(dnnl_graph_logical_tensor_init(&lt, 1, bad[i].dt, bad[i].nd, dnnl_graph_layout_type_strided, bad[i].prop),
              dnnl_invalid_arguments);
    CHECK(memcmp(&lt, &keep, sizeof lt) == 0); /* untouched on failure */

    /* Host scalars: ndims 0 with s32, f32 or s64. */
    const dnnl_data_type_t scalar_types[] = {dnnl_s32, dnnl_f32, dnnl_s64};
    for (int i = 0; i < 3; ++i) {
        OK(dnnl_graph_logical_tensor_init(&lt, 20 + i, scalar_types[i], 0, dnnl_graph_layout_type_strided,
                                          dnnl_graph_tensor_property_host_scalar));
        CHECK_EQ_INT(lt.property, dnnl_graph_tensor_property_host_scalar);
    }
}

/* Arguments init_with_dims (strides == false) or init_with_strides rejects
 * with dnnl_invalid_arguments. */
static void check_bad_inits(bool strides) {
    static const struct {
        char only; /* 'd': init_with_dims only, 's': init_with_strides only */
        bool no_lt, no_dims, no_strides;
        dnnl_data_type_t dt;
        int nd;
        dnnl_graph_tensor_property_t prop;
    } bad[] = {
        {'d', .no_lt = true, .dt = dnnl_f32, .nd = 3, .prop = dnnl_graph_tensor_property_undef},
        {'s', .no_lt = true, .dt = dnnl_f32, .nd = 2, .prop = dnnl_graph_tensor_property_undef},
        {'s', .no_dims = true, .dt = dnnl_f32, .nd = 2, .prop = dnnl_graph_tensor_property_undef},
        {'s', .no_strides = true, .dt = dnnl_f32, .nd = 2, .prop = dnnl_graph_tensor_property_undef},
        {0, .dt = dnnl_f32, .nd = -1, .prop = dnnl_graph_tensor_property_undef},
        {0, .dt = dnnl_f32, .nd = 13, .prop = dnnl_graph_tensor_property_undef},
        {'d', .no_dims = true, .dt = dnnl_f32, .nd = 2, .prop = dnnl_graph_tensor_property_undef},
        {'d', .dt = dnnl_f32, .nd = 1, .prop = dnnl_graph_tensor_property_host_scalar},
        {'d', .dt = dnnl_bf16, .nd = 0, .prop = dnnl_graph_tensor_property_host_scalar},
        {'s', .dt = dnnl_f32, .nd = 2, .prop = dnnl_graph_tensor_property_host_scalar},
        {'s', .dt = dnnl_u8, .nd = 0, .prop = dnnl_graph_tensor_property_host_scalar},
    };
    const dnnl_dims_t d413 = {4, 1, 3}, dims = {2, 3}, st = {1, 2};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        if (bad[i].only && bad[i].only != (strides ? 's' : 'd')) continue;
        dnnl_graph_logical_tensor_t lt, *plt = bad[i].no_lt ? NULL : &lt;
        if (strides) {
            const dnnl_dim_t *pd = bad[i].no_dims ? NULL : dims, *ps = bad[i].no_strides ? NULL : st;
            FAILS(dnnl_graph_logical_tensor_init_with_strides(plt, 1, bad[i].dt, bad[i].nd, pd, ps, bad[i].prop),
                  dnnl_invalid_arguments);
        } else {
            const dnnl_dim_t *pd = bad[i].no_dims ? NULL : d413;
            FAILS(dnnl_graph_logical_tensor_init_with_dims(plt, 1, bad[i].dt, bad[i].nd, pd,
                                                           dnnl_graph_layout_type_strided, bad[i].prop),
                  dnnl_invalid_arguments);
        }
    }
}

static void test_lt_init_with_dims(void) {
    dnnl_graph_logical_tensor_t lt;
    const dnnl_dims_t d413 = {4, 1, 3};
    memset(&lt, 0x5a, sizeof lt);
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 7, dnnl_f32, 3, d413, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_variable));
    CHECK_EQ_INT(lt.id, 7);
    CHECK_EQ_INT(lt.ndims, 3);
    CHECK_EQ_INT(lt.dims[0], 4);
    CHECK_EQ_INT(lt.dims[1], 1);
    CHECK_EQ_INT(lt.dims[2], 3);
    CHECK_EQ_INT(lt.layout.strides[0], 3);
    CHECK_EQ_INT(lt.layout.strides[1], 3);
    CHECK_EQ_INT(lt.layout.strides[2], 1);
    CHECK_EQ_INT(lt.property, dnnl_graph_tensor_property_variable);
    CHECK_EQ_INT(lt.layout_type, dnnl_graph_layout_type_strided);
    CHECK(all_zero_bytes(&lt.dims[3], 9 * sizeof(dnnl_dim_t)));
    CHECK(all_zero_bytes(&lt.layout.strides[3], 9 * sizeof(dnnl_dim_t)));

    /* A zero dim counts as 1 for the strides outside it. */
    const dnnl_dims_t d203 = {2, 0, 3};
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 7, dnnl_f32, 3, d203, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(lt.layout.strides[0], 3);
    CHECK_EQ_INT(lt.layout.strides[1], 3);
    CHECK_EQ_INT(lt.layout.strides[2], 1);

    const dnnl_dims_t d2345 = {2, 3, 4, 5};
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 7, dnnl_f32, 4, d2345, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(lt.layout.strides[0], 60);
    CHECK_EQ_INT(lt.layout.strides[1], 20);
    CHECK_EQ_INT(lt.layout.strides[2], 5);
    CHECK_EQ_INT(lt.layout.strides[3], 1);

    /* An unknown dim: no derivation, all strides unknown. */
    const dnnl_dims_t dunk = {4, UNK, 3};
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 8, dnnl_f32, 3, dunk, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(lt.dims[1], UNK);
    int unknown = 0;
    for (int d = 0; d < DNNL_MAX_NDIMS; ++d) unknown += lt.layout.strides[d] == UNK;
    CHECK_EQ_INT(unknown, DNNL_MAX_NDIMS);

    /* A non-strided layout: no derivation either. */
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 9, dnnl_f32, 3, d413, dnnl_graph_layout_type_any,
                                                dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(lt.layout_type, dnnl_graph_layout_type_any);
    CHECK_EQ_INT(lt.dims[0], 4);
    unknown = 0;
    for (int d = 0; d < DNNL_MAX_NDIMS; ++d) unknown += lt.layout.strides[d] == UNK;
    CHECK_EQ_INT(unknown, DNNL_MAX_NDIMS);

    /* ndims 0 behaves as init (dims may be NULL). */
    memset(&lt, 0x5a, sizeof lt);
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 10, dnnl_f32, 0, NULL, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    check_rank0(&lt);
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 10, dnnl_s64, 0, d413, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_host_scalar));
    CHECK_EQ_INT(lt.property, dnnl_graph_tensor_property_host_scalar);

    /* Errors. */
    check_bad_inits(false);
}

static void test_lt_init_with_strides(void) {
    dnnl_graph_logical_tensor_t lt;
    const dnnl_dims_t dims = {2, 3};
    const dnnl_dims_t strides = {1, 2}; /* column-major */
    memset(&lt, 0x5a, sizeof lt);
    OK(dnnl_graph_logical_tensor_init_with_strides(&lt, 5, dnnl_s8, 2, dims, strides,
                                                   dnnl_graph_tensor_property_constant));
    check_lt_header(&lt, 5, 2, dnnl_s8, dnnl_graph_layout_type_strided,
                    dnnl_graph_tensor_property_constant);
    CHECK_EQ_INT(lt.dims[0], 2);
    CHECK_EQ_INT(lt.dims[1], 3);
    CHECK_EQ_INT(lt.layout.strides[0], 1);
    CHECK_EQ_INT(lt.layout.strides[1], 2);

    /* Unknown values are copied as they are. */
    const dnnl_dims_t sunk = {UNK, 1};
    OK(dnnl_graph_logical_tensor_init_with_strides(&lt, 5, dnnl_f32, 2, dims, sunk,
                                                   dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(lt.layout.strides[0], UNK);
    CHECK_EQ_INT(lt.layout.strides[1], 1);

    memset(&lt, 0x5a, sizeof lt);
    OK(dnnl_graph_logical_tensor_init_with_strides(&lt, 6, dnnl_f32, 0, NULL, NULL,
                                                   dnnl_graph_tensor_property_undef));
    check_rank0(&lt);
    CHECK_EQ_INT(lt.layout_type, dnnl_graph_layout_type_strided);
    OK(dnnl_graph_logical_tensor_init_with_strides(&lt, 6, dnnl_s32, 0, dims, strides,
                                                   dnnl_graph_tensor_property_host_scalar));

    check_bad_inits(true);
}

static size_t mem_size_of(dnnl_data_type_t dt, int ndims, const dnnl_dim_t *dims, const dnnl_dim_t *strides) {
    dnnl_graph_logical_tensor_t lt;
    dnnl_dims_t d = {0}, s = {0};
    for (int i = 0; i < ndims; ++i) {
        d[i] = dims[i];
        s[i] = strides[i];
    }
    if (dnnl_graph_logical_tensor_init_with_strides(&lt, 1, dt, ndims, d, s, dnnl_graph_tensor_property_undef) !=
        dnnl_success)
        return 12345;
    size_t size = 12345;
    if (dnnl_graph_logical_tensor_get_mem_size(&lt, &size) != dnnl_success) return 12345;
    return size;
}

static void test_lt_mem_size(void) {
    const dnnl_dim_t none[1] = {0};
    /* Scalars: one element. */
    CHECK_EQ_INT(mem_size_of(dnnl_f32, 0, none, none), 4);
    CHECK_EQ_INT(mem_size_of(dnnl_s64, 0, none, none), 8);
    CHECK_EQ_INT(mem_size_of(dnnl_u8, 0, none, none), 1);
    CHECK_EQ_INT(mem_size_of(dnnl_f16, 0, none, none), 2);

    /* Dense tensors of every element size. */
    const dnnl_dim_t d23[] = {2, 3}, s23[] = {3, 1};
    static const struct {
        dnnl_data_type_t dt;
        size_t bytes;
    } dense[] = {{dnnl_f32, 24},    {dnnl_s32, 24},     {dnnl_f16, 12},     {dnnl_bf16, 12},
                 {dnnl_s8, 6},      {dnnl_u8, 6},       {dnnl_boolean, 6},  {dnnl_f8_e5m2, 6},
                 {dnnl_f8_e4m3, 6}, {dnnl_e8m0, 6},     {dnnl_f64, 48},     {dnnl_s64, 48}};
    for (size_t i = 0; i < sizeof dense / sizeof dense[0]; ++i)
        CHECK_EQ_INT(mem_size_of(dense[i].dt, 2, d23, s23), dense[i].bytes);

    /* A zero dim: 0 bytes whatever the strides. */
    const dnnl_dim_t d203[] = {2, 0, 3}, s203[] = {3, 3, 1};
    CHECK_EQ_INT(mem_size_of(dnnl_f32, 3, d203, s203), 0);

    /* Strided span = max over d of dims[d] * strides[d]. */
    const dnnl_dim_t s23p[] = {8, 1}; /* padded rows */
    CHECK_EQ_INT(mem_size_of(dnnl_f32, 2, d23, s23p), 2 * 8 * 4);
    const dnnl_dim_t s23t[] = {1, 2}; /* transposed */
    CHECK_EQ_INT(mem_size_of(dnnl_f32, 2, d23, s23t), 6 * 4);
    const dnnl_dim_t s23w[] = {1, 5}; /* dim 1 dominates: 3 * 5 */
    CHECK_EQ_INT(mem_size_of(dnnl_f32, 2, d23, s23w), 15 * 4);
    /* A dim of 1 contributes 1, whatever its stride. */
    const dnnl_dim_t d13[] = {1, 3}, s13[] = {100, 1};
    CHECK_EQ_INT(mem_size_of(dnnl_f32, 2, d13, s13), 3 * 4);
    const dnnl_dim_t d31[] = {3, 1}, s31[] = {2, 50};
    CHECK_EQ_INT(mem_size_of(dnnl_f32, 2, d31, s31), 6 * 4);

    /* 4-bit types: ceil(span / 2) bytes. */
    const dnnl_dim_t d5[] = {5}, s1[] = {1};
    CHECK_EQ_INT(mem_size_of(dnnl_s4, 1, d5, s1), 3);
    CHECK_EQ_INT(mem_size_of(dnnl_u4, 1, d5, s1), 3);
    CHECK_EQ_INT(mem_size_of(dnnl_f4_e2m1, 1, d5, s1), 3);
    const dnnl_dim_t d4[] = {4};
    CHECK_EQ_INT(mem_size_of(dnnl_u4, 1, d4, s1), 2);
    const dnnl_dim_t d1[] = {1};
    CHECK_EQ_INT(mem_size_of(dnnl_s4, 1, d1, s1), 1);
    CHECK_EQ_INT(mem_size_of(dnnl_s4, 2, d23, s23p), 8); /* span 16 */
    CHECK_EQ_INT(mem_size_of(dnnl_u4, 2, d23, s23), 3);  /* span 6 */
    const dnnl_dim_t s33[] = {3, 1}, d33[] = {3, 3};
    CHECK_EQ_INT(mem_size_of(dnnl_u4, 2, d33, s33), 5); /* span 9 */

    /* any / undef layouts: unknown size. */
    dnnl_graph_logical_tensor_t lt;
    const dnnl_dims_t dims = {2, 3};
    size_t size = 0;
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 1, dnnl_f32, 2, dims, dnnl_graph_layout_type_any,
                                                dnnl_graph_tensor_property_undef));
    OK(dnnl_graph_logical_tensor_get_mem_size(&lt, &size));
    CHECK(size == SIZE_MAX);
    size = 0;
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 1, dnnl_f32, 2, dims, dnnl_graph_layout_type_undef,
                                                dnnl_graph_tensor_property_undef));
    OK(dnnl_graph_logical_tensor_get_mem_size(&lt, &size));
    CHECK(size == SIZE_MAX);

    /* init_with_dims strides feed get_mem_size. */
    const dnnl_dims_t d413 = {4, 1, 3};
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 1, dnnl_f32, 3, d413, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    OK(dnnl_graph_logical_tensor_get_mem_size(&lt, &size));
    CHECK_EQ_INT(size, 12 * 4);

    FAILS(dnnl_graph_logical_tensor_get_mem_size(NULL, &size), dnnl_invalid_arguments);
    FAILS(dnnl_graph_logical_tensor_get_mem_size(&lt, NULL), dnnl_invalid_arguments);
}

static uint8_t equal(const dnnl_graph_logical_tensor_t *a, const dnnl_graph_logical_tensor_t *b) {
    uint8_t r = 77;
    if (dnnl_graph_logical_tensor_is_equal(a, b, &r) != dnnl_success) return 77;
    return r;
}

static void test_lt_is_equal(void) {
    const dnnl_dims_t dims = {2, 3}, dims2 = {2, 4}, strides_t = {1, 2};
    dnnl_graph_logical_tensor_t a, b;
    OK(dnnl_graph_logical_tensor_init_with_dims(&a, 1, dnnl_f32, 2, dims, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    b = a;
    CHECK_EQ_INT(equal(&a, &b), 1);
    CHECK_EQ_INT(equal(&a, &a), 1);

    b = a;
    b.id = 2;
    CHECK_EQ_INT(equal(&a, &b), 0);
    b = a;
    b.data_type = dnnl_bf16;
    CHECK_EQ_INT(equal(&a, &b), 0);
    b = a;
    b.property = dnnl_graph_tensor_property_constant;
    CHECK_EQ_INT(equal(&a, &b), 0);
    OK(dnnl_graph_logical_tensor_init_with_dims(&b, 1, dnnl_f32, 2, dims2, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(equal(&a, &b), 0);
    const dnnl_dims_t dims3 = {2, 3, 1};
    OK(dnnl_graph_logical_tensor_init_with_dims(&b, 1, dnnl_f32, 3, dims3, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(equal(&a, &b), 0); /* ndims differ */
    OK(dnnl_graph_logical_tensor_init_with_strides(&b, 1, dnnl_f32, 2, dims, strides_t,
                                                   dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(equal(&a, &b), 0); /* strides differ */

    /* Entries beyond ndims do not count. */
    b = a;
    b.dims[5] = 99;
    b.layout.strides[7] = 42;
    CHECK_EQ_INT(equal(&a, &b), 1);

    /* Mixed layout types: strided vs any / undef are unequal; any vs undef too. */
    dnnl_graph_logical_tensor_t any, undef;
    OK(dnnl_graph_logical_tensor_init_with_dims(&any, 1, dnnl_f32, 2, dims, dnnl_graph_layout_type_any,
                                                dnnl_graph_tensor_property_undef));
    OK(dnnl_graph_logical_tensor_init_with_dims(&undef, 1, dnnl_f32, 2, dims, dnnl_graph_layout_type_undef,
                                                dnnl_graph_tensor_property_undef));
    CHECK_EQ_INT(equal(&a, &any), 0);
    CHECK_EQ_INT(equal(&any, &a), 0);
    CHECK_EQ_INT(equal(&a, &undef), 0);
    CHECK_EQ_INT(equal(&any, &undef), 0);
    /* Same non-strided layout type: equal when the rest is. */
    b = any;
    CHECK_EQ_INT(equal(&any, &b), 1);
    b = undef;
    CHECK_EQ_INT(equal(&undef, &b), 1);

    /* Opaque: same layout id. */
    dnnl_graph_logical_tensor_t o1 = a, o2 = a;
    o1.layout_type = o2.layout_type = dnnl_graph_layout_type_opaque;
    memset(&o1.layout, 0, sizeof o1.layout);
    memset(&o2.layout, 0, sizeof o2.layout);
    o1.layout.layout_id = 5;
    o2.layout.layout_id = 5;
    CHECK_EQ_INT(equal(&o1, &o2), 1);
    o2.layout.layout_id = 6;
    CHECK_EQ_INT(equal(&o1, &o2), 0);
    CHECK_EQ_INT(equal(&o1, &any), 0);

    /* ndims <= 0: the layout is not compared (strided vs opaque equal). */
    dnnl_graph_logical_tensor_t s0, op0;
    OK(dnnl_graph_logical_tensor_init(&s0, 3, dnnl_f32, 0, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_undef));
    op0 = s0;
    op0.layout_type = dnnl_graph_layout_type_opaque;
    op0.layout.layout_id = 1234;
    CHECK_EQ_INT(equal(&s0, &op0), 1);
    OK(dnnl_graph_logical_tensor_init(&s0, 3, dnnl_f32, -1, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_undef));
    op0 = s0;
    op0.layout_type = dnnl_graph_layout_type_opaque;
    op0.layout.layout_id = 1234;
    CHECK_EQ_INT(equal(&s0, &op0), 1);

    uint8_t r = 0;
    FAILS(dnnl_graph_logical_tensor_is_equal(NULL, &a, &r), dnnl_invalid_arguments);
    FAILS(dnnl_graph_logical_tensor_is_equal(&a, NULL, &r), dnnl_invalid_arguments);
    FAILS(dnnl_graph_logical_tensor_is_equal(&a, &a, NULL), dnnl_invalid_arguments);
}

/* ---- tensor + tensor id ------------------------------------------------ */

static void test_tensor(void) {
    dnnl_engine_t eng = NULL;
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    const dnnl_dims_t dims = {3, 5};
    dnnl_graph_logical_tensor_t lt, out;
    OK(dnnl_graph_logical_tensor_init_with_dims(&lt, 21, dnnl_f32, 2, dims, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));

    /* (a) user buffer: borrowed as is. */
    float buf[15];
    dnnl_graph_tensor_t t = NULL;
    OK(dnnl_graph_tensor_create(&t, &lt, eng, buf));
    void *h = NULL;
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h == buf);
    dnnl_engine_t e2 = NULL;
    OK(dnnl_graph_tensor_get_engine(t, &e2));
    CHECK(e2 == eng);
    memset(&out, 0, sizeof out);
    OK(dnnl_graph_tensor_get_logical_tensor(t, &out));
    CHECK_EQ_INT(equal(&out, &lt), 1);
    CHECK(memcmp(out.dims, lt.dims, sizeof lt.dims) == 0);
    size_t id = 0;
    OK(dnnl_graph_tensor_get_id(t, &id));
    CHECK_EQ_INT(id, 21);

    /* set_data_handle: a new borrowed pointer, including NULL. */
    float other[15];
    OK(dnnl_graph_tensor_set_data_handle(t, other));
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h == other);
    OK(dnnl_graph_tensor_set_data_handle(t, NULL));
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h == NULL);
    FAILS(dnnl_graph_tensor_set_data_handle(NULL, other), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_get_data_handle(NULL, &h), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_get_data_handle(t, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_get_engine(NULL, &e2), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_get_engine(t, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_get_logical_tensor(NULL, &out), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_get_logical_tensor(t, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_get_id(NULL, &id), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_get_id(t, NULL), dnnl_invalid_arguments);
    OK(dnnl_graph_tensor_destroy(t));

    /* (b) DNNL_MEMORY_ALLOCATE: a 64-byte aligned, writable buffer. */
    OK(dnnl_graph_tensor_create(&t, &lt, eng, DNNL_MEMORY_ALLOCATE));
    h = NULL;
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h != NULL && h != DNNL_MEMORY_ALLOCATE);
    CHECK(((uintptr_t)h % 64) == 0);
    if (h && h != DNNL_MEMORY_ALLOCATE) {
        memset(h, 0xab, 15 * sizeof(float));
        CHECK(((unsigned char *)h)[59] == 0xab);
    }
    OK(dnnl_graph_tensor_destroy(t));

    /* (c) DNNL_MEMORY_NONE: no buffer. */
    OK(dnnl_graph_tensor_create(&t, &lt, eng, DNNL_MEMORY_NONE));
    h = buf;
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h == NULL);
    OK(dnnl_graph_tensor_set_data_handle(t, buf));
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h == buf);
    OK(dnnl_graph_tensor_destroy(t));
    OK(dnnl_graph_tensor_destroy(NULL));

    /* Errors. */
    dnnl_graph_tensor_t bad = NULL;
    FAILS(dnnl_graph_tensor_create(NULL, &lt, eng, buf), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_create(&bad, NULL, eng, buf), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_create(&bad, &lt, NULL, buf), dnnl_invalid_arguments);
    dnnl_graph_logical_tensor_t hs;
    OK(dnnl_graph_logical_tensor_init(&hs, 30, dnnl_f32, 0, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_host_scalar));
    FAILS(dnnl_graph_tensor_create(&bad, &hs, eng, buf), dnnl_invalid_arguments);
    CHECK(bad == NULL);

    /* An addition: explicit tensor ids. */
    OK(dnnl_graph_tensor_create_with_id(&t, &lt, eng, buf, 777));
    OK(dnnl_graph_tensor_get_id(t, &id));
    CHECK_EQ_INT(id, 777);
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h == buf);
    OK(dnnl_graph_tensor_get_logical_tensor(t, &out));
    CHECK_EQ_INT(out.id, 21); /* the logical tensor keeps its own id */
    OK(dnnl_graph_tensor_destroy(t));
    OK(dnnl_graph_tensor_create_with_id(&t, &lt, eng, buf, 0));
    OK(dnnl_graph_tensor_get_id(t, &id));
    CHECK_EQ_INT(id, 0);
    OK(dnnl_graph_tensor_destroy(t));
    OK(dnnl_graph_tensor_create_with_id(&t, &lt, eng, buf, SIZE_MAX)); /* no explicit id */
    id = 0;
    OK(dnnl_graph_tensor_get_id(t, &id));
    CHECK_EQ_INT(id, 21);
    OK(dnnl_graph_tensor_destroy(t));
    OK(dnnl_graph_tensor_create_with_id(&t, &lt, eng, DNNL_MEMORY_ALLOCATE, 5));
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h != NULL && h != DNNL_MEMORY_ALLOCATE);
    OK(dnnl_graph_tensor_destroy(t));
    FAILS(dnnl_graph_tensor_create_with_id(NULL, &lt, eng, buf, 1), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_create_with_id(&bad, NULL, eng, buf, 1), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_create_with_id(&bad, &lt, NULL, buf, 1), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_create_with_id(&bad, &hs, eng, buf, 1), dnnl_invalid_arguments);

    /* Host scalars. */
    float fv = 2.5f;
    OK(dnnl_graph_tensor_create_scalar(&t, &hs, &fv));
    OK(dnnl_graph_tensor_get_data_handle(t, &h));
    CHECK(h == NULL);
    e2 = eng;
    OK(dnnl_graph_tensor_get_engine(t, &e2));
    CHECK(e2 == NULL);
    OK(dnnl_graph_tensor_get_logical_tensor(t, &out));
    CHECK_EQ_INT(out.property, dnnl_graph_tensor_property_host_scalar);
    CHECK_EQ_INT(out.id, 30);
    OK(dnnl_graph_tensor_get_id(t, &id));
    CHECK_EQ_INT(id, 30);
    FAILS(dnnl_graph_tensor_set_data_handle(t, buf), dnnl_invalid_arguments);
    OK(dnnl_graph_tensor_destroy(t));

    int32_t iv = -7;
    int64_t lv = (int64_t)1 << 40;
    dnnl_graph_logical_tensor_t hs32, hs64;
    OK(dnnl_graph_logical_tensor_init(&hs32, 31, dnnl_s32, 0, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_host_scalar));
    OK(dnnl_graph_logical_tensor_init(&hs64, 32, dnnl_s64, 0, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_host_scalar));
    OK(dnnl_graph_tensor_create_scalar(&t, &hs32, &iv));
    OK(dnnl_graph_tensor_destroy(t));
    OK(dnnl_graph_tensor_create_scalar(&t, &hs64, &lv));
    OK(dnnl_graph_tensor_destroy(t));

    FAILS(dnnl_graph_tensor_create_scalar(NULL, &hs, &fv), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_create_scalar(&bad, NULL, &fv), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_create_scalar(&bad, &lt, &fv), dnnl_invalid_arguments); /* not host_scalar */
    FAILS(dnnl_graph_tensor_create_scalar(&bad, &hs, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_tensor_create_scalar(&bad, &hs, DNNL_MEMORY_ALLOCATE), dnnl_invalid_arguments);
    CHECK(bad == NULL);

    OK(dnnl_engine_destroy(eng));
}

/* A host-scalar value is copied at creation: multiply by a host scalar
 * created from 3.0, then overwrite the user's variable before executing. */
static void test_scalar_copied(void) {
    dnnl_engine_t eng = NULL;
    dnnl_stream_t strm = NULL;
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    OK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
    const dnnl_dims_t dims = {2, 3};
    dnnl_graph_logical_tensor_t src, scale, dst;
    OK(dnnl_graph_logical_tensor_init_with_dims(&src, 1, dnnl_f32, 2, dims, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    OK(dnnl_graph_logical_tensor_init(&scale, 2, dnnl_f32, 0, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_host_scalar));
    OK(dnnl_graph_logical_tensor_init_with_dims(&dst, 3, dnnl_f32, 2, dims, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    dnnl_graph_op_t op = NULL;
    OK(dnnl_graph_op_create(&op, 1, dnnl_graph_op_multiply, "mul"));
    OK(dnnl_graph_op_add_input(op, &src));
    OK(dnnl_graph_op_add_input(op, &scale));
    OK(dnnl_graph_op_add_output(op, &dst));
    dnnl_graph_partition_t part = pt_test_one_op_partition(op);
    if (part) {
        uint8_t supported = 0;
        OK(dnnl_graph_partition_is_supported(part, &supported));
        CHECK_EQ_INT(supported, 1);
        dnnl_graph_compiled_partition_t cp = NULL;
        OK(dnnl_graph_compiled_partition_create(&cp, part));
        const dnnl_graph_logical_tensor_t *ins[] = {&src, &scale}, *outs[] = {&dst};
        OK(dnnl_graph_partition_compile(part, cp, 2, ins, 1, outs, eng));
        float x[6] = {1, -2, 3, -4, 5, -6}, y[6] = {0};
        float s = 3.0f;
        dnnl_graph_tensor_t t[3] = {NULL}; /* src, scale, dst */
        OK(dnnl_graph_tensor_create(&t[0], &src, eng, x));
        OK(dnnl_graph_tensor_create_scalar(&t[1], &scale, &s));
        OK(dnnl_graph_tensor_create(&t[2], &dst, eng, y));
        s = 100.0f; /* must not be seen */
        OK(dnnl_graph_compiled_partition_execute(cp, strm, 2, (const_dnnl_graph_tensor_t *)t, 1,
                                                 (const_dnnl_graph_tensor_t *)t + 2));
        OK(dnnl_stream_wait(strm));
        for (int i = 0; i < 6; ++i) CHECK_NEAR(y[i], 3.0 * x[i], 1e-6);
        for (int i = 0; i < 3; ++i) OK(dnnl_graph_tensor_destroy(t[i]));
        OK(dnnl_graph_compiled_partition_destroy(cp));
        OK(dnnl_graph_partition_destroy(part));
    }
    OK(dnnl_stream_destroy(strm));
    OK(dnnl_engine_destroy(eng));
}

/* ---- op -------------------------------------------------------------- */

static void test_op(void) {
    dnnl_graph_op_t op = NULL;
    OK(dnnl_graph_op_create(&op, 42, dnnl_graph_op_matmul, "mm"));
    CHECK(op != NULL);
    size_t id = 0;
    dnnl_graph_op_kind_t kind = dnnl_graph_op_abs;
    OK(dnnl_graph_op_get_id(op, &id));
    CHECK_EQ_INT(id, 42);
    OK(dnnl_graph_op_get_kind(op, &kind));
    CHECK_EQ_INT(kind, dnnl_graph_op_matmul);
    FAILS(dnnl_graph_op_get_id(NULL, &id), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_get_id(op, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_get_kind(NULL, &kind), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_get_kind(op, NULL), dnnl_invalid_arguments);

    dnnl_graph_logical_tensor_t lt;
    OK(dnnl_graph_logical_tensor_init(&lt, 1, dnnl_f32, 2, dnnl_graph_layout_type_strided,
                                      dnnl_graph_tensor_property_undef));
    OK(dnnl_graph_op_add_input(op, &lt));
    OK(dnnl_graph_op_add_output(op, &lt));
    FAILS(dnnl_graph_op_add_input(NULL, &lt), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_add_input(op, NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_add_output(NULL, &lt), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_add_output(op, NULL), dnnl_invalid_arguments);

    /* f32: single-value names ignore value_len, others take a vector. */
    const float f[3] = {0.5f, 1.5f, 2.5f};
    OK(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_alpha, f, 1));
    OK(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_alpha, f, 0));
    OK(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_epsilon, f, 3));
    OK(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_scales, f, 3));
    OK(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_scales, f, 1)); /* overwrite */
    FAILS(dnnl_graph_op_set_attr_f32(NULL, dnnl_graph_op_attr_alpha, f, 1), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_alpha, NULL, 1), dnnl_invalid_arguments);

    /* bool: exactly one value. */
    const uint8_t b[2] = {1, 0};
    OK(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_transpose_a, b, 1));
    OK(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_transpose_a, b + 1, 1));
    FAILS(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_transpose_a, b, 0), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_transpose_a, b, 2), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_set_attr_bool(NULL, dnnl_graph_op_attr_transpose_a, b, 1), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_set_attr_bool(op, dnnl_graph_op_attr_transpose_a, NULL, 1), dnnl_invalid_arguments);

    /* s64: single-value names ignore value_len, others take a vector. */
    const int64_t s[3] = {1, 2, 3};
    OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, s, 1));
    OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, s, 0));
    OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_groups, s, 3));
    OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_strides, s, 3));
    OK(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axes, s, 0)); /* empty list */
    FAILS(dnnl_graph_op_set_attr_s64(NULL, dnnl_graph_op_attr_axis, s, 1), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_set_attr_s64(op, dnnl_graph_op_attr_axis, NULL, 1), dnnl_invalid_arguments);

    /* str: NUL-terminated, value_len only rejects 0. */
    OK(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_accumulation_mode, "strict", 6));
    OK(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_accumulation_mode, "any", 1));
    FAILS(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_accumulation_mode, "strict", 0),
          dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_set_attr_str(NULL, dnnl_graph_op_attr_accumulation_mode, "strict", 6),
          dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_set_attr_str(op, dnnl_graph_op_attr_accumulation_mode, NULL, 6),
          dnnl_invalid_arguments);
    OK(dnnl_graph_op_destroy(op));
    OK(dnnl_graph_op_destroy(NULL));

    /* An empty name is allowed (replaced by "<OpName>_<id>"). */
    op = NULL;
    OK(dnnl_graph_op_create(&op, 3, dnnl_graph_op_relu, ""));
    CHECK(op != NULL);
    OK(dnnl_graph_op_get_id(op, &id));
    CHECK_EQ_INT(id, 3);
    OK(dnnl_graph_op_destroy(op));
    /* The kind is not validated at creation. */
    op = NULL;
    OK(dnnl_graph_op_create(&op, 4, (dnnl_graph_op_kind_t)5000, "alien"));
    OK(dnnl_graph_op_get_kind(op, &kind));
    CHECK_EQ_INT(kind, 5000);
    OK(dnnl_graph_op_destroy(op));
    OK(dnnl_graph_op_create(&op, 5, dnnl_graph_op_last_symbol, ""));
    OK(dnnl_graph_op_destroy(op));

    dnnl_graph_op_t bad = NULL;
    FAILS(dnnl_graph_op_create(NULL, 1, dnnl_graph_op_relu, "x"), dnnl_invalid_arguments);
    FAILS(dnnl_graph_op_create(&bad, 1, dnnl_graph_op_relu, NULL), dnnl_invalid_arguments);
    CHECK(bad == NULL);
}

/* Attribute storage observed through execution: LeakyReLU's alpha given
 * with value_len 0 still stores value[0]; re-setting overwrites.  Also a
 * graph keeps its own copy of an op that the caller destroys. */
static void test_attr_effect(void) {
    dnnl_engine_t eng = NULL;
    dnnl_stream_t strm = NULL;
    OK(dnnl_engine_create(&eng, dnnl_cpu, 0));
    OK(dnnl_stream_create(&strm, eng, dnnl_stream_default_flags));
    const dnnl_dims_t dims = {4};
    dnnl_graph_logical_tensor_t src, dst;
    OK(dnnl_graph_logical_tensor_init_with_dims(&src, 1, dnnl_f32, 1, dims, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    OK(dnnl_graph_logical_tensor_init_with_dims(&dst, 2, dnnl_f32, 1, dims, dnnl_graph_layout_type_strided,
                                                dnnl_graph_tensor_property_undef));
    dnnl_graph_op_t op = NULL;
    OK(dnnl_graph_op_create(&op, 1, dnnl_graph_op_leaky_relu, ""));
    const float a1[2] = {0.5f, 9.0f}, a2 = 0.25f;
    OK(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_alpha, a1, 2));
    OK(dnnl_graph_op_set_attr_f32(op, dnnl_graph_op_attr_alpha, &a2, 0));
    OK(dnnl_graph_op_add_input(op, &src));
    OK(dnnl_graph_op_add_output(op, &dst));
    dnnl_graph_partition_t part = pt_test_one_op_partition(op); /* the graph holds a copy */
    if (part) {
        dnnl_graph_compiled_partition_t cp = NULL;
        OK(dnnl_graph_compiled_partition_create(&cp, part));
        const dnnl_graph_logical_tensor_t *ins[] = {&src}, *outs[] = {&dst};
        OK(dnnl_graph_partition_compile(part, cp, 1, ins, 1, outs, eng));
        float x[4] = {-4.0f, -1.0f, 0.0f, 3.0f}, y[4] = {0};
        pt_test_execute(cp, eng, strm, 1, ins, 1, outs, (void *const[]){x, y});
        CHECK_NEAR(y[0], -1.0, 1e-6);
        CHECK_NEAR(y[1], -0.25, 1e-6);
        CHECK_NEAR(y[2], 0.0, 1e-6);
        CHECK_NEAR(y[3], 3.0, 1e-6);
        OK(dnnl_graph_compiled_partition_destroy(cp));
        OK(dnnl_graph_partition_destroy(part));
    }
    OK(dnnl_stream_destroy(strm));
    OK(dnnl_engine_destroy(eng));
}

/* ---- caches and dump mode ------------------------------------------- */

static void test_cp_cache(void) {
    int cap = -5;
    FAILS(dnnl_graph_get_compiled_partition_cache_capacity(NULL), dnnl_invalid_arguments);
    OK(dnnl_graph_get_compiled_partition_cache_capacity(&cap));
    if (!getenv("DNNL_GRAPH_COMPILED_PARTITION_CACHE_CAPACITY") &&
        !getenv("ONEDNN_GRAPH_COMPILED_PARTITION_CACHE_CAPACITY"))
        CHECK_EQ_INT(cap, 1024);
    const int initial = cap;
    OK(dnnl_graph_set_compiled_partition_cache_capacity(10));
    OK(dnnl_graph_get_compiled_partition_cache_capacity(&cap));
    CHECK_EQ_INT(cap, 10);
    OK(dnnl_graph_set_compiled_partition_cache_capacity(0));
    OK(dnnl_graph_get_compiled_partition_cache_capacity(&cap));
    CHECK_EQ_INT(cap, 0);
    FAILS(dnnl_graph_set_compiled_partition_cache_capacity(-1), dnnl_invalid_arguments);
    OK(dnnl_graph_get_compiled_partition_cache_capacity(&cap));
    CHECK_EQ_INT(cap, 0);
    OK(dnnl_graph_set_compiled_partition_cache_capacity(initial));
    OK(dnnl_graph_get_compiled_partition_cache_capacity(&cap));
    CHECK_EQ_INT(cap, initial);
}

static void test_const_cache(void) {
    int flag = -1;
    size_t mb = 99;
    FAILS(dnnl_graph_get_constant_tensor_cache(NULL), dnnl_invalid_arguments);
    FAILS(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_cpu, NULL), dnnl_invalid_arguments);
    if (!getenv("ONEDNN_GRAPH_CONSTANT_TENSOR_CACHE_CAPACITY") &&
        !getenv("DNNL_GRAPH_CONSTANT_TENSOR_CACHE_CAPACITY")) {
        OK(dnnl_graph_get_constant_tensor_cache(&flag));
        CHECK_EQ_INT(flag, 0); /* disabled by default */
        OK(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_cpu, &mb));
        CHECK_EQ_INT(mb, 0);
    }

    FAILS(dnnl_graph_set_constant_tensor_cache(-1), dnnl_invalid_arguments);
    OK(dnnl_graph_set_constant_tensor_cache(1));
    OK(dnnl_graph_get_constant_tensor_cache(&flag));
    CHECK_EQ_INT(flag, 1);
    OK(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_cpu, &mb));
    CHECK(mb > 0);
    OK(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_gpu, &mb));
    CHECK(mb > 0);
    OK(dnnl_graph_set_constant_tensor_cache(0));
    OK(dnnl_graph_get_constant_tensor_cache(&flag));
    CHECK_EQ_INT(flag, 0);
    OK(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_cpu, &mb));
    CHECK_EQ_INT(mb, 0);
    OK(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_gpu, &mb));
    CHECK_EQ_INT(mb, 0);

    OK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, 16));
    OK(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_cpu, &mb));
    CHECK_EQ_INT(mb, 16);
    OK(dnnl_graph_get_constant_tensor_cache(&flag));
    CHECK_EQ_INT(flag, 1);
    OK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_cpu, 0));
    OK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_gpu, 8));
    OK(dnnl_graph_get_constant_tensor_cache_capacity(dnnl_gpu, &mb));
    CHECK_EQ_INT(mb, 8);
    OK(dnnl_graph_get_constant_tensor_cache(&flag));
    CHECK_EQ_INT(flag, 1); /* CPU or GPU nonzero */
    OK(dnnl_graph_set_constant_tensor_cache_capacity(dnnl_gpu, 0));
    OK(dnnl_graph_get_constant_tensor_cache(&flag));
    CHECK_EQ_INT(flag, 0);
    /* The header promises invalid_arguments for a bad engine kind. */
    FAILS(dnnl_graph_set_constant_tensor_cache_capacity((dnnl_engine_kind_t)9, 4), dnnl_invalid_arguments);
}

static void test_dump_mode(void) {
    OK(dnnl_graph_set_dump_mode(dnnl_graph_dump_mode_none));
    OK(dnnl_graph_set_dump_mode(dnnl_graph_dump_mode_graph));
    OK(dnnl_graph_set_dump_mode(dnnl_graph_dump_mode_subgraph));
    OK(dnnl_graph_set_dump_mode((dnnl_graph_dump_mode_t)(dnnl_graph_dump_mode_graph |
                                                         dnnl_graph_dump_mode_subgraph)));
    FAILS(dnnl_graph_set_dump_mode((dnnl_graph_dump_mode_t)0x4), dnnl_invalid_arguments);
    FAILS(dnnl_graph_set_dump_mode((dnnl_graph_dump_mode_t)(0x8 | dnnl_graph_dump_mode_graph)),
          dnnl_invalid_arguments);
    /* Leave dumping off so no other test writes files. */
    OK(dnnl_graph_set_dump_mode(dnnl_graph_dump_mode_none));
}

int main(void) {
    test_engine();
    test_stream();
    test_default_fpmath();
    test_verbose_and_version();
    test_allocator();
    test_lt_init();
    test_lt_init_with_dims();
    test_lt_init_with_strides();
    test_lt_mem_size();
    test_lt_is_equal();
    test_tensor();
    test_scalar_copied();
    test_op();
    test_attr_effect();
    test_cp_cache();
    test_const_cache();
    test_dump_mode();
    return pt_test_summary("test_api_objects");
}
