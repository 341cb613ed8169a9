/* Op storage: logical tensors and attributes kept by value. */
#include "ir/op.h"

#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *r = malloc(n);
    if (r) memcpy(r, s, n);
    return r;
}

pt_op *pt_op_new(size_t id, dnnl_graph_op_kind_t kind, const char *name) {
    pt_op *op = calloc(1, sizeof *op);
    if (!op) return NULL;
    op->id = id;
    op->kind = kind;
    op->name = dup_str(name ? name : "");
    if (!op->name) {
        free(op);
        return NULL;
    }
    return op;
}

static void attr_clear(pt_attr *a) {
    free(a->f);
    free(a->i);
    free(a->s);
    a->f = NULL;
    a->i = NULL;
    a->s = NULL;
    a->n = 0;
}

static bool attr_copy(pt_attr *dst, const pt_attr *src) {
    *dst = *src;
    dst->f = NULL;
    dst->i = NULL;
    dst->s = NULL;
    if (src->f) {
        dst->f = malloc((src->n ? src->n : 1) * sizeof(float));
        if (!dst->f) return false;
        memcpy(dst->f, src->f, src->n * sizeof(float));
    }
    if (src->i) {
        dst->i = malloc((src->n ? src->n : 1) * sizeof(int64_t));
        if (!dst->i) return false;
        memcpy(dst->i, src->i, src->n * sizeof(int64_t));
    }
    if (src->s) {
        dst->s = dup_str(src->s);
        if (!dst->s) return false;
    }
    return true;
}

void pt_op_free(pt_op *op) {
    if (!op) return;
    for (size_t i = 0; i < op->nattr; ++i) attr_clear(&op->attrs[i]);
    free(op->attrs);
    free(op->in);
    free(op->out);
    free(op->name);
    free(op);
}

pt_op *pt_op_clone(const pt_op *src) {
    pt_op *op = pt_op_new(src->id, src->kind, src->name);
    if (!op) return NULL;
    if (src->nin) {
        op->in = malloc(src->nin * sizeof(pt_lt));
        if (!op->in) goto fail;
        memcpy(op->in, src->in, src->nin * sizeof(pt_lt));
        op->nin = op->cap_in = src->nin;
    }
    if (src->nout) {
        op->out = malloc(src->nout * sizeof(pt_lt));
        if (!op->out) goto fail;
        memcpy(op->out, src->out, src->nout * sizeof(pt_lt));
        op->nout = op->cap_out = src->nout;
    }
    if (src->nattr) {
        op->attrs = calloc(src->nattr, sizeof(pt_attr));
        if (!op->attrs) goto fail;
        op->cap_attr = src->nattr;
        for (size_t i = 0; i < src->nattr; ++i) {
            op->nattr = i + 1;
            if (!attr_copy(&op->attrs[i], &src->attrs[i])) goto fail;
        }
    }
    return op;
fail:
    pt_op_free(op);
    return NULL;
}

static pt_status push_lt(pt_lt **arr, size_t *n, size_t *cap, const pt_lt *lt) {
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        pt_lt *na = realloc(*arr, nc * sizeof(pt_lt));
        if (!na) return dnnl_out_of_memory;
        *arr = na;
        *cap = nc;
    }
    (*arr)[(*n)++] = *lt;
    return dnnl_success;
}

pt_status pt_op_add_input(pt_op *op, const pt_lt *lt) {
    return push_lt(&op->in, &op->nin, &op->cap_in, lt);
}
pt_status pt_op_add_output(pt_op *op, const pt_lt *lt) {
    return push_lt(&op->out, &op->nout, &op->cap_out, lt);
}

/* Returns the slot for `name`, clearing an existing value, or a new slot. */
static pt_attr *attr_slot(pt_op *op, int name) {
    for (size_t i = 0; i < op->nattr; ++i)
        if (op->attrs[i].name == name) {
            attr_clear(&op->attrs[i]);
            return &op->attrs[i];
        }
    if (op->nattr == op->cap_attr) {
        size_t nc = op->cap_attr ? op->cap_attr * 2 : 4;
        pt_attr *na = realloc(op->attrs, nc * sizeof(pt_attr));
        if (!na) return NULL;
        op->attrs = na;
        op->cap_attr = nc;
    }
    pt_attr *a = &op->attrs[op->nattr++];
    memset(a, 0, sizeof *a);
    a->name = name;
    return a;
}

