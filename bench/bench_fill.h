/* Deterministic test data shared by every benchmark: the value of an element
 * depends only on (tensor id, element index, role), so Partita, oneDNN and
 * OpenBLAS see the same inputs. Quantized data are small integers and scales
 * positive, so every quantized op stays in range. */
#ifndef BENCH_FILL_H
#define BENCH_FILL_H

#include <stddef.h>
#include <stdint.h>

#include "oneapi/dnnl/dnnl_common_types.h"

typedef enum {
    FILL_DATA,        /* ordinary operand */
    FILL_SCALE,       /* a dynamic (de)quantization scale: positive */
    FILL_ZERO_POINT,  /* a dynamic (de)quantization zero point: 0..3 */
    FILL_QUANTIZED,   /* input of a static Dequantize: zero_point + -8..7,
                         clamped to the type, so values stay near the
                         quantization's centre as real activations do */
} fill_role;

/* Fills `count` elements of `data_type` at buffer (4-bit types: count
 * elements packed two per byte). */
void fill_buffer(void *buffer, size_t count, dnnl_data_type_t data_type,
        size_t tensor_id, fill_role role, int zero_point);
/* The value fill_buffer stores at element `index`, as a float (before any
 * rounding to the storage type). */
float fill_value(size_t tensor_id, size_t index, dnnl_data_type_t data_type,
        fill_role role, int zero_point);

uint16_t float_to_bf16(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_f16(float f);
float f16_to_float(uint16_t h);
/* Element `index` of a buffer of data_type, as a float. */
float load_as_float(const void *buffer, size_t index, dnnl_data_type_t data_type);

#endif
