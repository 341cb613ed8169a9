/* Fused chain partitions without a compute anchor (see chain_post_ops.h).
 *
 * Every pass over a tensor walks an iteration space in runs of at most
 * CH_RUN elements along its last dim; the runs are split among threads.
 * Scratch layout (exact, reported as the partition's scratchpad size): the
 * bindings of the programs, the f32 buffers (prologue results the anchor
 * reads, the anchor output, secondary anchor outputs that are not ports),
 * then one block per thread (run, Dropout mask and program temporaries). */
#include "kernels/fused/chain_post_ops.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ir/dtype.h"
#include "kernels/fused/postops.h"
#include "kernels/ref/philox.h"
#include "kernels/ref/ref_common.h"
#include "ops/op_schema.h"

#define CH_MAXD DNNL_MAX_NDIMS
#define CH_MAXP 64           /* ports of one op (compile.c's limit too) */
#define CH_RUN 512           /* elements per program run */
#define CH_PAR_ELEMS 16384   /* below this a pass runs on one thread */

/* An iteration space walked in runs along its last dim. */
typedef struct {
    int ndims;
    int64_t dims[CH_MAXD];
    int64_t inner, outer, chunks; /* last dim, product of the others, runs per row */
} ch_space;

/* An anchor input: a partition port handed to the kernel as it is, or the
 * result of a prologue program written into f32 memory. */
typedef struct {
    pt_postops *prog; /* NULL: port `port`, or the buffer of input `share` */
    int port;
    int share;        /* >= 0: the same tensor as anchor input `share` */
    ch_space sp;
    size_t bound_off;
    size_t buf_off;   /* its dense f32 buffer */
    int64_t cat_off;  /* Concat: its first index along the axis */
    pt_lt lt;         /* the anchor's view of it (f32, dense) */
} ch_input;

/* An anchor output other than the one the epilogue reads. */
typedef struct {
    int port;       /* partition output, or -1: a scratch buffer */
    size_t buf_off;
    pt_lt lt;       /* scratch: dense, declared type */
} ch_aux;

typedef struct {
    /* anchor (NULL: a pure element-wise chain) */
    pt_op *anchor;
    pt_kernel_fn kernel; /* NULL for Concat */
    int cat_axis;
    ch_input *ain;
    size_t nain;
    ch_aux *aux; /* anchor outputs 1.. */
    size_t naux;
    bool direct; /* the anchor writes the partition output itself */
    size_t abuf_off;
    pt_lt abuf_lt; /* the anchor output as an f32 dense view */
    bool round_anchor;
    /* the epilogue (the whole chain when there is no anchor) */
    pt_postops *epi;
    size_t epi_bound_off;
    ch_space sp; /* the main output's dims */
    int main_out;
    /* Dropout tail */
    bool dropout;
    int drop_port[3]; /* seed, offset, probability */
    int mask_out;     /* -1: no mask port */
    /* scratch */
    size_t nin, nout;
    int nthr;
    size_t shared_bytes, thread_bytes;
} ch_state;

typedef struct {
    float *run, *mask, *tmp;
} ch_thread;

static size_t align64(size_t v) { return (v + 63) / 64 * 64; }

static pt_status unimpl(const char *what) { return pt_err(dnnl_unimplemented, "chain_post_ops: %s", what); }

/* ---- iteration spaces ------------------------------------------------------ */

static void space_init(ch_space *sp, int ndims, const int64_t *dims) {
    sp->ndims = ndims;
    memcpy(sp->dims, dims, sizeof(int64_t) * (size_t)ndims);
    sp->inner = ndims ? dims[ndims - 1] : 1;
    sp->outer = 1;
    for (int d = 0; d + 1 < ndims; ++d) sp->outer *= dims[d];
    sp->chunks = (sp->inner + CH_RUN - 1) / CH_RUN;
}

static int64_t space_units(const ch_space *sp) { return sp->outer * sp->chunks; }

/* Start of run `u`: its logical index, row (linear over all dims but the
 * last), first element along the last dim, and length. */
