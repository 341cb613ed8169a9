/* Lowering of a chain partition without a compute anchor into the fused
 * kernel's state (kernels/fused/chain_post_ops.h says how it runs).
 *
 * The partition is read as element-wise prologue -> at most one anchor (the
 * op matched as PT_CHAIN_ANCHOR, when the element-wise programs cannot run
 * it) -> element-wise epilogue -> optional Dropout.  Each anchor input's
 * prologue (the ops it depends on) and the epilogue become programs
 * (compile/lower_postops.c); the anchor's reference kernel is bound here. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compile/lower_fused.h"
#include "compile/lower_postops.h"
#include "compile/lower_single_op.h"
#include "compile/ref_bind.h"
#include "ir/dtype.h"
#include "kernels/fused/chain_post_ops.h"
#include "kernels/ref/ref_common.h"
#include "ops/op_schema.h"
#include "partition/pattern_chain.h"

typedef pt_ch_state ch_state;
typedef pt_ch_input ch_input;
typedef pt_ch_aux ch_aux;

static pt_status unimpl(const char *what) { return pt_err(dnnl_unimplemented, "chain_post_ops: %s", what); }

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

/* Working copy of the op list: Reorders become TypeCasts. */
typedef struct {
    const pt_op **ops;
    pt_op **clones;
    size_t nclones;
    unsigned *mark; /* ops of one anchor input's prologue */
    bool *pro;      /* ops of any prologue */
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
    if (!pt_lower_lt_known(lt)) return unimpl("an anchor input of unknown shape");
    pt_ch_space_init(&a->sp, lt->ndims, lt->dims);
    int p = pt_lower_producer(w->ops, nops, lt->id);
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
            a->port = pt_lower_port_of(in, nin, lt->id);
            if (a->port < 0) return unimpl("an anchor input that is neither a port nor computed");
            return dnnl_success;
        }
        if (!is_float(lt->data_type)) return unimpl("a computed anchor input that is not f32/bf16/f16");
    } else if (!f32_exact(lt->data_type)) {
        return unimpl("a Concat input type an f32 buffer does not hold");
    }
    memset(w->mark, 0, nops * sizeof *w->mark);
    if (p >= 0) pt_lower_mark_ancestors(w->ops, nops, lt->id, ai, 1u, w->mark);
    size_t n = 0;
    for (size_t i = 0; i < nops; ++i)
        if (w->mark[i]) {
            w->list[n++] = w->ops[i];
            w->pro[i] = true;
        }
    /* The prologue result is an intermediate: rounded to an integer / f8
     * type, kept in f32 for bf16 / f16 (docs/numerics.md). */
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
static pt_status place_concat(ch_state *s, const pt_op *anchor) {
    const pt_op *cat = anchor;
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

static pt_status prepare_impl(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in, size_t nin,
                              const pt_lt *out, size_t nout, ch_state *s, ch_work *w) {
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
            s->drop_port[j] = pt_lower_port_of(in, nin, id);
            if (s->drop_port[j] < 0 || pt_lower_producer(w->ops, nops, id) >= 0)
                return unimpl("Dropout parameters computed inside the partition");
        }
        s->dropout = true;
        n = nops - 1;
    }
    /* The anchor: the op matched as the anchor, unless the programs run it
     * (a Reorder, a BatchNormInference); no other op may need running. */
    int ai = -1;
    for (size_t i = 0; i < n; ++i) {
        if (is_elementwise(w->ops[i]->kind)) continue;
        if (roles[i] != PT_CHAIN_ANCHOR || ai >= 0) return unimpl("more than one op that is not element-wise");
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
    if (!pt_lower_lt_known(y) || y->layout_type != dnnl_graph_layout_type_strided)
        return unimpl("an output of unknown shape or layout");
    if (drop && drop->out[0].id != y->id) return unimpl("a Dropout that does not make the output");
    if (s->mask_out >= 0 && !pt_lower_same_dims(&out[s->mask_out], y)) return unimpl("a Dropout mask of another shape");
    pt_ch_space_init(&s->sp, y->ndims, y->dims);

    const size_t result_id = drop ? drop->in[0].id : y->id;
    if (anchor) {
        const bool concat = anchor->kind == dnnl_graph_op_concat;
        s->has_anchor = true;
        s->concat = concat;
        s->anchor_dt = anchor->out[0].data_type;
        if (!concat && pt_ref_bind(anchor, &s->kernel) != dnnl_success)
            return unimpl("an anchor without a reference kernel");
        const pt_lt *ay = &anchor->out[0];
        if (!pt_lower_lt_known(ay)) return unimpl("an anchor output of unknown shape");
        for (size_t m = 0; m < s->naux; ++m) {
            ch_aux *x = &s->aux[m];
            if (x->port >= 0) continue;
            x->lt = anchor->out[m + 1];
            if (!pt_lower_lt_known(&x->lt) || pt_dt_bits(x->lt.data_type) == 0)
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
        if (concat) PT_CHECK(place_concat(s, anchor));
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
    return dnnl_success;
}

pt_status pt_lower_chain_post_ops(const pt_op *const *ops, const int *roles, size_t nops, const pt_lt *in,
                                  size_t nin, const pt_lt *out, size_t nout, pt_fused *fused,
                                  const pt_lower_ctx *lc) {
    if (!ops || !nops || !fused || nout < 1) return unimpl("an empty partition");
    /* A chain of one op (a lone SoftMax, LayerNorm, ...) runs the fast
     * single-op kernel of its kind when there is one; pt_prepare_chain_post_ops
     * (no lowering context) keeps the chain kernel for the tests that pin it. */
    pt_lower_fn single = nops == 1 && lc ? pt_single_op_lowering(ops[0]->kind) : NULL;
    if (single && single(ops, roles, nops, in, nin, out, nout, fused, lc) == dnnl_success) return dnnl_success;
    ch_state *s = calloc(1, sizeof *s);
    ch_work w = {0};
    w.ops = calloc(nops, sizeof *w.ops);
    w.clones = calloc(nops, sizeof *w.clones);
    w.mark = calloc(nops, sizeof *w.mark);
    w.pro = calloc(nops, sizeof *w.pro);
    w.list = calloc(nops, sizeof *w.list);
    pt_status st = dnnl_out_of_memory;
    if (s && w.ops && w.clones && w.mark && w.pro && w.list)
        st = prepare_impl(ops, roles, nops, in, nin, out, nout, s, &w);
    const char *anchor = "none";
    for (size_t i = 0; st == dnnl_success && s->has_anchor && i < nops; ++i)
        if (roles[i] == PT_CHAIN_ANCHOR) anchor = pt_op_kind_name(ops[i]->kind);
    work_free(&w);
    if (st != dnnl_success) {
        pt_ch_state_free(s);
        return st;
    }
    bool dropout = s->dropout;
    PT_CHECK(pt_chain_post_ops_finish(s, fused));
    pt_verbose(2, "info,fused,chain_post_ops,%zu ops,anchor %s%s", nops, anchor, dropout ? ",dropout" : "");
    return dnnl_success;
}

pt_status pt_prepare_chain_post_ops(const pt_op *const *ops, size_t nops, const pt_lt *in, size_t nin,
                                    const pt_lt *out, size_t nout, pt_fused *fused) {
    /* The roles a chain match gives: the op the programs cannot run is the
     * anchor, every other one a post-op. */
    int *roles = malloc((nops ? nops : 1) * sizeof *roles);
    if (!roles) return dnnl_out_of_memory;
    for (size_t i = 0; i < nops; ++i) {
        int k = ops[i]->kind == dnnl_graph_op_reorder ? dnnl_graph_op_type_cast : ops[i]->kind;
        roles[i] = is_elementwise(k) ? PT_CHAIN_POST : PT_CHAIN_ANCHOR;
    }
    pt_status st = pt_lower_chain_post_ops(ops, roles, nops, in, nin, out, nout, fused, NULL);
    free(roles);
    return st;
}
