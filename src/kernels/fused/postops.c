/* Element-wise chain programs, the run side (see postops.h): binding the
 * ports and interpreting the instructions over one run.  The scalar formulas
 * are the reference kernels' (ref_eltwise.c, ref_binary.c, ref_quant.c,
 * ref_norm.c), written the same way so results are bit-identical. */
#include "kernels/fused/postops.h"
#include "kernels/vec/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"

typedef struct {
    const pt_postops *p;
    const void **ports; /* nin entries */
    double *bn;
} po_bound;

static void free_po(pt_postops *p) {
    if (!p) return;
    for (int c = 0; c < p->nconsts; ++c) free(p->consts[c]);
    free(p->consts);
    free(p->ins);
    free(p);
}

void pt_postops_destroy(pt_postops *p) { free_po(p); }

/* Whether operand o walks dims d, d + 1 of `dims` as one dim. */
static bool opd_merges(const po_opd *o, const int64_t *dims, int d) {
    if (o->kind == OPD_REG) return true;
    if (o->es[d] == 0 && o->es[d + 1] == 0) return true;
    return o->div[d] == 1 && o->div[d + 1] == 1 && o->es[d] == o->es[d + 1] * dims[d + 1];
}

pt_postops *pt_postops_flatten(const pt_postops *p) { return pt_postops_flatten_from(p, 0); }

pt_postops *pt_postops_flatten_from(const pt_postops *p, int first_dim) {
    if (!p || p->ndims < 2 || first_dim < 0 || first_dim > p->ndims - 2) return NULL;
    for (int i = 0; i < p->nins; ++i)
        if (p->ins[i].ik == I_BN) return NULL;
    pt_postops *f = malloc(sizeof *f);
    po_instr *ins = malloc((size_t)(p->nins ? p->nins : 1) * sizeof *ins);
    if (!f || !ins) {
        free(f), free(ins);
        return NULL;
    }
    *f = *p;
    if (p->nins) memcpy(ins, p->ins, (size_t)p->nins * sizeof *ins);
    f->ins = ins;
    bool merged = false;
    for (int d = f->ndims - 2; d >= first_dim; --d) {
        bool ok = true;
        for (int i = 0; i < f->nins && ok; ++i)
            for (int j = 0; j < f->ins[i].na && ok; ++j) ok = opd_merges(&f->ins[i].a[j], f->dims, d);
        if (!ok) continue;
        /* dim d + 1 folds into d; the dims after it move down one. */
        for (int i = 0; i < f->nins; ++i)
            for (int j = 0; j < f->ins[i].na; ++j) {
                po_opd *o = &f->ins[i].a[j];
                o->es[d] = o->es[d + 1], o->div[d] = 1;
                for (int k = d + 1; k + 1 < f->ndims; ++k) o->es[k] = o->es[k + 1], o->div[k] = o->div[k + 1];
            }
        f->dims[d] *= f->dims[d + 1];
        for (int k = d + 1; k + 1 < f->ndims; ++k) f->dims[k] = f->dims[k + 1];
        --f->ndims;
        merged = true;
    }
    if (!merged) {
        free(ins), free(f);
        return NULL;
    }
    return f;
}

void pt_postops_destroy_flat(pt_postops *f) {
    if (!f) return;
    free(f->ins);
    free(f);
}

dnnl_data_type_t pt_postops_result_dt(const pt_postops *p) { return p->result_dt; }

static size_t align16(size_t v) { return (v + 15) / 16 * 16; }

size_t pt_postops_bound_bytes(const pt_postops *p) {
    return align16(sizeof(po_bound)) + align16((p->nin ? p->nin : 1) * sizeof(void *)) +
           p->bn_doubles * sizeof(double);
}

size_t pt_postops_tmp_floats(const pt_postops *p, int64_t max_run) {
    if (max_run < 1) max_run = 1;
    return (size_t)(p->nregs - 1 + PO_MAX_OPERANDS) * (size_t)max_run;
}

