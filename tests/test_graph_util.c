#include "test_graph_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compile/compiled.h"
#include "ir/dtype.h"
#include "partition/partition.h"
#include "partition/pattern_rows.h"

#define OK(expr) CHECK_EQ_INT((expr), dnnl_success)

dnnl_engine_t tg_eng;
dnnl_stream_t tg_strm;

/* ---- the only reads of library internals -------------------------------- */

static const char *partition_row(const_dnnl_graph_partition_t p) {
    const struct pt_pattern_row *row = p->impl->row;
    return row ? row->name : NULL;
}

static bool compiled_fused(const_dnnl_graph_compiled_partition_t cp) { return cp->c->has_fused; }

static void compiled_set_fused(dnnl_graph_compiled_partition_t cp, bool on) { cp->c->has_fused = on; }

/* ---- building ----------------------------------------------------------- */

size_t tg_tensor(tg_graph *g, dnnl_data_type_t dt, int nd, const int64_t *dims, const int64_t *strides) {
    tg_lt *lt = &g->lt[g->nt];
    dnnl_dims_t d = {0}, s = {0};
    for (int i = 0; i < nd; ++i) d[i] = dims[i];
    size_t id = (size_t)g->nt + 1;
    if (strides) {
        for (int i = 0; i < nd; ++i) s[i] = strides[i];
        dnnl_graph_logical_tensor_init_with_strides(lt, id, dt, nd, d, s, dnnl_graph_tensor_property_undef);
    } else {
        dnnl_graph_logical_tensor_init_with_dims(lt, id, dt, nd, d, dnnl_graph_layout_type_strided,
                                                 dnnl_graph_tensor_property_undef);
    }
    ++g->nt;
    return id;
}

tg_op *tg_add(tg_graph *g, dnnl_graph_op_kind_t kind, int nin, const size_t *in, int nout, const size_t *out) {
    tg_op *o = &g->op[g->nop++];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->nin = nin;
    o->nout = nout;
    for (int i = 0; i < nin; ++i) o->in[i] = in[i];
    for (int i = 0; i < nout; ++i) o->out[i] = out[i];
    return o;
}

static tg_attr *new_attr(tg_op *o, int name, tg_attr_type type) {
    tg_attr *a = &o->at[o->nat++];
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = type;
    return a;
}

void tg_attr_s64(tg_op *o, int name, const int64_t *v, int n) {
    tg_attr *a = new_attr(o, name, TG_S64);
    a->n = n;
    for (int i = 0; i < n; ++i) a->i[i] = v[i];
}

void tg_attr_bool(tg_op *o, int name, bool v) { new_attr(o, name, TG_BOOL)->i[0] = v; }

void tg_attr_str(tg_op *o, int name, const char *s) {
    tg_attr *a = new_attr(o, name, TG_STR);
    snprintf(a->s, sizeof a->s, "%s", s);
}

void tg_attr_f32(tg_op *o, int name, const float *v, int n) {
    tg_attr *a = new_attr(o, name, TG_F32);
    a->n = n;
    for (int i = 0; i < n; ++i) a->f[i] = v[i];
}

bool tg_produced(const tg_graph *g, size_t id) {
    for (int o = 0; o < g->nop; ++o)
        for (int k = 0; k < g->op[o].nout; ++k)
            if (g->op[o].out[k] == id) return true;
    return false;
}

int tg_broadcast(int na, const int64_t *a, int nb, const int64_t *b, int64_t *out) {
    int r = na > nb ? na : nb;
    for (int i = 0; i < r; ++i) {
        int64_t da = i >= r - na ? a[i - (r - na)] : 1, db = i >= r - nb ? b[i - (r - nb)] : 1;
        out[i] = da == 1 ? db : da;
    }
    return r;
}

bool tg_consumed(const tg_graph *g, size_t id) {
    for (int o = 0; o < g->nop; ++o)
        for (int k = 0; k < g->op[o].nin; ++k)
            if (g->op[o].in[k] == id) return true;
    return false;
}

/* ---- tensor geometry and data ------------------------------------------- */

int64_t tg_nelems(const tg_lt *lt) {
    int64_t n = 1;
    for (int d = 0; d < lt->ndims; ++d) n *= lt->dims[d];
    return n;
}

int64_t tg_span(const tg_lt *lt) {
    int64_t s = 1;
    for (int d = 0; d < lt->ndims; ++d) {
        if (lt->dims[d] == 0) return 0;
        s += (lt->dims[d] - 1) * lt->layout.strides[d];
    }
    return s;
}

int64_t tg_offset(const tg_lt *lt, int64_t e) {
    int64_t off = 0;
    for (int d = lt->ndims - 1; d >= 0; --d) {
        off += e % lt->dims[d] * lt->layout.strides[d];
        e /= lt->dims[d];
    }
    return off;
}

