/* FLOP counts, partition classes and the peak file; see flops.h. */
#define _POSIX_C_SOURCE 200809L
#include "flops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strutil.h"

static double nelems(const pc_lt *lt) {
    if (!pc_lt_shape_known(lt)) return -1.0;
    double n = 1.0;
    for (int d = 0; d < lt->ndims; ++d) n *= (double)lt->dims[d];
    return n;
}

static double matmul_flops(const pc_op *op) {
    if (op->nin < 2 || op->nout < 1) return -1.0;
    const pc_lt *a = &op->in[0];
    if (!pc_lt_shape_known(a) || a->ndims < 1) return -1.0;
    double out = nelems(&op->out[0]);
    if (out < 0) return -1.0;
    /* A 1-D source is one row of length K; otherwise K is its last dim, or
     * the one before it when transposed. */
    int64_t k = a->dims[a->ndims - 1];
    if (a->ndims >= 2 && pc_attr_bool(op, dnnl_graph_op_attr_transpose_a, false)) k = a->dims[a->ndims - 2];
    return 2.0 * out * (double)k;
}

static double conv_flops(const pc_op *op) {
    if (op->nin < 2 || op->nout < 1) return -1.0;
    const pc_lt *w = &op->in[1];
    if (!pc_lt_shape_known(w) || w->ndims < 3) return -1.0;
    double out = nelems(&op->out[0]);
    if (out < 0) return -1.0;
    /* Weights OIX: [OC, IC/G, K...]; XIO: [K..., IC/G, OC]. */
    const char *wf = pc_attr_str(op, dnnl_graph_op_attr_weights_format, "XIO");
    int nsp = w->ndims - 2;
    bool oix = strcmp(wf, "OIX") == 0;
    double icg = (double)(oix ? w->dims[1] : w->dims[w->ndims - 2]);
    double ksp = 1.0;
    for (int d = 0; d < nsp; ++d) ksp *= (double)(oix ? w->dims[2 + d] : w->dims[d]);
    return 2.0 * out * icg * ksp;
}

double pc_op_flops(const pc_op *op) {
    switch (op->kind) {
        case dnnl_graph_op_matmul: return matmul_flops(op);
        case dnnl_graph_op_convolution: return conv_flops(op);
        default: return 0.0;
    }
}

double pc_ops_flops(const pc_case *c, const size_t *idx, size_t n) {
    double sum = 0.0;
    for (size_t k = 0; k < n; ++k) {
        double f = pc_op_flops(&c->ops[idx[k]]);
        if (f < 0) return -1.0;
        sum += f;
    }
    return sum;
}

const char *pc_peak_class_name(pc_peak_class k) {
    switch (k) {
        case PC_PEAK_F32: return "f32";
        case PC_PEAK_BF16: return "bf16";
        case PC_PEAK_INT8: return "int8";
        default: return "?";
    }
}

static bool is_x8(dnnl_data_type_t dt) { return dt == dnnl_u8 || dt == dnnl_s8; }

/* The op of the partition producing tensor `tid`, or NULL. */
static const pc_op *producer_in(const pc_case *c, const size_t *idx, size_t n, size_t tid) {
    for (size_t k = 0; k < n; ++k) {
        const pc_op *op = &c->ops[idx[k]];
        for (size_t o = 0; o < op->nout; ++o)
            if (op->out[o].id == tid) return op;
    }
    return NULL;
}

pc_peak_class pc_ops_peak_class(const pc_case *c, const size_t *idx, size_t n) {
    bool bf16 = c->fpmath == dnnl_fpmath_mode_bf16;
    for (size_t k = 0; k < n; ++k) {
        const pc_op *op = &c->ops[idx[k]];
        if (op->kind != dnnl_graph_op_matmul && op->kind != dnnl_graph_op_convolution) continue;
        for (size_t i = 0; i < op->nin && i < 2; ++i) {
            dnnl_data_type_t dt = op->in[i].data_type;
            if (is_x8(dt)) return PC_PEAK_INT8;
            const pc_op *p = producer_in(c, idx, n, op->in[i].id);
            /* A TypeCast between the Dequantize and the compute op (the
             * int8-in-bf16 patterns) is looked through once. */
            if (p && p->kind == dnnl_graph_op_type_cast && p->nin == 1)
                p = producer_in(c, idx, n, p->in[0].id);
            if (p && p->kind == dnnl_graph_op_dequantize && p->nin >= 1 && is_x8(p->in[0].data_type))
                return PC_PEAK_INT8;
            if (dt == dnnl_bf16) bf16 = true;
        }
    }
    return bf16 ? PC_PEAK_BF16 : PC_PEAK_F32;
}

int pc_peak_parse(const char *text, int threads, pc_peak *p, char *err, size_t cap) {
    memset(p, 0, sizeof *p);
    /* Figures per class: [0] one thread, [1] two threads.  Both spellings
     * of the one-thread key are read (the file's "_1t", and "_per_core" of
     * the one-line "peak key=value ..." summary bench_peak prints). */
    static const char *const keys[PC_PEAK_NCLASSES][3] = {
        {"f32_gflops_1t", "f32_gflops_per_core", "f32_gflops_2t"},
        {"bf16_gflops_1t", "bf16_gflops_per_core", "bf16_gflops_2t"},
        {"int8_gops_1t", "int8_gops_per_core", "int8_gops_2t"},
    };
    double v[PC_PEAK_NCLASSES][2] = {{0}};
    const char *s = text;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') ++s;
        const char *tok = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') ++s;
        const char *eq = memchr(tok, '=', (size_t)(s - tok));
        if (!eq) continue;
        size_t klen = (size_t)(eq - tok);
        char num[64];
        size_t vlen = (size_t)(s - eq - 1);
        if (vlen == 0 || vlen >= sizeof num) continue;
        memcpy(num, eq + 1, vlen);
        num[vlen] = '\0';
        char *end = NULL;
        double x = strtod(num, &end);
        if (*end || !(x > 0)) continue;
        for (int c = 0; c < PC_PEAK_NCLASSES; ++c)
            for (int t = 0; t < 3; ++t)
                if (strlen(keys[c][t]) == klen && strncmp(tok, keys[c][t], klen) == 0) v[c][t == 2] = x;
    }
    p->threads = threads < 1 ? 1 : threads;
    bool any = false;
    for (int c = 0; c < PC_PEAK_NCLASSES; ++c) {
        if (p->threads == 1) p->gflops[c] = v[c][0];
        else if (p->threads == 2 && v[c][1] > 0) p->gflops[c] = v[c][1];
        else p->gflops[c] = v[c][0] * p->threads;
        any = any || p->gflops[c] > 0;
    }
    if (!any) {
        pc_set_err(err, cap, "no f32_gflops_*, bf16_gflops_* or int8_gops_* figure (bench_peak writes them)");
        return -1;
    }
    p->loaded = true;
    return 0;
}

int pc_peak_load(const char *path, int threads, pc_peak *p, char *err, size_t cap) {
    memset(p, 0, sizeof *p);
    FILE *f = fopen(path, "rb");
    if (!f) {
        pc_set_err(err, cap, "%s: cannot open", path);
        return -1;
    }
    char *text = pc_read_stream(f, NULL);
    fclose(f);
    if (!text) {
        pc_set_err(err, cap, "%s: cannot read", path);
        return -1;
    }
    char msg[256] = "";
    int rc = pc_peak_parse(text, threads, p, msg, sizeof msg);
    free(text);
    if (rc) {
        pc_set_err(err, cap, "%s: %s", path, msg);
        return -1;
    }
    snprintf(p->path, sizeof p->path, "%s", path);
    return 0;
}
