// weir-cli compare-devices: the same prompts through the model on two
// devices (the CPU and the first GPU unless told), greedy and teacher-forced
// on the reference's tokens, so one device's rounding never sends the other
// down another path. Per prompt: the first step where the greedy choices
// differ, each such step with the reference's top-2 margin (a near-tie may
// flip on any rounding), and the largest logit error relative to the
// reference's largest logit. Passes when every choice agrees but near-ties
// and every logit is finite. Prints JSON; exits 0 on a pass, 1 on a fail,
// 2 when a device cannot be opened.
//
// ModelRunner runs one sequence and cannot rewind, so the prompts follow one
// another in one sequence: each prompt starts after the previous one's
// reply. The last prompt is --long-prompt random token ids, fed in chunks of
// 512 (the batched prefill path with many positions in view).
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/cli_json.h"
#include "app/cli/command.h"
#include "app/cli/engine_flags.h"
#include "app/cli/logit_comparison.h"
#include "weir/base/error.h"
#include "weir/devices.h"
#include "weir/model_file.h"
#include "weir/model_runner.h"
#include "weir/types/engine_limits.h"

namespace weir::cli {
namespace {

const char* const kPrompts[] = {
    "The quick brown fox jumps over the lazy dog. Then it",
    "Explain in one paragraph why the sky is blue.",
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "List three prime numbers greater than one hundred:",
    "Translate to French: The weather is lovely today.",
    "{\"name\": \"Weir\", \"kind\": \"inference engine\", \"devices\": [",
    "Once upon a time, in a town by a river, there lived",
    "Q: What is 17 times 23?\nA:",
};
constexpr int kPromptCount = int(sizeof kPrompts / sizeof kPrompts[0]);

// A preset written to a temporary file, removed when done.
struct TempModel {
    std::string path;
    ~TempModel() {
        if (!path.empty()) std::remove(path.c_str());
    }
};

std::unique_ptr<ModelRunner> openRunner(const ModelRunnerOptions& base, const std::string& device) {
    ModelRunnerOptions o = base;
    o.device = device;
    try {
        return std::make_unique<ModelRunner>(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "weir-cli compare-devices: device '%s' cannot run %s: %s\n", device.c_str(),
                     base.modelPath.c_str(), e.what());
        return nullptr;
    }
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

// The model to load: a preset written to `temp`, else -m, else the default.
std::string modelToLoad(const std::string& preset, const std::string& modelPath, TempModel& temp) {
    if (preset.empty()) return modelPath.empty() ? defaultModelPath() : modelPath;
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/weir-compare-XXXXXX";
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw Error("cannot create a temporary file from " + pattern);
    ::close(fd);
    temp.path = pattern;
    SyntheticModelSpec spec;
    spec.preset = preset;
    writeSyntheticModel(spec, temp.path);
    return temp.path;
}

// The prompts' ids (the reference's tokenizer; both load the same file), the
// long one last.
std::vector<std::vector<int32_t>> promptInputs(ModelRunner& ref, int32_t prompts, int32_t longPrompt) {
    std::vector<std::vector<int32_t>> inputs;
    for (int32_t i = 0; i < prompts; ++i) {
        std::string text = kPrompts[i % kPromptCount];
        if (i >= kPromptCount) text += " (variant " + std::to_string(i / kPromptCount) + ")";
        inputs.push_back(ref.tokenize(text));
    }
    if (longPrompt > 0) {
        std::vector<int32_t> ids(static_cast<size_t>(longPrompt));
        uint64_t state = 0x2545f4914f6cdd1dull;
        for (int32_t& t : ids) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            t = int32_t((state >> 33) % uint64_t(ref.config().nVocab));
        }
        inputs.push_back(std::move(ids));
    }
    return inputs;
}

struct Comparison {
    std::vector<PromptComparison> results;
    bool allIdentical = true;
    double worst = 0;
    int32_t nearTies = 0, hard = 0;
};

// Every prompt through both runners, teacher-forced on the reference's choice.
Comparison compareAll(ModelRunner& ref, ModelRunner& other, const std::vector<std::vector<int32_t>>& inputs,
                      int32_t steps, double tieMargin) {
    Comparison c;
    for (const auto& in : inputs) {
        PromptComparison pc(tieMargin);
        std::vector<float> refLogits = ref.feed(in);
        const std::vector<float>* otherLogits = &other.feed(in);
        for (int32_t s = 0;; ++s) {
            const LogitStep step = compareLogits(refLogits, *otherLogits);
            pc.add(step);
            if (s + 1 == steps) break;
            // Teacher forcing: both devices continue with the reference's choice.
            const int32_t next = step.argmaxRef >= 0 ? step.argmaxRef : 0;
            refLogits = ref.feed({next});
            otherLogits = &other.feed({next});
        }
        c.allIdentical = c.allIdentical && pc.allIdentical();
        c.worst = std::max(c.worst, pc.maxRelError());
        c.hard += pc.hardDivergences();
        c.nearTies += int32_t(pc.divergences().size()) - pc.hardDivergences();
        c.results.push_back(std::move(pc));
    }
    return c;
}

struct Setup {
    std::string preset, modelPath, deviceRef, device;
    int32_t steps = 0, longPrompt = 0;
    double tieMargin = 0, maxRelError = 0;
    KvDtype kvType = KvDtype::F16;
};

// Why the run fails (none: it passes). Where each runner ran matters too:
// two different devices never agree bit for bit over a whole run; if they
// do, one was not used.
std::vector<std::string> problemsOf(const Setup& s, const Comparison& c, const ComputeDevice& ranRef,
                                    const ComputeDevice& ran) {
    std::vector<std::string> problems;
    if (s.device.rfind("cuda", 0) == 0 && !ran.gpu)
        problems.push_back("asked for '" + s.device + "', the runner ran on '" + ran.id + "'");
    if (c.allIdentical && ran.id != ranRef.id)
        problems.push_back("every logit of '" + s.device + "' equals '" + s.deviceRef +
                           "' bit for bit: the runner did not run on the device asked for");
    if (c.hard > 0)
        problems.push_back(std::to_string(c.hard) + " greedy choices differ where the reference had no near-tie");
    if (s.maxRelError > 0 && c.worst > s.maxRelError)
        problems.push_back("max relative logit error " + number(c.worst) + " exceeds --max-rel-error " +
                           number(s.maxRelError));
    for (const auto& pc : c.results)
        if (!pc.allFinite()) {
            problems.push_back("non-finite logits");
            break;
        }
    return problems;
}

std::string reportJson(const Setup& s, const std::string& architecture, const ComputeDevice& ranRef,
                       const ComputeDevice& ran, const std::vector<std::vector<int32_t>>& inputs, const Comparison& c,
                       const std::vector<std::string>& problems) {
    std::string out = "{\"model\":" + jsonString(s.modelPath) + ",\"preset\":" + jsonString(s.preset) +
                      ",\"architecture\":" + jsonString(architecture) +
                      ",\"reference_device\":" + jsonString(s.deviceRef) + ",\"device\":" + jsonString(s.device) +
                      ",\"reference_ran_on\":" + jsonString(ranRef.id + " (" + ranRef.name + ")") +
                      ",\"ran_on\":" + jsonString(ran.id + " (" + ran.name + ", " + ran.detail + ")") +
                      ",\"steps\":" + std::to_string(s.steps) + ",\"tie_margin\":" + number(s.tieMargin) +
                      ",\"kv_cache_dtype\":\"" + kvDtypeName(s.kvType) + "\",\"prompts\":[";
    for (size_t i = 0; i < c.results.size(); ++i) {
        const bool isLong = s.longPrompt > 0 && i + 1 == c.results.size();
        out += std::string(i ? "," : "") + "{\"index\":" + std::to_string(i) + ",\"kind\":\"" +
               (isLong ? "long" : "text") + "\",\"prompt_tokens\":" + std::to_string(inputs[i].size()) +
               ",\"result\":" + c.results[i].toJson() + "}";
    }
    out += "],\"max_rel_logit_error\":" + number(c.worst) + ",\"near_tie_divergences\":" +
           std::to_string(c.nearTies) + ",\"hard_divergences\":" + std::to_string(c.hard) +
           ",\"bit_identical\":" + (c.allIdentical ? "true" : "false") + ",\"problems\":[";
    for (size_t i = 0; i < problems.size(); ++i) out += std::string(i ? "," : "") + jsonString(problems[i]);
    out += "],\"pass\":" + std::string(problems.empty() ? "true" : "false") + "}\n";
    return out;
}

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    Setup s;
    s.preset = args.value("--preset", "");
    s.modelPath = args.value("-m", "");
    s.deviceRef = args.value("--reference-device", "cpu");
    s.device = readDeviceFlag(args, "cuda");
    s.steps = int32_t(args.intValue("--steps", 64, 1, 1 << 16));
    const int32_t prompts = int32_t(args.intValue("--prompts", 4, 0, 1024));
    s.longPrompt = int32_t(args.intValue("--long-prompt", 1100, 0, 1 << 20));
    const int32_t threads = int32_t(args.intValue("--threads", 0, 0, EngineLimits::maxThreads()));
    s.tieMargin = args.floatValue("--tie-margin", 1e-2, 0.0, 1.0);
    s.maxRelError = args.floatValue("--max-rel-error", 0.0, 0.0, 1e9);  // 0: not checked
    s.kvType = readKvDtypeFlag(args, KvDtype::F16);
    args.rejectUnknown();
    checkDeviceName(s.deviceRef);
    if (!s.preset.empty() && !s.modelPath.empty()) throw Error("give -m FILE or --preset NAME, not both");
    if (prompts == 0 && s.longPrompt == 0) throw Error("nothing to compare: --prompts 0 and --long-prompt 0");

