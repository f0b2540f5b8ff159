// loadModel(): configuration read from metadata, and refusals (unsupported
// architecture, missing or mis-shaped tensors, bad metadata) that name the problem.
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <filesystem>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "engine/models/model.h"
#include "engine/models/simple_kv_cache.h"
#include "engine/models/synthetic_model.h"
#include "engine/tokenizer/tokenizer.h"
#include "weir/base/error.h"
#include "tests/engine/test_backend.h"

using namespace weir;

namespace {

// Copies a parsed file into a writer, letting `keep` drop or replace entries.
struct Rewrite {
    std::function<bool(const std::string& key, gguf::Value& v)> metadata = [](const std::string&, gguf::Value&) { return true; };
    std::function<bool(const gguf::TensorInfo& t, std::vector<int64_t>& ne)> tensor = [](const gguf::TensorInfo&, std::vector<int64_t>&) { return true; };
};

std::vector<uint8_t> rewrite(const std::vector<uint8_t>& bytes, const Rewrite& r) {
    auto f = gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "in");
    gguf::GgufWriter w;
    for (const auto& kv : f->metadata()) {
        gguf::Value v = kv.value;
        if (r.metadata(kv.key, v)) w.add(kv.key, v);
    }
    for (const auto& t : f->tensors()) {
        std::vector<int64_t> ne(t.ne, t.ne + std::max<uint32_t>(1, t.nDims));
        const std::vector<int64_t> orig = ne;
        if (!r.tensor(t, ne)) continue;
        if (ne == orig) {
            w.addTensor(t.name, t.type, ne, t.data, size_t(t.nbytes));
        } else {  // new shape: fresh bytes of the right size
            int64_t n = 1;
            for (int64_t d : ne) n *= d;
            std::vector<uint8_t> data(kernels::rowBytes(t.type, ne[0]) * size_t(n / ne[0]), 0);
            w.addTensor(t.name, t.type, ne, std::move(data));
        }
    }
    return w.toBytes();
}

// loadModel on bytes; returns the error text ("" when it loads).
std::string loadError(const std::vector<uint8_t>& bytes) {
    try {
        std::shared_ptr<const gguf::GgufFile> f = gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "test.gguf");
        loadModel(f, weirtest::cpuBackend());
        return "";
    } catch (const Error& e) {
        return e.what();
    }
}

// Rewrites the file with tensor `name` stored as `type` (zero bytes of the right size).
std::vector<uint8_t> withTensorType(const std::vector<uint8_t>& bytes, const std::string& name, kernels::GgmlType type) {
    auto f = gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "in");
    gguf::GgufWriter w;
    for (const auto& kv : f->metadata()) w.add(kv.key, kv.value);
    for (const auto& t : f->tensors()) {
        std::vector<int64_t> ne(t.ne, t.ne + std::max<uint32_t>(1, t.nDims));
        if (t.name != name) {
            w.addTensor(t.name, t.type, ne, t.data, size_t(t.nbytes));
            continue;
        }
        std::vector<uint8_t> data(kernels::rowBytes(type, ne[0]) * size_t(t.elements() / ne[0]), 0);
        w.addTensor(t.name, type, ne, std::move(data));
    }
    return w.toBytes();
}

// Changes the type id in tensor `name`'s info record and nothing else: the
// data written for the old type stays, as in a file whose type was swapped.
std::vector<uint8_t> relabelTensorType(std::vector<uint8_t> bytes, const std::string& name, kernels::GgmlType type) {
    std::vector<uint8_t> key(8, 0);
    const uint64_t len = name.size();
    std::memcpy(key.data(), &len, 8);
    key.insert(key.end(), name.begin(), name.end());
    const auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
    if (at == bytes.end()) throw Error("no tensor info for " + name);
    size_t pos = size_t(at - bytes.begin()) + key.size();
    uint32_t dims = 0;
    std::memcpy(&dims, &bytes[pos], 4);
    pos += 4 + 8 * size_t(dims);
    const uint32_t id = uint32_t(type);
    std::memcpy(&bytes[pos], &id, 4);
    return bytes;
}

} // namespace

std::vector<uint8_t> synth_;

WEIR_TEST_SUITE_SETUP(ModelLoader) { synth_ = makeSyntheticModel(SyntheticModelSpec{}); }

