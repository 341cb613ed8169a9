/* Reference computation; see reference.h. */
#include "reference.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtconv.h"
#include "graph_build.h"
#include "strutil.h"

#include "compile/compiled.h"

#define MAXD DNNL_MAX_NDIMS


/* ---- value map ------------------------------------------------------------- */

pc_tval *pc_values_find(pc_values *vs, size_t id) {
    for (size_t k = 0; k < vs->n; ++k)
        if (vs->t[k].id == id) return &vs->t[k];
    return NULL;
}

pc_tval *pc_values_put(pc_values *vs, const pc_lt *lt) {
    int64_t n = pc_lt_nelems(lt);
    if (n < 0) return NULL;
    pc_tval *t = pc_values_find(vs, lt->id);
    if (!t) {
        if (vs->n == vs->cap) {
            size_t cap = vs->cap ? vs->cap * 2 : 16;
            pc_tval *g = realloc(vs->t, cap * sizeof *g);
            if (!g) return NULL;
            vs->t = g;
            vs->cap = cap;
        }
        t = &vs->t[vs->n++];
        memset(t, 0, sizeof *t);
    }
    free(t->v);
    t->id = lt->id;
    t->lt = *lt;
    t->n = n;
    t->v = calloc(n ? (size_t)n : 1, sizeof *t->v);
    if (!t->v) {
        --vs->n;
        return NULL;
    }
    return t;
}

void pc_values_free(pc_values *vs) {
    for (size_t k = 0; k < vs->n; ++k) free(vs->t[k].v);
    free(vs->t);
    memset(vs, 0, sizeof *vs);
}

/* ---- strided <-> dense -------------------------------------------------------- */

/* Walks the dense elements of lt, giving each one's strided element offset. */
static void walk(const pc_lt *lt, void (*fn)(int64_t dense, int64_t off, void *ctx), void *ctx) {
    int64_t n = pc_lt_nelems(lt);
    if (n <= 0) return;
    int nd = lt->ndims;
    int64_t idx[MAXD] = {0};
    int64_t off = 0;
    for (int64_t i = 0; i < n; ++i) {
        fn(i, off, ctx);
        for (int d = nd - 1; d >= 0; --d) {
            if (++idx[d] < lt->dims[d]) {
                off += lt->layout.strides[d];
                break;
            }
            off -= (idx[d] - 1) * lt->layout.strides[d];
            idx[d] = 0;
        }
    }
}

typedef struct {
    dnnl_data_type_t dt;
    const float *src;
    float *dst;
    void *buf;
    const void *cbuf;
} copy_ctx;

static void to_buf_fn(int64_t dense, int64_t off, void *vctx) {
    copy_ctx *c = vctx;
    pc_store(c->buf, c->dt, off, c->src[dense]);
}

static void from_buf_fn(int64_t dense, int64_t off, void *vctx) {
    copy_ctx *c = vctx;
    c->dst[dense] = pc_load(c->cbuf, c->dt, off);
}

void pc_values_to_buffer(const pc_lt *lt, const float *dense, void *buf) {
    copy_ctx c = {.dt = lt->data_type, .src = dense, .buf = buf};
    walk(lt, to_buf_fn, &c);
}

void pc_values_from_buffer(const pc_lt *lt, const void *buf, float *dense) {
    copy_ctx c = {.dt = lt->data_type, .dst = dense, .cbuf = buf};
    walk(lt, from_buf_fn, &c);
}

/* ---- ops computed here ---------------------------------------------------------- */

