/* MatMul partitions on the GEMM engine (see matmul_engine.h). */
#include "kernels/fused/matmul_engine.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/fused/run_io.h"
#include "kernels/gemm/gemm.h"
#include "kernels/fused/const_weights.h"
#include "runtime/const_cache.h"
#include "runtime/share.h"

#define MME_RUN 256 /* elements per epilogue program run */
#define MME_PARALLEL_MIN_ELEMS (1 << 18) /* dense operand evaluation below this: not an OpenMP team */
#define MME_SHARE_MIN_ELEMS 8192        /* per thread at least, else the caller alone */

typedef enum { SRC_DIRECT, SRC_DEQUANT, SRC_DENSE } mme_src;

/* Where one operand's values come from at execute time. */
typedef struct {
    mme_src src;
    int port;                 /* DIRECT / DEQUANT: the data port */
    int scale_port, zp_port;  /* DEQUANT: ports, -1 when a constant (or absent zp) */
    const float *scale_const; /* DEQUANT: the program's constant scales */
    int32_t *zp_const;        /* DEQUANT: constant zero points as s32 (owned) */
    size_t dense_off;         /* DENSE: scratch offset of the dense f32 copy */
    int64_t dense_elems;
    bool params_constant;     /* data and dequantisation parameters all constant */
} mme_operand;

struct pt_mme {
    pt_gemm_plan plan;
    mme_operand a, b;
    bool cache_b; /* pack B once through the constant cache */
    size_t b_layout; /* B's port holds it packed, in this opaque layout (0: plain) */
    size_t b_bytes, b_scale_bytes; /* spans of the weight and its scales (fingerprints) */
    int nthr;     /* threads the scratch is planned for */
    /* Dense operand programs with their dims merged (pt_postops_flatten;
     * NULL: the operand's own program runs as it is). */
    pt_postops *a_flat, *w_flat;
    /* The epilogue with the output's rows merged, for tiles of whole rows
     * shorter than half a run (NULL: row by row). */
    pt_postops *epi_rows;
    /* scratch layout */
    size_t off_bound_rows, off_bound_a, off_bound_w, off_bound_e, off_bscale, off_packed_b, off_gemm;
    size_t off_threads, thread_bytes, tmp_floats;
    size_t bytes;
};

/* ---- reading the operand programs ----------------------------------------- */

static bool is_int_data(dnnl_data_type_t dt) {
    return dt == dnnl_s8 || dt == dnnl_u8 || dt == dnnl_s4 || dt == dnnl_u4;
}

static bool is_gemm_float(dnnl_data_type_t dt) { return dt == dnnl_f32 || dt == dnnl_bf16 || dt == dnnl_f16; }

/* Operand dims: rows (m of A, n of B; -1 when the operand is 1-D) and k. */
static void operand_dims(const pt_cp_state *s, bool is_b, int *drow, int *dk) {
    int r = is_b ? s->rb : s->ra;
    bool t = is_b ? s->tb : s->ta;
    if (r == 1) {
        *drow = -1, *dk = 0;
        return;
    }
    /* A [.., M, K] ([.., K, M] transposed); B [.., K, N] ([.., N, K]). */
    bool k_last = is_b ? t : !t;
    *drow = k_last ? r - 2 : r - 1;
    *dk = k_last ? r - 1 : r - 2;
}

/* Strides of a memory operand over the operand's dims into a gemm operand
 * and batch strides (global batch dims, 0 where broadcast). */
static void strides_into(const pt_cp_state *s, bool is_b, const int64_t *es, pt_gemm_operand *o, int64_t *bs) {
    int r = is_b ? s->rb : s->ra, drow, dk;
    operand_dims(s, is_b, &drow, &dk);
    o->s_row = drow >= 0 ? es[drow] : 0;
    o->s_k = es[dk];
    int own = r > 2 ? r - 2 : 0;
    for (int j = 0; j < s->nbd; ++j) bs[j] = 0;
    for (int i = 0; i < own; ++i) bs[i + s->nbd - own] = es[i];
}

static bool batch_invariant(const pt_cp_state *s, bool is_b, const po_opd *p) {
    int r = is_b ? s->rb : s->ra, own = r > 2 ? r - 2 : 0;
    for (int i = 0; i < own; ++i)
        if (p->es[i] != 0) return false;
    return true;
}

/* Scale / zero-point addressing (index / div) * es over (row, k) as the
 * engine's (n, k / group) form; false when it does not fit. */
