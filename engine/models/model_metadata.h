#pragma once
// Reads an architecture's hyper-parameters from GGUF metadata: keys are
// "<arch>.<suffix>"; a required key that is missing or not a number is a
// weir::Error naming the key.
#include <optional>
#include <string>
#include <string_view>

#include "engine/gguf/gguf_file.h"

namespace weir {

class ModelMetadata {
public:
    ModelMetadata(const gguf::GgufFile& file, std::string arch) : file_(file), arch_(std::move(arch)) {}

    const std::string& arch() const { return arch_; }
    std::string key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }

    // Integer keys must be stored as an integer type; float keys as f32 or
    // f64 and finite (as float). Refusals name the key, its value and why.
    int64_t requireInt(std::string_view suffix) const;
    int64_t intOr(std::string_view suffix, int64_t def) const;
    double floatOr(std::string_view suffix, double def) const;
    // A float that must also be > 0 (norm epsilons, RoPE bases).
    double positiveFloatOr(std::string_view suffix, double def) const;
    // "<file>: <key> = <value>: <why>", the form of every refusal of a value.
    [[noreturn]] void refuse(std::string_view suffix, const std::string& why) const;
    std::optional<std::string> string(std::string_view suffix) const;
    bool has(std::string_view suffix) const { return file_.find(key(suffix)) != nullptr; }
    const gguf::Value* find(std::string_view suffix) const { return file_.find(key(suffix)); }

private:
    const gguf::GgufFile& file_;
    std::string arch_;
};

} // namespace weir
