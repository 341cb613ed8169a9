/* Compiling an element-wise chain into a program (kernels/fused/postops.h).
 * Every value of the chain is mapped into the iteration space (walking the
 * ops backwards from the result: numpy broadcasting, channel axes,
 * quantization axes and groups), partition-port operands become (strides,
 * group divisors) per iteration dim, and registers are assigned by
 * liveness. */
#include "compile/lower_postops.h"
#include "compile/ref_decode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ir/dtype.h"
#include "kernels/ref/eltwise_math.h"
#include "kernels/ref/ref_quant_groups.h"
#include "ops/op_schema.h"

/* ---- create ------------------------------------------------------------------ */

typedef struct {
    size_t id;
    const pt_lt *lt; /* NULL for the src when it has no tensor description */
    int ndims;
    int64_t dims[PO_MAXD];
    dnnl_data_type_t dt;
    int producer; /* op index, -1 for the src */
    bool mapped;
    int map[PO_MAXD];
    int last_use;
    int reg;
} po_value;

typedef struct {
    const pt_postops_desc *d;
    pt_postops *p;
    po_value vals[PO_MAX_VALUES];
    int nvals;
    int *op_val; /* op index -> value index of its output */
} po_build;

static int find_value(const po_build *b, size_t id) {
    for (int v = 0; v < b->nvals; ++v)
        if (b->vals[v].id == id) return v;
    return -1;
}

static int find_port(const pt_postops_desc *d, size_t id) {
    for (size_t i = 0; i < d->nin; ++i)
        if (d->in[i].id == id) return (int)i;
    return -1;
}

static const char *opname(const pt_op *op) { return pt_op_kind_name(op->kind); }

static bool is_unary_kind(int k) { return pt_op_is_unary_eltwise(k); }
static bool is_binary_kind(int k) { return pt_op_is_binary_eltwise(k); }

/* Expected input count range of a supported op; false for other kinds. */
static bool arity(int k, size_t *lo, size_t *hi) {
    if (is_unary_kind(k) || k == dnnl_graph_op_type_cast || k == dnnl_graph_op_quantize ||
        k == dnnl_graph_op_dequantize) {
        *lo = *hi = 1;
    } else if (is_binary_kind(k) || k == dnnl_graph_op_bias_add) {
        *lo = *hi = 2;
    } else if (k == dnnl_graph_op_select) {
        *lo = *hi = 3;
    } else if (k == dnnl_graph_op_batch_norm_inference) {
        *lo = *hi = 5;
    } else if (k == dnnl_graph_op_dynamic_quantize || k == dnnl_graph_op_dynamic_dequantize) {
        *lo = 2, *hi = 3;
    } else {
        return false;
    }
    return true;
}

static bool auto_broadcast_none(const pt_op *op) {
    const char *ab = pt_op_str(op, dnnl_graph_op_attr_auto_broadcast, "numpy");
    return ab && strcmp(ab, "none") == 0;
}

/* Channel dim of a BiasAdd / BatchNormInference output of rank r. */
static int channel_dim(const pt_op *op, int r) {
    const char *df = pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC");
    if (r <= 1) return 0;
    return (df && strcmp(df, "NCX") == 0) ? 1 : r - 1;
}

static bool lt_ranked(const pt_lt *lt) {
    if (lt->ndims < 0 || lt->ndims > PO_MAXD) return false;
    for (int j = 0; j < lt->ndims; ++j)
        if (lt->dims[j] < 0) return false;
    return true;
}

/* Input maps (tensor dim -> iteration dim or -1) from the op output's map. */
static bool map_same(const pt_lt *t, const po_value *o, int *mi) {
    if (t->ndims != o->ndims) return false;
    for (int j = 0; j < t->ndims; ++j) {
        if (t->dims[j] != o->dims[j]) return false;
        mi[j] = o->map[j];
    }
    return true;
}

static bool map_numpy(const pt_lt *t, const po_value *o, int *mi) {
    int shift = o->ndims - t->ndims;
    if (shift < 0) return false;
    for (int j = 0; j < t->ndims; ++j) {
        if (t->dims[j] == 1 && o->dims[j + shift] != 1) { /* stretched */
            mi[j] = -1;
            continue;
        }
        if (t->dims[j] != o->dims[j + shift]) return false;
        mi[j] = o->map[j + shift];
    }
    return true;
}

