/* One input of the C-API fuzz target: the bytes are a small program that
 * drives the public API (include/oneapi/dnnl/dnnl_graph.h) the way a user
 * could: logical tensors with arbitrary ids, data types (4-bit ones
 * included), ranks, dims (huge, negative, zero, unknown), strides (zero,
 * negative, overlapping), layout types and properties; ops of any kind with
 * any attributes (names, setters, list lengths, values); a graph that is
 * finalized and partitioned with either policy; port queries, shape
 * inference and compilation; tensors whose buffers are exactly as large as
 * dnnl_graph_logical_tensor_get_mem_size says (so that any access past them
 * is an AddressSanitizer report); execution when everything is small; and
 * the destruction of every object.  Running out of bytes reads zeros, so
 * every input is a complete program. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_one.h"
#include "oneapi/dnnl/dnnl_graph.h"

#define MAX_LTS 8
#define MAX_OPS 6
#define MAX_PORTS 64
#define MAX_PARTS 32

typedef struct {
    const uint8_t *p;
    size_t n, at;
} reader;

static uint8_t u8(reader *r) { return r->at < r->n ? r->p[r->at++] : 0; }

static uint64_t raw64(reader *r) {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = v << 8 | u8(r);
    return v;
}

/* Mostly small values; the rest from a table of edge cases or raw bytes. */
static int64_t pick_i64(reader *r) {
    static const int64_t edge[] = {-1, -2, 0, 1, 2, 3, 16, 64, 255, 256, (int64_t)1 << 20, (int64_t)1 << 31,
                                   (int64_t)1 << 32, (int64_t)1 << 40, (int64_t)1 << 62, INT64_MAX, INT64_MIN,
                                   -3, -INT64_MAX, 1000003, 4096, 65536};
    uint8_t b = u8(r);
    if (b < 160) return b % 12;
    if (b < 248) return edge[(b - 160) % (sizeof edge / sizeof edge[0])];
    return (int64_t)raw64(r);
}