static bool param_form(const pt_cp_state *s, bool is_b, const po_opd *p, int64_t *sn, int64_t *sg,
                       int64_t *group) {
    int drow, dk;
    operand_dims(s, is_b, &drow, &dk);
    if (!batch_invariant(s, is_b, p)) return false;
    if (drow >= 0 && p->es[drow] != 0 && p->div[drow] != 1) return false;
    *sn = drow >= 0 ? p->es[drow] : 0;
    if (p->es[dk] == 0) {
        *sg = 0;
        return true;
    }
    *sg = p->es[dk];
    /* A group spanning all of K is one value per row, written as group 0. */
    *group = p->div[dk] >= s->K ? 0 : p->div[dk];
    if (*group == 0) *sg = 0;
    return true;
}

/* The operand evaluated through its program into a dense row-major f32
 * copy in its own dims (scratch at execute). */
static void make_dense(const pt_cp_state *s, bool is_b, mme_operand *m, pt_gemm_operand *o, int64_t *bs) {
    const pt_cp_operand *op = is_b ? &s->w : &s->a;
    int64_t es[PT_CP_MAXD], n = 1;
    for (int d = op->ndims - 1; d >= 0; --d) es[d] = n, n *= op->dims[d];
    free(m->zp_const);
    memset(m, 0, sizeof *m);
    m->src = SRC_DENSE;
    m->scale_port = m->zp_port = -1;
    m->dense_elems = n;
    memset(o, 0, sizeof *o);
    o->dt = dnnl_f32;
    strides_into(s, is_b, es, o, bs);
    int r = is_b ? s->rb : s->ra;
    for (int i = 0; i + 2 < r; ++i)
        if (op->dims[i] == 1) bs[i + s->nbd - (r - 2)] = 0;
}

/* Classifies an operand program: a plain load, or one dequantisation of
 * integer data; anything else is evaluated into a dense f32 copy. */
static pt_status classify(const pt_cp_state *s, bool is_b, const pt_postops *prog, const bool *port_constant,
                          size_t nin, mme_operand *m, pt_gemm_operand *o, int64_t *bs) {
    memset(m, 0, sizeof *m);
    m->scale_port = m->zp_port = -1;
    m->src = SRC_DENSE;
    const po_instr *in = prog && prog->nins == 1 ? &prog->ins[0] : NULL;
    if (in && in->ik == I_COPY && in->a[0].kind == OPD_PORT && is_gemm_float(in->a[0].dt)) {
        bool unit = true;
        for (int d = 0; d < prog->ndims; ++d) unit = unit && in->a[0].div[d] == 1;
        if (unit) {
            m->src = SRC_DIRECT;
            m->port = in->a[0].port;
            o->dt = in->a[0].dt;
            strides_into(s, is_b, in->a[0].es, o, bs);
            m->params_constant = (size_t)m->port < nin && port_constant[m->port];
            return dnnl_success;
        }
    }
    if (in && in->ik == I_DEQUANT && in->a[0].kind == OPD_PORT && is_int_data(in->a[0].dt) &&
        (!in->round || in->dt == dnnl_f32 || in->dt == dnnl_bf16 || in->dt == dnnl_f16)) {
        const po_opd *sc = &in->a[1], *zp = in->na > 2 ? &in->a[2] : NULL;
        pt_gemm_dequant dq = {.on = true, .zp_dt = dnnl_data_type_undef};
        int64_t gs = 0, gz = 0;
        bool ok = param_form(s, is_b, sc, &dq.sc_sn, &dq.sc_sg, &gs);
        ok = ok && (sc->kind == OPD_CONST || is_gemm_float(sc->dt));
        if (ok && zp) {
            ok = param_form(s, is_b, zp, &dq.zp_sn, &dq.zp_sg, &gz);
            ok = ok && (zp->kind == OPD_CONST || is_int_data(zp->dt) || zp->dt == dnnl_s32);
            /* Both parameters must group k alike. */
            if (ok && dq.sc_sg && dq.zp_sg) ok = gs == gz;
        }
        bool unit = true;
        for (int d = 0; d < prog->ndims; ++d) unit = unit && in->a[0].div[d] == 1;
        if (ok && unit) {
            dq.group = gs ? gs : gz;
            m->src = SRC_DEQUANT;
            m->port = in->a[0].port;
            o->dt = in->a[0].dt;
            strides_into(s, is_b, in->a[0].es, o, bs);
            bool cst = (size_t)m->port < nin && port_constant[m->port];
            if (sc->kind == OPD_CONST) {
                m->scale_const = prog->consts[sc->cidx];
                dq.scale_dt = dnnl_f32;
            } else {
                m->scale_port = sc->port;
                dq.scale_dt = sc->dt;
                cst = cst && (size_t)sc->port < nin && port_constant[sc->port];
            }
            if (zp) {
                if (zp->kind == OPD_CONST) {
                    /* Constant zero points arrive as floats holding integers. */
                    int64_t n = 1 + (dq.zp_sn ? (s->Q - 1) * dq.zp_sn : 0) +
                                (dq.zp_sg && dq.group ? (s->K - 1) / dq.group * dq.zp_sg : 0);
                    m->zp_const = malloc((size_t)n * sizeof(int32_t));
                    if (!m->zp_const) return dnnl_out_of_memory;
                    bool same = true;
                    for (int64_t i = 0; i < n; ++i) {
                        m->zp_const[i] = (int32_t)prog->consts[zp->cidx][i];
                        same = same && m->zp_const[i] == m->zp_const[0];
                    }
                    /* Equal zero points (typically all 0) are one per tensor. */
                    if (same) dq.zp_sn = dq.zp_sg = 0;
                    dq.zp_dt = dnnl_s32;
                } else {
                    m->zp_port = zp->port;
                    dq.zp_dt = zp->dt;
                    cst = cst && (size_t)zp->port < nin && port_constant[zp->port];
                }
            }
            m->params_constant = cst;
            o->dq = dq;
            return dnnl_success;
        }
    }
    make_dense(s, is_b, m, o, bs);
    return dnnl_success;
}