/* A 1-D vector along output dim `axis` (length 1: shared by all). */
static bool map_vector(const pt_lt *t, const po_value *o, int axis, int *mi) {
    if (t->ndims != 1 || axis < 0 || axis >= o->ndims) return false;
    if (t->dims[0] == 1 && o->dims[axis] != 1) {
        mi[0] = -1;
        return true;
    }
    if (t->dims[0] != o->dims[axis]) return false;
    mi[0] = o->map[axis];
    return true;
}

/* One element (any rank) shared by all. */
static bool map_single(const pt_lt *t, int *mi) {
    for (int j = 0; j < t->ndims; ++j) {
        if (t->dims[j] != 1) return false;
        mi[j] = -1;
    }
    return true;
}

static int64_t normalize_axis(int64_t a, int r) { return a < 0 ? a + r : a; }

static const char *qtype_of(const pt_op *op) { return pt_op_str(op, dnnl_graph_op_attr_qtype, "per_tensor"); }

/* Quantization axis of a per_channel op on a rank-r src; -1 when invalid. */
static int quant_axis(const pt_op *op, int r) {
    size_t nax = 0;
    const int64_t *axis = pt_op_s64s(op, dnnl_graph_op_attr_axis, &nax);
    if (nax > 1) return -1;
    int64_t a = normalize_axis(nax ? axis[0] : 1, r);
    return (a < 0 || a >= r) ? -1 : (int)a;
}

/* Map of DynamicQuantize / DynamicDequantize input k (1: scales, 2: zps)
 * plus per-tensor-dim group divisors. */
static bool map_dynamic_param(const pt_op *op, int k, const pt_lt *t, const po_value *o, int *mi, int64_t *div) {
    const char *qt = qtype_of(op);
    for (int j = 0; j < PO_MAXD; ++j) div[j] = 1;
    if (strcmp(qt, "per_tensor") == 0) return map_single(t, mi);
    if (strcmp(qt, "per_channel") == 0) {
        int a = quant_axis(op, o->ndims);
        if (a < 0) return false;
        if (k == 2 && t->ndims >= 0) {
            int64_t n = 1;
            for (int j = 0; j < t->ndims; ++j) n *= t->dims[j];
            if (n == 1 && o->dims[a] != 1) return map_single(t, mi);
        }
        return map_vector(t, o, a, mi);
    }
    if (strcmp(qt, "per_group") == 0) {
        int64_t G[PO_MAXD];
        if (pt_quant_group_sizes(op, o->ndims, o->dims, G) != dnnl_success) return false;
        if (t->ndims != o->ndims) return false;
        for (int j = 0; j < t->ndims; ++j) {
            if (t->dims[j] * G[j] != o->dims[j]) return false;
            mi[j] = t->dims[j] == 1 ? -1 : o->map[j];
            div[j] = G[j];
        }
        return true;
    }
    return false;
}

/* Memory operand over a tensor of rank tr with the given map/divisors. */
static void make_mem(po_opd *od, po_opd_kind kind, int index, dnnl_data_type_t dt, int tr, const int64_t *tstrides,
                     const int *map, const int64_t *div) {
    memset(od, 0, sizeof *od);
    od->kind = kind;
    od->dt = dt;
    if (kind == OPD_PORT) od->port = index;
    else od->cidx = index;
    for (int d = 0; d < PO_MAXD; ++d) od->es[d] = 0, od->div[d] = 1;
    for (int j = 0; j < tr; ++j) {
        if (map[j] < 0) continue;
        od->es[map[j]] = tstrides[j];
        od->div[map[j]] = div ? div[j] : 1;
    }
}

static int add_const(pt_postops *p, const float *v, size_t n) {
    float **nc = realloc(p->consts, (size_t)(p->nconsts + 1) * sizeof *nc);
    if (!nc) return -1;
    p->consts = nc;
    float *c = malloc((n ? n : 1) * sizeof(float));
    if (!c) return -1;
    memcpy(c, v, n * sizeof(float));
    p->consts[p->nconsts] = c;
    return p->nconsts++;
}

/* Records the map of an input that is a chain value (or checks it). */
static bool set_value_map(po_build *b, int v, const int *mi) {
    po_value *val = &b->vals[v];
    if (!val->mapped) {
        memcpy(val->map, mi, sizeof(int) * (size_t)val->ndims);
        val->mapped = true;
        return true;
    }
    return memcmp(val->map, mi, sizeof(int) * (size_t)val->ndims) == 0;
}

/* Input of op i at port k: a chain value (>= 0) or a partition port
 * (-2 - port); -1 when neither. */