void tg_fill(const tg_lt *lt, void *buf, float (*next)(void *ctx), void *ctx) {
    int64_t n = tg_span(lt);
    bool flt = pt_dt_is_float(lt->data_type);
    for (int64_t k = 0; k < n; ++k) pt_store_f32(buf, lt->data_type, k, flt ? NAN : 0.f);
    tg_fill_elems(lt, buf, next, ctx);
}

void tg_fill_elems(const tg_lt *lt, void *buf, float (*next)(void *ctx), void *ctx) {
    int64_t total = tg_nelems(lt);
    for (int64_t e = 0; e < total; ++e) pt_store_f32(buf, lt->data_type, tg_offset(lt, e), next(ctx));
}

float tg_attn_value(void *ctx) {
    const tg_attn_fill *f = ctx;
    switch (f->kind) {
        case TG_V_MASK: {
            float r = tg_lcg_pm1(f->rng);
            return r < f->mask_cut ? -INFINITY : 2.f * r;
        }
        case TG_V_BOOL: return tg_lcg_pm1(f->rng) < f->bool_cut ? 1.f : 0.f;
        case TG_V_CONST: return f->c;
        default: return tg_lcg_pm1(f->rng);
    }
}

tg_attn_sizes tg_attn_grid(const int64_t seqs[4], const int64_t heads[4], int a, int b, int shift, const char *prefix,
                           char *name, size_t name_len) {
    tg_attn_sizes z = {seqs[a], seqs[(a + b + shift) % 4], heads[b], heads[(b + 1) % 4]};
    snprintf(name, name_len, "%s sq=%lld skv=%lld d=%lld dv=%lld", prefix, (long long)z.sq, (long long)z.skv,
             (long long)z.d, (long long)z.dv);
    return z;
}

static size_t buf_bytes(const tg_lt *lt) { return pt_dt_bytes(lt->data_type, tg_span(lt)) + 64; }

void tg_bufs_alloc(tg_bufs *b, const tg_graph *const *graphs, int nsets, tg_fill_fn fill) {
    memset(b, 0, sizeof *b);
    const tg_graph *g = graphs[0];
    b->nsets = nsets;
    b->nt = g->nt;
    for (int t = 0; t < g->nt; ++t) {
        if (tg_produced(g, (size_t)t + 1)) {
            for (int k = 0; k < nsets; ++k) {
                b->set[k][t] = calloc(1, buf_bytes(&graphs[k]->lt[t]));
                b->own[k][t] = true;
            }
            continue;
        }
        const tg_lt *lt = &g->lt[t];
        b->set[0][t] = calloc(1, buf_bytes(lt));
        b->own[0][t] = true;
        if (b->set[0][t]) fill(g, t, b->set[0][t]);
        for (int k = 1; k < nsets; ++k) {
            const tg_lt *lk = &graphs[k]->lt[t];
            b->set[k][t] = b->set[0][t];
            if (lk->data_type == lt->data_type) continue;
            /* Same values in this set's type, element for element over the span. */
            int64_t n = tg_span(lt);
            void *conv = calloc(1, pt_dt_bytes(lk->data_type, n) + 64);
            for (int64_t e = 0; conv && e < n; ++e)
                pt_store_f32(conv, lk->data_type, e, pt_load_f32(b->set[0][t], lt->data_type, e));
            b->set[k][t] = conv;
            b->own[k][t] = true;
        }
    }
}

void tg_bufs_free(tg_bufs *b) {
    for (int k = 0; k < b->nsets; ++k)
        for (int t = 0; t < b->nt; ++t)
            if (b->own[k][t]) free(b->set[k][t]);
    memset(b, 0, sizeof *b);
}

/* ---- running ------------------------------------------------------------ */

void tg_setup(void) {
    OK(dnnl_engine_create(&tg_eng, dnnl_cpu, 0));
    OK(dnnl_stream_create(&tg_strm, tg_eng, dnnl_stream_default_flags));
}

void tg_teardown(void) {
    OK(dnnl_stream_destroy(tg_strm));
    OK(dnnl_engine_destroy(tg_eng));
}

