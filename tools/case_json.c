/* JSON graph loader (cJSON) and case utilities; see case_json.h. */
#include "case_json.h"
#include "strutil.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dtconv.h"
#include "ir/logical_tensor.h"

/* ---- small utilities ------------------------------------------------------ */

static char *dup_str(const char *s) {
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}


/* The shape helpers are the library's own (pc_lt is pt_lt). */
void pc_dense_strides(int ndims, const int64_t *dims, int64_t *strides) { pt_dense_strides(ndims, dims, strides); }

bool pc_lt_shape_known(const pc_lt *lt) { return pt_lt_shape_known(lt); }

bool pc_lt_strides_known(const pc_lt *lt) {
    if (lt->layout_type != dnnl_graph_layout_type_strided || lt->ndims < 0) return false;
    for (int d = 0; d < lt->ndims; ++d)
        if (lt->layout.strides[d] == DNNL_GRAPH_UNKNOWN_DIM) return false;
    return true;
}

int64_t pc_lt_nelems(const pc_lt *lt) { return pt_lt_nelems(lt); }

void pc_lt_describe(const pc_lt *lt, char *buf, size_t cap) {
    size_t len = (size_t)snprintf(buf, cap, "%s:", pc_dt_name(lt->data_type));
    if (lt->ndims < 0) {
        if (len < cap) snprintf(buf + len, cap - len, "?");
        return;
    }
    if (lt->ndims == 0 && len < cap) snprintf(buf + len, cap - len, "scalar");
    for (int d = 0; d < lt->ndims && len < cap; ++d) {
        if (lt->dims[d] == DNNL_GRAPH_UNKNOWN_DIM)
            len += (size_t)snprintf(buf + len, cap - len, d ? "x?" : "?");
        else
            len += (size_t)snprintf(buf + len, cap - len, d ? "x%" PRId64 : "%" PRId64, lt->dims[d]);
    }
}

/* ---- attributes ----------------------------------------------------------- */

void pc_attr_free(pc_attr *a) {
    free(a->i);
    free(a->f);
    free(a->s);
    *a = (pc_attr){.id = a->id, .type = a->type};
}

const pc_attr *pc_op_attr(const pc_op *op, int attr_id) {
    for (size_t k = 0; k < op->nattr; ++k)
        if (op->attrs[k].id == attr_id) return &op->attrs[k];
    return NULL;
}

pc_attr *pc_op_attr_mut(pc_op *op, int attr_id) { return (pc_attr *)pc_op_attr(op, attr_id); }

/* The attribute when the op has it with at least one value, else NULL. */
static const pc_attr *attr_with_values(const pc_op *op, int attr_id) {
    const pc_attr *a = pc_op_attr(op, attr_id);
    return a && a->n ? a : NULL;
}

int64_t pc_attr_s64(const pc_op *op, int attr_id, int64_t dflt) {
    const pc_attr *a = attr_with_values(op, attr_id);
    if (a && a->i) return a->i[0];
    return a && a->f ? (int64_t)a->f[0] : dflt;
}

float pc_attr_f32(const pc_op *op, int attr_id, float dflt) {
    const pc_attr *a = attr_with_values(op, attr_id);
    if (a && a->f) return a->f[0];
    return a && a->i ? (float)a->i[0] : dflt;
}

bool pc_attr_bool(const pc_op *op, int attr_id, bool dflt) {
    const pc_attr *a = attr_with_values(op, attr_id);
    return a && a->i ? a->i[0] != 0 : dflt;
}

const char *pc_attr_str(const pc_op *op, int attr_id, const char *dflt) {
    const pc_attr *a = pc_op_attr(op, attr_id);
    return (a && a->s) ? a->s : dflt;
}