static int classify_input(const po_build *b, int i, size_t k) {
    const pt_op *op = b->d->ops[i];
    size_t id = op->in[k].id;
    int v = find_value(b, id);
    if (v >= 0 && b->vals[v].producer < i) return v;
    int port = find_port(b->d, id);
    if (port >= 0) return -2 - port;
    return -1;
}

static pt_status unimpl(const char *what, const pt_op *op) {
    return pt_err(dnnl_unimplemented, "postops: %s%s%s", what, op ? " at " : "", op ? opname(op) : "");
}

/* Operand for input k of op i whose map is mi (divisors div or NULL);
 * registers are resolved later (reg = value index until then). */
static pt_status make_input(po_build *b, int i, size_t k, const int *mi, const int64_t *div, po_opd *od) {
    const pt_op *op = b->d->ops[i];
    int c = classify_input(b, i, k);
    if (c >= 0) {
        if (div)
            for (int j = 0; j < op->in[k].ndims; ++j)
                if (div[j] != 1) return unimpl("grouped parameters computed inside the chain", op);
        if (!set_value_map(b, c, mi)) return unimpl("a value broadcast two different ways", op);
        memset(od, 0, sizeof *od);
        od->kind = OPD_REG;
        od->reg = c;
        return dnnl_success;
    }
    if (c == -1) return unimpl("an input that is neither a port nor an earlier value", op);
    int port = -2 - c;
    const pt_lt *lt = &b->d->in[port];
    if (!lt_ranked(lt) || lt->layout_type != dnnl_graph_layout_type_strided)
        return unimpl("a port without a strided layout", op);
    if (lt->ndims != op->in[k].ndims) return unimpl("a port whose rank differs from the op input", op);
    make_mem(od, OPD_PORT, port, lt->data_type, lt->ndims, lt->layout.strides, mi, div);
    return dnnl_success;
}

/* Static Quantize / Dequantize parameters: constant operands a[1] (scales or
 * their reciprocals) and a[2] (zero points, when the attribute is given). */
static pt_status static_quant_params(po_build *b, int i, const po_value *o, po_instr *in, bool quantize) {
    const pt_op *op = b->d->ops[i];
    size_t ns = 0, nz = 0;
    const float *scales = pt_op_f32s(op, dnnl_graph_op_attr_scales, &ns);
    const int64_t *zps = pt_op_s64s(op, dnnl_graph_op_attr_zps, &nz);
    if (!scales || ns == 0) return unimpl("missing scales", op);
    if (nz != 0 && nz != ns) return unimpl("zero points that do not match the scales", op);
    const char *qt = qtype_of(op);
    int mi[1] = {-1};
    if (strcmp(qt, "per_tensor") == 0) {
        if (ns != 1) return unimpl("per_tensor with several scales", op);
    } else if (strcmp(qt, "per_channel") == 0) {
        int a = quant_axis(op, o->ndims);
        if (a < 0) return unimpl("a bad quantization axis", op);
        if (!((int64_t)ns == o->dims[a] || (ns == 1 && o->dims[a] == 1)))
            return unimpl("per_channel scales that do not match the axis", op);
        mi[0] = ns == 1 ? -1 : o->map[a];
    } else {
        return unimpl("an unsupported qtype", op);
    }
    float *tmp = malloc(ns * sizeof(float));
    if (!tmp) return dnnl_out_of_memory;
    for (size_t c = 0; c < ns; ++c) {
        if (quantize && scales[c] == 0.f) {
            free(tmp);
            return unimpl("a zero scale", op);
        }
        tmp[c] = quantize ? 1.f / scales[c] : scales[c]; /* the reference's reciprocal, in f32 */
    }
    int cs = add_const(b->p, tmp, ns);
    int cz = -1;
    if (cs >= 0 && nz) {
        for (size_t c = 0; c < nz; ++c) tmp[c] = (float)zps[c];
        cz = add_const(b->p, tmp, nz);
    }
    free(tmp);
    if (cs < 0 || (nz && cz < 0)) return dnnl_out_of_memory;
    int64_t one_stride[1] = {1};
    make_mem(&in->a[1], OPD_CONST, cs, dnnl_f32, 1, one_stride, mi, NULL);
    in->na = 2;
    if (nz) {
        make_mem(&in->a[2], OPD_CONST, cz, dnnl_f32, 1, one_stride, mi, NULL);
        in->na = 3;
    }
    in->inv_given = quantize;
    return dnnl_success;
}

