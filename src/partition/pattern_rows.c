/* Pattern rows (fusion-patterns.md).  Each matcher is a small function over
 * the graph; shared building blocks (post-op chains) live here too. */
#include "partition/pattern_rows.h"

#include <stdbool.h>

#include "ops/op_schema.h"
#include "partition/pattern_sdpa.h"

#define PT_MAX_POST_OPS 19 /* fusion-patterns.md §1.2 rule 7 */

static bool is_unary_post_op(int kind) {
    return pt_op_is_unary_eltwise(kind) && kind != dnnl_graph_op_pow &&
           kind != dnnl_graph_op_reciprocal;
}

static bool is_binary_post_op(int kind) {
    return pt_op_is_binary_eltwise(kind) && kind != dnnl_graph_op_greater_equal;
}

/* Extends a match whose last op is ops[cnt-1] with a chain of element-wise
 * post-ops (POST chain): unary ops, and binary ops whose other operand
 * comes from outside the chain or from an earlier value of it. */
static int extend_post_ops(const pt_graph *g, const int *group, int *ops, int cnt, int cap,
                           bool allow_bias) {
    int added = 0;
    while (added < PT_MAX_POST_OPS && cnt < cap) {
        int last = ops[cnt - 1];
        if (g->ops[last]->nout != 1) break;
        int next = pt_pattern_sole_consumer(g, last, 0);
        if (next < 0 || group[next] >= 0) break;
        const pt_op *op = g->ops[next];
        bool ok = false;
        if (is_unary_post_op(op->kind)) ok = true;
        if (is_binary_post_op(op->kind) && op->nin == 2) ok = true;
        if (allow_bias && added == 0 && op->kind == dnnl_graph_op_bias_add) ok = true;
        if (!ok) break;
        ops[cnt++] = next;
        ++added;
    }
    return cnt;
}

/* MatMul, Convolution or ConvTranspose followed by an optional post-op chain
 * (fusion-patterns.md §6.1, §7.1, §8).  A lone compute op is a match too. */
static int match_compute_post_ops(const pt_graph *g, const int *group, int first, int *ops,
                                  int cap) {
    int k = g->ops[first]->kind;
    if (k != dnnl_graph_op_matmul && k != dnnl_graph_op_convolution &&
        k != dnnl_graph_op_conv_transpose)
        return 0;
    if (!pt_schema_supported(g->ops[first])) return 0;
    ops[0] = first;
    int cnt = extend_post_ops(g, group, ops, 1, cap, true);
    for (int i = 1; i < cnt; ++i)
        if (!pt_schema_supported(g->ops[ops[i]])) return i == 1 ? 1 : i;
    return cnt;
}

const pt_pattern_row pt_pattern_rows[] = {
    /* SDPA forward: float_sdp_fusion with the Gemma, GPT, GQA and JAX forms folded in (§3.1-§3.5). */
    {"float_sdp_fusion", 21.0f, pt_match_sdpa_fwd, pt_prepare_sdpa_fwd},
    {"compute_post_ops_fusion", 9.7f, match_compute_post_ops, NULL},
};
const int pt_pattern_row_count = (int)(sizeof pt_pattern_rows / sizeof pt_pattern_rows[0]);