int pc_op_set_attr(pc_op *op, int attr_id, pc_attr_type type, const int64_t *i, const float *f, size_t n,
                   const char *s) {
    pc_attr na = {.id = attr_id, .type = type, .n = n};
    if (i && n) {
        na.i = malloc(n * sizeof *na.i);
        if (!na.i) return -1;
        memcpy(na.i, i, n * sizeof *na.i);
    }
    if (f && n) {
        na.f = malloc(n * sizeof *na.f);
        if (!na.f) {
            free(na.i);
            return -1;
        }
        memcpy(na.f, f, n * sizeof *na.f);
    }
    if (s) {
        na.s = dup_str(s);
        if (!na.s) {
            free(na.i);
            free(na.f);
            return -1;
        }
    }
    pc_attr *old = pc_op_attr_mut(op, attr_id);
    if (old) {
        pc_attr_free(old);
        *old = na;
        return 0;
    }
    pc_attr *grown = realloc(op->attrs, (op->nattr + 1) * sizeof *grown);
    if (!grown) {
        pc_attr_free(&na);
        return -1;
    }
    op->attrs = grown;
    op->attrs[op->nattr++] = na;
    return 0;
}

/* ---- case lookups --------------------------------------------------------- */

pc_op *pc_case_op(pc_case *c, size_t op_id) {
    for (size_t k = 0; k < c->nops; ++k)
        if (c->ops[k].id == op_id) return &c->ops[k];
    return NULL;
}

long pc_case_producer(const pc_case *c, size_t tid) {
    for (size_t k = 0; k < c->nops; ++k)
        for (size_t o = 0; o < c->ops[k].nout; ++o)
            if (c->ops[k].out[o].id == tid) return (long)k;
    return -1;
}

const pc_lt *pc_case_tensor(const pc_case *c, size_t tid) {
    for (size_t k = 0; k < c->nops; ++k) {
        for (size_t o = 0; o < c->ops[k].nout; ++o)
            if (c->ops[k].out[o].id == tid) return &c->ops[k].out[o];
        for (size_t o = 0; o < c->ops[k].nin; ++o)
            if (c->ops[k].in[o].id == tid) return &c->ops[k].in[o];
    }
    return NULL;
}

size_t pc_case_consumer_count(const pc_case *c, size_t tid) {
    size_t n = 0;
    for (size_t k = 0; k < c->nops; ++k)
        for (size_t o = 0; o < c->ops[k].nin; ++o)
            if (c->ops[k].in[o].id == tid) ++n;
    return n;
}

bool pc_case_is_input(const pc_case *c, size_t tid) {
    return pc_case_tensor(c, tid) != NULL && pc_case_producer(c, tid) < 0;
}

bool pc_case_is_output(const pc_case *c, size_t tid) {
    if (pc_case_producer(c, tid) < 0) return false;
    bool consumed = false;
    for (size_t k = 0; k < c->nops; ++k)
        for (size_t o = 0; o < c->ops[k].nin; ++o)
            if (c->ops[k].in[o].id == tid) {
                if (c->ops[k].kind == dnnl_graph_op_end) return true;
                consumed = true;
            }
    return !consumed;
}

size_t pc_case_for_tensor(pc_case *c, size_t tid, void (*fn)(pc_lt *lt, void *ctx), void *ctx) {
    size_t n = 0;
    for (size_t k = 0; k < c->nops; ++k) {
        for (size_t o = 0; o < c->ops[k].nin; ++o)
            if (c->ops[k].in[o].id == tid) {
                fn(&c->ops[k].in[o], ctx);
                ++n;
            }
        for (size_t o = 0; o < c->ops[k].nout; ++o)
            if (c->ops[k].out[o].id == tid) {
                fn(&c->ops[k].out[o], ctx);
                ++n;
            }
    }
    return n;
}

/* ---- topological order ---------------------------------------------------- */

