/* The fusion pattern registry: one row per pass.  Chain-shaped patterns are
 * rows of their own table (chain_patterns.c); attention and MLP patterns have
 * matcher functions and their rows are here. */
#include "partition/pattern_rows.h"

#include "partition/chain_patterns.h"
#include "partition/pattern_mlp.h"
#include "partition/pattern_sdpa.h"
#include "partition/pattern_sdpa_bwd.h"

/* Rows with a matcher function, by priority from the highest down (ties in
 * table order).  The chain rows live in chain_patterns.c. */
static const pt_pattern_row matcher_rows[] = {
    /* Gated MLP: one fused kernel for the four rows. */
    {"quantized_gated_mlp", 22.1f, pt_match_quantized_gated_mlp, NULL, PT_FUSED_GATED_MLP},
    {"quantized_gated_mlp_v1", 22.1f, pt_match_quantized_gated_mlp_v1, NULL, PT_FUSED_GATED_MLP},
    {"gated_mlp_v1", 22.05f, pt_match_gated_mlp_v1, NULL, PT_FUSED_GATED_MLP},
    /* Quantized and compressed SDPA forward: one streaming fused kernel. */
    {"x8_sdpa_fusion", 22.0f, pt_match_x8_sdpa, NULL, PT_FUSED_SDPA_FWD},
    {"int8_bf16_sdp_fusion", 22.0f, pt_match_int8_bf16_sdpa, NULL, PT_FUSED_SDPA_FWD},
    {"sdp_with_compressed_kv_fusion", 22.0f, pt_match_sdpa_compressed_kv, NULL, PT_FUSED_SDPA_FWD},
    {"sdp_with_compressed_v_fusion", 22.0f, pt_match_sdpa_compressed_v, NULL, PT_FUSED_SDPA_FWD},
    {"sdp_with_compressed_k_fusion", 22.0f, pt_match_sdpa_compressed_k, NULL, PT_FUSED_SDPA_FWD},
    {"int8_fp32_gpt_sdp", 22.0f, pt_match_int8_fp32_gpt_sdpa, NULL, PT_FUSED_SDPA_FWD},
    {"int8_bf16_gpt_sdp", 22.0f, pt_match_int8_bf16_gpt_sdpa, NULL, PT_FUSED_SDPA_FWD},
    {"gated_mlp", 22.0f, pt_match_gated_mlp, NULL, PT_FUSED_GATED_MLP},
    /* SDPA forward: float_sdp_fusion with the Gemma, GPT, GQA and JAX forms folded in. */
    /* SDPA / GQA training backward: one fused kernel for both rows. */
    {"float_gqa_backward_fusion", 21.1f, pt_match_gqa_bwd, NULL, PT_FUSED_SDPA_BWD},
    {"float_sdp_fusion", 21.0f, pt_match_sdpa_fwd, NULL, PT_FUSED_SDPA_FWD},
    {"float_sdp_backward_fusion", 21.0f, pt_match_sdpa_bwd, NULL, PT_FUSED_SDPA_BWD},
};
static const int matcher_row_count = (int)(sizeof matcher_rows / sizeof matcher_rows[0]);

int pt_pattern_row_count(void) { return matcher_row_count + pt_chain_row_count; }

/* Both tables are sorted, so driver order is their stable merge. */
const pt_pattern_row *pt_pattern_row_at(int i) {
    if (i < 0) return NULL;
    int a = 0, b = 0;
    for (int k = 0;; ++k) {
        const pt_pattern_row *r;
        if (a < matcher_row_count &&
            (b >= pt_chain_row_count || matcher_rows[a].priority >= pt_chain_rows[b].priority))
            r = &matcher_rows[a++];
        else if (b < pt_chain_row_count)
            r = &pt_chain_rows[b++];
        else
            return NULL;
        if (k == i) return r;
    }
}
