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

typedef pt_ch_space ch_space;
typedef pt_ch_input ch_input;
typedef pt_ch_aux ch_aux;
typedef pt_ch_state ch_state;

typedef struct {
    float *run, *mask, *tmp;
} ch_thread;

static size_t align64(size_t v) { return (v + 63) / 64 * 64; }

static pt_status unimpl(const char *what) { return pt_err(dnnl_unimplemented, "chain_post_ops: %s", what); }

/* ---- iteration spaces ------------------------------------------------------ */

void pt_ch_space_init(ch_space *sp, int ndims, const int64_t *dims) {
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


static ch_thread thread_bufs(const ch_state *s, char *tbase, int tid) {
    float *b = (float *)(tbase + (size_t)tid * s->thread_bytes);
    ch_thread t = {b, b + CH_RUN, b + 2 * CH_RUN};
    return t;
}

/* ---- run -------------------------------------------------------------------- */

/* Writes the result of a program with no src over `sp` into a dense f32
 * buffer. */
/* One run of a pass: `row` is its linear row over all dims but the last,
 * i0 its first element along the last dim. */
typedef struct {
    const int64_t *idx;
    int64_t row, i0, n;
} ch_run_pos;

typedef void (*ch_run_fn)(const void *arg, const ch_space *sp, const ch_run_pos *r, const ch_thread *t);

/* Calls fn for every run of `sp`, the runs split among threads. */
static void for_runs(const ch_state *s, const ch_space *sp, char *tbase, const pt_exec_ctx *ctx, ch_run_fn fn,
                     const void *arg) {
    const int64_t units = space_units(sp);
    const int nt = pass_threads(s, ctx, sp->outer * sp->inner, units);
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        ch_thread t = thread_bufs(s, tbase, pt_thread_id());
#pragma omp for schedule(static)
        for (int64_t u = 0; u < units; ++u) {
            int64_t idx[CH_MAXD];
            ch_run_pos r = {idx, 0, 0, 0};
            space_run(sp, u, idx, &r.row, &r.i0, &r.n);
            fn(arg, sp, &r, &t);
        }
    }
}

typedef struct {
    const void *bound;
    float *buf;
} ch_fill;

static void fill_run(const void *arg, const ch_space *sp, const ch_run_pos *r, const ch_thread *t) {
    const ch_fill *f = arg;
    pt_postops_apply(f->bound, f->buf + r->row * sp->inner + r->i0, r->n, r->idx, t->tmp);
}

/* Writes the result of a program with no src over `sp` into a dense f32
 * buffer. */
static void fill_input(const ch_state *s, const void *bound, const ch_space *sp, float *buf, char *tbase,
                       const pt_exec_ctx *ctx) {
    ch_fill f = {bound, buf};
    for_runs(s, sp, tbase, ctx, fill_run, &f);
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
        if (!pt_read_scalar_i64(&in[s->drop_port[0]], &t->seed) || !pt_read_scalar_i64(&in[s->drop_port[1]], &t->offset))
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
    pt_exec_ctx kctx = *ctx;
    kctx.scratch = s->kernel.scratch_bytes ? base + s->kscratch_off : NULL;
    kctx.scratch_bytes = s->kernel.scratch_bytes;
    return s->kernel.run(s->kernel.params, vin, s->nain, vout, s->naux + 1, &kctx);
}

/* The epilogue (or the whole chain) over the main output's space. */
typedef struct {
    const ch_state *s;
    const ch_tail *c;
    float *abuf; /* the anchor output, NULL without an anchor */
    const ch_input *a;  /* Concat: the input being placed, */
    const void *bound;  /* its program binding */
    int64_t dense[CH_MAXD];
} ch_pass;

static void epilogue_run(const void *arg, const ch_space *sp, const ch_run_pos *r, const ch_thread *t) {
    const ch_pass *p = arg;
    /* The anchor output is dense over these dims (up to leading 1s). */
    float *x = p->abuf ? p->abuf + r->row * sp->inner + r->i0 : t->run;
    finish_run(p->s, p->c, x, r->n, r->idx, r->row * sp->inner + r->i0, t);
}