WEIR_TEST(ModelLoader, syntheticLlamaConfig) {
    std::shared_ptr<const gguf::GgufFile> f = gguf::GgufFile::fromMemory(synth_.data(), synth_.size(), "synth");
    auto m = loadModel(f, weirtest::cpuBackend());
    const ModelConfig& c = m->config();
    REQUIRE_EQ(c.architecture, std::string("llama"));
    REQUIRE_EQ(c.nLayer, 2);
    REQUIRE_EQ(c.nEmbd, 256);
    REQUIRE_EQ(c.nFf, 512);
    REQUIRE_EQ(c.nHead, 4);
    REQUIRE_EQ(c.nHeadKv, 2);
    REQUIRE_EQ(c.headDimK, 64);
    REQUIRE_EQ(c.nVocab, 512);
    REQUIRE_EQ(c.nRot, 64);
    REQUIRE(c.ropeStyle == RopeStyle::Normal);
    REQUIRE(!c.anySliding());
    REQUIRE_EQ(c.ropeBase.size(), size_t(2));
    REQUIRE_EQ(c.ropeBase[1], 10000.0f);
    REQUIRE(std::fabs(c.attnScale - 0.125f) < 1e-7f);
    REQUIRE(std::fabs(c.normEps - 1e-5f) < 1e-12f);
}

WEIR_TEST(ModelLoader, qwen2UsesNeox) {
    SyntheticModelSpec s;
    s.architecture = "qwen2";
    const auto bytes = makeSyntheticModel(s);
    std::shared_ptr<const gguf::GgufFile> f = gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "q");
    auto m = loadModel(f, weirtest::cpuBackend());
    REQUIRE(m->config().ropeStyle == RopeStyle::NeoX);
    REQUIRE_EQ(m->config().architecture, std::string("qwen2"));
}

WEIR_TEST(ModelLoader, gemma3DefaultModelConfig) {
    const std::string path = weirtest::environment("WEIR_MODEL");
    if (path.empty() || !std::filesystem::exists(path)) SKIP("default model not present (WEIR_MODEL)");
    std::shared_ptr<const gguf::GgufFile> f = gguf::GgufFile::open(path);
    REQUIRE(!f->findTensor("output.weight"));  // tied to token_embd
    auto m = loadModel(f, weirtest::cpuBackend());
    const ModelConfig& c = m->config();
    // Gemma 3 270M as its model card gives it: 18 layers, 640 wide, 4 heads, 1 KV head, 256 per head.
    REQUIRE_EQ(c.architecture, std::string("gemma3"));
    REQUIRE_EQ(c.nLayer, 18);
    REQUIRE_EQ(c.nEmbd, 640);
    REQUIRE_EQ(c.nFf, 2048);
    REQUIRE_EQ(c.nHead, 4);
    REQUIRE_EQ(c.nHeadKv, 1);
    REQUIRE_EQ(c.headDimK, 256);
    REQUIRE_EQ(c.nVocab, 262144);
    REQUIRE_EQ(c.slidingWindow, 512);
    REQUIRE_EQ(c.nCtxTrain, 32768);
    REQUIRE(c.ropeStyle == RopeStyle::NeoX);
    REQUIRE_EQ(c.attnScale, 1.0f / 16.0f);
    for (int il = 0; il < 18; ++il) {
        const bool global = il == 5 || il == 11 || il == 17;
        REQUIRE_EQ(bool(c.layerSlides[size_t(il)]), !global);
        REQUIRE_EQ(c.ropeBase[size_t(il)], global ? 1e6f : 1e4f);
        REQUIRE_EQ(c.ropeScale[size_t(il)], 1.0f);
    }
    REQUIRE_EQ(c.quantization, std::string("Q4_K_M"));
}

WEIR_TEST(ModelLoader, refusesUnsupportedArchitecture) {
    Rewrite r;
    r.metadata = [](const std::string& k, gguf::Value& v) {
        if (k == "general.architecture") v = gguf::makeString("mamba");
        return true;
    };
    const std::string e = loadError(rewrite(synth_, r));
    REQUIRE_MSG(e.find("unsupported architecture 'mamba'") != std::string::npos, e.c_str());
}

WEIR_TEST(ModelLoader, refusesMissingArchitectureKey) {
    Rewrite r;
    r.metadata = [](const std::string& k, gguf::Value&) { return k != "general.architecture"; };
    const std::string e = loadError(rewrite(synth_, r));
    REQUIRE_MSG(e.find("general.architecture") != std::string::npos, e.c_str());
}

