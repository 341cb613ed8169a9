/* The op-schema registry: lookup by kind, and the generic add_op
 * validation (arity, data types, type variables, attributes, defaults) that
 * every row shares before its own check runs. */
#include "ops/op_schema.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ir/dtype.h"
#include "ops/schema_tables.h"
#include "ops/shape_utils.h"

/* Each kind's schema row, indexed by kind (op_table.def is in enum order,
 * which op_kinds.c checks at compile time). */
static const pt_op_schema *const kind_schema[] = {
#define PT_OP(kind, name, fam, schema, stem) &pt_schema_##schema,
#include "ops/op_table.def"
};

const pt_op_schema *pt_schema_of(int kind) {
    if (kind < 0 || kind >= dnnl_graph_op_last_symbol) return NULL;
    return kind_schema[kind];
}

int pt_schema_count(void) { return (int)(sizeof kind_schema / sizeof kind_schema[0]); }

pt_status pt_op_fail(const pt_op *op, pt_status st, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return pt_err(st, "op %s#%zu: %s", pt_op_kind_name((int)op->kind), op->id, msg);
}

pt_status pt_infer_like(pt_lt *out, const pt_lt *src) {
    return pt_set_output_shape(out, src->ndims, src->dims);
}

pt_status pt_merge_same_shape(int an, const int64_t *a, int bn, const int64_t *b, int *n,
                              int64_t *dims) {
    if (an > DNNL_MAX_NDIMS || bn > DNNL_MAX_NDIMS) return dnnl_invalid_shape;
    if (an < 0 && bn < 0) {
        *n = -1;
        return dnnl_success;
    }
    if (an >= 0 && bn >= 0 && an != bn) return dnnl_invalid_shape;
    int r = an >= 0 ? an : bn;
    for (int d = 0; d < r; ++d) {
        int64_t x = an >= 0 ? a[d] : PT_UNKNOWN_DIM, y = bn >= 0 ? b[d] : PT_UNKNOWN_DIM;
        if (x >= 0 && y >= 0 && x != y) return dnnl_invalid_shape;
        dims[d] = x >= 0 ? x : (y >= 0 ? y : PT_UNKNOWN_DIM);
    }
    *n = r;
    return dnnl_success;
}

pt_status pt_infer_same_shape(const pt_op *op, const pt_lt *a, const pt_lt *b, pt_lt *out,
                              const char *why) {
    int n;
    int64_t dims[DNNL_MAX_NDIMS];
    if (pt_merge_same_shape(a->ndims, a->dims, b->ndims, b->dims, &n, dims) != dnnl_success)
        return pt_op_fail(op, dnnl_invalid_shape, "%s", why);
    return pt_set_output_shape(out, n, dims);
}

int pt_channel_axis(const char *data_format, int r) {
    if (data_format && strcmp(data_format, "NCX") == 0) return 1;
    return r - 1;
}

/* ---- add_op validation ------------------------------------------------- */

static const pt_port_spec *port_spec(const pt_port_spec *specs, int n_specs, size_t i) {
    if (n_specs <= 0) return NULL;
    return &specs[(int)i < n_specs ? (int)i : n_specs - 1];
}

static bool count_ok(size_t n, int lo, int hi) { return (int)n >= lo && (hi < 0 || (int)n <= hi); }

/* Checks `n` ports of one side against [lo, hi] (hi < 0: unbounded). */
static pt_status check_count(const pt_op *op, const char *what, size_t n, int lo, int hi) {
    if (count_ok(n, lo, hi)) return dnnl_success;
    if (hi < 0)
        return pt_op_fail(op, dnnl_invalid_graph_op, "%zu %s given, expected at least %d", n,
                          what, lo);
    if (lo == hi)
        return pt_op_fail(op, dnnl_invalid_graph_op, "%zu %s given, expected %d", n, what, lo);
    return pt_op_fail(op, dnnl_invalid_graph_op, "%zu %s given, expected %d to %d", n, what, lo,
                      hi);
}