/* The int8 x int8 form: u8/s8 activations with per-tensor constant scale and
 * zero point, s8 weights with per-tensor or per-column constant scales and a
 * per-tensor constant zero point. */
static bool u8s8_eligible(const pt_cp_state *s, const mme_operand *ma, const pt_gemm_operand *a,
                          const mme_operand *mb, const pt_gemm_operand *b) {
    if (ma->src != SRC_DEQUANT || mb->src != SRC_DEQUANT) return false;
    if (!(a->dt == dnnl_u8 || a->dt == dnnl_s8) || b->dt != dnnl_s8) return false;
    if (!ma->scale_const || ma->scale_port >= 0 || ma->zp_port >= 0 || mb->zp_port >= 0 || !mb->scale_const)
        return false;
    if (a->dq.sc_sn || a->dq.sc_sg || a->dq.zp_sn || a->dq.zp_sg) return false; /* per tensor */
    if (b->dq.sc_sg || b->dq.zp_sn || b->dq.zp_sg) return false;             /* per column at most */
    if (b->dq.sc_sn && b->dq.sc_sn != 1) return false;
    return s->K < (1 << 23); /* s32 sums cannot overflow */
}

/* ---- prepare ---------------------------------------------------------------- */

static size_t align64(size_t v) { return (v + 63) / 64 * 64; }

void pt_mme_free(pt_cp_state *s) {
    if (!s || !s->mme) return;
    pt_const_cache_forget_owner(s->mme);
    pt_postops_destroy_flat(s->mme->a_flat);
    pt_postops_destroy_flat(s->mme->w_flat);
    pt_postops_destroy_flat(s->mme->epi_rows);
    free(s->mme->a.zp_const);
    free(s->mme->b.zp_const);
    free(s->mme);
    s->mme = NULL;
}

/* B's own dims as seed 004 option 2 describes the plain weight: [.., N, K]
 * (transpose_b) or [.., K, N]. */
static bool b_k_last(const pt_cp_state *s) {
    int drow, dk;
    operand_dims(s, true, &drow, &dk);
    return drow >= 0 && dk > drow;
}

/* Chooses the packed-weight layout for B when its port was given as `any`
 * (constant), or accepts the one it was given in; the plan packs nothing
 * then (b_constant only shapes the plan). */