static void mulhilo(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo) {
    uint64_t p = (uint64_t)a * b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

static uint32_t philox(uint64_t i, uint64_t key64, uint64_t ctr64) {
    uint64_t x = i & ~(uint64_t)3;
    uint32_t c[4] = {(uint32_t)ctr64, (uint32_t)(ctr64 >> 32), (uint32_t)x, (uint32_t)(x >> 32)};
    uint32_t k[2] = {(uint32_t)key64, (uint32_t)(key64 >> 32)};
    for (int r = 0; r < 10; ++r) {
        uint32_t h0, l0, h1, l1;
        mulhilo(0xD2511F53u, c[0], &h0, &l0);
        mulhilo(0xCD9E8D57u, c[2], &h1, &l1);
        uint32_t n0 = h1 ^ c[1] ^ k[0], n2 = h0 ^ c[3] ^ k[1];
        c[0] = n0;
        c[1] = l1;
        c[2] = n2;
        c[3] = l0;
        if (r < 9) {
            k[0] += 0x9E3779B9u;
            k[1] += 0xBB67AE85u;
        }
    }
    return c[i & 3];
}

void pc_ref_dropout(const float *src, int64_t n, int64_t seed, int64_t offset, float p, float *dst, float *mask) {
    float inv_q = p != 1.f ? 1.f / (1.f - p) : 0.f;
    float pc = fminf(fmaxf(p, 0.f), 1.f);
    for (int64_t i = 0; i < n; ++i) {
        uint32_t r;
        if (offset != 0) {
            r = philox((uint64_t)i, (uint64_t)seed, (uint64_t)offset);
        } else {
            uint64_t u = (uint32_t)i & ~3u, w = (uint32_t)seed;
            r = philox(((u + 3) << 32) + (u + 2), (w << 32) + w, ((u + 1) << 32) + u);
        }
        int m = ((double)r > 4294967295.0 * (double)pc) ? 1 : 0;
        if (dst) dst[i] = m ? src[i] * inv_q : 0.f;
        if (mask) mask[i] = (float)m;
    }
}

/* ---- crop rules (docs/numerics.md) ------------------------------------------------ */

static long first_consumer_in_view(const pc_part_view *pv, size_t tid) {
    return pc_view_first_consumer(pv, tid, NULL);
}

/* Data type an input must be rounded to before the op runs (undef: none). */
static dnnl_data_type_t crop_input(const pc_part_view *pv, const pc_op *op, size_t i) {
    dnnl_data_type_t dt = op->in[i].data_type;
    if (!pc_dt_is_narrow(dt) || !pc_dt_is_float(dt)) return dnnl_data_type_undef;
    if (pv->sdpa_fwd && op->kind == dnnl_graph_op_softmax) return dt;
    if (pv->sdpa_bwd && op->kind == dnnl_graph_op_matmul && op->nout == 1) {
        long cons = first_consumer_in_view(pv, op->out[0].id);
        if (cons < 0 || pv->c->ops[cons].kind == dnnl_graph_op_reduce_sum) return dt;
    }
    if (pv->gated_mlp && op->kind == dnnl_graph_op_multiply && op->nout == 1) {
        long cons = first_consumer_in_view(pv, op->out[0].id);
        long prod = pc_case_producer(pv->c, op->in[i].id);
        if (cons >= 0 && pv->c->ops[cons].kind == dnnl_graph_op_matmul && prod >= 0 &&
            pc_view_has_op(pv, (size_t)prod) && pv->c->ops[prod].kind == dnnl_graph_op_matmul)
            return dt;
    }
    return dnnl_data_type_undef;
}

static dnnl_data_type_t crop_output(const pc_part_view *pv, const pc_op *op, size_t o) {
    const pc_case *c = pv->c;
    dnnl_data_type_t dt = op->out[o].data_type;
    if (pv->sdpa_fwd && op->kind == dnnl_graph_op_softmax && o == 0) {
        long cons = first_consumer_in_view(pv, op->out[0].id);
        if (cons < 0 || c->ops[cons].kind != dnnl_graph_op_type_cast) return pc_dt_is_narrow(dt) ? dt : dnnl_data_type_undef;
        const pc_op *tc = &c->ops[cons];
        if (tc->nout < 1) return dnnl_data_type_undef;
        long next = first_consumer_in_view(pv, tc->out[0].id);
        if (next < 0 || c->ops[next].kind == dnnl_graph_op_quantize) return dnnl_data_type_undef;
        return pc_dt_is_narrow(tc->out[0].data_type) ? tc->out[0].data_type : dnnl_data_type_undef;
    }
    if (!pc_dt_is_narrow(dt)) return dnnl_data_type_undef;
    if (pv->sdpa_bwd && op->kind == dnnl_graph_op_matmul && o == 0) {
        long cons = first_consumer_in_view(pv, op->out[0].id);
        if (cons >= 0 && c->ops[cons].kind == dnnl_graph_op_reduce_sum) return dt;
    }
    if (pv->gated_mlp && op->kind == dnnl_graph_op_multiply && o == 0) {
        long cons = first_consumer_in_view(pv, op->out[0].id);
        if (cons >= 0 && c->ops[cons].kind == dnnl_graph_op_matmul) return dt;
    }
    return dnnl_data_type_undef;
}

/* SDPA backward: the external statistics input of Subtract -> Exp are
 * derived from the reference scores: max + log(sum(exp(x - max))). */
static void sdpa_bwd_stats(const pc_part_view *pv, const pc_op *op, pc_values *vals) {
    if (!pv->sdpa_bwd || op->kind != dnnl_graph_op_subtract || op->nin != 2 || op->nout != 1) return;
    if (pc_view_produces(pv, op->in[1].id)) return;
    long cons = first_consumer_in_view(pv, op->out[0].id);
    if (cons < 0 || pv->c->ops[cons].kind != dnnl_graph_op_exp) return;
    pc_tval *x = pc_values_find(vals, op->in[0].id), *st = pc_values_find(vals, op->in[1].id);
    if (!x || !st || x->lt.ndims < 1) return;
    int64_t cols = x->lt.dims[x->lt.ndims - 1];
    if (cols <= 0 || x->n / cols != st->n) return;
    for (int64_t r = 0; r < st->n; ++r) {
        const float *row = x->v + r * cols;
        float m = -FLT_MAX;
        bool any = false;
        for (int64_t j = 0; j < cols; ++j)
            if (row[j] > -INFINITY) {
                any = true;
                if (row[j] > m) m = row[j];
            }
        if (!any) {
            st->v[r] = 0.f;
            continue;
        }
        float sum = 0.f;
        for (int64_t j = 0; j < cols; ++j) sum += expf(row[j] - m);
        st->v[r] = pc_round_to(st->lt.data_type, m + logf(sum));
    }
}

/* The driver's SoftMax reference runs a plain loop whose running maximum
 * starts at -FLT_MAX: a slice whose inputs are all -inf yields dst 0 and
 * stats 0 whatever the mode (docs/graph-json.md, "Reference"). */
static void softmax_masked_slices(const pc_op *op, const float *in, float **outv) {
    const pc_lt *lt = &op->in[0];
    int nd = lt->ndims;
    if (nd < 1) return;
    int64_t axis = pc_attr_s64(op, dnnl_graph_op_attr_axis, 1);
    if (axis < 0) axis += nd;
    if (axis < 0 || axis >= nd) return;
    int64_t outer = 1, inner = 1, len = lt->dims[axis];
    for (int d = 0; d < axis; ++d) outer *= lt->dims[d];
    for (int d = (int)axis + 1; d < nd; ++d) inner *= lt->dims[d];
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            bool all_masked = len > 0;
            for (int64_t a = 0; a < len && all_masked; ++a)
                if (in[(o * len + a) * inner + i] != -INFINITY) all_masked = false;
            if (!all_masked) continue;
            for (int64_t a = 0; a < len; ++a) outv[0][(o * len + a) * inner + i] = 0.f;
            if (op->nout > 1 && outv[1]) outv[1][o * inner + i] = 0.f;
        }
}