/* From the required specs to all specs, or to the row's max. */
void pt_schema_arity(const pt_op_schema *s, bool outputs, int *lo, int *hi) {
    const pt_port_spec *specs = outputs ? s->outputs : s->inputs;
    int n = outputs ? s->n_out_specs : s->n_in_specs, max = outputs ? s->max_out : s->max_in;
    *lo = 0;
    for (int i = 0; i < n; ++i)
        if (!specs[i].optional) *lo = i + 1;
    *hi = max ? max : n;
}

static pt_status check_arity(const pt_op *op, const pt_op_schema *s) {
    int lo, hi;
    pt_schema_arity(s, false, &lo, &hi);
    PT_CHECK(check_count(op, "inputs", op->nin, lo, hi));
    pt_schema_arity(s, true, &lo, &hi);
    return check_count(op, "outputs", op->nout, lo, hi);
}

static bool dt_in_mask(dnnl_data_type_t dt, uint32_t mask) {
    if (mask == PT_DT_ANY) return true;
    if ((int)dt < 0 || (int)dt >= 32) return false;
    return (mask & PT_DT(dt)) != 0;
}

static pt_status check_ports(const pt_op *op, const pt_op_schema *s) {
    dnnl_data_type_t tv[128];
    bool tv_set[128] = {false};
    for (int side = 0; side < 2; ++side) {
        const pt_lt *lts = side ? op->out : op->in;
        size_t n = side ? op->nout : op->nin;
        const pt_port_spec *specs = side ? s->outputs : s->inputs;
        int n_specs = side ? s->n_out_specs : s->n_in_specs;
        const char *what = side ? "output" : "input";
        for (size_t i = 0; i < n; ++i) {
            const pt_port_spec *ps = port_spec(specs, n_specs, i);
            if (!ps) continue; /* unbounded "anything" rows without specs */
            dnnl_data_type_t dt = lts[i].data_type;
            if (!dt_in_mask(dt, ps->dtypes)) {
                return pt_op_fail(op, dnnl_invalid_graph_op,
                                  "%s %zu (%s) data type %s not allowed", what, i, ps->name,
                                  pt_dt_name(dt));
            }
            unsigned char v = (unsigned char)ps->tvar;
            if (v == 0 || v >= 128) continue;
            if (!tv_set[v]) {
                tv_set[v] = true;
                tv[v] = dt;
            } else if (tv[v] != dt) {
                return pt_op_fail(op, dnnl_invalid_graph_op,
                                  "%s %zu (%s) data type %s differs from %s of type variable %c",
                                  what, i, ps->name, pt_dt_name(dt), pt_dt_name(tv[v]), ps->tvar);
            }
        }
    }
    return dnnl_success;
}

/* Matches `v` against a '|'-separated list; `icase` compares ignoring case.
 * Returns a pointer to the matching entry (length in *len) or NULL. */
static const char *match_allowed(const char *allowed, const char *v, bool icase, size_t *len) {
    size_t vn = strlen(v);
    const char *p = allowed;
    while (*p) {
        const char *e = strchr(p, '|');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == vn) {
            bool eq = true;
            for (size_t k = 0; k < n && eq; ++k)
                eq = icase ? tolower((unsigned char)p[k]) == tolower((unsigned char)v[k])
                           : p[k] == v[k];
            if (eq) {
                *len = n;
                return p;
            }
        }
        if (!e) break;
        p = e + 1;
    }
    return NULL;
}

static const pt_attr_spec *attr_spec(const pt_op_schema *s, int name) {
    if (!s->attrs) return NULL;
    for (const pt_attr_spec *a = s->attrs; a->name != 0; ++a)
        if (a->name == name) return a;
    return NULL;
}

