// The grammar benchmark: one sequence through ModelRunner, with the
// grammar's work (as the runner times it) apart from the forward pass.
#include "app/cli/grammar_bench.h"

#include <algorithm>
#include <chrono>

#include "weir/model_runner.h"

namespace weir::cli {

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

// One schema's generation, timed: the grammar per token (from the runner)
// and the forward pass of each decoded token.
struct TimedRun {
    GrammarBenchRun run;
    std::vector<double> grammarMs, decodeMs;
};

OutputConstraint constraintOf(const BenchCase& bc) {
    OutputConstraint oc{bc.kind, bc.schema};
    if (bc.trigger) {
        oc.triggers = {bc.trigger};
        oc.close = "```";
    }
    return oc;
}

double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return v.empty() ? 0.0 : s / double(v.size());
}

TimedRun generate(ModelRunner& runner, const BenchCase& bc, const GrammarBenchOptions& options, int pass) {
    TimedRun t;
    GrammarBenchRun& run = t.run;
    run.schema = bc.name;
    run.warm = pass == 1;
    SamplingParams sp;
    sp.temperature = options.temperature;
    sp.seed = options.seed + uint64_t(pass);
    runner.restart(sp, constraintOf(bc));
    const std::vector<int32_t> prompt = runner.tokenize(bc.prompt);
    runner.setContext(int32_t(prompt.size()) + options.maxTokens + 1);
    runner.feed(prompt);
    for (int32_t i = 0; i < options.maxTokens; ++i) {
        const int32_t token = runner.sample();
        const GrammarStepCost cost = runner.lastGrammarStep();
        t.grammarMs.push_back(cost.ms);
        if (cost.maskComputed) ++run.masksComputed;
        ++run.tokens;
        run.output += runner.tokenText(token);
        if (runner.isEndOfGeneration(token) || runner.constraintFinished()) {
            run.complete = true;
            break;
        }
        const auto td = Clock::now();
        runner.feed({token});
        t.decodeMs.push_back(msSince(td));
    }
    run.output += runner.flushText();
    run.decodeStepMsMean = mean(t.decodeMs);
    run.grammarMsMean = mean(t.grammarMs);
    run.grammarMsP50 = percentile(t.grammarMs, 0.5);
    run.grammarMsP95 = percentile(t.grammarMs, 0.95);
    run.grammarMsMax = t.grammarMs.empty() ? 0 : *std::max_element(t.grammarMs.begin(), t.grammarMs.end());
    return t;
}

} // namespace

GrammarBenchReport runGrammarBench(const GrammarBenchOptions& options) {
    ModelRunnerOptions ro;
    ro.modelPath = options.modelPath;
    ro.threads = options.threads;
    ro.device = options.device;
    ModelRunner runner(ro);

    GrammarBenchReport report;
    report.model = options.modelPath;
    const GrammarIndexInfo index = runner.grammarIndex();
    report.vocabSize = index.vocabSize;
    report.trieNodes = index.trieNodes;
    report.trieBuildMs = index.buildMs;
    report.threads = runner.threads();

    double decodeSum = 0, grammarSum = 0, warmDecodeSum = 0, warmGrammarSum = 0;
    int64_t steps = 0, warmSteps = 0;
    for (const BenchCase& bc : benchCases()) {
        for (int pass = 0; pass < 2; ++pass) {
            TimedRun t = generate(runner, bc, options, pass);
            const bool warm = t.run.warm;
            for (double x : t.decodeMs) (warm ? warmDecodeSum : decodeSum) += x;
            for (double x : t.grammarMs) (warm ? warmGrammarSum : grammarSum) += x;
            (warm ? warmSteps : steps) += int64_t(t.grammarMs.size());
            report.runs.push_back(std::move(t.run));
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

} // namespace weir::cli