    TempModel temp;
    s.modelPath = modelToLoad(s.preset, s.modelPath, temp);
    ModelRunnerOptions base;
    base.modelPath = s.modelPath;
    base.threads = threads;
    base.kvDtype = s.kvType;
    base.sampling.temperature = 0.0f;
    auto ref = openRunner(base, s.deviceRef);
    if (!ref) return 2;
    auto other = openRunner(base, s.device);
    if (!other) return 2;

    const std::vector<std::vector<int32_t>> inputs = promptInputs(*ref, prompts, s.longPrompt);
    int64_t positions = 0;
    for (const auto& in : inputs) positions += int64_t(in.size()) + s.steps;
    if (positions > ref->config().nCtxTrain)
        throw Error("the prompts and replies need " + std::to_string(positions) + " positions, more than the model's " +
                    std::to_string(ref->config().nCtxTrain) + ": fewer --prompts, --steps or --long-prompt");
    ref->setContext(int32_t(positions));
    other->setContext(int32_t(positions));

    const Comparison c = compareAll(*ref, *other, inputs, s.steps, s.tieMargin);
    const ComputeDevice ranRef = ref->device(), ran = other->device();
    const std::vector<std::string> problems = problemsOf(s, c, ranRef, ran);
    std::fputs(reportJson(s, ref->config().architecture, ranRef, ran, inputs, c, problems).c_str(), stdout);
    return problems.empty() ? 0 : 1;
}

Command reg{"compare-devices",
            "the model on a device against the CPU, greedy and teacher-forced, as JSON: [-m FILE | --preset NAME] "
            "[--device cuda|cuda:N] [--reference-device cpu] [--steps N] [--prompts N] [--long-prompt N] [--threads T] "
            "[--tie-margin R] [--max-rel-error R] [--kv-cache-dtype f16|q8_0|fp8_e4m3|f32]",
            &run,
            "Passes (exit 0) when both devices make the same greedy choice at every step, except where the\n"
            "reference's top two logits are within --tie-margin of each other (relative to max(|top1|, 1)),\n"
            "and every logit is finite; exit 1 otherwise, 2 when a device cannot open the model.\n"
            "--preset writes that synthetic preset to a temporary file first (make-synthetic --preset list)."};

} // namespace
} // namespace weir::cli
