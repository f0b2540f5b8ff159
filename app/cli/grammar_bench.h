#pragma once
// What constrained decoding costs per token next to what a decode step of
// the model costs, in the same run (weir-cli bench-grammar). Each schema is
// generated twice with one shared grammar cache: the first run pays for
// every token mask it meets ("cold"), the second finds most of them cached
// ("warm"), as requests with a schema seen before do. Runs on ModelRunner
// (one sequence, no scheduler), which times the grammar's part of each step.
#include <cstdint>
#include <string>
#include <vector>

namespace weir::cli {

struct GrammarBenchOptions {
    std::string modelPath;
    int32_t threads = 0;          // 0 = one per physical core
    std::string device = "cpu";   // --device (the grammar's cost is the host's; the forward pass runs there)
    int32_t maxTokens = 96;       // per generation
    float temperature = 0.8f;
    uint64_t seed = 1;
};

struct GrammarBenchRun {
    std::string schema;           // the built-in case's name (tool_call_auto: a lazy constraint)
    bool warm = false;            // second run of the same schema
    int32_t tokens = 0;           // generated
    bool complete = false;        // the document finished before maxTokens
    double decodeStepMsMean = 0;  // the model's forward pass for one token
    // Grammar work per token: mask (trie walk or cache lookup, applied to
    // the logits) plus advancing over the drawn token's bytes.
    double grammarMsMean = 0, grammarMsP50 = 0, grammarMsP95 = 0, grammarMsMax = 0;
    int32_t masksComputed = 0;    // trie walks (the rest came from the cache)
    std::string output;
};

struct GrammarBenchReport {
    std::string model;
    int32_t vocabSize = 0;
    int32_t trieNodes = 0;
    double trieBuildMs = 0;
    int32_t threads = 0;
    std::vector<GrammarBenchRun> runs;
    // Over every token of every run, and over the warm runs only.
    double decodeStepMsMean = 0, grammarMsMean = 0, grammarShareOfDecode = 0;
    double warmGrammarMsMean = 0, warmGrammarShareOfDecode = 0;
};

// Throws weir::Error for a model it cannot load.
GrammarBenchReport runGrammarBench(const GrammarBenchOptions& options);

} // namespace weir::cli