pt_status pt_postops_bind(const pt_postops *p, const pt_tview *in, size_t nin, void *mem) {
    if (nin < p->nin) return pt_err(dnnl_invalid_arguments, "postops: %zu inputs bound, %zu expected", nin, p->nin);
    po_bound *b = mem;
    b->p = p;
    b->ports = (const void **)((char *)mem + align16(sizeof(po_bound)));
    b->bn = (double *)((char *)b->ports + align16((p->nin ? p->nin : 1) * sizeof(void *)));
    for (size_t i = 0; i < p->nin; ++i) b->ports[i] = in[i].data;
    for (int i = 0; i < p->nins; ++i) {
        const po_instr *ins = &p->ins[i];
        if (ins->ik != I_BN) continue;
        double *g = b->bn + ins->bn_off, *bt = g + ins->bn_C, *mu = bt + ins->bn_C, *inv = mu + ins->bn_C;
        for (int64_t c = 0; c < ins->bn_C; ++c) {
            double v[4];
            for (int j = 0; j < 4; ++j)
                v[j] = (double)pt_load_f32(in[ins->bn_port[j]].data, ins->bn_dt[j], c * ins->bn_stride[j]);
            g[c] = v[0], bt[c] = v[1], mu[c] = v[2];
            inv[c] = 1.0 / sqrt(v[3] + ins->bn_eps);
        }
    }
    return dnnl_success;
}

bool pt_postops_inplace_port(const pt_postops *p, size_t port) {
    int uses = 0;
    bool identity = false;
    for (int i = 0; i < p->nins; ++i) {
        const po_instr *ins = &p->ins[i];
        for (int j = 0; j < ins->na; ++j) {
            const po_opd *o = &ins->a[j];
            if (o->kind != OPD_PORT || (size_t)o->port != port) continue;
            ++uses;
            /* Read at the element's own position: every iteration dim of extent > 1 addressed, no groups. */
            identity = true;
            for (int d = 0; d < p->ndims; ++d)
                if (o->div[d] != 1 || (p->dims[d] > 1 && o->es[d] == 0)) identity = false;
        }
        if (ins->ik == I_BN)
            for (int j = 0; j < 4; ++j)
                if ((size_t)ins->bn_port[j] == port) uses += 2;
    }
    return uses == 1 && identity;
}

/* ---- apply -------------------------------------------------------------------- */

/* Values of an operand over the run: a pointer to n floats, or a scalar
 * (*is_scalar) when the operand does not vary along the run. */
static const float *opd_values(const po_bound *b, const po_opd *o, float *const *regs, const int64_t *idx0, int64_t n,
                               float *buf, float *scalar, bool *is_scalar) {
    *is_scalar = false;
    if (o->kind == OPD_REG) return regs[o->reg];
    const pt_postops *p = b->p;
    const void *base = o->kind == OPD_PORT ? b->ports[o->port] : (const void *)p->consts[o->cidx];
    const int r = p->ndims;
    int64_t off = 0;
    for (int d = 0; d < r - 1; ++d) off += idx0[d] / o->div[d] * o->es[d];
    int64_t es = r ? o->es[r - 1] : 0, dv = r ? o->div[r - 1] : 1, i0 = r ? idx0[r - 1] : 0;
    if (es == 0 || n == 1) {
        *is_scalar = true;
        *scalar = pt_load_f32(base, o->dt, off + i0 / dv * es);
        return NULL;
    }
    if (dv == 1) {
        off += i0 * es;
        if (o->dt == dnnl_f32 && es == 1) return (const float *)base + off;
        pt_run_load(base, o->dt, off, es, buf, n);
        return buf;
    }
    for (int64_t i = 0; i < n; ++i) buf[i] = pt_load_f32(base, o->dt, off + (i0 + i) / dv * es);
    return buf;
}