int pc_case_topo_order(const pc_case *c, size_t *order, char *err, size_t errcap) {
    size_t n = c->nops;
    size_t *indeg = calloc(n ? n : 1, sizeof *indeg);
    long *ready = malloc((n ? n : 1) * sizeof *ready);
    bool *done = calloc(n ? n : 1, sizeof *done);
    if (!indeg || !ready || !done) {
        free(indeg);
        free(ready);
        free(done);
        pc_set_err(err, errcap, "%s: out of memory", c->path);
        return -1;
    }
    /* One edge per (producer, consumer input) pair. */
    for (size_t k = 0; k < n; ++k) {
        for (size_t o = 0; o < c->ops[k].nout; ++o) {
            long p = pc_case_producer(c, c->ops[k].out[o].id);
            if (p != (long)k) {
                pc_set_err(err, errcap, "%s: tensor %zu is produced by op %zu and op %zu", c->path,
                        c->ops[k].out[o].id, c->ops[p].id, c->ops[k].id);
                free(indeg);
                free(ready);
                free(done);
                return -1;
            }
            for (size_t q = o + 1; q < c->ops[k].nout; ++q)
                if (c->ops[k].out[q].id == c->ops[k].out[o].id) {
                    pc_set_err(err, errcap, "%s: op %zu lists output tensor %zu twice", c->path, c->ops[k].id,
                            c->ops[k].out[o].id);
                    free(indeg);
                    free(ready);
                    free(done);
                    return -1;
                }
        }
        for (size_t i = 0; i < c->ops[k].nin; ++i)
            if (pc_case_producer(c, c->ops[k].in[i].id) >= 0) ++indeg[k];
    }
    /* Seed: zero in-degree ops by increasing op id. */
    size_t head = 0, tail = 0;
    for (;;) {
        long best = -1;
        for (size_t k = 0; k < n; ++k)
            if (!done[k] && indeg[k] == 0 && (best < 0 || c->ops[k].id < c->ops[best].id)) best = (long)k;
        if (best < 0) break;
        done[best] = true;
        ready[tail++] = best;
    }
    size_t count = 0;
    while (head < tail) {
        long k = ready[head++];
        order[count++] = (size_t)k;
        for (size_t o = 0; o < c->ops[k].nout; ++o) {
            size_t tid = c->ops[k].out[o].id;
            for (size_t m = 0; m < n; ++m) {
                if (done[m]) continue;
                for (size_t i = 0; i < c->ops[m].nin; ++i)
                    if (c->ops[m].in[i].id == tid) --indeg[m];
                if (indeg[m] == 0) {
                    done[m] = true;
                    ready[tail++] = (long)m;
                }
            }
        }
    }
    free(indeg);
    free(ready);
    free(done);
    if (count != n) {
        pc_set_err(err, errcap, "%s: the graph has a cycle (%zu of %zu ops ordered)", c->path, count, n);
        return -1;
    }
    return 0;
}

/* ---- freeing and cloning -------------------------------------------------- */

static void op_free(pc_op *op) {
    free(op->name);
    for (size_t k = 0; k < op->nattr; ++k) pc_attr_free(&op->attrs[k]);
    free(op->attrs);
    free(op->in);
    free(op->out);
    memset(op, 0, sizeof *op);
}

void pc_case_free(pc_case *c) {
    if (!c) return;
    while (c->nops) op_free(&c->ops[--c->nops]);
    free(c->ops);
    free(c->path);
    free(c->version);
    memset(c, 0, sizeof *c);
}

static void *dup_mem(const void *p, size_t bytes) {
    if (!p || !bytes) return NULL;
    void *d = malloc(bytes);
    if (d) memcpy(d, p, bytes);
    return d;
}

