/* ONEDNN_GRAPH_DUMP=subgraph (see json_dump.h). */
#include <stdio.h>
#include <stdlib.h>

#include "compile/compiled.h"
#include "compile/json_dump.h"

void pt_dump_subgraph(const pt_partition_impl *p, const pt_compiled *c) {
    const pt_op **ops = malloc((c->nsteps ? c->nsteps : 1) * sizeof *ops);
    if (!ops) return;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < c->nsteps; ++i) {
        ops[i] = c->steps[i].op;
        const pt_op *op = ops[i];
        for (size_t k = 0; k < op->nin; ++k)
            for (int d = 0; d < op->in[k].ndims; ++d) h = (h ^ (uint64_t)op->in[k].dims[d]) * 1099511628211ull;
    }
    char path[256];
    snprintf(path, sizeof path, "graph-%zu-%016llx.json", p->id, (unsigned long long)h);
    pt_json_dump_ops(path, ops, c->nsteps, c->ekind, c->fpmath, c->apply_to_int, NULL);
    free(ops);
}
