// weir-cli generate: one prompt through the model, streamed to stdout, or as
// JSON with token ids and timings. Uses the model directly (no scheduler).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/cli_json.h"
#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "engine/engine_options_check.h"
#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/simple_kv_cache.h"
#include "engine/sampling/sampler.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/util/error.h"

namespace weir::cli {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    const std::string modelPath = args.value("-m", defaultModelPath());
    const std::string prompt = args.value("-p", "");
    const long long nPredict = args.intValue("-n", 64, 0, 1 << 20);
    SamplingParams sp;
    sp.temperature = float(args.floatValue("--temp", sp.temperature, 0.0, 100.0));
    sp.seed = uint64_t(args.intValue("--seed", 0, 0, INT64_MAX));
    sp.topK = int32_t(args.intValue("--top-k", sp.topK, 0, INT32_MAX));
    sp.topP = float(args.floatValue("--top-p", sp.topP, 0.0, 1.0));
    const int threads = int(args.intValue("--threads", 0, 0, EngineLimits::maxThreads()));
    const bool json = args.flag("--json");
    const KvDtype kvType = readKvDtypeFlag(args, KvDtype::F16);
    args.rejectUnknown();
    if (prompt.empty()) throw Error("generate needs a prompt: -p TEXT");

    const auto t0 = Clock::now();
    std::shared_ptr<const gguf::GgufFile> file = gguf::GgufFile::open(modelPath);
    auto model = loadModel(file);
    auto tok = Tokenizer::fromGguf(*file);
    const double loadMs = msSince(t0);
    const ModelConfig& cfg = model->config();

    const std::vector<TokenId> promptIds = tok->encode(prompt, tok->addBosDefault(), false);
    if (promptIds.empty()) throw Error("the prompt encodes to no tokens");
    const int64_t total = int64_t(promptIds.size()) + nPredict;
    if (total > cfg.nCtxTrain)
        throw Error("prompt (" + std::to_string(promptIds.size()) + " tokens) + -n exceeds the model's context of " + std::to_string(cfg.nCtxTrain));

    kernels::ThreadPool pool(threads);
    SimpleKvCache kv(cfg, 1, int32_t(total), 16, kvType);
    Sampler sampler(sp);
    StreamingDetokenizer detok(*tok);
    std::vector<int32_t> history(promptIds.begin(), promptIds.end());
    std::vector<int32_t> generated;
    std::vector<float> logits;
    std::string text;

    // Prefill in chunks so a long prompt does not need a huge batch.
    const auto tp = Clock::now();
    const int32_t chunk = 512;
    Batch batch;
    for (size_t start = 0; start < promptIds.size(); start += chunk) {
        batch.tokens.clear();
        const size_t end = std::min(promptIds.size(), start + chunk);
        for (size_t i = start; i < end; ++i) batch.add(promptIds[i], 0, int32_t(i), i + 1 == promptIds.size());
        model->forward(batch, kv, logits, pool);
    }
    const double prefillMs = msSince(tp);

    const auto td = Clock::now();
    int32_t pos = int32_t(promptIds.size());
    for (long long i = 0; i < nPredict; ++i) {
        const int32_t next = sampler.sample(logits, history);
        generated.push_back(next);
        history.push_back(next);
        if (tok->isEndOfGeneration(next)) break;
        const std::string piece = detok.push(next);
        text += piece;
        if (!json) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        }
        if (i + 1 == nPredict) break;
        batch.tokens.clear();
        batch.add(next, 0, pos++, true);
        model->forward(batch, kv, logits, pool);
    }
    const std::string rest = detok.flush();
    text += rest;
    const double decodeMs = msSince(td);
    // Decode steps = forward passes after the prefill (the last token is sampled, not run).
    const double decodeSteps = generated.empty() ? 0.0 : double(generated.size() - 1);

    if (json) {
        std::printf("{\"model\":%s,\"prompt_tokens\":%s,\"tokens\":%s,\"text\":%s,\"timings\":{\"load_ms\":%s,"
                    "\"prefill_ms\":%s,\"prefill_tokens_per_s\":%s,\"decode_ms\":%s,\"decode_tokens_per_s\":%s},\"threads\":%d}\n",
                    jsonString(modelPath).c_str(), jsonIntArray(promptIds).c_str(), jsonIntArray(generated).c_str(),
                    jsonString(text).c_str(), jsonNumber(loadMs).c_str(), jsonNumber(prefillMs).c_str(),
                    jsonNumber(promptIds.size() / (prefillMs / 1000.0)).c_str(), jsonNumber(decodeMs).c_str(),
                    jsonNumber(decodeSteps > 0 ? decodeSteps / (decodeMs / 1000.0) : 0.0).c_str(), pool.size());
    } else {
        std::fwrite(rest.data(), 1, rest.size(), stdout);
        std::printf("\n");
        std::fprintf(stderr, "\n[%zu prompt tokens, %zu generated; load %.0f ms, prefill %.1f tok/s, decode %.1f tok/s]\n",
                     promptIds.size(), generated.size(), loadMs, promptIds.size() / (prefillMs / 1000.0),
                     decodeSteps > 0 ? decodeSteps / (decodeMs / 1000.0) : 0.0);
    }
    return 0;
}

Command reg{"generate", "generate text from a prompt: -p TEXT [-m FILE] [-n N] [--temp T] [--seed S] [--top-k K] [--top-p P] [--threads T] [--kv-cache-dtype f16|q8_0|fp8_e4m3|f32] [--json]", &run};

} // namespace
} // namespace weir::cli