int pc_case_clone(const pc_case *src, pc_case *dst) {
    memset(dst, 0, sizeof *dst);
    dst->path = dup_str(src->path);
    dst->version = dup_str(src->version);
    dst->fpmath = src->fpmath;
    dst->apply_to_int = src->apply_to_int;
    dst->ops = calloc(src->nops ? src->nops : 1, sizeof *dst->ops);
    if (!dst->path || !dst->version || !dst->ops) goto fail;
    dst->nops = src->nops;
    for (size_t k = 0; k < src->nops; ++k) {
        const pc_op *s = &src->ops[k];
        pc_op *d = &dst->ops[k];
        d->id = s->id;
        d->kind = s->kind;
        d->name = dup_str(s->name);
        if (!d->name) goto fail;
        d->nin = s->nin;
        d->nout = s->nout;
        d->in = dup_mem(s->in, s->nin * sizeof *s->in);
        d->out = dup_mem(s->out, s->nout * sizeof *s->out);
        if ((s->nin && !d->in) || (s->nout && !d->out)) goto fail;
        if (s->nattr) {
            d->attrs = calloc(s->nattr, sizeof *d->attrs);
            if (!d->attrs) goto fail;
            d->nattr = s->nattr;
            for (size_t a = 0; a < s->nattr; ++a) {
                const pc_attr *sa = &s->attrs[a];
                pc_attr *da = &d->attrs[a];
                *da = (pc_attr){.id = sa->id, .type = sa->type, .n = sa->n};
                da->i = dup_mem(sa->i, sa->n * sizeof *sa->i);
                da->f = dup_mem(sa->f, sa->n * sizeof *sa->f);
                da->s = sa->s ? dup_str(sa->s) : NULL;
                if ((sa->i && sa->n && !da->i) || (sa->f && sa->n && !da->f) || (sa->s && !da->s)) goto fail;
            }
        }
    }
    return 0;
fail:
    pc_case_free(dst);
    return -1;
}

/* ---- JSON reading --------------------------------------------------------- */

typedef struct {
    const char *path;
    char *err;
    size_t cap;
} ctx_t;

/* Exact integer value of a JSON number (cJSON keeps numbers as double, which
 * is exact for every id in the test files and for INT64_MIN). */
static bool json_int(const cJSON *v, int64_t *out) {
    if (!cJSON_IsNumber(v)) return false;
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d)) return false;
    if (d < -9223372036854775808.0 || d >= 9223372036854775808.0) return false;
    *out = (int64_t)d;
    return true;
}

static bool json_u64(const cJSON *v, size_t *out) {
    if (!cJSON_IsNumber(v)) return false;
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d) || d < 0 || d >= 18446744073709551616.0) return false;
    *out = (size_t)d;
    return true;
}

int pc_fpmath_from_name(const char *s, dnnl_fpmath_mode_t *m) {
    static const char *const names[] = {
        [dnnl_fpmath_mode_strict] = "strict", [dnnl_fpmath_mode_bf16] = "bf16", [dnnl_fpmath_mode_f16] = "f16",
        [dnnl_fpmath_mode_any] = "any",       [dnnl_fpmath_mode_tf32] = "tf32",
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; ++k)
        if (names[k] && strcmp(names[k], s) == 0) {
            *m = (dnnl_fpmath_mode_t)k;
            return 0;
        }
    return -1;
}

/* Reads a shape / stride array.  A single INT64_MIN means "unknown"
 * (*count = -1). */
static int read_dims(const ctx_t *cx, const cJSON *arr, const char *what, size_t op_id, size_t tid, int *count,
                     int64_t *vals) {
    if (!cJSON_IsArray(arr)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: '%s' must be an array of integers", cx->path, op_id,
                tid, what);
        return -1;
    }
    int n = cJSON_GetArraySize(arr);
    if (n > DNNL_MAX_NDIMS) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: '%s' has %d entries (at most %d)", cx->path, op_id,
                tid, what, n, DNNL_MAX_NDIMS);
        return -1;
    }
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        if (!json_int(e, &vals[k])) {
            pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: '%s' entry %d is not an integer", cx->path, op_id,
                    tid, what, k);
            return -1;
        }
        ++k;
    }
    *count = (n == 1 && vals[0] == DNNL_GRAPH_UNKNOWN_DIM) ? -1 : n;
    return 0;
}

