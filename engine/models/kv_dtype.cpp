#include "engine/models/kv_access.h"

namespace weir {

const char* kvDtypeName(KvDtype t) {
    switch (t) {
    case KvDtype::F16: return "f16";
    case KvDtype::Q8_0: return "q8_0";
    case KvDtype::F32: return "f32";
    case KvDtype::FP8_E4M3: return "fp8_e4m3";
    }
    return "?";
}

bool kvDtypeFromName(std::string_view name, KvDtype& out) {
    for (KvDtype t : {KvDtype::F16, KvDtype::Q8_0, KvDtype::FP8_E4M3, KvDtype::F32}) {
        if (name == kvDtypeName(t)) {
            out = t;
            return true;
        }
    }
    return false;
}

size_t kvRowBytes(KvDtype t, int64_t elems) {
    switch (t) {
    case KvDtype::F16: return size_t(elems) * 2;
    case KvDtype::Q8_0: return size_t(elems / 32) * 34;  // f16 scale + 32 int8 per block
    case KvDtype::F32: return size_t(elems) * 4;
    case KvDtype::FP8_E4M3: return size_t(elems);
    }
    return 0;
}

} // namespace weir