/* ---- one op through the library ------------------------------------------------------- */

static pc_lt ref_lt(const pc_lt *lt, bool keep_type) {
    pc_lt r = *lt;
    if (!keep_type && pc_dt_is_float(r.data_type)) r.data_type = dnnl_f32;
    r.property = dnnl_graph_tensor_property_undef;
    r.layout_type = dnnl_graph_layout_type_strided;
    if (pc_lt_shape_known(&r)) pc_dense_strides(r.ndims, r.dims, r.layout.strides);
    return r;
}

/* The op alone, partitioned with the debug policy: no fusion row claims it,
 * so it runs through the library's reference kernel — independent of the
 * fused kernels whose results it checks. */
static dnnl_status_t single_op_partition(dnnl_graph_op_t op, dnnl_graph_partition_t *part) {
    dnnl_graph_graph_t g = NULL;
    dnnl_status_t st = dnnl_graph_graph_create(&g, dnnl_cpu);
    size_t n = 0;
    if (st == dnnl_success) st = dnnl_graph_add_op(g, op);
    if (st == dnnl_success) st = dnnl_graph_graph_finalize(g);
    if (st == dnnl_success) st = dnnl_graph_graph_filter(g, dnnl_graph_partition_policy_debug);
    if (st == dnnl_success) st = dnnl_graph_graph_get_partition_num(g, &n);
    if (st == dnnl_success && n != 1) st = dnnl_invalid_graph;
    if (st == dnnl_success) st = dnnl_graph_graph_get_partitions(g, 1, part);
    if (g) dnnl_graph_graph_destroy(g);
    return st;
}

