#pragma once
// Tools on model files that need no Engine: describe a GGUF file, write a
// small random model, render a chat template. Each throws weir::Error with a
// message that names the file and the problem.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "weir/types/model_config.h"
#include "weir/types/synthetic_model_spec.h"

namespace weir {

enum class ModelFileFormat { Text, Json };

// The file's header, metadata (arrays cut to `maxItems` items) and tensor
// table with totals, as an aligned text table or as a JSON document.
std::string describeModelFile(const std::string& path, ModelFileFormat format, size_t maxItems);

// Checks a model file the way loading does (weights bound, metadata and
// tokenizer validated) and throws weir::Error naming the key and the value at
// fault. A GGUF that is not a model (no architecture or no token embedding,
// e.g. a vocabulary-only file) passes unchecked.
void checkModelFile(const std::string& path);

// What a model picker shows about a file, without loading the weights into
// an Engine: the hyper-parameters (architecture, sizes, which layers slide),
// whether the file carries its own chat template, and its size. Validates the
// file the way checkModelFile does and throws weir::Error the same way.
struct ModelFileSummary {
    ModelConfig config;
    bool hasChatTemplate = false;  // tokenizer.chat_template present
    uint64_t fileBytes = 0;
};
ModelFileSummary summarizeModelFile(const std::string& path);

// Writes the synthetic model `spec` describes to `path` (same bytes for the
// same spec). A preset streams its weights, a chunk of rows at a time.
void writeSyntheticModel(const SyntheticModelSpec& spec, const std::string& path);

// The full-size presets SyntheticModelSpec::preset takes.
struct SyntheticPresetInfo {
    std::string name;         // "gemma3-270m-q4_k_m"
    std::string description;  // "Gemma 3 270M, Q4_K_M (253 MB)"
};
std::vector<SyntheticPresetInfo> syntheticModelPresets();

// Renders a conversation with a chat template, without loading the weights.
struct ChatTemplateRender {
    std::string modelPath;           // supplies BOS/EOS texts and, by default, the template
    std::string templateSource;      // a Jinja template to use instead of the model's
    std::string builtinName;         // or a built-in one: "gemma", "llama3", "chatml"
    std::string messagesJson;        // OpenAI-style list of messages
    std::string toolsJson;           // OpenAI-style list of tools, or empty
    bool addGenerationPrompt = true;
    std::optional<int64_t> now;      // seconds since the epoch for strftime_now() (UTC)
};
struct RenderedChat {
    std::string text;
    std::string templateDescription;
    std::vector<std::string> endOfTurnStrings;
    bool templateWritesBos = false;  // then tokenize the text without adding BOS
};
RenderedChat renderChatTemplate(const ChatTemplateRender& request);

} // namespace weir