/* The epilogue (or the whole chain) over the main output's space. */
static pt_status run_epilogue(const ch_state *s, const pt_tview *in, const pt_tview *out, char *base, char *tbase,
                              const pt_exec_ctx *ctx) {
    ch_tail c;
    PT_CHECK(tail_init(s, in, out, base, &c));
    ch_pass p = {.s = s, .c = &c, .abuf = s->has_anchor ? (float *)(base + s->abuf_off) : NULL};
    for_runs(s, &s->sp, tbase, ctx, epilogue_run, &p);
    return dnnl_success;
}

static void concat_run(const void *arg, const ch_space *sp, const ch_run_pos *r, const ch_thread *t) {
    const ch_pass *p = arg;
    const ch_state *s = p->s;
    const int lead = s->sp.ndims - s->abuf_lt.ndims;
    int64_t oidx[CH_MAXD] = {0};
    pt_postops_apply(p->bound, t->run, r->n, r->idx, t->tmp);
    if (s->round_anchor) pt_run_round(s->anchor_dt, t->run, r->n);
    for (int d = 0; d < sp->ndims; ++d) oidx[lead + d] = r->idx[d];
    oidx[lead + s->cat_axis] += p->a->cat_off;
    finish_run(s, p->c, t->run, r->n, oidx, strided_off(s->sp.ndims, oidx, p->dense), t);
}

/* Concat: each input's runs go through its prologue program, then straight
 * through the epilogue at their place in the output; no buffer. */
static pt_status run_concat(const ch_state *s, const pt_tview *in, const pt_tview *out, char *base, char *tbase,
                            const pt_exec_ctx *ctx) {
    ch_tail c;
    PT_CHECK(tail_init(s, in, out, base, &c));
    ch_pass p = {.s = s, .c = &c};
    pt_dense_strides(s->sp.ndims, s->sp.dims, p.dense);
    for (size_t k = 0; k < s->nain; ++k) {
        p.a = &s->ain[k];
        p.bound = base + p.a->bound_off;
        for_runs(s, &p.a->sp, tbase, ctx, concat_run, &p);
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
    if (s->has_anchor && s->concat) return run_concat(s, in, out, base, tbase, ctx);
    if (s->has_anchor) {
        PT_CHECK(run_anchor(s, in, out, base, tbase, ctx));
        if (s->direct) return dnnl_success;
        if (s->round_anchor)
            round_buffer(s, s->anchor_dt, (float *)(base + s->abuf_off), pt_lt_nelems(&s->abuf_lt), ctx);
    }
    return run_epilogue(s, in, out, base, tbase, ctx);
}

void pt_ch_state_free(ch_state *s) {
    if (!s) return;
    for (size_t k = 0; k < s->nain; ++k) pt_postops_destroy(s->ain[k].prog);
    free(s->ain);
    free(s->aux);
    pt_postops_destroy(s->epi);
    if (s->kernel.release && s->kernel.params) s->kernel.release(s->kernel.params);
    free(s);
}

static void ch_release(pt_fused *f) {
    pt_ch_state_free(f->state);
    f->state = NULL;
}

/* ---- plan ---------------------------------------------------------------------- */

/* Scratch layout: program bindings, f32 buffers, then per-thread blocks. */
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
    const bool concat = s->has_anchor && s->concat;
    if (s->has_anchor && !s->direct && !concat) {
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
    if (s->kernel.scratch_bytes) {
        s->kscratch_off = off;
        off = align64(off + s->kernel.scratch_bytes);
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

pt_status pt_chain_post_ops_finish(ch_state *s, pt_fused *fused) {
    pt_status st = plan(s);
    if (st == dnnl_success)
        *fused = (pt_fused){.run = ch_run, .release = ch_release, .state = s,
                            .scratch_bytes = s->shared_bytes + (size_t)s->nthr * s->thread_bytes};
    else
        pt_ch_state_free(s);
    return st;
}
