#pragma once
// How K and V values are stored in the KV pools. Part of the public vocabulary:
// EngineOptions names it, the app's settings offer it.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace weir {

enum class KvDtype : uint8_t { F16 = 0, Q8_0 = 1, F32 = 2, FP8_E4M3 = 3 };
const char* kvDtypeName(KvDtype t);
// The dtype a name ("f16", "q8_0", "fp8_e4m3", "f32") stands for; false for
// any other name.
bool kvDtypeFromName(std::string_view name, KvDtype& out);
// Bytes one row of `elems` values takes (elems a multiple of 32 for Q8_0).
size_t kvRowBytes(KvDtype t, int64_t elems);

} // namespace weir