static void choose_b_layout(struct pt_mme *e, const pt_cp_state *s, const size_t *port_layout, size_t nin,
                            pt_gemm_desc *d, bool b_batch_free) {
    if (!port_layout || e->b.src != SRC_DIRECT || (size_t)e->b.port >= nin || !b_batch_free) return;
    const size_t given = port_layout[e->b.port];
    if (given == 0 || d->kind == PT_GEMM_U8S8) return;
    if (given == PT_MME_LAYOUT_ANY && !pt_gemm_prepacked_b_pays(d)) return; /* plain streams faster */
    pt_gemm_desc packed = *d;
    packed.b_constant = true;
    pt_gemm_plan plan;
    if (pt_gemm_plan_init(&plan, &packed, e->nthr) != dnnl_success) return;
    size_t id = given == PT_MME_LAYOUT_ANY ? pt_gemm_packed_b_register(&plan, b_k_last(s))
                : pt_gemm_packed_b_matches(&plan, b_k_last(s), given) ? given
                                                                     : 0;
    if (!id) return;
    *d = packed;
    e->b_layout = id;
}

int pt_mme_packed_port(const pt_cp_state *s, size_t *layout_id) {
    if (!s || !s->mme || !s->mme->b_layout) return -1;
    if (layout_id) *layout_id = s->mme->b_layout;
    return s->mme->b.port;
}