static int run_single(const pc_op *op, const pc_lt *rin, const pc_lt *rout, float *const *inv, float **outv,
                      dnnl_engine_t eng, dnnl_stream_t strm, char *err, size_t cap) {
    char berr[512] = "";
    int rc = -1;
    dnnl_graph_op_t dop = NULL;
    dnnl_graph_partition_t part = NULL;
    dnnl_graph_compiled_partition_t cp = NULL;
    pt_compiled *fast_kernel = NULL;
    size_t nin = op->nin, nout = op->nout;
    void **ibuf = calloc(nin + 1, sizeof *ibuf), **obuf = calloc(nout + 1, sizeof *obuf);
    dnnl_graph_tensor_t *it = calloc(nin + 1, sizeof *it), *ot = calloc(nout + 1, sizeof *ot);
    pc_lt *q = calloc(nout + 1, sizeof *q);
    const dnnl_graph_logical_tensor_t **ip = calloc(nin + 1, sizeof *ip), **opp = calloc(nout + 1, sizeof *opp);
    void *scratch = NULL;
    dnnl_graph_tensor_t st_t = NULL;
    if (!ibuf || !obuf || !it || !ot || !q || !ip || !opp) {
        pc_set_err(err, cap, "reference: out of memory");
        goto done;
    }
    dnnl_status_t st = pc_build_op(op, rin, rout, &dop, berr, sizeof berr);
    if (st != dnnl_success) {
        pc_set_err(err, cap, "reference: %s", berr);
        goto done;
    }
    st = single_op_partition(dop, &part);
    if (st != dnnl_success) {
        part = NULL;
        pc_set_err(err, cap, "reference: op %zu (%s): single-op partition failed: %s", op->id, pc_kind_name(op->kind),
                pc_status_str(st));
        goto done;
    }
    uint8_t supported = 0;
    st = dnnl_graph_partition_is_supported(part, &supported);
    if (st != dnnl_success || !supported) {
        char d0[96] = "";
        if (nin) pc_lt_describe(&rin[0], d0, sizeof d0);
        pc_set_err(err, cap, "reference: op %zu (%s, input 0 %s) is not supported as an f32 single-op partition",
                op->id, pc_kind_name(op->kind), d0);
        goto done;
    }
    st = dnnl_graph_compiled_partition_create(&cp, part);
    if (st != dnnl_success) {
        cp = NULL;
        pc_set_err(err, cap, "reference: op %zu: compiled partition creation failed: %s", op->id, pc_status_str(st));
        goto done;
    }
    for (size_t i = 0; i < nin; ++i) ip[i] = &rin[i];
    for (size_t o = 0; o < nout; ++o) opp[o] = &rout[o];
    st = dnnl_graph_partition_compile(part, cp, nin, ip, nout, opp, eng);
    if (st != dnnl_success) {
        pc_set_err(err, cap, "reference: op %zu (%s): compile failed: %s", op->id, pc_kind_name(op->kind),
                pc_status_str(st));
        goto done;
    }
    /* The oracle is the reference kernel of the op: a single-op partition's
     * fast kernel (a lone MatMul on the GEMM engine) is switched off for
     * this run and switched back at the end (the compiled partition may be
     * shared through the cache). */
    if (cp->c && cp->c->has_fused) {
        fast_kernel = cp->c;
        fast_kernel->has_fused = false;
    }
    for (size_t i = 0; i < nin; ++i) {
        size_t bytes = pc_buffer_bytes(rin[i].data_type, rin[i].ndims, rin[i].dims, rin[i].layout.strides);
        ibuf[i] = calloc(bytes ? bytes : 1, 1);
        if (!ibuf[i]) {
            pc_set_err(err, cap, "reference: out of memory");
            goto done;
        }
        pc_values_to_buffer(&rin[i], inv[i], ibuf[i]);
        st = dnnl_graph_tensor_create(&it[i], &rin[i], eng, ibuf[i]);
        if (st != dnnl_success) {
            pc_set_err(err, cap, "reference: op %zu: input tensor creation failed: %s", op->id, pc_status_str(st));
            goto done;
        }
    }
    for (size_t o = 0; o < nout; ++o) {
        st = dnnl_graph_compiled_partition_query_logical_tensor(cp, rout[o].id, &q[o]);
        if (st != dnnl_success || q[o].layout_type != dnnl_graph_layout_type_strided || !pc_lt_shape_known(&q[o])) {
            pc_set_err(err, cap, "reference: op %zu: output %zu query failed or not strided", op->id, o);
            goto done;
        }
        size_t bytes = 0;
        dnnl_graph_logical_tensor_get_mem_size(&q[o], &bytes);
        size_t mine = pc_buffer_bytes(q[o].data_type, q[o].ndims, q[o].dims, q[o].layout.strides);
        if (mine > bytes) bytes = mine;
        obuf[o] = calloc(bytes ? bytes : 1, 1);
        if (!obuf[o]) {
            pc_set_err(err, cap, "reference: out of memory");
            goto done;
        }
        st = dnnl_graph_tensor_create(&ot[o], &q[o], eng, obuf[o]);
        if (st != dnnl_success) {
            pc_set_err(err, cap, "reference: op %zu: output tensor creation failed: %s", op->id, pc_status_str(st));
            goto done;
        }
    }
    dnnl_graph_logical_tensor_t slt;
    if (dnnl_graph_compiled_partition_get_scratchpad_logical_tensor(cp, &slt) == dnnl_success && slt.ndims == 1 &&
        slt.dims[0] > 0) {
        scratch = malloc((size_t)slt.dims[0]);
        if (!scratch || dnnl_graph_tensor_create(&st_t, &slt, eng, scratch) != dnnl_success) {
            pc_set_err(err, cap, "reference: op %zu: scratchpad allocation failed", op->id);
            goto done;
        }
    }
    st = dnnl_graph_compiled_partition_execute_v2(cp, strm, nin, (const_dnnl_graph_tensor_t *)it, nout,
                                                  (const_dnnl_graph_tensor_t *)ot, st_t);
    if (st == dnnl_success) st = dnnl_stream_wait(strm);
    if (st != dnnl_success) {
        pc_set_err(err, cap, "reference: op %zu (%s): execution failed: %s", op->id, pc_kind_name(op->kind),
                pc_status_str(st));
        goto done;
    }
    for (size_t o = 0; o < nout; ++o) pc_values_from_buffer(&q[o], obuf[o], outv[o]);
    rc = 0;
done:
    if (fast_kernel) fast_kernel->has_fused = true;
    for (size_t i = 0; i < nin; ++i) {
        if (it && it[i]) dnnl_graph_tensor_destroy(it[i]);
        if (ibuf) free(ibuf[i]);
    }
    for (size_t o = 0; o < nout; ++o) {
        if (ot && ot[o]) dnnl_graph_tensor_destroy(ot[o]);
        if (obuf) free(obuf[o]);
    }
    if (st_t) dnnl_graph_tensor_destroy(st_t);
    free(scratch);
    free(ibuf);
    free(obuf);
    free(it);
    free(ot);
    free(q);
    free(ip);
    free(opp);
    dnnl_graph_compiled_partition_destroy(cp);
    dnnl_graph_partition_destroy(part);
    dnnl_graph_op_destroy(dop);
    return rc;
}