static void space_run(const ch_space *sp, int64_t u, int64_t *idx, int64_t *row, int64_t *i0, int64_t *n) {
    int64_t r = u / sp->chunks, c = u % sp->chunks;
    *row = r;
    *i0 = c * CH_RUN;
    *n = sp->inner - *i0 < CH_RUN ? sp->inner - *i0 : CH_RUN;
    for (int d = sp->ndims - 2; d >= 0; --d) {
        idx[d] = r % sp->dims[d];
        r /= sp->dims[d];
    }
    if (sp->ndims) idx[sp->ndims - 1] = *i0;
}

static int64_t strided_off(int ndims, const int64_t *idx, const int64_t *strides) {
    int64_t off = 0;
    for (int d = 0; d < ndims; ++d) off += idx[d] * strides[d];
    return off;
}

/* Threads for a pass over `elems` elements split into `units` runs. */
static int pass_threads(const ch_state *s, const pt_exec_ctx *ctx, int64_t elems, int64_t units) {
    int nt = pt_ref_threads(ctx);
    if (nt > s->nthr) nt = s->nthr;
    if (elems < CH_PAR_ELEMS) nt = 1;
    if ((int64_t)nt > units) nt = (int)(units > 0 ? units : 1);
    return nt > 0 ? nt : 1;
}

static int thread_id(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static ch_thread thread_bufs(const ch_state *s, char *tbase, int tid) {
    float *b = (float *)(tbase + (size_t)tid * s->thread_bytes);
    ch_thread t = {b, b + CH_RUN, b + 2 * CH_RUN};
    return t;
}

/* ---- run -------------------------------------------------------------------- */

/* Writes the result of a program with no src over `sp` into a dense f32
 * buffer. */
static void fill_input(const ch_state *s, const void *bound, const ch_space *sp, float *buf, char *tbase,
                       const pt_exec_ctx *ctx) {
    const int64_t units = space_units(sp);
    const int nt = pass_threads(s, ctx, sp->outer * sp->inner, units);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        ch_thread t = thread_bufs(s, tbase, thread_id());
#pragma omp for schedule(static)
        for (int64_t u = 0; u < units; ++u) {
            int64_t idx[CH_MAXD], row, i0, n;
            space_run(sp, u, idx, &row, &i0, &n);
            pt_postops_apply(bound, buf + row * sp->inner + i0, n, idx, t.tmp);
        }
    }
}

static void round_buffer(const ch_state *s, dnnl_data_type_t dt, float *buf, int64_t n, const pt_exec_ctx *ctx) {
    const int64_t chunk = 4096, nchunks = (n + chunk - 1) / chunk;
    const int nt = pass_threads(s, ctx, n, nchunks);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t c = 0; c < nchunks; ++c) {
        int64_t b = c * chunk, e = b + chunk < n ? b + chunk : n;
        pt_run_round(dt, buf + b, e - b);
    }
}

/* A one-element integer tensor (Dropout seed / offset). */
static bool read_i64(const pt_tview *t, int64_t *v) {
    if (!t->data || pt_lt_nelems(&t->lt) != 1) return false;
    switch ((int)t->lt.data_type) {
        case dnnl_s64: memcpy(v, t->data, sizeof *v); return true;
        case dnnl_s32: {
            int32_t x;
            memcpy(&x, t->data, sizeof x);
            *v = x;
            return true;
        }
        default:
            if (pt_dt_bits(t->lt.data_type) == 0) return false;
            *v = pt_f64_to_s64(pt_load_f64(t->data, t->lt.data_type, 0));
            return true;
    }
}

/* What the last step of every run needs: the epilogue binding, Dropout
 * constants, the output and mask views. */
typedef struct {
    const void *bound;
    bool dropout;
    pt_dropout_consts dc;
    int64_t seed, offset;
    const pt_tview *ov, *mv;
    int64_t ols, mls;
} ch_tail;

