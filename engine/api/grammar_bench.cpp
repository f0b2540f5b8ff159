// The grammar benchmark: one sequence through the model (as ModelRunner
// runs it), with the grammar's work timed apart from the forward pass.
#include "weir/grammar_bench.h"

#include <algorithm>
#include <chrono>

#include "engine/gguf/gguf_file.h"
#include "engine/grammar/constraint_factory.h"
#include "engine/models/model.h"
#include "engine/models/simple_kv_cache.h"
#include "engine/sampling/sampler.h"
#include "engine/tokenizer/tokenizer.h"
#include "engine/models/model_assembly.h"
#include "weir/base/error.h"

namespace weir {

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct BenchCase {
    const char* name;
    const char* prompt;
    OutputConstraint::Kind kind;
    const char* schema;
    const char* trigger = nullptr;  // a lazy constraint (tool_choice "auto"): held from here to "```"
};

// Small schemas of the kinds clients send: tool arguments, a nested record, any object.
const std::vector<BenchCase>& benchCases() {
    static const std::vector<BenchCase> cases = {
        {"tool_arguments", "Arguments for get_weather(location, unit, days) for three days in Paris, as JSON:\n",
         OutputConstraint::Kind::JsonSchema,
         R"({"type":"object","properties":{"location":{"type":"string"},
             "unit":{"type":"string","enum":["celsius","fahrenheit"]},"days":{"type":"integer"}},
             "required":["location","unit","days"],"additionalProperties":false})"},
        {"nested_record", "A JSON record describing a book, its author and three keywords:\n",
         OutputConstraint::Kind::JsonSchema,
         R"({"type":"object","properties":{"title":{"type":"string"},
             "author":{"type":"object","properties":{"name":{"type":"string"},"born":{"type":"integer"}},
             "required":["name","born"],"additionalProperties":false},
             "keywords":{"type":"array","items":{"type":"string"},"maxItems":5},
             "rating":{"type":"number"},"in_print":{"type":"boolean"},
             "series":{"anyOf":[{"type":"string"},{"type":"null"}]}},
             "required":["title","author","keywords","rating","in_print","series"],"additionalProperties":false})"},
        {"json_object", "A JSON object describing a city:\n", OutputConstraint::Kind::JsonObject, ""},
        // Free text watched for the call marker, and the calls the model opens held.
        {"tool_call_auto",
         "Weather questions are answered with a tool_call block.\nQ: Weather in Rome?\nA: ```tool_call\n"
         "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n```\nQ: Is it sunny in Paris?\nA:",
         OutputConstraint::Kind::JsonSchema,
         R"({"type":"object","properties":{"name":{"const":"get_weather"},
             "arguments":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],
             "additionalProperties":false}},"required":["name","arguments"],"additionalProperties":false})",
         "```tool_call"},
    };
    return cases;
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

} // namespace