pt_status pt_mme_prepare(pt_cp_state *s, const bool *port_constant, const size_t *port_layout, size_t nin,
                         dnnl_fpmath_mode_t mode, bool apply_to_int) {
    if (s->kind != PT_CP_MATMUL) return dnnl_unimplemented;
    struct pt_mme *e = calloc(1, sizeof *e);
    if (!e) return dnnl_out_of_memory;
    s->mme = e;
    e->nthr = 1;
#ifdef _OPENMP
    e->nthr = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
#endif
    pt_gemm_desc d;
    memset(&d, 0, sizeof d);
    d.M = s->P, d.N = s->Q, d.K = s->K;
    d.nbd = s->nbd;
    for (int i = 0; i < s->nbd; ++i) d.bdims[i] = s->bdims[i];
    pt_status st = classify(s, false, s->a.prog, port_constant, nin, &e->a, &d.a, d.a_bs);
    if (st == dnnl_success) st = classify(s, true, s->w.prog, port_constant, nin, &e->b, &d.b, d.b_bs);
    if (st != dnnl_success) return pt_mme_free(s), st;

    /* The compute kind from the operands and the math mode (seed 002):
     * bf16 / any let f32 operands become bf16; integer weights follow the
     * mode only with apply_to_int, otherwise they keep the integer path
     * (u8 x s8, or exact f32 dequantisation). */
    bool narrow = mode == dnnl_fpmath_mode_bf16 || mode == dnnl_fpmath_mode_any;
    bool ints_narrow = narrow && apply_to_int;
    bool b_float = !d.b.dq.on && d.b.dt != dnnl_s8 && d.b.dt != dnnl_u8;
    if (!ints_narrow && u8s8_eligible(s, &e->a, &d.a, &e->b, &d.b)) {
        d.kind = PT_GEMM_U8S8;
        d.q.a_zp = e->a.zp_const ? e->a.zp_const[0] : 0;
        d.q.b_zp_on = e->b.zp_const != NULL;
        d.q.b_zp = e->b.zp_const ? e->b.zp_const[0] : 0;
        d.q.b_scale_per_n = d.b.dq.sc_sn != 0;
        d.a.dq.on = d.b.dq.on = false;
    } else if (pt_gemm_float_kind(d.a.dt, d.b.dt, !b_float, mode, apply_to_int) == PT_GEMM_BF16) {
        d.kind = PT_GEMM_BF16;
    } else {
        d.kind = PT_GEMM_F32;
        /* f32 operands take the mode's rounding (f16, tf32, or bf16 next to
         * integer weights that keep their path). */
        if (mode != dnnl_fpmath_mode_strict) d.a.round = d.b.round = mode;
    }
    if (d.kind != PT_GEMM_U8S8 && d.a.dq.on) {
        /* Dequantised activations of a float product: evaluate them densely. */
        dnnl_fpmath_mode_t round = d.a.round;
        make_dense(s, false, &e->a, &d.a, d.a_bs);
        d.a.round = round;
    }
    bool b_batch_free = true;
    for (int i = 0; i < d.nbd; ++i) b_batch_free = b_batch_free && d.b_bs[i] == 0;
    choose_b_layout(e, s, port_layout, nin, &d, b_batch_free);
    e->cache_b = !e->b_layout && e->b.src != SRC_DENSE && e->b.params_constant && b_batch_free &&
                 pt_gemm_prepacked_b_pays(&d);
    if (!e->b_layout) d.b_constant = e->cache_b;
    if (e->cache_b) {
        /* Bytes the weight (and a scale tensor) span, for the fingerprint. */
        int64_t last = (s->Q - 1) * (d.b.s_row > 0 ? d.b.s_row : 0) + (s->K - 1) * (d.b.s_k > 0 ? d.b.s_k : 0);
        e->b_bytes = pt_dt_bytes(d.b.dt, last + 1);
        if (d.b.dq.on) {
            int64_t groups = d.b.dq.group ? (s->K + d.b.dq.group - 1) / d.b.dq.group : 1;
            int64_t sl = (s->Q - 1) * d.b.dq.sc_sn + (groups - 1) * d.b.dq.sc_sg;
            e->b_scale_bytes = pt_dt_bytes(d.b.dq.scale_dt, sl + 1);
        }
    }
    st = pt_gemm_plan_init(&e->plan, &d, e->nthr);
    if (st != dnnl_success) return pt_mme_free(s), st;

    /* Scratch: bound programs, dense copies, per-column scales, B packed for
     * this execution when the cache does not hold it, per-thread epilogue
     * buffers, the engine's own. */
    if (e->a.src == SRC_DENSE) e->a_flat = pt_postops_flatten(s->a.prog);
    if (e->b.src == SRC_DENSE) e->w_flat = pt_postops_flatten(s->w.prog);
    /* Post-op chains on short rows (binary-matmul-binary: N = 32) cost per
     * call more than per element: tiles of whole rows run several at once. */
    if (s->ra >= 2 && s->rb >= 2 && s->out_ndims >= 2 && s->out_dims[s->out_ndims - 1] <= MME_RUN / 2) {
        e->epi_rows = pt_postops_flatten_from(s->epi, s->epi->ndims - 2);
        if (!pt_cp_rows_mergeable(s, e->epi_rows)) pt_postops_destroy_flat(e->epi_rows), e->epi_rows = NULL;
    }
    size_t at = 0;
    e->off_bound_rows = at;
    if (e->epi_rows) at = align64(at + pt_postops_bound_bytes(e->epi_rows));
    e->off_bound_a = at, at = align64(at + pt_postops_bound_bytes(s->a.prog));
    e->off_bound_w = at, at = align64(at + pt_postops_bound_bytes(s->w.prog));
    e->off_bound_e = at, at = align64(at + pt_postops_bound_bytes(s->epi));
    if (e->a.src == SRC_DENSE) e->a.dense_off = at, at = align64(at + (size_t)e->a.dense_elems * sizeof(float));
    if (e->b.src == SRC_DENSE) e->b.dense_off = at, at = align64(at + (size_t)e->b.dense_elems * sizeof(float));
    e->off_bscale = at, at = align64(at + (size_t)(s->Q > 0 ? s->Q : 1) * sizeof(float));
    e->off_packed_b = at;
    if (e->cache_b) at = align64(at + e->plan.packed_b_bytes);
    e->tmp_floats = pt_postops_tmp_floats(s->epi, MME_RUN);
    size_t ta = pt_postops_tmp_floats(s->a.prog, MME_RUN), tw = pt_postops_tmp_floats(s->w.prog, MME_RUN);
    if (ta > e->tmp_floats) e->tmp_floats = ta;
    if (tw > e->tmp_floats) e->tmp_floats = tw;
    e->thread_bytes = align64((MME_RUN + e->tmp_floats) * sizeof(float));
    e->off_threads = at, at += (size_t)e->nthr * e->thread_bytes;
    e->off_gemm = at = align64(at);
    at += pt_gemm_scratch_bytes(&e->plan, e->nthr);
    e->bytes = at;
    pt_verbose(2, "info,kernel,matmul,%s,M %lld N %lld K %lld batch %lld%s", e->plan.uk->name,
               (long long)s->P, (long long)s->Q, (long long)s->K, (long long)s->nbatch,
               e->b_layout ? ",weights given packed (opaque layout)"
               : e->cache_b ? ",constant weights packed once"
                            : "");
    return dnnl_success;
}

size_t pt_mme_scratch_bytes(const pt_cp_state *s) { return s && s->mme ? s->mme->bytes : 0; }

const char *pt_mme_kernel_name(const pt_cp_state *s) {
    return s && s->mme && s->mme->plan.uk ? s->mme->plan.uk->name : "";
}

