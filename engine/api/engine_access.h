#pragma once
// What an Engine loaded, for the facade's own implementation (engine/api) and
// unit tests of the internals (tests/engine) only: clients go through the
// public API, which never hands these out.
#include <cstdint>
#include <vector>

#include "weir/engine.h"

namespace weir {

class ChatTemplate;
class Tokenizer;
class ToolFormat;
struct MarkedText;

struct EngineAccess {
    static const Tokenizer& tokenizer(const Engine& engine);
    static const ChatTemplate& chatTemplate(const Engine& engine);
    static const ToolFormat& toolFormat(const Engine& engine);
    // Special tokens parsed only in the trusted bytes, exactly one BOS (as
    // Engine::prepareChat tokenizes).
    static std::vector<int32_t> tokenizeMarked(const Engine& engine, const MarkedText& prompt);
};

}  // namespace weir