static pt_status tail_init(const ch_state *s, const pt_tview *in, const pt_tview *out, char *base, ch_tail *t) {
    memset(t, 0, sizeof *t);
    t->bound = base + s->epi_bound_off;
    t->dropout = s->dropout;
    if (s->dropout) {
        const pt_tview *p = &in[s->drop_port[2]];
        if (!read_i64(&in[s->drop_port[0]], &t->seed) || !read_i64(&in[s->drop_port[1]], &t->offset))
            return pt_err(dnnl_invalid_arguments, "chain_post_ops: Dropout seed and offset must be one-element tensors");
        if (!p->data || pt_lt_nelems(&p->lt) != 1 || pt_dt_bits(p->lt.data_type) == 0)
            return pt_err(dnnl_invalid_arguments, "chain_post_ops: Dropout probability must be a one-element tensor");
        t->dc = pt_dropout_prepare(pt_load_f32(p->data, p->lt.data_type, 0));
    }
    const int r = s->sp.ndims;
    t->ov = &out[s->main_out];
    t->mv = s->mask_out >= 0 && out[s->mask_out].data ? &out[s->mask_out] : NULL;
    t->ols = r ? t->ov->lt.layout.strides[r - 1] : 1;
    t->mls = t->mv && r ? t->mv->lt.layout.strides[r - 1] : 1;
    return dnnl_success;
}

/* Epilogue program, Dropout and store for the run of n elements at output
 * index idx (row-major position lin0); x holds the src values, if any. */
static void finish_run(const ch_state *s, const ch_tail *c, float *x, int64_t n, const int64_t *idx, int64_t lin0,
                       const ch_thread *t) {
    const int r = s->sp.ndims;
    pt_postops_apply(c->bound, x, n, idx, t->tmp);
    if (c->dropout) {
        for (int64_t e = 0; e < n; ++e) {
            bool keep = pt_dropout_keep(&c->dc, (uint64_t)(lin0 + e), c->seed, c->offset);
            x[e] = keep ? x[e] * c->dc.inv_q : 0.f;
            t->mask[e] = keep ? 1.f : 0.f;
        }
        if (c->mv)
            pt_run_store(c->mv->data, c->mv->lt.data_type, strided_off(r, idx, c->mv->lt.layout.strides), c->mls,
                         t->mask, n);
    }
    pt_run_store(c->ov->data, c->ov->lt.data_type, strided_off(r, idx, c->ov->lt.layout.strides), c->ols, x, n);
}

/* Runs the anchor: prologue programs, then its reference kernel. */
static pt_status run_anchor(const ch_state *s, const pt_tview *in, const pt_tview *out, char *base, char *tbase,
                            const pt_exec_ctx *ctx) {
    pt_tview vin[CH_MAXP], vout[CH_MAXP];
    for (size_t k = 0; k < s->nain; ++k) {
        const ch_input *a = &s->ain[k];
        if (a->prog) fill_input(s, base + a->bound_off, &a->sp, (float *)(base + a->buf_off), tbase, ctx);
        if (a->prog || a->share >= 0) {
            vin[k].lt = a->lt;
            vin[k].data = base + a->buf_off;
        } else {
            vin[k] = in[a->port];
        }
    }
    if (s->direct) {
        vout[0] = out[s->main_out];
    } else {
        vout[0].lt = s->abuf_lt;
        vout[0].data = base + s->abuf_off;
    }
    for (size_t m = 0; m < s->naux; ++m) {
        const ch_aux *x = &s->aux[m];
        if (x->port >= 0) {
            vout[m + 1] = out[x->port];
        } else {
            vout[m + 1].lt = x->lt;
            vout[m + 1].data = base + x->buf_off;
        }
    }
    return s->kernel(s->anchor, vin, s->nain, vout, s->naux + 1, ctx);
}

/* The epilogue (or the whole chain) over the main output's space. */
static pt_status run_epilogue(const ch_state *s, const pt_tview *in, const pt_tview *out, char *base, char *tbase,
                              const pt_exec_ctx *ctx) {
    ch_tail c;
    PT_CHECK(tail_init(s, in, out, base, &c));
    const ch_space *sp = &s->sp;
    float *abuf = s->anchor ? (float *)(base + s->abuf_off) : NULL;
    const int64_t units = space_units(sp);
    const int nt = pass_threads(s, ctx, sp->outer * sp->inner, units);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        ch_thread t = thread_bufs(s, tbase, thread_id());
#pragma omp for schedule(static)
        for (int64_t u = 0; u < units; ++u) {
            int64_t idx[CH_MAXD], row, i0, n;
            space_run(sp, u, idx, &row, &i0, &n);
            /* The anchor output is dense over these dims (up to leading 1s). */
            float *x = abuf ? abuf + row * sp->inner + i0 : t.run;
            finish_run(s, &c, x, n, idx, row * sp->inner + i0, &t);
        }
    }
    return dnnl_success;
}