/* ---- the partition --------------------------------------------------------------------------- */

int pc_reference_run(const pc_part_view *pv, pc_values *vals, dnnl_engine_t eng, dnnl_stream_t strm, char *err,
                     size_t cap) {
    for (size_t k = 0; k < pv->n; ++k) {
        const pc_op *op = &pv->c->ops[pv->ops[k]];
        if (op->kind == dnnl_graph_op_end) continue; /* its input is compared as an output */
        if (op->kind == dnnl_graph_op_wildcard || op->kind == dnnl_graph_op_pow) {
            pc_set_err(err, cap, "reference: op %zu (%s) has no reference", op->id, pc_kind_name(op->kind));
            return -1;
        }
        sdpa_bwd_stats(pv, op, vals);
        bool keep_types = pc_kind_is(op->kind, PC_K_QUANT);
        size_t nin = op->nin, nout = op->nout;
        pc_lt *rin = calloc(nin + 1, sizeof *rin), *rout = calloc(nout + 1, sizeof *rout);
        float **inv = calloc(nin + 1, sizeof *inv), **outv = calloc(nout + 1, sizeof *outv);
        int rc = -1;
        if (!rin || !rout || !inv || !outv) {
            pc_set_err(err, cap, "reference: out of memory");
            goto next;
        }
        for (size_t i = 0; i < nin; ++i) {
            pc_tval *t = pc_values_find(vals, op->in[i].id);
            if (!t) {
                pc_set_err(err, cap, "reference: op %zu: no value for input tensor %zu", op->id, op->in[i].id);
                goto next;
            }
            rin[i] = ref_lt(&op->in[i], keep_types);
            inv[i] = malloc((size_t)(t->n ? t->n : 1) * sizeof **inv);
            if (!inv[i]) goto next;
            dnnl_data_type_t crop = crop_input(pv, op, i);
            for (int64_t e = 0; e < t->n; ++e) inv[i][e] = crop ? pc_round_to(crop, t->v[e]) : t->v[e];
        }
        for (size_t o = 0; o < nout; ++o) {
            rout[o] = ref_lt(&op->out[o], keep_types);
            int64_t n = pc_lt_nelems(&op->out[o]);
            if (n < 0) {
                pc_set_err(err, cap, "reference: op %zu: output %zu has an unknown shape", op->id, o);
                goto next;
            }
            outv[o] = calloc((size_t)(n ? n : 1), sizeof **outv);
            if (!outv[o]) goto next;
        }
        int64_t n0 = nin ? pc_lt_nelems(&op->in[0]) : 0;
        bool own = ((op->kind == dnnl_graph_op_type_cast || op->kind == dnnl_graph_op_reciprocal) && nout == 1) ||
                   (op->kind == dnnl_graph_op_dropout && nin == 4);
        bool same = true; /* the ops computed here map input elements to output elements one to one */
        for (size_t o = 0; own && o < nout && o < 2; ++o) same = same && pc_lt_nelems(&op->out[o]) == n0;
        if (own && (n0 < 0 || !same)) {
            pc_set_err(err, cap, "reference: op %zu (%s): outputs must have as many elements as input 0", op->id,
                       pc_kind_name(op->kind));
            goto next;
        }
        if (op->kind == dnnl_graph_op_type_cast && nout == 1) {
            /* The reference does not round at casts (docs/graph-json.md). */
            memcpy(outv[0], inv[0], (size_t)n0 * sizeof **outv);
        } else if (op->kind == dnnl_graph_op_reciprocal && nout == 1) {
            for (int64_t e = 0; e < n0; ++e) outv[0][e] = 1.f / inv[0][e];
        } else if (op->kind == dnnl_graph_op_dropout && nin == 4) {
            pc_ref_dropout(inv[0], n0, (int64_t)inv[1][0], (int64_t)inv[2][0], inv[3][0], outv[0],
                           nout > 1 ? outv[1] : NULL);
        } else if (run_single(op, rin, rout, inv, outv, eng, strm, err, cap)) {
            goto next;
        } else if (op->kind == dnnl_graph_op_softmax && nin == 1) {
            softmax_masked_slices(op, inv[0], outv);
        }
        for (size_t o = 0; o < nout; ++o) {
            pc_tval *t = pc_values_put(vals, &op->out[o]);
            if (!t) {
                pc_set_err(err, cap, "reference: out of memory");
                goto next;
            }
            dnnl_data_type_t crop = crop_output(pv, op, o);
            for (int64_t e = 0; e < t->n; ++e) t->v[e] = crop ? pc_round_to(crop, outv[o][e]) : outv[o][e];
        }
        rc = 0;
    next:
        for (size_t i = 0; inv && i < nin; ++i) free(inv[i]);
        for (size_t o = 0; outv && o < nout; ++o) free(outv[o]);
        free(inv);
        free(outv);
        free(rin);
        free(rout);
        if (rc) {
            if (err && !err[0]) pc_set_err(err, cap, "reference: out of memory");
            return -1;
        }
    }
    return 0;
}