static int read_tensor(const ctx_t *cx, const cJSON *t, size_t op_id, const char *side, int idx, pc_lt *lt) {
    memset(lt, 0, sizeof *lt);
    if (!cJSON_IsObject(t)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: %s[%d] is not an object", cx->path, op_id, side, idx);
        return -1;
    }
    if (!json_u64(cJSON_GetObjectItemCaseSensitive(t, "id"), &lt->id)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: %s[%d]: missing or invalid 'id' (unsigned integer)", cx->path,
                op_id, side, idx);
        return -1;
    }
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype");
    int dtv = cJSON_IsString(dt) ? pc_dt_from_name(dt->valuestring) : -1;
    if (dtv < 0) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: missing or unknown 'dtype'%s%s%s", cx->path, op_id,
                lt->id, cJSON_IsString(dt) ? " \"" : "", cJSON_IsString(dt) ? dt->valuestring : "",
                cJSON_IsString(dt) ? "\"" : "");
        return -1;
    }
    lt->data_type = (dnnl_data_type_t)dtv;

    int nd = -1;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(t, "shape");
    if (!shape) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: missing 'shape'", cx->path, op_id, lt->id);
        return -1;
    }
    if (read_dims(cx, shape, "shape", op_id, lt->id, &nd, lt->dims)) return -1;
    lt->ndims = nd;
    for (int d = 0; d < nd; ++d)
        if (lt->dims[d] < 0 && lt->dims[d] != DNNL_GRAPH_UNKNOWN_DIM) {
            pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: negative dimension %" PRId64 " in 'shape'", cx->path,
                    op_id, lt->id, lt->dims[d]);
            return -1;
        }

    /* Layout: default strided when strides are present, undef otherwise. */
    int64_t strides[DNNL_MAX_NDIMS];
    int ns = -1;
    const cJSON *stride = cJSON_GetObjectItemCaseSensitive(t, "stride");
    if (stride && read_dims(cx, stride, "stride", op_id, lt->id, &ns, strides)) return -1;
    const cJSON *lay = cJSON_GetObjectItemCaseSensitive(t, "layout_type");
    if (lay && !cJSON_IsString(lay)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: 'layout_type' must be a string", cx->path, op_id, lt->id);
        return -1;
    }
    const char *ls = lay ? lay->valuestring : (ns >= 0 ? "strided" : "undef");
    if (strcmp(ls, "strided") == 0) lt->layout_type = dnnl_graph_layout_type_strided;
    else if (strcmp(ls, "any") == 0) lt->layout_type = dnnl_graph_layout_type_any;
    else if (strcmp(ls, "undef") == 0) lt->layout_type = dnnl_graph_layout_type_undef;
    else if (strcmp(ls, "opaque") == 0) lt->layout_type = dnnl_graph_layout_type_opaque;
    else {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: unknown layout_type \"%s\"", cx->path, op_id, lt->id, ls);
        return -1;
    }
    if (lt->layout_type == dnnl_graph_layout_type_opaque) {
        lt->layout.layout_id = (ns >= 1) ? (size_t)strides[0] : 0;
    } else {
        for (int d = 0; d < DNNL_MAX_NDIMS; ++d) lt->layout.strides[d] = DNNL_GRAPH_UNKNOWN_DIM;
        if (nd >= 0 && ns >= 0) {
            if (ns != nd) {
                pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: 'stride' has %d entries but 'shape' has %d",
                        cx->path, op_id, lt->id, ns, nd);
                return -1;
            }
            for (int d = 0; d < nd; ++d) lt->layout.strides[d] = strides[d];
        }
        /* Strided with unknown strides is what the writer emits for inferred
         * intermediates; keep them strided, the driver re-derives strides. */
    }

    const cJSON *prop = cJSON_GetObjectItemCaseSensitive(t, "property_type");
    if (prop && !cJSON_IsString(prop)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: 'property_type' must be a string", cx->path, op_id,
                lt->id);
        return -1;
    }
    const char *ps = prop ? prop->valuestring : "undef";
    if (strcmp(ps, "undef") == 0) lt->property = dnnl_graph_tensor_property_undef;
    else if (strcmp(ps, "variable") == 0) lt->property = dnnl_graph_tensor_property_variable;
    else if (strcmp(ps, "constant") == 0) lt->property = dnnl_graph_tensor_property_constant;
    else if (strcmp(ps, "host_scalar") == 0) lt->property = dnnl_graph_tensor_property_host_scalar;
    else {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: tensor %zu: unknown property_type \"%s\"", cx->path, op_id, lt->id,
                ps);
        return -1;
    }
    return 0;
}

