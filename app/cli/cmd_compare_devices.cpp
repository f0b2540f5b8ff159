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

int run(const std::vector<std::string>& argv) {
    Args args(argv);
    const std::string preset = args.value("--preset", "");
    std::string modelPath = args.value("-m", "");
    const std::string deviceRef = args.value("--reference-device", "cpu");
    const std::string device = readDeviceFlag(args, "cuda");
    const int32_t steps = int32_t(args.intValue("--steps", 64, 1, 1 << 16));
    const int32_t prompts = int32_t(args.intValue("--prompts", 4, 0, 1024));
    const int32_t longPrompt = int32_t(args.intValue("--long-prompt", 1100, 0, 1 << 20));
    const int32_t threads = int32_t(args.intValue("--threads", 0, 0, EngineLimits::maxThreads()));
    const double tieMargin = args.floatValue("--tie-margin", 1e-2, 0.0, 1.0);
    const double maxRelError = args.floatValue("--max-rel-error", 0.0, 0.0, 1e9);  // 0: not checked
    const KvDtype kvType = readKvDtypeFlag(args, KvDtype::F16);
    args.rejectUnknown();
    checkDeviceName(deviceRef);
    if (!preset.empty() && !modelPath.empty()) throw Error("give -m FILE or --preset NAME, not both");
    if (prompts == 0 && longPrompt == 0) throw Error("nothing to compare: --prompts 0 and --long-prompt 0");

    TempModel temp;
    if (!preset.empty()) {
        const char* dir = std::getenv("TMPDIR");
        std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/weir-compare-XXXXXX";
        const int fd = ::mkstemp(pattern.data());
        if (fd < 0) throw Error("cannot create a temporary file from " + pattern);
        ::close(fd);
        temp.path = pattern;
        SyntheticModelSpec spec;
        spec.preset = preset;
        writeSyntheticModel(spec, temp.path);
        modelPath = temp.path;
    } else if (modelPath.empty()) {
        modelPath = defaultModelPath();
    }

    ModelRunnerOptions base;
    base.modelPath = modelPath;
    base.threads = threads;
    base.kvDtype = kvType;
    base.sampling.temperature = 0.0f;
    auto ref = openRunner(base, deviceRef);
    if (!ref) return 2;
    auto other = openRunner(base, device);
    if (!other) return 2;

    // The prompts' ids (the reference's tokenizer; both load the same file).
    std::vector<std::vector<int32_t>> inputs;
    for (int32_t i = 0; i < prompts; ++i) {
        std::string text = kPrompts[i % kPromptCount];
        if (i >= kPromptCount) text += " (variant " + std::to_string(i / kPromptCount) + ")";
        inputs.push_back(ref->tokenize(text));
    }
    if (longPrompt > 0) {
        std::vector<int32_t> ids(static_cast<size_t>(longPrompt));
        uint64_t state = 0x2545f4914f6cdd1dull;
        for (int32_t& t : ids) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            t = int32_t((state >> 33) % uint64_t(ref->config().nVocab));
        }
        inputs.push_back(std::move(ids));
    }
    int64_t positions = 0;
    for (const auto& in : inputs) positions += int64_t(in.size()) + steps;
    if (positions > ref->config().nCtxTrain)
        throw Error("the prompts and replies need " + std::to_string(positions) + " positions, more than the model's " +
                    std::to_string(ref->config().nCtxTrain) + ": fewer --prompts, --steps or --long-prompt");
    ref->setContext(int32_t(positions));
    other->setContext(int32_t(positions));

    std::vector<PromptComparison> results;
    bool allIdentical = true, pass = true;
    double worst = 0;
    int32_t nearTies = 0, hard = 0;
    for (const auto& in : inputs) {
        PromptComparison pc(tieMargin);
        std::vector<float> refLogits = ref->feed(in);
        const std::vector<float>* otherLogits = &other->feed(in);
        for (int32_t s = 0;; ++s) {
            const LogitStep step = compareLogits(refLogits, *otherLogits);
            pc.add(step);
            if (s + 1 == steps) break;
            // Teacher forcing: both devices continue with the reference's choice.
            const int32_t next = step.argmaxRef >= 0 ? step.argmaxRef : 0;
            refLogits = ref->feed({next});
            otherLogits = &other->feed({next});
        }
        allIdentical = allIdentical && pc.allIdentical();
        pass = pass && pc.pass();
        worst = std::max(worst, pc.maxRelError());
        hard += pc.hardDivergences();
        nearTies += int32_t(pc.divergences().size()) - pc.hardDivergences();
        results.push_back(std::move(pc));
    }

    // Where each runner ran; and two different devices never agree bit for
    // bit over a whole run: if they do, one was not used.
    const ComputeDevice ranRef = ref->device(), ran = other->device();
    std::vector<std::string> problems;
    if (device.rfind("cuda", 0) == 0 && !ran.gpu)
        problems.push_back("asked for '" + device + "', the runner ran on '" + ran.id + "'");
    if (allIdentical && ran.id != ranRef.id)
        problems.push_back("every logit of '" + device + "' equals '" + deviceRef +
                           "' bit for bit: the runner did not run on the device asked for");
    if (hard > 0) problems.push_back(std::to_string(hard) + " greedy choices differ where the reference had no near-tie");
    if (maxRelError > 0 && worst > maxRelError)
        problems.push_back("max relative logit error " + number(worst) + " exceeds --max-rel-error " + number(maxRelError));
    for (const auto& pc : results)
        if (!pc.allFinite()) {
            problems.push_back("non-finite logits");
            break;
        }
    pass = problems.empty();

    std::string out = "{\"model\":" + jsonString(modelPath) + ",\"preset\":" + jsonString(preset) +
                      ",\"architecture\":" + jsonString(ref->config().architecture) +
                      ",\"reference_device\":" + jsonString(deviceRef) + ",\"device\":" + jsonString(device) +
                      ",\"reference_ran_on\":" + jsonString(ranRef.id + " (" + ranRef.name + ")") +
                      ",\"ran_on\":" + jsonString(ran.id + " (" + ran.name + ", " + ran.detail + ")") +
                      ",\"steps\":" + std::to_string(steps) + ",\"tie_margin\":" + number(tieMargin) +
                      ",\"kv_cache_dtype\":\"" + kvDtypeName(kvType) + "\",\"prompts\":[";
    for (size_t i = 0; i < results.size(); ++i) {
        const bool isLong = longPrompt > 0 && i + 1 == results.size();
        out += std::string(i ? "," : "") + "{\"index\":" + std::to_string(i) + ",\"kind\":\"" + (isLong ? "long" : "text") +
               "\",\"prompt_tokens\":" + std::to_string(inputs[i].size()) + ",\"result\":" + results[i].toJson() + "}";
    }
    out += "],\"max_rel_logit_error\":" + number(worst) + ",\"near_tie_divergences\":" + std::to_string(nearTies) +
           ",\"hard_divergences\":" + std::to_string(hard) + ",\"bit_identical\":" + (allIdentical ? "true" : "false") +
           ",\"problems\":[";
    for (size_t i = 0; i < problems.size(); ++i) out += std::string(i ? "," : "") + jsonString(problems[i]);
    out += "],\"pass\":" + std::string(pass ? "true" : "false") + "}\n";
    std::fputs(out.c_str(), stdout);
    return pass ? 0 : 1;
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