/* Builds the instruction of op i (operands hold value indices in `reg`). */
static pt_status build_instr(po_build *b, int i, po_instr *in) {
    const pt_op *op = b->d->ops[i];
    const po_value *o = &b->vals[b->op_val[i]];
    int k = op->kind;
    memset(in, 0, sizeof *in);
    in->kind = k;
    in->dt = o->dt;
    int mi[PO_MAXD];
    int64_t div[PO_MAXD];
    if (is_unary_kind(k) || k == dnnl_graph_op_type_cast) {
        in->ik = is_unary_kind(k) ? I_UNARY : I_COPY;
        in->un = pt_eltwise_params_of(op);
        if (!map_same(&op->in[0], o, mi)) return unimpl("a shape-changing unary op", op);
        in->na = 1;
        return make_input(b, i, 0, mi, NULL, &in->a[0]);
    }
    if (is_binary_kind(k) || k == dnnl_graph_op_select) {
        in->ik = k == dnnl_graph_op_select ? I_SELECT : I_BINARY;
        bool none = auto_broadcast_none(op);
        in->na = (int)op->nin;
        for (size_t j = 0; j < op->nin; ++j) {
            bool ok = none ? map_same(&op->in[j], o, mi) : map_numpy(&op->in[j], o, mi);
            if (!ok) return unimpl("an operand that does not broadcast into the output", op);
            PT_CHECK(make_input(b, i, j, mi, NULL, &in->a[j]));
        }
        return dnnl_success;
    }
    if (k == dnnl_graph_op_bias_add) {
        in->ik = I_BINARY;
        in->kind = dnnl_graph_op_add;
        in->na = 2;
        if (o->ndims < 2 || !map_same(&op->in[0], o, mi)) return unimpl("a BiasAdd src of rank < 2", op);
        PT_CHECK(make_input(b, i, 0, mi, NULL, &in->a[0]));
        if (!map_vector(&op->in[1], o, channel_dim(op, o->ndims), mi) || op->in[1].dims[0] != o->dims[channel_dim(op, o->ndims)])
            return unimpl("a bias that is not 1-D along the channel axis", op);
        return make_input(b, i, 1, mi, NULL, &in->a[1]);
    }
    if (k == dnnl_graph_op_batch_norm_inference) {
        in->ik = I_BN;
        in->na = 1;
        if (o->ndims < 2 || !map_same(&op->in[0], o, mi)) return unimpl("a BatchNormInference src of rank < 2", op);
        PT_CHECK(make_input(b, i, 0, mi, NULL, &in->a[0]));
        int cd = channel_dim(op, o->ndims);
        in->bn_C = o->dims[cd];
        in->bn_cdim = in->bn_C == 1 ? -1 : o->map[cd];
        in->bn_eps = (double)pt_op_f32(op, dnnl_graph_op_attr_epsilon, 1e-5f);
        for (int j = 0; j < 4; ++j) {
            int c = classify_input(b, i, (size_t)j + 1);
            if (c > -2) return unimpl("BatchNormInference parameters computed inside the chain", op);
            const pt_lt *lt = &b->d->in[-2 - c];
            if (!lt_ranked(lt) || lt->ndims != 1 || lt->dims[0] != in->bn_C ||
                lt->layout_type != dnnl_graph_layout_type_strided)
                return unimpl("BatchNormInference parameters that are not 1-D per channel", op);
            in->bn_port[j] = -2 - c;
            in->bn_dt[j] = lt->data_type;
            in->bn_stride[j] = lt->layout.strides[0];
        }
        in->bn_off = b->p->bn_doubles;
        b->p->bn_doubles += 4 * (size_t)in->bn_C;
        return dnnl_success;
    }
    if (k == dnnl_graph_op_quantize || k == dnnl_graph_op_dequantize) {
        in->ik = k == dnnl_graph_op_quantize ? I_QUANT : I_DEQUANT;
        if (!map_same(&op->in[0], o, mi)) return unimpl("a shape-changing quantization", op);
        PT_CHECK(make_input(b, i, 0, mi, NULL, &in->a[0]));
        return static_quant_params(b, i, o, in, k == dnnl_graph_op_quantize);
    }
    if (k == dnnl_graph_op_dynamic_quantize || k == dnnl_graph_op_dynamic_dequantize) {
        in->ik = k == dnnl_graph_op_dynamic_quantize ? I_QUANT : I_DEQUANT;
        if (!map_same(&op->in[0], o, mi)) return unimpl("a shape-changing quantization", op);
        PT_CHECK(make_input(b, i, 0, mi, NULL, &in->a[0]));
        in->na = (int)op->nin;
        for (size_t j = 1; j < op->nin; ++j) {
            if (!map_dynamic_param(op, (int)j, &op->in[j], o, mi, div))
                return unimpl("quantization parameters that do not fit the src", op);
            PT_CHECK(make_input(b, i, j, mi, div, &in->a[j]));
        }
        return dnnl_success;
    }
    return unimpl("an unsupported op", op);
}

