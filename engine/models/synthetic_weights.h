#pragma once
// Tame weights for the full-size synthetic models (synthetic_presets.h):
// valid blocks of a quantized type whose values have a chosen standard
// deviation, so activations stay finite through every layer of a real
// architecture. Bytes come from a PRNG seeded by (seed, row), so any chunk of
// rows is made alike whatever the chunking, at close to memory speed; the
// values do not change how fast a kernel runs over them.
#include <cstdint>

#include "weir/base/ggml_type.h"

namespace weir {

// Types fillTameRows knows: F32, F16, Q4_0, Q4_1, Q5_0, Q8_0, Q4_K, Q5_K, Q6_K.
bool tameFillSupports(GgmlType type);

// Fills `size` bytes of a tensor of `type` whose rows take `rowBytes`,
// starting `offset` bytes into it (both whole rows). F32 tensors get `scale`
// in every element (norm weights); every other type gets values spread
// around zero with a standard deviation of about `scale`. Throws weir::Error
// on a type tameFillSupports refuses or a range that is not whole rows.
void fillTameRows(GgmlType type, double scale, uint64_t seed, uint64_t rowBytes, uint64_t offset, uint8_t* out,
                  uint64_t size);

} // namespace weir