/* Numeric attributes may arrive as scalar or list storage of the same family
 * (the C setters decide by id range); lists are accepted where the spec says
 * list, scalars take value[0]. */
static bool kind_compatible(pt_attr_kind spec, pt_attr_kind got) {
    switch (spec) {
    case PT_ATTR_F32:
    case PT_ATTR_F32S: return got == PT_ATTR_F32 || got == PT_ATTR_F32S;
    case PT_ATTR_S64:
    case PT_ATTR_S64S: return got == PT_ATTR_S64 || got == PT_ATTR_S64S;
    default: return spec == got;
    }
}

static const char *kind_word(pt_attr_kind k) {
    switch (k) {
    case PT_ATTR_F32: return "f32";
    case PT_ATTR_F32S: return "f32 list";
    case PT_ATTR_S64: return "s64";
    case PT_ATTR_S64S: return "s64 list";
    case PT_ATTR_BOOL: return "bool";
    default: return "string";
    }
}

static pt_status check_attrs(pt_op *op, const pt_op_schema *s) {
    for (size_t i = 0; i < op->nattr; ++i) {
        const pt_attr *a = &op->attrs[i];
        const char *an = pt_attr_name(a->name);
        const pt_attr_spec *as = attr_spec(s, a->name);
        if (!as) {
            return pt_op_fail(op, dnnl_invalid_graph_op, "attribute %s (0x%x) not supported", an,
                              (unsigned)a->name);
        }
        if (!kind_compatible(as->kind, a->kind)) {
            return pt_op_fail(op, dnnl_invalid_graph_op, "attribute %s must be %s, got %s", an,
                              kind_word(as->kind), kind_word(a->kind));
        }
        switch (as->kind) {
        case PT_ATTR_F32:
            if (a->n < 1 || !a->f)
                return pt_op_fail(op, dnnl_invalid_graph_op, "attribute %s has no value", an);
            break;
        case PT_ATTR_S64:
        case PT_ATTR_BOOL:
            if (a->n < 1 || !a->i)
                return pt_op_fail(op, dnnl_invalid_graph_op, "attribute %s has no value", an);
            break;
        case PT_ATTR_STR: {
            if (!a->s || !a->s[0])
                return pt_op_fail(op, dnnl_invalid_graph_op, "attribute %s is an empty string",
                                  an);
            if (!as->allowed) break;
            bool icase = a->name == dnnl_graph_op_attr_auto_pad;
            size_t len = 0;
            const char *hit = match_allowed(as->allowed, a->s, icase, &len);
            if (!hit) {
                return pt_op_fail(op, dnnl_invalid_graph_op,
                                  "attribute %s value \"%s\" not allowed (allowed: %s)", an, a->s,
                                  as->allowed);
            }
            if (strncmp(hit, a->s, len) != 0) {
                /* Store the canonical spelling (auto_pad "same_upper" -> "SAME_UPPER"). */
                char canon[64];
                if (len >= sizeof canon) break;
                memcpy(canon, hit, len);
                canon[len] = '\0';
                PT_CHECK(pt_op_set_str(op, a->name, canon));
            }
            break;
        }
        default: break; /* lists: any length here; rows check lengths */
        }
    }
    if (!s->attrs) return dnnl_success;
    for (const pt_attr_spec *as = s->attrs; as->name != 0; ++as) {
        if (pt_op_has(op, as->name)) continue;
        if (as->required) {
            return pt_op_fail(op, dnnl_invalid_graph_op, "required attribute %s missing",
                              pt_attr_name(as->name));
        }
        if (!as->has_default) continue;
        /* Defaults are stored in the form the C setters use for the id
         * (scalar below 0x40, list above), e.g. DynamicQuantize axis {1}. */
        bool list = pt_attr_kind_of(as->name) == PT_ATTR_S64S;
        switch (as->kind) {
        case PT_ATTR_F32: PT_CHECK(pt_op_set_f32(op, as->name, &as->dflt_f, 1, false)); break;
        case PT_ATTR_S64: PT_CHECK(pt_op_set_s64(op, as->name, &as->dflt_i, 1, list)); break;
        case PT_ATTR_S64S:
            /* An empty default list means the same as an absent attribute. */
            if (as->dflt_n > 0)
                PT_CHECK(pt_op_set_s64(op, as->name, as->dflt_v, as->dflt_n, list));
            break;
        case PT_ATTR_BOOL: PT_CHECK(pt_op_set_bool(op, as->name, as->dflt_i != 0)); break;
        case PT_ATTR_STR:
            if (as->dflt_s) PT_CHECK(pt_op_set_str(op, as->name, as->dflt_s));
            break;
        default: break;
        }
    }
    return dnnl_success;
}