/* Concat: each input's runs go through its prologue program, then straight
 * through the epilogue at their place in the output; no buffer. */
static pt_status run_concat(const ch_state *s, const pt_tview *in, const pt_tview *out, char *base, char *tbase,
                            const pt_exec_ctx *ctx) {
    ch_tail c;
    PT_CHECK(tail_init(s, in, out, base, &c));
    const int r = s->sp.ndims, lead = s->sp.ndims - s->abuf_lt.ndims;
    const dnnl_data_type_t cdt = s->anchor->out[0].data_type;
    int64_t dense[CH_MAXD];
    pt_dense_strides(r, s->sp.dims, dense);
    for (size_t k = 0; k < s->nain; ++k) {
        const ch_input *a = &s->ain[k];
        const ch_space *sp = &a->sp;
        const void *bound = base + a->bound_off;
        const int64_t units = space_units(sp);
        const int nt = pass_threads(s, ctx, sp->outer * sp->inner, units);
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            ch_thread t = thread_bufs(s, tbase, thread_id());
#pragma omp for schedule(static)
            for (int64_t u = 0; u < units; ++u) {
                int64_t idx[CH_MAXD], oidx[CH_MAXD] = {0}, row, i0, n;
                space_run(sp, u, idx, &row, &i0, &n);
                pt_postops_apply(bound, t.run, n, idx, t.tmp);
                if (s->round_anchor) pt_run_round(cdt, t.run, n);
                for (int d = 0; d < sp->ndims; ++d) oidx[lead + d] = idx[d];
                oidx[lead + s->cat_axis] += a->cat_off;
                finish_run(s, &c, t.run, n, oidx, strided_off(r, oidx, dense), &t);
            }
        }
    }
    return dnnl_success;
}

static pt_status ch_run(const pt_fused *f, const pt_tview *in, size_t nin, const pt_tview *out, size_t nout,
                        void *scratch, const pt_exec_ctx *ctx) {
    const ch_state *s = f->state;
    if (nin < s->nin || nout < s->nout)
        return pt_err(dnnl_invalid_arguments, "chain_post_ops: %zu inputs / %zu outputs bound, %zu / %zu expected",
                      nin, nout, s->nin, s->nout);
    if (!scratch) return pt_err(dnnl_invalid_arguments, "chain_post_ops: no scratchpad");
    char *base = scratch, *tbase = base + s->shared_bytes;
    for (size_t k = 0; k < s->nain; ++k)
        if (s->ain[k].prog) PT_CHECK(pt_postops_bind(s->ain[k].prog, in, nin, base + s->ain[k].bound_off));
    if (s->epi) PT_CHECK(pt_postops_bind(s->epi, in, nin, base + s->epi_bound_off));
    if (s->anchor && !s->kernel) return run_concat(s, in, out, base, tbase, ctx);
    if (s->anchor) {
        PT_CHECK(run_anchor(s, in, out, base, tbase, ctx));
        if (s->direct) return dnnl_success;
        if (s->round_anchor)
            round_buffer(s, s->anchor->out[0].data_type, (float *)(base + s->abuf_off), pt_lt_nelems(&s->abuf_lt),
                         ctx);
    }
    return run_epilogue(s, in, out, base, tbase, ctx);
}

static void ch_free_state(ch_state *s) {
    if (!s) return;
    for (size_t k = 0; k < s->nain; ++k) pt_postops_destroy(s->ain[k].prog);
    free(s->ain);
    free(s->aux);
    pt_postops_destroy(s->epi);
    if (s->anchor) pt_op_free(s->anchor);
    free(s);
}

static void ch_release(pt_fused *f) {
    ch_free_state(f->state);
    f->state = NULL;
}

/* ---- prepare ------------------------------------------------------------------ */

/* Ops the element-wise programs compile (postops.h); a Reorder has been
 * turned into a TypeCast before this is asked. */
