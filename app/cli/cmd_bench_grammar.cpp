// weir-cli bench-grammar: what constrained decoding (JSON Schema, json_object)
// costs per token beside the model's own decode step, as JSON.
#include <cstdio>
#include <string>
#include <vector>

#include "app/cli/cli_json.h"
#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "app/cli/grammar_bench.h"

namespace weir::cli {
namespace {

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    GrammarBenchOptions o;
    o.modelPath = args.value("-m", defaultModelPath());
    o.threads = readThreadsFlag(args);
    o.device = readDeviceFlag(args, "cpu");
    o.maxTokens = int32_t(args.intValue("--tokens", o.maxTokens, 1, 4096));
    o.temperature = float(args.floatValue("--temp", o.temperature, 0.0, 100.0));
    o.seed = uint64_t(args.intValue("--seed", 1, 0, INT64_MAX));
    args.rejectUnknown();

    const GrammarBenchReport r = runGrammarBench(o);
    std::string runs;
    for (const GrammarBenchRun& x : r.runs) {
        if (!runs.empty()) runs += ",";
        runs += "{\"schema\":" + jsonString(x.schema) + ",\"warm\":" + (x.warm ? "true" : "false") +
                ",\"tokens\":" + std::to_string(x.tokens) + ",\"complete\":" + (x.complete ? "true" : "false") +
                ",\"decode_step_ms\":" + jsonNumber(x.decodeStepMsMean) + ",\"grammar_ms_mean\":" +
                jsonNumber(x.grammarMsMean) + ",\"grammar_ms_p50\":" + jsonNumber(x.grammarMsP50) +
                ",\"grammar_ms_p95\":" + jsonNumber(x.grammarMsP95) + ",\"grammar_ms_max\":" +
                jsonNumber(x.grammarMsMax) + ",\"masks_computed\":" + std::to_string(x.masksComputed) +
                ",\"output\":" + jsonString(x.output) + "}";
    }
    std::printf("{\"model\":%s,\"vocab\":%d,\"trie_nodes\":%d,\"trie_build_ms\":%s,\"threads\":%d,"
                "\"decode_step_ms_mean\":%s,\"grammar_ms_mean\":%s,\"grammar_share_of_decode\":%s,"
                "\"warm_grammar_ms_mean\":%s,\"warm_grammar_share_of_decode\":%s,\"runs\":[%s]}\n",
                jsonString(r.model).c_str(), r.vocabSize, r.trieNodes, jsonNumber(r.trieBuildMs).c_str(), r.threads,
                jsonNumber(r.decodeStepMsMean).c_str(), jsonNumber(r.grammarMsMean).c_str(),
                jsonNumber(r.grammarShareOfDecode).c_str(), jsonNumber(r.warmGrammarMsMean).c_str(),
                jsonNumber(r.warmGrammarShareOfDecode).c_str(), runs.c_str());
    return 0;
}

Command reg{"bench-grammar", "constrained-decoding cost per token beside the decode step, as JSON: [-m FILE] [--tokens N] [--device cpu|cuda|cuda:N] [--threads T] [--temp T] [--seed S]", &run};

} // namespace
} // namespace weir::cli