/* Stores a copy of n values of `elem` bytes each as attribute `name`
 * (float kinds in a->f, integer kinds in a->i). */
static pt_status set_values(pt_op *op, int name, pt_attr_kind kind, const void *v, size_t n, size_t elem) {
    if (n > PT_MAX_ATTR_VALUES) return dnnl_invalid_arguments; /* the API names it; n * elem cannot wrap below */
    void *buf = malloc((n ? n : 1) * elem);
    if (!buf) return dnnl_out_of_memory;
    if (n) memcpy(buf, v, n * elem);
    pt_attr *a = attr_slot(op, name);
    if (!a) {
        free(buf);
        return dnnl_out_of_memory;
    }
    a->kind = kind;
    if (kind == PT_ATTR_F32 || kind == PT_ATTR_F32S)
        a->f = buf;
    else
        a->i = buf;
    a->n = n;
    return dnnl_success;
}

pt_status pt_op_set_f32(pt_op *op, int name, const float *v, size_t n, bool list) {
    return set_values(op, name, list ? PT_ATTR_F32S : PT_ATTR_F32, v, n, sizeof(float));
}

pt_status pt_op_set_s64(pt_op *op, int name, const int64_t *v, size_t n, bool list) {
    return set_values(op, name, list ? PT_ATTR_S64S : PT_ATTR_S64, v, n, sizeof(int64_t));
}

pt_status pt_op_set_bool(pt_op *op, int name, bool v) {
    int64_t *buf = malloc(sizeof(int64_t));
    if (!buf) return dnnl_out_of_memory;
    *buf = v ? 1 : 0;
    pt_attr *a = attr_slot(op, name);
    if (!a) {
        free(buf);
        return dnnl_out_of_memory;
    }
    a->kind = PT_ATTR_BOOL;
    a->i = buf;
    a->n = 1;
    return dnnl_success;
}

pt_status pt_op_set_str(pt_op *op, int name, const char *v) {
    char *s = dup_str(v);
    if (!s) return dnnl_out_of_memory;
    pt_attr *a = attr_slot(op, name);
    if (!a) {
        free(s);
        return dnnl_out_of_memory;
    }
    a->kind = PT_ATTR_STR;
    a->s = s;
    a->n = 0;
    return dnnl_success;
}

bool pt_op_del_attr(pt_op *op, int name) {
    for (size_t i = 0; i < op->nattr; ++i)
        if (op->attrs[i].name == name) {
            attr_clear(&op->attrs[i]);
            op->attrs[i] = op->attrs[--op->nattr];
            return true;
        }
    return false;
}

const pt_attr *pt_op_attr(const pt_op *op, int name) {
    for (size_t i = 0; i < op->nattr; ++i)
        if (op->attrs[i].name == name) return &op->attrs[i];
    return NULL;
}

bool pt_op_has(const pt_op *op, int name) { return pt_op_attr(op, name) != NULL; }

float pt_op_f32(const pt_op *op, int name, float dflt) {
    const pt_attr *a = pt_op_attr(op, name);
    return a && a->f && a->n ? a->f[0] : dflt;
}
int64_t pt_op_s64(const pt_op *op, int name, int64_t dflt) {
    const pt_attr *a = pt_op_attr(op, name);
    return a && a->i && a->n ? a->i[0] : dflt;
}
bool pt_op_bool(const pt_op *op, int name, bool dflt) {
    const pt_attr *a = pt_op_attr(op, name);
    return a && a->i && a->n ? a->i[0] != 0 : dflt;
}
const char *pt_op_str(const pt_op *op, int name, const char *dflt) {
    const pt_attr *a = pt_op_attr(op, name);
    return a && a->s ? a->s : dflt;
}
const int64_t *pt_op_s64s(const pt_op *op, int name, size_t *n) {
    const pt_attr *a = pt_op_attr(op, name);
    if (!a || !a->i) {
        *n = 0;
        return NULL;
    }
    *n = a->n;
    return a->i;
}
const float *pt_op_f32s(const pt_op *op, int name, size_t *n) {
    const pt_attr *a = pt_op_attr(op, name);
    if (!a || !a->f) {
        *n = 0;
        return NULL;
    }
    *n = a->n;
    return a->f;
}