static float pick_f32(reader *r) {
    static const float edge[] = {0.f, 1.f, -1.f, 0.5f, 2.f, 1e-6f, 1e30f, -1e30f, -0.f, 3.f, 255.f, 1e-40f, 0.125f};
    uint8_t b = u8(r);
    if (b < 200) return edge[b % (sizeof edge / sizeof edge[0])];
    if (b < 220) return INFINITY;
    if (b < 240) return NAN;
    uint32_t bits = (uint32_t)raw64(r);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static const char *const strs[] = {"numpy", "none", "NXC", "NCX", "OIX", "XIO", "IOX", "XOI", "per_tensor",
                                   "per_channel", "per_group", "same_upper", "same_lower", "valid", "explicit",
                                   "floor", "ceil", "nearest", "linear", "half_pixel", "align_corners", "strict",
                                   "relaxed", "any", "", "f32", "bf16", "NCX\xff"};

/* Every public attribute id, plus undefined and out-of-range ones. */
static int pick_attr(reader *r) {
    static const int ids[] = {
            dnnl_graph_op_attr_alpha, dnnl_graph_op_attr_beta, dnnl_graph_op_attr_epsilon, dnnl_graph_op_attr_max,
            dnnl_graph_op_attr_min, dnnl_graph_op_attr_momentum, dnnl_graph_op_attr_scales, dnnl_graph_op_attr_axis,
            dnnl_graph_op_attr_begin_norm_axis, dnnl_graph_op_attr_groups, dnnl_graph_op_attr_axes,
            dnnl_graph_op_attr_dilations, dnnl_graph_op_attr_dst_shape, dnnl_graph_op_attr_kernel,
            dnnl_graph_op_attr_order, dnnl_graph_op_attr_output_padding, dnnl_graph_op_attr_pads_begin,
            dnnl_graph_op_attr_pads_end, dnnl_graph_op_attr_shape, dnnl_graph_op_attr_sizes,
            dnnl_graph_op_attr_src_shape, dnnl_graph_op_attr_strides, dnnl_graph_op_attr_weights_shape,
            dnnl_graph_op_attr_zps, dnnl_graph_op_attr_group_shape, dnnl_graph_op_attr_exclude_pad,
            dnnl_graph_op_attr_keep_dims, dnnl_graph_op_attr_keep_stats,
            dnnl_graph_op_attr_per_channel_broadcast, dnnl_graph_op_attr_special_zero,
            dnnl_graph_op_attr_transpose_a, dnnl_graph_op_attr_transpose_b, dnnl_graph_op_attr_use_affine,
            dnnl_graph_op_attr_use_dst, dnnl_graph_op_attr_auto_broadcast, dnnl_graph_op_attr_auto_pad,
            dnnl_graph_op_attr_coordinate_transformation_mode, dnnl_graph_op_attr_data_format,
            dnnl_graph_op_attr_mode, dnnl_graph_op_attr_qtype, dnnl_graph_op_attr_rounding_type,
            dnnl_graph_op_attr_weights_format, dnnl_graph_op_attr_accumulation_mode, dnnl_graph_op_attr_undef,
            dnnl_graph_op_attr_end, 0x7, 0x50, 0x100};
    return ids[u8(r) % (sizeof ids / sizeof ids[0])];
}

static void make_lt(reader *r, dnnl_graph_logical_tensor_t *lt) {
    uint8_t b = u8(r);
    size_t id = b < 250 ? (size_t)(b % 12) : (size_t)pick_i64(r);
    dnnl_data_type_t dt = (dnnl_data_type_t)(u8(r) % 18);
    int32_t ndims = (int32_t)(u8(r) % 15) - 1; /* -1 .. 13 */
    int mode = u8(r) % 4;
    dnnl_graph_layout_type_t ltype = (dnnl_graph_layout_type_t)(u8(r) % 5);
    dnnl_graph_tensor_property_t prop = (dnnl_graph_tensor_property_t)(u8(r) % 5);
    dnnl_dims_t dims, strides;
    for (int d = 0; d < DNNL_MAX_NDIMS; ++d) dims[d] = strides[d] = 0;
    int nd = ndims < 0 ? 0 : ndims > DNNL_MAX_NDIMS ? DNNL_MAX_NDIMS : ndims;
    for (int d = 0; d < nd; ++d) dims[d] = pick_i64(r);
    bool dense = u8(r) & 1;
    for (int d = 0; d < nd; ++d) strides[d] = dense ? 0 : pick_i64(r);
    if (dense && nd > 0) {
        /* Dense strides unless the product overflows (then whatever is left). */
        int64_t s = 1;
        for (int d = nd - 1; d >= 0; --d) {
            strides[d] = s;
            if (dims[d] > 1 && __builtin_mul_overflow(s, dims[d], &s)) s = 0;
        }
    }
    dnnl_status_t st = dnnl_invalid_arguments;
    switch (mode) {
        case 0: st = dnnl_graph_logical_tensor_init(lt, id, dt, ndims, ltype, prop); break;
        case 1: st = dnnl_graph_logical_tensor_init_with_dims(lt, id, dt, ndims, dims, ltype, prop); break;
        case 2: st = dnnl_graph_logical_tensor_init_with_strides(lt, id, dt, ndims, dims, strides, prop); break;
        default: break;
    }
    if (st != dnnl_success) {
        /* A struct filled by hand, as a caller may do. */
        memset(lt, 0, sizeof *lt);
        lt->id = id;
        lt->ndims = ndims;
        lt->data_type = dt;
        lt->layout_type = ltype;
        lt->property = prop;
        memcpy(lt->dims, dims, sizeof dims);
        memcpy(lt->layout.strides, strides, sizeof strides);
        if (ltype == dnnl_graph_layout_type_opaque) lt->layout.layout_id = (size_t)(u8(r) % 3);
    }
}

static void add_attrs(reader *r, dnnl_graph_op_t op) {
    int nattr = u8(r) % 5;
    for (int a = 0; a < nattr; ++a) {
        dnnl_graph_op_attr_t name = (dnnl_graph_op_attr_t)pick_attr(r);
        int setter = u8(r) % 4;
        size_t len = u8(r) % 7;
        bool null_value = (u8(r) % 16) == 0;
        switch (setter) {
            case 0: {
                float v[8];
                for (size_t k = 0; k < len; ++k) v[k] = pick_f32(r);
                dnnl_graph_op_set_attr_f32(op, name, null_value ? NULL : v, len);
                break;
            }
            case 1: {
                int64_t v[8];
                for (size_t k = 0; k < len; ++k) v[k] = pick_i64(r);
                dnnl_graph_op_set_attr_s64(op, name, null_value ? NULL : v, len);
                break;
            }
            case 2: {
                uint8_t v[8];
                for (size_t k = 0; k < len; ++k) v[k] = u8(r) % 3;
                dnnl_graph_op_set_attr_bool(op, name, null_value ? NULL : v, len);
                break;
            }
            default: {
                const char *s = strs[u8(r) % (sizeof strs / sizeof strs[0])];
                size_t slen = strlen(s);
                /* A length shorter than the string is allowed (a prefix). */
                if (len < slen && (u8(r) & 1)) slen = len;
                dnnl_graph_op_set_attr_str(op, name, null_value ? NULL : s, slen);
                break;
            }
        }
    }
}

/* Logical elements of a tensor with known dims (saturating), 0 otherwise. */
static size_t logical_elems(const dnnl_graph_logical_tensor_t *lt) {
    size_t n = 1;
    for (int d = 0; d < lt->ndims && d < DNNL_MAX_NDIMS; ++d) {
        if (lt->dims[d] < 0) return 0;
        if (__builtin_mul_overflow(n, (size_t)lt->dims[d], &n)) return SIZE_MAX;
    }
    return n;
}

/* Every size the target lets through to an executed tensor. */
static bool small_size(size_t bytes, size_t *total) {
    if (bytes > PF_MAX_TENSOR_BYTES) return false;
    *total += bytes;
    return *total <= PF_MAX_TOTAL_BYTES;
}

typedef struct {
    dnnl_graph_tensor_t t[2 * MAX_PORTS];
    void *buf[2 * MAX_PORTS];
    size_t n;
} tensor_set;

static void tensors_free(tensor_set *s) {
    for (size_t k = 0; k < s->n; ++k) {
        dnnl_graph_tensor_destroy(s->t[k]);
        free(s->buf[k]);
    }
    s->n = 0;
}

/* One tensor for a compiled port, its buffer exactly get_mem_size bytes.
 * Returns false when the tensor is too large to execute. */
static bool make_tensor(reader *r, const dnnl_graph_logical_tensor_t *lt, dnnl_engine_t eng, tensor_set *s,
                        size_t *total, const_dnnl_graph_tensor_t *arg) {
    *arg = NULL;
    if (s->n >= 2 * MAX_PORTS) return false;
    size_t k = s->n;
    s->t[k] = NULL;
    s->buf[k] = NULL;
    if (lt->property == dnnl_graph_tensor_property_host_scalar) {
        int64_t v = pick_i64(r);
        if (dnnl_graph_tensor_create_scalar(&s->t[k], lt, &v) != dnnl_success) return true;
        ++s->n;
        *arg = s->t[k];
        return true;
    }
    size_t bytes = 0;
    if (dnnl_graph_logical_tensor_get_mem_size(lt, &bytes) != dnnl_success) return true;
    /* Kernels work per logical element: zero or overlapping strides make a
     * tensor of a million elements span a few bytes (a 2^20-long dot product
     * of zero-stride vectors took over the 1 s budget), so the element count
     * at 4 bytes each is bounded as well. */
    size_t elems = logical_elems(lt);
    size_t work = elems > SIZE_MAX / 4 ? SIZE_MAX : elems * 4;
    if (!small_size(bytes > work ? bytes : work, total)) return false;
    uint8_t *buf = malloc(bytes ? bytes : 1);
    if (!buf) return false;
    /* Data: a repeated byte pattern (small integers, ones, or noise). */
    uint8_t fill = u8(r), step = u8(r);
    for (size_t q = 0; q < bytes; ++q) buf[q] = (uint8_t)(fill + step * (q % 7));
    uint8_t how = u8(r) % 4;
    dnnl_status_t st;
    if (how == 0) st = dnnl_graph_tensor_create_with_id(&s->t[k], lt, eng, buf, lt->id);
    else if (how == 1 && bytes <= 4096) {
        free(buf);
        buf = NULL;
        st = dnnl_graph_tensor_create(&s->t[k], lt, eng, DNNL_MEMORY_ALLOCATE);
    } else st = dnnl_graph_tensor_create(&s->t[k], lt, eng, buf);
    if (st != dnnl_success) {
        free(buf);
        return true;
    }
    s->buf[k] = buf;
    ++s->n;
    *arg = s->t[k];
    return true;
}

/* Compiles one partition (ports possibly replaced or altered by the
 * program), queries the result and executes it when it is small. */
static void run_partition(reader *r, dnnl_graph_partition_t p, const dnnl_graph_logical_tensor_t *lts, size_t nlt,
                          dnnl_engine_t eng, dnnl_stream_t strm) {
    size_t nops = 0, pid = 0, nin = 0, nout = 0;
    uint8_t sup = 0;
    dnnl_engine_kind_t ek;
    dnnl_graph_partition_get_id(p, &pid);
    dnnl_graph_partition_get_engine_kind(p, &ek);
    if (dnnl_graph_partition_get_op_num(p, &nops) == dnnl_success && nops > 0 && nops <= MAX_PORTS) {
        size_t ids[MAX_PORTS];
        dnnl_graph_partition_get_ops(p, nops, ids);
    }
    if (dnnl_graph_partition_is_supported(p, &sup) != dnnl_success) return;
    if (dnnl_graph_partition_get_input_ports_num(p, &nin) != dnnl_success ||
        dnnl_graph_partition_get_output_ports_num(p, &nout) != dnnl_success || nin > MAX_PORTS ||
        nout > MAX_PORTS)
        return;
    dnnl_graph_logical_tensor_t ins[MAX_PORTS], outs[MAX_PORTS];
    if ((nin && dnnl_graph_partition_get_input_ports(p, nin, ins) != dnnl_success) ||
        (nout && dnnl_graph_partition_get_output_ports(p, nout, outs) != dnnl_success))
        return;
    if (u8(r) % 4 == 0) dnnl_graph_partition_set_fpmath_mode(p, (dnnl_fpmath_mode_t)(u8(r) % 6), u8(r) & 1);
    /* The program may swap a port for one of its own logical tensors or
     * change its layout. */
    for (size_t k = 0; k < nin + nout; ++k) {
        dnnl_graph_logical_tensor_t *lt = k < nin ? &ins[k] : &outs[k - nin];
        uint8_t b = u8(r);
        if (b < 200) continue;
        if (b < 220) {
            size_t id = lt->id;
            *lt = lts[u8(r) % nlt];
            if (u8(r) & 1) lt->id = id;
        } else if (b < 240) {
            lt->layout_type = (dnnl_graph_layout_type_t)(u8(r) % 5);
        } else {
            lt->layout.strides[u8(r) % DNNL_MAX_NDIMS] = pick_i64(r);
        }
    }
    const dnnl_graph_logical_tensor_t *ip[MAX_PORTS];
    const dnnl_graph_logical_tensor_t *op[MAX_PORTS];
    dnnl_graph_logical_tensor_t inferred[MAX_PORTS];
    dnnl_graph_logical_tensor_t *iop[MAX_PORTS];
    for (size_t k = 0; k < nin; ++k) ip[k] = &ins[k];
    for (size_t k = 0; k < nout; ++k) {
        op[k] = &outs[k];
        inferred[k] = outs[k];
        iop[k] = &inferred[k];
    }
    dnnl_graph_partition_infer_shape(p, nin, ip, nout, iop);
    if (!sup && (u8(r) & 1)) return;
    dnnl_graph_compiled_partition_t cp = NULL;
    if (dnnl_graph_compiled_partition_create(&cp, p) != dnnl_success) return;
    if (dnnl_graph_partition_compile(p, cp, nin, ip, nout, op, eng) != dnnl_success) {
        dnnl_graph_compiled_partition_destroy(cp);
        return;
    }
    dnnl_graph_logical_tensor_t cin[MAX_PORTS], cout[MAX_PORTS], slt;
    bool ok = true;
    for (size_t k = 0; k < nin; ++k)
        ok = ok && dnnl_graph_compiled_partition_query_logical_tensor(cp, ins[k].id, &cin[k]) == dnnl_success;
    for (size_t k = 0; k < nout; ++k)
        ok = ok && dnnl_graph_compiled_partition_query_logical_tensor(cp, outs[k].id, &cout[k]) == dnnl_success;
    size_t npairs = 0;
    const dnnl_graph_inplace_pair_t *pairs = NULL;
    dnnl_graph_compiled_partition_get_inplace_ports(cp, &npairs, &pairs);
    for (size_t k = 0; k < npairs && pairs; ++k) (void)pairs[k].input_id;
    bool have_scratch = dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(cp, &slt) == dnnl_success;
    tensor_set ts = {.n = 0};
    const_dnnl_graph_tensor_t ia[MAX_PORTS], oa[MAX_PORTS], sa = NULL;
    size_t total = 0;
    for (size_t k = 0; k < nin && ok; ++k) ok = make_tensor(r, &cin[k], eng, &ts, &total, &ia[k]);
    for (size_t k = 0; k < nout && ok; ++k) ok = make_tensor(r, &cout[k], eng, &ts, &total, &oa[k]);
    void *scratch = NULL;
    dnnl_graph_tensor_t st = NULL;
    if (ok && have_scratch && (u8(r) & 1)) {
        size_t bytes = 0;
        if (dnnl_graph_logical_tensor_get_mem_size(&slt, &bytes) == dnnl_success && bytes <= (16u << 20)) {
            scratch = malloc(bytes ? bytes : 1);
            if (scratch && dnnl_graph_tensor_create(&st, &slt, eng, scratch) == dnnl_success) sa = st;
        }
    }
    if (ok) {
        dnnl_status_t est = (u8(r) & 1)
                                    ? dnnl_graph_compiled_partition_execute(cp, strm, nin, ia, nout, oa)
                                    : dnnl_graph_compiled_partition_execute_v2(cp, strm, nin, ia, nout, oa, sa);
        if (est == dnnl_success) dnnl_stream_wait(strm);
    }
    dnnl_graph_tensor_destroy(st);
    free(scratch);
    tensors_free(&ts);
    dnnl_graph_compiled_partition_destroy(cp);
}

int pf_api_one(const uint8_t *data, size_t size) {
    if (size > PF_MAX_INPUT) return 0;
    reader rd = {data, size, 0};
    reader *r = &rd;
    dnnl_engine_t eng = NULL;
    dnnl_stream_t strm = NULL;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success) return 0;
    if (dnnl_stream_create(&strm, eng, dnnl_stream_default_flags) != dnnl_success) {
        dnnl_engine_destroy(eng);
        return 0;
    }
    dnnl_graph_logical_tensor_t lts[MAX_LTS];
    size_t nlt = 1 + u8(r) % MAX_LTS;
    for (size_t k = 0; k < nlt; ++k) {
        make_lt(r, &lts[k]);
        size_t bytes = 0;
        uint8_t eq = 0;
        dnnl_graph_logical_tensor_get_mem_size(&lts[k], &bytes);
        dnnl_graph_logical_tensor_is_equal(&lts[k], &lts[u8(r) % (k + 1)], &eq);
    }
    dnnl_graph_graph_t g = NULL;
    dnnl_fpmath_mode_t fm = (dnnl_fpmath_mode_t)(u8(r) % 6);
    if (dnnl_graph_graph_create_with_fpmath_mode(&g, dnnl_cpu, fm) != dnnl_success) g = NULL;
    if (g && (u8(r) & 1)) dnnl_graph_graph_set_fpmath_mode(g, (dnnl_fpmath_mode_t)(u8(r) % 6), u8(r) & 1);
    size_t nops = u8(r) % (MAX_OPS + 1);
    for (size_t o = 0; o < nops && g; ++o) {
        dnnl_graph_op_kind_t kind = (dnnl_graph_op_kind_t)(u8(r) % (dnnl_graph_op_last_symbol + 2));
        size_t id = u8(r) % 8;
        dnnl_graph_op_t op = NULL;
        if (dnnl_graph_op_create(&op, id, kind, (u8(r) & 1) ? "" : "fuzz_op") != dnnl_success) continue;
        size_t nin = u8(r) % 5, nout = u8(r) % 3;
        for (size_t k = 0; k < nin; ++k) dnnl_graph_op_add_input(op, &lts[u8(r) % nlt]);
        for (size_t k = 0; k < nout; ++k) dnnl_graph_op_add_output(op, &lts[u8(r) % nlt]);
        add_attrs(r, op);
        size_t got_id = 0;
        dnnl_graph_op_kind_t got_kind;
        dnnl_graph_op_get_id(op, &got_id);
        dnnl_graph_op_get_kind(op, &got_kind);
        if (u8(r) % 8 == 0) {
            /* A single-op partition straight from the op. */
            dnnl_graph_partition_t p = NULL;
            if (dnnl_graph_partition_create_with_op(&p, op, dnnl_cpu) == dnnl_success) {
                run_partition(r, p, lts, nlt, eng, strm);
                dnnl_graph_partition_destroy(p);
            }
        }
        dnnl_graph_add_op(g, op);
        dnnl_graph_op_destroy(op);
    }
    if (g && dnnl_graph_graph_finalize(g) == dnnl_success) {
        uint8_t fin = 0;
        dnnl_graph_graph_is_finalized(g, &fin);
        dnnl_graph_partition_policy_t pol =
                (u8(r) & 1) ? dnnl_graph_partition_policy_debug : dnnl_graph_partition_policy_fusion;
        size_t np = 0;
        if (dnnl_graph_graph_filter(g, pol) == dnnl_success &&
            dnnl_graph_graph_get_partition_num(g, &np) == dnnl_success && np > 0 && np <= MAX_PARTS) {
            dnnl_graph_partition_t parts[MAX_PARTS];
            if (dnnl_graph_graph_get_partitions(g, np, parts) == dnnl_success) {
                /* The graph may go first: partitions outlive it. */
                bool early = u8(r) & 1;
                if (early) {
                    dnnl_graph_graph_destroy(g);
                    g = NULL;
                }
                for (size_t k = 0; k < np; ++k) run_partition(r, parts[k], lts, nlt, eng, strm);
                for (size_t k = 0; k < np; ++k) dnnl_graph_partition_destroy(parts[k]);
            }
        }
    }
    dnnl_graph_graph_destroy(g);
    dnnl_stream_destroy(strm);
    dnnl_engine_destroy(eng);
    return 0;
}