/* ---- execute ------------------------------------------------------------------- */

/* Evaluates an operand program over its whole iteration space into a
 * row-major f32 buffer, in runs of up to MME_RUN elements along its last dim
 * (the flattened program's: one run per call instead of one row of, say,
 * 32 elements, whose per-call cost dominated a chain of ten binary ops). */
typedef struct {
    const pt_postops *prog;
    const void *bound;
    float *dst;
    char *threads;
    size_t thread_bytes;
    int64_t runs, items; /* runs per row, rows x runs */
    int nt;
    pt_share_slice *slices; /* NULL: one thread takes every item */
} dense_job;

static void eval_dense_body(void *v, int tid) {
    const dense_job *j = v;
    const int r = j->prog->ndims;
    const int64_t last = j->prog->dims[r - 1];
    float *tmp = (float *)(j->threads + (size_t)tid * j->thread_bytes + MME_RUN * sizeof(float));
    int64_t item = 0;
    while (j->slices ? pt_share_next(j->slices, tid, j->nt, &item) : item < j->items) {
        const int64_t o = item / j->runs, c0 = item % j->runs * MME_RUN;
        int64_t idx[PT_CP_MAXD], rem = o;
        for (int d = r - 2; d >= 0; --d) idx[d] = rem % j->prog->dims[d], rem /= j->prog->dims[d];
        idx[r - 1] = c0;
        const int64_t n = last - c0 < MME_RUN ? last - c0 : MME_RUN;
        pt_postops_apply(j->bound, j->dst + o * last + c0, n, idx, tmp);
        if (!j->slices) ++item;
    }
}

static void eval_dense(const pt_postops *prog, const void *bound, float *dst, char *threads, size_t thread_bytes,
                       int nt) {
    const int r = prog->ndims;
    if (r == 0) {
        int64_t none[1] = {0};
        pt_postops_apply(bound, dst, 1, none, (float *)(threads + MME_RUN * sizeof(float)));
        return;
    }
    const int64_t last = prog->dims[r - 1], runs = (last + MME_RUN - 1) / MME_RUN;
    int64_t outer = 1;
    for (int d = 0; d < r - 1; ++d) outer *= prog->dims[d];
    const int64_t elems = outer * last, items = outer * runs;
    if (nt > items) nt = (int)items;
    if (nt > PT_SHARE_MAX_THREADS) nt = PT_SHARE_MAX_THREADS;
    if (elems < (int64_t)MME_SHARE_MIN_ELEMS * nt) nt = 1;
    /* Slices with stealing (each thread finds its runs' operands in its
     * caches at the next execution), hence items in 32 bits: 2^31 runs
     * would be half a trillion elements. */
    if (items >= (INT64_C(1) << 31)) nt = 1;
    pt_share_slice slices[PT_SHARE_MAX_THREADS];
    if (nt > 1) pt_share_slices_init(slices, items, nt);
    dense_job job = {prog, bound, dst, threads, thread_bytes, runs, items, nt, nt > 1 ? slices : NULL};
    /* Large operands on an OpenMP team, smaller ones on the caller and the
     * helpers that come (runtime/share.h). */
    pt_share_team_run(nt, elems >= MME_PARALLEL_MIN_ELEMS, eval_dense_body, &job);
}

typedef struct {
    const pt_cp_state *s;
    const void *be;
    const void *be_rows; /* NULL: no merged-rows epilogue */
    void *out;
    const pt_tview *bias;
    char *threads;
    size_t thread_bytes;
    bool direct; /* tiles summed in the output itself (direct_tile) */
} epi_ctx;

/* Whether the epilogue would store the f32 products unchanged: no bias,
 * no post-op, no rounding, an f32 output with rows of unit column stride
 * whose index is (batch dims, m, n). */
static bool direct_possible(const pt_cp_state *s) {
    const int r = s->out_ndims;
    return s->bias_port < 0 && s->epi->nins == 0 && !s->round_floats && s->out_dt == dnnl_f32 && s->ra >= 2 &&
           s->rb >= 2 && r >= 2 && r - s->out_lead == s->nbd + 2 && s->out_strides[r - 1] == 1;
}