WEIR_TEST(ModelLoader, refusesMissingTensor) {
    Rewrite r;
    r.tensor = [](const gguf::TensorInfo& t, std::vector<int64_t>&) { return t.name != "blk.1.ffn_up.weight"; };
    const std::string e = loadError(rewrite(synth_, r));
    REQUIRE_MSG(e.find("missing tensor blk.1.ffn_up.weight") != std::string::npos, e.c_str());
}

WEIR_TEST(ModelLoader, refusesMisshapedTensor) {
    Rewrite r;
    r.tensor = [](const gguf::TensorInfo& t, std::vector<int64_t>& ne) {
        if (t.name == "blk.0.attn_k.weight") ne[1] += 32;
        return true;
    };
    const std::string e = loadError(rewrite(synth_, r));
    REQUIRE_MSG(e.find("blk.0.attn_k.weight") != std::string::npos && e.find("expected [256, 128]") != std::string::npos, e.c_str());
}

WEIR_TEST(ModelLoader, refusesMisshapedNorm) {
    Rewrite r;
    r.tensor = [](const gguf::TensorInfo& t, std::vector<int64_t>& ne) {
        if (t.name == "output_norm.weight") ne[0] = 128;
        return true;
    };
    const std::string e = loadError(rewrite(synth_, r));
    REQUIRE_MSG(e.find("output_norm.weight") != std::string::npos, e.c_str());
}

WEIR_TEST(ModelLoader, refusesMissingOrBadMetadata) {
    Rewrite r;
    r.metadata = [](const std::string& k, gguf::Value&) { return k != "llama.block_count"; };
    std::string e = loadError(rewrite(synth_, r));
    REQUIRE_MSG(e.find("llama.block_count") != std::string::npos, e.c_str());

    r.metadata = [](const std::string& k, gguf::Value& v) {
        if (k == "llama.attention.head_count_kv") v = gguf::makeU32(3);
        return true;
    };
    e = loadError(rewrite(synth_, r));
    REQUIRE_MSG(e.find("head_count_kv") != std::string::npos, e.c_str());

    r.metadata = [](const std::string& k, gguf::Value& v) {
        if (k == "llama.embedding_length") v = gguf::makeString("wide");
        return true;
    };
    e = loadError(rewrite(synth_, r));
    REQUIRE_MSG(e.find("llama.embedding_length") != std::string::npos, e.c_str());

    // The rewrite itself keeps a file loadable.
    REQUIRE_EQ(loadError(rewrite(synth_, Rewrite{})), std::string());
}

// Issue 16: metadata that parses but makes no sense loaded and produced
// garbage. Each is refused, naming the key and the value.
struct RefusesCorruptMetadataRow {
    std::string name;
    std::string key;
    int kind;  // 0: u32, 1: f32, 2: the same number as u32
    double value;
    std::string expected;
};