#define PO_BIN_LOOPS(EXPR) \
    do { \
        if (sa && sb) { \
            float a = av, b = bv, v = (EXPR); \
            for (int64_t i = 0; i < n; ++i) d[i] = v; \
        } else if (sa) { \
            float a = av; \
            for (int64_t i = 0; i < n; ++i) { \
                float b = B[i]; \
                d[i] = (EXPR); \
            } \
        } else if (sb) { \
            float b = bv; \
            for (int64_t i = 0; i < n; ++i) { \
                float a = A[i]; \
                d[i] = (EXPR); \
            } \
        } else { \
            for (int64_t i = 0; i < n; ++i) { \
                float a = A[i], b = B[i]; \
                d[i] = (EXPR); \
            } \
        } \
    } while (0)

static void run_binary(int kind, const float *A, float av, bool sa, const float *B, float bv, bool sb, float *d,
                       int64_t n) {
    /* The vector rows compute these kinds with the same f32 operations
     * (tests/test_int_vec.c checks them bit for bit). */
    if (!(sa && sb) && pt_vec()->binary(kind, d, sa ? &av : A, sa ? 0 : 1, sb ? &bv : B, sb ? 0 : 1, n)) return;
    switch (kind) {
        case dnnl_graph_op_add: PO_BIN_LOOPS(a + b); break;
        case dnnl_graph_op_subtract: PO_BIN_LOOPS(a - b); break;
        case dnnl_graph_op_multiply: PO_BIN_LOOPS(a * b); break;
        case dnnl_graph_op_divide: PO_BIN_LOOPS(a / b); break;
        case dnnl_graph_op_maximum: PO_BIN_LOOPS(a > b ? a : b); break;
        case dnnl_graph_op_minimum: PO_BIN_LOOPS(a < b ? a : b); break;
        case dnnl_graph_op_squared_difference: PO_BIN_LOOPS((a - b) * (a - b)); break;
        case dnnl_graph_op_greater_equal: PO_BIN_LOOPS(a >= b ? 1.f : 0.f); break;
        default: break;
    }
}

static void run_unary(const po_unary *u, const float *s, float *d, int64_t n) {
    switch (u->kind) {
        case dnnl_graph_op_relu:
        case dnnl_graph_op_abs:
        case dnnl_graph_op_square:
        case dnnl_graph_op_clamp:
            /* Exact kinds: the vector rows give the reference's bits. */
            if (pt_vec()->eltwise(u, d, s, n)) return;
            break;
        default: break;
    }
    switch (u->kind) {
        case dnnl_graph_op_relu:
            for (int64_t i = 0; i < n; ++i) d[i] = s[i] > 0.f ? s[i] : (isnan(s[i]) ? s[i] : 0.f);
            break;
        case dnnl_graph_op_abs:
            for (int64_t i = 0; i < n; ++i) d[i] = s[i] > 0.f ? s[i] : -s[i];
            break;
        case dnnl_graph_op_square:
            for (int64_t i = 0; i < n; ++i) d[i] = s[i] * s[i];
            break;
        case dnnl_graph_op_clamp:
            for (int64_t i = 0; i < n; ++i) {
                float t = s[i] > u->lo ? s[i] : u->lo;
                d[i] = t < u->hi ? t : u->hi;
            }
            break;
        case dnnl_graph_op_sigmoid:
            for (int64_t i = 0; i < n; ++i) d[i] = pt_sigmoidf(s[i]);
            break;
        default:
            for (int64_t i = 0; i < n; ++i) d[i] = pt_eltwise_fwd(u, s[i]);
            break;
    }
}

#define PO_AT(k, i) (sc[k] ? sv[k] : v[k][i])

