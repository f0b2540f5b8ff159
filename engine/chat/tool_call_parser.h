#pragma once
// Pulls tool calls out of generated text as it streams. Text goes through at
// once until a call may be starting (a call marker, or a bare call at the very
// start of the reply for the JSON conventions); from there it is held back
// until the call is complete and then comes out as a structured ToolCall. A
// call that does not read (bad syntax, unknown function name) comes back as
// the plain text it was: never an exception, never a half call.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/chat/tool_format.h"

namespace weir {

class ToolCallParser {
public:
    struct Output {
        std::string text;             // plain text to show now
        std::vector<ToolCall> calls;  // calls completed by this delta (ids empty)
    };

    // Everything a family needs to find and read its calls.
    struct Syntax {
        ToolFamily family = ToolFamily::Gemma3;
        struct Fence {
            std::string open, close;
        };
        std::vector<Fence> fences;              // a call between open and close markers
        std::vector<std::string> bareStarts;    // a reply that starts like this is a call
        std::vector<Fence> hidden;              // regions dropped from the text (thoughts)
        std::vector<std::string> toolNames;     // calls to other names are malformed
        // One fenced block holds every call of a turn (Gemma 3's convention):
        // once it is read, the reply is over and later text is dropped.
        bool oneBlockPerTurn = false;
    };

    explicit ToolCallParser(Syntax syntax);

    Output push(std::string_view delta);
    // End of generation: whatever is held back, as calls or text.
    Output finish();
    size_t callCount() const { return calls_; }
    // The reply's calls are complete and nothing after them belongs to it
    // (Syntax::oneBlockPerTurn): the caller may stop generating.
    bool done() const { return done_; }

    // Reads the body of one fence (without its markers), or a bare reply, into
    // calls; false when it does not read completely. Public for tests.
    bool readCalls(std::string_view body, std::vector<ToolCall>& out) const;

private:
    enum class State { Text, Fence, Bare, Hidden };
    void process(Output& out, bool final);
    void emitText(Output& out, std::string_view text);
    void flushHeldSpace(Output& out);
    bool knownName(const std::string& name) const;
    // Longest prefix of `body` made of complete calls, and its length.
    size_t readCallPrefix(std::string_view body, std::vector<ToolCall>& out) const;

    Syntax syntax_;
    State state_ = State::Text;
    size_t fence_ = 0;          // which fence / hidden region is open
    std::string pending_;       // received, not yet emitted
    std::string heldSpace_;     // whitespace waiting to see what follows
    bool atStart_ = true;       // nothing but whitespace so far
    bool bareChecked_ = false;  // a bare JSON call was read once completely
    bool done_ = false;
    size_t calls_ = 0;
};

}  // namespace weir