static bool is_internal_attr(const char *name) {
    return strcmp(name, "partition_id") == 0 || strcmp(name, "backend") == 0 || strcmp(name, "op_depth") == 0 ||
           strcmp(name, "matched") == 0;
}

static int read_attr(const ctx_t *cx, pc_op *op, const cJSON *a) {
    const char *name = a->string ? a->string : "";
    if (!cJSON_IsObject(a)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: attribute '%s' is not an object", cx->path, op->id, name);
        return -1;
    }
    if (!a->child) return 0; /* "{}": a value of none of the six types */
    int id = pc_attr_from_name(name);
    if (id == dnnl_graph_op_attr_undef) {
        if (!is_internal_attr(name))
            fprintf(stderr, "partita: warning: %s: op %zu: unknown attribute '%s' ignored\n", cx->path, op->id, name);
        return 0;
    }
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(a, "type");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "value");
    pc_attr_type t = cJSON_IsString(ty) ? pc_attr_type_from_str(ty->valuestring) : PC_AT_NONE;
    if (t == PC_AT_NONE) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: attribute '%s': missing or unknown 'type'", cx->path, op->id, name);
        return -1;
    }
    if (!v) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: attribute '%s': missing 'value'", cx->path, op->id, name);
        return -1;
    }
    int64_t iv[64];
    float fv[64];
    int64_t *ibuf = iv;
    float *fbuf = fv;
    size_t n = 0;
    int rc = -1;
    const char *what = NULL;
    switch (t) {
        case PC_AT_BOOL:
            if (cJSON_IsBool(v)) iv[0] = cJSON_IsTrue(v) ? 1 : 0;
            else if (!json_int(v, &iv[0]) || (iv[0] != 0 && iv[0] != 1)) {
                what = "expected 0 or 1";
                break;
            }
            n = 1;
            rc = pc_op_set_attr(op, id, t, iv, NULL, 1, NULL);
            break;
        case PC_AT_S64:
            if (json_int(v, &iv[0])) rc = pc_op_set_attr(op, id, t, iv, NULL, 1, NULL);
            else what = "expected an integer";
            break;
        case PC_AT_F32:
            if (cJSON_IsNumber(v)) {
                fv[0] = (float)v->valuedouble;
                rc = pc_op_set_attr(op, id, t, NULL, fv, 1, NULL);
            } else {
                what = "expected a number";
            }
            break;
        case PC_AT_STR:
            if (cJSON_IsString(v)) rc = pc_op_set_attr(op, id, t, NULL, NULL, 0, v->valuestring);
            else what = "expected a string";
            break;
        case PC_AT_S64S:
        case PC_AT_F32S: {
            if (!cJSON_IsArray(v)) {
                what = "expected an array";
                break;
            }
            n = (size_t)cJSON_GetArraySize(v);
            if (n > 64) {
                ibuf = malloc(n * sizeof *ibuf);
                fbuf = malloc(n * sizeof *fbuf);
                if (!ibuf || !fbuf) {
                    what = "out of memory";
                    break;
                }
            }
            size_t k = 0;
            const cJSON *e;
            bool bad = false;
            cJSON_ArrayForEach(e, v) {
                if (t == PC_AT_S64S) {
                    if (!json_int(e, &ibuf[k])) bad = true;
                } else {
                    if (!cJSON_IsNumber(e)) bad = true;
                    else fbuf[k] = (float)e->valuedouble;
                }
                ++k;
            }
            if (bad) {
                what = t == PC_AT_S64S ? "expected an array of integers" : "expected an array of numbers";
                break;
            }
            rc = pc_op_set_attr(op, id, t, t == PC_AT_S64S ? ibuf : NULL, t == PC_AT_F32S ? fbuf : NULL, n, NULL);
            if (rc) what = "out of memory";
            break;
        }
        default: break;
    }
    if (ibuf != iv) free(ibuf);
    if (fbuf != fv) free(fbuf);
    if (rc) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: attribute '%s' (type %s): %s", cx->path, op->id, name,
                pc_attr_type_str(t), what ? what : "invalid value");
        return -1;
    }
    return 0;
}

