// Why a request failed, as Event::error tells a client (the HTTP server maps
// it to 503, 400 or 500): a full wait queue, a prompt that can never fit, a
// request without room to generate; and GenerateRequest::showSpecialTokens,
// which puts control tokens' text into the deltas so stop strings see them.
#include "engine/api/engine_access.h"
#include "tests/support/test_files.h"
#include "tests/support/weir_test.h"

#include <condition_variable>
#include <mutex>

#include "weir/engine.h"
#include "engine/scheduler/active_request.h"
#include "engine/scheduler/stop_strings.h"
#include "engine/tokenizer/tokenizer.h"
#include "tests/engine/scheduler/tiny_gemma3.h"

using namespace weir;

namespace {

struct Terminal {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    Event event;
    std::string text;

    EventSink sink() {
        return [this](const Event& ev) {
            std::lock_guard<std::mutex> lock(mutex);
            if (ev.kind == Event::Kind::Token) {
                text += ev.text;
                return;
            }
            event = ev;
            done = true;
            cv.notify_all();
        };
    }
    Event wait() {
        std::unique_lock<std::mutex> lock(mutex);
        cv.wait(lock, [&] { return done; });
        return event;
    }
};

}  // namespace

static weirtest::TempDir dir_;
static std::string model_;

static EngineOptions options() {
    EngineOptions o;
    o.modelPath = model_;
    o.threads = 2;
    o.maxRunningRequests = 2;
    o.maxContext = 256;
    o.checkIntegrityEveryStep = true;
    return o;
}

static GenerateRequest request(std::vector<int32_t> prompt, int32_t maxTokens) {
    GenerateRequest r;
    r.prompt = std::move(prompt);
    r.maxTokens = maxTokens;
    r.sampling.temperature = 0;
    r.stopAtEndOfGeneration = false;
    return r;
}

WEIR_TEST_SUITE_SETUP(ErrorCodes) {
    REQUIRE(dir_.isValid());
    model_ = dir_.filePath("tiny.gguf");
    test::writeTinyGemma3(model_);
}

WEIR_TEST(ErrorCodes, queueFull) {
    EngineOptions o = options();
    o.maxWaiting = 0;
    Engine engine(o);
    Terminal t;
    engine.submit(request({2, 300, 301}, 4), t.sink());
    const Event ev = t.wait();
    REQUIRE_EQ(ev.kind, Event::Kind::Error);
    REQUIRE_EQ(ev.error, ErrorCode::QueueFull);
    REQUIRE(ev.text.find("wait queue") != std::string::npos);
}

WEIR_TEST(ErrorCodes, tooLongAndBadRequest) {
    Engine engine(options());
    Terminal longPrompt, empty, noTokens, outOfVocabulary, fine;
    engine.submit(request(std::vector<int32_t>(400, 300), 4), longPrompt.sink());
    engine.submit(request({}, 4), empty.sink());
    engine.submit(request({2, 300}, 0), noTokens.sink());
    engine.submit(request({2, weir::EngineAccess::tokenizer(engine).vocabSize() + 5}, 4), outOfVocabulary.sink());
    engine.submit(request({2, 300, 301}, 3), fine.sink());
    REQUIRE_EQ(longPrompt.wait().error, ErrorCode::TooLong);
    REQUIRE_EQ(empty.wait().error, ErrorCode::BadRequest);
    REQUIRE_EQ(noTokens.wait().error, ErrorCode::BadRequest);
    REQUIRE_EQ(outOfVocabulary.wait().error, ErrorCode::BadRequest);
    const Event ok = fine.wait();
    REQUIRE_EQ(ok.kind, Event::Kind::Done);
    REQUIRE_EQ(ok.error, ErrorCode::None);
}

// showSpecialTokens: the text deltas a request emits come from its
// detokenizer; with the flag it shows control tokens (so stop strings
// like "<start_function_response>" can match), without it hides them.
WEIR_TEST(ErrorCodes, specialTokensInText) {
    Engine engine(options());
    const Tokenizer& tok = weir::EngineAccess::tokenizer(engine);
    const int32_t sot = tok.find("<start_of_turn>");
    REQUIRE(sot >= 0 && tok.isControl(sot));
    const int32_t word = tok.find("\xE2\x96\x81hello");
    REQUIRE(word >= 0);
    for (bool show : {true, false}) {
        GenerateRequest r = request({2, 300}, 4);
        r.showSpecialTokens = show;
        ActiveRequest a(1, r, {}, &tok);
        REQUIRE(a.detokenizer);
        const std::string text = a.detokenizer->push(word) + a.detokenizer->push(sot);
        REQUIRE_EQ(text, std::string(show ? " hello<start_of_turn>" : " hello"));
        // The stop-string matcher sees exactly that text.
        StopStringMatcher stops({"<start_of_turn>"});
        REQUIRE_EQ(stops.push(text).stopped, show);
    }
}
