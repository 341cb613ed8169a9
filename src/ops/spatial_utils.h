/* Geometry shared by the spatial op schemas (shape inference) and their
 * kernels: auto_pad resolution and output extents (docs/ops.md). */
#ifndef PARTITA_OPS_SPATIAL_UTILS_H
#define PARTITA_OPS_SPATIAL_UTILS_H

#include <stdbool.h>
#include <stdint.h>

/* True when `auto_pad` is NULL or "None" (case-insensitive). */
bool pt_auto_pad_none(const char *auto_pad);
/* Resolves padding of one spatial dim from auto_pad.  With auto_pad None
 * the explicit pads pass through.  `transpose_rule` selects the ConvTranspose
 * total-padding formula T = E - S. */
void pt_resolve_pad(const char *auto_pad, bool transpose_rule, int64_t in, int64_t k,
                    int64_t s, int64_t d, int64_t pb_attr, int64_t pe_attr, int64_t *pb,
                    int64_t *pe);
/* Conv/pool output extent; -1 when not positive / invalid. */
int64_t pt_conv_out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                           bool ceil_mode);
/* ConvTranspose output extent; -1 when not positive. */
int64_t pt_deconv_out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                             int64_t out_pad);

#endif