static bool is_elementwise(int k) {
    return pt_op_is_unary_eltwise(k) || pt_op_is_binary_eltwise(k) || k == dnnl_graph_op_bias_add ||
           k == dnnl_graph_op_select || k == dnnl_graph_op_type_cast || k == dnnl_graph_op_quantize ||
           k == dnnl_graph_op_dequantize || k == dnnl_graph_op_dynamic_quantize ||
           k == dnnl_graph_op_dynamic_dequantize || k == dnnl_graph_op_batch_norm_inference;
}

/* Types whose values an f32 buffer holds exactly. */
static bool f32_exact(dnnl_data_type_t dt) {
    switch ((int)dt) {
        case dnnl_f32: case dnnl_bf16: case dnnl_f16: case dnnl_s8: case dnnl_u8:
        case dnnl_f8_e4m3: case dnnl_f8_e5m2: return true;
        default: return false;
    }
}

static bool is_float(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16; }

static bool lt_known(const pt_lt *lt) {
    if (lt->ndims < 0 || lt->ndims > CH_MAXD) return false;
    for (int d = 0; d < lt->ndims; ++d)
        if (lt->dims[d] < 0) return false;
    return true;
}

static bool same_dims(const pt_lt *a, const pt_lt *b) {
    if (a->ndims != b->ndims) return false;
    for (int d = 0; d < a->ndims; ++d)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

static int find_port(const pt_lt *ports, size_t n, size_t id) {
    for (size_t i = 0; i < n; ++i)
        if (ports[i].id == id) return (int)i;
    return -1;
}

static int producer_of(const pt_op *const *ops, size_t nops, size_t id) {
    for (size_t i = 0; i < nops; ++i)
        for (size_t k = 0; k < ops[i]->nout; ++k)
            if (ops[i]->out[k].id == id) return (int)i;
    return -1;
}

/* Marks every op before `limit` that tensor `id` depends on. */
static void mark_ancestors(const pt_op *const *ops, size_t nops, size_t id, int limit, bool *mark) {
    int p = producer_of(ops, nops, id);
    if (p < 0 || p >= limit || mark[p]) return;
    mark[p] = true;
    for (size_t k = 0; k < ops[p]->nin; ++k) mark_ancestors(ops, nops, ops[p]->in[k].id, limit, mark);
}

/* Working copy of the op list: Reorders become TypeCasts. */
typedef struct {
    const pt_op **ops;
    pt_op **clones;
    size_t nclones;
    bool *mark; /* ops of one anchor input's prologue */
    bool *pro;  /* ops of any prologue */
    const pt_op **list;
} ch_work;

static void work_free(ch_work *w) {
    for (size_t i = 0; i < w->nclones; ++i) pt_op_free(w->clones[i]);
    free(w->clones);
    free(w->ops);
    free(w->mark);
    free(w->pro);
    free(w->list);
}

/* Prologue program of anchor input k over its own dims. */
static pt_status make_input(ch_state *s, ch_work *w, size_t nops, int ai, size_t k, const pt_lt *in, size_t nin,
                            bool concat) {
    const pt_op *anchor = w->ops[ai];
    const pt_lt *lt = &anchor->in[k];
    ch_input *a = &s->ain[k];
    a->share = -1;
    a->port = -1;
    if (!lt_known(lt)) return unimpl("an anchor input of unknown shape");
    space_init(&a->sp, lt->ndims, lt->dims);
    int p = producer_of(w->ops, nops, lt->id);
    if (p >= ai) return unimpl("an anchor input produced after the anchor");
    if (!concat) {
        for (size_t j = 0; j < k; ++j)
            if (anchor->in[j].id == lt->id && (s->ain[j].prog || s->ain[j].share >= 0)) {
                a->share = s->ain[j].share >= 0 ? s->ain[j].share : (int)j;
                a->lt = s->ain[a->share].lt;
                a->buf_off = 0; /* resolved by plan() */
                return dnnl_success;
            }
        if (p < 0) {
            a->port = find_port(in, nin, lt->id);
            if (a->port < 0) return unimpl("an anchor input that is neither a port nor computed");
            return dnnl_success;
        }
        if (!is_float(lt->data_type)) return unimpl("a computed anchor input that is not f32/bf16/f16");
    } else if (!f32_exact(lt->data_type)) {
        return unimpl("a Concat input type an f32 buffer does not hold");
    }
    memset(w->mark, 0, nops * sizeof *w->mark);
    if (p >= 0) mark_ancestors(w->ops, nops, lt->id, ai, w->mark);
    size_t n = 0;
    for (size_t i = 0; i < nops; ++i)
        if (w->mark[i]) {
            w->list[n++] = w->ops[i];
            w->pro[i] = true;
        }
    /* The prologue result is an intermediate: rounded to an integer / f8
     * type, kept in f32 for bf16 / f16 (§18.2). */
    pt_postops_desc d = {.ops = w->list, .nops = n, .has_src = false, .ndims = lt->ndims, .dims = lt->dims,
                         .result_id = lt->id, .round_result = true, .round_floats = false, .in = in, .nin = nin};
    PT_CHECK(pt_postops_create(&d, &a->prog));
    a->lt = *lt;
    a->lt.data_type = dnnl_f32;
    a->lt.layout_type = dnnl_graph_layout_type_strided;
    pt_dense_strides(lt->ndims, lt->dims, a->lt.layout.strides);
    return dnnl_success;
}

/* Concat: where each input starts along the axis. */
static pt_status place_concat(ch_state *s) {
    const pt_op *cat = s->anchor;
    const pt_lt *y = &cat->out[0];
    int r = y->ndims;
    int64_t ax = pt_op_s64(cat, dnnl_graph_op_attr_axis, 0);
    if (ax < 0) ax += r;
    if (r < 1 || ax < 0 || ax >= r) return unimpl("a Concat axis out of range");
    int64_t off = 0;
    for (size_t k = 0; k < s->nain; ++k) {
        const pt_lt *x = &cat->in[k];
        if (x->ndims != r) return unimpl("Concat inputs of another rank");
        for (int d = 0; d < r; ++d)
            if (d != ax && x->dims[d] != y->dims[d]) return unimpl("Concat inputs that do not fit the output");
        s->ain[k].cat_off = off;
        off += x->dims[ax];
    }
    if (off != y->dims[ax]) return unimpl("Concat inputs that do not add up to the output");
    s->cat_axis = (int)ax;
    return dnnl_success;
}

static pt_status plan(ch_state *s) {
    size_t tmp = 0, off = 0;
    for (size_t k = 0; k < s->nain; ++k) {
        ch_input *a = &s->ain[k];
        if (!a->prog) continue;
        a->bound_off = off;
        off = align64(off + pt_postops_bound_bytes(a->prog));
        size_t t = pt_postops_tmp_floats(a->prog, CH_RUN);
        if (t > tmp) tmp = t;
    }
    if (s->epi) {
        s->epi_bound_off = off;
        off = align64(off + pt_postops_bound_bytes(s->epi));
        size_t t = pt_postops_tmp_floats(s->epi, CH_RUN);
        if (t > tmp) tmp = t;
    }
    const bool concat = s->anchor && !s->kernel;
    if (s->anchor && !s->direct && !concat) {
        s->abuf_off = off;
        off = align64(off + (size_t)pt_lt_nelems(&s->abuf_lt) * sizeof(float));
    }
    for (size_t k = 0; k < s->nain; ++k) {
        ch_input *a = &s->ain[k];
        if (a->prog && !concat) {
            a->buf_off = off;
            off = align64(off + (size_t)pt_lt_nelems(&a->lt) * sizeof(float));
        }
    }
    for (size_t k = 0; k < s->nain; ++k)
        if (s->ain[k].share >= 0) s->ain[k].buf_off = s->ain[s->ain[k].share].buf_off;
    for (size_t m = 0; m < s->naux; ++m) {
        ch_aux *x = &s->aux[m];
        if (x->port >= 0) continue;
        size_t bytes = pt_lt_mem_size(&x->lt);
        if (bytes == SIZE_MAX) return unimpl("a secondary anchor output of unknown size");
        x->buf_off = off;
        off = align64(off + bytes);
    }
    int nthr = 1;
#ifdef _OPENMP
    nthr = omp_get_max_threads();
#endif
    s->nthr = nthr > 0 ? nthr : 1;
    s->shared_bytes = off;
    s->thread_bytes = align64((2 * CH_RUN + tmp) * sizeof(float));
    return dnnl_success;
}

static pt_status prepare_impl(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin, const pt_lt *out,
                              size_t nout, ch_state *s, ch_work *w) {
    s->nin = nin;
    s->nout = nout;
    s->main_out = -1;
    s->mask_out = -1;
    /* Working list: a Reorder is a TypeCast to the same type (only the
     * layout changes, and every store uses the destination's strides). */
    for (size_t i = 0; i < nops; ++i) {
        w->ops[i] = ops[i];
        if (ops[i]->kind != dnnl_graph_op_reorder) continue;
        if (ops[i]->nin != 1 || ops[i]->nout != 1) return unimpl("a Reorder with unexpected ports");
        pt_op *c = pt_op_clone(ops[i]);
        if (!c) return dnnl_out_of_memory;
        c->kind = dnnl_graph_op_type_cast;
        w->clones[w->nclones++] = c;
        w->ops[i] = c;
    }
    /* Dropout as the last op: applied after the program. */
    size_t n = nops;
    const pt_op *drop = NULL;
    if (w->ops[nops - 1]->kind == dnnl_graph_op_dropout) {
        drop = w->ops[nops - 1];
        if (drop->nin != 4 || drop->nout < 1 || drop->nout > 2) return unimpl("a Dropout with unexpected ports");
        for (int j = 0; j < 3; ++j) {
            size_t id = drop->in[j + 1].id;
            s->drop_port[j] = find_port(in, nin, id);
            if (s->drop_port[j] < 0 || producer_of(w->ops, nops, id) >= 0)
                return unimpl("Dropout parameters computed inside the partition");
        }
        s->dropout = true;
        n = nops - 1;
    }
    /* The anchor: the one op the programs cannot run. */
    int ai = -1;
    for (size_t i = 0; i < n; ++i) {
        if (is_elementwise(w->ops[i]->kind)) continue;
        if (ai >= 0) return unimpl("more than one op that is not element-wise");
        ai = (int)i;
    }
    const pt_op *anchor = ai >= 0 ? w->ops[ai] : NULL;
    if (anchor && (anchor->nin > CH_MAXP || anchor->nout > CH_MAXP || anchor->nout < 1))
        return unimpl("an anchor with unexpected ports");
    /* Outputs: the main one, secondary anchor outputs, the Dropout mask. */
    if (anchor) {
        s->naux = anchor->nout - 1;
        s->aux = calloc(s->naux ? s->naux : 1, sizeof *s->aux);
        if (!s->aux) return dnnl_out_of_memory;
        for (size_t m = 0; m < s->naux; ++m) s->aux[m].port = -1;
    }
    for (size_t j = 0; j < nout; ++j) {
        size_t id = out[j].id;
        if (drop && drop->nout > 1 && drop->out[1].id == id) {
            s->mask_out = (int)j;
            continue;
        }
        bool aux = false;
        for (size_t m = 1; anchor && m < anchor->nout; ++m)
            if (anchor->out[m].id == id) {
                s->aux[m - 1].port = (int)j;
                aux = true;
            }
        if (aux) continue;
        if (s->main_out >= 0) return unimpl("several outputs computed by the chain");
        s->main_out = (int)j;
    }
    if (s->main_out < 0) return unimpl("no main output");
    const pt_lt *y = &out[s->main_out];
    if (!lt_known(y) || y->layout_type != dnnl_graph_layout_type_strided)
        return unimpl("an output of unknown shape or layout");
    if (drop && drop->out[0].id != y->id) return unimpl("a Dropout that does not make the output");
    if (s->mask_out >= 0 && !same_dims(&out[s->mask_out], y)) return unimpl("a Dropout mask of another shape");
    space_init(&s->sp, y->ndims, y->dims);

    const size_t result_id = drop ? drop->in[0].id : y->id;
    if (anchor) {
        const bool concat = anchor->kind == dnnl_graph_op_concat;
        s->kernel = concat ? NULL : pt_ref_kernel(anchor->kind);
        if (!concat && !s->kernel) return unimpl("an anchor without a reference kernel");
        s->anchor = pt_op_clone(anchor);
        if (!s->anchor) return dnnl_out_of_memory;
        const pt_lt *ay = &anchor->out[0];
        if (!lt_known(ay)) return unimpl("an anchor output of unknown shape");
        for (size_t m = 0; m < s->naux; ++m) {
            ch_aux *x = &s->aux[m];
            if (x->port >= 0) continue;
            x->lt = anchor->out[m + 1];
            if (!lt_known(&x->lt) || pt_dt_bits(x->lt.data_type) == 0)
                return unimpl("a secondary anchor output of unknown shape");
            pt_lt_make_dense(&x->lt);
        }
        /* Concat always goes through the buffer, stored by the epilogue. */
        s->direct = ay->id == result_id && !drop && !concat;
        if (concat && s->naux) return unimpl("a Concat with several outputs");
        if (!s->direct) {
            if (!f32_exact(ay->data_type)) return unimpl("an anchor output type an f32 buffer does not hold");
            s->round_anchor = !is_float(ay->data_type);
        }
        s->abuf_lt = *ay;
        s->abuf_lt.data_type = dnnl_f32;
        s->abuf_lt.layout_type = dnnl_graph_layout_type_strided;
        pt_dense_strides(ay->ndims, ay->dims, s->abuf_lt.layout.strides);
        s->nain = anchor->nin;
        s->ain = calloc(s->nain ? s->nain : 1, sizeof *s->ain);
        if (!s->ain) return dnnl_out_of_memory;
        for (size_t k = 0; k < s->nain; ++k) PT_CHECK(make_input(s, w, nops, ai, k, in, nin, concat));
        if (concat) PT_CHECK(place_concat(s));
    }
    /* Epilogue: every op that is neither prologue nor anchor. */
    size_t ne = 0;
    for (size_t i = 0; i < n; ++i)
        if ((int)i != ai && !w->pro[i]) w->list[ne++] = w->ops[i];
    if (anchor && s->direct) {
        if (ne) return unimpl("ops after an anchor whose output is the partition's");
    } else {
        const pt_lt *ay = anchor ? &anchor->out[0] : NULL;
        if (ay && ay->id == result_id && ne) return unimpl("ops that do not feed the output");
        pt_postops_desc d = {.ops = w->list, .nops = ne, .has_src = anchor != NULL, .ndims = y->ndims,
                             .dims = y->dims, .result_id = result_id, .round_result = drop != NULL,
                             .round_floats = false, .in = in, .nin = nin};
        if (ay) {
            d.src_id = ay->id;
            d.src_dt = ay->data_type;
            d.src_ndims = ay->ndims;
            d.src_dims = ay->dims;
        }
        PT_CHECK(pt_postops_create(&d, &s->epi));
        if (!drop && pt_postops_result_dt(s->epi) != y->data_type)
            return unimpl("an output type that differs from the chain's");
    }
    return plan(s);
}

pt_status pt_prepare_chain_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                    const pt_lt *out, size_t nout, pt_fused *fused) {
    if (!ops || !nops || !fused || nout < 1) return unimpl("an empty partition");
    ch_state *s = calloc(1, sizeof *s);
    ch_work w = {0};
    w.ops = calloc(nops, sizeof *w.ops);
    w.clones = calloc(nops, sizeof *w.clones);
    w.mark = calloc(nops, sizeof *w.mark);
    w.pro = calloc(nops, sizeof *w.pro);
    w.list = calloc(nops, sizeof *w.list);
    pt_status st = dnnl_out_of_memory;
    if (s && w.ops && w.clones && w.mark && w.pro && w.list) st = prepare_impl(ops, nops, in, nin, out, nout, s, &w);
    work_free(&w);
    if (st != dnnl_success) {
        ch_free_state(s);
        return st;
    }
    fused->run = ch_run;
    fused->release = ch_release;
    fused->state = s;
    fused->scratch_bytes = s->shared_bytes + (size_t)s->nthr * s->thread_bytes;
    pt_verbose(2, "info,fused,chain_post_ops,%zu ops,anchor %s%s", nops,
               s->anchor ? pt_op_kind_name(s->anchor->kind) : "none", s->dropout ? ",dropout" : "");
    return dnnl_success;
}