static double now_ms(void) {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void set_attrs(dnnl_graph_op_t op, const tg_op *d) {
    for (int a = 0; a < d->nat; ++a) {
        const tg_attr *at = &d->at[a];
        dnnl_graph_op_attr_t nm = (dnnl_graph_op_attr_t)at->name;
        uint8_t b = (uint8_t)at->i[0];
        switch (at->type) {
            case TG_S64: OK(dnnl_graph_op_set_attr_s64(op, nm, at->i, (size_t)at->n)); break;
            case TG_BOOL: OK(dnnl_graph_op_set_attr_bool(op, nm, &b, 1)); break;
            case TG_STR: OK(dnnl_graph_op_set_attr_str(op, nm, at->s, strlen(at->s) + 1)); break;
            default: OK(dnnl_graph_op_set_attr_f32(op, nm, at->f, (size_t)at->n)); break;
        }
    }
}

static dnnl_graph_graph_t build(const tg_graph *g) {
    dnnl_graph_graph_t gr = NULL;
    OK(dnnl_graph_graph_create(&gr, dnnl_cpu));
    if (g->fpmath != dnnl_fpmath_mode_strict || g->apply_to_int)
        OK(dnnl_graph_graph_set_fpmath_mode(gr, g->fpmath, g->apply_to_int));
    for (int o = 0; o < g->nop; ++o) {
        const tg_op *d = &g->op[o];
        dnnl_graph_op_t op = NULL;
        OK(dnnl_graph_op_create(&op, (size_t)o + 1, d->kind, ""));
        for (int k = 0; k < d->nin; ++k) OK(dnnl_graph_op_add_input(op, &g->lt[d->in[k] - 1]));
        for (int k = 0; k < d->nout; ++k) OK(dnnl_graph_op_add_output(op, &g->lt[d->out[k] - 1]));
        set_attrs(op, d);
        OK(dnnl_graph_add_op(gr, op));
        OK(dnnl_graph_op_destroy(op));
    }
    OK(dnnl_graph_graph_finalize(gr));
    return gr;
}

/* Tensors for a partition's ports on `data`. */
static void make_tensors(const tg_graph *g, const tg_lt *ports, size_t n, void **data, dnnl_graph_tensor_t *t) {
    for (size_t i = 0; i < n; ++i) {
        const tg_lt *lt = &g->lt[ports[i].id - 1];
        if (lt->property == dnnl_graph_tensor_property_host_scalar)
            OK(dnnl_graph_tensor_create_scalar(&t[i], lt, data[lt->id - 1]));
        else
            OK(dnnl_graph_tensor_create(&t[i], lt, tg_eng, data[lt->id - 1]));
    }
}

static void destroy_tensors(dnnl_graph_tensor_t *t, size_t n) {
    for (size_t i = 0; i < n; ++i) OK(dnnl_graph_tensor_destroy(t[i]));
}

/* Executes `cp` on `data`; returns the time it took. */
static double execute(const tg_graph *g, dnnl_graph_compiled_partition_t cp, const tg_lt *ip, size_t nin,
                      const tg_lt *opp, size_t nout, void **data, dnnl_status_t *st) {
    dnnl_graph_tensor_t tin[TG_MAXT], tout[TG_MAXT];
    make_tensors(g, ip, nin, data, tin);
    make_tensors(g, opp, nout, data, tout);
    double t0 = now_ms();
    *st = dnnl_graph_compiled_partition_execute(cp, tg_strm, nin, (const_dnnl_graph_tensor_t *)tin, nout,
                                                (const_dnnl_graph_tensor_t *)tout);
    OK(*st);
    OK(dnnl_stream_wait(tg_strm));
    double ms = now_ms() - t0;
    destroy_tensors(tin, nin);
    destroy_tensors(tout, nout);
    return ms;
}

/* Compiles and runs one partition (and its op-by-op rerun). */
static bool run_partition(const tg_graph *g, const tg_run_opts *o, dnnl_graph_partition_t part, void **data,
                          tg_run_info *info, tg_part *rec) {
    size_t nin = 0, nout = 0;
    OK(dnnl_graph_partition_get_input_ports_num(part, &nin));
    OK(dnnl_graph_partition_get_output_ports_num(part, &nout));
    if (nin > TG_MAXT || nout > TG_MAXT) return false;
    tg_lt ip[TG_MAXT], opp[TG_MAXT];
    OK(dnnl_graph_partition_get_input_ports(part, nin, ip));
    OK(dnnl_graph_partition_get_output_ports(part, nout, opp));
    if (o->part_mode != dnnl_fpmath_mode_strict && (rec->nops > 1 || o->part_mode_single))
        OK(dnnl_graph_partition_set_fpmath_mode(part, o->part_mode, o->part_apply_to_int));
    const tg_lt *cin[TG_MAXT], *cout[TG_MAXT];
    for (size_t i = 0; i < nin; ++i) cin[i] = &g->lt[ip[i].id - 1];
    for (size_t i = 0; i < nout; ++i) cout[i] = &g->lt[opp[i].id - 1];
    dnnl_graph_compiled_partition_t cp = NULL;
    OK(dnnl_graph_compiled_partition_create(&cp, part));
    dnnl_status_t st = dnnl_graph_partition_compile(part, cp, nin, cin, nout, cout, tg_eng);
    OK(st);
    if (st == dnnl_success) {
        rec->fused = compiled_fused(cp);
        if (o->reference) compiled_set_fused(cp, false);
        double ms = execute(g, cp, ip, nin, opp, nout, data, &st);
        if (o->reference) compiled_set_fused(cp, rec->fused);
        if (rec->fused) info->fused_ms = ms;
        if (o->opbyop && st == dnnl_success) {
            compiled_set_fused(cp, false);
            ms = execute(g, cp, ip, nin, opp, nout, o->opbyop, &st);
            compiled_set_fused(cp, rec->fused);
            if (rec->fused) info->opbyop_ms = ms;
        }
    }
    OK(dnnl_graph_compiled_partition_destroy(cp));
    return st == dnnl_success;
}

bool tg_run(const tg_graph *g, const tg_run_opts *o, void **data, tg_run_info *info) {
    memset(info, 0, sizeof *info);
    dnnl_graph_graph_t gr = build(g);
    OK(dnnl_graph_graph_filter(gr, o->policy));
    size_t np = 0;
    OK(dnnl_graph_graph_get_partition_num(gr, &np));
    dnnl_graph_partition_t parts[TG_MAXP];
    bool ok = np >= 1 && np <= TG_MAXP;
    CHECK(ok);
    if (ok) OK(dnnl_graph_graph_get_partitions(gr, np, parts));
    OK(dnnl_graph_graph_destroy(gr));
    if (!ok) return false;
    info->nparts = (int)np;
    for (size_t pi = 0; pi < np && ok; ++pi) {
        tg_part *rec = &info->part[pi];
        size_t nops = 0;
        uint8_t sup = 0;
        OK(dnnl_graph_partition_is_supported(parts[pi], &sup));
        OK(dnnl_graph_partition_get_op_num(parts[pi], &nops));
        rec->nops = (int)nops;
        rec->row = partition_row(parts[pi]);
        if (!sup && o->skip_unsupported) {
            CHECK_EQ_INT(nops, 1); /* only a lone End */
            continue;
        }
        CHECK(sup);
        if (rec->nops > info->maxops) {
            info->maxops = rec->nops;
            info->maxrow = rec->row ? rec->row : "single_op";
        }
        ok = sup && run_partition(g, o, parts[pi], data, info, rec);
    }
    OK(dnnl_stream_wait(tg_strm));
    for (size_t pi = 0; pi < np; ++pi) OK(dnnl_graph_partition_destroy(parts[pi]));
    return ok;
}

int tg_count_fused(const tg_run_info *info, const char *row_part) {
    int n = 0;
    for (int p = 0; p < info->nparts; ++p)
        n += info->part[p].fused && (!row_part || (info->part[p].row && strstr(info->part[p].row, row_part)));
    return n;
}

/* ---- comparing ---------------------------------------------------------- */

tg_diff tg_diff_values(const tg_lt *lt, const void *ref, const void *got, double (*tol)(double a, const tg_lt *lt)) {
    tg_diff r = {.total = tg_nelems(lt), .first = -1};
    for (int64_t e = 0; e < r.total; ++e) {
        int64_t off = tg_offset(lt, e);
        float a = pt_load_f32(ref, lt->data_type, off), b = pt_load_f32(got, lt->data_type, off);
        if (a != 0.f) ++r.nonzero;
        if (a == b || (isnan(a) && isnan(b))) continue;
        double diff = fabs((double)a - (double)b);
        if (isnan(diff)) diff = INFINITY;
        if (diff > r.worst) r.worst = diff;
        if (tol && diff <= tol((double)a, lt)) continue;
        if (r.first < 0) r.first = e;
        ++r.bad;
    }
    return r;
}

double tg_engine_tol(double a, const tg_lt *lt) {
    if (pt_dt_is_int(lt->data_type)) return 1.0;
    double ulp = lt->data_type == dnnl_bf16 ? 1.0 / 128 : lt->data_type == dnnl_f16 ? 1.0 / 1024 : 0x1p-23;
    return (lt->data_type == dnnl_f32 ? 256 : 4) * ulp * (1.0 + fabs(a));
}

tg_diff tg_check_values(const char *name, const tg_lt *lt, const void *ref, const void *got,
                        double (*tol)(double a, const tg_lt *lt)) {
    tg_diff r = tg_diff_values(lt, ref, got, tol);
    if (r.bad)
        fprintf(stderr, "  %s: tensor %zu: %lld of %lld differ (first at %lld), worst %g\n", name, lt->id,
                (long long)r.bad, (long long)r.total, (long long)r.first, r.worst);
    CHECK_EQ_INT(r.bad, 0);
    return r;
}