/* pt_gemm_args.c_direct: the tile's first element in the output. */
static float *direct_tile(void *vctx, int64_t b, int64_t m0, int64_t n0, int64_t *ld) {
    const epi_ctx *E = vctx;
    if (!E->direct) return NULL;
    const pt_cp_state *s = E->s;
    const int r = s->out_ndims;
    int64_t off = m0 * s->out_strides[r - 2] + n0;
    for (int i = s->nbd - 1; i >= 0; --i) {
        off += b % s->bdims[i] * s->out_strides[s->out_lead + i];
        b /= s->bdims[i];
    }
    *ld = s->out_strides[r - 2];
    return (float *)E->out + off;
}

static void epilogue(void *vctx, int64_t b, int64_t m0, int64_t n0, int64_t mlen, int64_t nlen, float *c,
                     int64_t ldc, int tid) {
    const epi_ctx *E = vctx;
    const pt_cp_state *s = E->s;
    float *x = (float *)(E->threads + (size_t)tid * E->thread_bytes), *tmp = x + MME_RUN;
    int64_t idx[PT_CP_MAXD], bbase = 0;
    for (int i = s->nbd - 1; i >= 0; --i) {
        idx[i] = b % s->bdims[i];
        b /= s->bdims[i];
        bbase += idx[i] * s->bias_bs[i];
    }
    const int last = s->out_ndims - s->out_lead - 1; /* anchor dim of the runs */
    if (E->be_rows && n0 == 0 && nlen == s->out_dims[s->out_ndims - 1]) {
        /* Whole rows, copied back to back (bias added) and finished together. */
        const int64_t per = MME_RUN / nlen;
        for (int64_t i0 = 0; i0 < mlen; i0 += per) {
            const int64_t rows = mlen - i0 < per ? mlen - i0 : per;
            for (int64_t i = 0; i < rows; ++i) {
                const float *row = c + (i0 + i) * ldc;
                float *dst = x + i * nlen;
                if (E->bias) {
                    pt_run_load(E->bias->data, s->bias_dt, bbase + (m0 + i0 + i) * s->bias_sm, s->bias_sn, dst, nlen);
                    for (int64_t j = 0; j < nlen; ++j) dst[j] += row[j];
                } else {
                    memcpy(dst, row, (size_t)nlen * sizeof(float));
                }
            }
            idx[s->nbd] = m0 + i0, idx[last] = 0;
            pt_cp_finish_rows(s, E->be_rows, E->out, x, rows, idx, tmp);
        }
        return;
    }
    if (s->rb >= 2) {
        for (int64_t i = 0; i < mlen; ++i) {
            int64_t m = m0 + i;
            if (s->ra >= 2) idx[s->nbd] = m;
            for (int64_t c0 = 0; c0 < nlen; c0 += MME_RUN) {
                int64_t n = nlen - c0 < MME_RUN ? nlen - c0 : MME_RUN;
                float *row = c + i * ldc + c0, *run = row;
                if (E->bias) {
                    /* The bias run through the shared typed loader, then added. */
                    pt_run_load(E->bias->data, s->bias_dt, bbase + m * s->bias_sm + (n0 + c0) * s->bias_sn,
                                s->bias_sn, x, n);
                    for (int64_t j = 0; j < n; ++j) x[j] += row[j];
                    run = x;
                }
                /* Without a bias the post-ops work on the tile's own row (the
                 * engine's scratch, which the epilogue may overwrite). */
                idx[last] = n0 + c0;
                pt_cp_finish_run(s, E->be, E->out, run, n, idx, tmp);
            }
        }
        return;
    }
    /* N == 1: the output's last dim is M (or the output is a scalar). */
    for (int64_t r0 = 0; r0 < mlen; r0 += MME_RUN) {
        int64_t n = mlen - r0 < MME_RUN ? mlen - r0 : MME_RUN;
        for (int64_t j = 0; j < n; ++j) {
            x[j] = c[(r0 + j) * ldc];
            if (E->bias) x[j] += pt_load_f32(E->bias->data, s->bias_dt, bbase + (m0 + r0 + j) * s->bias_sm);
        }
        if (s->ra >= 2) idx[s->nbd] = m0 + r0;
        pt_cp_finish_run(s, E->be, E->out, x, n, idx, tmp);
    }
}

typedef struct {
    const pt_gemm_plan *plan;
    const void *b, *scales, *zps;
} pack_ctx;

static void fill_packed_b(void *vctx, void *dst) {
    const pack_ctx *p = vctx;
    pt_gemm_pack_b_all(p->plan, p->b, p->scales, p->zps, dst);
}

