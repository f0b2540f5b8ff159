#pragma once
// A parsed Jinja template (the subset chat templates use) and its renderer.
// Rendering matches python jinja2 as HF transformers configures it
// (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks, loop controls,
// HF's tojson, raise_exception and strftime_now globals), byte for byte for
// the templates in tests/data/templates.
//
// Every failure is a weir::Error whose message starts with "chat template:"
// and names the line and column. Rendering is bounded: output size, work
// steps and macro recursion have limits, so a hostile template cannot hang
// or exhaust memory.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/chat/jinja_value.h"
#include "weir/base/error.h"

namespace weir::jinja {

struct Program;

struct RenderOptions {
    size_t maxOutputBytes = size_t(16) << 20;  // rendered text, including captured blocks
    int64_t maxSteps = 20'000'000;            // statements, loop iterations and calls
    int maxCallDepth = 64;                    // nested macro calls
    // Seconds since the epoch that strftime_now() formats, in UTC; when
    // absent it formats the current local time, like HF.
    std::optional<int64_t> fixedNow;
};

// The error raise_exception("...") produces inside a template; the message is
// "chat template: line L, column C: <template's message>".
class TemplateRaised : public Error {
public:
    TemplateRaised(const std::string& what, std::string templateMessage)
        : Error(what), templateMessage_(std::move(templateMessage)) {}
    const std::string& templateMessage() const { return templateMessage_; }

private:
    std::string templateMessage_;
};

class Template {
public:
    // Parses source; throws weir::Error on a syntax error.
    explicit Template(std::string_view source);
    // context: a dict of the variables the template sees (messages,
    // add_generation_prompt, bos_token, tools, ...).
    std::string render(const Value& context, const RenderOptions& options = {}) const;
    // The same text with the bytes that came from untrusted strings of the
    // context marked (see Value::text; mark the conversation with
    // markUntrusted from jinja_provenance.h first).
    MarkedText renderMarked(const Value& context, const RenderOptions& options = {}) const;

private:
    std::shared_ptr<const Program> program_;
};

}  // namespace weir::jinja
