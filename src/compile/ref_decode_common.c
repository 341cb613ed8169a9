/* Helpers shared by the reference-kernel decoders (see ref_decode.h). */
#include <stdlib.h>
#include <string.h>

#include "compile/ref_decode.h"
#include "ops/op_schema.h"

void *pt_decode_params(pt_bound_kernel *out, pt_kernel_fn fn, const void *init, size_t size, size_t extra) {
    void *p = calloc(1, size + extra);
    if (!p) return NULL;
    memcpy(p, init, size);
    out->run = fn;
    out->params = p;
    out->release = free;
    out->scratch_bytes = 0;
    return p;
}

pt_status pt_decode_bind(pt_bound_kernel *out, pt_kernel_fn fn, const void *init, size_t size) {
    return pt_decode_params(out, fn, init, size, 0) ? dnnl_success : dnnl_out_of_memory;
}

pt_status pt_decode_list(const pt_op *op, int attr, int k, int64_t dflt, int64_t minv, const char *what,
                         int64_t *outv) {
    const char *opname = pt_op_kind_name(op->kind);
    size_t n = 0;
    const int64_t *v = pt_op_s64s(op, attr, &n);
    if (!v || n == 0) {
        for (int j = 0; j < k; ++j) outv[j] = dflt;
        return dnnl_success;
    }
    if ((int)n != k)
        return pt_err(dnnl_invalid_arguments, "%s: %s has %zu entries, expected %d", opname, what, n, k);
    for (int j = 0; j < k; ++j) {
        if (v[j] < minv)
            return pt_err(dnnl_invalid_arguments, "%s: %s[%d] = %lld out of range", opname, what, j, (long long)v[j]);
        outv[j] = v[j];
    }
    return dnnl_success;
}

pt_status pt_decode_nxc(const pt_op *op, bool *nxc) {
    const char *df = pt_op_str(op, dnnl_graph_op_attr_data_format, "NXC");
    if (strcmp(df, "NXC") == 0) *nxc = true;
    else if (strcmp(df, "NCX") == 0) *nxc = false;
    else return pt_err(dnnl_invalid_arguments, "%s: bad data_format '%s'", pt_op_kind_name(op->kind), df);
    return dnnl_success;
}
