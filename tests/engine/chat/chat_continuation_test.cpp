// Engine::tokenizeChatContinuation (the app's Continue): the conversation with
// its last assistant message left open. On both real models (SmolLM2 skipped
// when absent) the prompt is the closed conversation cut right after the
// reply's text: a strict prefix of the same conversation rendered to answer
// next, ending with the reply's tokens, with no end-of-turn marker after them;
// control-token text in the reply stays text; nothing to continue is an error.
#include "engine/api/engine_access.h"
#include "tests/support/weir_test.h"

#include <cstdlib>
#include <filesystem>

#include "engine/tokenizer/tokenizer.h"
#include "weir/base/error.h"
#include "weir/engine.h"

using namespace weir;

namespace {

std::string sourceDir() {
    const char* d = std::getenv("WEIR_SOURCE_DIR");
    return d ? d : ".";
}

std::vector<std::string> modelPaths() {
    const char* m = std::getenv("WEIR_MODEL");
    return {m ? m : sourceDir() + "/models/gemma-3-270m-q4_k_m.gguf",
            sourceDir() + "/models/smollm2-135m-instruct-q4_1.gguf"};
}

std::unique_ptr<Engine> openEngine(const std::string& path) {
    EngineOptions o;
    o.modelPath = path;
    o.threads = 1;
    o.maxRunningRequests = 1;
    o.maxContext = 2048;
    return std::make_unique<Engine>(o);
}

} // namespace

WEIR_TEST(ChatContinuation, openReplyIsAPrefixOfTheClosedConversation) {
    int models = 0;
    for (const std::string& path : modelPaths()) {
        if (!std::filesystem::exists(path)) continue;
        ++models;
        auto e = openEngine(path);
        const std::vector<Message> chat{{"system", "Be brief.", {}},
                                        {"user", "What is the capital of France?", {}},
                                        {"assistant", "The capital of France is", {}}};
        const auto open = e->tokenizeChatContinuation(chat);
        const auto closed = e->tokenizeChat(chat);  // the reply closed, then a new turn for the model
        REQUIRE(open.size() < closed.size());
        CHECK(std::equal(open.begin(), open.end(), closed.begin()));
        const std::string text = e->detokenize(open);
        CHECK(text.ends_with("The capital of France is"));
        // What follows in the closed one is the template's end of turn.
        CHECK(weir::EngineAccess::tokenizer(*e).isControl(closed[open.size()]) ||
              e->detokenize({closed[open.size()]}).find_first_not_of(" \n") == std::string::npos);
    }
    if (models == 0) SKIP("no model found");
}

WEIR_TEST(ChatContinuation, replyTextStaysText) {
    const std::string path = modelPaths()[0];
    if (!std::filesystem::exists(path)) SKIP("default model not found");
    auto e = openEngine(path);
    const auto plain = e->tokenizeChatContinuation({{"user", "Hi", {}}, {"assistant", "Hello there", {}}});
    const auto marked = e->tokenizeChatContinuation({{"user", "Hi", {}}, {"assistant", "Hello<end_of_turn>", {}}});
    auto controls = [&](const std::vector<int32_t>& ids) {
        return std::count_if(ids.begin(), ids.end(),
                             [&](int32_t id) { return weir::EngineAccess::tokenizer(*e).isControl(id); });
    };
    CHECK_EQ(controls(marked), controls(plain));
}

WEIR_TEST(ChatContinuation, nothingToContinueIsAnError) {
    const std::string path = modelPaths()[0];
    if (!std::filesystem::exists(path)) SKIP("default model not found");
    auto e = openEngine(path);
    for (const std::vector<Message>& chat : {std::vector<Message>{{"user", "Hi", {}}},
                                             std::vector<Message>{{"user", "Hi", {}}, {"assistant", "", {}}},
                                             std::vector<Message>{}}) {
        bool threw = false;
        try {
            e->tokenizeChatContinuation(chat);
        } catch (const Error& err) {
            threw = std::string(err.what()).find("nothing to continue") != std::string::npos;
        }
        CHECK(threw);
    }
}
