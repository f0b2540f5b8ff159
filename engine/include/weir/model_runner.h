#pragma once
// One sequence straight through the model: no scheduler, no pools, no
// batching with others. weir-cli generate and bench use it to measure the
// model alone; everything else goes through Engine.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "weir/types/compute_device.h"
#include "weir/types/kv_dtype.h"
#include "weir/types/model_config.h"
#include "weir/types/output_constraint.h"
#include "weir/types/sampling_params.h"

namespace weir {

struct ModelRunnerOptions {
    std::string modelPath;
    int32_t threads = 0;             // 0 = one per physical core
    std::string device;              // as EngineOptions::device
    int32_t contextTokens = 0;       // positions the sequence may reach; 0 = the model's context
    KvDtype kvDtype = KvDtype::F16;
    SamplingParams sampling;         // for sample()
    OutputConstraint constraint;     // for sample(): JSON output (see output_constraint.h), lazy or not
    bool repackWeights = true;       // as EngineOptions::repackWeights
};

// What one decode step must read from memory: every weight it multiplies
// (all tensors but the token-embedding table, of which it reads one row,
// unless that table is also the output head) plus the K and V of every
// position in view. The floor of a memory-bound step's time is these bytes
// over the machine's read bandwidth.
struct DecodeTraffic {
    uint64_t weightBytes = 0;
    uint64_t outputHeadBytes = 0;        // part of weightBytes: the logits' matrix
    uint64_t kvBytesPerPosition = 0;     // K+V of one position, all full-attention layers
    uint64_t kvBytesPerWindowPosition = 0;  // the same for the sliding-window layers
    int32_t slidingWindow = 0;
    // Bytes read by a step at `context` positions.
    uint64_t bytesAt(int64_t context) const {
        const int64_t windowed = slidingWindow > 0 && context > slidingWindow ? slidingWindow : context;
        return weightBytes + kvBytesPerPosition * uint64_t(context) + kvBytesPerWindowPosition * uint64_t(windowed);
    }
};

// The best of a few streaming reads of a buffer far larger than the caches,
// with `threads` threads (0 = one per physical core), in bytes per second.
double measureReadBandwidth(int32_t threads);

// The CPU kernels matmul uses on this machine: "scalar", "avx2",
// "avx512-vnni", "avx512-vnni+tiles" (prompts in the tile layout) or
// "avx512-vnni+amx" (on AMX tiles), as WEIR_KERNELS and the CPU allow.
const char* cpuKernelsInUse();

// The grammar's work in the last ModelRunner::sample() with a constraint:
// masking the logits plus advancing over the drawn token's bytes (the
// sampler's own work left out), and whether the mask had to be computed
// (a trie walk) or came from the grammar's cache.
struct GrammarStepCost {
    double ms = 0;
    bool maskComputed = false;
};

// The vocabulary index constrained sampling walks, built once per runner at
// the first constrained sample().
struct GrammarIndexInfo {
    int32_t vocabSize = 0;   // the tokenizer's
    int32_t trieNodes = 0;
    double buildMs = 0;
};

class ModelRunner {
public:
    // Maps the file and binds the weights (the tokenizer loads on first use and
    // the KV cache at the first feed, so a benchmark's load time is the
    // model's alone). Throws weir::Error.
    explicit ModelRunner(const ModelRunnerOptions& options);
    ~ModelRunner();
    ModelRunner(const ModelRunner&) = delete;
    ModelRunner& operator=(const ModelRunner&) = delete;

    const ModelConfig& config() const;
    int32_t threads() const;
    // The device the model runs on (--device), with its memory.
    ComputeDevice device() const;
    int32_t position() const;        // tokens fed so far
    DecodeTraffic decodeTraffic() const;

    // Text to ids with the model's own BOS convention; control-token text stays text.
    std::vector<int32_t> tokenize(const std::string& text);
    bool isEndOfGeneration(int32_t token);
    // Streaming text: the complete UTF-8 characters `token` adds (possibly
    // none until a character completes); flushText() returns the rest.
    std::string tokenText(int32_t token);
    std::string flushText();

    // Positions the sequence may reach (default: options.contextTokens, else
    // the model's context); the KV cache is sized for them at the first feed().
    void setContext(int32_t tokens);

    // Runs `tokens` at the next positions, at most `chunk` per forward pass,
    // and returns the logits of the last one (nVocab floats). Throws
    // weir::Error past contextTokens.
    const std::vector<float>& feed(const std::vector<int32_t>& tokens, int32_t chunk = 512);
    // Draws the next token from the last logits with options.sampling; the
    // penalties see every token fed so far. With options.constraint, only
    // tokens that keep the output valid are drawn (an end-of-generation
    // token only once the document is complete); a schema the engine cannot
    // compile throws weir::Error naming the problem at the first call.
    int32_t sample();
    // The constrained document is complete and nothing may follow: stop
    // (never for a lazy constraint, which frees the reply again after its call).
    bool constraintFinished() const;
    GrammarStepCost lastGrammarStep() const;
    GrammarIndexInfo grammarIndex();

    // A new sequence at position 0 with other sampling and constraint: the
    // model, the tokenizer and the compiled grammars stay (a schema seen
    // before finds the masks it cached), the KV cache is sized again at the
    // next feed() (so setContext() may be called).
    void restart(const SamplingParams& sampling, const OutputConstraint& constraint);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace weir