static std::vector<RefusesCorruptMetadataRow> refusesCorruptMetadataRows() {
    std::vector<RefusesCorruptMetadataRow> rows;
    rows.push_back({"block_count below the tensors", "gemma3.block_count", 0, 1.0, "gemma3.block_count = 1: the file has tensors for 4 layers"});
    rows.push_back({"block_count above the tensors", "gemma3.block_count", 0, 6.0, "gemma3.block_count = 6: the file has tensors for 4 layers"});
    rows.push_back({"epsilon inf", "gemma3.attention.layer_norm_rms_epsilon", 1, double(INFINITY), "gemma3.attention.layer_norm_rms_epsilon = inf: must be a finite positive number"});
    rows.push_back({"epsilon nan", "gemma3.attention.layer_norm_rms_epsilon", 1, double(NAN), "gemma3.attention.layer_norm_rms_epsilon = nan: must be a finite positive number"});
    rows.push_back({"epsilon zero", "gemma3.attention.layer_norm_rms_epsilon", 1, 0.0, "gemma3.attention.layer_norm_rms_epsilon = 0: must be a finite positive number"});
    rows.push_back({"epsilon as integer", "gemma3.attention.layer_norm_rms_epsilon", 2, 1.0, "gemma3.attention.layer_norm_rms_epsilon = 1: stored as u32, expected a float"});
    rows.push_back({"rope base inf", "gemma3.rope.freq_base", 1, double(INFINITY), "gemma3.rope.freq_base = inf: must be a finite positive number"});
    rows.push_back({"rope base negative", "gemma3.rope.freq_base", 1, -10000.0, "gemma3.rope.freq_base = -10000: must be a finite positive number"});
    rows.push_back({"rope base beyond float", "gemma3.rope.freq_base", 1, 1e39, "gemma3.rope.freq_base = inf: must be a finite positive number"});
    rows.push_back({"block_count as float", "gemma3.block_count", 1, 4.0, "gemma3.block_count = 4: stored as f32, expected an integer"});
    // Issue 26: values that parsed and loaded silently, changing the output.
    rows.push_back({"sliding window 0", "gemma3.attention.sliding_window", 0, 0.0, "gemma3.attention.sliding_window = 0: must be between 2 and the context length 1024"});
    rows.push_back({"sliding window 1", "gemma3.attention.sliding_window", 0, 1.0, "gemma3.attention.sliding_window = 1: must be between 2 and the context length 1024"});
    rows.push_back({"sliding window beyond the context", "gemma3.attention.sliding_window", 0, 4294967295.0, "gemma3.attention.sliding_window = 4294967295: must be between 2 and the context length 1024"});
    rows.push_back({"epsilon 1e30", "gemma3.attention.layer_norm_rms_epsilon", 1, 1e30, "gemma3.attention.layer_norm_rms_epsilon = 1e+30: outside (0, 0.01]"});
    rows.push_back({"epsilon 0.5", "gemma3.attention.layer_norm_rms_epsilon", 1, 0.5, "gemma3.attention.layer_norm_rms_epsilon = 0.5: outside (0, 0.01]"});
    return rows;
}

WEIR_TEST(ModelLoader, refusesCorruptMetadata) {
    weirtest::eachRow(refusesCorruptMetadataRows(), [&](const RefusesCorruptMetadataRow& row) {
        const std::string& key = row.key;
        const int& kind = row.kind;
        const double& value = row.value;
        const std::string& expected = row.expected;
        SyntheticModelSpec spec;
        spec.architecture = "gemma3";
        spec.nLayer = 4;
        const auto model = makeSyntheticModel(spec);
        REQUIRE_EQ(loadError(model), std::string());

        Rewrite r;
        bool found = false;
        r.metadata = [&](const std::string& k, gguf::Value& v) {
            if (k != key) return true;
            found = true;
            v = kind == 1 ? gguf::makeF32(float(value)) : gguf::makeU32(uint32_t(value));
            return true;
        };
        const std::string e = loadError(rewrite(model, r));
        REQUIRE_MSG(found, key);
        REQUIRE_MSG(e.find(expected) != std::string::npos, e.c_str());
        REQUIRE_MSG(e.rfind("test.gguf: ", 0) == 0, e.c_str());  // and the file
    });
}

// Issue 26: a tensor whose declared type is smaller than the bytes written
// for it (an F32 norm relabelled BF16 or F16, a Q4_1 matrix relabelled Q4_K)
// loaded and read the wrong layout. The same types written honestly load.
WEIR_TEST(ModelLoader, refusesTensorTypeSwaps) {
    using kernels::GgmlType;
    REQUIRE_EQ(loadError(withTensorType(synth_, "output_norm.weight", GgmlType::BF16)), std::string());
    REQUIRE_EQ(loadError(withTensorType(synth_, "output_norm.weight", GgmlType::F16)), std::string());
    const auto q41 = withTensorType(synth_, "blk.0.attn_q.weight", GgmlType::Q4_1);
    REQUIRE_EQ(loadError(q41), std::string());

    std::string e = loadError(relabelTensorType(synth_, "output_norm.weight", GgmlType::BF16));
    REQUIRE_MSG(e.find("'output_norm.weight' is BF16 [256], 512 bytes, but 1024 bytes lie") != std::string::npos, e.c_str());
    REQUIRE_MSG(e.find("its type or shape does not match its data") != std::string::npos, e.c_str());
    e = loadError(relabelTensorType(synth_, "blk.1.attn_norm.weight", GgmlType::F16));
    REQUIRE_MSG(e.find("'blk.1.attn_norm.weight' is F16 [256]") != std::string::npos, e.c_str());
    e = loadError(relabelTensorType(q41, "blk.0.attn_q.weight", GgmlType::Q4_K));
    REQUIRE_MSG(e.find("'blk.0.attn_q.weight' is Q4_K [256, 256], 36864 bytes, but 40960 bytes lie") != std::string::npos,
                e.c_str());
    // The last tensor in the file has no next tensor: the end of the file bounds it.
    auto f = gguf::GgufFile::fromMemory(synth_.data(), synth_.size(), "in");
    const gguf::TensorInfo* last = &f->tensors().front();
    for (const auto& t : f->tensors()) if (t.offset > last->offset) last = &t;
    // Q2_K: fewer bytes per row than any type the synthetic model uses.
    REQUIRE(last->ne[0] % 256 == 0 && kernels::rowBytes(GgmlType::Q2_K, last->ne[0]) < kernels::rowBytes(last->type, last->ne[0]));
    e = loadError(relabelTensorType(synth_, last->name, GgmlType::Q2_K));
    REQUIRE_MSG(e.find("'" + last->name + "' is Q2_K") != std::string::npos, e.c_str());
    REQUIRE_MSG(e.find("bytes lie from its start to the end of the file") != std::string::npos, e.c_str());
}

