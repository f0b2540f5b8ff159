#pragma once
// Shared by the model reference tests: loads a greedy reference recorded from
// llama.cpp (tests/reference/make_model_reference.py) and replays its prompts
// through our model, one sequence at a time or all at once in mixed batches,
// or through a whole Engine (scheduler, paged pools, sampler) all at once.
#include "tests/support/json_reading.h"
#include "tests/support/sha256.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/gguf/gguf_file.h"
#include "engine/models/model.h"
#include "engine/models/simple_kv_cache.h"
#include "kernels/cpu/cpu_features.h"
#include "weir/engine.h"
#include "tests/engine/test_backend.h"

namespace weir::testing {

struct ReferenceCase {
    std::string text;              // the prompt as text ("" for token-id prompts)
    std::vector<int32_t> prompt;
    std::vector<int32_t> generated;
    std::vector<float> top1Logit;  // logit of the chosen token at each step
};

struct Reference {
    std::string modelSha256;
    std::vector<ReferenceCase> cases;
    bool avx512Build = false;  // recorded by a llama.cpp built with AVX-512 (its system_info)
};

inline Reference loadReference(const std::string& path) {
    using namespace weirtest;
    Reference r;
    const auto text = readFile(path);
    if (!text) return r;
    const Json root = parseJsonOrUndefined(*text);
    r.modelSha256 = weirtest::text(field(root, "model_sha256"));
    r.avx512Build = weirtest::text(field(field(root, "settings"), "system_info")).find("AVX512 = 1") != std::string::npos;
    for (const Json& c : items(field(root, "cases"))) {
        ReferenceCase rc;
        rc.text = weirtest::text(field(c, "prompt"));
        for (const Json& v : items(field(c, "prompt_ids"))) rc.prompt.push_back(int32_t(integer(v)));
        for (const Json& v : items(field(c, "generated"))) rc.generated.push_back(int32_t(integer(v)));
        for (const Json& v : items(field(c, "top5"))) rc.top1Logit.push_back(float(number(item(item(v, 0), 1))));
        r.cases.push_back(std::move(rc));
    }
    return r;
}

using weirtest::fileSha256;

// llama.cpp's AVX-512 and AVX2 builds round some ops differently (see
// kernels::avx512VariantsActive): replay the build that recorded `r`. No
// tile GEMMs either (kernels::tileGemmActive): their sums over blocks run in
// another order than llama.cpp's vector kernels.
// Returns false where this CPU cannot (no AVX2 path for the AVX-512 variants).
inline bool useBuildOf(const Reference& r) {
    kernels::forceTileGemm(false);
    return kernels::forceAvx512Variants(r.avx512Build);
}

// What our model produced for one case.
struct Run {
    std::vector<int32_t> tokens;
    std::vector<float> top1Logit;
};

inline int32_t argmax(const float* v, int32_t n) { return int32_t(std::max_element(v, v + n) - v); }

// One prompt alone: prefill in one batch, then greedy steps.
inline Run runAlone(Model& model, const ReferenceCase& c, KvDtype dtype = KvDtype::F16) {
    const ModelConfig& cfg = model.config();
    const int32_t steps = int32_t(c.generated.size());
    SimpleKvCache kv(cfg, 1, int32_t(c.prompt.size()) + steps, 16, dtype);
    Batch b;
    for (size_t i = 0; i < c.prompt.size(); ++i) b.add(c.prompt[i], 0, int32_t(i), i + 1 == c.prompt.size());
    std::vector<float> logits;
    Run r;
    model.forward(b, kv, logits);
    int32_t pos = int32_t(c.prompt.size());
    for (int32_t s = 0; s < steps; ++s) {
        const int32_t t = argmax(logits.data(), cfg.nVocab);
        r.tokens.push_back(t);
        r.top1Logit.push_back(logits[size_t(t)]);
        if (s + 1 == steps) break;
        b.tokens.clear();
        b.add(t, 0, pos++, true);
        model.forward(b, kv, logits);
    }
    return r;
}

// Every case at once, one sequence each, in mixed batches: sequence s
// prefills its whole prompt at step s, next to the decode tokens of the
// sequences started before it, then decodes. (Each prompt stays in one
// piece: llama.cpp rounds a sequence's rows by how many of them share a
// batch, so a prompt split differently would round differently there too.)
inline std::vector<Run> runMixed(Model& model, const std::vector<ReferenceCase>& cases) {
    const ModelConfig& cfg = model.config();
    size_t maxLen = 0;
    for (const auto& c : cases) maxLen = std::max(maxLen, c.prompt.size() + c.generated.size());
    SimpleKvCache kv(cfg, int32_t(cases.size()), int32_t(maxLen), 16);
    std::vector<Run> runs(cases.size());
    std::vector<int32_t> pending(cases.size(), -1);  // next token to feed
    std::vector<int32_t> logitRowOf(cases.size(), -1);
    Batch b;
    std::vector<float> logits;
    for (size_t iter = 0;; ++iter) {
        b.tokens.clear();
        std::fill(logitRowOf.begin(), logitRowOf.end(), -1);
        int32_t row = 0;
        // Decode tokens first, then the new prompt, so prompts sit at varying offsets.
        for (size_t s = 0; s < cases.size(); ++s) {
            if (pending[s] < 0) continue;
            const int32_t pos = int32_t(cases[s].prompt.size() + runs[s].tokens.size() - 1);
            b.add(pending[s], int32_t(s), pos, true);
            logitRowOf[s] = row++;
            pending[s] = -1;
        }
        if (iter < cases.size()) {
            const ReferenceCase& c = cases[iter];
            for (size_t i = 0; i < c.prompt.size(); ++i) b.add(c.prompt[i], int32_t(iter), int32_t(i), i + 1 == c.prompt.size());
            logitRowOf[iter] = row++;
        }
        if (b.tokens.empty()) break;
        model.forward(b, kv, logits);
        for (size_t s = 0; s < cases.size(); ++s) {
            if (logitRowOf[s] < 0) continue;
            const float* l = logits.data() + size_t(logitRowOf[s]) * size_t(cfg.nVocab);
            const int32_t t = argmax(l, cfg.nVocab);
            runs[s].tokens.push_back(t);
            runs[s].top1Logit.push_back(l[t]);
            if (runs[s].tokens.size() < cases[s].generated.size()) pending[s] = t;
        }
    }
    return runs;
}

// Each case's prompt plus its reference continuation in one batch with a
// `dtype` KV cache: at how many positions is the argmax the reference's next
// token? Robust where a free-running comparison is not: one flipped near-tie
// does not end it.
inline size_t teacherForcedAgreement(Model& model, const std::vector<ReferenceCase>& cases,
                                     KvDtype dtype = KvDtype::F16) {
    size_t agree = 0;
    const int32_t nVocab = model.config().nVocab;
    for (const auto& c : cases) {
        const size_t total = c.prompt.size() + c.generated.size() - 1;
        SimpleKvCache kv(model.config(), 1, int32_t(total), 16, dtype);
        Batch b;
        for (size_t i = 0; i < total; ++i) {
            const int32_t tok = i < c.prompt.size() ? c.prompt[i] : c.generated[i - c.prompt.size()];
            b.add(tok, 0, int32_t(i), i + 1 >= c.prompt.size());
        }
        std::vector<float> logits;
        model.forward(b, kv, logits);
        for (size_t j = 0; j < c.generated.size(); ++j)
            agree += argmax(logits.data() + j * size_t(nVocab), nVocab) == c.generated[j];
    }
    return agree;
}

// Every case submitted at once to an Engine made with `options` (greedy, no
// stop at end of generation): one Run per case, in order. False, with the
// errors printed, when a request failed or they did not all end in 5 minutes.
inline bool runEngine(const EngineOptions& options, const std::vector<ReferenceCase>& cases, std::vector<Run>& runs) {
    Engine engine(options);
    std::mutex m;
    std::condition_variable cv;
    runs.assign(cases.size(), Run{});
    size_t ended = 0;
    std::vector<std::string> errors;
    for (size_t i = 0; i < cases.size(); ++i) {
        GenerateRequest req;
        req.prompt = cases[i].prompt;
        req.sampling.temperature = 0;
        req.maxTokens = int32_t(cases[i].generated.size());
        req.stopAtEndOfGeneration = false;
        engine.submit(std::move(req), [&, i](const Event& e) {
            std::lock_guard<std::mutex> lock(m);
            if (e.kind == Event::Kind::Token) {
                runs[i].tokens.push_back(e.token);
                return;
            }
            if (e.kind != Event::Kind::Done) errors.push_back(e.text);
            ++ended;
            cv.notify_all();
        });
    }
    std::unique_lock<std::mutex> lock(m);
    if (!cv.wait_for(lock, std::chrono::minutes(5), [&] { return ended == cases.size(); })) {
        std::printf("  the engine did not finish the reference prompts\n");
        return false;
    }
    for (const std::string& e : errors) std::printf("  engine error: %s\n", e.c_str());
    return errors.empty();
}

// Steps until the first token that differs from the reference (all = match).
inline size_t matchingSteps(const ReferenceCase& c, const Run& r) {
    size_t i = 0;
    while (i < c.generated.size() && i < r.tokens.size() && c.generated[i] == r.tokens[i]) ++i;
    return i;
}

// Largest relative difference of the chosen token's logit over the matching steps.
inline double worstTop1RelDiff(const ReferenceCase& c, const Run& r, size_t steps) {
    double worst = 0;
    for (size_t i = 0; i < steps; ++i) {
        const double ref = c.top1Logit[i];
        worst = std::max(worst, std::fabs(r.top1Logit[i] - ref) / std::max(1.0, std::fabs(ref)));
    }
    return worst;
}

// Compares every case; prints a per-case line and fails on any difference.
inline void expectMatches(const Reference& ref, const std::vector<Run>& runs, const char* label) {
    size_t fullMatches = 0, stepsMatched = 0, stepsTotal = 0;
    double worst = 0;
    for (size_t i = 0; i < ref.cases.size(); ++i) {
        const size_t m = matchingSteps(ref.cases[i], runs[i]);
        const double d = worstTop1RelDiff(ref.cases[i], runs[i], m);
        std::printf("  %s case %zu: %zu/%zu steps match, worst top-1 logit rel diff %.2e\n", label, i, m, ref.cases[i].generated.size(), d);
        fullMatches += m == ref.cases[i].generated.size();
        stepsMatched += m;
        stepsTotal += ref.cases[i].generated.size();
        worst = std::max(worst, d);
    }
    std::printf("  %s: %zu/%zu cases identical, %zu/%zu steps before any divergence, worst top-1 rel diff %.2e\n", label, fullMatches,
          ref.cases.size(), stepsMatched, stepsTotal, worst);
    REQUIRE_EQ(fullMatches, ref.cases.size());
    REQUIRE_MSG(worst < 1e-2, weirtest::str("top-1 logit differs by ", worst, " relative"));
}

} // namespace weir::testing