static int read_tensor_list(const ctx_t *cx, const cJSON *arr, size_t op_id, const char *side, pc_lt **out,
                            size_t *n) {
    if (!cJSON_IsArray(arr)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: missing or invalid '%s' (array of tensors)", cx->path, op_id, side);
        return -1;
    }
    int cnt = cJSON_GetArraySize(arr);
    *out = calloc(cnt ? (size_t)cnt : 1, sizeof **out);
    if (!*out) {
        pc_set_err(cx->err, cx->cap, "%s: out of memory", cx->path);
        return -1;
    }
    *n = (size_t)cnt;
    int k = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, arr) {
        if (read_tensor(cx, t, op_id, side, k, &(*out)[k])) return -1;
        ++k;
    }
    return 0;
}

static int read_op(const ctx_t *cx, const cJSON *o, int idx, pc_op *op) {
    if (!cJSON_IsObject(o)) {
        pc_set_err(cx->err, cx->cap, "%s: graph[%d] is not an object", cx->path, idx);
        return -1;
    }
    if (!json_u64(cJSON_GetObjectItemCaseSensitive(o, "id"), &op->id)) {
        pc_set_err(cx->err, cx->cap, "%s: graph[%d]: missing or invalid op 'id' (unsigned integer)", cx->path, idx);
        return -1;
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
    if (name && !cJSON_IsString(name)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: 'name' must be a string", cx->path, op->id);
        return -1;
    }
    op->name = dup_str(name ? name->valuestring : "");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(o, "kind");
    if (!cJSON_IsString(kind)) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: missing or invalid 'kind' (string)", cx->path, op->id);
        return -1;
    }
    op->kind = pc_kind_from_name(kind->valuestring);
    /* Legacy spelling in one shipped file; docs/ops.md lets a deserialiser
     * map it (project decision). */
    if (op->kind < 0 && strcmp(kind->valuestring, "BiasAddBackprop") == 0)
        op->kind = dnnl_graph_op_bias_add_backward;
    if (op->kind < 0) {
        pc_set_err(cx->err, cx->cap, "%s: op %zu: unknown op kind \"%s\"", cx->path, op->id, kind->valuestring);
        return -1;
    }
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(o, "attrs");
    if (attrs) {
        if (!cJSON_IsObject(attrs)) {
            pc_set_err(cx->err, cx->cap, "%s: op %zu: 'attrs' must be an object", cx->path, op->id);
            return -1;
        }
        const cJSON *a;
        cJSON_ArrayForEach(a, attrs) {
            if (read_attr(cx, op, a)) return -1;
        }
    }
    if (read_tensor_list(cx, cJSON_GetObjectItemCaseSensitive(o, "inputs"), op->id, "inputs", &op->in, &op->nin))
        return -1;
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(o, "outputs");
    if (!outs && op->kind == dnnl_graph_op_end) {
        op->out = calloc(1, sizeof *op->out);
        return op->out ? 0 : -1;
    }
    return read_tensor_list(cx, outs, op->id, "outputs", &op->out, &op->nout);
}