WEIR_TEST(ModelLoader, refusesTokenIdsOutsideTheVocabulary) {
    for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                            "tokenizer.ggml.padding_token_id"}) {
        for (const uint32_t id : {uint32_t(4294967295u), uint32_t(512)}) {  // the vocabulary has 512 tokens
            auto f = gguf::GgufFile::fromMemory(synth_.data(), synth_.size(), "in");
            gguf::GgufWriter w;
            for (const auto& kv : f->metadata())
                if (kv.key != key) w.add(kv.key, kv.value);
            w.add(key, gguf::makeU32(id));
            const auto bytes = w.toBytes();
            auto corrupt = gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "test.gguf");
            std::string e;
            try {
                Tokenizer::fromGguf(*corrupt);
            } catch (const Error& err) {
                e = err.what();
            }
            const std::string expected = std::string(key) + " = " + std::to_string(id) +
                                         ": must be a token id below the 512 tokens";
            REQUIRE_MSG(e.find(expected) != std::string::npos, (key + (": " + e)).c_str());
        }
    }
    // In range: loads.
    auto f = gguf::GgufFile::fromMemory(synth_.data(), synth_.size(), "in");
    REQUIRE(Tokenizer::fromGguf(*f)->vocabSize() == 512);
}

WEIR_TEST(ModelLoader, refusesUnsupportedRopeScaling) {
    auto f = gguf::GgufFile::fromMemory(synth_.data(), synth_.size(), "in");
    gguf::GgufWriter w;
    for (const auto& kv : f->metadata()) w.add(kv.key, kv.value);
    w.addString("llama.rope.scaling.type", "yarn");
    for (const auto& t : f->tensors())
        w.addTensor(t.name, t.type, std::vector<int64_t>(t.ne, t.ne + std::max<uint32_t>(1, t.nDims)), t.data, size_t(t.nbytes));
    const std::string e = loadError(w.toBytes());
    REQUIRE_MSG(e.find("yarn") != std::string::npos, e.c_str());
}

WEIR_TEST(ModelLoader, forwardRefusesBadBatches) {
    std::shared_ptr<const gguf::GgufFile> f = gguf::GgufFile::fromMemory(synth_.data(), synth_.size(), "synth");
    auto m = loadModel(f, weirtest::cpuBackend());
    SimpleKvCache kv(m->config(), 2, 32, 16);
    std::vector<float> logits;
    Batch b;
    b.add(512, 0, 0, true);  // outside the 512-token vocabulary
    REQUIRE_THROWS(Error, m->forward(b, kv, logits));
    b.tokens.clear();
    b.add(5, 0, 32, true);   // beyond the pages the cache gave the sequence
    REQUIRE_THROWS(Error, m->forward(b, kv, logits));
    b.tokens.clear();
    b.add(5, 2, 0, true);    // unknown sequence
    REQUIRE_THROWS(Error, m->forward(b, kv, logits));
    b.tokens.clear();
    b.add(5, 1, 0, true);
    m->forward(b, kv, logits);
    REQUIRE_EQ(logits.size(), size_t(512));
}