/* Register of an operand's value; updates liveness bookkeeping. */
static void resolve_regs(po_build *b, po_instr *in) {
    for (int j = 0; j < in->na; ++j)
        if (in->a[j].kind == OPD_REG) in->a[j].reg = b->vals[in->a[j].reg].reg;
}


static pt_status create_impl(po_build *b) {
    const pt_postops_desc *d = b->d;
    pt_postops *p = b->p;
    const int n = (int)d->nops;
    /* Values: the src, then one per op output. */
    if (d->has_src) {
        po_value *v = &b->vals[b->nvals++];
        memset(v, 0, sizeof *v);
        v->id = d->src_id;
        int sr = d->src_dims ? d->src_ndims : d->ndims;
        const int64_t *sdims = d->src_dims ? d->src_dims : d->dims;
        if (sr < 0 || sr > d->ndims) return unimpl("a src of higher rank than the iteration space", NULL);
        v->ndims = sr;
        for (int j = 0; j < d->ndims; ++j) {
            int sj = j - (d->ndims - sr);
            if (sj < 0 ? d->dims[j] != 1 : sdims[sj] != d->dims[j])
                return unimpl("a src that does not fill the iteration space", NULL);
            if (sj >= 0) v->dims[sj] = sdims[sj];
        }
        v->dt = d->src_dt;
        v->producer = -1;
        v->last_use = -1;
    }
    for (int i = 0; i < n; ++i) {
        const pt_op *op = d->ops[i];
        size_t lo, hi;
        if (!arity(op->kind, &lo, &hi)) return unimpl("an op that is not element-wise", op);
        if (op->nin < lo || op->nin > hi || op->nout != 1) return unimpl("an unexpected port count", op);
        for (size_t k = 0; k < op->nin; ++k)
            if (!lt_ranked(&op->in[k])) return unimpl("an input of unknown shape", op);
        if (!lt_ranked(&op->out[0])) return unimpl("an output of unknown shape", op);
        if (b->nvals >= PO_MAX_VALUES || find_value(b, op->out[0].id) >= 0)
            return unimpl("too many values or a repeated output", op);
        po_value *v = &b->vals[b->nvals];
        memset(v, 0, sizeof *v);
        v->id = op->out[0].id;
        v->lt = &op->out[0];
        v->ndims = op->out[0].ndims;
        memcpy(v->dims, op->out[0].dims, sizeof(int64_t) * (size_t)v->ndims);
        v->dt = op->out[0].data_type;
        v->producer = i;
        v->last_use = -1;
        b->op_val[i] = b->nvals++;
    }
    /* The result carries the iteration space itself. */
    int res = find_value(b, d->result_id);
    if (n == 0 && !d->has_src) {
        int port = find_port(d, d->result_id);
        if (port < 0) return unimpl("a result that is neither computed nor a port", NULL);
        const pt_lt *lt = &d->in[port];
        if (!lt_ranked(lt) || lt->ndims != d->ndims || lt->layout_type != dnnl_graph_layout_type_strided)
            return unimpl("a loaded port that does not match the iteration space", NULL);
        int mi[PO_MAXD];
        for (int j = 0; j < lt->ndims; ++j) {
            if (lt->dims[j] != d->dims[j]) return unimpl("a loaded port that does not match the iteration space", NULL);
            mi[j] = lt->dims[j] == 1 ? -1 : j;
        }
        p->ins = calloc(1, sizeof *p->ins);
        if (!p->ins) return dnnl_out_of_memory;
        po_instr *in = &p->ins[0];
        in->ik = I_COPY;
        in->na = 1;
        in->dt = lt->data_type;
        make_mem(&in->a[0], OPD_PORT, port, lt->data_type, lt->ndims, lt->layout.strides, mi, NULL);
        in->dst = 0;
        p->nins = 1;
        p->nregs = 1;
        p->result_dt = lt->data_type;
        return dnnl_success;
    }
    if (res < 0) return unimpl("a result the chain does not compute", NULL);
    po_value *rv = &b->vals[res];
    int lead = d->ndims - rv->ndims; /* only the src may have fewer dims */
    if (rv->ndims != d->ndims && !(rv->producer < 0 && lead > 0))
        return unimpl("a result whose rank differs from the iteration space", NULL);
    for (int j = 0; j < rv->ndims; ++j) {
        if (rv->dims[j] != d->dims[j + lead]) return unimpl("a result whose shape differs from the iteration space", NULL);
        rv->map[j] = j + lead;
    }
    rv->mapped = true;
    p->result_dt = rv->dt;
    if (rv->producer < 0) { /* the src is the result: nothing to run */
        p->nregs = 1;
        return dnnl_success;
    }
    if (rv->producer != n - 1) return unimpl("ops after the result", d->ops[rv->producer + 1]);

    /* Backward: maps of every value, instructions with value-index operands. */
    p->ins = calloc((size_t)n, sizeof *p->ins);
    if (!p->ins) return dnnl_out_of_memory;
    p->nins = n;
    for (int i = n - 1; i >= 0; --i) {
        if (!b->vals[b->op_val[i]].mapped) return unimpl("an op whose value is not used by the result", d->ops[i]);
        PT_CHECK(build_instr(b, i, &p->ins[i]));
    }
    if (d->has_src) {
        po_value *sv = &b->vals[0];
        if (!sv->mapped) return unimpl("a chain that does not read its src", NULL);
        for (int j = 0; j < sv->ndims; ++j)
            if (sv->map[j] != j + (d->ndims - sv->ndims))
                return unimpl("a src broadcast inside the chain", NULL);
    }
    /* Liveness and registers (slot 0 is the caller's buffer). */
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < p->ins[i].na; ++j)
            if (p->ins[i].a[j].kind == OPD_REG) b->vals[p->ins[i].a[j].reg].last_use = i;
    bool busy[PO_MAX_REGS] = {false};
    int nregs = 1;
    if (d->has_src) {
        b->vals[0].reg = 0;
        busy[0] = true;
    }
    for (int i = 0; i < n; ++i) {
        po_instr *in = &p->ins[i];
        int ovals[PO_MAX_OPERANDS], nov = 0;
        for (int j = 0; j < in->na; ++j)
            if (in->a[j].kind == OPD_REG) ovals[nov++] = in->a[j].reg;
        resolve_regs(b, in);
        for (int j = 0; j < nov; ++j)
            if (b->vals[ovals[j]].last_use == i) busy[b->vals[ovals[j]].reg] = false;
        int v = b->op_val[i], r = -1;
        if (v == res) {
            r = 0;
            if (busy[0]) return unimpl("register 0 still live at the result", d->ops[i]);
        } else {
            for (int s = 0; s < PO_MAX_REGS && r < 0; ++s)
                if (!busy[s]) r = s;
            if (r < 0) return unimpl("too many live values", d->ops[i]);
        }
        busy[r] = true;
        b->vals[v].reg = r;
        if (r + 1 > nregs) nregs = r + 1;
        in->dst = r;
        bool narrow_float = in->dt == dnnl_bf16 || in->dt == dnnl_f16;
        in->round = in->dt != dnnl_f32 && (d->round_floats || !narrow_float) && (v != res || d->round_result);
    }
    p->nregs = nregs;
    return dnnl_success;
}

pt_status pt_postops_create(const pt_postops_desc *d, pt_postops **out) {
    *out = NULL;
    if (!d || d->ndims < 0 || d->ndims > PO_MAXD || (d->nops && !d->ops))
        return pt_err(dnnl_unimplemented, "postops: bad description");
    for (int j = 0; j < d->ndims; ++j)
        if (d->dims[j] < 0) return pt_err(dnnl_unimplemented, "postops: unknown iteration dims");
    pt_postops *p = calloc(1, sizeof *p);
    po_build *b = calloc(1, sizeof *b);
    int *op_val = calloc(d->nops ? d->nops : 1, sizeof(int));
    if (!p || !b || !op_val) {
        free(p), free(b), free(op_val);
        return dnnl_out_of_memory;
    }
    p->ndims = d->ndims;
    memcpy(p->dims, d->dims, sizeof(int64_t) * (size_t)d->ndims);
    p->nin = d->nin;
    b->d = d;
    b->p = p;
    b->op_val = op_val;
    pt_status st = create_impl(b);
    free(op_val);
    free(b);
    if (st != dnnl_success) {
        pt_postops_destroy(p);
        return st;
    }
    *out = p;
    return dnnl_success;
}