static const struct {
    int id;
    const char *name;
} attr_names[] = {
    {dnnl_graph_op_attr_alpha, "alpha"},
    {dnnl_graph_op_attr_beta, "beta"},
    {dnnl_graph_op_attr_epsilon, "epsilon"},
    {dnnl_graph_op_attr_max, "max"},
    {dnnl_graph_op_attr_min, "min"},
    {dnnl_graph_op_attr_momentum, "momentum"},
    {dnnl_graph_op_attr_scales, "scales"},
    {dnnl_graph_op_attr_axis, "axis"},
    {dnnl_graph_op_attr_begin_norm_axis, "begin_norm_axis"},
    {dnnl_graph_op_attr_groups, "groups"},
    {dnnl_graph_op_attr_axes, "axes"},
    {dnnl_graph_op_attr_dilations, "dilations"},
    {dnnl_graph_op_attr_dst_shape, "dst_shape"},
    {dnnl_graph_op_attr_kernel, "kernel"},
    {dnnl_graph_op_attr_order, "order"},
    {dnnl_graph_op_attr_output_padding, "output_padding"},
    {dnnl_graph_op_attr_pads_begin, "pads_begin"},
    {dnnl_graph_op_attr_pads_end, "pads_end"},
    {dnnl_graph_op_attr_shape, "shape"},
    {dnnl_graph_op_attr_sizes, "sizes"},
    {dnnl_graph_op_attr_src_shape, "src_shape"},
    {dnnl_graph_op_attr_strides, "strides"},
    {dnnl_graph_op_attr_weights_shape, "weights_shape"},
    {dnnl_graph_op_attr_zps, "zps"},
    {dnnl_graph_op_attr_group_shape, "group_shape"},
    {dnnl_graph_op_attr_exclude_pad, "exclude_pad"},
    {dnnl_graph_op_attr_keep_dims, "keep_dims"},
    {dnnl_graph_op_attr_keep_stats, "keep_stats"},
    {dnnl_graph_op_attr_per_channel_broadcast, "per_channel_broadcast"},
    {dnnl_graph_op_attr_special_zero, "special_zero"},
    {dnnl_graph_op_attr_transpose_a, "transpose_a"},
    {dnnl_graph_op_attr_transpose_b, "transpose_b"},
    {dnnl_graph_op_attr_use_affine, "use_affine"},
    {dnnl_graph_op_attr_use_dst, "use_dst"},
    {dnnl_graph_op_attr_auto_broadcast, "auto_broadcast"},
    {dnnl_graph_op_attr_auto_pad, "auto_pad"},
    {dnnl_graph_op_attr_coordinate_transformation_mode, "coordinate_transformation_mode"},
    {dnnl_graph_op_attr_data_format, "data_format"},
    {dnnl_graph_op_attr_mode, "mode"},
    {dnnl_graph_op_attr_qtype, "qtype"},
    {dnnl_graph_op_attr_rounding_type, "rounding_type"},
    {dnnl_graph_op_attr_weights_format, "weights_format"},
    {dnnl_graph_op_attr_accumulation_mode, "accumulation_mode"},
};

const char *pt_attr_name(int name) {
    for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; ++i)
        if (attr_names[i].id == name) return attr_names[i].name;
    return "unknown_attr";
}

int pt_attr_from_name(const char *s) {
    for (size_t i = 0; i < sizeof attr_names / sizeof attr_names[0]; ++i)
        if (strcmp(attr_names[i].name, s) == 0) return attr_names[i].id;
    return dnnl_graph_op_attr_undef;
}

pt_attr_kind pt_attr_kind_of(int name) {
    if (name >= dnnl_graph_op_attr_alpha && name < dnnl_graph_op_attr_scales) return PT_ATTR_F32;
    if (name >= dnnl_graph_op_attr_scales && name < dnnl_graph_op_attr_axis) return PT_ATTR_F32S;
    if (name >= dnnl_graph_op_attr_axis && name < dnnl_graph_op_attr_axes) return PT_ATTR_S64;
    if (name >= dnnl_graph_op_attr_axes && name < dnnl_graph_op_attr_exclude_pad)
        return PT_ATTR_S64S;
    if (name >= dnnl_graph_op_attr_exclude_pad && name < dnnl_graph_op_attr_auto_broadcast)
        return PT_ATTR_BOOL;
    return PT_ATTR_STR;
}
