/* Spatial geometry (auto_pad, output extents; docs/ops.md).  All
 * arithmetic is overflow-checked because extents come straight from users. */
#include "ops/spatial_utils.h"

#include <ctype.h>
#include <stddef.h>

/* auto_pad is the one case-insensitive string attribute. */
static bool ieq(const char *a, const char *b) {
    for (; *a && *b; ++a, ++b)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

bool pt_auto_pad_none(const char *auto_pad) { return !auto_pad || ieq(auto_pad, "None"); }

/* Effective kernel extent (K-1)·D + 1; -1 for invalid input or overflow. */
static int64_t eff_kernel(int64_t k, int64_t d) {
    if (k < 1 || d < 1) return -1;
    if (k - 1 > (INT64_MAX - 1) / d) return -1;
    return (k - 1) * d + 1;
}

void pt_resolve_pad(const char *auto_pad, bool transpose_rule, int64_t in, int64_t k, int64_t s,
                    int64_t d, int64_t pb_attr, int64_t pe_attr, int64_t *pb, int64_t *pe) {
    if (!auto_pad || pt_auto_pad_none(auto_pad)) {
        *pb = pb_attr;
        *pe = pe_attr;
        return;
    }
    if (ieq(auto_pad, "VALID")) {
        *pb = 0;
        *pe = 0;
        return;
    }
    bool upper = ieq(auto_pad, "SAME_UPPER");
    if (!upper && !ieq(auto_pad, "SAME_LOWER")) {
        /* Unknown spellings were rejected at add_op; behave like None. */
        *pb = pb_attr;
        *pe = pe_attr;
        return;
    }
    int64_t e = eff_kernel(k, d);
    if (e < 0) e = 1;
    if (s < 1) s = 1;
    int64_t total;
    if (transpose_rule) {
        total = e - s;
    } else {
        /* An unknown (negative) input extent is treated as a multiple of S;
         * callers only use the result once the extent is known. */
        int64_t rem = in > 0 ? in % s : 0;
        total = rem == 0 ? e - s : e - rem;
    }
    if (total < 0) total = 0;
    *pb = upper ? total / 2 : total - total / 2;
    *pe = total - *pb;
}

int64_t pt_conv_out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                           bool ceil_mode) {
    if (in < 0 || s < 1 || pb < 0 || pe < 0) return -1;
    int64_t e = eff_kernel(k, d);
    if (e < 0) return -1;
    if (pb > INT64_MAX - in) return -1;
    int64_t span = in + pb;
    if (pe > INT64_MAX - span) return -1;
    span += pe;
    int64_t num = span - e;
    if (num < 0) return -1;
    int64_t q = num / s;
    if (ceil_mode && num % s != 0) ++q;
    return q + 1;
}

int64_t pt_deconv_out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe,
                             int64_t out_pad) {
    if (in < 1 || s < 1 || pb < 0 || pe < 0 || out_pad < 0) return -1;
    int64_t e = eff_kernel(k, d);
    if (e < 0) return -1;
    if (in - 1 > (INT64_MAX - e) / s) return -1;
    int64_t v = s * (in - 1) + e;
    if (out_pad > INT64_MAX - v) return -1;
    v += out_pad;
    /* v >= 1 here, so subtracting non-negative pads cannot overflow once we
     * stop at the first non-positive value. */
    if (pb >= v) return -1;
    v -= pb;
    if (pe >= v) return -1;
    return v - pe;
}