void pt_postops_apply(const void *bound, float *x, int64_t n, const int64_t *idx0, float *tmp) {
    const po_bound *b = bound;
    const pt_postops *p = b->p;
    float *regs[PO_MAX_REGS];
    regs[0] = x;
    for (int s = 1; s < p->nregs; ++s) regs[s] = tmp + (size_t)(s - 1) * (size_t)n;
    float *gbuf = tmp + (size_t)(p->nregs - 1) * (size_t)n;
    for (int i = 0; i < p->nins; ++i) {
        const po_instr *in = &p->ins[i];
        float *d = regs[in->dst];
        const float *v[PO_MAX_OPERANDS] = {NULL};
        float sv[PO_MAX_OPERANDS] = {0};
        bool sc[PO_MAX_OPERANDS] = {false};
        if (in->ik == I_COPY && in->a[0].kind != OPD_REG) {
            /* A load: straight into the destination. */
            v[0] = opd_values(b, &in->a[0], regs, idx0, n, d, &sv[0], &sc[0]);
            if (sc[0])
                for (int64_t e = 0; e < n; ++e) d[e] = sv[0];
            else if (v[0] != d)
                memcpy(d, v[0], (size_t)n * sizeof(float));
        } else {
            for (int j = 0; j < in->na; ++j)
                v[j] = opd_values(b, &in->a[j], regs, idx0, n, gbuf + (size_t)j * (size_t)n, &sv[j], &sc[j]);
            switch (in->ik) {
                case I_COPY:
                    if (v[0] != d) memmove(d, v[0], (size_t)n * sizeof(float));
                    break;
                case I_UNARY:
                    if (sc[0]) {
                        float r = pt_eltwise_fwd(&in->un, sv[0]);
                        for (int64_t e = 0; e < n; ++e) d[e] = r;
                    } else {
                        run_unary(&in->un, v[0], d, n);
                    }
                    break;
                case I_BINARY: run_binary(in->kind, v[0], sv[0], sc[0], v[1], sv[1], sc[1], d, n); break;
                case I_SELECT:
                    for (int64_t e = 0; e < n; ++e) d[e] = PO_AT(0, e) != 0.f ? PO_AT(1, e) : PO_AT(2, e);
                    break;
                case I_BN: {
                    const double *g = b->bn + in->bn_off, *bt = g + in->bn_C, *mu = bt + in->bn_C,
                                 *inv = mu + in->bn_C;
                    const int r = p->ndims;
                    if (in->bn_cdim == r - 1 && r > 0) {
                        int64_t c0 = idx0[r - 1];
                        for (int64_t e = 0; e < n; ++e) {
                            int64_t c = c0 + e;
                            d[e] = (float)(g[c] * ((double)PO_AT(0, e) - mu[c]) * inv[c] + bt[c]);
                        }
                    } else {
                        int64_t c = in->bn_cdim < 0 ? 0 : idx0[in->bn_cdim];
                        for (int64_t e = 0; e < n; ++e)
                            d[e] = (float)(g[c] * ((double)PO_AT(0, e) - mu[c]) * inv[c] + bt[c]);
                    }
                    break;
                }
                case I_QUANT: {
                    bool zp = in->na > 2;
                    if (sc[1] && !in->inv_given) sv[1] = 1.f / sv[1], sc[1] = true;
                    for (int64_t e = 0; e < n; ++e) {
                        float inv = sc[1] ? sv[1] : (in->inv_given ? v[1][e] : 1.f / v[1][e]);
                        float xv = PO_AT(0, e);
                        d[e] = zp ? xv * inv + PO_AT(2, e) : xv * inv;
                    }
                    break;
                }
                case I_DEQUANT: {
                    bool zp = in->na > 2;
                    if (zp)
                        for (int64_t e = 0; e < n; ++e) d[e] = (PO_AT(0, e) - PO_AT(2, e)) * PO_AT(1, e);
                    else
                        for (int64_t e = 0; e < n; ++e) d[e] = PO_AT(0, e) * PO_AT(1, e);
                    break;
                }
            }
        }
        if (in->round) pt_run_round(in->dt, d, n);
    }
}
