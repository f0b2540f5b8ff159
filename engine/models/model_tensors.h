#pragma once
// Finds a model's tensors by name and checks their shapes at load time. Weight
// matrices are used in place from the mapping; small vectors (norms, biases)
// are handed out as f32, converted once into owned storage if stored as f16/bf16.
// Every missing or mis-shaped tensor is a weir::Error naming it.
#include <deque>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "kernels/cpu/matmul.h"

namespace weir {

class ModelTensors {
public:
    explicit ModelTensors(const gguf::GgufFile& file) : file_(file) {}

    bool has(const std::string& name) const { return file_.findTensor(name) != nullptr; }
    // A [cols, rows] matrix (GGUF ne = {cols, rows}) of a type matmul supports.
    kernels::WeightView matrix(const std::string& name, int64_t cols, int64_t rows) const;
    // A vector of n values as f32; nullptr when absent and !required.
    const float* vector(const std::string& name, int64_t n, bool required = true);

    // Owned storage kept alive by whoever holds this object.
    std::deque<std::vector<float>>& owned() { return owned_; }

private:
    const gguf::TensorInfo& find(const std::string& name) const;
    const gguf::GgufFile& file_;
    std::deque<std::vector<float>> owned_;
};

std::string shapeString(const gguf::TensorInfo& t);

} // namespace weir