static const void *port_data(const pt_tview *in, size_t nin, int port) {
    return port >= 0 && (size_t)port < nin ? in[port].data : NULL;
}

pt_status pt_mme_run(const pt_cp_state *s, const pt_tview *in, size_t nin, const pt_tview *out, void *scratch,
                     const pt_exec_ctx *ctx) {
    const struct pt_mme *e = s->mme;
    char *base = scratch;
    int nt = ctx && ctx->nthreads > 0 ? ctx->nthreads : 1;
    if (nt > e->nthr) nt = e->nthr;
    const void *ba = base + e->off_bound_a, *bw = base + e->off_bound_w, *be = base + e->off_bound_e;
    const pt_postops *aprog = e->a_flat ? e->a_flat : s->a.prog, *wprog = e->w_flat ? e->w_flat : s->w.prog;
    PT_CHECK(pt_postops_bind(aprog, in, nin, base + e->off_bound_a));
    PT_CHECK(pt_postops_bind(wprog, in, nin, base + e->off_bound_w));
    PT_CHECK(pt_postops_bind(s->epi, in, nin, base + e->off_bound_e));
    if (e->epi_rows) PT_CHECK(pt_postops_bind(e->epi_rows, in, nin, base + e->off_bound_rows));
    char *threads = base + e->off_threads;

    pt_gemm_args args;
    memset(&args, 0, sizeof args);
    const void *a_data, *b_data;
    if (e->a.src == SRC_DENSE) {
        eval_dense(aprog, ba, (float *)(base + e->a.dense_off), threads, e->thread_bytes, nt);
        a_data = base + e->a.dense_off;
    } else {
        a_data = port_data(in, nin, e->a.port);
    }
    if (e->b.src == SRC_DENSE) {
        eval_dense(wprog, bw, (float *)(base + e->b.dense_off), threads, e->thread_bytes, nt);
        b_data = base + e->b.dense_off;
    } else {
        b_data = port_data(in, nin, e->b.port);
    }
    if (!a_data || !b_data) return pt_err(dnnl_invalid_arguments, "MatMul: operand buffer missing");
    const pt_gemm_desc *d = &e->plan.d;
    if (d->kind == PT_GEMM_U8S8) {
        args.a_scale = e->a.scale_const[0];
        args.b_scales = e->b.scale_const;
    } else if (e->b.src == SRC_DEQUANT) {
        args.b_scales = e->b.scale_port >= 0 ? port_data(in, nin, e->b.scale_port) : (const void *)e->b.scale_const;
        args.b_zps = e->b.zp_port >= 0 ? port_data(in, nin, e->b.zp_port) : (const void *)e->b.zp_const;
    }
    args.a = a_data;
    args.b = b_data;
    pt_const_entry *entry = NULL;
    if (e->b_layout) args.b_packed = b_data; /* the user's buffer is already in the panel layout */
    if (e->cache_b) {
        pack_ctx pc = {&e->plan, b_data, args.b_scales, args.b_zps};
        /* Named by the caller's key, else the weight tensor's own id, else
         * its address; the fingerprint catches other bytes under a name. */
        const pt_const_key key = pt_const_key_for(e, 1, ctx, e->b.port, b_data);
        uint64_t fp = pt_const_fingerprint(b_data, e->b_bytes);
        if (e->b.scale_port >= 0 && args.b_scales) fp ^= pt_const_fingerprint(args.b_scales, e->b_scale_bytes) * 31;
        const void *packed = NULL;
        PT_CHECK(pt_const_cache_acquire(&key, fp, e->plan.packed_b_bytes, fill_packed_b, &pc, &entry, &packed));
        if (!packed) {
            /* Cache off or full: pack into this execution's scratch. */
            fill_packed_b(&pc, base + e->off_packed_b);
            packed = base + e->off_packed_b;
        }
        args.b_packed = packed;
    }
    epi_ctx E = {s, be, e->epi_rows ? base + e->off_bound_rows : NULL, out[0].data,
                 s->bias_port >= 0 ? &in[s->bias_port] : NULL, threads, e->thread_bytes, direct_possible(s)};
    args.epilogue = epilogue;
    args.epilogue_ctx = &E;
    args.c_direct = direct_tile;
    pt_status st = pt_gemm_run(&e->plan, &args, base + e->off_gemm, nt);
    pt_const_cache_release(entry);
    return st;
}
