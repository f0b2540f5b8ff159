#include "engine/models/model_tensors.h"

#include <algorithm>
#include <cstring>

#include "weir/base/error.h"

namespace weir {

std::string shapeString(const gguf::TensorInfo& t) {
    std::string s = "[";
    for (uint32_t i = 0; i < std::max<uint32_t>(t.nDims, 1); ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
    return s + "]";
}

const gguf::TensorInfo& ModelTensors::find(const std::string& name) const {
    const gguf::TensorInfo* t = file_.findTensor(name);
    if (!t) throw Error(file_.path() + ": missing tensor " + name);
    return *t;
}

kernels::WeightView ModelTensors::matrix(const std::string& name, int64_t cols, int64_t rows) const {
    const gguf::TensorInfo& t = find(name);
    if (t.ne[0] != cols || t.ne[1] != rows || t.ne[2] != 1 || t.ne[3] != 1)
        throw Error(file_.path() + ": tensor " + name + " has shape " + shapeString(t) + ", expected [" +
                    std::to_string(cols) + ", " + std::to_string(rows) + "]");
    const kernels::TypeTraits* tr = kernels::typeTraits(t.type);
    if (!tr || !kernels::matmulSupports(t.type, cols))
        throw Error(file_.path() + ": tensor " + name + " has type " + (tr ? tr->name : std::to_string(uint32_t(t.type))) +
                    (tr && cols % tr->blockElems != 0 ? " but rows of " + std::to_string(cols) + " are not a multiple of its block" : "") +
                    ", which matmul does not support");
    const size_t stride = kernels::rowBytes(t.type, cols);
    // Exactly: a type whose bytes merely fit would be read as the wrong layout.
    if (t.nbytes != stride * size_t(rows))
        throw Error(file_.path() + ": tensor " + name + " holds " + std::to_string(t.nbytes) + " bytes, expected " +
                    std::to_string(stride * size_t(rows)) + " for its type and shape");
    return kernels::WeightView{t.type, t.data, cols, rows, stride};
}

const float* ModelTensors::vector(const std::string& name, int64_t n, bool required) {
    const gguf::TensorInfo* t = file_.findTensor(name);
    if (!t) {
        if (required) throw Error(file_.path() + ": missing tensor " + name);
        return nullptr;
    }
    if (t->elements() != n || t->ne[0] != n)
        throw Error(file_.path() + ": tensor " + name + " has shape " + shapeString(*t) + ", expected [" + std::to_string(n) + "]");
    switch (t->type) {
    case kernels::GgmlType::F32: {
        // Data in the mapping is aligned to the file's alignment (>= 4 bytes for valid files).
        if (reinterpret_cast<uintptr_t>(t->data) % alignof(float) == 0) return reinterpret_cast<const float*>(t->data);
        auto& v = owned_.emplace_back(size_t(n));
        std::memcpy(v.data(), t->data, size_t(n) * 4);
        return v.data();
    }
    case kernels::GgmlType::F16:
    case kernels::GgmlType::BF16: {
        auto& v = owned_.emplace_back(size_t(n));
        kernels::dequantizeRow(t->type, t->data, v.data(), n);
        return v.data();
    }
    default: {
        const kernels::TypeTraits* tr = kernels::typeTraits(t->type);
        throw Error(file_.path() + ": tensor " + name + " has type " + (tr ? tr->name : std::to_string(uint32_t(t->type))) +
                    ", expected F32, F16 or BF16");
    }
    }
}

} // namespace weir