GrammarBenchReport runGrammarBench(const GrammarBenchOptions& options) {
    BackendRequest device;
    device.device = options.device;
    device.threads = options.threads;
    AssembledModel parts = assembleModel(options.modelPath, device);
    const auto& file = parts.file;
    Model* model = parts.model.get();
    const auto tokenizer = Tokenizer::fromGguf(*file);
    grammar::ConstraintFactory factory(*tokenizer);
    const int32_t nVocab = model->config().nVocab;

    GrammarBenchReport report;
    report.model = options.modelPath;
    report.vocabSize = tokenizer->vocabSize();
    report.trieNodes = factory.trie()->nodeCount();
    report.trieBuildMs = factory.trieBuildMs();
    report.threads = model->backend().threads();

    double decodeSum = 0, grammarSum = 0, warmDecodeSum = 0, warmGrammarSum = 0;
    int64_t steps = 0, warmSteps = 0;
    for (const BenchCase& bc : benchCases()) {
        for (int pass = 0; pass < 2; ++pass) {
            GrammarBenchRun run;
            run.schema = bc.name;
            run.warm = pass == 1;
            OutputConstraint oc{bc.kind, bc.schema};
            if (bc.trigger) {
                oc.triggers = {bc.trigger};
                oc.close = "```";
            }
            // One of the two: the whole reply held, or held from the trigger on.
            auto constraint = oc.lazy() ? nullptr : factory.make(oc, tokenizer->endOfGeneration());
            auto lazy = factory.makeLazy(oc);
            SamplingParams sp;
            sp.temperature = options.temperature;
            sp.seed = options.seed + uint64_t(pass);
            Sampler sampler(sp);
            std::vector<int32_t> history = tokenizer->encode(bc.prompt, tokenizer->addBosDefault(), false);
            SimpleKvCache kv(model->config(), 1, int32_t(history.size()) + options.maxTokens + 1, 16, KvDtype::F16, model->backend());
            std::vector<float> logits;
            Batch batch;
            for (size_t i = 0; i < history.size(); ++i)
                batch.add(history[i], 0, int32_t(i), i + 1 == history.size());
            model->forward(batch, kv, logits);
            std::vector<double> grammarMs, decodeMs;
            std::vector<int32_t> generated;
            for (int32_t i = 0; i < options.maxTokens; ++i) {
                const auto tg = Clock::now();
                if (!(lazy ? lazy->maskLogits(logits.data(), nVocab) : constraint->maskLogits(logits.data(), nVocab)))
                    throw Error("the grammar allowed no token");
                double g = msSince(tg);
                if (!(lazy ? lazy->lastMaskWasCached() : constraint->lastMaskWasCached())) ++run.masksComputed;
                const int32_t token = sampler.sample(logits.data(), nVocab, history);
                const auto ta = Clock::now();
                if (!(lazy ? lazy->accept(token) : constraint->accept(token)))
                    throw Error("the sampler drew a token the grammar does not allow");
                g += msSince(ta);
                grammarMs.push_back(g);
                history.push_back(token);
                generated.push_back(token);
                if (tokenizer->isEndOfGeneration(token) || (constraint && constraint->finished())) {
                    run.complete = true;
                    break;
                }
                const auto td = Clock::now();
                batch.tokens.clear();
                batch.add(token, 0, int32_t(history.size()) - 1, true);
                model->forward(batch, kv, logits);
                decodeMs.push_back(msSince(td));
            }
            run.tokens = int32_t(generated.size());
            run.output = tokenizer->decode(generated);
            auto mean = [](const std::vector<double>& v) {
                double s = 0;
                for (double x : v) s += x;
                return v.empty() ? 0.0 : s / double(v.size());
            };
            run.decodeStepMsMean = mean(decodeMs);
            run.grammarMsMean = mean(grammarMs);
            run.grammarMsP50 = percentile(grammarMs, 0.5);
            run.grammarMsP95 = percentile(grammarMs, 0.95);
            run.grammarMsMax = grammarMs.empty() ? 0 : *std::max_element(grammarMs.begin(), grammarMs.end());
            for (double x : decodeMs) (run.warm ? warmDecodeSum : decodeSum) += x;
            for (double x : grammarMs) (run.warm ? warmGrammarSum : grammarSum) += x;
            (run.warm ? warmSteps : steps) += int64_t(grammarMs.size());
            report.runs.push_back(std::move(run));
        }
    }
    const int64_t all = steps + warmSteps;
    report.decodeStepMsMean = all ? (decodeSum + warmDecodeSum) / double(all) : 0;
    report.grammarMsMean = all ? (grammarSum + warmGrammarSum) / double(all) : 0;
    report.grammarShareOfDecode = report.decodeStepMsMean > 0 ? report.grammarMsMean / report.decodeStepMsMean : 0;
    report.warmGrammarMsMean = warmSteps ? warmGrammarSum / double(warmSteps) : 0;
    const double warmDecode = warmSteps ? warmDecodeSum / double(warmSteps) : 0;
    report.warmGrammarShareOfDecode = warmDecode > 0 ? report.warmGrammarMsMean / warmDecode : 0;
    return report;
}

} // namespace weir