pt_status pt_schema_verify(pt_op *op) {
    if (!op) return pt_err(dnnl_invalid_arguments, "schema verify: NULL op");
    const pt_op_schema *s = pt_schema_of((int)op->kind);
    if (!s) {
        return pt_err(dnnl_invalid_graph_op, "op #%zu: unknown op kind %d", op->id, (int)op->kind);
    }
    PT_CHECK(check_arity(op, s));
    PT_CHECK(check_ports(op, s));
    PT_CHECK(check_attrs(op, s));
    if (s->check) PT_CHECK(s->check(op));
    return dnnl_success;
}

pt_status pt_schema_infer(const pt_op *op, const pt_lt *in, pt_lt *out) {
    if (!op) return pt_err(dnnl_invalid_arguments, "schema infer: NULL op");
    const pt_op_schema *s = pt_schema_of((int)op->kind);
    if (!s) return pt_err(dnnl_invalid_graph_op, "op #%zu: unknown op kind %d", op->id, (int)op->kind);
    PT_CHECK(check_arity(op, s));
    if (op->nin > 0 && !in) return pt_err(dnnl_invalid_arguments, "schema infer: NULL inputs");
    if (op->nout > 0 && !out) return pt_err(dnnl_invalid_arguments, "schema infer: NULL outputs");
    /* Rows index fixed-size dims arrays: refuse impossible ranks up front. */
    for (size_t i = 0; i < op->nin; ++i)
        if (in[i].ndims > DNNL_MAX_NDIMS)
            return pt_op_fail(op, dnnl_invalid_shape, "input %zu rank %d > %d", i, in[i].ndims,
                              DNNL_MAX_NDIMS);
    for (size_t i = 0; i < op->nout; ++i)
        if (out[i].ndims > DNNL_MAX_NDIMS)
            return pt_op_fail(op, dnnl_invalid_shape, "output %zu rank %d > %d", i,
                              out[i].ndims, DNNL_MAX_NDIMS);
    pt_status st;
    unsigned long lines_before = pt_err_lines();
    if (s->infer) {
        st = s->infer(op, in, out);
    } else {
        st = dnnl_success;
        for (size_t i = 0; i < op->nout && op->nin > 0 && st == dnnl_success; ++i)
            st = pt_infer_like(&out[i], &in[0]);
    }
    if (st != dnnl_success && pt_err_lines() == lines_before) /* the row said nothing itself */
        pt_op_fail(op, st, "shape inference failed (%s)", pt_status_name(st));
    return st;
}

bool pt_schema_supported(const pt_op *op) {
    if (!op) return false;
    const pt_op_schema *s = pt_schema_of((int)op->kind);
    if (!s) return false;
    /* Rows read the ports they expect; an op that never passed add_op is not supported. */
    int lo_in, hi_in, lo_out, hi_out;
    pt_schema_arity(s, false, &lo_in, &hi_in);
    pt_schema_arity(s, true, &lo_out, &hi_out);
    if (!count_ok(op->nin, lo_in, hi_in) || !count_ok(op->nout, lo_out, hi_out)) return false;
    return s->supported ? s->supported(op) : true;
}
