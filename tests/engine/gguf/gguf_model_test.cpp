// The default model (WEIR_MODEL) parses, and its metadata and tensor table
// match the dump made by the python `gguf` package
// (tests/reference/gguf_table_reference.py -> tests/data/gguf/*.table.json).
#include "tests/support/json_reading.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <filesystem>
#include <memory>

#include "engine/gguf/gguf_file.h"

using namespace weir::gguf;

namespace {

using weirtest::field;
using weirtest::integer;
using weirtest::items;
using weirtest::Json;
using weirtest::str;
using weirtest::text;

std::string modelPath() { return weirtest::environment("WEIR_MODEL"); }

Json loadReference() {
    const auto f = weirtest::readFile(weirtest::environment("WEIR_TEST_DATA") + "/gguf/gemma-3-270m-q4_k_m.table.json");
    if (!f) return {};
    return weirtest::parseJsonOrUndefined(*f);
}

std::string toHex(const std::string& bytes) {
    static const char* kDigits = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += kDigits[c >> 4];
        out += kDigits[c & 15];
    }
    return out;
}

// Compares one scalar (or array item) with its JSON dump; strings may be {"hex": ...}.
bool matches(const Value& v, const Json& ref, std::string& why) {
    switch (v.type) {
    case ValueType::String: {
        const std::string& s = *v.asString();
        if (ref.isDict()) {
            if (toHex(s) == text(field(ref, "hex"))) return true;
        } else if (ref.isString() && s == ref.asString()) {
            return true;
        }
        why = "string " + v.toDisplayString();
        return false;
    }
    case ValueType::Bool:
        if (ref.isBool() && ref.asBool() == std::get<bool>(v.data)) return true;
        why = "bool";
        return false;
    case ValueType::F32: case ValueType::F64:
        if (ref.isNumber() && !ref.isBool() && ref.asDouble() == *v.asFloat()) return true;
        why = str("float ", *v.asFloat(), " vs ", weirtest::number(ref));
        return false;
    default:
        // Integers: every value in this model is below 2^53, as the JSON dump assumes.
        if (ref.isNumber() && !ref.isBool() && v.asInt() && double(*v.asInt()) == ref.asDouble()) return true;
        why = "integer " + v.toDisplayString();
        return false;
    }
}

std::unique_ptr<GgufFile> file_;
Json ref_;

} // namespace

WEIR_TEST_SUITE_SETUP(GgufModel) {
    if (modelPath().empty() || !std::filesystem::exists(modelPath())) SKIP("default model not found (WEIR_MODEL)");
    ref_ = loadReference();
    REQUIRE_MSG(ref_.isDict() && !ref_.asDict().entries.empty(), "tests/data/gguf/gemma-3-270m-q4_k_m.table.json missing or invalid");
    file_ = GgufFile::open(modelPath());
}

WEIR_TEST(GgufModel, header) {
    REQUIRE_EQ(file_->tensors().size(), size_t(236));
    REQUIRE_EQ(file_->getString("general.architecture").value(), std::string("gemma3"));
    REQUIRE_EQ(int64_t(file_->fileSize()), integer(field(ref_, "file_size")));
    REQUIRE_EQ(int64_t(file_->version()), integer(field(ref_, "version")));
    REQUIRE_EQ(int64_t(file_->alignment()), integer(field(ref_, "alignment")));
    REQUIRE_EQ(int64_t(file_->dataOffset()), integer(field(ref_, "data_offset")));
    REQUIRE_EQ(int64_t(file_->metadata().size()), integer(field(ref_, "kv_count")));
    REQUIRE_EQ(int64_t(file_->tensors().size()), integer(field(ref_, "tensor_count")));
}

// Every key in the same order, with the same type and value (arrays: length and sampled items).
WEIR_TEST(GgufModel, metadataMatchesReference) {
    const auto& keys = items(field(ref_, "metadata"));
    REQUIRE_EQ(file_->metadata().size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        const Json& r = keys[i];
        const KeyValue& kv = file_->metadata()[i];
        const std::string& key = kv.key;
        REQUIRE_EQ(key, text(field(r, "key")));
        REQUIRE_EQ(std::string(valueTypeName(kv.value.type)), text(field(r, "type")));
        std::string why;
        if (const Array* a = kv.value.asArray()) {
            REQUIRE_EQ(std::string(valueTypeName(a->elementType)), text(field(r, "element_type")));
            REQUIRE_EQ(int64_t(a->items.size()), integer(field(r, "count")));
            const Json& samples = field(r, "samples");
            REQUIRE(samples.isDict() && !samples.asDict().entries.empty());
            for (const auto& [sampleKey, sample] : samples.asDict().entries) {
                const size_t index = std::stoull(sampleKey);
                REQUIRE(index < a->items.size());
                REQUIRE_MSG(matches(a->items[index], sample, why), key + "[" + sampleKey + "]: " + why);
            }
        } else {
            REQUIRE_MSG(matches(kv.value, field(r, "value"), why), key + ": " + why);
        }
    }
}

WEIR_TEST(GgufModel, tensorTableMatchesReference) {
    const auto& tensors = items(field(ref_, "tensors"));
    REQUIRE_EQ(file_->tensors().size(), tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
        const Json& r = tensors[i];
        const TensorInfo& t = file_->tensors()[i];
        REQUIRE_EQ(t.name, text(field(r, "name")));
        REQUIRE_EQ(int64_t(t.type), integer(field(r, "type")));
        const auto& shape = items(field(r, "shape"));
        REQUIRE_EQ(size_t(t.nDims), shape.size());
        for (size_t d = 0; d < shape.size(); ++d) REQUIRE_EQ(int64_t(t.ne[d]), integer(shape[d]));
        REQUIRE_EQ(int64_t(t.offset), integer(field(r, "offset")));
        REQUIRE_EQ(int64_t(t.nbytes), integer(field(r, "bytes")));
        REQUIRE_EQ(t.data, file_->tensors()[0].data - file_->tensors()[0].offset + t.offset);
    }
}

WEIR_TEST(GgufModel, typedGettersOnModel) {
    REQUIRE_EQ(file_->getInt("gemma3.block_count").value(), int64_t(18));
    REQUIRE_EQ(file_->getInt("gemma3.embedding_length").value(), int64_t(640));
    REQUIRE_EQ(float(file_->getFloat("gemma3.attention.layer_norm_rms_epsilon").value()), 1e-6f);
    REQUIRE_EQ(file_->getStringArray("tokenizer.ggml.tokens")->size(), size_t(262144));
    REQUIRE_EQ(file_->getFloatArray("tokenizer.ggml.scores")->size(), size_t(262144));
    REQUIRE_EQ(file_->getIntArray("tokenizer.ggml.token_type")->at(0), int64_t(3));
    REQUIRE_EQ(file_->getBool("tokenizer.ggml.add_bos_token").value(), true);
    const TensorInfo* embd = file_->findTensor("token_embd.weight");
    REQUIRE(embd);
    REQUIRE_EQ(embd->ne[0], int64_t(640));
    REQUIRE_EQ(embd->ne[1], int64_t(262144));
}
