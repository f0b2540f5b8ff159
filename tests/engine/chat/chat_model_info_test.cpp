// Chat template choice for real GGUF files: the default model (Gemma 3 270M,
// whose GGUF has no tokenizer.chat_template) gets the built-in Gemma
// template with its own BOS/EOS texts; a GGUF that carries a template gets it.
#include "tests/support/weir_test.h"

#include <filesystem>

#include "engine/chat/chat_model_info.h"
#include "engine/gguf/gguf_file.h"
#include "engine/gguf/gguf_writer.h"
#include "weir/base/error.h"

using weir::ChatTemplate;

WEIR_TEST(ChatModelInfo, defaultModel) {
    const std::string path = weirtest::environment("WEIR_MODEL");
    if (path.empty() || !std::filesystem::exists(path)) SKIP("default model not present (WEIR_MODEL)");
    auto file = weir::gguf::GgufFile::open(path);
    weir::ChatModelInfo info = weir::chatModelInfoFromGguf(*file);
    REQUIRE(info.chatTemplate.empty());
    REQUIRE_EQ(std::string(info.architecture), std::string("gemma3"));
    REQUIRE_EQ(std::string(info.bosText), std::string("<bos>"));
    REQUIRE_EQ(std::string(info.eosText), std::string("<eos>"));
    auto has = [&](const char* t) {
        return std::find(info.specialTokens.begin(), info.specialTokens.end(), t) != info.specialTokens.end();
    };
    REQUIRE(has("<start_of_turn>"));
    REQUIRE(has("<end_of_turn>"));

    auto tmpl = ChatTemplate::forModel(info);
    REQUIRE(tmpl->isBuiltin());
    REQUIRE_EQ(std::string(tmpl->family()), std::string("gemma"));
    REQUIRE(tmpl->rendersBos());
    const std::string text = tmpl->render({{"system", "Be brief.", {}}, {"user", "Hi", {}}}, true);
    REQUIRE_EQ(std::string(text),
             std::string("<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n"));
    REQUIRE(!tmpl->addBosWhenTokenizing(text, true));
}

// A small GGUF written here: its template is used as is, the BOS/EOS texts
// come from the token ids, control tokens are collected.
WEIR_TEST(ChatModelInfo, templateFromGguf) {
    weir::gguf::GgufWriter w;
    w.addString("general.architecture", "qwen2");
    w.addString("tokenizer.chat_template",
                "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}");
    w.add("tokenizer.ggml.tokens", weir::gguf::makeStringArray({"a", "<|im_start|>", "<|im_end|>", "b"}));
    w.add("tokenizer.ggml.token_type", weir::gguf::makeI32Array({1, 3, 3, 1}));
    w.addU32("tokenizer.ggml.eos_token_id", 2);
    std::vector<uint8_t> bytes = w.toBytes();
    auto file = weir::gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "synthetic");
    weir::ChatModelInfo info = weir::chatModelInfoFromGguf(*file);
    REQUIRE_EQ(std::string(info.eosText), std::string("<|im_end|>"));
    REQUIRE(info.bosText.empty());
    REQUIRE_EQ(info.specialTokens, (std::vector<std::string>{"<|im_start|>", "<|im_end|>"}));
    auto tmpl = ChatTemplate::forModel(info);
    REQUIRE(!tmpl->isBuiltin());
    REQUIRE_EQ(std::string(tmpl->family()), std::string("chatml"));
    REQUIRE_EQ(std::string(tmpl->render({{"user", "x", {}}}, true)),
             std::string("<|im_start|>user\nx<|im_end|>\n"));
    REQUIRE(tmpl->addBosWhenTokenizing("<|im_start|>", true));  // no BOS text: nothing written

    weir::gguf::GgufWriter bad;
    bad.add("tokenizer.ggml.tokens", weir::gguf::makeStringArray({"a"}));
    bad.addU32("tokenizer.ggml.bos_token_id", 7);
    bytes = bad.toBytes();
    file = weir::gguf::GgufFile::fromMemory(bytes.data(), bytes.size(), "bad");
    REQUIRE_THROWS(weir::Error, weir::chatModelInfoFromGguf(*file));
}