int pc_case_parse(const char *text, const char *path, pc_case *c, char *err, size_t errcap) {
    memset(c, 0, sizeof *c);
    ctx_t cx = {path ? path : "<json>", err, errcap};
    c->path = dup_str(cx.path);
    c->fpmath = dnnl_fpmath_mode_strict;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    if (!root) {
        /* Report the line of the syntax error. */
        const char *at = cJSON_GetErrorPtr();
        int line = 1;
        if (at && at >= text)
            for (const char *p = text; p < at && *p; ++p) line += *p == '\n';
        pc_set_err(err, errcap, "%s: line %d: JSON syntax error", cx.path, line);
        pc_case_free(c);
        return -1;
    }
    int rc = -1;
    if (!cJSON_IsObject(root)) {
        pc_set_err(err, errcap, "%s: the top level is not a JSON object", cx.path);
        goto done;
    }
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(root, "version");
    c->version = dup_str(cJSON_IsString(ver) ? ver->valuestring : "");
    const cJSON *fp = cJSON_GetObjectItemCaseSensitive(root, "fpmath_mode");
    if (fp) {
        if (!cJSON_IsString(fp) || pc_fpmath_from_name(fp->valuestring, &c->fpmath)) {
            pc_set_err(err, errcap, "%s: invalid 'fpmath_mode' (strict, bf16, f16, tf32 or any)", cx.path);
            goto done;
        }
    }
    const cJSON *ati = cJSON_GetObjectItemCaseSensitive(root, "fpmath_mode_apply_to_int");
    if (ati) {
        if (cJSON_IsBool(ati)) c->apply_to_int = cJSON_IsTrue(ati);
        else if (cJSON_IsString(ati) && strcmp(ati->valuestring, "true") == 0) c->apply_to_int = 1;
        else if (cJSON_IsString(ati) && strcmp(ati->valuestring, "false") == 0) c->apply_to_int = 0;
        else {
            pc_set_err(err, errcap, "%s: invalid 'fpmath_mode_apply_to_int' (\"true\" or \"false\")", cx.path);
            goto done;
        }
    }
    const cJSON *graph = cJSON_GetObjectItemCaseSensitive(root, "graph");
    if (!cJSON_IsArray(graph)) {
        pc_set_err(err, errcap, "%s: missing 'graph' array", cx.path);
        goto done;
    }
    int nops = cJSON_GetArraySize(graph);
    if (nops == 0) {
        pc_set_err(err, errcap, "%s: 'graph' is empty", cx.path);
        goto done;
    }
    c->ops = calloc((size_t)nops, sizeof *c->ops);
    if (!c->ops || !c->path || !c->version) {
        pc_set_err(err, errcap, "%s: out of memory", cx.path);
        goto done;
    }
    c->nops = (size_t)nops;
    int k = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, graph) {
        if (read_op(&cx, o, k, &c->ops[k])) goto done;
        ++k;
    }
    for (size_t a = 0; a < c->nops; ++a)
        for (size_t b = a + 1; b < c->nops; ++b)
            if (c->ops[a].id == c->ops[b].id) {
                pc_set_err(err, errcap, "%s: op id %zu is used twice", cx.path, c->ops[a].id);
                goto done;
            }
    rc = 0;
done:
    cJSON_Delete(root);
    if (rc) pc_case_free(c);
    return rc;
}

int pc_case_load(const char *path, pc_case *c, char *err, size_t errcap) {
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) {
        pc_set_err(err, errcap, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    bool read_err = false;
    char *buf = pc_read_stream(f, &read_err);
    fclose(f);
    if (!buf || read_err) {
        free(buf);
        pc_set_err(err, errcap, "%s: cannot read the file", path);
        return -1;
    }
    int rc = pc_case_parse(buf, path, c, err, errcap);
    free(buf);
    return rc;
}
